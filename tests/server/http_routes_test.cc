// The HTTP route table without sockets: which route (handler) a method and
// path reach, the argument of GET /v1/models/{id} (slashes included, as hub
// names have), what a known path with the wrong method allows (405's Allow
// header), and each route's API family, whose shapes its errors take.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "server/http/route_handlers.h"
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
  EXPECT_EQ(embeddings.route->handler, &handlers::Embeddings);
  EXPECT_TRUE(embeddings.argument.empty());
  ASSERT_EQ(MatchRoute("GET", "/v1/models").outcome, Outcome::kFound);
  EXPECT_EQ(MatchRoute("GET", "/v1/models").route->handler, &handlers::ListModels);
  ASSERT_EQ(MatchRoute("POST", "/decode").outcome, Outcome::kFound);
  EXPECT_EQ(MatchRoute("POST", "/decode").route->handler, &handlers::Decode);
  // Health and metrics are neither counted nor behind the keys.
  EXPECT_FALSE(MatchRoute("GET", "/health").route->counted);
  EXPECT_FALSE(MatchRoute("GET", "/metrics").route->counted);
  EXPECT_TRUE(MatchRoute("POST", "/embed").route->counted);
}

TEST(RoutesTest, TheModelIdIsTheWholeRestOfThePath) {
  const RouteMatch hub = MatchRoute("GET", "/v1/models/BAAI/bge-m3");
  ASSERT_EQ(hub.outcome, Outcome::kFound);
  EXPECT_EQ(hub.route->handler, &handlers::GetModel);
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
  EXPECT_EQ(MatchRoute("POST", "/v1/embeddings").api, Api::kOpenAi);
  EXPECT_EQ(MatchRoute("POST", "/v1/nowhere").api, Api::kOpenAi);
  EXPECT_EQ(MatchRoute("POST", "/embed").api, Api::kTei);
  EXPECT_EQ(
      RouteList(),
      "POST /v1/embeddings, GET /v1/models, GET /v1/models/{id}, POST /embed, "
      "POST /tokenize, POST /decode, GET /info, POST /rerank, POST /v1/rerank, POST /predict, "
      "POST /embed_sparse, POST /embed_multi, POST /embed_all, POST /similarity, "
      "POST /embed_chunks, POST /v2/embed, GET /health, GET /metrics");
  // Cohere's routes answer in Cohere's shapes, whatever their prefix (was:
  // /v2/embed TEI's, /v1/rerank OpenAI's, from the path).
  EXPECT_EQ(MatchRoute("POST", "/v2/embed").api, Api::kCohere);
  EXPECT_EQ(MatchRoute("POST", "/v1/rerank").api, Api::kCohere);
}

// Each route's family as its line declares it, checked against the APIs
// whose shapes they answer: OpenAI's /v1/embeddings and /v1/models, Cohere's
// /v1/rerank and /v2/embed, TEI's and the TEI-style routes; /health and
// /metrics belong to none.
TEST(RoutesTest, EveryRouteHasItsApisFamily) {
  const std::vector<std::pair<std::pair<const char*, const char*>, Api>> families = {
      {{"POST", "/v1/embeddings"}, Api::kOpenAi},
      {{"GET", "/v1/models"}, Api::kOpenAi},
      {{"GET", "/v1/models/m"}, Api::kOpenAi},
      {{"POST", "/embed"}, Api::kTei},
      {{"POST", "/tokenize"}, Api::kTei},
      {{"POST", "/decode"}, Api::kTei},
      {{"GET", "/info"}, Api::kTei},
      {{"POST", "/rerank"}, Api::kTei},
      {{"POST", "/v1/rerank"}, Api::kCohere},
      {{"POST", "/predict"}, Api::kTei},
      {{"POST", "/embed_sparse"}, Api::kTei},
      {{"POST", "/embed_multi"}, Api::kTei},
      {{"POST", "/embed_all"}, Api::kTei},
      {{"POST", "/similarity"}, Api::kTei},
      {{"POST", "/embed_chunks"}, Api::kTei},
      {{"POST", "/v2/embed"}, Api::kCohere},
      {{"GET", "/health"}, Api::kNone},
      {{"GET", "/metrics"}, Api::kNone}};
  for (const auto& [route, api] : families) {
    const RouteMatch match = MatchRoute(route.first, route.second);
    ASSERT_EQ(match.outcome, Outcome::kFound) << route.second;
    EXPECT_EQ(match.route->api, api) << route.second;
    EXPECT_EQ(match.api, api) << route.second;
    EXPECT_NE(match.route->handler, nullptr) << route.second;
  }
  // A wrong method answers in the path's family; an unknown path in the
  // family of the clients that send there.
  EXPECT_EQ(MatchRoute("GET", "/v1/rerank").api, Api::kCohere);
  EXPECT_EQ(MatchRoute("GET", "/v1/embeddings").api, Api::kOpenAi);
  EXPECT_EQ(MatchRoute("POST", "/v2/nowhere").api, Api::kCohere);
  EXPECT_EQ(MatchRoute("POST", "/nowhere").api, Api::kTei);
}

}  // namespace
}  // namespace server::http
