// The engine's thread count: --threads when given, else OMP_NUM_THREADS when
// set, else the CPU budget (common/cpu_budget.h, tested in tests/common).
#include "engine/thread_count.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "engine/encoder.h"
#include "test_models.h"

namespace engine {
namespace {

// Sets (or with nullopt unsets) OMP_NUM_THREADS for one test; restores it.
class ScopedOmpNumThreads {
 public:
  explicit ScopedOmpNumThreads(std::optional<std::string> value) {
    if (const char* old = getenv("OMP_NUM_THREADS")) saved_ = old;
    if (value) {
      setenv("OMP_NUM_THREADS", value->c_str(), 1);
    } else {
      unsetenv("OMP_NUM_THREADS");
    }
  }
  ~ScopedOmpNumThreads() {
    if (saved_) {
      setenv("OMP_NUM_THREADS", saved_->c_str(), 1);
    } else {
      unsetenv("OMP_NUM_THREADS");
    }
  }

 private:
  std::optional<std::string> saved_;
};

int AffinityCpus() {
  cpu_set_t set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST(ThreadCountTest, OmpNumThreadsWins) {
  ScopedOmpNumThreads env("3");
  const ThreadCount count = DefaultThreadCount();
  EXPECT_EQ(count.threads, 3);
  EXPECT_EQ(count.reason, "OMP_NUM_THREADS=3");
}

TEST(ThreadCountTest, OmpNumThreadsListGivesItsFirstLevel) {
  ScopedOmpNumThreads env("4,2");
  EXPECT_EQ(DefaultThreadCount().threads, 4);
}

TEST(ThreadCountTest, WithoutOmpNumThreadsTheCpuBudget) {
  for (const std::optional<std::string>& value :
       {std::optional<std::string>(), std::optional<std::string>("0"),
        std::optional<std::string>("many"), std::optional<std::string>("")}) {
    ScopedOmpNumThreads env(value);
    const ThreadCount count = DefaultThreadCount();
    EXPECT_TRUE(absl::StartsWith(count.reason, "CPU affinity ")) << count.reason;
    EXPECT_GE(count.threads, 1);
    EXPECT_LE(count.threads, AffinityCpus());
  }
}

TEST(ThreadCountTest, AFlagValueIsTaken) {
  ScopedOmpNumThreads env("3");
  EXPECT_EQ(ResolveThreadCount(5), 5);
  EXPECT_EQ(ResolveThreadCount(0), 3);
}

TEST(ThreadCountTest, TheEncoderRunsOnTheResolvedCount) {
  const std::string dir = testing::WriteTinyModel("thread_count");
  ScopedOmpNumThreads env("1");
  EncoderOptions options;
  options.threads = 3;
  absl::StatusOr<std::unique_ptr<Encoder>> explicit_threads = Encoder::Load(dir, options);
  ASSERT_TRUE(explicit_threads.ok()) << explicit_threads.status();
  EXPECT_EQ((*explicit_threads)->threads(), 3);
  options.threads = 0;
  absl::StatusOr<std::unique_ptr<Encoder>> default_threads = Encoder::Load(dir, options);
  ASSERT_TRUE(default_threads.ok()) << default_threads.status();
  EXPECT_EQ((*default_threads)->threads(), 1);
  EXPECT_EQ((*default_threads)->options().threads, 0);
}

}  // namespace
}  // namespace engine
