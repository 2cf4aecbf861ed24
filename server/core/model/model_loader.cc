#include "server/core/model/model_loader.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/hub_cache.h"
#include "engine/model_contents.h"
#include "server/core/model/model_name.h"

namespace server::core {
namespace {

// Whether the model may serve token ids alone after its tokenizer failed
// with `status`: yes when the directory has no tokenizer, or one this build
// cannot read; no when a tokenizer file is there but cannot be opened or
// read (permissions, a directory, a symlink to a missing blob).
bool ServesWithoutTokenizer(const absl::Status& status, bool tokenizer_file_listed) {
  if (absl::IsInvalidArgument(status) || absl::IsUnimplemented(status)) return true;
  return absl::IsNotFound(status) && !tokenizer_file_listed;
}

}  // namespace

namespace {

// The ids of `settings`' tokens: an error naming the token when the
// tokenizer lacks a prefix or the mask token; a skiplist word that is not a
// token stands for the unknown token, as convert_tokens_to_ids has it.
absl::StatusOr<ColbertEncoding> ReadColbertEncoding(const engine::ColbertSettings& settings,
                                                    const engine::Tokenizer* tokenizer,
                                                    const std::string& tokenizer_error) {
  if (tokenizer == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("a ColBERT model needs its tokenizer for its query and document prefixes: ",
                     tokenizer_error));
  }
  ColbertEncoding colbert;
  for (const auto& [token, id] :
       {std::pair{&settings.query_prefix, &colbert.query_prefix_id},
        std::pair{&settings.document_prefix, &colbert.document_prefix_id}}) {
    *id = tokenizer->TokenId(*token);
    if (*id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(tokenizer->source(), ": the ColBERT prefix \"", *token,
                       "\" (config_sentence_transformers.json) is not one of its tokens"));
    }
  }
  colbert.query_length = settings.query_length;
  colbert.document_length = settings.document_length;
  colbert.expand_queries = settings.do_query_expansion;
  colbert.attend_to_expansion = settings.attend_to_expansion_tokens;
  if (colbert.expand_queries) {
    for (const char* mask : {"[MASK]", "<mask>"}) {
      if (colbert.mask_id < 0) colbert.mask_id = tokenizer->TokenId(mask);
    }
    if (colbert.mask_id < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          tokenizer->source(), ": no [MASK] or <mask> token for ColBERT's query expansion"));
    }
  }
  for (const std::string& word : settings.skiplist_words) {
    const int32_t id = tokenizer->TokenId(word);
    colbert.skip_ids.push_back(id >= 0 ? id : tokenizer->unk_id());
  }
  std::sort(colbert.skip_ids.begin(), colbert.skip_ids.end());
  colbert.skip_ids.erase(std::unique(colbert.skip_ids.begin(), colbert.skip_ids.end()),
                         colbert.skip_ids.end());
  return colbert;
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModel(const std::string& model_path,
                                      const engine::EncoderOptions& options,
                                      const std::string& served_name) {
  LoadedModel model;
  std::error_code error;
  model.name = served_name.empty()
                   ? DefaultModelName(model_path, std::filesystem::current_path(error).string())
                   : served_name;
  absl::StatusOr<std::optional<std::string>> snapshot =
      engine::MainSnapshotOfCacheFolder(model_path);
  if (!snapshot.ok()) return snapshot.status();
  model.directory = snapshot->value_or(model_path);
  const std::string& dir = model.directory;

  ASSIGN_OR_RETURN(engine::ModelContents contents, engine::LoadModelContents(dir, options));
  model.encoder = std::move(contents.encoder);
  if (contents.tokenizer != nullptr) {
    model.tokenizer = std::move(contents.tokenizer);
  } else if (ServesWithoutTokenizer(contents.tokenizer_status, contents.tokenizer_file_listed)) {
    model.tokenizer_error = std::string(contents.tokenizer_status.message());
  } else {
    return contents.tokenizer_status;
  }
  // A tokenizer may define more ids than the embedding table (EmbeddingGemma:
  // 262,145 ids, vocab_size 262,144, the extra one <image_soft_token>): the
  // model loads, and a request whose text produces such an id is refused
  // naming the token (InputTokenizer::CheckIdsInTable).
  model.pipeline = std::move(contents.pipeline);
  model.default_pooling = model.pipeline.pooling.front();
  if (contents.calibration.has_value()) {
    model.shipped_quantization_ranges =
        std::make_shared<const core::QuantizationRanges>(*std::move(contents.calibration));
    model.shipped_quantization_ranges_source = contents.calibration_source;
  }
  const int pooled = model.pipeline.pooled_size(model.encoder->config().hidden_size);
  if (!model.pipeline.dense.empty() && model.pipeline.dense.front().in_features != pooled) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, "/", model.pipeline.dense.front().directory, "/config.json: in_features ",
        model.pipeline.dense.front().in_features, " but the pooling gives ", pooled, " values"));
  }
  if (const engine::ClassifierHead* classifier = model.encoder->classifier()) {
    model.heads.classifier = *classifier;
  }
  model.heads.sparse = model.encoder->has_masked_lm_head() || model.encoder->has_lexical_weights();
  if (const engine::MultiVectorHead* head = model.encoder->multi_vector()) {
    model.heads.multi_vector = *head;
  }
  // A SparseEncoder's SpladePooling says how its weights are formed.
  model.heads.sparse_options = model.pipeline.sparse_options;
  model.heads.sparse_default = model.pipeline.sparse && model.encoder->has_masked_lm_head();
  if (model.pipeline.colbert.has_value() && model.heads.multi_vector.has_value()) {
    absl::StatusOr<ColbertEncoding> colbert =
        ReadColbertEncoding(*model.pipeline.colbert, model.tokenizer.get(), model.tokenizer_error);
    if (!colbert.ok()) return colbert.status();
    model.colbert = *std::move(colbert);
    // One vector per token is its output: a single vector needs a pooling.
    model.heads.multi_vector_default = true;
  }
  const engine::PairPrompt* prompt = model.encoder->pair_prompt();
  if (prompt != nullptr && model.tokenizer != nullptr) {
    for (auto [text, ids] : {std::pair{&prompt->prefix, &model.pair_prompt_prefix},
                             std::pair{&prompt->suffix, &model.pair_prompt_suffix}}) {
      absl::StatusOr<engine::Encoding> encoding = model.tokenizer->Encode(
          *text, 0, engine::TruncationSide::kRight, /*add_special_tokens=*/false);
      if (!encoding.ok()) return encoding.status();
      *ids = std::move(encoding->ids);
    }
  }
  return model;
}

}  // namespace server::core
