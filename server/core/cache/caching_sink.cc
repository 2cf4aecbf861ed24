// The result cache (result_cache.h) in front of the batcher: a request's inputs split
// three ways. Each input's key is looked up: a hit is answered from the
// cache; an input identical to one in flight (another request's, or an
// earlier input of this one) waits for that result (coalesced); the misses
// go to the batcher as one smaller request with the same spec, deadline and
// cancellation. Their results fill the cache and wake the waiters. The
// request's `done` gets the outputs in input order once all are there.
//
// Failure: when a request's misses fail (refused at Submit, dropped for its
// deadline or cancellation, an engine error, the drain), that request is
// answered with its error, and every input of other requests waiting on one
// of those keys is looked up again: answered from the cache if it got there
// meanwhile, or waiting on another leader, or submitted by its own request,
// with its own deadline and cancellation. A waiter is never given another
// request's error, and each round finishes at least the failed leader, so no
// input waits forever. A waiter's own deadline and cancellation are checked
// when the shared result arrives (DEADLINE_EXCEEDED, CANCELLED) and by the
// batcher for whatever it submits itself; while it waits, the leader's
// deadline and the batcher bound the wait.
//
// Once a request is answered its `is_cancelled` is never called again: its
// sub-requests still in the batcher see it as cancelled (and are dropped).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "server/core/cache/caching_sink.h"

namespace server::core {

namespace {

using OutputsDone = std::function<void(absl::StatusOr<std::vector<InputOutput>>)>;
using RoutePtr = std::shared_ptr<const CachingSink::Route>;

// One request's inputs, answered from wherever each one comes.
struct Join {
  // Set once, before the join is shared.
  std::vector<TokenizedInput> inputs;
  std::vector<std::string> keys;
  OutputSpec spec;
  Clock::time_point deadline;
  std::function<bool()> is_cancelled;  // may be empty
  OutputsDone done;

  common::Mutex mu;
  std::vector<InputOutput> outputs ABSL_GUARDED_BY(mu);
  size_t remaining ABSL_GUARDED_BY(mu) = 0;  // + 1 while the first routing runs
  bool finished ABSL_GUARDED_BY(mu) = false;

  bool CancelledLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return finished || (is_cancelled && is_cancelled());
  }

  // Answers with `result` unless already answered.
  void Finish(absl::StatusOr<std::vector<InputOutput>> result) ABSL_LOCKS_EXCLUDED(mu) {
    {
      common::MutexLock lock(&mu);
      if (finished) return;
      finished = true;
    }
    done(std::move(result));
  }

  // One fewer input (or the routing's guard: null) to wait for; answers
  // when none is left.
  void Arrived(size_t index, InputOutput* output) ABSL_LOCKS_EXCLUDED(mu) {
    std::vector<InputOutput> all;
    {
      common::MutexLock lock(&mu);
      if (finished) return;
      if (output != nullptr) outputs[index] = std::move(*output);
      if (--remaining > 0) return;
      finished = true;
      all = std::move(outputs);
    }
    done(std::move(all));
  }
};

void RouteInputs(const RoutePtr& route, const std::shared_ptr<Join>& join,
                 const std::vector<size_t>& indices);

void MissesFailed(const RoutePtr& route, const std::shared_ptr<Join>& join,
                  const std::vector<size_t>& misses, const absl::Status& status) {
  join->Finish(status);  // first: its own waiters (duplicate inputs) then find it answered
  for (const size_t i : misses) route->cache->Fail(join->keys[i], status);
}

void SubmitMisses(const RoutePtr& route, const std::shared_ptr<Join>& join,
                  std::vector<size_t> misses) {
  auto request = std::make_unique<BatchRequest>();
  request->spec = join->spec;
  request->inputs.reserve(misses.size());
  for (const size_t i : misses) request->inputs.push_back(join->inputs[i]);
  request->deadline = join->deadline;
  request->is_cancelled = [join] {
    common::MutexLock lock(&join->mu);
    return join->CancelledLocked();
  };
  auto kept = std::make_shared<const std::vector<size_t>>(std::move(misses));
  request->done = [route, join, kept](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      MissesFailed(route, join, *kept, outputs.status());
      return;
    }
    // Stored and shared first (copies), then moved into this request's answer.
    for (size_t k = 0; k < kept->size(); ++k) {
      route->cache->Complete(join->keys[(*kept)[k]], (*outputs)[k], route->owner);
    }
    for (size_t k = 0; k < kept->size(); ++k) join->Arrived((*kept)[k], &(*outputs)[k]);
  };
  route->next->Submit(std::move(request));  // a refusal comes back through `done`
}

// An input's identical twin in flight has its result, or failed.
void OnShared(const RoutePtr& route, const std::shared_ptr<Join>& join, size_t index,
              absl::StatusOr<InputOutput> result) {
  absl::Status refused;
  {
    common::MutexLock lock(&join->mu);
    if (join->finished) return;
    if (join->is_cancelled && join->is_cancelled()) {
      refused = absl::CancelledError("request cancelled while waiting for an identical input");
    } else if (join->deadline != Clock::time_point::max() && route->clock->Now() > join->deadline) {
      refused = absl::DeadlineExceededError("deadline passed while waiting for an identical input");
    }
  }
  if (!refused.ok()) {
    join->Finish(refused);
    return;
  }
  if (result.ok()) {
    join->Arrived(index, &*result);
    return;
  }
  // The leader failed: look this input up again (see the top of this file).
  RouteInputs(route, join, {index});
}

void RouteInputs(const RoutePtr& route, const std::shared_ptr<Join>& join,
                 const std::vector<size_t>& indices) {
  int64_t hits = 0, coalesced = 0;
  std::vector<size_t> misses;
  for (const size_t i : indices) {
    InputOutput hit;
    const ResultCache::Lookup lookup = route->cache->Begin(
        join->keys[i], &hit, [route, join, i](absl::StatusOr<InputOutput> result) {
          OnShared(route, join, i, std::move(result));
        });
    switch (lookup) {
      case ResultCache::Lookup::kHit:
        ++hits;
        join->Arrived(i, &hit);
        break;
      case ResultCache::Lookup::kWait:
        ++coalesced;
        break;
      case ResultCache::Lookup::kMiss:
        misses.push_back(i);
        break;
    }
  }
  route->owner->OnCacheLookups(hits, static_cast<int64_t>(misses.size()), coalesced);
  if (!misses.empty()) SubmitMisses(route, join, std::move(misses));
}

}  // namespace

CachingSink::CachingSink(ResultCache* cache, std::string model, Clock* clock,
                         ResultCacheOwner* owner, BatchSink* next) {
  auto route = std::make_shared<Route>();
  route->cache = cache;
  route->model = std::move(model);
  route->clock = clock;
  route->owner = owner;
  route->next = next;
  route_ = std::move(route);
}

void CachingSink::Submit(std::unique_ptr<BatchRequest> request) {
  const RoutePtr& route = route_;
  const size_t n = request->inputs.size();
  if (n == 0) {  // the batcher's answer to an empty request
    route->next->Submit(std::move(request));
    return;
  }
  auto join = std::make_shared<Join>();
  join->keys.reserve(n);
  for (const TokenizedInput& input : request->inputs) {
    join->keys.push_back(ResultCacheKey(route->model, input, request->spec));
  }
  join->inputs = std::move(request->inputs);
  join->spec = request->spec;
  join->deadline = request->deadline;
  join->is_cancelled = std::move(request->is_cancelled);
  join->done = std::move(request->done);
  {
    common::MutexLock lock(&join->mu);
    join->outputs.resize(n);
    join->remaining = n + 1;
  }
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  RouteInputs(route, join, all);
  join->Arrived(0, nullptr);  // the guard
}

}  // namespace server::core
