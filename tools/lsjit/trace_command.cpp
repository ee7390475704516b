#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include "commands.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/printer.h"
#include "lsjit/runtime/builtin_costs.h"

namespace lsjit::cli {
namespace {

// A Markdown table: ops of the residual alone and of residual + Jacobian in each
// accumulation mode, for every built-in cost (docs/ir.md quotes it).
void print_op_counts(std::ostream& out) {
  out << "| cost | residual ops | residual + J, forward | residual + J, reverse | chosen |\n"
      << "| --- | ---: | ---: | ---: | --- |\n";
  for (const BuiltinCost& c : builtin_costs()) {
    const ir::Trace traced = c.trace();
    ir::DifferentiationReport fwd, rev, chosen;
    ir::differentiate(traced, ir::Accumulation::Forward, &fwd);
    ir::differentiate(traced, ir::Accumulation::Reverse, &rev);
    ir::differentiate(traced, ir::Accumulation::Auto, &chosen);
    out << "| " << c.name << " | " << fwd.residual_ops << " | " << fwd.forward_ops << " | "
        << rev.reverse_ops << " | "
        << (chosen.chosen == ir::Accumulation::Forward ? "forward" : "reverse") << " |\n";
  }
}

}  // namespace

int trace_command(const Args& args, std::ostream& out, std::ostream& err) {
  std::string source, stage;
  bool list = false, op_counts = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--list") {
      list = true;
    } else if (args[i] == "--op-counts") {
      op_counts = true;
    } else if (args[i] == "--stage") {
      if (i + 1 >= args.size()) {
        err << "lsjit trace: --stage needs a value: traced, simplified or jacobian\n";
        return 2;
      }
      stage = args[++i];
    } else if (!args[i].empty() && args[i][0] == '-') {
      err << "lsjit trace: unknown option '" << args[i] << "'\n";
      return 2;
    } else if (source.empty()) {
      source = args[i];
    } else {
      err << "lsjit trace: unexpected argument '" << args[i] << "'\n";
      return 2;
    }
  }
  if (list) {
    for (const BuiltinCost& c : builtin_costs())
      out << std::left << std::setw(22) << c.name << c.description << "\n";
    return 0;
  }
  if (op_counts) {
    print_op_counts(out);
    return 0;
  }
  if (source.empty()) {
    err << "lsjit trace: name a built-in cost (lsjit trace --list shows them) or an IR file\n";
    return 2;
  }
  std::optional<ir::Stage> wanted;
  if (!stage.empty()) {
    wanted = ir::stage_from_name(stage);
    if (!wanted) {
      err << "lsjit trace: unknown stage '" << stage
          << "': expected traced, simplified or jacobian (llvm, optimized and asm come with "
             "the compiler)\n";
      return 2;
    }
  }

  // A built-in cost by name, else an IR text file (e.g. a dumped trace).
  ir::Trace trace;
  if (const BuiltinCost* cost = find_builtin_cost(source)) {
    trace = cost->trace();
  } else if (std::filesystem::is_regular_file(source)) {
    std::ifstream in(source, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      err << "lsjit trace: cannot read '" << source << "'\n";
      return 1;
    }
    trace = ir::parse(text.str(), source);  // lsjit::Error names file, line and column
  } else {
    err << "lsjit trace: '" << source
        << "' is neither a built-in cost (lsjit trace --list shows them) nor an IR file\n";
    return 2;
  }

  const ir::Stage target = wanted.value_or(
      trace.stage == ir::Stage::Traced ? ir::Stage::Jacobian : trace.stage);
  if (target == trace.stage) {
    out << ir::print(trace);
    return 0;
  }
  if (trace.stage != ir::Stage::Traced) {
    err << "lsjit trace: '" << source << "' is at stage " << ir::stage_name(trace.stage)
        << "; only a traced stage can be turned into " << ir::stage_name(target) << "\n";
    return 1;
  }
  out << ir::print(target == ir::Stage::Simplified ? ir::simplify_residual(trace)
                                                    : ir::differentiate(trace));
  return 0;
}

}  // namespace lsjit::cli
