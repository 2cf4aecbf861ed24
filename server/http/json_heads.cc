#include "server/http/json_heads.h"

#include "common/status_macros.h"
#include "server/http/json_fields.h"

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server/core/api/input_error.h"
#include "server/http/http_errors.h"

namespace server::http {
namespace {

using core::InputProblem;
using core::WithInputProblem;
using nlohmann::json;

// A list of strings (or, `objects`, of {"text": string}).
absl::StatusOr<std::vector<std::string>> Texts(const json& body, const char* field, bool objects) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return Missing(field);
  if (!it->is_array()) {
    return BadType(field, absl::StrCat("\"", field, "\" must be an array of strings"));
  }
  if (it->empty()) {
    return WithInputProblem(InputProblem::kEmpty,
                            BadValue(field, absl::StrCat("\"", field, "\" is empty")));
  }
  std::vector<std::string> texts;
  texts.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    const std::string name = absl::StrCat(field, "[", i, "]");
    if (item.is_string()) {
      texts.push_back(item.get<std::string>());
    } else if (objects && item.is_object() && item.contains("text") && item["text"].is_string()) {
      texts.push_back(item["text"].get<std::string>());
    } else {
      return BadType(name, absl::StrCat(name,
                                        objects ? " must be a string or an object with a string "
                                                  "\"text\", not "
                                                : " must be a string, not ",
                                        item.type_name()));
    }
  }
  return texts;
}

// The optional "instruction" of a prompted reranker (Qwen3-Reranker).
absl::Status Instruction(const json& body, std::string* instruction) {
  const auto it = body.find("instruction");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) return BadType("instruction", "\"instruction\" must be a string");
  *instruction = it->get<std::string>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<core::RerankRequest> ParseTeiRerank(std::string_view body, std::string* model) {
  absl::StatusOr<json> parsed = ParseJsonObject(body);
  if (!parsed.ok()) return parsed.status();
  RETURN_IF_ERROR(ModelField(*parsed, model));
  core::RerankRequest request;
  absl::StatusOr<std::string> query = RequiredString(*parsed, "query");
  if (!query.ok()) return query.status();
  request.query = *std::move(query);
  absl::StatusOr<std::vector<std::string>> texts = Texts(*parsed, "texts", false);
  if (!texts.ok()) return texts.status();
  request.texts = *std::move(texts);
  RETURN_IF_ERROR(Truncation(*parsed, &request.truncate, &request.truncation_side));
  RETURN_IF_ERROR(LongInputField(*parsed, &request.long_input));
  absl::StatusOr<bool> raw = Flag(*parsed, "raw_scores", false);
  if (!raw.ok()) return raw.status();
  request.raw_scores = *raw;
  absl::StatusOr<bool> return_text = Flag(*parsed, "return_text", false);
  if (!return_text.ok()) return return_text.status();
  request.return_text = *return_text;
  RETURN_IF_ERROR(Instruction(*parsed, &request.instruction));
  return request;
}

std::string RenderTeiRerank(const core::RerankResult& result) {
  json ranks = json::array();
  for (const core::RerankHit& hit : result.results) {
    json rank = {{"index", hit.index}, {"score", hit.score}};
    if (!hit.text.empty()) rank["text"] = hit.text;
    if (hit.windows > 0) rank["windows"] = hit.windows;  // window mode
    ranks.push_back(std::move(rank));
  }
  return Dump(ranks);
}

absl::StatusOr<core::RerankRequest> ParseCohereRerank(std::string_view body, std::string* model) {
  absl::StatusOr<json> parsed = ParseJsonObject(body);
  if (!parsed.ok()) return parsed.status();
  RETURN_IF_ERROR(ModelField(*parsed, model));
  core::RerankRequest request;
  absl::StatusOr<std::string> query = RequiredString(*parsed, "query");
  if (!query.ok()) return query.status();
  request.query = *std::move(query);
  absl::StatusOr<std::vector<std::string>> texts = Texts(*parsed, "documents", true);
  if (!texts.ok()) return texts.status();
  request.texts = *std::move(texts);
  if (const auto it = parsed->find("top_n"); it != parsed->end() && !it->is_null()) {
    if (!it->is_number_integer()) return BadType("top_n", "\"top_n\" must be an integer");
    if (it->get<int64_t>() < 1) return BadValue("top_n", "\"top_n\" must be 1 or more");
    request.top_n = static_cast<int>(std::min<int64_t>(it->get<int64_t>(), 1 << 30));
  }
  absl::StatusOr<bool> documents = Flag(*parsed, "return_documents", false);
  if (!documents.ok()) return documents.status();
  request.return_text = *documents;
  RETURN_IF_ERROR(Instruction(*parsed, &request.instruction));
  RETURN_IF_ERROR(LongInputField(*parsed, &request.long_input));
  return request;
}

std::string RenderCohereRerank(const core::RerankResult& result, const std::string& model,
                               int64_t documents) {
  json results = json::array();
  for (const core::RerankHit& hit : result.results) {
    json item = {{"index", hit.index}, {"relevance_score", hit.score}};
    if (!hit.text.empty()) item["document"] = {{"text", hit.text}};
    if (hit.windows > 0) item["windows"] = hit.windows;  // window mode
    results.push_back(std::move(item));
  }
  // Cohere answers an id per call; clients log it. Unique within the process.
  static std::atomic<uint64_t> next_id{1};
  return Dump({{"id", absl::StrCat("rerank-", next_id.fetch_add(1, std::memory_order_relaxed))},
               {"model", model},
               {"results", std::move(results)},
               {"meta",
                {{"api_version", {{"version", "2"}}},
                 {"billed_units", {{"search_units", 1}, {"total_documents", documents}}}}},
               {"usage", {{"total_tokens", result.tokens}}}});
}

absl::StatusOr<core::ClassifyRequest> ParseTeiPredict(std::string_view body, bool* batched,
                                                      std::string* model) {
  absl::StatusOr<json> parsed = ParseJsonObject(body);
  if (!parsed.ok()) return parsed.status();
  RETURN_IF_ERROR(ModelField(*parsed, model));
  const auto it = parsed->find("inputs");
  if (it == parsed->end() || it->is_null()) return Missing("inputs");
  constexpr char kShape[] =
      "\"inputs\" must be a string, a pair [string, string] or a batch [[string], "
      "[string, string], ...]";
  // One [a] or [a, b] array as an input.
  auto sequence = [&](const json& value, const std::string& name) -> absl::StatusOr<core::Input> {
    if (!value.is_array() || value.empty() || value.size() > 2) return BadValue(name, kShape);
    for (const json& text : value) {
      if (!text.is_string()) return BadType(name, kShape);
    }
    core::Input input = core::Input::Text(value[0].get<std::string>());
    if (value.size() == 2) {
      input.kind = core::Input::Kind::kTextPair;
      input.text_pair = value[1].get<std::string>();
    }
    return input;
  };
  core::ClassifyRequest request;
  *batched = false;
  if (it->is_string()) {
    request.inputs.push_back(core::Input::Text(it->get<std::string>()));
  } else if (it->is_array() && !it->empty() && it->front().is_string()) {
    absl::StatusOr<core::Input> input = sequence(*it, "inputs");
    if (!input.ok()) return input.status();
    request.inputs.push_back(*std::move(input));
  } else if (it->is_array() && !it->empty()) {
    *batched = true;
    for (size_t i = 0; i < it->size(); ++i) {
      absl::StatusOr<core::Input> input = sequence((*it)[i], absl::StrCat("inputs[", i, "]"));
      if (!input.ok()) return input.status();
      request.inputs.push_back(*std::move(input));
    }
  } else if (it->is_array()) {
    return WithInputProblem(InputProblem::kEmpty, BadValue("inputs", "\"inputs\" is empty"));
  } else {
    return BadType("inputs", kShape);
  }
  RETURN_IF_ERROR(Truncation(*parsed, &request.truncate, &request.truncation_side));
  absl::StatusOr<bool> raw = Flag(*parsed, "raw_scores", false);
  if (!raw.ok()) return raw.status();
  request.raw_scores = *raw;
  return request;
}

std::string RenderTeiPredict(const core::ClassifyResult& result, bool batched) {
  json all = json::array();
  for (const std::vector<core::LabelScore>& scores : result.predictions) {
    json predictions = json::array();
    for (const core::LabelScore& score : scores) {
      predictions.push_back({{"score", score.score}, {"label", score.label}});
    }
    all.push_back(std::move(predictions));
  }
  return Dump(batched || all.empty() ? all : all[0]);
}

absl::StatusOr<core::SparseRequest> ParseTeiEmbedSparse(std::string_view body, int hidden_size,
                                                        std::string* model) {
  absl::StatusOr<EmbeddingsCall> call = ParseTeiEmbed(body, hidden_size);
  if (!call.ok()) return call.status();
  *model = call->model;
  if (!call->request.prompt_name.empty()) {
    return BadValue("prompt_name", "\"prompt_name\" is not supported on /embed_sparse");
  }
  core::SparseRequest request;
  request.inputs = std::move(call->request.inputs);
  request.truncate = call->request.truncate;
  request.truncation_side = call->request.truncation_side;
  return request;
}

std::string RenderTeiEmbedSparse(const core::SparseResult& result) {
  json all = json::array();
  for (const std::vector<core::SparseValue>& values : result.outputs) {
    json entries = json::array();
    for (const core::SparseValue& value : values) {
      entries.push_back({{"index", value.id}, {"value", value.weight}});
    }
    all.push_back(std::move(entries));
  }
  return Dump(all);
}

absl::StatusOr<core::EncodeRequest> ParseTeiEmbedAll(std::string_view body, int hidden_size,
                                                     std::string* model) {
  absl::StatusOr<EmbeddingsCall> call = ParseTeiEmbed(body, hidden_size);
  if (!call.ok()) return call.status();
  *model = call->model;
  core::EncodeRequest request = std::move(call->request);
  request.pooling = core::PoolingChoice::kNone;
  request.normalize = false;
  return request;
}

std::string RenderTeiEmbedAll(const core::EncodeResult& result) {
  json all = json::array();
  for (const core::InputOutput& output : result.outputs) {
    json tokens = json::array();
    for (int row = 0; row < output.rows; ++row) {
      const float* begin = output.values.data() + static_cast<size_t>(row) * output.cols;
      tokens.push_back(std::vector<float>(begin, begin + output.cols));
    }
    all.push_back(std::move(tokens));
  }
  return Dump(all);
}

absl::StatusOr<core::EncodeRequest> ParseTeiSimilarity(std::string_view body, std::string* model) {
  absl::StatusOr<json> parsed = ParseJsonObject(body);
  if (!parsed.ok()) return parsed.status();
  RETURN_IF_ERROR(ModelField(*parsed, model));
  const auto inputs = parsed->find("inputs");
  if (inputs == parsed->end() || inputs->is_null()) return Missing("inputs");
  if (!inputs->is_object()) {
    return BadType("inputs", "\"inputs\" must be an object {source_sentence, sentences}");
  }
  absl::StatusOr<std::string> source = RequiredString(*inputs, "source_sentence");
  if (!source.ok()) return source.status();
  absl::StatusOr<std::vector<std::string>> sentences = Texts(*inputs, "sentences", false);
  if (!sentences.ok()) return sentences.status();
  core::EncodeRequest request;
  request.normalize = true;
  request.inputs.push_back(core::Input::Text(*std::move(source)));
  for (std::string& sentence : *sentences) {
    request.inputs.push_back(core::Input::Text(std::move(sentence)));
  }
  if (const auto parameters = parsed->find("parameters");
      parameters != parsed->end() && !parameters->is_null()) {
    if (!parameters->is_object()) return BadType("parameters", "\"parameters\" must be an object");
    RETURN_IF_ERROR(Truncation(*parameters, &request.truncate, &request.truncation_side));
    if (const auto prompt = parameters->find("prompt_name");
        prompt != parameters->end() && !prompt->is_null()) {
      if (!prompt->is_string()) return BadType("prompt_name", "\"prompt_name\" must be a string");
      request.prompt_name = prompt->get<std::string>();
    }
  }
  return request;
}

std::string RenderTeiSimilarity(const core::EncodeResult& result) {
  json similarities = json::array();
  if (result.outputs.empty()) return Dump(similarities);
  const std::vector<float>& source = result.outputs[0].values;
  for (size_t i = 1; i < result.outputs.size(); ++i) {
    const std::vector<float>& other = result.outputs[i].values;
    double dot = 0.0;
    for (size_t k = 0; k < source.size() && k < other.size(); ++k) {
      dot += static_cast<double>(source[k]) * other[k];
    }
    similarities.push_back(static_cast<float>(dot));
  }
  return Dump(similarities);
}

}  // namespace server::http
