// The lsjit CLI, run as a separate process: what a user sees.
#include <doctest/doctest.h>

#include "../support/run_cli.h"

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/printer.h"
#include "lsjit/runtime/builtin_costs.h"

namespace {

using Run = lsjit::testing::CliRun;
using lsjit::testing::run;

}  // namespace

TEST_CASE("lsjit trace --list names every built-in cost") {
  const Run r = run("trace --list");
  CHECK(r.exit_code == 0);
  for (const auto& c : lsjit::builtin_costs()) CHECK_MESSAGE(r.out.find(c.name) != std::string::npos, c.name);
}

TEST_CASE("lsjit trace prints each stage in the text format, identical to this process's") {
  // Another process (with its own address layout) must print the same text, structural
  // hash included: nothing in the IR depends on pointers or hash-table order.
  for (const auto& c : lsjit::builtin_costs()) {
    CAPTURE(c.name);
    const lsjit::ir::Trace traced = c.trace();
    const Run t = run("trace " + c.name + " --stage traced");
    const Run s = run("trace " + c.name + " --stage simplified");
    const Run j = run("trace " + c.name);
    REQUIRE(t.exit_code == 0);
    REQUIRE(s.exit_code == 0);
    REQUIRE(j.exit_code == 0);
    CHECK(t.out == lsjit::ir::print(traced));
    CHECK(s.out == lsjit::ir::print(lsjit::ir::simplify_residual(traced)));
    CHECK(j.out == lsjit::ir::print(lsjit::ir::differentiate(traced)));
    CHECK(lsjit::ir::parse(j.out).stage == lsjit::ir::Stage::Jacobian);
  }
}

TEST_CASE("lsjit trace --op-counts prints a table row per built-in cost") {
  const Run r = run("trace --op-counts");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("| cost | residual ops |") == 0);
  for (const auto& c : lsjit::builtin_costs()) CHECK(r.out.find("| " + c.name + " |") != std::string::npos);
}

TEST_CASE("lsjit reports bad usage with exit code 2 and says what was expected") {
  Run r = run("");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("usage: lsjit") != std::string::npos);
  r = run("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("unknown command 'frobnicate'") != std::string::npos);
  r = run("trace no_such_cost");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("'no_such_cost' is neither a built-in cost") != std::string::npos);
  r = run("trace se2_between --stage llvm_bitcode");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("expected traced, simplified, jacobian, normal_equations, llvm, optimized or asm") != std::string::npos);
  r = run("trace se2_between --mode fused");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("unknown mode 'fused'") != std::string::npos);
  r = run("trace se2_between --vector-width 3");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--vector-width needs") != std::string::npos);
  r = run("trace se2_between --stage");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--stage needs a value") != std::string::npos);
  r = run("trace se2_between --bogus");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("unknown option '--bogus'") != std::string::npos);
  r = run("trace");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("name a built-in cost") != std::string::npos);
}

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = std::string(LSJIT_TEST_TMP_DIR) + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}
}  // namespace

TEST_CASE("lsjit trace reads an IR file and differentiates a traced one") {
  const lsjit::ir::Trace traced = lsjit::find_builtin_cost("se2_between")->trace();
  const std::string path = write_temp("se2_between.traced.ir", lsjit::ir::print(traced));
  Run r = run(path);
  CHECK(r.exit_code == 2);  // not a command
  r = run("trace " + path);
  CHECK(r.exit_code == 0);
  CHECK(r.out == lsjit::ir::print(lsjit::ir::differentiate(traced)));
  r = run("trace " + path + " --stage traced");
  CHECK(r.out == lsjit::ir::print(traced));
  r = run("trace " + path + " --stage simplified");
  CHECK(r.out == lsjit::ir::print(lsjit::ir::simplify_residual(traced)));

  const std::string jac = write_temp("se2_between.jacobian.ir", r.out);
  r = run("trace " + jac + " --stage jacobian");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("only a traced stage can be turned into jacobian") != std::string::npos);
}

TEST_CASE("lsjit trace on a malformed IR file names the file, line and column") {
  const std::string text = lsjit::ir::print(lsjit::find_builtin_cost("curve_fit")->trace());
  std::string broken = text;
  const size_t at = broken.find("= mul ");
  REQUIRE(at != std::string::npos);
  broken.replace(at, 6, "= mull ");
  const std::string path = write_temp("broken.ir", broken);
  const Run r = run("trace " + path);
  CHECK(r.exit_code == 1);
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  CHECK_MESSAGE(r.out.find(path + ":" + std::to_string(line) + ":") != std::string::npos, r.out);
  CHECK(r.out.find("mull") != std::string::npos);

  const Run missing = run("trace /no/such/file.ir");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out.find("neither a built-in cost") != std::string::npos);
}

TEST_CASE("lsjit trace --stage llvm|optimized|asm prints the kernel of each mode") {
  for (const std::string mode : {"residual", "residual_jacobian", "normal_equations"}) {
    CAPTURE(mode);
    const std::string symbol = "lsjit_se3_between_" + mode;
    const Run llvm = run("trace se3_between --stage llvm --mode " + mode);
    REQUIRE(llvm.exit_code == 0);
    CHECK(llvm.out.find("define") != std::string::npos);
    CHECK(llvm.out.find(symbol) != std::string::npos);
    const Run optimized = run("trace se3_between --stage optimized --mode " + mode);
    REQUIRE(optimized.exit_code == 0);
    CHECK(optimized.out.find(symbol) != std::string::npos);
    CHECK(optimized.out != llvm.out);
    // No IR passes run; the text says so, and what this stage changes (issue 19, item 14).
    CHECK(optimized.out.find("; optimized: lsjit runs no LLVM IR passes") == 0);
    CHECK(optimized.out.find(" cuts.\n") != std::string::npos);
    const Run assembly = run("trace se3_between --stage asm --mode " + mode + " --vector-width 4");
    REQUIRE(assembly.exit_code == 0);
    CHECK(assembly.out.find(symbol + ":") != std::string::npos);
    if (__builtin_cpu_supports("avx"))  // 4 lanes of double fill an AVX register
      CHECK(assembly.out.find("ymm") != std::string::npos);
  }
  const Run normal = run("trace se3_between --stage normal_equations");
  REQUIRE(normal.exit_code == 0);
  CHECK(normal.out.find("stage=normal_equations") != std::string::npos);
  CHECK(normal.out.find("H[a,b](5,5) = %") != std::string::npos);
}

// A user's own cost cannot be named on the command line; the help says how to get its trace.
TEST_CASE("lsjit trace --help says how to trace a user's own cost") {
  const Run r = run("trace --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("LSJIT_DUMP_DIR") != std::string::npos);
  CHECK(r.out.find("COST-HASH.traced.ir") != std::string::npos);
  CHECK(run("--help").out.find("LSJIT_DUMP_DIR") != std::string::npos);
  const Run bare = run("trace");
  CHECK(bare.exit_code == 2);
  CHECK(bare.out.find("LSJIT_DUMP_DIR") != std::string::npos);
}
