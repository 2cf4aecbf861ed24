#include "heads/token_heads.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "engine/encoder.h"
#include "io/torch_file.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

// A torch.nn.Linear(in_features=hidden) state_dict: "weight" [out, hidden]
// and, when `bias`, "bias" [out]. `out` 0 takes the file's.
absl::StatusOr<HeadLinear> ReadTorchLinear(ModelDirectory& directory, const std::string& name,
                                           int64_t hidden, int64_t out, bool bias) {
  const std::string path = directory.PathOf(name);
  ASSIGN_OR_RETURN(const std::string* bytes, directory.Text(name));
  absl::StatusOr<TorchStateDict> state =
      ParseTorchFile(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), path);
  if (!state.ok()) return state.status();
  const auto weight = state->find("weight");
  if (weight == state->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no \"weight\" (a torch.nn.Linear state_dict was expected)"));
  }
  const std::vector<int64_t>& shape = weight->second.shape;
  if (shape.size() != 2 || shape[1] != hidden || shape[0] < 1 || (out != 0 && shape[0] != out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": weight of shape [", absl::StrJoin(shape, ", "), "], expected [",
        out == 0 ? "D" : absl::StrCat(out), ", ", hidden, "] (hidden size ", hidden, ")"));
  }
  HeadLinear linear;
  linear.in = hidden;
  linear.out = shape[0];
  linear.weight = weight->second.values;
  const auto bias_entry = state->find("bias");
  if (bias) {
    if (bias_entry == state->end() ||
        bias_entry->second.shape != std::vector<int64_t>{linear.out}) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": no \"bias\" of shape [", linear.out, "]"));
    }
    linear.bias = bias_entry->second.values;
  }
  return linear;
}

// Whether config.json's "architectures" list names `architecture`.
bool NamesArchitecture(const nlohmann::json& config_json, const char* architecture) {
  const auto found = config_json.find("architectures");
  if (found == config_json.end() || !found->is_array()) return false;
  return std::any_of(found->begin(), found->end(),
                     [architecture](const nlohmann::json& name) { return name == architecture; });
}

}  // namespace

absl::StatusOr<std::unique_ptr<LexicalWeightsHead>> LoadLexicalWeights(
    ModelDirectory& directory, int64_t hidden, std::vector<int32_t> excluded_ids) {
  const std::string path = directory.PathOf(kLexicalWeightsFile);
  absl::StatusOr<HeadLinear> linear =
      ReadTorchLinear(directory, kLexicalWeightsFile, hidden, 1, /*bias=*/true);
  if (!linear.ok()) return linear.status();
  auto head = std::make_unique<LexicalWeightsHead>();
  head->linear = *std::move(linear);
  head->excluded_ids = std::move(excluded_ids);
  head->source = path;
  return head;
}

absl::StatusOr<std::unique_ptr<MultiVectorWeights>> LoadBgeM3ColbertIfAny(ModelDirectory& directory,
                                                                          int64_t hidden) {
  if (!directory.Has(kColbertFile)) return nullptr;
  const std::string path = directory.PathOf(kColbertFile);
  absl::StatusOr<HeadLinear> linear =
      ReadTorchLinear(directory, kColbertFile, hidden, 0, /*bias=*/true);
  if (!linear.ok()) return linear.status();
  auto weights = std::make_unique<MultiVectorWeights>();
  weights->linear = *std::move(linear);
  weights->head.dimensions = static_cast<int>(weights->linear.out);
  weights->head.skip_first_token = true;
  weights->head.mean_score = true;
  weights->head.source = path;
  return weights;
}

absl::StatusOr<std::unique_ptr<MultiVectorWeights>> ColbertProjectionHead(
    const DenseLayer* projection, const std::string& model_dir, int64_t hidden) {
  if (projection == nullptr) return nullptr;
  const DenseLayer& layer = *projection;
  if (layer.in_features != hidden) {
    return absl::InvalidArgumentError(absl::StrCat(model_dir, "/", layer.directory,
                                                   "/config.json: in_features ", layer.in_features,
                                                   " but the model's hidden size is ", hidden));
  }
  auto weights = std::make_unique<MultiVectorWeights>();
  weights->linear.in = layer.in_features;
  weights->linear.out = layer.out_features;
  weights->linear.weight = layer.weight;
  weights->linear.bias = layer.bias;
  weights->head.dimensions = layer.out_features;
  weights->head.source = (std::filesystem::path(model_dir) / layer.directory).string();
  return weights;
}

absl::StatusOr<std::unique_ptr<MultiVectorWeights>> LoadHfColbertIfAny(
    const Checkpoint& checkpoint, const nlohmann::json& config_json, int64_t hidden) {
  constexpr char kProjection[] = "linear.weight";
  const auto entry = checkpoint.entries().find(kProjection);
  if (entry == checkpoint.entries().end() || !NamesArchitecture(config_json, "HF_ColBERT")) {
    return nullptr;
  }
  const std::vector<int64_t> shape = entry->second.view->shape;
  if (shape.size() != 2 || shape[1] != hidden || shape[0] < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        entry->second.file->path(), ": ", kProjection, " of shape [", absl::StrJoin(shape, ", "),
        "], expected [D, ", hidden, "] (the ColBERT projection)"));
  }
  absl::StatusOr<std::vector<float>> weight = checkpoint.ReadFloat(kProjection, shape);
  if (!weight.ok()) return weight.status();
  auto weights = std::make_unique<MultiVectorWeights>();
  weights->linear.in = hidden;
  weights->linear.out = shape[0];
  weights->linear.weight = *std::move(weight);
  weights->head.dimensions = static_cast<int>(shape[0]);
  weights->head.source = entry->second.file->path();
  return weights;
}

float MaxSimScore(const MultiVectorHead& head, const float* query, int query_rows,
                  const float* document, int document_rows) {
  if (query_rows <= 0 || document_rows <= 0) return 0.0f;
  const int d = head.dimensions;
  double total = 0.0;
  for (int q = 0; q < query_rows; ++q) {
    float best = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < document_rows; ++j) {
      float dot = 0.0f;
      for (int k = 0; k < d; ++k) dot += query[q * d + k] * document[j * d + k];
      best = std::max(best, dot);
    }
    total += best;
  }
  return static_cast<float>(head.mean_score ? total / query_rows : total);
}

void RunLexicalWeights(const LexicalWeightsHead& head, const float* states,
                       absl::Span<const int32_t> ids, int max_active_dims,
                       std::vector<SparseEntry>* out) {
  out->clear();
  const int64_t tokens = static_cast<int64_t>(ids.size());
  std::vector<float> weights(static_cast<size_t>(tokens));
  ApplyLinear(head.linear, states, tokens, weights.data());
  // The maximum per id, in first-seen order (then sorted).
  std::unordered_map<int32_t, size_t> slot;
  for (int64_t t = 0; t < tokens; ++t) {
    const float weight = std::max(weights[t], 0.0f);
    if (weight <= 0.0f) continue;
    const int32_t id = ids[t];
    if (std::find(head.excluded_ids.begin(), head.excluded_ids.end(), id) !=
        head.excluded_ids.end()) {
      continue;
    }
    const auto [it, inserted] = slot.emplace(id, out->size());
    if (inserted) {
      out->push_back({id, weight});
    } else {
      (*out)[it->second].weight = std::max((*out)[it->second].weight, weight);
    }
  }
  std::sort(out->begin(), out->end(), [](const SparseEntry& a, const SparseEntry& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.id < b.id;
  });
  if (max_active_dims > 0 && static_cast<int>(out->size()) > max_active_dims) {
    out->resize(static_cast<size_t>(max_active_dims));
  }
}

void RunMultiVectors(const MultiVectorWeights& weights, const float* states, int64_t tokens,
                     absl::Span<const uint8_t> keep, std::vector<float>* out, int* rows) {
  const int64_t h = weights.linear.in;
  const int64_t d = weights.linear.out;
  const int64_t first = weights.head.skip_first_token ? 1 : 0;
  // One GEMM over the kept rows: in place when they are contiguous (no keep
  // flags), else gathered first.
  const float* input = states + first * h;
  int64_t n = std::max<int64_t>(0, tokens - first);
  std::vector<float> kept;
  if (!keep.empty()) {
    kept.reserve(static_cast<size_t>(n * h));
    for (int64_t t = first; t < tokens; ++t) {
      if (keep[t] != 0) kept.insert(kept.end(), states + t * h, states + (t + 1) * h);
    }
    input = kept.data();
    n = static_cast<int64_t>(kept.size()) / h;
  }
  out->resize(static_cast<size_t>(n * d));
  if (n > 0) ApplyLinear(weights.linear, input, n, out->data());
  for (int64_t r = 0; r < n; ++r) L2Normalize(out->data() + r * d, d);
  *rows = static_cast<int>(n);
}

}  // namespace engine
