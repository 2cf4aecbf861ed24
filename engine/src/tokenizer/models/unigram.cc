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
// Real vocabularies stay far below this (XLM-R's longest piece is 48 bytes).
constexpr size_t kMaxPieceBytes = 4096;

}  // namespace

absl::StatusOr<std::unique_ptr<Unigram>> Unigram::Create(
    std::vector<std::pair<std::string, double>> pieces, int32_t unk_id, bool byte_fallback) {
  if (pieces.empty()) return absl::InvalidArgumentError("Unigram: the vocabulary is empty");
  if (unk_id < 0 || static_cast<size_t>(unk_id) >= pieces.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Unigram: unk_id ", unk_id, " is outside the vocabulary"));
  }
  for (size_t id = 0; id < pieces.size(); ++id) {
    // The trie is built recursively, one level per byte: bound the depth.
    if (pieces[id].first.size() > kMaxPieceBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("Unigram: piece ", id, " is longer than ", kMaxPieceBytes, " bytes"));
    }
  }
  std::unique_ptr<Unigram> u(new Unigram());
  u->unk_id_ = unk_id;
  u->byte_fallback_ = byte_fallback;
  u->pieces_.reserve(pieces.size());
  u->scores_.reserve(pieces.size());
  u->ids_.reserve(pieces.size());
  double min_score = std::numeric_limits<double>::max();
  for (auto& [piece, score] : pieces) {
    min_score = std::min(min_score, score);
    u->scores_.push_back(score);
    u->pieces_.push_back(std::move(piece));
  }
  for (size_t id = 0; id < u->pieces_.size(); ++id) {
    // Later duplicates win, as in the Rust crate's token -> id map.
    u->ids_[Absl(u->pieces_[id])] = static_cast<int32_t>(id);
  }
  std::vector<int32_t> ids(u->pieces_.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  u->BuildTrie(ids.data(), ids.size(), 0, u->NewNode());
  constexpr uint16_t kDenseFrom = 16;
  u->dense_at_.assign(u->node_piece_.size(), -1);
  for (size_t node = 0; node < u->node_piece_.size(); ++node) {
    if (u->num_edges_[node] < kDenseFrom) continue;
    u->dense_at_[node] = static_cast<int32_t>(u->dense_.size());
    u->dense_.resize(u->dense_.size() + 256, -1);
    for (uint32_t k = 0; k < u->num_edges_[node]; ++k) {
      const Edge& e = u->edges_[u->first_edge_[node] + k];
      u->dense_[u->dense_at_[node] + e.byte] = e.child;
    }
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

int32_t Unigram::NewNode() {
  node_piece_.push_back(-1);
  first_edge_.push_back(0);
  num_edges_.push_back(0);
  return static_cast<int32_t>(node_piece_.size() - 1);
}

void Unigram::BuildTrie(int32_t* ids, size_t n, size_t depth, int32_t node) {
  const auto& p = pieces_;
  // 0 for a piece that ends here, else 1 + its byte at `depth`.
  const auto key = [&p, depth](int32_t id) -> unsigned {
    return p[id].size() == depth ? 0u : 1u + static_cast<uint8_t>(p[id][depth]);
  };
  // Order ids by key: insertion sort for the many small groups, counting sort
  // for the few big ones.
  if (n <= 32) {
    for (size_t i = 1; i < n; ++i) {
      const int32_t v = ids[i];
      const unsigned k = key(v);
      size_t j = i;
      for (; j > 0 && key(ids[j - 1]) > k; --j) ids[j] = ids[j - 1];
      ids[j] = v;
    }
  } else {
    size_t count[258] = {};
    for (size_t i = 0; i < n; ++i) ++count[key(ids[i]) + 1];
    for (size_t k = 1; k < 258; ++k) count[k] += count[k - 1];
    std::vector<int32_t> sorted(n);
    for (size_t i = 0; i < n; ++i) sorted[count[key(ids[i])]++] = ids[i];
    std::copy(sorted.begin(), sorted.end(), ids);
  }
  size_t lo = 0;
  // Pieces that end here: among duplicates the last id wins.
  for (; lo < n && key(ids[lo]) == 0; ++lo)
    node_piece_[node] = std::max(node_piece_[node], ids[lo]);
  // One edge per distinct next byte, laid out together before recursing.
  const auto first = static_cast<uint32_t>(edges_.size());
  thread_local std::vector<std::pair<size_t, size_t>> groups;
  const size_t groups_begin = groups.size();
  for (size_t i = lo; i < n;) {
    const unsigned k = key(ids[i]);
    size_t j = i + 1;
    while (j < n && key(ids[j]) == k) ++j;
    edges_.push_back({static_cast<uint8_t>(k - 1), -1});
    groups.emplace_back(i, j);
    i = j;
  }
  const size_t num_groups = groups.size() - groups_begin;
  first_edge_[node] = first;
  num_edges_[node] = static_cast<uint16_t>(num_groups);
  for (size_t g = 0; g < num_groups; ++g) {
    const int32_t child = NewNode();
    edges_[first + g].child = child;
    const auto [glo, ghi] = groups[groups_begin + g];
    BuildTrie(ids + glo, ghi - glo, depth + 1, child);
  }
  groups.resize(groups_begin);
}

int32_t Unigram::Child(int32_t node, uint8_t byte) const {
  if (const int32_t d = dense_at_[node]; d >= 0) return dense_[d + byte];
  const Edge* b = edges_.data() + first_edge_[node];
  const Edge* e = b + num_edges_[node];
  const Edge* it =
      std::lower_bound(b, e, byte, [](const Edge& edge, uint8_t x) { return edge.byte < x; });
  return it != e && it->byte == byte ? it->child : -1;
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
