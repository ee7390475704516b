// Symbolic differentiation in the tangent space, and the two passes that turn a traced
// cost into the graphs the compiler lowers.
//
// A traced cost computes r(x ⊞ δ): its variables enter through Var inputs (x) and Tangent
// inputs (δ), combined by each variable type's retraction at trace time. The Jacobian of
// r with respect to variable slot s in its tangent space is dr/dδ_s at δ = 0. This pass
// differentiates the graph in δ, adds the Jacobian entries as outputs J[s](row, col) next
// to the residual (sharing every common subexpression in one graph), then substitutes
// δ = 0, simplifies and removes dead code, so no δ remains.
//
// Simplification assumptions (see simplify_rules.h): the residual's own nodes are
// simplified only by rules exact in IEEE 754. Nodes that depended on δ, and all
// derivative nodes, are simplified assuming finite values and ignoring the sign of zero:
// at δ = 0 the retraction is the identity, and terms like sin(0)·f must vanish for the
// Jacobian to be the plain expression it is mathematically. This differs from evaluating
// the unsimplified graph only where that graph would produce NaN/inf or a -0.
#pragma once

#include <cstddef>

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

enum class Accumulation { Auto, Forward, Reverse };

struct DifferentiationReport {
  Accumulation chosen = Accumulation::Forward;
  size_t forward_ops = 0;  // op count of the final graph with forward accumulation
  size_t reverse_ops = 0;  // ... with reverse accumulation (0 if not built)
  size_t residual_ops = 0; // op count of the residual alone (the Simplified stage)
};

// Traced -> Simplified: the residual at δ = 0, simplified, dead code removed.
Trace simplify_residual(const Trace& traced);

// Traced -> Jacobian: residual and tangent-space Jacobian at δ = 0 in one graph.
//
// Accumulation::Auto builds both forward and reverse accumulation and keeps the graph with
// fewer ops (forward on a tie). Why not a rule such as "forward when the tangent dimension
// is below the residual dimension": the textbook counts assume dense dependence, but a
// residual often reads only some variables (a between cost's rotation rows ignore
// translations) and hash-consing shares work across rows and directions, so the only
// reliable count is the one of the simplified graphs themselves. Building both costs
// milliseconds on the largest built-in costs, which a cold solve waits for. Running the
// reverse build on a second thread is slower, not faster; a likely reason is the second
// thread's fresh malloc arena, first touched a page fault at a time.
Trace differentiate(const Trace& traced, Accumulation mode = Accumulation::Auto,
                    DifferentiationReport* report = nullptr);

}  // namespace lsjit::ir
