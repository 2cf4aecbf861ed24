// Arbitrary bytes as text through each real tokenizer of ../shared/tokenizers
// (the XLM-R Unigram of bge-m3 and of paraphrase-multilingual-mpnet-base-v2,
// all-mpnet-base-v2's WordPiece, roberta-base's byte-level BPE, Qwen3's
// byte-level BPE with its split regex, ModernBERT's, EmbeddingGemma's BPE
// with byte fallback). Framing:
//
//   byte 0       flags: bits 0-2 the tokenizer (in the order above, modulo
//                their count), bit 3 a pair, bit 4 truncation, bit 5
//                truncation on the left
//   byte 1       max_length when truncating (below the special-token count it
//                must be refused)
//   the rest     the text; a pair splits at the first 0xFF byte
//
// Checks: an error exactly for invalid UTF-8 or a too-small max_length; one
// type/token/offset per id; ids inside the vocabulary; offsets inside the
// text; truncation at most max_length, the post-processor's tokens kept at
// both ends (those that encoding "a" puts around its ids); Decode accepts
// the ids.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer.h"
#include "fuzz_util.h"

namespace {

constexpr int kCount = 7;
constexpr const char* kNames[kCount] = {
    "BAAI--bge-m3",
    "sentence-transformers--paraphrase-multilingual-mpnet-base-v2",
    "sentence-transformers--all-mpnet-base-v2",
    "FacebookAI--roberta-base",
    "Qwen--Qwen3-Embedding-0.6B",
    "answerdotai--ModernBERT-base",
    "google--embeddinggemma-300m"};

// A tokenizer and the special ids its post-processor puts before and after
// a text's own ids.
struct Framed {
  std::unique_ptr<engine::Tokenizer> tokenizer;
  std::vector<int32_t> head;
  std::vector<int32_t> tail;
};

// The frame of "a": its ids with special tokens around those without.
void FindFrame(Framed* f) {
  auto with = f->tokenizer->Encode("a");
  auto without = f->tokenizer->Encode("a", 0, engine::TruncationSide::kRight, false);
  if (!with.ok() || !without.ok()) fuzz::Fail("cannot encode \"a\"");
  const std::vector<int32_t>& w = with->ids;
  const std::vector<int32_t>& o = without->ids;
  const auto at = std::search(w.begin(), w.end(), o.begin(), o.end());
  if (at == w.end() || o.empty()) fuzz::Fail("\"a\" without special tokens is not inside \"a\"");
  f->head.assign(w.begin(), at);
  f->tail.assign(at + static_cast<std::ptrdiff_t>(o.size()), w.end());
}

const Framed& Get(int index) {
  static Framed* const all = [] {
    auto* t = new Framed[kCount];
    for (int i = 0; i < kCount; ++i) {
      auto loaded = engine::Tokenizer::Load(
          fuzz::SourcePath(std::string("../shared/tokenizers/") + kNames[i]));
      if (!loaded.ok()) fuzz::Fail(std::string(loaded.status().message()).c_str());
      t[i].tokenizer = *std::move(loaded);
      FindFrame(&t[i]);
    }
    return t;
  }();
  return all[index];
}

void CheckEncoding(const Framed& framed, const engine::Encoding& e, size_t max_text_bytes,
                   bool pair) {
  const engine::Tokenizer& tokenizer = *framed.tokenizer;
  const size_t n = e.ids.size();
  fuzz::Check(e.token_type_ids.size() == n && e.tokens.size() == n && e.offsets.size() == n,
              "one type, token and offset per id");
  fuzz::Check(n >= static_cast<size_t>(tokenizer.num_special_tokens(pair)),
              "the post-processor's tokens are there");
  const auto& head = framed.head;
  const auto& tail = framed.tail;
  fuzz::Check(n >= head.size() + tail.size() &&
                  std::equal(head.begin(), head.end(), e.ids.begin()) &&
                  std::equal(tail.rbegin(), tail.rend(), e.ids.rbegin()),
              "opening and closing special tokens");
  for (size_t i = 0; i < n; ++i) {
    fuzz::Check(e.ids[i] >= 0 && e.ids[i] < tokenizer.vocab_size(), "id inside the vocabulary");
    const auto [begin, end] = e.offsets[i];
    fuzz::Check(begin >= 0 && begin <= end && static_cast<size_t>(end) <= max_text_bytes,
                "offsets inside the text");
  }
  fuzz::Check(tokenizer.Decode(e.ids, true).ok(), "Decode accepts the ids");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  const Framed& framed = Get((flags & 7) % kCount);
  const engine::Tokenizer& tokenizer = *framed.tokenizer;
  const bool pair = flags & 8;
  const int max_length = (flags & 16) ? data[1] : 0;
  const engine::TruncationSide side =
      (flags & 32) ? engine::TruncationSide::kLeft : engine::TruncationSide::kRight;
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
  const int num_special = tokenizer.num_special_tokens(pair);
  auto full = pair ? tokenizer.EncodePair(text, text_pair) : tokenizer.Encode(text);
  fuzz::Check(full.ok() == valid_utf8, "an error exactly for invalid UTF-8");
  if (!full.ok()) return 0;
  const size_t max_text = std::max(text.size(), text_pair.size());
  CheckEncoding(framed, *full, max_text, pair);
  if (max_length == 0) return 0;
  auto cut = pair ? tokenizer.EncodePair(text, text_pair, max_length, side)
                  : tokenizer.Encode(text, max_length, side);
  fuzz::Check(cut.ok() == (max_length >= num_special),
              "an error exactly for a max_length below the special tokens");
  if (!cut.ok()) return 0;
  CheckEncoding(framed, *cut, max_text, pair);
  fuzz::Check(cut->ids.size() <= static_cast<size_t>(max_length), "truncated to max_length");
  if (full->ids.size() <= static_cast<size_t>(max_length)) {
    fuzz::Check(cut->ids == full->ids, "short enough: truncation changes nothing");
  } else if (!pair) {
    // One text too long, cut at either end, fills max_length exactly.
    fuzz::Check(cut->ids.size() == static_cast<size_t>(max_length), "cut to exactly max_length");
  }
  return 0;
}
