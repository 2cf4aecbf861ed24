// Hugging Face tokenizers (tokenizer.json pipelines: WordPiece, Unigram, ...;
// or a BERT vocab.txt), identical in ids to the Rust `tokenizers` crate.
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
  enum class StripAccents {
    kFollowLowerCase,
    kYes,
    kNo
  } strip_accents = StripAccents::kFollowLowerCase;
  bool tokenize_chinese_chars = true;
  int max_input_chars_per_word = 100;
  // Drop control characters, NUL and U+FFFD; turn whitespace into spaces.
  bool clean_text = true;
  std::string continuing_subword_prefix = "##";
  // Special tokens; those present in the vocabulary are never split from the text.
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string mask_token = "[MASK]";
};

// Which end of a text truncation removes tokens from (Hugging Face's
// TruncationDirection): kRight keeps the beginning, kLeft keeps the end.
enum class TruncationSide { kRight, kLeft };

// Which text of a pair truncation cuts (Hugging Face's TruncationStrategy):
// kLongestFirst takes tokens from the longer text first; kOnlySecond cuts
// the second text alone and keeps the first whole (a reranker's query), and
// is InvalidArgument when the second text cannot lose enough tokens while
// keeping at least one (the crate's "Second sequence not long enough").
enum class TruncationStrategy { kLongestFirst, kOnlySecond };

namespace tokenizer {
struct Pipeline;
}

// The byte offset of the first ill-formed UTF-8 sequence in `text` (RFC 3629:
// no overlongs, surrogates or code points past U+10FFFF), or npos if none.
size_t FindInvalidUtf8(std::string_view text);

class Tokenizer {
 public:
  // Loads tokenizer.json if the directory has one, else vocab.txt (+ tokenizer_config.json).
  // A part tokenizer.json names that is not implemented is Unimplemented, naming it.
  // tokenizer.json's "truncation" and "padding" sections are not applied (as
  // with transformers' AutoTokenizer): callers pass max_length and pad batches.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& model_dir);
  // A tokenizer.json given as text; `source` names it in errors.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromTokenizerJson(
      std::string_view json, const std::string& source = "tokenizer.json");
  // vocab.txt (+ tokenizer_config.json when `config_text` is not null) given
  // as text; the paths name them in errors and in source().
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromVocabTxt(const std::string& vocab_text,
                                                                 const std::string& vocab_path,
                                                                 const std::string* config_text,
                                                                 const std::string& config_path);
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromVocab(std::vector<std::string> vocab,
                                                              const TokenizerOptions& options);
  ~Tokenizer();

  // Thread-safe. Invalid UTF-8 is an error (InvalidArgument), never a crash.
  // `max_length` > 0 truncates to that many ids in total (special tokens
  // included, as many as the post-processor adds), keeping the closing special
  // tokens; 0 means no truncation. Pairs lose
  // tokens from the longer text first (Hugging Face's longest_first), each
  // text at the `side` end. A max_length below the number of special tokens
  // is InvalidArgument.
  // Literal special tokens in the text ("[MASK]", "[SEP]") map to their ids.
  // `add_special_tokens` false leaves out the post-processor's tokens ([CLS],
  // [SEP]), as Hugging Face's encode(..., add_special_tokens=False): then
  // max_length counts the text's tokens only.
  absl::StatusOr<Encoding> Encode(std::string_view text, int max_length = 0,
                                  TruncationSide side = TruncationSide::kRight,
                                  bool add_special_tokens = true) const;
  absl::StatusOr<Encoding> EncodePair(
      std::string_view text, std::string_view text_pair, int max_length = 0,
      TruncationSide side = TruncationSide::kRight, bool add_special_tokens = true,
      TruncationStrategy strategy = TruncationStrategy::kLongestFirst) const;

  // Ids back to text through the tokenizer's decoder (Hugging Face's
  // `decode`); special added tokens are left out if `skip_special_tokens`.
  // An id outside the vocabulary is InvalidArgument naming its index.
  absl::StatusOr<std::string> Decode(const std::vector<int32_t>& ids,
                                     bool skip_special_tokens = true) const;

  // Special tokens the post-processor adds to one text / to a pair.
  int num_special_tokens(bool pair) const;

  // What it was read from, for logs: the tokenizer.json path, or the
  // vocab.txt path (with " + " and the tokenizer_config.json path when read).
  const std::string& source() const;

  int vocab_size() const;
  int cls_id() const;
  int sep_id() const;
  int pad_id() const;
  int unk_id() const;
  // The id of the vocabulary token or added token spelled `token` exactly
  // (Hugging Face's convert_tokens_to_ids, without its fallback to the
  // unknown token's id), or -1.
  int32_t TokenId(std::string_view token) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromPipeline(tokenizer::Pipeline pipeline);
  std::unique_ptr<Impl> impl_;
};

}  // namespace engine
