// recompile_check: an entry's stored code against a fresh compile of its IR.
#include <doctest/doctest.h>

#include "cache_test_support.h"
#include "lsjit/compiler/cache/recompile_check.h"

using namespace lsjit;
using namespace lsjit::compiler;
using namespace lsjit::cache_testing;

namespace {

DiskEntry real_entry(const TempDir& dir, const ir::Trace& traced, KernelMode mode) {
  KernelCache::Options o;
  o.directory = dir.path;
  o.quiet = true;
  KernelCache cache(o);
  const CacheKey key = cache.get(traced, mode)->key;
  const DecodeResult r = read_entry(DiskCache(dir.path), key.hash);
  REQUIRE(r.status == EntryStatus::Ok);
  return *r.entry;
}

void set_part(DiskEntry& e, const std::string& name, const std::string& value) {
  for (auto& [n, v] : e.key.parts)
    if (n == name) v = value;
}

}  // namespace

TEST_CASE("recompile check: every mode of a real entry recompiles to the same output") {
  TempDir dir("recompile_same");
  for (KernelMode mode : kAllModes) {
    CAPTURE(mode_name(mode));
    const DiskEntry e = real_entry(dir, trace_two_vars(), mode);
    const RecompileCheck c = recompile_check(e);
    CHECK(c.outcome == RecompileCheck::Outcome::Same);
    CHECK(c.outputs_different == 0);
    CHECK(c.outputs_compared > 0);
    // The same compiler on the same IR gives the same bytes.
    CHECK(c.same_object);
  }
}

TEST_CASE("recompile check: another graph's IR under the stored code is found different") {
  TempDir dir("recompile_different");
  DiskEntry e = real_entry(dir, trace_scaled(2.0), KernelMode::Residual);
  e.ir_text = real_entry(dir, trace_scaled(2.5), KernelMode::Residual).ir_text;
  const RecompileCheck c = recompile_check(e);
  CHECK(c.outcome == RecompileCheck::Outcome::Different);
  CHECK_FALSE(c.same_object);
  // Every residual of every instance differs: 37 instances x 2.
  CHECK(c.outputs_different == 74);
  CHECK(c.detail.find("74 of 74 outputs differ; first: res of instance 0") != std::string::npos);
}

TEST_CASE("recompile check: entries for another target or version are skipped - "
          "malformed key parts throw") {
  TempDir dir("recompile_skip");
  const DiskEntry good = real_entry(dir, trace_scaled(2.0), KernelMode::ResidualJacobian);
  for (const char* part : {"host_cpu", "triple", "llvm_version", "ir_version", "host_cpuid"}) {
    CAPTURE(part);
    DiskEntry e = good;
    set_part(e, part, "elsewhere");
    const RecompileCheck c = recompile_check(e);
    CHECK(c.outcome == RecompileCheck::Outcome::Skipped);
    CHECK(c.detail.find(std::string("compiled for ") + part + " elsewhere") != std::string::npos);
  }
  DiskEntry e = good;
  set_part(e, "options", "vector_width=0 fma_contraction=maybe vector_math=on");
  CHECK_THROWS_WITH_AS(recompile_check(e), doctest::Contains("fma_contraction is not on or off"), Error);
  e = good;
  set_part(e, "mode", "backwards");
  CHECK_THROWS_WITH_AS(recompile_check(e), doctest::Contains("'backwards' is not a kernel mode"), Error);
  e = good;
  e.ir_text = "not ir";
  CHECK_THROWS_AS(recompile_check(e), Error);
}
