// The architecture registry (engine/src/models/): each family's recipe,
// config keys, defaults and tensor names agree with one another, and every
// registered model_type goes through the config writer and reader, the
// random-model writer and the loader by the registry alone.
#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "engine/random_model.h"
#include "models/architecture.h"
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
  named(n.embeddings_norm, "embeddings_norm");
  named(n.layer_prefix, "layer_prefix");
  named(n.layer.attention_out, "attention_out");
  named(n.layer.attention_norm, "attention_norm");
  named(n.layer.ffn_norm, "ffn_norm");
  switch (r.positions) {
    case PositionScheme::kLearnedAbsolute:
      named(n.position_embeddings, "the position table");
      break;
  }
  switch (r.qkv) {
    case QkvLayout::kSeparate:
      named(n.layer.query, "query");
      named(n.layer.key, "key");
      named(n.layer.value, "value");
      break;
  }
  switch (r.feed_forward) {
    case FeedForward::kDense:
      named(n.layer.ffn_in, "ffn_in");
      named(n.layer.ffn_out, "ffn_out");
      break;
  }
  expect(
      n.token_type_embeddings.empty() == (d.type_vocab_size == 0 && k.type_vocab_size == nullptr),
      "token types: the tensor name and the default or key disagree");
  const bool buckets = r.attention_bias == AttentionBias::kRelativeBuckets;
  together(buckets, !n.relative_attention_bias.empty(), k.relative_attention_buckets != nullptr,
           "relative-position buckets");
  expect(buckets == (d.relative_attention_buckets >= 2 && r.relative_attention_max_distance > 0),
         "relative-position buckets: default bucket count or max distance");
  together(r.norm_placement == NormPlacement::kFromConfig, !n.final_norm.empty(),
           k.layer_norm_placement != nullptr, "pre-LN from config (final norm)");
  together(r.embedding_projection, !n.embeddings_project.empty(), k.embedding_size != nullptr,
           "embedding projection");
  expect(n.classifier.dense.empty() == n.classifier.out.empty(), "half a classifier head");
  expect(n.masked_lm.transform.empty() == n.masked_lm.bias.empty(), "half a masked-LM head");
  return problems;
}

TEST(RegistryTest, EveryFamilyIsComplete) {
  std::set<std::string> types;
  for (const Architecture& architecture : Architectures()) {
    EXPECT_EQ(Problems(architecture), std::vector<std::string>{});
    for (const ModelType& type : architecture.model_types) {
      EXPECT_TRUE(types.insert(type.name).second) << type.name << " registered twice";
      EXPECT_EQ(FindArchitecture(type.name), &architecture) << type.name;
      EXPECT_EQ(ClassPrefix(architecture, type.name), type.class_prefix);
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

// A small shape of `model_type` with its family's defaults, using every
// part its recipe has (pre-LN where config.json may ask for it, a narrower
// embedding where it may be projected).
ModelConfig SmallConfig(const Architecture& architecture, const std::string& model_type,
                        LayerNormPlacement placement) {
  ModelConfig c = FamilyDefaults(architecture, model_type);
  c.vocab_size = 100;  // the random-model writer takes its vocabulary's
  c.hidden_size = 32;
  c.num_heads = 4;
  c.num_layers = 2;
  c.intermediate_size = 64;
  c.max_position_embeddings =
      64 + (c.position_ids == PositionIds::kAfterPadding ? c.pad_token_id + 1 : 0);
  if (architecture.recipe.embedding_projection) c.embedding_size = 16;
  c.layer_norm_placement = placement;
  return c;
}

struct Case {
  std::string model_type;
  LayerNormPlacement placement;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.model_type << ", " << LayerNormPlacementName(c.placement) << "-LN";
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) {
      cases.push_back({type.name, LayerNormPlacement::kPost});
      if (architecture.recipe.norm_placement == NormPlacement::kFromConfig) {
        cases.push_back({type.name, LayerNormPlacement::kPre});
      }
    }
  }
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      absl::StrCat(info.param.model_type, "_", LayerNormPlacementName(info.param.placement), "_ln");
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

class RegistryFamilyTest : public ::testing::TestWithParam<Case> {
 protected:
  const Architecture& architecture() const { return *FindArchitecture(GetParam().model_type); }
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
}

// The random-model writer (make-model) writes every family by its names,
// and the loader reads it back with both heads.
TEST_P(RegistryFamilyTest, RandomModelLoadsWithItsHeads) {
  for (RandomHead head : {RandomHead::kClassifier, RandomHead::kMaskedLm}) {
    RandomModelSpec spec;
    spec.config = config();
    spec.head = head;
    spec.num_labels = 2;
    const std::string dir = testing_support::MakeTempDir("registry_test_");
    ASSERT_TRUE(WriteRandomModel(dir, spec).ok());
    const std::string config_text = testing_support::ReadFile(dir + "/config.json");
    EXPECT_TRUE(absl::StrContains(
        config_text,
        ClassPrefix(architecture(), GetParam().model_type) +
            (head == RandomHead::kClassifier ? "ForSequenceClassification" : "ForMaskedLM")))
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
    const std::vector<Sequence> batch = {{ids, {}}};
    EncodeResult result;
    EXPECT_TRUE((*encoder)->Encode(batch, &result).ok());
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
