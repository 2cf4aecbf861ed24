// What encoder-client's subcommands are told; main.cc fills it from flags.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace client {

// TLS to the server; the PEM contents, not paths (main.cc reads the files,
// see LoadTlsFiles in channel.h).
struct TlsOptions {
  bool enabled = false;    // off: plaintext
  std::string root_certs;  // CAs to verify the server with; empty: the system's roots
  std::string cert_chain;  // client certificate for mutual TLS (with private_key)
  std::string private_key;
  std::string server_name;  // checked in the server's certificate; empty: the target's host
};

struct ConnectionOptions {
  std::string target = "localhost:50051";    // any gRPC target, e.g. dns:///encoder:50051
  std::string lb;                            // load-balancing policy; empty: gRPC's (pick_first)
  std::chrono::milliseconds timeout{30000};  // per call
  TlsOptions tls;
  std::string api_key;  // sent as "authorization: Bearer KEY"; empty: none
  // The served model every request names (every RPC's `model` field but
  // health's); empty: the server's one model.
  std::string model;
};

struct InputOptions {
  std::vector<std::string> texts;  // positional arguments
  bool pair = false;               // texts go two by two: (text, text_pair)
  std::string input_file;          // JSON lines; "-" is standard input
  std::string ids;                 // "101,2023,102": one input of token ids
};

struct EncodeOptions {
  InputOptions inputs;
  std::string pooling;  // cls, mean, none, pooler, or a number; empty: the model's default
  bool normalize = false;
  bool truncate = false;
  bool truncate_left = false;  // truncation keeps the end of a text
  std::string prompt_name;     // one of the model's prompts; empty: the model's default
  std::string prompt;          // a literal prompt (not with prompt_name)
  int dimensions = 0;          // Matryoshka: the first N values; 0: all
  bool unnormalized = false;   // normalize_output false: not normalized even by the model's
                               // Normalize module (without it or --normalize: as the model says)
  int inputs_per_call = 64;    // larger input lists go out in several calls
  std::string embedding_type = "float";  // float, int8, uint8, binary or ubinary
};

// rerank: one query and the texts to score against it.
struct RerankOptions {
  std::string query;
  std::vector<std::string> texts;
  int top_n = 0;  // 0: every text
  bool return_text = false;
  bool raw_scores = false;
  bool truncate = false;    // false: the server's --auto-truncate decides
  std::string instruction;  // a prompted reranker's task; empty: the model's default
};

struct ClassifyOptions {
  InputOptions inputs;  // texts, or pairs with --pair
  bool raw_scores = false;
  bool truncate = false;
  bool truncate_left = false;
};

struct SparseOptions {
  InputOptions inputs;
  int max_active_dims = 0;  // 0: all
  bool return_tokens = false;
  bool truncate = false;
  bool truncate_left = false;
};

// multi: SparseOptions' fields (for the sparse output) and the outputs asked.
struct MultiOptions {
  SparseOptions sparse;
  std::string outputs = "dense,sparse,colbert";  // comma-separated
  bool query = false;                            // --input-type query
};

}  // namespace client
