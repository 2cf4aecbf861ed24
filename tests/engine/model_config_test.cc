#include <gtest/gtest.h>

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
