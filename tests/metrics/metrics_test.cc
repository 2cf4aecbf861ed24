// The server's /metrics in-process, read over a real socket: every family is
// there with zeros before the first request, the counts follow what clients
// saw (codes included, deadline and cancellation too), requests add no
// series, and the metrics port is checked at start.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "encoder/v1/encoder.grpc.pb.h"
#include "engine/isa.h"
#include "scrape.h"
#include "server/app/encoder_server.h"
#include "server/core/batching/batcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/grpc/status_mapping.h"
#include "support/net.h"
#include "support/test_server.h"

namespace server {
namespace {

using encoder::v1::EncodeRequest;
using encoder::v1::EncodeResponse;
using Labels = std::map<std::string, std::string>;
using testing_support::Connect;
using testing_support::Encode;
using testing_support::StartServer;
using testing_support::TestModel;
using testing_support::TestServerSuite;

constexpr const char* kRpcs[] = {"Encode", "EncodeStream", "Tokenize", "GetModelInfo", "Decode"};

// The budgets the count buckets end at (checked below).
ServerConfig TestConfig(const std::string& model_dir) {
  ServerConfig config = testing_support::TestServerConfig(model_dir);
  config.batcher.max_batch_inputs = 64;
  config.batcher.max_queue_tokens = 65536;
  return config;
}

EncodeRequest Texts(const std::vector<std::string>& texts) {
  EncodeRequest request;
  for (const std::string& text : texts) request.add_inputs()->set_text(text);
  return request;
}

Scrape MustScrape(int port) {
  absl::StatusOr<Scrape> scrape = ScrapeMetrics(port);
  EXPECT_TRUE(scrape.ok()) << scrape.status();
  return scrape.ok() ? *scrape : Scrape{};
}

// Scrapes until `done` holds (the server records a call just after the client
// has its answer), for at most 10 s; returns the last scrape.
Scrape ScrapeUntil(int port, const std::function<bool(const Scrape&)>& done) {
  Scrape scrape;
  for (int attempt = 0; attempt < 200; ++attempt) {
    scrape = MustScrape(port);
    if (done(scrape)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return scrape;
}

double RequestsTotal(const Scrape& scrape) {
  double total = 0;
  for (const auto& [key, value] : scrape.samples) {
    if (key.rfind("encoder_requests_total{", 0) == 0) total += value;
  }
  return total;
}

// The series of the server's own families (not the exposer's), values aside.
std::vector<std::string> EncoderSeries(const Scrape& scrape) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : scrape.samples) {
    if (key.rfind("encoder_", 0) == 0 || key.rfind("process_", 0) == 0) keys.push_back(key);
  }
  return keys;
}

class MetricsTest : public TestServerSuite {
 protected:
  static void SetUpTestSuite() {
    StartSuiteServer([](ServerConfig& config) { config = TestConfig(config.model_dir); });
  }
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(TestServerSuite::SetUp());
    stub_ = encoder::v1::Encoder::NewStub(Connect(suite_server().port()));
  }

  std::unique_ptr<encoder::v1::Encoder::Stub> stub_;
};

// Runs first in this binary; under ctest every test has a fresh server anyway.
TEST_F(MetricsTest, EveryFamilyIsThereWithZerosBeforeTheFirstRequest) {
  const Scrape scrape = MustScrape(suite_server().metrics_port());
  const std::map<std::string, std::string> families = {
      {"encoder_request_duration_seconds", "histogram"},
      {"encoder_tokenize_duration_seconds", "histogram"},
      {"encoder_queue_duration_seconds", "histogram"},
      {"encoder_batch_duration_seconds", "histogram"},
      {"encoder_batch_inputs", "histogram"},
      {"encoder_batch_tokens", "histogram"},
      {"encoder_requests_total", "counter"},
      {"encoder_inputs_total", "counter"},
      {"encoder_tokens_total", "counter"},
      {"encoder_queue_requests", "gauge"},
      {"encoder_queue_tokens", "gauge"},
      {"encoder_queue_tokens_limit", "gauge"},
      {"encoder_inflight_requests", "gauge"},
      {"encoder_model_info", "gauge"},
      {"process_resident_memory_bytes", "gauge"},
      {"process_cpu_seconds_total", "counter"},
      {"process_start_time_seconds", "gauge"},
      {"process_open_fds", "gauge"},
  };
  for (const auto& [name, type] : families) {
    const auto it = scrape.types.find(name);
    ASSERT_NE(it, scrape.types.end()) << name << " is missing";
    EXPECT_EQ(it->second, type) << name;
  }

  // The series of the calls that exist, at zero (their list: metrics_parts_test);
  // each duration histogram with 31 bounds + Inf.
  for (const char* transport : {"grpc", "http"})
    for (const char* rpc : kRpcs) {
      const Labels ok = {{"transport", transport}, {"rpc", rpc}, {"code", "OK"}};
      if (std::string(transport) == "http" && std::string(rpc) == "EncodeStream") {
        EXPECT_FALSE(scrape.Has("encoder_requests_total", ok)) << "EncodeStream is gRPC's only";
        continue;
      }
      EXPECT_EQ(scrape.Value("encoder_requests_total", ok), 0) << rpc;
      EXPECT_EQ(scrape.Value("encoder_requests_total",
                             {{"transport", transport}, {"rpc", rpc}, {"code", "UNAVAILABLE"}}),
                0)
          << rpc;
      EXPECT_EQ(scrape.Value("encoder_request_duration_seconds_count", ok), 0) << rpc;
      EXPECT_EQ(scrape.Value("encoder_request_duration_seconds_sum", ok), 0) << rpc;
      Labels bucket = ok;
      for (const char* le : {"0.0001", "0.0015", "0.1", "1", "10", "+Inf"}) {
        bucket["le"] = le;
        EXPECT_EQ(scrape.Value("encoder_request_duration_seconds_bucket", bucket), 0) << le;
      }
    }
  // Codes a call cannot answer have no series: GetModelInfo refuses no input.
  EXPECT_FALSE(
      scrape.Has("encoder_requests_total",
                 {{"transport", "grpc"}, {"rpc", "GetModelInfo"}, {"code", "INVALID_ARGUMENT"}}));
  EXPECT_FALSE(scrape.Has("encoder_requests_total",
                          {{"transport", "http"}, {"rpc", "Encode"}, {"code", "CANCELLED"}}));
  int buckets = 0;
  for (const auto& [key, value] : scrape.samples) {
    if (key.rfind("encoder_request_duration_seconds_bucket{code=\"OK\",le=", 0) == 0 &&
        key.find("rpc=\"Encode\",transport=\"grpc\"") != std::string::npos) {
      ++buckets;
    }
  }
  EXPECT_EQ(buckets, 32);

  for (const char* name :
       {"encoder_tokenize_duration_seconds", "encoder_queue_duration_seconds",
        "encoder_batch_duration_seconds", "encoder_batch_inputs", "encoder_batch_tokens"}) {
    EXPECT_EQ(scrape.Value(std::string(name) + "_count"), 0) << name;
  }
  // The count buckets end at the budgets.
  EXPECT_TRUE(scrape.Has("encoder_batch_inputs_bucket", {{"le", "64"}}));
  EXPECT_FALSE(scrape.Has("encoder_batch_inputs_bucket", {{"le", "96"}}));
  EXPECT_TRUE(scrape.Has("encoder_batch_tokens_bucket", {{"le", "4096"}}));
  for (const char* name : {"encoder_inputs_total", "encoder_tokens_total", "encoder_queue_requests",
                           "encoder_queue_tokens", "encoder_inflight_requests"}) {
    EXPECT_EQ(scrape.Value(name), 0) << name;
  }
  EXPECT_EQ(scrape.Value("encoder_queue_tokens_limit"), 65536);
  EXPECT_EQ(scrape.Value("encoder_model_info",
                         {{"model", suite_server().server().model().name},
                          {"precision", "fp32"},
                          {"layer_norm", "post"},
                          {"hidden_size", "64"},
                          {"layers", "2"},
                          {"isa", engine::IsaLevelName(engine::BestCpuIsaLevel())}}),
            1);

  EXPECT_GT(scrape.Value("process_resident_memory_bytes"), 1e6);
  EXPECT_GT(scrape.Value("process_cpu_seconds_total"), 0);
  EXPECT_GE(scrape.Value("process_open_fds"), 3);
  const double started = scrape.Value("process_start_time_seconds");
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(started, now + 1);
  EXPECT_GT(started, now - 600);
}

TEST_F(MetricsTest, CountsFollowWhatTheClientsSaw) {
  const int port = suite_server().metrics_port();
  int64_t inputs = 0;
  int64_t tokens = 0;
  const auto count_outputs = [&](const EncodeResponse& response) {
    inputs += response.outputs_size();
    for (const auto& output : response.outputs()) tokens += output.tokens();
  };
  // Encode: 5 OK (1 or 2 inputs), 2 refused.
  for (int i = 0; i < 5; ++i) {
    EncodeResponse response;
    const grpc::Status status =
        Encode(*stub_, i % 2 ? Texts({"hello world", "the quick brown fox"}) : Texts({"one more"}),
               &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    count_outputs(response);
  }
  for (const auto& bad : {Texts({"fine", ""}), EncodeRequest()}) {
    EncodeResponse response;
    EXPECT_EQ(Encode(*stub_, bad, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  // Tokenize: 1 OK, 1 refused. GetModelInfo: 1 OK.
  for (const char* text : {"tokenize me", ""}) {
    grpc::ClientContext context;
    encoder::v1::TokenizeRequest request;
    request.set_text(text);
    encoder::v1::TokenizeResponse response;
    stub_->Tokenize(&context, request, &response);
  }
  {
    grpc::ClientContext context;
    encoder::v1::ModelInfo info;
    ASSERT_TRUE(stub_->GetModelInfo(&context, {}, &info).ok());
  }
  // EncodeStream: 2 OK requests and 1 refused, counted one by one.
  {
    grpc::ClientContext context;
    auto stream = stub_->EncodeStream(&context);
    for (const auto& request : {Texts({"streamed"}), Texts({""}), Texts({"a", "b c"})}) {
      ASSERT_TRUE(stream->Write(request));
    }
    stream->WritesDone();
    EncodeResponse response;
    while (stream->Read(&response)) {
      if (!response.has_error()) count_outputs(response);
    }
    EXPECT_TRUE(stream->Finish().ok());
  }

  const Scrape scrape = ScrapeUntil(port, [](const Scrape& s) { return RequestsTotal(s) >= 13; });
  const auto expect_requests = [&](const char* rpc, const char* code, double expected) {
    const Labels labels = {{"transport", "grpc"}, {"rpc", rpc}, {"code", code}};
    EXPECT_EQ(scrape.Value("encoder_requests_total", labels), expected) << rpc << " " << code;
    EXPECT_EQ(scrape.Value("encoder_request_duration_seconds_count", labels), expected)
        << rpc << " " << code;
    EXPECT_EQ(scrape.Value("encoder_request_duration_seconds_bucket",
                           {{"transport", "grpc"}, {"rpc", rpc}, {"code", code}, {"le", "+Inf"}}),
              expected);
  };
  expect_requests("Encode", "OK", 5);
  expect_requests("Encode", "INVALID_ARGUMENT", 2);
  expect_requests("Tokenize", "OK", 1);
  expect_requests("Tokenize", "INVALID_ARGUMENT", 1);
  expect_requests("GetModelInfo", "OK", 1);
  expect_requests("EncodeStream", "OK", 2);
  expect_requests("EncodeStream", "INVALID_ARGUMENT", 1);
  EXPECT_EQ(RequestsTotal(scrape), 13);
  EXPECT_GT(scrape.Value("encoder_request_duration_seconds_sum",
                         {{"transport", "grpc"}, {"rpc", "Encode"}, {"code", "OK"}}),
            0);

  // Inputs and tokens: exactly what the successful responses carried; every
  // one of them ran in some batch.
  EXPECT_EQ(scrape.Value("encoder_inputs_total"), inputs);
  EXPECT_EQ(scrape.Value("encoder_tokens_total"), tokens);
  EXPECT_EQ(scrape.Value("encoder_batch_inputs_sum"), inputs);
  EXPECT_EQ(scrape.Value("encoder_batch_tokens_sum"), tokens);
  EXPECT_GE(scrape.Value("encoder_batch_inputs_count"), 1);
  EXPECT_EQ(scrape.Value("encoder_batch_duration_seconds_count"),
            scrape.Value("encoder_batch_inputs_count"));
  // Queued: the 7 successful encode requests. Tokenized: every parsed
  // Encode (7), stream request (3) and Tokenize (2) call.
  EXPECT_EQ(scrape.Value("encoder_queue_duration_seconds_count"), 7);
  EXPECT_EQ(scrape.Value("encoder_tokenize_duration_seconds_count"), 12);
  for (const char* gauge :
       {"encoder_queue_requests", "encoder_queue_tokens", "encoder_inflight_requests"}) {
    EXPECT_EQ(scrape.Value(gauge), 0) << gauge;
  }
}

// A code's series are made once: its first request may add the duration
// histogram of an error code, the requests after it add nothing.
TEST_F(MetricsTest, RequestsAddNoSeriesAfterTheirCodesFirst) {
  const int port = suite_server().metrics_port();
  const double total = RequestsTotal(MustScrape(port));
  EncodeResponse response;
  Encode(*stub_, Texts({"first", ""}), &response);
  Encode(*stub_, Texts({"first"}), &response);
  const std::vector<std::string> before = EncoderSeries(
      ScrapeUntil(port, [total](const Scrape& s) { return RequestsTotal(s) >= total + 2; }));
  for (int i = 0; i < 20; ++i) {
    Encode(*stub_, Texts({"same series", i % 4 == 0 ? "" : "again"}), &response);
  }
  const Scrape after =
      ScrapeUntil(port, [total](const Scrape& s) { return RequestsTotal(s) >= total + 22; });
  EXPECT_EQ(EncoderSeries(after), before);
}

// A fresh server's /metrics stays small: it was 3,362 lines when every
// transport x rpc x code had its series (an HTTP EncodeStream, a
// GetModelInfo refused for a bad input, ...), each histogram 34 lines. The
// head RPCs (Rerank, Classify, EncodeSparse) add about 130 lines: their
// series exist even on a model without the heads (where only their error
// codes can move); EncodeChunks (late chunking) about 85 more.
TEST(MetricsSizeTest, AFreshServerExposesOnlySeriesThatCanMove) {
  TestModel model;
  std::unique_ptr<EncoderServer> server = StartServer(TestConfig(model.dir()));
  ASSERT_NE(server, nullptr);
  absl::StatusOr<std::string> body = HttpGet(server->metrics_port(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  const auto lines = std::count(body->begin(), body->end(), '\n');
  EXPECT_LT(lines, 1000) << *body;
  EXPECT_GT(lines, 400) << *body;  // the families are all there (checked above)
}

// A server whose batcher is held, so that requests stay queued: a call whose
// deadline passes, and one its client cancels, while queued. The gauges see
// them waiting; once the batcher resumes (and drops both), the counters
// record the codes their clients got.
TEST(MetricsCodesTest, DeadlineAndCancellationCountAsTheClientSawThem) {
  TestModel model;
  std::unique_ptr<EncoderServer> server = StartServer(TestConfig(model.dir()));
  ASSERT_NE(server, nullptr);
  core::Batcher& batcher = server->models().pipelines().front()->batcher;
  batcher.Hold();
  auto stub = encoder::v1::Encoder::NewStub(Connect(server->port()));

  grpc::ClientContext late;
  late.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  grpc::ClientContext cancelled;
  EncodeResponse late_response, cancelled_response;
  std::promise<grpc::Status> late_status, cancelled_status;
  const EncodeRequest request = Texts({"waiting in the queue"});
  stub->async()->Encode(&late, &request, &late_response,
                        [&](grpc::Status status) { late_status.set_value(status); });
  stub->async()->Encode(&cancelled, &request, &cancelled_response,
                        [&](grpc::Status status) { cancelled_status.set_value(status); });

  const Scrape queued = ScrapeUntil(server->metrics_port(), [](const Scrape& s) {
    return s.Value("encoder_queue_requests") == 2;
  });
  EXPECT_EQ(queued.Value("encoder_queue_requests"), 2);
  EXPECT_GT(queued.Value("encoder_queue_tokens"), 0);
  EXPECT_EQ(queued.Value("encoder_inflight_requests"), 2);
  cancelled.TryCancel();

  EXPECT_EQ(late_status.get_future().get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(cancelled_status.get_future().get().error_code(), grpc::StatusCode::CANCELLED);
  batcher.Resume();
  const Scrape done =
      ScrapeUntil(server->metrics_port(), [](const Scrape& s) { return RequestsTotal(s) >= 2; });
  EXPECT_EQ(done.Value("encoder_requests_total",
                       {{"transport", "grpc"}, {"rpc", "Encode"}, {"code", "DEADLINE_EXCEEDED"}}),
            1);
  EXPECT_EQ(done.Value("encoder_requests_total",
                       {{"transport", "grpc"}, {"rpc", "Encode"}, {"code", "CANCELLED"}}),
            1);
  EXPECT_EQ(RequestsTotal(done), 2);
  EXPECT_EQ(done.Value("encoder_inflight_requests"), 0);
  EXPECT_EQ(done.Value("encoder_queue_requests"), 0);
}

TEST(MetricsStartTest, RefusesABusyMetricsPortAndTheGrpcPortTwice) {
  TestModel model;
  auto first = EncoderServer::Start(TestConfig(model.dir()));
  ASSERT_TRUE(first.ok()) << first.status();
  ServerConfig busy = TestConfig(model.dir());
  busy.metrics_port = (*first)->metrics_port();
  auto second = EncoderServer::Start(busy);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "port " + std::to_string(busy.metrics_port) +
                                           " on 127.0.0.1 is already in use (--metrics-port)");

  ServerConfig same = TestConfig(model.dir());
  same.port = testing_support::FreePort();
  ASSERT_GT(same.port, 0);
  same.metrics_port = same.port;
  auto refused = EncoderServer::Start(same);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "--metrics-port must differ from --port (both are " + std::to_string(same.port) + ")");
}

}  // namespace
}  // namespace server
