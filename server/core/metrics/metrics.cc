#include "server/core/metrics/metrics.h"

#include <prometheus/family.h>

#include "server/core/metrics/metrics_buckets.h"

namespace server::core {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

double Seconds(std::chrono::steady_clock::duration elapsed) {
  return std::chrono::duration<double>(elapsed).count();
}

static_assert(kAnsweredCodes.back() == absl::StatusCode::kInternal);
static_assert(kAnsweredCodes.front() == absl::StatusCode::kOk);

size_t CodeIndex(absl::StatusCode code) {
  for (size_t i = 0; i < kAnsweredCodes.size(); ++i) {
    if (kAnsweredCodes[i] == code) return i;
  }
  return kAnsweredCodes.size() - 1;  // INTERNAL
}

constexpr core::Transport kTransports[core::kTransportCount] = {core::Transport::kGrpc,
                                                                core::Transport::kHttp};

prometheus::Labels RequestLabels(const std::string& model, core::Transport transport, Rpc rpc,
                                 size_t code) {
  return {{"model", model},
          {"transport", core::TransportName(transport)},
          {"rpc", RpcName(rpc)},
          {"code", absl::StatusCodeToString(kAnsweredCodes[code])}};
}

// The child kept in `slot`, made by `add` (Family::Add) on the first call.
// Racing first calls add the same child (Family::Add returns the existing
// one) and store the same pointer.
template <typename Metric, typename Add>
Metric& Child(std::atomic<Metric*>& slot, const Add& add) {
  Metric* metric = slot.load(std::memory_order_acquire);
  if (metric == nullptr) {
    metric = &add();
    slot.store(metric, std::memory_order_release);
  }
  return *metric;
}

}  // namespace

ServerMetrics::ServerMetrics(const BatcherConfig& batcher, const ModelInfoLabels& model,
                             std::shared_ptr<prometheus::Registry> registry_shared)
    : registry_(registry_shared != nullptr ? std::move(registry_shared)
                                           : std::make_shared<prometheus::Registry>()),
      duration_buckets_(DurationBuckets()),
      model_(model.model) {
  prometheus::Registry& registry = *registry_;
  // Every series of this model carries its name (several models share the
  // registry: Register returns the family the first model built).
  const prometheus::Labels labels = {{"model", model_}};
  const std::vector<double>& durations = duration_buckets_;

  request_durations_ =
      &BuildHistogram()
           .Name("encoder_request_duration_seconds")
           .Help(
               "Time from receiving a request (a unary call, or one request of a stream) to its "
               "response being sent, by transport (grpc, http), RPC and status code")
           .Register(registry);
  request_counts_ = &BuildCounter()
                         .Name("encoder_requests_total")
                         .Help(
                             "Requests answered (unary calls, and each request of a stream, "
                             "and HTTP requests), by transport, RPC and code")
                         .Register(registry);
  for (core::Transport transport : kTransports) {
    for (Rpc rpc : kRpcs) {
      for (absl::StatusCode code : AnswerableCodes(transport, rpc)) {
        RequestCount(transport, rpc, CodeIndex(code));
      }
      if (Serves(transport, rpc)) RequestDuration(transport, rpc, CodeIndex(absl::StatusCode::kOk));
    }
  }

  tokenize_duration_ = &BuildHistogram()
                            .Name("encoder_tokenize_duration_seconds")
                            .Help(
                                "Time to validate and tokenize one request's inputs (Encode, "
                                "EncodeStream, Tokenize)")
                            .Register(registry)
                            .Add(labels, durations);
  queue_duration_ =
      &BuildHistogram()
           .Name("encoder_queue_duration_seconds")
           .Help("Time from a request entering the batch queue to its first input starting a batch")
           .Register(registry)
           .Add(labels, durations);
  batch_duration_ = &BuildHistogram()
                         .Name("encoder_batch_duration_seconds")
                         .Help("Engine time of one batch: the backend call, pooling included")
                         .Register(registry)
                         .Add(labels, durations);
  batch_inputs_ = &BuildHistogram()
                       .Name("encoder_batch_inputs")
                       .Help("Inputs in each batch the engine ran")
                       .Register(registry)
                       .Add(labels, CountBuckets(batcher.max_batch_inputs));
  batch_tokens_ = &BuildHistogram()
                       .Name("encoder_batch_tokens")
                       .Help("Tokens (real, unpadded) in each batch the engine ran")
                       .Register(registry)
                       .Add(labels, CountBuckets(batcher.max_batch_tokens));

  inputs_ = &BuildCounter()
                 .Name("encoder_inputs_total")
                 .Help("Inputs answered in successful Encode and EncodeStream requests")
                 .Register(registry)
                 .Add(labels);
  tokens_ =
      &BuildCounter()
           .Name("encoder_tokens_total")
           .Help("Tokens of the inputs answered in successful Encode and EncodeStream requests")
           .Register(registry)
           .Add(labels);

  queue_requests_ = &BuildGauge()
                         .Name("encoder_queue_requests")
                         .Help("Requests waiting in the batch queue")
                         .Register(registry)
                         .Add(labels);
  queue_tokens_ = &BuildGauge()
                       .Name("encoder_queue_tokens")
                       .Help("Tokens waiting in the batch queue")
                       .Register(registry)
                       .Add(labels);
  BuildGauge()
      .Name("encoder_queue_tokens_limit")
      .Help(
          "Admission limit of the batch queue (--max-queue-tokens): beyond it, RESOURCE_EXHAUSTED")
      .Register(registry)
      .Add(labels)
      .Set(static_cast<double>(batcher.max_queue_tokens));
  inflight_ = &BuildGauge()
                   .Name("encoder_inflight_requests")
                   .Help("Requests received and not yet answered (queued, running or being sent)")
                   .Register(registry)
                   .Add(labels);

  BuildGauge()
      .Name("encoder_model_info")
      .Help("The model served (always 1)")
      .Register(registry)
      .Add({{"model", model.model},
            {"precision", model.precision},
            {"layer_norm", model.layer_norm},
            {"hidden_size", std::to_string(model.hidden_size)},
            {"layers", std::to_string(model.layers)},
            {"isa", model.isa}})
      .Set(1);
}

prometheus::Counter& ServerMetrics::RequestCount(core::Transport transport, Rpc rpc, size_t code) {
  return Child(requests_[static_cast<size_t>(transport)][static_cast<size_t>(rpc)][code].count,
               [&]() -> prometheus::Counter& {
                 return request_counts_->Add(RequestLabels(model_, transport, rpc, code));
               });
}

prometheus::Histogram& ServerMetrics::RequestDuration(core::Transport transport, Rpc rpc,
                                                      size_t code) {
  return Child(requests_[static_cast<size_t>(transport)][static_cast<size_t>(rpc)][code].duration,
               [&]() -> prometheus::Histogram& {
                 return request_durations_->Add(RequestLabels(model_, transport, rpc, code),
                                                duration_buckets_);
               });
}

void ServerMetrics::RequestFinished(core::Transport transport, Rpc rpc, absl::StatusCode code,
                                    Duration elapsed) {
  const size_t index = CodeIndex(code);
  RequestCount(transport, rpc, index).Increment();
  RequestDuration(transport, rpc, index).Observe(Seconds(elapsed));
  inflight_->Decrement();
}

int64_t ServerMetrics::Answered(core::Transport transport, absl::StatusCode code) const {
  double answered = 0;
  for (const auto& by_code : requests_[static_cast<size_t>(transport)]) {
    const prometheus::Counter* count = by_code[CodeIndex(code)].count.load();
    if (count != nullptr) answered += count->Value();
  }
  return static_cast<int64_t>(answered);
}

void ServerMetrics::Tokenized(Duration elapsed) { tokenize_duration_->Observe(Seconds(elapsed)); }

void ServerMetrics::Encoded(int64_t inputs, int64_t tokens) {
  inputs_->Increment(static_cast<double>(inputs));
  tokens_->Increment(static_cast<double>(tokens));
}

void ServerMetrics::OnQueueChanged(int64_t requests, int64_t tokens) {
  queue_requests_->Set(static_cast<double>(requests));
  queue_tokens_->Set(static_cast<double>(tokens));
}

void ServerMetrics::OnRequestDequeued(Clock::duration queue_time) {
  queue_duration_->Observe(Seconds(queue_time));
}

void ServerMetrics::OnBatchDone(int inputs, int64_t tokens, Clock::duration engine_time) {
  batch_duration_->Observe(Seconds(engine_time));
  batch_inputs_->Observe(static_cast<double>(inputs));
  batch_tokens_->Observe(static_cast<double>(tokens));
}

}  // namespace server::core
