#include "server/core/engine_backend.h"

namespace server {

const engine::SentencePipeline EngineBackend::kNoPipeline;

absl::Status EngineBackend::Run(absl::Span<const engine::Sequence> batch,
                                absl::Span<const OutputSpec> specs,
                                std::vector<InputOutput>* outputs) {
  if (absl::Status status = encoder_->Encode(batch, &result_); !status.ok()) return status;
  const int hidden = result_.hidden_size;
  outputs->resize(batch.size());
  for (int i = 0; i < static_cast<int>(batch.size()); ++i) {
    InputOutput& out = (*outputs)[i];
    out.tokens = result_.num_tokens(i);
    out.cols = hidden;
    if (specs[i].head == OutputHead::kClassify) {
      const engine::ClassifierHead* head = encoder_->classifier();
      if (head == nullptr) return absl::FailedPreconditionError("the model has no classifier");
      out.rows = 1;
      out.cols = head->num_labels;
      out.values.resize(static_cast<size_t>(head->num_labels));
      if (absl::Status status = encoder_->Classify(result_, i, out.values.data()); !status.ok()) {
        return status;
      }
    } else if (specs[i].head == OutputHead::kSparse) {
      out.rows = 0;
      out.cols = 0;
      out.values.clear();
      if (absl::Status status = encoder_->Sparse(result_, i, specs[i].sparse, &out.sparse);
          !status.ok()) {
        return status;
      }
    } else if (specs[i].pooling == engine::Pooling::kNone) {
      out.rows = out.tokens;
      const float* states = result_.sequence_states(i);
      out.values.assign(states, states + static_cast<size_t>(out.rows) * hidden);
      if (specs[i].normalize) {
        for (int row = 0; row < out.rows; ++row) {
          engine::L2Normalize(out.values.data() + static_cast<size_t>(row) * hidden, hidden);
        }
      }
    } else {
      engine::EmbeddingOptions options;
      if (!specs[i].model_pooling) options.pooling = {specs[i].pooling};
      options.skip_tokens = specs[i].prompt_tokens;
      options.apply_dense = specs[i].apply_dense;
      options.normalize = specs[i].normalize;
      options.dimensions = specs[i].dimensions;
      if (absl::Status status =
              engine::Embed(*pipeline_, *encoder_, result_, i, options, &out.values);
          !status.ok()) {
        return status;
      }
      out.rows = 1;
      out.cols = static_cast<int>(out.values.size());
    }
  }
  return absl::OkStatus();
}

}  // namespace server
