// lsjit solve FILE: read a standard problem file, solve it, print the summary, optionally
// write the solution in the same format. The flags are parsed by solve_flags.h.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>
#include <variant>
#include <vector>

#include "commands.h"
#include "flags.h"
#include "solve_flags.h"
#include "solve_plot.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/formats/input_file.h"
#include "lsjit/runtime/formats/text.h"
#include "lsjit/runtime/pose_graph_problem.h"
#include "lsjit/runtime/pose_graph_start.h"

namespace lsjit::cli {
namespace {

// An output of the run (`flag` FILE), checked before the solve as AtomicFileWriter checks
// it (text.h: a regular or new file, links only where protected_symlinks would follow
// them, a temporary file can be made beside it; the probe leaves nothing behind), and
// neither the input nor a file an earlier output (`taken`) writes. Its target is added to
// `taken`. nullopt when it passes, else the message.
std::optional<std::string> refused_output(const char* flag, const std::string& file, const io::InputFile& input,
                                          std::vector<std::filesystem::path>& taken) {
  const std::string named = std::string(flag) + " " + printable(file, std::string::npos);
  std::filesystem::path target;
  try {
    const io::detail::AtomicFileWriter probe(file);  // destroyed uncommitted: nothing written
    target = probe.target();
  } catch (const Error& e) {
    return std::string(flag) + ": " + e.what();
  }
  if (input.is_same_file(target))
    return named + ": cannot write: it is the input " + printable(input.name(), std::string::npos) +
           ", which lsjit never overwrites";
  std::error_code ec;
  for (const std::filesystem::path& other : taken)
    if (std::filesystem::weakly_canonical(target, ec) == std::filesystem::weakly_canonical(other, ec))
      return named + ": cannot write: another output of this run writes that file";
  taken.push_back(target);
  return std::nullopt;
}

// Runs `write` for the output `flag` names; on failure says which output failed and why on
// `err` and returns false. One output's failure never stops another from being written.
template <class Write>
bool write_output(const char* flag, Write&& write, std::ostream& err) {
  try {
    write();
    return true;
  } catch (const Error& e) {
    err << "lsjit solve: " << flag << ": " << e.what() << "\n";
    return false;
  }
}

// One line on `err` when the reader repaired information matrices: how many, with which
// mode, and where the first one is, so that a user who passed the flag for one file sees
// what it did to another.
void warn_repaired(const io::PoseGraph& graph, const SolveFlags& f, std::ostream& err) {
  const size_t count = graph.num_repaired_edges();
  if (count == 0) return;
  const auto first = [](const auto& edges) {
    return *std::find_if(edges.begin(), edges.end(), [](const auto& e) { return e.information_repaired; });
  };
  const auto describe = [&](const auto& e, const char* tag) {
    // The whole path (escaped, not cut): FILE:LINE is where to look.
    err << "lsjit solve: warning: " << printable(f.file, std::string::npos) << ":" << e.line << ": " << tag << " " << e.from << " -> "
        << e.to;
  };
  if (graph.dimension == 2) describe(first(graph.edges2), "EDGE_SE2");
  else describe(first(graph.edges3), "EDGE_SE3:QUAT");
  err << (count > 2   ? " and " + std::to_string(count - 1) + " more edges have"
          : count == 2 ? std::string(" and 1 more edge have")
                       : std::string(" has"))
      << " an information matrix that is not positive definite; repaired ("
      << io::information_repair_name(f.repair_information) << ")\n";
}

// What a solve leaves for the outputs: the result, and whether every output asked for was
// written.
struct SolveOutcome {
  SolveResult result;
  bool outputs_written = true;
};

// The solution first (--out), then the plot: a plot that cannot be written never costs the
// user the solution. A solve that is not usable writes no solution, and says so.
template <class WriteSolution, class WritePlot>
bool write_outputs(const SolveFlags& f, const SolveResult& r, WriteSolution&& solution, WritePlot&& plot,
                   std::ostream& err) {
  bool written = true;
  if (!f.out_file.empty()) {
    if (r.summary.usable()) written = write_output("--out", solution, err) && written;
    else err << "lsjit solve: the solve failed: no solution written to " << printable(f.out_file, std::string::npos) << "\n";
  }
  if (!f.plot_file.empty()) written = write_output("--plot", plot, err) && written;
  return written;
}

// The flags given over `defaults`, the runtime's options for the kind of problem, with the
// output settings of this run.
SolverOptions options_over(const SolveFlags& f, SolverOptions defaults) {
  SolverOptions options = f.solver_options(std::move(defaults));
  options.log = f.options.log;
  if (f.json) options.verbose = false;
  return options;
}

SolveOutcome solve_bal(const SolveFlags& f, io::InputFile&& input, const AnalyzeOptions& analyze_options,
                       std::ostream& err) {
  const std::string name = input.name();
  io::BalProblem bal = io::read_bal(std::move(input));
  BalLeastSquares p = make_bal_problem(bal, f.loss);
  const AnalyzedProblem analyzed = p.problem.analyze(analyze_options);
  SolveOutcome o{analyzed.solve(p.initial, options_over(f, SolverOptions{}))};
  o.result.summary.record_initialization("file", 0);
  o.outputs_written = write_outputs(
      f, o.result,
      [&] {
        update_bal(bal, o.result.values);
        io::write_bal(f.out_file, bal);
      },
      [&] { write_bundle_plot(f.plot_file, name, bal, analyzed, p.initial, o.result); }, err);
  return o;
}

SolveOutcome solve_pose_graph(const SolveFlags& f, io::InputFile&& input, const AnalyzeOptions& analyze_options,
                              std::ostream& err) {
  const std::string name = input.name();
  io::PoseGraph graph = io::read_g2o(std::move(input), {.repair_information = f.repair_information});
  warn_repaired(graph, f, err);
  std::optional<PoseGraphStartChoice> start = chordal_if_no_vertices(graph);
  PoseGraphProblem p = make_pose_graph_problem(graph, f.loss);
  const AnalyzedProblem analyzed = p.problem.analyze(analyze_options);
  if (!start) start = start_pose_graph(graph, p, analyzed, *pose_graph_start_from_name(f.init));
  SolveOutcome o{analyzed.solve(p.initial, options_over(f, pose_graph_solver_options()))};
  o.result.summary.record_initialization(start->used, start->seconds, start->reason);
  o.result.summary.record_information_repair(std::string(io::information_repair_name(f.repair_information)),
                                             graph.num_repaired_edges());
  const io::PoseGraph before = f.plot_file.empty() ? io::PoseGraph{} : graph;  // the plot's before panel
  o.outputs_written = write_outputs(
      f, o.result,
      [&] {
        update_poses(graph, o.result.values);
        io::write_g2o(f.out_file, graph);
      },
      [&] { write_solve_plot(f.plot_file, name, before, o.result); }, err);
  return o;
}

// Solves and writes the outputs asked for.
SolveOutcome solve_file(const SolveFlags& f, io::InputFile&& input, std::ostream& err) {
  // The process's kernel cache before the file is read: an empty one starts loading the
  // compiler meanwhile (kernel_cache.h).
  (void)compiler::default_cache();
  AnalyzeOptions analyze_options;
  analyze_options.compile.cpu_level = f.cpu_level;
  return f.format == "bal" ? solve_bal(f, std::move(input), analyze_options, err)
                           : solve_pose_graph(f, std::move(input), analyze_options, err);
}

}  // namespace

int solve_command(const Args& args, std::ostream& out, std::ostream& err) {
  std::variant<SolveFlags, FlagError> parsed = parse_solve_flags(args);
  if (const auto* error = std::get_if<FlagError>(&parsed)) {
    err << "lsjit solve: " << error->message;
    if (error->show_usage) err << kSolveUsage;
    return 2;
  }
  SolveFlags& f = std::get<SolveFlags>(parsed);
  if (f.help) {
    out << kSolveUsage;
    return 0;
  }
  io::InputFile input(f.file);  // read once: a pipe, a FIFO or "-" (standard input) too
  if (f.format.empty()) f.format = io::format_from_head(input.head());
  if (f.format.empty()) {
    err << "lsjit solve: " << printable(input.name()) << ": cannot tell the format (expected g2o VERTEX_ / EDGE_ "
        << "lines, or a BAL header of three counts); pass --format\n";
    return 1;
  }
  if (f.init == "chordal" && f.format != "g2o") {
    err << "lsjit solve: --init " << f.init << " initializes pose graphs (g2o files); " << printable(f.file)
        << " is " << f.format << "\n";
    return 2;
  }
  if (f.repair_information != io::InformationRepair::None && f.format != "g2o") {
    err << "lsjit solve: --repair-information repairs the information matrices of pose graphs (g2o files); "
        << printable(f.file) << " is " << f.format << "\n";
    return 2;
  }
  // A solution that cannot be written is refused before the solve; a plot that cannot be
  // is left out, and the solve and its solution go on.
  std::vector<std::filesystem::path> outputs;
  if (!f.out_file.empty())
    if (const std::optional<std::string> refusal = refused_output("--out", f.out_file, input, outputs)) {
      err << "lsjit solve: " << *refusal << "\n";
      return 1;
    }
  bool plot_refused = false;
  if (!f.plot_file.empty())
    if (const std::optional<std::string> refusal = refused_output("--plot", f.plot_file, input, outputs)) {
      err << "lsjit solve: " << *refusal << "; solving without the plot\n";
      f.plot_file.clear();
      plot_refused = true;
    }
  f.options.log = &out;
  const SolveOutcome outcome = solve_file(f, std::move(input), err);
  if (f.json) out << outcome.result.summary.json() << "\n";
  else out << outcome.result.summary.report();
  return outcome.result.summary.usable() && outcome.outputs_written && !plot_refused ? 0 : 1;
}

}  // namespace lsjit::cli
