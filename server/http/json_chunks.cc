#include "server/http/json_chunks.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/http/json_fields.h"
#include "server/http/json_mapping.h"

namespace server::http {
namespace {

using nlohmann::json;

bool IsInt32(const json& value) {
  return value.is_number_integer() && value.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
         value.get<int64_t>() <= std::numeric_limits<int32_t>::max();
}

// An optional integer field: absent or null leaves `out` alone.
absl::Status OptionalInt(const json& body, const char* field, std::optional<int>* out) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!IsInt32(*it)) return BadType(field, absl::StrCat("\"", field, "\" must be an integer"));
  *out = it->get<int>();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<core::ChunkSpan>> Spans(const json& value) {
  if (!value.is_array()) {
    return BadType("chunks", absl::StrCat("\"chunks\" must be an array of [start, end] pairs, not ",
                                          value.type_name()));
  }
  std::vector<core::ChunkSpan> spans;
  spans.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const json& pair = value[i];
    if (!pair.is_array() || pair.size() != 2 || !IsInt32(pair[0]) || !IsInt32(pair[1])) {
      const std::string name = absl::StrCat("chunks[", i, "]");
      return BadType(name, absl::StrCat(name, " must be [start, end]: two integers (code points)"));
    }
    spans.push_back({pair[0].get<int>(), pair[1].get<int>()});
  }
  return spans;
}

}  // namespace

absl::StatusOr<ChunksCall> ParseTeiEmbedChunks(std::string_view body) {
  absl::StatusOr<json> parsed = ParseJsonObject(body);
  if (!parsed.ok()) return parsed.status();
  ChunksCall call;
  absl::StatusOr<std::string> text = RequiredString(*parsed, "inputs");
  if (!text.ok()) return text.status();
  call.request.text = *std::move(text);
  RETURN_IF_ERROR(ModelField(*parsed, &call.model));
  if (const auto chunks = parsed->find("chunks"); chunks != parsed->end() && !chunks->is_null()) {
    absl::StatusOr<std::vector<core::ChunkSpan>> spans = Spans(*chunks);
    if (!spans.ok()) return spans.status();
    if (spans->empty()) return BadValue("chunks", "\"chunks\" is empty");
    call.request.chunks = *std::move(spans);
  }
  std::optional<int> chunk_tokens;
  RETURN_IF_ERROR(OptionalInt(*parsed, "chunk_tokens", &chunk_tokens));
  if (chunk_tokens.has_value() && *chunk_tokens <= 0) {
    return BadValue("chunk_tokens", "\"chunk_tokens\" must be 1 or more");
  }
  call.request.chunk_tokens = chunk_tokens.value_or(0);
  RETURN_IF_ERROR(OptionalInt(*parsed, "window_overlap", &call.request.window_overlap));
  if (const auto it = parsed->find("normalize"); it != parsed->end() && !it->is_null()) {
    if (!it->is_boolean()) return BadType("normalize", "\"normalize\" must be true or false");
    call.request.normalize = it->get<bool>();
  }
  std::optional<int> dimensions;
  RETURN_IF_ERROR(OptionalInt(*parsed, "dimensions", &dimensions));
  if (dimensions.has_value() && *dimensions < 1) {
    return BadValue("dimensions", "\"dimensions\" must be 1 or more");
  }
  call.request.dimensions = dimensions.value_or(0);
  absl::StatusOr<bool> base64 = Base64Encoding(*parsed);
  if (!base64.ok()) return base64.status();
  call.base64 = *base64;
  return call;
}

std::string RenderTeiEmbedChunks(const core::ChunksResult& result, const ChunksCall& call) {
  json chunks = json::array();
  for (const core::ChunkEmbedding& chunk : result.chunks) {
    json item = {{"start", chunk.start}, {"end", chunk.end}, {"tokens", chunk.tokens}};
    if (call.base64) {
      item["embedding"] = Base64Floats(chunk.values);
    } else {
      item["embedding"] = chunk.values;
    }
    chunks.push_back(std::move(item));
  }
  return Dump(
      {{"chunks", std::move(chunks)}, {"windows", result.windows}, {"tokens", result.tokens}});
}

}  // namespace server::http
