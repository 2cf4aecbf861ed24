// Typed access to tokenizer.json fields with errors that say where they are.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace engine::tokenizer {

using nlohmann::json;

inline absl::Status JsonError(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

// A part type the loader does not implement: a load error naming it.
inline absl::Status NotImplemented(const std::string& where, const std::string& type) {
  return absl::UnimplementedError(absl::StrCat(where, ": type \"", type, "\" is not implemented"));
}

// Whether `v` is an integer that T holds. A float (1.5, 1e300) is not: its
// conversion to an integer type is undefined when out of range.
template <typename T>
bool IsIntegerOf(const json& v) {
  if (v.is_number_unsigned()) {
    return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  }
  return v.is_number_integer() &&
         v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
         (std::numeric_limits<T>::max() >= std::numeric_limits<int64_t>::max() ||
          v.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
}

// Sets *out to j[key] if present and not null; *out keeps its default otherwise.
template <typename T>
absl::Status OptionalField(const json& j, const char* key, const std::string& where, T* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!IsIntegerOf<T>(*it)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".", key, " is not an integer in range: ", it->dump()));
    }
  }
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".", key, " has the wrong type: ", it->dump()));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status RequiredField(const json& j, const char* key, const std::string& where, T* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return JsonError(where, absl::StrCat("missing ", key));
  return OptionalField(j, key, where, out);
}

// Ids beyond this are certainly a corrupt file, not a vocabulary.
inline constexpr int64_t kMaxTokenId = 1 << 24;

inline absl::StatusOr<int32_t> TokenId(const json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= kMaxTokenId) {
    return JsonError(where, absl::StrCat("not a valid token id: ", v.dump()));
  }
  return static_cast<int32_t>(v.get<int64_t>());
}

// The "type" of a part object, or an error.
inline absl::StatusOr<std::string> PartType(const json& j, const std::string& where) {
  if (!j.is_object()) return JsonError(where, "is not an object");
  std::string type;
  if (auto s = RequiredField(j, "type", where, &type); !s.ok()) return s;
  return type;
}

}  // namespace engine::tokenizer
