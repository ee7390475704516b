// ir/work_limits.h: the work a graph asks for is predicted before it is done, and a graph
// above a limit is refused with a message naming the cost, the amount and the limit.
#include <doctest/doctest.h>

#include <string>

#include "../support/ir_errors.h"
#include "lsjit/common/error.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/normal_equations.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/work_limits.h"

using namespace lsjit::ir;

namespace {

// residuals residuals, each the sum over slots × dim components of sin(x + δ), through
// the IR text format (as `lsjit trace FILE.ir` reads it).
std::string wide_ir(int residuals, int slots, int dim) {
  std::string t = "lsjit.ir 1\ncost wide kind=least_squares stage=traced residuals=" + std::to_string(residuals) + "\n";
  for (int s = 0; s < slots; ++s)
    t += "var v" + std::to_string(s) + " : W" + std::to_string(dim) + " ambient=" + std::to_string(dim) +
         " tangent=" + std::to_string(dim) + "\n";
  int id = 0;
  const auto node = [&](const std::string& body) {
    t += "%" + std::to_string(id) + " = " + body + " : f64\n";
    return id++;
  };
  std::vector<int> f;
  for (int s = 0; s < slots; ++s)
    for (int i = 0; i < dim; ++i) {
      const std::string at = "v" + std::to_string(s) + "[" + std::to_string(i) + "]";
      const int x = node("input var " + at), d = node("input tangent " + at);
      f.push_back(node("sin %" + std::to_string(node("add %" + std::to_string(x) + " %" + std::to_string(d)))));
    }
  std::string outputs;  // after every node
  for (int r = 0; r < residuals; ++r) {
    int acc = f[0];
    for (size_t i = 1; i < f.size(); ++i) {
      const int c = node("const " + std::to_string(1 + r + i));
      acc = node("add %" + std::to_string(acc) + " %" + std::to_string(node("mul %" + std::to_string(f[i]) + " %" + std::to_string(c))));
    }
    outputs += "res[" + std::to_string(r) + "] = %" + std::to_string(acc) + "\n";
  }
  return t + outputs + "end\n";
}

std::string error_of(const auto& call) {
  try {
    call();
  } catch (const lsjit::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("work limits: the estimate counts what differentiation and the normal equations visit") {
  const Trace t = parse(wide_ir(2, 3, 4));
  const WorkEstimate w = estimate_work(t);
  CHECK(w.residuals == 2);
  CHECK(w.tangent == 12);
  CHECK(w.nodes == t.graph.size());
  // Every node but the Var inputs and the constants depends on δ: 12 × (tangent, add, sin)
  // and, per residual, 11 × (mul, add).
  CHECK(w.dependent_nodes == 12 * 3 + 2 * 11 * 2);
  CHECK(w.forward_visits == w.dependent_nodes * 12);
  CHECK(w.reverse_visits == w.dependent_nodes * 2);
  CHECK(w.hessian_entries == 6 * 16);  // pairs v <= w of three 4-component slots
  CHECK(w.hessian_products == 6 * 16 * 2);
  // Far within every limit: it differentiates and lowers as before.
  CHECK_NOTHROW(normal_equations(differentiate(t)));
}

TEST_CASE("work limits: a wide graph is refused before its normal equations are built") {
  // 2 slots of 512: 786,432 Gauss-Newton entries, the blocks (0,0), (0,1) and (1,1) of
  // 512 × 512 (lsjit trace --stage normal_equations on such a file grew to 3-7 GB before it
  // was refused).
  const Trace t = parse(wide_ir(1, 2, 512));
  const Trace jacobian = differentiate(t);  // reverse accumulation: one residual
  const std::string message = error_of([&] { normal_equations(jacobian); });
  CHECK(message.find("cost 'wide': its Gauss-Newton block (entries) would take 786432, more than lsjit's limit of " +
                     std::to_string(kMaxNormalEquationsEntries)) == 0);
  CHECK(message.find("split the cost into smaller costs") != std::string::npos);
}

TEST_CASE("work limits: Auto differentiates in the mode that fits, and refuses when neither does") {
  // 4096 tangent components, 1 residual: forward accumulation would visit each of ~12,000
  // dependent nodes 4096 times (above the limit), reverse once: Auto builds reverse only.
  const Trace t = parse(wide_ir(1, 8, 512));
  DifferentiationReport report;
  REQUIRE_NOTHROW(differentiate(t, Accumulation::Auto, &report));
  CHECK(report.chosen == Accumulation::Reverse);
  CHECK(report.forward_ops == 0);  // never built
  CHECK(error_of([&] { differentiate(t, Accumulation::Forward); })
            .find("differentiating it by forward accumulation (node visits) would take") != std::string::npos);
  // 48 residuals of the same: both modes above the limit.
  const Trace both = parse(wide_ir(48, 8, 512));
  const WorkEstimate w = estimate_work(both);
  REQUIRE(w.forward_visits > kMaxDifferentiationVisits);
  REQUIRE(w.reverse_visits > kMaxDifferentiationVisits);
  CHECK(error_of([&] { differentiate(both); }).find("cost 'wide': differentiating it by") == 0);
}

TEST_CASE("work limits: the parser refuses more than kMaxGraphNodes nodes") {
  std::string text = "lsjit.ir 1\ncost big kind=least_squares stage=traced residuals=1\n"
                     "var x : W1 ambient=1 tangent=1\n%0 = input var x[0] : f64\n";
  text.reserve(text.size() + 40 * (kMaxGraphNodes + 1));
  for (uint64_t i = 1; i <= kMaxGraphNodes; ++i)
    text += "%" + std::to_string(i) + " = neg %" + std::to_string(i - 1) + " : f64\n";
  const std::string message = lsjit::testing::parse_error(text);
  CHECK(message.find("t.ir:" + std::to_string(kMaxGraphNodes + 4) + ":") == 0);
  CHECK(message.find("at most " + std::to_string(kMaxGraphNodes) + " nodes") != std::string::npos);
}

TEST_CASE("work limits: the parser bounds declarations and data sizes before anything is allocated") {
  // 288 bytes that once asked the code generator for 17 GB.
  const std::string big_data = "lsjit.ir 1\ncost big kind=least_squares stage=traced residuals=1\n"
                               "var x : W1 ambient=1 tangent=1\ndata d : f64 rows=65535 cols=65535\n"
                               "%0 = input var x[0] : f64\nres[0] = %0\nend\n";
  const std::string message = lsjit::testing::parse_error(big_data);
  CHECK(message.find("t.ir:4:") == 0);
  CHECK(message.find("at most 65536 data components in all") != std::string::npos);
  // 65 variable declarations: one more than a cost may have.
  std::string many = "lsjit.ir 1\ncost many kind=least_squares stage=traced residuals=1\n";
  for (int s = 0; s < 65; ++s) many += "var x" + std::to_string(s) + " : W1 ambient=1 tangent=1\n";
  const std::string slots = lsjit::testing::parse_error(many + "%0 = input var x0[0] : f64\nres[0] = %0\nend\n");
  CHECK(slots.find("t.ir:67:") == 0);
  CHECK(slots.find("at most 64 variable declarations") != std::string::npos);
}
