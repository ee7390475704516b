// SupernodalCholesky::solve() allocates nothing once the solver exists: every buffer is the
// analysis'. Counted through a replaced global operator new, which is why this is a program
// of its own (lsjit_runtime_alloc_tests): in the runtime test executable the replacement
// would apply to every other test too.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/runtime/linear/supernodal_cholesky.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* allocate(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t size) { return allocate(size, 0); }
void* operator new[](std::size_t size) { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

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
