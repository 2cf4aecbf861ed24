// Model configuration read from a Hugging Face config.json, and the options
// a caller chooses when loading an encoder.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace engine {

enum class Activation { kGeluErf, kGeluTanh, kRelu };

// Where each sublayer's LayerNorm sits.
//   kPost (BERT): x = LN(x + Sublayer(x))
//   kPre:         x = x + Sublayer(LN(x)), and one final LN after the last layer.
enum class LayerNormPlacement { kPost, kPre };

enum class Precision { kFloat32, kInt8 };

struct ModelConfig {
  std::string model_type = "bert";
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 512;
  int type_vocab_size = 2;
  int pad_token_id = 0;
  float layer_norm_eps = 1e-12f;
  Activation activation = Activation::kGeluErf;
  LayerNormPlacement layer_norm_placement = LayerNormPlacement::kPost;

  int head_size() const { return hidden_size / num_heads; }
};

// Parses config.json text. `source` names the file in error messages.
absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text,
                                             const std::string& source);

// Serializes a config in Hugging Face layout (used by make-model).
std::string ModelConfigToJson(const ModelConfig& config);

const char* ActivationName(Activation activation);
const char* LayerNormPlacementName(LayerNormPlacement placement);
const char* PrecisionName(Precision precision);
// "fp32" or "int8" (as PrecisionName prints them); false for anything else.
bool ParsePrecision(const std::string& name, Precision* precision);

struct EncoderOptions {
  // OpenMP threads for the engine; 0 keeps the runtime's default (all cores).
  int threads = 0;
  // The most tokens one Encode call may hold; the workspace is sized from it
  // at load so that Encode allocates nothing afterwards.
  int max_batch_tokens = 16384;
  Precision precision = Precision::kFloat32;
};

}  // namespace engine
