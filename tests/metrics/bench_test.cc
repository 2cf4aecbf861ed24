// encoder-client bench: its parts (percentiles, texts, report), then whole
// runs against an in-process server, whose metrics must count the same calls
// per code as the report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/bench_report.h"
#include "client/bench_stats.h"
#include "client/bench_texts.h"
#include "client/commands.h"
#include "scrape.h"
#include "support/test_server.h"

namespace client {
namespace {

using Codes = std::map<std::string, int64_t>;

TEST(BenchStatsTest, PercentilesAreNearestRank) {
  std::vector<double> samples;
  for (int i = 1; i <= 1000; ++i) samples.push_back(i);
  EXPECT_EQ(NearestRank(samples, 0.5), 500);
  EXPECT_EQ(NearestRank(samples, 0.99), 990);
  EXPECT_EQ(NearestRank(samples, 0.999), 999);
  EXPECT_EQ(NearestRank(samples, 1.0), 1000);
  EXPECT_EQ(NearestRank({7}, 0.99), 7);
  EXPECT_EQ(NearestRank({}, 0.5), 0);

  BenchStats stats;
  stats.Record(std::chrono::milliseconds(3), grpc::StatusCode::OK, 2, 20);
  stats.Record(std::chrono::milliseconds(1), grpc::StatusCode::INVALID_ARGUMENT, 0, 0);
  stats.Record(std::chrono::milliseconds(2), grpc::StatusCode::OK, 2, 22);
  const BenchSummary summary = stats.Summarize(2.0);
  EXPECT_EQ(summary.requests, 3);
  EXPECT_EQ(summary.ok, 2);
  EXPECT_EQ(summary.inputs, 4);
  EXPECT_EQ(summary.tokens, 42);
  EXPECT_DOUBLE_EQ(summary.latency.p50, 0.002);
  EXPECT_DOUBLE_EQ(summary.latency.max, 0.003);
  EXPECT_DOUBLE_EQ(summary.latency.mean, 0.002);
  EXPECT_EQ(summary.codes, (Codes{{"OK", 2}, {"INVALID_ARGUMENT", 1}}));

  const nlohmann::json report = nlohmann::json::parse(BenchReportJson(BenchOptions(), summary));
  EXPECT_EQ(report["requests"], 3);
  EXPECT_EQ(report["errors"], 1);
  EXPECT_DOUBLE_EQ(report["tokens_per_second"].get<double>(), 21.0);
  EXPECT_DOUBLE_EQ(report["latency_seconds"]["p99"].get<double>(), 0.003);
  EXPECT_EQ(report["codes"]["INVALID_ARGUMENT"], 1);
  const std::string text = BenchReportText(WithDefaults(BenchOptions()), summary);
  EXPECT_NE(text.find("closed loop, concurrency 8"), std::string::npos) << text;
  EXPECT_NE(text.find("1.5 requests/s"), std::string::npos) << text;
  EXPECT_NE(text.find("p99 3.00 ms"), std::string::npos) << text;
}

TEST(BenchTextsTest, WordRangesTextsAndRequests) {
  int low = 0, high = 0;
  EXPECT_TRUE(ParseWordRange("4:16", &low, &high).ok());
  EXPECT_EQ(low, 4);
  EXPECT_EQ(high, 16);
  EXPECT_TRUE(ParseWordRange("8", &low, &high).ok());
  EXPECT_EQ(low, 8);
  EXPECT_EQ(high, 8);
  for (const char* bad : {"0:3", "5:2", "a:b", "1:2:3", ""}) {
    EXPECT_FALSE(ParseWordRange(bad, &low, &high).ok()) << bad;
  }

  std::mt19937_64 random(3), again(3);
  const std::vector<std::string> texts = SyntheticTexts(50, 2, 5, random);
  EXPECT_EQ(texts, SyntheticTexts(50, 2, 5, again));
  for (const std::string& text : texts) {
    const auto words = std::count(text.begin(), text.end(), ' ') + 1;
    EXPECT_GE(words, 2) << text;
    EXPECT_LE(words, 5) << text;
  }

  const BenchRequests requests({"a", "b", "c"}, 2, encoder::v1::POOLING_MEAN, true, false);
  EXPECT_EQ(requests.Next(0).inputs(0).text(), "a");
  EXPECT_EQ(requests.Next(0).inputs(1).text(), "b");
  EXPECT_EQ(requests.Next(1).inputs(0).text(), "c");
  EXPECT_EQ(requests.Next(1).inputs(1).text(), "a");  // wraps around
  EXPECT_EQ(requests.Next(2).inputs(0).text(), "a");  // cycles
  EXPECT_EQ(requests.Next(0).pooling(), encoder::v1::POOLING_MEAN);
  EXPECT_TRUE(requests.Next(0).normalize());
  EXPECT_EQ(requests.Invalid().inputs_size(), 2);
  EXPECT_EQ(requests.Invalid().inputs(1).text(), "");
}

// --repeat-fraction's other calls: every text of every call differs, and
// still ends with the text it was made from.
TEST(BenchTextsTest, UniqueRequestsNeverRepeatATextAcrossCalls) {
  const BenchRequests requests({"a", "b", "c"}, 2, encoder::v1::POOLING_MEAN, true, false);
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 5000; ++i) {
    const encoder::v1::EncodeRequest request = requests.Unique(i);
    ASSERT_EQ(request.inputs_size(), 2);
    for (const encoder::v1::Input& input : request.inputs()) {
      EXPECT_TRUE(seen.insert(input.text()).second) << i << ": " << input.text();
    }
    EXPECT_EQ(request.inputs(0).text().back(), requests.Next(i).inputs(0).text().back());
  }
  EXPECT_EQ(requests.Unique(0).pooling(), encoder::v1::POOLING_MEAN);
}

class BenchRunTest : public testing_support::TestServerSuite {
 protected:
  nlohmann::json Bench(BenchOptions options) {
    ConnectionOptions connection;
    connection.target = "127.0.0.1:" + std::to_string(suite_server().port());
    options.json = true;
    options.progress = false;
    std::ostringstream out, err;
    EXPECT_EQ(RunBench(connection, options, out, err), 0) << err.str();
    return nlohmann::json::parse(out.str());
  }

  // Waits (10 s at most) until the server has counted `requests` calls, then
  // returns its encoder_requests_total per code.
  Codes ServerCodes(int64_t requests) {
    Codes codes;
    for (int attempt = 0; attempt < 200; ++attempt) {
      absl::StatusOr<server::Scrape> scrape = server::ScrapeMetrics(suite_server().metrics_port());
      EXPECT_TRUE(scrape.ok()) << scrape.status();
      if (!scrape.ok()) break;
      codes.clear();
      int64_t total = 0;
      for (const auto& [key, value] : scrape->samples) {
        const std::string prefix = "encoder_requests_total{code=\"";
        if (key.rfind(prefix, 0) != 0 || value == 0) continue;
        codes[key.substr(prefix.size(), key.find('"', prefix.size()) - prefix.size())] +=
            static_cast<int64_t>(value);
        total += static_cast<int64_t>(value);
      }
      if (total >= requests) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return codes;
  }
};

TEST_F(BenchRunTest, ClosedLoopCountsMatchTheServersMetrics) {
  BenchOptions options;
  options.concurrency = 16;
  options.duration = std::chrono::milliseconds(1500);
  options.inputs_per_request = 2;
  options.invalid_fraction = 0.2;
  const nlohmann::json report = Bench(options);
  const int64_t requests = report["requests"];
  EXPECT_EQ(report["mode"], "closed");
  EXPECT_GT(requests, 16);
  EXPECT_GT(report["codes"]["OK"].get<int64_t>(), 0);
  EXPECT_GT(report["codes"]["INVALID_ARGUMENT"].get<int64_t>(), 0);
  EXPECT_EQ(report["inputs"].get<int64_t>(), 2 * report["ok"].get<int64_t>());
  EXPECT_GT(report["tokens"].get<int64_t>(), report["inputs"].get<int64_t>());
  EXPECT_LE(report["latency_seconds"]["p50"].get<double>(),
            report["latency_seconds"]["p99"].get<double>());
  // About a fifth invalid: 5 standard deviations of a binomial either side.
  const double invalid = report["codes"]["INVALID_ARGUMENT"].get<double>() / requests;
  EXPECT_NEAR(invalid, 0.2, 5 * std::sqrt(0.2 * 0.8 / requests));
  EXPECT_EQ(ServerCodes(requests), report["codes"].get<Codes>());
}

TEST_F(BenchRunTest, OpenLoopKeepsItsPoissonRate) {
  BenchOptions options;
  options.rate = 300;
  options.duration = std::chrono::milliseconds(2000);
  const nlohmann::json report = Bench(options);
  // 600 arrivals expected; a Poisson count's standard deviation is sqrt(600) ~ 24.5.
  EXPECT_EQ(report["mode"], "open");
  EXPECT_NEAR(report["requests"].get<double>(), 600, 5 * 24.5);
  EXPECT_EQ(report["codes"]["OK"], report["requests"]);
  EXPECT_EQ(ServerCodes(report["requests"]), report["codes"].get<Codes>());
}

TEST(BenchUsageTest, RefusesBadOptionsAndReportsAnUnreachableServer) {
  ConnectionOptions connection;
  connection.target = "127.0.0.1:1";  // nothing listens on port 1
  connection.timeout = std::chrono::milliseconds(500);
  std::ostringstream out, err;
  BenchOptions bad;
  bad.invalid_fraction = 2;
  EXPECT_EQ(RunBench(connection, bad, out, err), 2);
  EXPECT_NE(err.str().find("--invalid-fraction must be in 0..1"), std::string::npos) << err.str();

  BenchOptions options;
  options.duration = std::chrono::milliseconds(300);
  options.concurrency = 4;
  options.progress = false;
  options.json = true;
  err.str("");
  EXPECT_EQ(RunBench(connection, options, out, err), 1);
  EXPECT_NE(err.str().find("no call succeeded"), std::string::npos) << err.str();
  const nlohmann::json report = nlohmann::json::parse(out.str());
  EXPECT_GT(report["codes"]["UNAVAILABLE"].get<int64_t>(), 0);
}

}  // namespace
}  // namespace client
