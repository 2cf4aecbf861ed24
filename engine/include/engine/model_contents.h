// The one model-directory loader: everything a server serves from a model
// directory, read through one ModelDirectory (engine/model_directory.h) so
// that each file is opened at most once and each JSON file parsed once:
// config.json, the safetensors weights or their index, the tokenizer files,
// the sentence-transformers pipeline (modules.json and its module folders,
// config_sentence_transformers.json), the heads' files and
// quantization_ranges.json. What the engine does not implement is refused
// here, before anything is served, in one line naming the key, the value
// and the file.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/calibration_ranges.h"
#include "engine/config.h"
#include "engine/encoder.h"
#include "engine/model_directory.h"
#include "engine/sentence_pipeline.h"
#include "engine/tokenizer.h"

namespace engine {

struct ModelContents {
  std::unique_ptr<Encoder> encoder;
  // Null when the tokenizer could not be loaded; `tokenizer_status` says
  // why, and `tokenizer_file_listed` whether tokenizer.json or vocab.txt
  // is there at all (a dangling symlink counts).
  std::unique_ptr<Tokenizer> tokenizer;
  absl::Status tokenizer_status;
  bool tokenizer_file_listed = false;
  // The sentence-transformers pipeline; its fallback pooling is the last
  // token for a causal model, else CLS.
  SentencePipeline pipeline;
  // quantization_ranges.json, when the directory ships one, and its path.
  std::optional<CalibrationRanges> calibration;
  std::string calibration_source;
};

// Loads `model_dir` (a model directory, not a cache folder) through `reader`
// (null: the file system). Errors name the file at fault. A tokenizer that
// cannot be loaded is not an error here unless a head needs it (the caller
// decides whether the model may serve token ids alone).
absl::StatusOr<ModelContents> LoadModelContents(const std::string& model_dir,
                                                const EncoderOptions& options,
                                                const ModelFileReader* reader = nullptr);

// The directory's tokenizer: tokenizer.json when listed, else vocab.txt
// (with tokenizer_config.json when listed); NotFound naming the directory
// when it has neither.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(ModelDirectory& directory);

}  // namespace engine
