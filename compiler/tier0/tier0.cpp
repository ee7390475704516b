#include "lsjit/compiler/tier0/tier0.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "lsjit/common/cpu.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/tier0/tier0_flatten.h"
#include "lsjit/compiler/tier0/tier0_x86.h"

namespace lsjit::compiler {

// What a handler sees of the call: the block's registers and input rows, and where the
// block's outputs go.
struct Tier0Kernel::Frame {
  double* regs;
  const double* const* var_rows;   // [slot * B + lane]
  const double* const* data_rows;  // [lane]
  const KernelArgs* args;
  const OutputArray* outputs;      // the layout's
  const Tier0Kernel::Call* calls;  // math calls, by Instr::c
  const double* constants;         // by Instr::a
  const Tier0Kernel::RowLoad* rows;      // LoadRows' tables, by Instr::a
  const Tier0Kernel::ArrayStore* arrays;  // StoreArray's tables, by Instr::a
  void* const* segments;           // segment functions (SegmentCode::Function), by Instr::c
  const double* pool;              // the segments' constants
  double* spills;                  // the segments' spill slots
  int64_t first, count;            // the block's first instance and its real instances
};

namespace {

using Frame = Tier0Kernel::Frame;

using ir::Op;
constexpr uint32_t B = Tier0Kernel::kBlock;

// ---------------------------------------------------------------------------------------
// Transcendental calls: a libmvec variant on chunks of its lanes (each chunk passed in
// vector registers, as the vector function ABI wants), or a libm function per instance.

using Unary = double (*)(double);
using Binary = double (*)(double, double);

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void call_e8(void* f, unsigned arity, const double* a,
                                                  const double* b, double* out) {
  for (uint32_t l = 0; l < B; l += 8) {
    const __m512d x = _mm512_loadu_pd(a + l);
    const __m512d r = arity == 1 ? reinterpret_cast<__m512d (*)(__m512d)>(f)(x)
                                 : reinterpret_cast<__m512d (*)(__m512d, __m512d)>(f)(x, _mm512_loadu_pd(b + l));
    _mm512_storeu_pd(out + l, r);
  }
}
// 'c' (AVX) and 'd' (AVX2) variants both take 4 doubles in a ymm register.
__attribute__((target("avx"))) void call_cd4(void* f, unsigned arity, const double* a,
                                               const double* b, double* out) {
  for (uint32_t l = 0; l < B; l += 4) {
    const __m256d x = _mm256_loadu_pd(a + l);
    const __m256d r = arity == 1 ? reinterpret_cast<__m256d (*)(__m256d)>(f)(x)
                                 : reinterpret_cast<__m256d (*)(__m256d, __m256d)>(f)(x, _mm256_loadu_pd(b + l));
    _mm256_storeu_pd(out + l, r);
  }
}
void call_b2(void* f, unsigned arity, const double* a, const double* b, double* out) {
  for (uint32_t l = 0; l < B; l += 2) {
    const __m128d x = _mm_loadu_pd(a + l);
    const __m128d r = arity == 1 ? reinterpret_cast<__m128d (*)(__m128d)>(f)(x)
                                 : reinterpret_cast<__m128d (*)(__m128d, __m128d)>(f)(x, _mm_loadu_pd(b + l));
    _mm_storeu_pd(out + l, r);
  }
}
#endif

void math_call(const Tier0Kernel::Call& s, const double* a, const double* b, double* out) {
#if defined(__x86_64__)
  switch (s.variant.isa) {
    case 'e': return call_e8(s.function, s.arity, a, b, out);
    case 'c':
    case 'd': return call_cd4(s.function, s.arity, a, b, out);
    case 'b': return call_b2(s.function, s.arity, a, b, out);
    default: break;
  }
#endif
  if (s.arity == 1) {
    const Unary f = reinterpret_cast<Unary>(s.function);
    for (uint32_t l = 0; l < B; ++l) out[l] = f(a[l]);
  } else {
    const Binary f = reinterpret_cast<Binary>(s.function);
    for (uint32_t l = 0; l < B; ++l) out[l] = f(a[l], b[l]);
  }
}

// ---------------------------------------------------------------------------------------
// The op steps: one loop over the block each. Compiled three times (x86-64-v4, v3 and
// baseline), the best the CPU runs chosen when a kernel is built; every variant computes
// the same bits (each line is one IEEE operation, and std::fma is fused in all three: an
// instruction or glibc's correctly rounded fma).

// pow(x, n) for |n| <= 16 as codegen's lower_powi: the same products in the same order.
inline double powi(double x, int32_t n) {
  if (n == 0) return 1.0;
  const int64_t m = n < 0 ? -static_cast<int64_t>(n) : n;
  double result = 0, square = x;
  bool have = false;
  for (int64_t k = m;; k >>= 1) {
    if (k & 1) {
      result = have ? result * square : square;
      have = true;
    }
    if (k <= 1) break;
    square = square * square;
  }
  return n < 0 ? 1.0 / result : result;
}

// Each op's loop over the block, one function per op and instruction set: a step is one
// indirect call to its handler (not a switch on the step's kind, a call of a
// target_clones resolver's choice and a switch on the op: that dispatch, paid per step,
// was a large share of tier 0's time). -O3 vectorizes each loop for the function's target.
#define LSJIT_T0_REGS                                                  \
  double* __restrict out = f.regs + size_t{i.dst} * B;                 \
  const double* __restrict a = f.regs + size_t{i.a} * B;               \
  const double* __restrict b = f.regs + size_t{i.b} * B;               \
  const double* __restrict c = f.regs + size_t{i.c} * B;               \
  (void)a;                                                             \
  (void)b;                                                             \
  (void)c
#define LSJIT_T0_OP(SUFFIX, TARGET, NAME, EXPR)                                    \
  TARGET void NAME##_##SUFFIX(const Tier0Kernel::Instr& i, const Frame& f) {       \
    LSJIT_T0_REGS;                                                                 \
    for (uint32_t l = 0; l < B; ++l) out[l] = (EXPR);                              \
  }
// Powi's exponent is the step's c (it has one argument). Min and max are llvm.minnum /
// maxnum as x86 lowers them: minpd(b, a) (b if b < a, else a), and b where a is NaN.
#define LSJIT_T0_OPS(SUFFIX, TARGET)                                                             \
  LSJIT_T0_OP(SUFFIX, TARGET, add, a[l] + b[l])                                                \
  LSJIT_T0_OP(SUFFIX, TARGET, sub, a[l] - b[l])                                                \
  LSJIT_T0_OP(SUFFIX, TARGET, mul, a[l] * b[l])                                                \
  LSJIT_T0_OP(SUFFIX, TARGET, div, a[l] / b[l])                                                \
  LSJIT_T0_OP(SUFFIX, TARGET, neg, -a[l])                                                      \
  LSJIT_T0_OP(SUFFIX, TARGET, fma, std::fma(a[l], b[l], c[l]))                                 \
  LSJIT_T0_OP(SUFFIX, TARGET, sqrt, std::sqrt(a[l]))                                           \
  LSJIT_T0_OP(SUFFIX, TARGET, abs, std::fabs(a[l]))                                            \
  LSJIT_T0_OP(SUFFIX, TARGET, floor, std::floor(a[l]))                                         \
  LSJIT_T0_OP(SUFFIX, TARGET, ceil, std::ceil(a[l]))                                           \
  LSJIT_T0_OP(SUFFIX, TARGET, fmod, std::fmod(a[l], b[l])) /* LLVM's frem calls fmod */        \
  LSJIT_T0_OP(SUFFIX, TARGET, min, std::isnan(a[l]) ? b[l] : (b[l] < a[l] ? b[l] : a[l]))      \
  LSJIT_T0_OP(SUFFIX, TARGET, max, std::isnan(a[l]) ? b[l] : (b[l] > a[l] ? b[l] : a[l]))      \
  LSJIT_T0_OP(SUFFIX, TARGET, powi, powi(a[l], static_cast<int32_t>(i.c)))                     \
  LSJIT_T0_OP(SUFFIX, TARGET, select, a[l] != 0.0 ? b[l] : c[l])                               \
  LSJIT_T0_OP(SUFFIX, TARGET, lt, a[l] < b[l] ? 1.0 : 0.0)                                     \
  LSJIT_T0_OP(SUFFIX, TARGET, le, a[l] <= b[l] ? 1.0 : 0.0)                                    \
  LSJIT_T0_OP(SUFFIX, TARGET, gt, a[l] > b[l] ? 1.0 : 0.0)                                     \
  LSJIT_T0_OP(SUFFIX, TARGET, ge, a[l] >= b[l] ? 1.0 : 0.0)                                    \
  LSJIT_T0_OP(SUFFIX, TARGET, eq, a[l] == b[l] ? 1.0 : 0.0)                                    \
  LSJIT_T0_OP(SUFFIX, TARGET, ne, a[l] != b[l] ? 1.0 : 0.0)                                    \
  LSJIT_T0_OP(SUFFIX, TARGET, land, (a[l] != 0.0 && b[l] != 0.0) ? 1.0 : 0.0)                  \
  LSJIT_T0_OP(SUFFIX, TARGET, lor, (a[l] != 0.0 || b[l] != 0.0) ? 1.0 : 0.0)                   \
  LSJIT_T0_OP(SUFFIX, TARGET, lnot, a[l] != 0.0 ? 0.0 : 1.0)                                   \
  Tier0Kernel::Handler op_handler_##SUFFIX(Op op) {                                            \
    switch (op) {                                                                              \
      case Op::Add: return &add_##SUFFIX;                                                      \
      case Op::Sub: return &sub_##SUFFIX;                                                      \
      case Op::Mul: return &mul_##SUFFIX;                                                      \
      case Op::Div: return &div_##SUFFIX;                                                      \
      case Op::Neg: return &neg_##SUFFIX;                                                      \
      case Op::Fma: return &fma_##SUFFIX;                                                      \
      case Op::Sqrt: return &sqrt_##SUFFIX;                                                    \
      case Op::Abs: return &abs_##SUFFIX;                                                      \
      case Op::Floor: return &floor_##SUFFIX;                                                  \
      case Op::Ceil: return &ceil_##SUFFIX;                                                    \
      case Op::Fmod: return &fmod_##SUFFIX;                                                    \
      case Op::Min: return &min_##SUFFIX;                                                      \
      case Op::Max: return &max_##SUFFIX;                                                      \
      case Op::Powi: return &powi_##SUFFIX;                                                    \
      case Op::Select: return &select_##SUFFIX;                                                \
      case Op::Lt: return &lt_##SUFFIX;                                                        \
      case Op::Le: return &le_##SUFFIX;                                                        \
      case Op::Gt: return &gt_##SUFFIX;                                                        \
      case Op::Ge: return &ge_##SUFFIX;                                                        \
      case Op::Eq: return &eq_##SUFFIX;                                                        \
      case Op::Ne: return &ne_##SUFFIX;                                                        \
      case Op::And: return &land_##SUFFIX;                                                     \
      case Op::Or: return &lor_##SUFFIX;                                                       \
      case Op::Not: return &lnot_##SUFFIX;                                                     \
      default: return nullptr;                                                                 \
    }                                                                                          \
  }

LSJIT_T0_OPS(generic, )
#if defined(__x86_64__)
LSJIT_T0_OPS(v3, [[gnu::target("arch=x86-64-v3")]])
LSJIT_T0_OPS(v4, [[gnu::target("arch=x86-64-v4")]])
#endif
#undef LSJIT_T0_OPS
#undef LSJIT_T0_OP
#undef LSJIT_T0_REGS

// The handler of `op` for the best instruction set this CPU runs (every one computes the
// same bits), or nullptr if tier 0 has no loop for it.
Tier0Kernel::Handler op_handler(Op op) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return op_handler_v4(op);
  if (__builtin_cpu_supports("x86-64-v3")) return op_handler_v3(op);
#endif
  return op_handler_generic(op);
}

// The other steps' handlers.
void constant_step(const Tier0Kernel::Instr& i, const Frame& f) {
  double* out = f.regs + size_t{i.dst} * B;
  std::fill(out, out + B, f.constants[i.a]);
}
void load_var_step(const Tier0Kernel::Instr& i, const Frame& f) {
  double* out = f.regs + size_t{i.dst} * B;
  for (uint32_t l = 0; l < B; ++l) out[l] = f.var_rows[i.a * B + l][i.b];
}
void load_data_step(const Tier0Kernel::Instr& i, const Frame& f) {
  double* out = f.regs + size_t{i.dst} * B;
  for (uint32_t l = 0; l < B; ++l) out[l] = f.data_rows[l][i.b];
}
void math_step(const Tier0Kernel::Instr& i, const Frame& f) {
  math_call(f.calls[i.c], f.regs + size_t{i.a} * B, f.regs + size_t{i.b} * B, f.regs + size_t{i.dst} * B);
}
// The block's real instances only, not its padding.
void store_step(const Tier0Kernel::Instr& i, const Frame& f) {
  const double* value = f.regs + size_t{i.dst} * B;
  const OutputArray& a = f.outputs[i.a];
  if (a.scattered) {
    double* const* blocks = f.args->scatter[i.a] + f.first;
    for (int64_t l = 0; l < f.count; ++l) blocks[l][i.b] = value[l];
  } else {
    double* base = f.args->outputs[i.a] + f.first * a.per_instance + i.b;
    for (int64_t l = 0; l < f.count; ++l) base[l * a.per_instance] = value[l];
  }
}

void segment_step(const Tier0Kernel::Instr& i, const Frame& f) {
  reinterpret_cast<SegmentCode::Function>(f.segments[i.c])(f.regs, f.pool, f.spills);
}

// LoadRows and StoreArray: 8 instances by 8 offsets at a time, transposed in registers, so
// that each instance's row is read (or written) as one vector and each register's column
// as another, instead of a scalar access per value (which had become most of a segmented
// tier 0's time). They exist only with segments, so only for AVX-512.
#if defined(__x86_64__)
// GCC 12's _mm512_shuffle_f64x2 passes _mm512_undefined_pd() as its unused merge source,
// which -Wmaybe-uninitialized reports at -O3; no lane of it reaches a result.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
[[gnu::target("avx512f")]] inline void transpose8(__m512d r[8]) {
  // Rows a..h in r[0..7]; t[0] = a0 b0 a2 b2 a4 b4 a6 b6, t[1] = a1 b1 a3 b3 ..., t[2] =
  // c0 d0 c2 d2 ...
  const __m512d t[8] = {_mm512_unpacklo_pd(r[0], r[1]), _mm512_unpackhi_pd(r[0], r[1]),
                        _mm512_unpacklo_pd(r[2], r[3]), _mm512_unpackhi_pd(r[2], r[3]),
                        _mm512_unpacklo_pd(r[4], r[5]), _mm512_unpackhi_pd(r[4], r[5]),
                        _mm512_unpacklo_pd(r[6], r[7]), _mm512_unpackhi_pd(r[6], r[7])};
  __m512d u[8];
  u[0] = _mm512_shuffle_f64x2(t[0], t[2], 0x88);  // a0 b0 a4 b4 c0 d0 c4 d4
  u[1] = _mm512_shuffle_f64x2(t[0], t[2], 0xdd);  // a2 b2 a6 b6 c2 d2 c6 d6
  u[2] = _mm512_shuffle_f64x2(t[1], t[3], 0x88);  // a1 b1 a5 b5 ...
  u[3] = _mm512_shuffle_f64x2(t[1], t[3], 0xdd);  // a3 b3 a7 b7 ...
  u[4] = _mm512_shuffle_f64x2(t[4], t[6], 0x88);
  u[5] = _mm512_shuffle_f64x2(t[4], t[6], 0xdd);
  u[6] = _mm512_shuffle_f64x2(t[5], t[7], 0x88);
  u[7] = _mm512_shuffle_f64x2(t[5], t[7], 0xdd);
  r[0] = _mm512_shuffle_f64x2(u[0], u[4], 0x88);  // a0 b0 c0 d0 e0 f0 g0 h0
  r[4] = _mm512_shuffle_f64x2(u[0], u[4], 0xdd);
  r[2] = _mm512_shuffle_f64x2(u[1], u[5], 0x88);
  r[6] = _mm512_shuffle_f64x2(u[1], u[5], 0xdd);
  r[1] = _mm512_shuffle_f64x2(u[2], u[6], 0x88);
  r[5] = _mm512_shuffle_f64x2(u[2], u[6], 0xdd);
  r[3] = _mm512_shuffle_f64x2(u[3], u[7], 0x88);
  r[7] = _mm512_shuffle_f64x2(u[3], u[7], 0xdd);
}
#pragma GCC diagnostic pop

// Every lane of the block, padding included (its rows are the last instance's).
[[gnu::target("avx512f")]] void load_rows_step(const Tier0Kernel::Instr& i, const Frame& f) {
  const Tier0Kernel::RowLoad& t = f.rows[i.a];
  const double* const* rows = t.data ? f.data_rows : f.var_rows + size_t{t.slot} * B;
  for (uint32_t l0 = 0; l0 < B; l0 += 8)
    for (const Tier0Kernel::Tile& tile : t.tiles) {
      __m512d r[8];
      for (int l = 0; l < 8; ++l) r[l] = _mm512_maskz_loadu_pd(tile.mask, rows[l0 + l] + tile.first);
      transpose8(r);
      for (int k = 0; k < 8; ++k)
        if (tile.mask >> k & 1) _mm512_store_pd(f.regs + size_t{tile.column[k]} * B + l0, r[k]);
    }
}

// The block's real instances only.
[[gnu::target("avx512f")]] void store_array_step(const Tier0Kernel::Instr& i, const Frame& f) {
  const Tier0Kernel::ArrayStore& t = f.arrays[i.a];
  const OutputArray& a = f.outputs[t.array];
  for (int64_t l0 = 0; l0 < f.count; l0 += 8) {
    const int lanes = static_cast<int>(std::min<int64_t>(8, f.count - l0));
    double* row[8];
    for (int l = 0; l < lanes; ++l)
      row[l] = a.scattered ? f.args->scatter[t.array][f.first + l0 + l]
                           : f.args->outputs[t.array] + (f.first + l0 + l) * a.per_instance;
    for (const Tier0Kernel::Tile& tile : t.tiles) {
      __m512d r[8];
      for (int k = 0; k < 8; ++k)
        r[k] = tile.mask >> k & 1 ? _mm512_load_pd(f.regs + size_t{tile.column[k]} * B + l0) : _mm512_setzero_pd();
      transpose8(r);
      for (int l = 0; l < lanes; ++l) _mm512_mask_storeu_pd(row[l] + tile.first, tile.mask, r[l]);
    }
  }
}
#else
void load_rows_step(const Tier0Kernel::Instr&, const Frame&) {}
void store_array_step(const Tier0Kernel::Instr&, const Frame&) {}
#endif

}  // namespace

Tier0Kernel::Tier0Kernel(const ir::Trace& mode_graph, const KernelLayout& layout,
                         const CompileOptions& options, Code code)
    : layout_(layout), num_vars_(static_cast<uint32_t>(layout.ambient.size())) {
  const ir::Trace graph = executed_graph(mode_graph, options);
  std::vector<std::vector<KernelLayout::Place>> stores(graph.graph.size());
  const std::vector<bool> stored = stored_outputs(layout, graph.graph.outputs);
  for (size_t k = 0; k < graph.graph.outputs.size(); ++k)
    if (stored[k]) stores[graph.graph.outputs[k].node].push_back(layout.place(graph.graph.outputs[k]));
  Tier0Program p = flatten_for_tier0(graph.graph, layout, options, stores,
                                      code == Code::Auto && segment_code_available());
  if (!p.segments.empty()) {
    try {
      SegmentCompiler compiler(p.segment_constants);
      std::vector<size_t> offsets;
      for (const Segment& seg : p.segments) offsets.push_back(compiler.add(seg, B));
      spill_slots_ = compiler.spill_slots();
      segment_code_ = compiler.finish();
      for (size_t offset : offsets)
        segment_functions_.push_back(reinterpret_cast<void*>(segment_code_->function(offset)));
    } catch (const Error&) {
      // The system refused an executable mapping, or the graph is beyond what segments
      // address: the same graph, every op a step.
      segment_functions_.clear();
      spill_slots_ = 0;
      segment_code_.reset();
      p = flatten_for_tier0(graph.graph, layout, options, stores, false);
    }
  }
  registers_ = std::max(p.registers, 1u);
  rows_ = std::move(p.rows);
  arrays_ = std::move(p.arrays);
  instrs_.reserve(p.steps.size());
  for (const Step& st : p.steps) {
    Instr i{nullptr, st.dst, st.a, st.b, st.c};
    switch (st.kind) {
      case Kind::Op:
        i.run = op_handler(st.op);
        if (!i.run) throw Error("tier 0: no executor for op " + std::string(ir::name(st.op)));
        if (st.op == Op::Powi) i.c = static_cast<uint32_t>(st.int_attr);
        break;
      case Kind::Constant:
        i.run = &constant_step;
        i.a = static_cast<uint32_t>(constants_.size());
        constants_.push_back(st.value);
        break;
      case Kind::LoadVar: i.run = &load_var_step; break;
      case Kind::LoadData: i.run = &load_data_step; break;
      case Kind::MathCall:
        i.run = &math_step;
        i.c = static_cast<uint32_t>(calls_.size());
        calls_.push_back({st.function, st.variant, st.arity});
        break;
      case Kind::Store: i.run = &store_step; break;
      case Kind::Segment: i.run = &segment_step; break;
      case Kind::LoadRows: i.run = &load_rows_step; break;
      case Kind::StoreArray: i.run = &store_array_step; break;
    }
    instrs_.push_back(i);
  }
}

Tier0Kernel::~Tier0Kernel() = default;

Tier0Kernel::AlignedDoubles::AlignedDoubles(size_t n) {
  const size_t bytes = std::max<size_t>((n * sizeof(double) + 63) / 64 * 64, 64);
  p.reset(static_cast<double*>(std::aligned_alloc(64, bytes)));
  if (!p) throw std::bad_alloc();
}

std::unique_ptr<Tier0Kernel::Scratch> Tier0Kernel::take_scratch() const {
  {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      std::unique_ptr<Scratch> s = std::move(pool_.back());
      pool_.pop_back();
      return s;
    }
  }
  auto s = std::make_unique<Scratch>();
  s->regs = AlignedDoubles(size_t{registers_} * B);
  s->spills = AlignedDoubles(size_t{spill_slots_} * 8);
  s->rows.resize(size_t{num_vars_ + 1} * B);
  return s;
}

void Tier0Kernel::give_back(std::unique_ptr<Scratch> scratch) const {
  std::lock_guard lock(pool_mutex_);
  pool_.push_back(std::move(scratch));
}

void Tier0Kernel::operator()(const KernelArgs& args) const {
  if (args.end <= args.begin) return;
  std::unique_ptr<Scratch> scratch = take_scratch();
  run(args, *scratch);
  give_back(std::move(scratch));
}

void Tier0Kernel::run(const KernelArgs& args, Scratch& scratch) const {
  const double** var_rows = scratch.rows.data();  // [slot][lane]
  const double** data_rows = var_rows + size_t{num_vars_} * B;
  Frame f{scratch.regs.data(), var_rows, data_rows, &args, layout_.outputs.data(), calls_.data(),
          constants_.data(), rows_.data(), arrays_.data(), segment_functions_.data(),
          segment_code_ ? segment_code_->pool() : nullptr, scratch.spills.data(), 0, 0};
  for (int64_t first = args.begin; first < args.end; first += B) {
    const int64_t count = std::min<int64_t>(B, args.end - first);
    for (uint32_t l = 0; l < B; ++l) {
      const int64_t i = first + std::min<int64_t>(l, count - 1);  // padding: the last instance
      for (uint32_t s = 0; s < num_vars_; ++s)
        var_rows[s * B + l] = args.values[s] + int64_t{args.indices[s][i]} * layout_.ambient[s];
      data_rows[l] = layout_.data_stride ? args.data + i * layout_.data_stride : nullptr;
    }
    f.first = first;
    f.count = count;
    for (const Instr& i : instrs_) i.run(i, f);
  }
}

}  // namespace lsjit::compiler
