// The golden fixtures against the architecture registry: every registered
// model_type has its PyTorch fixture and every fixture directory is a
// registered model_type, so that a new family is tested (ParityTest,
// Int8FamilyTest, server_e2e_families) by adding it to the registry and its
// fixture to tests/golden/make_families.py, and no fixture goes untested.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "models/architecture.h"
#include "nlohmann/json.hpp"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

namespace fs = std::filesystem;

std::set<std::string> RegisteredModelTypes() {
  std::set<std::string> types;
  for (const Architecture& architecture : Architectures()) {
    for (const ModelType& type : architecture.model_types) types.insert(type.name);
  }
  return types;
}

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(testing_support::ReadFile(path));
}

TEST(FixturesTest, EveryRegisteredModelTypeHasItsFixture) {
  const std::set<std::string> registered = RegisteredModelTypes();
  ASSERT_EQ(registered.count(testing::kBertModelType), 1u);
  for (const std::string& fixture : testing::kBertFixtures) {
    const std::string dir = std::string(GOLDEN_DIR) + "/" + fixture;
    ASSERT_TRUE(fs::is_regular_file(dir + "/reference.json")) << dir;
    EXPECT_EQ(ReadJson(dir + "/model/config.json").at("model_type"), testing::kBertModelType)
        << dir;
  }
  const std::vector<std::string> families = testing::FamilyFixtures();
  EXPECT_EQ(families.size() + 1, registered.size());  // every type but BERT's
  for (const std::string& fixture : families) {
    const std::string dir = std::string(GOLDEN_DIR) + "/" + fixture;
    ASSERT_TRUE(fs::is_directory(dir + "/model"))
        << "a registered model_type has no fixture: " << dir
        << " (tests/golden/make_families.py makes them)";
    const std::string type = testing::FixtureModelType(testing::FixtureTestName(fixture));
    EXPECT_EQ(ReadJson(dir + "/reference.json").at("family"), type) << dir;
    EXPECT_EQ(ReadJson(dir + "/model/config.json").at("model_type"), type) << dir;
  }
}

TEST(FixturesTest, EveryFamilyFixtureIsARegisteredModelType) {
  const std::set<std::string> registered = RegisteredModelTypes();
  int fixtures = 0;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(std::string(GOLDEN_DIR) + "/families")) {
    if (!entry.is_directory()) continue;
    ++fixtures;
    const std::string type = testing::FixtureModelType(entry.path().filename().string());
    EXPECT_EQ(registered.count(type), 1u)
        << entry.path()
        << " is the fixture of no registered model_type (registered: " << SupportedModelTypes()
        << ")";
    EXPECT_NE(type, testing::kBertModelType)
        << "BERT's fixtures are " << GOLDEN_DIR << "/post_ln...";
  }
  EXPECT_EQ(fixtures, static_cast<int>(testing::FamilyFixtures().size()));
}

}  // namespace
}  // namespace engine
