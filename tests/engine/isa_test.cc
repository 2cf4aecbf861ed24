// The instruction-set switch (engine/isa.h): level names, the CPU's levels
// against /proc/cpuinfo, and the cap applied to the project's kernels, to
// oneDNN and to the int8 weight range. Its own executable: the level is
// process-wide and set once, so the test that sets it must not share a
// process with tests that run the engine.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "dnnl/quantized_dense.h"
#include "engine/encoder.h"
#include "engine/isa.h"
#include "kernels/kernels.h"
#include "test_models.h"

namespace engine {
namespace {

TEST(IsaLevelTest, ParsesEveryLevelName) {
  // The names are the interface (--isa, ENCODER_ISA, GetModelInfo), spelled out here.
  const std::pair<const char*, IsaLevel> names[] = {
      {"scalar", IsaLevel::kScalar},          {"avx2", IsaLevel::kAvx2},
      {"avx2_vnni", IsaLevel::kAvx2Vnni},     {"avx512", IsaLevel::kAvx512},
      {"avx512_vnni", IsaLevel::kAvx512Vnni}, {"avx512_bf16", IsaLevel::kAvx512Bf16}};
  for (const auto& [name, level] : names) {
    absl::StatusOr<IsaLevel> parsed = ParseIsaLevel(name);
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
    EXPECT_EQ(*parsed, level) << name;
    EXPECT_STREQ(IsaLevelName(level), name);
  }
  EXPECT_EQ(IsaLevelNames(), "scalar, avx2, avx2_vnni, avx512, avx512_vnni, avx512_bf16");
}

TEST(IsaLevelTest, RejectsABadNameListingTheLevels) {
  for (const char* bad : {"", "AVX2", "avx-512", "avx512 ", "sse41", "amx", "best"}) {
    absl::StatusOr<IsaLevel> parsed = ParseIsaLevel(bad);
    ASSERT_FALSE(parsed.ok()) << '"' << bad << '"';
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(),
              std::string("unknown instruction set \"") + bad +
                  "\" (one of: scalar, avx2, avx2_vnni, avx512, avx512_vnni, avx512_bf16)");
  }
}

std::set<std::string> CpuinfoFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

// Independent of the code under test: the kernel's flags as Linux lists them.
TEST(IsaLevelTest, CpuLevelsAgreeWithProcCpuinfo) {
  const std::set<std::string> flags = CpuinfoFlags();
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  auto has = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (flags.count(n) == 0) return false;
    }
    return true;
  };
  const bool avx2 = has({"avx2", "fma"});
  const bool avx512 = has({"avx512f", "avx512dq", "avx512bw", "avx512vl", "fma"});
  EXPECT_TRUE(CpuHasIsaLevel(IsaLevel::kScalar));
  EXPECT_EQ(CpuHasIsaLevel(IsaLevel::kAvx2), avx2);
  EXPECT_EQ(CpuHasIsaLevel(IsaLevel::kAvx2Vnni), avx2 && has({"avx_vnni"}));
  EXPECT_EQ(CpuHasIsaLevel(IsaLevel::kAvx512), avx512);
  EXPECT_EQ(CpuHasIsaLevel(IsaLevel::kAvx512Vnni), avx512 && has({"avx512_vnni"}));
  EXPECT_EQ(CpuHasIsaLevel(IsaLevel::kAvx512Bf16), avx512 && has({"avx512_vnni", "avx512_bf16"}));
  EXPECT_TRUE(CpuHasIsaLevel(BestCpuIsaLevel()));
  for (IsaLevel level : kAllIsaLevels) {
    if (level > BestCpuIsaLevel()) {
      EXPECT_FALSE(CpuHasIsaLevel(level)) << IsaLevelName(level);
    }
  }
  std::printf("this CPU's levels: %s\n", CpuIsaLevelNames().c_str());
}

TEST(IsaLevelTest, RefusesALevelTheCpuLacks) {
  const IsaLevel best = BestCpuIsaLevel();
  if (best == IsaLevel::kAvx512Bf16) GTEST_SKIP() << "this CPU has every level";
  const IsaLevel lacking = IsaLevel::kAvx512Bf16;  // above the best: lacking
  const absl::Status status = UseIsaLevel(lacking);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_EQ(status.message(),
            std::string("instruction set avx512_bf16: this CPU lacks it (it has ") +
                CpuIsaLevelNames() + ")");
}

// Sets the process's level to scalar (every CPU has it) and checks what it
// caps; the only test here that sets a level, so the others see none.
TEST(IsaLevelTest, ScalarCapsKernelsOneDnnAndTheInt8Range) {
  ASSERT_TRUE(UseIsaLevel(IsaLevel::kScalar).ok());
  EXPECT_EQ(kernels::BestIsa(), kernels::Isa::kScalar);
  EXPECT_EQ(OneDnnIsaName(), "sse41");  // oneDNN's lowest level stands for scalar
  EXPECT_EQ(Int8WeightMax(), 63);       // no VNNI at this level
  absl::StatusOr<IsaLevel> active = ActiveIsaLevel();
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(*active, IsaLevel::kScalar);
  // Once set, the level stays: the same again is fine, another is refused.
  EXPECT_TRUE(UseIsaLevel(IsaLevel::kScalar).ok());
  const absl::Status other = UseIsaLevel(IsaLevel::kAvx2);
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(other.message(),
            "instruction set avx2: the process already runs scalar (the level is process-wide, "
            "chosen once)");
  // An encoder loaded now runs and reports it.
  absl::StatusOr<std::unique_ptr<Encoder>> encoder =
      Encoder::Load(testing::WriteTinyModel("isa_scalar"), EncoderOptions{});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ((*encoder)->isa(), IsaLevel::kScalar);
  const std::vector<int32_t> ids = {2, 7, 9, 11, 3};
  EncodeResult result;
  ASSERT_TRUE((*encoder)->Encode({Sequence{ids, {}}}, &result).ok());
}

}  // namespace
}  // namespace engine
