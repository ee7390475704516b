// analyze_supernodal(pattern, structure) promises that any structure it accepts factors
// correctly (supernodal_analysis.h): the kernel cache hands it structures read from disk.
// Structures mutated at random from true ones (rows below removed, added or changed,
// supernodes split, merged or moved, blocks reordered) are either refused with lsjit::Error
// or solve, on one thread and on two, the system a dense Cholesky solves.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/supernodal_analysis.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

using namespace lsjit;
using linear::SupernodalStructure;

namespace {

int pick(std::mt19937_64& rng, int64_t count) {
  return static_cast<int>(std::uniform_int_distribution<int64_t>(0, count - 1)(rng));
}

std::vector<int> below_of(const SupernodalStructure& s, int sn) {
  return {s.below.begin() + s.below_begin[sn], s.below.begin() + s.below_begin[sn + 1]};
}

// The structure with supernode sn's rows below replaced (kept as given: unsorted or
// repeated rows are for the analysis to refuse).
void set_below(SupernodalStructure& s, int sn, const std::vector<int>& rows) {
  const int64_t old = s.below_begin[sn + 1] - s.below_begin[sn];
  s.below.erase(s.below.begin() + s.below_begin[sn], s.below.begin() + s.below_begin[sn + 1]);
  s.below.insert(s.below.begin() + s.below_begin[sn], rows.begin(), rows.end());
  for (size_t t = sn + 1; t < s.below_begin.size(); ++t) s.below_begin[t] += static_cast<int64_t>(rows.size()) - old;
}

void mutate(SupernodalStructure& s, int num_blocks, std::mt19937_64& rng) {
  const int ns = static_cast<int>(s.supernode_begin.size()) - 1;
  const int sn = pick(rng, ns);
  std::vector<int> rows = below_of(s, sn);
  switch (pick(rng, 6)) {
    case 0:  // a row below fewer
      if (!rows.empty()) rows.erase(rows.begin() + pick(rng, static_cast<int64_t>(rows.size())));
      set_below(s, sn, rows);
      break;
    case 1: {  // a row below more (a superset of the fill is a valid structure)
      const int after = s.supernode_begin[sn + 1];
      if (after == num_blocks) break;
      const int b = after + pick(rng, num_blocks - after);
      if (std::find(rows.begin(), rows.end(), b) == rows.end()) rows.insert(std::upper_bound(rows.begin(), rows.end(), b), b);
      set_below(s, sn, rows);
      break;
    }
    case 2:  // a row below moved to another block
      if (!rows.empty()) rows[pick(rng, static_cast<int64_t>(rows.size()))] = pick(rng, num_blocks);
      set_below(s, sn, rows);
      break;
    case 3:  // two blocks of the order swapped
      std::swap(s.block_perm[pick(rng, num_blocks)], s.block_perm[pick(rng, num_blocks)]);
      break;
    case 4: {  // a supernode split in two: the first part's rows below are the second's own and below
      const int first = s.supernode_begin[sn], last = s.supernode_begin[sn + 1];
      if (last - first < 2) break;
      const int cut = first + 1 + pick(rng, last - first - 1);
      std::vector<int> upper;
      for (int b = cut; b < last; ++b) upper.push_back(b);
      upper.insert(upper.end(), rows.begin(), rows.end());
      s.supernode_begin.insert(s.supernode_begin.begin() + sn + 1, cut);
      s.below_begin.insert(s.below_begin.begin() + sn + 1, s.below_begin[sn]);
      set_below(s, sn, upper);
      break;
    }
    case 5:  // a boundary between supernodes moved by one block, the lists as they were
      if (sn > 0) s.supernode_begin[sn] += pick(rng, 2) == 0 ? -1 : 1;
      break;
  }
}

}  // namespace

TEST_CASE("supernodal structure: every structure accepted factors correctly, on one thread and two") {
  std::mt19937_64 rng(29);
  int accepted = 0, refused = 0, mutated_accepted = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int num_blocks = 8 + pick(rng, 25);
    const testing::RandomBlockStructure rs = testing::random_block_structure(rng, num_blocks, 4);
    linear::BlockSparseSymmetric A = testing::make_matrix(rs);
    const Eigen::MatrixXd J = testing::fill_random(rs, A, rng);
    const Eigen::MatrixXd H = J.transpose() * J;
    const Eigen::VectorXd b = Eigen::VectorXd::Random(A.dim());
    const Eigen::VectorXd expected = H.llt().solve(b);

    SupernodalStructure s = linear::supernodal_structure(
        linear::analyze_supernodal(A.pattern(), trial % 2 ? linear::SupernodalOrdering::Amd
                                                           : linear::SupernodalOrdering::NestedDissection));
    const int mutations = trial % 5;  // a fifth stay true structures
    for (int m = 0; m < mutations; ++m) mutate(s, num_blocks, rng);
    std::shared_ptr<const linear::SupernodalAnalysis> analysis;
    try {
      analysis = std::make_shared<const linear::SupernodalAnalysis>(linear::analyze_supernodal(A.pattern(), s));
    } catch (const Error&) {
      ++refused;
      CHECK(mutations > 0);  // a true structure is never refused
      continue;
    }
    ++accepted;
    mutated_accepted += mutations > 0;
    linear::SupernodalCholesky solver(A.shared_pattern(), analysis);
    for (int threads : {1, 2}) {
      CAPTURE(trial);
      CAPTURE(threads);
      linear::LinearSolverOptions options;
      options.num_threads = threads;
      Eigen::VectorXd x(A.dim());
      const linear::LinearSolveSummary summary = solver.solve(A, nullptr, b.data(), x.data(), options);
      REQUIRE(summary.ok);
      CHECK((x - expected).norm() <= 1e-9 * expected.norm());
    }
  }
  // Both answers happened, and mutated structures were among those accepted.
  CHECK(refused > 30);
  CHECK(mutated_accepted > 30);
  MESSAGE("accepted " << accepted << " (" << mutated_accepted << " mutated), refused " << refused);
}

TEST_CASE("supernodal structure: supernodes out of a postorder of their tree are refused") {
  // Blocks a b c d, coupled a-c, b-d and c-d: eliminated in that order, c is a's parent and
  // d is b's and c's, so a's subtree {a, c} is not contiguous (b lies between them).
  const linear::BlockPattern p(std::vector<int>(4, 1), {{0, 2}, {1, 3}, {2, 3}});
  SupernodalStructure s;
  s.block_perm = {0, 1, 2, 3};
  s.supernode_begin = {0, 1, 2, 3, 4};
  s.below_begin = {0, 1, 2, 3, 3};
  s.below = {2, 3, 3};
  try {
    (void)linear::analyze_supernodal(p, s);
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("not in a postorder of their tree (supernode 2)") != std::string::npos);
  }
  // The same factor in the postorder a c b d is accepted.
  s.block_perm = {0, 2, 1, 3};
  s.below = {1, 3, 3};
  CHECK(linear::analyze_supernodal(p, s).num_supernodes() == 4);
}
