#include "server/core/dispatch/encode_dispatcher.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "server/core/api/refusals.h"
#include "server/core/requests/plans.h"

namespace server::core {

EncodeDispatcher::EncodeDispatcher(const InputTokenizer* inputs, Batcher* batcher,
                                   ServerMetrics* metrics)
    : inputs_(inputs),
      batcher_(batcher),
      metrics_(metrics),
      batcher_sink_(batcher),
      runner_(&batcher_sink_, metrics) {}

void EncodeDispatcher::Dispatch(const core::EncodeRequest& request, Clock::time_point deadline,
                                std::function<bool()> is_cancelled, Done done) {
  runner_.Run<core::EncodeResult>([&] { return PlanEncode(*inputs_, request); }, deadline,
                                  std::move(is_cancelled), std::move(done));
}

void EncodeDispatcher::DispatchClassify(const core::ClassifyRequest& request,
                                        Clock::time_point deadline,
                                        std::function<bool()> is_cancelled, ClassifyDone done) {
  runner_.Run<core::ClassifyResult>([&] { return PlanClassify(*inputs_, request); }, deadline,
                                    std::move(is_cancelled), std::move(done));
}

void EncodeDispatcher::DispatchRerank(const core::RerankRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, RerankDone done) {
  // Each part fits one batch, the queue and the per-request limits.
  const BatcherConfig& config = batcher_->config();
  const RequestLimits& limits = inputs_->limits();
  const PartBounds bounds{
      std::min(limits.max_inputs_per_request, config.max_batch_inputs),
      std::min({limits.max_tokens_per_request, config.max_batch_tokens, config.max_queue_tokens})};
  runner_.Run<core::RerankResult>([&] { return PlanRerank(*inputs_, request, bounds); }, deadline,
                                  std::move(is_cancelled), std::move(done));
}

void EncodeDispatcher::DispatchSparse(const core::SparseRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, SparseDone done) {
  runner_.Run<core::SparseResult>([&] { return PlanSparse(*inputs_, request); }, deadline,
                                  std::move(is_cancelled), std::move(done));
}

void EncodeDispatcher::DispatchMulti(const core::MultiRequest& request, Clock::time_point deadline,
                                     std::function<bool()> is_cancelled, MultiDone done) {
  runner_.Run<core::MultiResult>([&] { return PlanMulti(*inputs_, request); }, deadline,
                                 std::move(is_cancelled), std::move(done));
}

void EncodeDispatcher::DispatchChunks(const core::ChunksRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, ChunksDone done) {
  runner_.Run<core::ChunksResult>([&] { return PlanLateChunks(*inputs_, request); }, deadline,
                                  std::move(is_cancelled), std::move(done));
}

absl::StatusOr<engine::Encoding> EncodeDispatcher::Tokenize(const core::TokenizeRequest& request) {
  if (!accepting()) return core::ShuttingDown();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<engine::Encoding> encoding = TokenizeText(*inputs_, request);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  return encoding;
}

absl::StatusOr<std::string> EncodeDispatcher::Decode(const core::DecodeRequest& request) {
  if (!accepting()) return core::ShuttingDown();
  return DecodeIds(*inputs_, request);
}

void EncodeDispatcher::EnableCache(ResultCache* cache, std::string model, Clock* clock) {
  if (cache == nullptr) {
    caching_sink_ = nullptr;
    runner_.set_sink(&batcher_sink_);
    return;
  }
  caching_sink_ =
      std::make_unique<CachingSink>(cache, std::move(model), clock, metrics_, &batcher_sink_);
  runner_.set_sink(caching_sink_.get());
  metrics_->AddCacheSeries();
}

}  // namespace server::core
