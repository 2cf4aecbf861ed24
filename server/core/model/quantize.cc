#include "server/core/model/quantize.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace server::core {

std::optional<EmbeddingType> EmbeddingTypeFromName(absl::string_view name) {
  if (name == "float") return EmbeddingType::kFloat;
  if (name == "int8") return EmbeddingType::kInt8;
  if (name == "uint8") return EmbeddingType::kUint8;
  if (name == "binary") return EmbeddingType::kBinary;
  if (name == "ubinary") return EmbeddingType::kUbinary;
  return std::nullopt;
}

const char* EmbeddingTypeName(EmbeddingType type) {
  switch (type) {
    case EmbeddingType::kFloat:
      return "float";
    case EmbeddingType::kInt8:
      return "int8";
    case EmbeddingType::kUint8:
      return "uint8";
    case EmbeddingType::kBinary:
      return "binary";
    case EmbeddingType::kUbinary:
      return "ubinary";
  }
  return "float";
}

bool NeedsRanges(EmbeddingType type) {
  return type == EmbeddingType::kInt8 || type == EmbeddingType::kUint8;
}

bool IsSigned(EmbeddingType type) {
  return type == EmbeddingType::kInt8 || type == EmbeddingType::kBinary;
}

absl::Status CheckQuantizable(EmbeddingType type, const QuantizationRanges* ranges, int size,
                              absl::string_view model) {
  if (!NeedsRanges(type)) return absl::OkStatus();
  if (ranges == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        EmbeddingTypeName(type), " embeddings need calibration ranges, and the model ", model,
        " has none: start the server with --quantization-ranges FILE or put "
        "quantization_ranges.json in the model directory (binary and ubinary need none)"));
  }
  if (size > ranges->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(EmbeddingTypeName(type), " embeddings of ", size, " values: the model ", model,
                     "'s calibration ranges cover ", ranges->size(), " dimensions"));
  }
  return absl::OkStatus();
}

namespace {

// ((v - start) / step - offset) in float32, as numpy evaluates it for
// float32 arrays (no FMA can apply: a subtraction, a division, a
// subtraction), then cast toward zero as astype does for values in range;
// outside [low, high] clamped, NaN to `low`.
int ScaledInteger(float v, float start, float step, float offset, int low, int high) {
  const float scaled = (v - start) / step - offset;
  if (!(scaled >= static_cast<float>(low))) return low;  // below, or NaN
  if (scaled >= static_cast<float>(high)) return high;
  return static_cast<int>(scaled);  // truncates toward zero, as astype
}

}  // namespace

absl::StatusOr<std::string> Quantize(absl::Span<const float> values, EmbeddingType type,
                                     const QuantizationRanges* ranges) {
  const int size = static_cast<int>(values.size());
  RETURN_IF_ERROR(CheckQuantizable(type, ranges, size, "in use"));
  std::string bytes;
  switch (type) {
    case EmbeddingType::kFloat:
      return absl::InvalidArgumentError("float embeddings are not quantized");
    case EmbeddingType::kInt8:
    case EmbeddingType::kUint8: {
      const bool int8 = type == EmbeddingType::kInt8;
      bytes.resize(values.size());
      for (int i = 0; i < size; ++i) {
        const float start = ranges->minimum[i];
        // numpy: (ranges[1] - ranges[0]) / 255 in float32.
        const float step = (ranges->maximum[i] - start) / 255.0f;
        const int q = int8 ? ScaledInteger(values[i], start, step, 128.0f, -128, 127)
                           : ScaledInteger(values[i], start, step, 0.0f, 0, 255);
        bytes[i] = static_cast<char>(static_cast<uint8_t>(q & 0xff));
      }
      return bytes;
    }
    case EmbeddingType::kBinary:
    case EmbeddingType::kUbinary: {
      bytes.assign((values.size() + 7) / 8, '\0');
      for (int i = 0; i < size; ++i) {
        if (values[i] > 0.0f) bytes[i / 8] = static_cast<char>(bytes[i / 8] | (0x80 >> (i % 8)));
      }
      // binary: packbits - 128 as int8, whose byte is the packed byte with
      // its top bit flipped.
      if (type == EmbeddingType::kBinary) {
        for (char& byte : bytes) byte = static_cast<char>(byte ^ 0x80);
      }
      return bytes;
    }
  }
  return bytes;
}

std::vector<int> QuantizedIntegers(absl::string_view bytes, EmbeddingType type) {
  std::vector<int> out;
  out.reserve(bytes.size());
  const bool is_signed = IsSigned(type);
  for (char byte : bytes) {
    const auto u = static_cast<uint8_t>(byte);
    out.push_back(is_signed ? static_cast<int>(static_cast<int8_t>(u)) : static_cast<int>(u));
  }
  return out;
}

}  // namespace server::core
