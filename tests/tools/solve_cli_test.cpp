// lsjit solve, run as a separate process on a generated pose graph.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../support/run_cli.h"
#include "../support/scratch_files.h"
#include "lsjit/runtime/io/g2o.h"

namespace {

namespace fs = std::filesystem;
using Run = lsjit::testing::CliRun;
using lsjit::testing::file_contents;
using lsjit::testing::run;

fs::path generated(const std::string& name, int dim) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("solve_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "graph.g2o";
  const Run r = run("generate pose-graph --dim " + std::to_string(dim) +
                    " --poses 80 --loop-closures 10 --seed 3 --out " + file.string());
  REQUIRE(r.exit_code == 0);
  return file;
}

std::string json_field(const std::string& json, const std::string& name) {
  const size_t at = json.find("\"" + name + "\": ");
  REQUIRE(at != std::string::npos);
  const size_t start = at + name.size() + 4;
  return json.substr(start, json.find_first_of(",}", start) - start);
}

double json_number(const std::string& json, const std::string& name) { return std::stod(json_field(json, name)); }

}  // namespace

TEST_CASE("lsjit solve prints a report, --json the summary fields, --out the solution") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path file = generated("report" + std::to_string(dim), dim);
    Run r = run("solve " + file.string() + " --verbose");
    CAPTURE(r.out);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("iter      cost") != std::string::npos);
    CHECK(r.out.find("Solver Summary (lsjit)") != std::string::npos);
    CHECK(r.out.find("Termination: function_tolerance") != std::string::npos);

    const fs::path out = file.parent_path() / "solved.g2o";
    r = run("solve " + file.string() + " --json --linear-solver dense_cholesky --out " + out.string());
    CAPTURE(r.out);
    CHECK(r.exit_code == 0);
    for (const char* field : {"\"initial_cost\"", "\"final_cost\"", "\"iterations\"", "\"termination\"",
                              "\"trace_s\"", "\"compile_s\"", "\"setup_s\"", "\"residual_s\"", "\"jacobian_s\"",
                              "\"linear_solver_s\"", "\"total_s\"", "\"cache_hits\"", "\"cache_misses\"",
                              "\"linear_solver\": \"dense_cholesky\""})
      CHECK(r.out.find(field) != std::string::npos);
    const lsjit::io::PoseGraph before = lsjit::io::read_g2o(file), after = lsjit::io::read_g2o(out);
    CHECK(after.num_vertices() == before.num_vertices());
    CHECK(after.num_edges() == before.num_edges());
  }
}

TEST_CASE("lsjit solve reports bad usage with exit code 2 and bad files with 1") {
  const fs::path file = generated("usage", 2);
  CHECK(run("solve").exit_code == 2);
  CHECK(run("solve " + file.string() + " --linear-solver qr").exit_code == 2);
  CHECK(run("solve " + file.string() + " --max-iterations -3").exit_code == 2);
  CHECK(run("solve " + file.string() + " --threads").exit_code == 2);
  CHECK(run("solve " + file.string() + " --frobnicate").exit_code == 2);
  CHECK(run("solve " + file.string() + " --loss welsch:1").exit_code == 2);
  CHECK(run("solve " + file.string() + " --loss cauchy:-1").exit_code == 2);
  CHECK(run("solve " + file.string() + " --loss cauchy").exit_code == 2);
  CHECK(run("solve " + file.string() + " --initial-trust-region-radius 0").exit_code == 2);
  CHECK(run("solve " + file.string() + " --initial-trust-region-radius inf").exit_code == 2);
  const Run wide = run("solve " + file.string() + " --initial-trust-region-radius 1e8 --json");
  CHECK(wide.exit_code == 0);
  CHECK(wide.out.find("\"converged\": true") != std::string::npos);
  const Run robust = run("solve " + file.string() + " --loss cauchy:2.5 --json");
  CHECK(robust.exit_code == 0);
  CHECK(robust.out.find("\"converged\": true") != std::string::npos);
  CHECK(run("solve " + file.string() + " " + file.string()).exit_code == 2);
  const Run missing = run("solve /nonexistent/graph.g2o");
  CHECK(missing.exit_code == 1);
  CHECK(missing.out.find("/nonexistent/graph.g2o") != std::string::npos);
  const fs::path bad = file.parent_path() / "bad.g2o";
  {
    std::ofstream(bad) << "VERTEX_SE2 0 0 0 0\nEDGE_SE2 0 1 1 0 0 1 0 0 1 0\n";
  }
  const Run r = run("solve " + bad.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("bad.g2o:2:") != std::string::npos);
}

TEST_CASE("LSJIT_DUMP_DIR: a program that embeds lsjit writes each cost group's trace at every stage") {
  const fs::path file = generated("dump", 3);
  const fs::path dump = file.parent_path() / "dump";
  const Run r = run("solve " + file.string() + " --json", "LSJIT_DUMP_DIR=" + dump.string());
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dump)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() == 4);
  const std::string stem = names[0].substr(0, names[0].find('.'));
  CHECK(stem.rfind("se3_between-", 0) == 0);
  CHECK(stem.size() == std::string("se3_between-").size() + 12);
  CHECK(names == std::vector<std::string>{stem + ".jacobian.ir", stem + ".normal_equations.ir",
                                          stem + ".simplified.ir", stem + ".traced.ir"});
  // Each file is valid IR text at its stage: lsjit trace reads it back.
  for (const auto& name : names) {
    CAPTURE(name);
    const std::string stage = name.substr(stem.size() + 1, name.size() - stem.size() - 4);
    const Run t = run("trace " + (dump / name).string() + " --stage " + stage);
    CHECK(t.exit_code == 0);
    CHECK(t.out.find("stage=" + stage) != std::string::npos);
  }
}

TEST_CASE("lsjit solve reads BAL files, detected from their header, and writes the solution") {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / "solve_bal";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "problem.txt", out = dir / "solved.txt";
  REQUIRE(run("generate bal --cameras 5 --points 60 --observations-per-point 3 --seed 4 --out " +
              file.string()).exit_code == 0);
  const Run r = run("solve " + file.string() + " --json --out " + out.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"converged\": true") != std::string::npos);
  CHECK(r.out.find("\"residual_blocks\": 180") != std::string::npos);
  CHECK(fs::exists(out));
  CHECK(run("solve " + file.string() + " --format g2o").exit_code == 1);
  CHECK(run("solve " + file.string() + " --format pcd").exit_code == 2);
}

TEST_CASE("lsjit solve starts a pose graph nearly Gauss-Newton and a BAL problem as Ceres, unless told") {
  // The first iteration line of --json's per-iteration list carries the initial radius.
  const auto first_radius = [](const std::string& json) {
    const size_t at = json.find("\"trust_region_radius\": ");
    REQUIRE(at != std::string::npos);
    return std::stod(json.substr(at + 23));
  };
  const fs::path graph = generated("radius", 3);
  Run r = run("solve " + graph.string() + " --json");
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(first_radius(r.out) == 1e8);
  r = run("solve " + graph.string() + " --json --initial-trust-region-radius 1e4");
  REQUIRE(r.exit_code == 0);
  CHECK(first_radius(r.out) == 1e4);

  const fs::path bal = fs::path(LSJIT_TEST_TMP_DIR) / "solve_radius_bal.txt";
  REQUIRE(run("generate bal --cameras 3 --points 20 --observations-per-point 2 --out " + bal.string())
              .exit_code == 0);
  r = run("solve " + bal.string() + " --json");
  REQUIRE(r.exit_code == 0);
  CHECK(first_radius(r.out) == 1e4);
}

TEST_CASE("lsjit solve --init file or chordal start where they say and auto, the default, from the lower of the two") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path file = generated("init" + std::to_string(dim), dim);
    const Run from_file = run("solve " + file.string() + " --json --init file");
    CAPTURE(from_file.out);
    REQUIRE(from_file.exit_code == 0);
    CHECK(from_file.out.find("\"initialization\": \"file\", \"initialization_reason\": \"\", \"initialization_s\": 0,") !=
          std::string::npos);
    const Run chordal = run("solve " + file.string() + " --json --init chordal");
    CAPTURE(chordal.out);
    REQUIRE(chordal.exit_code == 0);
    CHECK(chordal.out.find("\"initialization\": \"chordal\", \"initialization_reason\": \"\"") != std::string::npos);
    CHECK(chordal.out.find("\"converged\": true") != std::string::npos);
    // A different start: the initial costs differ (the chordal one is lower on this graph).
    CHECK(json_number(chordal.out, "initial_cost") < json_number(from_file.out, "initial_cost"));
    // Auto takes the chordal start here, and says why with both costs.
    const Run automatic = run("solve " + file.string() + " --json");
    CAPTURE(automatic.out);
    REQUIRE(automatic.exit_code == 0);
    CHECK(automatic.out.find("\"initialization\": \"chordal\", \"initialization_reason\": \"auto: initial cost ") !=
          std::string::npos);
    CHECK(automatic.out.find(" from the file\"") != std::string::npos);
    CHECK(json_number(automatic.out, "initial_cost") == json_number(chordal.out, "initial_cost"));
    CHECK(json_number(automatic.out, "final_cost") == json_number(chordal.out, "final_cost"));
    const Run report = run("solve " + file.string() + " --init chordal");
    CAPTURE(report.out);
    CHECK(report.exit_code == 0);
    CHECK(report.out.find("Initialization                    chordal (") != std::string::npos);
    const Run auto_report = run("solve " + file.string());
    CAPTURE(auto_report.out);
    CHECK(auto_report.out.find(" ms): auto: initial cost ") != std::string::npos);
  }
}

TEST_CASE("lsjit solve --init: a bad value, or chordal for a BAL file, is a usage error") {
  const fs::path file = generated("init_usage", 2);
  const Run bad = run("solve " + file.string() + " --init odometry");
  CAPTURE(bad.out);
  CHECK(bad.exit_code == 2);
  CHECK(bad.out == "lsjit solve: --init: expected auto, file or chordal, not 'odometry'\n");
  const fs::path bal = file.parent_path() / "problem.txt";
  REQUIRE(run("generate bal --cameras 3 --points 20 --observations-per-point 2 --seed 4 --out " + bal.string())
              .exit_code == 0);
  const Run not_a_graph = run("solve " + bal.string() + " --init chordal");
  CAPTURE(not_a_graph.out);
  CHECK(not_a_graph.exit_code == 2);
  CHECK(not_a_graph.out.find("--init chordal initializes pose graphs (g2o files)") != std::string::npos);
  CHECK(run("solve " + bal.string() + " --init file --json").exit_code == 0);
  const Run bal_auto = run("solve " + bal.string() + " --json");  // auto: a BAL file's own values
  CHECK(bal_auto.exit_code == 0);
  CHECK(bal_auto.out.find("\"initialization\": \"file\"") != std::string::npos);
}

namespace {

// A generated graph with `indefinite` edges whose information matrices are indefinite.
fs::path generated_indefinite(const std::string& name, int dim, int indefinite) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("solve_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "graph.g2o";
  const Run r = run("generate pose-graph --dim " + std::to_string(dim) +
                    " --poses 80 --loop-closures 10 --seed 3 --indefinite-edges " + std::to_string(indefinite) +
                    " --out " + file.string());
  REQUIRE(r.exit_code == 0);
  return file;
}

// stderr alone (stdout discarded).
Run run_stderr(const std::string& args) {
  return lsjit::testing::run_shell(std::string(LSJIT_CLI_PATH) + " " + args + " 2>&1 >/dev/null");
}

}  // namespace

TEST_CASE("lsjit solve --repair-information repairs indefinite edges, counts them and warns once") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path file = generated_indefinite("repair" + std::to_string(dim), dim, 3);
    const std::string tag = dim == 2 ? "EDGE_SE2 " : "EDGE_SE3:QUAT ";
    // Without the flag: today's error, naming the flag.
    const Run refused = run("solve " + file.string());
    CAPTURE(refused.out);
    CHECK(refused.exit_code == 1);
    CHECK(refused.out.find("lsjit: " + file.string() + ":") == 0);
    CHECK(refused.out.find("the information matrix is not positive definite (it has no Cholesky factor), so the "
                           "edge's residual is undefined; `--repair-information block-diagonal|nearest-pd` "
                           "repairs it") != std::string::npos);

    const lsjit::io::PoseGraph repaired =
        lsjit::io::read_g2o(file, {.repair_information = lsjit::io::InformationRepair::BlockDiagonal});
    const auto first = [](const auto& edges) {
      return *std::find_if(edges.begin(), edges.end(), [](const auto& e) { return e.information_repaired; });
    };
    const auto edge_text = [&](const auto& e) {
      return std::to_string(e.line) + ": " + tag + std::to_string(e.from) + " -> " + std::to_string(e.to);
    };
    const std::string where = dim == 2 ? edge_text(first(repaired.edges2)) : edge_text(first(repaired.edges3));
    for (const std::string mode : {"block-diagonal", "nearest-pd"}) {
      CAPTURE(mode);
      const Run warning = run_stderr("solve " + file.string() + " --json --repair-information " + mode);
      CHECK(warning.exit_code == 0);
      CHECK(warning.out == "lsjit solve: warning: " + file.string() + ":" + where +
                               " and 2 more edges have an information matrix that is not positive definite; "
                               "repaired (" + mode + ")\n");
      const Run json = run("solve " + file.string() + " --json --repair-information " + mode + " 2>/dev/null");
      CAPTURE(json.out);
      CHECK(json.exit_code == 0);
      CHECK(json_field(json.out, "information_repair") == "\"" + mode + "\"");
      CHECK(json_field(json.out, "repaired_edges") == "3");
      CHECK(json_field(json.out, "converged") == "true");
      const Run report = run("solve " + file.string() + " --repair-information " + mode + " 2>/dev/null");
      CHECK(report.out.find("Information repaired              3 edges (" + mode + ")\n") != std::string::npos);
    }
    // One repaired edge: the warning says so in the singular.
    const fs::path one = generated_indefinite("repair_one" + std::to_string(dim), dim, 1);
    const Run single = run_stderr("solve " + one.string() + " --json --repair-information block-diagonal");
    CHECK(single.out.find(" has an information matrix that is not positive definite; repaired (block-diagonal)\n") !=
          std::string::npos);
  }
}

TEST_CASE("lsjit solve --repair-information changes nothing for a graph without indefinite edges") {
  const fs::path file = generated("repair_pd", 3);
  const Run plain = run("solve " + file.string() + " --json");
  REQUIRE(plain.exit_code == 0);
  CHECK(json_field(plain.out, "information_repair") == "\"none\"");
  CHECK(json_field(plain.out, "repaired_edges") == "0");
  CHECK(plain.out.find("Information repaired") == std::string::npos);
  for (const std::string mode : {"block-diagonal", "nearest-pd"}) {
    CAPTURE(mode);
    CHECK(run_stderr("solve " + file.string() + " --json --repair-information " + mode).out.empty());
    const Run r = run("solve " + file.string() + " --json --repair-information " + mode);
    CAPTURE(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK(json_field(r.out, "repaired_edges") == "0");
    CHECK(json_field(r.out, "initial_cost") == json_field(plain.out, "initial_cost"));
    CHECK(json_field(r.out, "final_cost") == json_field(plain.out, "final_cost"));
    CHECK(json_field(r.out, "iterations") == json_field(plain.out, "iterations"));
  }
}

TEST_CASE("lsjit solve --repair-information: a bad mode, or a BAL file, is a usage error") {
  const fs::path file = generated("repair_usage", 2);
  const Run bad = run("solve " + file.string() + " --repair-information diagonal");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out ==
        "lsjit solve: --repair-information: expected none, block-diagonal or nearest-pd, not 'diagonal'\n");
  const Run missing = run("solve " + file.string() + " --repair-information");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out.find("--repair-information needs a value") != std::string::npos);
  const fs::path bal = file.parent_path() / "problem.txt";
  REQUIRE(run("generate bal --cameras 3 --points 20 --observations-per-point 2 --seed 4 --out " + bal.string())
              .exit_code == 0);
  const Run not_a_graph = run("solve " + bal.string() + " --repair-information nearest-pd");
  CHECK(not_a_graph.exit_code == 2);
  CHECK(not_a_graph.out.find("--repair-information repairs the information matrices of pose graphs (g2o files)") !=
        std::string::npos);
  CHECK(run("solve " + bal.string() + " --repair-information none --json").exit_code == 0);
  CHECK(run("solve --help").out.find("--repair-information none|block-diagonal|nearest-pd") != std::string::npos);
}

// Issue 20: a process whose kernels are all in the disk cache never loads libLLVM; one
// that compiles does (through liblsjit_llvm.so, compiler/llvm/llvm_backend.h). The loader's
// trace (LD_DEBUG=files) lists every object it maps, dependencies of dlopen'ed ones too.
TEST_CASE("a warm lsjit solve maps no libLLVM, a cold one loads it to compile") {
  const fs::path file = generated("warm_no_llvm", 3);
  const fs::path cache = file.parent_path() / "kernel-cache";
  const std::string env = "LSJIT_CACHE_DIR=" + cache.string() + " LD_DEBUG=files";
  const Run cold = run("solve " + file.string(), env);
  CAPTURE(cold.out);
  REQUIRE(cold.exit_code == 0);
  CHECK(cold.out.find("libLLVM") != std::string::npos);
  const Run warm = run("solve " + file.string(), env);
  CAPTURE(warm.out);
  REQUIRE(warm.exit_code == 0);
  CHECK(warm.out.find("2 hits, 0 misses") != std::string::npos);
  CHECK(warm.out.find("libLLVM") == std::string::npos);
  const Run help = run("--help", "LD_DEBUG=files");
  CHECK(help.out.find("libLLVM") == std::string::npos);
}

// Issue 20: an empty kernel cache will compile, so `lsjit solve` starts loading the LLVM
// module before it reads its file (kernel_cache.h): here the file stops at a bad number on
// its third line, and the module is mapped all the same. Under LSJIT_TIER=0 nothing ever
// compiles, and it is not.
TEST_CASE("an empty kernel cache loads the compiler while the file is read, tier 0 never does") {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / "solve_prefetch";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path bad = dir / "bad.g2o";
  std::ofstream(bad) << "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\nEDGE_SE2 0 1 1 0 zero 1 0 0 1 0 1\n";
  // The loader's log goes to files of its own (LD_DEBUG_OUTPUT.PID): on stderr, the
  // background thread's loading interleaves with the error message.
  auto loaded = [&](const std::string& tag) {
    std::string all;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().filename().string().rfind(tag + ".", 0) == 0) all += file_contents(entry.path());
    return all;
  };
  auto env = [&](const std::string& tag) {
    return "LD_DEBUG=files LD_DEBUG_OUTPUT=" + (dir / tag).string() + " LSJIT_CACHE_DIR=" + (dir / "empty-cache").string();
  };
  const Run cold = run("solve " + bad.string(), env("cold"));
  CAPTURE(cold.out);
  CHECK(cold.exit_code != 0);
  CHECK(cold.out.find("bad.g2o:3: EDGE_SE2 dtheta is 'zero': expected a number") != std::string::npos);
  CHECK(loaded("cold").find("libLLVM") != std::string::npos);
  const Run tier0 = run("solve " + bad.string(), "LSJIT_TIER=0 " + env("tier0"));
  CAPTURE(tier0.out);
  CHECK(tier0.exit_code != 0);
  CHECK(tier0.out.find("bad.g2o:3:") != std::string::npos);
  CHECK(loaded("tier0").find("libsodium") != std::string::npos);  // the log was written
  CHECK(loaded("tier0").find("libLLVM") == std::string::npos);
}

// Issue 20: LSJIT_TIER=0 runs every kernel in tier 0 (compiler/tier0/tier0.h). A cold process
// then neither loads libLLVM nor writes the disk cache, and its solution is the compiled
// kernels' to the last digit written.
TEST_CASE("LSJIT_TIER=0 solves cold without LLVM, to the compiled kernels' solution") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path file = generated("tier0_" + std::to_string(dim), dim);
    const fs::path cache = file.parent_path() / "kernel-cache";
    const fs::path tier0_out = file.parent_path() / "tier0.g2o", compiled_out = file.parent_path() / "compiled.g2o";
    const Run t0 = run("solve " + file.string() + " --out " + tier0_out.string(),
                       "LSJIT_TIER=0 LD_DEBUG=files LSJIT_CACHE_DIR=" + cache.string());
    CAPTURE(t0.out);
    REQUIRE(t0.exit_code == 0);
    CHECK(t0.out.find("libLLVM") == std::string::npos);
    CHECK(t0.out.find("0 hits, 2 misses (0 compiled, 2 started in tier 0)") != std::string::npos);
    CHECK((!fs::exists(cache) || fs::is_empty(cache)));
    // Tier 0 with every op interpreted (LSJIT_TIER0_CODE): the same solution again.
    const fs::path interpreted_out = file.parent_path() / "interpreted.g2o";
    const Run interpreted = run("solve " + file.string() + " --out " + interpreted_out.string(),
                                "LSJIT_TIER=0 LSJIT_TIER0_CODE=interpreted LSJIT_CACHE_DIR=" + cache.string());
    REQUIRE(interpreted.exit_code == 0);
    const Run compiled = run("solve " + file.string() + " --out " + compiled_out.string(),
                             "LSJIT_TIER=compiled LSJIT_CACHE_DIR=" + cache.string());
    REQUIRE(compiled.exit_code == 0);
    auto text = [](const fs::path& path) {
      std::ifstream in(path);
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    const std::string tier0_text = text(tier0_out);
    CHECK(!tier0_text.empty());
    CHECK(tier0_text == text(compiled_out));
    CHECK(tier0_text == text(interpreted_out));
  }
}

// Issue 19, item 21 (README, "License"): the default build's CLI links no GPL code. CHOLMOD
// is the one GPL library lsjit can link, and only with -DLSJIT_WITH_CHOLMOD=ON. The
// loader's trace lists every object mapped at start-up (every DT_NEEDED, transitively).
TEST_CASE("the default build's lsjit maps no CHOLMOD (no GPL code)") {
  if (LSJIT_TEST_WITH_CHOLMOD) {
    MESSAGE("skipped: this build links CHOLMOD (-DLSJIT_WITH_CHOLMOD=ON)");
    return;
  }
  const Run help = run("--help", "LD_DEBUG=files");
  CAPTURE(help.out);
  REQUIRE(help.exit_code == 0);
  CHECK(help.out.find("libsodium") != std::string::npos);  // the trace does list libraries
  CHECK(help.out.find("cholmod") == std::string::npos);
}

// A g2o file of edges alone (SE-Sync's data sets) is initialized, chordally, and the report
// says so: it reaches the cost the same graph reaches with its vertices and --init chordal.
TEST_CASE("lsjit solve initializes a g2o file without VERTEX lines and says so") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path file = generated("edges_only" + std::to_string(dim), dim);
    const fs::path edges = file.parent_path() / "edges.g2o";
    {
      std::ifstream in(file);
      std::ofstream out(edges);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("VERTEX", 0) != 0) out << line << "\n";
    }
    const Run r = run("solve " + edges.string() + " --json");
    CAPTURE(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("\"initialization\": \"chordal\", \"initialization_reason\": \"the file has no VERTEX lines\"") !=
          std::string::npos);
    CHECK(r.out.find("\"converged\": true") != std::string::npos);
    const Run full = run("solve " + file.string() + " --json --init chordal");
    REQUIRE(full.exit_code == 0);
    CHECK(json_number(r.out, "final_cost") == doctest::Approx(json_number(full.out, "final_cost")).epsilon(1e-6));
  }
}
