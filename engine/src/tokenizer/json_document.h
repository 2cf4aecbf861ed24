// tokenizer.json parsed with nlohmann's SAX interface: a DOM for everything
// except the big Unigram vocabulary (model.vocab as a list), which is streamed
// straight into a vector. Building 250,000 small DOM arrays would take most
// of the load time of an XLM-R tokenizer.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "json_fields.h"

namespace engine::tokenizer {

struct JsonDocument {
  json root;
  // model.vocab when it is a list of [piece, score]; in `root` it is then an
  // empty list.
  bool has_piece_list = false;
  std::vector<std::pair<std::string, double>> pieces;
};

absl::StatusOr<JsonDocument> ParseTokenizerJson(std::string_view text);

}  // namespace engine::tokenizer
