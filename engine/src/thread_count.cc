#include "engine/thread_count.h"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "common/cpu_budget.h"

namespace engine {
namespace {

// The first number of OMP_NUM_THREADS ("4" or a nested list "4,2"), or 0
// when it is unset or not a positive number (libgomp ignores it then too).
int OmpNumThreadsFromEnvironment() {
  const char* value = std::getenv("OMP_NUM_THREADS");
  if (value == nullptr) return 0;
  while (*value == ' ' || *value == '\t') ++value;
  int threads = 0;
  const auto [end, ec] = std::from_chars(value, value + std::strlen(value), threads);
  if (ec != std::errc() || end == value) return 0;
  return threads > 0 ? threads : 0;
}

}  // namespace

ThreadCount DefaultThreadCount() {
  if (const int threads = OmpNumThreadsFromEnvironment(); threads > 0) {
    return {threads, "OMP_NUM_THREADS=" + std::to_string(threads)};
  }
  const common::CpuBudget budget = common::DetectCpuBudget();
  return {budget.threads(), budget.Describe()};
}

int ResolveThreadCount(int requested) {
  return requested > 0 ? requested : DefaultThreadCount().threads;
}

}  // namespace engine
