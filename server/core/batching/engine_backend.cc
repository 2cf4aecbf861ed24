#include "server/core/batching/engine_backend.h"

#include <algorithm>

#include "common/status_macros.h"
#include "server/core/batching/kept_rows.h"

namespace server::core {

const engine::SentencePipeline EngineBackend::kNoPipeline;

absl::Status EngineBackend::Run(absl::Span<const engine::Sequence> batch,
                                absl::Span<const OutputSpec> specs,
                                std::vector<InputOutput>* outputs) {
  // One token per sequence from the last layer when every input reads only
  // that one (kept_rows.h); the outputs below read the result accordingly.
  options_.rows = RowsTheBatchNeeds(*encoder_, *pipeline_, specs);
  RETURN_IF_ERROR(encoder_->Encode(batch, &result_, options_));
  outputs->resize(batch.size());
  for (int i = 0; i < static_cast<int>(batch.size()); ++i) {
    InputOutput& out = (*outputs)[i];
    out.tokens = result_.num_tokens(i);
    out.cols = result_.hidden_size;
    out.sparse.clear();
    out.vectors.clear();
    out.vector_rows = 0;
    out.vector_cols = 0;
    absl::Status status;
    switch (specs[i].head) {
      case OutputHead::kClassify:
        status = Classify(i, &out);
        break;
      case OutputHead::kSparse:
        out.rows = 0;
        out.cols = 0;
        out.values.clear();
        status = Sparse(batch[i], i, specs[i].sparse, &out);
        break;
      case OutputHead::kEmbedding:
        status = Embedding(i, specs[i], &out);
        break;
      case OutputHead::kMulti:
        status = Multi(batch[i], i, specs[i], &out);
        break;
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status EngineBackend::Classify(int index, InputOutput* out) const {
  const engine::ClassifierHead* head = encoder_->classifier();
  if (head == nullptr) return absl::FailedPreconditionError("the model has no classifier");
  out->rows = 1;
  out->cols = head->num_labels;
  out->values.resize(static_cast<size_t>(head->num_labels));
  return encoder_->Classify(result_, index, out->values.data());
}

absl::Status EngineBackend::Sparse(const engine::Sequence& sequence, int index,
                                   const engine::SparseOptions& options, InputOutput* out) const {
  // SPLADE's masked-LM head where the checkpoint has one, else bge-m3's
  // lexical weights (which need the ids: a weight per token of the input).
  if (encoder_->has_masked_lm_head()) {
    return encoder_->Sparse(result_, index, options, &out->sparse);
  }
  return encoder_->LexicalWeights(result_, index, sequence.ids, options.max_active_dims,
                                  &out->sparse);
}

absl::Status EngineBackend::Embedding(int index, const OutputSpec& spec, InputOutput* out) const {
  const int hidden = result_.hidden_size;
  if (spec.pooling == engine::Pooling::kNone) {
    out->rows = out->tokens;
    const float* states = result_.sequence_states(index);
    out->values.assign(states, states + static_cast<size_t>(out->rows) * hidden);
    if (spec.normalize) {
      for (int row = 0; row < out->rows; ++row) {
        engine::L2Normalize(out->values.data() + static_cast<size_t>(row) * hidden, hidden);
      }
    }
    return absl::OkStatus();
  }
  engine::EmbeddingOptions options;
  if (!spec.model_pooling) options.pooling = {spec.pooling};
  options.skip_tokens = spec.prompt_tokens;
  options.apply_dense = spec.apply_dense;
  options.normalize = spec.normalize;
  options.dimensions = spec.dimensions;
  if (absl::Status status =
          engine::Embed(*pipeline_, *encoder_, result_, index, options, &out->values);
      !status.ok()) {
    return status;
  }
  out->rows = 1;
  out->cols = static_cast<int>(out->values.size());
  return absl::OkStatus();
}

absl::Status EngineBackend::Multi(const engine::Sequence& sequence, int index,
                                  const OutputSpec& spec, InputOutput* out) {
  out->rows = 0;
  out->cols = 0;
  out->values.clear();
  if (spec.multi.dense) {
    RETURN_IF_ERROR(Embedding(index, spec, out));
  }
  if (spec.multi.sparse) {
    RETURN_IF_ERROR(Sparse(sequence, index, spec.sparse, out));
  }
  if (spec.multi.multi_vector) {
    std::vector<uint8_t>& keep = keep_;  // reused across inputs and batches
    keep.clear();
    if (spec.multi.skip_ids != nullptr && !spec.multi.skip_ids->empty()) {
      for (const int32_t id : sequence.ids) {
        keep.push_back(
            std::binary_search(spec.multi.skip_ids->begin(), spec.multi.skip_ids->end(), id) ? 0
                                                                                             : 1);
      }
    }
    if (absl::Status status =
            encoder_->MultiVectors(result_, index, keep, &out->vectors, &out->vector_rows);
        !status.ok()) {
      return status;
    }
    out->vector_cols = encoder_->multi_vector()->dimensions;
  }
  return absl::OkStatus();
}

}  // namespace server::core
