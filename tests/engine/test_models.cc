#include "test_models.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "families/architecture.h"
#include "support/files.h"

namespace engine::testing {

RandomModelSpec MiniLmSpec(LayerNormPlacement placement) {
  RandomModelSpec spec;
  spec.config.hidden_size = 384;
  spec.config.num_heads = 12;
  spec.config.num_layers = 6;
  spec.config.intermediate_size = 1536;
  spec.config.max_position_embeddings = 512;
  spec.config.layer_norm_placement = placement;
  spec.seed = 11;
  return spec;
}

std::string WriteTinyModel(const std::string& name, const RandomModelSpec& spec) {
  const std::string dir = testing_support::MakeTempDir("engine_test_" + name + "_");
  const absl::Status status = WriteRandomModel(dir, spec);
  EXPECT_TRUE(status.ok()) << status;
  return dir;
}

std::vector<std::vector<int32_t>> RandomSequences(const std::vector<int>& lengths, int vocab,
                                                  uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(5, vocab - 1);
  std::vector<std::vector<int32_t>> out;
  for (int len : lengths) {
    std::vector<int32_t> ids(static_cast<size_t>(len));
    for (int32_t& id : ids) id = token(rng);
    ids[0] = 2;  // [CLS]
    out.push_back(std::move(ids));
  }
  return out;
}

std::string FixtureDirectory(const Architecture& architecture, const ModelType& model_type) {
  // A model_type shared through a selector ("bert" with ALiBi) is its family's.
  std::string name = model_type.selector_key.empty() ? model_type.name : architecture.name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::vector<std::string> FamilyFixtures() {
  std::vector<std::string> fixtures;
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& model_type : architecture.model_types) {
      if (model_type.name == kBertModelType && model_type.selector_key.empty()) continue;
      fixtures.push_back("families/" + FixtureDirectory(architecture, model_type));
    }
  }
  return fixtures;
}

std::vector<std::string> ParityFixtures() {
  std::vector<std::string> all = kBertFixtures;
  for (const std::string& family : FamilyFixtures()) all.push_back(family);
  return all;
}

std::string FixtureTestName(const std::string& fixture) {
  return fixture.substr(fixture.rfind('/') + 1);
}

}  // namespace engine::testing
