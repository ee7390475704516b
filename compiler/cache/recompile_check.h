// Recompiling a disk cache entry and comparing the result with the entry's stored code:
// what `lsjit cache verify` does beyond checking the file's integrity.
//
// An entry holds the IR text of the graph its kernel computes (the mode graph), its key
// parts and its object code. recompile_check parses the IR, compiles it again for the
// entry's mode and compile options, loads both the stored and the new object, runs both on
// the same pseudo-random inputs (instances, shuffled and repeated indices, values and data
// drawn from a fixed seed) and compares every output double by bit pattern. Identical
// compilers give identical code, so any difference means the stored object is not what its
// IR compiles to (a damaged object that still passed the checksum, or an entry written by
// a different lowering under the same ir_version).
//
// The inputs are not meaningful values of the variable types (quaternions are not unit):
// both kernels compute the same function of whatever they are given, which is all the
// comparison needs.
#pragma once

#include <cstdint>
#include <string>

#include "lsjit/compiler/cache/disk_cache.h"

namespace lsjit::compiler {

struct RecompileCheck {
  enum class Outcome {
    Same,       // every output bit-identical
    Different,  // some output differs (see detail)
    Skipped,    // cannot be recompiled here: the entry is for another target, LLVM or IR
                // version (see detail); not a fault of the entry
  };
  Outcome outcome = Outcome::Same;
  std::string detail;          // for Different and Skipped, in words
  bool same_object = false;    // the new object code equals the stored one byte for byte
  uint64_t outputs_compared = 0;
  uint64_t outputs_different = 0;
  double compile_s = 0;        // of the recompile
};

// Recompiles `entry` and compares (see above). Throws lsjit::Error when the entry cannot
// be checked at all: its IR does not parse, a key part is missing or malformed, the stored
// object does not load, or compiling fails.
RecompileCheck recompile_check(const DiskEntry& entry, int64_t instances = 37, uint64_t seed = 1);

}  // namespace lsjit::compiler
