// The server's Prometheus metrics: every family is built, and every child
// (each rpc x code pair) created, once in the constructor, so that all of
// them are exported with zero values before the first request. Recording
// only touches the kept children (atomics; a histogram child also takes its
// own short mutex inside prometheus-cpp): no lock of ours, no lookup by
// label, no Add on the request path.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "absl/status/status.h"
#include "server/core/answered_codes.h"
#include "server/core/batcher.h"
#include "server/core/service_types.h"

namespace server {

// The service's calls, as the `rpc` label names them (after encoder.v1's
// RPCs; the HTTP routes count as the call they make: /v1/embeddings and
// /embed as Encode, /tokenize as Tokenize, /decode as Decode, /info and
// /v1/models as GetModelInfo).
enum class Rpc { kEncode, kEncodeStream, kTokenize, kGetModelInfo, kDecode };
inline constexpr int kRpcCount = 5;
const char* RpcName(Rpc rpc);

// encoder_model_info's labels.
struct ModelInfoLabels {
  std::string model;
  std::string precision;
  std::string layer_norm;
  int hidden_size = 0;
  int layers = 0;
  std::string isa;  // the instruction-set level (engine/isa.h)
};

class ServerMetrics : public BatcherObserver {
 public:
  using Duration = std::chrono::steady_clock::duration;

  // The batch histograms' buckets go up to the budgets in `batcher`;
  // encoder_queue_tokens_limit exports its admission limit.
  ServerMetrics(const BatcherConfig& batcher, const ModelInfoLabels& model);

  // What /metrics exports (the process metrics come from ProcessCollector).
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // A request was received (unary call, or one request of a stream).
  void RequestStarted() { inflight_->Increment(); }
  // ...and its response was sent with `code`, `elapsed` after receipt, on
  // `transport`. Codes outside kAnsweredCodes count as INTERNAL.
  void RequestFinished(core::Transport transport, Rpc rpc, absl::StatusCode code, Duration elapsed);

  // Validating and tokenizing one request's inputs took `elapsed`.
  void Tokenized(Duration elapsed);
  // A successful Encode/EncodeStream request answered `inputs` inputs of
  // `tokens` tokens in all.
  void Encoded(int64_t inputs, int64_t tokens);

  // BatcherObserver: cheap, lock-free; called from the batcher's threads.
  void OnQueueChanged(int64_t requests, int64_t tokens) override;
  void OnRequestDequeued(Clock::duration queue_time) override;
  void OnBatchDone(int inputs, int64_t tokens, Clock::duration engine_time) override;

 private:
  struct RequestSeries {
    prometheus::Counter* count = nullptr;
    prometheus::Histogram* duration = nullptr;
  };

  std::shared_ptr<prometheus::Registry> registry_;
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
};

}  // namespace server
