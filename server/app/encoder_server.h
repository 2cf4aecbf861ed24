// The whole server in one object: the served models (each with its metrics,
// queue and batcher, taking turns on the engine), gRPC service, health and
// reflection, HTTP, and the order in which they start and stop. main.cc and
// the in-process tests both use it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "server/app/metrics_endpoint.h"
#include "server/app/server_config.h"
#include "server/core/api/api_keys.h"
#include "server/core/batching/batch_request.h"
#include "server/core/batching/batcher_observers.h"
#include "server/core/batching/engine_backend.h"
#include "server/core/cache/result_cache.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/metrics/metrics_process.h"
#include "server/core/model/model_loader.h"
#include "server/core/model_set.h"
#include "server/core/requests/plans.h"
#include "server/grpc/grpc_server.h"
#include "server/grpc/tls.h"
#include "server/http/http_server.h"

namespace server {

class EncoderServer {
 public:
  // Checks the ports are free and the TLS files (if any) are good, loads the
  // model, runs one warm-up batch, serves /metrics on the metrics port, then
  // listens for gRPC (plaintext, TLS or mutual TLS); health is SERVING when
  // this returns. Errors are one line each, naming the cause (bad flag, TLS
  // file, model file, port in use). `observer` (may be null) sees the
  // batcher beside the metrics and must outlive the server.
  static absl::StatusOr<std::unique_ptr<EncoderServer>> Start(
      const ServerConfig& config, core::BatcherObserver* observer = nullptr);

  ~EncoderServer();  // FinishShutdown() if not done yet

  int port() const { return grpc_ == nullptr ? 0 : grpc_->port(); }
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_ == nullptr ? 0 : http_->port(); }  // 0: HTTP off
  // The first model (the only one unless several are served) and its metrics.
  const core::LoadedModel& model() const { return models_->pipelines().front()->model; }
  core::ServerMetrics& metrics() { return models_->pipelines().front()->metrics; }
  const core::ServedModels& models() const { return *models_; }

  // Shutdown, first step (at once): health NOT_SERVING, so that health-
  // checking clients and load balancers move away; calls are still served
  // for config.shutdown_lame_duck (the lame duck), so that clients that do
  // not watch health are not refused into a busy retry loop.
  void BeginShutdown() ABSL_LOCKS_EXCLUDED(shutdown_mu_);
  // Second step, once the lame duck is over (waits for it): gRPC's own
  // shutdown starts at once, on a thread of its own, with the shutdown
  // grace (counted from BeginShutdown) as its deadline: it stops listening
  // and sends GOAWAY, so clients send new calls elsewhere (or fail to
  // connect) instead of having them cancelled, and it waits for every call
  // already started. Then new work reaching a handler is refused with
  // UNAVAILABLE, the metrics endpoint stops (in parallel), and queued and
  // running work is drained up to the grace (what is still queued then is
  // answered UNAVAILABLE). Returns when gRPC has finished every call;
  // returns whether all work finished in time.
  bool FinishShutdown() ABSL_LOCKS_EXCLUDED(shutdown_mu_);

 private:
  EncoderServer(const ServerConfig& config, std::vector<core::LoadedModel> models,
                core::BatcherObserver* observer);
  absl::Status WarmUp(core::ModelPipeline& pipeline);
  absl::Status ServeMetrics();
  absl::Status Listen();
  absl::Status ServeHttp();
  void StopHttp();  // promptly (StopCivetWebPromptly); waits for responses being sent

  const ServerConfig config_;
  const core::ApiKeys api_keys_;
  ServerTlsPem tls_;  // empty: plaintext
  // What /metrics exports: every model's series (labelled model) and the
  // process's.
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<core::ProcessCollector> process_metrics_;
  core::EngineTurns turns_;  // before the models, whose backends take turns through it
  std::unique_ptr<core::ResultCache>
      cache_;  // before the models, whose dispatchers use it; null: off
  std::unique_ptr<core::ServedModels> models_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
  std::unique_ptr<http::HttpServer> http_;
  std::unique_ptr<GrpcServer> grpc_;  // last: stops before what it calls into; null: not listening
  int metrics_port_ = 0;

  // Held for all of FinishShutdown, so a second call waits for the first.
  common::Mutex shutdown_mu_;
  bool shutdown_begun_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  bool shutdown_finished_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  bool drained_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  std::chrono::steady_clock::time_point lame_duck_end_ ABSL_GUARDED_BY(shutdown_mu_);
  std::chrono::steady_clock::time_point shutdown_deadline_ ABSL_GUARDED_BY(shutdown_mu_);
};

}  // namespace server
