#include "server/http/json_quantized.h"

#include <algorithm>
#include <atomic>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/status_macros.h"
#include "server/http/json_fields.h"

namespace server::http {
namespace {

using nlohmann::json;

constexpr char kTypes[] = "\"float\", \"int8\", \"uint8\", \"binary\" or \"ubinary\"";

absl::StatusOr<core::EmbeddingType> TypeOf(const json& value, const std::string& field) {
  if (!value.is_string()) {
    return BadType(field, absl::StrCat("\"", field, "\" must be ", kTypes));
  }
  const std::optional<core::EmbeddingType> type =
      core::EmbeddingTypeFromName(value.get<std::string>());
  if (!type) return BadValue(field, absl::StrCat("\"", field, "\" must be ", kTypes));
  return *type;
}

json Integers(const std::string& bytes, core::EmbeddingType type) {
  return json(core::QuantizedIntegers(bytes, type));
}

}  // namespace

absl::Status EmbeddingTypeField(const json& body, core::EmbeddingType* type) {
  const auto it = body.find("embedding_type");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  absl::StatusOr<core::EmbeddingType> parsed = TypeOf(*it, "embedding_type");
  if (!parsed.ok()) return parsed.status();
  *type = *parsed;
  return absl::OkStatus();
}

absl::StatusOr<QuantizedEmbeddings> QuantizeEmbeddings(core::EncodeResult result,
                                                       std::vector<core::EmbeddingType> types,
                                                       const core::QuantizationRanges* ranges) {
  QuantizedEmbeddings quantized;
  quantized.bytes.resize(types.size());
  for (size_t t = 0; t < types.size(); ++t) {
    if (types[t] == core::EmbeddingType::kFloat) continue;
    for (const core::InputOutput& output : result.outputs) {
      absl::StatusOr<std::string> bytes =
          core::Quantize(absl::MakeConstSpan(output.values), types[t], ranges);
      if (!bytes.ok()) return bytes.status();
      quantized.bytes[t].push_back(*std::move(bytes));
    }
  }
  quantized.result = std::move(result);
  quantized.types = std::move(types);
  return quantized;
}

std::string RenderOpenAiQuantized(const QuantizedEmbeddings& quantized, const EmbeddingsCall& call,
                                  const std::string& served_model) {
  json data = json::array();
  int64_t tokens = 0;
  const std::vector<std::string>& rows = quantized.bytes.front();
  for (size_t i = 0; i < rows.size(); ++i) {
    tokens += quantized.result.outputs[i].tokens;
    json item = {{"object", "embedding"}, {"index", i}};
    item["embedding"] =
        call.base64 ? json(absl::Base64Escape(rows[i])) : Integers(rows[i], quantized.types[0]);
    data.push_back(std::move(item));
  }
  return Dump({{"object", "list"},
               {"data", std::move(data)},
               {"model", served_model},
               {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
}

std::string RenderTeiQuantized(const QuantizedEmbeddings& quantized) {
  json vectors = json::array();
  for (const std::string& row : quantized.bytes.front()) {
    vectors.push_back(Integers(row, quantized.types[0]));
  }
  return Dump(vectors);
}

absl::StatusOr<CohereEmbedCall> ParseCohereEmbed(std::string_view body) {
  absl::StatusOr<json> parsed = ParseJsonObject(body);
  if (!parsed.ok()) return parsed.status();
  CohereEmbedCall call;
  RETURN_IF_ERROR(ModelField(*parsed, &call.model));
  if (parsed->contains("images") || parsed->contains("inputs")) {
    return BadValue("texts", "only \"texts\" is served: this server embeds text, not images");
  }
  const auto texts = parsed->find("texts");
  if (texts == parsed->end() || texts->is_null()) return Missing("texts");
  if (!texts->is_array()) return BadType("texts", "\"texts\" must be an array of strings");
  if (texts->empty()) return BadValue("texts", "\"texts\" is empty");
  for (size_t i = 0; i < texts->size(); ++i) {
    if (!(*texts)[i].is_string()) {
      const std::string name = absl::StrCat("texts[", i, "]");
      return BadType(name, absl::StrCat(name, " must be a string"));
    }
    call.texts.push_back((*texts)[i].get<std::string>());
    call.request.inputs.push_back(core::Input::Text(call.texts.back()));
  }
  if (const auto it = parsed->find("input_type"); it != parsed->end() && !it->is_null()) {
    constexpr char kInputTypes[] =
        "\"input_type\" must be \"search_document\", \"search_query\", \"classification\" or "
        "\"clustering\"";
    if (!it->is_string()) return BadType("input_type", kInputTypes);
    call.input_type = it->get<std::string>();
    if (call.input_type != "search_document" && call.input_type != "search_query" &&
        call.input_type != "classification" && call.input_type != "clustering") {
      return BadValue("input_type", kInputTypes);
    }
  }
  if (const auto it = parsed->find("embedding_types"); it != parsed->end() && !it->is_null()) {
    if (!it->is_array() || it->empty()) {
      return BadType("embedding_types",
                     absl::StrCat("\"embedding_types\" must be a non-empty array of ", kTypes));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      absl::StatusOr<core::EmbeddingType> type =
          TypeOf((*it)[i], absl::StrCat("embedding_types[", i, "]"));
      if (!type.ok()) return type.status();
      // Asked twice: answered once.
      if (std::find(call.types.begin(), call.types.end(), *type) == call.types.end()) {
        call.types.push_back(*type);
      }
    }
  } else {
    call.types.push_back(core::EmbeddingType::kFloat);
  }
  call.request.normalize = true;
  call.request.truncate = true;
  call.request.truncation_side = engine::TruncationSide::kRight;
  if (const auto it = parsed->find("truncate"); it != parsed->end() && !it->is_null()) {
    constexpr char kTruncate[] = "\"truncate\" must be \"NONE\", \"START\" or \"END\"";
    if (!it->is_string()) return BadType("truncate", kTruncate);
    const std::string truncate = it->get<std::string>();
    if (truncate == "NONE") {
      call.request.truncate = false;
    } else if (truncate == "START") {
      call.request.truncation_side = engine::TruncationSide::kLeft;
    } else if (truncate != "END") {
      return BadValue("truncate", kTruncate);
    }
  }
  if (const auto it = parsed->find("output_dimension"); it != parsed->end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (1 << 30)) {
      return BadValue("output_dimension", "\"output_dimension\" must be a positive integer");
    }
    call.request.dimensions = it->get<int>();
  }
  return call;
}

std::string PromptOfInputType(const std::string& input_type,
                              const std::map<std::string, std::string>& prompts) {
  std::string name = input_type;
  if (input_type == "search_query") name = "query";
  if (input_type == "search_document") name = "document";
  return prompts.count(name) > 0 ? name : std::string();
}

std::string RenderCohereEmbed(const QuantizedEmbeddings& quantized, const CohereEmbedCall& call) {
  json embeddings = json::object();
  for (size_t t = 0; t < quantized.types.size(); ++t) {
    const core::EmbeddingType type = quantized.types[t];
    json rows = json::array();
    if (type == core::EmbeddingType::kFloat) {
      for (const core::InputOutput& output : quantized.result.outputs)
        rows.push_back(output.values);
    } else {
      for (const std::string& row : quantized.bytes[t]) rows.push_back(Integers(row, type));
    }
    embeddings[core::EmbeddingTypeName(type)] = std::move(rows);
  }
  int64_t tokens = 0;
  for (const core::InputOutput& output : quantized.result.outputs) tokens += output.tokens;
  // Cohere answers an id per call; unique within the process.
  static std::atomic<uint64_t> next_id{1};
  return Dump(
      {{"id", absl::StrCat("embed-", next_id.fetch_add(1, std::memory_order_relaxed))},
       {"embeddings", std::move(embeddings)},
       {"texts", call.texts},
       {"meta",
        {{"api_version", {{"version", "2"}}}, {"billed_units", {{"input_tokens", tokens}}}}},
       {"response_type", "embeddings_by_type"}});
}

}  // namespace server::http
