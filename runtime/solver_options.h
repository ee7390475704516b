// What a solve is told (SolverOptions) and what it reports (SolveSummary).
//
// Every field of SolverOptions is a runtime input: changing any of them between solves of
// one AnalyzedProblem never traces or compiles anything (the kernel cache proves it).
// Defaults are Ceres' (Solver::Options), so that results and iteration counts compare.
//
// Cost is ½Σ‖r‖² (Ceres, GTSAM); jaxls prints Σ‖r‖².
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lsjit {

// When SparseCholesky (the supernodal one) factors in single precision and refines in
// double (linear/supernodal_cholesky.h): Never; Automatic, where its symbolic analysis
// predicts that the float factorization saves more than the refinement costs (at least
// SupernodalCholesky::kMixedPrecisionMinFlopsPerEntry flops per stored entry of the
// factor); Always (Ceres' use_mixed_precision_solves = true). Either way a solve whose
// refinement stalls falls back to double.
enum class MixedPrecision { Never, Automatic, Always };

enum class LinearSolver {
  // The default: chosen from the analyzed structure at solve(), and reported with the
  // reason in SolveSummary::linear_solver / linear_solver_reason:
  //   a variable type can be eliminated (bundle adjustment's points; AnalyzeOptions::
  //     schur_elimination) and others remain -> DenseSchur when the
  //     reduced system has at most kAutoDenseSchurMax scalars, else SparseSchur;
  //   otherwise a tangent dimension of at most kAutoDenseMax -> DenseCholesky;
  //   otherwise SparseCholesky, unless the symbolic analysis (done once per structure)
  //     predicts a factor over SolverOptions::max_direct_factor_bytes or a factorization
  //     over max_direct_factorization_flops -> SubgraphConjugateGradient.
  Auto,
  DenseCholesky,        // assembled dense matrix, Eigen LLT: small problems
  SparseCholesky,       // lsjit's supernodal Cholesky (runtime/solve/linear/supernodal_cholesky.h);
                        // symbolic analysis once per structure
  EigenSparseCholesky,  // Eigen's SimplicialLLT (AMD), always available
  ConjugateGradient,    // preconditioned CG, block-Jacobi preconditioner, inexact steps
  // preconditioned CG whose preconditioner is the sparse Cholesky factor of a sparsified
  // system (a spanning forest plus clusters; runtime/solve/linear/subgraph_cg.h): inexact steps,
  // for problems whose own factor is too large
  SubgraphConjugateGradient,
  // Schur complement solvers: eliminate the variable type AnalyzeOptions::schur_elimination
  // chose (BAL's points) and solve the reduced system (the cameras):
  DenseSchur,           // reduced system dense, Cholesky: up to a few hundred cameras
  SparseSchur,          // reduced system block-sparse, supernodal Cholesky: many cameras
  IterativeSchur,       // reduced system implicit, Schur-Jacobi PCG: large problems, inexact
};
// Auto's thresholds. A dense reduced camera system is factored in (n³/3) flops with no
// sparse bookkeeping: at 2000 scalars (~220 cameras) that is 2.7 GFlop, well under a
// Schur elimination's own work for such a problem. Below 100 scalars a dense factorization is microseconds and needs no
// symbolic analysis.
inline constexpr int64_t kAutoDenseSchurMax = 2000;
inline constexpr int64_t kAutoDenseMax = 100;

// auto, dense_cholesky, sparse_cholesky, eigen_sparse_cholesky, cg, subgraph_cg, dense_schur,
// sparse_schur, iterative_schur
std::string_view linear_solver_name(LinearSolver solver);
std::optional<LinearSolver> linear_solver_from_name(std::string_view name);

// One row of the iteration log (what verbose prints, what the callback sees).
struct IterationSummary {
  int iteration = 0;              // 0: the initial point
  double cost = 0;                // at the current (accepted) point, after this iteration
  double cost_change = 0;         // of this iteration's step; 0 if rejected
  double gradient_max_norm = 0;   // ‖g‖∞ at the current point (tangent space, unscaled)
  double step_norm = 0;           // ‖δ‖₂ of this iteration's step (tangent space)
  double relative_decrease = 0;   // actual / predicted cost decrease of the step
  double trust_region_radius = 0; // after the update; the LM damping is 1 / radius
  int linear_iterations = 0;      // CG iterations, 1 for direct solvers
  bool step_accepted = false;
  double iteration_s = 0;
  double cumulative_s = 0;        // since solve() started
};

// Constraints (cost kinds Equality, InequalityLe, InequalityGe) are solved by an augmented
// Lagrangian outer loop around Levenberg–Marquardt, ALGENCAN's rules (Andreani, Birgin,
// Martínez, Schuverdt 2007): each outer iteration minimizes the objective plus
// ρ/2‖c + λ/ρ‖² (ir/augmented_lagrangian.h) from the previous solution, then
//   multipliers  λ ← λ + ρ c (equality), λ ← max(0, λ + ρ c) (inequality c <= 0),
//                clamped to ±max_multiplier (ALGENCAN's safeguard);
//   violation    V = max |c| over equalities and max |max(c, −λ/ρ)| over inequalities
//                (λ before the update: the complementarity measure);
//   penalty      ρ ← penalty_factor·ρ when V > violation_reduction·V_previous.
// It stops when V <= violation_tolerance after an inner solve that converged.
// Multipliers and penalties are runtime data of the constraint kernels: no recompile.
//
// Inner solves floor the LM damping diagonal at inner_min_lm_diagonal (in Jacobi-scaled
// variables, where a well-determined variable's diagonal is about 1) instead of
// SolverOptions::min_lm_diagonal. Gauss–Newton drops Σ rᵢ∇²rᵢ, and a constraint such as
// x1 + x3² + 1 = 0 (HS27) has ∂c/∂x3 → 0 near its solution while ρ·c·∂²c/∂x3² does not:
// the model's curvature in x3 vanishes faster than its gradient, Marquardt's diag(H)
// damping lets x3 take huge steps, every rejection shrinks the region for all variables,
// and the solve stalls. A floor of Levenberg's kind bounds those steps.
struct ConstraintOptions {
  double initial_penalty = 10.0;
  double penalty_factor = 10.0;
  double violation_reduction = 0.5;
  double max_penalty = 1e12;
  double max_multiplier = 1e20;
  double violation_tolerance = 1e-8;
  int max_outer_iterations = 50;
  double inner_min_lm_diagonal = 0.1;
};

struct SolverOptions {
  LinearSolver linear_solver = LinearSolver::Auto;
  // Auto's budgets for a direct sparse factorization: a factor (panels and workspace) of
  // more bytes, or one factorization of more flops, makes Auto pick
  // SubgraphConjugateGradient instead. 0 bytes means half of the machine's physical memory.
  // 1e12 flops is tens of seconds per factorization on one core; a generated SE3 graph of
  // 10^5 poses, at about a quarter of that, still solves faster by the direct step than by
  // subgraph-preconditioned CG to the default tolerance (docs/benchmarks-history.md).
  double max_direct_factor_bytes = 0;
  double max_direct_factorization_flops = 1e12;

  // Levenberg–Marquardt as a trust region (Ceres' LEVENBERG_MARQUARDT): each step solves
  // (H + D/radius) δ = −g with D = diag(H) clamped to [min_lm_diagonal, max_lm_diagonal].
  double initial_trust_region_radius = 1e4;
  double max_trust_region_radius = 1e16;
  double min_trust_region_radius = 1e-32;  // below it the solve ends (no progress possible)
  double min_relative_decrease = 1e-3;     // accept a step whose actual / predicted decrease
                                           // exceeds this
  // After a very successful step (actual / predicted decrease ρ > 3/4) the radius grows by
  // at least this factor; every accepted step grows it by Nielsen's 1 / max(1/3, 1 − (2ρ −
  // 1)³) otherwise (levenberg_marquardt.h). 1 is Ceres' LEVENBERG_MARQUARDT schedule
  // exactly, step for step. 2 is the textbook trust region's doubling (Nocedal and Wright,
  // Algorithm 4.1): Nielsen's rule alone grows the radius only 1.28x at ρ = 0.8, so a
  // bundle-adjustment tail of steps near ρ = 3/4 stays damped; with 2 such a solve reaches
  // the same cost in fewer iterations, and pose graphs started at Ceres' radius take no
  // more (docs/benchmarks-history.md, "The radius after a very successful step").
  double very_successful_radius_growth = 2.0;
  double min_lm_diagonal = 1e-6;
  double max_lm_diagonal = 1e32;
  bool jacobi_scaling = true;  // solve in variables scaled by 1 / (1 + sqrt(diag H)) at
                               // the initial point, as Ceres does
  // Undamped Gauss–Newton: full steps of H δ = −g; a step that does not decrease the cost
  // ends the solve (termination NoDecrease).
  bool gauss_newton = false;

  // Termination (Ceres' meanings): |Δcost| / cost <= function_tolerance after an accepted
  // step; ‖g‖∞ <= gradient_tolerance; ‖δ‖ <= parameter_tolerance (‖x‖ + parameter_tolerance).
  double function_tolerance = 1e-6;
  double gradient_tolerance = 1e-10;
  double parameter_tolerance = 1e-8;
  int max_iterations = 50;
  double max_time_s = 1e9;  // from the start of solve(), its set-up included (as Ceres' max_solver_time_in_seconds)

  // ConjugateGradient, SubgraphConjugateGradient and IterativeSchur: per step, at most this many iterations, stopping
  // at this relative residual ‖b − A x‖ / ‖b‖ (of the reduced system for IterativeSchur).
  int max_linear_iterations = 500;
  double linear_relative_tolerance = 1e-6;

  // SparseCholesky (lsjit's supernodal one, also when Auto picks it): factor each step's
  // system in single precision and refine the solution in double to a relative residual
  // of 1e-10, falling back to a double factorization for a step whose refinement stalls
  // (or whose float factorization meets a non-positive pivot) and for the rest of the
  // solve (linear/supernodal_cholesky.h). Automatic does so
  // where the factor's symbolic analysis predicts a gain (factors with many flops per
  // stored entry; Ceres' default is off); Never keeps double; Always is Ceres'
  // use_mixed_precision_solves = true. At
  // most max_num_refinement_iterations (>= 1, Ceres' name) refinement steps per solve.
  MixedPrecision mixed_precision = MixedPrecision::Automatic;
  int max_num_refinement_iterations = 10;

  // Evaluate the normal equations (cost, gradient, Gauss-Newton matrix) at each trial point
  // rather than its cost alone, while steps are being accepted: an accepted step then needs
  // no second evaluation at its point (Ceres evaluates the cost, then the Jacobian after
  // accepting). Results are the same; the work differs. A rejected step costs two
  // normal-equation evaluations (at the trial point, then at the current point again, whose
  // H it overwrote) instead of a cost evaluation, and the trial points after it get their
  // cost alone until a step is accepted again. Worth it while a normal-equation evaluation
  // costs less than the cost evaluations of the accepted steps between two rejections: on
  // BAL problems a normal-equation evaluation costs a handful of cost evaluations, and
  // bundle-adjustment and pose-graph solves accept nearly all their steps.
  bool speculative_evaluation = true;

  // Worker threads for evaluation and the Schur solvers' per-point work: 0 uses every
  // hardware thread. Results are identical whatever the count (fixed chunks, fixed
  // summation order).
  int num_threads = 1;

  bool verbose = false;          // a Ceres-like line per iteration
  std::ostream* log = nullptr;   // where verbose goes; nullptr: std::cout
  // Called after every iteration (and for iteration 0); returning false stops the solve
  // with termination UserStopped, keeping the current point.
  std::function<bool(const IterationSummary&)> callback;

  ConstraintOptions constraints;  // used only by problems with constraint costs
};

// The most threads a solve accepts (num_threads); more would only add start-up cost and
// memory on any machine lsjit runs on, and a huge count cannot be started at all.
inline constexpr int kMaxThreads = 1024;

// "" when every field of `options` (constraints included) is in its valid range; otherwise
// a message naming the first field that is not, its value and the valid range, e.g.
// "SolverOptions::max_iterations is -1: expected an integer >= 0". solve() checks this
// before doing anything and fails (Termination::Failure) with the message, so a bad option
// never reaches the linear algebra. The ranges are Ceres' (Solver::Options::IsValid) where
// Ceres has the option.
std::string validate(const SolverOptions& options);

// One numeric option, as validate() checks it: the table docs/solving.md's option list is
// tested against, so that the documented defaults and ranges cannot drift from the code.
struct OptionRange {
  std::string name;   // "max_iterations", "constraints.initial_penalty"
  double value = 0;   // its value in the options given
  std::string range;  // what validate() accepts: "an integer from 0 to 2147483647"
};
// Every numeric field of `options` (constraints included) validate() checks, in its order.
// The cross-field rules (min <= initial <= max) are not listed.
std::vector<OptionRange> option_ranges(const SolverOptions& options);
// The one range check of a numeric option, by its name in option_ranges(): whether `value`
// lies in the range validate() holds the field to, that range as text, and whether it
// takes integers only. The CLI's flags check their values with these, so a flag and the
// field it sets cannot disagree. Each throws std::logic_error for a name not in the table.
bool option_in_range(std::string_view name, double value);
std::string option_range(std::string_view name);
bool option_is_integer(std::string_view name);


enum class Termination {
  FunctionTolerance,
  GradientTolerance,
  ParameterTolerance,
  MaxIterations,
  TimeLimit,
  UserStopped,
  NoDecrease,          // Gauss–Newton step that does not decrease the cost
  TrustRegionTooSmall, // every step rejected until the radius fell below its minimum
  Failure,             // the solve could not start (see message); values are the initial ones
};
std::string_view termination_name(Termination t);
// Converged: a tolerance was met.
bool converged(Termination t);

// One outer iteration of the augmented Lagrangian (constrained problems only).
struct OuterIteration {
  int iteration = 0;
  double objective = 0;            // ½Σ‖r‖² of the least-squares costs
  double constraint_violation = 0; // V after the inner solve (see ConstraintOptions)
  double penalty = 0;              // ρ used by the inner solve
  int inner_iterations = 0;
  Termination inner_termination = Termination::Failure;
};

struct SolveSummary {
  double initial_cost = 0;
  double final_cost = 0;
  int iterations = 0;            // iterations after the initial point, accepted or not
  int successful_steps = 0;
  int unsuccessful_steps = 0;
  int residual_evaluations = 0;  // cost alone (trial points; see speculative_evaluation)
  int normal_evaluations = 0;    // cost, gradient and Gauss-Newton matrix
  // Linear solves done in mixed precision (SolverOptions::mixed_precision), and those that
  // fell back to a double factorization.
  int mixed_precision_solves = 0;
  int mixed_precision_fallbacks = 0;
  Termination termination = Termination::Failure;
  std::string message;           // why it stopped, in words
  // What the solve accepted but a user likely did not mean: one cost added as many cost
  // objects that analyze() had to trace one by one (problem.h, "Grouping"), and (Ceres
  // refuses both) variables held constant that no cost uses, and initial values of
  // variables no cost uses (passed through to the result unchanged). One sentence each; in
  // report() and --json.
  std::vector<std::string> warnings;

  // Time split, seconds. trace_s, compile_s and kernels_wall_s are those of analyze() for
  // this problem, the same for every solve of it (cache hits make them small). compile_s
  // sums the kernels' compile (or disk load) times, which analyze() runs concurrently, so
  // it can exceed analyze_s; kernels_wall_s is the wall time analyze() waited for them.
  // residual_s is spent in residual-only evaluations
  // (trial points), jacobian_s in normal-equation evaluations (gradient, J^T J blocks),
  // their assembly and LM's Jacobi scaling of them, linear_solver_s in the linear solver.
  // setup_s is this solve's set-up before its first evaluation (Ceres' "preprocessor"):
  // the linear solver's choice and symbolic analysis, the evaluator's tables, the linear
  // solver's structures. analyze_s is analyze() in all, solve_s this solve() in all (its
  // set-up included), total_s their sum (plus initialization_s once recorded).
  double trace_s = 0, compile_s = 0, analyze_s = 0, kernels_wall_s = 0;
  double setup_s = 0, residual_s = 0, jacobian_s = 0, linear_solver_s = 0, solve_s = 0, total_s = 0;

  // How the initial values were computed, when the caller records it (solve() cannot
  // know): "" when not recorded, else a name such as "file" (as read) or "chordal"
  // (pose_graph_init.h); why, when a choice was made for the user (pose_graph_start.h:
  // "auto: initial cost ... against ...", "the file has no VERTEX lines"), else ""; and the
  // seconds it took. The report prints them when recorded.
  std::string initialization;
  std::string initialization_reason;
  double initialization_s = 0;
  // Sets the three and adds `seconds` to total_s, so that total_s stays the end-to-end time.
  void record_initialization(std::string name, double seconds, std::string reason = "");

  // Information matrices the g2o reader repaired (io::G2oReadOptions), when the caller
  // records it (solve() sees only the repaired problem): "" when not recorded, else the
  // mode's name ("none", "block-diagonal", "nearest-pd", io::information_repair_name) and
  // how many edges it changed. The report prints it when a mode other than none was used.
  std::string information_repair;
  size_t repaired_edges = 0;
  void record_information_repair(std::string mode, size_t edges);

  // Kernel cache activity of analyze() (the same for every solve of one AnalyzedProblem):
  //   cache_hits           kernels found in memory, on disk or linked into the program
  //                        (linked_kernels of them: `lsjit cache export`)
  //   cache_misses         kernels that had to be made for this problem
  //   compiles             kernels compiled to machine code for this problem: those
  //                        analyze() waited for and those compiling in a background thread
  //                        (background_compiles of them), finished or not
  //   tier0_kernels        misses that started in tier 0: with tiering each also compiles
  //                        in the background; with LSJIT_TIER=0 they stay in tier 0 and
  //                        are not compiles
  //   recompiles           misses for a cost name and mode that already had another kernel
  //                        in this cache: a captured value, the code or a shape changed
  //                        (LSJIT_EXPLAIN_CACHE_MISSES=1 says which)
  // and of this solve:
  //   tier0_evaluations    kernel calls that tier 0 answered, before machine code was ready
  //                        (a concurrent solve sharing a kernel adds its calls too)
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t compiles = 0;
  uint64_t background_compiles = 0;
  uint64_t tier0_kernels = 0;
  uint64_t recompiles = 0;
  uint64_t tier0_evaluations = 0;
  uint64_t linked_kernels = 0;

  // Problem size.
  size_t cost_groups = 0;
  size_t residual_blocks = 0;      // cost instances
  size_t residuals = 0;
  size_t variables = 0;            // referenced variables
  size_t constant_variables = 0;
  size_t tangent_dim = 0;          // of the free variables
  // The same per variable type, in the solver's order: its name ("SE3", or a Kind's such as
  // "landmark"), its tangent size, the variables of it that costs use, how many of those
  // are held constant, and whether the Schur solvers eliminate it.
  struct VariableTypeCount {
    std::string name;
    int tangent = 0;
    size_t variables = 0, constant = 0;
    bool eliminated = false;
  };
  std::vector<VariableTypeCount> variable_types;
  std::string linear_solver;        // the solver that ran (never "auto")
  std::string linear_solver_reason; // why, when Auto chose it; "" when the options named it
  int num_threads = 1;

  std::vector<IterationSummary> per_iteration;  // inner iterations, all outer iterations

  // Constrained problems: initial and final cost are the objective alone (the least-squares
  // costs); per_iteration's costs include the augmented-Lagrangian terms.
  double constraint_violation = 0;
  std::vector<OuterIteration> outer_iterations;

  bool usable() const { return termination != Termination::Failure; }
  std::string brief_report() const;  // one line
  std::string report() const;        // Ceres-like full report
  std::string json() const;          // one JSON object with the field names above
};

// The verbose table's header and one row (what solve() prints with verbose).
std::string iteration_header();
// A number for messages, %g-style with 6 significant digits ("1e-06", "3.5e-12", "0.25"):
// fixed-point formatting printed small tolerances and norms as "0.000000".
std::string significant(double value);
std::string iteration_row(const IterationSummary& it);

}  // namespace lsjit
