// ParseModelConfig on arbitrary text. An accepted config must be one the
// engine can size (positive dimensions, heads dividing the hidden size, a
// positive finite epsilon, pad id inside the vocabulary) and must survive a
// round trip through ModelConfigToJson unchanged.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/config.h"
#include "fuzz_util.h"

namespace {

bool SameConfig(const engine::ModelConfig& a, const engine::ModelConfig& b) {
  return a.model_type == b.model_type && a.vocab_size == b.vocab_size &&
         a.hidden_size == b.hidden_size && a.num_layers == b.num_layers &&
         a.num_heads == b.num_heads && a.intermediate_size == b.intermediate_size &&
         a.max_position_embeddings == b.max_position_embeddings &&
         a.type_vocab_size == b.type_vocab_size && a.pad_token_id == b.pad_token_id &&
         a.layer_norm_eps == b.layer_norm_eps && a.activation == b.activation &&
         a.layer_norm_placement == b.layer_norm_placement && a.architecture == b.architecture &&
         a.embedding_size == b.embedding_size && a.position_ids == b.position_ids &&
         a.relative_attention_buckets == b.relative_attention_buckets;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = engine::ParseModelConfig(text, "config.json");
  if (!config.ok()) return 0;
  const engine::ModelConfig& c = *config;
  fuzz::Check(c.vocab_size > 0 && c.hidden_size > 0 && c.num_layers > 0 && c.num_heads > 0 &&
                  c.intermediate_size > 0 && c.max_position_embeddings > 0 && c.max_length() > 0 &&
                  c.token_types() > 0,
              "dimensions positive");
  fuzz::Check(c.hidden_size % c.num_heads == 0, "heads divide the hidden size");
  fuzz::Check(std::isfinite(c.layer_norm_eps) && c.layer_norm_eps > 0, "eps positive, finite");
  fuzz::Check(c.pad_token_id >= 0 && c.pad_token_id < c.vocab_size, "pad id in the vocabulary");
  auto again = engine::ParseModelConfig(engine::ModelConfigToJson(c), "round trip");
  fuzz::Check(again.ok(), "a parsed config serializes to a valid config");
  fuzz::Check(SameConfig(c, *again), "the round trip keeps every field");
  return 0;
}
