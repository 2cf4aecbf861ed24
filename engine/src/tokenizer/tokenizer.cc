// engine::Tokenizer: loading, special tokens around the texts, truncation, decoding.
#include "engine/tokenizer.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pipeline.h"
#include "processors/template_processing.h"
#include "text_encoder.h"
#include "tokenizer_spec.h"
#include "truncation.h"
#include "unicode.h"
#include "utf8.h"

namespace engine {

using tokenizer::EncodeScratch;
using tokenizer::Piece;
using tokenizer::Pipeline;
using tokenizer::Template;
using tokenizer::TokenizerSpec;

namespace {

struct Scratch {
  EncodeScratch encode;
  std::vector<Piece> first;
  std::vector<Piece> second;

  void Trim() {
    constexpr size_t kKeep = 1 << 16;
    encode.Trim();
    if (first.capacity() > kKeep) std::vector<Piece>().swap(first);
    if (second.capacity() > kKeep) std::vector<Piece>().swap(second);
  }
};

// Per thread, so that Encode is thread-safe without locks or allocation.
Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

absl::Status CheckText(std::string_view text, const char* name) {
  if (text.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is larger than 2 GiB"));
  }
  if (const size_t bad = tokenizer::FindInvalidUtf8(text); bad != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is not valid UTF-8 (byte ", bad, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckMaxLength(int max_length, int num_special) {
  if (max_length < 0 || (max_length > 0 && max_length < num_special)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_length ", max_length, " leaves no room for the ", num_special, " special tokens"));
  }
  return absl::OkStatus();
}

}  // namespace

struct Tokenizer::Impl {
  explicit Impl(Pipeline p)
      : parts(std::move(p)),
        encoder(parts.normalizer.get(), parts.pre_tokenizer.get(), parts.model.get(),
                parts.added_tokens) {}

  // Fills the template with the first `keep_*` pieces of each text.
  // The kept tokens of one text: [begin, end) of its pieces.
  struct Kept {
    const std::vector<Piece>* pieces = nullptr;
    size_t begin = 0;
    size_t end = 0;
  };
  static Kept Keep(const std::vector<Piece>& pieces, int count, TruncationSide side) {
    const size_t n = static_cast<size_t>(count);
    if (side == TruncationSide::kLeft) return {&pieces, pieces.size() - n, pieces.size()};
    return {&pieces, 0, n};
  }

  // Without `add_special`, the template's special tokens are left out.
  Encoding Assemble(const Template& t, const Kept& first, const Kept& second,
                    bool add_special) const {
    Encoding enc;
    const size_t total = (first.end - first.begin) + (second.end - second.begin) +
                         static_cast<size_t>(add_special ? t.NumSpecialTokens() : 0);
    enc.ids.reserve(total);
    enc.token_type_ids.reserve(total);
    enc.tokens.reserve(total);
    enc.offsets.reserve(total);
    const auto add = [&](int32_t id, int32_t type, int32_t begin, int32_t end) {
      enc.ids.push_back(id);
      enc.token_type_ids.push_back(type);
      enc.tokens.push_back(id_to_token[id]);
      enc.offsets.emplace_back(begin, end);
    };
    for (const tokenizer::TemplatePiece& p : t.pieces) {
      if (p.sequence < 0) {
        if (add_special) {
          for (int32_t id : p.ids) add(id, p.type_id, 0, 0);
        }
        continue;
      }
      const Kept& kept = p.sequence == 0 ? first : second;
      if (kept.pieces == nullptr) continue;
      for (size_t i = kept.begin; i < kept.end; ++i) {
        const Piece& piece = (*kept.pieces)[i];
        int32_t begin = piece.begin;
        int32_t end = piece.end;
        // As Hugging Face, offsets are trimmed after truncation: the first
        // kept token is the text's first.
        tokenizer::TrimOffsets(parts.trim, id_to_token[piece.id], i == kept.begin, &begin, &end);
        add(piece.id, p.type_id, begin, end);
      }
    }
    return enc;
  }

  Pipeline parts;
  tokenizer::TextEncoder encoder;
  std::vector<std::string> id_to_token;
  std::vector<bool> is_special;  // special added tokens, skipped when decoding
  int32_t cls = -1;
  int32_t sep = -1;
  int32_t pad = 0;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& model_dir) {
  namespace fs = std::filesystem;
  const fs::path dir(model_dir);
  std::error_code ec;
  // symlink_status: a dangling symlink (a cache snapshot's missing blob) is
  // opened, and the error says so, rather than taken for no file.
  const auto present = [&ec](const std::string& path) {
    return fs::symlink_status(path, ec).type() != fs::file_type::not_found && !ec;
  };
  const std::string json_path = (dir / "tokenizer.json").string();
  if (present(json_path)) {
    absl::StatusOr<Pipeline> p = tokenizer::ReadTokenizerJson(json_path);
    if (!p.ok()) return p.status();
    return FromPipeline(*std::move(p));
  }
  const std::string vocab_path = (dir / "vocab.txt").string();
  if (present(vocab_path)) {
    absl::StatusOr<TokenizerSpec> spec =
        tokenizer::ReadVocabTxt(vocab_path, (dir / "tokenizer_config.json").string());
    if (!spec.ok()) return spec.status();
    absl::StatusOr<Pipeline> p = tokenizer::BertPipeline(*std::move(spec));
    if (!p.ok()) return p.status();
    return FromPipeline(*std::move(p));
  }
  return absl::NotFoundError(absl::StrCat(model_dir, ": has neither tokenizer.json nor vocab.txt"));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromTokenizerJson(std::string_view json,
                                                                        const std::string& source) {
  absl::StatusOr<Pipeline> p = tokenizer::ParseTokenizerJsonText(json, source);
  if (!p.ok()) return p.status();
  return FromPipeline(*std::move(p));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromVocabTxt(const std::string& vocab_text,
                                                                   const std::string& vocab_path,
                                                                   const std::string* config_text,
                                                                   const std::string& config_path) {
  absl::StatusOr<TokenizerSpec> spec =
      tokenizer::ParseVocabTxt(vocab_text, vocab_path, config_text, config_path);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<Pipeline> p = tokenizer::BertPipeline(*std::move(spec));
  if (!p.ok()) return p.status();
  return FromPipeline(*std::move(p));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromVocab(std::vector<std::string> vocab,
                                                                const TokenizerOptions& options) {
  absl::StatusOr<Pipeline> p =
      tokenizer::BertPipeline(tokenizer::SpecFromOptions(std::move(vocab), options, "vocabulary"));
  if (!p.ok()) return p.status();
  return FromPipeline(*std::move(p));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromPipeline(Pipeline p) {
  const auto error = [&p](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(p.source, ": ", what));
  };
  if (!tokenizer::UnicodeDataAvailable()) {
    return absl::InternalError("ICU's normalization data is not available");
  }
  // Ids index one table of token strings: the model's vocabulary, then added tokens.
  const std::vector<std::pair<std::string, int32_t>> vocab = p.model->Vocab();
  if (vocab.empty()) return error("the vocabulary is empty");
  int32_t size = 0;
  for (const auto& [token, id] : vocab) size = std::max(size, id + 1);
  for (const tokenizer::AddedToken& t : p.added_tokens) size = std::max(size, t.id + 1);
  std::vector<std::string> id_to_token(size);
  std::vector<bool> is_special(size, false);
  for (const auto& [token, id] : vocab) id_to_token[id] = token;
  for (const tokenizer::AddedToken& t : p.added_tokens) {
    id_to_token[t.id] = t.content;
    is_special[t.id] = t.special;
  }
  for (const Template* t : {&p.single, &p.pair}) {
    int sequences = 0;
    for (const tokenizer::TemplatePiece& piece : t->pieces) {
      for (int32_t id : piece.ids) {
        if (id < 0 || id >= size) {
          return error(
              "a special token of the post-processor ([CLS]/[SEP]) is not in the vocabulary");
        }
      }
      if (piece.sequence >= 0) ++sequences;
    }
    if (sequences != (t == &p.single ? 1 : 2)) {
      return error("the post-processor template must hold each text exactly once");
    }
  }
  const int32_t pad_id = p.pad_id;
  auto impl = std::make_unique<Impl>(std::move(p));
  impl->id_to_token = std::move(id_to_token);
  impl->is_special = std::move(is_special);
  // The first special token opens and the last closes the single-text template.
  for (const tokenizer::TemplatePiece& piece : impl->parts.single.pieces) {
    if (piece.sequence >= 0 || piece.ids.empty()) continue;
    if (impl->cls < 0) impl->cls = piece.ids.front();
    impl->sep = piece.ids.back();
  }
  if (pad_id >= 0 && pad_id < size) {
    impl->pad = pad_id;
  } else if (const int32_t id = impl->parts.model->TokenToId("[PAD]"); id >= 0) {
    impl->pad = id;
  } else if (const int32_t id = impl->parts.model->TokenToId("<pad>"); id >= 0) {
    impl->pad = id;
  }
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

absl::StatusOr<Encoding> Tokenizer::Encode(std::string_view text, int max_length,
                                           TruncationSide side, bool add_special_tokens) const {
  if (auto s = CheckText(text, "text"); !s.ok()) return s;
  const int num_special = add_special_tokens ? impl_->parts.single.NumSpecialTokens() : 0;
  if (auto s = CheckMaxLength(max_length, num_special); !s.ok()) return s;
  Scratch& s = ThreadScratch();
  impl_->encoder.Encode(text, &s.encode, &s.first);
  int keep = static_cast<int>(s.first.size());
  int no_second = -1;
  if (max_length > 0) tokenizer::TruncateLongestFirst(max_length, num_special, &keep, &no_second);
  Encoding enc =
      impl_->Assemble(impl_->parts.single, Impl::Keep(s.first, keep, side), {}, add_special_tokens);
  s.Trim();
  return enc;
}

absl::StatusOr<Encoding> Tokenizer::EncodePair(std::string_view text, std::string_view text_pair,
                                               int max_length, TruncationSide side,
                                               bool add_special_tokens,
                                               TruncationStrategy strategy) const {
  if (auto s = CheckText(text, "text"); !s.ok()) return s;
  if (auto s = CheckText(text_pair, "text_pair"); !s.ok()) return s;
  const int num_special = add_special_tokens ? impl_->parts.pair.NumSpecialTokens() : 0;
  if (auto s = CheckMaxLength(max_length, num_special); !s.ok()) return s;
  Scratch& s = ThreadScratch();
  impl_->encoder.Encode(text, &s.encode, &s.first);
  impl_->encoder.Encode(text_pair, &s.encode, &s.second);
  int keep_first = static_cast<int>(s.first.size());
  int keep_second = static_cast<int>(s.second.size());
  if (max_length > 0 && strategy == TruncationStrategy::kOnlySecond) {
    // The crate's OnlySecond: to_remove = total - max_length comes off the
    // second text, which must keep at least one token.
    const int to_remove = keep_first + keep_second + num_special - max_length;
    if (to_remove > 0) {
      if (keep_second <= to_remove) {
        s.Trim();
        return absl::InvalidArgumentError(absl::StrCat(
            "the first text takes ", keep_first, " of the ", max_length - num_special,
            " tokens a pair may have, leaving the second text none (only_second truncation)"));
      }
      keep_second -= to_remove;
    }
  } else if (max_length > 0) {
    keep_first = tokenizer::TokensBeforeEarlyExit(s.first, max_length, side);
    keep_second = tokenizer::TokensBeforeEarlyExit(s.second, max_length, side);
    tokenizer::TruncateLongestFirst(max_length, num_special, &keep_first, &keep_second);
  }
  Encoding enc = impl_->Assemble(impl_->parts.pair, Impl::Keep(s.first, keep_first, side),
                                 Impl::Keep(s.second, keep_second, side), add_special_tokens);
  s.Trim();
  return enc;
}

absl::StatusOr<std::string> Tokenizer::Decode(const std::vector<int32_t>& ids,
                                              bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  const auto size = static_cast<int32_t>(impl_->id_to_token.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (id < 0 || id >= size) {
      return absl::InvalidArgumentError(
          absl::StrCat("id ", id, " at index ", i, " is outside the vocabulary (size ", size, ")"));
    }
    if (skip_special_tokens && impl_->is_special[id]) continue;
    tokens.push_back(impl_->id_to_token[id]);
  }
  if (impl_->parts.decoder == nullptr) return absl::StrJoin(tokens, " ");
  impl_->parts.decoder->DecodeChain(&tokens);
  return absl::StrJoin(tokens, "");
}

int Tokenizer::num_special_tokens(bool pair) const {
  return (pair ? impl_->parts.pair : impl_->parts.single).NumSpecialTokens();
}

const std::string& Tokenizer::source() const { return impl_->parts.source; }

int Tokenizer::vocab_size() const { return static_cast<int>(impl_->id_to_token.size()); }
int Tokenizer::cls_id() const { return impl_->cls; }
int Tokenizer::sep_id() const { return impl_->sep; }
int Tokenizer::pad_id() const { return impl_->pad; }
int Tokenizer::unk_id() const { return impl_->parts.model->unk_id(); }

int32_t Tokenizer::TokenId(std::string_view token) const {
  for (const tokenizer::AddedToken& added : impl_->parts.added_tokens) {
    if (added.content == token) return added.id;
  }
  return impl_->parts.model->TokenToId(token);
}

}  // namespace engine
