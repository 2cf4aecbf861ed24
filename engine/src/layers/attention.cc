#include "layers/attention.h"

#include <omp.h>

#include <cmath>

#include "kernels/kernels.h"
#include "oneapi/dnnl/dnnl.h"

namespace engine {

void SelfAttention(const float* qkv, const PackedBatch& packed, int heads, int head_size,
                   const Workspace& workspace, float* context) {
  const int64_t hidden = static_cast<int64_t>(heads) * head_size;
  const int64_t qkv_stride = 3 * hidden;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  const int tasks = packed.num_sequences * heads;
  const kernels::Isa isa = kernels::BestIsa();
  // One (sequence, head) pair per task; each thread owns one scores block.
  // oneDNN's sgemm runs single-threaded inside the parallel region.
#pragma omp parallel for schedule(dynamic, 1)
  for (int task = 0; task < tasks; ++task) {
    const int s = task / heads;
    const int head = task % heads;
    const int64_t begin = packed.offsets[s];
    const int64_t len = packed.offsets[s + 1] - begin;
    float* scores = workspace.scores_for_thread(omp_get_thread_num());
    const float* q = qkv + begin * qkv_stride + head * head_size;
    const float* k = q + hidden;
    const float* v = q + 2 * hidden;
    // scores[len, len] = Q K^T, Q and K read with the fused row stride.
    dnnl_sgemm('N', 'T', len, len, head_size, 1.0f, q, qkv_stride, k, qkv_stride, 0.0f, scores,
               len);
    kernels::ScaledSoftmaxWithIsa(isa, scores, len, len, scale);
    float* out = context + begin * hidden + head * head_size;
    dnnl_sgemm('N', 'N', len, head_size, len, 1.0f, scores, len, v, qkv_stride, 0.0f, out, hidden);
  }
}

}  // namespace engine
