#include "engine/model_contents.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

constexpr char kConfigFile[] = "config.json";
constexpr char kTokenizerJson[] = "tokenizer.json";
constexpr char kVocabTxt[] = "vocab.txt";
constexpr char kTokenizerConfig[] = "tokenizer_config.json";
constexpr char kSentenceBertConfig[] = "sentence_bert_config.json";

// sentence-transformers' Transformer module lowercases the text before its
// tokenizer when sentence_bert_config.json says do_lower_case: served only
// where the tokenizer lowercases anyway (an uncased vocabulary), else
// refused. (Its max_seq_length is not applied: docs/models.md.)
absl::Status CheckLowerCase(ModelDirectory& directory, const Tokenizer* tokenizer) {
  ASSIGN_OR_RETURN(const nlohmann::json* config,
                   directory.JsonObjectIfPresent(kSentenceBertConfig));
  if (config == nullptr || tokenizer == nullptr) return absl::OkStatus();
  const auto found = config->find("do_lower_case");
  if (found == config->end() || *found != true) return absl::OkStatus();
  absl::StatusOr<Encoding> upper = tokenizer->Encode("Hello World ABC");
  absl::StatusOr<Encoding> lower = tokenizer->Encode("hello world abc");
  if (upper.ok() && lower.ok() && upper->ids == lower->ids) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      directory.PathOf(kSentenceBertConfig),
      ": unsupported do_lower_case true with a tokenizer that keeps case (supported: false, or "
      "a tokenizer that lowercases)"));
}

// The tokenizer and the pipeline, each loaded on the first request (the
// encoder's heads may ask before the loader does) and kept.
class SharedParts {
 public:
  SharedParts(ModelDirectory* directory, const ModelConfig* config)
      : directory_(directory), config_(config) {}

  absl::StatusOr<const Tokenizer*> tokenizer() {
    if (!tokenizer_loaded_) {
      tokenizer_loaded_ = true;
      absl::StatusOr<std::unique_ptr<Tokenizer>> loaded = LoadTokenizer(*directory_);
      if (loaded.ok()) {
        tokenizer_ = *std::move(loaded);
      } else {
        tokenizer_status_ = loaded.status();
      }
    }
    if (tokenizer_ == nullptr) return tokenizer_status_;
    return tokenizer_.get();
  }

  absl::StatusOr<const SentencePipeline*> pipeline() {
    if (!pipeline_.has_value()) {
      // A causal model's first token sees only itself: it pools the last.
      ASSIGN_OR_RETURN(
          pipeline_,
          ReadSentencePipeline(*directory_, config_->causal ? Pooling::kLastToken : Pooling::kCls));
    }
    return &*pipeline_;
  }

  std::unique_ptr<Tokenizer> TakeTokenizer() { return std::move(tokenizer_); }
  const absl::Status& tokenizer_status() const { return tokenizer_status_; }
  SentencePipeline TakePipeline() { return *std::move(pipeline_); }

 private:
  ModelDirectory* directory_;
  const ModelConfig* config_;
  bool tokenizer_loaded_ = false;
  std::unique_ptr<Tokenizer> tokenizer_;
  absl::Status tokenizer_status_;
  std::optional<SentencePipeline> pipeline_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(ModelDirectory& directory) {
  if (directory.Has(kTokenizerJson)) {
    ASSIGN_OR_RETURN(const std::string* text, directory.Text(kTokenizerJson));
    return Tokenizer::FromTokenizerJson(*text, directory.PathOf(kTokenizerJson));
  }
  if (directory.Has(kVocabTxt)) {
    ASSIGN_OR_RETURN(const std::string* vocab, directory.Text(kVocabTxt));
    const std::string* config = nullptr;
    if (directory.Has(kTokenizerConfig)) {
      ASSIGN_OR_RETURN(config, directory.Text(kTokenizerConfig));
    }
    return Tokenizer::FromVocabTxt(*vocab, directory.PathOf(kVocabTxt), config,
                                   directory.PathOf(kTokenizerConfig));
  }
  return absl::NotFoundError(
      absl::StrCat(directory.path(), ": has neither tokenizer.json nor vocab.txt"));
}

absl::StatusOr<ModelContents> LoadModelContents(const std::string& model_dir,
                                                const EncoderOptions& options,
                                                const ModelFileReader* reader) {
  ASSIGN_OR_RETURN(const std::unique_ptr<ModelDirectory> directory,
                   ModelDirectory::Open(model_dir, reader));
  ASSIGN_OR_RETURN(const nlohmann::json* config_json, directory->Json(kConfigFile));
  // config.json could be read, but the directory cannot be listed.
  RETURN_IF_ERROR(directory->listing_status());
  ASSIGN_OR_RETURN(const ModelConfig config,
                   ReadModelConfig(*config_json, directory->PathOf(kConfigFile)));
  SharedParts parts(directory.get(), &config);
  EncoderSources sources;
  sources.config_json = config_json;
  sources.tokenizer = [&parts] { return parts.tokenizer(); };
  sources.pipeline = [&parts] { return parts.pipeline(); };

  ModelContents contents;
  ASSIGN_OR_RETURN(contents.encoder, Encoder::Load(*directory, config, sources, options));
  (void)parts.tokenizer();  // its failure is the caller's to judge
  contents.tokenizer = parts.TakeTokenizer();
  contents.tokenizer_status = parts.tokenizer_status();
  contents.tokenizer_file_listed = directory->Has(kTokenizerJson) || directory->Has(kVocabTxt);
  RETURN_IF_ERROR(CheckLowerCase(*directory, contents.tokenizer.get()));
  RETURN_IF_ERROR(parts.pipeline());
  contents.pipeline = parts.TakePipeline();
  if (directory->Has(kCalibrationRangesFile)) {
    contents.calibration_source = directory->PathOf(kCalibrationRangesFile);
    ASSIGN_OR_RETURN(const std::string* text, directory->Text(kCalibrationRangesFile));
    ASSIGN_OR_RETURN(contents.calibration,
                     ParseCalibrationRanges(*text, contents.calibration_source));
  }
  return contents;
}

}  // namespace engine
