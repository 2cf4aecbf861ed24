// The transport-free service core (EncodeDispatcher over the real input tokenizer and
// batcher, on FakeBackend): what gRPC and HTTP both call. Runs under TSan
// (scripts/test, tsan stage): requests from several threads, as from the two
// transports, share the queue and batches.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/core/api/input_error.h"
#include "server/core/batching/engine_backend.h"
#include "support/core_service.h"

namespace server {
namespace {

using Result = absl::StatusOr<core::EncodeResult>;
using testing_support::CoreService;
using testing_support::TestModel;

core::EncodeRequest IdsRequest(std::vector<std::vector<int32_t>> inputs) {
  core::EncodeRequest request;
  for (auto& ids : inputs) request.inputs.push_back(core::Input::Ids(std::move(ids)));
  return request;
}

std::future<Result> Dispatch(core::EncodeDispatcher& dispatcher,
                             const core::EncodeRequest& request) {
  auto promise = std::make_shared<std::promise<Result>>();
  std::future<Result> future = promise->get_future();
  dispatcher.Dispatch(request, core::Clock::time_point::max(), {},
                      [promise](Result result) { promise->set_value(std::move(result)); });
  return future;
}

TEST(ServiceCoreTest, EncodesInInputOrderWithThePoolingApplied) {
  CoreService service;
  core::EncodeRequest request = IdsRequest({{2, 11, 3}, {2, 12, 13, 3}});
  request.pooling = core::PoolingChoice::kMean;
  Result result = Dispatch(service.dispatcher(), request).get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->pooling, engine::Pooling::kMean);
  ASSERT_EQ(result->outputs.size(), 2u);
  // FakeBackend: {first id, tokens}.
  EXPECT_EQ(result->outputs[0].values, (std::vector<float>{2, 3}));
  EXPECT_EQ(result->outputs[1].values, (std::vector<float>{2, 4}));
  EXPECT_EQ(result->outputs[1].tokens, 4);
}

TEST(ServiceCoreTest, TextsAreTokenizedWithSpecialTokens) {
  CoreService service;
  core::EncodeRequest request;
  request.inputs.push_back(core::Input::Text("hello world"));
  Result result = Dispatch(service.dispatcher(), request).get();
  ASSERT_TRUE(result.ok()) << result.status();
  absl::StatusOr<engine::Encoding> expected = service.model().tokenizer->Encode("hello world", 0);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(result->outputs[0].tokens, static_cast<int>(expected->ids.size()));
  EXPECT_EQ(result->outputs[0].values[0], static_cast<float>(expected->ids.front()));
}

TEST(ServiceCoreTest, BadInputsAreRefusedWithTheirIndex) {
  CoreService service;
  core::EncodeRequest request = IdsRequest({{2, 3}, {}});
  Result empty_ids = Dispatch(service.dispatcher(), request).get();
  EXPECT_EQ(empty_ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty_ids.status().message(), "input 1: token_ids is empty");

  core::EncodeRequest texts;
  texts.inputs = {core::Input::Text("fine"), core::Input::Text("")};
  EXPECT_EQ(Dispatch(service.dispatcher(), texts).get().status().message(),
            "input 1: text is empty");
  core::EncodeRequest unset;
  unset.inputs.emplace_back();
  EXPECT_EQ(Dispatch(service.dispatcher(), unset).get().status().message(),
            "input 0: no text, text_pair or token_ids set");
  EXPECT_EQ(Dispatch(service.dispatcher(), core::EncodeRequest{}).get().status().message(),
            "request has no inputs");
  EXPECT_TRUE(service.backend().batches().empty());  // nothing bad reached the engine
}

// Beside the message, each refusal says which input and what kind of
// problem (server/core/api/input_error.h), for the transports' own wording.
TEST(ServiceCoreTest, RefusalsCarryTheInputAndTheProblem) {
  CoreService service;
  const auto error = [&](const core::EncodeRequest& request) {
    const absl::Status status = Dispatch(service.dispatcher(), request).get().status();
    const std::optional<core::InputError> found = core::FindInputError(status);
    EXPECT_TRUE(found.has_value()) << status;
    return found.value_or(core::InputError{-2, core::InputProblem::kInvalid});
  };
  core::InputError found = error(IdsRequest({{2, 3}, {}}));
  EXPECT_EQ(found.index, 1);
  EXPECT_EQ(found.problem, core::InputProblem::kEmpty);
  found = error(core::EncodeRequest{});
  EXPECT_EQ(found.index, -1);
  EXPECT_EQ(found.problem, core::InputProblem::kEmpty);
  found = error(IdsRequest({{2, 3}, {2, -5, 3}}));
  EXPECT_EQ(found.index, 1);
  EXPECT_EQ(found.problem, core::InputProblem::kInvalid);
  core::EncodeRequest too_long = IdsRequest({{2, 3}, std::vector<int32_t>(70, 5)});
  too_long.truncate = false;
  const absl::Status status = Dispatch(service.dispatcher(), too_long).get().status();
  EXPECT_EQ(status.message(), "input 1: token_ids has 70 ids, more than the model's maximum of 64");
  found = error(too_long);
  EXPECT_EQ(found.index, 1);
  EXPECT_EQ(found.problem, core::InputProblem::kTooLong);
}

// A request that does not say whether to truncate gets the server's
// --auto-truncate; one that says so gets what it says.
TEST(ServiceCoreTest, UnsetTruncateFollowsAutoTruncate) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "hello ";  // 102 tokens
  for (const bool auto_truncate : {true, false}) {
    SCOPED_TRACE(auto_truncate);
    core::RequestLimits limits;
    limits.auto_truncate = auto_truncate;
    CoreService service(CoreService::DefaultConfig(), limits);
    core::EncodeRequest request;
    request.inputs = {core::Input::Text(text), core::Input::Ids(std::vector<int32_t>(70, 5))};
    Result unset = Dispatch(service.dispatcher(), request).get();
    EXPECT_EQ(unset.ok(), auto_truncate) << unset.status();
    if (unset.ok()) {
      EXPECT_EQ(unset->outputs[0].tokens, TestModel::kMaxLength);
      EXPECT_EQ(unset->outputs[1].tokens, TestModel::kMaxLength);
    } else {
      EXPECT_EQ(unset.status().message(),
                "input 0: text is 102 tokens long, more than the model's maximum of 64");
    }
    request.truncate = true;
    EXPECT_TRUE(Dispatch(service.dispatcher(), request).get().ok());
    request.truncate = false;
    EXPECT_FALSE(Dispatch(service.dispatcher(), request).get().ok());
  }
}

// The ids a request's inputs are turned into, by the encode plan alone.
std::vector<std::vector<int32_t>> BuiltIds(const core::LoadedModel& model,
                                           const core::EncodeRequest& request,
                                           absl::Status* status = nullptr) {
  absl::StatusOr<std::unique_ptr<core::BatchRequest>> built =
      core::EncodeInputs(core::InputTokenizer(&model, {}), request);
  if (status != nullptr) *status = built.status();
  std::vector<std::vector<int32_t>> ids;
  if (!built.ok()) return ids;
  for (const core::TokenizedInput& input : (*built)->inputs) ids.push_back(input.ids);
  return ids;
}

std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Left truncation keeps the end of the text: [CLS], the last tokens, [SEP];
// right truncation its beginning. Token ids keep their first and last id.
TEST(ServiceCoreTest, TruncationCutsTheSideTheRequestNames) {
  CoreService service;
  const core::LoadedModel& model = service.model();
  std::string text;
  for (int i = 0; i < 40; ++i) text += "hello world ";
  const std::vector<int32_t> full = model.tokenizer->Encode(text).value().ids;
  const int max = TestModel::kMaxLength;
  ASSERT_GT(static_cast<int>(full.size()), max);
  const std::vector<int32_t> body(full.begin() + 1, full.end() - 1);
  std::vector<int32_t> long_ids = full;

  core::EncodeRequest request;
  request.inputs = {core::Input::Text(text), core::Input::Ids(long_ids)};
  request.truncate = true;
  const std::vector<std::vector<int32_t>> right = BuiltIds(model, request);
  request.truncation_side = engine::TruncationSide::kLeft;
  const std::vector<std::vector<int32_t>> left = BuiltIds(model, request);
  ASSERT_EQ(right.size(), 2u);
  ASSERT_EQ(left.size(), 2u);

  const std::vector<int32_t> head(body.begin(), body.begin() + (max - 2));
  const std::vector<int32_t> tail(body.end() - (max - 2), body.end());
  const std::vector<int32_t> cls = {full.front()};
  const std::vector<int32_t> sep = {full.back()};
  EXPECT_EQ(right[0], Concat(Concat(cls, head), sep));
  EXPECT_EQ(left[0], Concat(Concat(cls, tail), sep));
  EXPECT_EQ(right[1], right[0]);  // the ids were the text's: the same cut
  EXPECT_EQ(left[1], left[0]);
}

// prompt_name puts the model's prompt text before each text input, as if
// the client had written it; unknown names and token ids are refused.
TEST(ServiceCoreTest, PromptNamesPrefixTheirText) {
  TestModel files;
  std::ofstream(files.dir() + "/config_sentence_transformers.json")
      << R"({"prompts": {"query": "hello ", "passage": "world "}, "default_prompt_name": null})";
  engine::EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(files.dir(), options);
  ASSERT_TRUE(model.ok()) << model.status();

  core::EncodeRequest request;
  request.inputs = {core::Input::Text("hello world"), core::Input::Text("world")};
  request.prompt_name = "query";
  core::EncodeRequest written;
  written.inputs = {core::Input::Text("hello hello world"), core::Input::Text("hello world")};
  const std::vector<std::vector<int32_t>> prompted = BuiltIds(*model, request);
  ASSERT_EQ(prompted.size(), 2u);
  EXPECT_EQ(prompted, BuiltIds(*model, written));
  request.prompt_name.clear();
  EXPECT_NE(BuiltIds(*model, request), prompted);

  absl::Status status;
  request.prompt_name = "document";
  BuiltIds(*model, request, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "prompt_name \"document\" is not one of the model's prompts (passage, query)");
  request.prompt_name = "query";
  request.inputs = {core::Input::Text("fine"), core::Input::Ids({2, 3})};
  BuiltIds(*model, request, &status);
  EXPECT_EQ(status.message(),
            "input 1: prompt_name and prompt apply to text inputs, not to token_ids");
  // Without the file the model has no prompts at all.
  std::filesystem::remove(files.dir() + "/config_sentence_transformers.json");
  absl::StatusOr<core::LoadedModel> plain = core::LoadModel(files.dir(), options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  BuiltIds(*plain, request, &status);
  EXPECT_NE(status.message().find("the model has no prompts"), absl::string_view::npos) << status;
}

// The model's pipeline decides what a request with no say gets: its pooling
// modes and Normalize, its default_prompt_name for text inputs, and with
// include_prompt false the prompt's [CLS] + tokens left out of pooling
// (sentence-transformers' len(tokenize(prompt)) - 1).
TEST(ServiceCoreTest, ThePipelineSetsTheSpec) {
  TestModel files;
  std::ofstream(files.dir() + "/modules.json")
      << R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
            {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
            {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])";
  std::filesystem::create_directories(files.dir() + "/1_Pooling");
  std::ofstream(files.dir() + "/1_Pooling/config.json")
      << R"({"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": true,
             "include_prompt": false})";
  std::ofstream(files.dir() + "/config_sentence_transformers.json")
      << R"({"prompts": {"query": "hello world ", "passage": ""}, "default_prompt_name": "query"})";
  engine::EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(files.dir(), options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->embedding_size(), 2 * TestModel::kHidden);
  const core::InputTokenizer inputs(&*model, {});
  const int prompt_tokens =
      static_cast<int>(model->tokenizer->Encode("hello world ").value().ids.size()) - 1;
  ASSERT_GT(prompt_tokens, 1);

  core::EncodeRequest request;
  request.inputs = {core::Input::Text("world")};
  absl::StatusOr<std::unique_ptr<core::BatchRequest>> built = core::EncodeInputs(inputs, request);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_TRUE((*built)->spec.model_pooling);
  EXPECT_TRUE((*built)->spec.apply_dense);
  EXPECT_TRUE((*built)->spec.normalize);
  EXPECT_EQ((*built)->spec.prompt_tokens, prompt_tokens);
  EXPECT_EQ((*built)->inputs[0].ids, model->tokenizer->Encode("hello world world").value().ids);

  request.normalize = false;
  request.prompt_name = "passage";
  request.dimensions = 2 * TestModel::kHidden;
  built = core::EncodeInputs(inputs, request);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_FALSE((*built)->spec.normalize);
  EXPECT_EQ((*built)->spec.prompt_tokens, 0);
  EXPECT_EQ((*built)->spec.dimensions, 2 * TestModel::kHidden);

  request.dimensions = 2 * TestModel::kHidden + 1;
  EXPECT_EQ(core::EncodeInputs(inputs, request).status().message(),
            "dimensions 129 is not within 1..128 (the embedding's size)");
  request.dimensions = -3;
  EXPECT_TRUE(absl::IsInvalidArgument(core::EncodeInputs(inputs, request).status()));
  request.dimensions = 0;
  request.prompt = "hi ";
  EXPECT_EQ(core::EncodeInputs(inputs, request).status().message(),
            "prompt_name and prompt are exclusive: send one");
  request.prompt_name.clear();
  built = core::EncodeInputs(inputs, request);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ((*built)->inputs[0].ids, model->tokenizer->Encode("hi world").value().ids);

  // Token ids: no default prompt, nothing left out; token states are not normalized.
  core::EncodeRequest ids;
  ids.inputs = {core::Input::Ids({2, 7, 3})};
  ids.pooling = core::PoolingChoice::kNone;
  built = core::EncodeInputs(inputs, ids);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ((*built)->spec.prompt_tokens, 0);
  EXPECT_FALSE((*built)->spec.normalize);
  EXPECT_EQ((*built)->inputs[0].ids, (std::vector<int32_t>{2, 7, 3}));
}

// The real backend applies the model's whole pipeline (Pooling max + mean
// without the prompt, Dense tanh, Normalize, dimensions) as
// tests/golden/make_pipelines.py's reference says.
TEST(ServiceCoreTest, TheEngineBackendAppliesThePipeline) {
  const std::string dir = std::string(GOLDEN_DIR) + "/pipelines";
  engine::EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<core::LoadedModel> model = core::LoadModel(dir + "/model", options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->embedding_size(), 24);
  const nlohmann::json reference =
      nlohmann::json::parse(testing_support::ReadFile(dir + "/reference.json"));
  std::vector<std::vector<int32_t>> ids;
  for (const auto& input : reference.at("inputs")) {
    ids.push_back(input.at("ids").get<std::vector<int32_t>>());
  }
  std::vector<engine::Sequence> batch;
  for (const auto& seq : ids) batch.push_back(engine::Sequence{seq, {}});
  core::EngineBackend backend(model->encoder.get(), &model->pipeline);
  for (const char* name : {"pipeline", "pipeline_dimensions"}) {
    nlohmann::json want;
    for (const auto& c : reference.at("cases")) {
      if (c.at("name") == name) want = c;
    }
    ASSERT_FALSE(want.is_null()) << name;
    core::OutputSpec spec;
    spec.model_pooling = true;
    spec.apply_dense = true;
    spec.normalize = true;
    spec.prompt_tokens = reference.at("prompt_tokens");
    spec.dimensions = want.at("dimensions");
    const std::vector<core::OutputSpec> specs(batch.size(), spec);
    std::vector<core::InputOutput> outputs;
    ASSERT_TRUE(backend.Run(batch, specs, &outputs).ok());
    ASSERT_EQ(outputs.size(), batch.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::vector<double> expected = want.at("embeddings").at(i).get<std::vector<double>>();
      ASSERT_EQ(outputs[i].rows, 1);
      ASSERT_EQ(outputs[i].cols, static_cast<int>(expected.size())) << name;
      for (size_t k = 0; k < expected.size(); ++k) {
        EXPECT_NEAR(outputs[i].values[k], expected[k], 1e-4) << name << " input " << i;
      }
    }
  }
}

TEST(ServiceCoreTest, RequestsFromManyThreadsShareABatch) {
  CoreService service;
  service.backend().Hold();
  std::future<Result> first = Dispatch(service.dispatcher(), IdsRequest({{1, 5}}));
  ASSERT_TRUE(service.backend().AwaitStarted(1));
  // While the engine runs, four "transports" queue a request each.
  std::vector<std::future<Result>> queued(4);
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      queued[static_cast<size_t>(t)] = Dispatch(service.dispatcher(), IdsRequest({{10 + t, 5, 6}}));
    });
  }
  for (std::thread& caller : callers) caller.join();
  service.backend().Release();
  ASSERT_TRUE(first.get().ok());
  for (int t = 0; t < 4; ++t) {
    Result result = queued[static_cast<size_t>(t)].get();
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->outputs[0].values[0], 10 + t);  // each gets its own output back
  }
  const std::vector<std::vector<int32_t>> batches = service.backend().batches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1].size(), 4u);  // the four queued requests ran together
}

TEST(ServiceCoreTest, TokenizeAndStopAccepting) {
  CoreService service;
  absl::StatusOr<engine::Encoding> encoding =
      service.dispatcher().Tokenize(core::TokenizeRequest{"hello", "", false});
  ASSERT_TRUE(encoding.ok()) << encoding.status();
  EXPECT_EQ(encoding->ids, service.model().tokenizer->Encode("hello", 0).value().ids);
  EXPECT_EQ(service.dispatcher().Tokenize(core::TokenizeRequest{"", "", false}).status().code(),
            absl::StatusCode::kInvalidArgument);

  service.dispatcher().StopAccepting();
  EXPECT_EQ(Dispatch(service.dispatcher(), IdsRequest({{2, 3}})).get().status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(
      service.dispatcher().Tokenize(core::TokenizeRequest{"hello", "", false}).status().code(),
      absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace server
