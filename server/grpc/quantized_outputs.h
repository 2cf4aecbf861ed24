// EncodeRequest.embedding_type: the outputs quantized (server/core/model/quantize.h)
// into Output.packed after the engine's float answer.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "encoder/v1/encoder.pb.h"
#include "server/core/model/quantize.h"
#include "server/core/model_set.h"

namespace server {

// The request's embedding type, checked against the model before any engine
// work: INVALID_ARGUMENT for a value the API does not define,
// FAILED_PRECONDITION for int8/uint8 on a model without calibration ranges.
absl::StatusOr<core::EmbeddingType> EmbeddingTypeOf(const encoder::v1::EncodeRequest& request,
                                                    const core::ModelDescription& model);

// Each output's rows quantized as `type` into `packed`, `values` cleared;
// nothing for kFloat. INVALID_ARGUMENT when int8/uint8 rows are longer than
// the ranges (an explicit pooling's hidden size beyond the embedding's).
absl::Status QuantizeOutputs(core::EmbeddingType type, const core::ModelDescription& model,
                             encoder::v1::EncodeResponse* response);

}  // namespace server
