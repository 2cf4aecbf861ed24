#include "model/pooling.h"

#include <cmath>
#include <string>

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
  }
  return "?";
}

absl::StatusOr<Pooling> ParsePooling(const std::string& name) {
  for (Pooling p : {Pooling::kNone, Pooling::kCls, Pooling::kMean, Pooling::kPooler}) {
    if (name == PoolingName(p)) return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pooling \"", name, "\" (expected none, cls, mean or pooler)"));
}

}  // namespace engine
