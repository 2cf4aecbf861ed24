// The calls the server's request metrics count: the RPCs (HTTP routes count
// as the call they make), which transport serves each, and the status codes
// each can answer with. The metrics create series for these combinations
// only, so that /metrics holds no series that can never move.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "server/core/api/service_types.h"

namespace server::core {

// The service's calls, as the `rpc` label names them (after encoder.v1's
// RPCs; the HTTP routes count as the call they make: /v1/embeddings and
// /embed as Encode, /tokenize as Tokenize, /decode as Decode, /info and
// /v1/models as GetModelInfo).
enum class Rpc {
  kEncode,
  kEncodeStream,
  kTokenize,
  kGetModelInfo,
  kDecode,
  kRerank,
  kClassify,
  kEncodeSparse,
  kEncodeMulti,
  kEncodeChunks  // late chunking: gRPC EncodeChunks, HTTP /embed_chunks
};
inline constexpr int kRpcCount = 10;
inline constexpr Rpc kRpcs[kRpcCount] = {
    Rpc::kEncode, Rpc::kEncodeStream, Rpc::kTokenize,     Rpc::kGetModelInfo, Rpc::kDecode,
    Rpc::kRerank, Rpc::kClassify,     Rpc::kEncodeSparse, Rpc::kEncodeMulti,  Rpc::kEncodeChunks};
const char* RpcName(Rpc rpc);

// Whether `transport` serves `rpc` (EncodeStream is gRPC's only).
bool Serves(core::Transport transport, Rpc rpc);

// The codes a call of `rpc` on `transport` can be answered with (all within
// kAnsweredCodes), OK first; empty when the transport does not serve it.
//   every call: OK, UNAUTHENTICATED (API keys), UNAVAILABLE (shutting down);
//   gRPC: CANCELLED and DEADLINE_EXCEEDED, which the client can cause on any call;
//   Encode, EncodeStream, Tokenize, Decode: INVALID_ARGUMENT, FAILED_PRECONDITION
//     (text to a model without a tokenizer);
//   Rerank, Classify, EncodeSparse, EncodeMulti: as Encode (FAILED_PRECONDITION also for
//     a model without the head);
//   EncodeChunks: as Encode (FAILED_PRECONDITION also for a model whose Dense
//     layers do not take a mean-pooled vector);
//   Encode, EncodeStream: RESOURCE_EXHAUSTED (queue full), DEADLINE_EXCEEDED
//     (queued past the deadline), INTERNAL (the engine failed);
//   gRPC Tokenize: INTERNAL (a response too large to serialize).
std::vector<absl::StatusCode> AnswerableCodes(core::Transport transport, Rpc rpc);

}  // namespace server::core
