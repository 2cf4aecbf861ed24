// common/cpu_budget.h over fake /proc and /sys/fs/cgroup trees in a scratch
// directory, and the affinity count against a mask this test sets.
#include "common/cpu_budget.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <string>

#include "support/files.h"

namespace common {
namespace {

class CgroupTree {
 public:
  // Writes `contents` at `relative` under the root, making its directories.
  void Write(const std::string& relative, const std::string& contents) {
    const std::filesystem::path path = std::filesystem::path(dir_.path()) / relative;
    std::filesystem::create_directories(path.parent_path());
    testing_support::WriteFile(path.string(), contents);
  }
  const std::string& root() const { return dir_.path(); }
  std::string Path(const std::string& relative) const { return root() + "/" + relative; }

 private:
  testing_support::TempDir dir_{"cpu_budget_"};
};

TEST(CgroupCpuQuotaTest, V2QuotaOfTheProcessCgroup) {
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  tree.Write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "150000 100000\n");
  const std::optional<CgroupCpuQuota> quota = ReadCgroupCpuQuota(tree.root());
  ASSERT_TRUE(quota.has_value());
  EXPECT_EQ(quota->quota_us, 150000);
  EXPECT_EQ(quota->period_us, 100000);
  EXPECT_DOUBLE_EQ(quota->cpus(), 1.5);
  EXPECT_EQ(quota->file, tree.Path("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max"));
}

TEST(CgroupCpuQuotaTest, V2MaxIsNoQuota) {
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "0::/user.slice\n");
  tree.Write("sys/fs/cgroup/user.slice/cpu.max", "max 100000\n");
  EXPECT_FALSE(ReadCgroupCpuQuota(tree.root()).has_value());
}

TEST(CgroupCpuQuotaTest, V2ParentQuotaCapsTheChild) {
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  tree.Write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  tree.Write("sys/fs/cgroup/kubepods/pod1/cpu.max", "100000 100000\n");
  tree.Write("sys/fs/cgroup/kubepods/cpu.max", "400000 100000\n");
  const std::optional<CgroupCpuQuota> quota = ReadCgroupCpuQuota(tree.root());
  ASSERT_TRUE(quota.has_value());
  EXPECT_DOUBLE_EQ(quota->cpus(), 1.0);
  EXPECT_EQ(quota->file, tree.Path("sys/fs/cgroup/kubepods/pod1/cpu.max"));
}

TEST(CgroupCpuQuotaTest, V2ContainerSeesItsCgroupAsTheMountRoot) {
  // Without a cgroup namespace the path names the host's hierarchy, which
  // the container's mount does not show.
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "0::/system.slice/docker-abc.scope\n");
  tree.Write("sys/fs/cgroup/cpu.max", "50000 100000\n");
  const std::optional<CgroupCpuQuota> quota = ReadCgroupCpuQuota(tree.root());
  ASSERT_TRUE(quota.has_value());
  EXPECT_DOUBLE_EQ(quota->cpus(), 0.5);
}

TEST(CgroupCpuQuotaTest, V1CfsQuota) {
  CgroupTree tree;
  tree.Write("proc/self/cgroup",
             "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n");
  tree.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "200000\n");
  tree.Write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  const std::optional<CgroupCpuQuota> quota = ReadCgroupCpuQuota(tree.root());
  ASSERT_TRUE(quota.has_value());
  EXPECT_EQ(quota->quota_us, 200000);
  EXPECT_EQ(quota->period_us, 100000);
  EXPECT_EQ(quota->file, tree.Path("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us"));
}

TEST(CgroupCpuQuotaTest, V1ControllerMountedAsCpu) {
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "4:cpuacct,cpu:/\n");
  tree.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "25000\n");
  tree.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  const std::optional<CgroupCpuQuota> quota = ReadCgroupCpuQuota(tree.root());
  ASSERT_TRUE(quota.has_value());
  EXPECT_DOUBLE_EQ(quota->cpus(), 0.25);
}

TEST(CgroupCpuQuotaTest, HybridWithSeparateCpuAndCpuacctMounts) {
  // systemd's hybrid layout: each v1 controller mounted alone, v2 at
  // unified/ with no controllers (so no cpu.max).
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "4:memory:/a\n2:cpuacct:/\n1:cpu:/\n0::/\n");
  tree.Write("sys/fs/cgroup/cpuacct/cpuacct.usage", "123\n");
  tree.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "50000\n");
  tree.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  tree.Write("sys/fs/cgroup/unified/cgroup.controllers", "\n");
  const std::optional<CgroupCpuQuota> quota = ReadCgroupCpuQuota(tree.root());
  ASSERT_TRUE(quota.has_value());
  EXPECT_DOUBLE_EQ(quota->cpus(), 0.5);
  EXPECT_EQ(quota->file, tree.Path("sys/fs/cgroup/cpu/cpu.cfs_quota_us"));
}

TEST(CgroupCpuQuotaTest, V1MinusOneIsNoQuota) {
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "4:cpu,cpuacct:/\n");
  tree.Write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  tree.Write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_FALSE(ReadCgroupCpuQuota(tree.root()).has_value());
}

TEST(CgroupCpuQuotaTest, HybridHierarchiesTakeTheTighterQuota) {
  CgroupTree tree;
  tree.Write("proc/self/cgroup", "4:cpu,cpuacct:/a\n0::/b\n");
  tree.Write("sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_quota_us", "300000\n");
  tree.Write("sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_period_us", "100000\n");
  tree.Write("sys/fs/cgroup/b/cpu.max", "100000 50000\n");
  const std::optional<CgroupCpuQuota> quota = ReadCgroupCpuQuota(tree.root());
  ASSERT_TRUE(quota.has_value());
  EXPECT_DOUBLE_EQ(quota->cpus(), 2.0);
}

TEST(CgroupCpuQuotaTest, MissingFilesAreNoQuota) {
  CgroupTree nothing;
  EXPECT_FALSE(ReadCgroupCpuQuota(nothing.root()).has_value());

  CgroupTree membership_only;
  membership_only.Write("proc/self/cgroup", "0::/kubepods/pod1\n");
  EXPECT_FALSE(ReadCgroupCpuQuota(membership_only.root()).has_value());

  CgroupTree v1_without_period;
  v1_without_period.Write("proc/self/cgroup", "4:cpu:/\n");
  v1_without_period.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "50000\n");
  EXPECT_FALSE(ReadCgroupCpuQuota(v1_without_period.root()).has_value());
}

TEST(CgroupCpuQuotaTest, MalformedContentsAreNoQuota) {
  for (const char* cpu_max : {"", "100000", "abc 100000", "100000 abc", "1.5 100000", "100000 0",
                              "-5 100000", "0 100000", "100000 100000 7"}) {
    CgroupTree tree;
    tree.Write("proc/self/cgroup", "0::/\n");
    tree.Write("sys/fs/cgroup/cpu.max", cpu_max);
    EXPECT_FALSE(ReadCgroupCpuQuota(tree.root()).has_value()) << "cpu.max: " << cpu_max;
  }
  for (const char* cfs_quota : {"12x", "", "1 2"}) {
    CgroupTree tree;
    tree.Write("proc/self/cgroup", "4:cpu:/\n");
    tree.Write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", cfs_quota);
    tree.Write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    EXPECT_FALSE(ReadCgroupCpuQuota(tree.root()).has_value()) << "cfs_quota_us: " << cfs_quota;
  }
  CgroupTree garbled_membership;
  garbled_membership.Write("proc/self/cgroup", "no colons here\n0:/x\n");
  garbled_membership.Write("sys/fs/cgroup/cpu.max", "100000 100000\n");
  EXPECT_FALSE(ReadCgroupCpuQuota(garbled_membership.root()).has_value());
}

CpuBudget Budget(int affinity, int64_t quota_us, int64_t period_us) {
  CpuBudget budget;
  budget.affinity_cpus = affinity;
  if (quota_us > 0) budget.quota = CgroupCpuQuota{quota_us, period_us, "/q/cpu.max"};
  return budget;
}

TEST(CpuBudgetTest, ThreadsAreTheAffinityCappedByTheQuotaRoundedUp) {
  EXPECT_EQ(Budget(2, 0, 0).threads(), 2);
  EXPECT_EQ(Budget(2, 150000, 100000).threads(), 2);
  EXPECT_EQ(Budget(8, 150000, 100000).threads(), 2);
  EXPECT_EQ(Budget(8, 100000, 100000).threads(), 1);
  EXPECT_EQ(Budget(8, 100001, 100000).threads(), 2);
  EXPECT_EQ(Budget(2, 20000, 100000).threads(), 1);
  EXPECT_EQ(Budget(1, 400000, 100000).threads(), 1);
  EXPECT_EQ(Budget(0, 0, 0).threads(), 1);
}

TEST(CpuBudgetTest, DescribesBothSources) {
  EXPECT_EQ(Budget(2, 0, 0).Describe(), "CPU affinity 2 CPUs, cgroup quota none");
  EXPECT_EQ(Budget(1, 0, 0).Describe(), "CPU affinity 1 CPU, cgroup quota none");
  EXPECT_EQ(Budget(8, 150000, 100000).Describe(),
            "CPU affinity 8 CPUs, cgroup quota 1.5 CPUs (/q/cpu.max)");
  EXPECT_EQ(Budget(8, 100000, 100000).Describe(),
            "CPU affinity 8 CPUs, cgroup quota 1 CPU (/q/cpu.max)");
}

TEST(CpuBudgetTest, AffinityCountFollowsTheMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const int pinned = AffinityCpuCount();
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(pinned, 1);
  EXPECT_EQ(AffinityCpuCount(), CPU_COUNT(&saved));
}

}  // namespace
}  // namespace common
