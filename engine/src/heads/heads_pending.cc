// Placeholder definitions of the head API until engine/src/heads lands
// (replaced on the heads branch; never on main).
#include "engine/encoder.h"

namespace engine {
const char* ScoreActivationName(ScoreActivation) { return "?"; }
void ApplyScoreActivation(ScoreActivation, float*, int) {}
const ClassifierHead* Encoder::classifier() const { return nullptr; }
absl::Status Encoder::Classify(const EncodeResult&, int, float*) const {
  return absl::UnimplementedError("heads pending");
}
bool Encoder::has_masked_lm_head() const { return false; }
absl::Status Encoder::Sparse(const EncodeResult&, int, const SparseOptions&,
                             std::vector<SparseEntry>*) const {
  return absl::UnimplementedError("heads pending");
}
}  // namespace engine
