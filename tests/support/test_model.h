// A small random model in a temporary directory (engine::TinyModelSpec(),
// wider by default), and the reference outputs of encoding one input alone
// with the engine directly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/core/api/service_types.h"
#include "support/files.h"

namespace testing_support {

class TestModel {
 public:
  static constexpr int kHidden = 64;
  static constexpr int kMaxLength = 64;

  // Writes the model (fails the current test on error) and loads the
  // reference engine. Another `hidden` size (a multiple of 4) or `seed` makes
  // another model, e.g. for a server serving several; a smaller `max_length`
  // (max_position_embeddings) one whose inputs must be cut or windowed sooner.
  explicit TestModel(int hidden = kHidden, uint64_t seed = 7, int max_length = kMaxLength);
  ~TestModel();  // removes the directory

  const std::string& dir() const { return dir_.path(); }
  int hidden() const { return hidden_; }
  int max_length() const { return max_length_; }
  engine::Encoder& encoder() { return *encoder_; }
  const engine::Tokenizer& tokenizer() const { return *tokenizer_; }

  // The token ids and types the server should compute for `input`.
  void Tokenize(const server::core::Input& input, bool truncate, std::vector<int32_t>* ids,
                std::vector<int32_t>* types) const;

  // `input` encoded alone: rows x hidden() floats (rows = tokens for kNone).
  std::vector<float> EncodeAlone(const server::core::Input& input, engine::Pooling pooling,
                                 bool normalize, bool truncate, int* rows, int* tokens);

 private:
  const int hidden_;
  const int max_length_;
  TempDir dir_;
  std::unique_ptr<engine::Encoder> encoder_;
  std::unique_ptr<engine::Tokenizer> tokenizer_;
};

}  // namespace testing_support
