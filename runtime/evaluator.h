// Evaluation of an analyzed problem at a state: the cost alone (Residual kernels), or the
// cost, gradient and Gauss–Newton matrix (NormalEquations kernels plus assembly through
// the gather lists of problem_layout.h).
//
// The normal-equation kernels write per-instance blocks (for BAL ~130 doubles an
// instance), so instances are taken in waves of kWave: a wave's kernels fill one buffer,
// then every destination block adds the wave's sources to itself, in instance order. Memory
// is one wave's buffer, whatever the problem size. Work inside a wave is cut into fixed
// chunks of kChunk instances and fixed groups of destinations, independent of the thread
// count; each destination's sum is taken in instance order across waves and partial cost
// sums are combined in chunk order, so every result is bit-identical for any number of
// threads (and equal to a single wave's).
//
// Robust losses (loss.h) are applied here, per instance, to the kernels' outputs: the
// cost sums ½ρ(s) and the assembly adds ρ'·g and ρ'·(H − β g_v g_wᵀ).
//
// State: per variable type t, state[t] holds the rows of `ambient` doubles in the row
// order of ProblemLayout::types[t].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lsjit/runtime/linear/block_sparse.h"
#include "lsjit/runtime/problem_layout.h"
#include "lsjit/runtime/thread_pool.h"

namespace lsjit::detail {

using State = std::vector<std::vector<double>>;

class Evaluator {
 public:
  static constexpr int64_t kChunk = 256;
  static constexpr int64_t kWave = 64 * kChunk;

  // Borrows layout and pool for its lifetime.
  Evaluator(const ProblemLayout& layout, ThreadPool& pool);

  // ½Σ‖r‖² (NaN or inf if any residual is not finite), constraints' augmented-Lagrangian
  // terms included.
  double cost(const State& state);
  // The same over the least-squares groups only: the objective of a constrained problem.
  double objective(const State& state);
  // Constraint group `group`'s c(x), residual_dim values per instance (its constraint kernel).
  void constraint_values(const State& state, uint32_t group, double* c);
  // Runs group `group`'s kernels on `data` (same layout as KernelGroup::data; borrowed)
  // instead of the group's own: how a solve passes its multipliers and penalties.
  void set_group_data(uint32_t group, const double* data) { data_[group] = data; }
  // After cost(): the first instance with a non-finite residual, as "cost 'NAME' instance
  // K (residual R = VALUE)", or "" if there is none.
  std::string first_non_finite_residual() const;

  // Cost, g = Jᵀr (tangent_dim doubles) and H = JᵀJ over the free variables (H must have
  // layout.pattern). Returns the cost.
  double normal_equations(const State& state, double* g, linear::BlockSparseSymmetric& H);

 private:
  struct Task {  // instances [begin, end) of one group
    uint32_t group;
    int64_t begin, end;
  };
  struct Wave {
    int64_t begin, end;                 // its instances, across groups
    size_t first_task, last_task;       // its tasks, [first, last)
    std::vector<int64_t> group_begin;   // per group: first local instance in the wave
    std::vector<std::vector<uint64_t>> array_base;  // per group, per output array: offset
                                                    // of its block in the wave buffer
  };
  void run_kernel(uint32_t group, const compiler::Kernel& kernel, int64_t begin, int64_t end,
                  int64_t shift, const State& state, double* const* outputs);
  double residual_cost(const State& state, bool constraints);
  const double* source(const Wave& wave, const Source& s) const;
  const double* source(const Wave& wave, const Source& s, uint32_t array) const;

  const ProblemLayout& layout_;
  ThreadPool& pool_;
  std::vector<Task> residual_tasks_, normal_tasks_;
  std::vector<const double*> data_;  // per group
  std::vector<Wave> waves_;
  std::vector<std::vector<uint32_t>> per_instance_;  // per group, per output array
  std::vector<double> residual_buffer_, wave_buffer_, partial_;
  std::vector<detail::Correction> corrections_;  // per instance of the current wave
  std::vector<uint64_t> h_cursor_, g_cursor_;
};

}  // namespace lsjit::detail
