// Arbitrary bytes as a tokenizer.json (engine::Tokenizer::FromTokenizerJson).
// A file that loads must then tokenize and decode without crashing: a fixed
// text and pair give ids inside the vocabulary, offsets inside the text, and
// Decode accepts every id it produced. A file that does not load must say why.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/tokenizer.h"
#include "fuzz_util.h"

namespace {

void CheckEncoding(const engine::Tokenizer& tokenizer, const engine::Encoding& e,
                   size_t max_text_bytes) {
  const size_t n = e.ids.size();
  fuzz::Check(e.token_type_ids.size() == n && e.tokens.size() == n && e.offsets.size() == n,
              "one type, token and offset per id");
  for (size_t i = 0; i < n; ++i) {
    fuzz::Check(e.ids[i] >= 0 && e.ids[i] < tokenizer.vocab_size(), "id inside the vocabulary");
    const auto [begin, end] = e.offsets[i];
    fuzz::Check(begin >= 0 && begin <= end && static_cast<size_t>(end) <= max_text_bytes,
                "offsets inside the text");
  }
  fuzz::Check(tokenizer.Decode(e.ids, false).ok(), "Decode accepts the ids Encode gave");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto tokenizer = engine::Tokenizer::FromTokenizerJson(json, "fuzz.json");
  if (!tokenizer.ok()) {
    fuzz::Check(!tokenizer.status().message().empty(), "a load error says why");
    return 0;
  }
  const engine::Tokenizer& tok = **tokenizer;
  const std::string text =
      "Hello, w\xC3\xB6rld! \xE4\xB8\xAD\xE6\x96\x87 123 [MASK] <s> \xF0\x9F\x98\x80";
  const std::string pair = "  second\ttext  ";
  auto single = tok.Encode(text);
  fuzz::Check(single.ok(), "a loaded tokenizer encodes valid UTF-8");
  CheckEncoding(tok, *single, text.size());
  auto both = tok.EncodePair(text, pair);
  fuzz::Check(both.ok(), "a loaded tokenizer encodes a pair");
  CheckEncoding(tok, *both, text.size());
  const int special = tok.num_special_tokens(false);
  auto cut = tok.Encode(text, special + 1);
  fuzz::Check(cut.ok() && cut->ids.size() <= static_cast<size_t>(special + 1),
              "truncation to special tokens + 1");
  return 0;
}
