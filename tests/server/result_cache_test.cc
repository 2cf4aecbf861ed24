// The result cache (server/core/cache/result_cache.h): its key (every field that
// changes an answer), its byte bound and LRU order, and, through the
// service core on FakeBackend (server/core/cache/caching_sink.cc), hits, coalescing of
// identical inputs in flight and what a waiter gets when the input it waits
// for fails. Part of server_core_test, so it also runs under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include "server/core/cache/result_cache.h"
#include "support/core_service.h"

// A namespace of its own: unity builds compile this file with its target's others.
namespace server {
namespace result_cache_test {
namespace {

using testing_support::CoreService;
using Result = absl::StatusOr<core::EncodeResult>;

// ---- The cache alone --------------------------------------------------------

core::InputOutput Output(float first, int floats = 2) {
  core::InputOutput output;
  output.rows = 1;
  output.cols = floats;
  output.tokens = 3;
  output.values.assign(static_cast<size_t>(floats), first);
  output.values[0] = first;
  return output;
}

struct CountingOwner : core::ResultCacheOwner {
  void OnCacheBytes(int64_t delta) override { bytes += delta; }
  void OnCacheEvicted() override { ++evicted; }
  int64_t bytes = 0;
  int evicted = 0;
};

TEST(ResultCacheTest, AHitReturnsTheStoredAnswer) {
  core::ResultCache cache(1 << 20);
  CountingOwner owner;
  const std::string key =
      core::ResultCacheKey("m", core::TokenizedInput{{2, 11, 3}, {}, 0}, core::OutputSpec{});
  core::InputOutput hit;
  EXPECT_EQ(cache.Begin(key, &hit, {}), core::ResultCache::Lookup::kMiss);
  core::InputOutput stored = Output(11);
  stored.sparse = {{5, 0.5f}, {7, 0.25f}};
  stored.vector_rows = 1;
  stored.vector_cols = 2;
  stored.vectors = {1, 2};
  cache.Complete(key, stored, &owner);
  EXPECT_EQ(cache.in_flight(), 0);
  ASSERT_EQ(cache.Begin(key, &hit, {}), core::ResultCache::Lookup::kHit);
  EXPECT_EQ(hit.values, stored.values);
  EXPECT_EQ(hit.rows, 1);
  EXPECT_EQ(hit.cols, 2);
  EXPECT_EQ(hit.tokens, 3);
  ASSERT_EQ(hit.sparse.size(), 2u);
  EXPECT_EQ(hit.sparse[1].id, 7);
  EXPECT_EQ(hit.vectors, stored.vectors);
  EXPECT_EQ(hit.vector_rows, 1);
  EXPECT_EQ(owner.bytes, cache.bytes());
  EXPECT_EQ(cache.bytes(), core::ResultCache::EntryBytes(key, stored));
}

// Each of these changes one field of the model, input or spec. result_cache.cc
// stops the build when a struct of the key gains a field; add it here too.
struct Change {
  const char* field;
  std::function<void(std::string*, core::TokenizedInput*, core::OutputSpec*)> apply;
};

std::vector<Change> EveryField() {
  static const std::vector<int32_t> kSkip = {5};
  return {
      {"model", [](std::string* m, core::TokenizedInput*, core::OutputSpec*) { *m = "other"; }},
      {"ids", [](std::string*, core::TokenizedInput* i, core::OutputSpec*) { i->ids[1] = 12; }},
      {"ids length",
       [](std::string*, core::TokenizedInput* i, core::OutputSpec*) { i->ids.push_back(3); }},
      {"token_type_ids",
       [](std::string*, core::TokenizedInput* i, core::OutputSpec*) {
         i->token_type_ids = {0, 1, 1};
       }},
      {"visible_keys",
       [](std::string*, core::TokenizedInput* i, core::OutputSpec*) { i->visible_keys = 2; }},
      {"pooling", [](std::string*, core::TokenizedInput*,
                     core::OutputSpec* s) { s->pooling = engine::Pooling::kMean; }},
      {"model_pooling",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) { s->model_pooling = true; }},
      {"prompt_tokens",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) { s->prompt_tokens = 1; }},
      {"apply_dense",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) { s->apply_dense = true; }},
      {"dimensions",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) { s->dimensions = 64; }},
      {"normalize",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) { s->normalize = true; }},
      {"head", [](std::string*, core::TokenizedInput*,
                  core::OutputSpec* s) { s->head = core::OutputHead::kClassify; }},
      {"sparse.activation",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) {
         s->sparse.activation = engine::SparseActivation::kRelu;
       }},
      {"sparse.pooling",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) {
         s->sparse.pooling = engine::SparsePooling::kSum;
       }},
      {"sparse.max_active_dims", [](std::string*, core::TokenizedInput*,
                                    core::OutputSpec* s) { s->sparse.max_active_dims = 10; }},
      {"multi.dense",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) { s->multi.dense = true; }},
      {"multi.sparse",
       [](std::string*, core::TokenizedInput*, core::OutputSpec* s) { s->multi.sparse = true; }},
      {"multi.multi_vector", [](std::string*, core::TokenizedInput*,
                                core::OutputSpec* s) { s->multi.multi_vector = true; }},
      {"multi.skip_ids", [](std::string*, core::TokenizedInput*,
                            core::OutputSpec* s) { s->multi.skip_ids = &kSkip; }},
  };
}

TEST(ResultCacheTest, SpecsOrInputsDifferingInAnyOneFieldNeverShareAnEntry) {
  const core::TokenizedInput base_input{{2, 11, 3}, {}, 0};
  const core::OutputSpec base_spec;
  const std::string base_key = core::ResultCacheKey("test", base_input, base_spec);
  core::ResultCache cache(1 << 20);
  core::InputOutput hit;
  ASSERT_EQ(cache.Begin(base_key, &hit, {}), core::ResultCache::Lookup::kMiss);
  cache.Complete(base_key, Output(1), nullptr);

  std::set<std::string> keys = {base_key};
  const std::vector<Change> changes = EveryField();
  EXPECT_EQ(changes.size(), 19u);  // 1 model + 4 input + 15 spec changes (ids twice)
  for (const Change& change : changes) {
    std::string model = "test";
    core::TokenizedInput input = base_input;
    core::OutputSpec spec = base_spec;
    change.apply(&model, &input, &spec);
    const std::string key = core::ResultCacheKey(model, input, spec);
    EXPECT_TRUE(keys.insert(key).second) << change.field << " did not change the key";
    EXPECT_EQ(cache.Begin(key, &hit, {}), core::ResultCache::Lookup::kMiss) << change.field;
    cache.Complete(key, Output(2), nullptr);
  }
  // The stored answer of the base is still its own.
  ASSERT_EQ(cache.Begin(base_key, &hit, {}), core::ResultCache::Lookup::kHit);
  EXPECT_EQ(hit.values[0], 1);
}

TEST(ResultCacheTest, TokenTypeIdsMatterAndLengthPrefixesKeepFieldsApart) {
  const core::OutputSpec spec;
  EXPECT_NE(core::ResultCacheKey("m", {{2, 11, 3}, {0, 0, 0}, 0}, spec),
            core::ResultCacheKey("m", {{2, 11, 3}, {0, 1, 1}, 0}, spec));
  // The same int32s split differently between ids and token types.
  EXPECT_NE(core::ResultCacheKey("m", {{2, 11}, {3}, 0}, spec),
            core::ResultCacheKey("m", {{2}, {11, 3}, 0}, spec));
  // A model name that looks like the start of an input.
  EXPECT_NE(core::ResultCacheKey(std::string("m\0", 2), {{2}, {}, 0}, spec),
            core::ResultCacheKey("m", {{2}, {}, 0}, spec));
  // The same skip list by content is the same key (the model owns it).
  const std::vector<int32_t> a = {5, 6}, b = {5, 6};
  core::OutputSpec with_a, with_b;
  with_a.multi.skip_ids = &a;
  with_b.multi.skip_ids = &b;
  EXPECT_EQ(core::ResultCacheKey("m", {{2}, {}, 0}, with_a),
            core::ResultCacheKey("m", {{2}, {}, 0}, with_b));
}

std::string KeyOf(int32_t id) {
  return core::ResultCacheKey("m", {{id, 3}, {}, 0}, core::OutputSpec{});
}

void Store(core::ResultCache& cache, int32_t id, core::ResultCacheOwner* owner) {
  core::InputOutput unused;
  ASSERT_EQ(cache.Begin(KeyOf(id), &unused, {}), core::ResultCache::Lookup::kMiss);
  cache.Complete(KeyOf(id), Output(static_cast<float>(id), 8), owner);
}

TEST(ResultCacheTest, TheByteBoundHoldsAndTheLeastRecentlyUsedGoesFirst) {
  const int64_t entry = core::ResultCache::EntryBytes(KeyOf(1), Output(1, 8));
  core::ResultCache cache(3 * entry + entry / 2);  // room for three
  CountingOwner owner;
  Store(cache, 1, &owner);
  Store(cache, 2, &owner);
  Store(cache, 3, &owner);
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<std::string>{KeyOf(3), KeyOf(2), KeyOf(1)}));
  core::InputOutput hit;
  ASSERT_EQ(cache.Begin(KeyOf(1), &hit, {}),
            core::ResultCache::Lookup::kHit);  // 1 is the most recent
  Store(cache, 4, &owner);                     // evicts 2
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<std::string>{KeyOf(4), KeyOf(1), KeyOf(3)}));
  EXPECT_EQ(owner.evicted, 1);
  EXPECT_EQ(cache.Begin(KeyOf(2), &hit, {}), core::ResultCache::Lookup::kMiss);
  cache.Fail(KeyOf(2), absl::CancelledError("not computed"));

  for (int32_t id = 10; id < 40; ++id) {
    Store(cache, id, &owner);
    EXPECT_LE(cache.bytes(), cache.max_bytes());
    EXPECT_EQ(cache.entries(), 3);
  }
  EXPECT_EQ(owner.evicted, 31);
  EXPECT_EQ(owner.bytes, cache.bytes());
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<std::string>{KeyOf(39), KeyOf(38), KeyOf(37)}));

  // An entry bigger than the whole bound is not stored (nothing is evicted for it).
  core::InputOutput unused;
  ASSERT_EQ(cache.Begin(KeyOf(99), &unused, {}), core::ResultCache::Lookup::kMiss);
  cache.Complete(KeyOf(99), Output(99, 4096), &owner);
  EXPECT_EQ(cache.entries(), 3);
  EXPECT_EQ(cache.Begin(KeyOf(99), &unused, {}), core::ResultCache::Lookup::kMiss);
}

TEST(ResultCacheTest, ZeroBytesNeverStores) {
  core::ResultCache cache(0);
  CountingOwner owner;
  Store(cache, 1, &owner);
  EXPECT_EQ(cache.entries(), 0);
  EXPECT_EQ(cache.bytes(), 0);
  EXPECT_EQ(owner.bytes, 0);
  core::InputOutput hit;
  EXPECT_EQ(cache.Begin(KeyOf(1), &hit, {}), core::ResultCache::Lookup::kMiss);
}

TEST(ResultCacheTest, WaitersGetTheLeadersResultOrItsError) {
  core::ResultCache cache(1 << 20);
  core::InputOutput unused;
  ASSERT_EQ(cache.Begin(KeyOf(1), &unused, {}), core::ResultCache::Lookup::kMiss);
  std::vector<absl::StatusOr<core::InputOutput>> got;
  auto waiter = [&got](absl::StatusOr<core::InputOutput> result) {
    got.push_back(std::move(result));
  };
  EXPECT_EQ(cache.Begin(KeyOf(1), &unused, waiter), core::ResultCache::Lookup::kWait);
  EXPECT_EQ(cache.Begin(KeyOf(1), &unused, waiter), core::ResultCache::Lookup::kWait);
  cache.Fail(KeyOf(1), absl::InternalError("engine failed"));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(cache.entries(), 0);
  EXPECT_EQ(cache.in_flight(), 0);

  got.clear();
  ASSERT_EQ(cache.Begin(KeyOf(1), &unused, {}), core::ResultCache::Lookup::kMiss);  // a new leader
  EXPECT_EQ(cache.Begin(KeyOf(1), &unused, waiter), core::ResultCache::Lookup::kWait);
  cache.Complete(KeyOf(1), Output(1), nullptr);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].ok());
  EXPECT_EQ(got[0]->values[0], 1);
}

// ---- Through the service core ------------------------------------------------

core::EncodeRequest IdsRequest(std::vector<std::vector<int32_t>> inputs) {
  core::EncodeRequest request;
  for (auto& ids : inputs) request.inputs.push_back(core::Input::Ids(std::move(ids)));
  return request;
}

std::future<Result> Dispatch(core::EncodeDispatcher& dispatcher, const core::EncodeRequest& request,
                             std::function<bool()> is_cancelled = {},
                             core::Clock::time_point deadline = core::Clock::time_point::max()) {
  auto promise = std::make_shared<std::promise<Result>>();
  std::future<Result> future = promise->get_future();
  dispatcher.Dispatch(request, deadline, std::move(is_cancelled),
                      [promise](Result result) { promise->set_value(std::move(result)); });
  return future;
}

// A bounded wait: a hang fails the test instead of blocking it.
Result Get(std::future<Result>& future) {
  if (future.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "no answer within 20 s";
    return absl::DeadlineExceededError("the test gave up waiting");
  }
  return future.get();
}

double MetricValue(core::ServerMetrics& metrics, const std::string& name) {
  for (const prometheus::MetricFamily& family : metrics.registry()->Collect()) {
    if (family.name != name || family.metric.empty()) continue;
    const prometheus::ClientMetric& metric = family.metric.front();
    return family.type == prometheus::MetricType::Gauge ? metric.gauge.value : metric.counter.value;
  }
  ADD_FAILURE() << name << " is missing";
  return -1;
}

// FakeBackend's output for ids: {first id, token count}.
std::vector<float> Fake(int32_t first, int tokens) {
  return {static_cast<float>(first), static_cast<float>(tokens)};
}

TEST(CachedDispatchTest, IdenticalInputsInFlightAreComputedOnceThenHit) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  service.backend().Hold();
  std::future<Result> first = Dispatch(service.dispatcher(), IdsRequest({{11, 5, 3}}));
  ASSERT_TRUE(service.backend().AwaitStarted(1));
  std::future<Result> second = Dispatch(service.dispatcher(), IdsRequest({{11, 5, 3}}));
  EXPECT_EQ(cache.in_flight(), 1);
  service.backend().Release();
  for (std::future<Result>* future : {&first, &second}) {
    Result result = Get(*future);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->outputs.size(), 1u);
    EXPECT_EQ(result->outputs[0].values, Fake(11, 3));
    EXPECT_EQ(result->outputs[0].tokens, 3);
  }
  // A third is answered from the cache, at once.
  std::future<Result> third = Dispatch(service.dispatcher(), IdsRequest({{11, 5, 3}}));
  ASSERT_EQ(third.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(Get(third)->outputs[0].values, Fake(11, 3));
  EXPECT_EQ(service.backend().batches(), (std::vector<std::vector<int32_t>>{{11}}));
  EXPECT_EQ(MetricValue(service.metrics(), "encoder_cache_misses_total"), 1);
  EXPECT_EQ(MetricValue(service.metrics(), "encoder_cache_coalesced_total"), 1);
  EXPECT_EQ(MetricValue(service.metrics(), "encoder_cache_hits_total"), 1);
  EXPECT_EQ(MetricValue(service.metrics(), "encoder_cache_bytes"), cache.bytes());
  EXPECT_EQ(MetricValue(service.metrics(), "encoder_inputs_total"), 3);
}

TEST(CachedDispatchTest, HitsAndMissesOfOneRequestComeBackInInputOrder) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  std::future<Result> first = Dispatch(service.dispatcher(), IdsRequest({{12, 3}}));
  ASSERT_TRUE(Get(first).ok());
  std::future<Result> mixed =
      Dispatch(service.dispatcher(), IdsRequest({{13, 3}, {12, 3}, {14, 4, 3}, {13, 3}}));
  Result result = Get(mixed);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outputs.size(), 4u);
  EXPECT_EQ(result->outputs[0].values, Fake(13, 2));
  EXPECT_EQ(result->outputs[1].values, Fake(12, 2));
  EXPECT_EQ(result->outputs[2].values, Fake(14, 3));
  EXPECT_EQ(result->outputs[3].values, Fake(13, 2));
  // The engine saw 12 once, then only the misses (13 once: its twin waited).
  EXPECT_EQ(service.backend().batches(), (std::vector<std::vector<int32_t>>{{12}, {13, 14}}));
}

TEST(CachedDispatchTest, AnotherPoolingIsAnotherEntry) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  core::EncodeRequest cls = IdsRequest({{15, 3}});
  core::EncodeRequest mean = cls;
  mean.pooling = core::PoolingChoice::kMean;
  std::future<Result> a = Dispatch(service.dispatcher(), cls);
  ASSERT_TRUE(Get(a).ok());
  std::future<Result> b = Dispatch(service.dispatcher(), mean);
  Result with_mean = Get(b);
  ASSERT_TRUE(with_mean.ok());
  EXPECT_EQ(with_mean->pooling, engine::Pooling::kMean);
  EXPECT_EQ(service.backend().batches().size(), 2u);
  ASSERT_EQ(service.backend().specs().size(), 2u);
  EXPECT_EQ(service.backend().specs()[1].pooling, engine::Pooling::kMean);
}

// The leader (the first request) is cancelled while queued: it gets
// CANCELLED, and the request waiting for its input submits that input itself.
TEST(CachedDispatchTest, ACancelledLeaderLeavesTheWaiterToComputeItself) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  service.backend().Hold();
  std::future<Result> blocker = Dispatch(service.dispatcher(), IdsRequest({{20, 3}}));
  ASSERT_TRUE(service.backend().AwaitStarted(1));
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::future<Result> leader = Dispatch(service.dispatcher(), IdsRequest({{21, 3}}),
                                        [cancelled] { return cancelled->load(); });
  std::future<Result> waiter = Dispatch(service.dispatcher(), IdsRequest({{21, 3}}));
  EXPECT_EQ(MetricValue(service.metrics(), "encoder_cache_coalesced_total"), 1);
  cancelled->store(true);
  service.backend().Release();
  EXPECT_TRUE(Get(blocker).ok());
  EXPECT_EQ(Get(leader).status().code(), absl::StatusCode::kCancelled);
  Result result = Get(waiter);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outputs[0].values, Fake(21, 2));
  EXPECT_EQ(service.backend().batches(), (std::vector<std::vector<int32_t>>{{20}, {21}}));
  EXPECT_EQ(cache.in_flight(), 0);
}

// The leader's deadline passes while it is queued: the waiter (no deadline)
// still gets its answer.
TEST(CachedDispatchTest, ALeaderPastItsDeadlineLeavesTheWaiterAnswered) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  service.backend().Hold();
  std::future<Result> blocker = Dispatch(service.dispatcher(), IdsRequest({{20, 3}}));
  ASSERT_TRUE(service.backend().AwaitStarted(1));
  const core::Clock::time_point deadline =
      core::SystemClock()->Now() + std::chrono::milliseconds(50);
  std::future<Result> leader = Dispatch(service.dispatcher(), IdsRequest({{22, 3}}), {}, deadline);
  std::future<Result> waiter = Dispatch(service.dispatcher(), IdsRequest({{22, 3}}));
  while (core::SystemClock()->Now() <= deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  service.backend().Release();
  EXPECT_TRUE(Get(blocker).ok());
  EXPECT_FALSE(Get(leader).ok());
  Result result = Get(waiter);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outputs[0].values, Fake(22, 2));
}

// A waiter's own cancellation still applies when the shared result arrives.
TEST(CachedDispatchTest, ACancelledWaiterIsAnsweredCancelled) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  service.backend().Hold();
  std::future<Result> leader = Dispatch(service.dispatcher(), IdsRequest({{23, 3}}));
  ASSERT_TRUE(service.backend().AwaitStarted(1));
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::future<Result> waiter = Dispatch(service.dispatcher(), IdsRequest({{23, 3}}),
                                        [cancelled] { return cancelled->load(); });
  cancelled->store(true);
  service.backend().Release();
  EXPECT_TRUE(Get(leader).ok());
  EXPECT_EQ(Get(waiter).status().code(), absl::StatusCode::kCancelled);
}

// A request refused at the door (shutting down) as leader: its waiters are
// not left hanging, they get their own answer from the batcher.
TEST(CachedDispatchTest, ARefusedLeaderNeverStrandsItsWaiters) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  service.backend().Hold();
  std::future<Result> leader = Dispatch(service.dispatcher(), IdsRequest({{24, 3}}));
  ASSERT_TRUE(service.backend().AwaitStarted(1));
  std::future<Result> waiter = Dispatch(service.dispatcher(), IdsRequest({{24, 3}}));
  service.batcher().Shutdown();  // nothing new is admitted; the running batch ends
  service.backend().Release();
  EXPECT_TRUE(Get(leader).ok());
  EXPECT_TRUE(Get(waiter).ok());
  // Refused at the door now, with its twin (in the same request) waiting on
  // it: answered once, and nothing is left in flight.
  std::future<Result> refused = Dispatch(service.dispatcher(), IdsRequest({{25, 3}, {25, 3}}));
  EXPECT_EQ(Get(refused).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cache.in_flight(), 0);
}

TEST(CachedDispatchTest, HeadRequestsAreCachedToo) {
  core::ResultCache cache(1 << 20);
  CoreService service;
  service.EnableCache(&cache);
  service.SetReranker();
  core::ClassifyRequest request;
  request.inputs = {core::Input::Text("hello world")};
  for (int i = 0; i < 2; ++i) {
    auto promise = std::make_shared<std::promise<absl::StatusOr<core::ClassifyResult>>>();
    auto future = promise->get_future();
    service.dispatcher().DispatchClassify(
        request, core::Clock::time_point::max(), {},
        [promise](absl::StatusOr<core::ClassifyResult> r) { promise->set_value(std::move(r)); });
    ASSERT_EQ(future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    absl::StatusOr<core::ClassifyResult> result = future.get();
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->predictions.size(), 1u);
  }
  EXPECT_EQ(service.backend().batches().size(), 1u);
  EXPECT_EQ(MetricValue(service.metrics(), "encoder_cache_hits_total"), 1);
}

// Several threads, as from both transports: hits, misses, coalesced inputs
// and evictions at once (a cache of a few entries). Every answer is its own
// input's. Run under TSan by scripts/test (server_core_test).
TEST(CachedDispatchTest, ConcurrentHitsMissesAndCoalescedInputsAnswerEachTheirOwn) {
  const int64_t entry = core::ResultCache::EntryBytes(
      core::ResultCacheKey("test", {{30, 3}, {}, 0}, core::OutputSpec{}), Output(0));
  core::ResultCache cache(6 * entry);
  CoreService service;
  service.EnableCache(&cache);
  constexpr int kThreads = 4;
  constexpr int kRequests = 40;
  std::atomic<int> failures{0};
  std::atomic<int64_t> inputs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRequests; ++r) {
        std::vector<std::vector<int32_t>> ids;
        const int n = 1 + (r + t) % 3;
        for (int k = 0; k < n; ++k) {
          const int32_t first = 30 + (r * 7 + t * 3 + k * 5) % 12;  // 12 distinct inputs
          ids.push_back({first, 3});
        }
        inputs += n;
        std::future<Result> future = Dispatch(service.dispatcher(), IdsRequest(ids));
        Result result = Get(future);
        if (!result.ok() || result->outputs.size() != ids.size()) {
          ++failures;
          continue;
        }
        for (size_t k = 0; k < ids.size(); ++k) {
          if (result->outputs[k].values != Fake(ids[k][0], 2)) ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(cache.bytes(), cache.max_bytes());
  EXPECT_EQ(cache.in_flight(), 0);
  const double looked_up = MetricValue(service.metrics(), "encoder_cache_hits_total") +
                           MetricValue(service.metrics(), "encoder_cache_misses_total") +
                           MetricValue(service.metrics(), "encoder_cache_coalesced_total");
  EXPECT_EQ(looked_up, static_cast<double>(inputs.load()));
  EXPECT_GT(MetricValue(service.metrics(), "encoder_cache_evictions_total"), 0);
}

}  // namespace
}  // namespace result_cache_test
}  // namespace server
