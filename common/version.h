// The project's one version string: what --version of every binary prints,
// what /info and GetModelInfo answer, and the encoder_build_info metric's
// label. Defined in the generated version.cc (common/CMakeLists.txt), the
// only file a new commit recompiles.
#pragma once

namespace common {

// The CMake project version, plus "+g" and the abbreviated git commit when
// built from a git checkout, plus "-dirty" when tracked files had changes:
// "0.4.0+g1a2b3c4", "0.4.0+g1a2b3c4-dirty"; without git, "0.4.0".
const char* Version();

// The full git commit the binary was built from, or "unknown" without git.
const char* Revision();

}  // namespace common
