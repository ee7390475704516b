#include <cctype>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include "commands.h"
#include "flags.h"
#include "lsjit/compiler/kernel.h"
#include "lsjit/compiler/llvm/codegen.h"
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

bool parse_width(const std::string& text, uint32_t* width) {
  for (uint32_t w : {0u, 1u, 2u, 4u, 8u})
    if (text == std::to_string(w)) {
      *width = w;
      return true;
    }
  return false;
}

// The kernel mode whose graph is this IR stage.
compiler::KernelMode mode_of_stage(ir::Stage stage) {
  switch (stage) {
    case ir::Stage::Simplified: return compiler::KernelMode::Residual;
    case ir::Stage::NormalEquations: return compiler::KernelMode::NormalEquations;
    default: return compiler::KernelMode::ResidualJacobian;
  }
}

// A cost name made safe for a symbol: letters, digits and '_'.
std::string kernel_symbol_part(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

constexpr const char* kTraceUsage = R"(usage:
  lsjit trace COST [--stage STAGE] [--mode MODE] [--vector-width N]
  lsjit trace FILE.ir [--stage STAGE] [--mode MODE] [--vector-width N]
  lsjit trace --list | --op-counts

COST is a built-in cost (lsjit trace --list); FILE.ir is IR text, checked before use.
STAGE: traced, simplified, jacobian (default), normal_equations (IR), or llvm, optimized,
asm (the machine code of the kernel for MODE: residual, residual_jacobian (default) or
normal_equations). N: the kernel's vector width, 0 (the host's best), 1, 2, 4 or 8.

Your own cost. lsjit cannot run your C++ lambda from here, but your program can write its
traces: run it with LSJIT_DUMP_DIR set, and analyze() writes, per cost group,

  DIR/COST-HASH.traced.ir  .simplified.ir  .jacobian.ir  .normal_equations.ir

(COST the cost's name, HASH 12 hex digits of its structural hash; LSJIT_LOG_COMPILES=1
prints which HASH each kernel came from). Then take a dump to any later stage or to
machine code:

  LSJIT_DUMP_DIR=/tmp/traces ./my_program
  lsjit trace /tmp/traces/my_cost-0123456789ab.traced.ir --stage asm --mode normal_equations
)";

// The flags and operand of `lsjit trace`.
struct TraceArgs {
  std::string source, stage, mode_text = "residual_jacobian";
  compiler::CompileOptions options;
  bool list = false, op_counts = false;
};

// Reads the arguments into `a`; returns 0, or the exit code after a usage error.
int parse_trace_args(const Args& args, TraceArgs* a, std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--list") {
      a->list = true;
    } else if (args[i] == "--op-counts") {
      a->op_counts = true;
    } else if (args[i] == "--stage") {
      if (i + 1 >= args.size()) {
        err << "lsjit trace: --stage needs a value: traced, simplified or jacobian\n";
        return 2;
      }
      a->stage = args[++i];
    } else if (args[i] == "--mode") {
      if (i + 1 >= args.size()) {
        err << "lsjit trace: --mode needs a value: residual, residual_jacobian or "
               "normal_equations\n";
        return 2;
      }
      a->mode_text = args[++i];
    } else if (args[i] == "--vector-width") {
      if (i + 1 >= args.size() || !parse_width(args[i + 1], &a->options.vector_width)) {
        err << "lsjit trace: --vector-width needs 0 (host best), 1, 2, 4 or 8\n";
        return 2;
      }
      ++i;
    } else if (!args[i].empty() && args[i][0] == '-') {
      err << "lsjit trace: unknown option '" << printable(args[i]) << "'\n";
      return 2;
    } else if (a->source.empty()) {
      a->source = args[i];
    } else {
      err << "lsjit trace: unexpected argument '" << printable(args[i]) << "'\n";
      return 2;
    }
  }
  return 0;
}

// Splits --stage into an IR stage (`wanted`) or a machine-text stage (`machine`); returns 0,
// or the exit code after an unknown stage.
int parse_stage(const std::string& stage, std::optional<ir::Stage>* wanted,
                std::optional<compiler::TextStage>* machine, std::ostream& err) {
  if (stage == "llvm") *machine = compiler::TextStage::Llvm;
  else if (stage == "optimized") *machine = compiler::TextStage::Optimized;
  else if (stage == "asm") *machine = compiler::TextStage::Asm;
  else if (!stage.empty()) {
    *wanted = ir::stage_from_name(stage);
    if (!*wanted) {
      err << "lsjit trace: unknown stage '" << printable(stage)
          << "': expected traced, simplified, jacobian, normal_equations, llvm, optimized or "
             "asm\n";
      return 2;
    }
  }
  return 0;
}

// A built-in cost by name, else an IR text file (e.g. a dumped trace), into `trace`; returns 0,
// or the exit code after an error.
int load_trace(const std::string& source, ir::Trace* trace, std::ostream& err) {
  if (const BuiltinCost* cost = find_builtin_cost(source)) {
    *trace = cost->trace();
  } else if (std::filesystem::is_regular_file(source)) {
    // Read only up to a bound: the largest trace lsjit dumps is a few MB, and a file's size
    // must not decide how much this process allocates.
    constexpr uintmax_t kMaxIrBytes = 64u << 20;
    std::error_code size_error;
    if (const uintmax_t size = std::filesystem::file_size(source, size_error); !size_error && size > kMaxIrBytes) {
      err << "lsjit trace: '" << printable(source) << "' has " << size << " bytes: expected an IR text file of at most "
          << kMaxIrBytes << " bytes\n";
      return 1;
    }
    std::ifstream in(source, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      err << "lsjit trace: cannot read '" << printable(source) << "'\n";
      return 1;
    }
    *trace = ir::parse(text.str(), source);  // lsjit::Error names file, line and column
  } else {
    err << "lsjit trace: '" << printable(source)
        << "' is neither a built-in cost (lsjit trace --list shows them) nor an IR file\n";
    return 2;
  }
  return 0;
}

// Prints `trace` at the IR stage asked for (by default its own, or jacobian for a traced
// one), or the machine text of its kernel in `mode`; returns the exit code.
int print_stage(const ir::Trace& trace, const TraceArgs& a, compiler::KernelMode mode,
                const std::optional<ir::Stage>& wanted,
                const std::optional<compiler::TextStage>& machine, std::ostream& out,
                std::ostream& err) {
  const ir::Stage target = machine ? ir::Stage::Traced
                                   : wanted.value_or(trace.stage == ir::Stage::Traced
                                                         ? ir::Stage::Jacobian
                                                         : trace.stage);
  if (!machine && target == trace.stage) {
    out << ir::print(trace);
    return 0;
  }
  if (trace.stage != ir::Stage::Traced) {
    err << "lsjit trace: '" << printable(a.source) << "' is at stage " << ir::stage_name(trace.stage)
        << "; only a traced stage can be turned into "
        << (machine ? a.stage : std::string(ir::stage_name(target))) << "\n";
    return 1;
  }
  if (machine) {
    const ir::Trace graph = compiler::graph_for_mode(trace, mode);
    const compiler::KernelLayout layout = compiler::make_layout(graph.signature, mode);
    out << compiler::kernel_text(graph, layout, a.options,
                                 "lsjit_" + kernel_symbol_part(trace.signature.name) + "_" +
                                     std::string(compiler::mode_name(mode)),
                                 *machine);
    return 0;
  }
  out << ir::print(compiler::graph_for_mode(trace, mode_of_stage(target)));
  return 0;
}

}  // namespace

int trace_command(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    out << kTraceUsage;
    return 0;
  }
  TraceArgs a;
  if (const int status = parse_trace_args(args, &a, err)) return status;
  if (a.list) {
    for (const BuiltinCost& c : builtin_costs())
      out << std::left << std::setw(22) << c.name << c.description << "\n";
    return 0;
  }
  if (a.op_counts) {
    print_op_counts(out);
    return 0;
  }
  if (a.source.empty()) {
    err << "lsjit trace: name a built-in cost (lsjit trace --list shows them) or an IR file, such as a trace "
           "of your own cost dumped with LSJIT_DUMP_DIR (lsjit trace --help)\n";
    return 2;
  }
  const std::optional<compiler::KernelMode> mode = compiler::mode_from_name(a.mode_text);
  if (!mode) {
    err << "lsjit trace: unknown mode '" << printable(a.mode_text)
        << "': expected residual, residual_jacobian or normal_equations\n";
    return 2;
  }
  std::optional<ir::Stage> wanted;
  std::optional<compiler::TextStage> machine;
  if (const int status = parse_stage(a.stage, &wanted, &machine, err)) return status;
  ir::Trace trace;
  if (const int status = load_trace(a.source, &trace, err)) return status;
  return print_stage(trace, a, *mode, wanted, machine, out, err);
}

}  // namespace lsjit::cli
