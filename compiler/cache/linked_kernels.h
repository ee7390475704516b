// Kernels compiled ahead of time and linked into the program, found by their cache keys.
//
// Why: a program whose costs never change after development (a robot, an embedded
// solver) should not ship LLVM, nor compile on its first run. `lsjit cache export` (the
// CLI) writes kernels from a disk cache as a static library of their object code plus a
// registration source: a table of LinkedKernel, one per kernel, and a function that passes
// the table to register_linked_kernels. A program that links both and calls that function
// before analyze() gets those kernels from the table: no compile, no disk read, no LLVM,
// and no executable memory mapped at run time (the code is in the program's own text).
//
// KernelCache consults this table after memory and before the disk, under every tiering
// (kernel_cache.h), with the same key it would use for the disk. A key the table does not
// have is an ordinary miss: compiled, or tier 0 where LLVM is not there (Tier0Only, or a
// failed background compile). The key names the CPU (cache_key.h), so exported kernels are
// found on hosts with the build machine's CPUID fingerprint; elsewhere they are misses.
//
// Trust: the table is part of the program, as trusted as the rest of its code. Its
// integrity is still checked at registration, so a damaged or hand-edited table fails
// loudly instead of running the wrong kernel: every id must be the hash of its parts, and
// every symbol must be kernel_symbol of its key.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lsjit/compiler/cache/cache_key.h"
#include "lsjit/compiler/kernel.h"

namespace lsjit::compiler {

// One kernel of an exported table. Every pointer is to static storage that outlives the
// registry (the generated source defines them as constants); nothing is copied or freed.
struct LinkedKernel {
  const char* id;             // the key's hash, 32 lowercase hex digits
  const char* const* parts;   // 2 * part_count strings: name, value, name, value, ...
  uint32_t part_count;
  const char* symbol;         // kernel_symbol(key): "lsjit_k_" + id
  KernelFn function;          // the kernel, linked from the exported library
};

// Adds `count` kernels from `table` to the process's registry. Thread safe, and may be
// called more than once (for several exported libraries); a kernel already registered
// under the same id and parts is skipped. Returns the number added. Throws lsjit::Error,
// registering nothing from `table`, if an entry has a null pointer, an id that is not the
// hash of its parts, a symbol that is not its key's, or an id registered before with
// other parts.
size_t register_linked_kernels(const LinkedKernel* table, size_t count);

// The registered kernel of `key` (same hash and every part equal), or nullptr.
const LinkedKernel* find_linked_kernel(const CacheKey& key);

// The number of registered kernels.
size_t linked_kernel_count();

}  // namespace lsjit::compiler
