// Arbitrary bytes as the body of an Encode call, handled as the service
// handles one (server/grpc/encode_service.cc): wrapped in a grpc::ByteBuffer,
// parsed by server::ParseRequest into an encoder.v1.EncodeRequest, then
// converted to the core's types (server::ToCore), validated and tokenized
// by server::InputTokenizer::Build against a small
// random model with the demo vocabulary and the server's default limits.
// The same bytes also go through the Tokenize path (TokenizeRequest and
// InputTokenizer::Tokenize). A built request must be one the batcher can run:
// every input 1..max_length ids inside the vocabulary, token types (if any)
// one per id and inside type_vocab_size.
#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "encoder/v1/encoder.pb.h"
#include "fuzz_service.h"
#include "fuzz_util.h"
#include "server/core/model/model_loader.h"
#include "server/core/requests/plans.h"
#include "server/grpc/proto_conversions.h"
#include "server/grpc/wire_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Service& service = fuzz::GetService("fuzz_request");
  grpc::Slice slice(data, size);
  const grpc::ByteBuffer bytes(&slice, 1);

  encoder::v1::EncodeRequest request;
  absl::StatusOr<server::core::EncodeRequest> core_request = absl::InternalError("unparsed");
  if (server::ParseRequest(bytes, &request).ok()) core_request = server::ToCore(request);
  if (core_request.ok()) {
    auto built = server::core::EncodeInputs(*service.inputs, *core_request);
    if (built.ok()) {
      const engine::ModelConfig& config = service.model.encoder->config();
      const server::core::BatchRequest& batch = **built;
      fuzz::Check(static_cast<int>(batch.inputs.size()) == request.inputs_size(),
                  "one tokenized input per input");
      for (const server::core::TokenizedInput& input : batch.inputs) {
        fuzz::Check(
            !input.ids.empty() && static_cast<int>(input.ids.size()) <= service.model.max_length(),
            "1..max_length ids");
        for (int32_t id : input.ids) {
          fuzz::Check(id >= 0 && id < config.vocab_size, "id inside the vocabulary");
        }
        fuzz::Check(input.token_type_ids.empty() || input.token_type_ids.size() == input.ids.size(),
                    "no token types, or one per id");
        for (int32_t type : input.token_type_ids) {
          fuzz::Check(type >= 0 && type < config.type_vocab_size, "token type in range");
        }
      }
    }
  }

  encoder::v1::TokenizeRequest tokenize;
  if (server::ParseRequest(bytes, &tokenize).ok()) {
    absl::StatusOr<server::core::TokenizeRequest> core_tokenize = server::ToCore(tokenize);
    if (core_tokenize.ok()) {
      auto encoding = server::core::TokenizeText(*service.inputs, *core_tokenize);
      if (encoding.ok()) {
        fuzz::Check(encoding->ids.size() == encoding->offsets.size(), "one offset per id");
      }
    }
  }
  return 0;
}
