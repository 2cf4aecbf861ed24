#include <cpuid.h>

#include <cstdlib>
#include <optional>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/mutex.h"
#include "common/status_macros.h"
#include "engine/isa.h"
#include "kernels/kernels.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace engine {
namespace {

// CPUID leaf 7 feature bits. Read directly rather than through
// __builtin_cpu_supports, whose feature names differ between compilers
// (Clang 14 has no "avxvnni"). The OS-saves-the-registers check is done by
// the base level each of these extends.
bool CpuidLeaf7Bit(unsigned subleaf, bool in_eax, unsigned bit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, subleaf, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (((in_eax ? eax : ecx) >> bit) & 1U) != 0;
}
bool CpuHasAvxVnni() { return CpuidLeaf7Bit(1, /*in_eax=*/true, 4); }
bool CpuHasAvx512Vnni() { return CpuidLeaf7Bit(0, /*in_eax=*/false, 11); }
bool CpuHasAvx512Bf16() { return CpuidLeaf7Bit(1, /*in_eax=*/true, 5); }

kernels::Isa KernelIsa(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar:
      return kernels::Isa::kScalar;
    case IsaLevel::kAvx2:
    case IsaLevel::kAvx2Vnni:
      return kernels::Isa::kAvx2;
    case IsaLevel::kAvx512:
    case IsaLevel::kAvx512Vnni:
    case IsaLevel::kAvx512Bf16:
      return kernels::Isa::kAvx512;
  }
  return kernels::Isa::kScalar;
}

dnnl::cpu_isa OneDnnIsa(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar:
      return dnnl::cpu_isa::sse41;  // oneDNN's lowest level: it has no scalar one
    case IsaLevel::kAvx2:
      return dnnl::cpu_isa::avx2;
    case IsaLevel::kAvx2Vnni:
      return dnnl::cpu_isa::avx2_vnni;
    case IsaLevel::kAvx512:
      return dnnl::cpu_isa::avx512_core;
    case IsaLevel::kAvx512Vnni:
      return dnnl::cpu_isa::avx512_core_vnni;
    case IsaLevel::kAvx512Bf16:
      return dnnl::cpu_isa::avx512_core_bf16;
  }
  return dnnl::cpu_isa::sse41;
}

// Constant-initialized (no constructor runs), so usable before main.
ABSL_CONST_INIT common::Mutex isa_mu;
// The process's level once chosen.
ABSL_CONST_INIT std::optional<IsaLevel> chosen_level ABSL_GUARDED_BY(isa_mu);
// Whether oneDNN was capped at the chosen level (not when it was the default).
ABSL_CONST_INIT bool onednn_capped ABSL_GUARDED_BY(isa_mu) = false;

absl::Status Unsupported(IsaLevel level) {
  return absl::FailedPreconditionError(absl::StrCat("instruction set ", IsaLevelName(level),
                                                    ": this CPU lacks it (it has ",
                                                    CpuIsaLevelNames(), ")"));
}

// Caps kernels and oneDNN; `cap_onednn` false leaves oneDNN its own choice.
absl::Status ApplyLocked(IsaLevel level, bool cap_onednn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(isa_mu) {
  if (!CpuHasIsaLevel(level)) return Unsupported(level);
  if (chosen_level.has_value()) {
    if (*chosen_level == level && (onednn_capped || !cap_onednn)) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("instruction set ", IsaLevelName(level), ": the process already runs ",
                     IsaLevelName(*chosen_level), onednn_capped ? "" : " with oneDNN uncapped",
                     " (the level is process-wide, chosen once)"));
  }
  if (cap_onednn && dnnl::set_max_cpu_isa(OneDnnIsa(level)) != dnnl::status::success) {
    // oneDNN fixes its ISA on first use: a primitive was created before.
    return absl::FailedPreconditionError(
        absl::StrCat("instruction set ", IsaLevelName(level),
                     ": oneDNN was used before the level was set and cannot be capped now"));
  }
  kernels::CapIsa(KernelIsa(level));
  chosen_level = level;
  onednn_capped = cap_onednn;
  return absl::OkStatus();
}

}  // namespace

const char* IsaLevelName(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar:
      return "scalar";
    case IsaLevel::kAvx2:
      return "avx2";
    case IsaLevel::kAvx2Vnni:
      return "avx2_vnni";
    case IsaLevel::kAvx512:
      return "avx512";
    case IsaLevel::kAvx512Vnni:
      return "avx512_vnni";
    case IsaLevel::kAvx512Bf16:
      return "avx512_bf16";
  }
  return "unknown";
}

std::string IsaLevelNames() {
  std::vector<std::string> names;
  for (IsaLevel level : kAllIsaLevels) names.push_back(IsaLevelName(level));
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<IsaLevel> ParseIsaLevel(std::string_view name) {
  for (IsaLevel level : kAllIsaLevels) {
    if (name == IsaLevelName(level)) return level;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown instruction set \"", std::string(name),
                                                 "\" (one of: ", IsaLevelNames(), ")"));
}

bool CpuHasIsaLevel(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar:
      return true;
    case IsaLevel::kAvx2:
      return kernels::IsaSupported(kernels::Isa::kAvx2);
    case IsaLevel::kAvx2Vnni:
      return CpuHasIsaLevel(IsaLevel::kAvx2) && CpuHasAvxVnni();
    case IsaLevel::kAvx512:
      return kernels::IsaSupported(kernels::Isa::kAvx512);
    case IsaLevel::kAvx512Vnni:
      return CpuHasIsaLevel(IsaLevel::kAvx512) && CpuHasAvx512Vnni();
    case IsaLevel::kAvx512Bf16:
      return CpuHasIsaLevel(IsaLevel::kAvx512Vnni) && CpuHasAvx512Bf16();
  }
  return false;
}

IsaLevel BestCpuIsaLevel() {
  IsaLevel best = IsaLevel::kScalar;
  for (IsaLevel level : kAllIsaLevels) {
    if (CpuHasIsaLevel(level)) best = level;
  }
  return best;
}

std::string CpuIsaLevelNames() {
  std::vector<std::string> names;
  for (IsaLevel level : kAllIsaLevels) {
    if (CpuHasIsaLevel(level)) names.push_back(IsaLevelName(level));
  }
  return absl::StrJoin(names, ", ");
}

absl::Status UseIsaLevel(IsaLevel level) {
  common::MutexLock lock(&isa_mu);
  return ApplyLocked(level, /*cap_onednn=*/true);
}

absl::StatusOr<IsaLevel> ActiveIsaLevel() {
  common::MutexLock lock(&isa_mu);
  if (chosen_level.has_value()) return *chosen_level;
  if (const char* env = std::getenv("ENCODER_ISA"); env != nullptr && *env != '\0') {
    absl::StatusOr<IsaLevel> level = ParseIsaLevel(env);
    if (!level.ok())
      return absl::InvalidArgumentError(absl::StrCat("ENCODER_ISA: ", level.status().message()));
    RETURN_IF_ERROR(ApplyLocked(*level, /*cap_onednn=*/true));
    return *level;
  }
  const IsaLevel best = BestCpuIsaLevel();
  RETURN_IF_ERROR(ApplyLocked(best, /*cap_onednn=*/false));
  return best;
}

std::string OneDnnIsaName() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

absl::Status PrecisionSupported(Precision precision, IsaLevel level) {
  if (precision != Precision::kBf16 || level >= IsaLevel::kAvx512Bf16) return absl::OkStatus();
  if (!CpuHasIsaLevel(IsaLevel::kAvx512Bf16)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "precision bf16 needs a CPU with native bf16 (AVX512_BF16, or AMX): this CPU lacks "
        "AVX512_BF16 (its instruction-set levels: ",
        CpuIsaLevelNames(), "); use fp32 or int8"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("precision bf16 needs the instruction-set level avx512_bf16, and the level in "
                   "use is ",
                   IsaLevelName(level), " (--isa / ENCODER_ISA)"));
}

}  // namespace engine
