// The server's Prometheus metrics. Every family is built once, in the
// constructor, with the series that must exist before the first request: a
// request counter for each code each call can answer (metrics_calls.h), so
// that rate() and the error ratio count the first error of a kind too, and a
// request-duration histogram for each call's OK. The duration histogram of
// another code is created at its first request (rate() then misses what came
// before that series' first scrape, which a latency quantile does not feel),
// and so is the counter of a code outside AnswerableCodes (a call that
// changed), rather than dropping its count. Creating a series is
// prometheus-cpp's Family::Add, once per series (two threads racing add the
// same child); recording touches kept children (atomics; a histogram child
// also takes its own short mutex inside prometheus-cpp): no lock of ours.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "absl/status/status.h"
#include "server/core/api/answered_codes.h"
#include "server/core/api/service_types.h"
#include "server/core/batching/batch_request.h"
#include "server/core/cache/result_cache.h"
#include "server/core/metrics/metrics_calls.h"

namespace server::core {

// encoder_model_info's labels.
struct ModelInfoLabels {
  std::string model;
  std::string precision;
  std::string layer_norm;
  int hidden_size = 0;
  int layers = 0;
  std::string isa;  // the instruction-set level (engine/isa.h)
};

class ServerMetrics : public BatcherObserver, public ResultCacheOwner {
 public:
  using Duration = std::chrono::steady_clock::duration;

  // The batch histograms' buckets go up to the budgets in `batcher`;
  // encoder_queue_tokens_limit exports its admission limit.
  // Every series is labelled model="<model.model>". `registry`: the one the
  // families go into, shared by the served models' ServerMetrics (each
  // builds its children once, at start); null: a registry of its own.
  ServerMetrics(const BatcherConfig& batcher, const ModelInfoLabels& model,
                std::shared_ptr<prometheus::Registry> registry = nullptr);

  // What /metrics exports (the process metrics come from ProcessCollector).
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // A request was received (unary call, or one request of a stream).
  void RequestStarted() { inflight_->Increment(); }
  // A request counted here by RequestStarted turned out to be another
  // model's: from now on it is `to`'s (which RequestFinished must be given).
  void RequestMovedTo(ServerMetrics* to) {
    if (to == this) return;
    inflight_->Decrement();
    to->RequestStarted();
  }
  // ...and its response was sent with `code`, `elapsed` after receipt, on
  // `transport`. Codes outside kAnsweredCodes count as INTERNAL.
  void RequestFinished(core::Transport transport, Rpc rpc, absl::StatusCode code, Duration elapsed);

  // How many requests on `transport` RequestFinished counted with `code`
  // (every rpc): the shutdown's account of what it answered.
  int64_t Answered(core::Transport transport, absl::StatusCode code) const;

  // Validating and tokenizing one request's inputs took `elapsed`.
  void Tokenized(Duration elapsed);
  // A successful Encode/EncodeStream request answered `inputs` inputs of
  // `tokens` tokens in all.
  void Encoded(int64_t inputs, int64_t tokens);

  // BatcherObserver: cheap, lock-free; called from the batcher's threads.
  void OnQueueChanged(int64_t requests, int64_t tokens) override;
  void OnRequestDequeued(Clock::duration queue_time) override;
  void OnBatchDone(int inputs, int64_t tokens, Clock::duration engine_time) override;

  // The result cache's series (metrics_cache.cc): made by AddCacheSeries,
  // once, before the first request, only when the cache is on (absent when
  // it is off). Lookups count inputs: answered from the cache, sent to the
  // engine, or waiting for an identical input in flight.
  void AddCacheSeries();
  void CacheLookups(int64_t hits, int64_t misses, int64_t coalesced);
  // ResultCacheOwner: this model's entries.
  void OnCacheBytes(int64_t delta) override;
  void OnCacheEvicted() override;
  void OnCacheLookups(int64_t hits, int64_t misses, int64_t coalesced) override {
    CacheLookups(hits, misses, coalesced);
  }

 private:
  // One transport x rpc x code's children; null until created.
  struct RequestSeries {
    std::atomic<prometheus::Counter*> count{nullptr};
    std::atomic<prometheus::Histogram*> duration{nullptr};
  };
  // The series' children, created on the first call for them.
  prometheus::Counter& RequestCount(core::Transport transport, Rpc rpc, size_t code);
  prometheus::Histogram& RequestDuration(core::Transport transport, Rpc rpc, size_t code);

  std::shared_ptr<prometheus::Registry> registry_;
  const std::vector<double> duration_buckets_;
  const std::string model_;
  prometheus::Family<prometheus::Counter>* request_counts_ = nullptr;
  prometheus::Family<prometheus::Histogram>* request_durations_ = nullptr;
  // [transport][rpc][index of the code in kAnsweredCodes]
  std::array<std::array<std::array<RequestSeries, kAnsweredCodes.size()>, kRpcCount>,
             core::kTransportCount>
      requests_;
  prometheus::Histogram* tokenize_duration_ = nullptr;
  prometheus::Histogram* queue_duration_ = nullptr;
  prometheus::Histogram* batch_duration_ = nullptr;
  prometheus::Histogram* batch_inputs_ = nullptr;
  prometheus::Histogram* batch_tokens_ = nullptr;
  prometheus::Counter* inputs_ = nullptr;
  prometheus::Counter* tokens_ = nullptr;
  prometheus::Gauge* queue_requests_ = nullptr;
  prometheus::Gauge* queue_tokens_ = nullptr;
  prometheus::Gauge* inflight_ = nullptr;
  prometheus::Counter* cache_hits_ = nullptr;  // these five: null while the cache is off
  prometheus::Counter* cache_misses_ = nullptr;
  prometheus::Counter* cache_coalesced_ = nullptr;
  prometheus::Counter* cache_evictions_ = nullptr;
  prometheus::Gauge* cache_bytes_ = nullptr;
};

}  // namespace server::core
