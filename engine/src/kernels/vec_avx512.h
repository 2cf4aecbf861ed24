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
  // x * 2^n for integral n in [-127, 127]: one vscalefps instead of the
  // exponent arithmetic of Pow2 and a multiply.
  static Reg MulPow2(Reg x, Reg n) { return _mm512_scalef_ps(x, n); }
  // The least input of Exp: scalef rounds e^-104 (n = -150) to +0, so the
  // clamp keeps exp(-inf) exactly 0 and the subnormal range is computed.
  static constexpr float kExpLowest = -104.0f;

  // dst[c * ds + j] = src[j * ss + c] for j, c < 16: a 16 x 16 block
  // transposed (the attention kernel's K^T pack) in 64 shuffles.
  static void Transpose(const float* src, int64_t ss, float* dst, int64_t ds) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ss);
    for (int i = 0; i < 16; i += 2) {  // per 128-bit lane: rows i, i+1 interleaved
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {  // r[i + m]: rows i..i+3, column 4k + m in lane k
      r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
      r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
      r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int m = 0; m < 4; ++m) {
      // Lanes 0 and 2 (columns m, 8 + m) and 1 and 3 (4 + m, 12 + m) of
      // rows 0-7 and of rows 8-15 ...
      const __m512 a = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88);
      const __m512 b = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xDD);
      const __m512 c = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88);
      const __m512 e = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xDD);
      // ... joined into whole columns.
      _mm512_storeu_ps(dst + m * ds, _mm512_shuffle_f32x4(a, c, 0x88));
      _mm512_storeu_ps(dst + (8 + m) * ds, _mm512_shuffle_f32x4(a, c, 0xDD));
      _mm512_storeu_ps(dst + (4 + m) * ds, _mm512_shuffle_f32x4(b, e, 0x88));
      _mm512_storeu_ps(dst + (12 + m) * ds, _mm512_shuffle_f32x4(b, e, 0xDD));
    }
  }

  static float ReduceAdd(Reg v) { return _mm512_reduce_add_ps(v); }
  static float ReduceMax(Reg v) { return _mm512_reduce_max_ps(v); }
};

}  // namespace engine::kernels::avx512
