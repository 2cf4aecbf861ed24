#include "precision_compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace engine::testing {

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double{a[i]} * b[i];
    aa += double{a[i]} * a[i];
    bb += double{b[i]} * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

void PrintStats(const std::string& label, const std::string& name, const CosineStats& s) {
  std::printf(
      "[ %s cosine ] %s: mean %.5f min %.5f, centred mean %.5f min %.5f over %d pooled "
      "vectors; different sequences up to %.5f\n",
      label.c_str(), name.c_str(), s.mean, s.min, s.centered_mean, s.centered_min, s.count,
      s.max_between_sequences);
}

CosineStats ComparePooled(const std::string& model_dir, const std::vector<Sequence>& batch,
                          Precision precision) {
  EncoderOptions fp32_options, other_options;
  other_options.precision = precision;
  auto fp32 = Encoder::Load(model_dir, fp32_options);
  auto other = Encoder::Load(model_dir, other_options);
  EXPECT_TRUE(fp32.ok()) << fp32.status();
  EXPECT_TRUE(other.ok()) << other.status();
  CosineStats stats;
  if (!fp32.ok() || !other.ok()) return stats;
  EncodeResult want, got;
  EXPECT_TRUE((*fp32)->Encode(batch, &want).ok());
  EXPECT_TRUE((*other)->Encode(batch, &got).ok());
  const size_t h = static_cast<size_t>(want.hidden_size);
  const int n = static_cast<int>(batch.size());
  for (Pooling pooling : {Pooling::kCls, Pooling::kMean}) {
    std::vector<std::vector<float>> a(n, std::vector<float>(h)), b = a;
    std::vector<float> center(h, 0.0f);
    for (int s = 0; s < n; ++s) {
      EXPECT_TRUE((*fp32)->Pool(want, s, pooling, false, a[s].data()).ok());
      EXPECT_TRUE((*other)->Pool(got, s, pooling, false, b[s].data()).ok());
      for (size_t c = 0; c < h; ++c) center[c] += a[s][c] / n;
    }
    for (int s = 0; s < n; ++s) {
      for (int t = 0; t < s; ++t) {
        stats.max_between_sequences = std::max(stats.max_between_sequences, Cosine(a[s], a[t]));
      }
    }
    for (int s = 0; s < n; ++s) {
      const double raw = Cosine(a[s], b[s]);
      for (size_t c = 0; c < h; ++c) {
        a[s][c] -= center[c];
        b[s][c] -= center[c];
      }
      const double centered = Cosine(a[s], b[s]);
      stats.mean += raw;
      stats.min = std::min(stats.min, raw);
      stats.centered_mean += centered;
      stats.centered_min = std::min(stats.centered_min, centered);
      ++stats.count;
    }
  }
  stats.mean /= stats.count;
  stats.centered_mean /= stats.count;
  return stats;
}

std::vector<Sequence> GoldenBatch(const nlohmann::json& reference,
                                  std::vector<std::vector<int32_t>>* storage) {
  for (const auto& input : reference["inputs"]) {
    storage->push_back(input["ids"].get<std::vector<int32_t>>());
    storage->push_back(input.contains("token_type_ids")
                           ? input["token_type_ids"].get<std::vector<int32_t>>()
                           : std::vector<int32_t>{});
  }
  std::vector<Sequence> batch;
  for (size_t i = 0; i < storage->size(); i += 2) {
    batch.push_back({(*storage)[i], (*storage)[i + 1]});
  }
  return batch;
}

}  // namespace engine::testing
