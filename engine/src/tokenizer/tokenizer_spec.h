// A BERT WordPiece tokenizer described by vocab.txt / options, and the
// readers of tokenizer files into a Pipeline.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "added_tokens.h"
#include "engine/tokenizer.h"
#include "models/wordpiece.h"
#include "normalizers/bert_normalizer.h"
#include "pipeline.h"
#include "processors/template_processing.h"

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

// tokenizer.json (Hugging Face `tokenizers` serialization).
absl::StatusOr<Pipeline> ReadTokenizerJson(const std::string& path);
// The same from the file's text; `source` names it in errors.
absl::StatusOr<Pipeline> ParseTokenizerJsonText(std::string_view text, const std::string& source);

// The BERT pipeline of a spec: BertNormalizer, BertPreTokenizer, WordPiece,
// [CLS]/[SEP] template, WordPiece decoder.
absl::StatusOr<Pipeline> BertPipeline(TokenizerSpec spec);

// vocab.txt plus, if `config_path` names an existing file, tokenizer_config.json.
absl::StatusOr<TokenizerSpec> ReadVocabTxt(const std::string& vocab_path,
                                           const std::string& config_path);
// The same from the files' texts (`config_text` null: no tokenizer_config.json);
// the paths name them in errors and in the spec's source.
absl::StatusOr<TokenizerSpec> ParseVocabTxt(const std::string& text, const std::string& vocab_path,
                                            const std::string* config_text,
                                            const std::string& config_path);

// A BERT spec from a vocabulary list (ids are positions) and options; the
// options' special tokens that are in the vocabulary are never split.
TokenizerSpec SpecFromOptions(std::vector<std::string> vocab, const TokenizerOptions& options,
                              std::string source);

}  // namespace engine::tokenizer
