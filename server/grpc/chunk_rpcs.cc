// EncodeChunks (late chunking): proto <-> core, answered from the batcher's
// thread like Encode.
#include <utility>

#include "server/core/requests/late_chunking.h"
#include "server/grpc/call_deadline.h"
#include "server/grpc/encode_service.h"
#include "server/grpc/metered_reactor.h"
#include "server/grpc/status_mapping.h"

namespace server {

grpc::ServerUnaryReactor* EncodeService::EncodeChunks(
    grpc::CallbackServerContext* context, const encoder::v1::EncodeChunksRequest* request,
    encoder::v1::EncodeChunksResponse* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kEncodeChunks, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  core::ChunksRequest chunks;
  chunks.text = request->text();
  chunks.chunks.reserve(static_cast<size_t>(request->chunks_size()));
  for (const encoder::v1::ChunkSpan& span : request->chunks()) {
    chunks.chunks.push_back({span.start(), span.end()});
  }
  chunks.chunk_tokens = request->chunk_tokens();
  if (request->has_window_overlap()) chunks.window_overlap = request->window_overlap();
  if (request->has_normalize()) chunks.normalize = request->normalize();
  chunks.dimensions = request->dimensions();
  absl::StatusOr<const ModelRoute*> route = Route(request->model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  (*route)->dispatcher->DispatchChunks(
      chunks, DeadlineOnClock(context->deadline(), clock_),
      [context] { return context->IsCancelled(); },
      [reactor, response](absl::StatusOr<core::ChunksResult> result) {
        if (result.ok()) {
          for (core::ChunkEmbedding& chunk : result->chunks) {
            encoder::v1::ChunkEmbedding* out = response->add_chunks();
            out->set_start(chunk.start);
            out->set_end(chunk.end);
            out->set_tokens(chunk.tokens);
            out->mutable_values()->Add(chunk.values.begin(), chunk.values.end());
          }
          response->set_windows(result->windows);
          response->set_tokens(result->tokens);
        }
        reactor->Answer(ToGrpcStatus(result.status()));
      });
  return reactor;
}

}  // namespace server
