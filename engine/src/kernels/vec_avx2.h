// 8-lane float vector for AVX2 + FMA. Include only from sources compiled
// with -mavx2 -mfma; the generic kernels in vec_kernels.h are written
// against this interface.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace engine::kernels::avx2 {

struct Vec {
  using Reg = __m256;
  using Mask = __m256i;  // All-ones lanes are active.
  static constexpr int kWidth = 8;

  static Reg Zero() { return _mm256_setzero_ps(); }
  static Reg Set1(float v) { return _mm256_set1_ps(v); }
  static Reg Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, Reg v) { _mm256_storeu_ps(p, v); }

  // Lanes [0, n) active, 0 <= n < kWidth.
  static Mask TailMask(int64_t n) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lanes);
  }
  // Inactive lanes read as 0 and are never touched in memory.
  static Reg Load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static Reg Load(const float* p, Mask m, Reg fill) {
    return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void Store(float* p, Reg v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static Reg KeepActive(Reg v, Mask m) { return _mm256_and_ps(v, _mm256_castsi256_ps(m)); }

  static Reg Add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg Sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
  static Reg Mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  static Reg Max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  static Reg Min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  // a * b + c with one rounding.
  static Reg Fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }

  // Round to nearest integer (ties to even), kept as float.
  static Reg Round(Reg v) {
    return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // 2^n for integral n in [-127, 127]; n = -127 gives +0 (exponent field 0).
  static Reg Pow2(Reg n) {
    const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23));
  }
  // x * 2^n for integral n in [-127, 127].
  static Reg MulPow2(Reg x, Reg n) { return Mul(x, Pow2(n)); }
  // The least input of Exp: e^-88 is Pow2(-127) = +0 times the polynomial.
  static constexpr float kExpLowest = -88.0f;

  // dst[c * ds + j] = src[j * ss + c] for j, c < 8: an 8 x 8 block
  // transposed (the attention kernel's K^T pack) in 24 shuffles.
  static void Transpose(const float* src, int64_t ss, float* dst, int64_t ds) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ss);
    for (int i = 0; i < 8; i += 2) {  // per 128-bit half: rows i, i+1 interleaved
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {  // r[i + m]: column m (+4 in the high half), 4 rows
      r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
      r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
      r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int m = 0; m < 4; ++m) {
      _mm256_storeu_ps(dst + m * ds, _mm256_permute2f128_ps(r[m], r[m + 4], 0x20));
      _mm256_storeu_ps(dst + (m + 4) * ds, _mm256_permute2f128_ps(r[m], r[m + 4], 0x31));
    }
  }

  static float ReduceAdd(Reg v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float ReduceMax(Reg v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace engine::kernels::avx2
