// How SupernodalCholesky factors on two threads: its supernodal elimination tree cut into
// two bins of whole subtrees, which share no supernode and update none of each other's,
// and the top above them, which waits for both.
//
// Why subtrees: a supernode's factorization reads only its descendants' updates, so two
// disjoint subtrees factor independently; only their updates into the common ancestors (the
// top) could collide. Bin 1 therefore subtracts its updates of top supernodes into a
// private copy of their panels (private_offset), added to the factor after both bins
// finish: the result is the same on every run with two threads, and differs from one
// thread's only by the rounding of that grouping.
//
// The cut: starting from the roots, the subtree with the most work is replaced by its
// children (its root joins the top) until the two bins, filled largest first, are within
// 10% of each other, or the top holds a third of the work, or a leaf would have to be cut.
// Work of a supernode: columns x rows² (its factorization's and update's multiply-adds,
// to a constant). The predicted speed-up is total work / (larger bin + top).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "lsjit/runtime/solve/linear/supernodal_analysis.h"

namespace lsjit::linear {

struct SupernodalSplit {
  // Per bin: subtrees as postorder ranges [first, last] of supernodes, increasing.
  std::vector<std::pair<int, int>> ranges[2];
  std::vector<int> top;  // supernodes in neither bin, in postorder (increasing)
  // Per supernode: its panel's offset in bin 1's private copy, for top supernodes; -1
  // for the others. private_size: that copy's doubles.
  std::vector<int64_t> private_offset;
  int64_t private_size = 0;
  double predicted_speedup = 1;  // total work / (larger bin + top)
};

SupernodalSplit split_supernodal_tree(const SupernodalAnalysis& analysis);

}  // namespace lsjit::linear
