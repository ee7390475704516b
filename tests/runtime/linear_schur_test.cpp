// The Schur complement solvers against a dense LDLT of the full system on random bundle
// adjustment problems (fixed-size kernels and the runtime-sized fallback), their
// independence from the thread count, the reuse of their analysis, their failures, and the
// corner cases of the structure: a point seen once, a camera seeing nothing, no points, no
// cameras.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/schur_dense.h"
#include "lsjit/runtime/solve/linear/schur_iterative.h"
#include "lsjit/runtime/solve/linear/schur_kernels.h"
#include "lsjit/runtime/solve/linear/schur_sparse.h"

// A named namespace keeps these names out of the files a unity build puts after this one
// (tests/CMakeLists.txt).
namespace linear_schur_test {
using namespace lsjit::linear;
using lsjit::testing::fill_random;
using lsjit::testing::make_matrix;
using lsjit::testing::random_vector;
using lsjit::testing::RandomBlockStructure;

namespace {

constexpr int kDynamic = Eigen::Dynamic;

// A bundle adjustment structure: `cameras` cameras then `points` points, sizes cycled from
// the lists; a prior on every variable (fill_random makes it well conditioned), a 2-row
// residual per observation (each point seen by 1..max_views random cameras, slots in random
// order), and camera_pairs residuals between two cameras (off-diagonal blocks of A).
RandomBlockStructure random_bundle(std::mt19937_64& rng, int cameras, int points,
                                   const std::vector<int>& camera_sizes,
                                   const std::vector<int>& point_sizes, int max_views = 4,
                                   int camera_pairs = 0) {
  RandomBlockStructure s;
  for (int c = 0; c < cameras; ++c) s.block_sizes.push_back(camera_sizes[c % camera_sizes.size()]);
  for (int p = 0; p < points; ++p) s.block_sizes.push_back(point_sizes[p % point_sizes.size()]);
  for (int i = 0; i < cameras + points; ++i) s.residuals.push_back({{i}, s.block_sizes[i]});
  std::uniform_int_distribution<int> camera(0, std::max(cameras - 1, 0)), coin(0, 1);
  std::uniform_int_distribution<int> views(1, std::max(std::min(max_views, cameras), 1));
  for (int p = 0; cameras > 0 && p < points; ++p) {
    std::set<int> seen;
    for (int target = views(rng); static_cast<int>(seen.size()) < target;) seen.insert(camera(rng));
    for (int c : seen)
      s.residuals.push_back({coin(rng) ? std::vector<int>{c, cameras + p}
                                       : std::vector<int>{cameras + p, c}, 2});
  }
  for (int k = 0; cameras >= 2 && k < camera_pairs; ++k) {
    const int a = camera(rng), b = camera(rng);
    if (a != b) s.residuals.push_back({{a, b}, 3});
  }
  for (const auto& r : s.residuals)
    if (r.vars.size() == 2) s.pairs.emplace_back(r.vars[0], r.vars[1]);
  return s;
}

LinearSolverOptions tight(int threads = 1) {
  LinearSolverOptions o;
  o.cg_relative_tolerance = 1e-14;
  o.max_cg_iterations = 10000;
  o.num_threads = threads;
  return o;
}

// Every Schur solver: dense, sparse with the default sparse Cholesky (supernodal) and with
// Eigen's, iterative.
std::vector<std::unique_ptr<SchurSolver>> schur_solvers(const BlockSparseSymmetric& H, int e) {
  std::vector<std::unique_ptr<SchurSolver>> solvers;
  solvers.push_back(std::make_unique<DenseSchur>(H.shared_pattern(), e));
  solvers.push_back(std::make_unique<SparseSchur>(H.shared_pattern(), e));
  solvers.push_back(std::make_unique<SparseSchur>(H.shared_pattern(), e,
                                                  lsjit::LinearSolver::EigenSparseCholesky));
  solvers.push_back(std::make_unique<IterativeSchur>(H.shared_pattern(), e));
  return solvers;
}

Eigen::VectorXd reference_solution(const BlockSparseSymmetric& H, const Eigen::VectorXd* shift,
                                   const Eigen::VectorXd& b) {
  Eigen::MatrixXd dense = H.to_dense();
  if (shift != nullptr) dense.diagonal() += *shift;
  return dense.ldlt().solve(b);
}

void check_solve(SchurSolver& solver, const BlockSparseSymmetric& H, const Eigen::VectorXd* shift,
                 const Eigen::VectorXd& b) {
  CAPTURE(solver.name());
  Eigen::VectorXd x = Eigen::VectorXd::Constant(H.dim(), -99.0);
  const LinearSolveSummary s =
      solver.solve(H, shift != nullptr ? shift->data() : nullptr, b.data(), x.data(), tight());
  CAPTURE(s.message);
  REQUIRE(s.ok);
  CHECK(s.converged);
  const Eigen::VectorXd reference = reference_solution(H, shift, b);
  CHECK((x - reference).norm() <= 1e-9 * reference.norm());
  CHECK(s.direct == (solver.name() != "iterative_schur"));  // see linear_solver_test.cpp
}

LinearSolveSummary solve(LinearSolver& solver, const BlockSparseSymmetric& H, const double* shift,
                         const double* b, const LinearSolverOptions& options = tight()) {
  std::vector<double> x(H.dim());
  return solver.solve(H, shift, b, x.data(), options);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Sizes {
  std::vector<int> cameras, points;
  std::pair<int, int> kernel;  // the kernel_block_sizes() these must dispatch to
};

}  // namespace

TEST_CASE("linear schur solvers match a dense solve on random bundle adjustment problems") {
  const Sizes cases[] = {
      {{9}, {3}, {9, 3}},   {{6}, {3}, {6, 3}},   {{7}, {2}, {7, 2}},
      {{5}, {1}, {5, 1}},   {{3}, {3}, {3, 3}},   {{12}, {4}, {12, 4}},
      {{1}, {1}, {1, 1}},
      // One and two rows past a full chunk of 8 lanes, summed flat with AVX-512.
      {{10}, {3}, {10, 3}}, {{9}, {1}, {9, 1}}, {{9}, {4}, {9, 4}},
      // The fallbacks: a camera size beyond 12, a point size beyond 4, mixed sizes.
      {{13}, {3}, {kDynamic, 3}}, {{6}, {5}, {kDynamic, kDynamic}},
      {{6, 9}, {3}, {kDynamic, 3}}, {{9}, {3, 1}, {kDynamic, kDynamic}},
      {{6, 9, 2}, {2, 4, 3}, {kDynamic, kDynamic}},
  };
  std::mt19937_64 rng(50);
  for (const Sizes& sizes : cases) {
    for (int trial = 0; trial < 3; ++trial) {
      CAPTURE(sizes.kernel.first);
      CAPTURE(sizes.kernel.second);
      CAPTURE(trial);
      const int cameras = 2 + 3 * trial, points = 5 + 11 * trial;
      const RandomBlockStructure s = random_bundle(rng, cameras, points, sizes.cameras,
                                                   sizes.points, 4, trial);
      BlockSparseSymmetric H = make_matrix(s);
      fill_random(s, H, rng);
      const Eigen::VectorXd b = random_vector(H.dim(), rng);
      const Eigen::VectorXd shift = random_vector(H.dim(), rng, 0.0, 2.0);
      for (auto& solver : schur_solvers(H, cameras)) {
        CHECK(solver->kernel_block_sizes() == sizes.kernel);
        check_solve(*solver, H, nullptr, b);
        check_solve(*solver, H, &shift, b);
      }
    }
  }
}

TEST_CASE("linear schur kernels: the Schur update for this CPU (AVX-512 or AVX2 + FMA where it has them) "
          "agrees with the generic code") {
  // S = A + D_A − Σ B C⁻¹ Bᵀ and the reduced right-hand side (assemble_schur, dense target)
  // and the inverses of S's diagonal blocks (invert_schur_diagonal), with make_schur_kernels'
  // host_isa on and off: equal to rounding (the FMA path rounds differently), for every fixed
  // size the update serves and the runtime-sized fallback.
  const std::pair<int, int> sizes[] = {{9, 3}, {6, 3}, {7, 2}, {5, 1}, {12, 4}, {3, 3}, {1, 1}, {10, 3}, {9, 1}, {9, 4}, {13, 5}};
  std::mt19937_64 rng(57);
  for (const auto& [cs, ps] : sizes) {
    CAPTURE(cs);
    CAPTURE(ps);
    const int cameras = 7;
    const RandomBlockStructure s = random_bundle(rng, cameras, 60, {cs}, {ps}, 5, 4);
    BlockSparseSymmetric H = make_matrix(s);
    fill_random(s, H, rng);
    const Eigen::VectorXd shift = random_vector(H.dim(), rng, 0.0, 2.0);
    const SchurStructure structure(H.shared_pattern(), cameras);
    const auto host = make_schur_kernels(structure, true), generic = make_schur_kernels(structure, false);
    REQUIRE(host->camera_block_size() == (cs <= 12 && ps <= 4 ? cs : -1));
    std::vector<double> inverses(structure.point_square_total());
    REQUIRE(generic->invert_points(H.values().data(), shift.data(), inverses.data(), 0,
                                   structure.num_points()) == -1);
    const int64_t n = structure.camera_dim();
    Eigen::MatrixXd S_host = Eigen::MatrixXd::Zero(n, n), S_generic = S_host;  // symmetric: the
    // row-major upper blocks read the same in column-major storage, transposed
    SchurTarget target{S_host.data(), n, nullptr};
    const ObservationPairs pairs(structure);
    // With b, assemble_schur also forms the reduced right-hand side from E = B C⁻¹; reduce_rhs
    // forms it from B and v = C⁻¹ b_C, the reference.
    const Eigen::VectorXd rhs = random_vector(H.dim(), rng);
    Eigen::VectorXd r_host(n), r_generic(n), r_reference(n), v(structure.point_dim());
    host->assemble_schur(H.values().data(), shift.data(), inverses.data(), pairs, target, rhs.data(),
                         r_host.data(), 0, cameras);
    target.dense = S_generic.data();
    generic->assemble_schur(H.values().data(), shift.data(), inverses.data(), pairs, target,
                            rhs.data(), r_generic.data(), 0, cameras);
    // S's row-major upper blocks are Eigen's (column-major) lower triangle here; the strict
    // upper one holds the diagonal blocks' lower triangles, which are not S's.
    const Eigen::MatrixXd L_host = S_host.triangularView<Eigen::Lower>(),
                          L_generic = S_generic.triangularView<Eigen::Lower>();
    CHECK(L_generic.norm() > 0);
    CHECK((L_host - L_generic).norm() <= 1e-13 * L_generic.norm());
    generic->solve_points(inverses.data(), rhs.data() + n, nullptr, v.data(), 0, structure.num_points());
    generic->reduce_rhs(H.values().data(), v.data(), rhs.data(), r_reference.data(), 0, cameras);
    CHECK(r_reference.norm() > 0);
    CHECK((r_host - r_reference).norm() <= 1e-13 * r_reference.norm());
    CHECK((r_generic - r_reference).norm() <= 1e-13 * r_reference.norm());
    std::vector<double> inv_host(structure.camera_square_total()), inv_generic(inv_host.size());
    REQUIRE(host->invert_schur_diagonal(H.values().data(), shift.data(), inverses.data(),
                                        inv_host.data(), 0, cameras) == -1);
    REQUIRE(generic->invert_schur_diagonal(H.values().data(), shift.data(), inverses.data(),
                                           inv_generic.data(), 0, cameras) == -1);
    const Eigen::Map<const Eigen::VectorXd> a(inv_host.data(), inv_host.size()), b(inv_generic.data(), inv_generic.size());
    CHECK((a - b).norm() <= 1e-11 * b.norm());
  }
}

TEST_CASE("linear ObservationPairs lists every two observations of a point by block, whichever way it walks") {
  // The reference straight from the definition: for each point, each two of its
  // observations (i <= j, i = j included) as (i, j, point, B_jp's offset, B_ip's index in
  // camera i's list), sorted by block and then point.
  std::mt19937_64 rng(91);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int cameras = 1 + trial % 9, points = trial % 5 == 0 ? 0 : 3 + trial * 7;
    const RandomBlockStructure s = random_bundle(rng, cameras, points, {6, 9}, {3, 2}, 1 + trial % 6, trial % 3);
    const BlockSparseSymmetric H = make_matrix(s);
    const SchurStructure structure(H.shared_pattern(), cameras);
    struct Listed {
      int i, j, point;
      int64_t other;
      int32_t local;
      auto operator<=>(const Listed&) const = default;
    };
    std::vector<Listed> expected;
    for (int i = 0; i < cameras; ++i) {
      const auto mine = structure.camera_observations(i);
      for (size_t m = 0; m < mine.size(); ++m)
        for (int64_t q = structure.point_observations_begin(mine[m].point);
             q < structure.point_observations_end(mine[m].point); ++q) {
          const auto& o = structure.observation(q);
          if (o.camera >= i) expected.push_back({i, o.camera, mine[m].point, o.offset, static_cast<int32_t>(m)});
        }
    }
    std::sort(expected.begin(), expected.end());
    for (const auto walk : {ObservationPairs::Walk::ByPoint, ObservationPairs::Walk::ByCamera,
                            ObservationPairs::Walk::Auto}) {
      const ObservationPairs pairs(structure, walk);
      std::vector<Listed> got;
      for (int i = 0; i < cameras; ++i) {
        int last_j = -1;
        for (const ObservationPairs::Run& run : pairs.runs(i)) {
          CHECK(run.camera > last_j);  // runs in increasing camera, none empty
          CHECK(run.end > run.begin);
          last_j = run.camera;
          for (int64_t k = run.begin; k < run.end; ++k) {
            const ObservationPairs::Pair& pair = pairs.pairs()[k];
            // the point is the one whose observation by camera i is `local`
            const int point = structure.camera_observations(i)[pair.local].point;
            got.push_back({i, run.camera, point, pair.other, pair.local});
          }
        }
      }
      CHECK(pairs.num_pairs() == static_cast<int64_t>(got.size()));
      // Each run's pairs come in increasing point, so the runs read in order are sorted.
      CHECK(std::is_sorted(got.begin(), got.end()));
      CHECK(got == expected);
      int64_t most = 0;
      for (int i = 0; i < cameras; ++i) most = std::max<int64_t>(most, structure.camera_observations(i).size());
      CHECK(pairs.max_camera_observations() == most);
    }
  }
}

TEST_CASE("linear schur solvers give bit-identical results for 1, 2 and 3 threads") {
  std::mt19937_64 rng(51);
  const RandomBlockStructure s = random_bundle(rng, 24, 600, {9}, {3}, 6, 10);
  BlockSparseSymmetric H = make_matrix(s);
  fill_random(s, H, rng);
  const Eigen::VectorXd b = random_vector(H.dim(), rng);
  Eigen::VectorXd shift(H.dim());
  H.diagonal(shift.data());
  shift *= 1e-3;
  for (auto& solver : schur_solvers(H, 24)) {
    CAPTURE(solver->name());
    LinearSolverOptions options;  // CG's default tolerance: its stopping point must match too
    std::vector<double> one(H.dim()), many(H.dim());
    const LinearSolveSummary first = solver->solve(H, shift.data(), b.data(), one.data(), options);
    REQUIRE(first.ok);
    for (int threads : {2, 3, 1, 3}) {
      CAPTURE(threads);
      options.num_threads = threads;
      const LinearSolveSummary again = solver->solve(H, shift.data(), b.data(), many.data(), options);
      REQUIRE(again.ok);
      CHECK(again.iterations == first.iterations);
      CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(double)) == 0);
    }
  }
}

TEST_CASE("linear schur solvers analyse once across new values and shifts") {
  std::mt19937_64 rng(52);
  const RandomBlockStructure s = random_bundle(rng, 8, 60, {9}, {3}, 4, 4);
  BlockSparseSymmetric H = make_matrix(s);
  const BlockSparseSymmetric structure = H;  // zero values: only the pattern is used
  auto solvers = schur_solvers(structure, 8);
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {
    fill_random(s, H, rng);
    const Eigen::VectorXd b = random_vector(H.dim(), rng);
    for (double lambda : {1e-4, 1e-1, 10.0}) {  // an LM iteration: several dampings per H
      Eigen::VectorXd shift(H.dim());
      H.diagonal(shift.data());
      shift *= lambda;
      for (auto& solver : solvers) check_solve(*solver, H, &shift, b);
    }
  }
  for (auto& solver : solvers) {
    CAPTURE(solver->name());
    CHECK(solver->analyses() == 1);
    CHECK(solver->factorizations() == rounds * 3);
    if (const auto* sparse = dynamic_cast<const SparseSchur*>(solver.get())) {
      CHECK(sparse->reduced_solver().analyses() == 1);
      CHECK(sparse->reduced_solver().factorizations() == rounds * 3);
    }
  }
}

TEST_CASE("linear sparse schur: the reduced pattern is A's blocks plus co-observing cameras") {
  std::mt19937_64 rng(53);
  const int cameras = 12;
  const RandomBlockStructure s = random_bundle(rng, cameras, 30, {6}, {3}, 3, 5);
  const BlockSparseSymmetric H = make_matrix(s);
  std::set<std::pair<int, int>> expected;
  std::vector<std::vector<int>> seen_by(s.block_sizes.size());
  for (const auto& r : s.residuals) {
    if (r.vars.size() != 2) continue;
    const int a = std::min(r.vars[0], r.vars[1]), c = std::max(r.vars[0], r.vars[1]);
    if (c < cameras) expected.emplace(a, c);
    else seen_by[c].push_back(a);
  }
  for (const auto& list : seen_by)
    for (int a : list)
      for (int c : list)
        if (a < c) expected.emplace(a, c);
  const SparseSchur solver(H.shared_pattern(), cameras);
  const BlockPattern want(std::vector<int>(cameras, 6), {expected.begin(), expected.end()});
  CHECK(solver.reduced_pattern() == want);
}

TEST_CASE("linear schur solvers on the corner cases of the structure") {
  std::mt19937_64 rng(54);
  // Points seen once (max_views = 1) and cameras that see nothing (more cameras than points).
  const RandomBlockStructure seen_once = random_bundle(rng, 9, 4, {9}, {3}, 1);
  // Only cameras, coupled to each other: nothing to eliminate.
  const RandomBlockStructure no_points = random_bundle(rng, 6, 0, {9}, {3}, 1, 8);
  // Only points: S is empty.
  const RandomBlockStructure no_cameras = random_bundle(rng, 0, 7, {9}, {3});
  for (const auto* s : {&seen_once, &no_points, &no_cameras}) {
    const int cameras = s == &seen_once ? 9 : s == &no_points ? 6 : 0;
    CAPTURE(cameras);
    BlockSparseSymmetric H = make_matrix(*s);
    fill_random(*s, H, rng);
    const Eigen::VectorXd b = random_vector(H.dim(), rng);
    const Eigen::VectorXd shift = random_vector(H.dim(), rng, 0.0, 1.0);
    for (auto& solver : schur_solvers(H, cameras)) {
      check_solve(*solver, H, nullptr, b);
      check_solve(*solver, H, &shift, b);
    }
  }
  // Nine cameras and four single observations leave cameras without points.
  const BlockSparseSymmetric H = make_matrix(seen_once);
  const SchurStructure structure(H.shared_pattern(), 9);
  int empty = 0;
  for (int i = 0; i < 9; ++i) empty += structure.camera_observations(i).empty();
  CHECK(empty >= 5);
  for (int p = 0; p < 4; ++p) CHECK(structure.point_observations(p).size() == 1);
}

TEST_CASE("linear schur solvers reject non-positive-definite point blocks and reduced systems") {
  // 1x1 camera, 1x1 point: H = [[1, c], [c, 1]]. C = 1 is fine, S = 1 − c² is 0 (singular) for
  // c = 1 and negative (indefinite) for c = 2, which every Schur solver must see in S.
  for (double c : {1.0, 2.0}) {
    CAPTURE(c);
    BlockSparseSymmetric H({1, 1}, {{0, 1}});
    const double one = 1;
    H.add_to_block(0, 0, &one);
    H.add_to_block(1, 1, &one);
    H.add_to_block(0, 1, &c);
    const double b[2] = {1, -1};
    for (auto& solver : schur_solvers(H, 1)) {
      CAPTURE(solver->name());
      const LinearSolveSummary s = solve(*solver, H, nullptr, b);
      CHECK(!s.ok);
      CHECK(contains(s.message, "not positive definite"));
    }
  }
  // A point no residual touches: C_p = 0, singular, found before S is formed. Damping it
  // makes the system solvable with the same solver objects.
  std::mt19937_64 rng(55);
  RandomBlockStructure s = random_bundle(rng, 3, 5, {6}, {3});
  s.residuals.erase(s.residuals.begin() + 3 + 4);  // the prior of point 4 (block 7)
  BlockSparseSymmetric H = make_matrix(s);
  fill_random(s, H, rng);
  std::fill_n(H.values().data() + H.find(7, 7), 9, 0.0);
  for (int c = 0; c < 3; ++c)
    if (const int64_t at = H.find(c, 7); at >= 0) std::fill_n(H.values().data() + at, 18, 0.0);
  const Eigen::VectorXd b = random_vector(H.dim(), rng);
  Eigen::VectorXd shift = Eigen::VectorXd::Zero(H.dim());
  for (auto& solver : schur_solvers(H, 3)) {
    CAPTURE(solver->name());
    const LinearSolveSummary bad = solve(*solver, H, nullptr, b.data());
    CHECK(!bad.ok);
    CHECK(contains(bad.message, "not positive definite"));
    CHECK(contains(bad.message, "diagonal block 7 "));
    CHECK(contains(bad.message, "eliminated point"));
    shift.tail(3).setConstant(1.0);
    check_solve(*solver, H, &shift, b);
  }
}

TEST_CASE("linear schur solvers reject a random system made indefinite by a negative shift") {
  std::mt19937_64 rng(56);
  const RandomBlockStructure s = random_bundle(rng, 6, 40, {9}, {3}, 4, 3);
  BlockSparseSymmetric H = make_matrix(s);
  fill_random(s, H, rng);
  // Shift by −c, c between H's smallest eigenvalue and both its second smallest and the
  // smallest of any diagonal block: one negative eigenvalue while every point block stays
  // positive definite, so the failure must be found in the reduced system (for the iterative
  // solver: by its preconditioner or a breakdown).
  const Eigen::MatrixXd dense = H.to_dense();
  const Eigen::VectorXd eigenvalues = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(dense).eigenvalues();
  double next = eigenvalues(1);
  for (int i = 0; i < H.num_blocks(); ++i) {
    const Eigen::Index n = H.block_size(i), r = H.scalar_offset(i);
    next = std::min(next, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(dense.block(r, r, n, n))
                              .eigenvalues()(0));
  }
  REQUIRE(next - eigenvalues(0) > 1e-3 * eigenvalues(0));
  const Eigen::VectorXd shift = Eigen::VectorXd::Constant(H.dim(), -0.5 * (eigenvalues(0) + next));
  const Eigen::VectorXd b = random_vector(H.dim(), rng);
  for (auto& solver : schur_solvers(H, 6)) {
    CAPTURE(solver->name());
    const LinearSolveSummary bad = solve(*solver, H, shift.data(), b.data());
    CAPTURE(bad.message);
    CHECK(!bad.ok);
    CHECK(contains(bad.message, "not positive definite"));
    CHECK(!contains(bad.message, "eliminated point"));
    const Eigen::VectorXd damped = Eigen::VectorXd::Constant(H.dim(), 0.5);
    check_solve(*solver, H, &damped, b);
  }
}

TEST_CASE("linear schur solvers reject NaN and infinity, and ignore diagonal lower triangles") {
  std::mt19937_64 rng(57);
  const RandomBlockStructure s = random_bundle(rng, 4, 12, {9}, {3});
  BlockSparseSymmetric good = make_matrix(s);
  fill_random(s, good, rng);
  const Eigen::VectorXd b = random_vector(good.dim(), rng);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  BlockSparseSymmetric nan_point = good, inf_observation = good, nan_camera = good;
  nan_point.values()[good.find(9, 9) + 4] = nan;
  const SchurStructure structure(good.shared_pattern(), 4);
  const SchurStructure::Observation o = structure.point_observations(0)[0];
  inf_observation.values()[o.offset + 1] = inf;
  nan_camera.values()[good.find(2, 2) + 8] = nan;
  Eigen::VectorXd nan_shift = Eigen::VectorXd::Ones(good.dim()), inf_b = b;
  nan_shift(good.dim() - 1) = nan;
  inf_b(40) = -inf;

  // NaN below the diagonal of every diagonal block is never read.
  BlockSparseSymmetric lower_nan = good;
  for (int i = 0; i < good.num_blocks(); ++i) {
    const int n = good.block_size(i);
    for (int a = 1; a < n; ++a)
      for (int c = 0; c < a; ++c) lower_nan.values()[good.find(i, i) + a * n + c] = nan;
  }
  for (auto& solver : schur_solvers(good, 4)) {
    CAPTURE(solver->name());
    LinearSolveSummary r = solve(*solver, nan_point, nullptr, b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "block (9, 9)"));
    r = solve(*solver, inf_observation, nullptr, b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "block (" + std::to_string(o.camera) + ", 4)"));
    r = solve(*solver, nan_camera, nullptr, b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "block (2, 2)"));
    r = solve(*solver, good, nan_shift.data(), b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "shift[" + std::to_string(good.dim() - 1) + "] = nan"));
    r = solve(*solver, good, nullptr, inf_b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "b[40] = -inf"));
    check_solve(*solver, lower_nan, nullptr, b);
    check_solve(*solver, good, nullptr, b);  // still usable
  }
}

TEST_CASE("linear schur solvers: a NaN or infinity at any value of A that is read is named, whatever "
          "its block") {
  // dense_schur does not scan A before solving: it relies on every such value making S or a
  // point inverse non-finite (schur_dense.h). Every position, each kind of bad value.
  std::mt19937_64 rng(59);
  const RandomBlockStructure s = random_bundle(rng, 3, 7, {9}, {3}, 3, 1);
  BlockSparseSymmetric good = make_matrix(s);
  fill_random(s, good, rng);
  const Eigen::VectorXd b = random_vector(good.dim(), rng);
  const Eigen::VectorXd shift = random_vector(good.dim(), rng, 0.0, 2.0);
  const BlockPattern& p = good.pattern();
  int checked = 0;
  for (auto& solver : schur_solvers(good, 3)) {
    CAPTURE(solver->name());
    for (int i = 0; i < p.num_blocks(); ++i)
      for (int64_t k = p.row_begin(i); k < p.row_end(i); ++k) {
        const int j = p.col(k), ri = p.block_size(i), cj = p.block_size(j);
        for (int a = 0; a < ri; ++a)
          for (int c = i == j ? a : 0; c < cj; ++c)
            for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()}) {
              CAPTURE(i);
              CAPTURE(j);
              CAPTURE(a);
              CAPTURE(c);
              CAPTURE(bad);
              BlockSparseSymmetric A = good;
              A.values()[p.offset(k) + a * cj + c] = bad;
              const LinearSolveSummary r = solve(*solver, A, shift.data(), b.data());
              CHECK(!r.ok);
              CHECK(contains(r.message, "A has a non-finite value in block (" + std::to_string(i) + ", " +
                                            std::to_string(j) + ")"));
              ++checked;
            }
      }
    check_solve(*solver, good, &shift, b);  // still usable
  }
  CHECK(checked > 1000);
}

TEST_CASE("linear schur solvers refuse coupled eliminated blocks and bad elimination points") {
  // Blocks 2 and 3 share a residual: eliminating from 2 on is impossible, from 3 on fine.
  const BlockSparseSymmetric H({6, 6, 3, 3, 3}, {{0, 2}, {1, 3}, {2, 3}, {0, 4}});
  for (lsjit::LinearSolver type : {lsjit::LinearSolver::DenseSchur, lsjit::LinearSolver::SparseSchur,
                                lsjit::LinearSolver::IterativeSchur}) {
    CAPTURE(linear_solver_name(type));
    try {
      make_schur_solver(type, H.shared_pattern(), 2);
      FAIL("eliminating coupled blocks was accepted");
    } catch (const lsjit::Error& e) {
      CHECK(contains(e.what(), "eliminated blocks 2 and 3 are coupled"));
    }
    CHECK(make_schur_solver(type, H.shared_pattern(), 3)->name() == linear_solver_name(type));
    CHECK_THROWS_AS(make_schur_solver(type, H.shared_pattern(), 6), lsjit::Error);
    CHECK_THROWS_AS(make_schur_solver(type, H.shared_pattern(), -1), lsjit::Error);
    try {
      make_linear_solver(type, H.shared_pattern());
      FAIL("make_linear_solver made a Schur solver without an elimination point");
    } catch (const lsjit::Error& e) {
      CHECK(contains(e.what(), "make_schur_solver"));
    }
  }
  CHECK_THROWS_AS(make_schur_solver(lsjit::LinearSolver::SparseCholesky, H.shared_pattern(), 3), lsjit::Error);
  CHECK_THROWS_AS(SparseSchur(H.shared_pattern(), 3, lsjit::LinearSolver::ConjugateGradient),
                  lsjit::Error);
}

TEST_CASE("linear eliminable_suffix finds the trailing uncoupled blocks of one size") {
  CHECK(!eliminable_suffix(BlockPattern({}, {})).has_value());
  // Cameras 0..2 (size 9; camera 2 sees nothing), points 3..5.
  CHECK(eliminable_suffix(BlockPattern({9, 9, 9, 3, 3, 3}, {{0, 3}, {1, 3}, {1, 4}, {0, 5}})) == 3);
  // A point coupled to the next point: the run starts after it.
  CHECK(eliminable_suffix(BlockPattern({9, 3, 3, 3}, {{0, 1}, {1, 2}, {0, 3}})) == 2);
  // Nothing coupled and one size: everything.
  CHECK(eliminable_suffix(BlockPattern({2, 2, 2}, {})) == 0);
  // Mixed point sizes end the run.
  CHECK(eliminable_suffix(BlockPattern({9, 1, 3, 3}, {{0, 1}, {0, 2}, {0, 3}})) == 2);
  std::mt19937_64 rng(58);
  const RandomBlockStructure s = random_bundle(rng, 5, 20, {9}, {3}, 3, 4);
  CHECK(eliminable_suffix(make_matrix(s).pattern()) == 5);
}

TEST_CASE("linear iterative schur: iteration limit, runtime tolerance, bad options") {
  std::mt19937_64 rng(59);
  const RandomBlockStructure s = random_bundle(rng, 20, 200, {9}, {3}, 5, 10);
  BlockSparseSymmetric H = make_matrix(s);
  fill_random(s, H, rng);
  const Eigen::VectorXd b = random_vector(H.dim(), rng);
  IterativeSchur solver(H.shared_pattern(), 20);
  Eigen::VectorXd x(H.dim());
  LinearSolverOptions options;
  options.max_cg_iterations = 2;
  options.cg_relative_tolerance = 1e-14;
  LinearSolveSummary r = solver.solve(H, nullptr, b.data(), x.data(), options);
  CHECK(r.ok);
  CHECK(!r.converged);
  CHECK(r.iterations == 2);
  CHECK(contains(r.message, "max_cg_iterations = 2"));
  // The reported residual is relative to the reduced right-hand side r = b_A − B C⁻¹ b_C
  // and, up to the recurrence's rounding, the full system's: back substitution leaves none
  // in the point rows.
  const Eigen::Index na = solver.structure().camera_dim(), nc = H.dim() - na;
  const Eigen::MatrixXd dense = H.to_dense();
  const Eigen::VectorXd reduced_rhs =
      b.head(na) - dense.topRightCorner(na, nc) * dense.bottomRightCorner(nc, nc).ldlt().solve(b.tail(nc));
  int previous_iterations = 1 << 30;
  for (double tolerance : {1e-12, 1e-6, 1e-2}) {
    CAPTURE(tolerance);
    options.max_cg_iterations = 1000;
    options.cg_relative_tolerance = tolerance;
    r = solver.solve(H, nullptr, b.data(), x.data(), options);
    CHECK(r.ok);
    CHECK(r.converged);
    CHECK(r.relative_residual <= tolerance);
    CHECK(r.iterations < previous_iterations);
    previous_iterations = r.iterations;
    Eigen::VectorXd Hx(H.dim());
    H.multiply(x.data(), Hx.data());
    const Eigen::VectorXd residual = b - Hx;
    CHECK(residual.tail(nc).norm() <= 1e-13 * b.norm());
    CHECK(residual.head(na).norm() <= tolerance * 1.01 * reduced_rhs.norm() + 1e-13 * b.norm());
  }
  for (auto [iterations, tolerance] : {std::pair{0, 1e-6}, std::pair{10, -1.0},
                                       std::pair{10, std::numeric_limits<double>::quiet_NaN()}}) {
    options.max_cg_iterations = iterations;
    options.cg_relative_tolerance = tolerance;
    r = solver.solve(H, nullptr, b.data(), x.data(), options);
    CHECK(!r.ok);
    CHECK(contains(r.message, "max_cg_iterations"));
  }
  for (auto& any : schur_solvers(H, 20)) {
    CAPTURE(any->name());
    r = solve(*any, H, nullptr, b.data(), tight(-1));
    CHECK(!r.ok);
    CHECK(contains(r.message, "num_threads"));
    CHECK(solve(*any, H, nullptr, b.data(), tight(0)).ok);  // 0: one thread per core
  }
}

TEST_CASE("linear schur solver names and types") {
  for (lsjit::LinearSolver t : {lsjit::LinearSolver::DenseSchur, lsjit::LinearSolver::SparseSchur,
                             lsjit::LinearSolver::IterativeSchur})
    CHECK(lsjit::linear_solver_from_name(linear_solver_name(t)) == t);
  CHECK(linear_solver_name(lsjit::LinearSolver::DenseSchur) == "dense_schur");
  CHECK(linear_solver_name(lsjit::LinearSolver::SparseSchur) == "sparse_schur");
  CHECK(linear_solver_name(lsjit::LinearSolver::IterativeSchur) == "iterative_schur");
  const BlockSparseSymmetric H({9, 3}, {{0, 1}});
  const SparseSchur sparse(H.shared_pattern(), 1);
  CHECK(sparse.reduced_solver().name() == "supernodal_cholesky");
}

}  // namespace linear_schur_test
