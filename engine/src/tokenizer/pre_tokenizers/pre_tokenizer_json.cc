// pre_tokenizer objects of tokenizer.json.
#include "parts_from_json.h"
#include "pre_tokenizers/bert_pre_tokenizer.h"
#include "pre_tokenizers/byte_level.h"
#include "pre_tokenizers/char_class_splits.h"
#include "pre_tokenizers/metaspace.h"
#include "pre_tokenizers/sequence.h"
#include "pre_tokenizers/split.h"
#include "pre_tokenizers/whitespace_split.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

absl::StatusOr<std::unique_ptr<PreTokenizer>> FromMetaspace(const json& j,
                                                            const std::string& where) {
  std::string replacement = "\xE2\x96\x81";  // U+2581
  if (auto s = OptionalField(j, "replacement", where, &replacement); !s.ok()) return s;
  char32_t cp = 0;
  if (replacement.empty() ||
      DecodeUtf8(replacement, 0, &cp) != static_cast<int>(replacement.size())) {
    return JsonError(where, "replacement must be one character");
  }
  // Older files have add_prefix_space; newer prepend_scheme (which wins).
  bool add_prefix_space = true;
  if (auto s = OptionalField(j, "add_prefix_space", where, &add_prefix_space); !s.ok()) return s;
  PrependScheme scheme = add_prefix_space ? PrependScheme::kAlways : PrependScheme::kNever;
  std::string name;
  if (auto s = OptionalField(j, "prepend_scheme", where, &name); !s.ok()) return s;
  if (name == "always") {
    scheme = PrependScheme::kAlways;
  } else if (name == "first") {
    scheme = PrependScheme::kFirst;
  } else if (name == "never") {
    scheme = PrependScheme::kNever;
  } else if (!name.empty()) {
    return JsonError(where, absl::StrCat("unknown prepend_scheme \"", name, "\""));
  }
  bool split = true;
  if (auto s = OptionalField(j, "split", where, &split); !s.ok()) return s;
  return std::make_unique<Metaspace>(cp, scheme, split);
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> FromPreTokenizerSequence(const json& j,
                                                                       const std::string& where) {
  const auto list = j.find("pretokenizers");
  if (list == j.end() || !list->is_array()) return JsonError(where, "missing pretokenizers list");
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  for (size_t i = 0; i < list->size(); ++i) {
    auto step = PreTokenizerFromJson((*list)[i], absl::StrCat(where, ".pretokenizers[", i, "]"));
    if (!step.ok()) return step.status();
    steps.push_back(*std::move(step));
  }
  return std::make_unique<PreTokenizerSequence>(std::move(steps));
}

}  // namespace

absl::StatusOr<Pattern> PatternFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return JsonError(where, "pattern is not an object");
  std::string text;
  absl::StatusOr<Pattern> p = JsonError(where, "pattern is neither String nor Regex");
  if (j.contains("String")) {
    if (auto s = RequiredField(j, "String", where, &text); !s.ok()) return s;
    p = Pattern::Literal(text);
  } else if (j.contains("Regex")) {
    if (auto s = RequiredField(j, "Regex", where, &text); !s.ok()) return s;
    p = Pattern::Regex(text);
  }
  if (!p.ok()) return JsonError(where, std::string(p.status().message()));
  return p;
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizerFromJson(const json& j,
                                                                   const std::string& where) {
  auto type = PartType(j, where);
  if (!type.ok()) return type.status();
  if (*type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (*type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (*type == "Metaspace") return FromMetaspace(j, where);
  if (*type == "Sequence") return FromPreTokenizerSequence(j, where);
  if (*type == "Whitespace") return std::make_unique<WhitespacePreTokenizer>();
  if (*type == "Split") {
    const auto pattern = j.find("pattern");
    if (pattern == j.end()) return JsonError(where, "missing pattern");
    auto p = PatternFromJson(*pattern, where);
    if (!p.ok()) return p.status();
    std::string name;
    bool invert = false;
    for (auto s :
         {RequiredField(j, "behavior", where, &name), OptionalField(j, "invert", where, &invert)}) {
      if (!s.ok()) return s;
    }
    auto behavior = ParseSplitBehavior(name);
    if (!behavior.ok()) return JsonError(where, std::string(behavior.status().message()));
    return std::make_unique<Split>(*std::move(p), *behavior, invert);
  }
  if (*type == "Punctuation") {
    std::string name = "Isolated";
    if (auto s = OptionalField(j, "behavior", where, &name); !s.ok()) return s;
    auto behavior = ParseSplitBehavior(name);
    if (!behavior.ok()) return JsonError(where, std::string(behavior.status().message()));
    return std::make_unique<Punctuation>(*behavior);
  }
  if (*type == "Digits") {
    bool individual = false;
    if (auto s = OptionalField(j, "individual_digits", where, &individual); !s.ok()) return s;
    return std::make_unique<Digits>(individual);
  }
  if (*type == "ByteLevel") {
    bool add_prefix_space = true;
    bool use_regex = true;
    for (auto s : {OptionalField(j, "add_prefix_space", where, &add_prefix_space),
                   OptionalField(j, "use_regex", where, &use_regex)}) {
      if (!s.ok()) return s;
    }
    return std::make_unique<ByteLevel>(add_prefix_space, use_regex);
  }
  return NotImplemented(where, *type);
}

}  // namespace engine::tokenizer
