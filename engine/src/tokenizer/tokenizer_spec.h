// Everything a Tokenizer is built from, whichever files it was read from.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "added_tokens.h"
#include "engine/tokenizer.h"
#include "normalizer.h"
#include "post_processor.h"
#include "wordpiece.h"

namespace engine::tokenizer {

struct TokenizerSpec {
  std::string source;  // the file(s) read, for error messages
  std::vector<std::pair<std::string, int32_t>> vocab;
  WordPieceOptions wordpiece;
  NormalizerOptions normalizer;
  std::vector<AddedToken> added_tokens;
  Template single;
  Template pair;
  int32_t pad_id = -1;  // -1: the "[PAD]" token, else 0
};

// [CLS] A [SEP] (and B [SEP] with type 1 for pairs).
Template BertTemplate(int32_t cls_id, int32_t sep_id, bool pair);

// The whole file, or an error naming it.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// tokenizer.json (Hugging Face `tokenizers` serialization).
absl::StatusOr<TokenizerSpec> ReadTokenizerJson(const std::string& path);

// vocab.txt plus, if `config_path` names an existing file, tokenizer_config.json.
absl::StatusOr<TokenizerSpec> ReadVocabTxt(const std::string& vocab_path,
                                           const std::string& config_path);

// A BERT spec from a vocabulary list (ids are positions) and options; the
// options' special tokens that are in the vocabulary are never split.
TokenizerSpec SpecFromOptions(std::vector<std::string> vocab, const TokenizerOptions& options,
                              std::string source);

}  // namespace engine::tokenizer
