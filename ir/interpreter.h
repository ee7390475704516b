// The reference interpreter: evaluates any IR graph on doubles, node by node, with the
// op semantics of eval_op.h. It is the ground truth the JIT is tested against, so it is
// kept as simple as possible: no vectorization, no shortcuts.
#pragma once

#include <cstddef>
#include <vector>

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

// Values of a trace's inputs, per slot, in the signature's order. `vars[s]` holds the
// ambient parameters of variable slot s, `data[s]` the flattened data slot s. `tangents`
// may be empty (meaning delta = 0) or hold one vector per variable slot.
struct InputValues {
  std::vector<std::vector<double>> vars;
  std::vector<std::vector<double>> data;
  std::vector<std::vector<double>> tangents;
};

struct EvalResult {
  // residual_dim values; empty at stage normal_equations, which has no residual outputs.
  std::vector<double> residual;
  // One row-major residual_dim x tangent block per variable slot (Ceres' layout); entries
  // without a Jacobian output are 0. Empty when the graph has no Jacobian outputs.
  std::vector<std::vector<double>> jacobian;

  // Stage normal_equations only (0 and empty at the other stages), entries without an
  // output being 0:
  double cost = 0;                            // ½‖r‖²
  std::vector<std::vector<double>> gradient;  // per variable slot v: J_vᵀ r, T_v values
  // Per pair of slots v <= w, in row-major pair order ((0,0), (0,1), ..., (0,n-1), (1,1),
  // ...; hessian_pair() gives the index): J_vᵀ J_w, T_v x T_w, row-major.
  std::vector<std::vector<double>> hessian;
};

// The index of the pair (v, w), v <= w < num_vars, in EvalResult::hessian.
size_t hessian_pair(size_t v, size_t w, size_t num_vars);

// The value of every node (booleans as 0/1). Throws lsjit::Error if an input is missing.
std::vector<double> evaluate_nodes(const Graph& graph, const InputValues& inputs);

// Residual and Jacobian blocks of a trace, or its normal-equation blocks.
EvalResult evaluate(const Trace& trace, const InputValues& inputs);

}  // namespace lsjit::ir
