// 16-lane float vector for AVX-512 (F, DQ, BW, VL). Include only from
// sources compiled with the AVX-512 flags; same interface as avx2::Vec.
#pragma once

// GCC 12's AVX-512 intrinsics read a deliberately uninitialized register
// (_mm512_undefined_*), which -Wuninitialized flags at every use (GCC bug
// 105593, fixed in 13); silence it for the intrinsic header's lines only.
#if defined(__clang__)
#include <immintrin.h>
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <cstdint>

namespace engine::kernels::avx512 {

struct Vec {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kWidth = 16;

  static Reg Zero() { return _mm512_setzero_ps(); }
  static Reg Set1(float v) { return _mm512_set1_ps(v); }
  static Reg Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, Reg v) { _mm512_storeu_ps(p, v); }

  // Lanes [0, n) active, 0 <= n < kWidth.
  static Mask TailMask(int64_t n) { return static_cast<Mask>((1u << n) - 1u); }
  // Inactive lanes read as 0 (or `fill`) and are never touched in memory.
  static Reg Load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static Reg Load(const float* p, Mask m, Reg fill) { return _mm512_mask_loadu_ps(fill, m, p); }
  static void Store(float* p, Reg v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static Reg KeepActive(Reg v, Mask m) { return _mm512_maskz_mov_ps(m, v); }

  static Reg Add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg Sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg Mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg Max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  static Reg Min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  // a * b + c with one rounding.
  static Reg Fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }

  // Round to nearest integer (ties to even), kept as float.
  static Reg Round(Reg v) {
    return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // 2^n for integral n in [-127, 127]; n = -127 gives +0 (exponent field 0).
  static Reg Pow2(Reg n) {
    const __m512i biased = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(biased, 23));
  }

  static float ReduceAdd(Reg v) { return _mm512_reduce_add_ps(v); }
  static float ReduceMax(Reg v) { return _mm512_reduce_max_ps(v); }
};

}  // namespace engine::kernels::avx512
