// lsjit solve FILE: read a standard problem file, solve it, print the summary, optionally
// write the solution in the same format.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include "commands.h"
#include "solve_plot.h"
#include "lsjit/ir/error.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/pose_graph_problem.h"

namespace lsjit::cli {
namespace {

constexpr const char* kSolveUsage = R"(usage: lsjit solve FILE [options]

Solves a g2o pose graph or a BAL bundle-adjustment file and prints the solver summary
(cost is 1/2 sum |r|^2).

  --format g2o|bal      the file's format (default: from its content)
  --out FILE            write the solution in the same format
  --plot FILE.svg       draw the pose graph before and after, and the cost per iteration
                        (g2o only; 3D graphs projected on the x-y plane)
  --linear-solver NAME  sparse_cholesky (default), dense_cholesky, eigen_sparse_cholesky, cg,
                        dense_schur, sparse_schur, iterative_schur (the Schur solvers eliminate
                        BAL's points)
  --max-iterations N    (default 50)
  --function-tolerance X, --gradient-tolerance X, --parameter-tolerance X
  --initial-trust-region-radius X
                        Levenberg-Marquardt's first radius; the damping is its inverse
                        (default 1e4, as Ceres)
  --loss NAME:SCALE     robustify every residual: huber, soft_l_one, cauchy, arctan or
                        tukey, with its scale (e.g. cauchy:1.0)
  --threads N           evaluation threads (default 1; 0: all hardware threads)
  --verbose             one line per iteration
  --json                print the summary as one JSON object instead of the report
)";

std::optional<long> parse_int(const std::string& s) {
  long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(const std::string& s) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// From the first non-blank, non-comment line: "g2o" when it starts with a g2o tag, "bal"
// when it is three non-negative integers (BAL's counts), else "".
std::string detect_format(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the file");
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    if (line.compare(start, 7, "VERTEX_") == 0 || line.compare(start, 5, "EDGE_") == 0 ||
        line.compare(start, 3, "FIX") == 0)
      return "g2o";
    std::istringstream tokens(line);
    std::vector<std::string> t;
    for (std::string tok; tokens >> tok;) t.push_back(tok);
    const bool counts = t.size() == 3 && std::all_of(t.begin(), t.end(), [](const std::string& x) {
      return parse_int(x).has_value() && *parse_int(x) >= 0;
    });
    return counts ? "bal" : "";
  }
  return "";
}

// Solves and writes the solution to `out_file` (if any) in the file's format.
// "cauchy:0.5" -> CauchyLoss(0.5); nullopt if it does not parse.
std::optional<Loss> parse_loss(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const auto scale = parse_double(text.substr(colon + 1));
  if (!scale || !(*scale > 0)) return std::nullopt;
  const std::string name = text.substr(0, colon);
  for (auto make : {&HuberLoss, &SoftLOneLoss, &CauchyLoss, &ArctanLoss, &TukeyLoss}) {
    const Loss loss = make(*scale);
    if (loss_name(loss.kind) == name) return loss;
  }
  return std::nullopt;
}

SolveResult solve_file(const std::string& file, const std::string& format, const std::string& out_file,
                       const std::string& plot_file, const Loss& loss, const SolverOptions& options) {
  if (format == "bal") {
    io::BalProblem bal = io::read_bal(file);
    BalLeastSquares p = make_bal_problem(bal, loss);
    SolveResult r = p.problem.analyze().solve(p.initial, options);
    if (!out_file.empty() && r.summary.usable()) {
      update_bal(bal, r.values);
      io::write_bal(out_file, bal);
    }
    return r;
  }
  io::PoseGraph graph = io::read_g2o(file);
  PoseGraphProblem p = make_pose_graph_problem(graph, loss);
  SolveResult r = p.problem.analyze().solve(p.initial, options);
  if (!plot_file.empty()) write_solve_plot(plot_file, file, graph, r);
  if (!out_file.empty() && r.summary.usable()) {
    update_poses(graph, r.values);
    io::write_g2o(out_file, graph);
  }
  return r;
}

}  // namespace

int solve_command(const Args& args, std::ostream& out, std::ostream& err) {
  std::string file, format, out_file, plot_file;
  SolverOptions options;
  Loss loss = TrivialLoss();
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    auto bad = [&](const std::string& what) {
      err << "lsjit solve: " << a << " " << what << "\n";
      return 2;
    };
    if (a == "--help" || a == "-h") {
      out << kSolveUsage;
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--verbose") {
      options.verbose = true;
    } else if (a == "--loss") {
      const auto v = value();
      const auto parsed = v ? parse_loss(*v) : std::nullopt;
      if (!parsed) return bad("expects NAME:SCALE with NAME huber, soft_l_one, cauchy, arctan or tukey and SCALE > 0");
      loss = *parsed;
    } else if (a == "--format" || a == "--out" || a == "--plot" || a == "--linear-solver") {
      const auto v = value();
      if (!v) return bad("needs a value");
      if (a == "--format") {
        if (*v != "g2o" && *v != "bal") return bad("expects g2o or bal, not '" + *v + "'");
        format = *v;
      } else if (a == "--out") {
        out_file = *v;
      } else if (a == "--plot") {
        plot_file = *v;
      } else {
        const auto s = linear_solver_from_name(*v);
        if (!s)
          return bad("expects sparse_cholesky, dense_cholesky, eigen_sparse_cholesky, cg, dense_schur, "
                     "sparse_schur or iterative_schur, not '" + *v + "'");
        options.linear_solver = *s;
      }
    } else if (a == "--max-iterations" || a == "--threads") {
      const auto v = value();
      const auto n = v ? parse_int(*v) : std::nullopt;
      if (!n || *n < 0) return bad("expects a non-negative integer");
      (a == "--threads" ? options.num_threads : options.max_iterations) = static_cast<int>(*n);
    } else if (a == "--initial-trust-region-radius") {
      const auto v = value();
      const auto x = v ? parse_double(*v) : std::nullopt;
      if (!x || !(*x > 0) || !std::isfinite(*x)) return bad("expects a positive number");
      options.initial_trust_region_radius = *x;
    } else if (a == "--function-tolerance" || a == "--gradient-tolerance" || a == "--parameter-tolerance") {
      const auto v = value();
      const auto x = v ? parse_double(*v) : std::nullopt;
      if (!x || !(*x >= 0)) return bad("expects a non-negative number");
      if (a == "--function-tolerance") options.function_tolerance = *x;
      else if (a == "--gradient-tolerance") options.gradient_tolerance = *x;
      else options.parameter_tolerance = *x;
    } else if (!a.empty() && a[0] == '-') {
      err << "lsjit solve: unknown option " << a << "\n" << kSolveUsage;
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      err << "lsjit solve: one FILE expected, got '" << file << "' and '" << a << "'\n";
      return 2;
    }
  }
  if (file.empty()) {
    err << kSolveUsage;
    return 2;
  }
  if (format.empty()) format = detect_format(file);
  if (format.empty()) {
    err << "lsjit solve: " << file << ": cannot tell the format (expected g2o VERTEX_ / EDGE_ "
        << "lines, or a BAL header of three counts); pass --format\n";
    return 1;
  }
  if (!plot_file.empty() && format != "g2o") {
    err << "lsjit solve: --plot draws pose graphs (g2o files); " << file << " is " << format << "\n";
    return 2;
  }
  options.log = &out;
  if (json) options.verbose = false;
  const SolveResult result = solve_file(file, format, out_file, plot_file, loss, options);
  if (json) out << result.summary.json() << "\n";
  else out << result.summary.report();
  return result.summary.usable() ? 0 : 1;
}

}  // namespace lsjit::cli
