// The API's messages in the core's types, for tests that compute what the
// server should answer (TestModel takes core types): written here, apart
// from the server's own conversions (server/grpc/proto_conversions.h), so
// that the server's are tested, not reused.
#pragma once

#include "encoder/v1/encoder.pb.h"
#include "engine/encoder.h"
#include "server/core/api/service_types.h"

namespace testing_support {

server::core::Input ToCoreInput(const encoder::v1::Input& input);

// The pooling a response reports; UNSPECIFIED (never in a response) as CLS.
engine::Pooling ToEnginePooling(encoder::v1::Pooling pooling);

}  // namespace testing_support
