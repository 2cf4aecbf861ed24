#include "client/chunks_command.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/channel.h"
#include "client/json_output.h"
#include "client/rpc_error.h"
#include "encoder/v1/encoder.grpc.pb.h"

namespace client {

absl::StatusOr<std::vector<encoder::v1::ChunkSpan>> ParseChunkSpans(const std::string& text) {
  std::vector<encoder::v1::ChunkSpan> spans;
  for (absl::string_view piece : absl::StrSplit(text, ',')) {
    piece = absl::StripAsciiWhitespace(piece);
    const std::vector<absl::string_view> bounds = absl::StrSplit(piece, ':');
    int32_t start = 0;
    int32_t end = 0;
    if (bounds.size() != 2 || !absl::SimpleAtoi(bounds[0], &start) ||
        !absl::SimpleAtoi(bounds[1], &end)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--chunks: \"", piece, "\" is not START:END (code points)"));
    }
    encoder::v1::ChunkSpan span;
    span.set_start(start);
    span.set_end(end);
    spans.push_back(span);
  }
  return spans;
}

namespace {

// The text of --text, or of --file (all of it; '-': standard input).
std::optional<std::string> ReadText(const ChunksOptions& options, std::ostream& err) {
  if (options.text.empty() == options.text_file.empty()) {
    err << "encoder-client: chunks needs one of --text or --file\n";
    return std::nullopt;
  }
  if (!options.text.empty()) return options.text;
  if (options.text_file == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  }
  std::ifstream in(options.text_file, std::ios::binary);
  if (!in) {
    err << "encoder-client: --file: cannot read " << options.text_file << "\n";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int RunChunks(const ConnectionOptions& connection, const ChunksOptions& options, std::ostream& out,
              std::ostream& err) {
  const std::optional<std::string> text = ReadText(options, err);
  if (!text) return 2;
  if (options.chunks.empty() == (options.chunk_tokens == 0)) {
    err << "encoder-client: chunks needs one of --chunks START:END,... or --chunk-tokens N\n";
    return 2;
  }
  encoder::v1::EncodeChunksRequest request;
  request.set_model(connection.model);
  request.set_text(*text);
  if (!options.chunks.empty()) {
    absl::StatusOr<std::vector<encoder::v1::ChunkSpan>> spans = ParseChunkSpans(options.chunks);
    if (!spans.ok()) {
      err << "encoder-client: " << spans.status().message() << "\n";
      return 2;
    }
    for (const encoder::v1::ChunkSpan& span : *spans) *request.add_chunks() = span;
  }
  request.set_chunk_tokens(options.chunk_tokens);
  if (options.window_overlap) request.set_window_overlap(*options.window_overlap);
  if (options.normalize) request.set_normalize(*options.normalize);
  request.set_dimensions(options.dimensions);

  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  grpc::ClientContext context;
  PrepareCall(connection, &context);
  encoder::v1::EncodeChunksResponse response;
  const grpc::Status status = stub->EncodeChunks(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status, err);
  out << MessageToJsonLine(response) << "\n";
  out.flush();
  return 0;
}

}  // namespace client
