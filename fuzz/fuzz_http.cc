// libFuzzer target: the bytes as the body of an HTTP API request, through
// what the HTTP adapter does with it (server/http/json_mapping.cc,
// json_quantized.cc): parsed as OpenAI's /v1/embeddings, TEI's /embed and
// /tokenize, Cohere's /v2/embed, each accepted request then validated and
// tokenized by the core's InputTokenizer on a small random model, and answers
// rendered from fake outputs (Matryoshka, base64, Cohere's embedding types).
// Checks: no crash; a built request holds 1..max_length ids per input; every
// rendered body is valid JSON; every error, as each API family of
// http_errors.h answers it (OpenAI, TEI, Cohere, none), is 4xx or 5xx with a
// JSON body in that family's shape. (HTTP framing is fuzz_http_wire's.)
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_service.h"
#include "fuzz_util.h"
#include "server/core/model/model_loader.h"
#include "server/core/requests/plans.h"
#include "server/http/http_errors.h"
#include "server/http/json_mapping.h"
#include "server/http/json_quantized.h"

namespace {

using server::http::Api;

// Every family a route can declare (routes.cc): errors are checked in each.
constexpr Api kEveryApi[] = {Api::kNone, Api::kOpenAi, Api::kTei, Api::kCohere};

void CheckJson(const std::string& text, const char* what) {
  fuzz::Check(nlohmann::json::accept(text), what);
}

// Exactly the keys `api`'s clients parse: OpenAI's {"error": {"message",
// "type", "param", "code"}}, Cohere's {"message"}, TEI's (and the server's own
// routes') {"error", "error_type"}.
bool HasFamilyShape(const nlohmann::json& body, Api api) {
  if (!body.is_object()) return false;
  switch (api) {
    case Api::kOpenAi: {
      if (body.size() != 1 || !body.contains("error")) return false;
      const nlohmann::json& error = body["error"];
      return error.is_object() && error.size() == 4 && error["message"].is_string() &&
             error["type"].is_string() &&
             (error["param"].is_null() || error["param"].is_string()) &&
             (error["code"].is_null() || error["code"].is_string());
    }
    case Api::kCohere:
      return body.size() == 1 && body.contains("message") && body["message"].is_string();
    case Api::kNone:
    case Api::kTei:
      break;
  }
  return body.size() == 2 && body.contains("error") && body["error"].is_string() &&
         body.contains("error_type") && body["error_type"].is_string();
}

// `status` as a route of `api`'s family answers it (route_call.cc): the HTTP
// status from the whole status (its input and missing-head marks), the body
// in the family's shape.
void CheckErrorAs(const absl::Status& status, Api api) {
  const int http_status = server::http::HttpStatusFor(status, api);
  fuzz::Check(http_status >= 400 && http_status < 600, "an error is 4xx or 5xx");
  const std::string body = server::http::ErrorBody(status, http_status, api);
  CheckJson(body, "error bodies are JSON");
  fuzz::Check(HasFamilyShape(nlohmann::json::parse(body), api),
              "error bodies have their family's shape");
}

void CheckError(const absl::Status& status) {
  for (const Api api : kEveryApi) CheckErrorAs(status, api);
}

// An encode route's error, first worded for each family (how to cut a
// too-long input there, OpenAI's "param"), as route_call.h does.
void CheckEncodeError(const absl::Status& status, bool input_is_list) {
  for (const Api api : kEveryApi) {
    CheckErrorAs(server::http::ForEmbeddingsRoute(status, api, input_is_list), api);
  }
}

// Fake outputs for a built request: one row of `hidden` values per input.
server::core::EncodeResult FakeOutputs(const fuzz::Service& service,
                                       const server::core::BatchRequest& built) {
  const int hidden = service.model.encoder->config().hidden_size;
  server::core::EncodeResult result;
  for (const server::core::TokenizedInput& input : built.inputs) {
    fuzz::Check(
        !input.ids.empty() && static_cast<int>(input.ids.size()) <= service.model.max_length(),
        "1..max_length ids");
    server::core::InputOutput output;
    output.rows = 1;
    output.cols = hidden;
    output.tokens = static_cast<int>(input.ids.size());
    output.values.assign(static_cast<size_t>(hidden), 0.25f);
    result.outputs.push_back(std::move(output));
  }
  return result;
}

void Embeddings(const fuzz::Service& service,
                const absl::StatusOr<server::http::EmbeddingsCall>& call) {
  if (!call.ok()) {
    CheckError(call.status());
    return;
  }
  auto built = server::core::EncodeInputs(*service.inputs, call->request);
  if (!built.ok()) {
    CheckEncodeError(built.status(), call->input_is_list);
    return;
  }
  const int hidden = service.model.encoder->config().hidden_size;
  fuzz::Check(call->dimensions >= 0 && call->dimensions <= hidden, "dimensions in range");
  const server::core::EncodeResult result = FakeOutputs(service, **built);
  CheckJson(server::http::RenderOpenAiEmbeddings(result, *call, service.model.name),
            "OpenAI answers are JSON");
  CheckJson(server::http::RenderTeiEmbed(result, *call), "TEI answers are JSON");
}

// Cohere's /v2/embed: its types quantized without calibration ranges, as for
// a model that has none (int8 and uint8 are then an error).
void CohereEmbed(const fuzz::Service& service,
                 const absl::StatusOr<server::http::CohereEmbedCall>& call) {
  if (!call.ok()) {
    CheckError(call.status());
    return;
  }
  fuzz::Check(!call->types.empty(), "Cohere asks for at least one type");
  auto built = server::core::EncodeInputs(*service.inputs, call->request);
  if (!built.ok()) {
    CheckEncodeError(built.status(), /*input_is_list=*/true);
    return;
  }
  auto quantized =
      server::http::QuantizeEmbeddings(FakeOutputs(service, **built), call->types, nullptr);
  if (!quantized.ok()) {
    CheckError(quantized.status());
    return;
  }
  CheckJson(server::http::RenderCohereEmbed(*quantized, *call), "Cohere answers are JSON");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Service& service = fuzz::GetService("fuzz_http");
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const int hidden = service.model.encoder->config().hidden_size;
  Embeddings(service, server::http::ParseOpenAiEmbeddings(body, hidden));
  Embeddings(service, server::http::ParseTeiEmbed(body, hidden));
  CohereEmbed(service, server::http::ParseCohereEmbed(body));
  auto tokenize = server::http::ParseTeiTokenize(body);
  if (tokenize.ok()) {
    std::vector<engine::Encoding> encodings;
    for (const auto& request : *tokenize) {
      auto encoding = server::core::TokenizeText(*service.inputs, request);
      if (encoding.ok()) encodings.push_back(*std::move(encoding));
    }
    CheckJson(server::http::RenderTeiTokenize(encodings), "TEI tokens are JSON");
  } else {
    CheckError(tokenize.status());
  }
  return 0;
}
