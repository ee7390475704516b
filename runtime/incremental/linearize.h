// Linearizing cost instances for the incremental factor: each instance's NormalEquations
// kernel outputs at the linearization point θ (the same kernels a batch solve runs, on a
// compact batch of the chosen instances), with its robust loss's correction applied, as one
// dense linear factor over its free variables.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "lsjit/runtime/incremental/incremental_state.h"
#include "lsjit/runtime/problem.h"

namespace lsjit::detail {

// One instance's linear factor: its distinct free variables (factor columns) and the full
// symmetric H (n x n, column-major) and g (n) over their tangents, n = Σ dims, with
// H = ρ'(JᵀJ − β g gᵀ) and g = ρ' Jᵀr (loss.h). `columns` is empty when every variable of
// the instance is constant.
struct LinearizedInstance {
  std::vector<int32_t> columns;
  std::vector<double> H, g;
};

// Linearizes instances `instances` of cost type `kind` at state's θ, calling `use` with each
// instance number and its linear factor, in order.
void linearize(const IncrementalState& state, uint32_t kind, std::span<const int32_t> instances,
               const std::function<void(int32_t, const LinearizedInstance&)>& use);

// Whether every instance of `group` (of cost type `kind`) linearizes to finite numbers at
// `params` (per slot: the instances' parameters one after another, ambient doubles each):
// its NormalEquations kernel's cost, gradient and blocks. Returns the first instance that
// does not, or -1. What update() checks before it changes anything; the linearization
// itself then gives the same numbers.
int64_t first_non_finite(const CostType& kind, const CostGroup& group, const std::vector<std::vector<double>>& params);

// ½ Σ ρ(‖r‖²) of the live instances of every cost type, with the variables' parameters
// taken from `values` (each type's rows in `rows_of(type)` order); throws lsjit::Error
// naming a variable `values` lacks.
double total_cost(const IncrementalState& state, const Values& values);

}  // namespace lsjit::detail
