#include "lsjit/compiler/cache/kernel_cache.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <future>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/linked_kernels.h"
#include "lsjit/ir/printer.h"
#include "lsjit/ir/structural_hash.h"

namespace lsjit::compiler {
namespace {

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s * 1e3);
  return buf;
}

std::string short_id(const CacheKey& key) { return key.id().substr(0, 12); }

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  const std::string s = v;
  return !(s == "0" || s == "false" || s == "off" || s == "no" || s == "FALSE" || s == "OFF" ||
           s == "NO" || s == "False" || s == "Off" || s == "No");
}

// The previous key of `name` closest to `key`: same mode first, then most equal parts;
// the most recent one on a tie.
const auto* closest_seen(const auto& seen, const CacheKey& key) {
  decltype(&seen.front()) best = nullptr;
  size_t best_score = 0;
  const std::string_view mode = key.part("mode");
  for (const auto& s : seen) {
    if (s.key.hash == key.hash) continue;
    const size_t score = equal_parts(s.key, key) + (s.key.part("mode") == mode ? 1000 : 0);
    if (!best || score >= best_score) {
      best = &s;
      best_score = score;
    }
  }
  return best;
}

}  // namespace

std::string_view source_name(KernelSource source) {
  switch (source) {
    case KernelSource::Memory: return "memory";
    case KernelSource::Disk: return "disk";
    case KernelSource::Compiled: return "compiled";
    case KernelSource::Tier0: return "tier0";
    case KernelSource::Linked: return "linked";
  }
  return "?";
}

KernelCache::Options KernelCache::Options::from_environment() {
  Options o;
  if (const char* d = std::getenv("LSJIT_DISK_CACHE"); d && *d && !env_flag("LSJIT_DISK_CACHE"))
    o.use_disk = false;
  o.log_compiles = env_flag("LSJIT_LOG_COMPILES");
  o.explain_misses = env_flag("LSJIT_EXPLAIN_CACHE_MISSES");
  o.fail_on_recompile = env_flag("LSJIT_FAIL_ON_RECOMPILE");
  o.tiering = Tiering::Tiered;
  if (const char* t = std::getenv("LSJIT_TIER"); t && *t) {
    const std::string_view tier(t);
    if (tier == "0")
      o.tiering = Tiering::Tier0Only;
    else if (tier == "compiled")
      o.tiering = Tiering::Compiled;
    else if (tier != "tiered")
      std::cerr << "lsjit: LSJIT_TIER=" << printable(tier) << " is not tiered, compiled or 0; using tiered\n";
  }
  if (const char* c = std::getenv("LSJIT_TIER0_CODE"); c && *c) {
    const std::string_view code(c);
    if (code == "interpreted")
      o.tier0_code = Tier0Kernel::Code::Interpreted;
    else if (code != "auto")
      std::cerr << "lsjit: LSJIT_TIER0_CODE=" << printable(code) << " is not auto or interpreted; using auto\n";
  }
  if (const char* l = std::getenv("LSJIT_RECOMPILE_LIMIT"); l && *l) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(l, &end, 10);
    if (end && *end == '\0') o.recompile_limit = static_cast<uint32_t>(std::min(v, 0xffffffffUL));
  }
  return o;
}

KernelCache::KernelCache() : KernelCache(Options{}) {}

KernelCache::KernelCache(Options options) : options_(std::move(options)) {
  Backend& b = options_.backend;
  const bool default_compiler = !b.compile;
  if (!b.target) b.target = [](const CompileOptions& o) { return host_target(o); };
  if (!b.compile)
    b.compile = [](const ir::Trace& g, const KernelLayout& l, const CompileOptions& o,
                   const std::string& symbol) { return compile_kernel(g, l, o, symbol); };
  if (!b.load)
    b.load = [](const std::string& object, const std::string& symbol) {
      return load_kernel(object, symbol);
    };
  if (options_.use_disk) {
    std::optional<std::filesystem::path> dir = options_.directory;
    if (!dir) dir = default_cache_dir();
    if (dir) disk_.emplace(*dir);
  }
  if (default_compiler && options_.tiering != Options::Tiering::Tier0Only && disk_ &&
      linked_kernel_count() == 0 && !disk_->has_entries())
    load_compiler_in_background();
}

KernelCache::~KernelCache() { wait_for_background(); }

void KernelCache::log_line(const std::string& text) {
  if (options_.quiet) return;
  std::ostream& out = options_.log ? *options_.log : std::cerr;
  std::lock_guard lock(log_mutex_);
  out << text;
  if (text.empty() || text.back() != '\n') out << '\n';
  out.flush();
}

void KernelCache::warn(const std::string& line) { log_line("lsjit: warning: " + line); }

TargetInfo KernelCache::target_for(const CompileOptions& options) {
  const auto k = std::make_tuple(options.vector_width, options.fma_contraction, options.vector_math,
                                 options.cpu_level);
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, target] : targets_)
      if (key == k) return target;
  }
  TargetInfo t = options_.backend.target(options);
  std::lock_guard lock(mutex_);
  targets_.emplace_back(k, t);
  return t;
}

CacheKey KernelCache::key_for(const ir::Trace& traced, KernelMode mode, const CompileOptions& options) {
  return make_cache_key(traced, mode, options, target_for(options));
}

KernelCache::Lookup KernelCache::lookup(const ir::Trace& traced, KernelMode mode,
                                        const CompileOptions& options, double trace_s) {
  if (traced.stage != ir::Stage::Traced)
    throw Error("kernel cache: cost '" + traced.signature.name + "' is at stage " +
                std::string(ir::stage_name(traced.stage)) +
                "; the cache takes the traced stage (its structural hash is part of the key)");
  return lookup_keyed(traced, mode, options, trace_s, key_for(traced, mode, options));
}

// A memory hit, a wait for the thread producing the same kernel, or a miss: the miss is
// counted and explained under the lock, and the kernel produced without it.
KernelCache::Lookup KernelCache::lookup_keyed(const ir::Trace& traced, KernelMode mode,
                                              const CompileOptions& options, double trace_s,
                                              const CacheKey& key) {
  const auto t0 = Clock::now();
  const HashKey hk{key.hash.hi, key.hash.lo};
  MissNotes notes;
  {
    std::unique_lock lock(mutex_);
    ++stats_.gets;
    if (std::optional<Lookup> hit = wait_for_memory(lock, hk, key, traced.signature.name)) {
      hit->seconds = seconds_since(t0);
      return *hit;
    }
    notes = record_miss(traced, mode, key);
    in_flight_.insert(hk);
  }
  if (!notes.explanation.empty()) log_line(notes.explanation);
  if (!notes.limit_warning.empty()) warn(notes.limit_warning);
  Lookup out;
  out.recompile = notes.recompile;
  out.kernel = produce_in_flight(traced, mode, options, key, trace_s, out);
  if (options_.log_compiles) log_line(kernel_log_line(traced.signature.name, mode, key, *out.kernel, out.source));
  out.seconds = seconds_since(t0);
  return out;
}

// The kernel in memory under `hk`, after waiting for a thread that is producing it; nullopt
// on a miss. A different key under the same hash (astronomically unlikely) is a miss
// whose kernel replaces the old one, with a warning.
std::optional<KernelCache::Lookup> KernelCache::wait_for_memory(std::unique_lock<std::mutex>& lock, const HashKey& hk,
                                                                const CacheKey& key, const std::string& name) {
  for (;;) {
    auto it = memory_.find(hk);
    if (it != memory_.end()) {
      if (it->second.kernel->key.parts == key.parts) {
        ++stats_.memory_hits;
        ++it->second.hits;
        return Lookup{it->second.kernel, KernelSource::Memory};
      }
      lock.unlock();
      warn("kernel cache: key " + key.id() + " of cost '" + name +
           "' collides with a different key in memory; replacing that kernel");
      lock.lock();
      return std::nullopt;
    }
    if (!in_flight_.count(hk)) return std::nullopt;
    in_flight_done_.wait(lock);
  }
}

// Under the lock: the miss's place in the cost's history. A recompile (another key for a
// cost and mode that had one) is counted, refused under fail_on_recompile, explained under
// explain_misses, and warned about past recompile_limit. Only recompiles are explained: a
// cost's first kernel in another mode, or a known key loaded from disk by a new process,
// is no miss worth a user's attention.
KernelCache::MissNotes KernelCache::record_miss(const ir::Trace& traced, KernelMode mode, const CacheKey& key) {
  const std::string& name = traced.signature.name;
  MissNotes notes;
  std::vector<Seen>& seen = seen_[name];
  const Seen* previous = closest_seen(seen, key);
  std::vector<Hash128>& keys = kernels_for_[{name, mode}];
  const bool known = std::find(keys.begin(), keys.end(), key.hash) != keys.end();
  const bool recompile = !keys.empty() && !known;
  auto describe = [&](std::string_view prefix) {
    return "closest previous key " + short_id(previous->key) + " (" + std::to_string(equal_parts(previous->key, key)) +
           " of " + std::to_string(key.parts.size()) + " parts equal) differs in:\n" +
           explain_key_difference(previous->key, key, previous->traced.get(), &traced, prefix);
  };
  if (recompile && options_.fail_on_recompile)
    throw Error("kernel cache: cost '" + name + "' (mode " + std::string(mode_name(mode)) +
                ") needs another kernel (key " + short_id(key) +
                ") and recompiles are set to fail (LSJIT_FAIL_ON_RECOMPILE=1 or set_fail_on_recompile); " +
                (previous ? describe("  ") : std::string("no previous key to compare\n")));
  if (options_.explain_misses && recompile && previous)
    notes.explanation = "lsjit: cache miss for cost '" + name + "' (mode " + std::string(mode_name(mode)) +
                        ", key " + short_id(key) + "): " + describe("lsjit:   ");
  notes.recompile = recompile;
  if (recompile) {
    ++stats_.recompiles;
    const uint32_t n = ++recompiles_[name];
    if (n > options_.recompile_limit && !limit_warned_.count(name)) {
      limit_warned_.insert(name);
      const std::string cause = previous ? recompile_cause(previous->key, key, previous->traced.get(), &traced)
                                         : std::string("no earlier key to compare");
      notes.limit_warning = "cost '" + name + "' has been recompiled " + std::to_string(n) +
                            " times, more than the limit of " + std::to_string(options_.recompile_limit) + ": " +
                            cause + " (LSJIT_EXPLAIN_CACHE_MISSES=1 shows what differs)";
    }
  }
  if (!known) keys.push_back(key.hash);
  if (std::none_of(seen.begin(), seen.end(), [&](const Seen& s) { return s.key.hash == key.hash; }))
    seen.push_back({key, std::make_shared<const ir::Trace>(traced)});
  return notes;
}

// produce() for a key this thread marked in flight: the kernel goes to memory and the
// mark is lifted, also when producing throws, so that no waiter waits forever.
std::shared_ptr<const Kernel> KernelCache::produce_in_flight(const ir::Trace& traced, KernelMode mode,
                                                             const CompileOptions& options, const CacheKey& key,
                                                             double trace_s, Lookup& out) {
  const HashKey hk{key.hash.hi, key.hash.lo};
  std::shared_ptr<const Kernel> kernel;
  try {
    kernel = produce(traced, mode, options, key, trace_s, out);
  } catch (...) {
    std::lock_guard lock(mutex_);
    in_flight_.erase(hk);
    in_flight_done_.notify_all();
    throw;
  }
  std::lock_guard lock(mutex_);
  memory_[hk] = Entry{kernel, 0};
  stats_.entries = memory_.size();
  in_flight_.erase(hk);
  in_flight_done_.notify_all();
  return kernel;
}

// LSJIT_LOG_COMPILES's line for a produced kernel. The trace's name is LSJIT_DUMP_DIR's
// file stem (<cost>-<12 hex digits of the structural hash>), so the line leads from a
// cache ID to the dumped IR.
std::string KernelCache::kernel_log_line(const std::string& name, KernelMode mode, const CacheKey& key,
                                         const Kernel& kernel, KernelSource source) {
  const StageTimes& t = kernel.times;
  std::string line = "lsjit: kernel " + name + " " + std::string(mode_name(mode)) + " " + short_id(key) +
                     " (trace " + name + "-" + std::string(key.part("structural_hash").substr(0, 12)) + "): ";
  if (source == KernelSource::Tier0)
    return line + "tier 0 in " + ms(kernel.obtain_s + t.trace_s) + " ms (trace " + ms(t.trace_s) +
           ", differentiate " + ms(t.differentiate_s) + ", simplify " + ms(t.simplify_s) + " ms)";
  if (source == KernelSource::Compiled)
    return line + "compiled in " + ms(kernel.obtain_s + t.trace_s) + " ms (trace " + ms(t.trace_s) +
           ", differentiate " + ms(t.differentiate_s) + ", simplify " + ms(t.simplify_s) + ", llvm_ir " +
           ms(t.llvm_ir_s) + ", optimize " + ms(t.optimize_s) + ", codegen " + ms(t.codegen_s) + ", link " +
           ms(t.link_s) + " ms)";
  if (source == KernelSource::Linked) return line + "linked into the program (trace " + ms(t.trace_s) + " ms)";
  return line + "from disk in " + ms(kernel.obtain_s + t.trace_s) + " ms (trace " + ms(t.trace_s) + ", read " +
         ms(kernel.obtain_s - t.link_s) + ", link " + ms(t.link_s) + " ms; compiled earlier in " +
         ms(t.differentiate_s + t.simplify_s + t.llvm_ir_s + t.optimize_s + t.codegen_s) + " ms)";
}

// The kernel of a miss, from the first place that has it: linked into the program, the
// disk cache (unless Tier0Only), tier 0 with a background compile (Tiered), or compiled
// now (Compiled) and stored on disk.
std::shared_ptr<const Kernel> KernelCache::produce(const ir::Trace& traced, KernelMode mode,
                                                   const CompileOptions& options, const CacheKey& key,
                                                   double trace_s, Lookup& out) {
  const auto t0 = Clock::now();
  auto kernel = std::make_shared<Kernel>();
  kernel->key = key;
  kernel->symbol = kernel_symbol(key);
  if (take_linked(*kernel, traced, mode, trace_s, t0)) {
    out.source = KernelSource::Linked;
    return kernel;
  }
  if (options_.tiering != Options::Tiering::Tier0Only && load_from_disk(*kernel, traced, mode, trace_s, t0)) {
    out.source = KernelSource::Disk;
    return kernel;
  }
  if (options_.tiering != Options::Tiering::Compiled) {
    start_in_tier0(kernel, traced, mode, options, trace_s, out);
    return kernel;
  }
  compile_now(*kernel, traced, mode, options, trace_s, t0);
  out.source = KernelSource::Compiled;
  return kernel;
}

// A kernel linked into the program (`lsjit cache export`): no load at all.
bool KernelCache::take_linked(Kernel& kernel, const ir::Trace& traced, KernelMode mode, double trace_s,
                              Clock::time_point t0) {
  const LinkedKernel* linked = find_linked_kernel(kernel.key);
  if (!linked) return false;
  kernel.function = linked->function;
  kernel.layout = make_layout(traced.signature, mode);
  kernel.times.trace_s = trace_s;
  kernel.source = KernelSource::Linked;
  kernel.obtain_s = seconds_since(t0);
  std::lock_guard lock(mutex_);
  ++stats_.linked_hits;
  return true;
}

// The disk entry of kernel.key, when there is one that authenticates, names this key and
// symbol, and loads. Any other entry is warned about once; a bad one is counted and will
// be replaced by the compile that follows, an untrusted one is left alone.
bool KernelCache::load_from_disk(Kernel& kernel, const ir::Trace& traced, KernelMode mode, double trace_s,
                                 Clock::time_point t0) {
  const std::optional<AuthKey> auth = disk_key(false);
  if (!auth) return false;
  const CacheKey& key = kernel.key;
  auto bad_entry = [&](const std::string& what) { report_bad_entry(key, traced.signature.name, mode, what); };
  DecodeResult r = disk_->read(key.hash, &*auth);
  if (r.status == EntryStatus::Untrusted) {
    warn_once("untrusted " + disk_->entry_path(key.hash).string(),
              "kernel cache entry " + disk_->entry_path(key.hash).string() + " is refused (" + r.message +
                  "); remove it. Compiling that kernel instead");
    return false;
  }
  if (r.status != EntryStatus::Ok) {
    if (r.status != EntryStatus::Missing)
      bad_entry("is " + std::string(entry_status_name(r.status)) + " (" + r.message + ")");
    return false;
  }
  const DiskEntry& e = *r.entry;
  if (e.key.parts != key.parts) {
    std::string what = "has the requested id but a different key (a hash collision):";
    for (const PartDifference& d : diff_keys(key, e.key))
      what += " " + d.part + " stored " + d.after + ", requested " + d.before + ";";
    what.pop_back();
    bad_entry(what);
    return false;
  }
  if (e.symbol != kernel.symbol) {
    bad_entry("names the symbol " + e.symbol + " instead of " + kernel.symbol);
    return false;
  }
  const auto l0 = Clock::now();
  try {
    kernel.code = options_.backend.load(e.object_code, e.symbol);
    kernel.function = kernel.code ? kernel.code->function() : nullptr;
    if (!kernel.function) throw Error("no function");
  } catch (const std::exception& ex) {
    kernel.code.reset();
    kernel.function = nullptr;
    bad_entry(std::string("cannot be loaded (") + ex.what() + ")");
    return false;
  }
  kernel.layout = make_layout(traced.signature, mode);
  kernel.times = e.times;
  kernel.times.trace_s = trace_s;
  kernel.times.link_s = seconds_since(l0);
  kernel.source = KernelSource::Disk;
  kernel.obtain_s = seconds_since(t0);
  std::lock_guard lock(mutex_);
  ++stats_.disk_hits;
  return true;
}

void KernelCache::report_bad_entry(const CacheKey& key, const std::string& name, KernelMode mode,
                                   const std::string& what) {
  const std::string path = disk_->entry_path(key.hash).string();
  warn_once("bad " + path + " " + what, "kernel cache entry " + path + " (cost '" + name + "', mode " +
                                            std::string(mode_name(mode)) + ") " + what +
                                            "; recompiling and replacing it");
  std::lock_guard lock(mutex_);
  ++stats_.bad_disk_entries;
}

// Compiles the kernel in this thread (Tiering::Compiled) and stores it on disk.
void KernelCache::compile_now(Kernel& kernel, const ir::Trace& traced, KernelMode mode,
                              const CompileOptions& options, double trace_s, Clock::time_point t0) {
  {
    std::lock_guard lock(mutex_);
    ++stats_.misses;
  }
  StageTimes& t = kernel.times;
  t.trace_s = trace_s;
  auto s0 = Clock::now();
  const ir::Trace graph = graph_for_mode(traced, mode);
  (mode == KernelMode::Residual ? t.simplify_s : t.differentiate_s) = seconds_since(s0);
  kernel.layout = make_layout(traced.signature, mode);
  Built built = compile_and_load(graph, kernel, options, t);
  kernel.code = std::move(built.code);
  kernel.function = built.function;
  kernel.source = KernelSource::Compiled;
  kernel.obtain_s = seconds_since(t0);
  {
    std::lock_guard lock(mutex_);
    ++stats_.compiles;
    stats_.compile_s += kernel.obtain_s;
  }
  store_on_disk(kernel.key, kernel.symbol, t, graph, built.object);
}

KernelCache::Built KernelCache::compile_and_load(const ir::Trace& graph, const Kernel& kernel,
                                                 const CompileOptions& options, StageTimes& times) {
  Built b{options_.backend.compile(graph, kernel.layout, options, kernel.symbol), nullptr, nullptr};
  times.llvm_ir_s = b.object.times.llvm_ir_s;
  times.optimize_s = b.object.times.optimize_s;
  times.codegen_s = b.object.times.codegen_s;
  const auto t0 = Clock::now();
  b.code = options_.backend.load(b.object.object_code, kernel.symbol);
  b.function = b.code ? b.code->function() : nullptr;
  if (!b.function)
    throw Error("kernel cache: loading the kernel of cost '" + graph.signature.name + "' gave no function");
  times.link_s = seconds_since(t0);
  return b;
}

void KernelCache::store_on_disk(const CacheKey& key, const std::string& symbol,
                                const StageTimes& times, const ir::Trace& graph,
                                const CompiledObject& object) {
  write_entry(DiskEntry{key, symbol, times, ir::print(graph), object.object_code});
}

void KernelCache::write_entry(const DiskEntry& entry) {
  bool write = false;
  bool warn_no_directory = false;
  {
    std::lock_guard lock(mutex_);
    write = disk_ && disk_writable_ && disk_trusted_;
    if (!disk_ && options_.use_disk && !no_directory_warned_)
      warn_no_directory = no_directory_warned_ = true;
  }
  if (warn_no_directory)
    warn("no kernel cache directory (set LSJIT_CACHE_DIR, XDG_CACHE_HOME or HOME); kernels are "
         "cached in memory only");
  if (write) {
    try {
      const std::optional<AuthKey> auth = disk_key(true);
      if (!auth) return;  // refused (warned); memory only from now on
      disk_->write(entry, *auth);
      std::lock_guard lock(mutex_);
      ++stats_.disk_writes;
    } catch (const EntryBlocked& ex) {
      warn_once("blocked " + disk_->entry_path(entry.key.hash).string(), ex.what());
    } catch (const std::exception& ex) {
      bool first = false;
      {
        std::lock_guard lock(mutex_);
        first = disk_writable_;
        disk_writable_ = false;
      }
      if (first) warn(std::string(ex.what()) + "; kernels are cached in memory only from now on");
    }
  }
}

std::optional<std::string> KernelCache::read_data(
    const CacheKey& key, const std::function<std::string(std::string_view)>& invalid) {
  if (!is_data_key(key)) throw std::invalid_argument("KernelCache::read_data: " + key.id() + " is not a data key");
  {
    std::lock_guard lock(mutex_);
    if (!disk_ || !disk_trusted_ || options_.tiering == Options::Tiering::Tier0Only) return std::nullopt;
  }
  const std::optional<AuthKey> auth = disk_key(false);
  if (!auth) return std::nullopt;
  DecodeResult r = disk_->read(key.hash, &*auth);
  const std::string path = disk_->entry_path(key.hash).string();
  auto bad_entry = [&](const std::string& what) {
    warn_once("bad " + path + " " + what, "kernel cache entry " + path + " (" +
                                              std::string(key.parts.front().second) + ") " + what +
                                              "; computing it again and replacing it");
    std::lock_guard lock(mutex_);
    ++stats_.bad_disk_entries;
  };
  if (r.status == EntryStatus::Ok) {
    if (r.entry->key.parts != key.parts) {
      bad_entry("has the requested id but a different key (a hash collision)");
      return std::nullopt;
    }
    if (const std::string why = invalid(r.entry->object_code); !why.empty()) {
      bad_entry("holds unusable data (" + why + ")");
      return std::nullopt;
    }
    std::lock_guard lock(mutex_);
    ++stats_.data_hits;
    return std::move(r.entry->object_code);
  }
  if (r.status == EntryStatus::Untrusted)
    warn_once("untrusted " + path, "kernel cache entry " + path + " is refused (" + r.message + "); remove it");
  else if (r.status != EntryStatus::Missing)
    bad_entry("is " + std::string(entry_status_name(r.status)) + " (" + r.message + ")");
  return std::nullopt;
}

void KernelCache::store_data(const CacheKey& key, std::string bytes) {
  if (!is_data_key(key)) throw std::invalid_argument("KernelCache::store_data: " + key.id() + " is not a data key");
  {
    std::lock_guard lock(mutex_);
    if (!disk_ || !disk_trusted_ || !disk_writable_ || options_.tiering == Options::Tiering::Tier0Only) return;
  }
  auto write = [this, entry = DiskEntry{key, "", {}, "", std::move(bytes)}] { write_entry(entry); };
  if (options_.tiering != Options::Tiering::Tiered || !run_in_background(write, 19)) write();
}

CacheStats KernelCache::stats() const {
  std::lock_guard lock(mutex_);
  CacheStats s = stats_;
  s.entries = memory_.size();
  return s;
}

std::vector<CacheEntryInfo> KernelCache::entries() const {
  std::lock_guard lock(mutex_);
  std::vector<CacheEntryInfo> out;
  for (const auto& [hk, e] : memory_)
    out.push_back({e.kernel->key, e.kernel->symbol, e.kernel->source, e.kernel->times,
                   e.kernel->obtain_s, e.hits});
  std::sort(out.begin(), out.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) { return a.key.id() < b.key.id(); });
  return out;
}

std::shared_ptr<const Kernel> KernelCache::find(const CacheKey& key) const {
  std::lock_guard lock(mutex_);
  const auto it = memory_.find({key.hash.hi, key.hash.lo});
  if (it == memory_.end() || it->second.kernel->key.parts != key.parts) return nullptr;
  return it->second.kernel;
}

uint32_t KernelCache::recompiles(std::string_view cost_name) const {
  std::lock_guard lock(mutex_);
  const auto it = recompiles_.find(cost_name);
  return it == recompiles_.end() ? 0 : it->second;
}

void KernelCache::set_fail_on_recompile(bool fail) {
  std::lock_guard lock(mutex_);
  options_.fail_on_recompile = fail;
}

void KernelCache::clear_memory() {
  std::lock_guard lock(mutex_);
  memory_.clear();
  seen_.clear();
  kernels_for_.clear();
  recompiles_.clear();
  limit_warned_.clear();
  stats_.entries = 0;
}

std::optional<std::filesystem::path> KernelCache::disk_directory() const {
  if (!disk_) return std::nullopt;
  return disk_->directory();
}

bool KernelCache::disk_writable() const {
  std::lock_guard lock(mutex_);
  return disk_ && disk_writable_ && disk_trusted_;
}

// Trust warnings are given once per process for each path and kind, however many caches
// meet them (a refused directory or a planted entry would otherwise repeat on every cache).
void KernelCache::warn_once(const std::string& what, const std::string& line) {
  static std::mutex warned_mutex;
  static std::set<std::string>* warned = new std::set<std::string>;
  {
    std::lock_guard lock(warned_mutex);
    if (!warned->insert(what).second) return;
  }
  warn(line);
}

std::optional<AuthKey> KernelCache::disk_key(bool create) {
  {
    std::lock_guard lock(mutex_);
    if (!disk_ || !disk_trusted_) return std::nullopt;
    if (!create && read_key_) return read_key_;
  }
  KeyResult r = disk_->auth_key(create);
  {
    std::lock_guard lock(mutex_);
    if (r.refusal.empty()) {
      read_key_ = r.key;
      return r.key;
    }
    disk_trusted_ = false;
    read_key_.reset();
  }
  warn_once("refused " + disk_->directory().string(),
            r.refusal + "; kernels are cached in memory only");
  return std::nullopt;
}

KernelCache& default_cache() {
  static KernelCache* cache = new KernelCache(KernelCache::Options::from_environment());
  return *cache;
}

}  // namespace lsjit::compiler

namespace lsjit::compiler {

std::optional<KernelCache::Lookup> KernelCache::memory_hit(const CacheKey& key) {
  std::lock_guard lock(mutex_);
  const auto it = memory_.find({key.hash.hi, key.hash.lo});
  if (it == memory_.end() || it->second.kernel->key.parts != key.parts) return std::nullopt;
  ++stats_.gets;
  ++stats_.memory_hits;
  ++it->second.hits;
  return Lookup{it->second.kernel, KernelSource::Memory};
}

bool KernelCache::on_disk(const CacheKey& key) {
  {
    std::lock_guard lock(mutex_);
    if (!disk_ || !disk_trusted_) return false;
  }
  return ::access(disk_->entry_path(key.hash).c_str(), F_OK) == 0;
}

bool KernelCache::data_worth_storing(const CacheKey& key) {
  const HashKey hk{key.hash.hi, key.hash.lo};
  std::lock_guard lock(mutex_);
  if (!data_stored_on_sight_) return data_stored_on_sight_ = true;
  if (data_sightings_.erase(hk)) return true;
  if (data_sightings_.size() >= kMaxDataSightings) data_sightings_.clear();
  data_sightings_.insert(hk);
  return false;
}

std::vector<KernelCache::Lookup> KernelCache::lookup_modes(const ir::Trace& traced,
                                                           const std::vector<KernelMode>& modes,
                                                           const CompileOptions& options,
                                                           double trace_s) {
  // Hits first, on this thread: once a structure has compiled, every analyze() of it only
  // hits, and starting a thread per mode for that would cost more than the rest of analyze
  // and solve of a small problem (tests/runtime/soak_test.cpp). So do loads from disk: two
  // loads on two threads take longer than both on one.
  std::vector<Lookup> results(modes.size());
  std::vector<size_t> misses;
  std::vector<CacheKey> keys;  // per mode; empty when not Traced (lookup() throws the error)
  if (traced.stage == ir::Stage::Traced) {
    const Hash128 structure = ir::structural_hash(traced);
    const TargetInfo target = target_for(options);
    for (KernelMode mode : modes) keys.push_back(make_cache_key(traced, mode, options, target, structure));
    for (size_t i = 0; i < modes.size(); ++i) {
      const auto t0 = Clock::now();
      if (std::optional<Lookup> hit = memory_hit(keys[i])) {
        results[i] = *hit;
        results[i].seconds = seconds_since(t0);
      } else if (options_.tiering != Options::Tiering::Compiled || on_disk(keys[i]) ||
                 find_linked_kernel(keys[i])) {
        // A disk entry compiles here only if it turns out bad; with tiering, a miss costs
        // differentiation and tier 0's set-up here, and compiles in the background.
        results[i] = lookup_keyed(traced, modes[i], options, trace_s, keys[i]);
      } else {
        misses.push_back(i);
      }
    }
  } else {
    for (size_t i = 0; i < modes.size(); ++i) misses.push_back(i);
  }
  auto look_up = [&](size_t i) {
    return keys.empty() ? lookup(traced, modes[i], options, trace_s)
                        : lookup_keyed(traced, modes[i], options, trace_s, keys[i]);
  };
  if (misses.empty()) return results;
  if (misses.size() == 1) {
    results[misses[0]] = look_up(misses[0]);
    return results;
  }
  std::vector<std::future<Lookup>> pending;
  for (size_t i : misses) pending.push_back(std::async(std::launch::async, look_up, i));
  std::exception_ptr failure;
  for (size_t k = 0; k < misses.size(); ++k) {
    try {
      results[misses[k]] = pending[k].get();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace lsjit::compiler
