// Embed: pooling -> Dense layers -> Matryoshka truncation -> L2 normalize.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/sentence_pipeline.h"
#include "heads/pooling.h"
#include "oneapi/dnnl/dnnl.h"

namespace engine {
namespace {

void Activate(ModuleActivation activation, float* values, int n) {
  for (int i = 0; i < n; ++i) {
    const double x = values[i];
    switch (activation) {
      case ModuleActivation::kIdentity:
        break;
      case ModuleActivation::kTanh:
        values[i] = static_cast<float>(std::tanh(x));
        break;
      case ModuleActivation::kReLU:
        values[i] = static_cast<float>(std::max(x, 0.0));
        break;
      case ModuleActivation::kSigmoid:
        values[i] = static_cast<float>(1.0 / (1.0 + std::exp(-x)));
        break;
      case ModuleActivation::kGelu:
        values[i] = static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
        break;
    }
  }
}

// A compact result (EncodeResult::rows) pooled: the modes that read one
// token (as PoolTokens picks it), from the row the result kept.
absl::Status PoolKeptToken(const EncodeResult& result, int index, Pooling mode, int skip,
                           float* out) {
  const int tokens = result.num_tokens(index);
  skip = std::clamp(skip, 0, tokens);
  const float* row = nullptr;
  if (mode == Pooling::kCls) {
    row = result.token_state(index, skip < tokens ? skip : 0);
  } else if (mode == Pooling::kLastToken) {
    if (skip == tokens) {
      std::fill(out, out + result.hidden_size, 0.0f);
      return absl::OkStatus();
    }
    row = result.token_state(index, tokens - 1);
  }
  if (row == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("pooling ", PoolingName(mode), " needs token states the result lacks (it ",
                     "holds the ", TokenRowsName(result.rows), " token of each sequence)"));
  }
  std::copy(row, row + result.hidden_size, out);
  return absl::OkStatus();
}

}  // namespace

absl::Status Embed(const SentencePipeline& pipeline, const Encoder& encoder,
                   const EncodeResult& result, int index, const EmbeddingOptions& options,
                   std::vector<float>* out) {
  if (index < 0 || index >= result.num_sequences()) {
    return absl::OutOfRangeError(absl::StrCat("no sequence ", index, " in the result"));
  }
  const std::vector<Pooling>& modes = options.pooling.empty() ? pipeline.pooling : options.pooling;
  if (modes.empty()) return absl::InvalidArgumentError("no pooling mode");
  const int hidden = result.hidden_size;
  const float* states = result.sequence_states(index);  // null on a compact result
  const int tokens = result.num_tokens(index);
  std::vector<float> pooled(modes.size() * static_cast<size_t>(hidden));
  for (size_t m = 0; m < modes.size(); ++m) {
    float* slot = pooled.data() + m * hidden;
    switch (modes[m]) {
      case Pooling::kNone:
        return absl::InvalidArgumentError("pooling none has no single vector");
      case Pooling::kPooler:
        RETURN_IF_ERROR(encoder.Pool(result, index, Pooling::kPooler, false, slot));
        break;
      default:
        if (states == nullptr) {
          RETURN_IF_ERROR(PoolKeptToken(result, index, modes[m], options.skip_tokens, slot));
          break;
        }
        PoolTokens(modes[m], states, tokens, options.skip_tokens, hidden, slot);
        break;
    }
  }
  std::vector<float> next;
  if (options.apply_dense) {
    for (const DenseLayer& layer : pipeline.dense) {
      if (static_cast<int>(pooled.size()) != layer.in_features) {
        return absl::FailedPreconditionError(
            absl::StrCat(layer.directory, ": the Dense layer takes ", layer.in_features,
                         " values but gets ", pooled.size()));
      }
      next.assign(static_cast<size_t>(layer.out_features), 0.0f);
      if (!layer.bias.empty()) next = layer.bias;
      // next[1, out] += pooled[1, in] * W^T
      dnnl_sgemm('N', 'T', 1, layer.out_features, layer.in_features, 1.0f, pooled.data(),
                 layer.in_features, layer.weight.data(), layer.in_features, 1.0f, next.data(),
                 layer.out_features);
      Activate(layer.activation, next.data(), layer.out_features);
      pooled.swap(next);
    }
  }
  if (options.dimensions < 0 || options.dimensions > static_cast<int>(pooled.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimensions ", options.dimensions, " is not within 1..", pooled.size()));
  }
  if (options.dimensions > 0) pooled.resize(static_cast<size_t>(options.dimensions));
  if (options.normalize) L2Normalize(pooled.data(), static_cast<int64_t>(pooled.size()));
  *out = std::move(pooled);
  return absl::OkStatus();
}

}  // namespace engine
