// Arbitrary bytes as text, or as a text pair, through engine::Tokenizer with
// real vocabularies, with truncation on and off. Framing (fuzz/README.md):
//
//   byte 0       flags: bits 0-1 the tokenizer (0 and 3: bert-base-uncased's
//                tokenizer.json from tests/golden/tokenizer; 1: the same
//                vocabulary cased, accents stripped, no Chinese-character
//                splitting, no text cleaning, 8 chars per word; 2: the demo
//                model's vocabulary), bit 2 a pair, bit 3 truncation
//   byte 1       max_length when truncating (0..255; below the special-token
//                count it must be refused)
//   the rest     the text; for a pair, text and text_pair are split at the
//                first 0xFF byte (never part of valid UTF-8)
//
// Beyond crashes, the result must hold together: one type, token and offset
// per id, ids inside the vocabulary, offsets inside the text, truncation a
// prefix of the full encoding that keeps the closing [SEP], and an error
// only for invalid UTF-8 or a too-small max_length.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer.h"
#include "engine/tools/random_model.h"
#include "fuzz_util.h"

namespace {

struct Tokenizers {
  std::unique_ptr<engine::Tokenizer> all[3];
};

std::unique_ptr<engine::Tokenizer> OrDie(absl::StatusOr<std::unique_ptr<engine::Tokenizer>> t) {
  if (!t.ok()) fuzz::Fail(std::string(t.status().message()).c_str());
  return *std::move(t);
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  std::string line;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) fuzz::Fail("cannot read the golden vocab.txt (set ENCODER_SOURCE_DIR)");
  for (int c; (c = std::fgetc(f)) != EOF;) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line.push_back(static_cast<char>(c));
    }
  }
  std::fclose(f);
  if (!line.empty()) lines.push_back(line);
  return lines;
}

const Tokenizers& GetTokenizers() {
  static const Tokenizers* const tokenizers = [] {
    auto* t = new Tokenizers;
    const std::string dir = fuzz::SourcePath("tests/golden/tokenizer/bert-base-uncased");
    t->all[0] = OrDie(engine::Tokenizer::Load(dir));
    engine::TokenizerOptions cased;
    cased.lower_case = false;
    cased.strip_accents = engine::TokenizerOptions::StripAccents::kYes;
    cased.tokenize_chinese_chars = false;
    cased.clean_text = false;
    cased.max_input_chars_per_word = 8;
    t->all[1] = OrDie(engine::Tokenizer::FromVocab(ReadLines(dir + "/vocab.txt"), cased));
    t->all[2] = OrDie(engine::Tokenizer::FromVocab(engine::DemoVocabulary(), {}));
    return t;
  }();
  return *tokenizers;
}

void CheckEncoding(const engine::Tokenizer& tokenizer, const engine::Encoding& e,
                   size_t max_text_bytes) {
  const size_t n = e.ids.size();
  fuzz::Check(e.token_type_ids.size() == n && e.tokens.size() == n && e.offsets.size() == n,
              "one type, token and offset per id");
  fuzz::Check(n >= 2 && e.ids.front() == tokenizer.cls_id() && e.ids.back() == tokenizer.sep_id(),
              "[CLS] first, [SEP] last");
  for (size_t i = 0; i < n; ++i) {
    fuzz::Check(e.ids[i] >= 0 && e.ids[i] < tokenizer.vocab_size(), "id inside the vocabulary");
    fuzz::Check(e.token_type_ids[i] == 0 || e.token_type_ids[i] == 1, "token type 0 or 1");
    const auto [begin, end] = e.offsets[i];
    fuzz::Check(begin >= 0 && begin <= end && static_cast<size_t>(end) <= max_text_bytes,
                "offsets inside the text");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Tokenizers& tokenizers = GetTokenizers();
  const uint8_t flags = data[0];
  const engine::Tokenizer& tokenizer = *tokenizers.all[(flags & 3) == 3 ? 0 : flags & 3];
  const bool pair = flags & 4;
  const bool truncate = flags & 8;
  const int max_length = truncate ? data[1] : 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::string_view text_pair;
  if (pair) {
    const size_t split = text.find('\xff');
    if (split != std::string_view::npos) {
      text_pair = text.substr(split + 1);
      text = text.substr(0, split);
    }
  }
  const bool valid_utf8 = engine::FindInvalidUtf8(text) == std::string_view::npos &&
                          engine::FindInvalidUtf8(text_pair) == std::string_view::npos;
  const int num_special = pair ? 3 : 2;  // BERT: [CLS] A [SEP] (B [SEP])
  const bool valid_length = max_length == 0 || max_length >= num_special;

  auto full = pair ? tokenizer.EncodePair(text, text_pair) : tokenizer.Encode(text);
  fuzz::Check(full.ok() == valid_utf8, "untruncated: an error exactly for invalid UTF-8");
  if (!full.ok()) return 0;
  const size_t max_text = std::max(text.size(), text_pair.size());
  CheckEncoding(tokenizer, *full, max_text);
  if (max_length == 0) return 0;

  auto cut =
      pair ? tokenizer.EncodePair(text, text_pair, max_length) : tokenizer.Encode(text, max_length);
  fuzz::Check(cut.ok() == valid_length, "truncated: an error exactly for a too-small max_length");
  if (!cut.ok()) return 0;
  CheckEncoding(tokenizer, *cut, max_text);
  const size_t n = cut->ids.size();
  fuzz::Check(n <= static_cast<size_t>(max_length), "truncated to max_length");
  if (full->ids.size() <= static_cast<size_t>(max_length)) {
    fuzz::Check(cut->ids == full->ids, "short enough: truncation changes nothing");
  } else if (!pair) {
    fuzz::Check(n == static_cast<size_t>(max_length), "cut to exactly max_length");
    fuzz::Check(std::equal(cut->ids.begin(), cut->ids.end() - 1, full->ids.begin()),
                "truncation keeps a prefix of the tokens");
  } else {
    fuzz::Check(n == static_cast<size_t>(max_length), "pair cut to exactly max_length");
  }
  return 0;
}
