// Attention kernels written once against a vector type V (avx2::Vec,
// avx512::Vec) and instantiated in the source compiled for V's ISA. Include
// only from such a source. No std:: algorithms here: an inline library
// template instantiated in an ISA's source could be the copy the linker
// hands to portable code.
//
// Scores (Q K^T): K is packed transposed, in chunks of 2W keys ([head_size,
// 2W] each, zero-padded past the sequence), up to kKeyPackFloats on the
// stack, so a register tile of MR query rows x 2W keys is MR x 2 FMAs per
// loaded pair of K^T vectors and MR broadcasts of q. The pack is read by
// every query row of the block, so its cost is 1 / rows of the work.
// Context (P V): V rows are contiguous in the head dimension; they are
// copied chunk by chunk into a compact block (see AttentionContext) and a
// tile of MR query rows x 2W output columns broadcasts P and loads V rows.
// Both tiles hold 2 * MR accumulators (MR = kTileRows = 6 on full tiles).
// Ragged edges use masked loads and stores. Stack: at most 64 KiB (the K^T
// pack).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/attention_kernels.h"

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
                     float* scores) {
  constexpr int64_t W = V::kWidth;
  const int64_t d = a.head_size;
  const int64_t len = a.length;
  const int64_t chunk_floats = d * 2 * W;  // one [d, 2W] chunk
  // At least 2 chunks: d <= kMaxPackedHeadSize, 2W <= 32.
  const int64_t chunks_per_pass = kKeyPackFloats / chunk_floats;
  alignas(64) float kt[kKeyPackFloats];
  for (int64_t p0 = 0; p0 < len; p0 += chunks_per_pass * 2 * W) {
    const int64_t pass_keys =
        len - p0 < chunks_per_pass * 2 * W ? len - p0 : chunks_per_pass * 2 * W;
    const int64_t chunks = (pass_keys + 2 * W - 1) / (2 * W);
    // Chunk cc: kt[cc][c][jj] = k[p0 + 2W cc + jj][c]; keys past the end are zero.
    for (int64_t cc = 0; cc < chunks; ++cc) {
      float* chunk = kt + cc * chunk_floats;
      const int64_t n = pass_keys - cc * 2 * W < 2 * W ? pass_keys - cc * 2 * W : 2 * W;
      for (int64_t jj = 0; jj < n; ++jj) {
        const int64_t j = p0 + cc * 2 * W + jj;
        if (j + kPrefetchRows < len) PrefetchRow<V>(a.k + (j + kPrefetchRows) * a.qkv_stride, d);
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
      if (p0 == 0) {  // the next tile's query rows, first touched in this pass
        for (int64_t i = r + kRows; i < r + 2 * kRows && i < row_end; ++i) {
          PrefetchRow<V>(a.q + i * a.qkv_stride, d);
        }
      }
      float* s = scores + (r - row_begin) * len + p0;
      for (int64_t cc = 0; cc < chunks; ++cc) {
        const int64_t n = pass_keys - cc * 2 * W < 2 * W ? pass_keys - cc * 2 * W : 2 * W;
        const float* bias =
            a.position_bias != nullptr ? a.position_bias + (p0 + cc * 2 * W - r) : nullptr;
        ScoresTile<V, kRows>(q, a.qkv_stride, kt + cc * chunk_floats, d, s + cc * 2 * W, len, n,
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

// Keys per packed chunk of V: 32 x head_size floats (8 KiB at 64, 32 KiB
// at kMaxPackedHeadSize) stay in L1 while every row tile reads them.
inline constexpr int64_t kValueChunk = 32;

// MR rows of P (p, stride ps) times n packed rows of V (vp, stride vs)
// into output columns [0, 2W) of out (stride os), added to what out holds
// when kAccumulate; kMasked: only the lanes of m0 / m1.
template <typename V, int MR, bool kMasked, bool kAccumulate>
void ContextTile(const float* p, int64_t ps, const float* vp, int64_t vs, int64_t n, float* out,
                 int64_t os, typename V::Mask m0, typename V::Mask m1) {
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

// MR rows x all head_size columns, keys [j0, j0 + n) of the packed chunk
// vp ([n, vs], vs = head_size rounded up to 2W).
template <typename V, int MR, bool kAccumulate>
void ContextRows(const AttentionHeadArgs& a, const float* p, const float* vp, int64_t vs, int64_t n,
                 float* out) {
  constexpr int64_t W = V::kWidth;
  const int64_t d = a.head_size;
  int64_t c = 0;
  for (; c + 2 * W <= d; c += 2 * W) {
    ContextTile<V, MR, false, kAccumulate>(p, a.length, vp + c, vs, n, out + c, a.context_stride,
                                           V::TailMask(0), V::TailMask(0));
  }
  if (c < d) {
    ContextTile<V, MR, true, kAccumulate>(p, a.length, vp + c, vs, n, out + c, a.context_stride,
                                          LanesUpTo<V>(d - c), LanesUpTo<V>(d - c - W));
  }
}

template <typename V, bool kAccumulate>
void ContextChunk(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                  const float* probs, const float* vp, int64_t vs, int64_t n) {
  int64_t r = row_begin;
  for (; r + kTileRows <= row_end; r += kTileRows) {
    ContextRows<V, kTileRows, kAccumulate>(a, probs + (r - row_begin) * a.length, vp, vs, n,
                                           a.context + r * a.context_stride);
  }
  if (r < row_end) {
    ForRows<kTileRows - 1>(row_end - r, [&](auto rows) {
      ContextRows<V, decltype(rows)::value, kAccumulate>(a, probs + (r - row_begin) * a.length, vp,
                                                         vs, n, a.context + r * a.context_stride);
    });
  }
}

// V is read in chunks of kValueChunk keys copied to a contiguous block: in
// place its rows sit 3H floats apart, a stride that maps them onto few L1
// sets, so every row tile would fetch them again from L2.
template <typename V>
void AttentionContext(const AttentionHeadArgs& a, int64_t row_begin, int64_t row_end,
                      const float* probs) {
  constexpr int64_t W = V::kWidth;
  const int64_t d = a.head_size;
  const int64_t vs = (d + 2 * W - 1) / (2 * W) * (2 * W);
  alignas(64) float vp[kValueChunk * (kMaxPackedHeadSize + 2 * W)];
  for (int64_t j0 = 0; j0 < a.length; j0 += kValueChunk) {
    const int64_t n = a.length - j0 < kValueChunk ? a.length - j0 : kValueChunk;
    for (int64_t j = 0; j < n; ++j) {
      if (j0 + j + kPrefetchRows < a.length) {
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
    if (j0 == 0) {
      ContextChunk<V, false>(a, row_begin, row_end, probs, vp, vs, n);
    } else {
      ContextChunk<V, true>(a, row_begin, row_end, probs + j0, vp, vs, n);
    }
  }
}

}  // namespace engine::kernels::vec
