// A backend for batcher tests: records every batch it runs, can be held in
// the middle of a run, fails any batch holding a poisoned input, and (with
// SetCost) advances a fake clock by what the batch "costs", so that the
// batcher's cost model and deadlines run on deterministic time.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "common/mutex.h"
#include "fake_clock.h"
#include "server/core/batching/backend.h"

namespace testing_support {

using server::core::Backend;
using server::core::Clock;
using server::core::InputOutput;
using server::core::OutputSpec;

class FakeBackend : public Backend {
 public:
  // An input whose first id is this fails the whole batch it is in.
  static constexpr int32_t kPoisonId = -7;

  // Each output is {first id, token count}: enough to tell which input it is.
  // A classify spec gets num_labels() logits, logit j = tokens + j; a sparse
  // spec one entry per distinct id after the first, weight = its last
  // position, by descending weight, cut to max_active_dims when set; a multi
  // spec what it asks of those, and {id, position} per token after the first.
  absl::Status Run(absl::Span<const engine::Sequence> batch, absl::Span<const OutputSpec> specs,
                   std::vector<InputOutput>* outputs) ABSL_LOCKS_EXCLUDED(mu_) override {
    common::MutexLock lock(&mu_);
    std::vector<int32_t> first_ids;
    for (const engine::Sequence& sequence : batch) first_ids.push_back(sequence.ids[0]);
    batches_.push_back(first_ids);
    specs_.insert(specs_.end(), specs.begin(), specs.end());
    ++started_;
    changed_.SignalAll();
    while (held_) changed_.Wait(&mu_);
    if (clock_ != nullptr) {
      int64_t tokens = 0;
      for (const engine::Sequence& sequence : batch) tokens += sequence.ids.size();
      clock_->Advance(per_batch_ + per_token_ * tokens);
    }
    for (int32_t id : first_ids) {
      if (id == kPoisonId) return absl::InvalidArgumentError("poisoned input");
    }
    outputs->clear();
    for (size_t b = 0; b < batch.size(); ++b) {
      const engine::Sequence& sequence = batch[b];
      InputOutput out;
      out.rows = 1;
      out.cols = 2;
      out.tokens = static_cast<int>(sequence.ids.size());
      out.values = {static_cast<float>(sequence.ids[0]), static_cast<float>(sequence.ids.size())};
      if (specs[b].head == server::core::OutputHead::kClassify) {
        out.cols = num_labels_;
        out.values.clear();
        for (int j = 0; j < num_labels_; ++j)
          out.values.push_back(static_cast<float>(out.tokens + j));
      } else if (specs[b].head == server::core::OutputHead::kSparse) {
        out.rows = 0;
        out.cols = 0;
        out.values.clear();
        FakeSparse(sequence, specs[b].sparse.max_active_dims, &out.sparse);
      } else if (specs[b].head == server::core::OutputHead::kMulti) {
        if (!specs[b].multi.dense) out.values.clear();
        if (specs[b].multi.sparse) {
          FakeSparse(sequence, specs[b].sparse.max_active_dims, &out.sparse);
        }
        if (specs[b].multi.multi_vector) {
          // Per token after the first: {its id, its position}.
          out.vector_cols = 2;
          for (size_t p = 1; p < sequence.ids.size(); ++p) {
            out.vectors.push_back(static_cast<float>(sequence.ids[p]));
            out.vectors.push_back(static_cast<float>(p));
            ++out.vector_rows;
          }
        }
      }
      outputs->push_back(std::move(out));
    }
    return absl::OkStatus();
  }

  // The sparse entries described above Run.
  static void FakeSparse(const engine::Sequence& sequence, int max_dims,
                         std::vector<engine::SparseEntry>* sparse) {
    for (size_t p = 1; p < sequence.ids.size(); ++p) {
      const float weight = static_cast<float>(p);
      bool seen = false;
      for (engine::SparseEntry& entry : *sparse) {
        if (entry.id == sequence.ids[p]) {
          entry.weight = weight;
          seen = true;
        }
      }
      if (!seen) sparse->push_back({sequence.ids[p], weight});
    }
    std::stable_sort(sparse->begin(), sparse->end(),
                     [](const engine::SparseEntry& a, const engine::SparseEntry& b) {
                       return a.weight > b.weight;
                     });
    if (max_dims > 0 && static_cast<int>(sparse->size()) > max_dims) {
      sparse->resize(static_cast<size_t>(max_dims));
    }
  }

  // From now on each run advances `clock` by per_batch + per_token x its
  // tokens, after any hold, as if the engine took that long.
  void SetCost(FakeClock* clock, Clock::duration per_batch, Clock::duration per_token)
      ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    clock_ = clock;
    per_batch_ = per_batch;
    per_token_ = per_token;
  }

  // How many logits a classify output has (default 1).
  void SetNumLabels(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    num_labels_ = n;
  }

  // While held, a run blocks after recording its batch.
  void Hold() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    held_ = true;
  }
  void Release() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      common::MutexLock lock(&mu_);
      held_ = false;
    }
    changed_.SignalAll();
  }
  // Bounded wait for the n-th run to start.
  bool AwaitStarted(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    common::MutexLock lock(&mu_);
    while (started_ < n) {
      if (changed_.WaitWithDeadline(&mu_, give_up)) return started_ >= n;
    }
    return true;
  }

  // The first id of each input, batch by batch.
  std::vector<std::vector<int32_t>> batches() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    return batches_;
  }
  std::vector<OutputSpec> specs() ABSL_LOCKS_EXCLUDED(mu_) {
    common::MutexLock lock(&mu_);
    return specs_;
  }

 private:
  common::Mutex mu_;
  common::CondVar changed_;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  FakeClock* clock_ ABSL_GUARDED_BY(mu_) = nullptr;  // the clock itself has its own lock
  Clock::duration per_batch_ ABSL_GUARDED_BY(mu_){0};
  Clock::duration per_token_ ABSL_GUARDED_BY(mu_){0};
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int num_labels_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<std::vector<int32_t>> batches_ ABSL_GUARDED_BY(mu_);
  std::vector<OutputSpec> specs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing_support
