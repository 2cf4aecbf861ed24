// Each part of a tokenizer.json pipeline built from its own JSON object; a
// type that is not implemented is an Unimplemented error naming it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "decoders/decoder.h"
#include "json_fields.h"
#include "models/model.h"
#include "normalizers/normalizer.h"
#include "pattern.h"
#include "pre_tokenizers/pre_tokenizer.h"
#include "processors/template_processing.h"

namespace engine::tokenizer {

// {"String": ...} or {"Regex": ...}.
absl::StatusOr<Pattern> PatternFromJson(const json& j, const std::string& where);

absl::StatusOr<std::unique_ptr<Normalizer>> NormalizerFromJson(const json& j,
                                                               const std::string& where);
absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizerFromJson(const json& j,
                                                                   const std::string& where);
// `pieces`, if not null, is a Unigram vocabulary streamed out of `j` (which
// then holds an empty vocab list); it is consumed.
absl::StatusOr<std::unique_ptr<Model>> ModelFromJson(
    const json& j, const std::string& where,
    std::vector<std::pair<std::string, double>>* pieces = nullptr);
absl::StatusOr<std::unique_ptr<Decoder>> DecoderFromJson(const json& j, const std::string& where);

struct Templates {
  Template single;
  Template pair;
  OffsetTrimming trim;  // RobertaProcessing / ByteLevel trim_offsets
};
absl::StatusOr<Templates> PostProcessorFromJson(const json& j, const std::string& where);

}  // namespace engine::tokenizer
