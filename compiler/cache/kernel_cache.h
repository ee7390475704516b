// The kernel cache: from a traced cost, a mode and compile options to a loaded kernel,
// compiling only when neither memory nor the disk has it.
//
// get(traced, mode, options):
//   key = make_cache_key(traced, mode, options, host_target(options))   (cache_key.h)
//   1. memory: a map from the key's hash to the loaded kernel (parts compared too)
//   1b. linked: a kernel linked into the program (linked_kernels.h), under every tiering
//   2. disk: <dir>/<id>.lsjitk (disk_cache.h), loaded with load_kernel(object, symbol)
//   3. compile: graph_for_mode (timed as differentiate_s, or simplify_s for the residual
//      mode, whose graph is only simplified), make_layout, compile_kernel with the symbol
//      kernel_symbol(key), load_kernel; then stored in memory and written to disk.
// Trust (docs/compiler.md, "Trust"): a directory that is not the user's own and private, or
// a refused key file, is warned about once per process and the cache runs from memory
// only; an entry file that is not a regular file of the user is a miss, warned once. An
// entry without a valid authentication tag is a bad entry (below): never loaded.
// A bad disk entry (unauthenticated, truncated, corrupt, foreign version, not loadable, or a collision:
// stored key parts differ from the requested ones though the hash matched) is reported
// with one warning line on the log, never loaded, recompiled and replaced; so is an entry
// that cannot be read (permissions). A directory that cannot be written (read-only, full,
// or impossible to create, e.g. below a regular file) is reported once, at the first
// failing write, whose temporary file is removed; the cache then keeps working from
// memory and still reads entries from the directory. A directory removed while the cache
// runs is created again by the next write, silently (tests/compiler/cache_faults_test.cpp).
//
// Thread safe. Compiles happen outside the lock; two threads asking for one key at once
// compile it once (the second waits and counts a memory hit).
//
// Environment (read by Options::from_environment, which default_cache() uses):
//   LSJIT_CACHE_DIR=DIR             the disk cache directory (default_cache_dir())
//   LSJIT_DISK_CACHE=0              memory only
//   LSJIT_LOG_COMPILES=1            one line per get that is not a memory hit: the source
//                                   (disk or compiled) and the time of each stage
//   LSJIT_EXPLAIN_CACHE_MISSES=1    on a recompile (a cost name and mode that already
//                                   have a kernel need another one, as counted in
//                                   CacheStats::recompiles): the closest previous key (of
//                                   the same mode) and what differs, part by part. A
//                                   cost's first kernel in a new mode, and kernels a new
//                                   process loads from disk, are not recompiles: silent
//   LSJIT_FAIL_ON_RECOMPILE=1       a recompile throws lsjit::Error, with the explanation,
//                                   before anything is loaded or compiled (for test suites)
//   LSJIT_RECOMPILE_LIMIT=N         warn once per cost when it exceeds N recompiles (8)
//   LSJIT_TIER=tiered|compiled|0    Options::tiering: Tiered (the default), Compiled or
//                                   Tier0Only; any other value is warned about and means
//                                   tiered
//   LSJIT_TIER0_CODE=auto|interpreted
//                                   Options::tier0_code: whether tier 0 compiles its runs
//                                   of arithmetic to machine code where the CPU runs it
//                                   (auto, the default) or interprets every op (for
//                                   comparisons, and to rule the machine code out)
//
// Recompiles: a recompile is a memory miss for a (cost name, mode) that already has a
// kernel with a different key in this cache, whether the new kernel then comes from disk
// or from the compiler (so that fail_on_recompile does not depend on what the disk holds).
// Asking for another mode of the same cost is not a recompile.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "lsjit/compiler/cache/cache_key.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/kernel.h"
#include "lsjit/compiler/llvm/codegen.h"
#include "lsjit/compiler/llvm/jit.h"
#include "lsjit/compiler/tier0/tier0.h"

namespace lsjit::compiler {

// Tier0: built by tier 0 (tier0.h) instead of compiled. Linked: compiled ahead of time
// and linked into the program (linked_kernels.h, `lsjit cache export`).
enum class KernelSource : uint8_t { Memory, Disk, Compiled, Tier0, Linked };
std::string_view source_name(KernelSource source);  // memory, disk, compiled, tier0, linked

// A loaded kernel, shared by everyone who asked for its key. The code stays loaded while
// a handle exists.
//
// Tiers: a kernel runs machine code when `function` is set, else tier 0 (tier0.h). With
// KernelCache::Tiering::Tiered a missing kernel starts in tier 0 and a background thread
// compiles it, then sets `function` (after `code`): every call made after that runs the
// compiled code, calls already running finish in tier 0. The two compute the same bits,
// so where the switch falls within a solve changes no result.
struct Kernel {
  std::atomic<KernelFn> function{nullptr};
  KernelLayout layout;  // output array names use the slot names of the first trace
  CacheKey key;
  std::string symbol;
  // Compiled: every stage as measured. Disk: the stored stages of the compile that made
  // the entry, with trace_s and link_s (the load) measured in this process. Tier0: trace,
  // differentiate and simplify (a background compile does not change them).
  StageTimes times;
  KernelSource source = KernelSource::Compiled;  // how it entered this cache: Disk, Compiled, Tier0 or Linked
  double obtain_s = 0;  // seconds this process spent getting it (read + load, compile, or tier 0)
  std::shared_ptr<LoadedKernel> code;  // written once, before `function` is set
  // Source Tier0: the interpreter that runs until (or instead of) machine code.
  std::shared_ptr<const Tier0Kernel> tier0;
  mutable std::atomic<uint64_t> tier0_calls{0};  // calls tier 0 answered

  void operator()(const KernelArgs& args) const {
    if (const KernelFn f = function.load(std::memory_order_acquire)) {
      f(&args);
    } else {
      tier0_calls.fetch_add(1, std::memory_order_relaxed);
      (*tier0)(args);
    }
  }
};

struct CacheStats {
  uint64_t gets = 0;
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t linked_hits = 0;  // found among the kernels linked into the program
  uint64_t misses = 0;       // neither in memory nor (validly) on disk
  uint64_t compiles = 0;     // successful compiles
  uint64_t recompiles = 0;   // see above
  uint64_t bad_disk_entries = 0;  // corrupt, truncated, foreign, colliding, unloadable
  uint64_t disk_writes = 0;  // kernel and data entries written
  uint64_t data_hits = 0;    // read_data calls answered from the disk
  double compile_s = 0;      // total seconds of compiles (graph_for_mode to load)
  size_t entries = 0;        // kernels in memory
};

struct CacheEntryInfo {
  CacheKey key;
  std::string symbol;
  KernelSource source;
  StageTimes times;
  double obtain_s;
  uint64_t hits;  // memory hits on this entry
};

class KernelCache {
 public:
  // The compiler and JIT the cache calls. An empty member means the LLVM one (host_target,
  // compile_kernel, load_kernel); tests replace them to exercise the cache without LLVM.
  struct Backend {
    std::function<TargetInfo(const CompileOptions&)> target;
    std::function<CompiledObject(const ir::Trace& mode_graph, const KernelLayout&,
                                 const CompileOptions&, const std::string& symbol)>
        compile;
    std::function<std::shared_ptr<LoadedKernel>(const std::string& object, const std::string& symbol)>
        load;
  };

  struct Options {
    // The disk cache directory; nullopt: default_cache_dir(). Ignored when !use_disk.
    std::optional<std::filesystem::path> directory;
    bool use_disk = true;
    std::ostream* log = nullptr;  // warnings, compile log, explanations; nullptr: std::cerr
    bool quiet = false;           // no output at all (warnings included)
    bool log_compiles = false;
    bool explain_misses = false;
    uint32_t recompile_limit = 8;
    bool fail_on_recompile = false;
    // Where kernels that are not in memory come from:
    //   Compiled   the disk, else a compile that the caller waits for;
    //   Tiered     the disk, else tier 0 at once (tier0.h: the compiled kernel's bits,
    //              somewhat slower to evaluate as AVX-512 machine code, several times
    //              slower interpreted) while a background thread compiles, switches the
    //              kernel to machine code and writes the disk entry (Kernel, above);
    //   Tier0Only  tier 0 always: no disk, LLVM never loaded. For platforms without LLVM.
  // Under each, kernels linked into the program (linked_kernels.h) come before the disk.
    // A cache constructed in code compiles; default_cache() reads LSJIT_TIER (tiered unless
    // set). The process waits for background compiles at exit, and ~KernelCache for its own.
    enum class Tiering : uint8_t { Compiled, Tiered, Tier0Only };
    Tiering tiering = Tiering::Compiled;
    // How tier 0 runs (Tier0Kernel::Code): machine code for runs of arithmetic where the
    // CPU has AVX-512F, or every op interpreted. The same bits either way.
    Tier0Kernel::Code tier0_code = Tier0Kernel::Code::Auto;
    Backend backend;

    static Options from_environment();
  };

  // A cache that will compile, with the default backend, a disk directory that lists no
  // entry and no kernels linked into the program, starts loading the LLVM module
  // (llvm_backend.h) on a background compile thread: it has nothing to load kernels from,
  // so its first miss would wait tens of milliseconds for that module before its first compile could
  // start. The load then overlaps what the program does before analyze() (reading its
  // data). Any other cache loads nothing until a miss compiles; Tier0Only never does.
  KernelCache();
  explicit KernelCache(Options options);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  struct Lookup {
    std::shared_ptr<const Kernel> kernel;
    KernelSource source = KernelSource::Memory;  // of this get: Memory, Disk, Compiled, Tier0 or Linked
    double seconds = 0;                          // spent in this get
    // A miss for a cost name and mode that already had another kernel in this cache (see
    // "Recompiles" above), whatever then produced the kernel.
    bool recompile = false;
    // Source Tier0 under Tiering::Tiered: a background thread compiles the kernel (false
    // when no thread could be started: it stays in tier 0, with a warning).
    bool background_compile = false;
  };
  // `traced` must be at stage Traced. `trace_s`: how long tracing took, for the log and
  // Kernel::times (the cache does not trace). Throws lsjit::Error if compiling fails or on
  // a recompile with fail_on_recompile.
  Lookup lookup(const ir::Trace& traced, KernelMode mode, const CompileOptions& options = {},
                double trace_s = 0);
  std::shared_ptr<const Kernel> get(const ir::Trace& traced, KernelMode mode,
                                    const CompileOptions& options = {}) {
    return lookup(traced, mode, options).kernel;
  }

  // Several modes of one cost at once, hashing the trace's structure once for all. Memory
  // hits, and misses whose entry is on disk, are answered on the calling thread (a load
  // takes about as long as starting and joining a thread); two or more misses to compile
  // compile concurrently, one thread each (code generation is independent per kernel), so
  // the wall time is that of the slowest mode rather than the sum. Results are in the order
  // of `modes`; the first failure is rethrown after every thread has finished.
  std::vector<Lookup> lookup_modes(const ir::Trace& traced, const std::vector<KernelMode>& modes,
                                   const CompileOptions& options = {}, double trace_s = 0);

  // The key get() would use.
  CacheKey key_for(const ir::Trace& traced, KernelMode mode, const CompileOptions& options = {});

  CacheStats stats() const;
  std::vector<CacheEntryInfo> entries() const;  // in memory, by id
  // The kernel in memory under `key`, or nullptr. Not counted as a get.
  std::shared_ptr<const Kernel> find(const CacheKey& key) const;
  uint32_t recompiles(std::string_view cost_name) const;

  // Data derived from a problem's static structure that is not machine code (for example
  // the sparse Cholesky's fill-reducing ordering, runtime/analyze/ordering_cache.h), kept in the
  // disk directory beside the kernels: the same entry format, authentication, LRU and gc,
  // under a key whose first part is ("data", WHAT) (is_data_key). A memory-only cache, and
  // Tiering::Tier0Only (no disk), keep none. The caller checks what it reads before using it: authentication only says
  // that this user's lsjit wrote it.
  // read_data: the bytes stored under `key` if the disk holds a valid entry with exactly
  // these key parts and `invalid(bytes)` returns "" (else it says what is wrong with them),
  // else nullopt. A bad entry is warned about as a kernel's is, and the caller computes the
  // data again and stores it, which replaces the entry.
  std::optional<std::string> read_data(const CacheKey& key,
                                       const std::function<std::string(std::string_view)>& invalid);
  // Writes `bytes` under `key` (a data key; std::invalid_argument otherwise). With
  // Tiering::Tiered on a background worker at the lowest priority, so that a solve does not
  // wait for the write's fsync (wait_for_background waits for it); else on the calling
  // thread. Failures are warned about as kernel writes are, never thrown.
  void store_data(const CacheKey& key, std::string bytes);
  // Whether a new data entry under `key` is worth writing when the keys of its kind may
  // change at every call, as a factorization structure does while a problem grows online:
  // true for the first one this cache is asked about, and for a key it was asked about
  // before (a structure that came back); false for any other key, which is remembered
  // (up to kMaxDataSightings keys) so that asking again counts as the repeat. An online
  // loop thus writes one entry per cache, not one per step; a process that solves one
  // problem stores its structure at once.
  bool data_worth_storing(const CacheKey& key);
  static constexpr size_t kMaxDataSightings = 4096;

  // Blocks until every background compile this cache started (Tiering::Tiered) has
  // finished: its kernel switched to machine code, or its failure warned about; and every
  // background store_data has been written or warned about.
  void wait_for_background();

  void set_fail_on_recompile(bool fail);
  // Forgets the kernels in memory (handles already given out stay valid) and the history
  // used for explanations and recompile counting. The disk is untouched.
  void clear_memory();

  // The disk directory in use, or nullopt when the cache is memory-only (by option or for
  // lack of a directory).
  std::optional<std::filesystem::path> disk_directory() const;
  // False once a write failed (reported once on the log): entries are still read from
  // the directory, but new kernels stay in memory only.
  bool disk_writable() const;

 private:
  struct Seen {
    CacheKey key;
    std::shared_ptr<const ir::Trace> traced;
  };
  struct Entry {
    std::shared_ptr<const Kernel> kernel;
    uint64_t hits = 0;
  };

  // The kernel of `key` if memory has it (counted as a get and a hit), else nullopt: a
  // miss, a collision or a kernel being produced, which lookup() handles. `seconds` of
  // the result is 0; the caller measures.
  std::optional<Lookup> memory_hit(const CacheKey& key);
  // lookup() with the key already made (key_for) of a Traced-stage trace.
  Lookup lookup_keyed(const ir::Trace& traced, KernelMode mode, const CompileOptions& options,
                      double trace_s, const CacheKey& key);
  // Whether the disk cache is in use and has a file under `key`'s id (not yet checked).
  bool on_disk(const CacheKey& key);
  using HashKey = std::pair<uint64_t, uint64_t>;
  // lookup_keyed's steps (kernel_cache.cpp says what each does).
  std::optional<Lookup> wait_for_memory(std::unique_lock<std::mutex>& lock, const HashKey& hk,
                                        const CacheKey& key, const std::string& name);
  struct MissNotes {
    std::string explanation, limit_warning;  // to log after the lock is released
    bool recompile = false;
  };
  MissNotes record_miss(const ir::Trace& traced, KernelMode mode, const CacheKey& key);
  std::shared_ptr<const Kernel> produce_in_flight(const ir::Trace& traced, KernelMode mode,
                                                  const CompileOptions& options, const CacheKey& key,
                                                  double trace_s, Lookup& out);
  static std::string kernel_log_line(const std::string& name, KernelMode mode, const CacheKey& key,
                                     const Kernel& kernel, KernelSource source);
  // produce() and its steps: the first place that has the kernel.
  // Each sets out.source (and start_in_tier0 out.background_compile).
  std::shared_ptr<const Kernel> produce(const ir::Trace& traced, KernelMode mode,
                                        const CompileOptions& options, const CacheKey& key,
                                        double trace_s, Lookup& out);
  bool take_linked(Kernel& kernel, const ir::Trace& traced, KernelMode mode, double trace_s,
                   std::chrono::steady_clock::time_point t0);
  bool load_from_disk(Kernel& kernel, const ir::Trace& traced, KernelMode mode, double trace_s,
                      std::chrono::steady_clock::time_point t0);
  void report_bad_entry(const CacheKey& key, const std::string& name, KernelMode mode, const std::string& what);
  void compile_now(Kernel& kernel, const ir::Trace& traced, KernelMode mode, const CompileOptions& options,
                   double trace_s, std::chrono::steady_clock::time_point t0);
  // The miss of produce() with tiering: `kernel` (key and symbol set) becomes a tier 0
  // kernel, and unless Tier0Only a background thread compiles it (background_compile.cpp).
  void load_compiler_in_background();
  void start_in_tier0(const std::shared_ptr<Kernel>& kernel, const ir::Trace& traced, KernelMode mode,
                      const CompileOptions& options, double trace_s, Lookup& out);
  void compile_in_background(const std::shared_ptr<Kernel>& kernel,
                             const std::shared_ptr<const ir::Trace>& graph, KernelMode mode,
                             CompileOptions options, StageTimes times);
  // Compiles `graph` (a mode graph) for `kernel`'s layout and symbol and loads the code,
  // filling the LLVM and link stages of `times`. Setting kernel.code and kernel.function
  // is the caller's: produce() does it at once, a background compile publishes the
  // function last. Throws lsjit::Error if compiling or loading fails.
  struct Built {
    CompiledObject object;  // for the disk entry
    std::shared_ptr<LoadedKernel> code;
    KernelFn function;
  };
  Built compile_and_load(const ir::Trace& graph, const Kernel& kernel, const CompileOptions& options,
                         StageTimes& times);
  // Writes a compiled kernel's entry to the disk cache, if it is in use and writable;
  // failures are warned about (once where they repeat), never thrown.
  void store_on_disk(const CacheKey& key, const std::string& symbol, const StageTimes& times,
                     const ir::Trace& graph, const CompiledObject& object);
  // store_on_disk's write of any entry (kernel or data).
  void write_entry(const DiskEntry& entry);
  // Runs `job` on a background compile worker at `nice`, counted for wait_for_background
  // and for the wait at exit; false (nothing run) when no worker can be started.
  bool run_in_background(std::function<void()> job, int nice);
  TargetInfo target_for(const CompileOptions& options);
  void warn(const std::string& line);
  void log_line(const std::string& line);
  void warn_unwritable(const std::string& why);
  void warn_once(const std::string& what, const std::string& line);
  // The directory's key (DiskCache::auth_key), nullopt if there is none yet or the
  // directory or key file is refused; a refusal is warned once and turns the disk off.
  // Reads (create false) reuse the key last read: checking the directory and reading the
  // key file at every kernel load would cost more than the load's own read. Writes (create
  // true) check and read again, and refresh it, so a directory removed and made again
  // during the run (with a new key) is followed. A key held in memory cannot let anyone
  // else's entry in: only this key's holder can tag one.
  std::optional<AuthKey> disk_key(bool create);

  Options options_;
  std::optional<DiskCache> disk_;  // set once in the constructor
  bool disk_writable_ = true;      // under mutex_
  bool disk_trusted_ = true;       // under mutex_; false once the directory or key is refused
  std::optional<AuthKey> read_key_;  // under mutex_; disk_key's last key
  bool no_directory_warned_ = false;

  mutable std::mutex mutex_;
  std::condition_variable in_flight_done_;
  std::map<HashKey, Entry> memory_;  // by key hash; the parts are compared on a hit
  std::set<HashKey> in_flight_;      // keys being loaded or compiled by some thread
  std::set<HashKey> data_sightings_;   // data_worth_storing's keys seen and not yet stored
  bool data_stored_on_sight_ = false;  // data_worth_storing has said true once
  std::map<std::string, std::vector<Seen>, std::less<>> seen_;  // by cost name
  std::map<std::pair<std::string, KernelMode>, std::vector<Hash128>> kernels_for_;  // (name, mode)
  std::map<std::string, uint32_t, std::less<>> recompiles_;
  std::set<std::string, std::less<>> limit_warned_;
  CacheStats stats_;
  std::vector<std::pair<std::tuple<uint32_t, bool, bool, CpuLevel>, TargetInfo>> targets_;

  std::mutex log_mutex_;

  std::mutex background_mutex_;
  std::condition_variable background_done_;
  uint32_t background_running_ = 0;  // under background_mutex_
};

// Blocks until the background compiles of every KernelCache have finished, then joins the
// compile worker threads (a later compile starts new ones). Registered
// with atexit before the first one starts and again once LLVM is loaded, so that a
// process exits only after its compiles (and their disk entries) are done and before
// libLLVM's static destructors run.
void wait_for_background_compiles();

// The process-wide cache, configured from the environment on first use. Never destroyed
// (kernels may be in use until the process exits).
KernelCache& default_cache();

}  // namespace lsjit::compiler
