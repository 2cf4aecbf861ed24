// BERT WordPiece tokenizer, identical in ids to Hugging Face's BertTokenizer(Fast).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace engine {

struct Encoding {
  std::vector<int32_t> ids;             // with [CLS] ... [SEP] (... [SEP] for pairs)
  std::vector<int32_t> token_type_ids;  // 0 for the first text, 1 for the second
  std::vector<std::string> tokens;      // the vocabulary strings of `ids`
  // Byte offsets [begin, end) into the input text each token came from;
  // (0, 0) for special tokens. For pairs, offsets of the second text's tokens
  // refer to the second text.
  std::vector<std::pair<int, int>> offsets;
};

struct TokenizerOptions {
  bool lower_case = true;
  // Unset follows lower_case, as Hugging Face does.
  enum class StripAccents { kFollowLowerCase, kYes, kNo } strip_accents =
      StripAccents::kFollowLowerCase;
  bool tokenize_chinese_chars = true;
  int max_input_chars_per_word = 100;
};

class Tokenizer {
 public:
  // Loads tokenizer.json if the directory has one, else vocab.txt (+ tokenizer_config.json).
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& model_dir);
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromVocab(std::vector<std::string> vocab,
                                                              const TokenizerOptions& options);
  ~Tokenizer();

  // Thread-safe. Invalid UTF-8 is an error (InvalidArgument), never a crash.
  // `max_length` > 0 truncates to that many ids in total (special tokens
  // included), keeping the closing [SEP]; 0 means no truncation.
  absl::StatusOr<Encoding> Encode(std::string_view text, int max_length = 0) const;
  absl::StatusOr<Encoding> EncodePair(std::string_view text, std::string_view text_pair,
                                      int max_length = 0) const;

  int vocab_size() const;
  int cls_id() const;
  int sep_id() const;
  int pad_id() const;
  int unk_id() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace engine
