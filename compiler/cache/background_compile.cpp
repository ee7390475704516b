// KernelCache's tiered misses (kernel_cache.h, Options::Tiering): a kernel starts in tier 0
// on the caller's thread, and a background thread compiles it, switches it to machine code
// and writes its disk entry.
//
// Why threads that are waited for at exit: a cold solve should not wait for LLVM, but a
// compile must not run while the process tears libLLVM down (an exit while the compile
// thread loads or runs LLVM can abort the process).
// Every background compile is counted in a process-wide registry, and exit() waits for
// them first of all: from a thread_local destructor of the thread that started them
// (below), then from atexit handlers registered before the first compile and right after
// libLLVM is loaded (llvm_backend.cpp), for an exit() called from another thread.
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/compiler/kernel_numerics.h"
#include "lsjit/compiler/llvm/llvm_backend.h"
#include "lsjit/compiler/tier0/tier0.h"

namespace lsjit::compiler {
namespace {

std::string ms(double seconds) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", seconds * 1e3);
  return b;
}

struct Registry {
  std::mutex mutex;
  std::condition_variable done;
  uint32_t running = 0;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used from atexit handlers
  return *r;
}

// exit() runs the calling thread's thread_local destructors before any atexit handler
// (glibc's __run_exit_handlers), so this one, made on the thread that starts a background
// compile, is the earliest place a returning main() can wait: before libLLVM's statics,
// which libLLVM registers as it loads, on the compile thread, and so after any atexit
// handler registered here. At the end of any other thread it does nothing.
struct WaitAtMainThreadExit {
  ~WaitAtMainThreadExit() {
    if (::gettid() == ::getpid()) wait_for_background_compiles();
  }
};

void registry_start() {
  thread_local WaitAtMainThreadExit wait_at_exit;
  (void)&wait_at_exit;  // constructed (and its destructor registered) on first use
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(wait_for_background_compiles); });
  std::lock_guard lock(registry().mutex);
  ++registry().running;
}

// The threads that run background compiles: kWorkers of them, all started by the first
// submit, before any of them loads libLLVM, and kept until the process exits (stop(), from
// wait_for_background_compiles). Why not a thread per compile: creating a thread allocates
// its TLS under the dynamic loader's TLS lock, which the first compile holds for tens of
// milliseconds while it loads libLLVM, so analyze() would wait in pthread_create for its
// second mode's compile. Two workers: the normal-equation
// and residual kernels of a cost compile side by side, as they did on threads of their own.
// Why joined at exit: a worker holds thread-local LLVM state (codegen's TargetMachine), and
// LeakSanitizer's exit-time scan of such a thread crashed ("Tracer caught signal 11").
class CompileWorkers {
 public:
  static constexpr unsigned kWorkers = 2;

  // Runs `job` on a worker, at Linux's `nice` (per thread). Throws std::system_error if no
  // worker can be started (then nothing of `job` runs).
  void submit(std::function<void()> job, int nice) {
    std::unique_lock lock(mutex_);
    while (threads_.size() < kWorkers) threads_.emplace_back([this] { work(); });
    jobs_.push_back({std::move(job), nice});
    lock.unlock();
    ready_.notify_one();
  }

  // Lets the workers finish the queued jobs, then joins them. A later submit starts new
  // ones. Not to be called from a worker.
  void stop() {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      threads.swap(threads_);
    }
    ready_.notify_all();
    for (std::thread& t : threads) t.join();
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }

 private:
  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
        if (jobs_.empty()) return;  // stopping, and nothing left to do
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), job.nice);
      job.run();
    }
  }

  struct Job {
    std::function<void()> run;
    int nice = 19;
  };
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> jobs_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

CompileWorkers& compile_workers() {
  static CompileWorkers* w = new CompileWorkers;  // never destroyed: used from exit handlers
  return *w;
}

// A compile is background work: the thread that solves meanwhile, in tier 0, should not
// lose its core to it (Linux's nice applies per thread; docs/benchmarks-history.md has cold solves
// with compiles at nice 0 and 19). Among compiles, the kernels a solve calls every
// iteration (the normal equations; the Jacobian's) come first: at equal niceness the
// residual kernel, which Levenberg-Marquardt rarely calls, takes half of the spare core
// and the normal equations stay in tier 0 the longer. CFS weights: nice 10 is about a
// tenth of the solving thread's nice 0, nice 19 a seventh of nice 10.
int compile_nice(KernelMode mode) { return mode == KernelMode::Residual ? 19 : 10; }

void registry_finish() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (--r.running == 0) r.done.notify_all();
}

}  // namespace

void wait_for_background_compiles() {
  {
    Registry& r = registry();
    std::unique_lock lock(r.mutex);
    r.done.wait(lock, [&] { return r.running == 0; });
  }
  compile_workers().stop();
}

void KernelCache::wait_for_background() {
  std::unique_lock lock(background_mutex_);
  background_done_.wait(lock, [&] { return background_running_ == 0; });
}

bool KernelCache::run_in_background(std::function<void()> job, int nice) {
  {
    std::lock_guard lock(background_mutex_);
    ++background_running_;
  }
  registry_start();
  auto finish = [this] {
    {
      std::lock_guard lock(background_mutex_);
      --background_running_;
      background_done_.notify_all();  // under the lock: the cache may be destroyed after it
    }
    registry_finish();
  };
  try {
    compile_workers().submit([job = std::move(job), finish] {
      job();
      finish();
    }, nice);
    return true;
  } catch (const std::exception&) {  // no thread: the caller runs it
    finish();
    return false;
  }
}

void KernelCache::load_compiler_in_background() {
  // The load holds the dynamic loader's lock for its whole duration: what tier 0 will ask
  // the loader for (libmvec's functions) is resolved first, as start_in_tier0 does.
  resolve_math_functions();
  registry_start();  // exit waits for the load, as for a compile (libLLVM's statics)
  try {
    compile_workers().submit([] {
      try {
        (void)llvm_backend();
      } catch (const std::exception&) {  // the compile that needs the module says why
      }
      registry_finish();
    }, compile_nice(KernelMode::NormalEquations));
  } catch (const std::exception&) {  // no thread: the first compile loads it
    registry_finish();
  }
}

void KernelCache::start_in_tier0(const std::shared_ptr<Kernel>& kernel, const ir::Trace& traced,
                                 KernelMode mode, const CompileOptions& options, double trace_s,
                                 Lookup& out) {
  const auto t0 = Clock::now();
  StageTimes& t = kernel->times;
  t.trace_s = trace_s;
  auto graph = std::make_shared<const ir::Trace>(graph_for_mode(traced, mode));
  (mode == KernelMode::Residual ? t.simplify_s : t.differentiate_s) = seconds_since(t0);
  kernel->layout = make_layout(traced.signature, mode);
  kernel->tier0 = std::make_shared<const Tier0Kernel>(*graph, kernel->layout, options, options_.tier0_code);
  kernel->source = out.source = KernelSource::Tier0;
  kernel->obtain_s = seconds_since(t0);
  {
    std::lock_guard lock(mutex_);
    ++stats_.misses;
  }
  if (options_.tiering != Options::Tiering::Tiered) return;
  {
    std::lock_guard lock(background_mutex_);
    ++background_running_;
  }
  registry_start();
  resolve_math_functions();  // tier 0's later kernels must not wait for the loader's lock
  try {
    compile_workers().submit([this, kernel, graph, mode, options, times = t] {
      compile_in_background(kernel, graph, mode, options, times);
    }, compile_nice(mode));
    out.background_compile = true;
  } catch (const std::exception& ex) {  // no thread: the kernel stays in tier 0
    {
      std::lock_guard lock(background_mutex_);
      --background_running_;
      background_done_.notify_all();  // under the lock: the cache may be destroyed after it
    }
    registry_finish();
    warn(std::string("cannot start a background compile (") + ex.what() + "); cost '" +
         traced.signature.name + "' runs in tier 0");
  }
}

void KernelCache::compile_in_background(const std::shared_ptr<Kernel>& kernel,
                                        const std::shared_ptr<const ir::Trace>& graph,
                                        KernelMode mode, CompileOptions options, StageTimes times) {
  const std::string& name = graph->signature.name;
  try {
    const auto t0 = Clock::now();
    Built built = compile_and_load(*graph, *kernel, options, times);
    kernel->code = std::move(built.code);
    kernel->function.store(built.function, std::memory_order_release);  // the switch
    const double compile_s = seconds_since(t0);
    {
      std::lock_guard lock(mutex_);
      ++stats_.compiles;
      stats_.compile_s += compile_s;
    }
    if (options_.log_compiles)
      log_line("lsjit: kernel " + name + " " + std::string(mode_name(mode)) + " " +
               kernel->key.id().substr(0, 12) + ": compiled in the background in " + ms(compile_s) +
               " ms (llvm_ir " + ms(times.llvm_ir_s) + ", optimize " + ms(times.optimize_s) +
               ", codegen " + ms(times.codegen_s) + ", link " + ms(times.link_s) + " ms); " +
               std::to_string(kernel->tier0_calls.load()) + " calls ran in tier 0 before\n");
    store_on_disk(kernel->key, kernel->symbol, times, *graph, built.object);
  } catch (const std::exception& ex) {
    warn("kernel cache: compiling cost '" + name + "' (mode " + std::string(mode_name(mode)) +
         ") failed (" + ex.what() + "); it keeps running in tier 0");
  }
  {
    std::lock_guard lock(background_mutex_);
    --background_running_;
    background_done_.notify_all();  // under the lock: the cache may be destroyed after it
  }
  registry_finish();
}

}  // namespace lsjit::compiler
