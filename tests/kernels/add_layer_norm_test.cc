// The vector Add & Norm kernels against the scalar reference, for every ISA
// this CPU runs, every tail length and the placements the engine uses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/kernels.h"
#include "layer_norm_case.h"

namespace engine::kernels::testing {
namespace {

// x = r + s + b is computed in the same order everywhere (bit-identical);
// the kernels and the reference differ only in how they round the mean,
// variance and final multiply-add. Both are within about 2 eps of exact (the
// kernel sums in several short float chains and corrects the mean with a
// second pass), so 4 eps of ExactLayerNorm's error scale, i.e. ~5e-7
// relative, bounds their difference. The one-pass E[x^2] - E[x]^2 fails it
// on rows whose spread is small next to their mean.
constexpr double kKernelUlps = 4.0;

enum class Placement {
  kPostLnInPlace,        // out aliases residual, no residual_out.
  kPreLn,                // out and residual_out separate buffers.
  kPreLnResidualInPlace  // residual_out aliases residual.
};

struct Result {
  std::vector<float> out;
  std::vector<float> residual_out;  // Empty for post-LN.
};

Result RunKernel(Isa isa, const LayerNormCase& c, Placement placement, bool all_threads = false) {
  Result r;
  std::vector<float> residual = c.residual;  // Aliased by some placements.
  AddLayerNormArgs args = c.Args(nullptr, nullptr);
  args.residual = residual.data();
  switch (placement) {
    case Placement::kPostLnInPlace:
      args.out = residual.data();
      break;
    case Placement::kPreLn:
      r.out.resize(residual.size());
      r.residual_out.resize(residual.size());
      args.out = r.out.data();
      args.residual_out = r.residual_out.data();
      break;
    case Placement::kPreLnResidualInPlace:
      r.out.resize(residual.size());
      args.out = r.out.data();
      args.residual_out = residual.data();
      break;
  }
  if (all_threads) {
    AddLayerNorm(args);
  } else {
    AddLayerNormWithIsa(isa, args);
  }
  if (placement == Placement::kPostLnInPlace) r.out = residual;
  if (placement == Placement::kPreLnResidualInPlace) r.residual_out = residual;
  return r;
}

void ExpectMatchesReference(const LayerNormCase& c, const Result& got, const Result& want) {
  const LayerNormExpected e = ExactLayerNorm(c);
  double worst = 0.0;
  size_t worst_at = 0;
  for (size_t i = 0; i < want.out.size(); ++i) {
    const double ratio = std::fabs(got.out[i] - want.out[i]) / (kFloatEps * e.scale[i]);
    if (ratio > worst) {
      worst = ratio;
      worst_at = i;
    }
  }
  EXPECT_LE(worst, kKernelUlps) << "hidden " << c.hidden << " element " << worst_at << ": got "
                                << got.out[worst_at] << ", reference " << want.out[worst_at];
  // The summed residual is the same float additions in the same order.
  EXPECT_EQ(got.residual_out, want.residual_out) << "hidden " << c.hidden;
}

class AddLayerNormTest : public ::testing::TestWithParam<Isa> {};

TEST_P(AddLayerNormTest, MatchesReferenceForEveryPlacementAndSize) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  for (Placement placement :
       {Placement::kPostLnInPlace, Placement::kPreLn, Placement::kPreLnResidualInPlace}) {
    for (int64_t hidden : HiddenSizes()) {
      for (int flags = 0; flags < 4; ++flags) {
        const LayerNormCase c = LayerNormCase::Random(3, hidden, flags & 1, flags & 2,
                                                      static_cast<uint32_t>(hidden * 4 + flags));
        SCOPED_TRACE(::testing::Message()
                     << "placement " << static_cast<int>(placement) << " sublayer "
                     << c.use_sublayer << " bias " << c.use_bias);
        ExpectMatchesReference(c, RunKernel(GetParam(), c, placement),
                               RunKernel(Isa::kScalar, c, placement));
      }
    }
  }
}

TEST_P(AddLayerNormTest, BertEpsilonAndLargerEpsilon) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  for (float eps : {1e-12f, 1e-5f}) {
    LayerNormCase c = LayerNormCase::Random(8, 768, true, true, 99);
    c.eps = eps;
    ExpectMatchesReference(c, RunKernel(GetParam(), c, Placement::kPreLn),
                           RunKernel(Isa::kScalar, c, Placement::kPreLn));
  }
}

TEST_P(AddLayerNormTest, LargeMeanSmallSpread) {
  SKIP_IF_ISA_UNSUPPORTED(GetParam());
  // Mean 10, spread 0.03: E[x^2] - E[x]^2 cancels 5 of float's 7 digits
  // here (off by ~100x the tolerance); centred squares do not.
  for (int64_t hidden : {100, 768, 4096}) {
    LayerNormCase c = LayerNormCase::Random(4, hidden, false, false, 21);
    std::mt19937 rng(22);
    c.residual = Uniform(4 * hidden, 9.95f, 10.05f, rng);
    ExpectMatchesReference(c, RunKernel(GetParam(), c, Placement::kPreLn),
                           RunKernel(Isa::kScalar, c, Placement::kPreLn));
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, AddLayerNormTest, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         IsaParamName);

TEST(AddLayerNormDispatchTest, AllThreadsMatchSingleThreadBestIsa) {
  // Enough rows to cross the parallel threshold and split unevenly.
  for (Placement placement : {Placement::kPostLnInPlace, Placement::kPreLn}) {
    const LayerNormCase c = LayerNormCase::Random(301, 768, true, true, 5);
    const Result parallel = RunKernel(BestIsa(), c, placement, /*all_threads=*/true);
    const Result serial = RunKernel(BestIsa(), c, placement);
    // Rows are independent and run by the same row kernel: bit-identical.
    EXPECT_EQ(parallel.out, serial.out);
    EXPECT_EQ(parallel.residual_out, serial.residual_out);
  }
}

TEST(AddLayerNormDispatchTest, ZeroRowsIsANoOp) {
  const LayerNormCase c = LayerNormCase::Random(0, 768, true, true, 1);
  AddLayerNorm(c.Args(nullptr, nullptr));
}

}  // namespace
}  // namespace engine::kernels::testing
