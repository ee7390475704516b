#include "solve_flags.h"

#include <limits>
#include <optional>

#include "flags.h"

namespace lsjit::cli {
namespace {

constexpr double kHuge = std::numeric_limits<double>::max();
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// "cauchy:0.5" -> CauchyLoss(0.5); nullopt if it does not parse.
std::optional<Loss> parse_loss(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::optional<double> scale = parse_number(std::string_view(text).substr(colon + 1));
  if (!scale || !(*scale >= kMinLossScale && *scale <= kMaxLossScale)) return std::nullopt;
  const std::string name = text.substr(0, colon);
  for (auto make : {&HuberLoss, &SoftLOneLoss, &CauchyLoss, &ArctanLoss, &TukeyLoss}) {
    const Loss loss = make(*scale);
    if (loss_name(loss.kind) == name) return loss;
  }
  return std::nullopt;
}

}  // namespace

const char* const kSolveUsage = R"(usage: lsjit solve FILE [options]

Solves a g2o pose graph or a BAL bundle-adjustment file and prints the solver summary
(cost is 1/2 sum |r|^2). FILE may be a pipe or a FIFO, and - reads standard input.

  --format g2o|bal      the file's format (default: from its content)
  --out FILE            write the solution in the same format (a regular file or a new one;
                        never the input, never through another user's symlink)
  --plot FILE.svg       draw the solve (written after the solution; if it cannot be
                        written the solve goes on and the exit status is 1): a pose graph before (the initial poses, see
                        --init) and after (3D graphs projected on the x-y plane), or a
                        BAL problem's reprojection errors before and after (histograms);
                        and the cost per iteration
  --linear-solver NAME  auto (default: chosen from the problem's structure, and the report
                        says which and why), sparse_cholesky, dense_cholesky,
                        eigen_sparse_cholesky, cg, subgraph_cg, dense_schur, sparse_schur,
                        iterative_schur (the Schur solvers eliminate BAL's points)
  --max-iterations N    0 to 2147483647 (default 50)
  --function-tolerance X, --gradient-tolerance X, --parameter-tolerance X
                        numbers >= 0
  --initial-trust-region-radius X
                        Levenberg-Marquardt's first radius, > 0; the damping is its inverse
                        (default 1e8 for pose graphs, whose start Gauss-Newton steps suit,
                        as in g2o and GTSAM; 1e4, as Ceres, for bundle adjustment)
  --radius-growth X     after a step whose actual decrease is over 3/4 of the predicted
                        one, the radius grows at least this much, >= 1 (default 2; 1 is
                        Ceres' schedule step for step)
  --init file|chordal   the initial poses of a pose graph (g2o only): file (default) as
                        read, or chordal: rotations, then translations, from the edges by
                        two sparse linear least-squares solves, the held vertices kept
                        (rotation-first chordal relaxation, as GTSAM's InitializePose3)
  --repair-information none|block-diagonal|nearest-pd
                        what to do with a g2o edge whose information matrix is not positive
                        definite (has no Cholesky factor; some public 3D datasets have such
                        edges): none (default) stops with an error naming the edge;
                        block-diagonal zeroes its translation-rotation coupling blocks;
                        nearest-pd clamps its eigenvalues at 1e-9 times the largest. Only
                        such edges change; the report and --json count them, and a warning
                        on stderr names the first
  --loss NAME:SCALE     robustify every residual: huber, soft_l_one, cauchy, arctan or
                        tukey, with its scale in [1e-150, 1e150] (e.g. cauchy:1.0)
  --threads N           evaluation threads, 0 to 1024 (default 1; 0: all hardware threads)
  --mixed-precision auto|never|always
                        sparse_cholesky in single precision, each step refined in double to
                        a relative residual of 1e-10 (falling back to double where that
                        stalls): auto (default) where the factor is large enough to gain
  --cpu-level LEVEL     the instruction set kernels are compiled for: host (default: this
                        CPU exactly), or x86-64, x86-64-v2, x86-64-v3 or x86-64-v4 (any CPU
                        of that level runs them; for `lsjit cache export` to other machines)
  --verbose             one line per iteration
  --json                print the summary as one JSON object instead of the report
)";

std::variant<SolveFlags, FlagError> parse_solve_flags(const std::vector<std::string>& args) {
  SolveFlags f;
  CLI::App app;
  app.set_help_flag();
  app.add_flag("--help,-h", f.help);
  app.add_flag("--json", f.json);
  app.add_flag("--verbose", f.options.verbose);
  app.add_option("--format", f.format)->check([](const std::string& s) {
    return s == "g2o" || s == "bal" ? std::string() : "expected g2o or bal, not '" + printable(s) + "'";
  });
  app.add_option("--out", f.out_file)->check([](const std::string& s) {
    return s.empty() ? std::string("expected a file name, not ''") : std::string();
  });
  app.add_option("--plot", f.plot_file)->check([](const std::string& s) {
    return s.empty() ? std::string("expected a file name, not ''") : std::string();
  });
  app.add_option("--init", f.init)->check([](const std::string& s) {
    return s == "file" || s == "chordal" ? std::string() : "expected file or chordal, not '" + printable(s) + "'";
  });
  std::string solver_name, loss_text, repair_text;
  app.add_option("--repair-information", repair_text)->check([](const std::string& s) {
    return io::information_repair_from_name(s)
               ? std::string()
               : "expected none, block-diagonal or nearest-pd, not '" + printable(s) + "'";
  });
  app.add_option("--linear-solver", solver_name)->check([](const std::string& s) {
    return linear_solver_from_name(s) ? std::string()
                                      : "expected auto, sparse_cholesky, dense_cholesky, eigen_sparse_cholesky, cg, "
                                        "subgraph_cg, dense_schur, sparse_schur or iterative_schur, not '" + printable(s) + "'";
  });
  app.add_option("--loss", loss_text)->check([](const std::string& s) {
    return parse_loss(s) ? std::string()
                         : "expected NAME:SCALE with NAME huber, soft_l_one, cauchy, arctan or tukey and "
                           "SCALE in [1e-150, 1e150], not '" + printable(s) + "'";
  });
  app.add_option("--max-iterations", f.options.max_iterations)->check(integer_in(0, kIntMax));
  app.add_option("--threads", f.options.num_threads)->check(integer_in(0, kMaxThreads));
  std::string level_text;
  app.add_option("--cpu-level", level_text)->check([](const std::string& s) {
    return compiler::cpu_level_from_name(s) ? std::string()
                                            : "expected host, x86-64, x86-64-v2, x86-64-v3 or x86-64-v4, not '" +
                                                  printable(s) + "'";
  });
  std::string precision_text;
  app.add_option("--mixed-precision", precision_text)->check([](const std::string& s) {
    return s == "auto" || s == "never" || s == "always"
               ? std::string()
               : "expected auto, never or always, not '" + printable(s) + "'";
  });
  CLI::Option* radius = app.add_option("--initial-trust-region-radius", f.options.initial_trust_region_radius)
                            ->check(number_in(0, kHuge, true));
  app.add_option("--radius-growth", f.options.very_successful_radius_growth)->check(number_in(1, kHuge));
  app.add_option("--function-tolerance", f.options.function_tolerance)->check(number_in(0, kHuge));
  app.add_option("--gradient-tolerance", f.options.gradient_tolerance)->check(number_in(0, kHuge));
  app.add_option("--parameter-tolerance", f.options.parameter_tolerance)->check(number_in(0, kHuge));

  std::vector<std::string> positional;
  if (std::optional<std::string> error = parse_flags(app, args, positional)) {
    const bool unknown = error->rfind("unknown option", 0) == 0;
    return FlagError{*error, unknown};
  }
  // --help checks nothing else, and returns nothing else: options parsed beside it (even
  // ones the cross-field rules below would refuse) do not reach the caller.
  if (f.help) {
    SolveFlags help_only;
    help_only.help = true;
    return help_only;
  }
  f.initial_radius_given = radius->count() > 0;
  if (!solver_name.empty()) f.options.linear_solver = *linear_solver_from_name(solver_name);
  if (!loss_text.empty()) f.loss = *parse_loss(loss_text);
  if (!level_text.empty()) f.cpu_level = *compiler::cpu_level_from_name(level_text);
  if (precision_text == "never") f.options.mixed_precision = MixedPrecision::Never;
  if (precision_text == "always") f.options.mixed_precision = MixedPrecision::Always;
  if (!repair_text.empty()) f.repair_information = *io::information_repair_from_name(repair_text);
  if (positional.empty()) return FlagError{"one FILE expected\n", true};
  if (positional.size() > 1)
    return FlagError{"one FILE expected, got '" + printable(positional[0]) + "' and '" + printable(positional[1]) +
                     "'\n"};
  if (positional[0].empty()) return FlagError{"FILE is an empty string: expected a file name\n"};
  f.file = positional[0];
  if (std::string invalid = validate(f.options); !invalid.empty())  // cross-field rules
    return FlagError{invalid + "\n"};
  return f;
}

}  // namespace lsjit::cli
