// avx512::Vec plus the integer and selection operations of the int8 kernels
// (vec_int8_kernels.h); same interface as avx2::QVec. Include only from
// sources compiled with the AVX-512 flags.
#pragma once

#include <cstdint>

#include "kernels/vec_avx512.h"

namespace engine::kernels::avx512 {

struct QVec : Vec {
  static Reg Div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
  // 1 / b for finite b >= 1 (GeluErf's denominator): the 14-bit estimate
  // and one Newton step (relative error about 2^-27), several times the
  // throughput of a division.
  static Reg Reciprocal(Reg b) {
    const Reg r = _mm512_rcp14_ps(b);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(b, r, _mm512_set1_ps(2.0f)));
  }
  static Reg Abs(Reg v) { return _mm512_abs_ps(v); }
  // Lanes where a < b.
  static Mask Less(Reg a, Reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static Reg Select(Mask m, Reg if_true, Reg if_false) {
    return _mm512_mask_blend_ps(m, if_false, if_true);
  }
  static float ReduceMin(Reg v) { return _mm512_reduce_min_ps(v); }

  // float(acc[i] - zero * col_sum[i]): exact in int32, one rounding to float.
  static Reg LoadCentered(const int32_t* acc, const int32_t* col_sum, int32_t zero) {
    const __m512i a = _mm512_loadu_si512(acc);
    const __m512i s = _mm512_loadu_si512(col_sum);
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(a, _mm512_mullo_epi32(_mm512_set1_epi32(zero), s)));
  }
  static Reg LoadCentered(const int32_t* acc, const int32_t* col_sum, int32_t zero, Mask m) {
    const __m512i a = _mm512_maskz_loadu_epi32(m, acc);
    const __m512i s = _mm512_maskz_loadu_epi32(m, col_sum);
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(a, _mm512_mullo_epi32(_mm512_set1_epi32(zero), s)));
  }

  // Bytes p[0, 16) as floats (a two-level row's first level, read back).
  static Reg LoadU8(const uint8_t* p) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  // The first n bytes, 0 < n < kWidth (none past them is read); lanes past n are 0.
  static Reg LoadU8(const uint8_t* p, int64_t n) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(TailMask(n), p)));
  }

  // round(x * inv) + zero (ties to even) clamped to [0, 255]: negatives are
  // clamped to 0 first because the narrowing saturates as unsigned.
  static __m512i QuantizeLanes(Reg x, Reg inv, int32_t zero) {
    const __m512i q =
        _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x, inv)), _mm512_set1_epi32(zero));
    return _mm512_max_epi32(q, _mm512_setzero_si512());
  }
  static void StoreU8(uint8_t* p, Reg x, Reg inv, int32_t zero) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm512_cvtusepi32_epi8(QuantizeLanes(x, inv, zero)));
  }
  // The first n lanes, 0 < n < kWidth; no byte past them is written.
  static void StoreU8(uint8_t* p, Reg x, Reg inv, int32_t zero, int64_t n) {
    _mm512_mask_cvtusepi32_storeu_epi8(p, TailMask(n), QuantizeLanes(x, inv, zero));
  }
};

}  // namespace engine::kernels::avx512
