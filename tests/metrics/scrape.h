// Reads /metrics the way Prometheus does, over a real TCP socket, and parses
// the text exposition format into samples keyed by canonical series names.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace server {

// `name{a="1",b="2"}` with the labels sorted by name; `name` without labels.
std::string SeriesKey(const std::string& name, const std::map<std::string, std::string>& labels);

struct Scrape {
  std::map<std::string, std::string> types;  // family name -> counter, gauge, histogram, ...
  std::map<std::string, double> samples;     // SeriesKey -> value
  // SeriesKey without its model label -> the sum over models (every
  // per-model series is labelled model="NAME").
  std::map<std::string, double> over_models;

  // The value of a series; fails the current test when it is missing.
  // `labels` without "model": the sum over the models (a one-model server's
  // series itself).
  double Value(const std::string& name,
               const std::map<std::string, std::string>& labels = {}) const;
  bool Has(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
};

// The body of GET http://127.0.0.1:port/path (HTTP/1.0, one connection).
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

absl::StatusOr<Scrape> ParseExposition(const std::string& text);

// HttpGet(port, "/metrics") parsed.
absl::StatusOr<Scrape> ScrapeMetrics(int port);

}  // namespace server
