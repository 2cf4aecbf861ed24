#include "server/http/connection_hub.h"

#include <boost/asio/post.hpp>
#include <utility>

namespace server::http {

ConnectionHub::ConnectionHub(const HttpOptions& options, HttpMetrics* metrics)
    : options_(options), metrics_(metrics), workers_(static_cast<size_t>(options.threads)) {}

void ConnectionHub::Post(std::function<void()> work) {
  boost::asio::post(workers_, std::move(work));
}

void ConnectionHub::Add(const std::shared_ptr<Connection>& connection) {
  common::MutexLock lock(&mu_);
  live_.emplace(connection.get(), connection);
  metrics_->ConnectionOpened();
}

void ConnectionHub::Remove(const Connection* connection) {
  common::MutexLock lock(&mu_);
  if (live_.erase(connection) > 0) metrics_->ConnectionClosed();
  changed_.SignalAll();
}

int ConnectionHub::open() const {
  common::MutexLock lock(&mu_);
  return static_cast<int>(live_.size());
}

std::vector<std::shared_ptr<Connection>> ConnectionHub::Live() const {
  common::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Connection>> live;
  live.reserve(live_.size());
  for (const auto& [key, weak] : live_) {
    if (std::shared_ptr<Connection> connection = weak.lock()) live.push_back(std::move(connection));
  }
  return live;
}

bool ConnectionHub::TryHandOver() {
  common::MutexLock lock(&mu_);
  if (stopping_) return false;
  ++requests_;
  return true;
}

void ConnectionHub::set_stopping() {
  // Under the lock: a hand-over either counted before this, so that Stop()
  // waits for it, or sees stopping and does not happen.
  common::MutexLock lock(&mu_);
  stopping_ = true;
}

void ConnectionHub::RequestAnswered() {
  common::MutexLock lock(&mu_);
  --requests_;
  changed_.SignalAll();
}

void ConnectionHub::AwaitNoRequests() {
  common::MutexLock lock(&mu_);
  while (requests_ > 0) changed_.Wait(&mu_);
}

bool ConnectionHub::AwaitNoConnections(std::chrono::steady_clock::time_point deadline) {
  common::MutexLock lock(&mu_);
  while (!live_.empty()) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) return live_.empty();
  }
  return true;
}

}  // namespace server::http
