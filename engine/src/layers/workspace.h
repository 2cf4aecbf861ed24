// Activation buffers of one encoder, sized at load from the token budget so
// that Encode allocates nothing. Pages come from anonymous mmap: zeroed and
// only committed when first touched, so an unused budget costs no memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/config.h"
#include "kernels/attention_kernels.h"
#include "runtime/buffer.h"

namespace engine {

struct Workspace {
  // All [rows, width] with rows = BucketRows(max_batch_tokens).
  Buffer hidden;        // the residual stream / layer output    [rows, H]
  Buffer normed;        // pre-LN: LN(hidden), the sublayer input [rows, H]
  Buffer qkv;           // fused Q, K, V projections  [rows, qkv_width (3H)]
  Buffer context;       // attention output before projection [rows, query_width (H)]
  Buffer sublayer;      // a sublayer's output before Add & Norm [rows, H]
  Buffer intermediate;  // FFN inner activations          [rows, max(I or 2I gated, E)]
  Buffer gated;         // gated FFNs: act(gate) * up              [rows, I]
  Buffer scores;        // attention scratch, attention_scratch_floats per thread
  // Precision::kInt8 only (empty otherwise): a matmul's input quantized per
  // row, and its int32 output. One of each suffices because every int8
  // matmul consumes its input before the next quantization overwrites it.
  // A two-level FFN output projection (ModelConfig::int8_two_level_ffn_out)
  // stacks its input's two levels: rows 2 x tokens of quantized, row_scale,
  // row_zero and accumulator.
  Buffer quantized;    // u8 [rows, max(H, I)]
  Buffer row_scale;    // float [rows]
  Buffer row_zero;     // int32 [rows]
  Buffer accumulator;  // int32 [rows, max(3H, I or 2I gated)]
  // Precision::kBf16 only: a matmul's [rows, H] input as bf16. The FFN's
  // inner activations are bf16 in `intermediate` (Bf16Intermediate).
  Buffer bf16_input;
  // 0, 1, ..., rows: the offsets of a batch of one-row sequences (the kept
  // rows of a last layer that runs on one token per sequence).
  std::vector<int> row_offsets;
  int64_t rows = 0;
  int threads = 1;
  // kernels::AttentionScratchFloats of the model's heads.
  int64_t attention_scratch_floats = 0;

  static absl::StatusOr<Workspace> Create(const ModelConfig& config, int64_t max_batch_tokens,
                                          int threads, Precision precision = Precision::kFloat32);
  // The int8 buffers with their element types (mmap'd memory has no type).
  uint8_t* quantized_u8() const { return reinterpret_cast<uint8_t*>(quantized.data()); }
  int32_t* row_zero_s32() const { return reinterpret_cast<int32_t*>(row_zero.data()); }
  int32_t* accumulator_s32() const { return reinterpret_cast<int32_t*>(accumulator.data()); }
  // The bf16 buffers as raw bits.
  uint16_t* bf16_input_bits() const { return reinterpret_cast<uint16_t*>(bf16_input.data()); }
  uint16_t* bf16_intermediate() const { return reinterpret_cast<uint16_t*>(intermediate.data()); }
  // Thread `thread`'s scratch of the streaming attention (fixed size,
  // whatever the sequence length).
  float* attention_scratch(int thread) const {
    return scores.data() + static_cast<size_t>(thread) * attention_scratch_floats;
  }
};

}  // namespace engine
