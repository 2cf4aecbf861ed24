#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "common/status_macros.h"
#include "engine/encoder.h"
#include "nlohmann/json.hpp"

namespace cli {
namespace {

struct InputLine {
  std::vector<int32_t> ids;
  std::vector<int32_t> token_type_ids;
};

absl::StatusOr<InputLine> ParseInputLine(const std::string& line, int line_number) {
  const auto error = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("input line ", line_number, ": ", what));
  };
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return error("not a JSON object");
  if (!j.contains("ids") || !j["ids"].is_array()) return error("missing \"ids\" array");
  InputLine input;
  for (const char* key : {"ids", "token_type_ids"}) {
    if (!j.contains(key)) continue;
    std::vector<int32_t>& target = std::string(key) == "ids" ? input.ids : input.token_type_ids;
    for (const auto& v : j[key]) {
      if (!v.is_number_integer()) return error(absl::StrCat("\"", key, "\" must hold integers"));
      const int64_t value = v.get<int64_t>();
      if (value < INT32_MIN || value > INT32_MAX) return error(absl::StrCat(key, " out of range"));
      target.push_back(static_cast<int32_t>(value));
    }
  }
  return input;
}

// Floats printed with 9 significant digits: enough to round-trip a float.
void AppendFloats(std::string* out, const float* values, int64_t n) {
  out->push_back('[');
  char buffer[32];
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out->push_back(',');
    const int len = std::snprintf(buffer, sizeof(buffer), "%.9g", values[i]);
    out->append(buffer, static_cast<size_t>(len));
  }
  out->push_back(']');
}

absl::Status WriteEncoded(const engine::Encoder& encoder, const engine::EncodeResult& result,
                          engine::Pooling pooling, bool normalize, std::ostream& out) {
  const int64_t h = result.hidden_size;
  std::vector<float> vector(static_cast<size_t>(h));
  std::string line;
  for (int i = 0; i < result.num_sequences(); ++i) {
    line.clear();
    if (pooling == engine::Pooling::kNone) {
      line = "{\"hidden_states\":[";
      std::vector<float> row(static_cast<size_t>(h));
      for (int t = 0; t < result.num_tokens(i); ++t) {
        if (t > 0) line.push_back(',');
        const float* state = result.sequence_states(i) + t * h;
        row.assign(state, state + h);
        if (normalize) engine::L2Normalize(row.data(), h);
        AppendFloats(&line, row.data(), h);
      }
      line += "]}";
    } else {
      RETURN_IF_ERROR(encoder.Pool(result, i, pooling, normalize, vector.data()));
      line = "{\"embedding\":";
      AppendFloats(&line, vector.data(), h);
      line += "}";
    }
    out << line << '\n';
  }
  return absl::OkStatus();
}

// Writes one line per sequence of `result`.
using WriteResult = std::function<absl::Status(const engine::EncodeResult& result)>;

absl::Status EncodeAndWrite(engine::Encoder& encoder, const std::vector<InputLine>& inputs,
                            const WriteResult& write) {
  std::vector<engine::Sequence> batch;
  for (const InputLine& input : inputs) batch.push_back({input.ids, input.token_type_ids});
  engine::EncodeResult result;
  RETURN_IF_ERROR(encoder.Encode(batch, &result));
  return write(result);
}

// Reads JSON lines of ids from `in` and encodes them in chunks that fit the
// engine's token budget, handing each chunk's result to `write`.
absl::Status EncodeLines(const CommonOptions& common, engine::Encoder& encoder, std::istream& in,
                         const WriteResult& write) {
  std::vector<InputLine> chunk;
  int64_t chunk_tokens = 0;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    absl::StatusOr<InputLine> input = ParseInputLine(line, line_number);
    if (!input.ok()) return input.status();
    const engine::Sequence sequence{input->ids, input->token_type_ids};
    if (absl::Status s = encoder.Validate(sequence); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input line ", line_number, ": ", s.message()));
    }
    const int64_t tokens = static_cast<int64_t>(input->ids.size());
    if (chunk_tokens + tokens > common.engine.max_batch_tokens) {
      if (absl::Status s = EncodeAndWrite(encoder, chunk, write); !s.ok()) return s;
      chunk.clear();
      chunk_tokens = 0;
    }
    chunk.push_back(*std::move(input));
    chunk_tokens += tokens;
  }
  if (!chunk.empty()) return EncodeAndWrite(encoder, chunk, write);
  return absl::OkStatus();
}

}  // namespace

absl::Status RunEncode(const CommonOptions& common, const std::string& pooling_name, bool normalize,
                       std::istream& in, std::ostream& out) {
  absl::StatusOr<engine::Pooling> pooling = engine::ParsePooling(pooling_name);
  if (!pooling.ok()) return pooling.status();
  absl::StatusOr<std::unique_ptr<engine::Encoder>> encoder =
      engine::Encoder::Load(common.model_dir, common.engine);
  if (!encoder.ok()) return encoder.status();
  if (*pooling == engine::Pooling::kPooler && !(*encoder)->has_pooler()) {
    return absl::InvalidArgumentError("pooling pooler: the model has no pooler.dense weights");
  }
  return EncodeLines(common, **encoder, in, [&](const engine::EncodeResult& result) {
    return WriteEncoded(**encoder, result, *pooling, normalize, out);
  });
}

absl::Status RunScore(const CommonOptions& common, bool activation, std::istream& in,
                      std::ostream& out) {
  absl::StatusOr<std::unique_ptr<engine::Encoder>> encoder =
      engine::Encoder::Load(common.model_dir, common.engine);
  if (!encoder.ok()) return encoder.status();
  const engine::ClassifierHead* head = (*encoder)->classifier();
  if (head == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(common.model_dir, ": the model has no sequence-classification head"));
  }
  std::vector<float> logits(static_cast<size_t>(head->num_labels));
  return EncodeLines(common, **encoder, in, [&](const engine::EncodeResult& result) {
    std::string line;
    for (int i = 0; i < result.num_sequences(); ++i) {
      RETURN_IF_ERROR((*encoder)->Classify(result, i, logits.data()));
      if (activation)
        engine::ApplyScoreActivation(head->activation, logits.data(), head->num_labels);
      line = activation ? "{\"scores\":" : "{\"logits\":";
      AppendFloats(&line, logits.data(), head->num_labels);
      line += "}";
      out << line << '\n';
    }
    return absl::OkStatus();
  });
}

absl::Status RunSparse(const CommonOptions& common, const engine::SparseOptions& options,
                       std::istream& in, std::ostream& out) {
  absl::StatusOr<std::unique_ptr<engine::Encoder>> encoder =
      engine::Encoder::Load(common.model_dir, common.engine);
  if (!encoder.ok()) return encoder.status();
  if (!(*encoder)->has_masked_lm_head()) {
    return absl::FailedPreconditionError(
        absl::StrCat(common.model_dir, ": the model has no masked-LM head (SPLADE)"));
  }
  std::vector<engine::SparseEntry> entries;
  return EncodeLines(common, **encoder, in, [&](const engine::EncodeResult& result) {
    std::string line;
    char buffer[48];
    for (int i = 0; i < result.num_sequences(); ++i) {
      RETURN_IF_ERROR((*encoder)->Sparse(result, i, options, &entries));
      line = "{\"sparse\":[";
      for (size_t k = 0; k < entries.size(); ++k) {
        const int len = std::snprintf(buffer, sizeof(buffer), "%s[%d,%.9g]", k > 0 ? "," : "",
                                      entries[k].id, entries[k].weight);
        line.append(buffer, static_cast<size_t>(len));
      }
      line += "]}";
      out << line << '\n';
    }
    return absl::OkStatus();
  });
}

}  // namespace cli
