// The g2o reader's information repair (runtime/io/g2o.h, InformationRepair) on generated
// graphs whose information matrices are indefinite through translation-rotation coupling
// (synthetic.h, indefinite_edges): which edges change and how, what the error says without
// a repair, and that graphs without such edges come out of every mode unchanged.
#include <doctest/doctest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "../support/io_checks.h"
#include "../support/memory_cache.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"

namespace {

using lsjit::io::G2oReadOptions;
using lsjit::io::GeneratedPoseGraph;
using lsjit::io::InformationRepair;
using lsjit::io::PoseGraph;
using lsjit::io::PoseGraphSpec;

constexpr InformationRepair kModes[] = {InformationRepair::None, InformationRepair::BlockDiagonal,
                                        InformationRepair::NearestPD};

GeneratedPoseGraph generate(int dimension, int64_t indefinite, uint64_t seed = 5) {
  PoseGraphSpec s;
  s.dimension = dimension;
  s.poses = 60;
  s.loop_closures = 15;
  s.seed = seed;
  s.indefinite_edges = indefinite;
  return lsjit::io::generate_pose_graph(s);
}

// The generated graph as a file would carry it (indefinite matrices and all).
std::string file_text(const PoseGraph& g) {
  return lsjit::io::format_g2o(g, {.allow_indefinite_information = true});
}

PoseGraph read(const std::string& text, InformationRepair mode) {
  return lsjit::io::parse_g2o(text, "t.g2o", G2oReadOptions{.repair_information = mode});
}

template <int N>
Eigen::Matrix<double, N, 1> eigenvalues(const Eigen::Matrix<double, N, N>& m) {
  return Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, N, N>>(m).eigenvalues();
}

// Checks one dimension's edges of a graph read with `mode` against the generated ones:
// only the generator's indefinite edges are repaired, each as the mode says; every other
// edge is the file's bit for bit.
template <class Edge>
void check_edges(const std::vector<Edge>& read_edges, const std::vector<Edge>& generated,
                 const std::vector<size_t>& indefinite, InformationRepair mode) {
  constexpr int n = decltype(Edge::information)::RowsAtCompileTime;
  constexpr int t = n == 3 ? 2 : 3;  // translation rows, then rotation
  REQUIRE(read_edges.size() == generated.size());
  for (size_t k = 0; k < read_edges.size(); ++k) {
    CAPTURE(k);
    const Edge &e = read_edges[k], &g = generated[k];
    const auto& omega = g.information;  // as written
    const bool repaired = std::binary_search(indefinite.begin(), indefinite.end(), k);
    CHECK(e.information_repaired == repaired);
    // sqrt_information is the factor of information, repaired or not.
    const auto u = lsjit::io::upper_cholesky(e.information);
    REQUIRE(u);
    CHECK(*u == e.sqrt_information);
    if (!repaired) {
      CHECK(e.information == omega);
      CHECK(e.sqrt_information == g.sqrt_information);
      continue;
    }
    CHECK(!lsjit::io::upper_cholesky(omega));  // the generator's edge is indefinite
    if (mode == InformationRepair::BlockDiagonal) {
      CHECK(e.information.template topRightCorner<t, n - t>().isZero(0));
      CHECK(e.information.template bottomLeftCorner<n - t, t>().isZero(0));
      CHECK(e.information.template topLeftCorner<t, t>() == omega.template topLeftCorner<t, t>());
      CHECK(e.information.template bottomRightCorner<n - t, n - t>() ==
            omega.template bottomRightCorner<n - t, n - t>());
    } else {
      // The eigenvalues below kNearestPdFloor·λmax are raised to it, the others stay
      // (to rounding), and the eigenvectors are kept, so Ω moves by exactly the raise.
      const auto before = eigenvalues<n>(omega), after = eigenvalues<n>(e.information);
      const double largest = before(n - 1), floor = lsjit::io::kNearestPdFloor * largest;
      CHECK(before(0) < 0.0);
      const auto expected = before.cwiseMax(floor);
      for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        CHECK(after(i) == doctest::Approx(expected(i)).epsilon(1e-6).scale(largest * 1e-7));
      }
      CHECK(after(0) >= 0.5 * floor);
      CHECK((e.information - omega).norm() ==
            doctest::Approx((expected - before).norm()).epsilon(1e-9));
    }
  }
}

}  // namespace

TEST_CASE("io: g2o information repair changes exactly the indefinite edges, each as its mode says") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const GeneratedPoseGraph generated = generate(dim, 4);
    REQUIRE(generated.indefinite_edges.size() == 4);
    const std::string text = file_text(generated.graph);
    for (const InformationRepair mode : {InformationRepair::BlockDiagonal, InformationRepair::NearestPD}) {
      CAPTURE(lsjit::io::information_repair_name(mode));
      const PoseGraph g = read(text, mode);
      CHECK(g.information_repair == mode);
      CHECK(g.num_repaired_edges() == 4);
      if (dim == 2) check_edges(g.edges2, generated.graph.edges2, generated.indefinite_edges, mode);
      else check_edges(g.edges3, generated.graph.edges3, generated.indefinite_edges, mode);
    }
  }
}

TEST_CASE("io: g2o without a repair mode an indefinite edge is an error that names the flag") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const GeneratedPoseGraph generated = generate(dim, 2);
    const size_t first = generated.indefinite_edges.front();
    const auto describe = [&](const auto& e) {
      // Vertices come first, one per line, then the edges in order.
      const size_t line = generated.graph.num_vertices() + first + 1;
      return "t.g2o:" + std::to_string(line) + ": " + (dim == 2 ? "EDGE_SE2 " : "EDGE_SE3:QUAT ") +
             std::to_string(e.from) + " -> " + std::to_string(e.to);
    };
    const std::string edge =
        dim == 2 ? describe(generated.graph.edges2[first]) : describe(generated.graph.edges3[first]);
    CHECK(lsjit::testing::g2o_error(file_text(generated.graph)) ==
          edge +
              ": the information matrix is not positive definite (it has no Cholesky factor), so "
              "the edge's residual is undefined; `--repair-information block-diagonal|nearest-pd` "
              "repairs it (API: G2oReadOptions::repair_information)");
  }
}

TEST_CASE("io: g2o a repair mode that cannot repair an edge stops with the error and says why") {
  const std::string v = "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 0 0 0\n";
  const std::string base =
      "t.g2o:3: EDGE_SE2 0 -> 1: the information matrix is not positive definite (it has no "
      "Cholesky factor), so the edge's residual is undefined; ";
  const auto error = [&](const std::string& edge, InformationRepair mode) {
    try {
      read(v + edge, mode);
    } catch (const lsjit::Error& e) {
      return std::string(e.what());
    }
    return std::string("(parsed without error)");
  };
  // The translation block is indefinite by itself: zeroing the coupling does not help.
  const std::string translation = "EDGE_SE2 0 1 1 0 0 1 2 0 1 0 1\n";
  CHECK(error(translation, InformationRepair::BlockDiagonal) ==
        base +
            "--repair-information block-diagonal does not repair it: zeroing the "
            "translation-rotation coupling leaves diagonal blocks that are not positive definite; "
            "`--repair-information nearest-pd` repairs it (API: G2oReadOptions::repair_information)");
  CHECK(read(v + translation, InformationRepair::NearestPD).num_repaired_edges() == 1);
  // Negative definite: no eigenvalue to clamp against.
  const std::string negative = "EDGE_SE2 0 1 1 0 0 -1 0 0 -1 0 -1\n";
  CHECK(error(negative, InformationRepair::NearestPD) ==
        base +
            "--repair-information nearest-pd does not repair it: the largest eigenvalue is -1: "
            "expected a positive, finite one; nor does block-diagonal (zeroing the "
            "translation-rotation coupling leaves diagonal blocks that are not positive definite)");
}

TEST_CASE("io: g2o graphs without indefinite edges read the same in every repair mode") {
  std::vector<std::string> texts;
  for (int dim : {2, 3}) texts.push_back(file_text(generate(dim, 0).graph));
  // A hand-written edge with coupling terms that is positive definite: kept as written.
  texts.push_back(
      "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\nEDGE_SE2 0 1 1 0 0 4 0.5 0.7 3 0.25 2\n");
  for (const std::string& text : texts) {
    const PoseGraph plain = read(text, InformationRepair::None);
    for (const InformationRepair mode : kModes) {
      CAPTURE(lsjit::io::information_repair_name(mode));
      const PoseGraph g = read(text, mode);
      lsjit::testing::check_same_graph(g, plain);
      CHECK(g.num_repaired_edges() == 0);
    }
  }
  // Public files whose matrices are all positive definite.
  const std::filesystem::path dir = std::filesystem::path(LSJIT_SHARED_DATA_DIR) / "pose_graph";
  for (const char* file : {"intel.g2o", "sphere2500.g2o", "parking-garage.g2o"}) {
    CAPTURE(file);
    if (!std::filesystem::exists(dir / file)) {
      MESSAGE("skipped: " << (dir / file).string() << " is absent");
      continue;
    }
    const PoseGraph plain = lsjit::io::read_g2o(dir / file);
    for (const InformationRepair mode : {InformationRepair::BlockDiagonal, InformationRepair::NearestPD}) {
      const PoseGraph g = lsjit::io::read_g2o(dir / file, {.repair_information = mode});
      lsjit::testing::check_same_graph(g, plain);
      CHECK(g.num_repaired_edges() == 0);
    }
  }
}

TEST_CASE("io: g2o repair_information on its own: None is the identity, the names round-trip") {
  Eigen::Matrix3d omega;
  omega << 4, 0.5, 3, 0.5, 3, -2, 3, -2, 1;
  CHECK(*lsjit::io::repair_information(omega, InformationRepair::None) == omega);
  Eigen::Matrix3d block = omega;
  block(0, 2) = block(2, 0) = block(1, 2) = block(2, 1) = 0;
  CHECK(*lsjit::io::repair_information(omega, InformationRepair::BlockDiagonal) == block);
  const Eigen::Matrix3d nearest = *lsjit::io::repair_information(omega, InformationRepair::NearestPD);
  CHECK(nearest == nearest.transpose());  // exactly symmetric, as the reader requires
  CHECK(lsjit::io::upper_cholesky(nearest));
  CHECK(!lsjit::io::repair_information(Eigen::Matrix3d::Zero().eval(), InformationRepair::NearestPD));
  for (const InformationRepair mode : kModes)
    CHECK(lsjit::io::information_repair_from_name(lsjit::io::information_repair_name(mode)) == mode);
  CHECK(lsjit::io::information_repair_name(InformationRepair::BlockDiagonal) == "block-diagonal");
  CHECK(lsjit::io::information_repair_name(InformationRepair::NearestPD) == "nearest-pd");
  CHECK(!lsjit::io::information_repair_from_name("block_diagonal"));
  CHECK(!lsjit::io::information_repair_from_name(""));
}

TEST_CASE("io: g2o indefinite matrices are written only when the write options allow them") {
  const GeneratedPoseGraph generated = generate(3, 1);
  try {
    (void)lsjit::io::format_g2o(generated.graph);
    FAIL("format_g2o wrote an indefinite information matrix by default");
  } catch (const lsjit::Error& e) {
    CHECK(std::string(e.what()).find("is not symmetric positive definite") != std::string::npos);
  }
  PoseGraph asymmetric = generated.graph;
  asymmetric.edges3[generated.indefinite_edges[0]].information(0, 5) += 1;
  try {
    (void)lsjit::io::format_g2o(asymmetric, {.allow_indefinite_information = true});
    FAIL("format_g2o wrote an asymmetric information matrix");
  } catch (const lsjit::Error& e) {
    CHECK(std::string(e.what()).find("has an information matrix that is not symmetric and finite") !=
          std::string::npos);
  }
  // A repaired graph writes its repaired matrices: it reads back without a repair mode.
  const PoseGraph repaired = read(file_text(generated.graph), InformationRepair::NearestPD);
  const PoseGraph again = read(lsjit::io::format_g2o(repaired), InformationRepair::None);
  lsjit::testing::check_same_graph(again, repaired);
}

TEST_CASE("io: g2o a block-diagonal repair solves as the graph generated without the coupling") {
  // The generator's coupling sits on a diagonal Ω, and zeroing it gives that Ω back exactly:
  // the repaired problem is the plain one, so the solves agree bit for bit.
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const PoseGraph repaired = read(file_text(generate(dim, 6).graph), InformationRepair::BlockDiagonal);
    REQUIRE(repaired.num_repaired_edges() == 6);
    const PoseGraph plain = generate(dim, 0).graph;
    const auto solve = [](const PoseGraph& g) {
      lsjit::PoseGraphProblem p = lsjit::make_pose_graph_problem(g);
      return p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial);
    };
    const lsjit::SolveResult a = solve(repaired), b = solve(plain);
    REQUIRE(lsjit::converged(a.summary.termination));
    CHECK(a.summary.initial_cost == b.summary.initial_cost);
    CHECK(a.summary.final_cost == b.summary.final_cost);
    CHECK(a.summary.iterations == b.summary.iterations);
  }
}
