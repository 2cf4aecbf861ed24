// Loads what the server serves from a model directory: the encoder, its
// tokenizer and its default pooling.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/core/prompts_config.h"

namespace server {

struct LoadedModel {
  std::string name;  // the directory's last path component
  std::unique_ptr<engine::Encoder> encoder;
  // Null when the directory's tokenizer could not be loaded: the model
  // still serves token ids, and text input is FAILED_PRECONDITION with
  // `tokenizer_error` as the reason.
  std::unique_ptr<engine::Tokenizer> tokenizer;
  std::string tokenizer_error;
  engine::Pooling default_pooling = engine::Pooling::kCls;
  Prompts prompts;  // config_sentence_transformers.json's, for prompt_name

  // Tokens per input, special tokens included.
  int max_length() const { return encoder->config().max_length(); }
};

// Errors name the file at fault.
absl::StatusOr<LoadedModel> LoadModel(const std::string& model_dir,
                                      const engine::EncoderOptions& options);

}  // namespace server
