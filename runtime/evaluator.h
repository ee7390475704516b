// Evaluation of an analyzed problem at a state: the cost alone (Residual kernels), or the
// cost, gradient and Gauss–Newton matrix (NormalEquations kernels plus assembly through
// the gather lists of problem_layout.h).
//
// Work is cut into fixed chunks of instances (kChunk) and fixed groups of destination
// blocks, independent of the thread count, and partial sums are combined in chunk order,
// so every result is bit-identical for any number of threads.
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

  // Borrows layout and pool for its lifetime.
  Evaluator(const ProblemLayout& layout, ThreadPool& pool);

  // ½Σ‖r‖² (NaN or inf if any residual is not finite).
  double cost(const State& state);
  // After cost(): the first instance with a non-finite residual, as "cost 'NAME' instance
  // K (residual R = VALUE)", or "" if there is none.
  std::string first_non_finite_residual() const;

  // Cost, g = Jᵀr (tangent_dim doubles) and H = JᵀJ over the free variables (H must have
  // layout.pattern). Returns the cost.
  double normal_equations(const State& state, double* g,
                          linear::BlockSparseSymmetric& H);

 private:
  struct Task {
    uint32_t group;
    int64_t begin, end;
  };
  void run_kernel(const KernelGroup& kg, const compiler::Kernel& kernel, int64_t begin, int64_t end,
                  const State& state, double* buffer, const uint64_t* offsets,
                  size_t arrays);

  const ProblemLayout& layout_;
  ThreadPool& pool_;
  std::vector<Task> tasks_;
  std::vector<double> residual_buffer_, normal_buffer_, partial_;
};

}  // namespace lsjit::detail
