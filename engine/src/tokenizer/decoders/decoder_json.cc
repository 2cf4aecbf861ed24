// decoder objects of tokenizer.json.
#include "decoders/byte_level_decoder.h"
#include "decoders/metaspace_decoder.h"
#include "decoders/simple_decoders.h"
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
  if (*type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (*type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (*type == "Fuse") return std::make_unique<FuseDecoder>();
  if (*type == "Strip") {
    std::string content;
    int start = 0;
    int stop = 0;
    for (auto s :
         {RequiredField(j, "content", where, &content), OptionalField(j, "start", where, &start),
          OptionalField(j, "stop", where, &stop)}) {
      if (!s.ok()) return s;
    }
    return std::make_unique<StripDecoder>(content, start, stop);
  }
  if (*type == "Replace") {
    std::string content;
    std::string pattern;
    if (auto s = RequiredField(j, "content", where, &content); !s.ok()) return s;
    const auto p = j.find("pattern");
    if (p == j.end() || !p->is_object() || !p->contains("String")) {
      return absl::UnimplementedError(
          absl::StrCat(where, ": only String patterns are implemented for the Replace decoder"));
    }
    if (auto s = RequiredField(*p, "String", where, &pattern); !s.ok()) return s;
    return std::make_unique<ReplaceDecoder>(pattern, content);
  }
  if (*type == "Sequence") {
    const auto list = j.find("decoders");
    if (list == j.end() || !list->is_array()) return JsonError(where, "missing decoders list");
    std::vector<std::unique_ptr<Decoder>> steps;
    for (size_t i = 0; i < list->size(); ++i) {
      auto step = DecoderFromJson((*list)[i], absl::StrCat(where, ".decoders[", i, "]"));
      if (!step.ok()) return step.status();
      steps.push_back(*std::move(step));
    }
    return std::make_unique<DecoderSequence>(std::move(steps));
  }
  return NotImplemented(where, *type);
}

}  // namespace engine::tokenizer
