// encoder-client chunks: late chunking (EncodeChunks) of one long text.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/client_options.h"
#include "encoder/v1/encoder.pb.h"

namespace client {

struct ChunksOptions {
  std::string text;       // --text
  std::string text_file;  // --file: the whole file is the text ('-': stdin)
  std::string chunks;     // --chunks "0:100,100:250" (code points)
  int chunk_tokens = 0;   // --chunk-tokens N
  std::optional<int> window_overlap;
  std::optional<bool> normalize;  // --normalize / --unnormalized; unset: the model's
  int dimensions = 0;
};

// "0:100, 100:250" -> {{0, 100}, {100, 250}}; errors name --chunks and the
// piece at fault. The server checks the values (order, bounds).
absl::StatusOr<std::vector<encoder::v1::ChunkSpan>> ParseChunkSpans(const std::string& text);

// One EncodeChunks call; prints the response as one JSON object:
// {"chunks": [{"start", "end", "tokens", "values"}, ...], "windows", "tokens"}.
int RunChunks(const ConnectionOptions& connection, const ChunksOptions& options, std::ostream& out,
              std::ostream& err);

}  // namespace client
