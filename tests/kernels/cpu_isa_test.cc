// Run-time ISA detection.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kernels/kernels.h"

namespace engine::kernels {
namespace {

TEST(CpuIsaTest, BestIsaIsSupportedAndScalarAlwaysIs) {
  EXPECT_TRUE(IsaSupported(Isa::kScalar));
  EXPECT_TRUE(IsaSupported(BestIsa()));
  if (IsaSupported(Isa::kAvx512)) {
    EXPECT_EQ(BestIsa(), Isa::kAvx512);
  }
  std::printf("best ISA on this CPU: %s\n", IsaName(BestIsa()));
}

// The instruction-set switch (engine/isa.h) caps the dispatching kernels
// with CapIsa; BestIsa() must then never exceed the cap, and stays the
// CPU's best below it.
TEST(CpuIsaTest, BestIsaNeverExceedsTheCap) {
  const Isa uncapped = BestIsa();
  const Isa before = IsaCap();
  for (Isa cap : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    CapIsa(cap);
    EXPECT_LE(BestIsa(), cap) << IsaName(cap);
    EXPECT_EQ(BestIsa(), uncapped < cap ? uncapped : cap) << IsaName(cap);
    EXPECT_TRUE(IsaSupported(BestIsa())) << IsaName(cap);
  }
  CapIsa(before);
  EXPECT_EQ(BestIsa(), uncapped);
}

TEST(CpuIsaTest, NamesAreDistinct) {
  EXPECT_EQ(std::string(IsaName(Isa::kScalar)), "scalar");
  EXPECT_EQ(std::string(IsaName(Isa::kAvx2)), "avx2");
  EXPECT_EQ(std::string(IsaName(Isa::kAvx512)), "avx512");
}

}  // namespace
}  // namespace engine::kernels
