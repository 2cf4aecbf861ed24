// tokenizer.json (Hugging Face `tokenizers` serialization) into a Pipeline:
// each part from its own object; anything it could not honour exactly is an
// error, not a guess.
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/model_files.h"
#include "json_document.h"
#include "json_fields.h"
#include "parts_from_json.h"
#include "tokenizer_spec.h"

namespace engine::tokenizer {
namespace {

absl::Status ReadAddedTokens(const json& root, Pipeline* p) {
  const auto list = root.find("added_tokens");
  if (list == root.end() || list->is_null()) return absl::OkStatus();
  if (!list->is_array()) return JsonError("added_tokens", "is not a list");
  for (const json& t : *list) {
    const std::string where = "added_tokens[]";
    if (!t.is_object()) return JsonError(where, "holds a non-object");
    AddedToken added;
    const auto id = t.find("id");
    if (id == t.end()) return JsonError(where, "an added token has no id");
    auto checked = TokenId(*id, where + ".id");
    if (!checked.ok()) return checked.status();
    added.id = *checked;
    for (auto s : {OptionalField(t, "content", where, &added.content),
                   OptionalField(t, "special", where, &added.special),
                   OptionalField(t, "lstrip", where, &added.lstrip),
                   OptionalField(t, "rstrip", where, &added.rstrip),
                   OptionalField(t, "single_word", where, &added.single_word)}) {
      if (!s.ok()) return s;
    }
    added.normalized = !added.special;  // Hugging Face's default
    if (auto s = OptionalField(t, "normalized", where, &added.normalized); !s.ok()) return s;
    if (added.content.empty()) return JsonError(where, "an added token has no content");
    p->added_tokens.push_back(std::move(added));
  }
  return absl::OkStatus();
}

absl::Status ReadParts(JsonDocument& doc, Pipeline* p) {
  const json& root = doc.root;
  const auto model = root.find("model");
  if (model == root.end() || !model->is_object()) {
    return absl::InvalidArgumentError("missing \"model\"");
  }
  auto m = ModelFromJson(*model, "model", doc.has_piece_list ? &doc.pieces : nullptr);
  if (!m.ok()) return m.status();
  p->model = *std::move(m);

  const auto present = [&root](const char* key) {
    const auto it = root.find(key);
    return it != root.end() && !it->is_null();
  };
  if (present("normalizer")) {
    auto n = NormalizerFromJson(root["normalizer"], "normalizer");
    if (!n.ok()) return n.status();
    p->normalizer = *std::move(n);
  }
  if (present("pre_tokenizer")) {
    auto t = PreTokenizerFromJson(root["pre_tokenizer"], "pre_tokenizer");
    if (!t.ok()) return t.status();
    p->pre_tokenizer = *std::move(t);
  }
  if (present("post_processor")) {
    auto t = PostProcessorFromJson(root["post_processor"], "post_processor");
    if (!t.ok()) return t.status();
    p->single = std::move(t->single);
    p->pair = std::move(t->pair);
    p->trim = t->trim;
  } else {
    // No post-processor: the texts alone, the second of type 1.
    p->single.pieces = {{0, 0, {}}};
    p->pair.pieces = {{0, 0, {}}, {1, 1, {}}};
  }
  if (present("decoder")) {
    auto d = DecoderFromJson(root["decoder"], "decoder");
    if (!d.ok()) return d.status();
    p->decoder = *std::move(d);
  }
  if (auto s = ReadAddedTokens(root, p); !s.ok()) return s;
  const auto padding = root.find("padding");
  if (padding != root.end() && padding->is_object() && padding->contains("pad_id")) {
    auto id = TokenId((*padding)["pad_id"], "padding.pad_id");
    if (!id.ok()) return id.status();
    p->pad_id = *id;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Pipeline> ReadTokenizerJson(const std::string& path) {
  absl::StatusOr<std::string> text = ReadModelFile(path);
  if (!text.ok()) return text.status();
  return ParseTokenizerJsonText(*text, path);
}

absl::StatusOr<Pipeline> ParseTokenizerJsonText(std::string_view text, const std::string& path) {
  absl::StatusOr<JsonDocument> doc = ParseTokenizerJson(text);
  if (!doc.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", doc.status().message()));
  if (!doc->root.is_object()) return absl::InvalidArgumentError(path + ": not a JSON object");
  Pipeline p;
  p.source = path;
  if (absl::Status s = ReadParts(*doc, &p); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  }
  return p;
}

}  // namespace engine::tokenizer
