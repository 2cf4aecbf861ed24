// Small models and the golden fixtures for engine tests. Scratch directories
// and file reads are the support library's (tests/support/files.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "families/architecture.h"

#include "engine/config.h"
#include "engine/tools/random_model.h"

namespace engine::testing {

// The MiniLM-L6 shape (hidden 384, 12 heads, 6 layers, FFN 1536), random
// weights: the width and depth the service runs, where a lower precision's
// error accumulates over the layers.
RandomModelSpec MiniLmSpec(LayerNormPlacement placement);

// Writes TinyModelSpec() (engine/tools/random_model.h) or `spec` into a new
// temporary directory (removed at exit; `name` is part of its name); returns it.
std::string WriteTinyModel(const std::string& name, const RandomModelSpec& spec = TinyModelSpec());

// BERT's fixtures under GOLDEN_DIR (tests/golden/make_golden.py): post- and
// pre-LN, the name and dtype variants, BF16. The registry's "bert" is tested
// on these; every other model_type has a family fixture.
inline constexpr const char* kBertModelType = "bert";
inline const std::vector<std::string> kBertFixtures = {"post_ln", "pre_ln", "variants", "bf16"};

// The family fixture (tests/golden/make_families.py, make_long_context.py)
// of every model_type of the architecture registry but BERT, in
// registration order, as a path relative to GOLDEN_DIR:
// "families/<FixtureDirectory>", e.g. "families/xlm_roberta". A family
// registered without its fixture fails the tests that read it (and the
// registry's own fixture test).
std::vector<std::string> FamilyFixtures();
// Every parity model: BERT's fixtures, then FamilyFixtures().
std::vector<std::string> ParityFixtures();
// The directory name of a family's fixture: the model_type with '-' as '_'
// ("xlm_roberta"), or the family's name where a selector shares the
// model_type ("jina_bert" for "bert" with ALiBi).
std::string FixtureDirectory(const Architecture& architecture, const ModelType& model_type);
// A gtest name for a fixture path: "families/xlm_roberta" -> "xlm_roberta".
std::string FixtureTestName(const std::string& fixture);

// Token ids for sequences of these lengths: [CLS] (id 2), then ids drawn
// uniformly from [5, vocab), reproducibly from `seed`.
std::vector<std::vector<int32_t>> RandomSequences(const std::vector<int>& lengths, int vocab,
                                                  uint32_t seed);

}  // namespace engine::testing
