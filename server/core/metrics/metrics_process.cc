#include "server/core/metrics/metrics_process.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "common/version.h"

namespace server::core {
namespace {

// The fields of /proc/self/stat this collector reads (see proc(5)).
struct ProcStat {
  double user_ticks = 0;    // field 14, utime
  double system_ticks = 0;  // field 15, stime
  double start_ticks = 0;   // field 22, starttime: clock ticks after boot
  double rss_pages = 0;     // field 24, rss
};

bool ReadProcStat(ProcStat* stat) {
  std::ifstream file("/proc/self/stat");
  std::string line;
  if (!std::getline(file, line)) return false;
  // Field 2, the command name, is in parentheses and may hold spaces: count
  // fields after its closing parenthesis, where field 3 starts.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 2));
  std::string value;
  for (int field = 3; fields >> value; ++field) {
    if (field == 14) stat->user_ticks = std::stod(value);
    if (field == 15) stat->system_ticks = std::stod(value);
    if (field == 22) stat->start_ticks = std::stod(value);
    if (field == 24) {
      stat->rss_pages = std::stod(value);
      return true;
    }
  }
  return false;
}

// Boot time, Unix seconds: the "btime" line of /proc/stat.
bool ReadBootTime(double* seconds) {
  std::ifstream file("/proc/stat");
  std::string key;
  while (file >> key) {
    if (key == "btime") return static_cast<bool>(file >> *seconds);
    file.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return false;
}

double CountOpenFds() {
  std::error_code error;
  double count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", error), end; !error && it != end;
       it.increment(error)) {
    ++count;
  }
  // The iterator's own descriptor is one of them.
  return count > 0 ? count - 1 : 0;
}

prometheus::MetricFamily OneValue(const char* name, const char* help, prometheus::MetricType type,
                                  double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
  return family;
}

// encoder_build_info{version, revision} 1: which build answers (as
// Prometheus' own prometheus_build_info).
prometheus::MetricFamily BuildInfo() {
  prometheus::MetricFamily family = OneValue(
      "encoder_build_info", "The server's version (as --version says it) and git commit; always 1",
      prometheus::MetricType::Gauge, 1);
  family.metric.front().label = {{"version", common::Version()}, {"revision", common::Revision()}};
  return family;
}

}  // namespace

ProcessCollector::ProcessCollector() {
  ProcStat stat;
  double boot = 0;
  if (ReadProcStat(&stat) && ReadBootTime(&boot)) {
    start_time_seconds_ = boot + stat.start_ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  ProcStat stat;
  if (ReadProcStat(&stat)) {
    const auto ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
    families.push_back(OneValue("process_cpu_seconds_total",
                                "User and system CPU time spent, in seconds", MetricType::Counter,
                                (stat.user_ticks + stat.system_ticks) / ticks_per_second));
    families.push_back(OneValue("process_resident_memory_bytes", "Resident memory size, in bytes",
                                MetricType::Gauge,
                                stat.rss_pages * static_cast<double>(sysconf(_SC_PAGESIZE))));
  }
  if (start_time_seconds_ > 0) {
    families.push_back(OneValue("process_start_time_seconds",
                                "Start time of the process since the Unix epoch, in seconds",
                                MetricType::Gauge, start_time_seconds_));
  }
  families.push_back(
      OneValue("process_open_fds", "Open file descriptors", MetricType::Gauge, CountOpenFds()));
  families.push_back(BuildInfo());
  return families;
}

}  // namespace server::core
