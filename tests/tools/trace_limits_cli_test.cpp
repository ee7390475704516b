// lsjit trace on IR files whose lowering would exhaust the machine (issue 42: a 128 KB
// file grew to 6.9 GB and died on "LLVM ERROR: out of memory"): refused at once with a
// message naming the cost and the limit, at every stage and mode, never LLVM's fatal
// error handler.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/run_cli.h"
#include "../support/scratch_files.h"

namespace {

namespace fs = std::filesystem;

// One residual, the sum over 2 × 512 components of x_i + δ_i: 128 KB of IR text.
std::string wide_linear_ir() {
  std::string t = "lsjit.ir 1\ncost wide_1x2x512 kind=least_squares stage=traced residuals=1\n"
                  "var v0 : W512 ambient=512 tangent=512\nvar v1 : W512 ambient=512 tangent=512\n";
  int id = 0, acc = -1;
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < 512; ++i) {
      const std::string at = "v" + std::to_string(s) + "[" + std::to_string(i) + "]";
      t += "%" + std::to_string(id) + " = input var " + at + " : f64\n";
      t += "%" + std::to_string(id + 1) + " = input tangent " + at + " : f64\n";
      t += "%" + std::to_string(id + 2) + " = add %" + std::to_string(id) + " %" + std::to_string(id + 1) + " : f64\n";
      id += 3;
      if (acc >= 0) {
        t += "%" + std::to_string(id) + " = add %" + std::to_string(acc) + " %" + std::to_string(id - 1) + " : f64\n";
        acc = id++;
      } else {
        acc = id - 1;
      }
    }
  return t + "res[0] = %" + std::to_string(acc) + "\nend\n";
}

// x_{k+1} = sin(x_k)·c, `links` times.
std::string chain_ir(int links) {
  std::string t = "lsjit.ir 1\ncost chain kind=least_squares stage=traced residuals=1\n"
                  "var x : W1 ambient=1 tangent=1\n%0 = input var x[0] : f64\n%1 = input tangent x[0] : f64\n"
                  "%2 = add %0 %1 : f64\n%3 = const 0.999 : f64\n";
  int last = 2, id = 4;
  for (int k = 0; k < links; ++k) {
    t += "%" + std::to_string(id) + " = sin %" + std::to_string(last) + " : f64\n";
    t += "%" + std::to_string(id + 1) + " = mul %" + std::to_string(id) + " %3 : f64\n";
    last = id + 1;
    id += 2;
  }
  return t + "res[0] = %" + std::to_string(last) + "\nend\n";
}

}  // namespace

TEST_CASE("trace limits: a wide graph and a deep chain are refused at every stage, never by LLVM's abort") {
  const fs::path dir = lsjit::testing::fresh_dir("trace_limits");
  const fs::path wide = dir / "wide.ir", chain = dir / "chain.ir";
  lsjit::testing::put_file(wide, wide_linear_ir());
  lsjit::testing::put_file(chain, chain_ir(200000));
  CHECK(fs::file_size(wide) < 140 * 1024);
  const struct {
    fs::path file;
    std::string args, words;
  } cases[] = {
      {wide, "--stage asm --mode normal_equations", "its Gauss-Newton block (entries) would take 786432"},
      {wide, "--stage normal_equations", "its Gauss-Newton block (entries) would take 786432"},
      {chain, "--stage asm --mode normal_equations", "its residual kernel (nodes and outputs) would take"},
      {chain, "--stage normal_equations", "its residual kernel (nodes and outputs) would take"},
      {chain, "--stage asm --mode residual", "its residual kernel (nodes and outputs) would take"},
      {chain, "--stage jacobian", "its residual kernel (nodes and outputs) would take"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.args);
    const lsjit::testing::CliRun r = lsjit::testing::run("trace " + c.file.string() + " " + c.args);
    CAPTURE(r.out);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find(c.words) != std::string::npos);
    CHECK(r.out.find("LLVM ERROR") == std::string::npos);
  }
  // What fits is lowered as before: the wide graph's residual kernel.
  const lsjit::testing::CliRun fits = lsjit::testing::run("trace " + wide.string() + " --stage asm --mode residual");
  CHECK(fits.exit_code == 0);
}
