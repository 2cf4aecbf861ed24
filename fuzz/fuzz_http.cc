// libFuzzer target: the bytes as the body of an HTTP API request, through
// what the HTTP adapter does with it (server/http/json_mapping.cc): parsed
// as OpenAI's /v1/embeddings, TEI's /embed and /tokenize, each accepted
// request then validated and tokenized by the core's InputTokenizer on a
// small random model, and answers rendered from fake outputs (Matryoshka,
// base64). Checks: no crash; a built request holds 1..max_length ids per
// input; every rendered body and every error body is valid JSON. (HTTP
// framing itself is CivetWeb's, a Debian library built without our
// sanitizers.)
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz_service.h"
#include "fuzz_util.h"
#include "server/core/model/model_loader.h"
#include "server/core/requests/plans.h"
#include "server/http/http_errors.h"
#include "server/http/json_mapping.h"

namespace {

void CheckJson(const std::string& text, const char* what) {
  fuzz::Check(nlohmann::json::accept(text), what);
}

void CheckError(const absl::Status& status) {
  for (auto api : {server::http::Api::kOpenAi, server::http::Api::kTei}) {
    const int http_status = server::http::HttpStatusFor(status.code(), api);
    fuzz::Check(http_status >= 400 && http_status < 600, "an error is 4xx or 5xx");
    CheckJson(server::http::ErrorBody(status, http_status, api), "error bodies are JSON");
  }
}

void Embeddings(const fuzz::Service& service,
                const absl::StatusOr<server::http::EmbeddingsCall>& call) {
  if (!call.ok()) {
    CheckError(call.status());
    return;
  }
  auto built = EncodeInputs(*service.inputs, call->request);
  if (!built.ok()) {
    CheckError(built.status());
    return;
  }
  const int hidden = service.model.encoder->config().hidden_size;
  fuzz::Check(call->dimensions >= 0 && call->dimensions <= hidden, "dimensions in range");
  server::core::EncodeResult result;
  for (const server::TokenizedInput& input : (*built)->inputs) {
    fuzz::Check(
        !input.ids.empty() && static_cast<int>(input.ids.size()) <= service.model.max_length(),
        "1..max_length ids");
    server::InputOutput output;
    output.rows = 1;
    output.cols = hidden;
    output.tokens = static_cast<int>(input.ids.size());
    output.values.assign(static_cast<size_t>(hidden), 0.25f);
    result.outputs.push_back(std::move(output));
  }
  CheckJson(server::http::RenderOpenAiEmbeddings(result, *call, service.model.name),
            "OpenAI answers are JSON");
  CheckJson(server::http::RenderTeiEmbed(result, *call), "TEI answers are JSON");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Service& service = fuzz::GetService("fuzz_http");
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const int hidden = service.model.encoder->config().hidden_size;
  Embeddings(service, server::http::ParseOpenAiEmbeddings(body, hidden));
  Embeddings(service, server::http::ParseTeiEmbed(body, hidden));
  auto tokenize = server::http::ParseTeiTokenize(body);
  if (tokenize.ok()) {
    std::vector<engine::Encoding> encodings;
    for (const auto& request : *tokenize) {
      auto encoding = TokenizeText(*service.inputs, request);
      if (encoding.ok()) encodings.push_back(*std::move(encoding));
    }
    CheckJson(server::http::RenderTeiTokenize(encodings), "TEI tokens are JSON");
  } else {
    CheckError(tokenize.status());
  }
  return 0;
}
