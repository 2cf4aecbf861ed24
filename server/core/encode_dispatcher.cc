#include "server/core/encode_dispatcher.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "server/core/head_results.h"

namespace server {
namespace {

absl::Status ShuttingDown() { return absl::UnavailableError("server is shutting down"); }

}  // namespace

void EncodeDispatcher::Dispatch(const core::EncodeRequest& request, Clock::time_point deadline,
                                std::function<bool()> is_cancelled, Done done) {
  if (!accepting_) {
    done(ShuttingDown());
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<BatchRequest>> built = builder_->Build(request);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!built.ok()) {
    done(built.status());
    return;
  }
  std::unique_ptr<BatchRequest> batch_request = *std::move(built);
  batch_request->deadline = deadline;
  batch_request->is_cancelled = std::move(is_cancelled);
  batch_request->done = [pooling = batch_request->spec.pooling, metrics = metrics_,
                         done](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      done(outputs.status());
      return;
    }
    int64_t tokens = 0;
    for (const InputOutput& output : *outputs) tokens += output.tokens;
    metrics->Encoded(static_cast<int64_t>(outputs->size()), tokens);
    done(core::EncodeResult{pooling, *std::move(outputs)});
  };
  // On refusal the batcher never calls the request's `done`: answer here.
  if (absl::Status status = batcher_->Submit(std::move(batch_request)); !status.ok()) {
    done(status);
  }
}

namespace {

// A request's parts, submitted one at a time from the previous part's answer.
struct PartChain {
  std::vector<std::unique_ptr<BatchRequest>> parts;
  size_t next = 0;
  std::vector<InputOutput> outputs;
  Clock::time_point deadline;
  std::function<bool()> is_cancelled;
  std::function<void(absl::StatusOr<std::vector<InputOutput>>)> done;
  Batcher* batcher = nullptr;
};

void SubmitNextPart(const std::shared_ptr<PartChain>& chain) {
  std::unique_ptr<BatchRequest> part = std::move(chain->parts[chain->next++]);
  part->deadline = chain->deadline;
  part->is_cancelled = chain->is_cancelled;
  part->done = [chain](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (!outputs.ok()) {
      chain->done(outputs.status());
      return;
    }
    if (chain->outputs.empty()) {
      chain->outputs = *std::move(outputs);
    } else {
      std::move(outputs->begin(), outputs->end(), std::back_inserter(chain->outputs));
    }
    if (chain->next == chain->parts.size()) {
      chain->done(std::move(chain->outputs));
      return;
    }
    SubmitNextPart(chain);
  };
  if (absl::Status status = chain->batcher->Submit(std::move(part)); !status.ok()) {
    chain->done(status);
  }
}

}  // namespace

void EncodeDispatcher::SubmitParts(std::vector<std::unique_ptr<BatchRequest>> parts,
                                   Clock::time_point deadline, std::function<bool()> is_cancelled,
                                   OutputsDone done) {
  auto chain = std::make_shared<PartChain>();
  chain->parts = std::move(parts);
  chain->deadline = deadline;
  chain->is_cancelled = std::move(is_cancelled);
  chain->batcher = batcher_;
  chain->done = [metrics = metrics_,
                 done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (outputs.ok()) {
      int64_t tokens = 0;
      for (const InputOutput& output : *outputs) tokens += output.tokens;
      metrics->Encoded(static_cast<int64_t>(outputs->size()), tokens);
    }
    done(std::move(outputs));
  };
  SubmitNextPart(chain);
}

void EncodeDispatcher::DispatchClassify(const core::ClassifyRequest& request,
                                        Clock::time_point deadline,
                                        std::function<bool()> is_cancelled, ClassifyDone done) {
  if (!accepting_) {
    done(ShuttingDown());
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<BatchRequest>> built = builder_->BuildClassify(request);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!built.ok()) {
    done(built.status());
    return;
  }
  std::vector<std::unique_ptr<BatchRequest>> parts;
  parts.push_back(*std::move(built));
  const engine::ClassifierHead* head = &*builder_->model().heads.classifier;
  SubmitParts(std::move(parts), deadline, std::move(is_cancelled),
              [head, raw = request.raw_scores,
               done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
                if (!outputs.ok()) {
                  done(outputs.status());
                  return;
                }
                done(ToClassifyResult(*std::move(outputs), *head, raw));
              });
}

void EncodeDispatcher::DispatchRerank(const core::RerankRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, RerankDone done) {
  if (!accepting_) {
    done(ShuttingDown());
    return;
  }
  const BatcherConfig& config = batcher_->config();
  const RequestLimits& limits = builder_->limits();
  const int max_part_inputs = std::min(limits.max_inputs_per_request, config.max_batch_inputs);
  const int64_t max_part_tokens =
      std::min({limits.max_tokens_per_request, config.max_batch_tokens, config.max_queue_tokens});
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> parts =
      builder_->BuildRerank(request, max_part_inputs, max_part_tokens);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!parts.ok()) {
    done(parts.status());
    return;
  }
  const engine::ScoreActivation activation = builder_->model().heads.classifier->activation;
  // The answer needs the texts (return_text) and top_n, not the request object.
  auto kept = std::make_shared<core::RerankRequest>();
  kept->top_n = request.top_n;
  kept->return_text = request.return_text;
  kept->raw_scores = request.raw_scores;
  if (request.return_text) kept->texts = request.texts;
  SubmitParts(
      *std::move(parts), deadline, std::move(is_cancelled),
      [kept, activation, done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
        if (!outputs.ok()) {
          done(outputs.status());
          return;
        }
        done(ToRerankResult(*std::move(outputs), *kept, activation));
      });
}

void EncodeDispatcher::DispatchSparse(const core::SparseRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, SparseDone done) {
  if (!accepting_) {
    done(ShuttingDown());
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<BatchRequest>> built = builder_->BuildSparse(request);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!built.ok()) {
    done(built.status());
    return;
  }
  std::vector<std::unique_ptr<BatchRequest>> parts;
  parts.push_back(*std::move(built));
  const engine::Tokenizer* tokenizer =
      request.return_tokens ? builder_->model().tokenizer.get() : nullptr;
  SubmitParts(
      std::move(parts), deadline, std::move(is_cancelled),
      [tokenizer, done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
        if (!outputs.ok()) {
          done(outputs.status());
          return;
        }
        done(ToSparseResult(*std::move(outputs), tokenizer));
      });
}

absl::StatusOr<engine::Encoding> EncodeDispatcher::Tokenize(const core::TokenizeRequest& request) {
  if (!accepting_) return ShuttingDown();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<engine::Encoding> encoding = builder_->Tokenize(request);
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  return encoding;
}

absl::StatusOr<std::string> EncodeDispatcher::Decode(const core::DecodeRequest& request) {
  if (!accepting_) return ShuttingDown();
  return builder_->Decode(request);
}

}  // namespace server
