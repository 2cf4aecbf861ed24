#include "server/core/api/api_keys.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace server::core {
namespace {

std::array<unsigned char, 32> Digest(absl::string_view text) {
  std::array<unsigned char, 32> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return digest;
}

}  // namespace

ApiKeys::ApiKeys(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) digests_.push_back(Digest(key));
}

bool ApiKeys::Accepts(absl::string_view authorization) const {
  if (digests_.empty()) return true;
  // The scheme is case-insensitive (RFC 7235); anything else is no key.
  constexpr absl::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  // Digests have one length whatever the key's, and every key is compared.
  const std::array<unsigned char, 32> presented =
      Digest(absl::StripAsciiWhitespace(authorization.substr(kScheme.size())));
  bool match = false;
  for (const auto& digest : digests_) {
    match |= CRYPTO_memcmp(digest.data(), presented.data(), digest.size()) == 0;
  }
  return match;
}

absl::StatusOr<std::vector<std::string>> CollectApiKeys(const std::vector<std::string>& flag_keys,
                                                        const std::string& keys_file) {
  std::vector<std::string> keys;
  const auto add = [&keys](absl::string_view key, const std::string& where) -> absl::Status {
    key = absl::StripAsciiWhitespace(key);
    if (key.empty()) return absl::OkStatus();
    for (char c : key) {
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
        return absl::InvalidArgumentError(
            absl::StrCat("an API key in ", where, " has a space inside (keys are one word)"));
      }
    }
    keys.emplace_back(key);
    return absl::OkStatus();
  };
  for (const std::string& key : flag_keys) {
    RETURN_IF_ERROR(add(key, "--api-key / ENCODER_API_KEY"));
  }
  if (!keys_file.empty()) {
    std::ifstream file(keys_file);
    if (!file) {
      return absl::InvalidArgumentError(
          absl::StrCat("--api-keys-file: cannot read \"", keys_file, "\""));
    }
    std::string line;
    while (std::getline(file, line)) {
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#")) continue;
      RETURN_IF_ERROR(add(line, absl::StrCat("--api-keys-file \"", keys_file, "\"")));
    }
  }
  return keys;
}

}  // namespace server::core
