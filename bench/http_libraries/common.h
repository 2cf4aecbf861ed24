// The canned answer of every candidate server: 384 floats as JSON (4 KB), the
// size of a MiniLM embedding response (the body read is discarded). And the
// stand-in for the batcher: a worker thread that answers each request later,
// in the order they came, on its own thread (the library's loop or handler
// thread is not the one that answers).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

inline std::string CannedAnswer() {
  std::string body = "[[";
  for (int i = 0; i < 384; ++i) {
    if (i > 0) body += ",";
    body += "-0.0123456";
  }
  return body + "]]";
}

// One thread running posted tasks in order; WORKER_DELAY_MS (default 0) makes
// each task wait that long first, to watch a request that waits (disconnects,
// pipelining).
class Worker {
 public:
  Worker()
      : delay_ms_(std::getenv("WORKER_DELAY_MS") ? std::atoi(std::getenv("WORKER_DELAY_MS")) : 0) {
    thread_ = std::thread([this] { Run(); });
    thread_.detach();  // the prototypes run until killed
  }
  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
      task();
    }
  }
  const int delay_ms_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  std::thread thread_;
};

// What a prototype prints when it learns that a client went away while its
// request waited for the worker (the server could cancel the work).
inline void NoteClientGone(const char* library) {
  std::fprintf(stderr, "%s: client gone while its request waited\n", library);
}
