// The engine's turns between models: a FIFO gate, so that a model whose
// batcher starts waiting runs right after the batch in progress, however many
// batches the busy model has queued. Ordering only, no timing assertions.
#include "server/core/engine_turns.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/mutex.h"
#include "support/fake_backend.h"

namespace {

using server::EngineTurns;
using server::InputOutput;
using server::OutputSpec;
using server::TurnTakingBackend;
using testing_support::FakeBackend;

// Appends its name to a shared log when the engine runs it, then runs
// `inner`.
class LoggingBackend : public server::Backend {
 public:
  LoggingBackend(std::string name, server::Backend* inner, common::Mutex* mu,
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
  server::Backend* const inner_;
  common::Mutex* const mu_;
  std::vector<std::string>* const log_;
};

absl::Status RunOne(server::Backend* backend, int32_t id) {
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

TEST(EngineTurnsTest, PartsAreSmallOnlyWhileAnotherModelIsActive) {
  EngineTurns turns;
  FakeBackend engine_a, engine_b;
  // Parts of 6 tokens, or of 3 while another model is active (a turn of
  // its ended within the hour: no timing in this test).
  TurnTakingBackend model_a(&engine_a, &turns, 6, 3, std::chrono::hours(1));
  TurnTakingBackend model_b(&engine_b, &turns, 6, 3, std::chrono::hours(1));
  const std::vector<int32_t> ids1 = {1, 5, 6}, ids2 = {2, 5, 6}, ids3 = {3, 5, 6};
  const std::vector<engine::Sequence> batch = {{ids1, {}}, {ids2, {}}, {ids3, {}}};
  const std::vector<OutputSpec> specs(3);
  std::vector<InputOutput> outputs;

  // B has never had a turn: A's parts are of 6 tokens (two inputs).
  ASSERT_TRUE(model_a.Run(batch, specs, &outputs).ok());
  EXPECT_EQ(engine_a.batches(), (std::vector<std::vector<int32_t>>{{1, 2}, {3}}));
  // A's own turns do not count: still parts of 6.
  ASSERT_TRUE(model_a.Run(batch, specs, &outputs).ok());
  EXPECT_EQ(engine_a.batches().size(), 4u);

  // Once B has had a turn, A's parts are of 3 tokens (one input each).
  ASSERT_TRUE(RunOne(&model_b, 100).ok());
  ASSERT_TRUE(model_a.Run(batch, specs, &outputs).ok());
  const std::vector<std::vector<int32_t>> batches = engine_a.batches();
  EXPECT_EQ(std::vector<std::vector<int32_t>>(batches.begin() + 4, batches.end()),
            (std::vector<std::vector<int32_t>>{{1}, {2}, {3}}));
  ASSERT_EQ(outputs.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(outputs[i].values[0], static_cast<float>(i + 1));
}

}  // namespace
