// Reads the parts of a Hugging Face tokenizer.json that a BERT WordPiece
// tokenizer uses; anything it could not honour exactly is an error, not a guess.
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tokenizer_spec.h"

namespace engine::tokenizer {
namespace {

using nlohmann::json;

// Ids beyond this are certainly a corrupt file, not a vocabulary.
constexpr int64_t kMaxId = 1 << 24;

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", what));
  }
  absl::Status Unsupported(const std::string& what) const {
    return absl::UnimplementedError(absl::StrCat(path_, ": ", what));
  }

  // Sets *out to j[key] if that is present and not null; *out keeps its default otherwise.
  template <typename T>
  absl::Status Optional(const json& j, const char* key, const char* where, T* out) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return absl::OkStatus();
    try {
      *out = it->get<T>();
    } catch (const json::exception&) {
      return Error(absl::StrCat(where, ".", key, " has the wrong type: ", it->dump()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int32_t> Id(const json& v, const std::string& where) const {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= kMaxId) {
      return Error(absl::StrCat(where, " is not a valid token id: ", v.dump()));
    }
    return static_cast<int32_t>(v.get<int64_t>());
  }

  absl::Status Model(const json& root, TokenizerSpec* spec) const {
    const auto model = root.find("model");
    if (model == root.end() || !model->is_object()) return Error("missing \"model\"");
    std::string type = "WordPiece";
    if (auto s = Optional(*model, "type", "model", &type); !s.ok()) return s;
    if (type != "WordPiece") {
      return Unsupported(
          absl::StrCat("model.type \"", type, "\" is not supported (only WordPiece)"));
    }
    const auto vocab = model->find("vocab");
    if (vocab == model->end() || !vocab->is_object()) return Error("missing model.vocab");
    spec->vocab.reserve(vocab->size());
    for (const auto& [token, id] : vocab->items()) {
      auto checked = Id(id, absl::StrCat("model.vocab[\"", token, "\"]"));
      if (!checked.ok()) return checked.status();
      spec->vocab.emplace_back(token, *checked);
    }
    WordPieceOptions& wp = spec->wordpiece;
    for (auto s :
         {Optional(*model, "unk_token", "model", &wp.unk_token),
          Optional(*model, "continuing_subword_prefix", "model", &wp.continuing_subword_prefix),
          Optional(*model, "max_input_chars_per_word", "model", &wp.max_input_chars_per_word)}) {
      if (!s.ok()) return s;
    }
    if (wp.max_input_chars_per_word <= 0) {
      return Error("model.max_input_chars_per_word must be positive");
    }
    return absl::OkStatus();
  }

  absl::Status Normalizer(const json& root, TokenizerSpec* spec) const {
    const auto n = root.find("normalizer");
    NormalizerOptions& out = spec->normalizer;
    if (n == root.end() || n->is_null()) {
      out = {false, false, false, false};
      return absl::OkStatus();
    }
    std::string type;
    if (auto s = Optional(*n, "type", "normalizer", &type); !s.ok()) return s;
    if (type != "BertNormalizer") {
      return Unsupported(
          absl::StrCat("normalizer.type \"", type, "\" is not supported (only BertNormalizer)"));
    }
    bool lowercase = true;
    for (auto s : {Optional(*n, "clean_text", "normalizer", &out.clean_text),
                   Optional(*n, "handle_chinese_chars", "normalizer", &out.handle_chinese_chars),
                   Optional(*n, "lowercase", "normalizer", &lowercase)}) {
      if (!s.ok()) return s;
    }
    out.lowercase = lowercase;
    out.strip_accents = lowercase;  // null follows lowercase
    return Optional(*n, "strip_accents", "normalizer", &out.strip_accents);
  }

  absl::Status PreTokenizer(const json& root) const {
    const auto p = root.find("pre_tokenizer");
    std::string type;
    if (p != root.end() && p->is_object()) {
      if (auto s = Optional(*p, "type", "pre_tokenizer", &type); !s.ok()) return s;
    }
    if (type != "BertPreTokenizer") {
      return Unsupported(
          absl::StrCat("pre_tokenizer \"", type, "\" is not supported (only BertPreTokenizer)"));
    }
    return absl::OkStatus();
  }

  absl::Status AddedTokens(const json& root, TokenizerSpec* spec) const {
    const auto list = root.find("added_tokens");
    if (list == root.end() || list->is_null()) return absl::OkStatus();
    if (!list->is_array()) return Error("added_tokens is not a list");
    for (const json& t : *list) {
      if (!t.is_object()) return Error("added_tokens holds a non-object");
      AddedToken added;
      const auto id = t.find("id");
      if (id == t.end()) return Error("an added token has no id");
      auto checked = Id(*id, "added_tokens[].id");
      if (!checked.ok()) return checked.status();
      added.id = *checked;
      bool single_word = false;
      for (auto s : {Optional(t, "content", "added_tokens[]", &added.content),
                     Optional(t, "special", "added_tokens[]", &added.special),
                     Optional(t, "lstrip", "added_tokens[]", &added.lstrip),
                     Optional(t, "rstrip", "added_tokens[]", &added.rstrip),
                     Optional(t, "single_word", "added_tokens[]", &single_word)}) {
        if (!s.ok()) return s;
      }
      added.normalized = !added.special;  // Hugging Face's default
      if (auto s = Optional(t, "normalized", "added_tokens[]", &added.normalized); !s.ok()) {
        return s;
      }
      if (added.content.empty()) return Error("an added token has no content");
      if (single_word) {
        return Unsupported(
            absl::StrCat("added token \"", added.content, "\": single_word is not supported"));
      }
      spec->added_tokens.push_back(std::move(added));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Template> TemplateFrom(const json& items, const json& special_tokens,
                                        const char* name) const {
    if (!items.is_array()) return Error(absl::StrCat("post_processor.", name, " is not a list"));
    Template t;
    for (const json& item : items) {
      TemplatePiece piece;
      if (const auto s = item.find("SpecialToken"); s != item.end()) {
        std::string key;
        if (auto st = Optional(*s, "id", "SpecialToken", &key); !st.ok()) return st;
        if (auto st = Optional(*s, "type_id", "SpecialToken", &piece.type_id); !st.ok()) return st;
        const auto def = special_tokens.find(key);
        if (def == special_tokens.end() || !def->contains("ids") || !(*def)["ids"].is_array()) {
          return Error(absl::StrCat("post_processor.special_tokens has no ids for \"", key, "\""));
        }
        for (const json& id : (*def)["ids"]) {
          auto checked = Id(id, absl::StrCat("post_processor.special_tokens[\"", key, "\"]"));
          if (!checked.ok()) return checked.status();
          piece.ids.push_back(*checked);
        }
      } else if (const auto q = item.find("Sequence"); q != item.end()) {
        std::string which;
        if (auto st = Optional(*q, "id", "Sequence", &which); !st.ok()) return st;
        if (auto st = Optional(*q, "type_id", "Sequence", &piece.type_id); !st.ok()) return st;
        if (which != "A" && which != "B") {
          return Error(absl::StrCat("post_processor.", name, ": unknown sequence \"", which, "\""));
        }
        piece.sequence = which == "A" ? 0 : 1;
      } else {
        return Error(absl::StrCat("post_processor.", name, " holds an unknown item ", item.dump()));
      }
      t.pieces.push_back(std::move(piece));
    }
    return t;
  }

  absl::Status PostProcessor(const json& root, TokenizerSpec* spec) const {
    const auto p = root.find("post_processor");
    if (p == root.end() || !p->is_object()) {
      return Unsupported("no post_processor (a BERT tokenizer needs [CLS] and [SEP])");
    }
    std::string type;
    if (auto s = Optional(*p, "type", "post_processor", &type); !s.ok()) return s;
    if (type == "BertProcessing") {
      const auto cls = p->find("cls");
      const auto sep = p->find("sep");
      if (cls == p->end() || sep == p->end() || !cls->is_array() || !sep->is_array() ||
          cls->size() != 2 || sep->size() != 2) {
        return Error("post_processor (BertProcessing) needs cls and sep as [token, id]");
      }
      auto cls_id = Id((*cls)[1], "post_processor.cls");
      auto sep_id = Id((*sep)[1], "post_processor.sep");
      if (!cls_id.ok()) return cls_id.status();
      if (!sep_id.ok()) return sep_id.status();
      spec->single = BertTemplate(*cls_id, *sep_id, /*pair=*/false);
      spec->pair = BertTemplate(*cls_id, *sep_id, /*pair=*/true);
      return absl::OkStatus();
    }
    if (type != "TemplateProcessing") {
      return Unsupported(absl::StrCat("post_processor.type \"", type,
                                      "\" is not supported (TemplateProcessing, BertProcessing)"));
    }
    const json no_specials = json::object();
    const auto specials = p->find("special_tokens");
    const json& special_tokens =
        specials != p->end() && specials->is_object() ? *specials : no_specials;
    if (!p->contains("single") || !p->contains("pair")) {
      return Error("post_processor (TemplateProcessing) needs single and pair");
    }
    auto single = TemplateFrom((*p)["single"], special_tokens, "single");
    if (!single.ok()) return single.status();
    auto pair = TemplateFrom((*p)["pair"], special_tokens, "pair");
    if (!pair.ok()) return pair.status();
    spec->single = *std::move(single);
    spec->pair = *std::move(pair);
    return absl::OkStatus();
  }

  absl::Status Padding(const json& root, TokenizerSpec* spec) const {
    const auto p = root.find("padding");
    if (p == root.end() || !p->is_object() || !p->contains("pad_id")) return absl::OkStatus();
    auto id = Id((*p)["pad_id"], "padding.pad_id");
    if (!id.ok()) return id.status();
    spec->pad_id = *id;
    return absl::OkStatus();
  }

 private:
  std::string path_;
};

}  // namespace

absl::StatusOr<TokenizerSpec> ReadTokenizerJson(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  const Reader reader(path);
  const json root = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return reader.Error("not valid JSON");
  if (!root.is_object()) return reader.Error("not a JSON object");

  TokenizerSpec spec;
  spec.source = path;
  for (auto s : {reader.Model(root, &spec), reader.Normalizer(root, &spec),
                 reader.PreTokenizer(root), reader.AddedTokens(root, &spec),
                 reader.PostProcessor(root, &spec), reader.Padding(root, &spec)}) {
    if (!s.ok()) return s;
  }
  return spec;
}

}  // namespace engine::tokenizer
