// Random block-sparse normal equations for the linear-algebra tests: H = JᵀJ of a random
// block Jacobian, assembled block by block with add_to_block exactly as a solver would from
// its kernels' H[v,w] blocks, next to the dense J from which a test computes its own
// reference. Every variable has a well-conditioned prior residual, so H is positive definite.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "lsjit/runtime/solve/linear/block_sparse.h"

namespace lsjit::testing {

struct RandomBlockStructure {
  struct Residual {
    std::vector<int> vars;  // distinct blocks, in slot order (not sorted)
    int rows = 0;
  };
  std::vector<int> block_sizes;
  std::vector<Residual> residuals;
  std::vector<std::pair<int, int>> pairs;  // every slot pair of every residual, as ordered
};

// num_blocks variables of sizes 1..max_block_size; a prior on each, plus residuals on 2 or
// 3 random variables, about `couplings` per variable.
inline RandomBlockStructure random_block_structure(std::mt19937_64& rng, int num_blocks,
                                                   int max_block_size = 9,
                                                   double couplings = 1.5) {
  RandomBlockStructure s;
  std::uniform_int_distribution<int> size(1, max_block_size), rows(1, 6), arity(2, 3);
  for (int i = 0; i < num_blocks; ++i) s.block_sizes.push_back(size(rng));
  for (int i = 0; i < num_blocks; ++i) s.residuals.push_back({{i}, s.block_sizes[i]});
  if (num_blocks >= 2) {
    std::uniform_int_distribution<int> block(0, num_blocks - 1);
    const int count = static_cast<int>(couplings * num_blocks);
    for (int c = 0; c < count; ++c) {
      RandomBlockStructure::Residual r;
      const int n = std::min(arity(rng), num_blocks);
      while (static_cast<int>(r.vars.size()) < n) {
        const int v = block(rng);
        if (std::find(r.vars.begin(), r.vars.end(), v) == r.vars.end()) r.vars.push_back(v);
      }
      r.rows = rows(rng);
      s.residuals.push_back(r);
    }
  }
  for (const auto& r : s.residuals)
    for (size_t a = 0; a < r.vars.size(); ++a)
      for (size_t b = a + 1; b < r.vars.size(); ++b) s.pairs.emplace_back(r.vars[a], r.vars[b]);
  return s;
}

inline linear::BlockSparseSymmetric make_matrix(const RandomBlockStructure& s) {
  return linear::BlockSparseSymmetric(s.block_sizes, s.pairs);
}

// Draws a new random Jacobian for the structure, sets H = JᵀJ through add_to_block (slot
// pairs in slot order, so below-diagonal pairs are added transposed) and returns the dense J.
// Priors are 2·I plus noise in [-0.5, 0.5]: diagonally dominant, hence well conditioned.
inline Eigen::MatrixXd fill_random(const RandomBlockStructure& s, linear::BlockSparseSymmetric& H,
                                   std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int total_rows = 0;
  for (const auto& r : s.residuals) total_rows += r.rows;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(total_rows, H.dim());
  H.set_zero();
  int row = 0;
  for (const auto& r : s.residuals) {
    std::vector<Eigen::MatrixXd> blocks;
    for (int v : r.vars) {
      Eigen::MatrixXd Jv(r.rows, s.block_sizes[v]);
      for (Eigen::Index e = 0; e < Jv.size(); ++e) Jv.data()[e] = u(rng);
      if (r.vars.size() == 1) Jv = 0.5 * Jv + 2.0 * Eigen::MatrixXd::Identity(r.rows, r.rows);
      J.block(row, H.scalar_offset(v), r.rows, s.block_sizes[v]) = Jv;
      blocks.push_back(Jv);
    }
    for (size_t a = 0; a < r.vars.size(); ++a)
      for (size_t b = a; b < r.vars.size(); ++b) {
        const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Hab =
            blocks[a].transpose() * blocks[b];
        H.add_to_block(r.vars[a], r.vars[b], Hab.data());
      }
    row += r.rows;
  }
  return J;
}

inline Eigen::VectorXd random_vector(Eigen::Index n, std::mt19937_64& rng, double lo = -1,
                                     double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  Eigen::VectorXd v(n);
  for (Eigen::Index r = 0; r < n; ++r) v(r) = u(rng);
  return v;
}

// Two chains of blocks joined at the end: nested dissection separates them, so the split
// has two bins of about equal work.
inline linear::BlockSparseSymmetric two_chains(int length) {
  std::vector<int> sizes(2 * length + 1, 6);
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i + 1 < length; ++i) {
    pairs.emplace_back(i, i + 1);
    pairs.emplace_back(length + i, length + i + 1);
    if (i + 5 < length) {
      pairs.emplace_back(i, i + 5);  // loops, for some fill
      pairs.emplace_back(length + i, length + i + 5);
    }
  }
  pairs.emplace_back(length - 1, 2 * length);
  pairs.emplace_back(2 * length - 1, 2 * length);
  return linear::BlockSparseSymmetric(sizes, pairs);
}

// Every diagonal block: d on its diagonal, its off-diagonal entries made symmetric.
inline void set_diagonal(linear::BlockSparseSymmetric& A, double d) {
  for (int i = 0; i < A.num_blocks(); ++i) {
    double* block = A.values().data() + A.find(i, i);
    const int n = A.block_size(i);
    for (int r = 0; r < n; ++r)
      for (int c = r; c < n; ++c) block[r * n + c] = block[c * n + r] = r == c ? d : block[r * n + c];
  }
}

}  // namespace lsjit::testing
