// The service core assembled as the server assembles it, on a fake engine:
// a small random model for tokenizing and validating, FakeBackend for the
// batches (each output is {first id, token count}), the real batcher,
// input tokenizer, dispatcher and metrics. No gRPC, no HTTP. Shared by the core's
// and the HTTP adapter's tests.
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <memory>

#include "server/core/batching/batcher.h"
#include "server/core/cache/result_cache.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model/model_loader.h"
#include "server/core/model_set.h"
#include "server/core/requests/plans.h"
#include "support/fake_backend.h"
#include "support/test_model.h"

namespace testing_support {

class CoreService {
 public:
  explicit CoreService(server::core::BatcherConfig config = DefaultConfig(),
                       server::core::RequestLimits limits = {})
      : config_(config),
        limits_(limits),
        loaded_(Load(model_.dir())),
        metrics_(config, server::core::ModelInfoLabels{"test", "fp32", "post", TestModel::kHidden,
                                                       2, "avx2"}),
        batcher_(config, &backend_, server::core::SystemClock(), &metrics_),
        inputs_(&loaded_, limits),
        dispatcher_(&inputs_, &batcher_, &metrics_) {
    batcher_.Start();
  }

  static server::core::BatcherConfig DefaultConfig() { return server::core::BatcherConfig(); }

  const server::core::LoadedModel& model() const { return loaded_; }
  // The heads the model "has" (the fake backend computes them): set before
  // the first request.
  void SetHeads(server::core::ModelHeads heads) { loaded_.heads = std::move(heads); }
  // A cross-encoder: one label, "score", identity activation (the scores are
  // FakeBackend's logits).
  static server::core::ModelHeads RerankerHeads() {
    server::core::ModelHeads heads;
    heads.classifier = engine::ClassifierHead{1, {"score"}, engine::ScoreActivation::kIdentity};
    return heads;
  }
  void SetReranker() { SetHeads(RerankerHeads()); }
  // bge-m3's: sparse (lexical weights) and a ColBERT head that leaves out the
  // first token (FakeBackend gives 2 values per token).
  static server::core::ModelHeads MultiOutputHeads() {
    server::core::ModelHeads heads;
    heads.sparse = true;
    heads.multi_vector = engine::MultiVectorHead{2, true, "fake"};
    return heads;
  }
  // The result cache on, as --cache-bytes turns it on, for the model named
  // "test"; `cache` must outlive the service (declare it first).
  void EnableCache(server::core::ResultCache* cache) {
    dispatcher_.EnableCache(cache, "test", server::core::SystemClock());
  }
  // A request through the dispatcher (no deadline, never cancelled), waited
  // for: the worker must be running and the backend not held.
  absl::StatusOr<server::core::EncodeResult> Encode(const server::core::EncodeRequest& request) {
    return Await<server::core::EncodeResult>(request, &server::core::EncodeDispatcher::Dispatch);
  }
  absl::StatusOr<server::core::RerankResult> Rerank(const server::core::RerankRequest& request) {
    return Await<server::core::RerankResult>(request,
                                             &server::core::EncodeDispatcher::DispatchRerank);
  }
  absl::StatusOr<server::core::ClassifyResult> Classify(
      const server::core::ClassifyRequest& request) {
    return Await<server::core::ClassifyResult>(request,
                                               &server::core::EncodeDispatcher::DispatchClassify);
  }
  absl::StatusOr<server::core::SparseResult> Sparse(const server::core::SparseRequest& request) {
    return Await<server::core::SparseResult>(request,
                                             &server::core::EncodeDispatcher::DispatchSparse);
  }
  FakeBackend& backend() { return backend_; }
  server::core::Batcher& batcher() { return batcher_; }
  server::core::ServerMetrics& metrics() { return metrics_; }
  server::core::EncodeDispatcher& dispatcher() { return dispatcher_; }

  // This one model as the adapters see it, named `name`; `keys` (must
  // outlive it) off: no authentication.
  std::unique_ptr<server::core::ServedModels> Served(const std::string& name,
                                                     const server::core::ApiKeys* keys) {
    server::core::ModelRoute route{&dispatcher_, &metrics_,
                                   server::core::DescribeModel(loaded_, limits_, config_)};
    route.description.name = name;
    return std::make_unique<server::core::ServedModels>(
        std::vector<server::core::ModelRoute>{route}, keys);
  }

 private:
  template <typename Result, typename Request, typename Method>
  absl::StatusOr<Result> Await(const Request& request, Method method) {
    auto promise = std::make_shared<std::promise<absl::StatusOr<Result>>>();
    std::future<absl::StatusOr<Result>> future = promise->get_future();
    (dispatcher_.*method)(
        request, server::core::Clock::time_point::max(), {},
        [promise](absl::StatusOr<Result> result) { promise->set_value(std::move(result)); });
    return future.get();
  }

  static server::core::LoadedModel Load(const std::string& dir) {
    engine::EncoderOptions options;
    options.threads = 1;
    absl::StatusOr<server::core::LoadedModel> model = server::core::LoadModel(dir, options);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : server::core::LoadedModel{};
  }

  const server::core::BatcherConfig config_;
  const server::core::RequestLimits limits_;
  TestModel model_;
  server::core::LoadedModel loaded_;
  FakeBackend backend_;
  server::core::ServerMetrics metrics_;
  server::core::Batcher batcher_;
  server::core::InputTokenizer inputs_;
  server::core::EncodeDispatcher dispatcher_;
};

}  // namespace testing_support
