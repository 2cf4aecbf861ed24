#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "engine/config.h"
#include "io/checkpoint.h"

namespace engine {
namespace {

constexpr char kBase[] = R"({"model_type": "bert", "vocab_size": 100, "hidden_size": 64,
  "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128)";

absl::StatusOr<ModelConfig> Parse(const std::string& extra) {
  return ParseModelConfig(std::string(kBase) + extra + "}", "config.json");
}

TEST(ModelConfigTest, DefaultsFollowBert) {
  auto c = Parse("");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->activation, Activation::kGeluErf);
  EXPECT_EQ(c->layer_norm_placement, LayerNormPlacement::kPost);
  EXPECT_FLOAT_EQ(c->layer_norm_eps, 1e-12f);
  EXPECT_EQ(c->max_position_embeddings, 512);
  EXPECT_EQ(c->type_vocab_size, 2);
  EXPECT_EQ(c->head_size(), 16);
}

TEST(ModelConfigTest, ReadsActivationsPlacementAndEps) {
  EXPECT_EQ(Parse(R"(, "hidden_act": "gelu_new")")->activation, Activation::kGeluTanh);
  EXPECT_EQ(Parse(R"(, "hidden_act": "gelu_pytorch_tanh")")->activation, Activation::kGeluTanh);
  EXPECT_EQ(Parse(R"(, "hidden_act": "relu")")->activation, Activation::kRelu);
  EXPECT_EQ(Parse(R"(, "layer_norm_placement": "pre")")->layer_norm_placement,
            LayerNormPlacement::kPre);
  EXPECT_FLOAT_EQ(Parse(R"(, "layer_norm_eps": 1e-5)")->layer_norm_eps, 1e-5f);
}

TEST(ModelConfigTest, RejectsWhatItCannotRun) {
  const std::pair<std::string, std::string> cases[] = {
      {R"(, "hidden_act": "quick_gelu")", "unsupported hidden_act \"quick_gelu\""},
      {R"(, "hidden_act": "swiglu")", "unsupported hidden_act \"swiglu\""},
      {R"(, "layer_norm_placement": "middle")", "\"layer_norm_placement\" must be"},
      {R"(, "position_embedding_type": "relative_key")", "unsupported position_embedding_type"},
      {R"(, "layer_norm_eps": -1)", "\"layer_norm_eps\" must be a positive number"},
      {R"(, "max_position_embeddings": 0)", "\"max_position_embeddings\" must be a positive"},
  };
  for (const auto& [extra, fragment] : cases) {
    auto c = Parse(extra);
    ASSERT_FALSE(c.ok()) << extra;
    EXPECT_TRUE(absl::StrContains(c.status().message(), fragment)) << c.status();
    EXPECT_TRUE(absl::StrContains(c.status().message(), "config.json")) << c.status();
  }
}

TEST(ModelConfigTest, RequiresTheShapeFields) {
  auto c = ParseModelConfig(R"({"model_type": "bert", "hidden_size": 64})", "config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "missing \"vocab_size\"")) << c.status();
}

TEST(ModelConfigTest, RoundTripsThroughJson) {
  ModelConfig config = *Parse(R"(, "hidden_act": "relu", "layer_norm_placement": "pre")");
  auto again = ParseModelConfig(ModelConfigToJson(config), "round trip");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->hidden_size, config.hidden_size);
  EXPECT_EQ(again->activation, config.activation);
  EXPECT_EQ(again->layer_norm_placement, config.layer_norm_placement);
}

// ---- the long-context families' keys (as their hub configs spell them) ----

constexpr char kNomic[] = R"({"model_type": "nomic_bert", "vocab_size": 128, "n_embd": 64,
  "n_layer": 2, "n_head": 4, "n_inner": 128, "n_positions": 8192,
  "activation_function": "swiglu", "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0,
  "rotary_emb_interleaved": false, "rotary_scaling_factor": null, "qkv_proj_bias": false,
  "mlp_fc1_bias": false, "mlp_fc2_bias": false, "prenorm": false)";
constexpr char kGte[] = R"({"model_type": "new", "vocab_size": 100, "hidden_size": 64,
  "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
  "max_position_embeddings": 8192, "type_vocab_size": 0, "position_embedding_type": "rope",
  "rope_theta": 500000, "rope_scaling": {"type": "ntk", "factor": 2.0})";
constexpr char kModernBert[] = R"({"model_type": "modernbert", "vocab_size": 100,
  "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 96,
  "hidden_activation": "gelu", "max_position_embeddings": 8192, "norm_eps": 1e-5,
  "norm_bias": false, "global_rope_theta": 160000, "local_rope_theta": 10000,
  "global_attn_every_n_layers": 3, "local_attention": 128, "attention_bias": false,
  "mlp_bias": false, "pad_token_id": 3)";

absl::StatusOr<ModelConfig> ParseWith(const char* base, const std::string& extra) {
  return ParseModelConfig(std::string(base) + extra + "}", "config.json");
}

TEST(ModelConfigTest, ReadsNomicBertsKeys) {
  auto c = ParseWith(kNomic, "");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "nomic_bert");
  EXPECT_EQ(c->hidden_size, 64);
  EXPECT_EQ(c->max_length(), 8192);
  EXPECT_EQ(c->position_embedding, PositionEmbedding::kRotary);
  EXPECT_FLOAT_EQ(c->rotary.base, 1000);
  EXPECT_EQ(c->rotary.dims, 0);  // the whole head
  EXPECT_TRUE(c->gated_ffn);
  EXPECT_EQ(c->activation, Activation::kSilu);
  EXPECT_FALSE(c->biases.attention || c->biases.ffn_in || c->biases.ffn_out);
  EXPECT_TRUE(c->biases.norm);
  EXPECT_EQ(ParseWith(kNomic, R"(, "rotary_emb_fraction": 0.5)")->rotary.dims, 8);
  EXPECT_TRUE(ParseWith(kNomic, R"(, "rotary_emb_interleaved": true)")->rotary.interleaved);
}

TEST(ModelConfigTest, ReadsGtesKeys) {
  auto c = ParseWith(kGte, "");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "gte");
  EXPECT_EQ(c->type_vocab_size, 0);
  EXPECT_FLOAT_EQ(c->rotary.base, 500000);
  EXPECT_FLOAT_EQ(c->rotary.ntk_factor, 2.0f);
  EXPECT_TRUE(c->gated_ffn);
  EXPECT_FALSE(c->biases.ffn_in);
  EXPECT_TRUE(c->biases.attention && c->biases.ffn_out);
  EXPECT_FLOAT_EQ(ParseWith(kGte, R"(, "rope_scaling": null)")->rotary.ntk_factor, 0);
}

TEST(ModelConfigTest, ReadsModernBertsKeys) {
  auto c = ParseWith(kModernBert, "");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "modernbert");
  EXPECT_EQ(c->layer_norm_placement, LayerNormPlacement::kPre);
  EXPECT_FALSE(c->first_attention_norm);
  EXPECT_FLOAT_EQ(c->rotary.base, 160000);
  EXPECT_FLOAT_EQ(c->local_rotary_base, 10000);
  EXPECT_EQ(c->local_window, 64);
  // Layers 0 and 3 global, 1 and 2 see +-64 tokens.
  EXPECT_EQ(c->attention_window(0), 0);
  EXPECT_EQ(c->attention_window(1), 64);
  EXPECT_EQ(c->attention_window(2), 64);
  EXPECT_EQ(c->attention_window(3), 0);
  EXPECT_FALSE(c->biases.attention || c->biases.ffn_in || c->biases.ffn_out || c->biases.norm);
  EXPECT_EQ(c->type_vocab_size, 0);
}

// ---- the decoder families' keys (Qwen3-Embedding's, EmbeddingGemma's) ----

constexpr char kQwen3[] = R"({"model_type": "qwen3", "vocab_size": 300, "hidden_size": 64,
  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
  "intermediate_size": 96, "hidden_act": "silu", "max_position_embeddings": 32768,
  "rms_norm_eps": 1e-6, "rope_theta": 1000000, "rope_scaling": null, "attention_bias": false,
  "use_sliding_window": false, "sliding_window": null, "tie_word_embeddings": true)";
constexpr char kGemma3[] = R"({"model_type": "gemma3_text", "vocab_size": 300,
  "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1,
  "head_dim": 48, "intermediate_size": 96, "hidden_activation": "gelu_pytorch_tanh",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "rope_theta": 1000000,
  "rope_local_base_freq": 10000, "query_pre_attn_scalar": 40, "sliding_window": 16,
  "attn_logit_softcapping": null, "use_bidirectional_attention": true,
  "layer_types": ["sliding_attention", "sliding_attention", "full_attention"])";

TEST(ModelConfigTest, ReadsQwen3sKeys) {
  auto c = ParseWith(kQwen3, "");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "qwen3");
  EXPECT_EQ(c->head_size(), 32);  // head_dim, not 64 / 4
  EXPECT_EQ(c->kv_heads(), 2);
  EXPECT_EQ(c->qkv_width(), 4 * 32 + 2 * 2 * 32);
  EXPECT_TRUE(c->causal && c->rms_norm && c->qk_norm);
  EXPECT_FALSE(c->sublayer_output_norm);
  EXPECT_EQ(c->layer_norm_placement, LayerNormPlacement::kPre);
  EXPECT_FLOAT_EQ(c->rotary.base, 1000000);
  EXPECT_EQ(c->max_length(), 32768);
  EXPECT_EQ(c->attention_window(0), 0);
  EXPECT_EQ(c->activation, Activation::kSilu);
  EXPECT_EQ(c->embedding_scale, 0);
}

TEST(ModelConfigTest, ReadsGemma3sKeys) {
  auto c = ParseWith(kGemma3, "");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->architecture, "gemma3_text");
  EXPECT_FALSE(c->causal);
  EXPECT_TRUE(c->rms_norm && c->qk_norm && c->sublayer_output_norm);
  EXPECT_FLOAT_EQ(c->attention_scale_base, 40);
  EXPECT_FLOAT_EQ(c->embedding_scale, 8);  // sqrt(64)
  EXPECT_FLOAT_EQ(c->local_rotary_base, 10000);
  EXPECT_EQ(c->activation, Activation::kGeluTanh);
  // Bidirectional: |i - j| <= 16 / 2 in the sliding layers.
  EXPECT_EQ(c->attention_window(0), 8);
  EXPECT_EQ(c->attention_window(1), 8);
  EXPECT_EQ(c->attention_window(2), 0);
  // Causal: i - j < 16.
  auto causal = ParseWith(kGemma3, R"(, "use_bidirectional_attention": false)");
  ASSERT_TRUE(causal.ok()) << causal.status();
  EXPECT_TRUE(causal->causal);
  EXPECT_EQ(causal->attention_window(0), 15);
}

TEST(ModelConfigTest, Gemma3WithoutLayerTypesMakesEverySixthLayerFull) {
  // A key repeated after the base's: the parser keeps the last one.
  auto c = ParseWith(kGemma3, R"(, "num_hidden_layers": 7, "layer_types": null)");
  ASSERT_TRUE(c.ok()) << c.status();
  for (int l = 0; l < 7; ++l) EXPECT_EQ(c->attention_window(l) > 0, l != 5) << l;
  EXPECT_TRUE(ParseWith(kGemma3, R"(, "sliding_window_pattern": 2, "layer_types": null)")
                  .value()
                  .attention_window(1) == 0);
}

TEST(ModelConfigTest, RejectsDecoderSettingsItCannotRun) {
  for (auto [base, extra, fragment] :
       {std::tuple<const char*, const char*, const char*>{kQwen3, R"(, "use_sliding_window": true)",
                                                          "use_sliding_window"},
        {kQwen3, R"(, "rope_scaling": {"type": "yarn", "factor": 4})", "rope_scaling"},
        {kQwen3, R"(, "num_key_value_heads": 3)", "num_key_value_heads"},
        {kGemma3, R"(, "attn_logit_softcapping": 50.0)", "attn_logit_softcapping"},
        {kGemma3, R"(, "layer_types": ["sliding_attention"])", "layer_types"},
        {kGemma3, R"(, "layer_types": ["chunked_attention", "full_attention", "full_attention"])",
         "chunked_attention"}}) {
    auto c = ParseWith(base, extra);
    ASSERT_FALSE(c.ok()) << extra;
    EXPECT_TRUE(absl::StrContains(c.status().message(), fragment)) << c.status();
  }
}

TEST(ModelConfigTest, APositionEmbeddingTypeOfAlibiSelectsJinaBert) {
  auto jina = Parse(R"(, "position_embedding_type": "alibi", "feed_forward_type": "geglu")");
  ASSERT_TRUE(jina.ok()) << jina.status();
  EXPECT_EQ(jina->model_type, "bert");
  EXPECT_EQ(jina->architecture, "jina_bert");
  EXPECT_TRUE(jina->alibi);
  EXPECT_TRUE(jina->gated_ffn);
  EXPECT_EQ(jina->activation, Activation::kGeluErf);
  EXPECT_EQ(jina->position_embedding, PositionEmbedding::kNone);
  EXPECT_EQ(
      Parse(R"(, "position_embedding_type": "alibi", "feed_forward_type": "reglu")")->activation,
      Activation::kRelu);
  EXPECT_EQ(Parse(R"(, "position_embedding_type": "absolute")")->architecture, "bert");
}

TEST(ModelConfigTest, RejectsLongContextValuesItCannotRun) {
  const std::tuple<const char*, std::string, std::string> cases[] = {
      {kNomic, R"(, "rotary_scaling_factor": 2.0)", "unsupported rotary_scaling_factor 2.0"},
      {kNomic, R"(, "prenorm": true)", "unsupported prenorm true"},
      {kNomic, R"(, "activation_function": "gelu_fast")",
       "unsupported activation_function \"gelu_fast\""},
      {kNomic, R"(, "rotary_emb_fraction": 0.3)", "is not an even number of dimensions"},
      {kNomic, R"(, "qkv_proj_bias": "yes")", "\"qkv_proj_bias\" must be true or false"},
      {kGte, R"(, "rope_scaling": {"type": "linear", "factor": 2.0})",
       "unsupported rope_scaling {\"factor\":2.0,\"type\":\"linear\"}"},
      {kGte, R"(, "rope_scaling": {"type": "ntk"})", "has no \"factor\""},
      {kGte, R"(, "position_embedding_type": "absolute")",
       "unsupported position_embedding_type \"absolute\" (supported: rope)"},
      {kModernBert, R"(, "local_attention": 0)", "\"local_attention\" must be a positive"},
      {kModernBert, R"(, "global_rope_theta": -1)", "\"global_rope_theta\" must be a positive"},
      {kBase, R"(, "position_embedding_type": "alibi", "feed_forward_type": "original")",
       "unsupported feed_forward_type \"original\""},
  };
  for (const auto& [base, extra, fragment] : cases) {
    auto c = ParseWith(base, extra);
    ASSERT_FALSE(c.ok()) << extra;
    EXPECT_TRUE(absl::StrContains(c.status().message(), fragment)) << c.status();
  }
}

TEST(CanonicalTensorNameTest, StripsPrefixAndRenamesLegacyLayerNorm) {
  const std::vector<std::string> bert = {"bert."};
  EXPECT_EQ(CanonicalTensorName("bert.encoder.layer.0.attention.output.LayerNorm.gamma", bert),
            "encoder.layer.0.attention.output.LayerNorm.weight");
  EXPECT_EQ(CanonicalTensorName("bert.embeddings.LayerNorm.beta", bert),
            "embeddings.LayerNorm.bias");
  EXPECT_EQ(CanonicalTensorName("encoder.layer.1.output.dense.weight", bert),
            "encoder.layer.1.output.dense.weight");
  // Only LayerNorm tensors have legacy names.
  EXPECT_EQ(CanonicalTensorName("pooler.dense.beta", bert), "pooler.dense.beta");
}

}  // namespace
}  // namespace engine
