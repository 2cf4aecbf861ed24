// What `encoder-client bench` is told; main.cc fills it from flags.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace client {

struct BenchOptions {
  // Closed loop (rate == 0): `concurrency` calls kept in flight, each
  // followed by the next as soon as it is answered (0: 8).
  // Open loop (rate > 0): calls start at Poisson arrival times, `rate` per
  // second on average, whatever the answers; `concurrency` caps the calls in
  // flight (0: 1024) and, when the cap holds a call back, the wait shows in
  // its latency (measured from its intended start).
  int concurrency = 0;
  double rate = 0;
  std::chrono::milliseconds duration{10000};  // how long calls are started
  int inputs_per_request = 1;
  // Texts: one per line of this file, taken in order and round again; empty:
  // synthetic texts of min_words..max_words words (uniform).
  std::string input_file;
  int min_words = 4;
  int max_words = 16;
  std::string pooling;  // as for encode
  bool normalize = false;
  bool truncate = false;
  // This fraction of calls carries an empty text, which the server refuses
  // with INVALID_ARGUMENT: to exercise error paths, metrics and alerts.
  double invalid_fraction = 0;
  // With repeat_fraction > 0, this fraction of calls sends the same request
  // (the first), and every other call texts no call sent before (each text
  // prefixed with words that spell the call's index): a result cache's hit
  // rate (bench/cache).
  double repeat_fraction = 0;
  int connections = 1;   // HTTP/2 connections the calls are spread over
  uint64_t seed = 1;     // texts, arrivals and invalid calls are reproducible
  bool json = false;     // the report as one JSON object
  bool progress = true;  // a live line on stderr, when stderr is a terminal
};

// The options with concurrency's default filled in for the mode.
inline BenchOptions WithDefaults(BenchOptions options) {
  if (options.concurrency <= 0) options.concurrency = options.rate > 0 ? 1024 : 8;
  return options;
}

}  // namespace client
