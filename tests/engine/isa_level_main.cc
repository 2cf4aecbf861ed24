// The main() of the engine test binaries: runs every test at the
// instruction-set level ENCODER_ISA names (the ISA matrix of
// tests/CMakeLists.txt sets it per ctest entry), set before any test touches
// oneDNN (its cap is process-wide and fixed on first use). On a CPU that
// lacks the level nothing runs: one "[  SKIPPED ]" line says why, which
// ctest reports as a skip, so that no test depends on the machine.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/isa.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* name = std::getenv("ENCODER_ISA");
  const bool from_environment = name != nullptr && *name != '\0';
  if (from_environment) {
    absl::StatusOr<engine::IsaLevel> level = engine::ParseIsaLevel(name);
    if (!level.ok()) {  // a typo in the matrix must not pass
      std::fprintf(stderr, "ENCODER_ISA: %s\n", std::string(level.status().message()).c_str());
      return 1;
    }
    if (!engine::CpuHasIsaLevel(*level)) {
      std::printf(
          "[  SKIPPED ] ENCODER_ISA=%s: this CPU lacks it (it has %s); this level runs "
          "on CPUs that have it\n",
          name, engine::CpuIsaLevelNames().c_str());
      return 0;
    }
  }
  absl::StatusOr<engine::IsaLevel> active = engine::ActiveIsaLevel();  // applies ENCODER_ISA
  if (!active.ok()) {
    std::fprintf(stderr, "%s\n", std::string(active.status().message()).c_str());
    return 1;
  }
  std::printf("instruction set level %s%s (oneDNN %s)\n", engine::IsaLevelName(*active),
              from_environment ? " from ENCODER_ISA" : ", the CPU's best",
              engine::OneDnnIsaName().c_str());
  return RUN_ALL_TESTS();
}
