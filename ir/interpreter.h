// The reference interpreter: evaluates any IR graph on doubles, node by node, with the
// op semantics of eval_op.h. It is the ground truth the JIT is tested against, so it is
// kept as simple as possible: no vectorization, no shortcuts.
#pragma once

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
  std::vector<double> residual;  // residual_dim
  // One row-major residual_dim x tangent block per variable slot (Ceres' layout); entries
  // without a Jacobian output are 0. Empty when the graph has no Jacobian outputs.
  std::vector<std::vector<double>> jacobian;
};

// The value of every node (booleans as 0/1). Throws lsjit::Error if an input is missing.
std::vector<double> evaluate_nodes(const Graph& graph, const InputValues& inputs);

// Residual and Jacobian blocks of a trace.
EvalResult evaluate(const Trace& trace, const InputValues& inputs);

}  // namespace lsjit::ir
