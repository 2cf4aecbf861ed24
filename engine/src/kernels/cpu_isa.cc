// Run-time ISA detection. __builtin_cpu_supports also checks that the OS
// saves the wide registers (XCR0), so a listed ISA is safe to run.
#include <algorithm>
#include <atomic>

#include "kernels/kernels.h"

namespace engine::kernels {

bool IsaSupported(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::kAvx512:
      // Exactly the extensions the AVX-512 kernels are compiled for (CMakeLists.txt).
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("fma");
  }
  return false;
}

namespace {
// Isa values are ordered by width; the cap is read on every dispatch.
std::atomic<Isa> cap{Isa::kAvx512};
}  // namespace

Isa BestIsa() {
  static const Isa best = IsaSupported(Isa::kAvx512) ? Isa::kAvx512
                          : IsaSupported(Isa::kAvx2) ? Isa::kAvx2
                                                     : Isa::kScalar;
  return std::min(best, cap.load(std::memory_order_relaxed));
}

void CapIsa(Isa new_cap) { cap.store(new_cap, std::memory_order_relaxed); }
Isa IsaCap() { return cap.load(std::memory_order_relaxed); }

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

}  // namespace engine::kernels
