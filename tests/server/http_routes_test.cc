// The HTTP route table without sockets: which route a method and path reach,
// the argument of GET /v1/models/{id} (slashes included, as hub names have),
// and what a known path with the wrong method allows (405's Allow header).
#include <gtest/gtest.h>

#include "server/http/routes.h"

namespace server::http {
namespace {

using Outcome = RouteMatch::Outcome;

TEST(RoutesTest, TheModelQueryParameterIsDecoded) {
  EXPECT_EQ(QueryParameter("/info?model=BAAI%2Fbge-m3", "model"), "BAAI/bge-m3");
  EXPECT_EQ(QueryParameter("/health?x=1&model=e5#top", "model"), "e5");
  EXPECT_EQ(QueryParameter("/health?mode=e5", "model"), "");
  EXPECT_EQ(QueryParameter("/info", "model"), "");
}

TEST(RoutesTest, ExactPathsAndMethods) {
  const RouteMatch embeddings = MatchRoute("POST", "/v1/embeddings");
  ASSERT_EQ(embeddings.outcome, Outcome::kFound);
  EXPECT_EQ(embeddings.route->route, Route::kEmbeddings);
  EXPECT_TRUE(embeddings.argument.empty());
  ASSERT_EQ(MatchRoute("GET", "/v1/models").outcome, Outcome::kFound);
  EXPECT_EQ(MatchRoute("GET", "/v1/models").route->route, Route::kModels);
  ASSERT_EQ(MatchRoute("POST", "/decode").outcome, Outcome::kFound);
  EXPECT_EQ(MatchRoute("POST", "/decode").route->route, Route::kDecode);
  // Health and metrics are neither counted nor behind the keys.
  EXPECT_FALSE(MatchRoute("GET", "/health").route->counted);
  EXPECT_FALSE(MatchRoute("GET", "/metrics").route->counted);
  EXPECT_TRUE(MatchRoute("POST", "/embed").route->counted);
}

TEST(RoutesTest, TheModelIdIsTheWholeRestOfThePath) {
  const RouteMatch hub = MatchRoute("GET", "/v1/models/BAAI/bge-m3");
  ASSERT_EQ(hub.outcome, Outcome::kFound);
  EXPECT_EQ(hub.route->route, Route::kModel);
  EXPECT_EQ(hub.argument, "BAAI/bge-m3");
  EXPECT_EQ(MatchRoute("GET", "/v1/models/minilm").argument, "minilm");
  // No id: no model's route.
  EXPECT_EQ(MatchRoute("GET", "/v1/models/").outcome, Outcome::kNotFound);
}

TEST(RoutesTest, WrongMethodsNameWhatThePathAllows) {
  const RouteMatch get_embed = MatchRoute("GET", "/embed");
  EXPECT_EQ(get_embed.outcome, Outcome::kWrongMethod);
  EXPECT_EQ(get_embed.route, nullptr);
  EXPECT_EQ(get_embed.allow, "POST");
  EXPECT_EQ(MatchRoute("POST", "/v1/models").allow, "GET");
  EXPECT_EQ(MatchRoute("DELETE", "/v1/models/x").allow, "GET");
  EXPECT_EQ(MatchRoute("POST", "/health").allow, "GET");
  EXPECT_EQ(MatchRoute("GET", "/nowhere").outcome, Outcome::kNotFound);
  EXPECT_EQ(MatchRoute("POST", "/embed/").outcome, Outcome::kNotFound);
}

TEST(RoutesTest, ApisAndTheListForTheLog) {
  EXPECT_EQ(ApiOfPath("/v1/embeddings"), Api::kOpenAi);
  EXPECT_EQ(ApiOfPath("/v1/nowhere"), Api::kOpenAi);
  EXPECT_EQ(ApiOfPath("/embed"), Api::kTei);
  EXPECT_EQ(
      RouteList(),
      "POST /v1/embeddings, GET /v1/models, GET /v1/models/{id}, POST /embed, "
      "POST /tokenize, POST /decode, GET /info, POST /rerank, POST /v1/rerank, POST /predict, "
      "POST /embed_sparse, POST /embed_multi, POST /embed_all, POST /similarity, "
      "POST /embed_chunks, POST /v2/embed, GET /health, GET /metrics");
  EXPECT_EQ(ApiOfPath("/v2/embed"), Api::kTei);  // Cohere /v2/embed: TEI-shaped errors
}

}  // namespace
}  // namespace server::http
