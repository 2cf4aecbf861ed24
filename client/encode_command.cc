// encoder-client encode: sends the inputs (in calls of --inputs_per_call) and
// prints one JSON line per input, in input order.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "client/commands.h"
#include "client/unary_call.h"

namespace client {
namespace {

std::optional<encoder::v1::EmbeddingType> EmbeddingTypeOfName(const std::string& name) {
  if (name == "float" || name.empty()) return encoder::v1::EMBEDDING_TYPE_FLOAT;
  if (name == "int8") return encoder::v1::EMBEDDING_TYPE_INT8;
  if (name == "uint8") return encoder::v1::EMBEDDING_TYPE_UINT8;
  if (name == "binary") return encoder::v1::EMBEDDING_TYPE_BINARY;
  if (name == "ubinary") return encoder::v1::EMBEDDING_TYPE_UBINARY;
  return std::nullopt;
}

// {"int8": [integers of every row, row-major], "rows": r, "tokens": n}: the
// packed bytes read as the type reads them (int8 and binary signed).
std::string QuantizedOutputToJson(const encoder::v1::Output& output, const std::string& type) {
  const bool is_signed = type == "int8" || type == "binary";
  std::string json = "{\"" + type + "\": [";
  for (size_t i = 0; i < output.packed().size(); ++i) {
    if (i > 0) json += ", ";
    const auto byte = static_cast<uint8_t>(output.packed()[i]);
    json += std::to_string(is_signed ? static_cast<int>(static_cast<int8_t>(byte))
                                     : static_cast<int>(byte));
  }
  json += "], \"rows\": " + std::to_string(output.rows()) +
          ", \"tokens\": " + std::to_string(output.tokens()) + "}";
  return json;
}

}  // namespace

int RunEncode(const ConnectionOptions& connection, const EncodeOptions& options, std::ostream& out,
              std::ostream& err) {
  const std::optional<std::vector<encoder::v1::Input>> inputs =
      CollectCommandInputs(options.inputs, "encode needs texts, --input FILE or --ids", err);
  if (!inputs) return 2;
  absl::StatusOr<encoder::v1::Pooling> pooling = ParsePooling(options.pooling);
  if (!pooling.ok()) {
    err << "encoder-client: " << pooling.status().message() << "\n";
    return 2;
  }
  const std::optional<encoder::v1::EmbeddingType> embedding_type =
      EmbeddingTypeOfName(options.embedding_type);
  if (!embedding_type) {
    err << "encoder-client: --embedding-type must be float, int8, uint8, binary or ubinary\n";
    return 2;
  }
  if (options.inputs_per_call <= 0) {
    err << "encoder-client: --inputs_per_call must be positive\n";
    return 2;
  }
  auto stub = encoder::v1::Encoder::NewStub(MakeChannel(connection));
  for (size_t begin = 0; begin < inputs->size(); begin += options.inputs_per_call) {
    const size_t end = std::min(inputs->size(), begin + options.inputs_per_call);
    encoder::v1::EncodeRequest request;
    for (size_t i = begin; i < end; ++i) *request.add_inputs() = (*inputs)[i];
    request.set_pooling(*pooling);
    request.set_normalize(options.normalize);
    SetTruncation(options.truncate, options.truncate_left, &request);
    request.set_prompt_name(options.prompt_name);
    request.set_prompt(options.prompt);
    request.set_dimensions(options.dimensions);
    if (options.unnormalized) request.set_normalize_output(false);
    request.set_model(connection.model);
    request.set_embedding_type(*embedding_type);

    grpc::ClientContext context;
    PrepareCall(connection, &context);
    encoder::v1::EncodeResponse response;
    const grpc::Status status = stub->Encode(&context, request, &response);
    if (!status.ok()) return ReportRpcError(status, err);
    const bool token_states = response.pooling() == encoder::v1::POOLING_NONE;
    for (const encoder::v1::Output& output : response.outputs()) {
      out << (*embedding_type == encoder::v1::EMBEDDING_TYPE_FLOAT
                  ? EncodeOutputToJson(output, token_states)
                  : QuantizedOutputToJson(output, options.embedding_type))
          << "\n";
    }
  }
  out.flush();
  return 0;
}

}  // namespace client
