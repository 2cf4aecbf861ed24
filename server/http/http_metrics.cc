#include "server/http/http_metrics.h"

namespace server::http {

HttpMetrics::HttpMetrics(prometheus::Registry& registry) {
  open_ = &prometheus::BuildGauge()
               .Name("encoder_http_connections")
               .Help("HTTP connections open now (idle keep-alive ones included)")
               .Register(registry)
               .Add({});
  refused_ = &prometheus::BuildCounter()
                  .Name("encoder_http_connections_refused_total")
                  .Help("HTTP connections answered 503 and closed past --http-max-connections")
                  .Register(registry)
                  .Add({});
  auto& timeouts = prometheus::BuildCounter()
                       .Name("encoder_http_timeouts_total")
                       .Help(
                           "HTTP connections closed by a timeout, by the phase it ended "
                           "(header and body: 408; write and idle: closed)")
                       .Register(registry);
  const char* phases[] = {"header", "body", "write", "idle"};
  for (int i = 0; i < 4; ++i) timeouts_[i] = &timeouts.Add({{"phase", phases[i]}});
  client_left_ = &prometheus::BuildCounter()
                      .Name("encoder_http_clients_left_total")
                      .Help(
                          "HTTP clients that closed their connection while their request was "
                          "with the service (the request is cancelled if not yet computed)")
                      .Register(registry)
                      .Add({});
}

void HttpMetrics::TimedOut(Timeout phase) { timeouts_[static_cast<int>(phase)]->Increment(); }

}  // namespace server::http
