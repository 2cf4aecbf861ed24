// Tokenize and decode requests: the model's tokenizer on the caller's
// thread, nothing queued.
#include "server/core/requests/plans.h"

#include "common/status_macros.h"

namespace server::core {
absl::StatusOr<engine::Encoding> TokenizeText(const InputTokenizer& input_tokenizer,
                                              const core::TokenizeRequest& request) {
  const LoadedModel& model = input_tokenizer.model();
  RETURN_IF_ERROR(input_tokenizer.CheckTextInput());
  RETURN_IF_ERROR(input_tokenizer.CheckText("text", request.text));
  const bool is_pair = !request.text_pair.empty();
  if (is_pair) {
    RETURN_IF_ERROR(input_tokenizer.CheckText("text_pair", request.text_pair));
  }
  const int cut = request.truncate ? model.max_length() : 0;
  return is_pair ? model.tokenizer->EncodePair(request.text, request.text_pair, cut,
                                               request.truncation_side, request.add_special_tokens)
                 : model.tokenizer->Encode(request.text, cut, request.truncation_side,
                                           request.add_special_tokens);
}

absl::StatusOr<std::string> DecodeIds(const InputTokenizer& input_tokenizer,
                                      const core::DecodeRequest& request) {
  const LoadedModel& model = input_tokenizer.model();
  RETURN_IF_ERROR(input_tokenizer.CheckTextInput());
  return model.tokenizer->Decode(request.ids, request.skip_special_tokens);
}

}  // namespace server::core
