#include "lsjit/runtime/solve/linear/subgraph.h"

#include <metis.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "lsjit/common/error.h"

namespace lsjit::linear {
namespace {

struct DisjointSets {
  std::vector<int> parent;
  explicit DisjointSets(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];  // path halving
    return v;
  }
  bool unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    parent[a] = b;
    return true;
  }
};

// The off-diagonal stored blocks (i < j) of the pattern.
std::vector<std::pair<int, int>> off_diagonal(const BlockPattern& p) {
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < p.num_blocks(); ++i)
    for (int64_t k = p.row_begin(i) + 1; k < p.row_end(i); ++k) pairs.emplace_back(i, p.col(k));
  return pairs;
}

// part[v] of a METIS k-way partition of the block graph (vertex weights: block sizes).
std::vector<idx_t> partition(const BlockPattern& p, const std::vector<std::pair<int, int>>& pairs,
                             idx_t parts) {
  const int nb = p.num_blocks();
  std::vector<idx_t> xadj(nb + 1, 0), adjncy(2 * pairs.size() + 1), weights(nb), part(nb, 0);
  for (const auto& [i, j] : pairs) ++xadj[i + 1], ++xadj[j + 1];
  for (int v = 0; v < nb; ++v) xadj[v + 1] += xadj[v];
  std::vector<idx_t> next(xadj.begin(), xadj.end() - 1);
  for (const auto& [i, j] : pairs) adjncy[next[i]++] = j, adjncy[next[j]++] = i;
  for (int v = 0; v < nb; ++v) weights[v] = p.block_size(v);
  idx_t n = nb, constraints = 1, cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  const int status = METIS_PartGraphKway(&n, &constraints, xadj.data(), adjncy.data(), weights.data(),
                                         nullptr, nullptr, &parts, nullptr, nullptr, options, &cut,
                                         part.data());
  if (status != METIS_OK)
    throw Error("subgraph_cg: METIS could not partition the block graph (status " +
                std::to_string(status) + ")");
  return part;
}

}  // namespace

Subgraph choose_subgraph(const BlockPattern& p, int cluster_blocks) {
  std::vector<std::pair<int, int>> pairs = off_diagonal(p);
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    return a.second - a.first < b.second - b.first;
  });
  Subgraph s;
  std::vector<char> kept(pairs.size(), 0);
  DisjointSets components(p.num_blocks());
  // The clusters first, cycles and all; then the forest joins what they left apart. Taking
  // the forest first instead lets it run in and out of a cluster many times (a trajectory
  // revisits places), and the cycles it closes through the clusters fill the factor to
  // several times the forest's own.
  const int parts = cluster_blocks > 1 ? std::max(1, p.num_blocks() / cluster_blocks) : 0;
  if (parts == 1) {
    s.clusters = 1;
    std::fill(kept.begin(), kept.end(), 1);  // one cluster: nothing is dropped
  } else if (parts >= 2) {
    const std::vector<idx_t> part = partition(p, pairs, parts);
    s.clusters = parts;
    for (size_t e = 0; e < pairs.size(); ++e)
      if (part[pairs[e].first] == part[pairs[e].second]) {
        kept[e] = 1;
        components.unite(pairs[e].first, pairs[e].second);
      }
  }
  for (size_t e = 0; e < pairs.size(); ++e)
    if (!kept[e] && components.unite(pairs[e].first, pairs[e].second)) kept[e] = 1, ++s.forest_blocks;
  for (size_t e = 0; e < pairs.size(); ++e)
    if (kept[e]) s.pairs.push_back(pairs[e]);
  return s;
}

}  // namespace lsjit::linear
