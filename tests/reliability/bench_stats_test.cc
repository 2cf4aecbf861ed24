// encoder-client bench's per-call records as the reliability scripts read
// them: latency from the intended start vs from the actual send, OK-only
// percentiles, and error messages (capped).
#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/bench_options.h"
#include "client/bench_report.h"
#include "client/bench_stats.h"

namespace client {
namespace {

using std::chrono::milliseconds;

TEST(BenchStatsTest, SinceSendIsSeparateFromLatency) {
  BenchStats stats;
  // Held back 900 ms by the in-flight cap, then 100 ms on the wire.
  stats.Record(milliseconds(1000), milliseconds(100), grpc::Status::OK, 1, 5);
  stats.Record(milliseconds(20), milliseconds(20),
               grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), 0, 0);
  const BenchSummary summary = stats.Summarize(1.0);
  EXPECT_DOUBLE_EQ(summary.latency.max, 1.0);
  EXPECT_DOUBLE_EQ(summary.since_send.max, 0.1);
  EXPECT_DOUBLE_EQ(summary.ok_latency.max, 1.0);
  EXPECT_DOUBLE_EQ(summary.ok_latency.p50, 1.0);

  const nlohmann::json report = nlohmann::json::parse(BenchReportJson(BenchOptions(), summary));
  EXPECT_DOUBLE_EQ(report["since_send_seconds"]["max"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(report["ok_latency_seconds"]["p99"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(report["latency_seconds"]["max"].get<double>(), 1.0);
  EXPECT_EQ(report["error_messages"]["DEADLINE_EXCEEDED: Deadline Exceeded"], 1);
  EXPECT_EQ(report["errors"], 1);
}

TEST(BenchStatsTest, OldRecordTakesLatencyAsSinceSend) {
  BenchStats stats;
  stats.Record(milliseconds(3), grpc::StatusCode::OK, 1, 1);
  stats.Record(milliseconds(5), grpc::StatusCode::INVALID_ARGUMENT, 0, 0);
  const BenchSummary summary = stats.Summarize(1.0);
  EXPECT_DOUBLE_EQ(summary.since_send.max, 0.005);
  EXPECT_DOUBLE_EQ(summary.ok_latency.max, 0.003);
  EXPECT_EQ(summary.errors.at("INVALID_ARGUMENT: "), 1);
}

TEST(BenchStatsTest, ErrorMessagesAreCapped) {
  BenchStats stats;
  for (int i = 0; i < BenchSummary::kMaxErrorMessages + 10; ++i) {
    stats.Record(milliseconds(1), milliseconds(1),
                 grpc::Status(grpc::StatusCode::UNAVAILABLE, "message " + std::to_string(i)), 0, 0);
  }
  stats.Record(milliseconds(1), milliseconds(1),
               grpc::Status(grpc::StatusCode::UNAVAILABLE, "message 0"), 0, 0);
  const BenchSummary summary = stats.Summarize(1.0);
  EXPECT_EQ(static_cast<int>(summary.errors.size()), BenchSummary::kMaxErrorMessages + 1);
  EXPECT_EQ(summary.errors.at("UNAVAILABLE: message 0"), 2);
  EXPECT_EQ(summary.errors.at("UNAVAILABLE: (other messages)"), 10);
  EXPECT_EQ(summary.codes.at("UNAVAILABLE"), BenchSummary::kMaxErrorMessages + 11);
}

}  // namespace
}  // namespace client
