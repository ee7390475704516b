// The kernel cache with the real compiler and JIT: kernels from memory, from disk and
// freshly compiled all compute what the reference interpreter computes.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include "../support/kernel_check.h"
#include "cache_test_support.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/ir/parser.h"

using namespace lsjit;
using namespace lsjit::compiler;
using namespace lsjit::cache_testing;

namespace {

KernelCache::Options with_dir(const fs::path& dir, std::ostream& log) {
  KernelCache::Options o;
  o.directory = dir;
  o.log = &log;
  return o;
}

ir::InputValues sample_two_vars(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-2, 2);
  ir::InputValues in;
  in.vars = {{u(rng), u(rng)}, {u(rng), u(rng)}};
  in.data = {{u(rng), u(rng), u(rng)}};
  return in;
}

// Runs `kernel` over `count` instances and compares every output with run_reference on
// the mode graph of `traced`.
void check_against_reference(const Kernel& kernel, const ir::Trace& traced, KernelMode mode,
                             int64_t count = 37) {
  std::mt19937_64 rng(42);
  const ir::Trace g = graph_for_mode(traced, mode);
  const KernelLayout& layout = kernel.layout;
  const testing::KernelInputs in = testing::make_kernel_inputs(layout, count, sample_two_vars, rng);
  std::vector<const int32_t*> idx;
  std::vector<const double*> vals;
  for (uint32_t s = 0; s < layout.num_vars; ++s) {
    idx.push_back(in.indices[s].data());
    vals.push_back(in.values[s].data());
  }
  testing::KernelOutputs jit = testing::make_outputs(layout, count, -1.0),
                         ref = testing::make_outputs(layout, count, 1.0);
  KernelArgs args;
  args.begin = 0;
  args.end = count;
  args.indices = idx.data();
  args.values = vals.data();
  args.data = in.data.data();
  args.outputs = jit.pointers.data();
  args.scatter = jit.scatter.data();
  kernel(args);
  args.outputs = ref.pointers.data();
  args.scatter = ref.scatter.data();
  run_reference(g, layout, args);
  size_t mismatches = 0;
  for (size_t a = 0; a < layout.outputs.size(); ++a)
    for (size_t k = 0; k < jit.arrays[a].size(); ++k)
      if (!testing::close_enough(jit.arrays[a][k], ref.arrays[a][k], 0.0)) ++mismatches;
  CHECK_MESSAGE(mismatches == 0, mode_name(mode) << ": " << mismatches << " mismatches");
}

}  // namespace

TEST_CASE("cache + LLVM: compile once / hit memory / then disk in a second cache - all run right") {
  TempDir dir("llvm_memory_disk");
  const ir::Trace t = trace_two_vars();
  std::ostringstream log1, log2;
  {
    KernelCache cache(with_dir(dir.path, log1));
    for (KernelMode mode : kAllModes) {
      CAPTURE(mode_name(mode));
      const auto first = cache.lookup(t, mode);
      const auto second = cache.lookup(t, mode);
      CHECK(first.source == KernelSource::Compiled);
      CHECK(second.source == KernelSource::Memory);
      CHECK(first.kernel == second.kernel);
      CHECK(first.kernel->key.part("triple") == host_target({}).triple);
      CHECK(first.kernel->times.codegen_s > 0);
      check_against_reference(*first.kernel, t, mode);
    }
    const CacheStats s = cache.stats();
    CHECK(s.compiles == 3);
    CHECK(s.memory_hits == 3);
    CHECK(s.disk_hits == 0);
    CHECK(s.disk_writes == 3);
    CHECK(s.recompiles == 0);
  }
  CHECK(log1.str().empty());
  CHECK(DiskCache(dir.path).list().size() == 3);

  KernelCache cache2(with_dir(dir.path, log2));
  for (KernelMode mode : kAllModes) {
    CAPTURE(mode_name(mode));
    const auto l = cache2.lookup(t, mode);
    CHECK(l.source == KernelSource::Disk);
    check_against_reference(*l.kernel, t, mode);
  }
  CHECK(cache2.stats().compiles == 0);
  CHECK(cache2.stats().disk_hits == 3);
  CHECK(log2.str().empty());

  // The stored IR text is the mode graph, and parses back.
  for (const auto& f : DiskCache(dir.path).list()) {
    const DecodeResult r = read_entry_file(f.path);
    REQUIRE(r.status == EntryStatus::Ok);
    const ir::Trace parsed = ir::parse(r.entry->ir_text);
    CHECK(parsed.signature.name == "two_vars");
  }
}

TEST_CASE("cache + LLVM: a corrupt entry is reported once / recompiled / replaced") {
  TempDir dir("llvm_corrupt");
  const ir::Trace t = trace_two_vars();
  std::ostringstream log1, log2, log3;
  fs::path path;
  {
    KernelCache cache(with_dir(dir.path, log1));
    path = DiskCache(dir.path).entry_path(cache.get(t, KernelMode::ResidualJacobian)->key.hash);
  }
  std::string bytes = read_bytes(path);
  // Inside the object code, near its end (the payload's last field).
  bytes[payload_end(bytes) - 20] ^= 0x55;
  write_bytes(path, bytes);
  {
    KernelCache cache(with_dir(dir.path, log2));
    const auto l = cache.lookup(t, KernelMode::ResidualJacobian);
    CHECK(l.source == KernelSource::Compiled);
    check_against_reference(*l.kernel, t, KernelMode::ResidualJacobian);
  }
  const std::string log = log2.str();
  CAPTURE(log);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(log.find("is corrupt (checksum mismatch); recompiling and replacing it") != std::string::npos);
  KernelCache cache(with_dir(dir.path, log3));
  CHECK(cache.lookup(t, KernelMode::ResidualJacobian).source == KernelSource::Disk);
  CHECK(log3.str().empty());
}

TEST_CASE("cache + LLVM: a valid entry with an object that does not define the symbol is "
          "recompiled") {
  TempDir dir("llvm_wrong_object");
  const ir::Trace t = trace_two_vars();
  std::ostringstream log0, log;
  KernelCache probe(with_dir(dir.path / "probe", log0));
  const auto k = probe.get(t, KernelMode::Residual);
  // An entry for `t`'s key holding the object of another cost (another symbol inside).
  const auto other = probe.get(trace_scaled(2.0), KernelMode::Residual);
  const DecodeResult o = read_entry(DiskCache(dir.path / "probe"), other->key.hash);
  REQUIRE(o.status == EntryStatus::Ok);
  DiskEntry forged = *o.entry;
  forged.key = k->key;
  forged.symbol = k->symbol;
  write_entry(DiskCache(dir.path), forged);

  KernelCache cache(with_dir(dir.path, log));
  const auto l = cache.lookup(t, KernelMode::Residual);
  CHECK(l.source == KernelSource::Compiled);
  check_against_reference(*l.kernel, t, KernelMode::Residual);
  const std::string text = log.str();
  CAPTURE(text);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  CHECK(text.find("cannot be loaded") != std::string::npos);
}

TEST_CASE("cache + LLVM: LSJIT_FAIL_ON_RECOMPILE=1 makes a recompile throw") {
  TempDir dir("llvm_fail");
  const char* old = std::getenv("LSJIT_FAIL_ON_RECOMPILE");
  const std::string saved = old ? old : "";
  ::setenv("LSJIT_FAIL_ON_RECOMPILE", "1", 1);
  KernelCache::Options o = KernelCache::Options::from_environment();
  if (old) ::setenv("LSJIT_FAIL_ON_RECOMPILE", saved.c_str(), 1);
  else ::unsetenv("LSJIT_FAIL_ON_RECOMPILE");
  std::ostringstream log;
  o.directory = dir.path;
  o.log = &log;
  KernelCache cache(o);
  cache.get(trace_scaled(2.0), KernelMode::ResidualJacobian);
  cache.get(trace_scaled(2.0), KernelMode::Residual);
  CHECK_THROWS_WITH_AS(cache.get(trace_scaled(3.0), KernelMode::ResidualJacobian),
                       doctest::Contains("recompiles are set to fail"), lsjit::Error);
  cache.wait_for_background();  // the environment's default tiering compiles in the background
  CHECK(cache.stats().compiles == 2);
}

TEST_CASE("cache + LLVM: two caches in one process load one entry side by side") {
  TempDir dir("llvm_two");
  const ir::Trace t = trace_two_vars();
  std::ostringstream l1, l2;
  KernelCache a(with_dir(dir.path, l1)), b(with_dir(dir.path, l2));
  const auto ka = a.get(t, KernelMode::NormalEquations);
  const auto kb = b.lookup(t, KernelMode::NormalEquations);
  CHECK(kb.source == KernelSource::Disk);
  CHECK(ka->symbol == kb.kernel->symbol);
  check_against_reference(*ka, t, KernelMode::NormalEquations);
  check_against_reference(*kb.kernel, t, KernelMode::NormalEquations);
}

TEST_CASE("cache + LLVM: lookup_modes compiles the modes concurrently - each exactly once") {
  TempDir dir("llvm_lookup_modes");
  const ir::Trace t = trace_two_vars();
  std::ostringstream log;
  KernelCache cache(with_dir(dir.path, log));
  const std::vector<KernelMode> modes(std::begin(kAllModes), std::end(kAllModes));
  const auto first = cache.lookup_modes(t, modes);
  REQUIRE(first.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    CAPTURE(mode_name(modes[k]));
    CHECK(first[k].source == KernelSource::Compiled);
    CHECK(first[k].kernel->layout.mode == modes[k]);
    check_against_reference(*first[k].kernel, t, modes[k]);
  }
  const auto again = cache.lookup_modes(t, modes);
  for (size_t k = 0; k < 3; ++k) {
    CHECK(again[k].source == KernelSource::Memory);
    CHECK(again[k].kernel == first[k].kernel);
  }
  CHECK(cache.stats().compiles == 3);
  CHECK(cache.stats().recompiles == 0);
  CHECK(log.str().empty());
}

TEST_CASE("cache + LLVM: planted machine code with a valid checksum but no key is never run") {
  TempDir dir("llvm_planted");
  const ir::Trace t = trace_two_vars();
  std::ostringstream log1, log2, log3;
  {
    KernelCache cache(with_dir(dir.path, log1));
    for (KernelMode mode : kAllModes) cache.get(t, mode);
  }
  const fs::path marker = dir / "planted-code-ran";
  fs::create_directories(dir / "work");
  CHECK(plant_marker_objects(dir.path, marker, dir / "work") == 3);
  {
    KernelCache cache(with_dir(dir.path, log2));
    for (KernelMode mode : kAllModes) {
      CAPTURE(mode_name(mode));
      const auto l = cache.lookup(t, mode);
      CHECK(l.source == KernelSource::Compiled);
      check_against_reference(*l.kernel, t, mode);
    }
    CHECK(cache.stats().bad_disk_entries == 3);
  }
  CHECK_MESSAGE(!fs::exists(marker), "the planted object was linked or run");
  const std::string log = log2.str();
  CAPTURE(log);
  CHECK(count_lines(log, "warning") == 3);
  CHECK(count_lines(log, "is unauthenticated") == 3);
  // The entries were rewritten with a good tag: the next cache loads them silently.
  KernelCache cache(with_dir(dir.path, log3));
  for (KernelMode mode : kAllModes) CHECK(cache.lookup(t, mode).source == KernelSource::Disk);
  CHECK(log3.str().empty());
  CHECK(!fs::exists(marker));
}
