#include "layers/encoder_layer.h"

#include <cstring>

#include "common/status_macros.h"
#include "layers/precision_policy.h"

namespace engine {
namespace {

// Moves the kept token of each sequence to row i of the attention context
// and of the residual stream, the rest of the last layer's input. In place:
// the kept row of sequence i is at or after row i, and rows are moved in
// increasing order, so no source is overwritten before it is read.
void GatherKeptRows(const PackedBatch& packed, TokenRows rows, const ModelConfig& config,
                    Workspace& ws) {
  const size_t context = static_cast<size_t>(config.query_width());
  const size_t hidden = static_cast<size_t>(config.hidden_size);
  for (int i = 0; i < packed.num_sequences; ++i) {
    const size_t from = static_cast<size_t>(KeptRow(packed, rows, i));
    const size_t to = static_cast<size_t>(i);
    if (from == to) continue;
    std::memcpy(ws.context.data() + to * context, ws.context.data() + from * context,
                context * sizeof(float));
    std::memcpy(ws.hidden.data() + to * hidden, ws.hidden.data() + from * hidden,
                hidden * sizeof(float));
  }
}

// Every residual add and LayerNorm is one fused Add & Norm sweep. Post-LN
// updates workspace.hidden in place. Pre-LN keeps the residual in hidden
// and each sublayer's input in normed: the Add & Norm after a sublayer
// writes the new residual and the next sublayer's normalized input (the
// next layer's LN1 or the final LN) in one sweep. `policy` runs on every
// row; `kept_policy` on the kept rows of the last layer after its attention,
// when `rows` keeps one token per sequence.
template <class Policy>
absl::Status RunLayers(Policy& policy, Policy& kept_policy, TokenRows rows,
                       const PackedBatch& packed, ModelWeights& weights, const ModelConfig& config,
                       Workspace& ws, const BetweenLayers& between_layers) {
  const bool post = config.layer_norm_placement == LayerNormPlacement::kPost;
  float* x = ws.hidden.data();
  float* input = post ? x : ws.normed.data();
  float* residual_out = post ? nullptr : x;
  policy.PrepareInput(post ? nullptr : &weights.layers[0].attention_norm);
  for (size_t l = 0; l < weights.layers.size(); ++l) {
    LayerWeights& layer = weights.layers[l];
    const bool last = l + 1 == weights.layers.size();
    // The compact last layer needs only its kept rows' context.
    const TokenRows query_rows = last ? rows : TokenRows::kAll;
    RETURN_IF_ERROR(policy.Attend(layer, input, query_rows));
    Policy* rest = &policy;
    if (last && rows != TokenRows::kAll) {
      GatherKeptRows(packed, rows, config, ws);
      rest = &kept_policy;
    }
    RETURN_IF_ERROR(rest->ProjectContext(layer));
    rest->AddNorm(x, layer.attention_out, post ? layer.attention_norm : layer.ffn_norm, input,
                  residual_out, layer.attention_out_norm);
    RETURN_IF_ERROR(rest->FeedForward(layer, input));
    const LayerNormWeights& next = post   ? layer.ffn_norm
                                   : last ? weights.final_norm
                                          : weights.layers[l + 1].attention_norm;
    rest->AddNorm(x, layer.ffn_out, next, input, residual_out, layer.ffn_out_norm);
    const int done = static_cast<int>(l + 1), layers = static_cast<int>(weights.layers.size());
    if (between_layers && done < layers) between_layers(done, layers);
  }
  return absl::OkStatus();
}

template <class Policy>
absl::Status RunPolicy(const LayerContext& context, const LayerContext& kept_context,
                       TokenRows rows, ModelWeights& weights, const ModelConfig& config,
                       Workspace& workspace, const BetweenLayers& between_layers) {
  Policy policy(context);
  Policy kept_policy(kept_context);
  return RunLayers(policy, kept_policy, rows, context.packed, weights, config, workspace,
                   between_layers);
}

}  // namespace

absl::StatusOr<const float*> RunEncoderLayers(ModelWeights& weights, Precision precision,
                                              const ModelConfig& config, const PackedBatch& packed,
                                              TokenRows rows, Workspace& workspace,
                                              const BetweenLayers& between_layers) {
  // The kept rows of the last layer as a batch of one-row sequences.
  PackedBatch kept;
  kept.offsets = workspace.row_offsets.data();
  kept.num_sequences = packed.num_sequences;
  kept.tokens = packed.num_sequences;
  const LayerContext context{config, packed, workspace, weights.relative_position, weights.rotary};
  const LayerContext kept_context{config, kept, workspace, weights.relative_position,
                                  weights.rotary};
  absl::Status status;
  if (precision == Precision::kInt8) {
    status = RunPolicy<Int8Policy>(context, kept_context, rows, weights, config, workspace,
                                   between_layers);
  } else if (precision == Precision::kBf16) {
    status = RunPolicy<Bf16Policy>(context, kept_context, rows, weights, config, workspace,
                                   between_layers);
  } else {
    status = RunPolicy<FloatPolicy>(context, kept_context, rows, weights, config, workspace,
                                    between_layers);
  }
  if (!status.ok()) return status;
  return config.layer_norm_placement == LayerNormPlacement::kPost
             ? static_cast<const float*>(workspace.hidden.data())
             : static_cast<const float*>(workspace.normed.data());
}

}  // namespace engine
