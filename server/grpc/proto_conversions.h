// Every copy between the API's messages and the core's types, one header per
// message group: what the unary-call helper (unary_call.h) and the stream
// call as ToCore(request) and ToProto(result, &response).
#pragma once

#include "server/grpc/common_conversions.h"
#include "server/grpc/encode_conversions.h"
#include "server/grpc/head_conversions.h"
#include "server/grpc/model_info_conversions.h"
