#include "server/http/json_multi.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "server/http/json_fields.h"
#include "server/http/json_mapping.h"

namespace server::http {

using json = nlohmann::json;

namespace {

// "outputs": the names asked, each once.
absl::Status Outputs(const json& body, core::MultiRequest* request) {
  const auto outputs = body.find("outputs");
  if (outputs == body.end() || outputs->is_null()) {
    request->dense = request->sparse = request->colbert = true;
    return absl::OkStatus();
  }
  if (!outputs->is_array() || outputs->empty()) {
    return BadType("outputs",
                   "\"outputs\" must be a non-empty list of \"dense\", \"sparse\", \"colbert\"");
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const json& name = (*outputs)[i];
    const std::string field = "outputs[" + std::to_string(i) + "]";
    bool* wanted = nullptr;
    if (name == "dense") {
      wanted = &request->dense;
    } else if (name == "sparse") {
      wanted = &request->sparse;
    } else if (name == "colbert") {
      wanted = &request->colbert;
    } else {
      return BadValue(field, "each output must be \"dense\", \"sparse\" or \"colbert\"");
    }
    if (*wanted) return BadValue(field, name.get<std::string>() + " is asked twice");
    *wanted = true;
  }
  return absl::OkStatus();
}

json Vector(const std::vector<float>& values, bool base64) {
  return base64 ? json(Base64Floats(values)) : json(values);
}

}  // namespace

absl::StatusOr<MultiCall> ParseEmbedMulti(std::string_view body) {
  // /embed's inputs, truncation and model; its other fields mean nothing here.
  absl::StatusOr<EmbeddingsCall> embed = ParseTeiEmbed(body, 1);
  if (!embed.ok()) return embed.status();
  const json parsed = json::parse(body);  // ParseTeiEmbed accepted it: an object
  MultiCall call;
  call.model = embed->model;
  call.request.inputs = std::move(embed->request.inputs);
  call.request.truncate = embed->request.truncate;
  call.request.truncation_side = embed->request.truncation_side;
  RETURN_IF_ERROR(Outputs(parsed, &call.request));
  if (const auto dims = parsed.find("max_active_dims"); dims != parsed.end() && !dims->is_null()) {
    if (!dims->is_number_integer() || dims->get<int64_t>() < 0 ||
        dims->get<int64_t>() > std::numeric_limits<int>::max()) {
      return BadValue("max_active_dims", "\"max_active_dims\" must be an integer, 0 or more");
    }
    call.request.max_active_dims = dims->get<int>();
  }
  if (const auto type = parsed.find("input_type"); type != parsed.end() && !type->is_null()) {
    // Cohere's names too.
    if (*type == "query" || *type == "search_query") {
      call.request.input_type = core::InputType::kQuery;
    } else if (*type != "document" && *type != "search_document") {
      return BadValue("input_type", "\"input_type\" must be \"query\" or \"document\"");
    }
  }
  absl::StatusOr<bool> tokens = Flag(parsed, "return_tokens", false);
  if (!tokens.ok()) return tokens.status();
  call.request.return_tokens = *tokens;
  absl::StatusOr<bool> base64 = Base64Encoding(parsed);
  if (!base64.ok()) return base64.status();
  call.base64 = *base64;
  return call;
}

std::string RenderEmbedMulti(const core::MultiResult& result, const MultiCall& call,
                             const std::string& served_model) {
  json data = json::array();
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const core::MultiOutput& output = result.outputs[i];
    json item = {{"index", i}, {"tokens", output.tokens}};
    if (call.request.dense) item["dense"] = Vector(output.dense, call.base64);
    if (call.request.sparse) {
      json entries = json::array();
      for (const core::SparseValue& value : output.sparse) {
        json entry = {{"index", value.id}, {"value", value.weight}};
        if (call.request.return_tokens) entry["token"] = value.token;
        entries.push_back(std::move(entry));
      }
      item["sparse"] = std::move(entries);
    }
    if (call.request.colbert) {
      if (call.base64) {
        item["colbert"] = Base64Floats(output.colbert);
      } else {
        json rows = json::array();
        for (int r = 0; r < output.colbert_rows; ++r) {
          const auto row = output.colbert.begin() + static_cast<ptrdiff_t>(r) * output.colbert_cols;
          rows.push_back(std::vector<float>(row, row + output.colbert_cols));
        }
        item["colbert"] = std::move(rows);
      }
      item["colbert_shape"] = {output.colbert_rows, output.colbert_cols};
    }
    data.push_back(std::move(item));
  }
  return Dump({{"object", "list"},
               {"model", served_model},
               {"data", std::move(data)},
               {"usage", {{"prompt_tokens", result.tokens}, {"total_tokens", result.tokens}}}});
}

}  // namespace server::http
