// GetModelInfo's and ListModels' rendering of the core's model description.
#pragma once

#include "encoder/v1/encoder.pb.h"
#include "server/core/model_set.h"

namespace server {

encoder::v1::ModelInfo MakeModelInfo(const core::ModelDescription& model);

}  // namespace server
