// Small models for engine tests. Scratch directories and file reads are the
// support library's (tests/support/files.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/random_model.h"

namespace engine::testing {

// A tiny model shape: fast to load and run.
RandomModelSpec TinySpec(LayerNormPlacement placement = LayerNormPlacement::kPost);

// Writes TinySpec() (or `spec`) into a new temporary directory (removed at
// exit; `name` is part of its name); returns it.
std::string WriteTinyModel(const std::string& name, const RandomModelSpec& spec = TinySpec());

// The family fixtures under GOLDEN_DIR (tests/golden/make_families.py), as
// paths relative to it: "families/roberta", ...
inline const std::vector<std::string> kFamilyFixtures = {
    "families/roberta",    "families/xlm_roberta", "families/camembert",
    "families/distilbert", "families/mpnet",       "families/electra"};
// A gtest name for a fixture path: "families/xlm_roberta" -> "xlm_roberta".
std::string FixtureTestName(const std::string& fixture);

// Token ids for sequences of these lengths: [CLS] (id 2), then ids drawn
// uniformly from [5, vocab), reproducibly from `seed`.
std::vector<std::vector<int32_t>> RandomSequences(const std::vector<int>& lengths, int vocab,
                                                  uint32_t seed);

}  // namespace engine::testing
