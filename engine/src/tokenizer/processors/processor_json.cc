// post_processor objects of tokenizer.json, as templates.
#include "parts_from_json.h"

namespace engine::tokenizer {
namespace {

absl::StatusOr<Template> TemplateFrom(const json& items, const json& special_tokens,
                                      const std::string& where) {
  if (!items.is_array()) return JsonError(where, "is not a list");
  Template t;
  for (const json& item : items) {
    TemplatePiece piece;
    if (!item.is_object()) return JsonError(where, absl::StrCat("holds ", item.dump()));
    if (const auto s = item.find("SpecialToken"); s != item.end()) {
      std::string key;
      if (auto st = RequiredField(*s, "id", where, &key); !st.ok()) return st;
      if (auto st = OptionalField(*s, "type_id", where, &piece.type_id); !st.ok()) return st;
      const auto def = special_tokens.find(key);
      if (def == special_tokens.end() || !def->is_object() || !def->contains("ids") ||
          !(*def)["ids"].is_array()) {
        return JsonError(where, absl::StrCat("special_tokens has no ids for \"", key, "\""));
      }
      for (const json& id : (*def)["ids"]) {
        auto checked = TokenId(id, absl::StrCat(where, ": special_tokens[\"", key, "\"]"));
        if (!checked.ok()) return checked.status();
        piece.ids.push_back(*checked);
      }
    } else if (const auto q = item.find("Sequence"); q != item.end()) {
      std::string which;
      if (auto st = RequiredField(*q, "id", where, &which); !st.ok()) return st;
      if (auto st = OptionalField(*q, "type_id", where, &piece.type_id); !st.ok()) return st;
      if (which != "A" && which != "B") {
        return JsonError(where, absl::StrCat("unknown sequence \"", which, "\""));
      }
      piece.sequence = which == "A" ? 0 : 1;
    } else {
      return JsonError(where, absl::StrCat("holds an unknown item ", item.dump()));
    }
    t.pieces.push_back(std::move(piece));
  }
  return t;
}

// [token, id] of BertProcessing / RobertaProcessing.
absl::StatusOr<int32_t> TokenPairId(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2) {
    return JsonError(where, absl::StrCat(key, " must be [token, id]"));
  }
  return TokenId((*it)[1], absl::StrCat(where, ".", key));
}

// trim_offsets (default true) and add_prefix_space (default true), as the Rust crate.
absl::Status Trimming(const json& j, const std::string& where, OffsetTrimming* out) {
  out->enabled = true;
  out->add_prefix_space = true;
  for (auto s : {OptionalField(j, "trim_offsets", where, &out->enabled),
                 OptionalField(j, "add_prefix_space", where, &out->add_prefix_space)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Templates> PostProcessorFromJson(const json& j, const std::string& where) {
  auto type = PartType(j, where);
  if (!type.ok()) return type.status();
  if (*type == "BertProcessing" || *type == "RobertaProcessing") {
    auto cls = TokenPairId(j, "cls", where);
    auto sep = TokenPairId(j, "sep", where);
    if (!cls.ok()) return cls.status();
    if (!sep.ok()) return sep.status();
    const auto make = *type == "BertProcessing" ? BertTemplate : RobertaTemplate;
    Templates t{make(*cls, *sep, false), make(*cls, *sep, true), {}};
    if (*type == "RobertaProcessing") {
      if (auto s = Trimming(j, where, &t.trim); !s.ok()) return s;
    }
    return t;
  }
  if (*type == "TemplateProcessing") {
    const json no_specials = json::object();
    const auto specials = j.find("special_tokens");
    const json& special_tokens =
        specials != j.end() && specials->is_object() ? *specials : no_specials;
    if (!j.contains("single") || !j.contains("pair")) {
      return JsonError(where, "TemplateProcessing needs single and pair");
    }
    auto single = TemplateFrom(j["single"], special_tokens, where + ".single");
    if (!single.ok()) return single.status();
    auto pair = TemplateFrom(j["pair"], special_tokens, where + ".pair");
    if (!pair.ok()) return pair.status();
    return Templates{*std::move(single), *std::move(pair), {}};
  }
  if (*type == "ByteLevel") {
    // Only trims offsets; no special tokens (the second text is of type 1).
    Templates t;
    t.single.pieces = {{0, 0, {}}};
    t.pair.pieces = {{0, 0, {}}, {1, 1, {}}};
    if (auto s = Trimming(j, where, &t.trim); !s.ok()) return s;
    return t;
  }
  if (*type == "Sequence") {
    // Only one step may add special tokens; the others (ByteLevel) only trim offsets.
    const auto list = j.find("processors");
    if (list == j.end() || !list->is_array()) return JsonError(where, "missing processors list");
    Templates result;
    result.single.pieces = {{0, 0, {}}};
    result.pair.pieces = {{0, 0, {}}, {1, 1, {}}};
    int adding = 0;
    OffsetTrimming trim;
    for (size_t i = 0; i < list->size(); ++i) {
      auto step = PostProcessorFromJson((*list)[i], absl::StrCat(where, ".processors[", i, "]"));
      if (!step.ok()) return step.status();
      if (step->trim.enabled) trim = step->trim;
      if (step->single.NumSpecialTokens() + step->pair.NumSpecialTokens() == 0) continue;
      if (++adding > 1) {
        return absl::UnimplementedError(
            absl::StrCat(where, ": more than one processor adding special tokens"));
      }
      result = *std::move(step);
    }
    if (trim.enabled) result.trim = trim;
    return result;
  }
  return NotImplemented(where, *type);
}

}  // namespace engine::tokenizer
