// The one helper of every unary RPC. A call is a reactor that owns its
// request and response messages (UnaryCall); UnaryCalls runs the steps every
// call takes: metered from its start (metered_reactor.h), admission (API key,
// draining), the request parsed from raw bytes with the UTF-8 rule
// (wire_format.h), its model resolved, ToCore(request), the core call with
// the call's deadline and cancellation, ToProto(result, &response), the
// response serialized, Finish. Every error on the way is answered with its
// own code (status_mapping.h): a conversion's INVALID_ARGUMENT as such.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/batching/clock.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/metrics/metrics.h"
#include "server/core/model_set.h"
#include "server/grpc/call_deadline.h"
#include "server/grpc/encode_call.h"
#include "server/grpc/metered_reactor.h"
#include "server/grpc/proto_conversions.h"
#include "server/grpc/status_mapping.h"
#include "server/grpc/wire_format.h"

namespace server {

// Where a gRPC call carries its API key, for the refusal (core::Unauthenticated).
inline constexpr char kHowToSendKey[] = "the metadata authorization: Bearer KEY";

// The call's `authorization` metadata (empty when it has none).
absl::string_view Authorization(grpc::CallbackServerContext* context);

template <typename Request, typename Response>
class UnaryCall final : public MeteredUnaryReactor {
 public:
  UnaryCall(grpc::CallbackServerContext* context, core::Rpc rpc, core::ServerMetrics* metrics,
            grpc::ByteBuffer* response_bytes)
      : MeteredUnaryReactor(context, rpc, metrics), response_bytes_(response_bytes) {}

  // Finishes the call (once, from any thread): with `response` when `status`
  // is OK, else with `status`.
  void Reply(absl::Status status) {
    if (status.ok()) status = SerializeResponse(response, response_bytes_);
    Answer(ToGrpcStatus(status));
  }

  Request request;
  Response response;

 private:
  grpc::ByteBuffer* const response_bytes_;
};

namespace unary_internal {

// ToProto(result, response), OK when that cannot fail.
template <typename Result, typename Response>
absl::Status FillResponse(Result result, Response* response) {
  if constexpr (std::is_void_v<decltype(ToProto(std::move(result), response))>) {
    ToProto(std::move(result), response);
    return absl::OkStatus();
  } else {
    return ToProto(std::move(result), response);
  }
}

// A dispatcher call answered later, from the batcher's thread (DispatchRerank).
template <typename Request, typename Core, typename Result, typename Reply>
void CallCore(void (core::EncodeDispatcher::*call)(const Core&, core::Clock::time_point,
                                                   std::function<bool()>,
                                                   std::function<void(absl::StatusOr<Result>)>),
              const core::ModelRoute& model, const Request& request,
              core::Clock::time_point deadline, std::function<bool()> is_cancelled, Reply reply) {
  absl::StatusOr<Core> core = ToCore(request);
  if (!core.ok()) return reply(absl::StatusOr<Result>(core.status()));
  (model.dispatcher->*call)(*core, deadline, std::move(is_cancelled), std::move(reply));
}

// A dispatcher call answered at once (Tokenize, Decode).
template <typename Request, typename Core, typename Result, typename Reply>
void CallCore(absl::StatusOr<Result> (core::EncodeDispatcher::*call)(const Core&),
              const core::ModelRoute& model, const Request& request,
              core::Clock::time_point /*deadline*/, std::function<bool()> /*is_cancelled*/,
              Reply reply) {
  absl::StatusOr<Core> core = ToCore(request);
  if (!core.ok()) return reply(absl::StatusOr<Result>(core.status()));
  reply((model.dispatcher->*call)(*core));
}

// A function of the adapter that converts the request itself (DispatchEncode).
template <typename Request, typename Function, typename Reply>
std::enable_if_t<!std::is_member_function_pointer_v<Function>> CallCore(
    Function call, const core::ModelRoute& model, const Request& request,
    core::Clock::time_point deadline, std::function<bool()> is_cancelled, Reply reply) {
  call(model, request, deadline, std::move(is_cancelled), std::move(reply));
}

}  // namespace unary_internal

class UnaryCalls {
 public:
  // Both must outlive every call. A call refused before its model is known
  // is counted under the first model.
  UnaryCalls(const core::ServedModels* models, core::Clock* clock)
      : models_(models), clock_(clock) {}

  // A call to the model its request names. `core_call`: a member of
  // EncodeDispatcher that takes ToCore(request)'s type and answers later
  // (&EncodeDispatcher::DispatchRerank) or at once (&EncodeDispatcher::Tokenize),
  // or a function (model, request, deadline, is_cancelled, done) that converts
  // the request itself (DispatchEncode). Its result becomes the response
  // through ToProto(result, &response).
  template <typename Request, typename Response, typename CoreCall>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* context, core::Rpc rpc,
                                  const grpc::ByteBuffer* request_bytes,
                                  grpc::ByteBuffer* response_bytes, CoreCall core_call) {
    return Start<Request, Response>(
        context, rpc, request_bytes, response_bytes,
        [this, context, core_call](UnaryCall<Request, Response>* call) {
          const core::ModelRoute* model = Route(call);
          if (model == nullptr) return;
          unary_internal::CallCore(
              core_call, *model, call->request, DeadlineOnClock(context->deadline(), clock_),
              [context] { return context->IsCancelled(); },
              [call](auto result) {
                call->Reply(result.ok()
                                ? unary_internal::FillResponse(*std::move(result), &call->response)
                                : result.status());
              });
        });
  }

  // The first steps alone: the call metered, admitted and its request
  // parsed, then `serve(call)`, which must Reply (at once or later); a call
  // refused on the way is answered here.
  template <typename Request, typename Response, typename ServeCall>
  grpc::ServerUnaryReactor* Start(grpc::CallbackServerContext* context, core::Rpc rpc,
                                  const grpc::ByteBuffer* request_bytes,
                                  grpc::ByteBuffer* response_bytes, ServeCall serve) {
    auto* call =
        new UnaryCall<Request, Response>(context, rpc, models_->first().metrics, response_bytes);
    absl::Status status = models_->Admit(Authorization(context), kHowToSendKey);
    if (status.ok()) status = ParseRequest(*request_bytes, &call->request);
    if (status.ok()) {
      serve(call);
    } else {
      call->Reply(status);
    }
    return call;
  }

  // The model the call's request names, its metrics now counting the call;
  // null when there is none (the call is then answered: NOT_FOUND or
  // INVALID_ARGUMENT, ServedModels::Resolve's).
  template <typename Request, typename Response>
  const core::ModelRoute* Route(UnaryCall<Request, Response>* call) const {
    absl::StatusOr<const core::ModelRoute*> route = models_->Resolve(call->request.model());
    if (!route.ok()) {
      call->Reply(route.status());
      return nullptr;
    }
    call->MeterAs((*route)->metrics);
    return *route;
  }

 private:
  const core::ServedModels* const models_;
  core::Clock* const clock_;
};

}  // namespace server
