#include "server/app/encoder_server.h"

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/isa.h"
#include "server/app/open_file_limit.h"
#include "server/app/port_check.h"
#include "server/app/quantization_flag.h"
#include "server/core/log.h"
#include "server/core/model/model_heads.h"
#include "server/http/routes.h"

namespace server {
namespace {

// How long, after gRPC's shutdown starts, calls reaching a handler are still
// served rather than refused: time for its GOAWAY to be written ahead of any
// refusal.
constexpr std::chrono::milliseconds kGoawayHeadStart(20);
// How long the batcher must have answered nothing before gRPC's shutdown
// starts (see FinishShutdown).
constexpr std::chrono::milliseconds kQuietBeforeGoaway(100);

// Runs `work` on a new thread that ends when it returns. The engine's OpenMP
// team belongs to the thread that first runs the engine; loading and warming
// up on a passing thread leaves the batcher's worker the only thread with a
// team. With a second, idle team libgomp manages more threads than there are
// CPUs and cuts its spin-waits to about a thousand iterations: every barrier
// of every batch then sleeps in the kernel and wakes again (on 2 cores at
// concurrency 32 that cost the server about a fifth of its throughput).
template <typename Work>
auto OnPassingThread(Work work) {
  decltype(work()) result;
  std::thread([&] { result = work(); }).join();
  return result;
}

// "gRPC: OK 6555, UNAVAILABLE 46; HTTP: none": what the server answered with
// over its run, every model together (codes never answered left out).
std::string AnsweredLine(const core::ServedModels& models) {
  std::string line;
  for (const auto transport : {core::Transport::kGrpc, core::Transport::kHttp}) {
    absl::StrAppend(&line, line.empty() ? "" : "; ",
                    transport == core::Transport::kGrpc ? "gRPC:" : "HTTP:");
    bool any = false;
    for (const absl::StatusCode code : core::kAnsweredCodes) {
      int64_t answered = 0;
      for (const auto& pipeline : models.pipelines()) {
        answered += pipeline->metrics.Answered(transport, code);
      }
      if (answered == 0) continue;
      absl::StrAppend(&line, any ? ", " : " ", absl::StatusCodeToString(code), " ", answered);
      any = true;
    }
    if (!any) absl::StrAppend(&line, " none");
  }
  return line;
}

// The start-up lines of one loaded model.
void LogModel(const core::LoadedModel& model, const std::string& dir) {
  const engine::ModelConfig& model_config = model.encoder->config();
  if (model.directory != dir) {
    core::LogEvent(
        absl::StrCat(dir,
                     " is a Hugging Face cache folder: loaded the snapshot its refs/main "
                     "names, ",
                     model.directory));
  }
  core::LogEvent(absl::StrCat(
      "loaded model ", model.name, " from ", model.directory, ": ", model_config.model_type,
      ", hidden ", model_config.hidden_size, ", layers ", model_config.num_layers, ", max length ",
      model.max_length(), ", vocabulary ", model_config.vocab_size, ", pooling ",
      model.pipeline.pooling_names(), model.pipeline.dense.empty() ? "" : " + Dense",
      model.pipeline.normalize ? " + Normalize" : "", " (embedding size ", model.embedding_size(),
      "), architecture ", model_config.architecture, ", outputs ",
      core::ServedOutputs(model.heads)));
  if (model.tokenizer == nullptr) {
    core::LogEvent(
        absl::StrCat("text input unavailable (token_ids only): ", model.tokenizer_error));
  } else {
    core::LogEvent(absl::StrCat("tokenizer ", model.tokenizer->source(), " (",
                                model.tokenizer->vocab_size(), " tokens)"));
  }
  core::LogEvent(absl::StrCat("instruction set ", engine::IsaLevelName(model.encoder->isa()),
                              " (oneDNN ", engine::OneDnnIsaName(), ")"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EncoderServer>> EncoderServer::Start(
    const ServerConfig& config, core::BatcherObserver* observer) {
  RETURN_IF_ERROR(ValidateServerConfig(config));
  for (const auto& [port, flag] : {std::pair<int, const char*>{config.port, "--port"},
                                   {config.metrics_port, "--metrics-port"},
                                   {config.http_port.value_or(0), "--http-port"}}) {
    if (port <= 0) continue;
    RETURN_IF_ERROR(CheckPortFree(config.host, port, flag));
  }
  // Before oneDNN is first used (it fixes its ISA then) and before listening.
  if (!config.isa.empty()) {
    const absl::Status status = engine::UseIsaLevel(*engine::ParseIsaLevel(config.isa));
    if (!status.ok()) return absl::Status(status.code(), absl::StrCat("--isa: ", status.message()));
  }
  // Before the model loads: a bad TLS file is a quick, clear error.
  absl::StatusOr<ServerTlsPem> tls =
      LoadServerTls(TlsFiles{config.tls_cert, config.tls_key, config.tls_client_ca});
  if (!tls.ok()) return tls.status();
  engine::EncoderOptions options;
  options.threads = config.threads;
  engine::ParsePrecision(config.precision, &options.precision);  // validated above
  options.max_batch_tokens = static_cast<int>(config.batcher.max_batch_tokens);
  std::vector<core::LoadedModel> loaded;
  RETURN_IF_ERROR(CheckQuantizationRangesNames(config, config.models));
  for (const ModelSpec& spec : ServedModelSpecs(config)) {
    absl::StatusOr<core::LoadedModel> model =
        OnPassingThread([&] { return core::LoadModel(spec.dir, options, spec.name); });
    if (!model.ok()) {
      // The engine's messages name the file at fault.
      return absl::Status(model.status().code(),
                          absl::StrCat("cannot load the model", spec.name.empty() ? "" : " ",
                                       spec.name, ": ", model.status().message()));
    }
    if (config.batcher.max_batch_tokens < model->max_length()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-batch-tokens (", config.batcher.max_batch_tokens,
                       ") must be at least the model's maximum length (", model->max_length(),
                       config.models.size() > 1 ? absl::StrCat(", ", model->name) : "", ")"));
    }
    for (const core::LoadedModel& other : loaded) {
      if (other.name == model->name) {
        return absl::InvalidArgumentError(
            absl::StrCat("two models are named \"", model->name, "\": name them (NAME=DIR)"));
      }
    }
    RETURN_IF_ERROR(AttachQuantizationRanges(config, spec, &*model));
    LogModel(*model, spec.dir);
    loaded.push_back(*std::move(model));
  }

  std::unique_ptr<EncoderServer> server(new EncoderServer(config, std::move(loaded), observer));
  server->tls_ = *std::move(tls);
  for (const auto& pipeline : server->models_->pipelines()) {
    if (absl::Status status = OnPassingThread([&] { return server->WarmUp(*pipeline); });
        !status.ok()) {
      return status;
    }
  }
  RETURN_IF_ERROR(server->ServeMetrics());
  RETURN_IF_ERROR(server->ServeHttp());
  RETURN_IF_ERROR(server->Listen());
  return server;
}

namespace {

// With several models a large batch runs in parts of at most 256 tokens, a
// turn each: another model's shorter batch runs at the next layer boundary
// of the part in progress (engine_turns.h), and the parts bound how long a
// layer takes (bench/README.md, "Several models").
constexpr int64_t kMaxTurnTokens = 256;

std::vector<std::unique_ptr<core::ModelPipeline>> Pipelines(
    const ServerConfig& config, std::vector<core::LoadedModel> models, core::EngineTurns* turns,
    const std::shared_ptr<prometheus::Registry>& registry, core::BatcherObserver* observer) {
  const int64_t max_turn_tokens = models.size() > 1 ? kMaxTurnTokens : 0;
  std::vector<std::unique_ptr<core::ModelPipeline>> pipelines;
  for (core::LoadedModel& model : models) {
    pipelines.push_back(std::make_unique<core::ModelPipeline>(std::move(model), config.batcher,
                                                              config.limits, turns, registry,
                                                              observer, max_turn_tokens));
  }
  return pipelines;
}

}  // namespace

EncoderServer::EncoderServer(const ServerConfig& config, std::vector<core::LoadedModel> models,
                             core::BatcherObserver* observer)
    : config_(config),
      api_keys_(config.api_keys),
      registry_(std::make_shared<prometheus::Registry>()),
      process_metrics_(std::make_shared<core::ProcessCollector>()),
      cache_(config.cache_bytes > 0 ? std::make_unique<core::ResultCache>(config.cache_bytes)
                                    : nullptr),
      models_(std::make_unique<core::ServedModels>(
          Pipelines(config, std::move(models), &turns_, registry_, observer), &api_keys_)) {
  if (cache_ != nullptr) {
    core::LogEvent(absl::StrCat("result cache: ", config.cache_bytes,
                                " bytes (LRU), shared by every model; identical inputs in flight "
                                "are computed once"));
    for (const auto& pipeline : models_->pipelines()) {
      pipeline->dispatcher.EnableCache(cache_.get(), pipeline->model.name, core::SystemClock());
    }
  }
}

EncoderServer::~EncoderServer() { FinishShutdown(); }

absl::Status EncoderServer::WarmUp(core::ModelPipeline& pipeline) {
  const core::LoadedModel& model = pipeline.model;
  // Tokenizer, engine and pooling on one request, so that the first client
  // does not pay for first-touch allocations and primitive creation, and
  // health turns SERVING only once they work. Straight to the backend: the
  // batcher's queue delay must not hold it, and the worker is not started yet.
  core::EncodeRequest request;
  if (model.tokenizer != nullptr) {
    request.inputs.push_back(core::Input::Text("warm up"));
  } else {
    // Token ids only: the first and last of the vocabulary.
    request.inputs.push_back(core::Input::Ids({0, model.encoder->config().vocab_size - 1}));
  }
  // A model whose output is not one vector (SPLADE's SparseEncoder, ColBERT)
  // has no embedding of its own: the engine warms up the same with CLS.
  if (model.heads.sparse_default || model.heads.multi_vector_default) {
    request.pooling = core::PoolingChoice::kCls;
  }
  absl::StatusOr<std::unique_ptr<core::BatchRequest>> built =
      core::EncodeInputs(pipeline.inputs, request);
  absl::Status status = built.status();
  if (status.ok()) {
    const core::TokenizedInput& input = (*built)->inputs.front();
    const engine::Sequence sequence{input.ids, input.token_type_ids};
    std::vector<core::InputOutput> outputs;
    status = pipeline.engine_backend.Run({&sequence, 1}, {&(*built)->spec, 1}, &outputs);
  }
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("warm-up batch of ", model.name,
                                                    " failed: ", status.message()));
  }
  pipeline.batcher.Start();
  core::LogEvent(absl::StrCat("warm-up batch of ", model.name, " done"));
  return absl::OkStatus();
}

absl::Status EncoderServer::ServeMetrics() {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start(config_.host, config_.metrics_port, {registry_, process_metrics_});
  if (!endpoint.ok()) return endpoint.status();
  metrics_endpoint_ = *std::move(endpoint);
  metrics_port_ = metrics_endpoint_->port();
  return absl::OkStatus();
}

absl::Status EncoderServer::ServeHttp() {
  if (!config_.http_port.has_value()) return absl::OkStatus();
  http::HttpOptions options = config_.http;
  options.host = config_.host;
  options.port = *config_.http_port;
  RaiseOpenFileLimit(options.max_connections);
  absl::StatusOr<std::unique_ptr<http::HttpServer>> server = http::HttpServer::Start(
      options, models_.get(), core::SystemClock(), {registry_, process_metrics_});
  if (!server.ok()) return server.status();
  http_ = *std::move(server);
  core::LogEvent(absl::StrCat("HTTP API on http://", HostPort(config_.host, http_->port()), " (",
                              http::RouteList(), ")",
                              api_keys_.enabled() ? ", API keys required" : ""));
  return absl::OkStatus();
}

absl::Status EncoderServer::Listen() {
  GrpcOptions options;
  options.address = HostPort(config_.host, config_.port);
  options.tls = tls_;
  options.max_receive_message_bytes = MaxReceiveMessageBytes(config_);
  options.max_concurrent_streams = config_.max_concurrent_streams;
  options.max_connection_idle = config_.max_connection_idle;
  options.handshake_timeout = config_.handshake_timeout;
  options.keepalive_time = config_.keepalive_time;
  options.keepalive_timeout = config_.keepalive_timeout;
  options.min_client_ping_interval = config_.min_client_ping_interval;
  ASSIGN_OR_RETURN(grpc_, GrpcServer::Start(options, models_.get(), core::SystemClock()));
  core::LogEvent(absl::StrCat(
      "serving on ", HostPort(config_.host, grpc_->port()), " (", TransportSecurityName(config_),
      ", health SERVING); metrics on http://", HostPort(config_.host, metrics_port_), "/metrics"));
  return absl::OkStatus();
}

void EncoderServer::StopHttp() {
  if (http_ != nullptr) http_->Stop();
}

void EncoderServer::BeginShutdown() {
  {
    common::MutexLock lock(&shutdown_mu_);
    if (shutdown_begun_) return;
    shutdown_begun_ = true;
    const auto now = std::chrono::steady_clock::now();
    shutdown_deadline_ = now + config_.shutdown_grace;
    lame_duck_end_ = now + std::min<std::chrono::steady_clock::duration>(config_.shutdown_lame_duck,
                                                                         config_.shutdown_grace);
  }
  if (grpc_ == nullptr) return;  // never listened: nothing was served
  core::LogEvent(absl::StrCat(
      "shutting down: health NOT_SERVING, still serving for ", config_.shutdown_lame_duck.count(),
      " ms, then GOAWAY, new calls UNAVAILABLE, finishing queued work (grace ",
      config_.shutdown_grace.count(), " ms)"));
  grpc_->SetServing(false);
  if (http_ != nullptr) http_->SetServing(false);
}

bool EncoderServer::FinishShutdown() {
  BeginShutdown();
  common::MutexLock lock(&shutdown_mu_);
  if (shutdown_finished_) return drained_;
  shutdown_finished_ = true;
  if (grpc_ == nullptr) {
    // Never listened (a failed start): nothing to drain from clients.
    drained_ = true;
    for (const auto& pipeline : models_->pipelines()) {
      pipeline->batcher.Shutdown();
      drained_ = pipeline->batcher.Drain(std::chrono::steady_clock::duration::zero()) && drained_;
    }
    StopHttp();  // after the drain has answered its requests
    return drained_;
  }
  std::this_thread::sleep_until(lame_duck_end_);
  // A client sends its next call when it gets an answer; a call that is on
  // the wire when gRPC's shutdown starts is cancelled by gRPC (CANCELLED, and
  // the client cannot know whether it ran). So: no new batch for a moment,
  // and gRPC's shutdown starts once the batcher has answered nothing for
  // kQuietBeforeGoaway (bounded by half the grace left), i.e. once the calls
  // that its last answers prompted have arrived.
  const auto& pipelines = models_->pipelines();
  for (const auto& pipeline : pipelines) pipeline->batcher.Hold();
  // Whether any model's batcher answered within kQuietBeforeGoaway.
  const auto answering = [&pipelines] {
    for (const auto& pipeline : pipelines) {
      if (pipeline->batcher.answering() ||
          pipeline->batcher.SinceLastAnswer() < kQuietBeforeGoaway) {
        return true;
      }
    }
    return false;
  };
  const auto quiet_until = std::chrono::steady_clock::now() +
                           (shutdown_deadline_ - std::chrono::steady_clock::now()) / 2;
  while (std::chrono::steady_clock::now() < quiet_until && answering()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // gRPC first: from here on it hands no new call to a handler, and its
  // GOAWAY goes out before any refusal below, so that a client does not
  // resend a refused call on this connection and have it cancelled.
  std::thread grpc_shutdown([this, deadline = shutdown_deadline_] {
    const auto left = std::max(deadline - std::chrono::steady_clock::now(),
                               std::chrono::steady_clock::duration::zero());
    grpc_->Shutdown(std::chrono::system_clock::now() + left);
  });
  // MetricsEndpoint's stop takes a few ms of its own, beside gRPC's.
  std::thread metrics_stop(
      [endpoint = std::move(metrics_endpoint_)]() mutable { endpoint.reset(); });
  // Calls gRPC had already matched still reach the handlers for a moment:
  // they are served, not refused, until GOAWAY has had time to go out.
  std::this_thread::sleep_for(kGoawayHeadStart);
  grpc_->StopAccepting();
  for (const auto& pipeline : pipelines) {
    pipeline->batcher.Shutdown();
    pipeline->batcher.Resume();
  }
  // The models drain in parallel, each on its own batcher thread.
  drained_ = true;
  for (const auto& pipeline : pipelines) {
    drained_ =
        pipeline->batcher.Drain(std::max(shutdown_deadline_ - std::chrono::steady_clock::now(),
                                         std::chrono::steady_clock::duration::zero())) &&
        drained_;
  }
  // Every request is answered by now (or the grace is spent); gRPC waits for
  // the answers to be sent, then (at the deadline) cancels what remains.
  grpc_shutdown.join();
  metrics_stop.join();
  // Every HTTP request has its answer by now: this waits for them to be sent.
  StopHttp();
  core::LogEvent(drained_ ? "stopped: all queued and running work finished"
                          : "stopped: shutdown grace expired; queued requests were answered "
                            "UNAVAILABLE");
  core::LogEvent(absl::StrCat("answered since start: ", AnsweredLine(*models_)));
  return drained_;
}

}  // namespace server
