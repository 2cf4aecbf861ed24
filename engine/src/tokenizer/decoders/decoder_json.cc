// decoder objects of tokenizer.json.
#include "decoders/metaspace_decoder.h"
#include "decoders/wordpiece_decoder.h"
#include "parts_from_json.h"
#include "utf8.h"

namespace engine::tokenizer {

absl::StatusOr<std::unique_ptr<Decoder>> DecoderFromJson(const json& j, const std::string& where) {
  auto type = PartType(j, where);
  if (!type.ok()) return type.status();
  if (*type == "WordPiece") {
    std::string prefix = "##";
    bool cleanup = true;
    for (auto s : {OptionalField(j, "prefix", where, &prefix),
                   OptionalField(j, "cleanup", where, &cleanup)}) {
      if (!s.ok()) return s;
    }
    return std::make_unique<WordPieceDecoder>(prefix, cleanup);
  }
  if (*type == "Metaspace") {
    std::string replacement = "\xE2\x96\x81";
    bool add_prefix_space = true;
    std::string scheme;
    for (auto s : {OptionalField(j, "replacement", where, &replacement),
                   OptionalField(j, "add_prefix_space", where, &add_prefix_space),
                   OptionalField(j, "prepend_scheme", where, &scheme)}) {
      if (!s.ok()) return s;
    }
    char32_t cp = 0;
    if (replacement.empty() ||
        DecodeUtf8(replacement, 0, &cp) != static_cast<int>(replacement.size())) {
      return JsonError(where, "replacement must be one character");
    }
    const bool prepended = scheme.empty() ? add_prefix_space : scheme != "never";
    return std::make_unique<MetaspaceDecoder>(cp, prepended);
  }
  return NotImplemented(where, *type);
}

}  // namespace engine::tokenizer
