// encoder-client: talks to encoder-server.
//   encode   [texts...] [--pair] [--input FILE] [--ids 101,2023,102]
//            [--pooling cls|mean|none|pooler] [--normalize] [--truncate]
//   tokenize [texts...] [--pair] [--input FILE] [--truncate]
//   info
//   health   [--service NAME]
// Common: --target (default localhost:50051; dns:///host:port with --lb
// round_robin spreads calls over every address), --timeout (default 30s).
// Put texts that start with '-' after "--".
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "client/client_options.h"
#include "client/commands.h"

ABSL_FLAG(std::string, target, "localhost:50051", "server address (any gRPC target)");
ABSL_FLAG(std::string, lb, "", "load-balancing policy, e.g. round_robin (default: pick_first)");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(30), "deadline of each call");
ABSL_FLAG(bool, pair, false, "texts are taken two by two as (text, text_pair)");
ABSL_FLAG(std::string, input, "",
          "JSON lines file ('-': stdin): {\"text\": ...}, {\"text\": ..., \"text_pair\": ...} "
          "or {\"ids\": [...], \"token_type_ids\": [...]}");
ABSL_FLAG(std::string, ids, "", "one input of token ids, e.g. 101,2023,102");
ABSL_FLAG(std::string, pooling, "",
          "cls, mean, none (all token states) or pooler; "
          "default: the model's");
ABSL_FLAG(bool, normalize, false, "L2-normalize the vectors");
ABSL_FLAG(bool, truncate, false, "cut inputs longer than the model's maximum");
ABSL_FLAG(int, inputs_per_call, 64, "encode: inputs per Encode call");
ABSL_FLAG(std::string, service, "", "health: the service to check (default: the server)");

namespace {

constexpr char kUsage[] =
    "usage: encoder-client <encode|tokenize|info|health> [flags] [texts...]\n"
    "  encode   [texts...] [--pair] [--input FILE] [--ids 1,2,3] [--pooling cls|mean|none|pooler]\n"
    "           [--normalize] [--truncate]\n"
    "  tokenize [texts...] [--pair] [--input FILE] [--truncate]\n"
    "  info\n"
    "  health   [--service NAME]\n"
    "common: --target host:port (default localhost:50051), --lb round_robin, --timeout 30s\n"
    "texts starting with '-' go after \"--\"\n";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = positional[1];

  client::ConnectionOptions connection;
  connection.target = absl::GetFlag(FLAGS_target);
  connection.lb = absl::GetFlag(FLAGS_lb);
  connection.timeout = absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_timeout));

  client::InputOptions inputs;
  inputs.texts.assign(positional.begin() + 2, positional.end());
  inputs.pair = absl::GetFlag(FLAGS_pair);
  inputs.input_file = absl::GetFlag(FLAGS_input);
  inputs.ids = absl::GetFlag(FLAGS_ids);

  if (command == "encode") {
    client::EncodeOptions options;
    options.inputs = inputs;
    options.pooling = absl::GetFlag(FLAGS_pooling);
    options.normalize = absl::GetFlag(FLAGS_normalize);
    options.truncate = absl::GetFlag(FLAGS_truncate);
    options.inputs_per_call = absl::GetFlag(FLAGS_inputs_per_call);
    return client::RunEncode(connection, options, std::cout, std::cerr);
  }
  if (command == "tokenize") {
    return client::RunTokenize(connection, inputs, absl::GetFlag(FLAGS_truncate), std::cout,
                               std::cerr);
  }
  if (positional.size() > 2) {
    std::cerr << "encoder-client: " << command << " takes no texts\n";
    return 2;
  }
  if (command == "info") return client::RunInfo(connection, std::cout, std::cerr);
  if (command == "health") {
    return client::RunHealth(connection, absl::GetFlag(FLAGS_service), std::cout, std::cerr);
  }
  std::cerr << "encoder-client: unknown command \"" << command << "\"\n" << kUsage;
  return 2;
}
