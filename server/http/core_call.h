// The sequence every route over a core call repeats: parse the body, resolve
// the model it names, check the request against that model, take the
// deadline, dispatch on the model's EncodeDispatcher (the queue and batches
// gRPC uses), and answer: an error in the route's shape, a result rendered on
// the handler threads. A route states only what differs, as a CoreCall:
//
//   CoreCall<core::SparseRequest, core::SparseResult> sparse;
//   sparse.parsed = ParseTeiEmbedSparse(call.request().body, kAnySize, &sparse.model);
//   sparse.dispatch = CallOf(&EncodeDispatcher::DispatchSparse);
//   sparse.render = [](const core::SparseResult& result, const auto&, const auto&) {
//     return RenderTeiEmbedSparse(result);
//   };
//   ServeCoreCall(std::move(call), std::move(sparse));
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "server/core/dispatch/encode_dispatcher.h"
#include "server/core/model_set.h"
#include "server/http/route_call.h"

namespace server::http {

// `Parsed`: what the route's parser gives (the core's request, or a struct
// holding it as `request` beside what rendering needs); `Result`: what the
// core call answers.
template <typename Parsed, typename Result>
struct CoreCall {
  using Done = std::function<void(absl::StatusOr<Result>)>;

  // The body parsed, or why not.
  absl::StatusOr<Parsed> parsed = absl::UnknownError("not parsed");
  // The model the body names ("": the query's ?model=, else the one served);
  // unset, a parsed struct's own `model` field.
  std::string model;
  // Optional: whether the model can answer the request, and the request
  // fitted to it (a prompt of the model's), before the deadline is taken.
  std::function<absl::Status(const core::ModelDescription& model, Parsed& parsed)> prepare;
  // The core call; CallOf makes it from an EncodeDispatcher member.
  std::function<void(const core::ModelRoute& model, const Parsed& parsed,
                     core::Clock::time_point deadline, std::function<bool()> is_cancelled,
                     Done done)>
      dispatch;
  // The answer's body (on a handler thread).
  std::function<std::string(const Result& result, const Parsed& parsed,
                            const core::ModelDescription& model)>
      render;
  // Set on routes of inputs: whether they came as a list (how ForEmbeddingsRoute
  // names an input's error: "input[3]" on OpenAI's, and how to cut it).
  std::optional<bool> inputs_listed;
  // Optional: the X-Windows header of a result (window mode).
  std::function<std::string(const Result&)> windows;
};

// The dispatch of a CoreCall through `method` of the model's dispatcher, on
// the parsed body itself or, when it is a struct around it, its `request`.
template <typename Request, typename Done>
auto CallOf(void (core::EncodeDispatcher::*method)(const Request&, core::Clock::time_point,
                                                   std::function<bool()>, Done)) {
  return [method](const core::ModelRoute& model, const auto& parsed,
                  core::Clock::time_point deadline, std::function<bool()> is_cancelled, Done done) {
    if constexpr (std::is_same_v<std::decay_t<decltype(parsed)>, Request>) {
      (model.dispatcher->*method)(parsed, deadline, std::move(is_cancelled), std::move(done));
    } else {
      (model.dispatcher->*method)(parsed.request, deadline, std::move(is_cancelled),
                                  std::move(done));
    }
  };
}

namespace core_call_internal {

template <typename T, typename = void>
struct HasModelField : std::false_type {};
template <typename T>
struct HasModelField<T, std::void_t<decltype(std::declval<T>().model)>> : std::true_type {};

// Every step up to the dispatch; an error is the call's answer.
template <typename Parsed, typename Result>
absl::Status Start(RouteCall& call, CoreCall<Parsed, Result>& core) {
  ASSIGN_OR_RETURN(Parsed parsed, std::move(core.parsed));
  if constexpr (HasModelField<Parsed>::value) {
    if (core.model.empty()) core.model = parsed.model;
  }
  ASSIGN_OR_RETURN(const core::ModelRoute* model, call.Resolve(std::move(core.model)));
  if (core.prepare) RETURN_IF_ERROR(core.prepare(model->description, parsed));
  ASSIGN_OR_RETURN(const core::Clock::time_point deadline, call.Deadline());
  // Kept until rendered; the served models outlive every call.
  auto kept = std::make_shared<const Parsed>(std::move(parsed));
  const core::ModelDescription* description = &model->description;
  std::function<bool()> is_cancelled = call.TakeCancelled();
  core.dispatch(*model, *kept, deadline, std::move(is_cancelled),
                call.AnswerLater<Result>(
                    [kept, description, render = std::move(core.render)](const Result& result) {
                      return render(result, *kept, *description);
                    },
                    core.inputs_listed, std::move(core.windows)));
  return absl::OkStatus();
}

}  // namespace core_call_internal

// Serves `call` by `core`: answers it exactly once.
template <typename Parsed, typename Result>
void ServeCoreCall(RouteCall call, CoreCall<Parsed, Result> core) {
  if (absl::Status status = core_call_internal::Start(call, core); !status.ok()) {
    call.Fail(status);
  }
}

}  // namespace server::http
