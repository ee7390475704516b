// Code generation and the JIT: kernels against the reference interpreter (run_reference)
// through the kernel ABI, with attention to what the lowering does differently by width:
// instance counts around the vector width, ranges starting past 0 and shorter than a
// vector (the stack-copy path), shuffled and repeated variable rows, rows shorter and
// longer than a vector (per-lane loads and transposed blocks, overlapping at the end),
// output arrays with fewer doubles than a vector, NaN and infinities, every op; then the
// JIT's loading and unloading, errors, and the compile times of a large kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lsjit/common/cpu.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/kernel.h"
#include "lsjit/compiler/kernel_numerics.h"
#include "lsjit/compiler/llvm/codegen.h"
#include "lsjit/compiler/llvm/jit.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/sym.h"

namespace {

using lsjit::Sym;
using lsjit::SymBool;
using lsjit::compiler::CompileOptions;
using lsjit::compiler::KernelArgs;
using lsjit::compiler::KernelLayout;
using lsjit::compiler::KernelMode;
using Vec = std::vector<Sym>;

// ---------------------------------------------------------------------------------------
// Traced test costs

// A cost over Euclidean variables (x = vars + tangents) and data, traced from `f`.
struct Cost {
  std::string name;
  std::vector<uint32_t> var_sizes;
  std::vector<uint32_t> data_sizes;
  std::function<Vec(const std::vector<Vec>& vars, const std::vector<Vec>& data)> f;
};

lsjit::ir::Trace trace(const Cost& cost) {
  lsjit::ir::Signature sig;
  sig.name = cost.name;
  for (size_t s = 0; s < cost.var_sizes.size(); ++s) {
    const uint32_t n = cost.var_sizes[s];
    sig.vars.push_back({"v" + std::to_string(s), "Vec" + std::to_string(n), n, n});
  }
  for (size_t s = 0; s < cost.data_sizes.size(); ++s)
    sig.data.push_back({"d" + std::to_string(s), "Vec" + std::to_string(cost.data_sizes[s]),
                        cost.data_sizes[s], 1});
  lsjit::Tracer tracer(sig);
  std::vector<Vec> vars(cost.var_sizes.size()), data(cost.data_sizes.size());
  for (uint32_t s = 0; s < vars.size(); ++s)
    for (uint32_t c = 0; c < cost.var_sizes[s]; ++c)
      vars[s].push_back(tracer.var(s, c) + tracer.tangent(s, c));
  for (uint32_t s = 0; s < data.size(); ++s)
    for (uint32_t c = 0; c < cost.data_sizes[s]; ++c) data[s].push_back(tracer.data(s, c));
  tracer.set_residual(cost.f(vars, data));
  return tracer.finish();
}

// Every op of the op table. Variable rows of 3 and 5 doubles (shorter than 4 lanes, and
// longer but not a multiple), a data row of 7, an unused variable slot, a constant
// residual and one residual that is the same node as another.
Cost every_op_cost() {
  return {"every_op", {3, 5, 2}, {7}, [](const std::vector<Vec>& v, const std::vector<Vec>& d) {
            const Vec& x = v[0];
            const Vec& y = v[1];
            const Vec& p = d[0];
            const Sym r0 = x[0] + x[1] - x[2] * y[0] / (y[1] + 3.0);
            const SymBool c1 = x[0] < y[0], c2 = x[1] >= y[1];
            const SymBool c3 = lsjit::floor(2.0 * x[1]) == lsjit::floor(2.0 * y[0]);
            const SymBool c4 = y[2] != p[1], c5 = x[0] <= p[2], c6 = y[3] > p[3];
            return Vec{
                r0,
                lsjit::exp(-x[0]) + lsjit::sqrt(y[2]) + lsjit::cbrt(x[1]),
                lsjit::exp(x[0]) + lsjit::expm1(x[1]) - lsjit::log(y[0]) + lsjit::log1p(y[1]),
                lsjit::pow(y[2], x[2]) + lsjit::pow(lsjit::sin(x[0]), 3) +
                    lsjit::pow(x[1], -2) + lsjit::pow(lsjit::cos(y[3]), 17) +
                    lsjit::pow(1.5 + lsjit::sin(y[4]), -20),
                lsjit::sin(x[0]) * lsjit::cos(x[1]) + lsjit::tan(x[2]),
                lsjit::asin(y[0]) + lsjit::acos(y[1]) + lsjit::atan(y[2]) + lsjit::atan2(y[3], x[0]),
                lsjit::sinh(x[0]) - lsjit::cosh(x[1]) + lsjit::tanh(x[2]),
                lsjit::abs(y[0]) + lsjit::hypot(x[0], y[1]) + lsjit::floor(x[1] * 2.5) +
                    lsjit::ceil(y[2] * 1.5) + lsjit::fmod(y[3], x[2]),
                lsjit::min(x[0], y[0]) - lsjit::max(x[1], y[1]),
                lsjit::select((c1 && !c2) || c3, x[0] * y[1], y[2]) +
                    lsjit::select(c4 && c5, Sym(1.0), Sym(-1.0)) * x[1] +
                    lsjit::select(c6 || c1, y[4], x[2]),
                p[4] * x[0] + p[5] * y[3] - p[6],
                Sym(2.5),
                r0,
            };
          }};
}

// Arithmetic, libm calls, comparisons and select, but no powi and no min/max: with FMA
// contraction off and libm per lane, a kernel computes exactly the interpreter's doubles.
Cost exact_cost() {
  return {"exact", {4, 2}, {5}, [](const std::vector<Vec>& v, const std::vector<Vec>& d) {
            const Vec& x = v[0];
            const Vec& y = v[1];
            const Vec& p = d[0];
            return Vec{
                x[0] * x[1] - x[2] / (y[0] + 3.0) + p[0],
                lsjit::sin(x[0] * p[1]) * lsjit::exp(y[1]) - lsjit::atan2(x[3], y[0]),
                lsjit::sqrt(x[2] * x[2] + p[2]) + lsjit::log(y[1] * y[1] + 1.0),
                lsjit::select(x[0] < y[1], lsjit::cosh(x[1]), lsjit::tanh(x[3])) * p[3],
                lsjit::fmod(x[1], p[4]) + lsjit::floor(y[0] * 3.0) - lsjit::hypot(x[2], y[1]),
            };
          }};
}

// A pose-graph-sized cost: two poses (t, q) with a first-order quaternion retraction,
// r = U * [R(qa)ᵀ(tb - ta) - tz ; 2 vec(qz ⊗ conj(q̄a qb))], U a 6x6 data matrix. About the
// size of se3_between (~150 residual ops, ~1200 with the Jacobian).
struct Quat {
  Sym w, x, y, z;
};
Quat mul(const Quat& a, const Quat& b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
          a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
Quat conj(const Quat& q) { return {q.w, -q.x, -q.y, -q.z}; }

lsjit::ir::Trace pose_cost() {
  lsjit::ir::Signature sig;
  sig.name = "pose_between";
  sig.vars.push_back({"a", "Pose", 7, 6});
  sig.vars.push_back({"b", "Pose", 7, 6});
  sig.data.push_back({"z", "Pose", 7, 1});
  sig.data.push_back({"U", "Mat6x6", 6, 6});
  lsjit::Tracer tracer(sig);
  auto pose = [&](uint32_t s, Vec& t, Quat& q) {
    const Quat q0{tracer.var(s, 6), tracer.var(s, 3), tracer.var(s, 4), tracer.var(s, 5)};
    const Quat dq{Sym(1.0), 0.5 * tracer.tangent(s, 3), 0.5 * tracer.tangent(s, 4),
                  0.5 * tracer.tangent(s, 5)};
    q = mul(q0, dq);
    const Quat rho{Sym(0.0), tracer.tangent(s, 0), tracer.tangent(s, 1), tracer.tangent(s, 2)};
    const Quat moved = mul(mul(q0, rho), conj(q0));
    t = {tracer.var(s, 0) + moved.x, tracer.var(s, 1) + moved.y, tracer.var(s, 2) + moved.z};
  };
  Vec ta, tb;
  Quat qa, qb;
  pose(0, ta, qa);
  pose(1, tb, qb);
  const Quat qz{tracer.data(0, 6), tracer.data(0, 3), tracer.data(0, 4), tracer.data(0, 5)};
  const Quat dt{Sym(0.0), tb[0] - ta[0], tb[1] - ta[1], tb[2] - ta[2]};
  const Quat p_ab = mul(mul(conj(qa), dt), qa);
  const Quat q_ab = mul(conj(qa), qb);
  const Quat dq = mul(qz, conj(q_ab));
  const Vec e{p_ab.x - tracer.data(0, 0), p_ab.y - tracer.data(0, 1), p_ab.z - tracer.data(0, 2),
              2.0 * dq.x, 2.0 * dq.y, 2.0 * dq.z};
  Vec r;
  for (int row = 0; row < 6; ++row) {
    Sym sum = tracer.data(1, row * 6) * e[0];
    for (int k = 1; k < 6; ++k) sum += tracer.data(1, row * 6 + k) * e[k];
    r.push_back(sum);
  }
  tracer.set_residual(r);
  return tracer.finish();
}

// ---------------------------------------------------------------------------------------
// Running kernels against the reference

struct Inputs {
  std::vector<std::vector<int32_t>> indices;
  std::vector<std::vector<double>> values;
  std::vector<double> data;
  std::vector<const int32_t*> index_ptrs;
  std::vector<const double*> value_ptrs;
};

struct Sampling {
  double lo = -2, hi = 2;
  double special = 0.0;  // probability that a value is NaN, ±inf, ±0 or huge
};

double sample(std::mt19937_64& rng, const Sampling& s) {
  std::uniform_real_distribution<double> u(s.lo, s.hi), coin(0, 1);
  if (s.special > 0 && coin(rng) < s.special) {
    static const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(), 0.0, -0.0,
                                      1e300, -1e-300};
    return specials[rng() % std::size(specials)];
  }
  return u(rng);
}

// `count` instances reading `count / 2 + 3` rows per variable slot in shuffled order, so
// rows repeat and are not in instance order.
Inputs make_inputs(const KernelLayout& layout, int64_t count, std::mt19937_64& rng,
                   const Sampling& s) {
  Inputs in;
  const int64_t rows = count / 2 + 3;
  in.indices.resize(layout.num_vars);
  in.values.resize(layout.num_vars);
  for (uint32_t v = 0; v < layout.num_vars; ++v) {
    for (int64_t k = 0; k < rows * layout.ambient[v]; ++k) in.values[v].push_back(sample(rng, s));
    for (int64_t i = 0; i < count; ++i)
      in.indices[v].push_back(static_cast<int32_t>(i % 3 == 0 ? rows - 1 - i % rows : rng() % rows));
    std::shuffle(in.indices[v].begin(), in.indices[v].end(), rng);
    in.index_ptrs.push_back(in.indices[v].data());
    in.value_ptrs.push_back(in.values[v].data());
  }
  for (int64_t k = 0; k < count * int64_t{layout.data_stride}; ++k) in.data.push_back(sample(rng, s));
  return in;
}

// Every array contiguous, scattered ones included (their tables point at instance i's
// block i): the tests here read outputs by instance. kernel_check.h scatters them.
struct Outputs {
  std::vector<std::vector<double>> arrays;
  std::vector<double*> ptrs;
  lsjit::compiler::ScatterTables scatter;
  Outputs(const KernelLayout& layout, int64_t count, double fill) {
    for (const auto& a : layout.outputs) arrays.emplace_back(count * a.per_instance, fill);
    for (auto& a : arrays) ptrs.push_back(a.data());
    scatter = lsjit::compiler::contiguous_scatter(layout, ptrs.data(), count);
  }
};

KernelArgs args_for(const Inputs& in, Outputs& out, int64_t begin, int64_t end) {
  KernelArgs args;
  args.begin = begin;
  args.end = end;
  args.indices = in.index_ptrs.data();
  args.values = in.value_ptrs.data();
  args.data = in.data.empty() ? nullptr : in.data.data();
  args.outputs = out.ptrs.data();
  args.scatter = out.scatter.pointers.data();
  return args;
}

bool same_bits_or_nan(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// |jit - ref| <= 1e-12 max(1, |ref|); NaN where the reference is NaN, the same infinity.
bool close(double jit, double ref) {
  if (std::isnan(ref)) return std::isnan(jit);
  if (std::isinf(ref)) return jit == ref;
  if (!std::isfinite(jit)) return false;
  return std::abs(jit - ref) <= 1e-12 * std::max(1.0, std::abs(ref));
}

struct Compiled {
  lsjit::ir::Trace graph;
  KernelLayout layout;
  std::shared_ptr<lsjit::compiler::LoadedKernel> kernel;
};

Compiled compile(const lsjit::ir::Trace& traced, KernelMode mode, const CompileOptions& options,
                 const std::string& symbol) {
  Compiled c;
  c.graph = lsjit::compiler::graph_for_mode(traced, mode);
  c.layout = lsjit::compiler::make_layout(c.graph.signature, mode);
  const auto object = lsjit::compiler::compile_kernel(c.graph, c.layout, options, symbol);
  c.kernel = lsjit::compiler::load_kernel(object.object_code, symbol);
  return c;
}

std::string describe(const CompileOptions& o) {
  std::ostringstream s;
  s << "width " << o.vector_width << (o.fma_contraction ? " fma" : " no-fma")
    << (o.vector_math ? " libmvec" : " libm");
  return s.str();
}

// Runs the kernel over [0, count) in pieces (cut at `cuts`), the reference likewise, and
// compares every output value. `exact`: bit-identical (NaN for NaN) instead of close().
size_t check_against_reference(const Compiled& c, int64_t count, std::vector<int64_t> cuts,
                               std::mt19937_64& rng, const Sampling& s, bool exact,
                               const std::string& what) {
  const Inputs in = make_inputs(c.layout, count, rng, s);
  Outputs jit(c.layout, count, -777.0), ref(c.layout, count, 777.0);
  cuts.push_back(0);
  cuts.push_back(count);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    if (cuts[k] < 0 || cuts[k + 1] > count) continue;
    KernelArgs a = args_for(in, jit, cuts[k], cuts[k + 1]);
    c.kernel->function()(&a);
    KernelArgs r = args_for(in, ref, cuts[k], cuts[k + 1]);
    lsjit::compiler::run_reference(c.graph, c.layout, r);
  }
  size_t compared = 0, bad = 0;
  for (size_t a = 0; a < c.layout.outputs.size(); ++a)
    for (size_t k = 0; k < jit.arrays[a].size(); ++k, ++compared) {
      const double x = jit.arrays[a][k], y = ref.arrays[a][k];
      if (exact ? same_bits_or_nan(x, y) : close(x, y)) continue;
      if (bad++ < 4) {
        const size_t per = c.layout.outputs[a].per_instance;
        FAIL_CHECK(what << ": " << c.layout.outputs[a].name << " of instance " << k / per
                        << ", value " << k % per << " is " << x << ", the interpreter says "
                        << y);
      }
    }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << compared << " values differ");
  return compared;
}

std::vector<int64_t> cuts_for(int64_t count) {
  // A piece starting past 0, pieces shorter than a vector, and one long piece.
  return {1, 3, count / 2, count / 2 + 5, count - 2};
}

const int64_t kCounts[] = {0, 1, 3, 4, 5, 7, 8, 9, 1000};

}  // namespace

TEST_CASE("the every-op cost has every op of the op table in its residual graph") {
  const lsjit::ir::Trace g =
      lsjit::compiler::graph_for_mode(trace(every_op_cost()), KernelMode::Residual);
  std::set<lsjit::ir::Op> ops;
  for (const auto& n : g.graph.nodes) ops.insert(n.op);
  // fma comes from fuse_multiply_add, in the graph the kernel executes (on an FMA host).
  CompileOptions fusing;
  fusing.fma_contraction = true;
  if (lsjit::compiler::fuses_multiply_add(fusing))
    for (const auto& n : lsjit::compiler::executed_graph(g, fusing).graph.nodes) ops.insert(n.op);
  else
    ops.insert(lsjit::ir::Op::Fma);
  for (int op = 0; op < lsjit::ir::kNumOps; ++op) {
    CAPTURE(lsjit::ir::name(static_cast<lsjit::ir::Op>(op)));
    CHECK(ops.count(static_cast<lsjit::ir::Op>(op)) == 1);
  }
}

TEST_CASE("kernels match the interpreter for every op, mode, width and instance count") {
  const lsjit::ir::Trace traced = trace(every_op_cost());
  std::mt19937_64 rng(11);
  size_t compared = 0;
  for (KernelMode mode : lsjit::compiler::kAllModes)
    for (uint32_t width : {1u, 2u, 4u, 8u})
      for (bool vector_math : {true, false}) {
        CompileOptions o;
        o.vector_width = width;
        o.vector_math = vector_math;
        const Compiled c = compile(traced, mode, o, "every_op");
        for (int64_t count : kCounts) {
          const std::string what = std::string(lsjit::compiler::mode_name(mode)) + " " +
                                   describe(o) + " count " + std::to_string(count);
          Sampling s;
          s.special = 0.02;  // NaN, infinities, zeros: NaN must come out where it does
          compared += check_against_reference(c, count, cuts_for(count), rng, s, false, what);
        }
      }
  CHECK(compared > 100000);
}

TEST_CASE("with libm per lane, kernels compute the interpreter's bits on the executed graph") {
  // The executed graph has the products fused that the kernel fuses (kernel_numerics.h), so
  // with or without FMA nothing is left to chance in instruction selection.
  const lsjit::ir::Trace traced = trace(exact_cost());
  std::mt19937_64 rng(5);
  for (KernelMode mode : {KernelMode::Residual, KernelMode::ResidualJacobian})
    for (uint32_t width : {1u, 2u, 4u, 8u, 16u})
      for (bool fma : {false, true}) {
        CompileOptions o;
        o.vector_width = width;
        o.fma_contraction = fma;
        o.vector_math = false;
        Compiled c = compile(traced, mode, o, "exact");
        c.graph = lsjit::compiler::executed_graph(c.graph, o);
        for (const auto& n : c.graph.graph.nodes) REQUIRE(n.op != lsjit::ir::Op::Powi);
        for (int64_t count : {1, 5, 37, 300})
          check_against_reference(c, count, cuts_for(count), rng, Sampling{}, true,
                                  std::string(lsjit::compiler::mode_name(mode)) + " " +
                                      describe(o) + " count " + std::to_string(count));
      }
}

TEST_CASE("every vector width gives the same results on a pose-graph cost") {
  const lsjit::ir::Trace traced = pose_cost();
  for (KernelMode mode : lsjit::compiler::kAllModes) {
    std::vector<std::vector<std::vector<double>>> results;
    for (uint32_t width : {0u, 1u, 2u, 4u, 8u}) {
      CompileOptions o;
      o.vector_width = width;
      const Compiled c = compile(traced, mode, o, "pose");
      std::mt19937_64 rng(99);  // the same inputs for every width
      const int64_t count = 203;
      const Inputs in = make_inputs(c.layout, count, rng, Sampling{-1, 1});
      Outputs out(c.layout, count, -1.0), ref(c.layout, count, 1.0);
      KernelArgs a = args_for(in, out, 0, count);
      c.kernel->function()(&a);
      KernelArgs r = args_for(in, ref, 0, count);
      lsjit::compiler::run_reference(c.graph, c.layout, r);
      for (size_t k = 0; k < out.arrays.size(); ++k)
        for (size_t j = 0; j < out.arrays[k].size(); ++j)
          REQUIRE_MESSAGE(close(out.arrays[k][j], ref.arrays[k][j]),
                          describe(o) << " " << c.layout.outputs[k].name << "[" << j << "]");
      results.push_back(out.arrays);
    }
    for (size_t w = 1; w < results.size(); ++w)
      for (size_t k = 0; k < results[0].size(); ++k)
        for (size_t j = 0; j < results[0][k].size(); ++j)
          CHECK(std::abs(results[w][k][j] - results[0][k][j]) <=
                1e-12 * std::max(1.0, std::abs(results[0][k][j])));
  }
}

TEST_CASE("normal-equation kernels: JᵀJ and Jᵀr of the Jacobian kernel, diagonal blocks packed") {
  // The layout of kernel.h checked against the residual_jacobian kernel's r and J: H[v,w]
  // row-major for v < w, H[v,v] as its upper triangle row by row, T(T+1)/2 doubles.
  const lsjit::ir::Trace traced = pose_cost();
  const Compiled ne = compile(traced, KernelMode::NormalEquations, CompileOptions{}, "pose_ne");
  const Compiled rj = compile(traced, KernelMode::ResidualJacobian, CompileOptions{}, "pose_rj");
  const KernelLayout& L = ne.layout;
  std::mt19937_64 rng(5);
  const int64_t count = 37;
  const Inputs in = make_inputs(L, count, rng, Sampling{-1, 1});
  Outputs h(L, count, -1.0), j(rj.layout, count, -1.0);
  KernelArgs a = args_for(in, h, 0, count), b = args_for(in, j, 0, count);
  ne.kernel->function()(&a);
  rj.kernel->function()(&b);
  const uint32_t n = L.num_vars, R = L.residual_dim;
  for (uint32_t v = 0; v < n; ++v)
    CHECK(L.outputs[L.hessian_array(v, v)].per_instance == L.tangent[v] * (L.tangent[v] + 1) / 2);
  for (int64_t i = 0; i < count; ++i) {
    const double* r = &j.arrays[0][i * R];
    const auto J = [&](uint32_t v, uint32_t row, uint32_t col) {
      return j.arrays[1 + v][(i * R + row) * L.tangent[v] + col];
    };
    for (uint32_t v = 0; v < n; ++v) {
      for (uint32_t p = 0; p < L.tangent[v]; ++p) {
        double g = 0;
        for (uint32_t row = 0; row < R; ++row) g += J(v, row, p) * r[row];
        CHECK(h.arrays[1 + v][i * L.tangent[v] + p] == doctest::Approx(g).epsilon(1e-12));
      }
      for (uint32_t w = v; w < n; ++w) {
        const std::vector<double>& block = h.arrays[L.hessian_array(v, w)];
        const uint32_t per = L.outputs[L.hessian_array(v, w)].per_instance;
        for (uint32_t p = 0; p < L.tangent[v]; ++p)
          for (uint32_t q = v == w ? p : 0; q < L.tangent[w]; ++q) {
            double sum = 0;
            for (uint32_t row = 0; row < R; ++row) sum += J(v, row, p) * J(w, row, q);
            const uint32_t at = v == w ? lsjit::compiler::packed_upper_index(p, q, L.tangent[v]) : p * L.tangent[w] + q;
            INFO("H[" << v << "," << w << "](" << p << "," << q << ") of instance " << i);
            CHECK(block[i * per + at] == doctest::Approx(sum).epsilon(1e-12));
          }
      }
    }
  }
}

TEST_CASE("a kernel writes exactly the instances of its range") {
  const lsjit::ir::Trace traced = trace(every_op_cost());
  std::mt19937_64 rng(3);
  for (uint32_t width : {1u, 4u, 8u}) {
    CompileOptions o;
    o.vector_width = width;
    const Compiled c = compile(traced, KernelMode::ResidualJacobian, o, "range");
    const int64_t count = 40;
    const Inputs in = make_inputs(c.layout, count, rng, Sampling{});
    for (auto [b, e] : {std::pair<int64_t, int64_t>{5, 6}, {5, 8}, {5, 9}, {5, 13}, {7, 30},
                        {0, 40}, {39, 40}, {12, 12}, {20, 10}}) {
      CAPTURE(width);
      CAPTURE(b);
      CAPTURE(e);
      // A sentinel no output can be: a NaN with a payload no operation produces.
      const uint64_t sentinel_bits = 0x7ff4'0000'dead'beefull;
      double sentinel;
      std::memcpy(&sentinel, &sentinel_bits, sizeof sentinel);
      Outputs out(c.layout, count, sentinel);
      KernelArgs a = args_for(in, out, b, e);
      c.kernel->function()(&a);
      for (size_t k = 0; k < out.arrays.size(); ++k) {
        const size_t per = c.layout.outputs[k].per_instance;
        for (size_t j = 0; j < out.arrays[k].size(); ++j) {
          const int64_t instance = static_cast<int64_t>(j / per);
          const bool inside = instance >= b && instance < e;
          uint64_t bits;
          std::memcpy(&bits, &out.arrays[k][j], sizeof bits);
          const bool written = bits != sentinel_bits;
          if (inside != written)
            FAIL_CHECK("output " << c.layout.outputs[k].name << "[" << j % per
                                 << "] of instance " << instance << " is " << out.arrays[k][j]
                                 << ", " << std::string(inside ? "inside" : "outside") << " the range");
        }
      }
    }
  }
}

TEST_CASE("results do not depend on how a range is split between calls") {
  // Every instance goes through the same vector code, whatever its range: a split can only
  // change which lane computes it, and every op (libmvec included) is lane-wise.
  const lsjit::ir::Trace traced = trace(every_op_cost());
  std::mt19937_64 rng(21);
  for (uint32_t width : {2u, 4u, 8u}) {
    CompileOptions o;
    o.vector_width = width;
    const Compiled c = compile(traced, KernelMode::ResidualJacobian, o, "split");
    const int64_t count = 101;
    Sampling s;
    s.special = 0.01;
    const Inputs in = make_inputs(c.layout, count, rng, s);
    Outputs whole(c.layout, count, 0.0), pieces(c.layout, count, 0.0);
    KernelArgs a = args_for(in, whole, 0, count);
    c.kernel->function()(&a);
    for (int64_t b = 0; b < count;) {
      const int64_t e = std::min<int64_t>(count, b + 1 + static_cast<int64_t>(rng() % 11));
      KernelArgs p = args_for(in, pieces, b, e);
      c.kernel->function()(&p);
      b = e;
    }
    for (size_t k = 0; k < whole.arrays.size(); ++k)
      CHECK(std::memcmp(whole.arrays[k].data(), pieces.arrays[k].data(),
                        whole.arrays[k].size() * sizeof(double)) == 0);
  }
}

TEST_CASE("output arrays too big for stack copies: short ranges take a scalar loop") {
  // 2050 residuals: 2050 * 8 bytes * 4 lanes of stack copies exceed the 64 KiB limit.
  Cost big{"many_residuals", {3}, {2}, [](const std::vector<Vec>& v, const std::vector<Vec>& d) {
             Vec r;
             for (int k = 0; k < 2050; ++k) r.push_back(v[0][k % 3] * d[0][k % 2] + double(k));
             return r;
           }};
  std::mt19937_64 rng(8);
  CompileOptions o;
  o.vector_width = 4;
  const Compiled c = compile(trace(big), KernelMode::Residual, o, "big");
  for (int64_t count : {1, 3, 6, 11})
    check_against_reference(c, count, {1, 2}, rng, Sampling{}, false,
                            "count " + std::to_string(count));
}

TEST_CASE("kernels load, unload and load again, and the same symbol can be loaded twice") {
  const lsjit::ir::Trace traced = trace(exact_cost());
  const lsjit::ir::Trace g = lsjit::compiler::graph_for_mode(traced, KernelMode::Residual);
  const KernelLayout layout = lsjit::compiler::make_layout(g.signature, KernelMode::Residual);
  const auto object = lsjit::compiler::compile_kernel(g, layout, {}, "reload_me");
  std::mt19937_64 rng(1);
  const Inputs in = make_inputs(layout, 17, rng, Sampling{});
  Outputs ref(layout, 17, 0.0);
  KernelArgs r = args_for(in, ref, 0, 17);
  lsjit::compiler::run_reference(g, layout, r);
  auto run = [&](const lsjit::compiler::LoadedKernel& k) {
    Outputs out(layout, 17, 0.0);
    KernelArgs a = args_for(in, out, 0, 17);
    k.function()(&a);
    for (size_t j = 0; j < out.arrays[0].size(); ++j) REQUIRE(close(out.arrays[0][j], ref.arrays[0][j]));
  };
  for (int round = 0; round < 20; ++round) {
    auto k = lsjit::compiler::load_kernel(object.object_code, "reload_me");
    run(*k);
  }
  // Two live copies of one symbol, and a different kernel under the same name.
  auto k1 = lsjit::compiler::load_kernel(object.object_code, "reload_me");
  auto k2 = lsjit::compiler::load_kernel(object.object_code, "reload_me");
  CHECK(reinterpret_cast<void*>(k1->function()) != reinterpret_cast<void*>(k2->function()));
  const lsjit::ir::Trace other = lsjit::compiler::graph_for_mode(trace(every_op_cost()), KernelMode::Residual);
  const KernelLayout other_layout = lsjit::compiler::make_layout(other.signature, KernelMode::Residual);
  auto k3 = lsjit::compiler::load_kernel(
      lsjit::compiler::compile_kernel(other, other_layout, {}, "reload_me").object_code,
      "reload_me");
  run(*k1);
  k1.reset();
  run(*k2);
}

TEST_CASE("kernels compile, load and run from several threads at once") {
  const lsjit::ir::Trace traced = pose_cost();
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        CompileOptions o;
        o.vector_width = t % 2 == 0 ? 4 : 1;
        const Compiled c = compile(traced, KernelMode::Residual, o, "thread" + std::to_string(t));
        std::mt19937_64 rng(t);
        const Inputs in = make_inputs(c.layout, 50, rng, Sampling{-1, 1});
        Outputs out(c.layout, 50, 0.0), ref(c.layout, 50, 0.0);
        KernelArgs a = args_for(in, out, 0, 50), r = args_for(in, ref, 0, 50);
        c.kernel->function()(&a);
        lsjit::compiler::run_reference(c.graph, c.layout, r);
        ok[t] = 1;
        for (size_t j = 0; j < out.arrays[0].size(); ++j)
          if (!close(out.arrays[0][j], ref.arrays[0][j])) ok[t] = 0;
      } catch (...) {
        ok[t] = 0;
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) CHECK(ok[t] == 1);
}

TEST_CASE("load_kernel rejects malformed objects and missing symbols") {
  CHECK_THROWS_AS(lsjit::compiler::load_kernel("definitely not an object file", "k"), lsjit::Error);
  CHECK_THROWS_AS(lsjit::compiler::load_kernel(std::string(), "k"), lsjit::Error);
  std::string elf_header("\x7f" "ELF\x02\x01\x01", 7);
  elf_header.resize(200, '\0');
  CHECK_THROWS_AS(lsjit::compiler::load_kernel(elf_header, "k"), lsjit::Error);

  const lsjit::ir::Trace g = lsjit::compiler::graph_for_mode(trace(exact_cost()), KernelMode::Residual);
  const KernelLayout layout = lsjit::compiler::make_layout(g.signature, KernelMode::Residual);
  const auto object = lsjit::compiler::compile_kernel(g, layout, {}, "present");
  CHECK_THROWS_WITH_AS(lsjit::compiler::load_kernel(object.object_code, "absent"),
                       doctest::Contains("absent"), lsjit::Error);
  // Failed loads leave nothing behind that breaks the next one.
  CHECK(reinterpret_cast<void*>(
      lsjit::compiler::load_kernel(object.object_code, "present")->function()) != nullptr);
}

TEST_CASE("compile errors: bad vector widths and graphs that are not mode graphs") {
  const lsjit::ir::Trace traced = trace(exact_cost());
  const lsjit::ir::Trace g = lsjit::compiler::graph_for_mode(traced, KernelMode::Residual);
  const KernelLayout layout = lsjit::compiler::make_layout(g.signature, KernelMode::Residual);
  for (uint32_t width : {3u, 6u, 32u}) {
    CompileOptions o;
    o.vector_width = width;
    CHECK_THROWS_AS(lsjit::compiler::compile_kernel(g, layout, o, "k"), lsjit::Error);
  }
  // The traced graph still reads tangents.
  CHECK_THROWS_WITH_AS(lsjit::compiler::compile_kernel(traced, layout, {}, "k"),
                       doctest::Contains("tangent"), lsjit::Error);
  // A layout for another mode has no room for the Jacobian outputs.
  const lsjit::ir::Trace j = lsjit::compiler::graph_for_mode(traced, KernelMode::ResidualJacobian);
  CHECK_THROWS_AS(lsjit::compiler::compile_kernel(j, layout, {}, "k"), std::exception);
}

TEST_CASE("host_target and kernel_text") {
  const lsjit::compiler::TargetInfo t = lsjit::compiler::host_target({});
  CHECK(!t.triple.empty());
  CHECK(!t.cpu.empty());
  CHECK(t.llvm_version.rfind("19.", 0) == 0);
  CHECK((t.vector_width == 2 || t.vector_width == 4 || t.vector_width == 8));
  // The CPUID fingerprint (common/cpu.h) against the compiler's own detection.
  const lsjit::HostCpu& h = lsjit::host_cpu();
  CHECK(t.cpu == h.name);
  CHECK(t.features == h.fingerprint);
#if defined(__x86_64__)
  CHECK(h.fingerprint.size() == 38 * 9 - 1);  // 38 words of 8 hex digits and commas
  CHECK(h.avx == bool(__builtin_cpu_supports("avx")));
  CHECK(h.avx2 == bool(__builtin_cpu_supports("avx2")));
  CHECK(h.avx512f == bool(__builtin_cpu_supports("avx512f")));
  CHECK(h.fma == bool(__builtin_cpu_supports("fma")));
  CHECK(h.name.find(__builtin_cpu_is("amd") ? "AuthenticAMD" : "") != std::string::npos);
#endif
  CHECK(t.vector_width == (h.avx512f ? 8u : h.avx2 ? 4u : 2u));
  CHECK(lsjit::compiler::host_target({}).features == t.features);  // the same every call
  CompileOptions scalar;
  scalar.vector_width = 1;
  CHECK(lsjit::compiler::host_target(scalar).vector_width == 1);

  const lsjit::ir::Trace g = lsjit::compiler::graph_for_mode(trace(exact_cost()), KernelMode::Residual);
  const KernelLayout layout = lsjit::compiler::make_layout(g.signature, KernelMode::Residual);
  using lsjit::compiler::TextStage;
  const std::string ir = lsjit::compiler::kernel_text(g, layout, {}, "text_kernel", TextStage::Llvm);
  CHECK(ir.find("define void @text_kernel(") != std::string::npos);
  const std::string opt = lsjit::compiler::kernel_text(g, layout, {}, "text_kernel", TextStage::Optimized);
  CHECK(opt.find("define void @text_kernel(") != std::string::npos);
  const std::string asm_text = lsjit::compiler::kernel_text(g, layout, {}, "text_kernel", TextStage::Asm);
  CHECK(asm_text.find("text_kernel:") != std::string::npos);
  // The width host_cpu chose is what LLVM compiles for: 512-bit registers with AVX-512F.
  CHECK((asm_text.find("zmm") != std::string::npos) == h.avx512f);
  if (h.avx2) {
    CompileOptions o;
    o.vector_width = 4;
    CHECK(lsjit::compiler::kernel_text(g, layout, o, "k", TextStage::Llvm).find("_ZGVdN4v_sin") !=
          std::string::npos);
    o.vector_math = false;
    const std::string per_lane = lsjit::compiler::kernel_text(g, layout, o, "k", TextStage::Llvm);
    CHECK(per_lane.find("_ZGV") == std::string::npos);
    CHECK(per_lane.find("@sin(") != std::string::npos);
  }
  // No fast-math flag at all, contraction included: FMAs are the graph's fma nodes
  // (llvm.fma), there when asked for on an FMA host, and only then.
  for (const char* flag : {" fast ", " reassoc ", " nnan ", " ninf ", " nsz ", " arcp ", " afn ",
                           " contract "})
    CHECK(ir.find(flag) == std::string::npos);
  CHECK((ir.find("@llvm.fma.") != std::string::npos) == h.fma);
  CompileOptions no_fma;
  no_fma.fma_contraction = false;
  CHECK(lsjit::compiler::kernel_text(g, layout, no_fma, "k", TextStage::Llvm).find("@llvm.fma.") ==
        std::string::npos);
}

TEST_CASE("compile times and kernel speed of a pose-graph cost") {
  const lsjit::ir::Trace traced = pose_cost();
  for (uint32_t width : {0u, 1u}) {
    CompileOptions o;
    o.vector_width = width;
    double total = 0;
    for (KernelMode mode : lsjit::compiler::kAllModes) {
      const lsjit::ir::Trace g = lsjit::compiler::graph_for_mode(traced, mode);
      const KernelLayout layout = lsjit::compiler::make_layout(g.signature, mode);
      const auto object = lsjit::compiler::compile_kernel(g, layout, o, "timed");
      const auto start = std::chrono::steady_clock::now();
      const auto kernel = lsjit::compiler::load_kernel(object.object_code, "timed");
      const double load_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::mt19937_64 rng(4);
      const int64_t count = 4096;
      const Inputs in = make_inputs(layout, count, rng, Sampling{-1, 1});
      Outputs out(layout, count, 0.0);
      KernelArgs a = args_for(in, out, 0, count);
      double best = 1e9;
      for (int rep = 0; rep < 20; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        kernel->function()(&a);
        best = std::min(best,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      const auto& t = object.times;
      total += t.llvm_ir_s + t.optimize_s + t.codegen_s;
      MESSAGE(lsjit::compiler::mode_name(mode)
              << " (" << g.graph.op_count() << " ops), width " << object.target.vector_width
              << ": llvm_ir " << t.llvm_ir_s * 1e3 << " ms, optimize " << t.optimize_s * 1e3
              << " ms, codegen " << t.codegen_s * 1e3 << " ms, load " << load_s * 1e3
              << " ms, object " << object.object_code.size() << " bytes; "
              << best / count * 1e9 << " ns per instance");
    }
    MESSAGE("all three modes, width " << lsjit::compiler::host_target(o).vector_width << ": "
                                      << total * 1e3 << " ms");
  }
}
