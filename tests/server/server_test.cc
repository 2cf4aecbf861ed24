// The server in-process over a real channel on 127.0.0.1: every status code a
// client can get, outputs equal to encoding each input alone, bad inputs
// with precise messages, streams, health and reflection.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "common/mutex.h"
#include "encoder/v1/encoder.grpc.pb.h"
#include "engine/isa.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/app/encoder_server.h"
#include "server/grpc/encode_stream.h"
#include "support/proto_conversions.h"
#include "support/test_server.h"

namespace server {
namespace {

using encoder::v1::EncodeRequest;
using encoder::v1::EncodeResponse;
using encoder::v1::Input;
using grpc::health::v1::HealthCheckResponse;
using std::chrono::seconds;
using testing_support::Connect;
using testing_support::SetDeadline;
using testing_support::StartServer;
using testing_support::TestModel;
using testing_support::TestServerSuite;
using testing_support::ToCoreInput;
using testing_support::ToEnginePooling;

constexpr float kTolerance = 1e-5f;

Input Text(const std::string& text) {
  Input input;
  input.set_text(text);
  return input;
}

Input Pair(const std::string& text, const std::string& text_pair) {
  Input input;
  input.mutable_text_pair()->set_text(text);
  input.mutable_text_pair()->set_text_pair(text_pair);
  return input;
}

Input Ids(const std::vector<int32_t>& ids, const std::vector<int32_t>& types = {}) {
  Input input;
  input.mutable_token_ids()->mutable_ids()->Assign(ids.begin(), ids.end());
  input.mutable_token_ids()->mutable_token_type_ids()->Assign(types.begin(), types.end());
  return input;
}

EncodeRequest Request(const std::vector<Input>& inputs,
                      encoder::v1::Pooling pooling = encoder::v1::POOLING_UNSPECIFIED,
                      bool normalize = false, bool truncate = false) {
  EncodeRequest request;
  for (const Input& input : inputs) *request.add_inputs() = input;
  request.set_pooling(pooling);
  request.set_normalize(normalize);
  request.set_truncate(truncate);
  return request;
}

// The servers here drain queued work when they stop: the default grace.
ServerConfig Config(const std::string& model_dir) {
  ServerConfig config = testing_support::TestServerConfig(model_dir);
  config.shutdown_grace = seconds(20);
  return config;
}

// Records the batcher's queue so a test can wait until its request is queued.
class QueueWatcher : public core::BatcherObserver {
 public:
  void OnQueueChanged(int64_t /*requests*/, int64_t tokens) ABSL_LOCKS_EXCLUDED(mu_) override {
    common::MutexLock lock(&mu_);
    tokens_ = tokens;
    cv_.SignalAll();
  }
  bool AwaitQueuedTokens(int64_t tokens) ABSL_LOCKS_EXCLUDED(mu_) {
    const auto give_up = std::chrono::steady_clock::now() + seconds(20);
    common::MutexLock lock(&mu_);
    while (tokens_ != tokens) {
      if (cv_.WaitWithDeadline(&mu_, give_up)) return tokens_ == tokens;
    }
    return true;
  }

 private:
  common::Mutex mu_;
  common::CondVar cv_;
  int64_t tokens_ ABSL_GUARDED_BY(mu_) = 0;
};

class ServerTest : public TestServerSuite {
 protected:
  static void SetUpTestSuite() {
    StartSuiteServer([](ServerConfig& config) {
      config = Config(config.model_dir);
      // A request's truncate alone decides: too-long inputs are among the bad ones.
      config.limits.auto_truncate = false;
    });
  }
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(TestServerSuite::SetUp());
    channel_ = Connect(server().port());
    stub_ = encoder::v1::Encoder::NewStub(channel_);
  }

  static TestModel& model() { return suite_server().model(); }
  static EncoderServer& server() { return suite_server().server(); }

  grpc::Status Encode(const EncodeRequest& request, EncodeResponse* response) {
    return testing_support::Encode(*stub_, request, response);
  }

  // Each output equals its input encoded alone by the engine.
  static void ExpectMatchesAlone(const EncodeRequest& request, const EncodeResponse& response) {
    ASSERT_EQ(response.outputs_size(), request.inputs_size());
    const engine::Pooling pooling = ToEnginePooling(response.pooling());
    for (int i = 0; i < request.inputs_size(); ++i) {
      int rows = 0, tokens = 0;
      const std::vector<float> expected =
          model().EncodeAlone(ToCoreInput(request.inputs(i)), pooling, request.normalize(),
                              request.truncate(), &rows, &tokens);
      const encoder::v1::Output& output = response.outputs(i);
      ASSERT_EQ(output.rows(), rows) << "input " << i;
      ASSERT_EQ(output.cols(), TestModel::kHidden) << "input " << i;
      ASSERT_EQ(output.tokens(), tokens) << "input " << i;
      ASSERT_EQ(output.values_size(), static_cast<int>(expected.size())) << "input " << i;
      for (size_t k = 0; k < expected.size(); ++k) {
        ASSERT_NEAR(output.values(static_cast<int>(k)), expected[k], kTolerance)
            << "input " << i << " value " << k;
      }
    }
  }

  HealthCheckResponse::ServingStatus Health(const std::string& service) {
    auto health = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    SetDeadline(&context);
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    HealthCheckResponse response;
    const grpc::Status status = health->Check(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.status();
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<encoder::v1::Encoder::Stub> stub_;
};

TEST_F(ServerTest, HealthIsServingOnceStarted) {
  EXPECT_EQ(Health(""), HealthCheckResponse::SERVING);
  EXPECT_EQ(Health("encoder.v1.Encoder"), HealthCheckResponse::SERVING);
}

TEST_F(ServerTest, ReflectionListsTheEncoderService) {
  grpc::GenericStub stub(channel_);
  grpc::CompletionQueue queue;
  grpc::ClientContext context;
  SetDeadline(&context);
  auto call = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &queue);
  const auto next = [&queue](intptr_t expected) {
    void* tag = nullptr;
    bool ok = false;
    return queue.Next(&tag, &ok) && ok && reinterpret_cast<intptr_t>(tag) == expected;
  };
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(next(1));
  // ServerReflectionRequest{list_services: ""}: field 7, length-delimited, empty.
  grpc::Slice request_bytes(std::string("\x3a\x00", 2));
  grpc::ByteBuffer request(&request_bytes, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  ASSERT_TRUE(next(2));
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(3));
  ASSERT_TRUE(next(3));
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  EXPECT_NE(bytes.find("encoder.v1.Encoder"), std::string::npos);
  EXPECT_NE(bytes.find("grpc.health.v1.Health"), std::string::npos);

  // {file_containing_symbol: "grpc.health.v1.Health"} (field 4): the health
  // protocol is described too, so grpcurl can call it by name.
  const std::string symbol = "grpc.health.v1.Health";
  grpc::Slice describe_bytes(std::string("\x22") + static_cast<char>(symbol.size()) + symbol);
  grpc::ByteBuffer describe(&describe_bytes, 1);
  call->Write(describe, reinterpret_cast<void*>(4));
  ASSERT_TRUE(next(4));
  call->Read(&response, reinterpret_cast<void*>(5));
  ASSERT_TRUE(next(5));
  slices.clear();
  ASSERT_TRUE(response.Dump(&slices).ok());
  bytes.clear();
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  EXPECT_NE(bytes.find("grpc/health/v1/health.proto"), std::string::npos);

  call->WritesDone(reinterpret_cast<void*>(6));
  ASSERT_TRUE(next(6));
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(7));
  ASSERT_TRUE(next(7));
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(ServerTest, GetModelInfoDescribesTheModel) {
  grpc::ClientContext context;
  SetDeadline(&context);
  encoder::v1::ModelInfo info;
  ASSERT_TRUE(stub_->GetModelInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.name(), model().dir().substr(model().dir().rfind('/') + 1));
  EXPECT_EQ(info.model_type(), "bert");
  EXPECT_EQ(info.hidden_size(), TestModel::kHidden);
  EXPECT_EQ(info.num_layers(), 2);
  EXPECT_EQ(info.num_heads(), 4);
  EXPECT_EQ(info.max_length(), TestModel::kMaxLength);
  EXPECT_EQ(info.vocab_size(), model().encoder().config().vocab_size);
  EXPECT_EQ(info.default_pooling(), encoder::v1::POOLING_CLS);
  EXPECT_EQ(info.precision(), encoder::v1::PRECISION_FLOAT32);
  EXPECT_EQ(info.layer_norm_placement(), encoder::v1::LAYER_NORM_PLACEMENT_POST);
  EXPECT_TRUE(info.has_pooler());
  EXPECT_EQ(info.max_inputs_per_request(), 64);
  // The level the process runs: none is set here, so the CPU's best.
  EXPECT_EQ(info.isa(), engine::IsaLevelName(engine::BestCpuIsaLevel()));
}

TEST_F(ServerTest, EncodeEqualsEncodingEachInputAloneForEveryPooling) {
  const std::vector<Input> inputs = {Text("Hello, world!"), Pair("what is it?", "a small test"),
                                     Ids({2, 40, 41, 42, 3}, {0, 0, 1, 1, 1}),
                                     Text("the quick brown fox jumps over the lazy dog")};
  for (encoder::v1::Pooling pooling :
       {encoder::v1::POOLING_UNSPECIFIED, encoder::v1::POOLING_CLS, encoder::v1::POOLING_MEAN,
        encoder::v1::POOLING_NONE, encoder::v1::POOLING_POOLER}) {
    for (bool normalize : {false, true}) {
      SCOPED_TRACE(testing::Message() << "pooling " << pooling << " normalize " << normalize);
      const EncodeRequest request = Request(inputs, pooling, normalize);
      EncodeResponse response;
      const grpc::Status status = Encode(request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(response.pooling(),
                pooling == encoder::v1::POOLING_UNSPECIFIED ? encoder::v1::POOLING_CLS : pooling);
      ExpectMatchesAlone(request, response);
    }
  }
}

TEST_F(ServerTest, EchoesTheRequestId) {
  EncodeRequest request = Request({Text("id please")});
  request.set_id("request-17");
  EncodeResponse response;
  ASSERT_TRUE(Encode(request, &response).ok());
  EXPECT_EQ(response.id(), "request-17");
}

TEST_F(ServerTest, TruncateKeepsTheClosingSep) {
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "word ";
  std::vector<int32_t> long_ids = {2};
  for (int i = 0; i < 100; ++i) long_ids.push_back(40 + i % 50);
  long_ids.push_back(3);

  const EncodeRequest request = Request({Text(long_text), Pair(long_text, "second"), Ids(long_ids)},
                                        encoder::v1::POOLING_MEAN, false, /*truncate=*/true);
  EncodeResponse response;
  const grpc::Status status = Encode(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  for (const encoder::v1::Output& output : response.outputs()) {
    EXPECT_EQ(output.tokens(), TestModel::kMaxLength);
  }
  ExpectMatchesAlone(request, response);

  std::vector<int32_t> ids, types;
  model().Tokenize(ToCoreInput(request.inputs(2)), /*truncate=*/true, &ids, &types);
  EXPECT_EQ(ids.back(), 3);  // the reference keeps the last id too
  model().Tokenize(ToCoreInput(request.inputs(0)), /*truncate=*/true, &ids, &types);
  EXPECT_EQ(ids.back(), model().tokenizer().sep_id());
}

TEST_F(ServerTest, TruncationDirectionIsOneTheApiDefines) {
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "word ";
  EncodeRequest request = Request({Text(long_text)}, encoder::v1::POOLING_MEAN, false, true);
  request.set_truncation_direction(encoder::v1::TRUNCATION_DIRECTION_LEFT);
  EncodeResponse response;
  const grpc::Status left = Encode(request, &response);
  ASSERT_TRUE(left.ok()) << left.error_message();
  EXPECT_EQ(response.outputs(0).tokens(), TestModel::kMaxLength);
  request.set_truncation_direction(static_cast<encoder::v1::TruncationDirection>(7));
  const grpc::Status unknown = Encode(request, &response);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(unknown.error_message(),
            "unknown truncation_direction value 7 (expected 0 RIGHT or 1 LEFT)");
}

TEST_F(ServerTest, TokenizeReturnsIdsTokensAndOffsets) {
  grpc::ClientContext context;
  SetDeadline(&context);
  encoder::v1::TokenizeRequest request;
  request.set_text("Hello, world!");
  encoder::v1::TokenizeResponse response;
  ASSERT_TRUE(stub_->Tokenize(&context, request, &response).ok());
  auto expected = model().tokenizer().Encode("Hello, world!");
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(response.ids_size(), static_cast<int>(expected->ids.size()));
  for (int i = 0; i < response.ids_size(); ++i) {
    EXPECT_EQ(response.ids(i), expected->ids[i]);
    EXPECT_EQ(response.tokens(i), expected->tokens[i]);
    EXPECT_EQ(response.offsets(i).begin(), expected->offsets[i].first);
    EXPECT_EQ(response.offsets(i).end(), expected->offsets[i].second);
  }
  EXPECT_EQ(response.tokens(0), "[CLS]");
  EXPECT_EQ(response.tokens(response.tokens_size() - 1), "[SEP]");
}

TEST_F(ServerTest, DecodeMapsIdsBackToText) {
  auto encoding = model().tokenizer().Encode("hello world");
  ASSERT_TRUE(encoding.ok());
  encoder::v1::DecodeRequest request;
  for (int32_t id : encoding->ids) request.add_ids(id);
  for (bool keep : {false, true}) {
    grpc::ClientContext context;
    SetDeadline(&context);
    request.set_keep_special_tokens(keep);
    encoder::v1::DecodeResponse response;
    ASSERT_TRUE(stub_->Decode(&context, request, &response).ok());
    EXPECT_EQ(response.text(), keep ? "[CLS] hello world [SEP]" : "hello world");
  }
  request.add_ids(model().encoder().config().vocab_size);
  grpc::ClientContext context;
  SetDeadline(&context);
  encoder::v1::DecodeResponse response;
  const grpc::Status status = stub_->Decode(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
}

TEST_F(ServerTest, TokenizeRefusesInvalidUtf8) {
  grpc::ClientContext context;
  SetDeadline(&context);
  encoder::v1::TokenizeRequest request;
  request.set_text(std::string("ab\xff", 3));
  encoder::v1::TokenizeResponse response;
  const grpc::Status status = stub_->Tokenize(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "text is not valid UTF-8 (at byte 2)");
}

struct BadRequest {
  const char* what;
  EncodeRequest request;
  std::string message;
};

TEST_F(ServerTest, EachBadInputIsInvalidArgumentNamingItsIndexAndTheServerKeepsServing) {
  const int vocab = model().encoder().config().vocab_size;
  std::vector<Input> too_many(65, Text("x"));
  EncodeRequest unknown_pooling = Request({Text("x")});
  unknown_pooling.set_pooling(static_cast<encoder::v1::Pooling>(42));
  std::string long_text;
  for (int i = 0; i < 70; ++i) long_text += "word ";

  const std::vector<BadRequest> cases = {
      {"empty request", Request({}), "request has no inputs"},
      {"empty string", Request({Text("fine"), Text("")}), "input 1: text is empty"},
      {"1 MB string", Request({Text("fine"), Text(std::string(1 << 20, 'a'))}),
       "input 1: text is 1048576 bytes, more than the limit of 65536 (--max-text-bytes)"},
      {"invalid UTF-8", Request({Text(std::string("ok \xc3\x28", 5))}),
       "input 0: text is not valid UTF-8 (at byte 3)"},
      {"invalid UTF-8 in a pair", Request({Pair("ok", std::string("\xed\xa0\x80", 3))}),
       "input 0: text_pair is not valid UTF-8 (at byte 0)"},
      {"id outside the vocabulary", Request({Text("a"), Text("b"), Ids({2, vocab, 3})}),
       "input 2: id " + std::to_string(vocab) + " at position 1 is outside the vocabulary (size " +
           std::to_string(vocab) + ")"},
      {"negative id", Request({Ids({-1, 5, 3})}), "input 0: id -1 at position 0 is negative"},
      {"too many inputs", Request(too_many),
       "request has 65 inputs, more than the limit of 64 (--max-inputs-per-request)"},
      {"unknown pooling", unknown_pooling,
       "unknown pooling value 42 (expected 0 UNSPECIFIED, 1 CLS, 2 MEAN, 3 NONE, 4 POOLER, 5 MAX, "
       "6 MEAN_SQRT_LEN, 7 WEIGHTED_MEAN or 8 LAST_TOKEN)"},
      {"token types of the wrong length", Request({Ids({2, 5, 3}, {0, 0})}),
       "input 0: 2 token_type_ids for 3 ids (expected one per id, or none)"},
      {"token type outside the model's", Request({Ids({2, 5, 3}, {0, 2, 0})}),
       "input 0: token type 2 at position 1 is outside 0..1"},
      {"empty ids", Request({Ids({})}), "input 0: token_ids is empty"},
      {"no input kind", Request({Text("x"), Input()}),
       "input 1: no text, text_pair or token_ids set"},
      {"too long without truncate", Request({Text(long_text)}),
       "input 0: text is 72 tokens long, more than the model's maximum of 64 (set the request's "
       "truncate option to cut it)"},
  };
  for (const BadRequest& bad : cases) {
    SCOPED_TRACE(bad.what);
    EncodeResponse response;
    const grpc::Status status = Encode(bad.request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(), bad.message);
    // And the server still serves.
    EncodeResponse good;
    EXPECT_TRUE(Encode(Request({Text("still here")}), &good).ok());
    EXPECT_EQ(good.outputs_size(), 1);
  }
}

TEST_F(ServerTest, SixtyFourConcurrentClientsGetWhatEachInputGivesAlone) {
  constexpr int kClients = 64;
  constexpr int kRequestsPerClient = 4;
  const int vocab = model().encoder().config().vocab_size;
  const std::vector<std::string> words = {"the",   "quick", "brown", "fox",   "jumps",
                                          "over",  "lazy",  "dog",   "hello", "world",
                                          "batch", "token", "café",  "naïve", "server"};
  struct Call {
    EncodeRequest request;
    EncodeResponse response;
    grpc::Status status;
  };
  std::vector<std::vector<Call>> calls(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 random(c);
      auto pick = [&random](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
      auto sentence = [&](int max_words) {
        std::string text;
        for (int w = 0, n = 1 + pick(max_words); w < n; ++w)
          text += words[pick(words.size())] + " ";
        return text;
      };
      auto stub = encoder::v1::Encoder::NewStub(Connect(server().port()));
      for (int r = 0; r < kRequestsPerClient; ++r) {
        const bool truncate = pick(2) == 1;
        const int max_words = truncate ? 80 : 8;  // untruncated inputs stay under 64 tokens
        std::vector<Input> inputs;
        for (int i = 0, n = 1 + pick(6); i < n; ++i) {
          switch (pick(3)) {
            case 0:
              inputs.push_back(Text(sentence(max_words)));
              break;
            case 1:
              inputs.push_back(Pair(sentence(max_words / 2 + 1), sentence(max_words / 2 + 1)));
              break;
            default: {
              std::vector<int32_t> ids = {model().tokenizer().cls_id()};
              for (int k = 0, n = pick(truncate ? 100 : 40); k < n; ++k) {
                ids.push_back(5 + pick(vocab - 5));
              }
              ids.push_back(model().tokenizer().sep_id());
              inputs.push_back(Ids(ids));
            }
          }
        }
        const auto pooling = static_cast<encoder::v1::Pooling>(pick(5));  // UNSPECIFIED..POOLER
        Call call;
        call.request = Request(inputs, pooling, pick(2) == 1, truncate);
        grpc::ClientContext context;
        SetDeadline(&context, seconds(120));
        call.status = stub->Encode(&context, call.request, &call.response);
        calls[c].push_back(std::move(call));
      }
    });
  }
  for (std::thread& client : clients) client.join();

  for (int c = 0; c < kClients; ++c) {
    for (const Call& call : calls[c]) {
      SCOPED_TRACE(testing::Message() << "client " << c);
      ASSERT_TRUE(call.status.ok()) << call.status.error_message();
      ExpectMatchesAlone(call.request, call.response);
    }
  }
}

TEST_F(ServerTest, EncodeStreamAnswersEveryRequestByIdAndSurvivesABadOne) {
  grpc::ClientContext context;
  SetDeadline(&context);
  auto stream = stub_->EncodeStream(&context);
  std::map<std::string, EncodeRequest> sent;
  for (int k = 0; k < 10; ++k) {
    EncodeRequest request =
        k == 4 ? Request({Text("")})
               : Request({Text("stream " + std::to_string(k)), Ids({2, 10 + k, 3})},
                         k % 2 == 0 ? encoder::v1::POOLING_MEAN : encoder::v1::POOLING_NONE);
    request.set_id("r" + std::to_string(k));
    sent[request.id()] = request;
    ASSERT_TRUE(stream->Write(request));
  }
  ASSERT_TRUE(stream->WritesDone());
  std::map<std::string, EncodeResponse> received;
  EncodeResponse response;
  while (stream->Read(&response)) {
    EXPECT_EQ(received.count(response.id()), 0u) << "twice: " << response.id();
    received[response.id()] = response;
  }
  const grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(received.size(), sent.size());
  for (const auto& [id, request] : sent) {
    SCOPED_TRACE(id);
    const EncodeResponse& answer = received[id];
    if (id == "r4") {
      EXPECT_EQ(answer.error().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      EXPECT_EQ(answer.error().message(), "input 0: text is empty");
      EXPECT_EQ(answer.outputs_size(), 0);
    } else {
      EXPECT_FALSE(answer.has_error());
      ExpectMatchesAlone(request, answer);
    }
  }
}

TEST_F(ServerTest, EncodeStreamPausesReadingPastItsInFlightCapAndResumes) {
  // Four times the cap, all written before any response is read: the server
  // stops reading at the cap and resumes as its responses go out.
  constexpr int kRequests = 4 * EncodeStreamReactor::kMaxInFlight;
  grpc::ClientContext context;
  SetDeadline(&context);
  auto stream = stub_->EncodeStream(&context);
  for (int k = 0; k < kRequests; ++k) {
    EncodeRequest request = Request({Ids({2, 10 + k % 50, 3})});
    request.set_id(std::to_string(k));
    ASSERT_TRUE(stream->Write(request));
  }
  ASSERT_TRUE(stream->WritesDone());
  std::set<std::string> ids;
  EncodeResponse response;
  while (stream->Read(&response)) {
    EXPECT_FALSE(response.has_error()) << response.error().message();
    EXPECT_EQ(response.outputs_size(), 1);
    ids.insert(response.id());
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kRequests));
}

// A server whose batcher is held, so requests stay queued until the test
// shuts it down (the shutdown holds and resumes the batcher itself).
TEST(ServerShutdownTest, QueueFullDeadlineCancellationAndShutdownPaths) {
  TestModel model;
  ServerConfig config = Config(model.dir());
  config.batcher.max_batch_tokens = 64;
  config.batcher.max_queue_tokens = 64;
  QueueWatcher queue;
  std::unique_ptr<EncoderServer> server = StartServer(config, &queue);
  ASSERT_NE(server, nullptr);
  server->models().pipelines().front()->batcher.Hold();
  auto channel = Connect(server->port());
  auto stub = encoder::v1::Encoder::NewStub(channel);
  const auto ids = [](int count) {
    std::vector<int32_t> ids(count, 7);
    ids.front() = 2;
    ids.back() = 3;
    return Ids(ids);
  };
  const auto encode_async = [&](EncodeRequest request, grpc::ClientContext* context,
                                EncodeResponse* response) {
    return std::async(std::launch::async, [&stub, request, context, response] {
      return stub->Encode(context, request, response);
    });
  };

  // Waits in the queue: 40 tokens, the batcher held.
  grpc::ClientContext queued_context;
  SetDeadline(&queued_context, seconds(60));
  EncodeResponse queued_response;
  auto queued = encode_async(Request({ids(40)}), &queued_context, &queued_response);
  ASSERT_TRUE(queue.AwaitQueuedTokens(40));

  // DEADLINE_EXCEEDED: its deadline passes while it is queued.
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    EncodeResponse response;
    const grpc::Status status = stub->Encode(&context, Request({ids(5)}), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  ASSERT_TRUE(queue.AwaitQueuedTokens(45));  // still queued server-side, never computed

  // CANCELLED: the client gives up while it is queued.
  grpc::ClientContext cancelled_context;
  SetDeadline(&cancelled_context);
  EncodeResponse cancelled_response;
  auto cancelled = encode_async(Request({ids(5)}), &cancelled_context, &cancelled_response);
  ASSERT_TRUE(queue.AwaitQueuedTokens(50));
  cancelled_context.TryCancel();
  EXPECT_EQ(cancelled.get().error_code(), grpc::StatusCode::CANCELLED);

  // RESOURCE_EXHAUSTED: 50 tokens queued, 20 more would pass the limit of 64.
  {
    EncodeResponse response;
    grpc::ClientContext context;
    SetDeadline(&context);
    const grpc::Status status = stub->Encode(&context, Request({ids(20)}), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(status.error_message().find("queue full"), std::string::npos)
        << status.error_message();
  }
  // INVALID_ARGUMENT from the batcher's own bound is never reached: the
  // request builder's limits come first. A stream opened now stays idle.
  grpc::ClientContext stream_context;
  SetDeadline(&stream_context);
  auto idle_stream = stub->EncodeStream(&stream_context);

  server->BeginShutdown();

  // The lame duck: health NOT_SERVING at once, calls still served.
  {
    auto health = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext context;
    SetDeadline(&context);
    HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&context, {}, &response).ok());
    EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
  }
  {
    grpc::ClientContext context;
    SetDeadline(&context);
    encoder::v1::ModelInfo info;
    EXPECT_TRUE(stub->GetModelInfo(&context, {}, &info).ok());
  }

  // Then gRPC's shutdown (GOAWAY), refusals at the door and the drain.
  std::future<bool> finished =
      std::async(std::launch::async, [&server] { return server->FinishShutdown(); });
  {
    // The idle stream is ended by the server.
    EncodeResponse response;
    EXPECT_FALSE(idle_stream->Read(&response));
    const grpc::Status status = idle_stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(status.error_message(), "server is shutting down");
  }
  // The queued request is still computed and answered.
  ASSERT_EQ(finished.wait_for(seconds(60)), std::future_status::ready);
  EXPECT_TRUE(finished.get());
  const grpc::Status queued_status = queued.get();
  ASSERT_TRUE(queued_status.ok()) << queued_status.error_message();
  ASSERT_EQ(queued_response.outputs_size(), 1);
  EXPECT_EQ(queued_response.outputs(0).tokens(), 40);

  // Stopped: new calls are UNAVAILABLE (nothing listens any more).
  for (int call = 0; call < 2; ++call) {
    grpc::ClientContext context;
    SetDeadline(&context, seconds(5));
    EncodeResponse response;
    EXPECT_EQ(stub->Encode(&context, Request({ids(3)}), &response).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  {
    grpc::ClientContext context;
    SetDeadline(&context, seconds(5));
    auto late_stream = stub->EncodeStream(&context);
    EncodeResponse response;
    EXPECT_FALSE(late_stream->Read(&response));
    EXPECT_EQ(late_stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  }
}

TEST(ServerStartTest, RefusesABadModelDirAndABusyPortAndReadsThePoolingConfig) {
  ServerConfig config = Config("/nonexistent/model");
  auto missing = EncoderServer::Start(config);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/model"), absl::string_view::npos)
      << missing.status();

  TestModel model;
  auto first = EncoderServer::Start(Config(model.dir()));
  ASSERT_TRUE(first.ok()) << first.status();
  ServerConfig same_port = Config(model.dir());
  same_port.port = (*first)->port();
  auto second = EncoderServer::Start(same_port);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(),
            "port " + std::to_string(same_port.port) + " on 127.0.0.1 is already in use (--port)");

  // The sentence-transformers pooling config sets the model's default.
  {
    std::filesystem::create_directories(model.dir() + "/1_Pooling");
    std::ofstream(model.dir() + "/1_Pooling/config.json")
        << R"({"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true})";
    auto mean_model = EncoderServer::Start(Config(model.dir()));
    ASSERT_TRUE(mean_model.ok()) << mean_model.status();
    auto stub = encoder::v1::Encoder::NewStub(Connect((*mean_model)->port()));
    grpc::ClientContext context;
    SetDeadline(&context);
    encoder::v1::ModelInfo info;
    ASSERT_TRUE(stub->GetModelInfo(&context, {}, &info).ok());
    EXPECT_EQ(info.default_pooling(), encoder::v1::POOLING_MEAN);
    std::filesystem::remove_all(model.dir() + "/1_Pooling");
  }

  ServerConfig bad_flag = Config(model.dir());
  bad_flag.batcher.max_batch_tokens = 16;
  auto too_small = EncoderServer::Start(bad_flag);
  ASSERT_FALSE(too_small.ok());
  EXPECT_EQ(too_small.status().message(),
            "--max-batch-tokens (16) must be at least the model's maximum length (64)");
}

TEST(ServerApiKeysTest, GrpcCallsNeedAKeyWhileHealthStaysOpen) {
  TestModel model;
  ServerConfig config = Config(model.dir());
  config.api_keys = {"first-key", "second-key"};
  std::unique_ptr<EncoderServer> server = StartServer(config);
  ASSERT_NE(server, nullptr);
  auto channel = Connect(server->port());
  auto stub = encoder::v1::Encoder::NewStub(channel);
  const EncodeRequest request = Request({Text("a key please")});
  const auto call = [&](const char* authorization) {
    grpc::ClientContext context;
    SetDeadline(&context);
    if (authorization != nullptr) context.AddMetadata("authorization", authorization);
    EncodeResponse response;
    return stub->Encode(&context, request, &response).error_code();
  };
  EXPECT_EQ(call(nullptr), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("Bearer wrong-key"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("first-key"), grpc::StatusCode::UNAUTHENTICATED);  // no scheme
  EXPECT_EQ(call("Bearer first-key"), grpc::StatusCode::OK);
  EXPECT_EQ(call("Bearer second-key"), grpc::StatusCode::OK);

  grpc::ClientContext info_context;
  SetDeadline(&info_context);
  encoder::v1::ModelInfo info;
  EXPECT_EQ(
      stub->GetModelInfo(&info_context, encoder::v1::GetModelInfoRequest(), &info).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);

  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext health_context;
  SetDeadline(&health_context);
  HealthCheckResponse health_response;
  EXPECT_TRUE(
      health->Check(&health_context, grpc::health::v1::HealthCheckRequest(), &health_response)
          .ok());
  EXPECT_EQ(health_response.status(), HealthCheckResponse::SERVING);
}

}  // namespace
}  // namespace server
