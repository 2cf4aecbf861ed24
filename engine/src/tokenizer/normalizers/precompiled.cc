#include "normalizers/precompiled.h"

#include <unicode/brkiter.h>
#include <unicode/utext.h>

#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/tokenizer.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

// darts-clone's unit layout.
bool HasLeaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t Value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t Label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t Offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

// One grapheme-cluster iterator per thread (ICU iterators are not thread-safe).
icu::BreakIterator* Graphemes() {
  thread_local std::unique_ptr<icu::BreakIterator> it = [] {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> b(
        icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
    return U_SUCCESS(status) ? std::move(b) : nullptr;
  }();
  return it.get();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Precompiled>> Precompiled::Create(std::string_view charsmap) {
  if (charsmap.size() < 4) return absl::InvalidArgumentError("precompiled_charsmap is too short");
  uint32_t trie_bytes = 0;
  for (int k = 3; k >= 0; --k) trie_bytes = trie_bytes << 8 | static_cast<uint8_t>(charsmap[k]);
  if (trie_bytes % 4 != 0 || trie_bytes > charsmap.size() - 4 || trie_bytes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("precompiled_charsmap: trie size ", trie_bytes, " does not fit the blob"));
  }
  std::unique_ptr<Precompiled> p(new Precompiled());
  p->trie_.resize(trie_bytes / 4);
  for (size_t i = 0; i < p->trie_.size(); ++i) {
    const auto* b = reinterpret_cast<const uint8_t*>(charsmap.data() + 4 + 4 * i);
    p->trie_[i] =
        uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
  }
  p->pool_ = std::string(charsmap.substr(4 + trie_bytes));
  if (const size_t bad = FindInvalidUtf8(p->pool_); bad != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("precompiled_charsmap: replacement strings are not UTF-8 (byte ", bad, ")"));
  }
  if (Graphemes() == nullptr) return absl::InternalError("ICU has no grapheme break data");
  return p;
}

std::optional<std::string_view> Precompiled::Transform(std::string_view chunk) const {
  // common_prefix_search, stopping at the first (shortest) key found.
  const size_t size = trie_.size();
  size_t node = Offset(trie_[0]);
  for (const char ch : chunk) {
    const auto c = static_cast<uint8_t>(ch);
    if (c == 0) return std::nullopt;
    node ^= c;
    if (node >= size) return std::nullopt;
    const uint32_t unit = trie_[node];
    if (Label(unit) != c) return std::nullopt;
    node ^= Offset(unit);
    if (node >= size) return std::nullopt;
    if (HasLeaf(unit)) {
      const size_t index = Value(trie_[node]);
      if (index >= pool_.size()) return std::nullopt;
      const size_t end = pool_.find('\0', index);
      std::string_view out(pool_.data() + index,
                           (end == std::string::npos ? pool_.size() : end) - index);
      // A value pointing inside a character would not be text.
      if (FindInvalidUtf8(out) != std::string_view::npos) return std::nullopt;
      return out;
    }
  }
  return std::nullopt;
}

namespace {

// The crate's `replace` for a part of `old_count` characters normalized to
// `text`: the new characters replace the old one by one; extra ones are
// inserted; missing ones are dropped after the last character emitted so far
// (even one of an earlier part, and none at all before the first: the
// crate's alignment, quirks included).
void ReplaceCluster(size_t old_count, std::string_view text, std::vector<CharChange>* changes) {
  const size_t first_new = changes->size();
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    int n = DecodeUtf8(text, i, &cp);
    if (n == 0) n = 1;
    changes->push_back({cp, 0});
    i += n;
  }
  const auto diff =
      static_cast<int64_t>(changes->size() - first_new) - static_cast<int64_t>(old_count);
  if (diff > 0) {
    for (size_t k = changes->size() - static_cast<size_t>(diff); k < changes->size(); ++k) {
      (*changes)[k].change = 1;
    }
  } else if (diff < 0 && !changes->empty()) {
    changes->back().change += static_cast<int32_t>(diff);
  }
}

}  // namespace

void Precompiled::Normalize(std::vector<NormChar>* chars) const {
  thread_local std::string utf8;
  thread_local std::vector<int32_t> starts;
  thread_local std::vector<CharChange> changes;
  thread_local std::vector<NormChar> out;
  CharsToUtf8(*chars, 0, chars->size(), &utf8, &starts);
  changes.clear();
  icu::BreakIterator* graphemes = Graphemes();
  UErrorCode status = U_ZERO_ERROR;
  UText* text = utext_openUTF8(nullptr, utf8.data(), static_cast<int64_t>(utf8.size()), &status);
  graphemes->setText(text, status);
  size_t c = 0;  // first character of the cluster
  for (int32_t b = graphemes->first(), e = graphemes->next(); e != icu::BreakIterator::DONE;
       b = e, e = graphemes->next()) {
    size_t c_end = c;
    while (c_end < chars->size() && starts[c_end] < e) ++c_end;
    const std::string_view cluster(utf8.data() + b, e - b);
    if (cluster.size() < 6) {
      if (const auto r = Transform(cluster)) {
        ReplaceCluster(c_end - c, *r, &changes);
        c = c_end;
        continue;
      }
    }
    for (; c < c_end; ++c) {
      const std::string_view one(utf8.data() + starts[c], starts[c + 1] - starts[c]);
      if (const auto r = Transform(one)) {
        ReplaceCluster(1, *r, &changes);
      } else {
        changes.push_back({(*chars)[c].cp, 0});
      }
    }
  }
  utext_close(text);
  ApplyChanges(*chars, 0, changes, &out);
  chars->swap(out);
}

}  // namespace engine::tokenizer
