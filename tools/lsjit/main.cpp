// lsjit: solve least-squares problems, dump traces, inspect the kernel cache, generate
// synthetic problems.
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "lsjit/common/error.h"
#include "commands.h"
#include "terminal_safe.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"
#include "lsjit/compiler/cache/kernel_cache.h"

namespace {

constexpr const char* kUsage = R"(usage: lsjit <command> [options]

commands:
  solve FILE [--out FILE] [--plot FILE.svg] [--init auto|file|chordal] [--linear-solver NAME]
             [--max-iterations N] [--threads N] [--loss NAME:SCALE]
             [--repair-information MODE] [--verbose] [--json]
                      solve a g2o pose graph or a BAL bundle adjustment problem
                      (lsjit solve --help)
  trace COST [--stage STAGE] [--mode MODE] [--vector-width N]
                      print a built-in cost at one stage (default: jacobian):
                        IR stages      traced, simplified, jacobian, normal_equations
                        machine code   llvm, optimized, asm (of the kernel for --mode:
                                       residual, residual_jacobian (default) or
                                       normal_equations)
  trace FILE.ir [--stage ...]
                      read IR text (e.g. a dumped trace), check it, and print it at a
                      stage (a traced file can be taken to any later stage). Your own
                      cost: run your program with LSJIT_DUMP_DIR=DIR, then
                      lsjit trace DIR/COST-HASH.traced.ir (lsjit trace --help)
  trace --list        list the built-in costs
  trace --op-counts   op counts of every built-in cost: residual alone, and residual +
                      Jacobian with forward and with reverse accumulation
  cache list|show|diff|stats|verify|gc|clear   inspect the kernel cache (lsjit cache help)
  generate pose-graph --dim 2|3 --poses N --loop-closures M [--noise SIGMA] [--seed S]
                      [--indefinite-edges K] [--drift D] --out FILE [--truth TRUTH]
  generate bal --cameras C --points P --observations-per-point K [--noise SIGMA]
               [--seed S] --out FILE [--truth TRUTH]
                      write a synthetic problem with a known ground truth, as g2o or BAL
                      (lsjit generate help)
  replay FILE.g2o [--json] [--plot FILE.svg]
                      add a pose graph's poses one at a time to the incremental solver
                      (GTSAM's ISAM2 replay): time per update, final cost against a batch
                      solve (lsjit replay help)
  help                show this message
)";

}  // namespace

int main(int argc, char** argv) {
  lsjit::linear::supernodal::prefer_avx512_blas();  // before any thread: it may setenv
  const lsjit::cli::TerminalSafeStreams terminal_safe;  // every byte written below is escaped as needed
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const lsjit::cli::Args args(argv + 2, argv + argc);
  try {
    if (command == "trace") return lsjit::cli::trace_command(args, std::cout, std::cerr);
    if (command == "cache") return lsjit::cli::cache_command(args, std::cout, std::cerr);
    if (command == "solve") {
      const int status = lsjit::cli::solve_command(args, std::cout, std::cerr);
      // Kernels still compiling in the background (KernelCache::Options::Tiering::Tiered)
      // finish, and reach the disk cache, before the process tears libLLVM down.
      lsjit::compiler::wait_for_background_compiles();
      return status;
    }
    if (command == "generate") return lsjit::cli::generate_command(args, std::cout, std::cerr);
    if (command == "replay") {
      const int status = lsjit::cli::replay_command(args, std::cout, std::cerr);
      lsjit::compiler::wait_for_background_compiles();
      return status;
    }
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "lsjit: unknown command '" << lsjit::printable(command) << "'\n" << kUsage;
    return 2;
  } catch (const lsjit::Error& e) {
    std::cerr << "lsjit: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    // Sizes from files and flags are checked before allocating; this is the last line of
    // defence (e.g. an input that is legal but larger than this machine's memory).
    std::cerr << "lsjit: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    // Every path ends in one line and a non-zero exit, never an abort.
    std::cerr << "lsjit: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "lsjit: an unknown error\n";
    return 1;
  }
}
