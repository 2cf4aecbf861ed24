#include <gtest/gtest.h>

#include <cstring>

#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

TEST(SafetensorsTest, RoundTripsFloatTensors) {
  const std::string path = testing_support::MakeTempDir("roundtrip_") + "/t.safetensors";
  std::vector<NamedTensor> tensors = {{"a", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"b", {1}, {-0.5f}}};
  ASSERT_TRUE(WriteSafetensors(path, tensors).ok());
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  const TensorView* a = (*file)->Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  std::vector<float> values(6);
  ConvertToFloat(*a, values.data());
  EXPECT_EQ(values, tensors[0].values);
  EXPECT_EQ((*file)->Find("missing"), nullptr);
}

// F16 and BF16 bit patterns with their exact float values, written by hand
// from the IEEE formats (not produced by the code under test).
TEST(SafetensorsTest, ConvertsHalfAndBfloat16) {
  const uint16_t half_bits[] = {0x3c00, 0xc000, 0x3555, 0x0001, 0x7bff, 0x0000};
  const float half_values[] = {1.0f,     -2.0f, 0.333251953125f, 5.9604644775390625e-08f,
                               65504.0f, 0.0f};
  TensorView half{"h", DType::kF16, {6}, reinterpret_cast<const uint8_t*>(half_bits), 12};
  float out[6];
  ConvertToFloat(half, out);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], half_values[i]) << i;

  const uint16_t bf16_bits[] = {0x3f80, 0xc040, 0x3eab};
  const float bf16_values[] = {1.0f, -3.0f, 0.333984375f};
  TensorView bf16{"b", DType::kBF16, {3}, reinterpret_cast<const uint8_t*>(bf16_bits), 6};
  ConvertToFloat(bf16, out);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], bf16_values[i]) << i;
}

}  // namespace
}  // namespace engine
