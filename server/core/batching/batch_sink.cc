#include "server/core/batching/batch_sink.h"

#include <utility>

#include "server/core/batching/batcher.h"

namespace server::core {

void BatcherSink::Submit(std::unique_ptr<BatchRequest> request) {
  auto done = request->done;
  if (absl::Status status = batcher_->Submit(std::move(request)); !status.ok()) done(status);
}

}  // namespace server::core
