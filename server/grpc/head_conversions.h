// Proto <-> core conversions of the head RPCs (Rerank, Classify,
// EncodeSparse, EncodeMulti) and of EncodeChunks (late chunking).
#pragma once

#include "absl/status/statusor.h"
#include "encoder/v1/encoder.pb.h"
#include "server/core/api/service_types.h"
#include "server/core/requests/late_chunking.h"

namespace server {

absl::StatusOr<core::RerankRequest> ToCore(const encoder::v1::RerankRequest& request);
void ToProto(core::RerankResult result, encoder::v1::RerankResponse* response);

absl::StatusOr<core::ClassifyRequest> ToCore(const encoder::v1::ClassifyRequest& request);
void ToProto(core::ClassifyResult result, encoder::v1::ClassifyResponse* response);

absl::StatusOr<core::SparseRequest> ToCore(const encoder::v1::EncodeSparseRequest& request);
void ToProto(core::SparseResult result, encoder::v1::EncodeSparseResponse* response);

// INVALID_ARGUMENT for an output kind the API does not define or one asked twice.
absl::StatusOr<core::MultiRequest> ToCore(const encoder::v1::EncodeMultiRequest& request);
void ToProto(core::MultiResult result, encoder::v1::EncodeMultiResponse* response);

absl::StatusOr<core::ChunksRequest> ToCore(const encoder::v1::EncodeChunksRequest& request);
void ToProto(core::ChunksResult result, encoder::v1::EncodeChunksResponse* response);

}  // namespace server
