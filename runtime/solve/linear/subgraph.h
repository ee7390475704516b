// The sparsified system that SubgraphCg (subgraph_cg.h) factors as its preconditioner: A
// with some of its off-diagonal blocks dropped, chosen from the pattern alone (once per
// structure) so that the factor stays small:
//
//   1. every block whose two variables fall in the same cluster of a METIS k-way partition
//      of the block graph into clusters of about `cluster_blocks` variables (in a pose
//      graph: the odometry and loop closures among nearby poses);
//   2. a spanning forest joining what the clusters left apart (Kruskal over the other
//      blocks, taken in increasing |i − j|: in a pose graph numbered along the trajectory,
//      odometry first). Clusters joined by a forest factor with fill only inside clusters.
//   cluster_blocks <= 1 keeps the spanning forest alone, which factors with no fill at all.
//
// Why dropping blocks keeps the preconditioner positive definite: when every cost couples
// at most two variables, A = Σ (per cost) [Aᵢᵢ Aᵢⱼ; Aⱼᵢ Aⱼⱼ] with each term positive
// semidefinite, and a term with its off-diagonal block dropped, diag(Aᵢᵢ, Aⱼⱼ), still is.
// The subgraph keeps all diagonal blocks, so it is Σ of semidefinite terms: with LM's
// positive damping it is positive definite. Costs on three or more variables carry no
// such guarantee (SubgraphCg then reports a failed factorization, and LM raises the
// damping, which makes the subgraph diagonally dominant).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "lsjit/runtime/solve/linear/block_sparse.h"

namespace lsjit::linear {

struct Subgraph {
  std::vector<std::pair<int, int>> pairs;  // kept off-diagonal blocks (i < j)
  int64_t forest_blocks = 0;               // how many of them join clusters (the forest)
  int clusters = 0;                        // parts of the partition; 0: the forest alone
};

// Throws lsjit::Error when METIS fails to partition.
Subgraph choose_subgraph(const BlockPattern& pattern, int cluster_blocks);

}  // namespace lsjit::linear
