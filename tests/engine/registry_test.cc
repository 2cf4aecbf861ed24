// The architecture registry (engine/src/families/): each family's recipe,
// config keys, defaults and tensor names agree with one another, and every
// registered model_type goes through the config writer and reader, the
// random-model writer and the loader by the registry alone.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "engine/heads.h"
#include "engine/tools/random_model.h"
#include "families/architecture.h"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

// What is wrong with one family's definition; empty when it is complete.
std::vector<std::string> Problems(const Architecture& a) {
  std::vector<std::string> problems;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) problems.push_back(absl::StrCat(a.name, ": ", what));
  };
  auto named = [&](const std::string& name, const std::string& what) {
    expect(!name.empty(), absl::StrCat(what, " has no tensor name"));
  };
  // A part the recipe uses and the tensor name, config key and default it
  // needs: all present, or (the recipe without it) all absent.
  auto together = [&](bool used, bool has_name, bool has_key, const std::string& what) {
    expect(has_name == used, absl::StrCat(what, ": tensor name ", has_name ? "without" : "missing",
                                          " the recipe's use"));
    expect(has_key == used, absl::StrCat(what, ": config key ", has_key ? "without" : "missing",
                                         " the recipe's use"));
  };
  const Recipe& r = a.recipe;
  const ConfigKeys& k = a.keys;
  const ConfigDefaults& d = a.defaults;
  const TensorNames& n = a.names;

  expect(!a.name.empty(), "no name");
  expect(!a.model_types.empty(), "no model_type");
  for (const ModelType& type : a.model_types) {
    expect(!type.name.empty() && !type.class_prefix.empty(),
           absl::StrCat("model_type \"", type.name, "\" without its class prefix"));
  }
  for (const char* key :
       {k.hidden_size, k.num_layers, k.num_heads, k.intermediate_size, k.activation}) {
    expect(key != nullptr, "a shape or activation key is null");
  }
  expect(d.max_position_embeddings > 0, "no default max_position_embeddings");
  expect(d.layer_norm_eps > 0, "no default layer_norm_eps");
  expect(d.type_vocab_size >= 0 && d.pad_token_id >= 0, "a negative default");

  expect(!n.task_prefixes.empty(), "no task prefix");
  for (const std::string& prefix : n.task_prefixes) {
    expect(absl::EndsWith(prefix, "."), absl::StrCat("task prefix \"", prefix, "\" without '.'"));
  }
  named(n.word_embeddings, "word_embeddings");
  // Decoder families (RMSNorm) normalize in their first layer instead.
  if (r.norm == NormKind::kLayerNorm) named(n.embeddings_norm, "embeddings_norm");
  if (r.qk_norm) {
    named(n.layer.q_norm, "q_norm");
    named(n.layer.k_norm, "k_norm");
  }
  if (r.sublayer_output_norms) {
    named(n.layer.attention_out_norm, "attention_out_norm");
    named(n.layer.ffn_out_norm, "ffn_out_norm");
  }
  named(n.layer_prefix, "layer_prefix");
  named(n.layer.attention_out, "attention_out");
  named(n.layer.attention_norm, "attention_norm");
  named(n.layer.ffn_norm, "ffn_norm");
  const bool rotary = r.positions == PositionScheme::kRotary;
  switch (r.positions) {
    case PositionScheme::kLearnedAbsolute:
      named(n.position_embeddings, "the position table");
      break;
    case PositionScheme::kRotary:
    case PositionScheme::kNone:
      expect(n.position_embeddings.empty(), "a position table without its recipe's use");
      break;
  }
  expect(rotary == (k.rotary_base != nullptr), "rotary: base key without the recipe's use");
  expect(!rotary || d.rotary_base > 0, "rotary: no default base");
  expect((r.attention_bias == AttentionBias::kAlibi) == (r.positions == PositionScheme::kNone),
         "ALiBi and the absence of other positions go together");
  switch (r.qkv) {
    case QkvLayout::kSeparate:
      named(n.layer.query, "query");
      named(n.layer.key, "key");
      named(n.layer.value, "value");
      break;
    case QkvLayout::kFused:
      named(n.layer.qkv, "qkv");
      break;
  }
  named(n.layer.ffn_in, "ffn_in");
  named(n.layer.ffn_out, "ffn_out");
  together(r.feed_forward == FeedForward::kGatedSplit, !n.layer.ffn_gate.empty(),
           !n.layer.ffn_gate.empty(), "a separate gate");
  // The int8 policy makes the second level in the gate's epilogue only.
  expect(!r.int8_two_level_ffn_out || r.feed_forward != FeedForward::kDense,
         "a two-level int8 FFN output without a gated FFN");
  const bool alternating = r.attention == AttentionPattern::kAlternating;
  together(alternating, alternating, k.local_attention != nullptr && k.global_every_n != nullptr,
           "sliding-window layers");
  expect(!alternating || (d.local_attention >= 2 && d.global_every_n >= 1),
         "sliding-window layers: default window or period");
  expect(
      n.token_type_embeddings.empty() == (d.type_vocab_size == 0 && k.type_vocab_size == nullptr),
      "token types: the tensor name and the default or key disagree");
  const bool buckets = r.attention_bias == AttentionBias::kRelativeBuckets;
  together(buckets, !n.relative_attention_bias.empty(), k.relative_attention_buckets != nullptr,
           "relative-position buckets");
  expect(buckets == (d.relative_attention_buckets >= 2 && r.relative_attention_max_distance > 0),
         "relative-position buckets: default bucket count or max distance");
  together(r.norm_placement == NormPlacement::kFromConfig,
           !n.final_norm.empty() && r.norm_placement != NormPlacement::kPre,
           k.layer_norm_placement != nullptr, "pre-LN from config (final norm)");
  expect(r.norm_placement != NormPlacement::kPre || !n.final_norm.empty(), "pre-LN: no final norm");
  expect(r.norm_placement != NormPlacement::kPost || r.first_attention_norm,
         "post-LN normalizes every layer");
  together(r.embedding_projection, !n.embeddings_project.empty(), k.embedding_size != nullptr,
           "embedding projection");
  expect(n.classifier.dense.empty() == n.classifier.out.empty(), "half a classifier head");
  expect(n.masked_lm.transform.empty() == n.masked_lm.bias.empty(), "half a masked-LM head");
  expect(!n.classifier.norm.empty() || n.classifier.norm_bias.key == nullptr,
         "a classifier norm bias key without the norm");
  expect(n.classifier.pooling_key != nullptr || n.classifier.pooling == HeadPooling::kFirstToken,
         "a classifier pooling other than the first token's without its config key");
  // A transform shared with the classifier (ModernBERT's head.dense) must be
  // told apart from it by the classifier's output when the output bias is off.
  const bool shared = !n.masked_lm.transform.empty() && n.masked_lm.transform == n.classifier.dense;
  expect(shared == !n.masked_lm.classifier_out.empty(),
         "a masked-LM transform shared with the classifier goes with classifier_out");
  expect(n.masked_lm.classifier_out.empty() || n.masked_lm.classifier_out == n.classifier.out,
         "classifier_out is not the classifier's output");
  return problems;
}

TEST(RegistryTest, EveryFamilyIsComplete) {
  std::set<std::string> types;
  for (const Architecture& architecture : Architectures()) {
    EXPECT_EQ(Problems(architecture), std::vector<std::string>{});
    for (const ModelType& type : architecture.model_types) {
      // A model_type is registered once, or again with a selector.
      const std::string key =
          absl::StrCat(type.name, "|", type.selector_key, "=", type.selector_value);
      EXPECT_TRUE(types.insert(key).second) << key << " registered twice";
      const Architecture* selected = SelectArchitecture(type.name, [&](const std::string& k) {
        return k == type.selector_key ? type.selector_value : std::string();
      });
      EXPECT_EQ(selected, &architecture) << key;
      EXPECT_EQ(ClassPrefix(architecture, type.name), type.class_prefix);
      if (!type.selector_key.empty()) {
        EXPECT_NE(FindArchitecture(type.name), nullptr)
            << type.name << ": a selected family shares a model_type of another";
        EXPECT_NE(FindArchitecture(type.name), &architecture);
      }
    }
  }
}

// The check above fails for a family whose parts disagree.
TEST(RegistryTest, AnIncompleteFamilyIsCaught) {
  const Architecture* mpnet = nullptr;
  const Architecture* electra = nullptr;
  for (const Architecture& architecture : Architectures()) {
    if (architecture.recipe.attention_bias == AttentionBias::kRelativeBuckets)
      mpnet = &architecture;
    if (architecture.recipe.embedding_projection) electra = &architecture;
  }
  ASSERT_NE(mpnet, nullptr);
  ASSERT_NE(electra, nullptr);
  Architecture broken = *mpnet;
  broken.names.relative_attention_bias.clear();
  EXPECT_EQ(Problems(broken).size(), 1u) << absl::StrJoin(Problems(broken), "\n");
  broken = *mpnet;
  broken.recipe.attention_bias = AttentionBias::kNone;
  EXPECT_EQ(Problems(broken).size(), 3u) << absl::StrJoin(Problems(broken), "\n");
  broken = *electra;
  broken.keys.embedding_size = nullptr;
  EXPECT_EQ(Problems(broken).size(), 1u) << absl::StrJoin(Problems(broken), "\n");
  broken = *electra;  // a dense FFN
  broken.recipe.int8_two_level_ffn_out = true;
  EXPECT_EQ(Problems(broken).size(), 1u) << absl::StrJoin(Problems(broken), "\n");
  broken = Architectures().front();
  broken.model_types.push_back({"unnamed", ""});
  broken.defaults.layer_norm_eps = 0;
  broken.names.layer.query.clear();
  EXPECT_EQ(Problems(broken).size(), 3u) << absl::StrJoin(Problems(broken), "\n");
}

TEST(RegistryTest, TheDefaultConfigIsTheFirstFamilys) {
  const Architecture& first = Architectures().front();
  const ModelConfig config = DefaultModelConfig();
  EXPECT_EQ(config.model_type, first.model_types.front().name);
  EXPECT_EQ(config.architecture, first.name);
  EXPECT_EQ(config.max_position_embeddings, first.defaults.max_position_embeddings);
  EXPECT_EQ(config.layer_norm_eps, first.defaults.layer_norm_eps);
  EXPECT_EQ(RandomModelSpec().config.model_type, config.model_type);
}

// The tiny shape of `model_type` with its family's defaults, using every
// part its recipe has (pre-LN where config.json may ask for it, a narrower
// embedding where it may be projected).
ModelConfig SmallConfig(const Architecture& architecture, const std::string& model_type,
                        LayerNormPlacement placement) {
  ModelConfig c = WithTinyShape(FamilyDefaults(architecture, model_type));
  c.vocab_size = 100;  // the random-model writer takes its vocabulary's
  if (c.position_ids == PositionIds::kAfterPadding) c.max_position_embeddings += c.pad_token_id + 1;
  if (architecture.recipe.embedding_projection) c.embedding_size = 16;
  c.layer_norm_placement = placement;
  if (c.local_window > 0) c.local_window = 8;  // inputs of up to 64 tokens span windows
  if (c.pad_token_id >= c.vocab_size) c.pad_token_id = 1;
  return c;
}

struct Case {
  std::string architecture;
  std::string model_type;
  LayerNormPlacement placement;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.architecture << " (" << c.model_type << "), " << LayerNormPlacementName(c.placement)
       << "-LN";
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) {
      const NormPlacement placement = architecture.recipe.norm_placement;
      if (placement != NormPlacement::kPre) {
        cases.push_back({architecture.name, type.name, LayerNormPlacement::kPost});
      }
      if (placement != NormPlacement::kPost) {
        cases.push_back({architecture.name, type.name, LayerNormPlacement::kPre});
      }
    }
  }
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = absl::StrCat(
      info.param.architecture == info.param.model_type ? "" : info.param.architecture + "_",
      info.param.model_type, "_", LayerNormPlacementName(info.param.placement), "_ln");
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

class RegistryFamilyTest : public ::testing::TestWithParam<Case> {
 protected:
  const Architecture& architecture() const { return *ArchitectureNamed(GetParam().architecture); }
  ModelConfig config() const {
    return SmallConfig(architecture(), GetParam().model_type, GetParam().placement);
  }
};

// The config writer spells what the reader reads, family by family.
TEST_P(RegistryFamilyTest, ConfigRoundTripsThroughJson) {
  const ModelConfig c = config();
  absl::StatusOr<ModelConfig> again = ParseModelConfig(ModelConfigToJson(c), "round trip");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->model_type, c.model_type);
  EXPECT_EQ(again->architecture, architecture().name);
  EXPECT_EQ(again->hidden_size, c.hidden_size);
  EXPECT_EQ(again->num_layers, c.num_layers);
  EXPECT_EQ(again->num_heads, c.num_heads);
  EXPECT_EQ(again->intermediate_size, c.intermediate_size);
  EXPECT_EQ(again->max_position_embeddings, c.max_position_embeddings);
  EXPECT_EQ(again->type_vocab_size, c.type_vocab_size);
  EXPECT_EQ(again->pad_token_id, c.pad_token_id);
  EXPECT_EQ(again->embedding_size, c.embedding_size);
  EXPECT_EQ(again->position_ids, c.position_ids);
  EXPECT_EQ(again->relative_attention_buckets, c.relative_attention_buckets);
  EXPECT_EQ(again->relative_attention_max_distance, c.relative_attention_max_distance);
  EXPECT_FLOAT_EQ(again->layer_norm_eps, c.layer_norm_eps);
  EXPECT_EQ(again->activation, c.activation);
  EXPECT_EQ(again->layer_norm_placement, c.layer_norm_placement);
  EXPECT_EQ(again->position_embedding, c.position_embedding);
  EXPECT_EQ(again->rotary.dims, c.rotary.dims);
  EXPECT_EQ(again->rotary.base, c.rotary.base);
  EXPECT_EQ(again->rotary.interleaved, c.rotary.interleaved);
  EXPECT_EQ(again->rotary.ntk_factor, c.rotary.ntk_factor);
  EXPECT_EQ(again->local_rotary_base, c.local_rotary_base);
  EXPECT_EQ(again->alibi, c.alibi);
  EXPECT_EQ(again->gated_ffn, c.gated_ffn);
  EXPECT_EQ(again->int8_two_level_ffn_out, c.int8_two_level_ffn_out);
  EXPECT_EQ(again->biases.attention, c.biases.attention);
  EXPECT_EQ(again->biases.ffn_in, c.biases.ffn_in);
  EXPECT_EQ(again->biases.ffn_out, c.biases.ffn_out);
  EXPECT_EQ(again->biases.norm, c.biases.norm);
  EXPECT_EQ(again->first_attention_norm, c.first_attention_norm);
  EXPECT_EQ(again->local_window, c.local_window);
  EXPECT_EQ(again->global_every_n, c.global_every_n);
}

// The random-model writer (make-model) writes every family by its names,
// and the loader reads it back with both heads.
TEST_P(RegistryFamilyTest, RandomModelLoadsWithItsHeads) {
  std::vector<RandomHead> heads = {RandomHead::kNone};
  if (!architecture().names.classifier.out.empty()) heads.push_back(RandomHead::kClassifier);
  if (!architecture().names.masked_lm.transform.empty()) heads.push_back(RandomHead::kMaskedLm);
  for (RandomHead head : heads) {
    RandomModelSpec spec;
    spec.config = config();
    spec.head = head;
    spec.num_labels = 2;
    const std::string dir = testing_support::MakeTempDir("registry_test_");
    ASSERT_TRUE(WriteRandomModel(dir, spec).ok());
    const std::string config_text = testing_support::ReadFile(dir + "/config.json");
    const char* task = head == RandomHead::kClassifier ? "ForSequenceClassification"
                       : head == RandomHead::kMaskedLm ? "ForMaskedLM"
                                                       : "Model";
    EXPECT_TRUE(
        absl::StrContains(config_text, ClassPrefix(architecture(), GetParam().model_type) + task))
        << config_text;
    absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, EncoderOptions{});
    ASSERT_TRUE(encoder.ok()) << encoder.status();
    const ModelConfig& loaded = (*encoder)->config();
    EXPECT_EQ(loaded.architecture, architecture().name);
    EXPECT_EQ(loaded.layer_norm_placement, GetParam().placement);
    EXPECT_EQ(loaded.embedding_width(), spec.config.embedding_width());
    EXPECT_EQ((*encoder)->classifier() != nullptr, head == RandomHead::kClassifier);
    EXPECT_EQ((*encoder)->has_masked_lm_head(), head == RandomHead::kMaskedLm);
    const std::vector<int32_t> ids = {2, 40, 41, 42, 3};
    std::vector<int32_t> longer(40, 44);  // past the sliding window of SmallConfig
    const std::vector<Sequence> batch = {{ids, {}}, {longer, {}}};
    EncodeResult result;
    ASSERT_TRUE((*encoder)->Encode(batch, &result).ok());
    for (int s = 0; s < 2; ++s) {
      for (int64_t i = 0; i < result.num_tokens(s) * result.hidden_size; ++i) {
        ASSERT_TRUE(std::isfinite(result.sequence_states(s)[i])) << s << " " << i;
      }
      if (head == RandomHead::kClassifier) {
        float logits[2];
        ASSERT_TRUE((*encoder)->Classify(result, s, logits).ok());
        EXPECT_TRUE(std::isfinite(logits[0]) && std::isfinite(logits[1])) << s;
      } else if (head == RandomHead::kMaskedLm) {
        std::vector<SparseEntry> entries;
        ASSERT_TRUE((*encoder)->Sparse(result, s, SparseOptions(), &entries).ok());
        for (const SparseEntry& entry : entries) EXPECT_TRUE(std::isfinite(entry.weight)) << s;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, RegistryFamilyTest, ::testing::ValuesIn(Cases()), CaseName);

// A post-LN-only family refuses a pre-LN random model instead of writing a
// config that would not say so.
TEST(RegistryTest, APostLnFamilyRefusesPreLn) {
  for (const Architecture& architecture : Architectures()) {
    if (architecture.recipe.norm_placement != NormPlacement::kPost) continue;
    RandomModelSpec spec;
    spec.config =
        SmallConfig(architecture, architecture.model_types.front().name, LayerNormPlacement::kPre);
    const absl::Status status =
        WriteRandomModel(testing_support::MakeTempDir("registry_test_"), spec);
    EXPECT_FALSE(status.ok()) << architecture.name;
    EXPECT_TRUE(absl::StrContains(status.message(), "post-LN only")) << status;
  }
}

}  // namespace
}  // namespace engine
