// API keys: when any is set, every call but health and /metrics must carry
// one (Authorization: Bearer KEY on HTTP, `authorization: Bearer KEY`
// metadata on gRPC). Keys are kept only as SHA-256 digests and compared in
// constant time (the time taken says nothing about how much of a key was
// right, nor which key matched); they are never logged.
#pragma once

#include <array>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace server::core {

class ApiKeys {
 public:
  ApiKeys() = default;  // no keys: authentication off
  explicit ApiKeys(const std::vector<std::string>& keys);

  bool enabled() const { return !digests_.empty(); }

  // Whether `authorization` (the header's or metadata's value, e.g.
  // "Bearer KEY") carries a valid key. Always true when not enabled.
  bool Accepts(absl::string_view authorization) const;

 private:
  std::vector<std::array<unsigned char, 32>> digests_;
};

// The keys from --api-key values, the lines of --api-keys-file (blank lines
// and lines starting with '#' skipped, surrounding spaces trimmed) and the
// comma-separated value of ENCODER_API_KEYS (already split by the caller).
// INVALID_ARGUMENT when the file cannot be read or a key has spaces inside.
absl::StatusOr<std::vector<std::string>> CollectApiKeys(const std::vector<std::string>& flag_keys,
                                                        const std::string& keys_file);

}  // namespace server::core
