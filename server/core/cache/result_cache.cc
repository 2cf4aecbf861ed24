#include "server/core/cache/result_cache.h"

#include <cstring>
#include <type_traits>
#include <utility>

namespace server::core {
namespace {

// Every field of these structs is written into the key below. A new field
// changes a size: add it to ResultCacheKey (and to result_cache_test's list
// of fields), then update the size here.
static_assert(sizeof(OutputSpec) == 56, "OutputSpec changed: add the new field to ResultCacheKey");
static_assert(sizeof(MultiOutputs) == 16,
              "MultiOutputs changed: add the new field to ResultCacheKey");
static_assert(sizeof(engine::SparseOptions) == 12,
              "SparseOptions changed: add the new field to ResultCacheKey");
static_assert(sizeof(TokenizedInput) == 56,
              "TokenizedInput changed: add the new field to ResultCacheKey");

template <typename T>
void Put(std::string* key, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  key->append(bytes, sizeof(T));
}

void PutIds(std::string* key, const std::vector<int32_t>& ids) {
  Put<uint64_t>(key, ids.size());
  key->append(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(int32_t));
}

}  // namespace

std::string ResultCacheKey(absl::string_view model, const TokenizedInput& input,
                           const OutputSpec& spec) {
  std::string key;
  key.reserve(64 + model.size() +
              (input.ids.size() + input.token_type_ids.size()) * sizeof(int32_t));
  Put<uint64_t>(&key, model.size());
  key.append(model.data(), model.size());
  // The input.
  PutIds(&key, input.ids);
  PutIds(&key, input.token_type_ids);
  Put<int32_t>(&key, input.visible_keys);
  // The spec.
  Put<int32_t>(&key, static_cast<int32_t>(spec.head));
  Put<int32_t>(&key, static_cast<int32_t>(spec.pooling));
  Put<uint8_t>(&key, spec.model_pooling);
  Put<int32_t>(&key, spec.prompt_tokens);
  Put<uint8_t>(&key, spec.apply_dense);
  Put<int32_t>(&key, spec.dimensions);
  Put<uint8_t>(&key, spec.normalize);
  Put<int32_t>(&key, static_cast<int32_t>(spec.sparse.activation));
  Put<int32_t>(&key, static_cast<int32_t>(spec.sparse.pooling));
  Put<int32_t>(&key, spec.sparse.max_active_dims);
  Put<uint8_t>(&key, spec.multi.dense);
  Put<uint8_t>(&key, spec.multi.sparse);
  Put<uint8_t>(&key, spec.multi.multi_vector);
  // The skip list by content (null and empty skip nothing alike).
  static const std::vector<int32_t> kNoSkip;
  PutIds(&key, spec.multi.skip_ids != nullptr ? *spec.multi.skip_ids : kNoSkip);
  return key;
}

int64_t ResultCache::EntryBytes(const std::string& key, const InputOutput& output) {
  return kEntryOverhead + static_cast<int64_t>(key.size()) +
         static_cast<int64_t>(output.values.size() * sizeof(float)) +
         static_cast<int64_t>(output.sparse.size() * sizeof(engine::SparseEntry)) +
         static_cast<int64_t>(output.vectors.size() * sizeof(float));
}

ResultCache::Lookup ResultCache::Begin(const std::string& key, InputOutput* hit, Waiter waiter) {
  common::MutexLock lock(&mu_);
  if (auto found = index_.find(key); found != index_.end()) {
    lru_.splice(lru_.begin(), lru_, found->second);  // the most recent now
    *hit = found->second->output;
    return Lookup::kHit;
  }
  auto [flight, leader] = in_flight_.try_emplace(key);
  if (leader) return Lookup::kMiss;
  flight->second.push_back(std::move(waiter));
  return Lookup::kWait;
}

std::vector<ResultCache::Waiter> ResultCache::TakeWaiters(const std::string& key) {
  std::vector<Waiter> waiters;
  if (auto flight = in_flight_.find(key); flight != in_flight_.end()) {
    waiters = std::move(flight->second);
    in_flight_.erase(flight);
  }
  return waiters;
}

void ResultCache::Store(const std::string& key, const InputOutput& output,
                        ResultCacheOwner* owner) {
  const int64_t bytes = EntryBytes(key, output);
  if (bytes > max_bytes_ || index_.count(key) != 0) return;
  while (bytes_ + bytes > max_bytes_) {
    Entry& oldest = lru_.back();
    bytes_ -= oldest.bytes;
    if (oldest.owner != nullptr) {
      oldest.owner->OnCacheBytes(-oldest.bytes);
      oldest.owner->OnCacheEvicted();
    }
    index_.erase(oldest.key);
    lru_.pop_back();
  }
  lru_.push_front(Entry{key, output, bytes, owner});
  index_.emplace(lru_.front().key, lru_.begin());
  bytes_ += bytes;
  if (owner != nullptr) owner->OnCacheBytes(bytes);
}

void ResultCache::Complete(const std::string& key, const InputOutput& output,
                           ResultCacheOwner* owner) {
  std::vector<Waiter> waiters;
  {
    common::MutexLock lock(&mu_);
    waiters = TakeWaiters(key);
    Store(key, output, owner);
  }
  for (Waiter& waiter : waiters) waiter(output);
}

void ResultCache::Fail(const std::string& key, const absl::Status& status) {
  std::vector<Waiter> waiters;
  {
    common::MutexLock lock(&mu_);
    waiters = TakeWaiters(key);
  }
  for (Waiter& waiter : waiters) waiter(status);
}

int64_t ResultCache::bytes() const {
  common::MutexLock lock(&mu_);
  return bytes_;
}

int64_t ResultCache::entries() const {
  common::MutexLock lock(&mu_);
  return static_cast<int64_t>(lru_.size());
}

int64_t ResultCache::in_flight() const {
  common::MutexLock lock(&mu_);
  return static_cast<int64_t>(in_flight_.size());
}

std::vector<std::string> ResultCache::KeysByRecency() const {
  common::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  for (const Entry& entry : lru_) keys.push_back(entry.key);
  return keys;
}

}  // namespace server::core
