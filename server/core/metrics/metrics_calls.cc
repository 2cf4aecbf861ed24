#include "server/core/metrics/metrics_calls.h"

namespace server::core {

const char* RpcName(Rpc rpc) {
  switch (rpc) {
    case Rpc::kEncode:
      return "Encode";
    case Rpc::kEncodeStream:
      return "EncodeStream";
    case Rpc::kTokenize:
      return "Tokenize";
    case Rpc::kGetModelInfo:
      return "GetModelInfo";
    case Rpc::kDecode:
      return "Decode";
    case Rpc::kRerank:
      return "Rerank";
    case Rpc::kClassify:
      return "Classify";
    case Rpc::kEncodeSparse:
      return "EncodeSparse";
    case Rpc::kEncodeMulti:
      return "EncodeMulti";
    case Rpc::kEncodeChunks:
      return "EncodeChunks";
  }
  return "unknown";
}

bool Serves(core::Transport transport, Rpc rpc) {
  return transport == core::Transport::kGrpc || rpc != Rpc::kEncodeStream;
}

std::vector<absl::StatusCode> AnswerableCodes(core::Transport transport, Rpc rpc) {
  using absl::StatusCode;
  if (!Serves(transport, rpc)) return {};
  const bool grpc = transport == core::Transport::kGrpc;
  const bool encodes = rpc == Rpc::kEncode || rpc == Rpc::kEncodeStream || rpc == Rpc::kRerank ||
                       rpc == Rpc::kClassify || rpc == Rpc::kEncodeSparse ||
                       rpc == Rpc::kEncodeMulti || rpc == Rpc::kEncodeChunks;
  std::vector<StatusCode> codes = {StatusCode::kOk, StatusCode::kUnauthenticated,
                                   StatusCode::kUnavailable};
  if (grpc) codes.insert(codes.end(), {StatusCode::kCancelled, StatusCode::kDeadlineExceeded});
  if (rpc != Rpc::kGetModelInfo) {
    codes.insert(codes.end(), {StatusCode::kInvalidArgument, StatusCode::kFailedPrecondition});
  }
  if (encodes) {
    codes.push_back(StatusCode::kResourceExhausted);
    if (!grpc) codes.push_back(StatusCode::kDeadlineExceeded);
  }
  if (encodes || (grpc && rpc == Rpc::kTokenize)) codes.push_back(StatusCode::kInternal);
  return codes;
}

}  // namespace server::core
