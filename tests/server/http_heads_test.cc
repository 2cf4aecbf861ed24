// The head routes over a real socket, on the service core with a fake engine
// (FakeBackend: a classify logit is the input's token count + label index; a
// sparse weight is the id's last position): TEI's /rerank, /predict,
// /embed_sparse, /embed_all and /similarity, and the Cohere/Jina /v1/rerank,
// with their error shapes: a head the model lacks is 424 in the route's own
// family's shape (TEI's {"error", "error_type": "Backend"}, Cohere's
// {"message"}).
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/http_test_server.h"

namespace server::http {
namespace {

using nlohmann::json;
using testing_support::CoreService;
using testing_support::HttpResponse;
using testing_support::HttpTestServer;

class HttpHeadsTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }
  // A server whose model has `heads` (set before its threads start).
  void Start(core::ModelHeads heads = {}) {
    testing_support::HttpTestSetup setup;
    setup.heads = std::move(heads);
    http_.reset();
    http_ = std::make_unique<HttpTestServer>(std::move(setup));
    ASSERT_TRUE(http_->ok());
  }
  HttpResponse Post(const std::string& path, const json& body) {
    return http_->Call("POST", path, body.dump());
  }
  std::unique_ptr<HttpTestServer> http_;
};

TEST_F(HttpHeadsTest, TeiRerankSortsWithIndicesAndText) {
  Start(CoreService::RerankerHeads());
  HttpResponse response = Post("/rerank", {{"query", "hello"},
                                           {"texts", {"world", "hello world again", "hello world"}},
                                           {"return_text", true}});
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = json::parse(response.body);
  ASSERT_EQ(body.size(), 3u);
  EXPECT_EQ(body[0]["index"], 1);
  EXPECT_EQ(body[0]["text"], "hello world again");
  EXPECT_EQ(body[1]["index"], 2);
  EXPECT_EQ(body[2]["index"], 0);
  EXPECT_GT(body[0]["score"].get<float>(), body[1]["score"].get<float>());
  // Without return_text: no "text" key.
  response = Post("/rerank", {{"query", "hello"}, {"texts", {"world"}}});
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_FALSE(json::parse(response.body)[0].contains("text"));
  EXPECT_TRUE(
      http_->MetricsShow("encoder_requests_total{code=\"OK\",model=\"test\",rpc=\"Rerank\""));
}

TEST_F(HttpHeadsTest, TeiRerankErrors) {
  // An embedding model: TEI's 424, type Backend, naming what it serves.
  HttpResponse response = Post("/rerank", {{"query", "hello"}, {"texts", {"world"}}});
  EXPECT_EQ(response.status, 424) << response.body;
  json body = json::parse(response.body);
  EXPECT_EQ(body["error_type"], "Backend");
  EXPECT_NE(body["error"].get<std::string>().find("serves embeddings"), std::string::npos);

  Start(CoreService::RerankerHeads());
  response = Post("/rerank", {{"query", "hello"}, {"texts", json::array()}});
  EXPECT_EQ(response.status, 400) << response.body;  // TEI's Empty
  EXPECT_EQ(json::parse(response.body)["error_type"], "Empty");
  response = Post("/rerank", {{"texts", {"a"}}});
  EXPECT_EQ(response.status, 422) << response.body;
  response = Post("/rerank", {{"query", "hello"}, {"texts", {"world", ""}}});
  EXPECT_EQ(response.status, 400) << response.body;
  EXPECT_NE(response.body.find("input 1: text is empty"), std::string::npos) << response.body;
  response = Post("/rerank", {{"query", "hello"}, {"texts", {"world", 3}}});
  EXPECT_EQ(response.status, 422) << response.body;
  EXPECT_NE(response.body.find("texts[1]"), std::string::npos) << response.body;
}

TEST_F(HttpHeadsTest, CohereRerankShape) {
  Start(CoreService::RerankerHeads());
  HttpResponse response =
      Post("/v1/rerank", {{"model", "test-model"},
                          {"query", "hello"},
                          {"documents", {"world", {{"text", "hello world again"}}, "hello world"}},
                          {"top_n", 2},
                          {"return_documents", true}});
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = json::parse(response.body);
  ASSERT_EQ(body["results"].size(), 2u);
  EXPECT_EQ(body["results"][0]["index"], 1);
  EXPECT_EQ(body["results"][0]["document"]["text"], "hello world again");
  EXPECT_EQ(body["results"][1]["index"], 2);
  EXPECT_TRUE(body["results"][0]["relevance_score"].is_number());
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_TRUE(body["id"].is_string());
  EXPECT_GT(body["usage"]["total_tokens"].get<int>(), 0);

  // Cohere-shaped errors (was OpenAI's, from the /v1/ prefix): {"message"}
  // naming the field.
  response = Post("/v1/rerank", {{"query", "hello"}, {"documents", {"a"}}, {"top_n", 0}});
  EXPECT_EQ(response.status, 400) << response.body;
  EXPECT_EQ(json::parse(response.body), json({{"message", "\"top_n\" must be 1 or more"}}));
}

// What each family's error body is: exactly these keys.
bool IsTeiError(const HttpResponse& response, const std::string& type) {
  const json body = json::parse(response.body, nullptr, false);
  return body.is_object() && body.size() == 2 && body["error"].is_string() &&
         body["error_type"] == type;
}
bool IsCohereError(const HttpResponse& response) {
  const json body = json::parse(response.body, nullptr, false);
  return body.is_object() && body.size() == 1 && body["message"].is_string();
}

// A model without a classifier, sparse or ColBERT head (HttpTestSetup's
// default): every route of a head answers 424 (the core's
// FAILED_PRECONDITION) in its own family's shape, naming what the model
// serves; the model's embeddings still answer.
TEST_F(HttpHeadsTest, MissingHeadsAre424InTheRoutesFamily) {
  const json text_pair = {{"query", "hello"}, {"texts", {"world"}}};
  for (const auto& [path, body] : std::vector<std::pair<std::string, json>>{
           {"/rerank", text_pair},
           {"/predict", {{"inputs", "hello"}}},
           {"/embed_sparse", {{"inputs", "hello"}}},
           {"/embed_multi", {{"inputs", "hello"}}},
           {"/embed_multi", {{"inputs", "hello"}, {"outputs", {"colbert"}}}}}) {
    const HttpResponse response = Post(path, body);
    EXPECT_EQ(response.status, 424) << path << " " << response.body;
    EXPECT_TRUE(IsTeiError(response, "Backend")) << path << " " << response.body;
    EXPECT_NE(response.body.find("embeddings"), std::string::npos) << path << " " << response.body;
  }
  const HttpResponse cohere =
      Post("/v1/rerank", {{"query", "hello"}, {"documents", {"world", "again"}}});
  EXPECT_EQ(cohere.status, 424) << cohere.body;
  EXPECT_TRUE(IsCohereError(cohere)) << cohere.body;
  EXPECT_NE(cohere.body.find("serves embeddings"), std::string::npos) << cohere.body;
  EXPECT_EQ(Post("/embed", {{"inputs", "hello"}}).status, 200);
  EXPECT_EQ(Post("/embed_multi", {{"inputs", "hello"}, {"outputs", {"dense"}}}).status, 200);
  EXPECT_TRUE(http_->MetricsShow(
      "encoder_requests_total{code=\"FAILED_PRECONDITION\",model=\"test\",rpc=\"Rerank\""));
}

// Cohere's /v2/embed answers Cohere's shape too (was TEI's, as a path
// outside /v1/): a bad field is 400 {"message"}, and so are the adapter's
// own refusals on Cohere's routes (a wrong method, 405 with Allow).
TEST_F(HttpHeadsTest, CohereRoutesAnswerCoheresShape) {
  HttpResponse response = Post("/v2/embed", {{"texts", {"a"}}, {"embedding_types", {"int4"}}});
  EXPECT_EQ(response.status, 400) << response.body;
  EXPECT_TRUE(IsCohereError(response)) << response.body;
  EXPECT_NE(response.body.find("embedding_types"), std::string::npos) << response.body;
  response = Post("/v2/embed", {{"texts", json::array()}});
  EXPECT_EQ(response.status, 400) << response.body;
  EXPECT_TRUE(IsCohereError(response)) << response.body;
  response = http_->Call("GET", "/v1/rerank");
  EXPECT_EQ(response.status, 405) << response.body;
  EXPECT_EQ(response.headers["allow"], "POST");
  EXPECT_TRUE(IsCohereError(response)) << response.body;
  // Any model name serves with one model, as on OpenAI's routes.
  response = Post("/v2/embed", {{"model", "embed-v4.0"}, {"texts", {"hello"}}});
  EXPECT_EQ(response.status, 200) << response.body;
  EXPECT_TRUE(json::parse(response.body)["embeddings"]["float"].is_array()) << response.body;
}

TEST_F(HttpHeadsTest, PredictSingleAPairAndABatch) {
  core::ModelHeads heads;
  heads.classifier = engine::ClassifierHead{2, {"neg", "pos"}, engine::ScoreActivation::kIdentity};
  Start(heads);
  http_->core().backend().SetNumLabels(2);
  HttpResponse response = Post("/predict", {{"inputs", "hello"}, {"raw_scores", true}});
  ASSERT_EQ(response.status, 200) << response.body;
  json body = json::parse(response.body);
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]["label"], "pos");
  EXPECT_GT(body[0]["score"].get<float>(), body[1]["score"].get<float>());

  response = Post("/predict", {{"inputs", {"hello", "world"}}, {"raw_scores", true}});
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_TRUE(json::parse(response.body)[0].is_object());

  response = Post("/predict", {{"inputs", {{"hello"}, {"hello", "world"}}}, {"raw_scores", true}});
  ASSERT_EQ(response.status, 200) << response.body;
  body = json::parse(response.body);
  ASSERT_EQ(body.size(), 2u);
  EXPECT_TRUE(body[1].is_array());
  EXPECT_GT(body[1][0]["score"].get<float>(), body[0][0]["score"].get<float>());

  response = Post("/predict", {{"inputs", {{"a", "b", "c"}}}});
  EXPECT_EQ(response.status, 422) << response.body;
  response = Post("/predict", {{"inputs", {{"hello"}, {"hello", ""}}}});
  EXPECT_EQ(response.status, 400) << response.body;
  EXPECT_NE(response.body.find("input 1: text_pair is empty"), std::string::npos) << response.body;
}

TEST_F(HttpHeadsTest, EmbedSparseAsTei) {
  HttpResponse response = Post("/embed_sparse", {{"inputs", "hello"}});
  EXPECT_EQ(response.status, 424) << response.body;
  core::ModelHeads heads;
  heads.sparse = true;
  Start(heads);
  response = Post("/embed_sparse", {{"inputs", {{2, 11, 12, 3}}}});
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = json::parse(response.body);
  ASSERT_EQ(body.size(), 1u);
  ASSERT_EQ(body[0].size(), 3u);
  EXPECT_EQ(body[0][0]["index"], 3);
  EXPECT_EQ(body[0][0]["value"], 3.0);
  EXPECT_TRUE(
      http_->MetricsShow("encoder_requests_total{code=\"OK\",model=\"test\",rpc=\"EncodeSparse\""));
}

TEST_F(HttpHeadsTest, EmbedMultiFloatAndBase64) {
  HttpResponse response = Post("/embed_multi", {{"inputs", "hello"}});
  EXPECT_EQ(response.status, 424) << response.body;
  Start(CoreService::MultiOutputHeads());
  response = Post("/embed_multi", {{"inputs", {{2, 11, 12, 3}}}});
  ASSERT_EQ(response.status, 200) << response.body;
  json body = json::parse(response.body);
  ASSERT_EQ(body["data"].size(), 1u);
  json item = body["data"][0];
  EXPECT_EQ(item["tokens"], 4);
  EXPECT_EQ(item["dense"], json::parse("[2.0, 4.0]"));
  EXPECT_EQ(item["sparse"][0]["index"], 3);
  EXPECT_EQ(item["colbert"], json::parse("[[11.0, 1.0], [12.0, 2.0], [3.0, 3.0]]"));
  EXPECT_EQ(item["colbert_shape"], json::parse("[3, 2]"));
  EXPECT_EQ(body["usage"]["total_tokens"], 4);
  EXPECT_TRUE(
      http_->MetricsShow("encoder_requests_total{code=\"OK\",model=\"test\",rpc=\"EncodeMulti\""));

  // base64: little-endian float32 of [11, 1, 12, 2, 3, 3] and of [2, 4].
  response = Post("/embed_multi", {{"inputs", {{2, 11, 12, 3}}},
                                   {"outputs", {"colbert", "dense"}},
                                   {"encoding_format", "base64"}});
  ASSERT_EQ(response.status, 200) << response.body;
  item = json::parse(response.body)["data"][0];
  EXPECT_EQ(item["colbert"], "AAAwQQAAgD8AAEBBAAAAQAAAQEAAAEBA");
  EXPECT_EQ(item["dense"], "AAAAQAAAgEA=");
  EXPECT_FALSE(item.contains("sparse"));

  for (const auto& [request, wanted] : std::vector<std::pair<json, std::string>>{
           {{{"inputs", "x"}, {"outputs", json::array()}}, "outputs"},
           {{{"inputs", "x"}, {"outputs", {"dense", "dense"}}}, "asked twice"},
           {{{"inputs", "x"}, {"outputs", {"lexical"}}}, "each output must be"},
           {{{"inputs", "x"}, {"max_active_dims", -1}}, "max_active_dims"},
           {{{"inputs", "x"}, {"encoding_format", "hex"}}, "encoding_format"}}) {
    response = Post("/embed_multi", request);
    EXPECT_EQ(response.status / 100, 4) << request.dump() << " " << response.body;
    EXPECT_NE(response.body.find(wanted), std::string::npos) << response.body;
  }
}

// --max-output-vectors bounds ColBERT vectors (each input's tokens but the
// first) and token states (/embed_all: every token) over a whole request.
TEST_F(HttpHeadsTest, OutputVectorsPastTheLimitAre422) {
  testing_support::HttpTestSetup setup;
  setup.heads = CoreService::MultiOutputHeads();
  setup.limits.max_output_vectors = 6;
  http_ = std::make_unique<HttpTestServer>(std::move(setup));
  ASSERT_TRUE(http_->ok());
  const json four_tokens = {2, 11, 12, 3};
  HttpResponse response =
      Post("/embed_multi", {{"inputs", {four_tokens, four_tokens}}, {"outputs", {"colbert"}}});
  EXPECT_EQ(response.status, 200) << response.body;  // 2 x 3 vectors
  response = Post("/embed_multi",
                  {{"inputs", {four_tokens, four_tokens, four_tokens}}, {"outputs", {"colbert"}}});
  EXPECT_EQ(response.status, 422) << response.body;  // TEI's validation error
  EXPECT_NE(response.body.find("would return 9 vectors"), std::string::npos) << response.body;
  EXPECT_NE(response.body.find("--max-output-vectors"), std::string::npos) << response.body;
  // Without colbert the limit does not apply.
  response = Post("/embed_multi", {{"inputs", {four_tokens, four_tokens, four_tokens}},
                                   {"outputs", {"dense", "sparse"}}});
  EXPECT_EQ(response.status, 200) << response.body;
  response = Post("/embed_all", {{"inputs", {four_tokens}}});
  EXPECT_EQ(response.status, 200) << response.body;
  response = Post("/embed_all", {{"inputs", {four_tokens, four_tokens}}});
  EXPECT_EQ(response.status, 422) << response.body;
  EXPECT_NE(response.body.find("would return 8 vectors"), std::string::npos) << response.body;
}

TEST_F(HttpHeadsTest, EmbedAllAndSimilarity) {
  HttpResponse response = Post("/embed_all", {{"inputs", {{2, 11, 3}}}});
  ASSERT_EQ(response.status, 200) << response.body;
  json body = json::parse(response.body);
  ASSERT_EQ(body.size(), 1u);
  EXPECT_TRUE(body[0].is_array());
  EXPECT_EQ(http_->core().backend().specs().back().pooling, engine::Pooling::kNone);

  response = Post("/similarity",
                  {{"inputs", {{"source_sentence", "hello"}, {"sentences", {"hello", "world"}}}}});
  ASSERT_EQ(response.status, 200) << response.body;
  body = json::parse(response.body);
  ASSERT_EQ(body.size(), 2u);
  EXPECT_TRUE(body[0].is_number());
  response = Post("/similarity", {{"inputs", {{"source_sentence", "hello"}}}});
  EXPECT_EQ(response.status, 422) << response.body;
}

}  // namespace
}  // namespace server::http
