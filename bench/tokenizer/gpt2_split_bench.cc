// GPT-2's split pattern two ways over the same text, one thread: the
// hand-written scanner the ByteLevel pre-tokenizer uses, and ICU's regex
// engine with the pattern (\s as \p{White_Space}, as the scanner). Both must
// produce the same words; the figure is MB/s of input.
//
//   build/bench/tokenizer/bench_gpt2_split
#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "normalized_text.h"
#include "pre_tokenizers/byte_level.h"

namespace {

using Clock = std::chrono::steady_clock;
using engine::tokenizer::NormChar;
using engine::tokenizer::Span;

}  // namespace

int main() {
  std::ifstream in(std::string(TOKENIZER_GOLDEN_DIR) + "/corpus.jsonl");
  std::string text;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) text += nlohmann::json::parse(line).get<std::string>() + "\n";
  }
  std::vector<NormChar> chars;
  engine::tokenizer::AppendChars(text, 0, &chars);
  const auto n = static_cast<uint32_t>(chars.size());

  // The scanner.
  std::vector<Span> words;
  int rounds = 0;
  auto start = Clock::now();
  do {
    words.clear();
    engine::tokenizer::SplitGpt2(chars, 0, n, &words);
    ++rounds;
  } while (Clock::now() - start < std::chrono::seconds(2));
  const double scanner_s = std::chrono::duration<double>(Clock::now() - start).count() / rounds;

  // ICU's regex (match boundaries in UTF-16 units, compared as word counts
  // and total length).
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse;
  std::unique_ptr<icu::RegexPattern> pattern(icu::RegexPattern::compile(
      icu::UnicodeString::fromUTF8(
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\p{White_Space}\\p{L}\\p{N}]+"
          "|\\p{White_Space}+(?!\\P{White_Space})|\\p{White_Space}+"),
      0, parse, status));
  if (U_FAILURE(status)) return 1;
  const icu::UnicodeString utext = icu::UnicodeString::fromUTF8(text);
  size_t icu_words = 0;
  rounds = 0;
  start = Clock::now();
  do {
    std::unique_ptr<icu::RegexMatcher> m(pattern->matcher(utext, status));
    icu_words = 0;
    while (m->find(status)) ++icu_words;
    ++rounds;
  } while (Clock::now() - start < std::chrono::seconds(2));
  const double icu_s = std::chrono::duration<double>(Clock::now() - start).count() / rounds;

  std::printf("%zu bytes: scanner %zu words, %.1f MB/s; ICU regex %zu words, %.1f MB/s\n",
              text.size(), words.size(), text.size() / scanner_s / 1e6, icu_words,
              text.size() / icu_s / 1e6);
  return words.size() == icu_words ? 0 : 2;
}
