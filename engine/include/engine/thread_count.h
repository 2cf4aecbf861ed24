// How many OpenMP threads the engine runs a batch on when
// EncoderOptions::threads is 0: what the process may keep busy, not the
// machine's core count (common/cpu_budget.h).
#pragma once

#include <string>

namespace engine {

struct ThreadCount {
  int threads = 1;
  // Why: "OMP_NUM_THREADS=3" or "CPU affinity 2 CPUs, cgroup quota none".
  std::string reason;
};

// OMP_NUM_THREADS (its first number) when the user set it, else the CPUs of
// the affinity mask capped by the cgroup CPU quota, rounded up.
ThreadCount DefaultThreadCount();

// `requested` when positive, else DefaultThreadCount().threads.
int ResolveThreadCount(int requested);

}  // namespace engine
