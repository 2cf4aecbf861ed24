// MPNet's relative-position buckets against transformers' formula as
// PyTorch computed it (tests/golden/make_families.py wrote the buckets of
// distances -600..600 into the mpnet fixture): exact equality, since one
// bucket off moves the outputs by ~1 (the generator's sensitivity check).
// And the expanded per-head table the attention kernel reads.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "layers/relative_position.h"
#include "nlohmann/json.hpp"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

TEST(RelativePositionTest, BucketsEqualTransformersForEveryDistance) {
  const nlohmann::json reference = nlohmann::json::parse(
      testing_support::ReadFile(std::string(GOLDEN_DIR) + "/families/mpnet/reference.json"));
  const auto& table = reference["relative_buckets"];
  const int first = table["distances"][0].get<int>();
  const std::vector<int> buckets = table["buckets"].get<std::vector<int>>();
  ASSERT_EQ(static_cast<int>(buckets.size()), table["distances"][1].get<int>() - first + 1);
  for (size_t i = 0; i < buckets.size(); ++i) {
    const int distance = first + static_cast<int>(i);
    ASSERT_EQ(RelativePositionBucket(distance, 32, 128), buckets[i]) << "distance " << distance;
  }
}

TEST(RelativePositionTest, TableHoldsEachHeadsBucketValueOverTheScale) {
  const int buckets = 32, heads = 3, max_length = 40;
  const float scale = 0.25f;
  std::vector<float> weight(buckets * heads);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const RelativePositionBias bias =
      MakeRelativePositionBias(weight, buckets, heads, max_length, 128, scale);
  ASSERT_EQ(bias.max_offset, max_length - 1);
  for (int h = 0; h < heads; ++h) {
    for (int d = -(max_length - 1); d <= max_length - 1; ++d) {
      const int bucket = RelativePositionBucket(d, buckets, 128);
      EXPECT_EQ(bias.ForHead(h)[d], weight[bucket * heads + h] / scale)
          << "head " << h << " distance " << d;
    }
  }
}

}  // namespace
}  // namespace engine
