// SupernodalCholesky::solve() allocates nothing once the solver exists: every buffer is the
// analysis'. Counted through the replaced global operator new of counting_allocator.h.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

#include "counting_allocator.h"

using lsjit::testing::allocations;
using lsjit::testing::counting;

using namespace lsjit::linear;

TEST_CASE("linear supernodal: solve() allocates nothing after the first call") {
  // The counter itself works: a vector allocated while counting is seen.
  counting = true;
  { std::vector<double> probe(10); }
  counting = false;
  REQUIRE(allocations.load() >= 1);

  // Small and large supernodes (both kernel paths), both orderings.
  std::mt19937_64 rng(3);
  for (double couplings : {1.0, 6.0}) {
    const auto structure = lsjit::testing::random_block_structure(rng, 60, 12, couplings);
    BlockSparseSymmetric A = lsjit::testing::make_matrix(structure);
    // Mixed precision too: its float factor and refinement vectors are made on its first
    // solve, as the double factor is on the first double solve.
    for (bool mixed : {false, true})
    for (SupernodalOrdering ordering : {SupernodalOrdering::Amd, SupernodalOrdering::NestedDissection}) {
      CAPTURE(mixed);
      SupernodalCholesky solver(A.shared_pattern(), ordering);
      const Eigen::VectorXd b = lsjit::testing::random_vector(A.dim(), rng);
      const Eigen::VectorXd shift = lsjit::testing::random_vector(A.dim(), rng, 0.0, 1.0);
      Eigen::VectorXd x(A.dim());
      LinearSolverOptions options;
      options.mixed_precision = mixed ? MixedPrecision::Always : MixedPrecision::Never;
      lsjit::testing::fill_random(structure, A, rng);
      REQUIRE(solver.solve(A, shift.data(), b.data(), x.data(), options).ok);  // may warm up OpenBLAS
      for (int round = 0; round < 5; ++round) {
        lsjit::testing::fill_random(structure, A, rng);  // allocates: outside the count
        allocations = 0;
        counting = true;
        const LinearSolveSummary s = solver.solve(A, round % 2 ? shift.data() : nullptr,
                                                  b.data(), x.data(), options);
        counting = false;
        CHECK(s.ok);
        CHECK(s.mixed_precision == mixed);
        CHECK(allocations.load() == 0);
      }
    }
  }
}
