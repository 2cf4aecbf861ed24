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
  // The served model every request names (encode, bench, info); empty: the
  // server's one model.
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
  std::string prompt_name;     // one of the model's prompts; empty: none
  int inputs_per_call = 64;    // larger input lists go out in several calls
};

}  // namespace client
