// Which rows of the last layer a batch needs (engine/token_rows.h): one
// token per sequence when every input reads only that token (a classifier
// reading its first or last token, an embedding pooled from the CLS or the
// last token alone), else every token. A batch mixing the two runs all rows.
#pragma once

#include "absl/types/span.h"
#include "engine/encoder.h"
#include "engine/sentence_pipeline.h"
#include "server/core/batching/backend.h"

namespace server::core {

// The rows input `spec` reads: kFirst, kLast, or kAll where it needs more
// than one token (or cannot say).
engine::TokenRows RowsAnInputReads(const engine::Encoder& encoder,
                                   const engine::SentencePipeline& pipeline,
                                   const OutputSpec& spec);

// The rows every input of `specs` can do with: their common kFirst or
// kLast, else kAll.
engine::TokenRows RowsTheBatchNeeds(const engine::Encoder& encoder,
                                    const engine::SentencePipeline& pipeline,
                                    absl::Span<const OutputSpec> specs);

}  // namespace server::core
