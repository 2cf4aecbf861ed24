// A bounded cache of per-input results, shared by every transport and every
// model of the process (--cache-bytes), with request coalescing: an input
// whose identical twin is being computed waits for that one result instead
// of being computed again.
//
// Key (ResultCacheKey): a byte string written field by field: the model's
// served name, the input after tokenization, prompts and truncation (its
// token ids, token type ids and visible_keys) and every field of the
// OutputSpec that changes the answer (head, pooling, model_pooling,
// prompt_tokens, apply_dense, dimensions, normalize, the sparse options, the
// multi-output flags and skip ids). Each field has a fixed width or a length
// prefix, so two different inputs or specs never write the same bytes. A
// static_assert on the structs' sizes (result_cache.cc) stops the build when
// a field is added to one of them and not to the key.
//
// Eviction: LRU by bytes. An entry costs its key, its floats, its sparse
// entries and kEntryOverhead (the list and hash-map nodes and the output's
// struct); inserting one evicts the least recently used (a hit makes an
// entry the most recent) until the total fits max_bytes. An entry larger than
// max_bytes alone is not stored. LRU rather than SIEVE/CLOCK: a hit moves a
// list node under the cache's lock, which costs a few pointer writes next to
// a copy of the result, and LRU's order is the one operators expect and tests
// can state.
//
// Coalescing (Begin / Complete / Fail): Begin on a key that is neither stored
// nor in flight makes the caller its leader (kMiss): the caller must compute
// it and call Complete or Fail exactly once. Begin on a key in flight
// registers a waiter (kWait), called exactly once: with the result when the
// leader completes, or with the leader's error when it fails (the waiter then
// decides what to do: EncodeDispatcher submits the input itself). Waiters run
// on the thread of Complete or Fail, after the cache's lock is released.
//
// Thread-safe; one short lock per call.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/mutex.h"
#include "server/core/batching/backend.h"
#include "server/core/batching/batch_request.h"

namespace server::core {

// The key of one input of a request (see the top of this file).
std::string ResultCacheKey(absl::string_view model, const TokenizedInput& input,
                           const OutputSpec& spec);

// Whose entries they are: told of its entries' bytes and evictions (the
// model's metrics). Called under the cache's lock: keep them cheap.
class ResultCacheOwner {
 public:
  virtual ~ResultCacheOwner() = default;
  virtual void OnCacheBytes(int64_t delta) = 0;
  virtual void OnCacheEvicted() = 0;
  // One request's inputs looked up (server/core/cache/caching_sink.h):
  // answered from the cache, sent on, or waiting for an identical one in
  // flight. Not under the cache's lock.
  virtual void OnCacheLookups(int64_t /*hits*/, int64_t /*misses*/, int64_t /*coalesced*/) {}
};

class ResultCache {
 public:
  // What an entry costs besides its key and output's arrays.
  static constexpr int64_t kEntryOverhead = 192;
  // The bytes an entry of `key` and `output` is counted for.
  static int64_t EntryBytes(const std::string& key, const InputOutput& output);

  enum class Lookup { kHit, kWait, kMiss };
  using Waiter = std::function<void(absl::StatusOr<InputOutput>)>;

  // max_bytes 0 stores nothing (it still coalesces).
  explicit ResultCache(int64_t max_bytes) : max_bytes_(max_bytes) {}
  ResultCache(const ResultCache&) = delete;
  ResultCache& operator=(const ResultCache&) = delete;

  // kHit: `*hit` is the stored result. kWait: `waiter` is kept and will be
  // called once. kMiss: the caller leads `key` (Complete or Fail it);
  // `waiter` is dropped.
  Lookup Begin(const std::string& key, InputOutput* hit, Waiter waiter) ABSL_LOCKS_EXCLUDED(mu_);
  // The leader's result: stored (owned by `owner`, which must outlive the
  // cache's entries), and given to every waiter.
  void Complete(const std::string& key, const InputOutput& output, ResultCacheOwner* owner)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The leader's error: given to every waiter; nothing is stored.
  void Fail(const std::string& key, const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  int64_t max_bytes() const { return max_bytes_; }
  int64_t bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t entries() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t in_flight() const ABSL_LOCKS_EXCLUDED(mu_);
  // The stored keys, most recently used first (for tests).
  std::vector<std::string> KeysByRecency() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    std::string key;
    InputOutput output;
    int64_t bytes = 0;
    ResultCacheOwner* owner = nullptr;
  };
  using List = std::list<Entry>;

  std::vector<Waiter> TakeWaiters(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Store(const std::string& key, const InputOutput& output, ResultCacheOwner* owner)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t max_bytes_;
  mutable common::Mutex mu_;
  List lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  // Views of the keys in lru_'s nodes (which never move).
  std::unordered_map<std::string_view, List::iterator> index_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::vector<Waiter>> in_flight_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace server::core
