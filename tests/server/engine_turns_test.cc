// The engine's turns between models: a FIFO gate, so that a model whose
// batcher starts waiting runs right after the batch in progress, however many
// batches the busy model has queued; and between layers, the shorter batch
// first. Ordering only, no timing assertions: the layered backend moves a
// fake clock by hand.
#include "server/core/batching/engine_turns.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/mutex.h"
#include "support/fake_backend.h"
#include "support/fake_clock.h"

namespace {

using server::core::EngineTurns;
using server::core::InputOutput;
using server::core::OutputSpec;
using server::core::TurnTakingBackend;
using testing_support::FakeBackend;
using testing_support::FakeClock;

// Appends its name to a shared log when the engine runs it, then runs
// `inner`.
class LoggingBackend : public server::core::Backend {
 public:
  LoggingBackend(std::string name, server::core::Backend* inner, common::Mutex* mu,
                 std::vector<std::string>* log)
      : name_(std::move(name)), inner_(inner), mu_(mu), log_(log) {}
  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) override {
    {
      common::MutexLock lock(mu_);
      log_->push_back(name_);
    }
    return inner_->Run(batch, specs, outputs);
  }

 private:
  const std::string name_;
  server::core::Backend* const inner_;
  common::Mutex* const mu_;
  std::vector<std::string>* const log_;
};

absl::Status RunOne(server::core::Backend* backend, int32_t id) {
  const std::vector<int32_t> ids = {id, 1, 2};
  const engine::Sequence sequence{ids, {}};
  const OutputSpec spec;
  std::vector<InputOutput> outputs;
  return backend->Run({&sequence, 1}, {&spec, 1}, &outputs);
}

// Bounded wait for `n` callers to be blocked in the gate.
bool AwaitWaiting(const EngineTurns& turns, int64_t n) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (turns.waiting() < n) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(EngineTurnsTest, AFreeGateIsTakenAtOnceAndAgain) {
  EngineTurns turns;
  for (int i = 0; i < 3; ++i) {
    turns.Acquire();
    EXPECT_EQ(turns.waiting(), 0);
    turns.Release();
  }
}

TEST(EngineTurnsTest, AnIdleModelsBatchRunsRightAfterTheBusyModelsCurrentBatch) {
  common::Mutex mu;
  std::vector<std::string> log;
  EngineTurns turns;
  FakeBackend engine_a, engine_b;
  LoggingBackend logged_a("A", &engine_a, &mu, &log), logged_b("B", &engine_b, &mu, &log);
  TurnTakingBackend model_a(&logged_a, &turns), model_b(&logged_b, &turns);

  // Model A has many batches queued: its worker runs them back to back; the
  // first is held in the engine.
  engine_a.Hold();
  std::thread busy([&] {
    for (int i = 1; i <= 4; ++i) EXPECT_TRUE(RunOne(&model_a, i).ok());
  });
  ASSERT_TRUE(engine_a.AwaitStarted(1));
  // Model B's one batch arrives while A's first runs: it waits at the gate.
  std::thread idle([&] { EXPECT_TRUE(RunOne(&model_b, 100).ok()); });
  ASSERT_TRUE(AwaitWaiting(turns, 1));
  engine_a.Release();
  busy.join();
  idle.join();

  common::MutexLock lock(&mu);
  EXPECT_EQ(log, (std::vector<std::string>{"A", "B", "A", "A", "A"}));
}

TEST(EngineTurnsTest, ALargeBatchRunsInPartsOfATurnEachWithOutputsInOrder) {
  common::Mutex mu;
  std::vector<std::string> log;
  EngineTurns turns;
  FakeBackend engine_a, engine_b;
  LoggingBackend logged_a("A", &engine_a, &mu, &log), logged_b("B", &engine_b, &mu, &log);
  // Parts of at most 4 tokens: three inputs of 3 tokens are three parts.
  TurnTakingBackend model_a(&logged_a, &turns, 4), model_b(&logged_b, &turns, 4);

  const std::vector<int32_t> ids1 = {1, 5, 6}, ids2 = {2, 5, 6}, ids3 = {3, 5, 6};
  const std::vector<engine::Sequence> batch = {{ids1, {}}, {ids2, {}}, {ids3, {}}};
  const std::vector<OutputSpec> specs(3);
  std::vector<InputOutput> outputs;
  engine_a.Hold();
  std::thread busy([&] { EXPECT_TRUE(model_a.Run(batch, specs, &outputs).ok()); });
  ASSERT_TRUE(engine_a.AwaitStarted(1));
  // B's batch arrives during A's first part: it runs after that part.
  std::thread idle([&] { EXPECT_TRUE(RunOne(&model_b, 100).ok()); });
  ASSERT_TRUE(AwaitWaiting(turns, 1));
  engine_a.Release();
  busy.join();
  idle.join();

  EXPECT_EQ(engine_a.batches(), (std::vector<std::vector<int32_t>>{{1}, {2}, {3}}));
  ASSERT_EQ(outputs.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(outputs[i].values[0], static_cast<float>(i + 1));
  common::MutexLock lock(&mu);
  EXPECT_EQ(log, (std::vector<std::string>{"A", "B", "A", "A"}));
}

TEST(EngineTurnsTest, WaitingModelsAreServedInArrivalOrderAndAlternate) {
  common::Mutex mu;
  std::vector<std::string> log;
  EngineTurns turns;
  FakeBackend engine_a, engine_b, engine_c;
  LoggingBackend logged_a("A", &engine_a, &mu, &log), logged_b("B", &engine_b, &mu, &log),
      logged_c("C", &engine_c, &mu, &log);
  TurnTakingBackend model_a(&logged_a, &turns), model_b(&logged_b, &turns),
      model_c(&logged_c, &turns);

  // A holds the engine; then B, then C start waiting, each with several
  // batches: the turns go A B C A B ... (each worker re-queues behind the
  // others after its batch).
  engine_a.Hold();
  std::thread a([&] {
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(RunOne(&model_a, i + 1).ok());
  });
  ASSERT_TRUE(engine_a.AwaitStarted(1));
  std::thread b([&] {
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(RunOne(&model_b, i + 1).ok());
  });
  ASSERT_TRUE(AwaitWaiting(turns, 1));
  std::thread c([&] {
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(RunOne(&model_c, i + 1).ok());
  });
  ASSERT_TRUE(AwaitWaiting(turns, 2));
  // Every run of B and C is held too, so that each worker is back at the
  // gate before the next turn starts.
  engine_b.Hold();
  engine_c.Hold();
  engine_a.Release();
  ASSERT_TRUE(engine_b.AwaitStarted(1));
  ASSERT_TRUE(AwaitWaiting(turns, 2));  // C and A wait
  engine_b.Release();
  ASSERT_TRUE(engine_c.AwaitStarted(1));
  ASSERT_TRUE(AwaitWaiting(turns, 2));  // A and B wait
  engine_c.Release();
  a.join();
  b.join();
  c.join();

  // After C's first turn nothing is held and the workers race for their next
  // tickets: only the turns taken in a known order are checked.
  common::MutexLock lock(&mu);
  ASSERT_EQ(log.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(log.begin(), log.begin() + 5),
            (std::vector<std::string>{"A", "B", "C", "A", "B"}));
  EXPECT_EQ(std::count(log.begin(), log.end(), "C"), 3);
}

// A model of `layers` layers, each taking `per_layer` on the fake clock;
// logs "<name><layer>" as each layer runs and calls the between-layers hook
// as the engine does. With Hold(), the first layer of the next run waits
// for Release().
class LayeredBackend : public server::core::Backend {
 public:
  LayeredBackend(std::string name, int layers, std::chrono::milliseconds per_layer,
                 FakeClock* clock, common::Mutex* log_mu, std::vector<std::string>* log)
      : name_(std::move(name)),
        layers_(layers),
        per_layer_(per_layer),
        clock_(clock),
        log_mu_(log_mu),
        log_(log) {}

  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) override {
    static_cast<void>(specs);
    for (int layer = 1; layer <= layers_; ++layer) {
      {
        common::MutexLock lock(log_mu_);
        log_->push_back(name_ + std::to_string(layer));
      }
      clock_->Advance(per_layer_);
      if (layer == 1) AwaitRelease();
      if (layer < layers_) between_layers_(layer, layers_);
    }
    outputs->assign(batch.size(), InputOutput{});
    return absl::OkStatus();
  }
  void SetBetweenLayers(engine::BetweenLayers between_layers) override {
    between_layers_ = std::move(between_layers);
  }

  void Hold() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    held_ = true;
    holding_ = false;
  }
  void Release() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    held_ = false;
    changed_.SignalAll();
  }
  // Bounded wait until a held run is in its first layer.
  bool AwaitHolding() ABSL_LOCKS_EXCLUDED(mu_) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    common::MutexLock lock(&mu_);
    while (!holding_) {
      if (changed_.WaitWithDeadline(&mu_, give_up)) return holding_;
    }
    return true;
  }

 private:
  void AwaitRelease() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    holding_ = true;
    changed_.SignalAll();
    while (held_) changed_.Wait(&mu_);
  }

  const std::string name_;
  const int layers_;
  const std::chrono::milliseconds per_layer_;
  FakeClock* const clock_;
  common::Mutex* const log_mu_;
  std::vector<std::string>* const log_;
  engine::BetweenLayers between_layers_;
  common::Mutex mu_;
  common::CondVar changed_;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  bool holding_ ABSL_GUARDED_BY(mu_) = false;
};

// Model "A" (3 layers of 10 ms a batch) and model "B" (2 layers of 1 ms),
// each run once alone so that the turns know what their batches take.
class ShortestFirstTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RunOne(&model_a_, 1).ok());
    ASSERT_TRUE(RunOne(&model_b_, 1).ok());
    common::MutexLock lock(&mu_);
    log_.clear();
  }

  // Holds `first`'s next batch in its first layer, starts `second`'s while
  // it is held, then lets both finish; returns the layers in the order run.
  std::vector<std::string> RunBeside(LayeredBackend& first_engine, server::core::Backend* first,
                                     server::core::Backend* second) {
    first_engine.Hold();
    std::thread running([&] { EXPECT_TRUE(RunOne(first, 2).ok()); });
    EXPECT_TRUE(first_engine.AwaitHolding());
    std::thread waiting([&] { EXPECT_TRUE(RunOne(second, 3).ok()); });
    EXPECT_TRUE(AwaitWaiting(turns_, 1));
    first_engine.Release();
    running.join();
    waiting.join();
    common::MutexLock lock(&mu_);
    return log_;
  }

  FakeClock clock_;
  EngineTurns turns_{&clock_};
  common::Mutex mu_;
  std::vector<std::string> log_;
  LayeredBackend engine_a_{"A", 3, std::chrono::milliseconds(10), &clock_, &mu_, &log_};
  LayeredBackend engine_b_{"B", 2, std::chrono::milliseconds(1), &clock_, &mu_, &log_};
  TurnTakingBackend model_a_{&engine_a_, &turns_};
  TurnTakingBackend model_b_{&engine_b_, &turns_};
};

TEST_F(ShortestFirstTest, AShorterBatchRunsAtTheNextLayerBoundaryAndTheLongerOneResumesAfter) {
  // A still needs 20 ms after its first layer, B's batch 2 ms: B runs whole
  // (A, resumed, does not cut back in), then A's last two layers.
  EXPECT_EQ(RunBeside(engine_a_, &model_a_, &model_b_),
            (std::vector<std::string>{"A1", "B1", "B2", "A2", "A3"}));
  // The time A gave away is its wait for a turn, not engine time.
  EXPECT_EQ(model_a_.last_turn_wait(), std::chrono::milliseconds(2));
}

TEST_F(ShortestFirstTest, ALongerBatchWaitsForTheRunningShorterOne) {
  // B still needs 1 ms after its first layer, A's batch 30 ms: no yield.
  EXPECT_EQ(RunBeside(engine_b_, &model_b_, &model_a_),
            (std::vector<std::string>{"B1", "B2", "A1", "A2", "A3"}));
  EXPECT_EQ(model_b_.last_turn_wait(), std::chrono::milliseconds(0));
}

TEST(EngineTurnsYieldTest, ABatchOfAModelNotYetTimedCountsAsShort) {
  FakeClock clock;
  EngineTurns turns(&clock);
  turns.Acquire(&clock);
  // Nobody waits: nothing to yield to.
  EXPECT_FALSE(turns.YieldToWaiting(&clock, std::chrono::milliseconds(5)));
  std::thread newcomer([&] {
    turns.Acquire(&turns);  // expects 0: unknown
    turns.Release();
  });
  ASSERT_TRUE(AwaitWaiting(turns, 1));
  EXPECT_TRUE(turns.YieldToWaiting(&clock, std::chrono::milliseconds(5)));
  newcomer.join();
  turns.Release();
  EXPECT_EQ(turns.waiting(), 0);
}

}  // namespace
