// bert-base-uncased over the committed corpus (tests/golden/tokenizer):
// offsets checked against an independent slow normalization, tokenizer.json
// settings that must not apply, concurrency, and a quick throughput figure.
// Parity with the Rust crate itself is rust_reference_test.
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "test_data.h"

namespace engine::tokenizer_test {
namespace {

// An independent, slow rendering of BERT normalization with ICU's string
// APIs, whitespace removed: what the bytes behind a token must contain.
std::string SlowNormalize(const std::string& text) {
  const icu::UnicodeString in = icu::UnicodeString::fromUTF8(text);
  icu::UnicodeString lowered;
  for (int32_t i = 0; i < in.length();) {
    const UChar32 c = in.char32At(i);
    i += U16_LENGTH(c);
    const int8_t type = u_charType(c);
    const bool other = type == U_CONTROL_CHAR || type == U_FORMAT_CHAR ||
                       type == U_PRIVATE_USE_CHAR || type == U_SURROGATE || type == U_UNASSIGNED;
    if (c == 0xFFFD || u_isUWhiteSpace(c) || other) continue;
    icu::UnicodeString one(c);
    lowered += one.toLower(icu::Locale::getRoot());  // alone: no final-sigma context
  }
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString nfd =
      icu::Normalizer2::getNFDInstance(status)->normalize(lowered, status);
  icu::UnicodeString stripped;
  for (int32_t i = 0; i < nfd.length();) {
    const UChar32 c = nfd.char32At(i);
    i += U16_LENGTH(c);
    if (u_charType(c) != U_NON_SPACING_MARK) stripped += c;
  }
  std::string out;
  stripped.toUTF8String(out);
  return out;
}

bool IsBoundary(const std::string& s, int offset) {
  return offset == static_cast<int>(s.size()) ||
         (static_cast<unsigned char>(s[offset]) & 0xC0) != 0x80;
}

// Checks one text's tokens; `type` selects them in a pair encoding.
void CheckOffsets(const std::string& text, const Encoding& enc, int type, int line) {
  int last_begin = 0;
  for (size_t i = 0; i < enc.ids.size(); ++i) {
    if (enc.token_type_ids[i] != type) continue;
    const auto [begin, end] = enc.offsets[i];
    const std::string& token = enc.tokens[i];
    const std::string where = absl::StrCat("corpus.jsonl:", line, " token ", i, " ", token);
    if (begin == 0 && end == 0) {
      EXPECT_TRUE(token == "[CLS]" || token == "[SEP]") << where;
      continue;
    }
    ASSERT_TRUE(0 <= begin && begin < end && end <= static_cast<int>(text.size())) << where;
    EXPECT_TRUE(IsBoundary(text, begin) && IsBoundary(text, end)) << where;
    EXPECT_GE(begin, last_begin) << where;
    last_begin = begin;
    const std::string slice = text.substr(begin, end - begin);
    if (slice == token) continue;    // special-token literals, plain ASCII words
    if (token == "[UNK]") continue;  // a whole word without pieces
    const std::string piece = token.rfind("##", 0) == 0 ? token.substr(2) : token;
    EXPECT_NE(SlowNormalize(slice).find(piece), std::string::npos)
        << where << " slice \"" << Escape(slice) << "\"";
  }
}

TEST(GoldenTest, OffsetsSliceTheTextToTheirTokens) {
  const auto& corpus = Corpus();
  for (size_t i = 0; i < corpus.size(); ++i) {
    absl::StatusOr<Encoding> enc = Bert().Encode(corpus[i]);
    ASSERT_TRUE(enc.ok()) << enc.status();
    ASSERT_EQ(enc->offsets.size(), enc->ids.size());
    CheckOffsets(corpus[i], *enc, 0, static_cast<int>(i + 1));
  }
  // Second texts of pairs refer to their own text.
  for (size_t i = 0; i + 1 < corpus.size(); i += 9) {
    absl::StatusOr<Encoding> enc = Bert().EncodePair(corpus[i], corpus[i + 1]);
    ASSERT_TRUE(enc.ok()) << enc.status();
    CheckOffsets(corpus[i], *enc, 0, static_cast<int>(i + 1));
    CheckOffsets(corpus[i + 1], *enc, 1, static_cast<int>(i + 2));
  }
}

TEST(GoldenTest, TokenizerJsonTruncationAndPaddingAreNotApplied) {
  // The committed tokenizer.json asks for truncation and padding to 256;
  // like transformers' AutoTokenizer, a plain call applies neither.
  std::string text;
  for (const std::string& line : Corpus()) absl::StrAppend(&text, line, " ");
  absl::StatusOr<Encoding> enc = Bert().Encode(text);
  ASSERT_TRUE(enc.ok());
  EXPECT_GT(enc->ids.size(), 256u);
  EXPECT_EQ(enc->ids.back(), Bert().sep_id());
  absl::StatusOr<Encoding> short_enc = Bert().Encode("hello");
  ASSERT_TRUE(short_enc.ok());
  EXPECT_EQ(short_enc->ids, (std::vector<int32_t>{101, 7592, 102}));
}

TEST(GoldenTest, ConcurrentEncodingMatchesSerial) {
  const auto& corpus = Corpus();
  std::vector<std::vector<int32_t>> serial;
  for (const auto& text : corpus) serial.push_back(Bert().Encode(text)->ids);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t k = 0; k < corpus.size(); ++k) {
        const size_t i = (k * 7 + t * 101) % corpus.size();  // different orders per thread
        absl::StatusOr<Encoding> enc = Bert().Encode(corpus[i]);
        if (!enc.ok() || enc->ids != serial[i]) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// CPU time of this thread, so that other processes on a shared machine
// slow the wall clock but not the figure.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Not a pass/fail check: prints the single-thread rate for the record.
TEST(GoldenTest, Throughput) {
  std::string english;
  for (int i = 0; i < 8; ++i) {
    absl::StrAppend(&english,
                    "The quick brown fox jumps over the lazy dog, and an encoder service answers "
                    "embedding requests at low latency on plain CPUs. ");
  }
  struct Workload {
    const char* name;
    std::vector<std::string> texts;
  };
  const Workload workloads[] = {{"corpus", Corpus()}, {"english", {english}}};
  for (const Workload& w : workloads) {
    size_t tokens = 0;
    size_t bytes = 0;
    const double start = ThreadCpuSeconds();
    double seconds = 0;
    while (seconds < 0.3) {
      for (const auto& text : w.texts) {
        tokens += Bert().Encode(text)->ids.size();
        bytes += text.size();
      }
      seconds = ThreadCpuSeconds() - start;
    }
    std::cout << "[throughput] " << w.name << ": " << static_cast<int64_t>(tokens / seconds)
              << " tokens/s, " << bytes / seconds / 1e6 << " MB/s per core\n";
  }
}

}  // namespace
}  // namespace engine::tokenizer_test
