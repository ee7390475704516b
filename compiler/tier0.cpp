#include "lsjit/compiler/tier0.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "lsjit/compiler/host_cpu.h"
#include "lsjit/ir/error.h"

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
  int64_t first, count;            // the block's first instance and its real instances
};

namespace {

using Frame = Tier0Kernel::Frame;

using ir::NodeId;
using ir::Op;
constexpr uint32_t B = Tier0Kernel::kBlock;
constexpr uint32_t kNever = 0xffffffffu;

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

// The libm function codegen calls per lane for `name` (declared by that name in the
// kernel, so resolved to the same libm symbol).
void* libm_function(std::string_view name) {
  struct Entry {
    std::string_view name;
    void* f;
  };
  static const Entry table[] = {
      {"cbrt", reinterpret_cast<void*>(static_cast<Unary>(::cbrt))},
      {"exp", reinterpret_cast<void*>(static_cast<Unary>(::exp))},
      {"expm1", reinterpret_cast<void*>(static_cast<Unary>(::expm1))},
      {"log", reinterpret_cast<void*>(static_cast<Unary>(::log))},
      {"log1p", reinterpret_cast<void*>(static_cast<Unary>(::log1p))},
      {"pow", reinterpret_cast<void*>(static_cast<Binary>(::pow))},
      {"sin", reinterpret_cast<void*>(static_cast<Unary>(::sin))},
      {"cos", reinterpret_cast<void*>(static_cast<Unary>(::cos))},
      {"tan", reinterpret_cast<void*>(static_cast<Unary>(::tan))},
      {"asin", reinterpret_cast<void*>(static_cast<Unary>(::asin))},
      {"acos", reinterpret_cast<void*>(static_cast<Unary>(::acos))},
      {"atan", reinterpret_cast<void*>(static_cast<Unary>(::atan))},
      {"atan2", reinterpret_cast<void*>(static_cast<Binary>(::atan2))},
      {"sinh", reinterpret_cast<void*>(static_cast<Unary>(::sinh))},
      {"cosh", reinterpret_cast<void*>(static_cast<Unary>(::cosh))},
      {"tanh", reinterpret_cast<void*>(static_cast<Unary>(::tanh))},
      {"hypot", reinterpret_cast<void*>(static_cast<Binary>(::hypot))},
  };
  for (const Entry& e : table)
    if (e.name == name) return e.f;
  return nullptr;
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
// indirect call to its handler (before, a switch on the step's kind, a call of a
// target_clones resolver's choice and a switch on the op: about 30% of se3_between's
// normal equations in tier 0). -O3 vectorizes each loop for the function's target.
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

// ---------------------------------------------------------------------------------------
// Flattening a graph into steps over reusable registers.

class Flattener {
 public:
  // `stores`: per node, the places (array, offset) its value is stored to.
  Flattener(const ir::Graph& graph, const KernelLayout& layout, const CompileOptions& options,
            const std::vector<std::vector<KernelLayout::Place>>& stores, std::vector<Tier0Kernel::Step>& steps)
      : g_(graph), layout_(layout), options_(options), width_(resolve_vector_width(options.vector_width, options.cpu_level)),
        stores_(stores), steps_(steps), reg_(graph.size(), kNever), last_use_(graph.size(), 0) {}

  // Steps for every live node in order, each output's stores right after its node, and a
  // register released after its value's last use (as an argument or a store): an output
  // does not hold a register to the end (se3_between's normal equations: 68 of scratch
  // KiB before, when every output was stored at the end).
  void run() {
    const std::vector<bool> live = ir::live_nodes(g_);
    for (NodeId i = 0; i < g_.size(); ++i)
      if (live[i])
        for (int k = 0; k < g_[i].num_args; ++k) last_use_[g_[i].args[k]] = i;
    for (NodeId i = 0; i < g_.size(); ++i) {
      if (!live[i]) continue;
      const ir::Node& n = g_[i];
      reg_[i] = allocate();
      emit(i, n);
      for (const KernelLayout::Place& p : stores_[i]) {
        Tier0Kernel::Step st;
        st.kind = Tier0Kernel::Kind::Store;
        st.dst = reg_[i];
        st.a = p.array;
        st.b = p.offset;
        steps_.push_back(st);
      }
      for (int k = 0; k < n.num_args; ++k)
        if (last_use_[n.args[k]] == i) release(n.args[k]);
      if (last_use_[i] <= i) release(i);  // no later node reads it
    }
  }
  uint32_t registers() const { return next_; }

 private:
  uint32_t allocate() {
    if (free_.empty()) return next_++;
    const uint32_t r = free_.back();
    free_.pop_back();
    return r;
  }
  void release(NodeId node) {
    if (reg_[node] == kNever) return;
    free_.push_back(reg_[node]);
    reg_[node] = kNever;  // released once (an op may use the same argument twice)
  }
  uint32_t arg(const ir::Node& n, int k) const { return k < n.num_args ? reg_[n.args[k]] : 0; }

  void emit(NodeId i, const ir::Node& n) {
    Tier0Kernel::Step s;
    s.dst = reg_[i];
    s.op = n.op;
    switch (n.op) {
      case Op::Const:
        s.kind = Tier0Kernel::Kind::Constant;
        s.value = n.value;
        break;
      case Op::Input:
        if (n.input.kind == ir::InputKind::Var) {
          s.kind = Tier0Kernel::Kind::LoadVar;
          s.a = n.input.slot;
          s.b = n.input.component;
        } else if (n.input.kind == ir::InputKind::Data) {
          s.kind = Tier0Kernel::Kind::LoadData;
          s.b = layout_.data_offset.at(n.input.slot) + n.input.component;
        } else {
          throw Error("tier 0: a kernel graph has no tangent inputs");
        }
        break;
      default:
        s.a = arg(n, 0);
        s.b = arg(n, 1);
        s.c = arg(n, 2);
        s.int_attr = n.int_attr;
        if (n.op == Op::Powi && std::abs(int64_t{n.int_attr}) > 16) {
          // codegen calls pow(x, n) past |n| = 16: the exponent is a constant register.
          Tier0Kernel::Step k;
          k.kind = Tier0Kernel::Kind::Constant;
          k.dst = s.b = allocate();
          k.value = static_cast<double>(n.int_attr);
          steps_.push_back(k);
          math(s, "pow", 2);
          steps_.push_back(s);
          free_.push_back(s.b);
          return;
        }
        if (const char* name = libm_name(n.op)) {
          math(s, name, n.num_args);
        } else if (op_handler(n.op)) {
          s.kind = Tier0Kernel::Kind::Op;
        } else {
          throw Error("tier 0: no executor for op " + std::string(ir::name(n.op)));
        }
    }
    steps_.push_back(s);
  }

  void math(Tier0Kernel::Step& s, const char* name, unsigned arity) {
    s.kind = Tier0Kernel::Kind::MathCall;
    s.arity = static_cast<uint8_t>(arity);
    s.variant = math_variant(options_, width_, name, arity);
    s.function = s.variant.lanes ? libmvec_function(mvec_symbol(s.variant, name, arity))
                                 : libm_function(name);
    if (!s.function) throw Error(std::string("tier 0: no function for ") + name);
  }

  const ir::Graph& g_;
  const KernelLayout& layout_;
  const CompileOptions& options_;
  const uint32_t width_;
  const std::vector<std::vector<KernelLayout::Place>>& stores_;
  std::vector<Tier0Kernel::Step>& steps_;
  std::vector<uint32_t> reg_;
  std::vector<NodeId> last_use_;
  std::vector<uint32_t> free_;
  uint32_t next_ = 0;
};

}  // namespace

Tier0Kernel::Tier0Kernel(const ir::Trace& mode_graph, const KernelLayout& layout,
                         const CompileOptions& options)
    : layout_(layout), num_vars_(static_cast<uint32_t>(layout.ambient.size())) {
  const ir::Trace graph = executed_graph(mode_graph, options);
  std::vector<std::vector<KernelLayout::Place>> stores(graph.graph.size());
  const std::vector<bool> stored = stored_outputs(layout, graph.graph.outputs);
  for (size_t k = 0; k < graph.graph.outputs.size(); ++k)
    if (stored[k]) stores[graph.graph.outputs[k].node].push_back(layout.place(graph.graph.outputs[k]));
  std::vector<Step> steps;
  Flattener f(graph.graph, layout, options, stores, steps);
  f.run();
  registers_ = std::max(f.registers(), 1u);
  instrs_.reserve(steps.size());
  for (const Step& st : steps) {
    Instr i{nullptr, st.dst, st.a, st.b, st.c};
    switch (st.kind) {
      case Kind::Op:
        i.run = op_handler(st.op);
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
    }
    instrs_.push_back(i);
  }
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
  s->regs.resize(size_t{registers_} * B);
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
  run(args, scratch->regs.data(), scratch->rows.data());
  give_back(std::move(scratch));
}

void Tier0Kernel::run(const KernelArgs& args, double* regs, const double** rows) const {
  const double** var_rows = rows;  // [slot][lane]
  const double** data_rows = rows + size_t{num_vars_} * B;
  Frame f{regs, var_rows, data_rows, &args, layout_.outputs.data(), calls_.data(), constants_.data(), 0, 0};
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
