// The post-processor: special tokens around the sequences as a template
// (Hugging Face's TemplateProcessing; BertProcessing and RobertaProcessing are
// fixed templates), and LongestFirst truncation.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace engine::tokenizer {

struct TemplatePiece {
  int sequence = -1;         // -1: special tokens; 0: the first text; 1: the second
  int type_id = 0;           // token type of everything this piece emits
  std::vector<int32_t> ids;  // for special tokens
};

struct Template {
  std::vector<TemplatePiece> pieces;
  int NumSpecialTokens() const;
};

// Byte-level processors' trim_offsets (the Rust crate's
// processors::byte_level::process_offsets): a token's offsets lose its
// leading and trailing spaces ("Ġ" or whitespace), except the one space
// add_prefix_space put before the first token.
struct OffsetTrimming {
  bool enabled = false;
  bool add_prefix_space = false;
};
// Applies `trim` to one token's offsets; `first` is the first token of its text.
void TrimOffsets(const OffsetTrimming& trim, std::string_view token, bool first, int32_t* begin,
                 int32_t* end);

// BertProcessing: [CLS] A [SEP] (and B [SEP] with type 1 for pairs).
Template BertTemplate(int32_t cls_id, int32_t sep_id, bool pair);
// RobertaProcessing: <s> A </s> (and </s> B </s> for pairs), all of type 0.
Template RobertaTemplate(int32_t cls_id, int32_t sep_id, bool pair);

}  // namespace engine::tokenizer
