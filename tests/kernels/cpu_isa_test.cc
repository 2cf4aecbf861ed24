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

TEST(CpuIsaTest, NamesAreDistinct) {
  EXPECT_EQ(std::string(IsaName(Isa::kScalar)), "scalar");
  EXPECT_EQ(std::string(IsaName(Isa::kAvx2)), "avx2");
  EXPECT_EQ(std::string(IsaName(Isa::kAvx512)), "avx512");
}

}  // namespace
}  // namespace engine::kernels
