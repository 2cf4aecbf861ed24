// The standard process_* metrics of Prometheus clients, read from /proc at
// each scrape: resident memory, CPU seconds, start time and open file
// descriptors; and the build's version. Linux only.
#pragma once

#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace server::core {

class ProcessCollector : public prometheus::Collectable {
 public:
  ProcessCollector();

  // process_resident_memory_bytes, process_cpu_seconds_total,
  // process_start_time_seconds, process_open_fds, and encoder_build_info
  // (common/version.h). A value /proc does not give (it always does on
  // Linux) leaves its family out of that scrape.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double start_time_seconds_ = 0;  // Unix time; fixed for the process's life
};

}  // namespace server::core
