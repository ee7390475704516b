// KernelCache (compiler/cache/kernel_cache.h) with a fake compiler and loader
// (cache_test_support.h): its lookup steps (memory, a wait for another thread, the miss's
// accounting: recompiles, refusals, explanations) and the places a miss takes its kernel
// from, in order (linked, disk, tier 0 or a compile), with the warnings and counters each
// step owes. The key and the disk format are cache_test.cpp's.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cache_test_support.h"
#include "lsjit/compiler/cache/cache_key.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"

using namespace lsjit;
using namespace lsjit::compiler;
using namespace lsjit::cache_testing;

TEST_CASE("kernel cache: a miss takes its kernel from the first place that has it") {
  TempDir dir("produce_order");
  const ir::Trace t = trace_scaled(3.0, "produce_order");
  {
    KernelCache::Options tier0_only;
    tier0_only.tiering = KernelCache::Options::Tiering::Tier0Only;
    FakeCache c(dir.path, tier0_only);  // no disk, no compiler: tier 0 at once
    const auto l = c->lookup(t, KernelMode::Residual);
    CHECK(l.source == KernelSource::Tier0);
    CHECK(c.counters->compiles == 0);
    CHECK(c.counters->loads == 0);
    CHECK(fs::is_empty(dir.path));
  }
  {
    FakeCache c(dir.path);  // Compiled: the disk is empty, so a compile, stored
    CHECK(c->lookup(t, KernelMode::Residual).source == KernelSource::Compiled);
    CHECK(c.counters->compiles == 1);
    CHECK(c->stats().disk_writes == 1);
  }
  {
    KernelCache::Options tiered;
    tiered.tiering = KernelCache::Options::Tiering::Tiered;
    FakeCache c(dir.path, tiered);  // the disk has it: no tier 0, no compile
    const auto l = c->lookup(t, KernelMode::Residual);
    CHECK(l.source == KernelSource::Disk);
    CHECK(c.counters->loads == 1);
    CHECK(c.counters->compiles == 0);
    // A key the disk lacks starts in tier 0 and compiles in the background.
    const auto other = c->lookup(trace_scaled(5.0, "produce_order"), KernelMode::Residual);
    CHECK(other.source == KernelSource::Tier0);
    c->wait_for_background();
    CHECK(c.counters->compiles == 1);
  }
  {
    KernelCache::Options tier0_only;
    tier0_only.tiering = KernelCache::Options::Tiering::Tier0Only;
    FakeCache c(dir.path, tier0_only);  // Tier0Only never reads the disk, even with the entry there
    CHECK(c->lookup(t, KernelMode::Residual).source == KernelSource::Tier0);
    CHECK(c.counters->loads == 0);
  }
}

TEST_CASE("kernel cache: memory hit / then a second cache on the directory hits the disk") {
  TempDir dir("memory_disk");
  const ir::Trace t = trace_scaled(2.0);
  {
    FakeCache c(dir.path);
    const auto first = c->lookup(t, KernelMode::ResidualJacobian);
    const auto second = c->lookup(t, KernelMode::ResidualJacobian);
    CHECK(first.source == KernelSource::Compiled);
    CHECK(second.source == KernelSource::Memory);
    CHECK(first.kernel == second.kernel);
    CHECK(bool(first.kernel->function == &fake_kernel_function));
    CHECK(first.kernel->symbol == kernel_symbol(first.kernel->key));
    CHECK(first.kernel->layout.outputs.size() == 2);  // res, J[x]
    CHECK(first.kernel->times.optimize_s == 0.002);
    const CacheStats s = c->stats();
    CHECK(s.gets == 2);
    CHECK(s.memory_hits == 1);
    CHECK(s.disk_hits == 0);
    CHECK(s.misses == 1);
    CHECK(s.compiles == 1);
    CHECK(s.recompiles == 0);
    CHECK(s.disk_writes == 1);
    CHECK(s.entries == 1);
    CHECK(s.compile_s > 0);
    CHECK(c.counters->compiles == 1);
    CHECK(c.log.str().empty());
    const auto list = c->entries();
    REQUIRE(list.size() == 1);
    CHECK(list[0].key == first.kernel->key);
    CHECK(list[0].source == KernelSource::Compiled);
    CHECK(list[0].hits == 1);
  }
  FakeCache c2(dir.path);
  const auto again = c2->lookup(t, KernelMode::ResidualJacobian);
  CHECK(again.source == KernelSource::Disk);
  CHECK(again.kernel->source == KernelSource::Disk);
  CHECK(again.kernel->times.optimize_s == 0.002);  // the stored compile's
  CHECK(c2.counters->compiles == 0);
  CHECK(c2->stats().disk_hits == 1);
  CHECK(c2->stats().compiles == 0);
  CHECK(c2->stats().misses == 0);
  CHECK(c2.log.str().empty());
  // The stored entry has the mode graph's IR text.
  const DecodeResult r = read_entry(DiskCache(dir.path), again.kernel->key.hash);
  REQUIRE(r.status == EntryStatus::Ok);
  CHECK(r.entry->ir_text.rfind("lsjit.ir 1\ncost scaled", 0) == 0);
  CHECK(r.entry->ir_text.find("stage=jacobian") != std::string::npos);
}

TEST_CASE("kernel cache: bad disk entries are reported once / recompiled and replaced") {
  const ir::Trace t = trace_scaled(2.0);
  for (const Damage& d : entry_damages()) {
    CAPTURE(d.name);
    TempDir dir(std::string("bad_") + d.tag);
    const fs::path path = residual_entry_written(dir.path, t);
    std::string bytes = read_bytes(path);
    d.apply(bytes);
    write_bytes(path, bytes);

    FakeCache c(dir.path);
    const auto l = c->lookup(t, KernelMode::Residual);
    CHECK(l.source == KernelSource::Compiled);
    CHECK(c.counters->compiles == 1);
    CHECK(c->lookup(t, KernelMode::Residual).source == KernelSource::Memory);
    const std::string log = c.log.str();
    CAPTURE(log);
    CHECK(std::count(log.begin(), log.end(), '\n') == 1);
    CHECK(log.find("lsjit: warning: kernel cache entry " + path.string()) == 0);
    CHECK(log.find(d.expect) != std::string::npos);
    CHECK(log.find("recompiling and replacing it") != std::string::npos);
    CHECK(c->stats().bad_disk_entries == 1);
    // Replaced: a third cache loads it from disk silently.
    FakeCache c3(dir.path);
    CHECK(c3->lookup(t, KernelMode::Residual).source == KernelSource::Disk);
    CHECK(c3.log.str().empty());
  }
}

TEST_CASE("kernel cache: an entry file past kMaxEntryBytes is refused unread, recompiled and replaced") {
  TempDir dir("oversized");
  const ir::Trace t = trace_scaled(2.0);
  const fs::path path = residual_entry_written(dir.path, t);
  fs::resize_file(path, kMaxEntryBytes + 1);  // sparse: nothing is written to the disk
  FakeCache c(dir.path);
  CHECK(c->lookup(t, KernelMode::Residual).source == KernelSource::Compiled);
  const std::string log = c.log.str();
  CAPTURE(log);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(log.find("it is " + std::to_string(kMaxEntryBytes + 1) + " bytes, more than the " +
                 std::to_string(kMaxEntryBytes) + " an entry may have") != std::string::npos);
  CHECK(log.find("recompiling and replacing it") != std::string::npos);
  CHECK(fs::file_size(path) < 4096);  // replaced by the recompiled kernel's entry
  FakeCache c3(dir.path);
  CHECK(c3->lookup(t, KernelMode::Residual).source == KernelSource::Disk);
}

TEST_CASE("kernel cache: an entry with the requested id but other key parts is a collision") {
  TempDir dir("collision");
  const ir::Trace t = trace_scaled(2.0);
  FakeCache probe(dir.path, memory_only());
  const CacheKey key = probe->key_for(t, KernelMode::Residual);
  // Forge what a hash collision looks like: the entry under this id holds another key.
  DiskEntry forged;
  forged.key = probe->key_for(trace_scaled(3.0), KernelMode::Residual);
  forged.key.hash = key.hash;
  forged.symbol = kernel_symbol(key);
  forged.object_code = "FAKE-OBJECT " + forged.symbol;
  write_entry(DiskCache(dir.path), forged);

  FakeCache c(dir.path);
  CHECK(c->lookup(t, KernelMode::Residual).source == KernelSource::Compiled);
  const std::string log = c.log.str();
  CAPTURE(log);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(log.find("a different key (a hash collision): structural_hash stored ") != std::string::npos);
  const DecodeResult r = read_entry(DiskCache(dir.path), key.hash);
  REQUIRE(r.status == EntryStatus::Ok);
  CHECK(r.entry->key == key);  // replaced
}

TEST_CASE("kernel cache: an entry whose object does not load is recompiled") {
  TempDir dir("unloadable");
  const ir::Trace t = trace_scaled(2.0);
  FakeCache probe(dir.path, memory_only());
  DiskEntry e;
  e.key = probe->key_for(t, KernelMode::Residual);
  e.symbol = kernel_symbol(e.key);
  e.object_code = "garbage";
  write_entry(DiskCache(dir.path), e);
  FakeCache c(dir.path);
  CHECK(c->lookup(t, KernelMode::Residual).source == KernelSource::Compiled);
  const std::string log = c.log.str();
  CHECK(log.find("cannot be loaded (fake jit: the object does not define") != std::string::npos);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
}

TEST_CASE("kernel cache: an unwritable directory is reported once - memory keeps working") {
  TempDir dir("unwritable");
  write_bytes(dir / "a_file", "x");
  FakeCache c(dir / "a_file" / "cache");  // a directory below a regular file cannot exist
  const auto k1 = c->get(trace_scaled(2.0), KernelMode::Residual);
  const auto k2 = c->get(trace_scaled(2.0, "other"), KernelMode::Residual);
  CHECK(c->get(trace_scaled(2.0), KernelMode::Residual) == k1);
  CHECK(k1 != k2);
  const std::string log = c.log.str();
  CAPTURE(log);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(log.find("lsjit: warning: kernel cache directory") == 0);
  CHECK(log.find("memory only") != std::string::npos);
  CHECK(!c->disk_writable());
  CHECK(c->stats().compiles == 2);
  CHECK(c->stats().memory_hits == 1);
  CHECK(c->stats().disk_writes == 0);
}

TEST_CASE("kernel cache: memory-only caches touch no directory") {
  TempDir dir("memory_only");
  FakeCache c(dir / "never", memory_only());
  c->get(trace_scaled(2.0), KernelMode::Residual);
  CHECK(!fs::exists(dir / "never"));
  CHECK(!c->disk_directory());
  CHECK(c.log.str().empty());
}

TEST_CASE("kernel cache: recompiles are counted per cost and mode - the limit warns once") {
  TempDir dir("recompiles");
  KernelCache::Options o;
  o.recompile_limit = 2;
  FakeCache c(dir.path, o);
  c->get(trace_scaled(1.5), KernelMode::ResidualJacobian);
  c->get(trace_scaled(1.5), KernelMode::Residual);          // another mode: not a recompile
  c->get(trace_scaled(1.5, "another"), KernelMode::Residual);  // another cost
  CHECK(c->recompiles("scaled") == 0);
  CHECK(c->stats().recompiles == 0);
  for (double s : {2.0, 3.0, 4.0, 5.0, 2.0}) c->get(trace_scaled(s), KernelMode::ResidualJacobian);
  CHECK(c->recompiles("scaled") == 4);  // 2, 3, 4, 5; the second 2 is a memory hit
  CHECK(c->recompiles("another") == 0);
  CHECK(c->stats().recompiles == 4);
  CHECK(c->stats().compiles == 7);
  const std::string log = c.log.str();
  CAPTURE(log);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(log.find("lsjit: warning: cost 'scaled' has been recompiled 3 times, more than the limit of 2") == 0);
  CHECK(log.find("pass it as data") != std::string::npos);

  // A fresh cache on the same directory: the kernels come from disk, and the second one
  // is still a recompile (independent of what the disk holds).
  FakeCache d(dir.path);
  d->get(trace_scaled(2.0), KernelMode::ResidualJacobian);
  d->get(trace_scaled(3.0), KernelMode::ResidualJacobian);
  CHECK(d->stats().disk_hits == 2);
  CHECK(d->recompiles("scaled") == 1);

  c->clear_memory();
  CHECK(c->recompiles("scaled") == 0);
  CHECK(c->stats().entries == 0);
}

TEST_CASE("kernel cache: the recompile warning names the cause, not always a captured value") {
  TempDir dir("recompile_causes");
  KernelCache::Options o;
  o.recompile_limit = 1;
  o.use_disk = false;
  FakeCache c(dir.path, o);
  for (uint32_t rows : {3u, 4u, 5u}) c->get(trace_two_vars("shapes", rows), KernelMode::Residual);
  for (uint32_t width : {2u, 4u, 8u}) {
    CompileOptions options;
    options.vector_width = width;
    c->get(trace_scaled(1.0, "widths"), KernelMode::Residual, options);
  }
  const std::string log = c.log.str();
  CAPTURE(log);
  CHECK(count_lines(log, "recompiled") == 2);
  CHECK(log.find("cost 'shapes' has been recompiled 2 times, more than the limit of 1: its signature") !=
        std::string::npos);
  CHECK(log.find("cost 'widths' has been recompiled 2 times, more than the limit of 1: its compile options or "
                 "target differ (options, vector_width)") != std::string::npos);
  CHECK(log.find("captured") == std::string::npos);
}

TEST_CASE("kernel cache: fail on recompile throws lsjit::Error naming the constant") {
  TempDir dir("fail_recompile");
  FakeCache c(dir.path);
  c->set_fail_on_recompile(true);
  c->get(trace_scaled(2.0), KernelMode::ResidualJacobian);
  c->get(trace_scaled(2.0), KernelMode::Residual);  // another mode is fine
  c->get(trace_scaled(2.0), KernelMode::ResidualJacobian);
  try {
    c->get(trace_scaled(3.0), KernelMode::ResidualJacobian);
    FAIL("no exception");
  } catch (const lsjit::Error& e) {
    const std::string m = e.what();
    CAPTURE(m);
    CHECK(m.find("cost 'scaled' (mode residual_jacobian) needs another kernel") != std::string::npos);
    CHECK(m.find("structural_hash:") != std::string::npos);
    CHECK(m.find(": 2 -> 3") != std::string::npos);
    CHECK(m.find("as data") != std::string::npos);
  }
  CHECK(c.counters->compiles == 2);  // nothing compiled for the failed get
  CHECK(c->stats().entries == 2);
  c->set_fail_on_recompile(false);
  CHECK(c->get(trace_scaled(3.0), KernelMode::ResidualJacobian) != nullptr);
  CHECK(c->recompiles("scaled") == 1);
}

TEST_CASE("kernel cache: options from the environment") {
  struct Env {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    void set(const char* n, const char* v) {
      const char* old = std::getenv(n);
      saved.emplace_back(n, old ? std::optional<std::string>(old) : std::nullopt);
      if (v) ::setenv(n, v, 1);
      else ::unsetenv(n);
    }
    ~Env() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it)
        if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
        else ::unsetenv(it->first.c_str());
    }
  } env;
  env.set("LSJIT_LOG_COMPILES", "1");
  env.set("LSJIT_EXPLAIN_CACHE_MISSES", "yes");
  env.set("LSJIT_FAIL_ON_RECOMPILE", "0");
  env.set("LSJIT_RECOMPILE_LIMIT", "3");
  env.set("LSJIT_DISK_CACHE", "0");
  KernelCache::Options o = KernelCache::Options::from_environment();
  CHECK(o.log_compiles);
  CHECK(o.explain_misses);
  CHECK(!o.fail_on_recompile);
  CHECK(o.recompile_limit == 3);
  CHECK(!o.use_disk);
  env.set("LSJIT_FAIL_ON_RECOMPILE", "1");
  env.set("LSJIT_DISK_CACHE", nullptr);
  env.set("LSJIT_LOG_COMPILES", nullptr);
  o = KernelCache::Options::from_environment();
  CHECK(o.fail_on_recompile);
  CHECK(o.use_disk);
  CHECK(!o.log_compiles);
  CHECK(o.recompile_limit == 3);
}

TEST_CASE("kernel cache: LSJIT_LOG_COMPILES logs each get that is not a memory hit") {
  TempDir dir("log");
  KernelCache::Options o;
  o.log_compiles = true;
  {
    FakeCache c(dir.path, o);
    c->lookup(trace_scaled(2.0), KernelMode::ResidualJacobian, {}, 0.25);
    c->get(trace_scaled(2.0), KernelMode::ResidualJacobian);
    const std::string log = c.log.str();
    CAPTURE(log);
    CHECK(std::count(log.begin(), log.end(), '\n') == 1);
    CHECK(log.find("lsjit: kernel scaled residual_jacobian ") == 0);
    // The trace named as LSJIT_DUMP_DIR names its files.
    const std::string hash = lsjit::ir::structural_hash(trace_scaled(2.0)).hex();
    CHECK(log.find(" (trace scaled-" + hash.substr(0, 12) + "): compiled in ") != std::string::npos);
    for (const char* stage : {"trace 250.000", "differentiate ", "simplify ", "llvm_ir 1.000",
                              "optimize 2.000", "codegen 3.000", "link "})
      CHECK_MESSAGE(log.find(stage) != std::string::npos, stage);
  }
  FakeCache c(dir.path, o);
  c->get(trace_scaled(2.0), KernelMode::ResidualJacobian);
  const std::string log = c.log.str();
  CAPTURE(log);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(log.find(": from disk in ") != std::string::npos);
  CHECK(log.find("read ") != std::string::npos);
  CHECK(log.find("link ") != std::string::npos);
}

TEST_CASE("kernel cache: LSJIT_EXPLAIN_CACHE_MISSES explains recompiles, and nothing else") {
  TempDir dir("explain");
  KernelCache::Options o;
  o.explain_misses = true;
  FakeCache c(dir.path, o);
  c->get(trace_scaled(2.0), KernelMode::ResidualJacobian);
  CHECK(c.log.str().empty());  // first sight of the name: nothing to compare
  c->get(trace_scaled(2.0, "unrelated"), KernelMode::ResidualJacobian);
  CHECK(c.log.str().empty());
  // The cost's first kernel in another mode is not a recompile (issue 19, item 7).
  c->get(trace_scaled(2.0), KernelMode::Residual);
  CHECK(c.log.str().empty());
  CHECK(c->stats().recompiles == 0);
  // Nor is a new process loading the same kernels from disk.
  {
    FakeCache fresh(dir.path, o);
    fresh->get(trace_scaled(2.0), KernelMode::ResidualJacobian);
    fresh->get(trace_scaled(2.0), KernelMode::Residual);
    CHECK(fresh.log.str().find("cache miss") == std::string::npos);
    CHECK(fresh->stats().recompiles == 0);
  }
  c->get(trace_scaled(7.0), KernelMode::ResidualJacobian);
  std::string log = c.log.str();
  CHECK(c->stats().recompiles == 1);
  CAPTURE(log);
  CHECK(log.find("lsjit: cache miss for cost 'scaled' (mode residual_jacobian, key ") == 0);
  // The closest previous key is the same-mode one, and only the structural hash differs.
  CHECK(log.find("(13 of 14 parts equal)") != std::string::npos);
  CHECK(log.find("lsjit:   structural_hash: ") != std::string::npos);
  CHECK(log.find("mode:") == std::string::npos);
  CHECK(log.find("a captured constant differs") != std::string::npos);
  CHECK(log.find(": 2 -> 7") != std::string::npos);
  CHECK(log.find("as data") != std::string::npos);
  c.log.str("");
  c->get(trace_scaled(7.0), KernelMode::ResidualJacobian);  // a hit: silent
  CHECK(c.log.str().empty());
}

TEST_CASE("kernel cache: concurrent gets of one key compile it once") {
  TempDir dir("threads");
  FakeCache c(dir.path);
  c.counters->compile_sleep_ms = 50;
  const ir::Trace t = trace_scaled(2.0);
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const Kernel>> got(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      got[i] = c->get(t, i % 2 ? KernelMode::Residual : KernelMode::ResidualJacobian);
    });
  for (auto& th : threads) th.join();
  CHECK(c.counters->compiles == 2);
  for (int i = 2; i < 8; ++i) CHECK(got[i] == got[i % 2]);
  const CacheStats s = c->stats();
  CHECK(s.gets == 8);
  CHECK(s.memory_hits == 6);
  CHECK(s.compiles == 2);
}

TEST_CASE("kernel cache: two processes compiling one key at once both succeed") {
  TempDir dir("fork");
  const ir::Trace t = trace_scaled(2.0);
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        FakeCache c(dir.path);
        c.counters->compile_sleep_ms = 20;
        const auto k = c->get(t, KernelMode::ResidualJacobian);
        if (!k || !k->function || !c.log.str().empty()) code = 2;
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  FakeCache c(dir.path);
  CHECK(c->lookup(t, KernelMode::ResidualJacobian).source == KernelSource::Disk);
  CHECK(c.log.str().empty());
  CHECK(DiskCache(dir.path).list().size() == 1);
}

TEST_CASE("kernel cache: only traced-stage costs are accepted") {
  TempDir dir("stage");
  FakeCache c(dir.path);
  ir::Trace t = trace_scaled(2.0);
  t.stage = ir::Stage::Simplified;
  CHECK_THROWS_AS(c->get(t, KernelMode::Residual), lsjit::Error);
}

TEST_CASE("kernel cache: loads reuse the key read first - writes read the key file again") {
  TempDir dir("key_reuse");
  const ir::Trace a = trace_scaled(2.0), b = trace_two_vars();
  {
    FakeCache c(dir.path);
    (void)c->get(a, KernelMode::Residual);
    (void)c->get(b, KernelMode::Residual);
  }
  FakeCache c(dir.path);
  CHECK(c->lookup(a, KernelMode::Residual).source == KernelSource::Disk);
  // The key file gone: a load no longer opens it, and still authenticates b's entry.
  const fs::path key_file = dir / std::string(compiler::kAuthKeyFileName);
  const std::string key_bytes = read_bytes(key_file);
  fs::remove(key_file);
  CHECK(c->lookup(b, KernelMode::Residual).source == KernelSource::Disk);
  CHECK(c.log.str().empty());
  // A write checks the directory and reads (here: makes) the key file again, and loads
  // follow the new key: an entry tagged with the old one is bad from then on.
  c->store_data(compiler::make_cache_key({{"data", "test_blob"}}), "x");
  CHECK(fs::exists(key_file));
  CHECK(read_bytes(key_file) != key_bytes);
  CHECK(c->read_data(compiler::make_cache_key({{"data", "test_blob"}}), [](std::string_view) { return std::string(); }) ==
        std::optional<std::string>("x"));
  FakeCache fresh(dir.path);
  CHECK(fresh->lookup(a, KernelMode::Residual).source == KernelSource::Compiled);
  CHECK(fresh.log.str().find("unauthenticated") != std::string::npos);
}
