#include "layers/workspace.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "dnnl/bound_matmul.h"

namespace engine {

absl::StatusOr<Workspace> Workspace::Create(const ModelConfig& config, int64_t max_batch_tokens,
                                            int threads, Precision precision) {
  Workspace ws;
  ws.rows = BucketRows(max_batch_tokens);
  ws.threads = std::max(threads, 1);
  ws.row_offsets.resize(static_cast<size_t>(ws.rows) + 1);
  std::iota(ws.row_offsets.begin(), ws.row_offsets.end(), 0);
  ws.attention_scratch_floats = kernels::AttentionScratchFloats(
      config.head_size(), config.position_embedding == PositionEmbedding::kRotary);
  const size_t rows = static_cast<size_t>(ws.rows);
  const size_t h = static_cast<size_t>(config.hidden_size);
  const size_t inter = static_cast<size_t>(config.intermediate_size);
  const size_t ffn_in = static_cast<size_t>(config.ffn_in_width());
  // Q | K | V and the context: wider or narrower than H where heads have a
  // width of their own or K and V fewer heads (Qwen3, Gemma 3).
  const size_t qkv = static_cast<size_t>(config.qkv_width());
  const size_t context = static_cast<size_t>(config.query_width());
  // intermediate also holds the embeddings before their projection (ELECTRA).
  const size_t intermediate_width = std::max(ffn_in, static_cast<size_t>(config.embedding_width()));
  const size_t scores =
      static_cast<size_t>(ws.threads) * static_cast<size_t>(ws.attention_scratch_floats);
  for (auto [buffer, floats] : {std::pair<Buffer*, size_t>{&ws.hidden, rows * h},
                                {&ws.normed, rows * h},
                                {&ws.qkv, rows * qkv},
                                {&ws.context, rows * context},
                                {&ws.sublayer, rows * h},
                                {&ws.intermediate, rows * intermediate_width},
                                {&ws.gated, config.gated_ffn ? rows * inter : 0},
                                {&ws.scores, scores}}) {
    absl::StatusOr<Buffer> allocated = Buffer::Allocate(floats);
    if (!allocated.ok()) return allocated.status();
    *buffer = *std::move(allocated);
  }
  if (precision == Precision::kBf16) {
    // Buffer counts 4-byte floats: bf16 rows take half as many.
    absl::StatusOr<Buffer> allocated = Buffer::Allocate((rows * std::max(h, context) + 1) / 2);
    if (!allocated.ok()) return allocated.status();
    ws.bf16_input = *std::move(allocated);
  }
  if (precision == Precision::kInt8) {
    // A two-level FFN output projection reads twice the rows of I and
    // writes twice the rows of H (the two levels stacked).
    const size_t two_level_rows =
        config.int8_two_level_ffn_out ? static_cast<size_t>(BucketRows(2 * max_batch_tokens)) : 0;
    // Buffer counts 4-byte floats: u8 rows take a quarter as many.
    const size_t quantized =
        (std::max(rows * std::max({h, inter, context}), two_level_rows * inter) + 3) / 4;
    const size_t row_params = std::max(rows, two_level_rows);
    for (auto [buffer, floats] :
         {std::pair<Buffer*, size_t>{&ws.quantized, quantized},
          {&ws.row_scale, row_params},
          {&ws.row_zero, row_params},
          {&ws.accumulator, std::max(rows * std::max(qkv, ffn_in), two_level_rows * h)}}) {
      absl::StatusOr<Buffer> allocated = Buffer::Allocate(floats);
      if (!allocated.ok()) return allocated.status();
      *buffer = *std::move(allocated);
    }
  }
  return ws;
}

}  // namespace engine
