// vocab.txt (one token per line, the id is the line number) with the settings
// of an optional tokenizer_config.json, as transformers' BertTokenizer reads them.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/model_files.h"
#include "nlohmann/json.hpp"
#include "tokenizer_spec.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

using nlohmann::json;

absl::Status ConfigError(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

// A special token is written either as a string or as {"content": ...}.
absl::Status ReadTokenString(const json& config, const char* key, const std::string& path,
                             std::string* out) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return absl::OkStatus();
  if (it->is_string()) {
    *out = it->get<std::string>();
  } else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    *out = (*it)["content"].get<std::string>();
  } else {
    return ConfigError(path, absl::StrCat(key, " is neither a string nor {\"content\": ...}"));
  }
  return absl::OkStatus();
}

absl::Status ReadBool(const json& config, const char* key, const std::string& path, bool* out) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_boolean()) return ConfigError(path, absl::StrCat(key, " is not true/false"));
  *out = it->get<bool>();
  return absl::OkStatus();
}

absl::Status ReadConfig(const std::string& text, const std::string& path, TokenizerOptions* options,
                        std::vector<AddedToken>* added) {
  json config;
  try {
    config = json::parse(text);
  } catch (const json::parse_error& error) {
    return ConfigError(path, DescribeJsonSyntaxError(text, error.byte, error.what()));
  } catch (const json::exception& error) {
    return ConfigError(path, error.what());
  }
  if (!config.is_object()) return ConfigError(path, "not a JSON object");

  bool basic_tokenize = true;
  for (auto s : {ReadBool(config, "do_lower_case", path, &options->lower_case),
                 ReadBool(config, "tokenize_chinese_chars", path, &options->tokenize_chinese_chars),
                 ReadBool(config, "do_basic_tokenize", path, &basic_tokenize),
                 ReadTokenString(config, "unk_token", path, &options->unk_token),
                 ReadTokenString(config, "cls_token", path, &options->cls_token),
                 ReadTokenString(config, "sep_token", path, &options->sep_token),
                 ReadTokenString(config, "pad_token", path, &options->pad_token),
                 ReadTokenString(config, "mask_token", path, &options->mask_token)}) {
    if (!s.ok()) return s;
  }
  if (!basic_tokenize) {
    return absl::UnimplementedError(
        absl::StrCat(path, ": do_basic_tokenize=false is not supported"));
  }
  if (const auto it = config.find("strip_accents"); it != config.end() && !it->is_null()) {
    if (!it->is_boolean()) return ConfigError(path, "strip_accents is not true/false/null");
    options->strip_accents = it->get<bool>() ? TokenizerOptions::StripAccents::kYes
                                             : TokenizerOptions::StripAccents::kNo;
  }
  // Tokens the tokenizer was saved with beyond vocab.txt (or marked special in it).
  if (const auto it = config.find("added_tokens_decoder"); it != config.end() && it->is_object()) {
    for (const auto& [key, value] : it->items()) {
      AddedToken token;
      try {
        const size_t id = std::stoul(key);
        if (id >= (1u << 24)) throw std::out_of_range("id");
        token.id = static_cast<int32_t>(id);
        token.content = value.at("content").get<std::string>();
        token.special = value.value("special", false);
        token.normalized = value.value("normalized", !token.special);
        token.lstrip = value.value("lstrip", false);
        token.rstrip = value.value("rstrip", false);
        if (value.value("single_word", false)) {
          return absl::UnimplementedError(absl::StrCat(path, ": added token \"", token.content,
                                                       "\": single_word is not supported"));
        }
      } catch (const std::exception&) {
        return ConfigError(path, absl::StrCat("added_tokens_decoder[\"", key, "\"] is malformed"));
      }
      added->push_back(std::move(token));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TokenizerSpec> ReadVocabTxt(const std::string& vocab_path,
                                           const std::string& config_path) {
  absl::StatusOr<std::string> text = ReadModelFile(vocab_path);
  if (!text.ok()) return text.status();
  std::error_code ec;
  if (!std::filesystem::exists(config_path, ec))
    return ParseVocabTxt(*text, vocab_path, nullptr, "");
  absl::StatusOr<std::string> config = ReadModelFile(config_path);
  if (!config.ok()) return config.status();
  return ParseVocabTxt(*text, vocab_path, &*config, config_path);
}

absl::StatusOr<TokenizerSpec> ParseVocabTxt(const std::string& text, const std::string& vocab_path,
                                            const std::string* config_text,
                                            const std::string& config_path) {
  if (const size_t bad = FindInvalidUtf8(text); bad != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(vocab_path, ": not valid UTF-8 at byte ", bad));
  }
  std::vector<std::string> vocab;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    size_t stop = end;
    if (stop > begin && text[stop - 1] == '\r') --stop;  // CRLF files
    vocab.emplace_back(text, begin, stop - begin);
    begin = end + 1;
  }
  if (vocab.empty()) return absl::InvalidArgumentError(absl::StrCat(vocab_path, ": empty"));

  TokenizerOptions options;
  std::vector<AddedToken> added;
  std::string source = vocab_path;
  if (config_text != nullptr) {
    if (auto s = ReadConfig(*config_text, config_path, &options, &added); !s.ok()) return s;
    source = absl::StrCat(vocab_path, " + ", config_path);
  }
  TokenizerSpec spec = SpecFromOptions(std::move(vocab), options, std::move(source));
  for (AddedToken& token : added) {
    bool known = false;
    for (const AddedToken& t : spec.added_tokens) known |= t.content == token.content;
    if (!known) spec.added_tokens.push_back(std::move(token));
  }
  return spec;
}

}  // namespace engine::tokenizer
