// Lowering a mode graph to LLVM IR, optimizing it and emitting a relocatable object.
//
// The generated function (kernel.h's contract), for W = the resolved vector width:
//
//   void SYMBOL(const KernelArgs* args) {
//     read begin, end and the per-slot / per-array pointers once (invariant loads);
//     W lanes at a time over [begin, end), the last step overlapping the one before it,
//     or, for a range shorter than W, one step on stack copies (Lowering::build);
//   }
//
// One vector body, BODY<W>(i), evaluates every live node of the graph once for instances
// i .. i+W-1, every f64 value a <W x double> and every bool an <W x i1> (W = 1: double
// and i1, a plain scalar loop):
//   - inputs: a variable row or data row of at least W doubles is read W components at a
//     time, one vector load per lane and a W x W transpose in registers (for W = 4:
//     4 loads, vperm2f128, unpcklpd/unpckhpd); shorter rows load each lane's double and
//     insert it. Every input load is !invariant.load (the kernel never writes what it
//     reads), so the schedulers may move loads across stores;
//   - outputs: a block of W consecutive offsets of an output array, once all of its
//     values are computed, is transposed back and stored with one vector store per lane;
//     offsets outside such blocks are stored lane by lane (extractelement + store) at
//     outputs[array][i * per_instance + offset], KernelLayout::place giving array and
//     offset (a scattered array's lane l at scatter[array][i + l][offset], its W block
//     pointers loaded once per body);
//   - ops follow ir/eval_op.h exactly: IEEE fadd/fsub/fmul/fdiv/fneg/frem (frem is C
//     fmod), llvm.sqrt/fabs/floor/ceil, llvm.minnum/maxnum (C fmin/fmax), fcmp olt/ole/
//     ogt/oge/oeq and une for ne (C semantics with NaN), i1 and/or/xor, select. powi(x, n)
//     is multiplication by squaring for |n| <= 16 (a few ulp from std::pow, see
//     lower_powi), a pow call otherwise; fma is llvm.fma. Transcendentals (sin ... hypot)
//     call what kernel_numerics.h's math_variant picks: glibc's libmvec on whole vectors
//     (_ZGVbN2v_sin for SSE2 pairs, _ZGVdN4v_sin for AVX2, _ZGVeN8v_sin for AVX-512;
//     wider vectors split into native chunks), else libm per lane.
//
// Fast-math: none, contraction included. The graph lowered is executed_graph()
// (kernel_numerics.h): with CompileOptions::fma_contraction on an FMA host, single-use
// products are already fused into fma nodes by ir/fuse_multiply_add.h, and instruction
// selection fuses nothing else, so tier 0 (tier0.h) computes bit-identical values. No
// reassociation, no nnan/ninf/nsz/afn: NaN, inf and -0 behave as in the interpreter, and
// the scalar kernel computes exactly the interpreter's values on the executed graph (libm
// calls included).
//
// Compile time is what shapes the code (se3_between's normal equations are ~2200 ops): the
// emission order keeps few values live, the body is cut into blocks of ~128 nodes, there is
// one body rather than a vector body and a scalar tail, no IR pass runs and code generation
// is at CodeGenOptLevel::Less. Why no IR pass: optimize() below, and docs/compiler.md,
// "Why no LLVM IR passes", for the measurements.
#include "lsjit/common/cpu.h"
#include "lsjit/compiler/kernel_numerics.h"
#include "lsjit/compiler/llvm/codegen.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"

namespace lsjit::compiler {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error("lsjit codegen: " + message); }

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// ---------------------------------------------------------------------------------------
// The host

struct Host {
  std::string triple;
  std::string cpu;
  std::string features;          // enabled only, sorted: "+a,+b" (TargetInfo::features)
  std::string codegen_features;  // enabled and disabled ("-x"), what the TargetMachine gets
};

// Never destroyed, as every static a compile uses: a background compile
// (background_compile.cpp) may still run while exit() runs static destructors.
const Host& host() {
  static const Host* h = new Host([] {
    Host h;
    h.triple = llvm::sys::getProcessTriple();
    h.cpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> enabled, disabled;
    for (const auto& entry : llvm::sys::getHostCPUFeatures())
      (entry.getValue() ? enabled : disabled).push_back(entry.getKey().str());
    std::sort(enabled.begin(), enabled.end());
    std::sort(disabled.begin(), disabled.end());
    for (const std::string& f : enabled) {
      if (!h.features.empty()) h.features += ',';
      h.features += "+" + f;
    }
    // The CPU name implies features; when a hypervisor masks some of them (an AVX-512
    // CPU model with AVX-512 off), only an explicit "-feature" keeps LLVM from using them.
    h.codegen_features = h.features;
    for (const std::string& f : disabled) {
      if (!h.codegen_features.empty()) h.codegen_features += ',';
      h.codegen_features += "-" + f;
    }
    return h;
  }());
  return *h;
}

// One target machine per thread, reused across compilations: creating one (and the
// subtarget it caches) costs about a millisecond, and a TargetMachine may be used by one
// thread at a time.
std::unique_ptr<llvm::TargetMachine> make_target_machine();
llvm::TargetMachine& target_machine() {
  thread_local std::unique_ptr<llvm::TargetMachine> tm = make_target_machine();
  return *tm;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine() {
  initialize_llvm();
  const Host& h = host();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(h.triple, error);
  if (!target) fail("no LLVM target for " + h.triple + ": " + error);
  llvm::TargetOptions options;  // no unsafe FP math, no contraction (fma nodes are explicit)
  // CodeGenOptLevel::Less: see optimize().
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      h.triple, h.cpu, h.codegen_features, options, llvm::Reloc::PIC_, llvm::CodeModel::Small,
      llvm::CodeGenOptLevel::Less, /*JIT=*/false));
  if (!tm) fail("cannot create a target machine for " + h.triple + " (" + h.cpu + ")");
  return tm;
}

// ---------------------------------------------------------------------------------------
// Lowering

using ir::NodeId;
using ir::Op;

// The body is cut into basic blocks of this many emitted nodes. Instruction selection and
// the machine schedulers work per block and are superlinear in its size, so a long body
// cut into blocks compiles several times faster, and its kernel runs no slower. Each cut
// is a conditional branch on a condition
// that always holds (i <= last), which CodeGenPrepare does not merge away as it merges
// unconditional fall-throughs; the never-taken edge goes to the exit. Between 48 and 300
// the size makes no measurable difference.
constexpr size_t kChunkInstructions = 128;

// The vector loop handles a range shorter than one vector through stack copies of its
// inputs and outputs (below); layouts needing more stack than this use a scalar loop for
// such ranges instead.
constexpr uint64_t kMaxScratchBytes = 64 * 1024;

// The most data components (doubles) one instance may read: a 32x32 matrix is 1024.
constexpr uint64_t kMaxDataComponents = uint64_t{1} << 16;

// A place where optimize() cuts a body into two blocks: after `after`, with the branch
// `lhs pred rhs` (always true there) to the rest, else to `exit`.
struct Cut {
  llvm::Instruction* after;
  llvm::CmpInst::Predicate pred;
  llvm::Value* lhs;
  llvm::Value* rhs;
  llvm::BasicBlock* exit;
};

class Lowering {
 public:
  Lowering(llvm::LLVMContext& ctx, llvm::Module& module, const ir::Trace& trace,
           const KernelLayout& layout, const CompileOptions& options, uint32_t width,
           std::vector<Cut>& cuts)
      : ctx_(ctx), module_(module), graph_(trace.graph), layout_(layout), options_(options),
        width_(width), cuts_(cuts), b_(ctx), f64_(llvm::Type::getDoubleTy(ctx)),
        i1_(llvm::Type::getInt1Ty(ctx)), i32_(llvm::Type::getInt32Ty(ctx)),
        i64_(llvm::Type::getInt64Ty(ctx)), ptr_(llvm::PointerType::getUnqual(ctx)) {
  }

  // The kernel. With W = width_ > 1 lanes:
  //
  //   if (end - begin >= W) {
  //     for (i = begin, last = end - W;; i = min(i + W, last)) {  // the final iteration
  //       BODY<W>(i);                                              // overlaps the one
  //       if (i == last) break;                                    // before: recomputed
  //     }                                                          // instances get the
  //   } else if (end > begin) {                                    // same values again
  //     copy the rows of instances begin + min(l, n-1), l < W, to stack arrays;
  //     BODY<W>(0) on the copies (the same loop, with pointers from phis);
  //     copy lanes l < n of the outputs back.
  //   }
  //
  // so every instance goes through the same vector code whatever the range, and the body
  // is compiled once (a scalar tail would double the compile time). As every op, libmvec
  // included, is lane-wise, results are bit-identical however a caller splits the range
  // between calls or threads (tested). The loads in the body are !invariant.load also
  // when they read the stack copies: those are written before the loop and not during it.
  // W = 1 is a plain loop.
  void build(const std::string& symbol) {
    check_graph();
    const Host& h = host();

    auto* fn_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_}, false);
    fn_ = llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, symbol, module_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addFnAttr(llvm::Attribute::NoFree);
    fn_->addFnAttr(llvm::Attribute::NoSync);
    fn_->addFnAttr(llvm::Attribute::WillReturn);
    fn_->addFnAttr(llvm::Attribute::MustProgress);
    // A CpuLevel is LLVM's CPU of that name with its features and nothing of this host's.
    const bool level = options_.cpu_level != CpuLevel::Host;
    fn_->addFnAttr("target-cpu", level ? std::string(cpu_level_name(options_.cpu_level)) : h.cpu);
    fn_->addFnAttr("target-features", level ? std::string() : h.codegen_features);
    // Frames of big kernels (spills, stack copies) can exceed a page: probe them, so a
    // thread's guard page is never jumped over.
    fn_->addFnAttr("probe-stack", "inline-asm");
    llvm::Argument* args = fn_->getArg(0);
    args->setName("args");
    args->addAttr(llvm::Attribute::NoAlias);
    args->addAttr(llvm::Attribute::NoCapture);
    args->addAttr(llvm::Attribute::ReadOnly);
    args->addAttr(llvm::Attribute::NoUndef);
    args->addAttr(llvm::Attribute::getWithDereferenceableBytes(ctx_, sizeof(KernelArgs)));
    args->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(alignof(KernelArgs))));

    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    invariant_ = llvm::MDNode::get(ctx_, {});

    // KernelArgs: begin, end, indices, values, data, outputs, scatter (kernel.h).
    static_assert(sizeof(KernelArgs) == 56);
    llvm::Value* begin = load_field(args, offsetof(KernelArgs, begin), i64_, "begin");
    llvm::Value* end = load_field(args, offsetof(KernelArgs, end), i64_, "end");
    llvm::Value* indices = load_field(args, offsetof(KernelArgs, indices), ptr_, "indices");
    llvm::Value* values = load_field(args, offsetof(KernelArgs, values), ptr_, "values");
    llvm::Value* data = load_field(args, offsetof(KernelArgs, data), ptr_, "data");
    llvm::Value* outputs = load_field(args, offsetof(KernelArgs, outputs), ptr_, "outputs");
    bool scatters = false;  // (KernelArgs::scatter may be null otherwise)
    for (size_t k = 0; k < layout_.outputs.size(); ++k) scatters |= array_used_[k] && layout_.outputs[k].scattered;
    llvm::Value* scatter = scatters ? load_field(args, offsetof(KernelArgs, scatter), ptr_, "scatter") : nullptr;

    // The per-slot and per-array pointers, once.
    Pointers real;
    real.indices.assign(layout_.ambient.size(), nullptr);
    values_.assign(layout_.ambient.size(), nullptr);
    for (size_t s = 0; s < layout_.ambient.size(); ++s) {
      if (!slot_used_[s]) continue;
      real.indices[s] = load_element(indices, s, "indices." + std::to_string(s));
      values_[s] = load_element(values, s, "values." + std::to_string(s));
    }
    real.data = data;
    real.outputs.assign(layout_.outputs.size(), nullptr);
    for (size_t k = 0; k < layout_.outputs.size(); ++k)
      if (array_used_[k])
        real.outputs[k] = layout_.outputs[k].scattered ? load_element(scatter, k, "scatter." + std::to_string(k))
                                                       : load_element(outputs, k, "out." + std::to_string(k));

    exit_ = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    if (width_ == 1)
      scalar_loop(begin, end, real, exit_);
    else
      vector_loops(begin, end, real);
    b_.SetInsertPoint(exit_);
    b_.CreateRetVoid();
  }

 private:
  // Where the body reads indices and data and writes outputs (values are always the
  // caller's): the caller's arrays, or stack copies for a short range.
  struct Pointers {
    std::vector<llvm::Value*> indices;  // per variable slot (nullptr if unused)
    llvm::Value* data = nullptr;
    std::vector<llvm::Value*> outputs;  // per output array (nullptr if unused); a scattered
                                        // array's is its table of block pointers
  };

  // for (i = begin; i < end; ++i) BODY<1>(i); then branches to `done`.
  void scalar_loop(llvm::Value* begin, llvm::Value* end, const Pointers& p,
                   llvm::BasicBlock* done) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "scalar", fn_, exit_);
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), loop, done);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2, "i");
    i->addIncoming(begin, pre);
    cur_ = p;
    // The chunk condition i < end always holds in the body.
    chunk_condition_ = {llvm::CmpInst::ICMP_SLT, i, end};
    llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), "i.next", true, true);
    // The next instance to prefetch for: i + 1, or i itself in the last iteration.
    llvm::Value* last = b_.CreateSub(end, b_.getInt64(1));
    emit_body(1, i, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, next, last));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, done);
  }

  void vector_loops(llvm::Value* begin, llvm::Value* end, const Pointers& real) {
    const uint32_t w = width_;
    llvm::Value* n = b_.CreateSub(end, begin, "n");
    auto* full = llvm::BasicBlock::Create(ctx_, "full", fn_, exit_);
    auto* short_check = llvm::BasicBlock::Create(ctx_, "short.check", fn_, exit_);
    auto* loop = llvm::BasicBlock::Create(ctx_, "vector", fn_, exit_);
    auto* after = llvm::BasicBlock::Create(ctx_, "vector.done", fn_, exit_);
    b_.CreateCondBr(b_.CreateICmpSGE(n, b_.getInt64(w)), full, short_check);

    b_.SetInsertPoint(full);
    llvm::Value* full_last = b_.CreateSub(end, b_.getInt64(w), "last");
    b_.CreateBr(loop);

    // Short ranges: stack copies, or a scalar loop for layouts too big to copy.
    b_.SetInsertPoint(short_check);
    auto* short_setup = llvm::BasicBlock::Create(ctx_, "short", fn_, exit_);
    b_.CreateCondBr(b_.CreateICmpSGT(n, b_.getInt64(0)), short_setup, exit_);
    b_.SetInsertPoint(short_setup);
    Pointers scratch;
    const bool copies = scratch_bytes() <= kMaxScratchBytes;
    if (copies) {
      scratch = make_scratch(begin, n, real);
      b_.CreateBr(loop);
    } else {
      scalar_loop(begin, end, real, exit_);
    }

    // The vector loop, entered from `full` or with the stack copies from `short`.
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(i64_, 3, "i");
    llvm::PHINode* last = b_.CreatePHI(i64_, 3, "last");
    llvm::PHINode* is_short = b_.CreatePHI(i1_, 3, "short");
    i->addIncoming(begin, full);
    last->addIncoming(full_last, full);
    is_short->addIncoming(b_.getFalse(), full);
    if (copies) {
      i->addIncoming(b_.getInt64(0), short_setup);
      last->addIncoming(b_.getInt64(0), short_setup);
      is_short->addIncoming(b_.getTrue(), short_setup);
    }
    Pointers cur = real;
    std::vector<llvm::PHINode*> phis;
    auto select_pointer = [&](llvm::Value*& slot, llvm::Value* real_ptr, llvm::Value* copy) {
      if (!real_ptr || !copy) return;
      llvm::PHINode* phi = b_.CreatePHI(ptr_, 3);
      phi->addIncoming(real_ptr, full);
      phi->addIncoming(copy, short_setup);
      phis.push_back(phi);
      slot = phi;
    };
    if (copies) {
      for (size_t s = 0; s < cur.indices.size(); ++s)
        select_pointer(cur.indices[s], real.indices[s], scratch.indices[s]);
      select_pointer(cur.data, real.data, scratch.data);
      for (size_t k = 0; k < cur.outputs.size(); ++k)
        select_pointer(cur.outputs[k], real.outputs[k], scratch.outputs[k]);
    }

    cur_ = cur;
    chunk_condition_ = {llvm::CmpInst::ICMP_SLE, i, last};
    llvm::Value* next = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b_.CreateAdd(i, b_.getInt64(w), "", true, true), last, nullptr,
        "i.next");
    emit_body(w, i, next);
    llvm::Value* done = b_.CreateICmpEQ(i, last, "done");
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    i->addIncoming(next, latch);
    last->addIncoming(last, latch);
    is_short->addIncoming(is_short, latch);
    for (llvm::PHINode* phi : phis) phi->addIncoming(phi, latch);
    b_.CreateCondBr(done, after, loop);

    b_.SetInsertPoint(after);
    if (!copies) {
      b_.CreateBr(exit_);
      return;
    }
    auto* copy_back = llvm::BasicBlock::Create(ctx_, "short.out", fn_, exit_);
    b_.CreateCondBr(is_short, copy_back, exit_);
    b_.SetInsertPoint(copy_back);
    copy_outputs_back(begin, n, real, scratch);
    b_.CreateBr(exit_);
  }

  uint64_t scratch_bytes() const {
    uint64_t bytes = uint64_t{width_} * layout_.data_stride * 8;
    for (size_t s = 0; s < slot_used_.size(); ++s)
      if (slot_used_[s]) bytes += uint64_t{width_} * 4;
    for (size_t k = 0; k < layout_.outputs.size(); ++k)
      if (array_used_[k])
        bytes += uint64_t{width_} * (layout_.outputs[k].per_instance + (layout_.outputs[k].scattered ? 1 : 0)) * 8;
    return bytes;
  }

  llvm::Value* scratch_array(llvm::Type* element, uint64_t count, const std::string& name) {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(entry_, entry_->getFirstInsertionPt());
    llvm::AllocaInst* a = b_.CreateAlloca(llvm::ArrayType::get(element, count), nullptr, name);
    a->setAlignment(llvm::Align(32));
    return a;
  }

  // Stack copies of the short range [begin, begin + n), n < W: lane l holds instance
  // begin + min(l, n - 1) (the extra lanes repeat the last instance, so they read valid
  // rows; their outputs are dropped).
  Pointers make_scratch(llvm::Value* begin, llvm::Value* n, const Pointers& real) {
    const uint32_t w = width_;
    Pointers p;
    p.indices.assign(real.indices.size(), nullptr);
    p.outputs.assign(real.outputs.size(), nullptr);
    std::vector<llvm::Value*> source(w);
    llvm::Value* last_lane = b_.CreateSub(n, b_.getInt64(1));
    for (uint32_t l = 0; l < w; ++l)
      source[l] = b_.CreateAdd(
          begin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.getInt64(l), last_lane));
    for (size_t s = 0; s < real.indices.size(); ++s) {
      if (!real.indices[s]) continue;
      p.indices[s] = scratch_array(i32_, w, "indices.copy." + std::to_string(s));
      for (uint32_t l = 0; l < w; ++l) {
        llvm::Value* x = b_.CreateAlignedLoad(
            i32_, b_.CreateInBoundsGEP(i32_, real.indices[s], source[l]), llvm::Align(4));
        b_.CreateAlignedStore(x, b_.CreateConstInBoundsGEP1_64(i32_, p.indices[s], l),
                              llvm::Align(4));
      }
    }
    if (layout_.data_stride > 0) {
      const uint64_t stride = layout_.data_stride;
      p.data = scratch_array(f64_, w * stride, "data.copy");
      for (uint32_t l = 0; l < w; ++l)
        b_.CreateMemCpy(
            b_.CreateConstInBoundsGEP1_64(f64_, p.data, l * stride), llvm::Align(8),
            b_.CreateInBoundsGEP(f64_, real.data,
                                 b_.CreateMul(source[l], b_.getInt64(stride), "", true, true)),
            llvm::Align(8), stride * 8);
    }
    for (size_t k = 0; k < real.outputs.size(); ++k) {
      if (!real.outputs[k]) continue;
      const uint64_t per = layout_.outputs[k].per_instance;
      llvm::Value* blocks = scratch_array(f64_, uint64_t{w} * per, "out.copy." + std::to_string(k));
      if (!layout_.outputs[k].scattered) {
        p.outputs[k] = blocks;
        continue;
      }
      // A scattered array's copies get a table too: lane l's block at blocks + l * per.
      p.outputs[k] = scratch_array(ptr_, w, "scatter.copy." + std::to_string(k));
      for (uint32_t l = 0; l < w; ++l)
        b_.CreateAlignedStore(b_.CreateConstInBoundsGEP1_64(f64_, blocks, uint64_t{l} * per),
                              b_.CreateConstInBoundsGEP1_64(ptr_, p.outputs[k], l), llvm::Align(8));
    }
    return p;
  }

  // for (l = 0; l < n; ++l) copy lane l's output blocks to instance begin + l.
  void copy_outputs_back(llvm::Value* begin, llvm::Value* n, const Pointers& real,
                         const Pointers& scratch) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "short.out.lane", fn_, exit_);
    auto* done = llvm::BasicBlock::Create(ctx_, "short.out.done", fn_, exit_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* l = b_.CreatePHI(i64_, 2, "lane");
    l->addIncoming(b_.getInt64(0), pre);
    llvm::Value* instance = b_.CreateAdd(begin, l, "", true, true);
    for (size_t k = 0; k < real.outputs.size(); ++k) {
      if (!real.outputs[k]) continue;
      const uint64_t per = layout_.outputs[k].per_instance;
      if (layout_.outputs[k].scattered) {
        llvm::Value* to = b_.CreateAlignedLoad(ptr_, b_.CreateInBoundsGEP(ptr_, real.outputs[k], instance), llvm::Align(8));
        llvm::Value* from = b_.CreateAlignedLoad(ptr_, b_.CreateInBoundsGEP(ptr_, scratch.outputs[k], l), llvm::Align(8));
        b_.CreateMemCpy(to, llvm::Align(8), from, llvm::Align(8), per * 8);
        continue;
      }
      b_.CreateMemCpy(
          b_.CreateInBoundsGEP(f64_, real.outputs[k],
                               b_.CreateMul(instance, b_.getInt64(per), "", true, true)),
          llvm::Align(8),
          b_.CreateInBoundsGEP(f64_, scratch.outputs[k],
                               b_.CreateMul(l, b_.getInt64(per), "", true, true)),
          llvm::Align(8), per * 8);
    }
    llvm::Value* next = b_.CreateAdd(l, b_.getInt64(1), "", true, true);
    l->addIncoming(next, loop);
    b_.CreateCondBr(b_.CreateICmpSLT(next, n), loop, done);
    b_.SetInsertPoint(done);
  }

  // Checks what lowering relies on, and marks what the live graph reads and writes.
  void check_graph() {
    live_ = ir::live_nodes(graph_);
    // data_input_ has one entry per data component the layout declares: a declaration
    // (`data d : f64 rows=65535 cols=65535`, 288 bytes of IR) must not size it.
    if (layout_.data_stride > kMaxDataComponents)
      fail("the data of one instance has " + std::to_string(layout_.data_stride) +
           " components, more than the " + std::to_string(kMaxDataComponents) + " a kernel takes");
    var_input_.assign(layout_.ambient.size(), {});
    for (size_t s = 0; s < layout_.ambient.size(); ++s)
      var_input_[s].assign(layout_.ambient[s], ir::kNoNode);
    data_input_.assign(layout_.data_stride, ir::kNoNode);
    slot_used_.assign(layout_.ambient.size(), false);
    array_used_.assign(layout_.outputs.size(), false);
    for (NodeId id = 0; id < graph_.size(); ++id) {
      if (!live_[id]) continue;
      const ir::Node& n = graph_[id];
      if (n.op != Op::Input) continue;
      const ir::InputRef& in = n.input;
      switch (in.kind) {
        case ir::InputKind::Var:
          if (in.slot >= layout_.ambient.size() || in.component >= layout_.ambient[in.slot])
            fail("variable input " + std::to_string(in.slot) + "[" +
                 std::to_string(in.component) + "] is outside the kernel layout");
          slot_used_[in.slot] = true;
          var_input_[in.slot][in.component] = id;
          break;
        case ir::InputKind::Data:
          if (in.slot >= layout_.data_offset.size() ||
              layout_.data_offset[in.slot] + in.component >= layout_.data_stride)
            fail("data input " + std::to_string(in.slot) + "[" + std::to_string(in.component) +
                 "] is outside the kernel layout");
          data_input_[layout_.data_offset[in.slot] + in.component] = id;
          break;
        case ir::InputKind::Tangent:
          fail("the graph still has tangent inputs: compile a mode graph "
               "(simplified or differentiated), not a traced one");
      }
    }
    places_.clear();
    for (const ir::Output& out : graph_.outputs) {
      if (out.node >= graph_.size() || graph_[out.node].type != ir::Type::F64)
        fail("an output does not name an f64 node");
      const KernelLayout::Place p = layout_.place(out);
      if (p.array >= layout_.outputs.size() || p.offset >= layout_.outputs[p.array].per_instance)
        fail("an output is placed outside the kernel layout's output arrays");
      array_used_[p.array] = true;
      places_.push_back(p);
    }
    stored_ = compiler::stored_outputs(layout_, graph_.outputs);
    // Operand visiting order for emit_body: the operand with the longer chain first.
    std::vector<uint32_t> height(graph_.size(), 0);
    order_.assign(graph_.size(), {0, 1, 2});
    for (NodeId id = 0; id < graph_.size(); ++id) {
      const ir::Node& n = graph_[id];
      for (uint8_t k = 0; k < n.num_args; ++k)
        height[id] = std::max(height[id], height[n.args[k]] + 1);
      std::stable_sort(order_[id].begin(), order_[id].begin() + n.num_args,
                       [&](uint8_t x, uint8_t y) { return height[n.args[x]] > height[n.args[y]]; });
    }
  }

  // The order outputs are computed in, for width w: by units (an output block stored
  // transposed, else a single output), greedily the unit needing the fewest nodes not
  // computed yet (ties: the first in graph order), then its outputs in graph order.
  // This finishes what is half done before starting something new and completes output
  // blocks as early as possible. Cones are bitsets, so a step costs units x nodes/64 word
  // operations; graphs too big for that budget keep the graph's output order.
  void order_outputs(uint32_t w) {
    const size_t num_outputs = graph_.outputs.size();
    output_order_.resize(num_outputs);
    for (uint32_t o = 0; o < num_outputs; ++o) output_order_[o] = o;
    // Units: outputs of one stored block together.
    std::vector<std::vector<uint32_t>> units;
    std::unordered_map<uint64_t, size_t> unit_of_block;
    for (uint32_t o = 0; o < num_outputs; ++o) {
      const KernelLayout::Place p = places_[o];
      const uint32_t per = layout_.outputs[p.array].per_instance;
      int64_t block = -1;
      if (w > 1 && per >= w) {
        const uint32_t regular = p.offset / w * w;
        if (regular + w <= per && block_complete_[p.array].count(regular))
          block = regular;
        else if (per % w != 0 && p.offset >= per - w && block_complete_[p.array].count(per - w))
          block = per - w;
      }
      if (block < 0) {
        units.push_back({o});
        continue;
      }
      const uint64_t key = (uint64_t{p.array} << 32) | static_cast<uint64_t>(block);
      auto [it, inserted] = unit_of_block.try_emplace(key, units.size());
      if (inserted) units.emplace_back();
      units[it->second].push_back(o);
    }
    const size_t num_units = units.size();
    const size_t words = (graph_.size() + 63) / 64;
    if (num_units < 2 || num_units * num_units * words > (size_t{1} << 26)) return;

    std::vector<uint64_t> cones(num_units * words, 0);
    std::vector<NodeId> stack;
    for (size_t u = 0; u < num_units; ++u) {
      uint64_t* cone = &cones[u * words];
      for (uint32_t o : units[u]) stack.push_back(graph_.outputs[o].node);
      while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        if (cone[id / 64] >> (id % 64) & 1) continue;
        const ir::Node& n = graph_[id];
        if (n.op != Op::Const) cone[id / 64] |= uint64_t{1} << (id % 64);
        for (uint8_t k = 0; k < n.num_args; ++k) stack.push_back(n.args[k]);
      }
    }
    std::vector<uint64_t> done(words, 0);
    std::vector<bool> taken(num_units, false);
    size_t next = 0;
    for (size_t step = 0; step < num_units; ++step) {
      size_t best = num_units, best_new = ~size_t{0};
      for (size_t u = 0; u < num_units; ++u) {
        if (taken[u]) continue;
        const uint64_t* cone = &cones[u * words];
        size_t fresh = 0;
        for (size_t k = 0; k < words && fresh < best_new; ++k)
          fresh += static_cast<size_t>(__builtin_popcountll(cone[k] & ~done[k]));
        if (fresh < best_new) best = u, best_new = fresh;
        if (fresh == 0) break;
      }
      taken[best] = true;
      for (uint32_t o : units[best]) output_order_[next++] = o;
      for (size_t k = 0; k < words; ++k) done[k] |= cones[best * words + k];
    }
  }

  llvm::Value* load_field(llvm::Value* base, size_t offset, llvm::Type* type,
                          const std::string& name) {
    llvm::Value* p = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, offset);
    llvm::LoadInst* load = b_.CreateAlignedLoad(type, p, llvm::Align(8), name);
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant_);
    return load;
  }
  llvm::Value* load_element(llvm::Value* array, size_t index, const std::string& name) {
    llvm::Value* p = b_.CreateConstInBoundsGEP1_64(ptr_, array, index);
    llvm::LoadInst* load = b_.CreateAlignedLoad(ptr_, p, llvm::Align(8), name);
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant_);
    load->setMetadata(llvm::LLVMContext::MD_noundef, invariant_);
    return load;
  }

  llvm::Type* f64_type(uint32_t w) const {
    return w == 1 ? f64_ : static_cast<llvm::Type*>(llvm::FixedVectorType::get(f64_, w));
  }
  llvm::Value* f64_const(uint32_t w, double v) {
    llvm::Constant* c = llvm::ConstantFP::get(f64_, v);
    return w == 1 ? c : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(w), c);
  }

  // An input load: the kernel never writes what it reads (kernel.h: pointers never alias),
  // so every input load is invariant. That frees the schedulers to move loads across the
  // output stores and lets the register allocator rematerialize a load instead of spilling.
  llvm::Value* load_input(llvm::Type* type, llvm::Value* ptr, llvm::Align align) {
    llvm::LoadInst* load = b_.CreateAlignedLoad(type, ptr, align);
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant_);
    return load;
  }

  // Transposes w vectors of w lanes: out[j][l] = in[l][j]. log2(w) rounds of block swaps
  // (for w = 4: vperm2f128 then unpcklpd/unpckhpd).
  std::vector<llvm::Value*> transpose(std::vector<llvm::Value*> rows, uint32_t w) {
    for (uint32_t h = w / 2; h >= 1; h /= 2) {
      llvm::SmallVector<int, 16> lo_mask(w), hi_mask(w);
      for (uint32_t c = 0; c < w; ++c) {
        lo_mask[c] = static_cast<int>((c & h) ? w + c - h : c);
        hi_mask[c] = static_cast<int>((c & h) ? w + c : c + h);
      }
      for (uint32_t r = 0; r < w; ++r) {
        if (r & h) continue;
        llvm::Value* a = rows[r];
        llvm::Value* b = rows[r | h];
        rows[r] = b_.CreateShuffleVector(a, b, lo_mask);
        rows[r | h] = b_.CreateShuffleVector(a, b, hi_mask);
      }
    }
    return rows;
  }

  // Vector input and output blocks: a run of w consecutive doubles of each lane's row
  // (components c0 .. c0 + w - 1 of a variable row or a data row, or output offsets),
  // moved with w vector loads or stores and one transpose instead of w*w scalar moves.
  // A row of `size` doubles is covered by blocks at 0, w, 2w, ... and, when w does not
  // divide size, one more at size - w (overlapping the previous one); rows shorter than w
  // use one scalar move per lane and component.
  static uint32_t block_of(uint32_t component, uint32_t size, uint32_t w) {
    const uint32_t start = component / w * w;
    return start + w <= size ? start : size - w;
  }

  // Emitting a body.
  //
  // Order: depth-first from each output in turn (order_outputs), every node right before
  // its first use (operands with the longer dependence chain first, as Sethi-Ullman
  // numbering would), every output stored as soon as it, or its transposed block, is
  // complete. The graph's own order is the order differentiation created nodes in, which
  // keeps hundreds of partial derivatives live at once; this one roughly halves the live
  // values, and with them spill code and register allocation time.
  //
  // (Tried and rejected: spilling long-lived values explicitly, a fixed-horizon linear
  // scan that stores a value to a stack slot when it is made and reloads it for uses more
  // than N nodes later. It compiled and ran slower than leaving the spilling to the
  // greedy register allocator.)
  struct BodyState {
    uint32_t w = 1;
    std::vector<llvm::Value*> value;                 // per node
    std::vector<std::vector<llvm::Value*>> var_rows; // [slot][lane] row pointers
    llvm::Value* data_base = nullptr;                // data row of instance i
    std::vector<llvm::Value*> out_base;              // output block of instance i
    std::vector<std::vector<llvm::Value*>> out_lane; // [array][lane] blocks, scattered arrays
    std::vector<std::vector<NodeId>> out_node;       // [array][offset], once computed
    std::vector<std::unordered_map<uint32_t, uint32_t>> out_missing;  // [array][block]
    size_t emitted = 0;                              // nodes emitted, for block cuts
  };

  uint32_t input_component(const ir::InputRef& in) const {
    return in.kind == ir::InputKind::Var ? in.component
                                         : layout_.data_offset[in.slot] + in.component;
  }
  // Lane l's double at `offset` of the row that input `in` reads from.
  llvm::Value* input_ptr(const BodyState& st, const ir::InputRef& in, uint32_t l,
                         uint64_t offset) {
    if (in.kind == ir::InputKind::Var)
      return b_.CreateConstInBoundsGEP1_64(f64_, st.var_rows[in.slot][l], offset);
    return b_.CreateConstInBoundsGEP1_64(f64_, st.data_base,
                                         uint64_t{l} * layout_.data_stride + offset);
  }

  // Makes the value of input node `id` and, for a transposed block, of every other input
  // node of the block.
  void make_input(BodyState& st, NodeId id) {
    const uint32_t w = st.w;
    const ir::InputRef& in = graph_[id].input;
    const bool var = in.kind == ir::InputKind::Var;
    const uint32_t size = var ? layout_.ambient[in.slot] : layout_.data_stride;
    const uint32_t component = input_component(in);
    if (w == 1) {
      st.value[id] = load_input(f64_, input_ptr(st, in, 0, component), llvm::Align(8));
      return;
    }
    if (size < w) {  // one load per lane
      llvm::Value* v = llvm::PoisonValue::get(f64_type(w));
      for (uint32_t l = 0; l < w; ++l)
        v = b_.CreateInsertElement(
            v, load_input(f64_, input_ptr(st, in, l, component), llvm::Align(8)),
            b_.getInt64(l));
      st.value[id] = v;
      return;
    }
    const uint32_t start = block_of(component, size, w);
    std::vector<llvm::Value*> rows(w);
    for (uint32_t l = 0; l < w; ++l)
      rows[l] = load_input(f64_type(w), input_ptr(st, in, l, start), llvm::Align(8));
    rows = transpose(std::move(rows), w);
    for (uint32_t c = 0; c < w; ++c)
      if (NodeId m = input_node(in, start + c); m != ir::kNoNode && !st.value[m])
        st.value[m] = rows[c];
    if (!st.value[id]) st.value[id] = rows[component - start];  // a duplicate input node
  }

  // The live input node reading the same row as `in` at `component`, or kNoNode.
  NodeId input_node(const ir::InputRef& in, uint32_t component) const {
    if (in.kind == ir::InputKind::Var) return var_input_[in.slot][component];
    return data_input_[component];
  }

  void store_output(BodyState& st, size_t output) {
    if (!stored_[output]) return;  // its place's first output stores the same value
    const uint32_t w = st.w;
    const KernelLayout::Place place = places_[output];
    const uint32_t per = layout_.outputs[place.array].per_instance;
    const NodeId node = graph_.outputs[output].node;
    auto lane_ptr = [&](uint32_t l, uint32_t offset) {
      if (!st.out_lane[place.array].empty())
        return b_.CreateConstInBoundsGEP1_64(f64_, st.out_lane[place.array][l], offset);
      return b_.CreateConstInBoundsGEP1_64(f64_, st.out_base[place.array],
                                           uint64_t{l} * per + offset);
    };
    auto per_lane = [&] {
      llvm::Value* v = st.value[node];
      if (w == 1) {
        b_.CreateAlignedStore(v, lane_ptr(0, place.offset), llvm::Align(8));
        return;
      }
      for (uint32_t l = 0; l < w; ++l)
        b_.CreateAlignedStore(b_.CreateExtractElement(v, b_.getInt64(l)),
                              lane_ptr(l, place.offset), llvm::Align(8));
    };
    // The blocks containing this offset: its own (if it fits) and the last, overlapping
    // one. Blocks with an output at every offset are stored transposed once complete;
    // an offset in no such block is stored lane by lane.
    uint32_t starts[2];
    int count = 0;
    if (w > 1 && per >= w) {
      const uint32_t regular = place.offset / w * w;
      if (regular + w <= per && block_complete_[place.array].count(regular)) starts[count++] = regular;
      if (per % w != 0 && place.offset >= per - w && block_complete_[place.array].count(per - w))
        starts[count++] = per - w;
    }
    auto& nodes = st.out_node[place.array];
    if (count == 0 || nodes[place.offset] != ir::kNoNode) {  // (a second output for a place)
      per_lane();
      return;
    }
    nodes[place.offset] = node;
    for (int k = 0; k < count; ++k) {
      const uint32_t start = starts[k];
      auto it = st.out_missing[place.array].try_emplace(start, w).first;
      if (--it->second != 0) continue;
      std::vector<llvm::Value*> block(w);
      for (uint32_t c = 0; c < w; ++c) block[c] = st.value[nodes[start + c]];
      block = transpose(std::move(block), w);
      for (uint32_t l = 0; l < w; ++l)
        b_.CreateAlignedStore(block[l], lane_ptr(l, start), llvm::Align(8));
    }
  }

  void maybe_cut_block(BodyState& st) {
    if (++st.emitted % chunk_ != 0) return;
    llvm::BasicBlock* block = b_.GetInsertBlock();
    if (block->empty()) return;
    cuts_.push_back({&block->back(), chunk_condition_.pred, chunk_condition_.lhs,
                     chunk_condition_.rhs, exit_});
  }

  // The walk in emission order: nodes, then each output once computed.
  void walk(BodyState& st) {
    std::vector<std::pair<NodeId, uint8_t>> stack;  // node, operands visited
    for (uint32_t o : output_order_) {
      const ir::Output& out = graph_.outputs[o];
      if (!st.value[out.node]) {
        stack.push_back({out.node, 0});
        while (!stack.empty()) {
          auto& [id, next] = stack.back();
          const ir::Node& n = graph_[id];
          if (next < n.num_args) {
            const NodeId arg = n.args[order_[id][next++]];
            if (!st.value[arg]) stack.push_back({arg, 0});
            continue;
          }
          if (!st.value[id]) {
            if (n.op == Op::Const) {
              st.value[id] = lower(st.w, n, nullptr, nullptr, nullptr);
            } else {
              if (n.op == Op::Input) {
                make_input(st, id);
              } else {
                llvm::Value* args[3] = {nullptr, nullptr, nullptr};
                for (uint8_t k = 0; k < n.num_args; ++k) args[k] = st.value[n.args[k]];
                st.value[id] = lower(st.w, n, args[0], args[1], args[2]);
              }
              maybe_cut_block(st);
            }
          }
          stack.pop_back();
        }
      }
      store_output(st, o);
      // Stores count toward a block's size too: a normal-equation kernel of constant
      // entries is nearly all stores, and one block of 10^5 stores is quadratic in the
      // DAG combiner's store merging.
      maybe_cut_block(st);
    }
  }

  // Prefetches, at the top of a body, the variable rows and (vectors only) the data rows
  // of the instances the next iteration reads, starting at `next` (<= the last start, so
  // its indices are in bounds). Variable rows are scattered, and the body is long enough
  // to hide their latency; W data rows read a block at a time defeat the hardware
  // prefetcher (a scalar loop streams them and does not need this). It pays most when the
  // variable rows are scattered out of cache, less when they fit in L2 (where prefetching
  // only the data rows would do better, but much worse with scattered rows), and costs
  // nothing measurable with everything in cache.
  void prefetch_next(const BodyState& st, llvm::Value* next) {
    const uint32_t w = st.w;
    auto prefetch = [&](llvm::Value* base, uint64_t bytes) {
      // Every cache line of [base, base + bytes), whatever base's alignment.
      for (uint64_t off = 0; off < bytes + 63; off += 64) {
        const uint64_t at = std::min(off, bytes - 1);
        b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {ptr_},
                           {b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt64(at)),
                            b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
      }
    };
    if (w > 1 && layout_.data_stride > 0)  // plain GEP: past the end in the last iteration
      prefetch(b_.CreateGEP(f64_, st.data_base, b_.getInt64(uint64_t{w} * layout_.data_stride)),
               uint64_t{w} * layout_.data_stride * 8);
    for (size_t s = 0; s < layout_.ambient.size(); ++s) {
      if (!slot_used_[s]) continue;
      const std::vector<llvm::Value*> idx = load_indices(s, next, w);
      for (uint32_t l = 0; l < w; ++l) {
        llvm::Value* row = b_.CreateGEP(f64_, values_[s],
                              b_.CreateMul(b_.CreateSExt(idx[l], i64_),
                                           b_.getInt64(layout_.ambient[s])));
        prefetch(row, uint64_t{layout_.ambient[s]} * 8);
      }
    }
  }

  // The index arrays' entries of slot s for instances [at, at + w), one value per lane.
  std::vector<llvm::Value*> load_indices(size_t s, llvm::Value* at, uint32_t w) {
    llvm::Value* p = b_.CreateInBoundsGEP(i32_, cur_.indices[s], at);
    std::vector<llvm::Value*> idx(w);
    if (w == 1) {
      idx[0] = load_input(i32_, p, llvm::Align(4));
    } else {
      llvm::Value* vec = load_input(llvm::FixedVectorType::get(i32_, w), p, llvm::Align(4));
      for (uint32_t l = 0; l < w; ++l) idx[l] = b_.CreateExtractElement(vec, b_.getInt64(l));
    }
    return idx;
  }

  void emit_body(uint32_t w, llvm::Value* i, llvm::Value* next) {
    if (w > 1) compute_complete_blocks(w);
    order_outputs(w);
    BodyState st;
    st.w = w;
    st.value.assign(graph_.size(), nullptr);
    st.out_node.resize(layout_.outputs.size());
    st.out_missing.resize(layout_.outputs.size());
    for (size_t k = 0; k < layout_.outputs.size(); ++k)
      st.out_node[k].assign(layout_.outputs[k].per_instance, ir::kNoNode);
    // Variable rows, per slot and lane: values[s] + indices[s][i + l] * ambient.
    st.var_rows.resize(layout_.ambient.size());
    for (size_t s = 0; s < layout_.ambient.size(); ++s) {
      if (!slot_used_[s]) continue;
      const std::vector<llvm::Value*> idx = load_indices(s, i, w);
      st.var_rows[s].resize(w);
      for (uint32_t l = 0; l < w; ++l) {
        llvm::Value* row = b_.CreateMul(b_.CreateSExt(idx[l], i64_),
                                        b_.getInt64(layout_.ambient[s]), "", true, true);
        st.var_rows[s][l] = b_.CreateInBoundsGEP(f64_, values_[s], row);
      }
    }
    // Data and outputs: one base pointer per body (at instance i), lane l at a constant
    // offset from it, which the addressing mode folds.
    if (layout_.data_stride > 0)
      st.data_base = b_.CreateInBoundsGEP(
          f64_, cur_.data, b_.CreateMul(i, b_.getInt64(layout_.data_stride), "", true, true));
    prefetch_next(st, next);
    st.out_base.assign(layout_.outputs.size(), nullptr);
    st.out_lane.assign(layout_.outputs.size(), {});
    for (size_t k = 0; k < layout_.outputs.size(); ++k) {
      if (!array_used_[k]) continue;
      if (layout_.outputs[k].scattered) {  // lane l's block: the table's entry i + l
        llvm::Value* row = b_.CreateInBoundsGEP(ptr_, cur_.outputs[k], i);
        for (uint32_t l = 0; l < w; ++l)
          st.out_lane[k].push_back(
              load_input(ptr_, b_.CreateConstInBoundsGEP1_64(ptr_, row, l), llvm::Align(8)));
        continue;
      }
      st.out_base[k] = b_.CreateInBoundsGEP(
          f64_, cur_.outputs[k],
          b_.CreateMul(i, b_.getInt64(layout_.outputs[k].per_instance), "", true, true));
    }
    walk(st);
  }

  // The output blocks (per array, by start) that have an output at every offset, so
  // they can be stored transposed.
  void compute_complete_blocks(uint32_t w) {
    if (block_width_ == w) return;
    block_width_ = w;
    block_complete_.assign(layout_.outputs.size(), {});
    std::vector<std::vector<bool>> has(layout_.outputs.size());
    for (size_t k = 0; k < layout_.outputs.size(); ++k)
      has[k].assign(layout_.outputs[k].per_instance, false);
    for (const KernelLayout::Place& p : places_) has[p.array][p.offset] = true;
    for (size_t k = 0; k < layout_.outputs.size(); ++k) {
      const uint32_t per = layout_.outputs[k].per_instance;
      if (per < w) continue;
      for (uint32_t start = 0; start < per; start += w) {
        const uint32_t s = std::min(start, per - w);
        bool all = true;
        for (uint32_t c = 0; c < w; ++c) all = all && has[k][s + c];
        if (all) block_complete_[k].insert(s);
      }
    }
  }

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, uint32_t w, llvm::ArrayRef<llvm::Value*> args) {
    return b_.CreateIntrinsic(id, {f64_type(w)}, args);
  }

  llvm::Value* lower(uint32_t w, const ir::Node& n, llvm::Value* a, llvm::Value* b,
                     llvm::Value* c) {
    switch (n.op) {
      case Op::Const:
        if (n.type == ir::Type::Bool) {
          llvm::Constant* bit = llvm::ConstantInt::get(i1_, n.value != 0.0);
          return w == 1 ? bit : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(w), bit);
        }
        return f64_const(w, n.value);
      case Op::Add: return b_.CreateFAdd(a, b);
      case Op::Sub: return b_.CreateFSub(a, b);
      case Op::Mul: return b_.CreateFMul(a, b);
      case Op::Fma: return intrinsic(llvm::Intrinsic::fma, w, {a, b, c});
      case Op::Div: return b_.CreateFDiv(a, b);
      case Op::Neg: return b_.CreateFNeg(a);
      case Op::Fmod: return b_.CreateFRem(a, b);  // frem is C fmod (a libm call per lane)
      case Op::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, w, {a});
      case Op::Abs: return intrinsic(llvm::Intrinsic::fabs, w, {a});
      case Op::Floor: return intrinsic(llvm::Intrinsic::floor, w, {a});
      case Op::Ceil: return intrinsic(llvm::Intrinsic::ceil, w, {a});
      case Op::Min: return intrinsic(llvm::Intrinsic::minnum, w, {a, b});
      case Op::Max: return intrinsic(llvm::Intrinsic::maxnum, w, {a, b});
      case Op::Powi: return lower_powi(w, a, n.int_attr);
      case Op::Select: return b_.CreateSelect(a, b, c);
      case Op::Lt: return b_.CreateFCmpOLT(a, b);
      case Op::Le: return b_.CreateFCmpOLE(a, b);
      case Op::Gt: return b_.CreateFCmpOGT(a, b);
      case Op::Ge: return b_.CreateFCmpOGE(a, b);
      case Op::Eq: return b_.CreateFCmpOEQ(a, b);
      case Op::Ne: return b_.CreateFCmpUNE(a, b);
      case Op::And: return b_.CreateAnd(a, b);
      case Op::Or: return b_.CreateOr(a, b);
      case Op::Not: return b_.CreateNot(a);
      default: break;
    }
    if (const char* name = libm_name(n.op)) {
      if (n.num_args == 1) return call_math(w, name, {a});
      return call_math(w, name, {a, b});
    }
    throw std::logic_error("lsjit codegen: no lowering for op " + std::string(ir::name(n.op)));
  }

  // pow(x, n) for an integer n. For |n| <= 16, multiplication by squaring: every partial
  // product lies between |x| and |x|^|n|, so nothing overflows or underflows early, and the
  // result is within a few ulp of std::pow (at most ~2 log2|n| roundings). Negative n
  // takes the reciprocal, which can only lose to std::pow where x^|n| is subnormal, and
  // there the reciprocal overflows anyway. Larger |n| calls pow, which stays correctly
  // rounded where squaring would accumulate n ulp.
  llvm::Value* lower_powi(uint32_t w, llvm::Value* x, int32_t n) {
    if (n == 0) return f64_const(w, 1.0);  // pow(x, 0) = 1, even for NaN
    const int64_t m = n < 0 ? -static_cast<int64_t>(n) : n;
    if (m > 16) return call_math(w, "pow", {x, f64_const(w, static_cast<double>(n))});
    llvm::Value* result = nullptr;
    llvm::Value* square = x;
    for (int64_t k = m;; k >>= 1) {
      if (k & 1) result = result ? b_.CreateFMul(result, square) : square;
      if (k <= 1) break;
      square = b_.CreateFMul(square, square);
    }
    return n < 0 ? b_.CreateFDiv(f64_const(w, 1.0), result) : result;
  }

  llvm::Function* declare(const std::string& name, llvm::Type* type, unsigned arity) {
    if (llvm::Function* f = module_.getFunction(name)) return f;
    std::vector<llvm::Type*> params(arity, type);
    auto* fn = llvm::Function::Create(llvm::FunctionType::get(type, params, false),
                                      llvm::Function::ExternalLinkage, name, module_);
    // Pure as far as the kernel is concerned (errno is never read).
    fn->setDoesNotThrow();
    fn->setWillReturn();
    fn->setDoesNotAccessMemory();
    return fn;
  }

  llvm::Value* call_math(uint32_t w, const std::string& name, std::vector<llvm::Value*> args) {
    const unsigned arity = static_cast<unsigned>(args.size());
    if (w == 1) return b_.CreateCall(declare(name, f64_, arity), args);
    const MathVariant v = math_variant(options_, w, name, arity);
    if (v.lanes == 0) {  // one libm call per lane
      llvm::Function* fn = declare(name, f64_, arity);
      llvm::Value* result = llvm::PoisonValue::get(f64_type(w));
      for (uint32_t l = 0; l < w; ++l) {
        std::vector<llvm::Value*> lane_args;
        for (llvm::Value* arg : args) lane_args.push_back(b_.CreateExtractElement(arg, b_.getInt64(l)));
        result = b_.CreateInsertElement(result, b_.CreateCall(fn, lane_args), b_.getInt64(l));
      }
      return result;
    }
    llvm::Function* fn = declare(mvec_symbol(v, name, arity), f64_type(v.lanes), arity);
    if (v.lanes == w) return b_.CreateCall(fn, args);
    // Split into native chunks and concatenate.
    std::vector<llvm::Value*> chunks;
    for (uint32_t first = 0; first < w; first += v.lanes) {
      llvm::SmallVector<int, 16> mask;
      for (uint32_t l = 0; l < v.lanes; ++l) mask.push_back(static_cast<int>(first + l));
      std::vector<llvm::Value*> chunk_args;
      for (llvm::Value* arg : args) chunk_args.push_back(b_.CreateShuffleVector(arg, mask));
      chunks.push_back(b_.CreateCall(fn, chunk_args));
    }
    while (chunks.size() > 1) {
      std::vector<llvm::Value*> joined;
      const uint32_t lanes =
          llvm::cast<llvm::FixedVectorType>(chunks[0]->getType())->getNumElements();
      llvm::SmallVector<int, 16> mask;
      for (uint32_t l = 0; l < 2 * lanes; ++l) mask.push_back(static_cast<int>(l));
      for (size_t k = 0; k < chunks.size(); k += 2)
        joined.push_back(b_.CreateShuffleVector(chunks[k], chunks[k + 1], mask));
      chunks = std::move(joined);
    }
    return chunks[0];
  }

  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  const ir::Graph& graph_;
  const KernelLayout& layout_;
  const CompileOptions& options_;
  const uint32_t width_;
  std::vector<Cut>& cuts_;
  llvm::IRBuilder<> b_;
  llvm::Type* f64_;
  llvm::Type* i1_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::PointerType* ptr_;
  llvm::Function* fn_ = nullptr;
  llvm::MDNode* invariant_ = nullptr;

  std::vector<bool> live_, slot_used_, array_used_;
  std::vector<KernelLayout::Place> places_;  // per output
  std::vector<bool> stored_;                 // per output: the first at its place
  std::vector<std::array<uint8_t, 3>> order_;
  std::vector<uint32_t> output_order_;
  uint32_t block_width_ = 0;
  std::vector<std::unordered_set<uint32_t>> block_complete_;  // per array: block starts
  size_t chunk_ = kChunkInstructions;

  llvm::BasicBlock* entry_ = nullptr;
  llvm::BasicBlock* exit_ = nullptr;
  std::vector<llvm::Value*> values_;  // per variable slot
  Pointers cur_;                      // what the body being emitted reads and writes
  struct {
    llvm::CmpInst::Predicate pred;
    llvm::Value* lhs;
    llvm::Value* rhs;
  } chunk_condition_{};  // what holds throughout the body being emitted
  std::vector<std::vector<NodeId>> var_input_;  // [slot][component]: live input node
  std::vector<NodeId> data_input_;              // [data row component]: live input node
};

// ---------------------------------------------------------------------------------------
// Optimization and emission

std::string module_text(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

void verify(const llvm::Module& module) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os))
    throw std::logic_error("lsjit codegen: generated invalid LLVM IR: " + problems);
}

// The IR optimization pipeline: empty. The graph arrives hash-consed, constant-folded,
// simplified and dead-code-free (ir/), lowering emits each node once, and instruction
// selection's DAG combiner does the local clean-ups (folding `mul x, 1` of addresses, load
// folding, FMA formation), so IR passes (EarlyCSE, InstCombine, SimplifyCFG, or LLVM's O2
// pipeline) add compile time and leave the kernels no faster. (EarlyCSE and SimplifyCFG
// also merge the blocks lowering cuts the body into, which is where most of their cost
// shows up.) Code generation runs at CodeGenOptLevel::Less: against Default it skips the
// post-RA scheduler, which costs compile time and changes no kernel's speed measurably.
// docs/compiler.md, "Why no LLVM IR passes", has the measurements.
//
// So the optimization stage only cuts the bodies into blocks (kChunkInstructions), which
// the lowering leaves as one block each so that the unoptimized IR reads as straight-line
// code.
// Returns how many cuts it made.
size_t optimize(const std::vector<Cut>& cuts) {
  size_t made = 0;
  // Last cut first: splitBasicBlock moves everything after the cut into the new block, so
  // cutting front to back moved the rest of the body at every cut (quadratic in the
  // body's length, in transferNodesFromList). Back to front,
  // each split moves one chunk.
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
    const Cut& cut = *it;
    llvm::Instruction* next = cut.after->getNextNode();
    if (!next || next->isTerminator() || llvm::isa<llvm::PHINode>(next)) continue;
    ++made;
    llvm::BasicBlock* rest = cut.after->getParent()->splitBasicBlock(next, "chunk");
    llvm::BasicBlock* head = rest->getSinglePredecessor();
    head->getTerminator()->eraseFromParent();
    llvm::IRBuilder<> b(head);
    b.CreateCondBr(b.CreateICmp(cut.pred, cut.lhs, cut.rhs), rest, cut.exit);
  }
  return made;
}

std::string emit(llvm::Module& module, llvm::TargetMachine& tm, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    fail("the LLVM target cannot emit " +
         std::string(type == llvm::CodeGenFileType::ObjectFile ? "object files" : "assembly"));
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

struct Prepared {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
  llvm::TargetMachine* tm = nullptr;  // this thread's (target_machine())
  TargetInfo target;
  std::vector<Cut> cuts;
};

Prepared lower_module(const ir::Trace& mode_graph, const KernelLayout& layout,
                      const CompileOptions& options, const std::string& symbol) {
  if (symbol.empty()) fail("the kernel symbol name is empty");
  Prepared p;
  p.target = host_target(options);
  // The key's target comes from the build's configuration and CPUID (common/cpu.h); the code
  // from this LLVM. They must describe the same thing.
  if (p.target.llvm_version != LLVM_VERSION_STRING || p.target.triple != host().triple)
    fail("this LLVM is " + std::string(LLVM_VERSION_STRING) + " for " + host().triple +
         ", but lsjit was configured with LLVM " + p.target.llvm_version + " for " +
         p.target.triple);
  p.tm = &target_machine();
  p.ctx = std::make_unique<llvm::LLVMContext>();
  p.module = std::make_unique<llvm::Module>("lsjit." + symbol, *p.ctx);
  p.module->setTargetTriple(p.target.triple);
  p.module->setDataLayout(p.tm->createDataLayout());
  const ir::Trace graph = executed_graph(mode_graph, options);
  Lowering(*p.ctx, *p.module, graph, layout, options, p.target.vector_width, p.cuts)
      .build(symbol);
  return p;
}

}  // namespace

CompiledObject compile_kernel(const ir::Trace& mode_graph, const KernelLayout& layout,
                              const CompileOptions& options, const std::string& symbol) {
  CompiledObject result;
  result.symbol = symbol;
  auto start = Clock::now();
  Prepared p = lower_module(mode_graph, layout, options, symbol);
  result.target = p.target;
  result.times.llvm_ir_s = seconds_since(start);

  start = Clock::now();
  optimize(p.cuts);
  verify(*p.module);
  result.times.optimize_s = seconds_since(start);

  start = Clock::now();
  result.object_code = emit(*p.module, *p.tm, llvm::CodeGenFileType::ObjectFile);
  result.times.codegen_s = seconds_since(start);
  return result;
}

std::string kernel_text(const ir::Trace& mode_graph, const KernelLayout& layout,
                        const CompileOptions& options, const std::string& symbol,
                        TextStage stage) {
  Prepared p = lower_module(mode_graph, layout, options, symbol);
  if (stage == TextStage::Llvm) {
    verify(*p.module);
    return module_text(*p.module);
  }
  const size_t cuts = optimize(p.cuts);
  verify(*p.module);
  // Said in the text, because without it this stage reads like --stage llvm printed twice.
  if (stage == TextStage::Optimized)
    return "; optimized: lsjit runs no LLVM IR passes (measured; see optimize() in\n"
           "; compiler/llvm/codegen.cpp). This stage is the llvm stage with the straight-line\n"
           "; bodies cut into blocks of " + std::to_string(kChunkInstructions) +
           " IR nodes each: " + std::to_string(cuts) + " cuts.\n" + module_text(*p.module);
  return emit(*p.module, *p.tm, llvm::CodeGenFileType::AssemblyFile);
}

}  // namespace lsjit::compiler
