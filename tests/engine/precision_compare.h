// Comparing an encoder in one precision against the same model in float32:
// cosines of pooled outputs (CLS and mean) per sequence, raw and centred.
// Shared by the int8 and bf16 tests.
#pragma once

#include <string>
#include <vector>

#include "engine/encoder.h"
#include "engine/isa.h"
#include "nlohmann/json.hpp"

// Skips the calling test unless the level in use runs bf16 (the reason:
// the CPU or the instruction-set cap lacks avx512_bf16).
#define SKIP_WITHOUT_BF16()                                                       \
  do {                                                                            \
    const absl::StatusOr<IsaLevel> level = ActiveIsaLevel();                      \
    ASSERT_TRUE(level.ok()) << level.status();                                    \
    if (absl::Status s = PrecisionSupported(Precision::kBf16, *level); !s.ok()) { \
      GTEST_SKIP() << s.message();                                                \
    }                                                                             \
  } while (0)

namespace engine::testing {

double Cosine(const std::vector<float>& a, const std::vector<float>& b);

struct CosineStats {
  double mean = 0, min = 1;
  // The same with the batch's mean float32 vector subtracted from both
  // sides. Random models' pooled vectors share a large common part (LayerNorm
  // beta), so that even different sequences have raw cosines above 0.999;
  // centred, only what tells sequences apart is compared.
  double centered_mean = 0, centered_min = 1;
  // The largest raw cosine between the float32 vectors of two different
  // sequences: how little the raw bar alone says on this model.
  double max_between_sequences = -1;
  int count = 0;
};

// "[ int8 cosine ] name: mean ... min ..." (label: "int8", "bf16").
void PrintStats(const std::string& label, const std::string& name, const CosineStats& s);

// CLS and mean pooled outputs of every sequence of `batch`, `precision`
// against float32 (gtest failures when a model does not load or encode).
CosineStats ComparePooled(const std::string& model_dir, const std::vector<Sequence>& batch,
                          Precision precision);

// The inputs of a golden fixture's reference.json as a batch; `storage`
// owns the ids the sequences point into.
std::vector<Sequence> GoldenBatch(const nlohmann::json& reference,
                                  std::vector<std::vector<int32_t>>* storage);

}  // namespace engine::testing
