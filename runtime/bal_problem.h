// A BAL bundle-adjustment file as a least-squares problem (the conventions of
// docs/architecture.md, "Conventions"): one snavely_reprojection instance per observation
// (standard_costs.h), cameras as VecVar<9> and points as VecVar<3> with their 0-based
// indices as variable IDs. Nothing is held constant (BAL's gauge freedom is left to the
// damping, as Ceres' bundle_adjuster does).
#pragma once

#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/problem.h"

namespace lsjit {

struct BalLeastSquares {
  Problem problem;
  Values initial;
};

// Observations are added as one batch, so the problem has one cost group.
// With a loss, every observation is robustified by it (Ceres' bundle_adjuster uses
// HuberLoss(1.0) with --robustify).
BalLeastSquares make_bal_problem(const io::BalProblem& bal, const Loss& loss = TrivialLoss());

// Copies cameras and points from `values` into `bal` (observations unchanged). Throws
// lsjit::Error if one has no value.
void update_bal(io::BalProblem& bal, const Values& values);

}  // namespace lsjit
