// `lsjit solve`'s flags: what they parse into, and the parser, apart from the solve so that
// tests and the flag fuzzer (tests/fuzz/fuzz_cli_flags.cpp) can run it alone.
#pragma once

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "lsjit/compiler/compile_options.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/loss.h"
#include "lsjit/runtime/solver_options.h"

namespace lsjit::cli {

extern const char* const kSolveUsage;

struct SolveFlags {
  bool help = false;        // --help: print kSolveUsage, nothing else is checked
  std::string file;         // the problem file (required unless help)
  std::string format;       // "g2o", "bal" or "" (detect from the content)
  std::string out_file;     // --out, "" for none
  std::string plot_file;    // --plot, "" for none
  std::string init = "auto";  // --init: "auto", "file" or "chordal" (pose_graph_start.h)
  // --repair-information: what the g2o reader does with an information matrix that has no
  // Cholesky factor (io::InformationRepair; default none: such a file is an error).
  io::InformationRepair repair_information = io::InformationRepair::None;
  Loss loss = TrivialLoss();
  // The solver flags over SolverOptions' defaults (log is left null). A solve takes
  // solver_options(defaults) instead: the flags given, over the defaults the runtime has for
  // the problem (pose_graph_solver_options() for a g2o file), so that the CLI only parses.
  SolverOptions options;
  using CopyOption = std::function<void(const SolverOptions& from, SolverOptions& to)>;
  std::vector<CopyOption> given_options;  // one per solver flag given, copying its field
  SolverOptions solver_options(SolverOptions defaults) const;
  bool json = false;
  lsjit::CpuLevel cpu_level = lsjit::CpuLevel::Host;  // --cpu-level: kernels' instruction set
};

// A usage error: the message (one or more lines, each ending in '\n') to print after
// "lsjit solve: ", and whether the usage text should follow it.
struct FlagError {
  std::string message;
  bool show_usage = false;
};

// Every value is checked against its valid range (flags.h); SolverOptions that come out of
// a successful parse pass lsjit::validate(). Never throws.
std::variant<SolveFlags, FlagError> parse_solve_flags(const std::vector<std::string>& args);

}  // namespace lsjit::cli
