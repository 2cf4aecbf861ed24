// The golden fixtures against the architecture registry: every registered
// model_type has its PyTorch fixture and every fixture directory is a
// registered model_type, so that a new family is tested (ParityTest,
// Int8FamilyTest, server_e2e_families) by adding it to the registry and its
// fixture to tests/golden/make_families.py, and no fixture goes untested.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "families/architecture.h"
#include "nlohmann/json.hpp"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

namespace fs = std::filesystem;

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(testing_support::ReadFile(path));
}

// Every registered (family, model_type) by its fixture directory's name.
std::map<std::string, std::pair<const Architecture*, const ModelType*>> FixtureOwners() {
  std::map<std::string, std::pair<const Architecture*, const ModelType*>> owners;
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) {
      owners[testing::FixtureDirectory(architecture, type)] = {&architecture, &type};
    }
  }
  return owners;
}

TEST(FixturesTest, EveryRegisteredModelTypeHasItsFixture) {
  ASSERT_NE(FindArchitecture(testing::kBertModelType), nullptr);
  for (const std::string& fixture : testing::kBertFixtures) {
    const std::string dir = std::string(GOLDEN_DIR) + "/" + fixture;
    ASSERT_TRUE(fs::is_regular_file(dir + "/reference.json")) << dir;
    EXPECT_EQ(ReadJson(dir + "/model/config.json").at("model_type"), testing::kBertModelType)
        << dir;
  }
  const auto owners = FixtureOwners();
  const std::vector<std::string> families = testing::FamilyFixtures();
  EXPECT_EQ(families.size() + 1, owners.size());  // every (family, type) but BERT's
  for (const std::string& fixture : families) {
    const std::string dir = std::string(GOLDEN_DIR) + "/" + fixture;
    ASSERT_TRUE(fs::is_directory(dir + "/model"))
        << "a registered model_type has no fixture: " << dir
        << " (tests/golden/make_families.py or make_long_context.py makes them)";
    const auto [architecture, type] = owners.at(testing::FixtureTestName(fixture));
    const nlohmann::json reference = ReadJson(dir + "/reference.json");
    EXPECT_EQ(reference.at("family"), type->name) << dir;
    if (reference.contains("architecture")) {
      EXPECT_EQ(reference.at("architecture"), architecture->name) << dir;
    }
    const nlohmann::json config = ReadJson(dir + "/model/config.json");
    EXPECT_EQ(config.at("model_type"), type->name) << dir;
    if (!type->selector_key.empty()) {
      EXPECT_EQ(config.at(type->selector_key), type->selector_value) << dir;
    }
  }
}

TEST(FixturesTest, EveryFamilyFixtureIsARegisteredModelType) {
  const auto owners = FixtureOwners();
  int fixtures = 0;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(std::string(GOLDEN_DIR) + "/families")) {
    if (!entry.is_directory()) continue;
    ++fixtures;
    const std::string name = entry.path().filename().string();
    ASSERT_EQ(owners.count(name), 1u)
        << entry.path()
        << " is the fixture of no registered model_type (registered: " << SupportedModelTypes()
        << ")";
    EXPECT_NE(owners.at(name).first, FindArchitecture(testing::kBertModelType))
        << "BERT's fixtures are " << GOLDEN_DIR << "/post_ln...";
  }
  EXPECT_EQ(fixtures, static_cast<int>(testing::FamilyFixtures().size()));
}

}  // namespace
}  // namespace engine
