// Tier 0's machine code: runs of a kernel graph's arithmetic compiled to AVX-512 at the
// moment tier 0 is built, so that their values stay in registers instead of streaming
// through tier 0's columns one op at a time.
//
// Why: tier 0 (tier0.h) interprets one op over a column of 128 instances per step. Its
// values live in memory, so a large graph (an SE3 edge's normal equations: 2239 ops, 57
// inputs, 91 outputs) runs several times slower than its LLVM kernel, and that is what a
// cold solve runs until LLVM is done (docs/benchmarks-history.md, "Tier 0 against compiled
// kernels", has the figures). Compiling the same
// straight-line arithmetic here takes microseconds per thousand ops and needs no LLVM.
//
// What: tier 0 cuts its step list into segments, maximal runs of ops that segment_op()
// accepts: arithmetic, fma, sqrt, floor and ceil, min and max, comparisons, logic and
// select. Loads, stores, fmod and the transcendental functions stay tier-0 steps, and so do
// constants that a step outside a segment reads. A segment becomes one function
//
//   void segment(double* columns /*rdi*/, const double* pool /*rsi*/, double* spills /*rdx*/)
//
// that runs its ops on 8 instances at a time, 16 times over a block of 128: `columns` is
// tier 0's registers (column c of the block at columns + 128 c), from which it reads the
// values computed before it and into which it writes those read after it (by a later step
// or a store); `pool` holds the constants as 8 copies each; `spills` is a scratch of
// spill_slots() vectors of 8 doubles. Inside, values live in zmm0-zmm31, allocated by
// furthest next use (Belady's rule, optimal for straight-line code up to the spill stores);
// the last operand of an instruction is read from memory where it is not in a register.
//
// Bits: every op is one IEEE operation, the one tier 0's loop for it performs (min and max
// as x86's minpd/maxpd with tier 0's NaN rule, comparisons with the predicates of C's
// operators), so a segment computes tier 0's results, and so the compiled kernel's, to the
// bit. The tests run tier 0 both ways against compiled kernels (tests/compiler/tier0_test.cpp).
//
// Memory: the code and the pool are written into a fresh anonymous mapping, which is then
// made read+execute (code) and read-only (pool); nothing is ever writable and executable at
// once. Inputs are tier 0's own graphs, never bytes from a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "lsjit/ir/op.h"

namespace lsjit::compiler {

// One run of ops. Values are named by Ref: a column of tier 0's registers (computed before
// the segment; never written inside it), a constant (an index into the pool the compiler
// is given), or the result of an earlier op of the segment.
struct Segment {
  struct Ref {
    enum class Kind : uint8_t { Column, Constant, Result };
    Kind kind;
    uint32_t index;
  };
  struct Op {
    ir::Op op;
    uint8_t num_args;
    Ref args[3];
    int64_t column = -1;  // >= 0: also written to this column (read after the segment)
  };
  std::vector<Op> ops;
};

// Whether this CPU and its OS run AVX-512F code (zmm state enabled).
bool segment_code_available();
// Whether a segment may hold `op` (Powi, Const and Input are not ops of a segment).
bool segment_op(ir::Op op);

// The mapped code and pool of a kernel's segments. Owns the mapping.
class SegmentCode {
 public:
  using Function = void (*)(double* columns, const double* pool, double* spills);
  SegmentCode(const std::vector<uint8_t>& code, const std::vector<double>& pool);
  ~SegmentCode();
  SegmentCode(const SegmentCode&) = delete;
  SegmentCode& operator=(const SegmentCode&) = delete;

  Function function(size_t offset) const;
  const double* pool() const { return pool_; }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0, code_size_ = 0;
  const double* pool_ = nullptr;
};

// Compiles segments one after the other into one buffer.
class SegmentCompiler {
 public:
  // `constants`: the values Ref::Kind::Constant indexes; the compiler appends the masks
  // and values its code needs (sign, magnitude, 0, 1) to its own pool.
  explicit SegmentCompiler(const std::vector<double>& constants);

  // Compiles `segment` for blocks of `block` instances (a multiple of 8) whose columns are
  // `block` doubles apart. Returns its function's offset for SegmentCode::function.
  size_t add(const Segment& segment, uint32_t block);
  // The most spill slots any segment uses: the size (in vectors of 8) its `spills` needs.
  uint32_t spill_slots() const { return spill_slots_; }
  // Maps everything added. Throws lsjit::Error if the system refuses the mapping.
  std::unique_ptr<SegmentCode> finish() const;

 private:
  friend class SegmentEmitter;
  uint32_t pool_index(double value);  // the pool slot of a value, added on first use
  std::vector<uint8_t> code_;
  std::vector<double> pool_;  // 8 copies per slot
  std::vector<uint32_t> constant_slot_;
  uint32_t spill_slots_ = 0;
};

}  // namespace lsjit::compiler
