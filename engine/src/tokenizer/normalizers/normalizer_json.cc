// normalizer objects of tokenizer.json.
#include "absl/strings/escaping.h"
#include "normalizers/bert_normalizer.h"
#include "normalizers/precompiled.h"
#include "normalizers/replace.h"
#include "normalizers/sequence.h"
#include "normalizers/simple_normalizers.h"
#include "normalizers/unicode_form.h"
#include "parts_from_json.h"
#include "utf8.h"

namespace engine::tokenizer {
namespace {

absl::StatusOr<std::unique_ptr<Normalizer>> Bert(const json& j, const std::string& where) {
  NormalizerOptions o;
  bool lowercase = true;
  for (auto s : {OptionalField(j, "clean_text", where, &o.clean_text),
                 OptionalField(j, "handle_chinese_chars", where, &o.handle_chinese_chars),
                 OptionalField(j, "lowercase", where, &lowercase)}) {
    if (!s.ok()) return s;
  }
  o.lowercase = lowercase;
  o.strip_accents = lowercase;  // null follows lowercase
  if (auto s = OptionalField(j, "strip_accents", where, &o.strip_accents); !s.ok()) return s;
  return std::make_unique<BertNormalizer>(o);
}

absl::StatusOr<std::unique_ptr<Normalizer>> FromPrecompiled(const json& j,
                                                            const std::string& where) {
  std::string base64;
  if (auto s = RequiredField(j, "precompiled_charsmap", where, &base64); !s.ok()) return s;
  std::string blob;
  if (!absl::Base64Unescape(base64, &blob)) {
    return JsonError(where, "precompiled_charsmap is not base64");
  }
  auto p = Precompiled::Create(blob);
  if (!p.ok()) return JsonError(where, std::string(p.status().message()));
  return std::unique_ptr<Normalizer>(*std::move(p));
}

absl::StatusOr<std::unique_ptr<Normalizer>> FromReplace(const json& j, const std::string& where) {
  std::string content;
  if (auto s = RequiredField(j, "content", where, &content); !s.ok()) return s;
  const auto pattern = j.find("pattern");
  if (pattern == j.end() || !pattern->is_object()) return JsonError(where, "missing pattern");
  auto p = PatternFromJson(*pattern, where);
  if (!p.ok()) return p.status();
  auto r = Replace::Create(*std::move(p), content);
  if (!r.ok()) return JsonError(where, std::string(r.status().message()));
  return std::unique_ptr<Normalizer>(*std::move(r));
}

absl::StatusOr<std::unique_ptr<Normalizer>> FromNormalizerSequence(const json& j,
                                                                   const std::string& where) {
  const auto list = j.find("normalizers");
  if (list == j.end() || !list->is_array()) return JsonError(where, "missing normalizers list");
  std::vector<std::unique_ptr<Normalizer>> steps;
  for (size_t i = 0; i < list->size(); ++i) {
    auto step = NormalizerFromJson((*list)[i], absl::StrCat(where, ".normalizers[", i, "]"));
    if (!step.ok()) return step.status();
    steps.push_back(*std::move(step));
  }
  return std::make_unique<NormalizerSequence>(std::move(steps));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Normalizer>> NormalizerFromJson(const json& j,
                                                               const std::string& where) {
  auto type = PartType(j, where);
  if (!type.ok()) return type.status();
  if (*type == "BertNormalizer") return Bert(j, where);
  if (*type == "Precompiled") return FromPrecompiled(j, where);
  if (*type == "Replace") return FromReplace(j, where);
  if (*type == "Sequence") return FromNormalizerSequence(j, where);
  const auto form = [](UnicodeForm f) -> absl::StatusOr<std::unique_ptr<Normalizer>> {
    auto n = UnicodeNormalizer::Create(f);
    if (!n.ok()) return n.status();
    return std::unique_ptr<Normalizer>(*std::move(n));
  };
  if (*type == "NFC") return form(UnicodeForm::kNfc);
  if (*type == "NFD") return form(UnicodeForm::kNfd);
  if (*type == "NFKC") return form(UnicodeForm::kNfkc);
  if (*type == "NFKD") return form(UnicodeForm::kNfkd);
  if (*type == "Lowercase") return std::make_unique<Lowercase>();
  if (*type == "StripAccents") return std::make_unique<StripAccents>();
  if (*type == "Strip") {
    bool left = true;
    bool right = true;
    for (auto s : {OptionalField(j, "strip_left", where, &left),
                   OptionalField(j, "strip_right", where, &right)}) {
      if (!s.ok()) return s;
    }
    return std::make_unique<Strip>(left, right);
  }
  if (*type == "Prepend") {
    std::string prepend;
    if (auto s = RequiredField(j, "prepend", where, &prepend); !s.ok()) return s;
    if (FindInvalidUtf8(prepend) != std::string::npos)
      return JsonError(where, "prepend is not UTF-8");
    std::u32string cps;
    for (size_t i = 0; i < prepend.size();) {
      char32_t cp = 0;
      i += DecodeUtf8(prepend, i, &cp);
      cps.push_back(cp);
    }
    return std::make_unique<Prepend>(std::move(cps));
  }
  return NotImplemented(where, *type);
}

}  // namespace engine::tokenizer
