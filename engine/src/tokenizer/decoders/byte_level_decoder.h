// Hugging Face's ByteLevel decoder: the tokens' characters back to bytes
// (a token with a character outside the byte table is taken as its own UTF-8),
// then the bytes as UTF-8 with U+FFFD for ill-formed parts (Rust's from_utf8_lossy).
#pragma once

#include <string>
#include <vector>

#include "decoders/decoder.h"

namespace engine::tokenizer {

class ByteLevelDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override;
};

// Ill-formed UTF-8 replaced by U+FFFD per maximal subpart (as Rust's
// String::from_utf8_lossy and the WHATWG decoder).
std::string Utf8Lossy(std::string_view bytes);

}  // namespace engine::tokenizer
