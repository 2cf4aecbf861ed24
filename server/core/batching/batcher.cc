#include "server/core/batching/batcher.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/mutex.h"
#include "common/status_macros.h"
#include "server/core/batching/request_queue.h"

namespace server::core {
namespace {

using common::MutexLock;
using Answer = std::pair<std::shared_ptr<PendingRequest>, absl::Status>;

void AnswerAll(std::vector<Answer>& answers) {
  for (auto& [request, status] : answers) request->request->done(std::move(status));
  answers.clear();
}

// Checks a request on its own, before it touches the queue.
absl::Status CheckRequest(const BatchRequest& request, const BatcherConfig& config,
                          int64_t* total_tokens) {
  if (request.inputs.empty()) return absl::InvalidArgumentError("request has no inputs");
  int64_t total = 0;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const TokenizedInput& input = request.inputs[i];
    const auto tokens = static_cast<int64_t>(input.ids.size());
    if (tokens == 0) return absl::InvalidArgumentError(absl::StrCat("input ", i, " has no tokens"));
    if (tokens > config.max_batch_tokens) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " has ", tokens,
                                                     " tokens, more than a batch holds (",
                                                     config.max_batch_tokens, ")"));
    }
    if (!input.token_type_ids.empty() && input.token_type_ids.size() != input.ids.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " has ", input.token_type_ids.size(), " token types for ", tokens, " ids"));
    }
    total += tokens;
  }
  if (total > config.max_queue_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("request has ", total,
                                                   " tokens, more than the queue holds (",
                                                   config.max_queue_tokens, ")"));
  }
  *total_tokens = total;
  return absl::OkStatus();
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Rounded to the nearest millisecond, for messages.
int64_t Milliseconds(Clock::duration d) {
  return std::llround(std::chrono::duration<double, std::milli>(d).count());
}

}  // namespace

struct Batcher::State {
  State(BatcherConfig config, Backend* backend, Clock* clock, BatcherObserver* observer)
      : config(config), backend(backend), clock(clock), observer(observer) {}

  void WorkerLoop() ABSL_LOCKS_EXCLUDED(mu);
  // Answers what the worker dropped from the queue, off the worker's thread.
  void ResponderLoop() ABSL_LOCKS_EXCLUDED(mu);
  // Cuts the next batch from the queue, answering the requests that must not
  // run (answered, expired, cancelled, unable to finish by their deadline)
  // through `rejected`.
  std::vector<QueuedInput> CutBatch(std::vector<Answer>* rejected)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Expected time to run `tokens` tokens of `inputs` inputs, packed into as
  // few batches as the budgets allow.
  Clock::duration PredictLocked(int64_t tokens, int64_t inputs) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (tokens <= 0) return Clock::duration::zero();
    const int64_t batches = std::max(CeilDiv(tokens, config.max_batch_tokens),
                                     CeilDiv(inputs, config.max_batch_inputs));
    return cost.Predict(batches, tokens);
  }
  // What is left of the running batch's expected time.
  Clock::duration RunningLeftLocked(Clock::time_point now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (!batch_running || running_expected_end <= now) return Clock::duration::zero();
    return running_expected_end - now;
  }
  // Refuses a request that cannot finish by its deadline behind the queue.
  absl::Status AdmitLocked(const BatchRequest& request, int64_t tokens, Clock::time_point now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // These four run the engine or call `done`: never under `mu`.
  void RunBatch(std::vector<QueuedInput>& batch) ABSL_LOCKS_EXCLUDED(mu);
  // Runs `inputs` as one engine batch; on success fills `outputs`.
  absl::Status RunOnBackend(const std::vector<QueuedInput>& inputs,
                            std::vector<InputOutput>* outputs) ABSL_LOCKS_EXCLUDED(mu);
  void Deliver(QueuedInput& input, InputOutput output) ABSL_LOCKS_EXCLUDED(mu);
  void Fail(PendingRequest& request, absl::Status status) ABSL_LOCKS_EXCLUDED(mu);
  void ReportQueue() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (observer != nullptr) observer->OnQueueChanged(queue.requests(), queue.tokens());
  }

  const BatcherConfig config;
  Backend* const backend;
  Clock* const clock;
  BatcherObserver* const observer;

  mutable common::Mutex mu;
  common::CondVar work_cv;  // wakes the worker: new input, shutdown
  common::CondVar idle_cv;  // wakes Drain: a batch ended
  RequestQueue queue ABSL_GUARDED_BY(mu);
  bool accepting ABSL_GUARDED_BY(mu) = true;
  bool stopping ABSL_GUARDED_BY(mu) = false;  // run what is queued, then exit
  bool batch_running ABSL_GUARDED_BY(mu) = false;
  BatchCostModel cost ABSL_GUARDED_BY(mu);
  Clock::time_point running_expected_end ABSL_GUARDED_BY(mu);  // while batch_running
  std::deque<Answer> to_answer ABSL_GUARDED_BY(mu);            // for the responder
  bool answering ABSL_GUARDED_BY(mu) = false;                  // the responder holds answers
  bool responder_exit ABSL_GUARDED_BY(mu) = false;
  bool held ABSL_GUARDED_BY(mu) = false;  // no new batch while set
  Clock::time_point last_answer ABSL_GUARDED_BY(mu);
  common::CondVar answer_cv;  // wakes the responder
  std::thread worker;
  std::thread responder;
};

Batcher::Batcher(BatcherConfig config, Backend* backend, Clock* clock, BatcherObserver* observer)
    : state_(std::make_unique<State>(config, backend, clock, observer)) {}

Batcher::~Batcher() {
  Resume();
  Shutdown();
  if (state_->worker.joinable()) {
    state_->worker.join();
    {
      MutexLock lock(&state_->mu);
      state_->responder_exit = true;
    }
    state_->answer_cv.SignalAll();
    state_->responder.join();
    return;
  }
  // Never started: nothing will run what is queued.
  std::vector<Answer> answers;
  {
    MutexLock lock(&state_->mu);
    for (auto& request : state_->queue.Clear()) {
      if (request->TryClaim()) {
        answers.emplace_back(request, absl::UnavailableError("batcher stopped before it started"));
      }
    }
  }
  AnswerAll(answers);
}

void Batcher::Start() {
  MutexLock lock(&state_->mu);
  if (state_->worker.joinable()) return;
  state_->worker = std::thread([state = state_.get()] { state->WorkerLoop(); });
  state_->responder = std::thread([state = state_.get()] { state->ResponderLoop(); });
}

const BatcherConfig& Batcher::config() const { return state_->config; }

absl::Status Batcher::Submit(std::unique_ptr<BatchRequest> request) {
  State& s = *state_;
  if (request == nullptr) return absl::InvalidArgumentError("request has no inputs");
  int64_t tokens = 0;
  RETURN_IF_ERROR(CheckRequest(*request, s.config, &tokens));
  auto pending = std::make_shared<PendingRequest>();
  pending->outputs.resize(request->inputs.size());
  pending->inputs_left = static_cast<int>(request->inputs.size());
  pending->request = std::move(request);
  {
    MutexLock lock(&s.mu);
    if (!s.accepting) return absl::UnavailableError("server is shutting down");
    if (s.queue.tokens() + tokens > s.config.max_queue_tokens) {
      return absl::ResourceExhaustedError(
          absl::StrCat("queue full: ", s.queue.tokens(), " tokens queued and this request needs ",
                       tokens, ", over the limit of ", s.config.max_queue_tokens, "; retry later"));
    }
    const Clock::time_point now = s.clock->Now();
    RETURN_IF_ERROR(s.AdmitLocked(*pending->request, tokens, now));
    pending->enqueued = now;
    s.queue.Push(std::move(pending));
    s.ReportQueue();
  }
  s.work_cv.Signal();
  return absl::OkStatus();
}

absl::Status Batcher::State::AdmitLocked(const BatchRequest& request, int64_t tokens,
                                         Clock::time_point now) const {
  if (request.deadline == Clock::time_point::max() || !cost.known()) return absl::OkStatus();
  const Clock::duration left = request.deadline - now;
  const Clock::duration wait =
      RunningLeftLocked(now) + PredictLocked(queue.tokens(), queue.inputs());
  const auto inputs = static_cast<int64_t>(request.inputs.size());
  // Its own batches, and the queued work that shares them.
  const Clock::duration finish = RunningLeftLocked(now) +
                                 PredictLocked(queue.tokens() + tokens, queue.inputs() + inputs) +
                                 config.deadline_margin;
  // The queue ahead is admitted only up to 1 / queue_wait_headroom of the time
  // left: a queue filled to the deadline's edge answers everything just in
  // time or just late (estimates are noisy), and the late answers are wasted
  // work; with headroom the answers come back well inside their deadline.
  if (finish + (config.queue_wait_headroom - 1.0) * wait <= left) return absl::OkStatus();
  const Clock::duration own = finish - wait - config.deadline_margin;
  if (queue.empty() && !batch_running) {
    // Nothing ahead of it: waiting and retrying will not help.
    return absl::DeadlineExceededError(absl::StrCat(
        "the request's expected compute of ", Milliseconds(own), " ms does not fit in the ",
        Milliseconds(left), " ms left before its deadline"));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "the queue's expected wait of ", Milliseconds(wait), " ms (", queue.tokens(),
      " tokens queued) plus this request's ", Milliseconds(own), " ms of compute exceeds the ",
      Milliseconds(left), " ms left before its deadline; retry later"));
}

void Batcher::Shutdown() {
  {
    MutexLock lock(&state_->mu);
    state_->accepting = false;
    state_->stopping = true;
  }
  state_->work_cv.SignalAll();
}

bool Batcher::Drain(Clock::duration timeout) {
  State& s = *state_;
  std::vector<Answer> answers;
  bool drained = false;
  {
    MutexLock lock(&s.mu);
    const Clock::time_point deadline = s.clock->Now() + timeout;
    for (;;) {
      drained = s.queue.empty() && !s.batch_running && s.to_answer.empty() && !s.answering;
      if (drained || s.clock->Now() >= deadline) break;
      s.clock->WaitUntil(s.idle_cv, s.mu, deadline);
    }
    if (!drained) {
      for (auto& request : s.queue.Clear()) {
        if (request->TryClaim()) {
          answers.emplace_back(
              request, absl::UnavailableError("server shut down before the request could run"));
        }
      }
      s.ReportQueue();
    }
  }
  AnswerAll(answers);
  return drained;
}

void Batcher::Hold() {
  MutexLock lock(&state_->mu);
  state_->held = true;
}

void Batcher::Resume() {
  {
    MutexLock lock(&state_->mu);
    state_->held = false;
  }
  state_->work_cv.SignalAll();
}

Clock::duration Batcher::SinceLastAnswer() const {
  MutexLock lock(&state_->mu);
  return state_->clock->Now() - state_->last_answer;
}

bool Batcher::answering() const {
  MutexLock lock(&state_->mu);
  return state_->batch_running || state_->answering || !state_->to_answer.empty();
}

int64_t Batcher::queued_requests() const {
  MutexLock lock(&state_->mu);
  return state_->queue.requests();
}

int64_t Batcher::queued_tokens() const {
  MutexLock lock(&state_->mu);
  return state_->queue.tokens();
}

void Batcher::State::WorkerLoop() {
  MutexLock lock(&mu);
  for (;;) {
    if (queue.empty() || held) {
      if (queue.empty() && stopping) return;
      clock->WaitUntil(work_cv, mu, Clock::time_point::max());
      continue;
    }
    // The engine is free and work is queued: cut a batch now, whether the
    // input came to an idle engine or gathered while the last batch ran. No
    // wait for company here (bench/README.md, "Low-load latency"): a window
    // of 100 or 400 us after the engine goes idle, or waiting for as many
    // inputs as the last batch had, did not raise throughput at concurrency
    // 32 (closed-loop clients split into two groups that alternate on the
    // engine either way) and costs a lone request the window; counting
    // max_queue_delay from an input's arrival, as before, left the engine
    // idle with work queued (a third of the throughput at concurrency 4 on a
    // small model, whose batches are shorter than the delay).
    std::vector<Answer> rejected;
    const Clock::time_point cut_at = clock->Now();
    std::vector<QueuedInput> batch = CutBatch(&rejected);
    int64_t tokens = 0;
    for (const QueuedInput& input : batch) tokens += input.tokens;
    batch_running = true;
    running_expected_end = cut_at + PredictLocked(tokens, static_cast<int64_t>(batch.size()));
    ReportQueue();
    const bool answers_sent = !batch.empty() || !rejected.empty();
    if (!rejected.empty()) {
      // The responder answers them while the engine runs the batch.
      for (Answer& answer : rejected) to_answer.push_back(std::move(answer));
      answer_cv.Signal();
    }
    mu.Unlock();
    RunBatch(batch);
    batch.clear();  // drop the references to the requests before reporting idle
    const Clock::time_point ended_at = clock->Now();
    mu.Lock();
    // The worker's whole time for the batch: engine, pooling, answering.
    if (tokens > 0) cost.Observe(tokens, ended_at - cut_at);
    if (answers_sent) last_answer = ended_at;
    batch_running = false;
    idle_cv.SignalAll();
  }
}

void Batcher::State::ResponderLoop() {
  MutexLock lock(&mu);
  for (;;) {
    if (to_answer.empty()) {
      if (responder_exit) return;
      answer_cv.Wait(&mu);
      continue;
    }
    std::vector<Answer> answers(std::make_move_iterator(to_answer.begin()),
                                std::make_move_iterator(to_answer.end()));
    to_answer.clear();
    answering = true;
    mu.Unlock();
    AnswerAll(answers);
    mu.Lock();
    answering = false;
    last_answer = clock->Now();
    idle_cv.SignalAll();
  }
}

std::vector<QueuedInput> Batcher::State::CutBatch(std::vector<Answer>* rejected) {
  std::vector<QueuedInput> batch;
  int64_t tokens = 0;
  const Clock::time_point now = clock->Now();
  // The earliest deadline among the batch's requests, less the margin: the
  // batch must be expected to end by then.
  Clock::time_point batch_due = Clock::time_point::max();
  while (!queue.empty()) {
    PendingRequest& owner = *queue.front().owner;
    const Clock::time_point deadline = owner.request->deadline;
    const bool first_of_request = batch.empty() || batch.back().owner.get() != &owner;
    absl::Status refusal;
    if (owner.answered()) {
      // A sibling input failed, or the request was dropped: skip the rest.
    } else if (now >= deadline) {
      refusal = absl::DeadlineExceededError("deadline passed while the request was queued");
    } else if (owner.request->is_cancelled && owner.request->is_cancelled()) {
      refusal = absl::CancelledError("request cancelled while queued");
    } else {
      const QueuedInput& next = queue.front();
      if (static_cast<int>(batch.size()) == config.max_batch_inputs ||
          tokens + next.tokens > config.max_batch_tokens) {
        break;
      }
      if (first_of_request && deadline != Clock::time_point::max() && cost.known()) {
        // Its remaining inputs, in this batch and the ones after it.
        int64_t remaining_tokens = 0;
        const std::vector<TokenizedInput>& inputs = owner.request->inputs;
        for (size_t i = static_cast<size_t>(next.index); i < inputs.size(); ++i) {
          remaining_tokens += static_cast<int64_t>(inputs[i].ids.size());
        }
        const auto remaining_inputs = static_cast<int64_t>(inputs.size()) - next.index;
        const Clock::duration needed = PredictLocked(
            tokens + remaining_tokens, static_cast<int64_t>(batch.size()) + remaining_inputs);
        if (now + needed + config.deadline_margin > deadline) {
          refusal = absl::DeadlineExceededError(absl::StrCat(
              "the request could not finish before its deadline: ", Milliseconds(needed),
              " ms of compute expected, ", Milliseconds(deadline - now), " ms left"));
        }
      }
      if (refusal.ok()) {
        // One more input must not make an earlier member of the batch late.
        if (!batch.empty() && batch_due != Clock::time_point::max() && cost.known() &&
            now + PredictLocked(tokens + next.tokens, static_cast<int64_t>(batch.size()) + 1) >
                batch_due) {
          break;
        }
        if (deadline != Clock::time_point::max()) {
          batch_due = std::min(batch_due, deadline - config.deadline_margin);
        }
        if (next.index == 0 && observer != nullptr) {
          observer->OnRequestDequeued(now - owner.enqueued);
        }
        tokens += next.tokens;
        batch.push_back(queue.PopFront());
        continue;
      }
    }
    QueuedInput dropped = queue.PopFront();
    if (!refusal.ok() && owner.TryClaim()) rejected->emplace_back(dropped.owner, refusal);
  }
  return batch;
}

absl::Status Batcher::State::RunOnBackend(const std::vector<QueuedInput>& inputs,
                                          std::vector<InputOutput>* outputs) {
  std::vector<engine::Sequence> sequences;
  std::vector<OutputSpec> specs;
  sequences.reserve(inputs.size());
  specs.reserve(inputs.size());
  int64_t tokens = 0;
  for (const QueuedInput& input : inputs) {
    const BatchRequest& request = *input.owner->request;
    const TokenizedInput& tokenized = request.inputs[input.index];
    sequences.push_back(
        engine::Sequence{tokenized.ids, tokenized.token_type_ids, tokenized.visible_keys});
    specs.push_back(request.spec);
    tokens += input.tokens;
  }
  outputs->clear();
  const Clock::time_point start = clock->Now();
  absl::Status status = backend->Run(sequences, specs, outputs);
  if (observer != nullptr) {
    // Engine time: without the wait for this model's turn on a shared engine.
    observer->OnBatchDone(static_cast<int>(inputs.size()), tokens,
                          clock->Now() - start - backend->last_turn_wait());
  }
  if (status.ok() && outputs->size() != inputs.size()) {
    status = absl::InternalError(absl::StrCat("backend returned ", outputs->size(), " outputs for ",
                                              inputs.size(), " inputs"));
  }
  return status;
}

void Batcher::State::RunBatch(std::vector<QueuedInput>& batch) {
  if (batch.empty()) return;
  std::vector<InputOutput> outputs;
  const absl::Status status = RunOnBackend(batch, &outputs);
  if (status.ok()) {
    for (size_t i = 0; i < batch.size(); ++i) Deliver(batch[i], std::move(outputs[i]));
    return;
  }
  if (batch.front().owner == batch.back().owner) {
    // One request only (its inputs are contiguous): the error is its own.
    Fail(*batch.front().owner, status);
    return;
  }
  // Several requests shared the failed batch: run each request's inputs on
  // their own, so that only the request at fault gets an error.
  size_t begin = 0;
  while (begin < batch.size()) {
    size_t end = begin + 1;
    while (end < batch.size() && batch[end].owner == batch[begin].owner) ++end;
    std::vector<QueuedInput> group(batch.begin() + begin, batch.begin() + end);
    const absl::Status group_status = RunOnBackend(group, &outputs);
    if (group_status.ok()) {
      for (size_t i = 0; i < group.size(); ++i) Deliver(group[i], std::move(outputs[i]));
    } else {
      Fail(*group.front().owner, group_status);
    }
    begin = end;
  }
}

void Batcher::State::Deliver(QueuedInput& input, InputOutput output) {
  PendingRequest& owner = *input.owner;
  owner.outputs[input.index] = std::move(output);
  if (--owner.inputs_left == 0 && owner.TryClaim()) {
    owner.request->done(std::move(owner.outputs));
  }
}

void Batcher::State::Fail(PendingRequest& request, absl::Status status) {
  if (request.TryClaim()) request.request->done(std::move(status));
}

}  // namespace server::core
