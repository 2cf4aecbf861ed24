// How many CPUs this process may keep busy: the CPUs of its affinity mask
// (taskset, cpusets, Kubernetes' static CPU manager), capped by the CPU quota
// of its cgroup (docker --cpus, a Kubernetes CPU limit). The quota is time,
// not CPUs: a pod limited to 1 CPU on a 2-CPU node gets 2 CPUs' affinity,
// and a second thread only earns it throttled time slices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace common {

// A CFS bandwidth limit: `quota_us` of CPU time per `period_us`.
struct CgroupCpuQuota {
  int64_t quota_us = 0;
  int64_t period_us = 0;
  std::string file;  // where it was read, for the log

  double cpus() const { return static_cast<double>(quota_us) / static_cast<double>(period_us); }
};

// The tightest CPU quota on the process's cgroup path, read from the files
// under `root` ("/" on a live system; a directory of fake files in tests):
// root/proc/self/cgroup names the cgroup; cgroup v2's cpu.max ("max 100000",
// "150000 100000") and cgroup v1's cpu.cfs_quota_us / cpu.cfs_period_us are
// read in that cgroup's directory and each parent up to the mount under
// root/sys/fs/cgroup (a container sees its own cgroup as the mount's root).
// No quota, missing files and malformed contents: nullopt.
std::optional<CgroupCpuQuota> ReadCgroupCpuQuota(const std::string& root);

// The CPUs in this process's affinity mask (sched_getaffinity); 1 if it
// cannot be read.
int AffinityCpuCount();

struct CpuBudget {
  int affinity_cpus = 1;
  std::optional<CgroupCpuQuota> quota;

  // Affinity capped by the quota rounded up (1.5 CPUs: 2 threads), at least 1.
  int threads() const;
  // "CPU affinity 2 CPUs, cgroup quota none", or "..., cgroup quota 1.5 CPUs
  // (/sys/fs/cgroup/cpu.max)".
  std::string Describe() const;
};

// This process's budget: AffinityCpuCount and ReadCgroupCpuQuota("/").
CpuBudget DetectCpuBudget();

}  // namespace common
