// The parts a Tokenizer is assembled from, whichever files they were read from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "added_tokens.h"
#include "decoders/decoder.h"
#include "models/model.h"
#include "normalizers/normalizer.h"
#include "pre_tokenizers/pre_tokenizer.h"
#include "processors/template_processing.h"

namespace engine::tokenizer {

struct Pipeline {
  std::string source;                           // the file(s) read, for error messages
  std::unique_ptr<Normalizer> normalizer;       // null: none
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // null: the whole text is one word
  std::unique_ptr<Model> model;
  Template single;  // the post-processor's templates
  Template pair;
  OffsetTrimming trim;
  std::unique_ptr<Decoder> decoder;  // null: tokens joined with spaces
  std::vector<AddedToken> added_tokens;
  int32_t pad_id = -1;  // -1: the "[PAD]" or "<pad>" token, else 0
};

}  // namespace engine::tokenizer
