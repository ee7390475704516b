// The child side of lsjit_bench_bal: one measured solve (or kernel timing) per process, so
// that each peak memory (VmHWM, read here) is that solver's alone and each lsjit run starts
// with no kernel in memory. Protocol in bal_bench.h.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "bal_bench.h"
#include "ceres_bal.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/builtin_costs.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/solve/linear/schur_solver.h"

namespace lsjit::bench {
namespace {

namespace fs = std::filesystem;

const std::string& arg(const ChildArgs& args, const std::string& key) {
  const auto it = args.find(key);
  if (it == args.end()) throw std::runtime_error("child argument " + key + " missing");
  return it->second;
}

// The problem named by `source`; emits its size, the time to read or generate it, and the
// resident memory after it (the floor under both solvers' peaks: process, libraries, data).
io::BalProblem load(const std::string& source) {
  const auto start = Clock::now();
  io::BalProblem bal;
  if (source.rfind("file:", 0) == 0) {
    bal = io::read_bal(source.substr(5));
  } else if (source.rfind("synthetic:", 0) == 0) {
    bal = io::generate_bal(synthetic_spec(std::atoll(source.c_str() + 10))).initial;
  } else {
    throw std::runtime_error("unknown source " + source);
  }
  emit("load_s", seconds_since(start));
  emit("cameras", static_cast<double>(bal.cameras.size()));
  emit("points", static_cast<double>(bal.points.size()));
  emit("observations", static_cast<double>(bal.observations.size()));
  emit("rss_data_mb", status_mb("VmRSS"));
  return bal;
}

compiler::KernelCache::Options cache_options(const ChildArgs& args) {
  compiler::KernelCache::Options o;
  o.directory = fs::path(arg(args, "cache"));
  o.quiet = true;
  return o;
}

void child_lsjit(const ChildArgs& args) {
  compiler::KernelCache::Options options = cache_options(args);
  // As a user's process: tiered (tier 0 while LLVM compiles) unless LSJIT_TIER says otherwise.
  const auto environment = compiler::KernelCache::Options::from_environment();
  options.tiering = environment.tiering;
  options.tier0_code = environment.tier0_code;
  compiler::KernelCache cache(options);
  const io::BalProblem bal = load(arg(args, "source"));
  const bool fixed = arg(args, "fixed") == "1";
  const double target = std::stod(arg(args, "target"));

  const auto start = Clock::now();
  BalLeastSquares p = make_bal_problem(bal);
  emit("build_s", seconds_since(start));
  AnalyzeOptions analyze_options;
  analyze_options.cache = &cache;
  // Time to the target runs from here, as Ceres' runs from just before ceres::Solve: it
  // includes analyze() and solve()'s own setup (evaluator, linear solver) before LM starts.
  const auto analyze_start = Clock::now();
  const AnalyzedProblem analyzed = p.problem.analyze(analyze_options);

  SolverOptions o;
  o.linear_solver = *linear_solver_from_name(arg(args, "solver"));
  o.linear_relative_tolerance = std::stod(arg(args, "tolerance"));
  o.max_iterations = std::stoi(arg(args, "max_iterations"));
  o.num_threads = 1;
  if (fixed) o.function_tolerance = o.gradient_tolerance = o.parameter_tolerance = 0;
  int target_iteration = -1;
  double target_s = 0;
  o.callback = [&](const IterationSummary& it) {
    if (target_iteration < 0 && it.cost <= target) {
      target_iteration = it.iteration;
      target_s = seconds_since(analyze_start);
    }
    return fixed || target_iteration < 0;
  };
  const SolveSummary s = analyzed.solve(p.initial, o).summary;
  if (!s.usable()) throw std::runtime_error("lsjit: " + s.message);

  double iterations_s = 0;
  int linear_iterations = 0;
  for (const IterationSummary& it : s.per_iteration) {
    if (it.iteration == 0) continue;
    iterations_s += it.iteration_s;
    linear_iterations += it.linear_iterations;
  }
  emit("trace_s", s.trace_s);
  emit("compile_s", s.compile_s);
  emit("analyze_s", s.analyze_s);
  emit("residual_s", s.residual_s);
  emit("jacobian_s", s.jacobian_s);
  emit("linear_solver_s", s.linear_solver_s);
  emit("setup_s", s.setup_s);
  emit("solve_s", s.solve_s);
  emit("total_s", s.total_s);
  emit("iterations_s", iterations_s);
  emit("to_first_iteration_s", lsjit::bench::to_first_iteration_s(s));
  emit("iterations", s.iterations);
  emit("successful_steps", s.successful_steps);
  emit("normal_evaluations", s.normal_evaluations);
  emit("linear_iterations", linear_iterations);
  emit("initial_cost", s.initial_cost);
  emit("final_cost", s.final_cost);
  emit("target_iteration", target_iteration);
  emit("target_s", target_s);
  cache.wait_for_background();  // tiered compiles finish after the solve; count them
  emit("compiles", static_cast<double>(cache.stats().compiles));
  emit("cache_hits", static_cast<double>(s.cache_hits));
  emit("peak_mb", status_mb("VmHWM"));
}

void child_ceres(const ChildArgs& args) {
  io::BalProblem bal = load(arg(args, "source"));
  CeresBalInput in;
  for (const auto& o : bal.observations) {
    in.camera_index.push_back(o.camera);
    in.point_index.push_back(o.point);
    in.xy.insert(in.xy.end(), {o.xy(0), o.xy(1)});
  }
  for (const auto& c : bal.cameras) in.cameras.insert(in.cameras.end(), c.data(), c.data() + 9);
  for (const auto& x : bal.points) in.points.insert(in.points.end(), x.data(), x.data() + 3);
  bal = io::BalProblem();  // Ceres works on `in`; what it needs beyond is its own
  CeresBalOptions options;
  options.linear_solver = arg(args, "solver");
  options.max_iterations = std::stoi(arg(args, "max_iterations"));
  options.tolerances = arg(args, "fixed") != "1";
  options.target_cost = std::stod(arg(args, "target"));
  const CeresBalResult r = solve_ceres_bal(in, options);
  emit("build_s", r.build_s);
  emit("preprocessor_s", r.preprocessor_s);
  emit("residual_s", r.residual_s);
  emit("jacobian_s", r.jacobian_s);
  emit("linear_solver_s", r.linear_solver_s);
  emit("minimizer_s", r.minimizer_s);
  emit("total_s", r.total_s);
  emit("iterations_s", r.iterations_s);
  emit("iterations", r.iterations);
  emit("successful_steps", r.successful_steps);
  emit("linear_solves", r.linear_solves);
  emit("linear_iterations", r.linear_iterations);
  emit("residual_evaluations", r.residual_evaluations);
  emit("jacobian_evaluations", r.jacobian_evaluations);
  emit("initial_cost", r.initial_cost);
  emit("final_cost", r.final_cost);
  emit("eliminated_blocks", r.eliminated_blocks);
  emit("schur_2_3_9", r.schur_structure == "2,3,9");
  emit("target_iteration", r.target_iteration);
  emit("target_s", r.target_s);
  emit("peak_mb", status_mb("VmHWM"));
}

// The normal-equations (and residual) kernel of the Snavely cost alone, over every
// observation, in waves of 16,384 instances into one reused buffer as the solver's
// evaluator runs it (runtime/evaluate/evaluator.h), without the assembly of H and g: the kernel's
// share of jacobian_s. Median of `repeats` after one warm-up. Same cost, mode and compile
// options as analyze(), so a warm cache serves the very kernel the solves run
// (kernel_from_disk says so).
void child_kernel(const ChildArgs& args) {
  compiler::KernelCache cache(cache_options(args));
  const io::BalProblem bal = load(arg(args, "source"));
  const int repeats = std::max(1, std::stoi(arg(args, "repeats")));
  const int64_t n = static_cast<int64_t>(bal.observations.size());
  std::vector<int32_t> cam(n), pt(n);
  std::vector<double> cameras, points;
  for (const auto& c : bal.cameras) cameras.insert(cameras.end(), c.data(), c.data() + 9);
  for (const auto& x : bal.points) points.insert(points.end(), x.data(), x.data() + 3);
  for (int64_t i = 0; i < n; ++i) {
    cam[i] = bal.observations[i].camera;
    pt[i] = bal.observations[i].point;
  }
  const ir::Trace trace = find_builtin_cost("snavely_reprojection")->trace();

  auto time_kernel = [&](compiler::KernelMode mode, const char* key) {
    const std::shared_ptr<const compiler::Kernel> kernel = cache.get(trace, mode, compiler::CompileOptions{});
    const compiler::KernelLayout& layout = kernel->layout;
    std::vector<double> data(n * layout.data_stride);
    for (int64_t i = 0; i < n; ++i)
      for (int c = 0; c < 2; ++c) data[i * layout.data_stride + layout.data_offset[0] + c] = bal.observations[i].xy(c);
    // Waves as the Evaluator cuts them (evaluator.h): whole chunks of 256 instances in about
    // 1 MB of output, so that the kernel writes into cache as it does inside a solve.
    uint64_t per_instance = 0;
    for (const compiler::OutputArray& a : layout.outputs) per_instance += a.per_instance;
    const int64_t kWave = std::max<int64_t>(1, static_cast<int64_t>((1 << 20) / (8 * per_instance)) / 256) * 256;
    std::vector<std::vector<double>> outputs;
    std::vector<double*> output_ptrs;
    for (const compiler::OutputArray& a : layout.outputs) outputs.emplace_back(kWave * a.per_instance);
    for (auto& o : outputs) output_ptrs.push_back(o.data());
    const compiler::ScatterTables scatter = compiler::contiguous_scatter(layout, output_ptrs.data(), kWave);
    auto run = [&] {
      for (int64_t b = 0; b < n; b += kWave) {
        const int32_t* indices[2] = {cam.data() + b, pt.data() + b};
        const double* values[2] = {cameras.data(), points.data()};
        compiler::KernelArgs a;
        a.begin = 0;
        a.end = std::min(kWave, n - b);
        a.indices = indices;
        a.values = values;
        a.data = data.data() + b * layout.data_stride;
        a.outputs = output_ptrs.data();
        a.scatter = scatter.pointers.data();
        (*kernel)(a);
      }
    };
    run();
    std::vector<double> t;
    for (int r = 0; r < repeats; ++r) {
      const auto start = Clock::now();
      run();
      t.push_back(seconds_since(start));
    }
    std::sort(t.begin(), t.end());
    emit(key, t[t.size() / 2]);
    emit((std::string(key) + "_from_disk").c_str(), kernel->source == compiler::KernelSource::Disk);
  };
  time_kernel(compiler::KernelMode::NormalEquations, "normal_kernel_s");
  time_kernel(compiler::KernelMode::Residual, "residual_kernel_s");
}

// One Schur linear solve alone, as LM's first iteration solves it for iterative_schur: H
// and g at the file's values, Jacobi-scaled, damping diag(H) / 10^4, the points eliminated.
// (For the direct solvers LM now passes H unscaled with the damping carried back, the same
// system up to rounding; the scaled one here times the same work.)
// Median of `repeats` solves after one warm-up, one thread: the linear_solver_s share of a
// solve without the LM around it, steady enough to compare two builds of a Schur kernel.
void child_schur(const ChildArgs& args) {
  compiler::KernelCache cache(cache_options(args));
  const io::BalProblem bal = load(arg(args, "source"));
  const int repeats = std::max(1, std::stoi(arg(args, "repeats")));
  BalLeastSquares p = make_bal_problem(bal);
  AnalyzeOptions analyze_options;
  analyze_options.cache = &cache;
  const AnalyzedProblem analyzed = p.problem.analyze(analyze_options);
  const size_t n = analyzed.tangent_dim();
  std::vector<double> g(n);
  linear::BlockSparseSymmetric H = analyzed.gauss_newton_matrix(p.initial, g.data());
  std::vector<double> diag(n), scale(n), shift(n), x(n);
  H.diagonal(diag.data());
  for (size_t i = 0; i < n; ++i) scale[i] = 1.0 / (1.0 + std::sqrt(std::max(diag[i], 0.0)));
  const linear::BlockPattern& pattern = H.pattern();
  for (int r = 0; r < pattern.num_blocks(); ++r)
    for (int64_t k = pattern.row_begin(r); k < pattern.row_end(r); ++k) {
      const int c = pattern.col(k);
      double* block = H.values().data() + pattern.offset(k);
      for (int a = 0; a < pattern.block_size(r); ++a)
        for (int b = 0; b < pattern.block_size(c); ++b)
          block[a * pattern.block_size(c) + b] *=
              scale[pattern.scalar_offset(r) + a] * scale[pattern.scalar_offset(c) + b];
    }
  H.diagonal(diag.data());
  for (size_t i = 0; i < n; ++i) {
    shift[i] = std::clamp(diag[i], 1e-6, 1e32) / 1e4;
    g[i] = -g[i] * scale[i];
  }
  // free_variables() orders by type name: the cameras (tangent 9), then the points (3).
  int first_point = 0;
  for (const AnalyzedProblem::FreeVariable& v : analyzed.free_variables()) {
    if (v.tangent != 9) break;
    ++first_point;
  }
  if (first_point != static_cast<int>(bal.cameras.size()))
    throw std::runtime_error("schur child: the cameras are not the first free variables");
  const std::string& name = arg(args, "solver");
  const lsjit::LinearSolver type = name == "dense_schur"    ? lsjit::LinearSolver::DenseSchur
                                        : name == "sparse_schur" ? lsjit::LinearSolver::SparseSchur
                                                                 : lsjit::LinearSolver::IterativeSchur;
  const std::unique_ptr<linear::LinearSolver> solver =
      linear::make_schur_solver(type, H.shared_pattern(), first_point);
  linear::LinearSolverOptions o;
  o.cg_relative_tolerance = std::stod(arg(args, "tolerance"));
  std::vector<double> t;
  for (int r = 0; r <= repeats; ++r) {
    const auto start = Clock::now();
    const linear::LinearSolveSummary s = solver->solve(H, shift.data(), g.data(), x.data(), o);
    if (!s.ok) throw std::runtime_error("schur solve failed: " + s.message);
    if (r > 0) t.push_back(seconds_since(start));
  }
  std::sort(t.begin(), t.end());
  emit("schur_solve_s", t[t.size() / 2]);
  emit("schur_solve_min_s", t.front());
  double norm = 0;
  for (double v : x) norm += v * v;
  emit("step_norm", std::sqrt(norm));
}

}  // namespace

io::BalSpec synthetic_spec(int64_t observations) {
  io::BalSpec spec;
  spec.observations_per_point = 4;
  spec.cameras = static_cast<int32_t>(std::max<int64_t>(8, std::llround(std::sqrt(double(observations)) / 4)));
  spec.points = static_cast<int32_t>(observations / spec.observations_per_point);
  return spec;
}

int child_main(const std::string& kind, const ChildArgs& args) {
  // As the CLI does; not for Ceres' children, so that Ceres runs in its users' environment.
  if (kind != "ceres") linear::supernodal::prefer_avx512_blas();
  try {
    if (kind == "lsjit") child_lsjit(args);
    else if (kind == "ceres") child_ceres(args);
    else if (kind == "kernel") child_kernel(args);
    else if (kind == "schur") child_schur(args);
    else throw std::runtime_error("unknown child kind " + kind);
  } catch (const std::exception& e) {
    std::cerr << "lsjit_bench_bal --child " << kind << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

Record run_child(const std::string& kind, const ChildArgs& args) {
  std::vector<std::string> argv = {"--child", kind};
  for (const auto& [k, v] : args) argv.push_back(k + "=" + v);
  return run_self(argv);
}

}  // namespace lsjit::bench
