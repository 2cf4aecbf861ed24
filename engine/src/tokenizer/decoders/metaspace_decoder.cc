#include "decoders/metaspace_decoder.h"

#include "utf8.h"

namespace engine::tokenizer {

void MetaspaceDecoder::DecodeChain(std::vector<std::string>* tokens) const {
  std::string out;
  for (size_t i = 0; i < tokens->size(); ++i) {
    const std::string& t = (*tokens)[i];
    out.clear();
    for (size_t k = 0; k < t.size();) {
      char32_t cp = 0;
      int n = DecodeUtf8(t, k, &cp);
      if (n == 0) {  // a token with a stray byte (byte-level vocabularies): keep it
        out.push_back(t[k]);
        ++k;
        continue;
      }
      if (cp == replacement_) {
        if (!(i == 0 && prepended_)) out.push_back(' ');
      } else {
        out.append(t, k, n);
      }
      k += n;
    }
    (*tokens)[i] = out;
  }
}

}  // namespace engine::tokenizer
