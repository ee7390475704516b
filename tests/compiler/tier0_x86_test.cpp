// Tier 0's machine code (compiler/tier0/tier0_x86.h) against compiled kernels and the
// interpreted tier 0, bit for bit: every op a segment holds on every pair of special values,
// more live values than registers, and the memory it runs from.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>

#include "../support/kernel_check.h"
#include "../support/test_functions.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/compiler/tier0/tier0.h"
#include "lsjit/compiler/tier0/tier0_x86.h"

using namespace lsjit::testing;
using lsjit::compiler::CompileOptions;
using lsjit::compiler::KernelMode;
using lsjit::ir::Op;

namespace {

// A residual graph over the two components (x, y) of one variable, built node by node.
struct TwoInputGraph {
  lsjit::ir::GraphBuilder b;
  lsjit::ir::NodeId x = b.input({lsjit::ir::InputKind::Var, 0, 0});
  lsjit::ir::NodeId y = b.input({lsjit::ir::InputKind::Var, 0, 1});
  uint32_t outputs = 0;
  void out(lsjit::ir::NodeId n) { b.add_output({lsjit::ir::OutputRole::Residual, outputs++, 0, 0, n}); }
  lsjit::ir::Trace finish(const char* name) {
    lsjit::ir::Trace t;
    t.signature.name = name;
    t.signature.vars.push_back({"x", "Vec2", 2, 2});
    t.signature.residual_dim = outputs;
    t.graph = b.finish();
    return t;
  }
};

const double kSpecial[] = {0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 0.5, 1e308, -1e-310,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};

// Every pair of kSpecial as (x, y), one per instance, in turn.
InstanceSampler every_pair(size_t& pair) {
  return [&pair](std::mt19937_64&) {
    lsjit::ir::InputValues in;
    const size_t n = std::size(kSpecial);
    in.vars = {{kSpecial[pair % n], kSpecial[(pair / n) % n]}};
    ++pair;
    return in;
  };
}

}  // namespace

TEST_CASE("tier 0's machine code: every op of a segment on every pair of special values") {
  TwoInputGraph g;
  auto& b = g.b;
  const auto x = g.x, y = g.y;
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max}) {
    g.out(b.make(op, x, y));
    g.out(b.make(op, y, x));
  }
  g.out(b.make(Op::Fma, x, y, x));
  g.out(b.make(Op::Fma, y, y, x));
  g.out(b.make(Op::Fma, x, b.make(Op::Add, x, y), y));
  for (Op op : {Op::Neg, Op::Abs, Op::Sqrt, Op::Floor, Op::Ceil}) {
    g.out(b.make(op, x));
    g.out(b.make(op, y));
  }
  for (int32_t n : {2, 3, 5, 16, -1, -2, -7, -16}) g.out(b.make(Op::Powi, x, lsjit::ir::kNoNode, lsjit::ir::kNoNode, n));
  const auto one = b.constant(1.0), zero = b.constant(0.0);
  for (Op op : {Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne}) {
    const auto c = b.make(op, x, y);
    g.out(b.make(Op::Select, c, x, y));
    g.out(b.make(Op::Select, c, one, zero));
    g.out(b.make(Op::Select, b.make(op, y, x), y, b.make(Op::Neg, x)));
  }
  const auto lt = b.make(Op::Lt, x, y), ne = b.make(Op::Ne, x, y), gt = b.make(Op::Gt, x, y);
  const auto eq = b.make(Op::Eq, x, y), le = b.make(Op::Le, x, y);
  g.out(b.make(Op::Select, b.make(Op::And, lt, ne), x, y));
  g.out(b.make(Op::Select, b.make(Op::Or, gt, eq), x, y));
  g.out(b.make(Op::Select, b.make(Op::Not, le), x, y));
  g.out(b.make(Op::Select, b.make(Op::And, b.make(Op::Or, lt, eq), b.make(Op::Not, gt)), one, y));
  const lsjit::ir::Trace traced = g.finish("every_segment_op");

  const size_t pairs = std::size(kSpecial) * std::size(kSpecial);
  for (bool fma : {true, false}) {
    CompileOptions o;
    o.fma_contraction = fma;
    CAPTURE(fma);
    size_t pair = 0;
    std::mt19937_64 rng(12);
    CHECK(check_tier0(traced, KernelMode::Residual, static_cast<int64_t>(pairs), every_pair(pair), rng, o) > 0);
  }
}

TEST_CASE("tier 0's machine code spills and reloads when more values are live than registers") {
  // y_k = x_k² for 48 inputs, all live until their sum s is complete, then r_k = y_k s + x_k:
  // some 96 values live at once against 32 zmm registers.
  constexpr uint32_t n = 48;
  lsjit::ir::GraphBuilder b;
  std::vector<lsjit::ir::NodeId> x, y;
  for (uint32_t k = 0; k < n; ++k) x.push_back(b.input({lsjit::ir::InputKind::Var, 0, k}));
  for (uint32_t k = 0; k < n; ++k) y.push_back(b.make(Op::Mul, x[k], x[k]));
  lsjit::ir::NodeId s = y[0];
  for (uint32_t k = 1; k < n; ++k) s = b.make(Op::Add, s, y[k]);
  for (uint32_t k = 0; k < n; ++k)
    b.add_output({lsjit::ir::OutputRole::Residual, k, 0, 0, b.make(Op::Add, b.make(Op::Mul, y[k], s), x[k])});
  lsjit::ir::Trace traced;
  traced.signature.name = "pressure";
  traced.signature.vars.push_back({"x", "Vec48", n, n});
  traced.signature.residual_dim = n;
  traced.graph = b.finish();
  const InstanceSampler sample = [](std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-2, 2);
    lsjit::ir::InputValues in;
    in.vars = {std::vector<double>(n)};
    for (double& v : in.vars[0]) v = u(rng);
    return in;
  };
  std::mt19937_64 rng(13);
  for (KernelMode mode : lsjit::compiler::kAllModes)
    for (int64_t count : {1, 9, 300}) check_tier0(traced, mode, count, sample, rng);
}

TEST_CASE("tier 0 runs its arithmetic as machine code on an AVX-512 CPU, never from writable memory") {
  if (!lsjit::compiler::segment_code_available()) {
    MESSAGE("this CPU has no AVX-512F: tier 0 interprets every op here, and its machine code is not tested");
    return;
  }
  const lsjit::ir::Trace traced = trace_function(test_functions().front());
  const lsjit::ir::Trace graph = lsjit::compiler::graph_for_mode(traced, KernelMode::NormalEquations);
  const lsjit::compiler::KernelLayout layout = lsjit::compiler::make_layout(graph.signature, KernelMode::NormalEquations);
  const lsjit::compiler::Tier0Kernel auto_code(graph, layout, {});
  const lsjit::compiler::Tier0Kernel interpreted(graph, layout, {}, lsjit::compiler::Tier0Kernel::Code::Interpreted);
  CHECK(auto_code.segments() > 0);
  CHECK(interpreted.segments() == 0);
  CHECK(auto_code.steps() < interpreted.steps());
  // No mapping of this process is writable and executable at once.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  size_t lines = 0;
  while (std::getline(maps, line)) {
    ++lines;
    const std::string perms = line.substr(line.find(' ') + 1, 4);
    CHECK_MESSAGE(!(perms[1] == 'w' && perms[2] == 'x'), line);
  }
  CHECK(lines > 0);
}

TEST_CASE("tier 0's segment compiler refuses what its code could not address or order") {
  using lsjit::compiler::Segment;
  lsjit::compiler::SegmentCompiler compiler({2.5});
  Segment far;  // column 2^21 of 128-instance blocks is 2 GiB away: past a 32-bit displacement
  far.ops.push_back({Op::Add, 2, {{Segment::Ref::Kind::Column, 1u << 21}, {Segment::Ref::Kind::Constant, 0}}, 0});
  CHECK_THROWS_WITH_AS(compiler.add(far, 128), doctest::Contains("32-bit displacements"), lsjit::Error);
  Segment near = far;  // the last column that fits
  near.ops[0].args[0].index = (1u << 21) - 1;
  CHECK_NOTHROW(compiler.add(near, 128));
  Segment forward;  // an op that reads a later op's result
  forward.ops.push_back({Op::Neg, 1, {{Segment::Ref::Kind::Result, 1}}, 0});
  forward.ops.push_back({Op::Neg, 1, {{Segment::Ref::Kind::Column, 0}}, 1});
  CHECK_THROWS_WITH_AS(compiler.add(forward, 128), doctest::Contains("reads the result of op 1"), lsjit::Error);
  Segment odd;
  odd.ops.push_back({Op::Neg, 1, {{Segment::Ref::Kind::Column, 0}}, 1});
  CHECK_THROWS_AS(compiler.add(odd, 12), lsjit::Error);  // blocks of a multiple of 8 instances
}

TEST_CASE("KernelCache::Options::tier0_code and LSJIT_TIER0_CODE choose how tier 0 runs") {
  using lsjit::compiler::KernelCache;
  using lsjit::compiler::Tier0Kernel;
  const char* saved = std::getenv("LSJIT_TIER0_CODE");
  const std::string restore = saved ? saved : "";
  ::unsetenv("LSJIT_TIER0_CODE");
  CHECK(KernelCache::Options::from_environment().tier0_code == Tier0Kernel::Code::Auto);
  ::setenv("LSJIT_TIER0_CODE", "interpreted", 1);
  CHECK(KernelCache::Options::from_environment().tier0_code == Tier0Kernel::Code::Interpreted);
  ::setenv("LSJIT_TIER0_CODE", "auto", 1);
  CHECK(KernelCache::Options::from_environment().tier0_code == Tier0Kernel::Code::Auto);
  if (saved) ::setenv("LSJIT_TIER0_CODE", restore.c_str(), 1);
  else ::unsetenv("LSJIT_TIER0_CODE");

  const lsjit::ir::Trace traced = trace_function(test_functions().front());
  for (Tier0Kernel::Code code : {Tier0Kernel::Code::Auto, Tier0Kernel::Code::Interpreted}) {
    KernelCache::Options o;
    o.use_disk = false;
    o.quiet = true;
    o.tiering = KernelCache::Options::Tiering::Tier0Only;
    o.tier0_code = code;
    KernelCache cache(o);
    const auto l = cache.lookup(traced, KernelMode::NormalEquations);
    REQUIRE(l.kernel->tier0 != nullptr);
    const bool machine_code = code == Tier0Kernel::Code::Auto && lsjit::compiler::segment_code_available();
    CHECK((l.kernel->tier0->segments() > 0) == machine_code);
  }
}
