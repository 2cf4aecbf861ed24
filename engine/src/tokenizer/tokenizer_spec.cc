#include "tokenizer_spec.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "decoders/wordpiece_decoder.h"
#include "pre_tokenizers/bert_pre_tokenizer.h"

namespace engine::tokenizer {

TokenizerSpec SpecFromOptions(std::vector<std::string> vocab, const TokenizerOptions& options,
                              std::string source) {
  TokenizerSpec spec;
  spec.source = std::move(source);
  spec.vocab.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) {
    spec.vocab.emplace_back(std::move(vocab[i]), static_cast<int32_t>(i));
  }
  spec.wordpiece.unk_token = options.unk_token;
  spec.wordpiece.continuing_subword_prefix = options.continuing_subword_prefix;
  spec.wordpiece.max_input_chars_per_word = options.max_input_chars_per_word;
  spec.normalizer.clean_text = options.clean_text;
  spec.normalizer.handle_chinese_chars = options.tokenize_chinese_chars;
  spec.normalizer.lowercase = options.lower_case;
  spec.normalizer.strip_accents =
      options.strip_accents == TokenizerOptions::StripAccents::kFollowLowerCase
          ? options.lower_case
          : options.strip_accents == TokenizerOptions::StripAccents::kYes;

  // Later duplicates win, as in Hugging Face's vocab.txt reader.
  const auto find = [&spec](const std::string& token) {
    int32_t id = -1;
    for (const auto& [t, i] : spec.vocab) {
      if (t == token) id = i;
    }
    return id;
  };
  for (const std::string* token : {&options.unk_token, &options.cls_token, &options.sep_token,
                                   &options.pad_token, &options.mask_token}) {
    const int32_t id = find(*token);
    if (id >= 0 && !token->empty()) {
      AddedToken added;
      added.content = *token;
      added.id = id;
      added.special = true;
      spec.added_tokens.push_back(std::move(added));
    }
  }
  const int32_t cls = find(options.cls_token);
  const int32_t sep = find(options.sep_token);
  spec.single = BertTemplate(cls, sep, /*pair=*/false);
  spec.pair = BertTemplate(cls, sep, /*pair=*/true);
  spec.pad_id = find(options.pad_token);
  return spec;
}

absl::StatusOr<Pipeline> BertPipeline(TokenizerSpec spec) {
  if (spec.vocab.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(spec.source, ": the vocabulary is empty"));
  }
  if (spec.wordpiece.max_input_chars_per_word <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec.source, ": max_input_chars_per_word must be positive"));
  }
  Pipeline p;
  p.source = spec.source;
  p.normalizer = std::make_unique<BertNormalizer>(spec.normalizer);
  p.pre_tokenizer = std::make_unique<BertPreTokenizer>();
  auto model = std::make_unique<WordPiece>(spec.vocab, spec.wordpiece);
  if (model->unk_id() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(spec.source, ": the unknown token \"",
                                                   spec.wordpiece.unk_token,
                                                   "\" is not in the vocabulary"));
  }
  p.model = std::move(model);
  p.single = std::move(spec.single);
  p.pair = std::move(spec.pair);
  p.decoder = std::make_unique<WordPieceDecoder>(spec.wordpiece.continuing_subword_prefix, true);
  p.added_tokens = std::move(spec.added_tokens);
  p.pad_id = spec.pad_id;
  return p;
}

}  // namespace engine::tokenizer
