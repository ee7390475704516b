#include "lsjit/runtime/solve/linear/supernodal_split.h"

#include <algorithm>

namespace lsjit::linear {
namespace {

// The supernodal elimination tree: a supernode's parent holds its first row below.
std::vector<int> supernode_parents(const SupernodalAnalysis& a) {
  const int count = a.num_supernodes();
  std::vector<int> parent(count, -1);
  for (int s = 0; s < count; ++s) {
    const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
    if (a.row_begin[s] + n == a.row_begin[s + 1]) continue;  // a root: nothing below
    const int64_t row = a.row_index[a.row_begin[s] + n];
    parent[s] = static_cast<int>(std::upper_bound(a.column_begin.begin(), a.column_begin.end(), row) -
                                 a.column_begin.begin()) - 1;
  }
  return parent;
}

struct Bins {
  double work[2] = {0, 0};
  std::vector<int> members[2];
};

// Largest first into the lighter bin.
Bins fill_bins(std::vector<int> tasks, const std::vector<double>& subtree_work) {
  std::sort(tasks.begin(), tasks.end(), [&](int x, int y) {
    return subtree_work[x] != subtree_work[y] ? subtree_work[x] > subtree_work[y] : x < y;
  });
  Bins bins;
  for (int t : tasks) {
    const int b = bins.work[0] <= bins.work[1] ? 0 : 1;
    bins.work[b] += subtree_work[t];
    bins.members[b].push_back(t);
  }
  return bins;
}

}  // namespace

SupernodalSplit split_supernodal_tree(const SupernodalAnalysis& a) {
  const int count = a.num_supernodes();
  const std::vector<int> parent = supernode_parents(a);
  std::vector<double> work(count), subtree_work(count);
  std::vector<int> first(count);  // postorder: the subtree of s is [first[s], s]
  std::vector<std::vector<int>> children(count);
  std::vector<int> tasks;
  double total = 0;
  for (int s = 0; s < count; ++s) {
    const double n = static_cast<double>(a.column_begin[s + 1] - a.column_begin[s]);
    const double rows = static_cast<double>(a.row_begin[s + 1] - a.row_begin[s]);
    work[s] = n * rows * rows;
    total += work[s];
    subtree_work[s] += work[s];
    if (parent[s] >= 0) {
      subtree_work[parent[s]] += subtree_work[s];
      children[parent[s]].push_back(s);
    } else {
      tasks.push_back(s);
    }
  }
  // first[s]: the smallest supernode of its subtree (children precede parents).
  for (int s = 0; s < count; ++s) {
    first[s] = s;
    for (int c : children[s]) first[s] = std::min(first[s], first[c]);
  }

  std::vector<bool> is_top(count, false);
  double top_work = 0;
  Bins bins = fill_bins(tasks, subtree_work);
  for (int round = 0; round < 4 * count + 4; ++round) {
    const double larger = std::max(bins.work[0], bins.work[1]);
    if (larger <= 1.1 * 0.5 * (bins.work[0] + bins.work[1]) || top_work >= total / 3) break;
    const auto largest = std::max_element(tasks.begin(), tasks.end(), [&](int x, int y) {
      return subtree_work[x] < subtree_work[y];
    });
    const int root = *largest;
    if (children[root].empty()) break;
    tasks.erase(largest);
    tasks.insert(tasks.end(), children[root].begin(), children[root].end());
    is_top[root] = true;
    top_work += work[root];
    bins = fill_bins(tasks, subtree_work);
  }

  SupernodalSplit split;
  for (int b = 0; b < 2; ++b) {
    for (int root : bins.members[b]) split.ranges[b].emplace_back(first[root], root);
    std::sort(split.ranges[b].begin(), split.ranges[b].end());
  }
  split.private_offset.assign(count, -1);
  for (int s = 0; s < count; ++s)
    if (is_top[s]) {
      split.top.push_back(s);
      split.private_offset[s] = split.private_size;
      split.private_size += a.panel_offset[s + 1] - a.panel_offset[s];
    }
  const double critical = std::max(bins.work[0], bins.work[1]) + top_work;
  split.predicted_speedup = critical > 0 ? total / critical : 1;
  return split;
}

}  // namespace lsjit::linear
