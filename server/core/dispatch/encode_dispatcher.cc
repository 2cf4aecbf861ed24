#include "server/core/dispatch/encode_dispatcher.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "server/core/requests/head_results.h"

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
  if (builder_->WindowsLongInputs(request)) {  // long_input_dispatch.cc
    DispatchWindowed(request, deadline, std::move(is_cancelled), std::move(done));
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
    CountEncoded(metrics, *outputs);
    done(core::EncodeResult{pooling, *std::move(outputs), {}});
  };
  Submit(std::move(batch_request));
}

void EncodeDispatcher::Submit(std::unique_ptr<BatchRequest> request) {
  if (cache_ != nullptr) {
    SubmitCached(cache_, std::move(request));
    return;
  }
  // On refusal the batcher never calls the request's `done`: answer here.
  auto done = request->done;
  if (absl::Status status = batcher_->Submit(std::move(request)); !status.ok()) {
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
  // EncodeDispatcher::Submit: calls the part's `done` in every case.
  std::function<void(std::unique_ptr<BatchRequest>)> submit;
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
  chain->submit(std::move(part));
}

}  // namespace

void EncodeDispatcher::CountEncoded(ServerMetrics* metrics,
                                    const std::vector<InputOutput>& outputs) {
  int64_t tokens = 0;
  for (const InputOutput& output : outputs) tokens += output.tokens;
  metrics->Encoded(static_cast<int64_t>(outputs.size()), tokens);
}

void EncodeDispatcher::SubmitParts(std::vector<std::unique_ptr<BatchRequest>> parts,
                                   Clock::time_point deadline, std::function<bool()> is_cancelled,
                                   OutputsDone done) {
  auto chain = std::make_shared<PartChain>();
  chain->parts = std::move(parts);
  chain->deadline = deadline;
  chain->is_cancelled = std::move(is_cancelled);
  chain->submit = [this](std::unique_ptr<BatchRequest> part) { Submit(std::move(part)); };
  chain->done = [metrics = metrics_,
                 done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
    if (outputs.ok()) CountEncoded(metrics, *outputs);
    done(std::move(outputs));
  };
  SubmitNextPart(chain);
}

template <typename Result, typename Build, typename ToResult>
void EncodeDispatcher::DispatchParts(Build build, Clock::time_point deadline,
                                     std::function<bool()> is_cancelled,
                                     std::function<void(absl::StatusOr<Result>)> done,
                                     ToResult to_result) {
  if (!accepting_) {
    done(ShuttingDown());
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> parts = build();
  metrics_->Tokenized(std::chrono::steady_clock::now() - start);
  if (!parts.ok()) {
    done(parts.status());
    return;
  }
  SubmitParts(*std::move(parts), deadline, std::move(is_cancelled),
              [to_result = std::move(to_result),
               done = std::move(done)](absl::StatusOr<std::vector<InputOutput>> outputs) {
                if (!outputs.ok()) {
                  done(outputs.status());
                  return;
                }
                done(to_result(*std::move(outputs)));
              });
}

namespace {

// One request as the only part.
absl::StatusOr<std::vector<std::unique_ptr<BatchRequest>>> OnePart(
    absl::StatusOr<std::unique_ptr<BatchRequest>> built) {
  if (!built.ok()) return built.status();
  std::vector<std::unique_ptr<BatchRequest>> parts;
  parts.push_back(*std::move(built));
  return parts;
}

}  // namespace

void EncodeDispatcher::DispatchClassify(const core::ClassifyRequest& request,
                                        Clock::time_point deadline,
                                        std::function<bool()> is_cancelled, ClassifyDone done) {
  // Called only once the build succeeded, so the model has its classifier.
  const LoadedModel* model = &builder_->model();
  DispatchParts<core::ClassifyResult>(
      [&] { return OnePart(builder_->BuildClassify(request)); }, deadline, std::move(is_cancelled),
      std::move(done),
      [model, raw = request.raw_scores](std::vector<InputOutput> outputs) {
        return ToClassifyResult(std::move(outputs), *model->heads.classifier, raw);
      });
}

void EncodeDispatcher::DispatchRerank(const core::RerankRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, RerankDone done) {
  const BatcherConfig& config = batcher_->config();
  const RequestLimits& limits = builder_->limits();
  const int max_part_inputs = std::min(limits.max_inputs_per_request, config.max_batch_inputs);
  const int64_t max_part_tokens =
      std::min({limits.max_tokens_per_request, config.max_batch_tokens, config.max_queue_tokens});
  // The answer needs the texts (return_text) and top_n, not the request object.
  auto windows = std::make_shared<std::vector<int>>();  // window mode: per text
  auto kept = std::make_shared<core::RerankRequest>();
  kept->top_n = request.top_n;
  kept->return_text = request.return_text;
  kept->raw_scores = request.raw_scores;
  if (request.return_text) kept->texts = request.texts;
  const LoadedModel* model = &builder_->model();
  DispatchParts<core::RerankResult>(
      [&] {
        return builder_->BuildRerank(request, max_part_inputs, max_part_tokens, windows.get());
      },
      deadline, std::move(is_cancelled), std::move(done),
      [kept, model,
       windows](std::vector<InputOutput> outputs) -> absl::StatusOr<core::RerankResult> {
        if (!model->heads.classifier.has_value()) {  // MaxSim (CheckHead allowed it)
          return ToMaxSimRerankResult(std::move(outputs), *kept, *model->heads.multi_vector);
        }
        if (windows->empty()) {
          return ToRerankResult(std::move(outputs), *kept, model->heads.classifier->activation);
        }
        return long_inputs::RankBestWindows(*windows, std::move(outputs), *kept,
                                            model->heads.classifier->activation);
      });
}

void EncodeDispatcher::DispatchSparse(const core::SparseRequest& request,
                                      Clock::time_point deadline,
                                      std::function<bool()> is_cancelled, SparseDone done) {
  const engine::Tokenizer* tokenizer =
      request.return_tokens ? builder_->model().tokenizer.get() : nullptr;
  DispatchParts<core::SparseResult>([&] { return OnePart(builder_->BuildSparse(request)); },
                                    deadline, std::move(is_cancelled), std::move(done),
                                    [tokenizer](std::vector<InputOutput> outputs) {
                                      return ToSparseResult(std::move(outputs), tokenizer);
                                    });
}

void EncodeDispatcher::DispatchMulti(const core::MultiRequest& request, Clock::time_point deadline,
                                     std::function<bool()> is_cancelled, MultiDone done) {
  const engine::Tokenizer* tokenizer =
      request.return_tokens ? builder_->model().tokenizer.get() : nullptr;
  // The answer needs which outputs were asked, not the inputs.
  core::MultiRequest asked;
  asked.dense = request.dense;
  asked.sparse = request.sparse;
  asked.colbert = request.colbert;
  DispatchParts<core::MultiResult>(
      [&] { return OnePart(builder_->BuildMulti(request)); }, deadline, std::move(is_cancelled),
      std::move(done),
      [tokenizer, asked = std::move(asked)](std::vector<InputOutput> outputs) {
        return ToMultiResult(std::move(outputs), asked, tokenizer);
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
