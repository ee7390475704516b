// A small fork-join pool for evaluation: run(n, f) calls f(0) ... f(n-1), spread over the
// pool's threads and the caller's, and returns when all have finished. Tasks are claimed
// in order from a shared counter; callers that need results independent of the thread
// count give each task a fixed piece of work and combine task results in task order.
//
// One run() at a time per pool (solve() owns its pool). The first exception a task throws
// is rethrown by run() after every task has finished or been skipped.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lsjit::detail {

class ThreadPool {
 public:
  // threads: total threads working in run(), the caller included; 0 means
  // std::thread::hardware_concurrency(). 1 runs everything on the caller. Throws
  // lsjit::Error, with every thread it started stopped, when the system cannot start them.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  void run(size_t tasks, const std::function<void(size_t)>& f);

 private:
  void work();
  void drain();
  void stop_workers();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t tasks_ = 0, next_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace lsjit::detail
