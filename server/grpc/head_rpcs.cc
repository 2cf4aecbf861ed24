// Rerank, Classify and EncodeSparse: proto <-> core, answered from the
// batcher's thread like Encode.
#include <utility>

#include "server/grpc/call_deadline.h"
#include "server/grpc/encode_service.h"
#include "server/grpc/metered_reactor.h"
#include "server/grpc/proto_conversions.h"
#include "server/grpc/status_mapping.h"

namespace server {

grpc::ServerUnaryReactor* EncodeService::Rerank(grpc::CallbackServerContext* context,
                                                const encoder::v1::RerankRequest* request,
                                                encoder::v1::RerankResponse* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kRerank, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  core::RerankRequest rerank;
  rerank.query = request->query();
  rerank.texts.assign(request->texts().begin(), request->texts().end());
  if (request->has_top_n()) rerank.top_n = request->top_n();
  rerank.return_text = request->return_text();
  rerank.raw_scores = request->raw_scores();
  rerank.instruction = request->instruction();
  if (request->has_truncate()) rerank.truncate = request->truncate();
  if (absl::Status status = LongInputFromProto(request->long_input(), &rerank.long_input);
      !status.ok()) {
    reactor->Answer(ToGrpcStatus(status));
    return reactor;
  }
  absl::StatusOr<engine::TruncationSide> side = ToCore(request->truncation_direction());
  if (!side.ok()) {
    reactor->Answer(ToGrpcStatus(side.status()));
    return reactor;
  }
  rerank.truncation_side = *side;
  absl::StatusOr<const ModelRoute*> route = Route(request->model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  (*route)->dispatcher->DispatchRerank(
      rerank, DeadlineOnClock(context->deadline(), clock_),
      [context] { return context->IsCancelled(); },
      [reactor, response](absl::StatusOr<core::RerankResult> result) {
        if (result.ok()) {
          for (core::RerankHit& hit : result->results) {
            encoder::v1::RerankResult* out = response->add_results();
            out->set_index(hit.index);
            out->set_score(hit.score);
            out->set_text(std::move(hit.text));
            out->set_windows(hit.windows);
          }
          response->set_tokens(result->tokens);
        }
        reactor->Answer(ToGrpcStatus(result.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* EncodeService::Classify(grpc::CallbackServerContext* context,
                                                  const encoder::v1::ClassifyRequest* request,
                                                  encoder::v1::ClassifyResponse* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kClassify, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  core::ClassifyRequest classify;
  for (const encoder::v1::Input& input : request->inputs())
    classify.inputs.push_back(ToCore(input));
  classify.raw_scores = request->raw_scores();
  if (request->has_truncate()) classify.truncate = request->truncate();
  absl::StatusOr<engine::TruncationSide> side = ToCore(request->truncation_direction());
  if (!side.ok()) {
    reactor->Answer(ToGrpcStatus(side.status()));
    return reactor;
  }
  classify.truncation_side = *side;
  absl::StatusOr<const ModelRoute*> route = Route(request->model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  (*route)->dispatcher->DispatchClassify(
      classify, DeadlineOnClock(context->deadline(), clock_),
      [context] { return context->IsCancelled(); },
      [reactor, response](absl::StatusOr<core::ClassifyResult> result) {
        if (result.ok()) {
          for (std::vector<core::LabelScore>& scores : result->predictions) {
            encoder::v1::Prediction* prediction = response->add_predictions();
            for (core::LabelScore& score : scores) {
              encoder::v1::LabelScore* out = prediction->add_scores();
              out->set_id(score.id);
              out->set_label(std::move(score.label));
              out->set_score(score.score);
            }
          }
          response->set_tokens(result->tokens);
        }
        reactor->Answer(ToGrpcStatus(result.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* EncodeService::EncodeSparse(
    grpc::CallbackServerContext* context, const encoder::v1::EncodeSparseRequest* request,
    encoder::v1::EncodeSparseResponse* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kEncodeSparse, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  core::SparseRequest sparse;
  for (const encoder::v1::Input& input : request->inputs()) sparse.inputs.push_back(ToCore(input));
  sparse.max_active_dims = request->max_active_dims();
  sparse.return_tokens = request->return_tokens();
  if (request->has_truncate()) sparse.truncate = request->truncate();
  absl::StatusOr<engine::TruncationSide> side = ToCore(request->truncation_direction());
  if (!side.ok()) {
    reactor->Answer(ToGrpcStatus(side.status()));
    return reactor;
  }
  sparse.truncation_side = *side;
  absl::StatusOr<const ModelRoute*> route = Route(request->model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  (*route)->dispatcher->DispatchSparse(
      sparse, DeadlineOnClock(context->deadline(), clock_),
      [context] { return context->IsCancelled(); },
      [reactor, response](absl::StatusOr<core::SparseResult> result) {
        if (result.ok()) {
          for (std::vector<core::SparseValue>& values : result->outputs) {
            encoder::v1::SparseEmbedding* embedding = response->add_embeddings();
            for (core::SparseValue& value : values) {
              encoder::v1::SparseEntry* entry = embedding->add_entries();
              entry->set_id(value.id);
              entry->set_weight(value.weight);
              entry->set_token(std::move(value.token));
            }
          }
          response->set_tokens(result->tokens);
        }
        reactor->Answer(ToGrpcStatus(result.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* EncodeService::EncodeMulti(grpc::CallbackServerContext* context,
                                                     const encoder::v1::EncodeMultiRequest* request,
                                                     encoder::v1::EncodeMultiResponse* response) {
  auto* reactor = new MeteredUnaryReactor(context, Rpc::kEncodeMulti, metrics_);
  if (absl::Status admitted = Admit(context); !admitted.ok()) {
    reactor->Answer(ToGrpcStatus(admitted));
    return reactor;
  }
  absl::StatusOr<core::MultiRequest> multi = ToCore(*request);
  if (!multi.ok()) {
    reactor->Answer(ToGrpcStatus(multi.status()));
    return reactor;
  }
  absl::StatusOr<const ModelRoute*> route = Route(request->model(), reactor);
  if (!route.ok()) {
    reactor->Answer(ToGrpcStatus(route.status()));
    return reactor;
  }
  (*route)->dispatcher->DispatchMulti(
      *multi, DeadlineOnClock(context->deadline(), clock_),
      [context] { return context->IsCancelled(); },
      [reactor, response](absl::StatusOr<core::MultiResult> result) {
        if (result.ok()) ToProto(*std::move(result), response);
        reactor->Answer(ToGrpcStatus(result.status()));
      });
  return reactor;
}

}  // namespace server
