#include "models/bpe.h"

#include <cstdio>
#include <queue>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace engine::tokenizer {
namespace {

uint64_t PairKey(int32_t left, int32_t right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Bpe>> Bpe::Create(
    std::vector<std::pair<std::string, int32_t>> vocab,
    const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options) {
  std::unique_ptr<Bpe> bpe(new Bpe());
  bpe->ids_.reserve(vocab.size());
  for (const auto& [token, id] : vocab) bpe->ids_[token] = id;
  bpe->vocab_ = std::move(vocab);
  bpe->options_ = std::move(options);
  const std::string& prefix = bpe->options_.continuing_subword_prefix;
  bpe->merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    const int32_t left = bpe->TokenToId(a);
    const int32_t right = bpe->TokenToId(b);
    // The right part loses the prefix when joined: "a" + "##b" = "ab".
    const bool prefixed = !prefix.empty() && b.compare(0, prefix.size(), prefix) == 0;
    const int32_t merged = bpe->TokenToId(a + (prefixed ? b.substr(prefix.size()) : b));
    if (left < 0 || right < 0 || merged < 0) {
      return absl::InvalidArgumentError(absl::StrCat("BPE: merge ", rank, " (\"", a, " ", b,
                                                     "\") has a token outside the vocabulary"));
    }
    // The first (lowest-ranked) occurrence of a pair wins.
    bpe->merges_.try_emplace(PairKey(left, right), Merge{static_cast<int32_t>(rank), merged});
  }
  if (!bpe->options_.unk_token.empty()) {
    bpe->unk_id_ = bpe->TokenToId(bpe->options_.unk_token);
    if (bpe->unk_id_ < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "BPE: the unknown token \"", bpe->options_.unk_token, "\" is not in the vocabulary"));
    }
  }
  if (bpe->options_.byte_fallback) {
    bpe->byte_ids_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      bpe->byte_ids_[b] = bpe->TokenToId(name);
    }
  }
  return bpe;
}

int32_t Bpe::TokenToId(std::string_view token) const {
  const auto it = ids_.find(Absl(token));
  return it == ids_.end() ? -1 : it->second;
}

const Bpe::Merge* Bpe::FindMerge(int32_t left, int32_t right) const {
  const auto it = merges_.find(PairKey(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void Bpe::Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                   std::vector<SubWord>* out) const {
  if (num_chars == 0) return;
  if (options_.ignore_merges) {
    if (const int32_t id = TokenToId(word); id >= 0) {
      out->push_back({id, 0, num_chars});
      return;
    }
  }
  struct Symbol {
    int32_t id;
    int32_t begin;  // characters of the word
    int32_t end;
    int32_t prev;
    int32_t next;
    bool removed;
  };
  thread_local std::vector<Symbol> symbols;
  thread_local std::string piece;
  symbols.clear();
  const auto add = [](int32_t id, int32_t begin, int32_t end) {
    const auto n = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, begin, end, n - 1, n + 1, false});
  };
  int32_t unk_begin = -1;  // a pending (possibly fused) unknown run
  int32_t unk_end = -1;
  for (int c = 0; c < num_chars; ++c) {
    piece.clear();
    if (c > 0) piece += options_.continuing_subword_prefix;
    piece.append(word, char_starts[c], char_starts[c + 1] - char_starts[c]);
    if (c == num_chars - 1) piece += options_.end_of_word_suffix;
    if (const int32_t id = TokenToId(piece); id >= 0) {
      if (unk_begin >= 0) add(unk_id_, unk_begin, unk_end);
      unk_begin = -1;
      add(id, c, c + 1);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (const char b : piece) all = all && byte_ids_[static_cast<uint8_t>(b)] >= 0;
      if (all) {
        if (unk_begin >= 0) add(unk_id_, unk_begin, unk_end);
        unk_begin = -1;
        for (const char b : piece) add(byte_ids_[static_cast<uint8_t>(b)], c, c + 1);
        continue;
      }
    }
    if (unk_id_ < 0) continue;  // no unk token: the character is dropped
    if (unk_begin >= 0 && options_.fuse_unk) {
      unk_end = c + 1;
    } else {
      if (unk_begin >= 0) add(unk_id_, unk_begin, unk_end);
      unk_begin = c;
      unk_end = c + 1;
    }
  }
  if (unk_begin >= 0) add(unk_id_, unk_begin, unk_end);
  if (symbols.empty()) return;
  symbols.back().next = -1;

  // Lowest rank first, then leftmost (the Rust crate's Merge ordering).
  struct Candidate {
    int32_t rank;
    int32_t pos;
    int32_t new_id;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  thread_local std::vector<Candidate> heap_storage;
  heap_storage.clear();
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue(
      std::greater<Candidate>(), std::move(heap_storage));
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const Merge* m = FindMerge(symbols[i].id, symbols[i + 1].id)) {
      queue.push({m->rank, static_cast<int32_t>(i), m->new_id});
    }
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.removed || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    const Merge* current = FindMerge(left.id, right.id);
    if (current == nullptr || current->new_id != top.new_id) continue;  // stale entry
    left.id = top.new_id;
    left.end = right.end;
    right.removed = true;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) {
      if (const Merge* m = FindMerge(symbols[left.prev].id, left.id)) {
        queue.push({m->rank, left.prev, m->new_id});
      }
    }
    if (left.next >= 0) {
      if (const Merge* m = FindMerge(left.id, symbols[left.next].id)) {
        queue.push({m->rank, top.pos, m->new_id});
      }
    }
  }
  for (const Symbol& s : symbols) {
    if (!s.removed) out->push_back({s.id, s.begin, s.end});
  }
}

}  // namespace engine::tokenizer
