// The result cache as a decorator of the sink a request's parts go to
// (server/core/batching/batch_sink.h): each input is answered from the cache,
// joined to an identical input in flight, or sent on to the next sink with
// the request's other misses. caching_sink.cc says how failures and waiters
// are handled. The plan runner does not know whether it is there.
#pragma once

#include <memory>
#include <string>

#include "server/core/batching/batch_sink.h"
#include "server/core/batching/clock.h"
#include "server/core/cache/result_cache.h"

namespace server::core {

class CachingSink : public BatchSink {
 public:
  // Entries are keyed under `model` (its served name) in `cache` (shared by
  // every model) and counted to `owner`; misses go to `next`. `clock` is the
  // batcher's (a waiter's deadline). All must outlive every request in flight.
  CachingSink(ResultCache* cache, std::string model, Clock* clock, ResultCacheOwner* owner,
              BatchSink* next);

  // Calls the request's `done` exactly once, with its outputs in input order.
  void Submit(std::unique_ptr<BatchRequest> request) override;

  // What a request in flight needs, shared by all of them (so that none
  // depends on the sink object itself).
  struct Route {
    ResultCache* cache = nullptr;
    std::string model;
    Clock* clock = nullptr;
    ResultCacheOwner* owner = nullptr;
    BatchSink* next = nullptr;
  };

 private:
  std::shared_ptr<const Route> route_;
};

}  // namespace server::core
