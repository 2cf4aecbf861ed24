#include "server/grpc/quantized_outputs.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace server {

absl::StatusOr<core::EmbeddingType> EmbeddingTypeOf(const encoder::v1::EncodeRequest& request,
                                                    const core::ModelDescription& model) {
  core::EmbeddingType type = core::EmbeddingType::kFloat;
  switch (request.embedding_type()) {
    case encoder::v1::EMBEDDING_TYPE_FLOAT:
      return core::EmbeddingType::kFloat;
    case encoder::v1::EMBEDDING_TYPE_INT8:
      type = core::EmbeddingType::kInt8;
      break;
    case encoder::v1::EMBEDDING_TYPE_UINT8:
      type = core::EmbeddingType::kUint8;
      break;
    case encoder::v1::EMBEDDING_TYPE_BINARY:
      type = core::EmbeddingType::kBinary;
      break;
    case encoder::v1::EMBEDDING_TYPE_UBINARY:
      type = core::EmbeddingType::kUbinary;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("embedding_type ", request.embedding_type(), " is not defined"));
  }
  const int size = request.dimensions() > 0 ? request.dimensions() : model.embedding_size;
  if (absl::Status status =
          core::CheckQuantizable(type, model.quantization_ranges.get(), size, model.name);
      !status.ok()) {
    return status;
  }
  return type;
}

absl::Status QuantizeOutputs(core::EmbeddingType type, const core::ModelDescription& model,
                             encoder::v1::EncodeResponse* response) {
  if (type == core::EmbeddingType::kFloat) return absl::OkStatus();
  for (encoder::v1::Output& output : *response->mutable_outputs()) {
    const auto& values = output.values();
    const int cols = output.cols();
    std::string packed;
    for (int row = 0; row < output.rows(); ++row) {
      absl::StatusOr<std::string> bytes = core::Quantize(
          absl::MakeConstSpan(values.data() + static_cast<ptrdiff_t>(row) * cols, cols), type,
          model.quantization_ranges.get());
      if (!bytes.ok()) return bytes.status();
      packed += *bytes;
    }
    output.set_packed(std::move(packed));
    output.clear_values();
  }
  return absl::OkStatus();
}

}  // namespace server
