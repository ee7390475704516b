// The normal-equation blocks of a cost, as an IR stage: Jacobian -> NormalEquations.
//
// Why: a Gauss-Newton or Levenberg-Marquardt solver needs of each cost instance only its
// contribution to the normal equations, ½‖r‖², g = Jᵀr and H = JᵀJ, which it adds into the
// global system. Computing them inside the kernel, from the residual and Jacobian values
// while they are still in registers, means a solver need not store J (R x ΣT_v doubles per
// instance) and make a second pass over it to form JᵀJ and Jᵀr; products with structural
// zeros of J are never computed, and hash-consing shares them between blocks. (The output
// is 1 + ΣT_v + Σ_{v<=w} T_v·T_w doubles per instance, which can be more than 1 + R·ΣT_v
// when R is small: it is the work, not the storage, that this saves.) Making it a stage,
// and not a loop in the code generator, lets the compiler lower it like any graph, the
// interpreter evaluate it as the reference, and the printer show it.
//
// For n variable slots with tangent dimensions T_v and residual r (R rows), the graph has
// the outputs, in this order:
//   cost             ½ Σ_i r_i²                                   (Σ in row order)
//   g[v](a)          Σ_i J[v](i, a) · r_i            v < n, a < T_v
//   H[v,w](a, b)     Σ_i J[v](i, a) · J[w](i, b)     v <= w < n, a < T_v, b < T_w
// with the H pairs in row-major order (v, then w) and each block row-major. The sums run
// over the rows i in increasing order, skipping terms whose J entry (or residual) is the
// constant 0, so the values equal the same sums computed in double from the Jacobian
// stage's values, up to the simplification rules (e.g. sqrt(x)·sqrt(x) -> x, which is off
// by a rounding) and the NaN of a skipped 0·inf. Sums with no term are the constant 0. A
// diagonal block H[v,v] is symmetric: H[v,v](b, a) is the node of H[v,v](a, b) for a < b.
//
// The residual and Jacobian nodes are copied exactly as they are (no folding or rewriting),
// so the residual's simplification assumptions are unchanged; the new product and sum nodes
// are simplified with kAssumeFinite | kIgnoreSignedZero, like the derivative nodes of
// differentiate.h. Dead code is removed, Var and Data inputs kept; a residual or Jacobian
// node can die when the rules fold it into its products (a neg, a constant).
#pragma once

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

// Jacobian -> NormalEquations. Throws std::logic_error unless `jacobian_stage` is a valid
// trace at stage jacobian; verifies its result.
Trace normal_equations(const Trace& jacobian_stage);

}  // namespace lsjit::ir
