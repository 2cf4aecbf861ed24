// Instruction-set levels: one switch (--isa, ENCODER_ISA) that caps what the
// engine runs, for the project's own kernels and for oneDNN alike, so a fleet
// of mixed CPUs can be pinned to one numeric path.
//
//   level        project kernels  oneDNN cap        int8 weights
//   scalar       scalar           sse41 (1)         7-bit
//   avx2         AVX2 + FMA       avx2              7-bit
//   avx2_vnni    AVX2 + FMA       avx2_vnni         7-bit (2)
//   avx512       AVX-512          avx512_core       7-bit
//   avx512_vnni  AVX-512          avx512_core_vnni  8-bit
//   avx512_bf16  AVX-512          avx512_core_bf16  8-bit
//
// (1) oneDNN has no scalar level; sse41 is its lowest.
// (2) oneDNN 2.6 may or may not multiply u8 x s8 with AVX-VNNI on that
//     level, so the range stays the one exact either way (Int8WeightMax).
// The VNNI and BF16 levels change only what oneDNN may use (and the int8
// weight range); the project's kernels have one version per vector width.
// Without a switch the level is the best this CPU has and oneDNN is not
// capped at all (on CPUs with AMX it may use AMX beyond avx512_bf16).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/config.h"

namespace engine {

// In increasing order; a level need not include the features of every lower
// one (an AVX-512 CPU may lack AVX-VNNI), but the best is the highest the CPU has.
enum class IsaLevel { kScalar, kAvx2, kAvx2Vnni, kAvx512, kAvx512Vnni, kAvx512Bf16 };
inline constexpr IsaLevel kAllIsaLevels[] = {IsaLevel::kScalar,     IsaLevel::kAvx2,
                                             IsaLevel::kAvx2Vnni,   IsaLevel::kAvx512,
                                             IsaLevel::kAvx512Vnni, IsaLevel::kAvx512Bf16};

// "scalar", "avx2", "avx2_vnni", "avx512", "avx512_vnni", "avx512_bf16".
const char* IsaLevelName(IsaLevel level);
// The names above, comma-separated (for help texts and errors).
std::string IsaLevelNames();
// One of the names above; anything else is InvalidArgument naming them.
absl::StatusOr<IsaLevel> ParseIsaLevel(std::string_view name);

// Whether this CPU (and its OS) runs every instruction of `level`.
bool CpuHasIsaLevel(IsaLevel level);
// The highest level this CPU has.
IsaLevel BestCpuIsaLevel();
// The levels this CPU has, comma-separated.
std::string CpuIsaLevelNames();

// Pins the process to `level`: caps the project's kernels (kernels::BestIsa)
// and oneDNN (dnnl::set_max_cpu_isa). Process-wide and once: call before the
// first encoder loads. A level the CPU lacks is FailedPrecondition ("this CPU
// lacks ..."); asking again for the level in use is OK, for another one
// FailedPrecondition.
absl::Status UseIsaLevel(IsaLevel level);

// The level in use, choosing it on the first call if UseIsaLevel was not
// called: ENCODER_ISA from the environment if set (a bad name or a level the
// CPU lacks is an error, every call), else the best this CPU has (oneDNN
// uncapped). Encoder::Load calls it first.
absl::StatusOr<IsaLevel> ActiveIsaLevel();

// Whether `precision` runs natively at `level`: bf16 needs avx512_bf16
// (AVX512_BF16; AMX CPUs have it too), and is refused below it rather than
// emulated. FailedPrecondition names the missing feature, and whether the CPU
// lacks it or the level in use (--isa, ENCODER_ISA) excludes it.
absl::Status PrecisionSupported(Precision precision, IsaLevel level);

// What oneDNN reports it runs (after the level is in use), e.g.
// "avx512_core_vnni"; for logs.
std::string OneDnnIsaName();

}  // namespace engine
