// Turns API requests into the batcher's tokenized requests, checking every
// input on the way. Runs on the transports' threads, so the batcher receives token
// counts and never sees a bad input. Errors are INVALID_ARGUMENT and name
// the input's index and the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"
#include "server/core/batcher.h"
#include "server/core/model_loader.h"
#include "server/core/service_types.h"

namespace server {

struct RequestLimits {
  int max_inputs_per_request = 64;
  int64_t max_text_bytes = 65536;
  // Tokens after tokenization (and truncation) over all of one request's
  // inputs; the input that passes it is named in the error.
  int64_t max_tokens_per_request = 16384;
};

class RequestBuilder {
 public:
  // `model` must outlive the builder.
  RequestBuilder(const LoadedModel* model, RequestLimits limits);

  // The returned request has inputs and spec; the caller sets deadline,
  // cancellation and `done`. Thread-safe.
  absl::StatusOr<std::unique_ptr<BatchRequest>> Build(const core::EncodeRequest& request) const;

  absl::StatusOr<engine::Encoding> Tokenize(const core::TokenizeRequest& request) const;
  // Ids back to text (INVALID_ARGUMENT names an id outside the vocabulary).
  absl::StatusOr<std::string> Decode(const core::DecodeRequest& request) const;

 private:
  absl::StatusOr<OutputSpec> BuildSpec(const core::EncodeRequest& request) const;
  absl::StatusOr<TokenizedInput> BuildInput(const core::Input& input, bool truncate) const;
  absl::StatusOr<TokenizedInput> FromText(const std::string& text, const std::string& text_pair,
                                          bool is_pair, bool truncate) const;
  absl::StatusOr<TokenizedInput> FromIds(const std::vector<int32_t>& ids,
                                         const std::vector<int32_t>& token_type_ids,
                                         bool truncate) const;
  absl::Status CheckText(const char* field, const std::string& text) const;
  // FAILED_PRECONDITION when the model has no usable tokenizer.
  absl::Status CheckTextInput() const;

  const LoadedModel* const model_;
  const RequestLimits limits_;
};

}  // namespace server
