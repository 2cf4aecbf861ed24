// The requests `encoder-client bench` sends: built once before the run from
// a text file or synthetic texts, then reused (a call only reads one).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/bench_options.h"
#include "encoder/v1/encoder.pb.h"

namespace client {

// The file's non-empty lines (a trailing '\r' dropped). Errors name the file.
absl::StatusOr<std::vector<std::string>> ReadTextLines(const std::string& path);

// `count` texts of min_words..max_words words (uniform) drawn from a fixed
// list of common English words.
std::vector<std::string> SyntheticTexts(int count, int min_words, int max_words,
                                        std::mt19937_64& random);

// "4:16" -> {4, 16}; "8" -> {8, 8}.
absl::Status ParseWordRange(const std::string& text, int* min_words, int* max_words);

class BenchRequests {
 public:
  // Requests of `inputs_per_request` texts each, the texts taken in order
  // (the last request may wrap around to the first texts).
  BenchRequests(const std::vector<std::string>& texts, int inputs_per_request,
                encoder::v1::Pooling pooling, bool normalize, bool truncate,
                const std::string& model = "");

  // The i-th request, cycling.
  const encoder::v1::EncodeRequest& Next(uint64_t i) const {
    return requests_[i % requests_.size()];
  }
  // The i-th request with each text prefixed by three words that spell `i`
  // (and the input's place): no two calls' texts are the same.
  encoder::v1::EncodeRequest Unique(uint64_t i) const;
  // A request the server refuses (INVALID_ARGUMENT: its last input is empty).
  const encoder::v1::EncodeRequest& Invalid() const { return invalid_; }

 private:
  std::vector<encoder::v1::EncodeRequest> requests_;
  encoder::v1::EncodeRequest invalid_;
};

}  // namespace client
