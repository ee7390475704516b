// lsjit solve FILE: read a standard problem file, solve it, print the summary, optionally
// write the solution in the same format. The flags are parsed by solve_flags.h.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ostream>
#include <sstream>
#include <variant>
#include <vector>

#include "commands.h"
#include "flags.h"
#include "solve_flags.h"
#include "solve_plot.h"
#include "lsjit/compiler/kernel_cache.h"
#include "lsjit/ir/error.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/pose_graph_init.h"
#include "lsjit/runtime/pose_graph_problem.h"

namespace lsjit::cli {
namespace {

// From the first non-blank, non-comment line within the file's first 64 KiB: "g2o" when it
// starts with a g2o tag, "bal" when it is three non-negative integers (BAL's counts), else
// "". Only that prefix is read, so a huge or endless input (a pipe, /dev/zero) costs
// nothing here; the reader then checks the whole file.
std::string detect_format(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw Error(printable(path) + ": cannot open the file: " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(printable(path) + ": is a directory, expected a g2o or BAL file");
  }
  constexpr size_t kPrefix = 64 * 1024;
  std::string prefix(kPrefix, '\0');
  size_t got = 0;
  while (got < kPrefix) {
    const ssize_t n = ::read(fd, prefix.data() + got, kPrefix - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  prefix.resize(got);
  std::istringstream in(prefix);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    if (line.compare(start, 7, "VERTEX_") == 0 || line.compare(start, 5, "EDGE_") == 0 ||
        line.compare(start, 3, "FIX") == 0)
      return "g2o";
    std::istringstream tokens(line);
    std::vector<std::string> t;
    for (std::string tok; tokens >> tok;) t.push_back(tok);
    const bool counts = t.size() == 3 && std::all_of(t.begin(), t.end(), [](const std::string& x) {
      return std::all_of(x.begin(), x.end(), [](char c) { return c >= '0' && c <= '9'; });
    });
    return counts ? "bal" : "";
  }
  return "";
}

// Replaces the graph's poses by the initialization `init` names ("file" keeps them);
// returns the seconds it took.
double initialize_poses(io::PoseGraph& graph, const std::string& init) {
  if (init == "file") return 0;
  const auto start = std::chrono::steady_clock::now();
  initialize_chordal(graph);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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

// Solves and writes the solution to `out_file` (if any) in the file's format.
SolveResult solve_file(const SolveFlags& f, std::ostream& err) {
  // The process's kernel cache before the file is read: an empty one starts loading the
  // compiler meanwhile (kernel_cache.h).
  (void)compiler::default_cache();
  AnalyzeOptions analyze_options;
  analyze_options.compile.cpu_level = f.cpu_level;
  if (f.format == "bal") {
    io::BalProblem bal = io::read_bal(f.file);
    BalLeastSquares p = make_bal_problem(bal, f.loss);
    const AnalyzedProblem analyzed = p.problem.analyze(analyze_options);
    SolveResult r = analyzed.solve(p.initial, f.options);
    r.summary.record_initialization(f.init, 0);
    if (!f.plot_file.empty()) write_bundle_plot(f.plot_file, f.file, bal, analyzed, p.initial, r);
    if (!f.out_file.empty() && r.summary.usable()) {
      update_bal(bal, r.values);
      io::write_bal(f.out_file, bal);
    }
    return r;
  }
  io::PoseGraph graph = io::read_g2o(f.file, {.repair_information = f.repair_information});
  warn_repaired(graph, f, err);
  const double init_s = initialize_poses(graph, f.init);
  PoseGraphProblem p = make_pose_graph_problem(graph, f.loss);
  SolverOptions options = f.options;
  if (!f.initial_radius_given) options.initial_trust_region_radius = kPoseGraphInitialTrustRegionRadius;
  SolveResult r = p.problem.analyze(analyze_options).solve(p.initial, options);
  r.summary.record_initialization(f.init, init_s);
  r.summary.record_information_repair(std::string(io::information_repair_name(f.repair_information)),
                                      graph.num_repaired_edges());
  if (!f.plot_file.empty()) write_solve_plot(f.plot_file, f.file, graph, r);
  if (!f.out_file.empty() && r.summary.usable()) {
    update_poses(graph, r.values);
    io::write_g2o(f.out_file, graph);
  }
  return r;
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
  if (f.format.empty()) f.format = detect_format(f.file);
  if (f.format.empty()) {
    err << "lsjit solve: " << printable(f.file) << ": cannot tell the format (expected g2o VERTEX_ / EDGE_ "
        << "lines, or a BAL header of three counts); pass --format\n";
    return 1;
  }
  if (f.init != "file" && f.format != "g2o") {
    err << "lsjit solve: --init " << f.init << " initializes pose graphs (g2o files); " << printable(f.file)
        << " is " << f.format << "\n";
    return 2;
  }
  if (f.repair_information != io::InformationRepair::None && f.format != "g2o") {
    err << "lsjit solve: --repair-information repairs the information matrices of pose graphs (g2o files); "
        << printable(f.file) << " is " << f.format << "\n";
    return 2;
  }
  f.options.log = &out;
  if (f.json) f.options.verbose = false;
  const SolveResult result = solve_file(f, err);
  if (f.json) out << result.summary.json() << "\n";
  else out << result.summary.report();
  return result.summary.usable() ? 0 : 1;
}

}  // namespace lsjit::cli
