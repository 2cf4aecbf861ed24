// The service's requests and results in plain C++ types. Every transport
// (gRPC, HTTP) converts its wire format to these and back; nothing below
// the adapters knows protobuf, gRPC or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/encoder.h"
#include "engine/tokenizer.h"
#include "server/core/backend.h"

namespace server::core {

// One input: a text, a text pair, or token ids (with optional types).
struct Input {
  enum class Kind { kUnset, kText, kTextPair, kTokenIds };
  Kind kind = Kind::kUnset;
  std::string text;                     // kText, kTextPair
  std::string text_pair;                // kTextPair
  std::vector<int32_t> ids;             // kTokenIds
  std::vector<int32_t> token_type_ids;  // kTokenIds; empty: all zero

  static Input Text(std::string text) {
    Input input;
    input.kind = Kind::kText;
    input.text = std::move(text);
    return input;
  }
  static Input Ids(std::vector<int32_t> ids) {
    Input input;
    input.kind = Kind::kTokenIds;
    input.ids = std::move(ids);
    return input;
  }
};

// Which pooling a request asks for; kModelDefault: the model's own.
enum class PoolingChoice { kModelDefault, kCls, kMean, kNone, kPooler };

struct EncodeRequest {
  std::vector<Input> inputs;
  PoolingChoice pooling = PoolingChoice::kModelDefault;
  bool normalize = false;
  // Cut inputs longer than the model's maximum (else they are refused);
  // unset: as the server's --auto-truncate says (RequestLimits::auto_truncate).
  std::optional<bool> truncate;
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
  // One of the model's prompts (config_sentence_transformers.json), put
  // before every text input; empty: none.
  std::string prompt_name;
};

// One output per input, in input order, with the pooling that was applied.
struct EncodeResult {
  engine::Pooling pooling = engine::Pooling::kCls;
  std::vector<InputOutput> outputs;
};

struct DecodeRequest {
  std::vector<int32_t> ids;
  bool skip_special_tokens = true;
};

struct TokenizeRequest {
  std::string text;
  std::string text_pair;  // empty: a single text
  bool truncate = false;
  engine::TruncationSide truncation_side = engine::TruncationSide::kRight;
  bool add_special_tokens = true;  // false: the text's tokens alone, no [CLS]/[SEP]
};

// Which transport a call came in on (a metrics label).
enum class Transport { kGrpc, kHttp };
inline constexpr int kTransportCount = 2;
inline const char* TransportName(Transport transport) {
  return transport == Transport::kGrpc ? "grpc" : "http";
}

}  // namespace server::core
