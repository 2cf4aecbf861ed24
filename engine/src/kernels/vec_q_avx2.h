// avx2::Vec plus the integer and selection operations of the int8 kernels
// (vec_int8_kernels.h). Include only from sources compiled with -mavx2 -mfma.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/vec_avx2.h"

namespace engine::kernels::avx2 {

struct QVec : Vec {
  static Reg Div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
  // 1 / b for finite b >= 1 (GeluErf's denominator): the 12-bit estimate
  // and one Newton step (relative error about 2^-22), several times the
  // throughput of a division.
  static Reg Reciprocal(Reg b) {
    const Reg r = _mm256_rcp_ps(b);
    return _mm256_mul_ps(r, _mm256_fnmadd_ps(b, r, _mm256_set1_ps(2.0f)));
  }
  static Reg Abs(Reg v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
  // Lanes where a < b.
  static Mask Less(Reg a, Reg b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
  static Reg Select(Mask m, Reg if_true, Reg if_false) {
    return _mm256_blendv_ps(if_false, if_true, _mm256_castsi256_ps(m));
  }
  static float ReduceMin(Reg v) {
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  // float(acc[i] - zero * col_sum[i]): the int32 products and difference are
  // exact (|zero * col_sum| <= 255 * 127 * K), one rounding to float.
  static Reg LoadCentered(const int32_t* acc, const int32_t* col_sum, int32_t zero) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc));
    const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_sum));
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(a, _mm256_mullo_epi32(_mm256_set1_epi32(zero), s)));
  }
  static Reg LoadCentered(const int32_t* acc, const int32_t* col_sum, int32_t zero, Mask m) {
    const __m256i a = _mm256_maskload_epi32(acc, m);
    const __m256i s = _mm256_maskload_epi32(col_sum, m);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(a, _mm256_mullo_epi32(_mm256_set1_epi32(zero), s)));
  }

  // Bytes p[0, 8) as floats (a two-level row's first level, read back).
  static Reg LoadU8(const uint8_t* p) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  // The first n bytes, 0 < n < kWidth (none past them is read); lanes past n are 0.
  static Reg LoadU8(const uint8_t* p, int64_t n) {
    int64_t bytes = 0;
    std::memcpy(&bytes, p, static_cast<size_t>(n));
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(bytes)));
  }

  // round(x * inv) + zero (ties to even), saturated to [0, 255], as bytes.
  static __m128i QuantizeBytes(Reg x, Reg inv, int32_t zero) {
    const __m256i q =
        _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(x, inv)), _mm256_set1_epi32(zero));
    const __m128i words =
        _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    return _mm_packus_epi16(words, words);  // Bytes 0-7 are the lanes in order.
  }
  static void StoreU8(uint8_t* p, Reg x, Reg inv, int32_t zero) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), QuantizeBytes(x, inv, zero));
  }
  // The first n lanes, 0 < n < kWidth; no byte past them is written.
  static void StoreU8(uint8_t* p, Reg x, Reg inv, int32_t zero, int64_t n) {
    uint64_t bytes = static_cast<uint64_t>(_mm_cvtsi128_si64(QuantizeBytes(x, inv, zero)));
    for (int64_t i = 0; i < n; ++i, bytes >>= 8) p[i] = static_cast<uint8_t>(bytes);
  }
};

}  // namespace engine::kernels::avx2
