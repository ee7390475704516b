// IncrementalFactor against a dense solve of the same H δ = −g: after every refactor of a
// growing, changing and shrinking random factor graph; that only the marked paths are
// eliminated again; that wildfire at threshold 0 is the exact solve; and that a singular
// update changes nothing.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <random>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/incremental_factor.h"

namespace incremental_factor_test {

using lsjit::linear::IncrementalFactor;

// A random factor over `vars`: H = JᵀJ with J of (n + 2) rows, so H is SPD on its variables.
struct RandomFactor {
  std::vector<int32_t> vars;
  std::vector<double> H, g;
};

RandomFactor random_factor(const IncrementalFactor& factor, std::vector<int32_t> vars, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  int n = 0;
  for (int32_t v : vars) n += factor.dim(v);
  Eigen::MatrixXd J(n + 2, n);
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < n + 2; ++r) J(r, c) = normal(rng);
  Eigen::VectorXd r(n + 2);
  for (int k = 0; k < n + 2; ++k) r(k) = normal(rng);
  const Eigen::MatrixXd H = J.transpose() * J;
  const Eigen::VectorXd g = J.transpose() * r;
  return {std::move(vars), std::vector<double>(H.data(), H.data() + n * n), std::vector<double>(g.data(), g.data() + n)};
}

// The dense H and g of the live factors, and the solution of H δ = −g.
struct Dense {
  std::vector<RandomFactor> factors;  // by handle; empty vars: removed
  Eigen::VectorXd solve(const IncrementalFactor& factor) const {
    std::vector<int64_t> offset;
    int64_t n = 0;
    for (int32_t v = 0; v < factor.num_variables(); ++v) {
      offset.push_back(n);
      n += factor.dim(v);
    }
    Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n);
    Eigen::VectorXd g = Eigen::VectorXd::Zero(n);
    for (const RandomFactor& f : factors) {
      int64_t fn = 0;
      for (int32_t v : f.vars) fn += factor.dim(v);
      int64_t hb = 0;
      for (int32_t b : f.vars) {
        int64_t ha = 0;
        for (int32_t a : f.vars) {
          for (int c = 0; c < factor.dim(b); ++c)
            for (int r = 0; r < factor.dim(a); ++r) H(offset[a] + r, offset[b] + c) += f.H[(ha + r) + (hb + c) * fn];
          ha += factor.dim(a);
        }
        for (int r = 0; r < factor.dim(b); ++r) g(offset[b] + r) += f.g[hb + r];
        hb += factor.dim(b);
      }
    }
    return H.llt().solve(-g);
  }
};

double max_error(const IncrementalFactor& factor, const Eigen::VectorXd& expected) {
  double error = 0, scale = 1;
  int64_t at = 0;
  for (int32_t v = 0; v < factor.num_variables(); ++v) {
    const auto d = factor.delta(v);
    for (size_t r = 0; r < d.size(); ++r) {
      error = std::max(error, std::abs(d[r] - expected(at + r)));
      scale = std::max(scale, std::abs(expected(at + r)));
    }
    at += static_cast<int64_t>(d.size());
  }
  return error / scale;
}

// A chain 0 - 1 - ... - (n-1) of variables of `dim`, anchored at 0, grown one variable per
// refactor as an online problem grows (the newest variables end at the root).
void grow_chain(IncrementalFactor& factor, Dense& dense, int n, int dim, std::mt19937_64& rng);

int64_t add(IncrementalFactor& factor, Dense& dense, std::vector<int32_t> vars, std::mt19937_64& rng) {
  RandomFactor f = random_factor(factor, std::move(vars), rng);
  const int64_t h = factor.add_factor(f.vars, f.H, f.g);
  CHECK(h == static_cast<int64_t>(dense.factors.size()));
  dense.factors.push_back(std::move(f));
  return h;
}

void grow_chain(IncrementalFactor& factor, Dense& dense, int n, int dim, std::mt19937_64& rng) {
  const int32_t first = factor.add_variable(dim);
  add(factor, dense, {first}, rng);
  for (int k = 1; k < n; ++k) {
    const int32_t v = factor.add_variable(dim);
    add(factor, dense, {v - 1, v}, rng);
    REQUIRE(factor.refactor());
  }
  REQUIRE(factor.refactor());
  factor.back_substitute(0.0);
}

// A factor between a and b that any δ_a can satisfy through δ_b: J = [−I I], residual r.
// Added with a new variable b, it leaves every other variable's solution where it was.
RandomFactor between(const IncrementalFactor& factor, int32_t a, int32_t b, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  const int d = factor.dim(a);
  Eigen::MatrixXd J(d, 2 * d);
  J << -Eigen::MatrixXd::Identity(d, d), Eigen::MatrixXd::Identity(d, d);
  Eigen::VectorXd r(d);
  for (int k = 0; k < d; ++k) r(k) = normal(rng);
  const Eigen::MatrixXd H = J.transpose() * J;
  const Eigen::VectorXd g = J.transpose() * r;
  return {{a, b}, std::vector<double>(H.data(), H.data() + 4 * d * d), std::vector<double>(g.data(), g.data() + 2 * d)};
}

TEST_CASE("IncrementalFactor: a growing chain with loop closures solves like dense after every update") {
  std::mt19937_64 rng(7);
  for (int dim : {1, 3, 6}) {
    IncrementalFactor factor;
    Dense dense;
    std::uniform_int_distribution<int> coin(0, 4);
    const int32_t first = factor.add_variable(dim);
    add(factor, dense, {first}, rng);  // an anchor
    for (int step = 1; step < 120; ++step) {
      const int32_t v = factor.add_variable(dim);
      add(factor, dense, {v - 1, v}, rng);
      if (step > 10 && coin(rng) == 0) {
        std::uniform_int_distribution<int32_t> earlier(0, v - 2);
        add(factor, dense, {earlier(rng), v}, rng);
      }
      REQUIRE(factor.refactor());
      factor.back_substitute(0.0);
      CHECK(max_error(factor, dense.solve(factor)) < 1e-9);
    }
    CHECK(factor.num_cliques() > 1);
  }
}

TEST_CASE("IncrementalFactor: only the marked paths are eliminated again") {
  std::mt19937_64 rng(11);
  IncrementalFactor factor;
  Dense dense;
  grow_chain(factor, dense, 200, 3, rng);
  // A new variable on the newest one: the path from it is the root's clique.
  const int32_t v = factor.add_variable(3);
  add(factor, dense, {199, v}, rng);
  REQUIRE(factor.refactor());
  CHECK(factor.stats().variables_reeliminated <= 4);
  factor.back_substitute(0.0);
  CHECK(max_error(factor, dense.solve(factor)) < 1e-9);
  // Changing a factor deep down re-eliminates its path, and still solves exactly.
  RandomFactor f = random_factor(factor, {10, 11}, rng);
  factor.replace_factor(11, f.H, f.g);
  dense.factors[11] = f;
  REQUIRE(factor.refactor());
  CHECK(factor.stats().variables_reeliminated > 4);
  CHECK(factor.stats().variables_reeliminated < 201);
  CHECK(factor.stats().orphans >= 1);
  factor.back_substitute(0.0);
  CHECK(max_error(factor, dense.solve(factor)) < 1e-9);
}

TEST_CASE("IncrementalFactor: removing a factor is the same as never adding it") {
  std::mt19937_64 rng(3);
  IncrementalFactor factor;
  Dense dense;
  for (int k = 0; k < 60; ++k) factor.add_variable(2);
  add(factor, dense, {0}, rng);
  for (int32_t v = 1; v < 60; ++v) add(factor, dense, {v - 1, v}, rng);
  const int64_t closure = add(factor, dense, {5, 50}, rng);
  REQUIRE(factor.refactor());
  factor.back_substitute(0.0);
  factor.remove_factor(closure);
  dense.factors[closure].vars.clear();
  CHECK_FALSE(factor.has_factor(closure));
  REQUIRE(factor.refactor());
  factor.back_substitute(0.0);
  CHECK(max_error(factor, dense.solve(factor)) < 1e-9);
  CHECK_THROWS_AS(factor.remove_factor(closure), lsjit::Error);
}

TEST_CASE("IncrementalFactor: wildfire skips quiet subtrees and stays within its threshold") {
  std::mt19937_64 rng(5);
  IncrementalFactor factor;
  Dense dense;
  grow_chain(factor, dense, 300, 3, rng);
  // Nothing changed: nothing is visited below the roots.
  factor.back_substitute(1e-3);
  CHECK(factor.stats().variables_changed == 0);
  // A new variable that the rest does not feel: only the refactored top is rewritten.
  const int32_t v = factor.add_variable(3);
  RandomFactor f = between(factor, 299, v, rng);
  factor.add_factor(f.vars, f.H, f.g);
  dense.factors.push_back(f);
  REQUIRE(factor.refactor());
  factor.back_substitute(1e-6);
  CHECK(factor.stats().variables_changed <= 4);
  CHECK(max_error(factor, dense.solve(factor)) < 1e-6);
  // A loop closure moves everything: with threshold 0 everything is solved again.
  add(factor, dense, {0, v}, rng);
  REQUIRE(factor.refactor());
  factor.back_substitute(0.0);
  CHECK(factor.stats().variables_changed == 301);
  CHECK(max_error(factor, dense.solve(factor)) < 1e-9);
}

TEST_CASE("IncrementalFactor: a singular update fails and leaves the factor as it was") {
  std::mt19937_64 rng(9);
  IncrementalFactor factor;
  Dense dense;
  grow_chain(factor, dense, 20, 3, rng);
  const Eigen::VectorXd before = dense.solve(factor);
  const int64_t cliques = factor.num_cliques();
  factor.add_variable(3);  // no factor reaches it: marked by nothing, so no change
  const int32_t lonely = factor.add_variable(3);
  factor.mark(lonely);
  CHECK_FALSE(factor.refactor());
  CHECK(factor.last_error().find("not positive definite") != std::string::npos);
  CHECK(factor.num_cliques() == cliques);
  CHECK(factor.has_marks());
  // The known part still solves as before.
  factor.back_substitute(0.0);
  for (int32_t v = 0; v < 20; ++v)
    for (int r = 0; r < 3; ++r) CHECK(factor.delta(v)[r] == doctest::Approx(before(3 * v + r)).epsilon(1e-9));
  // Bad arguments throw before changing anything.
  const std::vector<double> H(36, 0.0), g(6, 0.0);
  CHECK_THROWS_AS(factor.add_factor(std::vector<int32_t>{0, 0}, H, g), lsjit::Error);
  CHECK_THROWS_AS(factor.add_factor(std::vector<int32_t>{0, 99}, H, g), lsjit::Error);
  CHECK_THROWS_AS(factor.add_factor(std::vector<int32_t>{0}, H, g), lsjit::Error);
  std::vector<double> nan_g(6, 0.0);
  nan_g[2] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(factor.add_factor(std::vector<int32_t>{0, 1}, H, nan_g), lsjit::Error);
}

}  // namespace incremental_factor_test
