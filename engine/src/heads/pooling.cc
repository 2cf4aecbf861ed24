#include "heads/pooling.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/encoder.h"
#include "kernels/kernels.h"
#include "oneapi/dnnl/dnnl.h"

namespace engine {

void MeanPool(const float* states, int64_t tokens, int64_t hidden, float* out) {
  for (int64_t c = 0; c < hidden; ++c) out[c] = 0.0f;
  for (int64_t t = 0; t < tokens; ++t) {
    const float* row = states + t * hidden;
    for (int64_t c = 0; c < hidden; ++c) out[c] += row[c];
  }
  const float inv = 1.0f / static_cast<float>(tokens);
  for (int64_t c = 0; c < hidden; ++c) out[c] *= inv;
}

void PoolTokens(Pooling mode, const float* states, int64_t tokens, int64_t skip, int64_t hidden,
                float* out) {
  if (skip < 0) skip = 0;
  if (skip > tokens) skip = tokens;
  const int64_t kept = tokens - skip;
  switch (mode) {
    case Pooling::kNone:
    case Pooling::kPooler:
      return;
    case Pooling::kCls: {
      // sentence-transformers takes the first token the mask keeps (argmax
      // of attention_mask): token 0, or the first after a left-out prompt.
      const float* row = states + (kept > 0 ? skip : 0) * hidden;
      for (int64_t c = 0; c < hidden; ++c) out[c] = row[c];
      return;
    }
    case Pooling::kMax:
      for (int64_t c = 0; c < hidden; ++c) out[c] = -1e9f;
      for (int64_t t = skip; t < tokens; ++t) {
        const float* row = states + t * hidden;
        for (int64_t c = 0; c < hidden; ++c) out[c] = std::max(out[c], row[c]);
      }
      return;
    case Pooling::kMean:
    case Pooling::kMeanSqrtLen:
    case Pooling::kWeightedMean: {
      std::vector<double> sum(static_cast<size_t>(hidden), 0.0);
      double weights = 0.0;
      for (int64_t t = skip; t < tokens; ++t) {
        const double w = mode == Pooling::kWeightedMean ? static_cast<double>(t + 1) : 1.0;
        weights += w;
        const float* row = states + t * hidden;
        for (int64_t c = 0; c < hidden; ++c) sum[c] += w * row[c];
      }
      weights = std::max(weights, 1e-9);
      const double divisor = mode == Pooling::kMeanSqrtLen ? std::sqrt(weights) : weights;
      for (int64_t c = 0; c < hidden; ++c) out[c] = static_cast<float>(sum[c] / divisor);
      return;
    }
    case Pooling::kLastToken: {
      if (kept == 0) {
        for (int64_t c = 0; c < hidden; ++c) out[c] = 0.0f;
        return;
      }
      const float* row = states + (tokens - 1) * hidden;
      for (int64_t c = 0; c < hidden; ++c) out[c] = row[c];
      return;
    }
  }
}

void PoolerHead(const PoolerWeights& pooler, const float* cls, int64_t hidden, float* out) {
  for (int64_t c = 0; c < hidden; ++c) out[c] = pooler.bias[c];
  // out[1, H] += cls[1, H] * W^T
  dnnl_sgemm('N', 'T', 1, hidden, hidden, 1.0f, cls, hidden, pooler.weight.data(), hidden, 1.0f,
             out, hidden);
  kernels::Tanh(out, hidden);
}

void L2Normalize(float* v, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]) * v[i];
  if (sum <= 0.0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (int64_t i = 0; i < n; ++i) v[i] *= inv;
}

const char* PoolingName(Pooling pooling) {
  switch (pooling) {
    case Pooling::kNone:
      return "none";
    case Pooling::kCls:
      return "cls";
    case Pooling::kMean:
      return "mean";
    case Pooling::kPooler:
      return "pooler";
    case Pooling::kMax:
      return "max";
    case Pooling::kMeanSqrtLen:
      return "mean_sqrt_len";
    case Pooling::kWeightedMean:
      return "weightedmean";
    case Pooling::kLastToken:
      return "lasttoken";
  }
  return "?";
}

absl::StatusOr<Pooling> ParsePooling(const std::string& name) {
  for (Pooling p : {Pooling::kNone, Pooling::kCls, Pooling::kMean, Pooling::kPooler, Pooling::kMax,
                    Pooling::kMeanSqrtLen, Pooling::kWeightedMean, Pooling::kLastToken}) {
    if (name == PoolingName(p)) return p;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown pooling \"", name,
      "\" (expected none, cls, mean, pooler, max, mean_sqrt_len, weightedmean or lasttoken)"));
}

}  // namespace engine
