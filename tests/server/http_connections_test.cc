// The HTTP adapter's connections over real sockets (server/http/connection.h):
// idle keep-alive connections and stalled uploads hold no thread, each
// phase's timeout closes what it should with the answer it should (408 for a
// request begun and not finished, nothing for a silent or idle connection),
// the header, body and connection limits answer 431, 413 and 503, pipelined
// requests are answered in order, a client that leaves while its request
// waits has it cancelled (never computed), and Stop() ends idle connections
// at once while an answer in flight is still delivered. Timeouts here are
// short (a few hundred ms) so that each test is quick; the assertions say
// what happens, never how fast. Runs under TSan (scripts/test, tsan stage).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/http_test_server.h"

namespace server::http {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing_support::CoreService;
using testing_support::HttpResponse;
using testing_support::HttpTestConnection;
using testing_support::HttpTestServer;

// Well past every short timeout below, so that "closed within" never depends
// on how busy the machine is.
constexpr milliseconds kPatience{20000};

// A whole POST /embed of one input whose first token id is `first_id`.
std::string Embed(int first_id) {
  const std::string body = absl::StrCat(R"({"inputs": [[)", first_id, "]]}");
  return absl::StrCat("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
                      "Content-Length: ", body.size(), "\r\n\r\n", body);
}

class HttpConnectionsTest : public ::testing::Test {
 protected:
  void Start(HttpOptions options = {}) {
    http_ = std::make_unique<HttpTestServer>(std::vector<std::string>{}, options);
    ASSERT_TRUE(http_->ok());
  }
  bool MetricsShow(const std::string& line) { return http_->MetricsShow(line); }
  int MetricValue(const std::string& name) { return http_->MetricValue(name); }

  std::unique_ptr<HttpTestServer> http_;
};

TEST_F(HttpConnectionsTest, IdleKeepAliveConnectionsDoNotHoldBackANewClient) {
  HttpOptions options;
  options.threads = 1;
  options.io_threads = 1;
  Start(options);
  // Far more open connections than there are threads of any kind.
  std::vector<std::unique_ptr<HttpTestConnection>> idle;
  for (int i = 0; i < 300; ++i) {
    idle.push_back(std::make_unique<HttpTestConnection>(http_->port()));
    absl::StatusOr<HttpResponse> response = idle.back()->Request("GET", "/health");
    ASSERT_TRUE(response.ok()) << i << ": " << response.status();
    ASSERT_EQ(response->status, 200);
  }
  // 100 more that stall in their headers or bodies.
  std::vector<std::unique_ptr<HttpTestConnection>> stalled;
  for (int i = 0; i < 100; ++i) {
    stalled.push_back(std::make_unique<HttpTestConnection>(http_->port()));
    ASSERT_TRUE(stalled.back()
                    ->SendRaw(i % 2 == 0 ? "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Len"
                                         : "POST /embed HTTP/1.1\r\nHost: x\r\n"
                                           "Content-Length: 100\r\n\r\n{\"inputs\":")
                    .ok());
  }
  const HttpResponse fresh = http_->Call("POST", "/embed", R"({"inputs": [[7, 8]]})");
  EXPECT_EQ(fresh.status, 200);
  EXPECT_EQ(json::parse(fresh.body), json::parse("[[7, 2]]"));
  // And every idle connection still serves its next request.
  for (size_t i = 0; i < idle.size(); i += 37) {
    absl::StatusOr<HttpResponse> again = idle[i]->Request("POST", "/embed", R"({"inputs": [[9]]})");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->status, 200);
  }
  EXPECT_GE(http_->server().open_connections(), 400);
  EXPECT_GE(MetricValue("encoder_http_connections"), 400);
}

TEST_F(HttpConnectionsTest, SlowHeadersGet408AndSilentConnectionsCloseWithoutAWord) {
  HttpOptions options;
  options.header_timeout = milliseconds(200);
  Start(options);
  HttpTestConnection partial(http_->port());
  ASSERT_TRUE(partial.SendRaw("GET /health HTTP/1.1\r\nHost: x\r\n").ok());
  HttpTestConnection silent(http_->port());
  ASSERT_TRUE(partial.AwaitClose(kPatience).ok());
  absl::StatusOr<HttpResponse> answer = partial.ReadResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 408);
  EXPECT_NE(answer->body.find("--http-header-timeout"), std::string::npos) << answer->body;
  EXPECT_EQ(answer->headers.at("connection"), "close");
  ASSERT_TRUE(silent.AwaitClose(kPatience).ok());
  EXPECT_FALSE(silent.ReadResponse().ok());  // closed with nothing sent
  EXPECT_TRUE(MetricsShow(R"(encoder_http_timeouts_total{phase="header"} 2)"));
}

TEST_F(HttpConnectionsTest, SlowBodiesGet408AndAreNeverServed) {
  HttpOptions options;
  options.body_timeout = milliseconds(200);
  Start(options);
  HttpTestConnection slow(http_->port());
  const std::string body = R"({"inputs": [[42]]})";
  ASSERT_TRUE(slow.SendRaw(absl::StrCat("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: ",
                                        body.size(), "\r\n\r\n", body.substr(0, 5)))
                  .ok());
  ASSERT_TRUE(slow.AwaitClose(kPatience).ok());
  absl::StatusOr<HttpResponse> answer = slow.ReadResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 408);
  EXPECT_NE(answer->body.find("--http-body-timeout"), std::string::npos) << answer->body;
  // The rest of the body, too late, reaches nobody: 42 never ran.
  slow.SendRaw(body.substr(5)).IgnoreError();
  EXPECT_EQ(http_->Call("POST", "/embed", R"({"inputs": [[43]]})").status, 200);
  for (const std::vector<int32_t>& batch : http_->core().backend().batches()) {
    for (int32_t id : batch) EXPECT_NE(id, 42);
  }
  EXPECT_TRUE(MetricsShow(R"(encoder_http_timeouts_total{phase="body"} 1)"));
  EXPECT_TRUE(MetricsShow(
      R"(encoder_requests_total{code="INVALID_ARGUMENT",model="test",rpc="Encode",transport="http"} 1)"));
}

TEST_F(HttpConnectionsTest, IdleKeepAliveConnectionsCloseAfterTheIdleTimeout) {
  HttpOptions options;
  options.idle_timeout = milliseconds(200);
  Start(options);
  HttpTestConnection client(http_->port());
  absl::StatusOr<HttpResponse> first = client.Request("GET", "/health");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->status, 200);
  ASSERT_TRUE(client.AwaitClose(kPatience).ok());
  EXPECT_FALSE(client.ReadResponse().ok());  // no answer: idle connections just close
  EXPECT_TRUE(MetricsShow(R"(encoder_http_timeouts_total{phase="idle"} 1)"));
}

TEST_F(HttpConnectionsTest, HeaderAndBodyLimits) {
  HttpOptions options;
  options.max_header_bytes = 2048;
  options.max_body_bytes = 1024;
  Start(options);
  const HttpResponse big_header =
      http_->Call("GET", "/health", "", absl::StrCat("X-Big: ", std::string(4096, 'a'), "\r\n"));
  EXPECT_EQ(big_header.status, 431);
  EXPECT_NE(big_header.body.find("--http-max-header-bytes"), std::string::npos);

  // A chunked body is counted as it arrives.
  HttpTestConnection chunked(http_->port());
  const std::string chunk(1500, 'a');
  ASSERT_TRUE(chunked
                  .SendRaw(absl::StrCat("POST /embed HTTP/1.1\r\nHost: x\r\n"
                                        "Transfer-Encoding: chunked\r\n\r\n5dc\r\n",
                                        chunk, "\r\n0\r\n\r\n"))
                  .ok());
  absl::StatusOr<HttpResponse> too_big = chunked.ReadResponse();
  ASSERT_TRUE(too_big.ok()) << too_big.status();
  EXPECT_EQ(too_big->status, 413);
  EXPECT_NE(too_big->body.find("1024"), std::string::npos) << too_big->body;
}

TEST_F(HttpConnectionsTest, PastMaxConnectionsANewConnectionIsAnswered503) {
  HttpOptions options;
  options.max_connections = 3;
  Start(options);
  std::vector<std::unique_ptr<HttpTestConnection>> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(std::make_unique<HttpTestConnection>(http_->port()));
    ASSERT_EQ(open.back()->Request("GET", "/health")->status, 200);
  }
  HttpTestConnection refused(http_->port());
  absl::StatusOr<HttpResponse> answer = refused.ReadResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 503);
  EXPECT_NE(answer->body.find("--http-max-connections"), std::string::npos) << answer->body;
  EXPECT_EQ(answer->headers.at("retry-after"), "1");
  // Once one leaves, a new client is served again.
  refused.Close();
  open.pop_back();
  bool served = false;
  for (int attempt = 0; attempt < 200 && !served; ++attempt) {
    HttpTestConnection again(http_->port());
    absl::StatusOr<HttpResponse> response = again.Request("GET", "/health");
    served = response.ok() && response->status == 200;
    if (!served) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(served);
  // At least the one above (the retries may have been refused too).
  EXPECT_GE(MetricValue("encoder_http_connections_refused_total"), 1);
}

TEST_F(HttpConnectionsTest, PipelinedRequestsAreAnsweredInOrder) {
  Start();
  HttpTestConnection client(http_->port());
  ASSERT_TRUE(client.SendRaw(Embed(11) + Embed(12) + Embed(13)).ok());
  for (int id : {11, 12, 13}) {
    absl::StatusOr<HttpResponse> response = client.ReadResponse();
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->status, 200) << response->body;
    EXPECT_EQ(json::parse(response->body)[0][0], id);
  }
}

TEST_F(HttpConnectionsTest, ExpectContinueGetsTheBodySent) {
  Start();
  HttpTestConnection client(http_->port());
  const std::string body = R"({"inputs": [[5, 6, 7]]})";
  ASSERT_TRUE(client
                  .SendRaw(absl::StrCat("POST /embed HTTP/1.1\r\nHost: x\r\nExpect: 100-continue"
                                        "\r\nContent-Length: ",
                                        body.size(), "\r\n\r\n"))
                  .ok());
  absl::StatusOr<HttpResponse> go_on = client.ReadResponse();
  ASSERT_TRUE(go_on.ok()) << go_on.status();
  EXPECT_EQ(go_on->status, 100);
  ASSERT_TRUE(client.SendRaw(body).ok());
  absl::StatusOr<HttpResponse> response = client.ReadResponse();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(json::parse(response->body), json::parse("[[5, 3]]"));
}

TEST_F(HttpConnectionsTest, AClientThatLeavesHasItsQueuedRequestCancelled) {
  Start();
  CoreService& core = http_->core();
  core.backend().Hold();
  std::thread first(
      [&] { EXPECT_EQ(http_->Call("POST", "/embed", R"({"inputs": [[1]]})").status, 200); });
  ASSERT_TRUE(core.backend().AwaitStarted(1));
  {
    HttpTestConnection leaving(http_->port());
    ASSERT_TRUE(leaving.SendRaw(Embed(66)).ok());
    for (int i = 0; i < 2000 && core.batcher().queued_tokens() == 0; ++i) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    ASSERT_GT(core.batcher().queued_tokens(), 0);
  }  // closed while its request waits in the queue
  // The event loop notices (a bounded wait: the metric counts it at once).
  for (int i = 0; i < 2000 && MetricValue("encoder_http_clients_left_total") < 1; ++i) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(MetricValue("encoder_http_clients_left_total"), 1);
  core.backend().Release();
  first.join();
  EXPECT_EQ(http_->Call("POST", "/embed", R"({"inputs": [[2]]})").status, 200);
  for (const std::vector<int32_t>& batch : core.backend().batches()) {
    for (int32_t id : batch) EXPECT_NE(id, 66);
  }
  EXPECT_TRUE(MetricsShow(
      R"(encoder_requests_total{code="CANCELLED",model="test",rpc="Encode",transport="http"} 1)"));
}

TEST_F(HttpConnectionsTest, StopClosesIdleConnectionsAndDeliversTheAnswerInFlight) {
  Start();
  CoreService& core = http_->core();
  HttpTestConnection idle(http_->port());
  ASSERT_EQ(idle.Request("GET", "/health")->status, 200);
  core.backend().Hold();
  HttpTestConnection busy(http_->port());
  ASSERT_TRUE(busy.SendRaw(Embed(3)).ok());
  ASSERT_TRUE(core.backend().AwaitStarted(1));
  std::thread stop([&] { http_->server().Stop(); });
  EXPECT_TRUE(idle.AwaitClose(kPatience).ok());
  core.backend().Release();
  absl::StatusOr<HttpResponse> answer = busy.ReadResponse();
  busy.Close();  // as a client does after Connection: close
  stop.join();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->headers["connection"], "close");
  // Nothing is left open, and a new connection is refused.
  EXPECT_EQ(http_->server().open_connections(), 0);
  EXPECT_FALSE(HttpTestConnection(http_->port()).Request("GET", "/health").ok());
}

TEST_F(HttpConnectionsTest, AFailedStartReportsItsErrorAndStopsAtOnce) {
  Start();
  HttpOptions taken;
  taken.host = "127.0.0.1";
  taken.port = http_->port();  // in use by the server above
  CoreService& core = http_->core();
  server::core::ApiKeys keys;
  std::unique_ptr<server::core::ServedModels> served = core.Served("test-model", &keys);
  absl::StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start(taken, served.get(), server::core::SystemClock(), {});
  ASSERT_FALSE(second.ok());  // and returned: its clean-up did not wait for anything
  EXPECT_NE(second.status().message().find("cannot listen for HTTP"), std::string::npos)
      << second.status();
}

}  // namespace
}  // namespace server::http
