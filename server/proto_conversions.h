// Copies between the engine's and batcher's types and the API's messages.
#pragma once

#include <string>
#include <vector>

#include "encoder/v1/encoder.pb.h"
#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/backend.h"
#include "server/model_loader.h"

namespace server {

encoder::v1::Pooling ToProto(engine::Pooling pooling);

void FillEncodeResponse(const std::string& id, engine::Pooling pooling,
                        const std::vector<InputOutput>& outputs,
                        encoder::v1::EncodeResponse* response);

void FillTokenizeResponse(const engine::Encoding& encoding,
                          encoder::v1::TokenizeResponse* response);

encoder::v1::ModelInfo MakeModelInfo(const LoadedModel& model, int max_inputs_per_request);

}  // namespace server
