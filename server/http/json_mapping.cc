#include "server/http/json_mapping.h"

#include "common/status_macros.h"
#include "server/http/json_fields.h"

#include <algorithm>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/api/input_error.h"
#include "server/http/http_errors.h"
#include "server/http/json_quantized.h"

namespace server::http {
namespace {

using core::InputProblem;
using core::WithInputProblem;
using nlohmann::json;

// nlohmann's message without its "[json.exception.parse_error.101] parse
// error at " prefix, which repeats what ours says: "line 1, column 11: syntax
// error while parsing value - unexpected end of input; expected '[', '{', or
// a literal", with the byte offset after the column.
std::string DescribeParseError(const json::parse_error& error) {
  absl::string_view what = error.what();
  constexpr absl::string_view kAt = "parse error at ";
  constexpr absl::string_view kNoPosition = "parse error: ";
  if (const size_t at = what.find(kAt); at != absl::string_view::npos) {
    what.remove_prefix(at + kAt.size());
    const size_t colon = what.find(": ");
    if (colon != absl::string_view::npos) {
      return absl::StrCat("at ", what.substr(0, colon), " (byte ", error.byte, ")",
                          what.substr(colon));
    }
  } else if (const size_t plain = what.find(kNoPosition); plain != absl::string_view::npos) {
    what.remove_prefix(plain + kNoPosition.size());
  }
  return absl::StrCat("at byte ", error.byte, ": ", what);
}

absl::StatusOr<json> ParseObject(std::string_view body) {
  // No OpenAI param: the body as a whole is at fault (as OpenAI answers).
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return FieldError("", "", "the body is empty: send a JSON object");
  }
  json parsed;
  try {
    parsed = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& error) {
    return FieldError("", "",
                      absl::StrCat("the body is not valid JSON ", DescribeParseError(error)));
  } catch (const json::exception& error) {
    // A number beyond a double's range ("1e999"): nlohmann's out_of_range.
    return FieldError("", "", absl::StrCat("the body is not valid JSON: ", error.what()));
  }
  if (!parsed.is_object()) {
    return FieldError("", "",
                      absl::StrCat("the body must be a JSON object, not ", parsed.type_name()));
  }
  return parsed;
}

bool IsTokenId(const json& value) {
  return value.is_number_integer() && value.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
         value.get<int64_t>() <= std::numeric_limits<int32_t>::max();
}

absl::StatusOr<std::vector<int32_t>> TokenIds(const json& array, const std::string& field) {
  std::vector<int32_t> ids;
  ids.reserve(array.size());
  for (size_t p = 0; p < array.size(); ++p) {
    if (!IsTokenId(array[p])) {
      const std::string name = absl::StrCat(field, "[", p, "]");
      return BadValue(name, absl::StrCat(name, " is not a token id (a 32-bit integer)"));
    }
    ids.push_back(array[p].get<int32_t>());
  }
  return ids;
}

// string | string[] | int[] | int[][] into inputs; `is_list`: whether the
// value held several inputs (string[] or int[][]) rather than one.
absl::StatusOr<std::vector<core::Input>> Inputs(const json& value, const char* field,
                                                bool* is_list) {
  std::vector<core::Input> inputs;
  *is_list = false;
  if (value.is_string()) {
    inputs.push_back(core::Input::Text(value.get<std::string>()));
    return inputs;
  }
  if (!value.is_array()) {
    return BadType(field,
                   absl::StrCat("\"", field,
                                "\" must be a string, an array of strings, an array of token ids "
                                "or an array of arrays of token ids, not ",
                                value.type_name()));
  }
  if (value.empty()) {
    return WithInputProblem(InputProblem::kEmpty,
                            BadValue(field, absl::StrCat("\"", field, "\" is empty")));
  }
  if (value.front().is_number()) {
    absl::StatusOr<std::vector<int32_t>> ids = TokenIds(value, field);
    if (!ids.ok()) return ids.status();
    inputs.push_back(core::Input::Ids(*std::move(ids)));
    return inputs;
  }
  *is_list = true;
  inputs.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const json& item = value[i];
    const std::string name = absl::StrCat(field, "[", i, "]");
    if (item.is_string()) {
      inputs.push_back(core::Input::Text(item.get<std::string>()));
    } else if (item.is_array()) {
      absl::StatusOr<std::vector<int32_t>> ids = TokenIds(item, name);
      if (!ids.ok()) return ids.status();
      inputs.push_back(core::Input::Ids(*std::move(ids)));
    } else {
      return BadType(name, absl::StrCat(name, " must be a string or an array of token ids, not ",
                                        item.type_name()));
    }
  }
  return inputs;
}

absl::StatusOr<int> Dimensions(const json& body, int hidden_size) {
  const auto it = body.find("dimensions");
  if (it == body.end() || it->is_null()) return 0;
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > hidden_size) {
    return FieldError("dimensions", it->is_number_integer() ? kInvalidValue : kInvalidType,
                      absl::StrCat("\"dimensions\" must be an integer from 1 to ", hidden_size,
                                   " (the model's size)"));
  }
  return it->get<int>();
}

// The vector of one pooled output, as the call asks for it.
std::vector<float> Vector(const core::InputOutput& output, const EmbeddingsCall& call) {
  return Matryoshka(output.values, call.dimensions);
}

}  // namespace

absl::Status CheckDimensions(int dimensions, int hidden_size) {
  if (dimensions <= hidden_size) return absl::OkStatus();
  return FieldError("dimensions", kInvalidValue,
                    absl::StrCat("\"dimensions\" must be an integer from 1 to ", hidden_size,
                                 " (the model's size)"));
}

absl::StatusOr<EmbeddingsCall> ParseOpenAiEmbeddings(std::string_view body, int hidden_size) {
  absl::StatusOr<json> parsed = ParseObject(body);
  if (!parsed.ok()) return parsed.status();
  const auto input = parsed->find("input");
  if (input == parsed->end()) return Missing("input");
  EmbeddingsCall call;
  absl::StatusOr<std::vector<core::Input>> inputs = Inputs(*input, "input", &call.input_is_list);
  if (!inputs.ok()) return inputs.status();
  call.request.inputs = *std::move(inputs);
  call.request.normalize = true;
  // With one model served any name is served by it: clients hard-code
  // names (request_handler.cc).
  RETURN_IF_ERROR(ModelField(*parsed, &call.model));
  absl::StatusOr<bool> base64 = Base64Encoding(*parsed);
  if (!base64.ok()) return base64.status();
  call.base64 = *base64;
  absl::StatusOr<int> dimensions = Dimensions(*parsed, hidden_size);
  if (!dimensions.ok()) return dimensions.status();
  call.dimensions = *dimensions;
  call.request.dimensions = *dimensions;  // cut before normalizing
  RETURN_IF_ERROR(EmbeddingTypeField(*parsed, &call.embedding_type));
  if (const auto user = parsed->find("user");
      user != parsed->end() && !user->is_null() && !user->is_string()) {
    return BadType("user", "\"user\" must be a string");
  }
  if (absl::Status status =
          Truncation(*parsed, &call.request.truncate, &call.request.truncation_side);
      !status.ok())
    return status;
  RETURN_IF_ERROR(LongInputField(*parsed, &call.request.long_input));
  return call;
}

absl::StatusOr<EmbeddingsCall> ParseTeiEmbed(std::string_view body, int hidden_size) {
  absl::StatusOr<json> parsed = ParseObject(body);
  if (!parsed.ok()) return parsed.status();
  const auto input = parsed->find("inputs");
  if (input == parsed->end()) return Missing("inputs");
  EmbeddingsCall call;
  absl::StatusOr<std::vector<core::Input>> inputs = Inputs(*input, "inputs", &call.input_is_list);
  if (!inputs.ok()) return inputs.status();
  call.request.inputs = *std::move(inputs);
  absl::StatusOr<bool> normalize = Flag(*parsed, "normalize", true);
  if (!normalize.ok()) return normalize.status();
  call.request.normalize = *normalize;
  if (absl::Status status =
          Truncation(*parsed, &call.request.truncate, &call.request.truncation_side);
      !status.ok())
    return status;
  RETURN_IF_ERROR(LongInputField(*parsed, &call.request.long_input));
  if (const auto prompt = parsed->find("prompt_name");
      prompt != parsed->end() && !prompt->is_null()) {
    if (!prompt->is_string()) {
      return BadType("prompt_name", "\"prompt_name\" must be a string or null");
    }
    call.request.prompt_name = prompt->get<std::string>();
  }
  RETURN_IF_ERROR(ModelField(*parsed, &call.model));
  absl::StatusOr<int> dimensions = Dimensions(*parsed, hidden_size);
  if (!dimensions.ok()) return dimensions.status();
  call.dimensions = *dimensions;
  call.request.dimensions = *dimensions;  // cut before normalizing
  RETURN_IF_ERROR(EmbeddingTypeField(*parsed, &call.embedding_type));
  return call;
}

absl::StatusOr<std::vector<core::TokenizeRequest>> ParseTeiTokenize(std::string_view body,
                                                                    std::string* model) {
  absl::StatusOr<json> parsed = ParseObject(body);
  if (!parsed.ok()) return parsed.status();
  RETURN_IF_ERROR(ModelField(*parsed, model));
  const auto input = parsed->find("inputs");
  if (input == parsed->end()) return Missing("inputs");
  absl::StatusOr<bool> special = Flag(*parsed, "add_special_tokens", true);
  if (!special.ok()) return special.status();
  const auto request = [&](const json& text) {
    core::TokenizeRequest out;
    out.text = text.get<std::string>();
    out.add_special_tokens = *special;
    return out;
  };
  std::vector<core::TokenizeRequest> requests;
  if (input->is_string()) {
    requests.push_back(request(*input));
    return requests;
  }
  if (!input->is_array()) {
    return BadType("inputs", "\"inputs\" must be a string or an array of strings");
  }
  if (input->empty()) {
    return WithInputProblem(InputProblem::kEmpty, BadValue("inputs", "\"inputs\" is empty"));
  }
  for (size_t i = 0; i < input->size(); ++i) {
    if (!(*input)[i].is_string()) {
      const std::string name = absl::StrCat("inputs[", i, "]");
      return BadType(name, absl::StrCat(name, " must be a string"));
    }
    requests.push_back(request((*input)[i]));
  }
  return requests;
}

absl::StatusOr<std::vector<core::DecodeRequest>> ParseTeiDecode(std::string_view body,
                                                                bool* batched, std::string* model) {
  absl::StatusOr<json> parsed = ParseObject(body);
  if (!parsed.ok()) return parsed.status();
  RETURN_IF_ERROR(ModelField(*parsed, model));
  const auto ids = parsed->find("ids");
  if (ids == parsed->end()) return Missing("ids");
  absl::StatusOr<bool> skip = Flag(*parsed, "skip_special_tokens", true);
  if (!skip.ok()) return skip.status();
  if (!ids->is_array()) {
    return BadType("ids", "\"ids\" must be an array of token ids or of arrays of them");
  }
  if (ids->empty()) {
    return WithInputProblem(InputProblem::kEmpty, BadValue("ids", "\"ids\" is empty"));
  }
  *batched = (*ids)[0].is_array();
  const json lists = *batched ? *ids : json::array({*ids});
  std::vector<core::DecodeRequest> requests;
  for (size_t i = 0; i < lists.size(); ++i) {
    const json& list = lists[i];
    const std::string name = *batched ? absl::StrCat("ids[", i, "]") : std::string("ids");
    if (!list.is_array()) return BadType(name, absl::StrCat(name, " must be an array of ids"));
    core::DecodeRequest request;
    request.skip_special_tokens = *skip;
    for (size_t p = 0; p < list.size(); ++p) {
      if (!list[p].is_number_integer() || list[p].get<int64_t>() < 0 ||
          list[p].get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        const std::string id = absl::StrCat(name, "[", p, "]");
        return BadValue(id, absl::StrCat(id, " must be a non-negative 32-bit integer"));
      }
      request.ids.push_back(list[p].get<int32_t>());
    }
    requests.push_back(std::move(request));
  }
  return requests;
}

std::vector<float> Matryoshka(const std::vector<float>& values, int dimensions) {
  if (dimensions <= 0 || dimensions >= static_cast<int>(values.size())) return values;
  std::vector<float> cut(values.begin(), values.begin() + dimensions);
  double sum = 0;
  for (float v : cut) sum += static_cast<double>(v) * v;
  if (sum > 0) {
    const float scale = static_cast<float>(1.0 / std::sqrt(sum));
    for (float& v : cut) v *= scale;
  }
  return cut;
}

std::string Base64Floats(const std::vector<float>& values) {
  static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);
  std::string bytes(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return absl::Base64Escape(bytes);
}

std::string RenderOpenAiEmbeddings(const core::EncodeResult& result, const EmbeddingsCall& call,
                                   const std::string& served_model) {
  json data = json::array();
  int64_t tokens = 0;
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const core::InputOutput& output = result.outputs[i];
    tokens += output.tokens;
    const std::vector<float> vector = Vector(output, call);
    json item = {{"object", "embedding"}, {"index", i}};
    // Window mode (long_inputs.h): the windows the input ran as.
    if (i < result.windows.size()) item["windows"] = result.windows[i];
    if (call.base64) {
      item["embedding"] = Base64Floats(vector);
    } else {
      item["embedding"] = vector;
    }
    data.push_back(std::move(item));
  }
  const json response = {{"object", "list"},
                         {"data", std::move(data)},
                         {"model", served_model},
                         {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  return Dump(response);
}

std::string WindowsHeader(const core::EncodeResult& result) {
  return absl::StrJoin(result.windows, ",");
}

std::string RenderTeiEmbed(const core::EncodeResult& result, const EmbeddingsCall& call) {
  json vectors = json::array();
  for (const core::InputOutput& output : result.outputs) vectors.push_back(Vector(output, call));
  return Dump(vectors);
}

namespace {

json ModelObject(const std::string& name) {
  return {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "encoder-server"}};
}

}  // namespace

std::string RenderOpenAiModels(const std::vector<std::string>& served_models) {
  json data = json::array();
  for (const std::string& name : served_models) data.push_back(ModelObject(name));
  const json list = {{"object", "list"}, {"data", std::move(data)}};
  return Dump(list);
}

absl::StatusOr<std::string> RenderOpenAiModel(const std::string& id,
                                              const std::vector<std::string>& served_models) {
  if (std::find(served_models.begin(), served_models.end(), id) == served_models.end()) {
    // A client's mistake, counted as INVALID_ARGUMENT (as before several
    // models were served); 404 on the wire.
    return WithOpenAiDetail(absl::InvalidArgumentError(absl::StrCat(
                                "The model '", id, "' does not exist: this server serves '",
                                absl::StrJoin(served_models, "', '"), "'")),
                            "model", kModelNotFound);
  }
  return Dump(ModelObject(id));
}

absl::StatusOr<json> ParseJsonObject(std::string_view body) { return ParseObject(body); }

std::string RenderTeiTokenize(const std::vector<engine::Encoding>& encodings) {
  json lists = json::array();
  for (const engine::Encoding& encoding : encodings) {
    json tokens = json::array();
    for (size_t t = 0; t < encoding.ids.size(); ++t) {
      const auto [start, stop] = encoding.offsets[t];
      // The tokenizer gives special tokens the empty span (0, 0).
      const bool special = start == 0 && stop == 0;
      json token = {{"id", encoding.ids[t]},
                    {"text", encoding.tokens[t]},
                    {"special", special},
                    {"start", nullptr},
                    {"stop", nullptr}};
      if (!special) {
        token["start"] = start;
        token["stop"] = stop;
      }
      tokens.push_back(std::move(token));
    }
    lists.push_back(std::move(tokens));
  }
  return Dump(lists);
}

}  // namespace server::http
