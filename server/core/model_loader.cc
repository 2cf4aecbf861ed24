#include "server/core/model_loader.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/pooling_config.h"

namespace server {
namespace {

std::string DirectoryName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModel(const std::string& model_dir,
                                      const engine::EncoderOptions& options) {
  LoadedModel model;
  model.name = DirectoryName(model_dir);
  absl::StatusOr<std::unique_ptr<engine::Encoder>> encoder =
      engine::Encoder::Load(model_dir, options);
  if (!encoder.ok()) return encoder.status();
  model.encoder = *std::move(encoder);

  absl::StatusOr<std::unique_ptr<engine::Tokenizer>> tokenizer = engine::Tokenizer::Load(model_dir);
  if (!tokenizer.ok()) {
    // A tokenizer this build cannot read must not stop a model that serves
    // token ids; text input says why it is unavailable.
    model.tokenizer_error = std::string(tokenizer.status().message());
  } else {
    model.tokenizer = *std::move(tokenizer);
  }
  const int model_vocab = model.encoder->config().vocab_size;
  if (model.tokenizer != nullptr && model.tokenizer->vocab_size() > model_vocab) {
    return absl::InvalidArgumentError(
        absl::StrCat(model_dir, ": the tokenizer has ", model.tokenizer->vocab_size(),
                     " tokens but config.json's vocab_size is ", model_vocab));
  }

  absl::StatusOr<engine::Pooling> pooling = ReadDefaultPooling(model_dir);
  if (!pooling.ok()) return pooling.status();
  model.default_pooling = *pooling;
  if (model.default_pooling == engine::Pooling::kPooler && !model.encoder->has_pooler()) {
    return absl::InvalidArgumentError(absl::StrCat(model_dir, ": no pooler weights"));
  }
  absl::StatusOr<Prompts> prompts = ReadPrompts(model_dir);
  if (!prompts.ok()) return prompts.status();
  model.prompts = *std::move(prompts);
  return model;
}

}  // namespace server
