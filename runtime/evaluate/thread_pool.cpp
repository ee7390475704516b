#include "lsjit/runtime/evaluate/thread_pool.h"

#include <algorithm>
#include <string>
#include <system_error>

#include "lsjit/common/error.h"

namespace lsjit::detail {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  try {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  } catch (const std::system_error& e) {
    // The destructor does not run for a constructor that throws, and a joinable
    // std::thread destroyed unjoined terminates the process: stop the ones that started.
    const size_t started = workers_.size();
    stop_workers();
    throw Error("cannot start " + std::to_string(threads) + " threads (started " +
                std::to_string(started + 1) + "): " + e.what());
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

// Claims and runs tasks of the current job until none is left.
void ThreadPool::drain() {
  std::unique_lock lock(mutex_);
  while (next_ < tasks_) {
    const size_t task = next_++;
    const auto* job = job_;
    const bool skip = error_ != nullptr;
    lock.unlock();
    if (!skip) {
      try {
        (*job)(task);
      } catch (...) {
        std::lock_guard error_lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
    lock.lock();
    if (++finished_ == tasks_) done_.notify_all();
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    drain();
  }
}

void ThreadPool::run(size_t tasks, const std::function<void(size_t)>& f) {
  if (tasks == 0) return;
  if (workers_.empty() || tasks == 1) {
    for (size_t t = 0; t < tasks; ++t) f(t);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &f;
    tasks_ = tasks;
    next_ = 0;
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == tasks_; });
  job_ = nullptr;
  tasks_ = 0;
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

}  // namespace lsjit::detail
