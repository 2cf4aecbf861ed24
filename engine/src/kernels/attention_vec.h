// Attention kernels written once against a vector type V (avx2::Vec,
// avx512::Vec) and instantiated in the source compiled for V's ISA. Include
// only from such a source. No std:: algorithms or math here: an inline
// library function instantiated in an ISA's source could be the copy the
// linker hands to portable code.
//
// They work on one streamed block (attention_kernels.h): query rows
// [row_begin, row_end) against keys [key_begin, key_end), the scores in a
// block with its own row stride.
// Scores (Q K^T): K is packed transposed, in chunks of 2W keys ([head_size,
// 2W] each, zero-padded past the key range), up to kKeyPackFloats on the
// stack, so a register tile of MR query rows x 2W keys is MR x 2 FMAs per
// loaded pair of K^T vectors and MR broadcasts of q. The pack is read by
// every query row of the block, so its cost is 1 / rows of the work.
// Online softmax: per row, a max pass and an exp + sum pass over the row's
// valid keys (the window's band; the rest is zeroed), no normalization pass.
// Context (P V): V rows are contiguous in the head dimension; they are
// copied chunk by chunk into a compact block (see AttentionContext) and a
// tile of MR query rows x 2W output columns broadcasts P and loads V rows,
// accumulating into the context rows; the online softmax's per-row rescale
// is applied when a tile loads them and 1 / l when the last one stores them.
// Both tiles hold 2 * MR accumulators (MR = kTileRows = 6 on full tiles).
// Ragged edges use masked loads and stores. Stack: at most 64 KiB (the K^T
// pack).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/attention_kernels.h"
#include "kernels/vec_kernels.h"

namespace engine::kernels::vec {

// Head sizes up to this many floats use the packed kernels (the pack is
// kMaxPackedHeadSize * 2W floats on the stack: 32 KiB for AVX-512).
inline constexpr int64_t kMaxPackedHeadSize = 256;

// Lanes [0, n) active for 0 <= n <= W (TailMask of both vector types is
// also correct for n == W: every lane active).
template <typename V>
typename V::Mask LanesUpTo(int64_t n) {
  return V::TailMask(n < 0 ? 0 : (n > V::kWidth ? V::kWidth : n));
}

// Prefetches the n floats from p into the caches. Rows of Q, K and V sit
// 3H floats apart and are first touched by these kernels: without it every
// row's first cache line is a full miss the packing loops wait for.
template <typename V>
void PrefetchRow(const float* p, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) __builtin_prefetch(p + i);
}

// Rows ahead of the one being packed whose loads are started early.
inline constexpr int64_t kPrefetchRows = 4;

// MR query rows (q, stride qs) against the packed chunk kt [d, 2W]: writes
// s[r][0, n) for r < MR, s with row stride ss; n in [1, 2W]. With `bias`
// (the relative-position bias of row 0 at the chunk's first key), row r
// adds bias[-r + j]: the bias is fused here, not a pass over the scores.
template <typename V, int MR>
void ScoresTile(const float* q, int64_t qs, const float* kt, int64_t d, float* s, int64_t ss,
                int64_t n, const float* bias) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  Reg acc0[MR];
  Reg acc1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc0[r] = acc1[r] = V::Zero();
  for (int64_t c = 0; c < d; ++c) {
    const Reg b0 = V::Load(kt + c * 2 * W);
    const Reg b1 = V::Load(kt + c * 2 * W + W);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const Reg a = V::Set1(q[r * qs + c]);
      acc0[r] = V::Fma(a, b0, acc0[r]);
      acc1[r] = V::Fma(a, b1, acc1[r]);
    }
  }
  if (n == 2 * W) {
    if (bias != nullptr) {
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        acc0[r] = V::Add(acc0[r], V::Load(bias - r));
        acc1[r] = V::Add(acc1[r], V::Load(bias - r + W));
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      V::Store(s + r * ss, acc0[r]);
      V::Store(s + r * ss + W, acc1[r]);
    }
  } else {
    const typename V::Mask m0 = LanesUpTo<V>(n);
    const typename V::Mask m1 = LanesUpTo<V>(n - W);
    if (bias != nullptr) {
      // Masked: the bias row ends with the sequence's last key.
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        acc0[r] = V::Add(acc0[r], V::Load(bias - r, m0));
        acc1[r] = V::Add(acc1[r], V::Load(bias - r + W, m1));
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      V::Store(s + r * ss, acc0[r], m0);
      V::Store(s + r * ss + W, acc1[r], m1);
    }
  }
}

// Query rows of a register tile: 2 * kTileRows accumulators plus two
// operands and a broadcast fit AVX2's 16 vector registers.
inline constexpr int kTileRows = 6;

// Calls fn(std::integral_constant<int, n>) for the run-time 1 <= n <= kMax.
template <int kMax, typename Fn>
void ForRows(int64_t n, const Fn& fn) {
  if constexpr (kMax >= 1) {
    if (n == kMax) {
      fn(std::integral_constant<int, kMax>());
    } else {
      ForRows<kMax - 1>(n, fn);
    }
  }
}

// Floats of K^T packed at a time on the stack (64 KiB): up to 256 keys of
// a 64-float head in one pass, so each tile of query rows is read once and
// then meets all the pass's keys.
inline constexpr int64_t kKeyPackFloats = 16384;

template <typename V>
void AttentionScores(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                     int64_t key_begin, int64_t key_end, float* scores, int64_t ss) {
  constexpr int64_t W = V::kWidth;
  const int64_t d = a.head_size;
  const int64_t chunk_floats = d * 2 * W;  // one [d, 2W] chunk
  // At least 2 chunks: d <= kMaxPackedHeadSize, 2W <= 32.
  const int64_t chunks_per_pass = kKeyPackFloats / chunk_floats;
  alignas(64) float kt[kKeyPackFloats];
  for (int64_t p0 = key_begin; p0 < key_end; p0 += chunks_per_pass * 2 * W) {
    const int64_t pass_keys =
        key_end - p0 < chunks_per_pass * 2 * W ? key_end - p0 : chunks_per_pass * 2 * W;
    const int64_t chunks = (pass_keys + 2 * W - 1) / (2 * W);
    // Chunk cc: kt[cc][c][jj] = k[p0 + 2W cc + jj][c]; keys past the end are zero.
    for (int64_t cc = 0; cc < chunks; ++cc) {
      float* chunk = kt + cc * chunk_floats;
      const int64_t n = pass_keys - cc * 2 * W < 2 * W ? pass_keys - cc * 2 * W : 2 * W;
      if (n == 2 * W && d % W == 0) {
        // Whole W x W blocks: register transposes, 4x fewer instructions
        // than the scalar copy below (that copy was ~15 % of a BERT head).
        for (int64_t h = 0; h < 2; ++h) {
          const int64_t j = p0 + cc * 2 * W + h * W;
          for (int64_t i = j + W; i < j + 2 * W && i < key_end; ++i) {
            PrefetchRow<V>(a.k + i * a.qkv_stride, d);
          }
          // This block's V rows too: the context kernel packs them after
          // the scores and the softmax, by when they have arrived.
          for (int64_t i = j; i < j + W && i < key_end; ++i) {
            PrefetchRow<V>(a.v + i * a.qkv_stride, d);
          }
          for (int64_t c = 0; c < d; c += W) {
            V::Transpose(a.k + j * a.qkv_stride + c, a.qkv_stride, chunk + c * 2 * W + h * W,
                         2 * W);
          }
        }
        continue;
      }
      for (int64_t jj = 0; jj < n; ++jj) {
        const int64_t j = p0 + cc * 2 * W + jj;
        if (j + kPrefetchRows < key_end) {
          PrefetchRow<V>(a.k + (j + kPrefetchRows) * a.qkv_stride, d);
        }
        const float* k = a.k + j * a.qkv_stride;
        for (int64_t c = 0; c < d; ++c) chunk[c * 2 * W + jj] = k[c];
      }
      for (int64_t jj = n; jj < 2 * W; ++jj) {
        for (int64_t c = 0; c < d; ++c) chunk[c * 2 * W + jj] = 0.0f;
      }
    }
    auto tile = [&](int64_t r, auto rows) {
      constexpr int kRows = decltype(rows)::value;
      const float* q = a.q + r * a.qkv_stride;
      if (p0 == key_begin) {  // the next tile's query rows, first touched in this pass
        for (int64_t i = r + kRows; i < r + 2 * kRows && i < row_end; ++i) {
          PrefetchRow<V>(a.q + i * a.qkv_stride, d);
        }
      }
      float* s = scores + (r - row_begin) * ss + (p0 - key_begin);
      for (int64_t cc = 0; cc < chunks; ++cc) {
        const int64_t n = pass_keys - cc * 2 * W < 2 * W ? pass_keys - cc * 2 * W : 2 * W;
        const float* bias =
            a.position_bias != nullptr ? a.position_bias + (p0 + cc * 2 * W - r) : nullptr;
        ScoresTile<V, kRows>(q, a.qkv_stride, kt + cc * chunk_floats, d, s + cc * 2 * W, ss, n,
                             bias);
      }
    };
    int64_t r = row_begin;
    for (; r + kTileRows <= row_end; r += kTileRows) {
      tile(r, std::integral_constant<int, kTileRows>());
    }
    if (r < row_end) ForRows<kTileRows - 1>(row_end - r, [&](auto rows) { tile(r, rows); });
  }
}

// n floats of 0 at p.
template <typename V>
void ZeroFloats(float* p, int64_t n) {
  constexpr int64_t W = V::kWidth;
  int64_t i = 0;
  for (; i + W <= n; i += W) V::Store(p + i, V::Zero());
  if (i < n) V::Store(p + i, V::Zero(), V::TailMask(n - i));
}

// One row's block of the online softmax over its n >= 1 valid scores x:
// x = exp(scale * x - m'), m' = max(*m, max scale * x); *l and *rescale as
// OnlineSoftmaxWithIsa says. Two passes over an L1 row: the normalization
// by l is left to the context (a head_size row, not n scores).
template <typename V>
void OnlineSoftmaxRow(float* x, int64_t n, float scale, float* m, float* l, float* rescale) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float block_max = ScaledMax<V>(x, n, scale);
  const float m_new = block_max > *m ? block_max : *m;
  const float block_sum = ExpShiftedInPlace<V>(x, n, V::Set1(scale), V::Set1(-m_new));
  // exp(m - m'): 0 on the row's first block (m = -inf), 1 when the max held
  // (most blocks after the first few), else the builtin (libm's expf, not
  // std::exp: see the header), once per row and block.
  const float alpha = *m == -kInf ? 0.0f : (m_new == *m ? 1.0f : __builtin_expf(*m - m_new));
  *l = *l * alpha + block_sum;
  *m = m_new;
  *rescale = alpha;
}

template <typename V>
void OnlineSoftmax(float* s, int64_t rows, int64_t cols, int64_t stride, float scale,
                   int64_t band_begin, int64_t band_end, float* row_max, float* row_sum,
                   float* rescale) {
  for (int64_t r = 0; r < rows; ++r) {
    float* x = s + r * stride;
    int64_t lo = band_begin + r, hi = band_end + r;
    lo = lo < 0 ? 0 : (lo > cols ? cols : lo);
    hi = hi < lo ? lo : (hi > cols ? cols : hi);
    // Masked keys: zero probability, written in the same sweep (no -inf pass).
    ZeroFloats<V>(x, lo);
    ZeroFloats<V>(x + hi, cols - hi);
    if (lo == hi) {
      rescale[r] = 1.0f;
      continue;
    }
    OnlineSoftmaxRow<V>(x + lo, hi - lo, scale, row_max + r, row_sum + r, rescale + r);
  }
}

// Keys per packed chunk of V: 32 x head_size floats (8 KiB at 64, 32 KiB
// at kMaxPackedHeadSize) stay in L1 while every row tile reads them.
inline constexpr int64_t kValueChunk = 32;

// MR rows of P (p, stride ps) times n packed rows of V (vp, stride vs)
// into output columns [0, 2W) of out (stride os), added to what out holds
// (first multiplied by keep[r] when keep is set) when kAccumulate; the
// result multiplied by finish[r] when finish is set; kMasked: only the
// lanes of m0 / m1.
template <typename V, int MR, bool kMasked, bool kAccumulate>
void ContextTile(const float* p, int64_t ps, const float* vp, int64_t vs, int64_t n, float* out,
                 int64_t os, typename V::Mask m0, typename V::Mask m1, const float* keep,
                 const float* finish) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  Reg acc0[MR];
  Reg acc1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    if constexpr (!kAccumulate) {
      acc0[r] = acc1[r] = V::Zero();
    } else if constexpr (kMasked) {
      acc0[r] = V::Load(out + r * os, m0);
      acc1[r] = V::Load(out + r * os + W, m1);
    } else {
      acc0[r] = V::Load(out + r * os);
      acc1[r] = V::Load(out + r * os + W);
    }
  }
  if (kAccumulate && keep != nullptr) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const Reg k = V::Set1(keep[r]);
      acc0[r] = V::Mul(acc0[r], k);
      acc1[r] = V::Mul(acc1[r], k);
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    // Packed rows are zero past head_size, so full loads are safe and exact.
    const Reg b0 = V::Load(vp + j * vs);
    const Reg b1 = V::Load(vp + j * vs + W);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const Reg x = V::Set1(p[r * ps + j]);
      acc0[r] = V::Fma(x, b0, acc0[r]);
      acc1[r] = V::Fma(x, b1, acc1[r]);
    }
  }
  if (finish != nullptr) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const Reg f = V::Set1(finish[r]);
      acc0[r] = V::Mul(acc0[r], f);
      acc1[r] = V::Mul(acc1[r], f);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    if constexpr (kMasked) {
      V::Store(out + r * os, acc0[r], m0);
      V::Store(out + r * os + W, acc1[r], m1);
    } else {
      V::Store(out + r * os, acc0[r]);
      V::Store(out + r * os + W, acc1[r]);
    }
  }
}

// MR rows x all head_size columns, n keys of the packed chunk vp ([n, vs],
// vs = head_size rounded up to 2W); p is the rows' first probability of
// the chunk (stride ps), keep / finish their factors (or null).
template <typename V, int MR, bool kAccumulate>
void ContextRows(const AttentionHeadArgs& a, const float* p, int64_t ps, const float* vp,
                 int64_t vs, int64_t n, float* out, const float* keep, const float* finish) {
  constexpr int64_t W = V::kWidth;
  const int64_t d = a.head_size;
  int64_t c = 0;
  for (; c + 2 * W <= d; c += 2 * W) {
    ContextTile<V, MR, false, kAccumulate>(p, ps, vp + c, vs, n, out + c, a.context_stride,
                                           V::TailMask(0), V::TailMask(0), keep, finish);
  }
  if (c < d) {
    ContextTile<V, MR, true, kAccumulate>(p, ps, vp + c, vs, n, out + c, a.context_stride,
                                          LanesUpTo<V>(d - c), LanesUpTo<V>(d - c - W), keep,
                                          finish);
  }
}

template <typename V, bool kAccumulate>
void ContextChunk(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                  const float* probs, int64_t ps, const float* vp, int64_t vs, int64_t n,
                  const float* keep, const float* finish) {
  // Row r's factors, or null.
  auto at = [&](const float* f, int64_t r) { return f != nullptr ? f + (r - row_begin) : nullptr; };
  int64_t r = row_begin;
  for (; r + kTileRows <= row_end; r += kTileRows) {
    ContextRows<V, kTileRows, kAccumulate>(a, probs + (r - row_begin) * ps, ps, vp, vs, n,
                                           a.context + r * a.context_stride, at(keep, r),
                                           at(finish, r));
  }
  if (r < row_end) {
    ForRows<kTileRows - 1>(row_end - r, [&](auto rows) {
      ContextRows<V, decltype(rows)::value, kAccumulate>(a, probs + (r - row_begin) * ps, ps, vp,
                                                         vs, n, a.context + r * a.context_stride,
                                                         at(keep, r), at(finish, r));
    });
  }
}

// V is read in chunks of kValueChunk keys copied to a contiguous block: in
// place its rows sit 3H floats apart, a stride that maps them onto few L1
// sets, so every row tile would fetch them again from L2. The first chunk
// applies scale.keep (or overwrites), the last one scale.finish: the online
// softmax's rescaling and final division cost no pass over the context.
template <typename V>
void AttentionContext(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                      int64_t key_begin, int64_t key_end, const float* probs, int64_t ps,
                      ContextScale scale) {
  constexpr int64_t W = V::kWidth;
  const int64_t d = a.head_size;
  const int64_t vs = (d + 2 * W - 1) / (2 * W) * (2 * W);
  alignas(64) float vp[kValueChunk * (kMaxPackedHeadSize + 2 * W)];
  for (int64_t j0 = key_begin; j0 < key_end; j0 += kValueChunk) {
    const int64_t n = key_end - j0 < kValueChunk ? key_end - j0 : kValueChunk;
    for (int64_t j = 0; j < n; ++j) {
      if (j0 + j + kPrefetchRows < key_end) {
        PrefetchRow<V>(a.v + (j0 + j + kPrefetchRows) * a.qkv_stride, d);
      }
      const float* v = a.v + (j0 + j) * a.qkv_stride;
      float* row = vp + j * vs;
      int64_t c = 0;
      for (; c + W <= d; c += W) V::Store(row + c, V::Load(v + c));
      if (c < d) {
        V::Store(row + c, V::Load(v + c, V::TailMask(d - c)));  // zero-filled lanes
        c += W;
      }
      for (; c < vs; c += W) V::Store(row + c, V::Zero());
    }
    const bool first = j0 == key_begin;
    const float* finish = j0 + n == key_end ? scale.finish : nullptr;
    const float* p = probs + (j0 - key_begin);
    if (first && scale.keep == nullptr) {
      ContextChunk<V, false>(a, row_begin, row_end, p, ps, vp, vs, n, nullptr, finish);
    } else {
      ContextChunk<V, true>(a, row_begin, row_end, p, ps, vp, vs, n, first ? scale.keep : nullptr,
                            finish);
    }
  }
}

// RotateRows (attention_kernels.h) for rotate_half pairs (c, c + pairs),
// W pairs at a time; interleaved pairs take the scalar kernel.
template <typename V>
void RotateHalfRows(const RotaryView& rotary, const float* x, int64_t stride, int64_t row_begin,
                    int64_t row_end, int64_t head_size, float* out) {
  using Reg = typename V::Reg;
  constexpr int64_t W = V::kWidth;
  const int64_t pairs = rotary.pairs;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* in = x + r * stride;
    float* o = out + (r - row_begin) * head_size;
    const float* cos = rotary.cos + r * pairs;
    const float* sin = rotary.sin + r * pairs;
    for (int64_t p = 0; p < pairs; p += W) {
      const typename V::Mask m = LanesUpTo<V>(pairs - p);
      const Reg x1 = V::Load(in + p, m);
      const Reg x2 = V::Load(in + pairs + p, m);
      const Reg c = V::Load(cos + p, m);
      const Reg s = V::Load(sin + p, m);
      V::Store(o + p, V::Sub(V::Mul(x1, c), V::Mul(x2, s)), m);
      V::Store(o + pairs + p, V::Add(V::Mul(x2, c), V::Mul(x1, s)), m);
    }
    for (int64_t c = 2 * pairs; c < head_size; ++c) o[c] = in[c];  // past the rotated share
  }
}

}  // namespace engine::kernels::vec
