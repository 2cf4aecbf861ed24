// oneDNN's measured matmul peak on this machine at BERT shapes: fp32,
// u8 x s8 -> s32, s8 x s8 -> s32 and bf16 x bf16 -> f32, each the median of
// --runs runs (one run = --reps executions, timed together), plus the
// implementation oneDNN picked (impl_info_str). Weights are in the layout
// oneDNN prefers (format_tag::any, reordered once), the activations plain
// row-major, as in the engine.
//   dnnl_peak [--threads 2] [--runs 7] [--reps 0 (about 0.2 s per run)] [--rows 1024,128]
//             [--weights any|ab|ba] [--types f32,u8s8s32,s8s8s32,bf16]
// --weights forces the weights' layout (ab: [K, N] row-major; ba: torch's
// [N, K]) instead of oneDNN's choice, to compare the kernels behind them.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

struct Type {
  const char* name;
  dt src, weights, dst;
  const char* unit;
};

constexpr Type kTypes[] = {
    {"f32", dt::f32, dt::f32, dt::f32, "GFLOP/s"},
    {"u8s8s32", dt::u8, dt::s8, dt::s32, "GOP/s"},
    {"s8s8s32", dt::s8, dt::s8, dt::s32, "GOP/s"},
    {"bf16", dt::bf16, dt::bf16, dt::f32, "GFLOP/s"},
};

void Fill(const memory& m) {
  // Small integers are valid in every data type here (bf16 stores them exactly).
  const size_t bytes = m.get_desc().get_size();
  auto* p = static_cast<uint8_t*>(m.get_data_handle());
  const dt type = m.get_desc().data_type();
  if (type == dt::f32) {
    auto* f = reinterpret_cast<float*>(p);
    for (size_t i = 0; i < bytes / 4; ++i) f[i] = static_cast<float>(i % 7) - 3.0f;
  } else if (type == dt::bf16) {
    auto* h = reinterpret_cast<uint16_t*>(p);
    for (size_t i = 0; i < bytes / 2; ++i) {
      const float f = static_cast<float>(i % 7) - 3.0f;
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      h[i] = static_cast<uint16_t>(bits >> 16);
    }
  } else {
    for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(i % 5);
  }
}

struct Result {
  bool ok = false;
  std::string impl;
  std::string error;
  double median_per_s = 0.0, best_per_s = 0.0;
};

Result Measure(const dnnl::engine& engine, dnnl::stream& stream, const Type& type, int64_t m,
               int64_t k, int64_t n, int runs, int reps, tag weights_tag) {
  Result r;
  try {
    const memory::desc src_md({m, k}, type.src, tag::ab);
    const memory::desc any_md({k, n}, type.weights, weights_tag);
    const memory::desc dst_md({m, n}, type.dst, tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, any_md, dst_md), engine);
    r.impl = pd.impl_info_str();
    // The weights' layout it runs on: plain ab ([K, N]), ba ([N, K]) or blocked.
    const memory::desc w = pd.weights_desc();
    const bool plain_layout =
        w.data.format_kind == dnnl_blocked && w.data.format_desc.blocking.inner_nblks == 0;
    const auto* strides = w.data.format_desc.blocking.strides;
    r.impl += !plain_layout     ? ", weights blocked"
              : strides[1] == 1 ? ", weights ab"
                                : ", weights ba";
    memory src(src_md, engine), weights(pd.weights_desc(), engine), dst(dst_md, engine);
    memory plain({{k, n}, type.weights, tag::ab}, engine);
    Fill(src);
    Fill(plain);
    dnnl::reorder(plain, weights).execute(stream, plain, weights);
    dnnl::matmul matmul(pd);
    const std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    const double ops = 2.0 * static_cast<double>(m) * k * n;
    auto run = [&](int count) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < count; ++i) matmul.execute(stream, args);
      stream.wait();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    run(2);  // warm-up
    if (reps <= 0) reps = std::max(1, static_cast<int>(0.2 / std::max(run(1), 1e-6)));
    std::vector<double> rates;
    for (int i = 0; i < runs; ++i) rates.push_back(ops * reps / run(reps) * 1e-9);
    std::sort(rates.begin(), rates.end());
    r.median_per_s = rates[rates.size() / 2];
    r.best_per_s = rates.back();
    r.ok = true;
  } catch (const dnnl::error& e) {
    r.error = e.what();
  }
  return r;
}

std::vector<int64_t> ParseList(const char* text) {
  std::vector<int64_t> v;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    v.push_back(std::strtoll(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *end != '\0') break;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, runs = 7, reps = 0;
  std::vector<int64_t> rows = {1024, 128};
  tag weights_tag = tag::any;
  std::string types = "f32,u8s8s32,s8s8s32,bf16";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") {
      threads = std::atoi(argv[i + 1]);
    } else if (flag == "--runs") {
      runs = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--reps") {
      reps = std::atoi(argv[i + 1]);
    } else if (flag == "--rows") {
      rows = ParseList(argv[i + 1]);
    } else if (flag == "--types") {
      types = argv[i + 1];
    } else if (flag == "--weights") {
      const std::string w = argv[i + 1];
      weights_tag = w == "ab" ? tag::ab : w == "ba" ? tag::ba : tag::any;
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--runs N] [--reps N] [--rows M,M]\n", argv[0]);
      return 2;
    }
  }
  omp_set_num_threads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  // (K, N): the FFN's two matmuls, then QKV and the attention output.
  const int64_t shapes[][2] = {{768, 3072}, {3072, 768}, {768, 2304}, {768, 768}};
  std::printf("oneDNN %d.%d.%d, %d threads, median of %d runs\n", dnnl_version()->major,
              dnnl_version()->minor, dnnl_version()->patch, threads, runs);
  std::printf("%-8s %-18s %10s %10s  %s\n", "type", "M x K x N", "median", "best",
              "implementation");
  for (const Type& type : kTypes) {
    if (("," + types + ",").find(std::string(",") + type.name + ",") == std::string::npos) continue;
    for (int64_t m : rows) {
      for (const auto& kn : shapes) {
        const Result r = Measure(engine, stream, type, m, kn[0], kn[1], runs, reps, weights_tag);
        char shape[64];
        std::snprintf(shape, sizeof(shape), "%lldx%lldx%lld", static_cast<long long>(m),
                      static_cast<long long>(kn[0]), static_cast<long long>(kn[1]));
        if (!r.ok) {
          std::printf("%-8s %-18s %10s %10s  unsupported: %s\n", type.name, shape, "-", "-",
                      r.error.c_str());
          std::printf("{\"type\":\"%s\",\"shape\":\"%s\",\"supported\":false}\n", type.name, shape);
          continue;
        }
        std::printf("%-8s %-18s %10.1f %10.1f  %s (%s)\n", type.name, shape, r.median_per_s,
                    r.best_per_s, r.impl.c_str(), type.unit);
        std::printf(
            "{\"type\":\"%s\",\"shape\":\"%s\",\"threads\":%d,\"median\":%.1f,\"best\":%.1f,"
            "\"unit\":\"%s\",\"impl\":\"%s\"}\n",
            type.name, shape, threads, r.median_per_s, r.best_per_s, type.unit, r.impl.c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
