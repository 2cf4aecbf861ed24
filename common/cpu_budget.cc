#include "common/cpu_budget.h"

#include <sched.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace common {
namespace {

namespace fs = std::filesystem;

// Whole contents of a small file (cgroup files are one line); nullopt when
// it cannot be opened.
std::optional<std::string> ReadCgroupTextFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The whitespace-separated words of `text`.
std::vector<std::string> CgroupFileWords(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// A whole decimal integer (sign allowed), or nullopt.
std::optional<int64_t> ParseCgroupInteger(const std::string& word) {
  int64_t value = 0;
  const char* end = word.data() + word.size();
  const auto [ptr, ec] = std::from_chars(word.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<CgroupCpuQuota> QuotaIfLimited(int64_t quota_us, int64_t period_us,
                                             const fs::path& file) {
  if (quota_us <= 0 || period_us <= 0) return std::nullopt;
  return CgroupCpuQuota{quota_us, period_us, file.string()};
}

// cgroup v2: cpu.max is "$MAX $PERIOD", $MAX "max" when unlimited.
std::optional<CgroupCpuQuota> ReadCgroupV2CpuMax(const fs::path& dir) {
  const fs::path file = dir / "cpu.max";
  const std::optional<std::string> text = ReadCgroupTextFile(file);
  if (!text) return std::nullopt;
  const std::vector<std::string> words = CgroupFileWords(*text);
  if (words.size() != 2 || words[0] == "max") return std::nullopt;
  const std::optional<int64_t> quota = ParseCgroupInteger(words[0]);
  const std::optional<int64_t> period = ParseCgroupInteger(words[1]);
  if (!quota || !period) return std::nullopt;
  return QuotaIfLimited(*quota, *period, file);
}

// cgroup v1: cpu.cfs_quota_us (-1 when unlimited) and cpu.cfs_period_us.
std::optional<CgroupCpuQuota> ReadCgroupV1CfsQuota(const fs::path& dir) {
  const fs::path file = dir / "cpu.cfs_quota_us";
  const std::optional<std::string> quota_text = ReadCgroupTextFile(file);
  const std::optional<std::string> period_text = ReadCgroupTextFile(dir / "cpu.cfs_period_us");
  if (!quota_text || !period_text) return std::nullopt;
  const std::vector<std::string> quota_words = CgroupFileWords(*quota_text);
  const std::vector<std::string> period_words = CgroupFileWords(*period_text);
  if (quota_words.size() != 1 || period_words.size() != 1) return std::nullopt;
  const std::optional<int64_t> quota = ParseCgroupInteger(quota_words[0]);
  const std::optional<int64_t> period = ParseCgroupInteger(period_words[0]);
  if (!quota || !period) return std::nullopt;
  return QuotaIfLimited(*quota, *period, file);
}

using CgroupQuotaReader = std::optional<CgroupCpuQuota> (*)(const fs::path&);

void KeepTighterCpuQuota(const std::optional<CgroupCpuQuota>& candidate,
                         std::optional<CgroupCpuQuota>* tightest) {
  if (candidate && (!*tightest || candidate->cpus() < (*tightest)->cpus())) *tightest = candidate;
}

// A parent's quota caps its children, so every level from the process's
// cgroup up to the mount counts. Levels that do not exist are skipped: in a
// container without its own cgroup namespace the path names the host's
// hierarchy while the mount shows only the container's cgroup.
void ReadCgroupQuotasUpTo(const fs::path& mount, const std::string& cgroup_path,
                          CgroupQuotaReader read, std::optional<CgroupCpuQuota>* tightest) {
  const fs::path relative = fs::path(cgroup_path).relative_path().lexically_normal();
  fs::path dir = mount;
  std::vector<fs::path> levels = {dir};
  for (const fs::path& part : relative) {
    if (part == ".." || part == ".") return;  // not a path a kernel writes
    if (part.empty()) continue;
    dir /= part;
    levels.push_back(dir);
  }
  for (const fs::path& level : levels) KeepTighterCpuQuota(read(level), tightest);
}

// True when the comma-separated controller list of a v1 line holds "cpu".
bool ListsCpuController(const std::string& controllers) {
  std::istringstream in(controllers);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == "cpu") return true;
  }
  return false;
}

}  // namespace

std::optional<CgroupCpuQuota> ReadCgroupCpuQuota(const std::string& root) {
  const std::optional<std::string> membership =
      ReadCgroupTextFile(fs::path(root) / "proc/self/cgroup");
  if (!membership) return std::nullopt;
  const fs::path cgroup_root = fs::path(root) / "sys/fs/cgroup";
  std::optional<CgroupCpuQuota> tightest;
  std::istringstream lines(*membership);
  // Lines are "hierarchy-ID:controller-list:cgroup-path"; v2's is "0::path".
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      ReadCgroupQuotasUpTo(cgroup_root, path, ReadCgroupV2CpuMax, &tightest);
    } else if (ListsCpuController(controllers)) {
      // Mounted as "cpu,cpuacct" (the line's own spelling) or as "cpu".
      std::error_code ec;
      const fs::path named = cgroup_root / controllers;
      const fs::path mount = fs::is_directory(named, ec) ? named : cgroup_root / "cpu";
      ReadCgroupQuotasUpTo(mount, path, ReadCgroupV1CfsQuota, &tightest);
    }
  }
  return tightest;
}

int AffinityCpuCount() {
  // cpu_set_t holds 1024 CPUs; larger machines need a larger set.
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) return 1;
    const size_t size = CPU_ALLOC_SIZE(cpus);
    const int count = sched_getaffinity(0, size, set) == 0 ? CPU_COUNT_S(size, set) : -1;
    CPU_FREE(set);
    if (count > 0) return count;
    if (errno != EINVAL) return 1;
  }
  return 1;
}

int CpuBudget::threads() const {
  int threads = affinity_cpus;
  if (quota) {
    const int64_t quota_cpus = (quota->quota_us + quota->period_us - 1) / quota->period_us;
    if (quota_cpus < threads) threads = static_cast<int>(quota_cpus);
  }
  return threads < 1 ? 1 : threads;
}

std::string CpuBudget::Describe() const {
  std::string text = "CPU affinity " + std::to_string(affinity_cpus) +
                     (affinity_cpus == 1 ? " CPU" : " CPUs") + ", cgroup quota ";
  if (!quota) return text + "none";
  char cpus[32];
  std::snprintf(cpus, sizeof(cpus), "%g", quota->cpus());
  return text + cpus + (quota->cpus() == 1.0 ? " CPU" : " CPUs") + " (" + quota->file + ")";
}

CpuBudget DetectCpuBudget() {
  CpuBudget budget;
  budget.affinity_cpus = AffinityCpuCount();
  budget.quota = ReadCgroupCpuQuota("/");
  return budget;
}

}  // namespace common
