#include "solve_flags.h"

#include <cctype>
#include <functional>
#include <optional>
#include <utility>

#include "flags.h"
#include "lsjit/runtime/pose_graph_start.h"

namespace lsjit::cli {
namespace {

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
                        --init) and after (3D graphs on the x-y, x-z and y-z planes), or
                        a BAL problem's reprojection errors before and after (histograms,
                        each on its own scale, with RMS and median);
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
  --init auto|file|chordal
                        the initial poses of a pose graph (g2o only): file as read;
                        chordal: rotations, then translations, from the edges by two
                        sparse linear least-squares solves, the held vertices kept
                        (rotation-first chordal relaxation, as GTSAM's InitializePose3);
                        auto (default): of the two, the start of lower cost. A file
                        without VERTEX lines starts chordally whatever is asked
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

namespace {

template <class Check>
CLI::Option* text_option(CLI::App& app, const char* flag, std::string& into, Check check) {
  return app.add_option(flag, into)->check(check);
}

// The flags and what they parse into, set up in the order of kSolveUsage's list.
class SolveFlagParser {
 public:
  SolveFlagParser() {
    app_.set_help_flag();
    app_.add_flag("--help,-h", f_.help);
    app_.add_flag("--json", f_.json);
    remember(app_.add_flag("--verbose", f_.options.verbose), &SolverOptions::verbose);
    add_file_flags();
    add_choice_flags();
    add_solver_flags();
  }
  std::variant<SolveFlags, FlagError> parse(const std::vector<std::string>& args);

 private:
  void add_file_flags();
  void add_choice_flags();
  void add_solver_flags();
  // A flag that sets a field of SolverOptions: checked by the runtime's range for the field
  // and remembered, so that solver_options() puts it over the problem's defaults when given.
  void solver_option(const char* flag, const char* field, auto SolverOptions::*member) {
    remember(app_.add_option(flag, f_.options.*member)->check(solver_option_value(field)), member);
  }
  void remember(CLI::Option* o, auto SolverOptions::*member) { solver_flags_.emplace_back(o, copy_of(member)); }
  static SolveFlags::CopyOption copy_of(auto SolverOptions::*member) {
    return [member](const SolverOptions& from, SolverOptions& to) { to.*member = from.*member; };
  }
  std::optional<FlagError> take_values(const std::vector<std::string>& positional);

  SolveFlags f_;
  CLI::App app_;
  std::string solver_name_, loss_text_, repair_text_, level_text_, precision_text_;
  std::vector<std::pair<CLI::Option*, SolveFlags::CopyOption>> solver_flags_;
};

void SolveFlagParser::add_file_flags() {
  text_option(app_, "--format", f_.format, [](const std::string& s) {
    return s == "g2o" || s == "bal" ? std::string() : "expected g2o or bal, not '" + printable(s) + "'";
  });
  text_option(app_, "--out", f_.out_file, [](const std::string& s) {
    return s.empty() ? std::string("expected a file name, not ''") : std::string();
  });
  text_option(app_, "--plot", f_.plot_file, [](const std::string& s) {
    if (s.empty()) return std::string("expected a file name, not ''");
    // The plot is SVG text: under the name of another image format it would be a file its
    // viewers cannot open. Names without such an ending (devices, pipes) are taken.
    const size_t dot = s.find_last_of("./");
    std::string ending = dot == std::string::npos || s[dot] == '/' ? std::string() : s.substr(dot + 1);
    for (char& ch : ending) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const char* image : {"png", "jpg", "jpeg", "gif", "bmp", "tif", "tiff", "webp", "pdf", "eps", "ps"})
      if (ending == image)
        return "the plot is SVG: expected a file name ending in .svg, not '" + printable(s) + "'";
    return std::string();
  });
  text_option(app_, "--init", f_.init, [](const std::string& s) {
    return pose_graph_start_from_name(s) ? std::string() : "expected auto, file or chordal, not '" + printable(s) + "'";
  });
}

void SolveFlagParser::add_choice_flags() {
  text_option(app_, "--repair-information", repair_text_, [](const std::string& s) {
    return io::information_repair_from_name(s)
               ? std::string()
               : "expected none, block-diagonal or nearest-pd, not '" + printable(s) + "'";
  });
  text_option(app_, "--linear-solver", solver_name_, [](const std::string& s) {
    return linear_solver_from_name(s) ? std::string()
                                      : "expected auto, sparse_cholesky, dense_cholesky, eigen_sparse_cholesky, cg, "
                                        "subgraph_cg, dense_schur, sparse_schur or iterative_schur, not '" + printable(s) + "'";
  });
  text_option(app_, "--loss", loss_text_, [](const std::string& s) {
    return parse_loss(s) ? std::string()
                         : "expected NAME:SCALE with NAME huber, soft_l_one, cauchy, arctan or tukey and "
                           "SCALE in [1e-150, 1e150], not '" + printable(s) + "'";
  });
  text_option(app_, "--cpu-level", level_text_, [](const std::string& s) {
    return lsjit::cpu_level_from_name(s) ? std::string()
                                         : "expected host, x86-64, x86-64-v2, x86-64-v3 or x86-64-v4, not '" +
                                               printable(s) + "'";
  });
  text_option(app_, "--mixed-precision", precision_text_, [](const std::string& s) {
    return s == "auto" || s == "never" || s == "always"
               ? std::string()
               : "expected auto, never or always, not '" + printable(s) + "'";
  });
}

void SolveFlagParser::add_solver_flags() {
  solver_option("--max-iterations", "max_iterations", &SolverOptions::max_iterations);
  solver_option("--threads", "num_threads", &SolverOptions::num_threads);
  solver_option("--initial-trust-region-radius", "initial_trust_region_radius",
                &SolverOptions::initial_trust_region_radius);
  solver_option("--radius-growth", "very_successful_radius_growth", &SolverOptions::very_successful_radius_growth);
  solver_option("--function-tolerance", "function_tolerance", &SolverOptions::function_tolerance);
  solver_option("--gradient-tolerance", "gradient_tolerance", &SolverOptions::gradient_tolerance);
  solver_option("--parameter-tolerance", "parameter_tolerance", &SolverOptions::parameter_tolerance);
}

std::variant<SolveFlags, FlagError> SolveFlagParser::parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  if (std::optional<std::string> error = parse_flags(app_, args, positional)) {
    const bool unknown = error->rfind("unknown option", 0) == 0;
    return FlagError{*error, unknown};
  }
  // --help checks nothing else, and returns nothing else: options parsed beside it (even
  // ones the cross-field rules below would refuse) do not reach the caller.
  if (f_.help) {
    SolveFlags help_only;
    help_only.help = true;
    return help_only;
  }
  if (std::optional<FlagError> error = take_values(positional)) return *error;
  if (std::string invalid = validate(f_.options); !invalid.empty())  // cross-field rules
    return FlagError{invalid + "\n"};
  return std::move(f_);
}

// The checked texts into their values, the flags given into given_options, and FILE.
std::optional<FlagError> SolveFlagParser::take_values(const std::vector<std::string>& positional) {
  for (const auto& [option, copy] : solver_flags_)
    if (option->count() > 0) f_.given_options.push_back(copy);
  if (!solver_name_.empty()) {
    f_.options.linear_solver = *linear_solver_from_name(solver_name_);
    f_.given_options.push_back(copy_of(&SolverOptions::linear_solver));
  }
  if (!precision_text_.empty()) f_.given_options.push_back(copy_of(&SolverOptions::mixed_precision));
  if (!loss_text_.empty()) f_.loss = *parse_loss(loss_text_);
  if (!level_text_.empty()) f_.cpu_level = *lsjit::cpu_level_from_name(level_text_);
  if (precision_text_ == "never") f_.options.mixed_precision = MixedPrecision::Never;
  if (precision_text_ == "always") f_.options.mixed_precision = MixedPrecision::Always;
  if (!repair_text_.empty()) f_.repair_information = *io::information_repair_from_name(repair_text_);
  if (positional.empty()) return FlagError{"one FILE expected\n", true};
  if (positional.size() > 1)
    return FlagError{"one FILE expected, got '" + printable(positional[0]) + "' and '" + printable(positional[1]) +
                     "'\n"};
  if (positional[0].empty()) return FlagError{"FILE is an empty string: expected a file name\n"};
  f_.file = positional[0];
  return std::nullopt;
}

}  // namespace

std::variant<SolveFlags, FlagError> parse_solve_flags(const std::vector<std::string>& args) {
  SolveFlagParser parser;
  return parser.parse(args);
}

SolverOptions SolveFlags::solver_options(SolverOptions defaults) const {
  for (const CopyOption& copy : given_options) copy(options, defaults);
  return defaults;
}

}  // namespace lsjit::cli
