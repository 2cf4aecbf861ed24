// Quantized embeddings, as sentence-transformers' quantize_embeddings
// (sentence_transformers/quantization.py) defines them, applied to the final
// (pooled, cut, normalized) vectors. Every transport answers float vectors
// from the engine and quantizes them here, per request, after the fact: one
// engine pass serves every type a request asks for.
//
// The bytes of one vector are numpy's tobytes() of its quantize_embeddings row:
//   int8    ((v - starts) / steps - 128).astype(np.int8), one byte a value
//   uint8   ((v - starts) / steps).astype(np.uint8), one byte a value
//   binary  np.packbits(v > 0) - 128 as int8: ceil(n / 8) bytes
//   ubinary np.packbits(v > 0) as uint8: ceil(n / 8) bytes
// with starts = ranges[0] (each dimension's minimum) and steps =
// (ranges[1] - ranges[0]) / 255, all in float32 as numpy computes them for
// float32 arrays. Bits are packed most significant first; a row whose length
// is not a multiple of 8 is padded with zero bits, per row (numpy's
// packbits(..., axis=-1); sentence-transformers packs the flattened array,
// which is the same whenever the length is a multiple of 8).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/calibration_ranges.h"

namespace server::core {

enum class EmbeddingType { kFloat, kInt8, kUint8, kBinary, kUbinary };

// "float", "int8", "uint8", "binary", "ubinary" (the names of
// sentence-transformers' precisions and of Cohere's embedding_types).
std::optional<EmbeddingType> EmbeddingTypeFromName(absl::string_view name);
const char* EmbeddingTypeName(EmbeddingType type);
// int8 and uint8: they need calibration ranges.
bool NeedsRanges(EmbeddingType type);
// int8 and binary read their bytes as signed, uint8 and ubinary as unsigned.
bool IsSigned(EmbeddingType type);

// Per-dimension calibration (sentence-transformers' `ranges`, 2 x dim): the
// minimum and the maximum each dimension took over calibration embeddings.
// The ranges describe the model's full embedding; a Matryoshka-cut vector of
// n dimensions uses the first n of them.
// minimum (ranges[0]), maximum (ranges[1]), size(): engine/calibration_ranges.h.
using QuantizationRanges = engine::CalibrationRanges;

// Whether a request may ask `type` for vectors of `size` values: OK for
// float, binary and ubinary; int8 and uint8 need `ranges` (FAILED_PRECONDITION
// naming the flag and the file when null) covering `size` dimensions
// (INVALID_ARGUMENT otherwise). `model` names the model in messages.
absl::Status CheckQuantizable(EmbeddingType type, const QuantizationRanges* ranges, int size,
                              absl::string_view model);

// The bytes of `values` quantized as `type` (not kFloat), as above. Values
// outside the calibration range, which numpy's cast leaves undefined, are
// clamped: int8 to [-128, 127], uint8 to [0, 255]; NaN (a dimension whose
// minimum equals its maximum, or a NaN input) gives the lowest value.
// Errors as CheckQuantizable.
absl::StatusOr<std::string> Quantize(absl::Span<const float> values, EmbeddingType type,
                                     const QuantizationRanges* ranges);

// The integers of quantized bytes as the type reads them (JSON answers).
std::vector<int> QuantizedIntegers(absl::string_view bytes, EmbeddingType type);

}  // namespace server::core
