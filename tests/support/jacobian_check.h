// Checks a traced cost's symbolic Jacobian against central finite differences in the
// tangent space. The finite differences evaluate the *traced* graph with the interpreter
// at δ = ±h·e_j (the traced graph still has its tangent inputs, so x ⊞ δ is exactly the
// retraction the cost was traced with); the Jacobian comes from differentiate() in each
// accumulation mode. Also checks that the residual of every stage equals the traced one,
// and that the traced trace and every stage built from it keep the invariants of verify.h.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/verify.h"

namespace lsjit::testing {

struct JacobianCheck {
  double max_rel_error = 0;     // worst |J - FD| / max(1, |FD|)
  size_t entries = 0;
};

inline double relative(double a, double b) {
  return std::abs(a - b) / std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

// Fails the current doctest case with verify()'s message unless `trace` keeps the invariants.
inline void require_valid(const ir::Trace& trace) {
  try {
    ir::verify(trace);
  } catch (const std::logic_error& e) {
    FAIL(e.what());
  }
}

// `inputs` gives vars and data (tangents are ignored). Fails the current doctest case with
// context on any mismatch above `tol`.
inline JacobianCheck check_jacobian(const ir::Trace& traced, const ir::InputValues& inputs,
                                    double tol = 1e-6, double h = 1e-6) {
  JacobianCheck result;
  require_valid(traced);
  ir::InputValues at = inputs;
  at.tangents.clear();
  for (const ir::VarSlot& v : traced.signature.vars) at.tangents.emplace_back(v.tangent, 0.0);
  const ir::EvalResult base = ir::evaluate(traced, at);
  for (double r : base.residual) REQUIRE_MESSAGE(std::isfinite(r), traced.signature.name);

  const ir::Trace simplified_trace = ir::simplify_residual(traced);
  CHECK(simplified_trace.stage == ir::Stage::Simplified);
  require_valid(simplified_trace);
  const ir::EvalResult simplified = ir::evaluate(simplified_trace, inputs);
  for (size_t i = 0; i < base.residual.size(); ++i)
    CHECK_MESSAGE(relative(simplified.residual[i], base.residual[i]) <= 1e-12,
                  traced.signature.name << " simplified residual " << i);

  for (ir::Accumulation mode :
       {ir::Accumulation::Forward, ir::Accumulation::Reverse, ir::Accumulation::Auto}) {
    const ir::Trace jac_trace = ir::differentiate(traced, mode);
    CHECK(jac_trace.stage == ir::Stage::Jacobian);
    require_valid(jac_trace);
    const ir::EvalResult jac = ir::evaluate(jac_trace, inputs);
    for (size_t i = 0; i < base.residual.size(); ++i)
      CHECK_MESSAGE(relative(jac.residual[i], base.residual[i]) <= 1e-12,
                    traced.signature.name << " residual " << i << " in the Jacobian graph");
    for (size_t s = 0; s < traced.signature.vars.size(); ++s) {
      const uint32_t k = traced.signature.vars[s].tangent;
      for (uint32_t c = 0; c < k; ++c) {
        ir::InputValues plus = at, minus = at;
        plus.tangents[s][c] = h;
        minus.tangents[s][c] = -h;
        const auto rp = ir::evaluate(traced, plus).residual;
        const auto rm = ir::evaluate(traced, minus).residual;
        for (size_t r = 0; r < base.residual.size(); ++r) {
          const double fd = (rp[r] - rm[r]) / (2 * h);
          const double j = jac.jacobian.at(s).at(r * k + c);
          const double e = relative(j, fd);
          result.max_rel_error = std::max(result.max_rel_error, e);
          ++result.entries;
          CHECK_MESSAGE(e <= tol, traced.signature.name << " J[" << s << "](" << r << "," << c
                                                        << ") = " << j << " but FD = " << fd);
        }
      }
    }
  }
  return result;
}

}  // namespace lsjit::testing
