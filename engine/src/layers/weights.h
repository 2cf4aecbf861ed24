// The encoder's weights in the form the layers run on: dense layers already
// in oneDNN's blocked layout (float or s8, per the precision), vectors as
// float32. Loaded from a checkpoint by the names the model's architecture
// gives (models/architecture.h; docs/models.md, "Weights and tensor names").
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dnnl/dense.h"
#include "dnnl/quantized_dense.h"
#include "engine/config.h"
#include "families/architecture.h"
#include "io/checkpoint.h"
#include "kernels/attention_kernels.h"
#include "layers/relative_position.h"
#include "layers/rotary.h"

namespace engine {

// Empty: an identity (ModernBERT's layer 0 before attention).
struct LayerNormWeights {
  std::vector<float> gamma;
  std::vector<float> beta;  // zeros where the checkpoint has no bias

  bool identity() const { return gamma.empty(); }
};

// One torch.nn.Linear in the precision the encoder runs: `fp32` (float32
// or bf16 types, Dense::types) or `int8` is set. `bias` holds the bias when the kernel consuming
// the output applies it (Add & Norm, the int8 epilogues); it is empty when the float matmul fuses
// it.
struct Linear {
  std::unique_ptr<Dense> fp32;
  std::unique_ptr<QuantizedDense> int8;
  std::vector<float> bias;
  // int8: the input comes in two levels, stacked as twice the rows, and so
  // does the accumulator (ModelConfig::int8_two_level_ffn_out).
  bool two_level_input = false;
};

struct EmbeddingWeights {
  std::vector<float> word;         // [vocab, E]
  std::vector<float> position;     // [max_position, E]; empty: not learned
  std::vector<float> token_type;   // [type_vocab, E]; empty: the family has none
  LayerNormWeights norm;           // over E
  std::unique_ptr<Dense> project;  // E -> H (ELECTRA), bias fused; null when E == H
};

// The last layer's Q|K|V once more as two float matmuls, so that a compact
// pass (TokenRows kFirst / kLast) projects K|V for every row and Q only for
// the rows it keeps (FloatPolicy::ProjectKeptQkv). A second copy of one
// layer's Q|K|V weights (1/L of the attention projections); fp32 only (null
// in int8 and bf16, whose compact pass projects Q for every row).
struct KeptRowQkv {
  std::unique_ptr<Dense> query;
  std::unique_ptr<Dense> key_value;
};

struct LayerWeights {
  // H -> Q|K|V (ModelConfig::qkv_width; zero biases where the checkpoint
  // has none)
  Linear qkv;
  KeptRowQkv kept_qkv;   // the last layer only
  Linear attention_out;  // query_width -> H
  // Per-head RMSNorm gammas of Q and K [head_size]; empty: none.
  std::vector<float> q_norm;
  std::vector<float> k_norm;
  // Gemma: the attention's and the FFN's outputs normalized before the
  // residual add; identity (empty): none.
  LayerNormWeights attention_out_norm;
  LayerNormWeights ffn_out_norm;
  // Post-LN: applied to x + attention. Pre-LN: applied to the attention's input.
  LayerNormWeights attention_norm;
  // H -> I, activation fused (float) or in the int8 epilogue; gated:
  // H -> 2I, the activated half first, the gate applied after it.
  Linear ffn_in;
  Linear ffn_out;  // I -> H
  // Post-LN: applied to x + FFN. Pre-LN: applied to the FFN's input.
  LayerNormWeights ffn_norm;
  // The keys each token sees (ModelConfig::attention_window, causal).
  kernels::KeyBand band;
  int rotary = -1;  // index in ModelWeights::rotary; -1: none
};

struct PoolerWeights {
  std::vector<float> weight;  // [H, H], torch.nn.Linear layout
  std::vector<float> bias;    // [H]
};

struct ModelWeights {
  EmbeddingWeights embeddings;
  std::vector<LayerWeights> layers;
  LayerNormWeights final_norm;             // pre-LN only
  std::unique_ptr<PoolerWeights> pooler;   // when the checkpoint has one
  RelativePositionBias relative_position;  // MPNet, ALiBi; empty otherwise
  std::vector<RotaryTable> rotary;         // global, then local layers' theta
};

// The encoder layers' dense weights in `precision`: float32; s8
// (QuantizedDense, on `int8_cache`) quantized one tensor at a time, so no
// float copy of them all is held; or bf16 (Dense in bf16 types; the FFN's
// first layer writes bf16 for the second). Everything else is float32.
absl::StatusOr<ModelWeights> LoadWeights(const Checkpoint& checkpoint,
                                         const Architecture& architecture,
                                         const ModelConfig& config, Precision precision,
                                         MatmulCache* cache, Int8MatmulCache* int8_cache = nullptr);

}  // namespace engine
