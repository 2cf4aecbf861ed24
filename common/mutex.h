// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with
// Clang's thread-safety annotations, so that -Wthread-safety (on in every
// clang build, see the top-level CMakeLists.txt) checks the locking that
// ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED and friends declare: a guarded
// member read or written without its lock does not compile. Header-only.
//
// Why not absl::Mutex, which carries the same annotations: Debian's libabsl is
// not built with ThreadSanitizer, and absl::Mutex synchronizes in its own
// (uninstrumented) code, so TSan cannot see its locks and reports a data race
// on everything it guards; the server and batcher tests run under TSan. These
// classes lock std::mutex, i.e. pthread mutexes, which TSan intercepts.
//
// The API mirrors absl's (Mutex::Lock/Unlock/AssertHeld, MutexLock(&mu),
// CondVar::Wait(&mu)/WaitWithDeadline/Signal/SignalAll), so that a later
// switch to an instrumented absl::Mutex is a rename (and the deadline's type).
// The annotation macros come from absl/base/thread_annotations.h; they expand
// to nothing on g++.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace common {

class CondVar;

class ABSL_LOCKABLE Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // Tells the analysis that the calling thread holds the lock, where it
  // cannot tell by itself; checks nothing at run time.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope, as absl::MutexLock.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable for Mutex, as absl::CondVar. Each wait releases `mu`
// while it blocks and holds it again when it returns; wake-ups may be
// spurious, so wait in a loop that checks the condition.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Adopted lock(mu);
    cv_.wait(lock.lock);
  }
  // Waits until signalled or `deadline`; returns true when it timed out.
  // time_point::max() waits with no deadline (wait_until would overflow).
  bool WaitWithDeadline(Mutex* mu, std::chrono::steady_clock::time_point deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Adopted lock(mu);
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock.lock);
      return false;
    }
    return cv_.wait_until(lock.lock, deadline) == std::cv_status::timeout;
  }

  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  // The caller's hold on `mu`, lent to std::condition_variable for one wait:
  // adopted (not locked) here, released (not unlocked) on every way out, so
  // the caller still holds `mu` after the wait, as its annotations say.
  struct Adopted {
    explicit Adopted(Mutex* mu) : lock(Native(mu), std::adopt_lock) {}
    ~Adopted() { lock.release(); }
    Adopted(const Adopted&) = delete;
    Adopted& operator=(const Adopted&) = delete;
    std::unique_lock<std::mutex> lock;
  };
  static std::mutex& Native(Mutex* mu) { return mu->mu_; }

  std::condition_variable cv_;
};

}  // namespace common
