#include "server/grpc/head_conversions.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/grpc/common_conversions.h"

namespace server {
namespace {

void ToProto(core::SparseValue value, encoder::v1::SparseEntry* entry) {
  entry->set_id(value.id);
  entry->set_weight(value.weight);
  entry->set_token(std::move(value.token));
}

absl::StatusOr<core::InputType> ToCore(encoder::v1::InputType type) {
  switch (type) {
    case encoder::v1::INPUT_TYPE_DOCUMENT:
      return core::InputType::kDocument;
    case encoder::v1::INPUT_TYPE_QUERY:
      return core::InputType::kQuery;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown input_type value ", static_cast<int>(type), " (expected 0 DOCUMENT or 1 QUERY)"));
}

// The inputs and their truncation, as Classify, EncodeSparse and EncodeMulti
// requests carry them. (server::ToCore: in a template, this namespace's own
// ToCore would hide the header's.)
template <typename ProtoRequest, typename CoreRequest>
absl::Status CopyInputs(const ProtoRequest& request, CoreRequest* out) {
  out->inputs = server::ToCore(request.inputs());
  if (request.has_truncate()) out->truncate = request.truncate();
  ASSIGN_OR_RETURN(out->truncation_side, server::ToCore(request.truncation_direction()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<core::RerankRequest> ToCore(const encoder::v1::RerankRequest& request) {
  core::RerankRequest rerank;
  rerank.query = request.query();
  rerank.texts.assign(request.texts().begin(), request.texts().end());
  if (request.has_top_n()) rerank.top_n = request.top_n();
  rerank.return_text = request.return_text();
  rerank.raw_scores = request.raw_scores();
  rerank.instruction = request.instruction();
  if (request.has_truncate()) rerank.truncate = request.truncate();
  RETURN_IF_ERROR(LongInputFromProto(request.long_input(), &rerank.long_input));
  ASSIGN_OR_RETURN(rerank.truncation_side, ToCore(request.truncation_direction()));
  return rerank;
}

void ToProto(core::RerankResult result, encoder::v1::RerankResponse* response) {
  for (core::RerankHit& hit : result.results) {
    encoder::v1::RerankResult* out = response->add_results();
    out->set_index(hit.index);
    out->set_score(hit.score);
    out->set_text(std::move(hit.text));
    out->set_windows(hit.windows);
  }
  response->set_tokens(result.tokens);
}

absl::StatusOr<core::ClassifyRequest> ToCore(const encoder::v1::ClassifyRequest& request) {
  core::ClassifyRequest classify;
  RETURN_IF_ERROR(CopyInputs(request, &classify));
  classify.raw_scores = request.raw_scores();
  return classify;
}

void ToProto(core::ClassifyResult result, encoder::v1::ClassifyResponse* response) {
  for (std::vector<core::LabelScore>& scores : result.predictions) {
    encoder::v1::Prediction* prediction = response->add_predictions();
    for (core::LabelScore& score : scores) {
      encoder::v1::LabelScore* out = prediction->add_scores();
      out->set_id(score.id);
      out->set_label(std::move(score.label));
      out->set_score(score.score);
    }
  }
  response->set_tokens(result.tokens);
}

absl::StatusOr<core::SparseRequest> ToCore(const encoder::v1::EncodeSparseRequest& request) {
  core::SparseRequest sparse;
  RETURN_IF_ERROR(CopyInputs(request, &sparse));
  sparse.max_active_dims = request.max_active_dims();
  sparse.return_tokens = request.return_tokens();
  return sparse;
}

void ToProto(core::SparseResult result, encoder::v1::EncodeSparseResponse* response) {
  for (std::vector<core::SparseValue>& values : result.outputs) {
    encoder::v1::SparseEmbedding* embedding = response->add_embeddings();
    for (core::SparseValue& value : values) ToProto(std::move(value), embedding->add_entries());
  }
  response->set_tokens(result.tokens);
}

absl::StatusOr<core::MultiRequest> ToCore(const encoder::v1::EncodeMultiRequest& request) {
  core::MultiRequest multi;
  RETURN_IF_ERROR(CopyInputs(request, &multi));
  for (int i = 0; i < request.outputs_size(); ++i) {
    bool* wanted = nullptr;
    switch (request.outputs(i)) {
      case encoder::v1::OUTPUT_KIND_DENSE:
        wanted = &multi.dense;
        break;
      case encoder::v1::OUTPUT_KIND_SPARSE:
        wanted = &multi.sparse;
        break;
      case encoder::v1::OUTPUT_KIND_COLBERT:
        wanted = &multi.colbert;
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("outputs[", i, "]: unknown output kind ", request.outputs(i),
                         " (expected 1 DENSE, 2 SPARSE or 3 COLBERT)"));
    }
    if (*wanted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "outputs[", i, "]: ", encoder::v1::OutputKind_Name(request.outputs(i)), " asked twice"));
    }
    *wanted = true;
  }
  ASSIGN_OR_RETURN(multi.input_type, ToCore(request.input_type()));
  multi.max_active_dims = request.max_active_dims();
  multi.return_tokens = request.return_tokens();
  return multi;
}

void ToProto(core::MultiResult result, encoder::v1::EncodeMultiResponse* response) {
  for (core::MultiOutput& output : result.outputs) {
    encoder::v1::MultiOutput* out = response->add_outputs();
    out->mutable_dense()->Add(output.dense.begin(), output.dense.end());
    for (core::SparseValue& value : output.sparse) ToProto(std::move(value), out->add_sparse());
    if (output.colbert_cols > 0) {
      encoder::v1::MultiVectors* colbert = out->mutable_colbert();
      colbert->mutable_values()->Add(output.colbert.begin(), output.colbert.end());
      colbert->set_rows(output.colbert_rows);
      colbert->set_cols(output.colbert_cols);
    }
    out->set_tokens(output.tokens);
  }
  response->set_tokens(result.tokens);
}

absl::StatusOr<core::ChunksRequest> ToCore(const encoder::v1::EncodeChunksRequest& request) {
  core::ChunksRequest chunks;
  chunks.text = request.text();
  chunks.chunks.reserve(static_cast<size_t>(request.chunks_size()));
  for (const encoder::v1::ChunkSpan& span : request.chunks()) {
    chunks.chunks.push_back({span.start(), span.end()});
  }
  chunks.chunk_tokens = request.chunk_tokens();
  if (request.has_window_overlap()) chunks.window_overlap = request.window_overlap();
  if (request.has_normalize()) chunks.normalize = request.normalize();
  chunks.dimensions = request.dimensions();
  return chunks;
}

void ToProto(core::ChunksResult result, encoder::v1::EncodeChunksResponse* response) {
  for (core::ChunkEmbedding& chunk : result.chunks) {
    encoder::v1::ChunkEmbedding* out = response->add_chunks();
    out->set_start(chunk.start);
    out->set_end(chunk.end);
    out->set_tokens(chunk.tokens);
    out->mutable_values()->Add(chunk.values.begin(), chunk.values.end());
  }
  response->set_windows(result.windows);
  response->set_tokens(result.tokens);
}

}  // namespace server
