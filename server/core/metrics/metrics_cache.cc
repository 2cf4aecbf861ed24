// ServerMetrics' result-cache series (result_cache.h), labelled by model like
// the others. Made only when --cache-bytes is above 0.
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include "server/core/metrics/metrics.h"

namespace server::core {

void ServerMetrics::AddCacheSeries() {
  if (cache_hits_ != nullptr) return;
  prometheus::Registry& registry = *registry_;
  const prometheus::Labels labels = {{"model", model_}};
  cache_hits_ = &prometheus::BuildCounter()
                     .Name("encoder_cache_hits_total")
                     .Help("Inputs answered from the result cache")
                     .Register(registry)
                     .Add(labels);
  cache_misses_ = &prometheus::BuildCounter()
                       .Name("encoder_cache_misses_total")
                       .Help("Inputs looked up in the result cache and sent to the engine")
                       .Register(registry)
                       .Add(labels);
  cache_coalesced_ = &prometheus::BuildCounter()
                          .Name("encoder_cache_coalesced_total")
                          .Help("Inputs that waited for an identical input already being computed")
                          .Register(registry)
                          .Add(labels);
  cache_evictions_ = &prometheus::BuildCounter()
                          .Name("encoder_cache_evictions_total")
                          .Help("Result cache entries evicted (least recently used first)")
                          .Register(registry)
                          .Add(labels);
  cache_bytes_ = &prometheus::BuildGauge()
                      .Name("encoder_cache_bytes")
                      .Help(
                          "Bytes the result cache holds for this model (--cache-bytes bounds "
                          "all models' together)")
                      .Register(registry)
                      .Add(labels);
}

void ServerMetrics::CacheLookups(int64_t hits, int64_t misses, int64_t coalesced) {
  if (hits > 0) cache_hits_->Increment(static_cast<double>(hits));
  if (misses > 0) cache_misses_->Increment(static_cast<double>(misses));
  if (coalesced > 0) cache_coalesced_->Increment(static_cast<double>(coalesced));
}

void ServerMetrics::OnCacheBytes(int64_t delta) {
  if (cache_bytes_ != nullptr) cache_bytes_->Increment(static_cast<double>(delta));
}

void ServerMetrics::OnCacheEvicted() {
  if (cache_evictions_ != nullptr) cache_evictions_->Increment();
}

}  // namespace server::core
