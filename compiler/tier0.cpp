#include "lsjit/compiler/tier0.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "lsjit/compiler/host_cpu.h"
#include "lsjit/ir/error.h"

namespace lsjit::compiler {
namespace {

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

void math_call(const Tier0Kernel::Step& s, const double* a, const double* b, double* out) {
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
// The op steps: one loop over the block each. Compiled three times (AVX-512, AVX2 + FMA,
// baseline), the best the CPU runs chosen at load; every variant computes the same bits
// (each line is one IEEE operation, and std::fma is fused in all three: an instruction or
// glibc's correctly rounded fma).

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

#if defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void run_op(const Tier0Kernel::Step& s, double* regs) {
  double* __restrict out = regs + size_t{s.dst} * B;
  const double* __restrict a = regs + size_t{s.a} * B;
  const double* __restrict b = regs + size_t{s.b} * B;
  const double* __restrict c = regs + size_t{s.c} * B;
#define LSJIT_EACH(expr) \
  for (uint32_t l = 0; l < B; ++l) out[l] = (expr); \
  return
  switch (s.op) {
    case Op::Add: LSJIT_EACH(a[l] + b[l]);
    case Op::Sub: LSJIT_EACH(a[l] - b[l]);
    case Op::Mul: LSJIT_EACH(a[l] * b[l]);
    case Op::Div: LSJIT_EACH(a[l] / b[l]);
    case Op::Neg: LSJIT_EACH(-a[l]);
    case Op::Fma: LSJIT_EACH(std::fma(a[l], b[l], c[l]));
    case Op::Sqrt: LSJIT_EACH(std::sqrt(a[l]));
    case Op::Abs: LSJIT_EACH(std::fabs(a[l]));
    case Op::Floor: LSJIT_EACH(std::floor(a[l]));
    case Op::Ceil: LSJIT_EACH(std::ceil(a[l]));
    case Op::Fmod: LSJIT_EACH(std::fmod(a[l], b[l]));  // LLVM's frem calls fmod
    // llvm.minnum / maxnum as x86 lowers them: minpd(b, a) (b if b < a, else a), and b
    // where a is NaN.
    case Op::Min: LSJIT_EACH(std::isnan(a[l]) ? b[l] : (b[l] < a[l] ? b[l] : a[l]));
    case Op::Max: LSJIT_EACH(std::isnan(a[l]) ? b[l] : (b[l] > a[l] ? b[l] : a[l]));
    case Op::Powi: LSJIT_EACH(powi(a[l], s.int_attr));
    case Op::Select: LSJIT_EACH(a[l] != 0.0 ? b[l] : c[l]);
    case Op::Lt: LSJIT_EACH(a[l] < b[l] ? 1.0 : 0.0);
    case Op::Le: LSJIT_EACH(a[l] <= b[l] ? 1.0 : 0.0);
    case Op::Gt: LSJIT_EACH(a[l] > b[l] ? 1.0 : 0.0);
    case Op::Ge: LSJIT_EACH(a[l] >= b[l] ? 1.0 : 0.0);
    case Op::Eq: LSJIT_EACH(a[l] == b[l] ? 1.0 : 0.0);
    case Op::Ne: LSJIT_EACH(a[l] != b[l] ? 1.0 : 0.0);
    case Op::And: LSJIT_EACH((a[l] != 0.0 && b[l] != 0.0) ? 1.0 : 0.0);
    case Op::Or: LSJIT_EACH((a[l] != 0.0 || b[l] != 0.0) ? 1.0 : 0.0);
    case Op::Not: LSJIT_EACH(a[l] != 0.0 ? 0.0 : 1.0);
    default: return;  // the constructor admits no other op
  }
#undef LSJIT_EACH
}

bool runs_as_op(Op op) {
  switch (op) {
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Neg: case Op::Fma:
    case Op::Sqrt: case Op::Abs: case Op::Floor: case Op::Ceil: case Op::Fmod: case Op::Min:
    case Op::Max: case Op::Powi: case Op::Select: case Op::Lt: case Op::Le: case Op::Gt:
    case Op::Ge: case Op::Eq: case Op::Ne: case Op::And: case Op::Or: case Op::Not:
      return true;
    default: return false;
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
        } else if (runs_as_op(n.op)) {
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
  Flattener f(graph.graph, layout, options, stores, steps_);
  f.run();
  registers_ = std::max(f.registers(), 1u);
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
  for (int64_t first = args.begin; first < args.end; first += B) {
    const int64_t count = std::min<int64_t>(B, args.end - first);
    for (uint32_t l = 0; l < B; ++l) {
      const int64_t i = first + std::min<int64_t>(l, count - 1);  // padding: the last instance
      for (uint32_t s = 0; s < num_vars_; ++s)
        var_rows[s * B + l] = args.values[s] + int64_t{args.indices[s][i]} * layout_.ambient[s];
      data_rows[l] = layout_.data_stride ? args.data + i * layout_.data_stride : nullptr;
    }
    for (const Step& s : steps_) {
      double* out = regs + size_t{s.dst} * B;
      switch (s.kind) {
        case Kind::Op: run_op(s, regs); break;
        case Kind::Constant: std::fill(out, out + B, s.value); break;
        case Kind::LoadVar:
          for (uint32_t l = 0; l < B; ++l) out[l] = var_rows[s.a * B + l][s.b];
          break;
        case Kind::LoadData:
          for (uint32_t l = 0; l < B; ++l) out[l] = data_rows[l][s.b];
          break;
        case Kind::MathCall:
          math_call(s, regs + size_t{s.a} * B, regs + size_t{s.b} * B, out);
          break;
        case Kind::Store: {  // the block's real instances only, not its padding
          const OutputArray& a = layout_.outputs[s.a];
          if (a.scattered) {
            for (int64_t l = 0; l < count; ++l) args.scatter[s.a][first + l][s.b] = out[l];
          } else {
            double* base = args.outputs[s.a] + first * a.per_instance + s.b;
            for (int64_t l = 0; l < count; ++l) base[l * a.per_instance] = out[l];
          }
          break;
        }
      }
    }
  }
}

}  // namespace lsjit::compiler
