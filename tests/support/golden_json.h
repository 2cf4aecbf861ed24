// Reading the PyTorch fixtures of tests/golden (reference.json files) and
// comparing the server's vectors with them.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "support/files.h"

namespace testing_support {

inline nlohmann::json ReadJsonFile(const std::string& path) {
  return nlohmann::json::parse(ReadFile(path));
}

// Each of `values` within `tolerance` of `expected` (a JSON array of numbers
// of the same length); failures name `what` and the index.
inline void ExpectValuesNear(const std::vector<float>& values, const nlohmann::json& expected,
                             double tolerance, const std::string& what) {
  ASSERT_EQ(values.size(), expected.size()) << what;
  for (size_t j = 0; j < values.size(); ++j) {
    EXPECT_NEAR(values[j], expected[j].get<double>(), tolerance) << what << " value " << j;
  }
}

}  // namespace testing_support
