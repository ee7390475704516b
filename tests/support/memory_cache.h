// A process-wide, memory-only kernel cache for tests that solve: no disk, no output, and
// shared across a test executable so that each structure compiles once per run.
#pragma once

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/problem.h"

namespace lsjit::testing {

// Options of a memory-only, silent cache: for a test that needs a cache of its own, to
// count its compiles.
inline compiler::KernelCache::Options memory_only() {
  compiler::KernelCache::Options o;
  o.use_disk = false;
  o.quiet = true;
  return o;
}

inline compiler::KernelCache& memory_cache() {
  // Never destroyed: kernels may outlive a test.
  static compiler::KernelCache* cache = new compiler::KernelCache(memory_only());
  return *cache;
}

// AnalyzeOptions that use `cache` (memory_cache() by default).
inline AnalyzeOptions analyze_with(compiler::KernelCache& cache = memory_cache()) {
  AnalyzeOptions a;
  a.cache = &cache;
  return a;
}

}  // namespace lsjit::testing
