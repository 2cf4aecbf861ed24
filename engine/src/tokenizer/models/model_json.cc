// model objects of tokenizer.json.
#include "models/bpe.h"
#include "models/unigram.h"
#include "models/word_level.h"
#include "models/wordpiece.h"
#include "parts_from_json.h"

namespace engine::tokenizer {
namespace {

// The {"token": id, ...} "vocab" object WordPiece and BPE share.
absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> VocabObject(const json& j,
                                                                         const std::string& where) {
  const auto vocab = j.find("vocab");
  if (vocab == j.end() || !vocab->is_object()) return JsonError(where, "missing vocab");
  std::vector<std::pair<std::string, int32_t>> tokens;
  tokens.reserve(vocab->size());
  for (const auto& [token, id] : vocab->items()) {
    auto checked = TokenId(id, absl::StrCat(where, ".vocab[\"", token, "\"]"));
    if (!checked.ok()) return checked.status();
    tokens.emplace_back(token, *checked);
  }
  return tokens;
}

absl::StatusOr<std::unique_ptr<Model>> FromWordPiece(const json& j, const std::string& where) {
  absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> vocab_tokens = VocabObject(j, where);
  if (!vocab_tokens.ok()) return vocab_tokens.status();
  std::vector<std::pair<std::string, int32_t>> tokens = *std::move(vocab_tokens);
  WordPieceOptions o;
  for (auto s :
       {OptionalField(j, "unk_token", where, &o.unk_token),
        OptionalField(j, "continuing_subword_prefix", where, &o.continuing_subword_prefix),
        OptionalField(j, "max_input_chars_per_word", where, &o.max_input_chars_per_word)}) {
    if (!s.ok()) return s;
  }
  if (o.max_input_chars_per_word <= 0) {
    return JsonError(where, "max_input_chars_per_word must be positive");
  }
  auto model = std::make_unique<WordPiece>(tokens, o);
  if (model->unk_id() < 0) {
    return JsonError(
        where, absl::StrCat("the unknown token \"", o.unk_token, "\" is not in the vocabulary"));
  }
  return std::unique_ptr<Model>(std::move(model));
}

absl::StatusOr<std::unique_ptr<Model>> FromWordLevel(const json& j, const std::string& where) {
  absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> tokens = VocabObject(j, where);
  if (!tokens.ok()) return tokens.status();
  std::string unk_token = "<unk>";
  if (auto s = OptionalField(j, "unk_token", where, &unk_token); !s.ok()) return s;
  auto model = std::make_unique<WordLevel>(*std::move(tokens), unk_token);
  // The crate fails the encode of any word outside the vocabulary then; a
  // server must give every text ids, so such a file is refused up front.
  if (model->unk_id() < 0) {
    return JsonError(
        where, absl::StrCat("the unknown token \"", unk_token, "\" is not in the vocabulary"));
  }
  return std::unique_ptr<Model>(std::move(model));
}

absl::StatusOr<std::unique_ptr<Model>> FromUnigram(
    const json& j, const std::string& where,
    std::vector<std::pair<std::string, double>>* streamed) {
  const auto vocab = j.find("vocab");
  if (vocab == j.end() || !vocab->is_array()) return JsonError(where, "missing vocab list");
  std::vector<std::pair<std::string, double>> pieces;
  if (streamed != nullptr) pieces = std::move(*streamed);
  pieces.reserve(pieces.size() + vocab->size());
  for (size_t i = 0; i < vocab->size(); ++i) {
    const json& entry = (*vocab)[i];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()) {
      return JsonError(where, absl::StrCat("vocab[", i, "] is not [piece, score]"));
    }
    pieces.emplace_back(entry[0].get<std::string>(), entry[1].get<double>());
  }
  int64_t unk_id = -1;
  bool byte_fallback = false;
  for (auto s : {OptionalField(j, "unk_id", where, &unk_id),
                 OptionalField(j, "byte_fallback", where, &byte_fallback)}) {
    if (!s.ok()) return s;
  }
  if (unk_id < 0) return JsonError(where, "a Unigram model without unk_id is not supported");
  if (unk_id >= static_cast<int64_t>(pieces.size())) {
    return JsonError(where, absl::StrCat("unk_id ", unk_id, " is outside the vocabulary"));
  }
  auto model = Unigram::Create(std::move(pieces), static_cast<int32_t>(unk_id), byte_fallback);
  if (!model.ok()) return JsonError(where, std::string(model.status().message()));
  return std::unique_ptr<Model>(*std::move(model));
}

absl::StatusOr<std::unique_ptr<Model>> FromBpe(const json& j, const std::string& where) {
  absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> vocab_tokens = VocabObject(j, where);
  if (!vocab_tokens.ok()) return vocab_tokens.status();
  std::vector<std::pair<std::string, int32_t>> tokens = *std::move(vocab_tokens);
  const auto list = j.find("merges");
  if (list == j.end() || !list->is_array()) return JsonError(where, "missing merges");
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    const json& m = (*list)[i];
    if (m.is_string()) {  // "a b" (older files)
      const std::string& text = m.get_ref<const std::string&>();
      const size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
        return JsonError(where, absl::StrCat("merges[", i, "] is not \"left right\""));
      }
      merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return JsonError(where, absl::StrCat("merges[", i, "] is not a pair of tokens"));
    }
  }
  BpeOptions o;
  double dropout = 0;
  for (auto s : {OptionalField(j, "unk_token", where, &o.unk_token),
                 OptionalField(j, "continuing_subword_prefix", where, &o.continuing_subword_prefix),
                 OptionalField(j, "end_of_word_suffix", where, &o.end_of_word_suffix),
                 OptionalField(j, "fuse_unk", where, &o.fuse_unk),
                 OptionalField(j, "byte_fallback", where, &o.byte_fallback),
                 OptionalField(j, "ignore_merges", where, &o.ignore_merges),
                 OptionalField(j, "dropout", where, &dropout)}) {
    if (!s.ok()) return s;
  }
  // Dropout is random by design: no served model should tokenize that way.
  if (dropout != 0) {
    return absl::UnimplementedError(absl::StrCat(where, ": BPE dropout is not implemented"));
  }
  auto model = Bpe::Create(std::move(tokens), merges, std::move(o));
  if (!model.ok()) return JsonError(where, std::string(model.status().message()));
  return std::unique_ptr<Model>(*std::move(model));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> ModelFromJson(
    const json& j, const std::string& where, std::vector<std::pair<std::string, double>>* pieces) {
  if (!j.is_object()) return JsonError(where, "is not an object");
  // Files may leave the type out (the Rust crate then infers it from the fields).
  std::string type;
  if (auto s = OptionalField(j, "type", where, &type); !s.ok()) return s;
  if (type.empty()) {
    if (j.contains("merges")) {
      type = "BPE";
    } else if (pieces != nullptr || (j.contains("vocab") && j["vocab"].is_array())) {
      type = "Unigram";
    } else if (j.contains("max_input_chars_per_word") || j.contains("continuing_subword_prefix")) {
      type = "WordPiece";
    } else {
      type = "WordLevel";
    }
  }
  if (type == "WordPiece") return FromWordPiece(j, where);
  if (type == "Unigram") return FromUnigram(j, where, pieces);
  if (type == "BPE") return FromBpe(j, where);
  if (type == "WordLevel") return FromWordLevel(j, where);
  return NotImplemented(where, type);
}

}  // namespace engine::tokenizer
