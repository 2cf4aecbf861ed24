// The route handlers the route table (routes.cc) names, one file per family.
// Each answers its call exactly once, on the calling thread or later from the
// batcher's; those over a core call are ServeCoreCall (core_call.h) plus what
// the route parses and renders.
#pragma once

#include "server/http/route_call.h"

namespace server::http::handlers {

// routes_info.cc
void Health(RouteCall call);      // GET /health
void Metrics(RouteCall call);     // GET /metrics
void ListModels(RouteCall call);  // GET /v1/models (OpenAI)
void GetModel(RouteCall call);    // GET /v1/models/{id} (OpenAI)
void Info(RouteCall call);        // GET /info (TEI)
// routes_tokens.cc (answered on the handler thread, no batch)
void Tokenize(RouteCall call);  // POST /tokenize (TEI)
void Decode(RouteCall call);    // POST /decode (TEI)
// routes_embed.cc
void Embeddings(RouteCall call);  // POST /v1/embeddings (OpenAI)
void Embed(RouteCall call);       // POST /embed (TEI)
void EmbedAll(RouteCall call);    // POST /embed_all (TEI)
void Similarity(RouteCall call);  // POST /similarity (TEI)
// routes_quantized.cc
void CohereEmbed(RouteCall call);  // POST /v2/embed (Cohere)
// routes_rerank.cc
void TeiRerank(RouteCall call);     // POST /rerank (TEI)
void CohereRerank(RouteCall call);  // POST /v1/rerank (Cohere v2 / Jina)
// routes_predict.cc
void Predict(RouteCall call);  // POST /predict (TEI)
// routes_sparse.cc
void EmbedSparse(RouteCall call);  // POST /embed_sparse (TEI)
// routes_multi.cc
void EmbedMulti(RouteCall call);  // POST /embed_multi (TEI style)
// routes_chunks.cc
void EmbedChunks(RouteCall call);  // POST /embed_chunks (TEI style, late chunking)

}  // namespace server::http::handlers
