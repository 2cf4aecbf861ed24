#include "decoders/wordpiece_decoder.h"

#include "absl/strings/str_replace.h"

namespace engine::tokenizer {

std::string CleanUpTokenization(std::string text) {
  // In this order, each over the result of the last (as str::replace chains).
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) text = absl::StrReplaceAll(text, {{from, to}});
  return text;
}

void WordPieceDecoder::DecodeChain(std::vector<std::string>* tokens) const {
  for (size_t i = 0; i < tokens->size(); ++i) {
    std::string& t = (*tokens)[i];
    if (i != 0) {
      if (!prefix_.empty() && t.compare(0, prefix_.size(), prefix_) == 0) {
        t.erase(0, prefix_.size());
      } else {
        t.insert(0, " ");
      }
    }
    if (cleanup_) t = CleanUpTokenization(std::move(t));
  }
}

}  // namespace engine::tokenizer
