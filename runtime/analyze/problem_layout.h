// The analyzed form of a Problem (internal to runtime/): kernels per cost group, every
// referenced variable as a row of its type's parameter array, the free variables' place in
// the linear system, and the gather lists that sum per-instance normal-equation blocks into
// it. Built once by Problem::analyze() (analyze.cpp), immutable afterwards and shared by
// every solve of the AnalyzedProblem; solves keep their mutable state in an Evaluator's
// workspace and in linear solvers taken from the pool.
//
// State layout. Type t's variables, sorted by ID, are rows 0..n_t-1 of one array of
// n_t * ambient_t doubles (`TypeTable`). A cost instance reads variable slot s from row
// rows[s][i] of its slot type's array; these index arrays go to the kernels unchanged.
//
// Linear system. Free (non-constant) variables are numbered by (type name, ID); free
// variable k owns tangent components [offset_k, offset_k + tangent_k) and block k of the
// block-sparse matrix H. Each instance contributes H[v,w] (slots v <= w) to block
// (free(v), free(w)), transposed when free(v) > free(w), and both ways onto the diagonal
// when one variable fills two slots; contributions involving a constant variable are
// dropped. The gather lists keep, per destination, the sources in instance order, so sums
// are identical whatever the thread count, and however the Evaluator cuts the instances
// into waves (evaluator.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/evaluate/huge_page_allocator.h"
#include "lsjit/runtime/loss.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"
#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/supernodal_analysis.h"
#include "lsjit/runtime/values.h"

namespace lsjit::detail {

// Variable slots a cost may have (the evaluator passes kernel arguments on the stack).
inline constexpr size_t kMaxSlots = 16;

struct TypeTable {
  const VariableType* type = nullptr;
  BigVector<int64_t> ids;            // sorted; row r is ids[r]
  BigVector<int32_t> free_index;     // per row: free variable number, or -1 if constant
};

struct KernelGroup {
  std::string name;
  ir::CostKind kind = ir::CostKind::LeastSquares;
  ir::Trace traced;  // for a constraint: its augmented-Lagrangian residual
  std::shared_ptr<const compiler::Kernel> residual;  // KernelMode::Residual
  std::shared_ptr<const compiler::Kernel> normal;    // KernelMode::NormalEquations
  // Constraints only: the residual kernel of c(x) itself, and the data layout: each
  // instance's row is the user's data (user_data_stride doubles), then the multiplier λ
  // (residual_dim) and the penalty ρ (1), which solves overwrite in their own copy.
  std::shared_ptr<const compiler::Kernel> constraint;
  ir::Trace constraint_traced;  // constraints only: c(x) traced, named "NAME.constraint"
  uint32_t user_data_stride = 0;
  std::vector<double> user_data;  // constraints: the user's data alone, for `constraint`
  int64_t instances = 0;
  uint32_t residual_dim = 0;
  std::vector<uint32_t> slot_type;                 // per slot: index into ProblemLayout::types
  std::vector<BigVector<int32_t>> rows;           // [slot][instance]
  uint32_t data_stride = 0;
  BigVector<double> data;                          // [instance * data_stride + ...]
  std::vector<Loss> losses;                        // per instance, or empty: none robust
  // Per output array of `normal`: the slots (v, w) of an H[v,w] array (others unused).
  std::vector<std::pair<uint32_t, uint32_t>> hessian_slots;
  int64_t first_instance = 0;                     // of the group, across groups
  uint64_t residual_offset = 0;                    // of its residuals in the residual buffer
};

// A source of a gather: the block output array `array` of instance `instance` (numbered
// across groups in group order: group g's instance i is instance first_instance[g] + i).
// Eight bytes: there is one per block of H and segment of g an instance writes (Ladybug-49:
// 127,000), and analyze() scatters them into their destinations' lists, where each cache
// line written is a miss, so half the bytes is half the misses. analyze() refuses more than
// kMaxInstances instances; a kernel has at most kMaxOutputArrays output arrays.
struct Source {
  uint32_t instance;
  uint16_t group;
  uint8_t array;
  bool transpose;  // add the transpose (square diagonal destinations of a repeated variable,
                   // or blocks stored as (w, v))
};
static_assert(sizeof(Source) == 8);
inline constexpr int64_t kMaxInstances = std::numeric_limits<uint32_t>::max();
// The cost, a gradient segment per slot and a block per pair of slots (compiler/kernel.h).
inline constexpr size_t kMaxOutputArrays = 1 + kMaxSlots + kMaxSlots * (kMaxSlots + 1) / 2;
static_assert(kMaxOutputArrays <= std::numeric_limits<uint8_t>::max() + size_t{1});

struct FreeVariable {
  uint32_t type;   // index into ProblemLayout::types
  uint32_t row;
  uint32_t tangent;
  int64_t offset;  // first tangent component in the system
};

// What the sparse Cholesky's symbolic analysis predicts for H's pattern.
struct FactorPrediction {
  // The analysis itself, handed to the SupernodalCholesky that Auto then makes.
  std::shared_ptr<const linear::SupernodalAnalysis> analysis;
  double bytes = 0;  // panels and update workspace
  double flops = 0;  // of one numeric factorization
};

struct ProblemLayout {
  std::vector<TypeTable> types;
  std::vector<KernelGroup> groups;
  BigVector<FreeVariable> free;
  int64_t tangent_dim = 0;
  // Free variables [first_eliminated, free.size()) are those of the type the Schur solvers
  // eliminate (AnalyzeOptions::schur_elimination); free.size() when there is none.
  int64_t first_eliminated = 0;
  std::string eliminated_type;  // "" when none
  size_t residuals = 0;  // Σ instances * residual_dim
  size_t constant_variables = 0;
  // Variables set_constant() named that no cost uses: how many, and the first
  // kNamedUnusedVariables as "TYPE variable ID" (SolveSummary::warnings).
  static constexpr size_t kNamedUnusedVariables = 3;
  size_t unused_constants = 0;
  std::vector<std::string> unused_constant_names;
  // What analyze() saw that a user likely did not mean (SolveSummary::warnings).
  std::vector<std::string> analysis_warnings;
  // Whether a cost uses the variable (its type's table lists the id; ids are sorted).
  bool uses_variable(std::string_view type_name, int64_t id) const {
    return std::any_of(types.begin(), types.end(), [&](const TypeTable& t) {
      return t.type->name == type_name && std::binary_search(t.ids.begin(), t.ids.end(), id);
    });
  }

  std::shared_ptr<const linear::BlockPattern> pattern;  // of H, over the free variables
  // H gather: for stored block b (pattern order), sources h_sources[h_begin[b] ..
  // h_begin[b+1]) in instance order, each a T_row x T_col block (or its transpose; an
  // H[v,v] output is a packed upper triangle, compiler/kernel.h) added to values at
  // h_value_offset[b].
  BigVector<uint64_t> h_begin;
  BigVector<Source> h_sources;
  BigVector<uint64_t> h_value_offset;
  BigVector<uint32_t> h_rows, h_cols;  // block dimensions
  // g gather: for free variable k, g_sources[g_begin[k] .. g_begin[k+1]) (never transposed).
  BigVector<uint64_t> g_begin;
  BigVector<Source> g_sources;

  int64_t instances = 0;              // across groups
  uint64_t residual_buffer_size = 0;  // doubles

  // The cache and compile options analyze() used, for the kernels it does not make: the
  // ResidualJacobian kernels of per-instance evaluation (instance_evaluation.h), looked up
  // at first use, one per group, and kept in jacobian_kernels (under jacobian_mutex).
  compiler::KernelCache* cache = nullptr;
  compiler::CompileOptions compile;
  // The last owner of an analyzed problem waits here for the background compiles of its
  // cache (KernelCache::Options::Tiering::Tiered): a program that ends after its solve
  // then exits only when they have finished, and before libLLVM's static destructors,
  // some of which LLVM registers during a compile, after any atexit handler of lsjit's.
  ~ProblemLayout() {
    if (cache) cache->wait_for_background();
  }
  mutable std::mutex jacobian_mutex;
  mutable std::vector<std::shared_ptr<const compiler::Kernel>> jacobian_kernels;

  // analyze() measurements.
  double trace_s = 0, compile_s = 0, analyze_s = 0;
  double kernels_wall_s = 0;  // wall time of the kernel lookups (compile_s sums the kernels)
  uint64_t cache_hits = 0, cache_misses = 0, compiles = 0;
  uint64_t background_compiles = 0, recompiles = 0;  // SolveSummary's fields of those names
  uint64_t tier0_kernels = 0, linked_kernels = 0;  // of the misses and of the hits

  // Linear solvers, reused across solves so that symbolic factorizations are done once per
  // structure and solver type. take() returns one not in use (making it if needed);
  // give_back() returns it.
  // LinearSolver::Auto's prediction of the sparse Cholesky factor (linear_solver_choice.h),
  // made at the first solve that needs it.
  mutable std::mutex prediction_mutex;
  mutable std::optional<FactorPrediction> factor_prediction;

  mutable std::mutex pool_mutex;
  mutable std::vector<std::pair<lsjit::LinearSolver, std::unique_ptr<linear::LinearSolver>>> pool;
  // analysis: for SparseCholesky, a symbolic analysis of `pattern` for the solver to share;
  // null: the solver makes its own.
  std::unique_ptr<linear::LinearSolver> take_solver(
      lsjit::LinearSolver type, std::shared_ptr<const linear::SupernodalAnalysis> analysis = nullptr) const;
  void give_back(lsjit::LinearSolver type, std::unique_ptr<linear::LinearSolver> solver) const;
};

}  // namespace lsjit::detail
