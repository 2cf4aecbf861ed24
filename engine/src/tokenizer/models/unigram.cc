#include "models/unigram.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace engine::tokenizer {
namespace {

// SentencePiece's penalty for an unknown character below the lowest score.
constexpr double kUnkPenalty = 10.0;

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

absl::StatusOr<std::unique_ptr<Unigram>> Unigram::Create(
    std::vector<std::pair<std::string, double>> pieces, int32_t unk_id, bool byte_fallback) {
  if (pieces.empty()) return absl::InvalidArgumentError("Unigram: the vocabulary is empty");
  if (unk_id < 0 || static_cast<size_t>(unk_id) >= pieces.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Unigram: unk_id ", unk_id, " is outside the vocabulary"));
  }
  std::unique_ptr<Unigram> u(new Unigram());
  u->unk_id_ = unk_id;
  u->byte_fallback_ = byte_fallback;
  u->pieces_.reserve(pieces.size());
  u->scores_.reserve(pieces.size());
  u->ids_.reserve(pieces.size());
  u->children_.reserve(pieces.size() * 4);
  u->node_piece_.reserve(pieces.size() * 3);
  u->node_piece_.push_back(-1);  // the root
  double min_score = std::numeric_limits<double>::max();
  for (size_t id = 0; id < pieces.size(); ++id) {
    auto& [piece, score] = pieces[id];
    min_score = std::min(min_score, score);
    int32_t node = 0;
    for (const char c : piece) {
      const uint64_t key = static_cast<uint64_t>(node) << 8 | static_cast<uint8_t>(c);
      const auto [it, inserted] =
          u->children_.try_emplace(key, static_cast<int32_t>(u->node_piece_.size()));
      if (inserted) u->node_piece_.push_back(-1);
      node = it->second;
    }
    // Later duplicates win, as in the Rust crate's token -> id map.
    if (node != 0) u->node_piece_[node] = static_cast<int32_t>(id);
    u->ids_[piece] = static_cast<int32_t>(id);
    u->scores_.push_back(score);
    u->pieces_.push_back(std::move(piece));
  }
  u->unk_score_ = min_score - kUnkPenalty;
  if (byte_fallback) {
    u->byte_ids_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      u->byte_ids_[b] = u->TokenToId(name);
    }
  }
  return u;
}

int32_t Unigram::Child(int32_t node, uint8_t byte) const {
  const auto it = children_.find(static_cast<uint64_t>(node) << 8 | byte);
  return it == children_.end() ? -1 : it->second;
}

int32_t Unigram::TokenToId(std::string_view token) const {
  const auto it = ids_.find(Absl(token));
  return it == ids_.end() ? -1 : it->second;
}

std::vector<std::pair<std::string, int32_t>> Unigram::Vocab() const {
  std::vector<std::pair<std::string, int32_t>> vocab;
  vocab.reserve(pieces_.size());
  for (size_t i = 0; i < pieces_.size(); ++i) vocab.emplace_back(pieces_[i], i);
  return vocab;
}

void Unigram::Emit(std::string_view piece, int32_t begin, int32_t end,
                   std::vector<SubWord>* out) const {
  const int32_t id = TokenToId(piece);
  if (id >= 0) {
    out->push_back({id, begin, end});
    return;
  }
  if (byte_fallback_) {
    bool all = true;
    for (const char c : piece) all = all && byte_ids_[static_cast<uint8_t>(c)] >= 0;
    if (all && !piece.empty()) {
      for (const char c : piece) out->push_back({byte_ids_[static_cast<uint8_t>(c)], begin, end});
      return;
    }
  }
  out->push_back({unk_id_, begin, end});
}

void Unigram::Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                       std::vector<SubWord>* out) const {
  if (num_chars == 0) return;
  struct Node {
    double score = 0;
    int32_t start = -1;  // character where the best piece ending here starts
    int32_t id = -1;
  };
  thread_local std::vector<Node> best;
  thread_local std::vector<int32_t> char_at;  // byte offset -> character index, or -1
  best.assign(num_chars + 1, Node{});
  char_at.assign(word.size() + 1, -1);
  for (int k = 0; k <= num_chars; ++k) char_at[char_starts[k]] = k;
  best[0].start = 0;
  for (int s = 0; s < num_chars; ++s) {
    const double here = best[s].score;
    bool has_single = false;
    int32_t node = 0;
    for (int32_t p = char_starts[s]; p < static_cast<int32_t>(word.size());) {
      node = Child(node, static_cast<uint8_t>(word[p]));
      if (node < 0) break;
      ++p;
      const int32_t id = node_piece_[node];
      const int32_t e = char_at[p];
      if (id < 0 || e < 0) continue;
      const double candidate = here + scores_[id];
      Node& target = best[e];
      if (target.start < 0 || candidate > target.score) target = {candidate, s, id};
      if (e == s + 1) has_single = true;
    }
    if (!has_single) {
      const double candidate = here + unk_score_;
      Node& target = best[s + 1];
      if (target.start < 0 || candidate > target.score) target = {candidate, s, unk_id_};
    }
  }
  // Back from the end; consecutive unknowns become one piece.
  thread_local std::vector<std::pair<int32_t, int32_t>> spans;  // character ranges
  thread_local std::vector<bool> unknown;
  spans.clear();
  unknown.clear();
  for (int32_t e = num_chars; e > 0;) {
    const Node& n = best[e];
    const bool unk = n.id == unk_id_;
    if (unk && !unknown.empty() && unknown.back()) {
      spans.back().first = n.start;
    } else {
      spans.emplace_back(n.start, e);
      unknown.push_back(unk);
    }
    e = n.start;
  }
  for (size_t i = spans.size(); i-- > 0;) {
    const auto [b, e] = spans[i];
    if (unknown[i]) {
      // The Rust crate looks the fused text up again: it may be a piece after all.
      Emit(word.substr(char_starts[b], char_starts[e] - char_starts[b]), b, e, out);
    } else {
      out->push_back({best[e].id, b, e});
    }
  }
}

}  // namespace engine::tokenizer
