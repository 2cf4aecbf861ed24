// The result cache (--cache-bytes, server/core/cache/result_cache.h) in the real
// server over real sockets: a text asked again over gRPC, then over HTTP, is
// answered from the one cache both transports share, and /metrics counts the
// hits; with the cache off its series are absent.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "encoder/v1/encoder.grpc.pb.h"
#include "scrape.h"
#include "server/app/encoder_server.h"
#include "support/http_test_client.h"
#include "support/test_server.h"

// A namespace of its own: unity builds compile this file with its target's others.
namespace server {
namespace cache_metrics_test {
namespace {

using encoder::v1::EncodeRequest;
using encoder::v1::EncodeResponse;
using testing_support::Connect;
using testing_support::HttpTestConnection;
using testing_support::TestServer;

Scrape MustScrape(int port) {
  absl::StatusOr<Scrape> scrape = ScrapeMetrics(port);
  EXPECT_TRUE(scrape.ok()) << scrape.status();
  return scrape.ok() ? *scrape : Scrape{};
}

EncodeRequest OneText(const std::string& text) {
  EncodeRequest request;
  request.add_inputs()->set_text(text);
  return request;
}

int PostEmbeddings(int port, const std::string& text) {
  HttpTestConnection connection(port);
  EXPECT_TRUE(connection.connected());
  absl::StatusOr<testing_support::HttpResponse> response =
      connection.Request("POST", "/v1/embeddings", "{\"input\": [\"" + text + "\"]}",
                         "Content-Type: application/json\r\n");
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->status : 0;
}

TEST(CacheMetricsTest, ARepeatedRequestHitsOverGrpcThenHttp) {
  TestServer server([](ServerConfig& config) {
    config.cache_bytes = 1 << 20;
    config.http_port = 0;  // any free port
  });
  ASSERT_TRUE(server.ok());
  const int metrics_port = server.metrics_port();
  const Scrape fresh = MustScrape(metrics_port);
  EXPECT_EQ(fresh.Value("encoder_cache_hits_total"), 0);
  EXPECT_EQ(fresh.Value("encoder_cache_misses_total"), 0);
  EXPECT_EQ(fresh.Value("encoder_cache_bytes"), 0);

  auto stub = encoder::v1::Encoder::NewStub(Connect(server.port()));
  EncodeResponse first, second;
  ASSERT_TRUE(testing_support::Encode(*stub, OneText("a popular query"), &first).ok());
  ASSERT_TRUE(testing_support::Encode(*stub, OneText("a popular query"), &second).ok());
  ASSERT_EQ(second.outputs_size(), 1);
  EXPECT_EQ(second.outputs(0).values_size(), first.outputs(0).values_size());
  for (int i = 0; i < first.outputs(0).values_size(); ++i) {
    EXPECT_EQ(second.outputs(0).values(i), first.outputs(0).values(i)) << i;
  }
  const Scrape grpc = MustScrape(metrics_port);
  EXPECT_EQ(grpc.Value("encoder_cache_misses_total"), 1);
  EXPECT_EQ(grpc.Value("encoder_cache_hits_total"), 1);
  EXPECT_GT(grpc.Value("encoder_cache_bytes"), 0);
  EXPECT_EQ(grpc.Value("encoder_cache_evictions_total"), 0);
  EXPECT_EQ(grpc.Value("encoder_cache_coalesced_total"), 0);

  // The OpenAI route may ask for another output (the model's pipeline) than
  // gRPC's default: its first call may be a miss, its second is a hit.
  const int http_port = server.server().http_port();
  ASSERT_GT(http_port, 0);
  EXPECT_EQ(PostEmbeddings(http_port, "a popular query"), 200);
  const double hits_before = MustScrape(metrics_port).Value("encoder_cache_hits_total");
  EXPECT_EQ(PostEmbeddings(http_port, "a popular query"), 200);
  const Scrape http = MustScrape(metrics_port);
  EXPECT_EQ(http.Value("encoder_cache_hits_total"), hits_before + 1);
  EXPECT_LE(http.Value("encoder_cache_misses_total"), 2);
}

TEST(CacheMetricsTest, OffByDefaultWithoutSeries) {
  TestServer server;
  ASSERT_TRUE(server.ok());
  auto stub = encoder::v1::Encoder::NewStub(Connect(server.port()));
  EncodeResponse response;
  ASSERT_TRUE(testing_support::Encode(*stub, OneText("a popular query"), &response).ok());
  ASSERT_TRUE(testing_support::Encode(*stub, OneText("a popular query"), &response).ok());
  const Scrape scrape = MustScrape(server.metrics_port());
  for (const char* family :
       {"encoder_cache_hits_total", "encoder_cache_misses_total", "encoder_cache_coalesced_total",
        "encoder_cache_evictions_total", "encoder_cache_bytes"}) {
    EXPECT_FALSE(scrape.Has(family)) << family;
  }
}

}  // namespace
}  // namespace cache_metrics_test
}  // namespace server
