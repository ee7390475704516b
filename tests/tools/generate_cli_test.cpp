// lsjit generate, run as a separate process: it writes the files the library generates and
// the readers accept, and reports bad usage with exit code 2.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "../support/run_cli.h"
#include "../support/scratch_files.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/io/synthetic.h"

namespace {

namespace fs = std::filesystem;
using Run = lsjit::testing::CliRun;
using lsjit::testing::file_contents;
using lsjit::testing::run;

fs::path generate_dir(const std::string& name) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("generate_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("io: lsjit generate pose-graph writes the library's graph as g2o") {
  const fs::path dir = generate_dir("pose_graph");
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path file = dir / ("graph" + std::to_string(dim) + ".g2o");
    const Run r =
        run("generate pose-graph --dim " + std::to_string(dim) +
            " --poses 120 --loop-closures 15 --noise 0.03 --seed 9 --out " + file.string());
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "wrote " + file.string() + ": SE" + std::to_string(dim) +
                       " pose graph, 120 poses, 134 edges (119 odometry, 15 loop closures), noise "
                       "0.03, seed 9\n");
    const lsjit::io::PoseGraph g = lsjit::io::read_g2o(file);
    CHECK(g.dimension == dim);
    CHECK(g.num_vertices() == 120);
    CHECK(g.num_edges() == 134);
    lsjit::io::PoseGraphSpec spec;
    spec.dimension = dim;
    spec.poses = 120;
    spec.loop_closures = 15;
    spec.translation_sigma = spec.rotation_sigma = 0.03;
    spec.seed = 9;
    CHECK(lsjit::io::format_g2o(g) ==
          lsjit::io::format_g2o(lsjit::io::generate_pose_graph(spec).graph));
  }
}

TEST_CASE("io: lsjit generate pose-graph --indefinite-edges writes the library's indefinite matrices") {
  const fs::path dir = generate_dir("indefinite");
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path file = dir / ("graph" + std::to_string(dim) + ".g2o");
    const Run r = run("generate pose-graph --dim " + std::to_string(dim) +
                      " --poses 50 --loop-closures 10 --seed 4 --indefinite-edges 7 --out " + file.string());
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "wrote " + file.string() + ": SE" + std::to_string(dim) +
                       " pose graph, 50 poses, 59 edges (49 odometry, 10 loop closures), noise 0.02, seed 4, 7 "
                       "with an information matrix that is not positive definite (lsjit solve "
                       "--repair-information block-diagonal|nearest-pd reads them)\n");
    lsjit::io::PoseGraphSpec spec;
    spec.dimension = dim;
    spec.poses = 50;
    spec.loop_closures = 10;
    spec.seed = 4;
    spec.indefinite_edges = 7;
    const lsjit::io::GeneratedPoseGraph generated = lsjit::io::generate_pose_graph(spec);
    // The file is the library's graph, indefinite matrices and all, so it reads only with a
    // repair mode, which repairs those 7 edges.
    const lsjit::io::PoseGraph g =
        lsjit::io::read_g2o(file, {.repair_information = lsjit::io::InformationRepair::NearestPD});
    CHECK(g.num_repaired_edges() == 7);
    std::ifstream in(file);
    const std::string written{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    CHECK(written == lsjit::io::format_g2o(generated.graph, {.allow_indefinite_information = true}));
  }
}

TEST_CASE("io: lsjit generate bal writes the library's initial problem as BAL") {
  const fs::path file = generate_dir("bal") / "problem.bal";
  const Run r =
      run("generate bal --cameras 6 --points 40 --observations-per-point 3 --out " + file.string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "wrote " + file.string() +
                     ": BAL problem, 6 cameras, 40 points, 120 observations, pixel noise 1, seed "
                     "1\n");
  const lsjit::io::BalProblem p = lsjit::io::read_bal(file);
  CHECK(p.cameras.size() == 6);
  CHECK(p.points.size() == 40);
  CHECK(p.observations.size() == 120);
  lsjit::io::BalSpec spec;
  spec.cameras = 6;
  spec.points = 40;
  spec.observations_per_point = 3;
  CHECK(lsjit::io::format_bal(p) == lsjit::io::format_bal(lsjit::io::generate_bal(spec).initial));
}

TEST_CASE("io: lsjit generate reports bad usage with exit code 2 and what was expected") {
  const std::string out = " --out " + (generate_dir("usage") / "x").string();
  const std::string graph = "generate pose-graph --dim 2 --poses 10 --loop-closures 2";
  const std::string bal = "generate bal --cameras 3 --points 5 --observations-per-point 2";
  const struct {
    std::string args, message;
  } cases[] = {
      {"generate", "lsjit generate: name what to generate: pose-graph or bal"},
      {"generate mesh" + out,
       "lsjit generate: unknown problem kind 'mesh': expected pose-graph or bal"},
      {graph, "lsjit generate pose-graph: --out is required"},
      {"generate pose-graph --poses 10 --loop-closures 2" + out,
       "lsjit generate pose-graph: --dim is required"},
      {"generate pose-graph --dim 4 --poses 10 --loop-closures 2" + out,
       "lsjit generate pose-graph: --dim: expected an integer from 2 to 3, not '4'"},
      {"generate pose-graph --dim 2 --poses ten --loop-closures 2" + out,
       "lsjit generate pose-graph: --poses: expected an integer from 1 to 2147483647, not 'ten'"},
      {"generate pose-graph --dim 2 --poses 0 --loop-closures 2" + out,
       "lsjit generate pose-graph: --poses: expected an integer from 1 to 2147483647, not '0'"},
      {"generate pose-graph --dim 2 --poses 10" + out,
       "lsjit generate pose-graph: --loop-closures is required"},
      {"generate pose-graph --dim 2 --poses 10 --loop-closures 37" + out,
       "lsjit generate pose-graph: 37 loop closures requested: expected 0 to 36 for 10 poses"},
      {graph + " --noise -1" + out,
       "lsjit generate pose-graph: --noise: expected 0 or a standard deviation in [1e-12, 1e6], not '-1'"},
      {graph + " --noise nan" + out,
       "lsjit generate pose-graph: --noise: expected 0 or a standard deviation in [1e-12, 1e6], not 'nan'"},
      {graph + " --seed -3" + out,
       "lsjit generate pose-graph: --seed: expected a non-negative integer below 2^64, not '-3'"},
      {graph + " --frobnicate 1" + out, "lsjit generate pose-graph: unknown option '--frobnicate' (lsjit generate help)"},
      {graph + " --cameras 3" + out, "lsjit generate pose-graph: unknown option '--cameras' (lsjit generate help)"},
      {graph + out + " --seed", "lsjit generate pose-graph: --seed needs a value"},
      {"generate bal --points 5 --observations-per-point 2" + out,
       "lsjit generate bal: --cameras is required"},
      {"generate bal --cameras 3 --points 5 --observations-per-point 4" + out,
       "lsjit generate bal: 4 observations per point: expected 1 to 3"},
      {"generate bal --cameras 3 --points -5 --observations-per-point 2" + out,
       "lsjit generate bal: --points: expected an integer from 0 to 2147483647, not '-5'"},
      {bal + " --dim 2" + out, "lsjit generate bal: unknown option '--dim' (lsjit generate help)"},
      {graph + " --indefinite-edges 12" + out,
       "lsjit generate pose-graph: 12 indefinite edges requested: expected 0 to 11 (the graph's 11 edges)"},
      {graph + " --indefinite-edges -1" + out,
       "lsjit generate pose-graph: --indefinite-edges: expected an integer from 0 to 4294967294, not '-1'"},
      {bal + " --indefinite-edges 1" + out, "lsjit generate bal: unknown option '--indefinite-edges' (lsjit generate help)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const Run r = run(c.args);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.out.find(c.message) != std::string::npos, r.out);
  }
  // The same flags with the missing piece supplied succeed: the failures above are caused by
  // what each case changed.
  CHECK(run(graph + out).exit_code == 0);
  CHECK(run(bal + out).exit_code == 0);
  const Run help = run("generate help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("lsjit generate pose-graph --dim 2|3") != std::string::npos);
  CHECK(run("help").out.find("generate pose-graph --dim 2|3") != std::string::npos);
}

TEST_CASE("io: lsjit generate fails with exit code 1 when it cannot write the file") {
  const fs::path file = generate_dir("unwritable") / "no_such_dir" / "graph.g2o";
  const Run r =
      run("generate pose-graph --dim 2 --poses 5 --loop-closures 0 --out " + file.string());
  CHECK(r.exit_code == 1);
  CHECK(r.out == "lsjit: " + file.string() + ": cannot write: No such file or directory\n");
  CHECK(!fs::exists(file));
}

// The truth a user measures a solve against: the library's true poses under the same edges,
// and a solve from the drifting start that lands near it.
TEST_CASE("io: lsjit generate --truth writes the true values beside the problem") {
  const fs::path dir = generate_dir("truth");
  const fs::path file = dir / "graph.g2o", truth = dir / "truth.g2o", solved = dir / "solved.g2o";
  Run r = run("generate pose-graph --dim 2 --poses 150 --loop-closures 120 --noise 0.01 --seed 4 --out " +
              file.string() + " --truth " + truth.string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("; the truth in " + truth.string() + "\n") != std::string::npos);
  lsjit::io::PoseGraphSpec spec;
  spec.dimension = 2;
  spec.poses = 150;
  spec.loop_closures = 120;
  spec.translation_sigma = spec.rotation_sigma = 0.01;
  spec.seed = 4;
  const lsjit::io::GeneratedPoseGraph generated = lsjit::io::generate_pose_graph(spec);
  lsjit::io::PoseGraph expected = generated.graph;
  expected.poses2 = generated.truth2;
  const lsjit::io::PoseGraph read_truth = lsjit::io::read_g2o(truth);
  CHECK(lsjit::io::format_g2o(read_truth) == lsjit::io::format_g2o(expected));

  // Position error against the truth, anchored at pose 0 as the solve holds it.
  auto error = [&](const lsjit::io::PoseGraph& g) {
    double sum = 0;
    for (size_t k = 0; k < g.poses2.size(); ++k)
      sum += (g.poses2[k].translation() - read_truth.poses2[k].translation()).squaredNorm();
    return std::sqrt(sum / static_cast<double>(g.poses2.size()));
  };
  REQUIRE(run("solve " + file.string() + " --out " + solved.string()).exit_code == 0);
  const double before = error(lsjit::io::read_g2o(file)), after = error(lsjit::io::read_g2o(solved));
  CAPTURE(before);
  CAPTURE(after);
  CHECK(after < 0.6 * before);  // 0.11 against 0.22: the seed fixes both

  const fs::path bal = dir / "problem.bal", bal_truth = dir / "problem_truth.bal";
  r = run("generate bal --cameras 4 --points 30 --observations-per-point 3 --seed 2 --out " + bal.string() +
          " --truth " + bal_truth.string());
  REQUIRE(r.exit_code == 0);
  lsjit::io::BalSpec bal_spec;
  bal_spec.cameras = 4;
  bal_spec.points = 30;
  bal_spec.observations_per_point = 3;
  bal_spec.seed = 2;
  bal_spec.pixel_sigma = 1.0;
  const lsjit::io::BalProblem true_bal = lsjit::io::read_bal(bal_truth);
  const lsjit::io::GeneratedBal generated_bal = lsjit::io::generate_bal(bal_spec);
  CHECK(lsjit::io::format_bal(true_bal) == lsjit::io::format_bal(generated_bal.truth));

  r = run("generate bal --cameras 4 --points 30 --observations-per-point 3 --out " + bal.string() + " --truth " +
          bal.string());
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--truth and --out name the same file") != std::string::npos);
  // The same file under another name: a symbolic link to it, and a path through a link to
  // its directory. Neither is written over.
  const std::string written = file_contents(bal);
  const fs::path link = bal.parent_path() / "link_to_problem.txt";
  const fs::path dir_link = bal.parent_path() / "link_to_dir";
  fs::remove(link);
  fs::remove(dir_link);
  fs::create_symlink(bal, link);
  fs::create_directory_symlink(bal.parent_path(), dir_link);
  for (const fs::path& other : {link, dir_link / bal.filename()}) {
    CAPTURE(other);
    r = run("generate bal --cameras 4 --points 30 --observations-per-point 3 --seed 9 --out " + bal.string() +
            " --truth " + other.string());
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("--truth and --out name the same file") != std::string::npos);
  }
  CHECK(file_contents(bal) == written);
}
