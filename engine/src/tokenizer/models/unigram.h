// Hugging Face's Unigram model (SentencePiece): the segmentation of a word
// into vocabulary pieces with the highest total score (Viterbi), characters
// without a piece scored as unknown (min score - 10) and runs of them fused
// into one unknown token; optionally unknown pieces fall back to <0xXX> bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "models/model.h"

namespace engine::tokenizer {

class Unigram : public Model {
 public:
  // `pieces` in id order with their scores; `unk_id` indexes them.
  static absl::StatusOr<std::unique_ptr<Unigram>> Create(
      std::vector<std::pair<std::string, double>> pieces, int32_t unk_id, bool byte_fallback);

  void Tokenize(std::string_view word, const int32_t* char_starts, int num_chars,
                std::vector<SubWord>* out) const override;
  int32_t TokenToId(std::string_view token) const override;
  std::vector<std::pair<std::string, int32_t>> Vocab() const override;
  int32_t unk_id() const override { return unk_id_; }

 private:
  Unigram() = default;
  // Trie over the pieces' bytes: child of `node` on `byte`, or -1.
  int32_t Child(int32_t node, uint8_t byte) const;
  int32_t NewNode();
  // Builds the trie below `node` for the pieces ids[0, n), which share their
  // first `depth` bytes (an MSD radix sort: no string comparisons).
  void BuildTrie(int32_t* ids, size_t n, size_t depth, int32_t node);
  // Appends the id(s) of the text `piece` covering characters [begin, end).
  void Emit(std::string_view piece, int32_t begin, int32_t end, std::vector<SubWord>* out) const;

  std::vector<std::string> pieces_;
  std::vector<double> scores_;
  absl::flat_hash_map<absl::string_view, int32_t> ids_;  // keys point into pieces_
  // A node's children are edges_[first_edge_[n], first_edge_[n] + num_edges_[n]),
  // sorted by byte; built once from the sorted pieces, so a lookup scans
  // contiguous memory.
  struct Edge {
    uint8_t byte;
    int32_t child;
  };
  std::vector<uint32_t> first_edge_;
  std::vector<uint16_t> num_edges_;
  // Nodes with many children (the root, "▁") also get a 256-entry table in
  // dense_ at dense_at_[node] (-1: none), to skip the binary search.
  std::vector<int32_t> dense_at_;
  std::vector<int32_t> dense_;
  std::vector<Edge> edges_;
  std::vector<int32_t> node_piece_;  // the piece a node ends, or -1
  std::vector<int32_t> byte_ids_;    // <0xXX> ids with byte_fallback
  double unk_score_ = 0;
  int32_t unk_id_ = -1;
  bool byte_fallback_ = false;
};

}  // namespace engine::tokenizer
