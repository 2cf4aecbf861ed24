// Rerank, Classify, EncodeSparse and EncodeMulti over a real gRPC socket, on
// the service core with the fake engine (GrpcCoreServer: FakeBackend's
// classify logits are the input's token count + label index; its sparse
// weights positions), with their error codes.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "client/commands.h"

#include "support/grpc_core_server.h"
#include "support/test_server.h"

namespace server {
namespace {

using testing_support::GrpcCoreServer;

class GrpcHeadsTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }
  // A server whose model has `heads` (set before its threads start).
  void Start(core::ModelHeads heads = {}) {
    stub_.reset();
    server_.reset();
    server_ = std::make_unique<GrpcCoreServer>(std::move(heads));
    ASSERT_TRUE(server_->ok());
    stub_ = encoder::v1::Encoder::NewStub(testing_support::Connect(server_->port()));
  }
  std::unique_ptr<GrpcCoreServer> server_;
  std::unique_ptr<encoder::v1::Encoder::Stub> stub_;
};

encoder::v1::RerankRequest ThreeTexts() {
  encoder::v1::RerankRequest request;
  request.set_query("hello");
  request.add_texts("world");
  request.add_texts("hello world again");
  request.add_texts("hello world");
  return request;
}

TEST_F(GrpcHeadsTest, RerankSortedWithTopNAndText) {
  Start(testing_support::CoreService::RerankerHeads());
  encoder::v1::RerankRequest request = ThreeTexts();
  request.set_top_n(2);
  request.set_return_text(true);
  grpc::ClientContext context;
  testing_support::SetDeadline(&context);
  encoder::v1::RerankResponse response;
  grpc::Status status = stub_->Rerank(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_EQ(response.results(0).index(), 1);
  EXPECT_EQ(response.results(0).text(), "hello world again");
  EXPECT_EQ(response.results(1).index(), 2);
  EXPECT_GT(response.results(0).score(), response.results(1).score());
  EXPECT_GT(response.tokens(), 0);
}

TEST_F(GrpcHeadsTest, RerankErrors) {
  {  // An embedding model.
    grpc::ClientContext context;
    encoder::v1::RerankResponse response;
    grpc::Status status = stub_->Rerank(&context, ThreeTexts(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(status.error_message().find("this model serves embeddings"), std::string::npos)
        << status.error_message();
  }
  Start(testing_support::CoreService::RerankerHeads());
  {
    encoder::v1::RerankRequest request = ThreeTexts();
    request.set_top_n(0);
    grpc::ClientContext context;
    encoder::v1::RerankResponse response;
    grpc::Status status = stub_->Rerank(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("top_n"), std::string::npos);
  }
  {
    encoder::v1::RerankRequest request = ThreeTexts();
    request.set_texts(1, "");
    grpc::ClientContext context;
    encoder::v1::RerankResponse response;
    grpc::Status status = stub_->Rerank(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("input 1: text is empty"), std::string::npos)
        << status.error_message();
  }
}

TEST_F(GrpcHeadsTest, ClassifyEveryLabelByScore) {
  core::ModelHeads heads;
  heads.classifier = engine::ClassifierHead{2, {"neg", "pos"}, engine::ScoreActivation::kIdentity};
  Start(heads);
  server_->core().backend().SetNumLabels(2);
  encoder::v1::ClassifyRequest request;
  request.add_inputs()->set_text("hello");
  encoder::v1::TextPair* pair = request.add_inputs()->mutable_text_pair();
  pair->set_text("hello");
  pair->set_text_pair("world");
  request.set_raw_scores(true);
  grpc::ClientContext context;
  encoder::v1::ClassifyResponse response;
  grpc::Status status = stub_->Classify(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.predictions_size(), 2);
  EXPECT_EQ(response.predictions(0).scores(0).label(), "pos");
  EXPECT_EQ(response.predictions(0).scores(0).id(), 1);
  EXPECT_GT(response.predictions(1).scores(0).score(), response.predictions(0).scores(0).score());

  grpc::ClientContext bad_context;
  request.mutable_inputs(1)->mutable_text_pair()->clear_text_pair();
  status = stub_->Classify(&bad_context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("input 1: text_pair is empty"), std::string::npos)
      << status.error_message();
}

TEST_F(GrpcHeadsTest, EncodeSparseEntriesAndTokens) {
  encoder::v1::EncodeSparseRequest request;
  encoder::v1::TokenIds* ids = request.add_inputs()->mutable_token_ids();
  for (int32_t id : {2, 11, 12, 11, 3}) ids->add_ids(id);
  {
    grpc::ClientContext context;
    encoder::v1::EncodeSparseResponse response;
    EXPECT_EQ(stub_->EncodeSparse(&context, request, &response).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }
  core::ModelHeads heads;
  heads.sparse = true;
  Start(heads);
  request.set_max_active_dims(2);
  request.set_return_tokens(true);
  grpc::ClientContext context;
  encoder::v1::EncodeSparseResponse response;
  grpc::Status status = stub_->EncodeSparse(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.embeddings_size(), 1);
  ASSERT_EQ(response.embeddings(0).entries_size(), 2);
  EXPECT_EQ(response.embeddings(0).entries(0).id(), 3);
  EXPECT_EQ(response.embeddings(0).entries(0).weight(), 4.0f);
  EXPECT_EQ(response.embeddings(0).entries(1).id(), 11);
  EXPECT_FALSE(response.embeddings(0).entries(1).token().empty());
}

TEST_F(GrpcHeadsTest, EncodeMultiGivesTheOutputsAsked) {
  encoder::v1::EncodeMultiRequest request;
  encoder::v1::TokenIds* ids = request.add_inputs()->mutable_token_ids();
  for (int32_t id : {2, 11, 12, 11, 3}) ids->add_ids(id);
  request.add_outputs(encoder::v1::OUTPUT_KIND_DENSE);
  request.add_outputs(encoder::v1::OUTPUT_KIND_COLBERT);
  {  // A model without a ColBERT head: which outputs it serves.
    grpc::ClientContext context;
    encoder::v1::EncodeMultiResponse response;
    grpc::Status status = stub_->EncodeMulti(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(status.error_message().find("colbert vectors need a multi-vector head"),
              std::string::npos)
        << status.error_message();
  }
  Start(testing_support::CoreService::MultiOutputHeads());
  request.add_outputs(encoder::v1::OUTPUT_KIND_SPARSE);
  request.set_max_active_dims(2);
  grpc::ClientContext context;
  encoder::v1::EncodeMultiResponse response;
  grpc::Status status = stub_->EncodeMulti(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.outputs_size(), 1);
  const encoder::v1::MultiOutput& output = response.outputs(0);
  EXPECT_EQ(output.tokens(), 5);
  EXPECT_EQ(output.dense_size(), 2);
  ASSERT_EQ(output.sparse_size(), 2);
  EXPECT_EQ(output.sparse(0).id(), 3);
  EXPECT_EQ(output.colbert().rows(), 4);  // every token but the first
  EXPECT_EQ(output.colbert().cols(), 2);
  ASSERT_EQ(output.colbert().values_size(), 8);
  EXPECT_EQ(output.colbert().values(0), 11.0f);
  EXPECT_EQ(output.colbert().values(7), 4.0f);
  EXPECT_EQ(response.tokens(), 5);

  for (const auto& [outputs, wanted] :
       std::vector<std::pair<std::vector<int>, std::string>>{{{}, "outputs is empty"},
                                                             {{1, 1}, "DENSE asked twice"},
                                                             {{9}, "unknown output kind 9"}}) {
    encoder::v1::EncodeMultiRequest bad = request;
    bad.clear_outputs();
    for (int kind : outputs) bad.add_outputs(static_cast<encoder::v1::OutputKind>(kind));
    grpc::ClientContext bad_context;
    status = stub_->EncodeMulti(&bad_context, bad, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << wanted;
    EXPECT_NE(status.error_message().find(wanted), std::string::npos) << status.error_message();
  }
}

// Each head RPC on a model without its head (an embedding model):
// FAILED_PRECONDITION naming the head it needs and what the model serves.
TEST_F(GrpcHeadsTest, EachHeadRpcWithoutItsHeadIsFailedPrecondition) {
  encoder::v1::Input input;
  input.set_text("hello world");
  const auto expect_refused = [](const grpc::Status& status, const std::string& wanted) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << wanted;
    EXPECT_NE(status.error_message().find(wanted), std::string::npos) << status.error_message();
    EXPECT_NE(status.error_message().find("this model serves"), std::string::npos)
        << status.error_message();
  };
  {
    grpc::ClientContext context;
    encoder::v1::RerankResponse response;
    expect_refused(stub_->Rerank(&context, ThreeTexts(), &response),
                   "rerank needs a cross-encoder");
  }
  {
    encoder::v1::ClassifyRequest request;
    *request.add_inputs() = input;
    grpc::ClientContext context;
    encoder::v1::ClassifyResponse response;
    expect_refused(stub_->Classify(&context, request, &response),
                   "classify needs a sequence-classification head");
  }
  {
    encoder::v1::EncodeSparseRequest request;
    *request.add_inputs() = input;
    grpc::ClientContext context;
    encoder::v1::EncodeSparseResponse response;
    expect_refused(stub_->EncodeSparse(&context, request, &response),
                   "sparse embeddings need a masked-LM (SPLADE) head");
  }
  {
    encoder::v1::EncodeMultiRequest request;
    *request.add_inputs() = input;
    request.add_outputs(encoder::v1::OUTPUT_KIND_SPARSE);
    grpc::ClientContext context;
    encoder::v1::EncodeMultiResponse response;
    expect_refused(stub_->EncodeMulti(&context, request, &response),
                   "sparse embeddings need a masked-LM (SPLADE) head");
  }
}

// encoder-client's rerank, classify and sparse commands against the server.
TEST_F(GrpcHeadsTest, ClientCommandsPrintJsonLines) {
  client::ConnectionOptions connection;
  connection.target = "127.0.0.1:" + std::to_string(server_->port());
  std::ostringstream out;
  std::ostringstream err;
  client::RerankOptions rerank;
  rerank.query = "hello";
  rerank.texts = {"world", "hello world again"};
  rerank.top_n = 1;
  rerank.return_text = true;
  // An embedding model: exit 1, the status on stderr.
  EXPECT_EQ(client::RunRerank(connection, rerank, out, err), 1);
  EXPECT_NE(err.str().find("FAILED_PRECONDITION"), std::string::npos) << err.str();

  core::ModelHeads heads;
  heads.classifier = engine::ClassifierHead{1, {"score"}, engine::ScoreActivation::kIdentity};
  heads.sparse = true;
  Start(heads);
  connection.target = "127.0.0.1:" + std::to_string(server_->port());
  out.str("");
  ASSERT_EQ(client::RunRerank(connection, rerank, out, err), 0) << err.str();
  EXPECT_NE(out.str().find(R"("index":1)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(R"("text":"hello world again")"), std::string::npos) << out.str();

  out.str("");
  client::ClassifyOptions classify;
  classify.inputs.texts = {"hello", "world"};
  classify.inputs.pair = true;
  classify.raw_scores = true;
  ASSERT_EQ(client::RunClassify(connection, classify, out, err), 0) << err.str();
  EXPECT_NE(out.str().find(R"("label":"score")"), std::string::npos) << out.str();

  out.str("");
  client::SparseOptions sparse;
  sparse.inputs.ids = "2,11,12,3";
  sparse.max_active_dims = 1;
  ASSERT_EQ(client::RunSparse(connection, sparse, out, err), 0) << err.str();
  EXPECT_NE(out.str().find(R"("id":3)"), std::string::npos) << out.str();

  out.str("");
  Start(testing_support::CoreService::MultiOutputHeads());
  connection.target = "127.0.0.1:" + std::to_string(server_->port());
  client::MultiOptions multi;
  multi.sparse.inputs.ids = "2,11,12,3";
  multi.outputs = "sparse,colbert";
  ASSERT_EQ(client::RunMulti(connection, multi, out, err), 0) << err.str();
  EXPECT_NE(out.str().find(R"("rows":3)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(R"("dense":[])"), std::string::npos) << out.str();  // not asked
  multi.outputs = "dense,lexical";
  EXPECT_EQ(client::RunMulti(connection, multi, out, err), 2);

  // Usage errors: exit 2.
  client::RerankOptions no_texts;
  no_texts.query = "q";
  EXPECT_EQ(client::RunRerank(connection, no_texts, out, err), 2);
}

}  // namespace
}  // namespace server
