// The encoder's weights in the form the layers run on: dense layers already
// in oneDNN's blocked layout, vectors as float32. Loaded from a checkpoint
// by their Hugging Face names (see README "Weights and tensor names").
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dnnl/dense.h"
#include "dnnl/quantized_dense.h"
#include "engine/config.h"
#include "model/checkpoint.h"

namespace engine {

struct LayerNormWeights {
  std::vector<float> gamma;
  std::vector<float> beta;
};

struct EmbeddingWeights {
  std::vector<float> word;        // [vocab, H]
  std::vector<float> position;    // [max_position, H]
  std::vector<float> token_type;  // [type_vocab, H]
  LayerNormWeights norm;
};

struct LayerWeights {
  std::unique_ptr<Dense> qkv;            // H -> 3H, Q|K|V, with bias
  std::unique_ptr<Dense> attention_out;  // H -> H, bias applied by Add & Norm
  std::vector<float> attention_out_bias;
  // Post-LN: applied to x + attention. Pre-LN: applied to the attention's input.
  LayerNormWeights attention_norm;
  std::unique_ptr<Dense> ffn_in;   // H -> I, bias and activation fused
  std::unique_ptr<Dense> ffn_out;  // I -> H, bias applied by Add & Norm
  std::vector<float> ffn_out_bias;
  // Post-LN: applied to x + FFN. Pre-LN: applied to the FFN's input.
  LayerNormWeights ffn_norm;

  // Precision::kInt8: the four dense layers above are null and these hold
  // them instead; every bias is applied by the int8 epilogues.
  std::unique_ptr<QuantizedDense> qkv_int8;
  std::unique_ptr<QuantizedDense> attention_out_int8;
  std::unique_ptr<QuantizedDense> ffn_in_int8;
  std::unique_ptr<QuantizedDense> ffn_out_int8;
  std::vector<float> qkv_bias;     // int8 only
  std::vector<float> ffn_in_bias;  // int8 only
};

struct PoolerWeights {
  std::vector<float> weight;  // [H, H], torch.nn.Linear layout
  std::vector<float> bias;    // [H]
};

struct ModelWeights {
  EmbeddingWeights embeddings;
  std::vector<LayerWeights> layers;
  LayerNormWeights final_norm;            // pre-LN only: encoder.LayerNorm
  std::unique_ptr<PoolerWeights> pooler;  // when the checkpoint has pooler.dense
};

// With `int8_cache`, the encoder layers' dense weights are quantized to s8
// (QuantizedDense) one tensor at a time, so no float copy of them all is held.
absl::StatusOr<ModelWeights> LoadWeights(const Checkpoint& checkpoint, const ModelConfig& config,
                                         MatmulCache* cache, Int8MatmulCache* int8_cache = nullptr);

}  // namespace engine
