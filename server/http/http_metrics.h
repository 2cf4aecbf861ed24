// What the HTTP adapter's connections export, beside the requests' own
// series (encoder_requests_total and friends, transport="http"): how many
// connections are open, how many were refused past --http-max-connections,
// how many each timeout closed, and how many clients left while their request
// was with the core. Families are built once; each child is
// kept, so counting is one atomic add.
#pragma once

#include <memory>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace server::http {

class HttpMetrics {
 public:
  enum class Timeout { kHeader, kBody, kWrite, kIdle };

  explicit HttpMetrics(prometheus::Registry& registry);

  void ConnectionOpened() { open_->Increment(); }
  void ConnectionClosed() { open_->Decrement(); }
  void ConnectionRefused() { refused_->Increment(); }
  void TimedOut(Timeout phase);
  void ClientLeft() { client_left_->Increment(); }

 private:
  prometheus::Gauge* open_;
  prometheus::Counter* refused_;
  prometheus::Counter* timeouts_[4];
  prometheus::Counter* client_left_;
};

}  // namespace server::http
