// Model configuration read from a Hugging Face config.json, and the options
// a caller chooses when loading an encoder.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"

namespace engine {

// kSilu: x * sigmoid(x) (SwiGLU's gate).
enum class Activation { kGeluErf, kGeluTanh, kRelu, kSilu };

// Where each sublayer's LayerNorm sits.
//   kPost (BERT): x = LN(x + Sublayer(x))
//   kPre:         x = x + Sublayer(LN(x)), and one final LN after the last layer.
enum class LayerNormPlacement { kPost, kPre };

// kInt8: dense weights s8 per output channel, activations u8 per row.
// kBf16: dense weights and inputs bf16 with float32 accumulation, on CPUs
// with native bf16 (PrecisionSupport); everything else in float32.
enum class Precision { kFloat32, kInt8, kBf16 };
inline constexpr Precision kAllPrecisions[] = {Precision::kFloat32, Precision::kInt8,
                                               Precision::kBf16};

// How each token's position id is formed.
//   kFromZero (BERT, DistilBERT, ELECTRA): 0, 1, 2, ...
//   kAfterPadding (RoBERTa family, MPNet): pad_token_id + 1 + the number of
//   non-pad tokens before it; a pad id takes position pad_token_id.
enum class PositionIds { kFromZero, kAfterPadding };

// How positions enter the layer math.
//   kLearned: a position table added to the word embeddings (BERT).
//   kRotary: Q and K rotated by position in every layer (RoFormer's RoPE).
//   kNone: no position input beyond the attention bias (ALiBi).
enum class PositionEmbedding { kLearned, kRotary, kNone };

// Rotary position embedding of one kind of layer: dimension pair i of a head
// (i < dims / 2) turns by position * inv_freq(i), inv_freq(i) =
// 1 / base^(2i / dims), computed in float32 as transformers does.
struct RotaryConfig {
  float base = 0;
  // The leading dims of each head that rotate (even; head_size * fraction);
  // 0: the whole head.
  int dims = 0;
  // Pairs (2i, 2i + 1) when interleaved (GPT-J); (i, i + dims / 2) otherwise
  // (GPT-NeoX's rotate_half).
  bool interleaved = false;
  // GTE's fixed NTK scaling (rope_scaling {"type": "ntk"}): base * factor,
  // and inv_freq divided by factor^(2 / dims). 0: none.
  float ntk_factor = 0;
};

// Which Linear layers and LayerNorms carry a bias; a missing one is zero.
struct Biases {
  bool attention = true;  // the Q/K/V projection and the attention output
  bool ffn_in = true;
  bool ffn_out = true;
  bool norm = true;  // every LayerNorm's beta
};

// The layer math of one model, whatever family's config.json it was read
// from: the architecture registry (src/families/) maps each family's keys,
// defaults and recipe onto these fields, and the layers read only these.
// A default-constructed config belongs to no family: start from
// DefaultModelConfig() or ParseModelConfig.
struct ModelConfig {
  std::string model_type;    // as config.json spells it ("xlm-roberta")
  std::string architecture;  // the registry's family ("roberta" for xlm-roberta)
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  // Grouped-query attention: K and V have this many heads, query head h
  // reading K/V head h / (num_heads / num_kv_heads). 0: num_heads.
  int num_kv_heads = 0;
  // Each head's width where config.json gives it (Qwen3: 16 heads of 128 on
  // a hidden size of 1,024). 0: hidden_size / num_heads.
  int head_dim = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 0;
  int type_vocab_size = 0;  // 0: the family has no token-type embeddings
  int pad_token_id = 0;
  // ELECTRA: embeddings of this width projected to hidden_size; 0 = hidden_size.
  int embedding_size = 0;
  PositionIds position_ids = PositionIds::kFromZero;
  // MPNet: a learned bias per head and relative-distance bucket added to
  // every layer's attention scores; 0 = none.
  int relative_attention_buckets = 0;
  int relative_attention_max_distance = 0;
  float layer_norm_eps = 0;
  Activation activation = Activation::kGeluErf;
  LayerNormPlacement layer_norm_placement = LayerNormPlacement::kPost;
  PositionEmbedding position_embedding = PositionEmbedding::kLearned;
  // kRotary: the global layers' rotation, and the local (sliding-window)
  // layers' when local_rotary_base is 0.
  RotaryConfig rotary;
  float local_rotary_base = 0;
  // ALiBi: every head adds -slope * |i - j| to its scaled scores.
  bool alibi = false;
  // FFN(x) = out(act(gate(x)) * up(x)), both of intermediate_size.
  bool gated_ffn = false;
  // Precision::kInt8: out's input is quantized in two levels (the family's
  // Recipe::int8_two_level_ffn_out; not a config.json key).
  bool int8_two_level_ffn_out = false;
  Biases biases;
  // Pre-LN without a norm before the first layer's attention (ModernBERT:
  // the embeddings end with one).
  bool first_attention_norm = true;
  // Sliding-window layers see keys with |i - j| <= local_window; every
  // global_every_n-th layer (0, n, 2n ...) is global. 0: all layers global.
  int local_window = 0;
  int global_every_n = 1;
  // Where non-empty, whether each layer is a sliding-window layer (Gemma 3's
  // layer_types), instead of the global_every_n rule.
  std::vector<bool> sliding_layers;
  // Decoder-style layers:
  // Norms are RMSNorm: x * rsqrt(mean(x^2) + eps) * gamma (no mean, no beta).
  bool rms_norm = false;
  // Q and K each RMS-normalized per head (own gamma of head_size) before
  // rotary positions (Qwen3, Gemma 3).
  bool qk_norm = false;
  // Token i sees only tokens j <= i of its sequence (and, in a window
  // layer, j >= i - local_window).
  bool causal = false;
  // Each sublayer's output is normalized before the residual add (Gemma's
  // post_attention / post_feedforward norms).
  bool sublayer_output_norm = false;
  // The attention scores are scaled by attention_scale_base^-1/2 (Gemma's
  // query_pre_attn_scalar); 0: by head_size^-1/2.
  float attention_scale_base = 0;
  // The word embeddings are multiplied by this (Gemma: sqrt(hidden_size)); 0: 1.
  float embedding_scale = 0;

  int head_size() const { return head_dim > 0 ? head_dim : hidden_size / num_heads; }
  int kv_heads() const { return num_kv_heads > 0 ? num_kv_heads : num_heads; }
  // Widths of the attention's projections: Q and the context, K and V each,
  // and the fused Q | K | V.
  int query_width() const { return num_heads * head_size(); }
  int kv_width() const { return kv_heads() * head_size(); }
  int qkv_width() const { return query_width() + 2 * kv_width(); }
  int embedding_width() const { return embedding_size > 0 ? embedding_size : hidden_size; }
  bool has_embedding_projection() const { return embedding_width() != hidden_size; }
  // The longest input in tokens: the position table's size less the ids
  // that kAfterPadding never gives to a real token.
  int max_length() const {
    return position_ids == PositionIds::kAfterPadding ? max_position_embeddings - pad_token_id - 1
                                                      : max_position_embeddings;
  }
  // Token types an input may use: at least type 0, also where there is no table.
  int token_types() const { return type_vocab_size > 0 ? type_vocab_size : 1; }
  // Layer `layer`'s attention window (0: global).
  int attention_window(int layer) const {
    if (!sliding_layers.empty()) {
      return static_cast<size_t>(layer) < sliding_layers.size() && sliding_layers[layer]
                 ? local_window
                 : 0;
    }
    return local_window > 0 && layer % global_every_n != 0 ? local_window : 0;
  }
  // The width of the FFN's first matmul: both halves when gated.
  int ffn_in_width() const { return gated_ffn ? 2 * intermediate_size : intermediate_size; }
};

// The defaults of the registry's first family, without a shape: what
// make-model and the random-model writer start from.
ModelConfig DefaultModelConfig();

// Parses config.json text of any registered family (src/families/registry.cc);
// an unknown model_type is an error listing the supported ones. `source`
// names the file in error messages.
absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text,
                                             const std::string& source);
// The same on the parsed document (the model-directory loader parses
// config.json once and hands it to every reader).
absl::StatusOr<ModelConfig> ReadModelConfig(const nlohmann::json& config,
                                            const std::string& source);

// Serializes a config in Hugging Face layout (used by make-model).
std::string ModelConfigToJson(const ModelConfig& config);

const char* ActivationName(Activation activation);
const char* LayerNormPlacementName(LayerNormPlacement placement);
const char* PrecisionName(Precision precision);
// "fp32", "int8" or "bf16" (as PrecisionName prints them); false for
// anything else.
bool ParsePrecision(const std::string& name, Precision* precision);

struct EncoderOptions {
  // OpenMP threads for the engine; 0: DefaultThreadCount() (engine/thread_count.h),
  // the CPUs the process may use (affinity, cgroup quota) or OMP_NUM_THREADS.
  int threads = 0;
  // The most tokens one Encode call may hold; the workspace is sized from it
  // at load so that Encode allocates nothing afterwards.
  int max_batch_tokens = 16384;
  Precision precision = Precision::kFloat32;
};

}  // namespace engine
