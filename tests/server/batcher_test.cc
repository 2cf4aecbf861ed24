// Batcher tests with a fake backend and a fake clock: the clock moves only
// when a test says so, which makes every batch boundary deterministic.
#include "server/core/batching/batcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "server/core/batching/request_queue.h"
#include "support/fake_backend.h"
#include "support/fake_clock.h"

namespace server {
namespace {

using Result = absl::StatusOr<std::vector<core::InputOutput>>;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing_support::FakeBackend;
using testing_support::FakeClock;

// The answer to one submitted request, and how many times `done` ran.
class Reply {
 public:
  std::function<void(Result)> Callback() {
    return [this](Result result) {
      common::MutexLock lock(&mu_);
      result_ = std::move(result);
      ++calls_;
      cv_.SignalAll();
    };
  }
  // Bounded wait for the answer.
  bool Await() ABSL_LOCKS_EXCLUDED(mu_) {
    const auto give_up = std::chrono::steady_clock::now() + seconds(20);
    common::MutexLock lock(&mu_);
    while (calls_ == 0) {
      if (cv_.WaitWithDeadline(&mu_, give_up)) return calls_ > 0;
    }
    return true;
  }
  bool answered() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    return calls_ > 0;
  }
  int calls() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    return calls_;
  }
  Result result() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    return result_;
  }

 private:
  common::Mutex mu_;
  common::CondVar cv_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  Result result_ ABSL_GUARDED_BY(mu_) = absl::UnknownError("not answered");
};

// An input for the fake backend: its first id names it, `tokens` sets its length.
struct FakeInput {
  int32_t first_id;
  int tokens;
};

class CountingObserver : public core::BatcherObserver {
 public:
  void OnQueueChanged(int64_t requests, int64_t tokens) override {
    queued_requests = requests;
    queued_tokens = tokens;
  }
  void OnRequestDequeued(core::Clock::duration queue_time) override {
    common::MutexLock lock(&mu_);
    queue_times_.push_back(queue_time);
    ++dequeued;
  }
  void OnBatchDone(int inputs, int64_t tokens, core::Clock::duration) override {
    ++batch_count;
    batch_inputs += inputs;
    batch_tokens += tokens;
  }
  std::atomic<int64_t> queued_requests{-1};
  std::atomic<int64_t> queued_tokens{-1};
  std::atomic<int> dequeued{0};
  std::atomic<int> batch_count{0};
  std::atomic<int> batch_inputs{0};
  std::atomic<int64_t> batch_tokens{0};
  // Each request's time in the queue, in the order they left it.
  std::vector<core::Clock::duration> queue_times() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    return queue_times_;
  }

 private:
  common::Mutex mu_;
  std::vector<core::Clock::duration> queue_times_ ABSL_GUARDED_BY(mu_);
};

// The fake engine's cost in the deadline tests: 10 ms a batch + 1 ms a token.
constexpr milliseconds kPerBatch(10);
constexpr milliseconds kPerToken(1);

class BatcherTest : public ::testing::Test {
 protected:
  void StartBatcher(core::BatcherConfig config) {
    batcher_ = std::make_unique<core::Batcher>(config, &backend_, &clock_, &observer_);
    batcher_->Start();
  }
  // Started but held: requests gather in the queue until Resume (an idle
  // engine would otherwise run the first one alone at once).
  void StartHeld(core::BatcherConfig config) {
    batcher_ = std::make_unique<core::Batcher>(config, &backend_, &clock_, &observer_);
    batcher_->Hold();
    batcher_->Start();
  }

  static std::unique_ptr<core::BatchRequest> MakeRequest(const std::vector<FakeInput>& inputs) {
    auto request = std::make_unique<core::BatchRequest>();
    for (const FakeInput& input : inputs) {
      core::TokenizedInput tokenized;
      tokenized.ids.assign(input.tokens, 1);
      if (!tokenized.ids.empty()) tokenized.ids[0] = input.first_id;
      request->inputs.push_back(std::move(tokenized));
    }
    return request;
  }

  // Submits a request and returns its reply slot (which outlives the batcher).
  Reply* Submit(const std::vector<FakeInput>& inputs, absl::Status* status = nullptr,
                std::unique_ptr<core::BatchRequest> request = nullptr) {
    if (request == nullptr) request = MakeRequest(inputs);
    replies_.emplace_back();
    Reply* reply = &replies_.back();
    request->done = reply->Callback();
    const absl::Status submitted = batcher_->Submit(std::move(request));
    if (status != nullptr) {
      *status = submitted;
    } else {
      EXPECT_TRUE(submitted.ok()) << submitted;
    }
    return reply;
  }

  // Checks that `reply` holds one output per input, in order.
  static void ExpectOutputs(Reply* reply, const std::vector<FakeInput>& inputs) {
    ASSERT_TRUE(reply->Await());
    const Result result = reply->result();
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const core::InputOutput& out = (*result)[i];
      EXPECT_EQ(out.tokens, inputs[i].tokens) << "input " << i;
      ASSERT_EQ(out.values.size(), 2u);
      EXPECT_EQ(out.values[0], static_cast<float>(inputs[i].first_id)) << "input " << i;
    }
    EXPECT_EQ(reply->calls(), 1);
  }

  // A request with a deadline `in` from now (on the fake clock).
  std::unique_ptr<core::BatchRequest> WithDeadline(const std::vector<FakeInput>& inputs,
                                                   core::Clock::duration in) {
    auto request = MakeRequest(inputs);
    request->deadline = clock_.Now() + in;
    return request;
  }

  // Lets the batcher learn the fake engine's cost (SetCost) from two batches
  // of different sizes, run one at a time: 10 tokens (20 ms), 40 tokens (50 ms).
  // Needs max_batch_tokens >= 40.
  void LearnTheCost() {
    backend_.SetCost(&clock_, kPerBatch, kPerToken);
    ExpectOutputs(Submit({{1, 10}}), {{1, 10}});
    ExpectOutputs(Submit({{2, 40}}), {{2, 40}});
    // Idle again (the worker has recorded the second batch's cost).
    ASSERT_TRUE(batcher_->Drain(seconds(1)));
  }

  static void ExpectError(Reply* reply, absl::StatusCode code) {
    ASSERT_TRUE(reply->Await());
    EXPECT_EQ(reply->result().status().code(), code) << reply->result().status();
    EXPECT_EQ(reply->calls(), 1);
  }

  FakeBackend backend_;
  FakeClock clock_;
  CountingObserver observer_;
  std::deque<Reply> replies_;  // declared before the batcher: outlives its callbacks
  std::unique_ptr<core::Batcher> batcher_;
};

core::BatcherConfig Config(int64_t max_batch_tokens, int max_batch_inputs,
                           int64_t max_queue_tokens = 1000) {
  core::BatcherConfig config;
  config.max_batch_tokens = max_batch_tokens;
  config.max_batch_inputs = max_batch_inputs;
  config.max_queue_tokens = max_queue_tokens;
  // Exact arithmetic in the deadline tests; RefusesAtSubmit... covers the headroom.
  config.queue_wait_headroom = 1.0;
  return config;
}

TEST_F(BatcherTest, ScattersEachOutputToItsRequestAndIndex) {
  StartHeld(Config(1000, 256));
  const std::vector<FakeInput> first = {{10, 3}, {11, 5}};
  const std::vector<FakeInput> second = {{20, 2}};
  const std::vector<FakeInput> third = {{30, 4}, {31, 1}, {32, 6}};
  Reply* a = Submit(first);
  auto mean = MakeRequest(second);
  mean->spec.pooling = engine::Pooling::kMean;
  mean->spec.normalize = true;
  Reply* b = Submit({}, nullptr, std::move(mean));
  Reply* c = Submit(third);
  batcher_->Resume();  // all three are queued: one batch
  ExpectOutputs(a, first);
  ExpectOutputs(b, second);
  ExpectOutputs(c, third);
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{10, 11, 20, 30, 31, 32}}));
  const std::vector<core::OutputSpec> specs = backend_.specs();
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[1].pooling, engine::Pooling::kCls);
  EXPECT_EQ(specs[2].pooling, engine::Pooling::kMean);
  EXPECT_TRUE(specs[2].normalize);
  EXPECT_FALSE(specs[3].normalize);
}

TEST_F(BatcherTest, PacksInputsUpToTheTokenBudget) {
  StartHeld(Config(10, 256));
  const core::Clock::time_point start = clock_.Now();
  Reply* a = Submit({{1, 4}});
  Reply* b = Submit({{2, 4}});
  Reply* c = Submit({{3, 4}});  // 12 tokens queued: a and b fill a batch, c must wait
  batcher_->Resume();

  ExpectOutputs(a, {{1, 4}});
  ExpectOutputs(b, {{2, 4}});
  // c runs as soon as the engine is free again, without waiting for the delay.
  ExpectOutputs(c, {{3, 4}});
  EXPECT_EQ(clock_.Now(), start);
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1, 2}, {3}}));
}

TEST_F(BatcherTest, ARequestLargerThanABatchSpansBatchesAndIsAnsweredOnce) {
  StartBatcher(Config(10, 256));
  const std::vector<FakeInput> inputs = {{1, 4}, {2, 4}, {3, 4}};
  backend_.Hold();
  Reply* reply = Submit(inputs);
  ASSERT_TRUE(backend_.AwaitStarted(1));
  EXPECT_FALSE(reply->answered());  // its third input is still queued
  backend_.Release();
  batcher_->Shutdown();
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  ExpectOutputs(reply, inputs);
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1, 2}, {3}}));
}

TEST_F(BatcherTest, CapsInputsPerBatch) {
  StartHeld(Config(1000, 2));
  std::vector<Reply*> replies;
  for (int32_t id = 1; id <= 5; ++id) replies.push_back(Submit({{id, 1}}));
  batcher_->Resume();
  for (int i = 0; i < 5; ++i) ExpectOutputs(replies[i], {{i + 1, 1}});
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1, 2}, {3, 4}, {5}}));
}

// The fake clock never moves here unless the test moves it: a batcher that
// waited for the queue delay would never answer (Await gives up after 20 s).
TEST_F(BatcherTest, ALoneRequestAtAnIdleEngineStartsAtOnce) {
  StartBatcher(Config(1000, 256));
  const core::Clock::time_point start = clock_.Now();
  Reply* reply = Submit({{1, 3}});
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(reply, {{1, 3}}));
  EXPECT_EQ(clock_.Now(), start);
  EXPECT_EQ(observer_.queue_times(),
            std::vector<core::Clock::duration>{core::Clock::duration::zero()});
  // And again once the engine is idle after a batch.
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(Submit({{2, 3}}), {{2, 3}}));
  EXPECT_EQ(clock_.Now(), start);
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}, {2}}));
}

TEST_F(BatcherTest, RequestsArrivingDuringARunShareTheNextBatch) {
  StartBatcher(Config(1000, 256));
  const core::Clock::time_point start = clock_.Now();
  backend_.Hold();
  Reply* a = Submit({{1, 2}});
  ASSERT_TRUE(backend_.AwaitStarted(1));
  Reply* b = Submit({{2, 2}});
  Reply* c = Submit({{3, 2}, {4, 2}});
  Reply* d = Submit({{5, 2}});
  backend_.Release();
  // The next batch is cut the moment the engine returns (the fake clock
  // never moves: nothing waits for a delay).
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(a, {{1, 2}}));
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(b, {{2, 2}}));
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(c, {{3, 2}, {4, 2}}));
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(d, {{5, 2}}));
  EXPECT_EQ(clock_.Now(), start);
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}, {2, 3, 4, 5}}));
}

// An input that arrives during a run waits for that run only, whether the
// run is short (1 ms, under the 2 ms the batcher used to wait for company)
// or long (5 ms).
TEST_F(BatcherTest, AnInputQueuedDuringARunWaitsForTheRunNotForTheDelay) {
  StartBatcher(Config(1000, 256));
  backend_.SetCost(&clock_, milliseconds(1), core::Clock::duration::zero());  // 1 ms a batch
  const core::Clock::time_point start = clock_.Now();
  backend_.Hold();
  Reply* a = Submit({{1, 2}});
  ASSERT_TRUE(backend_.AwaitStarted(1));
  Reply* b = Submit({{2, 2}});  // 1 ms before the engine is free
  backend_.Release();
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(a, {{1, 2}}));
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(b, {{2, 2}}));
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  // b was cut when a's run ended (1 ms in) and ran 1..2 ms.
  EXPECT_EQ(clock_.Now() - start, milliseconds(2));
  EXPECT_EQ(observer_.queue_times(),
            (std::vector<core::Clock::duration>{core::Clock::duration::zero(), milliseconds(1)}));

  // A longer run: the input queued during it runs right after.
  backend_.SetCost(&clock_, milliseconds(5), core::Clock::duration::zero());
  backend_.Hold();
  Reply* c = Submit({{3, 2}});
  ASSERT_TRUE(backend_.AwaitStarted(3));
  Reply* d = Submit({{4, 2}});
  backend_.Release();
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(c, {{3, 2}}));
  ASSERT_NO_FATAL_FAILURE(ExpectOutputs(d, {{4, 2}}));
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  EXPECT_EQ(clock_.Now() - start, milliseconds(12));
  EXPECT_EQ(observer_.queue_times().back(), milliseconds(5));
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}, {2}, {3}, {4}}));
}

TEST_F(BatcherTest, AHeldBatcherQueuesAndRunsWhatGatheredOnResume) {
  StartHeld(Config(1000, 256));
  Reply* a = Submit({{1, 2}});
  Reply* b = Submit({{2, 2}});
  EXPECT_EQ(batcher_->queued_requests(), 2);
  EXPECT_FALSE(a->answered());
  batcher_->Resume();
  ExpectOutputs(a, {{1, 2}});
  ExpectOutputs(b, {{2, 2}});
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1, 2}}));
}

TEST_F(BatcherTest, RefusesARequestWhenTheQueueIsFull) {
  StartHeld(Config(1000, 256, /*max_queue_tokens=*/10));
  Reply* a = Submit({{1, 6}});
  absl::Status status;
  Reply* refused = Submit({{2, 6}}, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(status.message().find("queue full"), absl::string_view::npos) << status;
  Reply* c = Submit({{3, 4}});  // fits exactly
  EXPECT_EQ(batcher_->queued_tokens(), 10);
  EXPECT_EQ(batcher_->queued_requests(), 2);
  EXPECT_EQ(observer_.queued_tokens.load(), 10);

  batcher_->Shutdown();
  batcher_->Resume();
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  ExpectOutputs(a, {{1, 6}});
  ExpectOutputs(c, {{3, 4}});
  EXPECT_EQ(refused->calls(), 0);
  EXPECT_EQ(batcher_->queued_tokens(), 0);
  EXPECT_EQ(observer_.queued_tokens.load(), 0);
}

TEST_F(BatcherTest, RejectsRequestsThatCouldNeverRun) {
  StartBatcher(Config(8, 256, /*max_queue_tokens=*/20));
  absl::Status status;
  std::vector<Reply*> replies;
  replies.push_back(Submit({}, &status));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "request has no inputs");

  replies.push_back(Submit({{1, 2}, {2, 0}}, &status));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "input 1 has no tokens");

  replies.push_back(Submit({{1, 9}}, &status));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "input 0 has 9 tokens, more than a batch holds (8)");

  replies.push_back(Submit({{1, 8}, {2, 8}, {3, 8}}, &status));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "request has 24 tokens, more than the queue holds (20)");

  auto mismatched = MakeRequest({{1, 3}});
  mismatched->inputs[0].token_type_ids = {0, 0};
  replies.push_back(Submit({}, &status, std::move(mismatched)));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "input 0 has 2 token types for 3 ids");

  batcher_->Shutdown();
  replies.push_back(Submit({{1, 1}}, &status));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);

  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  for (Reply* reply : replies) EXPECT_EQ(reply->calls(), 0);
  EXPECT_TRUE(backend_.batches().empty());
}

TEST_F(BatcherTest, DropsARequestWhoseDeadlinePassedWhileQueued) {
  StartHeld(Config(1000, 256));
  auto expiring = MakeRequest({{1, 3}});
  expiring->deadline = clock_.Now() + milliseconds(5);
  Reply* expired = Submit({}, nullptr, std::move(expiring));
  Reply* kept = Submit({{2, 3}});
  clock_.Advance(milliseconds(10));
  batcher_->Resume();

  ExpectError(expired, absl::StatusCode::kDeadlineExceeded);
  ExpectOutputs(kept, {{2, 3}});
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{2}}));  // never computed
}

TEST_F(BatcherTest, SkipsTheRestOfARequestWhoseDeadlinePassedBetweenItsBatches) {
  StartBatcher(Config(4, 256));
  auto spanning = MakeRequest({{1, 4}, {2, 4}});
  spanning->deadline = clock_.Now() + milliseconds(5);
  backend_.Hold();
  Reply* reply = Submit({}, nullptr, std::move(spanning));
  ASSERT_TRUE(backend_.AwaitStarted(1));  // its first input fills a batch
  clock_.Advance(milliseconds(10));
  backend_.Release();
  ExpectError(reply, absl::StatusCode::kDeadlineExceeded);
  batcher_->Shutdown();
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}}));
}

TEST(BatchCostModelTest, FitsTheFixedAndPerTokenCostsFromBatchesOfDifferentSizes) {
  core::BatchCostModel model;
  EXPECT_FALSE(model.known());
  EXPECT_EQ(model.Predict(3, 100), core::Clock::duration::zero());
  // One size only: everything is taken as fixed cost (a small first batch
  // must not make a long queue look hopeless).
  model.Observe(10, milliseconds(20));
  EXPECT_TRUE(model.known());
  EXPECT_NEAR(model.fixed_seconds(), 0.020, 1e-12);
  EXPECT_DOUBLE_EQ(model.per_token_seconds(), 0);
  // A second size separates them: 10 ms a batch + 1 ms a token.
  model.Observe(40, milliseconds(50));
  EXPECT_NEAR(model.fixed_seconds(), 0.010, 1e-9);
  EXPECT_NEAR(model.per_token_seconds(), 0.001, 1e-12);
  const double two_batches_of_90 = std::chrono::duration<double>(model.Predict(2, 90)).count();
  EXPECT_NEAR(two_batches_of_90, 0.110, 1e-6);
  // Many batches of one size (a full queue): the fixed part is kept and the
  // per-token part follows the engine, here twice as slow.
  for (int i = 0; i < 100; ++i) model.Observe(100, milliseconds(210));
  EXPECT_NEAR(model.fixed_seconds(), 0.010, 1e-9);
  EXPECT_NEAR(model.per_token_seconds(), 0.002, 1e-5);
  // A one-off stall counts as at most 4 x the expected 210 ms.
  model.Observe(100, std::chrono::seconds(30));
  const double after_stall = std::chrono::duration<double>(model.Predict(1, 100)).count();
  EXPECT_NEAR(after_stall, 0.9 * 0.210 + 0.1 * 0.840, 1e-3);
}

// Full batches only (a closed loop that keeps the queue full): the terms
// cannot be told apart, and a small request must not be predicted as long as
// a full batch, or a tight deadline refuses everything and nothing ever runs
// to correct the model (seen as 60 s without one OK call in the overload test).
TEST(BatchCostModelTest, FullBatchesOnlyDoNotMakeASmallRequestLookLong) {
  core::BatchCostModel model;
  for (int i = 0; i < 20; ++i) model.Observe(3000, seconds(1));
  const double small = std::chrono::duration<double>(model.Predict(1, 100)).count();
  EXPECT_NEAR(small, 100.0 / 3000.0, 1e-6);  // the per-token view, not 1 s
  const double two_full = std::chrono::duration<double>(model.Predict(2, 6000)).count();
  EXPECT_NEAR(two_full, 2.0, 1e-6);  // sums of doubles over 20 batches
  // And the other way round: small batches only do not make a long queue of
  // few batches look hopeless (the per-batch view wins there).
  core::BatchCostModel small_batches;
  for (int i = 0; i < 20; ++i) small_batches.Observe(10, milliseconds(20));
  const double queue = std::chrono::duration<double>(small_batches.Predict(2, 1000)).count();
  EXPECT_NEAR(queue, 0.040, 1e-6);
}

TEST_F(BatcherTest, RefusesAtSubmitARequestThatCouldNotFinishBeforeItsDeadline) {
  core::BatcherConfig config = Config(50, 256);
  config.queue_wait_headroom = 2.0;  // the server's default
  StartBatcher(config);
  LearnTheCost();

  backend_.Hold();
  Reply* running = Submit({{3, 50}});  // 60 ms
  ASSERT_TRUE(backend_.AwaitStarted(3));
  const core::Clock::time_point start = clock_.Now();
  Reply* queued = Submit({{4, 50}});  // no deadline: always admitted
  Reply* queued_too = Submit({{5, 50}});
  // Expected: 60 ms (running) + 2 x 60 ms (queued) = 180 ms of wait, then
  // its own tokens: a third batch, 20 ms more; with the 5 ms margin, 205 ms.
  absl::Status status;
  Reply* refused = Submit({}, &status, WithDeadline({{6, 10}}, milliseconds(150)));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(status.message().find("expected wait of 180 ms"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("150 ms left before its deadline"), absl::string_view::npos)
      << status;
  // 205 ms would fit in 300, but the queue's 180 ms wait counts twice
  // (headroom 2): 385 ms.
  Reply* refused_by_headroom = Submit({}, &status, WithDeadline({{9, 10}}, milliseconds(300)));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  Reply* admitted = Submit({}, &status, WithDeadline({{7, 10}}, milliseconds(390)));
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(batcher_->queued_tokens(), 110);

  backend_.Release();
  ExpectOutputs(running, {{3, 50}});
  ExpectOutputs(queued, {{4, 50}});
  ExpectOutputs(queued_too, {{5, 50}});
  ExpectOutputs(admitted, {{7, 10}});
  EXPECT_EQ(refused->calls(), 0);
  EXPECT_EQ(refused_by_headroom->calls(), 0);
  // The admitted request finished 200 ms after it arrived: before its deadline.
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  EXPECT_EQ(clock_.Now() - start, milliseconds(200));

  // Idle, a request whose own compute (50 ms) does not fit: retrying will not
  // help, so DEADLINE_EXCEEDED rather than RESOURCE_EXHAUSTED.
  Reply* too_big = Submit({}, &status, WithDeadline({{8, 40}}, milliseconds(30)));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_EQ(too_big->calls(), 0);
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}, {2}, {3}, {4}, {5}, {7}}));
}

TEST_F(BatcherTest, DropsAtTheCutARequestThatCouldNoLongerFinishBeforeItsDeadline) {
  StartBatcher(Config(50, 256));
  LearnTheCost();

  backend_.Hold();
  Reply* running = Submit({{3, 10}});  // expected 20 ms
  ASSERT_TRUE(backend_.AwaitStarted(3));
  // Admitted: 20 ms (running) + 20 ms (its own batch) + 5 ms margin <= 50 ms.
  absl::Status status;
  Reply* tight = Submit({}, &status, WithDeadline({{4, 10}}, milliseconds(50)));
  ASSERT_TRUE(status.ok()) << status;
  Reply* plain = Submit({{5, 10}});
  // The running batch takes 15 ms longer than expected: it ends 35 ms in, and
  // `tight`'s batch (>= 20 ms) would end after its deadline, although the
  // deadline has not passed yet when the batch is cut.
  clock_.Advance(milliseconds(15));
  backend_.Release();

  ExpectOutputs(running, {{3, 10}});
  ExpectError(tight, absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(tight->result().status().message().find("could not finish before its deadline"),
            absl::string_view::npos)
      << tight->result().status();
  ExpectOutputs(plain, {{5, 10}});
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}, {2}, {3}, {5}}));
}

TEST_F(BatcherTest, ABatchStopsGrowingWhereOneMoreInputWouldMakeAnEarlierMemberLate) {
  StartBatcher(Config(100, 256));
  LearnTheCost();

  backend_.Hold();
  Reply* running = Submit({{3, 10}});  // 20 ms
  ASSERT_TRUE(backend_.AwaitStarted(3));
  const core::Clock::time_point start = clock_.Now();
  absl::Status status;
  Reply* early = Submit({}, &status, WithDeadline({{4, 10}}, milliseconds(60)));
  ASSERT_TRUE(status.ok()) << status;
  Reply* big = Submit({{5, 40}});  // with `early`: 60 ms, ending 80 ms in, past its deadline
  backend_.Release();

  ExpectOutputs(running, {{3, 10}});
  ExpectOutputs(early, {{4, 10}});
  ExpectOutputs(big, {{5, 40}});
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  // Alone, `early` ran 20..40 ms in; then `big` 40..90 ms.
  EXPECT_EQ(clock_.Now() - start, milliseconds(90));
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}, {2}, {3}, {4}, {5}}));
}

TEST_F(BatcherTest, AnswersDroppedRequestsOffTheEngineThreadWithoutDelayingTheNextBatch) {
  StartBatcher(Config(1000, 256));
  backend_.Hold();
  Reply* running = Submit({{1, 2}});
  ASSERT_TRUE(backend_.AwaitStarted(1));

  // The dropped request's `done` blocks until the test lets it go, and
  // records its thread.
  std::promise<void> let_go;
  std::shared_future<void> let_go_future = let_go.get_future().share();
  std::promise<std::thread::id> dropped_thread;
  replies_.emplace_back();
  Reply* dropped = &replies_.back();
  auto expiring = MakeRequest({{2, 2}});
  expiring->deadline = clock_.Now() + milliseconds(5);
  expiring->done = [let_go_future, &dropped_thread,
                    callback = dropped->Callback()](Result result) mutable {
    dropped_thread.set_value(std::this_thread::get_id());
    let_go_future.wait();
    callback(std::move(result));
  };
  ASSERT_TRUE(batcher_->Submit(std::move(expiring)).ok());
  std::promise<std::thread::id> kept_thread;
  replies_.emplace_back();
  Reply* kept = &replies_.back();
  auto kept_request = MakeRequest({{3, 2}});
  kept_request->done = [&kept_thread, callback = kept->Callback()](Result result) mutable {
    kept_thread.set_value(std::this_thread::get_id());
    callback(std::move(result));
  };
  ASSERT_TRUE(batcher_->Submit(std::move(kept_request)).ok());

  clock_.Advance(milliseconds(10));  // `expiring` is past its deadline when cut
  backend_.Release();
  ExpectOutputs(running, {{1, 2}});
  // The next batch ran and was answered while the dropped request's answer
  // is still blocked.
  ExpectOutputs(kept, {{3, 2}});
  EXPECT_FALSE(dropped->answered());
  let_go.set_value();
  ExpectError(dropped, absl::StatusCode::kDeadlineExceeded);
  // Results come from the worker (the engine's thread); drops from another.
  EXPECT_NE(dropped_thread.get_future().get(), kept_thread.get_future().get());
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}, {3}}));
}

TEST_F(BatcherTest, DrainWaitsForDroppedRequestsToBeAnswered) {
  StartHeld(Config(1000, 256));
  std::promise<void> let_go;
  std::shared_future<void> let_go_future = let_go.get_future().share();
  replies_.emplace_back();
  Reply* dropped = &replies_.back();
  auto expiring = MakeRequest({{1, 2}});
  expiring->deadline = clock_.Now() + milliseconds(5);
  expiring->done = [let_go_future, callback = dropped->Callback()](Result result) mutable {
    let_go_future.wait();
    callback(std::move(result));
  };
  ASSERT_TRUE(batcher_->Submit(std::move(expiring)).ok());
  clock_.Advance(milliseconds(10));
  batcher_->Shutdown();
  batcher_->Resume();
  std::future<bool> drained =
      std::async(std::launch::async, [this] { return batcher_->Drain(seconds(1)); });
  // The queue is empty at once, but the answer is not out yet: still waiting.
  ASSERT_TRUE(clock_.AwaitWaitUntil(clock_.Now() + seconds(1)));
  EXPECT_EQ(drained.wait_for(milliseconds(50)), std::future_status::timeout);
  let_go.set_value();
  ASSERT_EQ(drained.wait_for(seconds(20)), std::future_status::ready);
  EXPECT_TRUE(drained.get());
  EXPECT_TRUE(dropped->answered());
  ExpectError(dropped, absl::StatusCode::kDeadlineExceeded);
}

TEST_F(BatcherTest, DropsACancelledRequestBeforeCompute) {
  StartHeld(Config(1000, 256));
  auto cancelled_flag = std::make_shared<std::atomic<bool>>(false);
  auto cancellable = MakeRequest({{1, 3}});
  cancellable->is_cancelled = [cancelled_flag] { return cancelled_flag->load(); };
  Reply* cancelled = Submit({}, nullptr, std::move(cancellable));
  Reply* kept = Submit({{2, 3}});
  *cancelled_flag = true;
  batcher_->Resume();

  ExpectError(cancelled, absl::StatusCode::kCancelled);
  ExpectOutputs(kept, {{2, 3}});
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{2}}));
}

TEST_F(BatcherTest, AFailingRequestDoesNotFailTheOthersInItsBatch) {
  StartHeld(Config(1000, 256));
  Reply* a = Submit({{1, 2}, {2, 2}});
  Reply* poisoned = Submit({{FakeBackend::kPoisonId, 2}});
  Reply* b = Submit({{3, 2}});
  batcher_->Shutdown();
  batcher_->Resume();
  ASSERT_TRUE(batcher_->Drain(seconds(1)));

  ExpectOutputs(a, {{1, 2}, {2, 2}});
  ExpectError(poisoned, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(poisoned->result().status().message(), "poisoned input");
  ExpectOutputs(b, {{3, 2}});
  // The shared batch failed, then each request ran on its own.
  EXPECT_EQ(backend_.batches(),
            (std::vector<std::vector<int32_t>>{
                {1, 2, FakeBackend::kPoisonId, 3}, {1, 2}, {FakeBackend::kPoisonId}, {3}}));
}

TEST_F(BatcherTest, ShutdownRunsQueuedWorkAndRefusesNewWork) {
  StartBatcher(Config(1000, 256));
  backend_.Hold();
  Reply* a = Submit({{1, 2}});
  ASSERT_TRUE(backend_.AwaitStarted(1));
  Reply* b = Submit({{2, 2}});  // queued behind the running batch
  batcher_->Shutdown();
  absl::Status status;
  Reply* late = Submit({{3, 2}}, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  backend_.Release();
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  ExpectOutputs(a, {{1, 2}});
  ExpectOutputs(b, {{2, 2}});
  EXPECT_EQ(late->calls(), 0);
}

TEST_F(BatcherTest, DrainGivesUpAtItsTimeoutAndAnswersWhatIsStillQueued) {
  StartBatcher(Config(4, 256));
  backend_.Hold();
  Reply* running = Submit({{1, 4}});
  ASSERT_TRUE(backend_.AwaitStarted(1));
  Reply* queued = Submit({{2, 4}});
  Reply* queued_too = Submit({{3, 2}});
  batcher_->Shutdown();

  const core::Clock::time_point give_up_at = clock_.Now() + seconds(1);
  std::future<bool> drained =
      std::async(std::launch::async, [this] { return batcher_->Drain(seconds(1)); });
  ASSERT_TRUE(clock_.AwaitWaitUntil(give_up_at));
  clock_.Advance(seconds(1));
  ASSERT_EQ(drained.wait_for(seconds(20)), std::future_status::ready);
  EXPECT_FALSE(drained.get());
  ExpectError(queued, absl::StatusCode::kUnavailable);
  ExpectError(queued_too, absl::StatusCode::kUnavailable);

  backend_.Release();  // the running batch still completes
  ExpectOutputs(running, {{1, 4}});
  batcher_.reset();
  EXPECT_EQ(backend_.batches(), (std::vector<std::vector<int32_t>>{{1}}));
}

TEST_F(BatcherTest, AnUnstartedBatcherAnswersItsQueueWhenDestroyed) {
  batcher_ = std::make_unique<core::Batcher>(Config(1000, 256), &backend_, &clock_);
  Reply* reply = Submit({{1, 2}});
  batcher_.reset();
  ExpectError(reply, absl::StatusCode::kUnavailable);
  EXPECT_TRUE(backend_.batches().empty());
}

TEST_F(BatcherTest, ReportsQueueAndBatchesToTheObserver) {
  StartHeld(Config(1000, 256));
  Submit({{1, 2}, {2, 3}});
  Submit({{3, 4}});
  EXPECT_EQ(observer_.queued_requests.load(), 2);
  EXPECT_EQ(observer_.queued_tokens.load(), 9);
  batcher_->Shutdown();
  batcher_->Resume();
  ASSERT_TRUE(batcher_->Drain(seconds(1)));
  EXPECT_EQ(observer_.queued_requests.load(), 0);
  EXPECT_EQ(observer_.queued_tokens.load(), 0);
  EXPECT_EQ(observer_.dequeued.load(), 2);
  EXPECT_EQ(observer_.batch_count.load(), 1);
  EXPECT_EQ(observer_.batch_inputs.load(), 3);
  EXPECT_EQ(observer_.batch_tokens.load(), 9);
}

}  // namespace
}  // namespace server
