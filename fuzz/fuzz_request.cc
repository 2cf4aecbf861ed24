// Arbitrary bytes as the body of an Encode call, handled as the service
// handles one (server/grpc/encode_service.cc): wrapped in a grpc::ByteBuffer,
// parsed by server::ParseRequest into an encoder.v1.EncodeRequest, then
// converted to the core's types (server::ToCore), validated and tokenized
// by server::RequestBuilder::Build against a small
// random model with the demo vocabulary and the server's default limits.
// The same bytes also go through the Tokenize path (TokenizeRequest and
// RequestBuilder::Tokenize). A built request must be one the batcher can run:
// every input 1..max_length ids inside the vocabulary, token types (if any)
// one per id and inside type_vocab_size.
#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "encoder/v1/encoder.pb.h"
#include "engine/random_model.h"
#include "fuzz_util.h"
#include "server/core/model_loader.h"
#include "server/core/request_builder.h"
#include "server/grpc/proto_conversions.h"
#include "server/grpc/wire_format.h"

namespace {

struct Service {
  server::LoadedModel model;
  std::unique_ptr<server::RequestBuilder> builder;
};

const Service& GetService() {
  static const Service* const service = [] {
    auto* s = new Service;
    const std::string dir = fuzz::ProcessTempDir("fuzz_request") + "/model";
    engine::RandomModelSpec spec;
    spec.config.hidden_size = 32;
    spec.config.num_layers = 1;
    spec.config.num_heads = 4;
    spec.config.intermediate_size = 64;
    spec.config.max_position_embeddings = 64;
    spec.seed = 7;
    if (!engine::WriteRandomModel(dir, spec).ok()) fuzz::Fail("cannot write the model");
    engine::EncoderOptions options;
    options.threads = 1;
    options.max_batch_tokens = 256;
    auto model = server::LoadModel(dir, options);
    if (!model.ok()) fuzz::Fail(std::string(model.status().message()).c_str());
    s->model = *std::move(model);
    s->builder = std::make_unique<server::RequestBuilder>(&s->model, server::RequestLimits{});
    return s;
  }();
  return *service;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Service& service = GetService();
  grpc::Slice slice(data, size);
  const grpc::ByteBuffer bytes(&slice, 1);

  encoder::v1::EncodeRequest request;
  absl::StatusOr<server::core::EncodeRequest> core_request = absl::InternalError("unparsed");
  if (server::ParseRequest(bytes, &request).ok()) core_request = server::ToCore(request);
  if (core_request.ok()) {
    auto built = service.builder->Build(*core_request);
    if (built.ok()) {
      const engine::ModelConfig& config = service.model.encoder->config();
      const server::BatchRequest& batch = **built;
      fuzz::Check(static_cast<int>(batch.inputs.size()) == request.inputs_size(),
                  "one tokenized input per input");
      for (const server::TokenizedInput& input : batch.inputs) {
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
      auto encoding = service.builder->Tokenize(*core_tokenize);
      if (encoding.ok()) {
        fuzz::Check(encoding->ids.size() == encoding->offsets.size(), "one offset per id");
      }
    }
  }
  return 0;
}
