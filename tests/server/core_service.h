// The service core assembled as the server assembles it, on a fake engine:
// a small random model for tokenizing and validating, FakeBackend for the
// batches (each output is {first id, token count}), the real batcher,
// builder, dispatcher and metrics. No gRPC, no HTTP. Shared by the core's
// and the HTTP adapter's tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "fake_backend.h"
#include "server/core/batcher.h"
#include "server/core/encode_dispatcher.h"
#include "server/core/metrics.h"
#include "server/core/model_loader.h"
#include "server/core/request_builder.h"
#include "test_model.h"

namespace server {

class CoreService {
 public:
  explicit CoreService(BatcherConfig config = DefaultConfig(), RequestLimits limits = {})
      : loaded_(Load(model_.dir())),
        metrics_(config, ModelInfoLabels{"test", "fp32", "post", TestModel::kHidden, 2, "avx2"}),
        batcher_(config, &backend_, SystemClock(), &metrics_),
        builder_(&loaded_, limits),
        dispatcher_(&builder_, &batcher_, &metrics_) {
    batcher_.Start();
  }

  static BatcherConfig DefaultConfig() {
    BatcherConfig config;
    config.max_queue_delay = std::chrono::microseconds(0);
    return config;
  }

  const LoadedModel& model() const { return loaded_; }
  FakeBackend& backend() { return backend_; }
  Batcher& batcher() { return batcher_; }
  ServerMetrics& metrics() { return metrics_; }
  EncodeDispatcher& dispatcher() { return dispatcher_; }

 private:
  static LoadedModel Load(const std::string& dir) {
    engine::EncoderOptions options;
    options.threads = 1;
    absl::StatusOr<LoadedModel> model = LoadModel(dir, options);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : LoadedModel{};
  }

  TestModel model_;
  LoadedModel loaded_;
  FakeBackend backend_;
  ServerMetrics metrics_;
  Batcher batcher_;
  RequestBuilder builder_;
  EncodeDispatcher dispatcher_;
};

}  // namespace server
