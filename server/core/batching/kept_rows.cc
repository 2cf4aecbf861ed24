#include "server/core/batching/kept_rows.h"

#include "absl/types/span.h"

namespace server::core {
namespace {

using engine::Pooling;
using engine::TokenRows;

// The token a pooling mode reads alone (kAll: several, or none).
TokenRows RowsOf(Pooling pooling, int prompt_tokens) {
  switch (pooling) {
    case Pooling::kCls:
      // With a left-out prompt the CLS mode reads the token after it.
      return prompt_tokens == 0 ? TokenRows::kFirst : TokenRows::kAll;
    case Pooling::kPooler:
      return TokenRows::kFirst;  // BERT's pooler reads [CLS]
    case Pooling::kLastToken:
      return TokenRows::kLast;
    default:
      return TokenRows::kAll;
  }
}

}  // namespace

TokenRows RowsAnInputReads(const engine::Encoder& encoder, const engine::SentencePipeline& pipeline,
                           const OutputSpec& spec) {
  switch (spec.head) {
    case OutputHead::kClassify:
      return encoder.classifier() != nullptr ? encoder.classifier()->reads : TokenRows::kAll;
    case OutputHead::kEmbedding: {
      if (spec.pooling == Pooling::kNone) return TokenRows::kAll;  // every token state
      const absl::Span<const Pooling> modes = spec.model_pooling
                                                  ? absl::MakeConstSpan(pipeline.pooling)
                                                  : absl::MakeConstSpan(&spec.pooling, 1);
      if (modes.empty()) return TokenRows::kAll;
      const TokenRows rows = RowsOf(modes.front(), spec.prompt_tokens);
      for (const Pooling mode : modes) {
        if (RowsOf(mode, spec.prompt_tokens) != rows) return TokenRows::kAll;
      }
      return rows;
    }
    case OutputHead::kSparse:
    case OutputHead::kMulti:
      return TokenRows::kAll;  // per-token heads
  }
  return TokenRows::kAll;
}

TokenRows RowsTheBatchNeeds(const engine::Encoder& encoder,
                            const engine::SentencePipeline& pipeline,
                            absl::Span<const OutputSpec> specs) {
  if (specs.empty()) return TokenRows::kAll;
  const TokenRows rows = RowsAnInputReads(encoder, pipeline, specs.front());
  for (const OutputSpec& spec : specs) {
    if (RowsAnInputReads(encoder, pipeline, spec) != rows) return TokenRows::kAll;
  }
  return rows;
}

}  // namespace server::core
