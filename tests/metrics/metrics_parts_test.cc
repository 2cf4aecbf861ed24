// The metrics' parts on their own: buckets, the status codes they are
// labelled with, recording into a registry, and the /proc collector.
#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scrape.h"
#include "server/core/metrics/metrics.h"
#include "server/core/metrics/metrics_buckets.h"
#include "server/core/metrics/metrics_process.h"
#include "server/grpc/status_mapping.h"

namespace server {
namespace {

using std::chrono::milliseconds;

Scrape Serialize(const std::vector<prometheus::MetricFamily>& families) {
  absl::StatusOr<Scrape> scrape = ParseExposition(prometheus::TextSerializer().Serialize(families));
  EXPECT_TRUE(scrape.ok()) << scrape.status();
  return scrape.ok() ? *scrape : Scrape{};
}

TEST(MetricsBucketsTest, DurationsAreGeometricFrom100MicrosecondsTo10Seconds) {
  const std::vector<double> bounds = core::DurationBuckets();
  ASSERT_EQ(bounds.size(), 31u);
  EXPECT_EQ(bounds.front(), 1e-4);
  EXPECT_EQ(bounds.back(), 10.0);
  for (size_t i = 1; i < bounds.size(); ++i) {
    const double ratio = bounds[i] / bounds[i - 1];
    EXPECT_GT(ratio, 1.36) << bounds[i];
    EXPECT_LT(ratio, 1.53) << bounds[i];
  }
  // Decade bounds are exact, so objectives on them need no interpolation.
  for (double decade : {1e-3, 1e-2, 1e-1, 1.0}) {
    EXPECT_NE(std::find(bounds.begin(), bounds.end(), decade), bounds.end()) << decade;
  }
}

TEST(MetricsBucketsTest, CountsGoUpToTheBudget) {
  EXPECT_EQ(core::CountBuckets(256),
            (std::vector<double>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}));
  const std::vector<double> hundred = core::CountBuckets(100);
  EXPECT_EQ(std::vector<double>(hundred.end() - 3, hundred.end()),
            (std::vector<double>{64, 96, 100}));
  EXPECT_EQ(core::CountBuckets(1), (std::vector<double>{1}));
  EXPECT_EQ(core::CountBuckets(16384).back(), 16384);
  EXPECT_EQ(core::CountBuckets(16384).size(), 28u);  // 14 powers of 2, 13 halfway, the budget
}

TEST(StatusCodesTest, OnlyTheAnsweredCodesReachTheWire) {
  EXPECT_EQ(ToGrpcCode(absl::StatusCode::kInvalidArgument), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ToGrpcCode(absl::StatusCode::kResourceExhausted), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ToGrpcCode(absl::StatusCode::kDeadlineExceeded), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The engine's failures on a valid request are a bug of ours: INTERNAL.
  const grpc::Status status = ToGrpcStatus(absl::OutOfRangeError("no sequence 3 in the result"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(status.error_message(), "no sequence 3 in the result");
  EXPECT_EQ(ToProtoError(absl::DataLossError("no such tensor")).code(),
            static_cast<int>(grpc::StatusCode::INTERNAL));
  // Text input to a model without a usable tokenizer: the client can act on it.
  EXPECT_EQ(ToProtoError(absl::FailedPreconditionError("text input is unavailable")).code(),
            static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
}

// The request series a fresh registry has, as "transport rpc code": every
// code each call can answer, written out here from what the adapters do
// (server/grpc, server/http), not from AnswerableCodes.
std::set<std::string> ExpectedRequestSeries() {
  const std::vector<std::string> grpc_encode = {
      "OK",          "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED",
      "UNAVAILABLE", "CANCELLED",        "DEADLINE_EXCEEDED",   "UNAUTHENTICATED",
      "INTERNAL"};
  const std::map<std::string, std::vector<std::string>> calls = {
      {"grpc Encode", grpc_encode},
      {"grpc EncodeStream", grpc_encode},
      // The head RPCs: as Encode, on both transports.
      {"grpc Rerank", grpc_encode},
      {"grpc Classify", grpc_encode},
      {"grpc EncodeSparse", grpc_encode},
      {"grpc EncodeMulti", grpc_encode},   // bge-m3's outputs: as Encode
      {"grpc EncodeChunks", grpc_encode},  // late chunking: as Encode
      {"grpc Tokenize",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "UNAVAILABLE", "CANCELLED",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED", "INTERNAL"}},
      {"grpc Decode",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "UNAVAILABLE", "CANCELLED",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED"}},
      {"grpc GetModelInfo",
       {"OK", "UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED", "UNAUTHENTICATED"}},
      // HTTP: no EncodeStream; a client going away is not answered, so no
      // CANCELLED; a deadline applies only to the queue (Encode's routes).
      {"http Encode",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "UNAVAILABLE",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED", "INTERNAL"}},
      {"http Rerank",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "UNAVAILABLE",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED", "INTERNAL"}},
      {"http Classify",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "UNAVAILABLE",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED", "INTERNAL"}},
      {"http EncodeSparse",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "UNAVAILABLE",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED", "INTERNAL"}},
      {"http EncodeMulti",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "UNAVAILABLE",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED", "INTERNAL"}},
      {"http EncodeChunks",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "UNAVAILABLE",
        "DEADLINE_EXCEEDED", "UNAUTHENTICATED", "INTERNAL"}},
      {"http Tokenize",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "UNAVAILABLE", "UNAUTHENTICATED"}},
      {"http Decode",
       {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "UNAVAILABLE", "UNAUTHENTICATED"}},
      {"http GetModelInfo", {"OK", "UNAVAILABLE", "UNAUTHENTICATED"}},
  };
  std::set<std::string> series;
  for (const auto& [call, codes] : calls) {
    for (const std::string& code : codes) series.insert(call + " " + code);
  }
  return series;
}

// The "transport rpc code" of each series of `family` in `scrape`.
std::set<std::string> RequestSeries(const Scrape& scrape, const std::string& family) {
  std::set<std::string> series;
  for (const auto& [key, value] : scrape.samples) {
    if (key.rfind(family + "{", 0) != 0) continue;
    const auto label = [&key = key](const std::string& name) {
      const size_t begin = key.find(name + "=\"") + name.size() + 2;
      return key.substr(begin, key.find('"', begin) - begin);
    };
    series.insert(label("transport") + " " + label("rpc") + " " + label("code"));
  }
  return series;
}

TEST(ServerMetricsTest, AFreshRegistryHasTheSeriesOfTheCallsThatExist) {
  core::ServerMetrics metrics(core::BatcherConfig{},
                              core::ModelInfoLabels{"m", "fp32", "pre", 384, 6, "avx2"});
  const Scrape scrape = Serialize(metrics.registry()->Collect());
  const std::set<std::string> counters = RequestSeries(scrape, "encoder_requests_total");
  EXPECT_EQ(counters, ExpectedRequestSeries());
  // 59, and 9 codes x 3 head RPCs on gRPC, 8 on HTTP; EncodeMulti and
  // EncodeChunks as two more.
  EXPECT_EQ(counters.size(), 144u);
  // Durations: each call's OK (nineteen calls), from the start.
  EXPECT_EQ(
      RequestSeries(scrape, "encoder_request_duration_seconds_count"),
      (std::set<std::string>{
          "grpc Encode OK", "grpc EncodeStream OK", "grpc Tokenize OK", "grpc Decode OK",
          "grpc GetModelInfo OK", "grpc Rerank OK", "grpc Classify OK", "grpc EncodeSparse OK",
          "grpc EncodeChunks OK", "http EncodeChunks OK", "grpc EncodeMulti OK",
          "http EncodeMulti OK", "http Encode OK", "http Tokenize OK", "http Decode OK",
          "http GetModelInfo OK", "http Rerank OK", "http Classify OK", "http EncodeSparse OK"}));
  for (const auto& [key, value] : scrape.samples) {
    if (key.rfind("encoder_request", 0) == 0) {
      EXPECT_EQ(value, 0) << key;
    }
  }
}

TEST(ServerMetricsTest, RecordsIntoTheChildrenMadeAtStart) {
  core::BatcherConfig budgets;
  core::ServerMetrics metrics(budgets, core::ModelInfoLabels{"m", "fp32", "pre", 384, 6, "avx2"});
  const size_t series = Serialize(metrics.registry()->Collect()).samples.size();

  metrics.RequestStarted();
  metrics.RequestFinished(core::Transport::kGrpc, core::Rpc::kEncode, absl::StatusCode::kOk,
                          milliseconds(12));
  metrics.Tokenized(std::chrono::microseconds(250));
  metrics.Encoded(3, 40);
  metrics.OnQueueChanged(2, 30);
  metrics.OnRequestDequeued(milliseconds(2));
  metrics.OnBatchDone(3, 40, milliseconds(7));

  const Scrape scrape = Serialize(metrics.registry()->Collect());
  EXPECT_EQ(scrape.samples.size(), series);
  EXPECT_EQ(scrape.Value("encoder_requests_total",
                         {{"transport", "grpc"}, {"rpc", "Encode"}, {"code", "OK"}}),
            1);
  // 12 ms falls in (0.01, 0.015].
  const std::map<std::string, std::string> ok = {
      {"transport", "grpc"}, {"rpc", "Encode"}, {"code", "OK"}};
  auto le = [&](const char* bound) {
    auto labels = ok;
    labels["le"] = bound;
    return scrape.Value("encoder_request_duration_seconds_bucket", labels);
  };
  EXPECT_EQ(le("0.01"), 0);
  EXPECT_EQ(le("0.015"), 1);
  EXPECT_DOUBLE_EQ(scrape.Value("encoder_request_duration_seconds_sum", ok), 0.012);
  EXPECT_EQ(scrape.Value("encoder_inflight_requests"), 0);
  EXPECT_EQ(scrape.Value("encoder_tokenize_duration_seconds_bucket", {{"le", "0.00033"}}), 1);
  EXPECT_EQ(scrape.Value("encoder_tokenize_duration_seconds_bucket", {{"le", "0.00022"}}), 0);
  EXPECT_EQ(scrape.Value("encoder_inputs_total"), 3);
  EXPECT_EQ(scrape.Value("encoder_tokens_total"), 40);
  EXPECT_EQ(scrape.Value("encoder_queue_requests"), 2);
  EXPECT_EQ(scrape.Value("encoder_queue_tokens"), 30);
  EXPECT_EQ(scrape.Value("encoder_queue_duration_seconds_count"), 1);
  EXPECT_EQ(scrape.Value("encoder_batch_duration_seconds_count"), 1);
  EXPECT_EQ(scrape.Value("encoder_batch_inputs_bucket", {{"le", "3"}}), 1);
  EXPECT_EQ(scrape.Value("encoder_batch_inputs_bucket", {{"le", "2"}}), 0);
  EXPECT_EQ(scrape.Value("encoder_batch_tokens_bucket", {{"le", "48"}}), 1);
  EXPECT_EQ(scrape.Value("encoder_batch_tokens_bucket", {{"le", "32"}}), 0);
  EXPECT_EQ(scrape.Value("encoder_model_info", {{"model", "m"},
                                                {"precision", "fp32"},
                                                {"layer_norm", "pre"},
                                                {"hidden_size", "384"},
                                                {"layers", "6"},
                                                {"isa", "avx2"}}),
            1);
}

// A code's first request creates what its call lacks: the duration series of
// an error code, and the counter of a code the call was not expected to
// answer (kept rather than dropped); a code never answered counts as INTERNAL.
TEST(ServerMetricsTest, AFirstRequestCreatesTheSeriesItLacks) {
  core::ServerMetrics metrics(core::BatcherConfig{},
                              core::ModelInfoLabels{"m", "fp32", "pre", 384, 6, "avx2"});
  const std::map<std::string, std::string> invalid = {
      {"transport", "grpc"}, {"rpc", "Encode"}, {"code", "INVALID_ARGUMENT"}};
  EXPECT_FALSE(Serialize(metrics.registry()->Collect())
                   .Has("encoder_request_duration_seconds_count", invalid));
  for (int i = 0; i < 2; ++i) {
    metrics.RequestStarted();
    metrics.RequestFinished(core::Transport::kGrpc, core::Rpc::kEncode,
                            absl::StatusCode::kInvalidArgument, milliseconds(1));
  }
  metrics.RequestStarted();
  metrics.RequestFinished(core::Transport::kHttp, core::Rpc::kGetModelInfo,
                          absl::StatusCode::kInvalidArgument, milliseconds(1));
  metrics.RequestStarted();
  metrics.RequestFinished(core::Transport::kHttp, core::Rpc::kTokenize, absl::StatusCode::kDataLoss,
                          milliseconds(1));

  const Scrape scrape = Serialize(metrics.registry()->Collect());
  EXPECT_EQ(scrape.Value("encoder_requests_total", invalid), 2);
  EXPECT_EQ(scrape.Value("encoder_request_duration_seconds_count", invalid), 2);
  EXPECT_EQ(
      scrape.Value("encoder_requests_total",
                   {{"transport", "http"}, {"rpc", "GetModelInfo"}, {"code", "INVALID_ARGUMENT"}}),
      1);
  EXPECT_EQ(scrape.Value("encoder_requests_total",
                         {{"transport", "http"}, {"rpc", "Tokenize"}, {"code", "INTERNAL"}}),
            1);
  EXPECT_FALSE(scrape.Has("encoder_requests_total",
                          {{"transport", "http"}, {"rpc", "Tokenize"}, {"code", "DATA_LOSS"}}));
  EXPECT_EQ(RequestSeries(scrape, "encoder_requests_total").size(), 146u);
  EXPECT_EQ(scrape.Value("encoder_inflight_requests"), 0);

  // The shutdown's account sums every rpc of one transport and code.
  EXPECT_EQ(metrics.Answered(core::Transport::kGrpc, absl::StatusCode::kInvalidArgument), 2);
  EXPECT_EQ(metrics.Answered(core::Transport::kHttp, absl::StatusCode::kInvalidArgument), 1);
  EXPECT_EQ(metrics.Answered(core::Transport::kHttp, absl::StatusCode::kInternal), 1);
  EXPECT_EQ(metrics.Answered(core::Transport::kGrpc, absl::StatusCode::kOk), 0);
}

TEST(ProcessCollectorTest, ReadsTheProcessFromProc) {
  core::ProcessCollector collector;
  const Scrape scrape = Serialize(collector.Collect());
  EXPECT_EQ(scrape.types.at("process_cpu_seconds_total"), "counter");
  EXPECT_GT(scrape.Value("process_resident_memory_bytes"), 1e6);
  EXPECT_GE(scrape.Value("process_cpu_seconds_total"), 0);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(scrape.Value("process_start_time_seconds"), now, 600);
  // stdin, stdout, stderr at least; one more file open shows.
  const double fds = scrape.Value("process_open_fds");
  EXPECT_GE(fds, 3);
  FILE* file = std::fopen("/proc/self/stat", "r");
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(Serialize(collector.Collect()).Value("process_open_fds"), fds + 1);
  std::fclose(file);
}

}  // namespace
}  // namespace server
