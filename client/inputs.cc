#include "client/inputs.h"

#include <charconv>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace client {
namespace {

absl::StatusOr<int32_t> ParseInt32(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  int32_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not a 32-bit integer"));
  }
  return value;
}

absl::Status ReadIntArray(const nlohmann::json& array, const char* key,
                          google::protobuf::RepeatedField<int32_t>* out) {
  if (!array.is_array())
    return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" must be an array"));
  for (const nlohmann::json& value : array) {
    if (!value.is_number_integer()) {
      return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" must hold integers only"));
    }
    const int64_t number = value.get<int64_t>();
    if (number < INT32_MIN || number > INT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(number, " in \"", key, "\" is out of range"));
    }
    out->Add(static_cast<int32_t>(number));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    absl::StatusOr<int32_t> id = ParseInt32(part);
    if (!id.ok()) return absl::InvalidArgumentError(absl::StrCat("--ids: ", id.status().message()));
    ids.push_back(*id);
  }
  return ids;
}

absl::StatusOr<encoder::v1::Input> ParseJsonInput(const std::string& line) {
  const nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  encoder::v1::Input input;
  if (object.contains("ids")) {
    encoder::v1::TokenIds* ids = input.mutable_token_ids();
    RETURN_IF_ERROR(ReadIntArray(object["ids"], "ids", ids->mutable_ids()));
    if (object.contains("token_type_ids")) {
      RETURN_IF_ERROR(
          ReadIntArray(object["token_type_ids"], "token_type_ids", ids->mutable_token_type_ids()));
    }
    return input;
  }
  if (!object.contains("text") || !object["text"].is_string()) {
    return absl::InvalidArgumentError("expected a string \"text\" or an array \"ids\"");
  }
  if (!object.contains("text_pair")) {
    input.set_text(object["text"].get<std::string>());
    return input;
  }
  if (!object["text_pair"].is_string()) {
    return absl::InvalidArgumentError("\"text_pair\" must be a string");
  }
  input.mutable_text_pair()->set_text(object["text"].get<std::string>());
  input.mutable_text_pair()->set_text_pair(object["text_pair"].get<std::string>());
  return input;
}

absl::StatusOr<std::vector<encoder::v1::Input>> CollectInputs(const InputOptions& options) {
  std::vector<encoder::v1::Input> inputs;
  if (options.pair) {
    if (options.texts.size() % 2 != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--pair takes texts two by two (text, text_pair); got ", options.texts.size(), " texts"));
    }
    for (size_t i = 0; i < options.texts.size(); i += 2) {
      encoder::v1::Input input;
      input.mutable_text_pair()->set_text(options.texts[i]);
      input.mutable_text_pair()->set_text_pair(options.texts[i + 1]);
      inputs.push_back(std::move(input));
    }
  } else {
    for (const std::string& text : options.texts) {
      inputs.emplace_back().set_text(text);
    }
  }
  if (!options.input_file.empty()) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (options.input_file != "-") {
      file.open(options.input_file);
      if (!file) return absl::NotFoundError(absl::StrCat(options.input_file, ": cannot open"));
      in = &file;
    }
    std::string line;
    size_t read = 0;
    for (int number = 1; std::getline(*in, line); ++number) {
      if (absl::StripAsciiWhitespace(line).empty()) continue;
      absl::StatusOr<encoder::v1::Input> input = ParseJsonInput(line);
      if (!input.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(options.input_file, ":", number, ": ", input.status().message()));
      }
      inputs.push_back(*std::move(input));
      ++read;
    }
    // Nothing to send is a mistake (a pipe that produced nothing, the wrong
    // file), not an empty answer.
    if (read == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input ", options.input_file == "-" ? "- (standard input)" : options.input_file,
          " is empty: expected JSON lines such as {\"text\": \"hello\"}"));
    }
  }
  if (!options.ids.empty()) {
    absl::StatusOr<std::vector<int32_t>> ids = ParseIds(options.ids);
    if (!ids.ok()) return ids.status();
    encoder::v1::Input input;
    input.mutable_token_ids()->mutable_ids()->Assign(ids->begin(), ids->end());
    inputs.push_back(std::move(input));
  }
  return inputs;
}

absl::StatusOr<encoder::v1::Pooling> ParsePooling(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower.empty()) return encoder::v1::POOLING_UNSPECIFIED;
  if (lower == "cls") return encoder::v1::POOLING_CLS;
  if (lower == "mean") return encoder::v1::POOLING_MEAN;
  if (lower == "none") return encoder::v1::POOLING_NONE;
  if (lower == "pooler") return encoder::v1::POOLING_POOLER;
  if (lower == "max") return encoder::v1::POOLING_MAX;
  if (lower == "mean_sqrt_len") return encoder::v1::POOLING_MEAN_SQRT_LEN;
  if (lower == "weightedmean") return encoder::v1::POOLING_WEIGHTED_MEAN;
  if (lower == "lasttoken") return encoder::v1::POOLING_LAST_TOKEN;
  // A number goes out as is, so the server's own check can be exercised.
  absl::StatusOr<int32_t> number = ParseInt32(lower);
  if (number.ok()) return static_cast<encoder::v1::Pooling>(*number);
  return absl::InvalidArgumentError(
      absl::StrCat("--pooling must be cls, mean, none, pooler, max, mean_sqrt_len, weightedmean or "
                   "lasttoken (got \"",
                   name, "\")"));
}

}  // namespace client
