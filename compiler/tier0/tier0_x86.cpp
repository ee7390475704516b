#include "lsjit/compiler/tier0/tier0_x86.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include "lsjit/common/error.h"
#include "lsjit/compiler/tier0/x86_avx512.h"

namespace lsjit::compiler {

using ir::Op;
namespace x = x86;

bool segment_code_available() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");  // libgcc checks XCR0's zmm state as well
#else
  return false;
#endif
}

bool segment_op(Op op) {
  switch (op) {
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Neg: case Op::Fma:
    case Op::Sqrt: case Op::Abs: case Op::Floor: case Op::Ceil: case Op::Min: case Op::Max:
    case Op::Select: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq:
    case Op::Ne: case Op::And: case Op::Or: case Op::Not:
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------
// The mapping.

namespace {
size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
}  // namespace

SegmentCode::SegmentCode(const std::vector<uint8_t>& code, const std::vector<double>& pool) {
  const size_t page = page_size();
  code_size_ = round_up(std::max<size_t>(code.size(), 1), page);
  size_ = code_size_ + round_up(std::max<size_t>(pool.size() * sizeof(double), 1), page);
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Error(std::string("tier 0: cannot map its machine code: ") + std::strerror(errno));
  base_ = static_cast<uint8_t*>(p);
  std::memcpy(base_, code.data(), code.size());
  std::memcpy(base_ + code_size_, pool.data(), pool.size() * sizeof(double));
  if (mprotect(base_, code_size_, PROT_READ | PROT_EXEC) != 0 ||
      mprotect(base_ + code_size_, size_ - code_size_, PROT_READ) != 0) {
    const int e = errno;
    munmap(base_, size_);
    throw Error(std::string("tier 0: cannot make its machine code executable: ") + std::strerror(e));
  }
  pool_ = reinterpret_cast<const double*>(base_ + code_size_);
}

SegmentCode::~SegmentCode() { munmap(base_, size_); }

SegmentCode::Function SegmentCode::function(size_t offset) const {
  return reinterpret_cast<Function>(base_ + offset);
}

// ---------------------------------------------------------------------------------------
// Compiling one segment.

SegmentCompiler::SegmentCompiler(const std::vector<double>& constants) {
  for (double c : constants) constant_slot_.push_back(pool_index(c));
}

uint32_t SegmentCompiler::pool_index(double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  for (size_t k = 0; k < pool_.size(); k += 8)
    if (std::bit_cast<uint64_t>(pool_[k]) == bits) return static_cast<uint32_t>(k / 8);
  pool_.insert(pool_.end(), 8, value);
  return static_cast<uint32_t>(pool_.size() / 8 - 1);
}

std::unique_ptr<SegmentCode> SegmentCompiler::finish() const {
  return std::make_unique<SegmentCode>(code_, pool_);
}

namespace {
constexpr int kRegisters = 32;
constexpr uint32_t kNoUse = std::numeric_limits<uint32_t>::max();
constexpr x::Mask k1{1}, k2{2};
}  // namespace

// Emits one segment's body: a register allocator over its straight-line ops.
class SegmentEmitter {
 public:
  SegmentEmitter(SegmentCompiler& compiler, const Segment& s, uint32_t block)
      : c_(compiler), s_(s), column_bytes_(int32_t{8} * static_cast<int32_t>(block)),
        constant_value_(compiler.constant_slot_.size(), kNoValue) {
    // Values: the ops' results first (value k is op k's), then each column and constant in
    // the order the ops first read them. Their uses (the ops reading them, each once) in
    // one array: a count, then a fill.
    values_.resize(s.ops.size());
    for (uint32_t k = 0; k < s.ops.size(); ++k)
      for (int a = 0; a < s.ops[k].num_args; ++a) {
        const Segment::Ref& ref = s.ops[k].args[a];
        if (ref.kind == Segment::Ref::Kind::Result && ref.index >= k)
          throw Error("tier 0: segment op " + std::to_string(k) + " reads the result of op " + std::to_string(ref.index));
        const uint32_t id = value_of(ref);
        if (last_reader_.size() <= id) last_reader_.resize(id + 1, kNoUse);
        if (last_reader_[id] == k) continue;  // the same value twice in one op
        last_reader_[id] = k;
        ++values_[id].use_end;  // a count, for now
      }
    uint32_t begin = 0;
    for (Value& v : values_) {
      v.use_begin = v.next = begin;
      begin += v.use_end;
      v.use_end = v.use_begin;
    }
    uses_.resize(begin);
    std::fill(last_reader_.begin(), last_reader_.end(), kNoUse);
    for (uint32_t k = 0; k < s.ops.size(); ++k)
      for (int a = 0; a < s.ops[k].num_args; ++a) {
        const uint32_t id = value_of(s.ops[k].args[a]);
        if (last_reader_[id] == k) continue;
        last_reader_[id] = k;
        uses_[values_[id].use_end++] = k;
      }
    sign_ = compiler.pool_index(-0.0);
    magnitude_ = compiler.pool_index(std::bit_cast<double>(uint64_t{0x7fffffffffffffff}));
    zero_ = compiler.pool_index(0.0);
    one_ = compiler.pool_index(1.0);
  }

  void run(x::Assembler& a) {
    a_ = &a;
    for (op_ = 0; op_ < s_.ops.size(); ++op_) {
      pinned_ = 0;
      const Segment::Op& o = s_.ops[op_];
      Value& r = values_[op_];
      r.reg = emit(o);
      owner_[r.reg] = static_cast<int>(op_);
      if (o.column >= 0) {  // read after the segment: written now, and reloadable from there
        r.home = column(static_cast<uint32_t>(o.column));
        r.has_home = true;
        a.store(r.home, zmm(r.reg));
      }
      // Operands past their last use, and a result nothing in the segment reads, free
      // their registers.
      for (int k = 0; k < o.num_args; ++k) retire(value_of(o.args[k]));
      retire(op_);
    }
  }
  uint32_t spill_slots() const { return spill_slots_; }

 private:
  struct Value {
    int reg = -1;
    bool has_home = false;
    x::Mem home{x::Gpr::rdi, 0};
    uint32_t use_begin = 0, use_end = 0;  // uses_[use_begin, use_end): the ops reading it
    uint32_t next = 0;                    // first of those not yet passed
    int spill = -1;                       // its spill slot, once spilled
  };
  static constexpr uint32_t kNoValue = std::numeric_limits<uint32_t>::max();

  uint32_t new_value(x::Mem home) {
    values_.push_back({});
    values_.back().home = home;
    values_.back().has_home = true;
    return static_cast<uint32_t>(values_.size() - 1);
  }
  // Column c of the block, [rdi + c * column bytes]: a graph with over 2^21 live values
  // (beyond a 32-bit displacement) is refused, and tier 0 interprets it.
  x::Mem column(uint32_t c) const {
    const int64_t displacement = int64_t{c} * column_bytes_;
    if (displacement > std::numeric_limits<int32_t>::max())
      throw Error("tier 0: register " + std::to_string(c) + " is beyond a segment's 32-bit displacements");
    return {x::Gpr::rdi, static_cast<int32_t>(displacement)};
  }
  x::Mem pool(uint32_t slot) const { return {x::Gpr::rsi, static_cast<int32_t>(slot) * 64}; }
  static x::Zmm zmm(int r) { return {static_cast<uint8_t>(r)}; }

  uint32_t value_of(const Segment::Ref& ref) {
    switch (ref.kind) {
      case Segment::Ref::Kind::Result: return ref.index;  // (checked by the constructor)
      case Segment::Ref::Kind::Column: {
        if (column_value_.size() <= ref.index) column_value_.resize(ref.index + 1, kNoValue);
        uint32_t& id = column_value_[ref.index];
        if (id == kNoValue) id = new_value(column(ref.index));
        return id;
      }
      case Segment::Ref::Kind::Constant: {
        uint32_t& id = constant_value_.at(ref.index);
        if (id == kNoValue) id = new_value(pool(c_.constant_slot_[ref.index]));
        return id;
      }
    }
    throw Error("tier 0: a segment operand of no kind");
  }
  uint32_t next_use(const Value& v) const { return v.next < v.use_end ? uses_[v.next] : kNoUse; }
  bool dies_here(uint32_t id) const {
    const Value& v = values_[id];
    return v.use_begin == v.use_end || (uses_[v.use_end - 1] == op_ && id != op_);
  }

  // Past op_: the value's uses advance; with none left its register is freed.
  void retire(uint32_t id) {
    Value& v = values_[id];
    while (v.next < v.use_end && uses_[v.next] <= op_) ++v.next;
    if (v.next < v.use_end) return;
    if (v.reg >= 0) {
      owner_[v.reg] = -1;
      v.reg = -1;
    }
    if (v.spill >= 0) free_spills_.push_back(v.spill);
    v.spill = -1;
  }

  // A free register, evicting the value read furthest ahead when none is (never one pinned
  // by the current op or in `forbidden`, a bit set).
  int allocate(uint32_t forbidden = 0) {
    for (int r = 0; r < kRegisters; ++r)
      if (owner_[r] < 0 && !((pinned_ | forbidden) >> r & 1)) return pin(r);
    int victim = -1;
    uint32_t furthest = 0;
    for (int r = 0; r < kRegisters; ++r) {
      if ((pinned_ | forbidden) >> r & 1) continue;
      const uint32_t u = next_use(values_[owner_[r]]);
      if (victim < 0 || u > furthest) {
        victim = r;
        furthest = u;
      }
    }
    if (victim < 0) throw Error("tier 0: a segment op needs more registers than there are");
    Value& v = values_[owner_[victim]];
    if (!v.has_home) {  // spilled: stored to a slot of its own, reloaded from there
      if (free_spills_.empty()) free_spills_.push_back(static_cast<int>(spill_slots_++));
      v.spill = free_spills_.back();
      free_spills_.pop_back();
      v.home = {x::Gpr::rdx, v.spill * 64};
      v.has_home = true;
      a_->store(v.home, zmm(victim));
    }
    v.reg = -1;
    owner_[victim] = -1;
    return pin(victim);
  }
  int pin(int r) {
    pinned_ |= 1u << r;
    return r;
  }
  // The value in a register (loaded if it is not), pinned for the current op.
  int reg(uint32_t id) {
    Value& v = values_[id];
    if (v.reg >= 0) return pin(v.reg);
    const int r = allocate();  // (values_ does not grow after construction: v stays valid)
    a_->load(zmm(r), v.home);
    v.reg = r;
    owner_[r] = static_cast<int>(id);
    return r;
  }
  // The value as an instruction's last operand: its register if it has one, else memory.
  x::Operand operand(uint32_t id) {
    const Value& v = values_[id];
    if (v.reg >= 0) return zmm(pin(v.reg));
    return v.home;
  }
  // The result's register: an operand's that dies at this op (not in `forbidden`), or a
  // new one. The operand gives its register up.
  int destination(std::initializer_list<uint32_t> candidates, uint32_t forbidden = 0) {
    for (uint32_t id : candidates) {
      Value& v = values_[id];
      if (v.reg >= 0 && dies_here(id) && !(forbidden >> v.reg & 1)) {
        const int r = v.reg;
        v.reg = -1;
        owner_[r] = -1;
        return pin(r);
      }
    }
    return allocate(forbidden);
  }

  int emit(const Segment::Op& o) {
    auto arg = [&](int k) { return value_of(o.args[k]); };
    switch (o.op) {
      case Op::Add: case Op::Mul: {
        uint32_t a = arg(0), b = arg(1);
        if (values_[a].reg < 0 && values_[b].reg >= 0) std::swap(a, b);  // commutative
        return binary(o.op == Op::Add ? x::Binary::Add : x::Binary::Mul, a, b);
      }
      case Op::Sub: return binary(x::Binary::Sub, arg(0), arg(1));
      case Op::Div: return binary(x::Binary::Div, arg(0), arg(1));
      case Op::Neg: return with_pool(x::Binary::Xor, arg(0), sign_);
      case Op::Abs: return with_pool(x::Binary::And, arg(0), magnitude_);
      case Op::Fma: return fma(arg(0), arg(1), arg(2));
      case Op::Sqrt: {
        const x::Operand src = operand(arg(0));
        const int d = destination({arg(0)});
        a_->sqrt(zmm(d), src);
        return d;
      }
      case Op::Floor: case Op::Ceil: {  // vrndscalepd: round down (1) or up (2), inexact quiet (8)
        const x::Operand src = operand(arg(0));
        const int d = destination({arg(0)});
        a_->round(zmm(d), src, o.op == Op::Floor ? 0x09 : 0x0a);
        return d;
      }
      case Op::Min: return min_max(x::Binary::Min, arg(0), arg(1));
      case Op::Max: return min_max(x::Binary::Max, arg(0), arg(1));
      case Op::Select: {  // c != 0 ? a : b
        a_->compare(k1, zmm(reg(arg(0))), pool(zero_), x::Compare::NeqUQ);
        const int b = reg(arg(2));
        const x::Operand t = operand(arg(1));
        const int d = destination({arg(0), arg(2), arg(1)});
        a_->blend(zmm(d), k1, zmm(b), t);
        return d;
      }
      case Op::Lt: return compare(arg(0), arg(1), x::Compare::LtOQ);
      case Op::Le: return compare(arg(0), arg(1), x::Compare::LeOQ);
      case Op::Gt: return compare(arg(0), arg(1), x::Compare::GtOQ);
      case Op::Ge: return compare(arg(0), arg(1), x::Compare::GeOQ);
      case Op::Eq: return compare(arg(0), arg(1), x::Compare::EqOQ);
      case Op::Ne: return compare(arg(0), arg(1), x::Compare::NeqUQ);
      case Op::And: {  // both != 0: the second compare masked by the first
        a_->compare(k1, zmm(reg(arg(0))), pool(zero_), x::Compare::NeqUQ);
        a_->compare(k1, zmm(reg(arg(1))), pool(zero_), x::Compare::NeqUQ, k1);
        return ones_where(k1, {arg(0), arg(1)});
      }
      case Op::Or: {
        a_->compare(k1, zmm(reg(arg(0))), pool(zero_), x::Compare::NeqUQ);
        a_->compare(k2, zmm(reg(arg(1))), pool(zero_), x::Compare::NeqUQ);
        a_->kor(k1, k1, k2);
        return ones_where(k1, {arg(0), arg(1)});
      }
      case Op::Not: {  // a != 0 ? 0 : 1, so 1 exactly where a == 0 (NaN != 0)
        a_->compare(k1, zmm(reg(arg(0))), pool(zero_), x::Compare::EqOQ);
        return ones_where(k1, {arg(0)});
      }
      default:
        throw Error("tier 0: op " + std::string(ir::name(o.op)) + " cannot be in a segment");
    }
  }

  int binary(x::Binary op, uint32_t a, uint32_t b) {
    const int ra = reg(a);
    const x::Operand rb = operand(b);
    const int d = destination({a, b});
    a_->binary(op, zmm(d), zmm(ra), rb);
    return d;
  }
  int with_pool(x::Binary op, uint32_t a, uint32_t slot) {
    const int ra = reg(a);
    const int d = destination({a});
    a_->binary(op, zmm(d), zmm(ra), pool(slot));
    return d;
  }
  // 1.0 where k is set, +0.0 elsewhere.
  int ones_where(x::Mask k, std::initializer_list<uint32_t> operands) {
    const int d = destination(operands);
    a_->load_masked_zero(zmm(d), pool(one_), k);
    return d;
  }
  int compare(uint32_t a, uint32_t b, x::Compare predicate) {
    const int ra = reg(a);
    const x::Operand rb = operand(b);
    a_->compare(k1, zmm(ra), rb, predicate);
    return ones_where(k1, {a, b});
  }
  // Tier 0's min(a, b) = isnan(a) ? b : minpd(b, a) (and max with maxpd): the NaN test
  // first, so that the result may take a's register; never b's, read again last.
  int min_max(x::Binary op, uint32_t a, uint32_t b) {
    const int ra = reg(a), rb = reg(b);
    a_->compare(k1, zmm(ra), zmm(ra), x::Compare::UnordQ);
    const int d = destination({a}, 1u << rb);
    a_->binary(op, zmm(d), zmm(rb), zmm(ra));
    a_->move(zmm(d), zmm(rb), k1);
    return d;
  }
  // a·b + c, rounded once: into the register of whichever operand dies here (the 231 form
  // accumulates into c, the 213 form multiplies into a or b), else into a copy of c.
  int fma(uint32_t a, uint32_t b, uint32_t c) {
    auto in_dying_register = [&](uint32_t id) { return values_[id].reg >= 0 && dies_here(id); };
    if (in_dying_register(c)) {
      pin(values_[c].reg);  // kept while a and b are fetched
      if (values_[a].reg < 0 && values_[b].reg >= 0) std::swap(a, b);
      const int ra = reg(a);
      const x::Operand rb = operand(b);
      const int d = destination({c});
      a_->fma(x::FmaForm::F231, zmm(d), zmm(ra), rb);  // d = ra * rb + d
      return d;
    }
    if (in_dying_register(b)) std::swap(a, b);
    if (in_dying_register(a)) {
      pin(values_[a].reg);
      const int rb = reg(b);
      const x::Operand rc = operand(c);
      const int d = destination({a});
      a_->fma(x::FmaForm::F213, zmm(d), zmm(rb), rc);  // d = rb * d + rc
      return d;
    }
    if (values_[a].reg < 0 && values_[b].reg >= 0) std::swap(a, b);
    const int ra = reg(a);
    const x::Operand rb = operand(b);
    const int d = allocate();
    if (values_[c].reg >= 0) a_->move(zmm(d), zmm(values_[c].reg));
    else a_->load(zmm(d), values_[c].home);
    a_->fma(x::FmaForm::F231, zmm(d), zmm(ra), rb);
    return d;
  }

  SegmentCompiler& c_;
  const Segment& s_;
  const int32_t column_bytes_;
  x::Assembler* a_ = nullptr;
  std::vector<Value> values_;
  std::vector<uint32_t> uses_, last_reader_;
  std::vector<uint32_t> column_value_, constant_value_;  // column / constant -> value
  int owner_[kRegisters] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  uint32_t pinned_ = 0;
  uint32_t op_ = 0;
  std::vector<int> free_spills_;
  uint32_t spill_slots_ = 0;
  uint32_t sign_, magnitude_, zero_, one_;
};

size_t SegmentCompiler::add(const Segment& segment, uint32_t block) {
  if (block == 0 || block % 8 != 0) throw Error("tier 0: segment blocks must be a multiple of 8 instances");
  SegmentEmitter emitter(*this, segment, block);
  x::Assembler a;
  a.mov_ecx(block / 8);
  const size_t loop = a.size();
  emitter.run(a);
  a.add_rdi(64);
  a.dec_ecx();
  a.jnz_back(loop);
  a.vzeroupper();
  a.ret();
  // Each function starts on a 64-byte line; the padding is int3.
  code_.resize(round_up(code_.size(), 64), 0xcc);
  const size_t offset = code_.size();
  code_.insert(code_.end(), a.bytes().begin(), a.bytes().end());
  spill_slots_ = std::max(spill_slots_, emitter.spill_slots());
  return offset;
}

}  // namespace lsjit::compiler
