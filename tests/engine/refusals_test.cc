// What the engine does not implement is refused at load, in one line naming
// the key, the value and the file: a random-weight model directory of the
// family with the key set (RandomModelSpec::config_overrides) fails
// LoadModelContents with that line, rather than being served differently
// from the reference.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model_contents.h"
#include "families/architecture.h"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

// Writes `file` in `folder`, creating the folder.
void WriteModuleFile(const std::string& folder, const std::string& file, const std::string& text) {
  std::filesystem::create_directories(folder);
  testing_support::WriteFile(folder + "/" + file, text);
}

// A tiny random model of `model_type` with `overrides` over its config.json.
std::string WriteFamilyModel(const std::string& model_type, const std::string& overrides) {
  const Architecture* architecture = FindArchitecture(model_type);
  EXPECT_NE(architecture, nullptr) << model_type;
  RandomModelSpec spec = TinyModelSpec();
  ModelConfig& c = spec.config;
  const ModelConfig tiny = c;
  c = FamilyDefaults(*architecture, model_type);
  c.hidden_size = tiny.hidden_size;
  c.num_heads = tiny.num_heads;
  c.num_layers = tiny.num_layers;
  c.intermediate_size = tiny.intermediate_size;
  c.max_position_embeddings = tiny.max_position_embeddings;
  if (c.position_ids == PositionIds::kAfterPadding) c.max_position_embeddings += c.pad_token_id + 1;
  if (architecture->recipe.attention == AttentionPattern::kLayerTypes) {
    SetLayerTypes(architecture->defaults.sliding_pattern, 8, &c);
  }
  spec.config_overrides = overrides;
  const std::string dir = testing_support::MakeTempDir("refusal_" + model_type + "_");
  const absl::Status written = WriteRandomModel(dir, spec);
  EXPECT_TRUE(written.ok()) << written;
  return dir;
}

struct Refusal {
  const char* model_type;
  const char* overrides;  // over config.json
  const char* line;       // after "<dir>/config.json: "
};

class ConfigRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(ConfigRefusalTest, NamesTheKeyTheValueAndTheFile) {
  const Refusal& refusal = GetParam();
  const std::string dir = WriteFamilyModel(refusal.model_type, "{}");
  ASSERT_TRUE(LoadModelContents(dir, EncoderOptions{}).ok()) << "the family loads without it";
  const std::string refused = WriteFamilyModel(refusal.model_type, refusal.overrides);
  absl::StatusOr<ModelContents> contents = LoadModelContents(refused, EncoderOptions{});
  ASSERT_FALSE(contents.ok()) << refusal.overrides << " was served";
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(contents.status().message()), refused + "/config.json: " + refusal.line);
}

INSTANTIATE_TEST_SUITE_P(
    Families, ConfigRefusalTest,
    ::testing::Values(
        // Qwen3Model runs causal: a checkpoint trained bidirectional would be
        // served wrong (Gemma 3 honours the key: below).
        Refusal{"qwen3", R"({"use_bidirectional_attention": true})",
                "unsupported use_bidirectional_attention true (supported: false)"},
        Refusal{"qwen3", R"({"use_sliding_window": true})",
                "unsupported use_sliding_window true (supported: false)"},
        Refusal{"qwen3", R"({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}})",
                "unsupported rope_scaling {\"factor\":4.0,\"rope_type\":\"yarn\"} (supported: "
                "null)"},
        Refusal{"qwen3", R"({"hidden_act": "gelu_fast"})",
                "unsupported hidden_act \"gelu_fast\" (supported: gelu, gelu_new, "
                "gelu_pytorch_tanh, relu, silu, swiglu, geglu, reglu)"},
        Refusal{"bert", R"({"is_decoder": true})",
                "unsupported is_decoder true (supported: false)"},
        Refusal{"bert", R"({"position_embedding_type": "relative_key"})",
                "unsupported position_embedding_type \"relative_key\" (supported: absolute)"},
        Refusal{"roberta", R"({"is_decoder": true})",
                "unsupported is_decoder true (supported: false)"},
        Refusal{"electra", R"({"is_decoder": true})",
                "unsupported is_decoder true (supported: false)"},
        Refusal{"nomic_bert", R"({"causal": true})", "unsupported causal true (supported: false)"},
        Refusal{"nomic_bert", R"({"parallel_block": true})",
                "unsupported parallel_block true (supported: false)"},
        Refusal{"nomic_bert", R"({"rotary_emb_scale_base": 512})",
                "unsupported rotary_emb_scale_base 512 (supported: null)"},
        Refusal{"nomic_bert", R"({"scale_attn_weights": false})",
                "unsupported scale_attn_weights false (supported: true)"},
        Refusal{"nomic_bert", R"({"use_rms_norm": true})",
                "unsupported use_rms_norm true (supported: false)"},
        Refusal{"nomic_bert", R"({"moe_every_n_layers": 2})",
                "unsupported moe_every_n_layers 2 (supported: 0)"},
        Refusal{"nomic_bert", R"({"rotary_scaling_factor": 2.0})",
                "unsupported rotary_scaling_factor 2.0 (supported: null)"},
        Refusal{"new", R"({"logn_attention_scale": true})",
                "unsupported logn_attention_scale true (supported: false)"},
        Refusal{"new", R"({"layer_norm_type": "rms_norm"})",
                "unsupported layer_norm_type \"rms_norm\" (supported: \"layer_norm\")"},
        Refusal{"gemma3_text", R"({"attn_logit_softcapping": 50.0})",
                "unsupported attn_logit_softcapping 50.0 (supported: null)"}),
    [](const ::testing::TestParamInfo<Refusal>& info) {
      return std::string(info.param.model_type == std::string("new") ? "gte"
                                                                     : info.param.model_type) +
             "_" + std::to_string(info.index);
    });

TEST(ConfigRefusalTest, TheServedValuesLoad) {
  for (const auto& [model_type, overrides] : std::vector<std::pair<std::string, std::string>>{
           {"qwen3", R"({"use_bidirectional_attention": false})"},
           {"bert", R"({"is_decoder": false})"},
           {"nomic_bert", R"({"causal": false, "scale_attn_weights": true, "moe_every_n_layers": 0,
                             "rotary_emb_scale_base": null})"},
           {"new", R"({"layer_norm_type": "layer_norm", "logn_attention_scale": false})"}}) {
    const std::string dir = WriteFamilyModel(model_type, overrides);
    absl::StatusOr<ModelContents> contents = LoadModelContents(dir, EncoderOptions{});
    EXPECT_TRUE(contents.ok()) << model_type << " " << overrides << ": " << contents.status();
  }
  // EmbeddingGemma's switch is honoured: bidirectional where it is true.
  const std::string gemma =
      WriteFamilyModel("gemma3_text", R"({"use_bidirectional_attention": true})");
  absl::StatusOr<ModelContents> contents = LoadModelContents(gemma, EncoderOptions{});
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_FALSE(contents->encoder->config().causal);
}

TEST(ConfigRefusalTest, AnUntiedMaskedLmHeadWithoutItsDecoder) {
  // The random masked-LM head is tied (no decoder weight written).
  RandomModelSpec spec = TinyModelSpec();
  spec.head = RandomHead::kMaskedLm;
  spec.config_overrides = R"({"tie_word_embeddings": false})";
  const std::string dir = testing_support::MakeTempDir("refusal_untied_");
  ASSERT_TRUE(WriteRandomModel(dir, spec).ok());
  absl::StatusOr<ModelContents> contents = LoadModelContents(dir, EncoderOptions{});
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(std::string(contents.status().message()),
            dir +
                "/config.json: unsupported tie_word_embeddings false without the tensor "
                "cls.predictions.decoder.weight (supported: true, the decoder tied to the "
                "word embeddings)");
  spec.config_overrides = R"({"tie_word_embeddings": true})";
  const std::string tied = testing_support::MakeTempDir("refusal_tied_");
  ASSERT_TRUE(WriteRandomModel(tied, spec).ok());
  contents = LoadModelContents(tied, EncoderOptions{});
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_TRUE(contents->encoder->has_masked_lm_head());
}

// The sentence-transformers modules' options, refused naming their file.
class PipelineRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = WriteFamilyModel("bert", "{}"); }
  std::string Refusal() {
    absl::StatusOr<ModelContents> contents = LoadModelContents(dir_, EncoderOptions{});
    EXPECT_FALSE(contents.ok());
    const std::string message(contents.status().message());
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  std::string dir_;
};

TEST_F(PipelineRefusalTest, SpladePoolingOptionsNotImplemented) {
  testing_support::WriteFile(
      dir_ + "/modules.json",
      R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.sparse_encoder.models.MLMTransformer"},
          {"idx":1,"name":"1","path":"1_SpladePooling","type":"sentence_transformers.sparse_encoder.models.SpladePooling"}])");
  WriteModuleFile(dir_ + "/1_SpladePooling", "config.json",
                  R"({"pooling_strategy": "max", "activation_function": "log1p_relu"})");
  EXPECT_EQ(Refusal(), dir_ +
                           "/1_SpladePooling/config.json: unsupported activation_function "
                           "\"log1p_relu\" (supported: \"relu\": log1p(relu(x)))");
  WriteModuleFile(dir_ + "/1_SpladePooling", "config.json",
                  R"({"pooling_strategy": "mean", "activation_function": "relu"})");
  EXPECT_EQ(Refusal(), dir_ +
                           "/1_SpladePooling/config.json: unsupported pooling_strategy "
                           "\"mean\" (supported: \"max\", \"sum\")");
}

TEST_F(PipelineRefusalTest, LowercasingBeforeACasedTokenizer) {
  // The random model's vocab.txt tokenizer lowercases (do_lower_case in
  // tokenizer_config.json): sentence-transformers' lowercasing changes nothing.
  testing_support::WriteFile(dir_ + "/sentence_bert_config.json",
                             R"({"max_seq_length": 32, "do_lower_case": true})");
  ASSERT_TRUE(LoadModelContents(dir_, EncoderOptions{}).ok());
  testing_support::WriteFile(dir_ + "/tokenizer_config.json", R"({"do_lower_case": false})");
  EXPECT_EQ(Refusal(), dir_ +
                           "/sentence_bert_config.json: unsupported do_lower_case true with a "
                           "tokenizer that keeps case (supported: false, or a tokenizer that "
                           "lowercases)");
  testing_support::WriteFile(dir_ + "/sentence_bert_config.json", R"({"do_lower_case": false})");
  EXPECT_TRUE(LoadModelContents(dir_, EncoderOptions{}).ok());
}

TEST_F(PipelineRefusalTest, DenseActivationAndPoolingModeNotImplemented) {
  testing_support::WriteFile(
      dir_ + "/modules.json",
      R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
          {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
          {"idx":2,"name":"2","path":"2_Dense","type":"sentence_transformers.models.Dense"}])");
  WriteModuleFile(dir_ + "/1_Pooling", "config.json", R"({"pooling_mode_mean_tokens": true})");
  WriteModuleFile(
      dir_ + "/2_Dense", "config.json",
      R"({"in_features": 32, "out_features": 8, "activation_function": "torch.nn.modules.activation.SiLU"})");
  EXPECT_EQ(Refusal(), dir_ +
                           "/2_Dense/config.json: activation_function "
                           "\"torch.nn.modules.activation.SiLU\" is not supported");
  WriteModuleFile(dir_ + "/1_Pooling", "config.json", R"({"pooling_mode_median_tokens": true})");
  EXPECT_EQ(Refusal(), dir_ +
                           "/1_Pooling/config.json: pooling mode \"pooling_mode_median_tokens\" "
                           "is not supported");
}

}  // namespace
}  // namespace engine
