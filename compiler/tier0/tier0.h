// Tier 0: a columnar interpreter of a kernel's graph, keeping the kernel contract of
// kernel.h and computing the compiled kernel's values bit for bit.
//
// Why: a cold process waits for LLVM before its first evaluation (a pose graph's SE3
// kernels take a sizeable part of a second to compile), and a platform without LLVM
// cannot compile at all.
// Tier 0 can run a kernel the moment its graph exists. Because its results are the
// compiled kernel's to the bit, a solver may switch from one to the other between (or
// within) evaluations without changing its trajectory.
//
// How: the graph is flattened once, at construction, into a list of steps over registers,
// each register a column of kBlock doubles (one per instance); registers are reused after
// a value's last use, so a call touches (live values) x kBlock x 8 bytes of scratch. A call
// runs every step over a block of kBlock instances, so an op's dispatch is paid once per
// block, and each step's loop is a plain vectorizable loop (compiled for AVX-512, AVX2+FMA
// and baseline x86-64, chosen at run time). The last block of a range is padded with
// copies of its last instance, which are computed and not stored.
//
// On a CPU with AVX-512F, each run of ops that tier0_x86.h compiles is one Segment step of
// machine code that keeps its values in vector registers (the interpreted steps' memory
// traffic is what binds tier 0); the loads of a variable slot and the stores of an output
// array then move 8 x 8 tiles, transposed in registers.
//
// Bit-identity with the compiled kernel (codegen.cpp) rests on three things:
//   - the same graph: executed_graph(mode_graph, options) (kernel_numerics.h), so the same
//     products are fused into fma, each computed by one fused instruction here too;
//   - the same functions: transcendentals call math_variant()'s choice for the compiled
//     kernel's width, libmvec on chunks of its lanes or libm per instance, and powi is the
//     same chain of multiplications as codegen's lower_powi;
//   - the instruction semantics where C differs from LLVM's lowering: min/max are x86's
//     minpd/maxpd as LLVM uses them for llvm.minnum/maxnum (min(-0, +0) is -0 there and
//     +0 in glibc's fmin), every other op is a single IEEE operation.
// The tests compare tier 0 with compiled kernels bit for bit on every test cost, mode,
// width and instance count (tests/compiler/tier0_test.cpp).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "lsjit/compiler/compile_options.h"
#include "lsjit/compiler/kernel.h"
#include "lsjit/compiler/kernel_numerics.h"

namespace lsjit::compiler {

class SegmentCode;

class Tier0Kernel {
 public:
  // Instances per step; a multiple of every variant's lanes, and a divisor of the
  // Evaluator's chunks (256). 128 since one indirect call dispatches a step, and a larger
  // block pays for it over more instances; smaller blocks were slower (docs/benchmarks-history.md,
  // "Tier 0 against compiled kernels", has the measurements).
  static constexpr uint32_t kBlock = 128;

  // `mode_graph`: graph_for_mode's result; `layout`: make_layout(mode_graph.signature, mode);
  // `options`: those the compiled kernel of the same key uses (its width is resolved as
  // host_target resolves it). Throws lsjit::Error for an op tier 0 cannot run.
  // `code`: Auto compiles runs of arithmetic to machine code where the CPU runs it
  // (tier0_x86.h: AVX-512F), Interpreted runs every op as a step (what other CPUs do).
  enum class Code : uint8_t { Auto, Interpreted };
  Tier0Kernel(const ir::Trace& mode_graph, const KernelLayout& layout, const CompileOptions& options,
              Code code = Code::Auto);
  ~Tier0Kernel();

  // The kernel contract (kernel.h): instances [args.begin, args.end). Thread safe: each
  // call takes a scratch buffer from the kernel's pool and gives it back. (Not a
  // thread_local: its first use on a thread registers a destructor, which takes the
  // dynamic loader's lock, held for tens of milliseconds while a background compile loads
  // libLLVM, and the first tier-0 call of a cold solve would wait for it.)
  void operator()(const KernelArgs& args) const;

  uint32_t registers() const { return registers_; }  // columns of scratch a call uses
  size_t steps() const { return instrs_.size(); }
  size_t segments() const { return segment_functions_.size(); }  // steps run as machine code

  // One instruction: dst ← op(a, b, c) on every instance of the block. Kinds other than
  // Op are loads of an input (a: variable slot or data, b: component or offset), Store,
  // which writes register dst to output array a at offset b for the block's instances,
  // Segment, which runs segment c's machine code over the block's registers, and (with
  // segments) LoadRows and StoreArray, which move all of a row's inputs or an output
  // array's values at once (a: their table, rows_ or arrays_).
  enum class Kind : uint8_t { Op, LoadVar, LoadData, Constant, MathCall, Store, Segment, LoadRows, StoreArray };

  // Eight consecutive offsets of a row from `first` and the register of each (`mask`:
  // those moved), for LoadRows and StoreArray, which transpose 8 x 8 tiles of instances
  // by offsets.
  struct Tile {
    uint32_t first;
    uint8_t mask;
    uint32_t column[8];
  };
  struct RowLoad {    // a variable slot's components, or the data's offsets
    bool data;
    uint32_t slot;
    std::vector<Tile> tiles;
  };
  struct ArrayStore {  // every offset of one output array
    uint32_t array;
    std::vector<Tile> tiles;
  };
  struct Step {
    Kind kind = Kind::Op;
    ir::Op op = ir::Op::Const;
    uint32_t dst = 0, a = 0, b = 0, c = 0;
    int32_t int_attr = 0;     // Powi's exponent
    double value = 0;         // Constant
    void* function = nullptr; // MathCall: libmvec variant or libm function
    MathVariant variant;      // MathCall: lanes == 0 is libm per instance
    uint8_t arity = 0;        // MathCall: 1 or 2
  };

  // What a call runs: each step lowered to its handler (the op's loop for this CPU's
  // instruction set, or a load, constant, math call or store) and its operands, 24 bytes
  // (se3_between's normal equations: 1648 steps, 40 KiB, read once per block of kBlock
  // instances). Constants, math calls and Powi's exponent live in the operands or in the
  // side tables the handler reads (constants_ by a, calls_ by c).
  struct Instr;
  struct Frame;
  using Handler = void (*)(const Instr&, const Frame&);
  struct Instr {
    Handler run;
    uint32_t dst, a, b, c;
  };
  struct Call {
    void* function;       // libmvec variant or libm function
    MathVariant variant;  // lanes == 0 is libm per instance
    uint8_t arity;        // 1 or 2
  };
 private:
  std::vector<Instr> instrs_;
  std::vector<double> constants_;
  std::vector<Call> calls_;
  KernelLayout layout_;
  uint32_t registers_ = 0;
  uint32_t num_vars_ = 0;
  std::vector<RowLoad> rows_;
  std::vector<ArrayStore> arrays_;
  std::unique_ptr<SegmentCode> segment_code_;  // null when no step is a segment
  std::vector<void*> segment_functions_;       // by a Segment step's c
  uint32_t spill_slots_ = 0;

  // Doubles on 64-byte lines: a register's column of kBlock starts on a line, so that
  // every 8-lane access of a segment (and of an AVX-512 step loop) is one line.
  struct AlignedDoubles {
    struct Free {
      void operator()(double* p) const { std::free(p); }
    };
    std::unique_ptr<double[], Free> p;
    AlignedDoubles() = default;
    explicit AlignedDoubles(size_t n);
    double* data() const { return p.get(); }
  };
  struct Scratch {
    AlignedDoubles regs;              // registers_ columns of kBlock
    AlignedDoubles spills;            // spill_slots_ vectors of 8
    std::vector<const double*> rows;  // (num_vars_ + 1) * kBlock input rows
  };
  std::unique_ptr<Scratch> take_scratch() const;
  void run(const KernelArgs& args, Scratch& scratch) const;
  void give_back(std::unique_ptr<Scratch> scratch) const;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<Scratch>> pool_;  // idle buffers, one per past concurrent call
};

}  // namespace lsjit::compiler
