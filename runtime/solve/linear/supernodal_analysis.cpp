#include "lsjit/runtime/solve/linear/supernodal_analysis.h"

#include <amd.h>
#include <metis.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/supernodal_layout.h"

namespace lsjit::linear {

namespace {

// Relaxed amalgamation (CHOLMOD's rule and defaults, in scalar columns of the merged
// supernode): always merge up to kRelaxColumns[0] columns; up to kRelaxColumns[1] when
// fewer than kRelaxZeros[0] of the merged panel's lower entries are explicit zeros, up to
// kRelaxColumns[2] below kRelaxZeros[1], and any size below kRelaxZeros[2].
constexpr int64_t kRelaxColumns[3] = {4, 16, 48};
constexpr double kRelaxZeros[3] = {0.8, 0.1, 0.05};

// Adds the seconds since the last call (or construction) to the given counter.
class PhaseClock {
 public:
  void charge(double& seconds) {
    const auto now = std::chrono::steady_clock::now();
    seconds += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The block graph: symmetric adjacency without the diagonal, rows sorted (CSR).
struct BlockGraph {
  std::vector<int64_t> begin;
  std::vector<int64_t> adjacent;
};

BlockGraph block_graph(const BlockPattern& p) {
  const int nb = p.num_blocks();
  BlockGraph g;
  g.begin.assign(nb + 1, 0);
  for (int i = 0; i < nb; ++i)
    for (int64_t k = p.row_begin(i) + 1; k < p.row_end(i); ++k) {
      ++g.begin[i + 1];
      ++g.begin[p.col(k) + 1];
    }
  for (int i = 0; i < nb; ++i) g.begin[i + 1] += g.begin[i];
  g.adjacent.resize(g.begin[nb]);
  std::vector<int64_t> next(g.begin.begin(), g.begin.end() - 1);
  // Row i receives its lower neighbours (from rows j < i, in increasing j) before its upper
  // ones (increasing): sorted, as AMD prefers.
  for (int i = 0; i < nb; ++i)
    for (int64_t k = p.row_begin(i) + 1; k < p.row_end(i); ++k) {
      const int j = p.col(k);
      g.adjacent[next[i]++] = j;
      g.adjacent[next[j]++] = i;
    }
  return g;
}

std::vector<int> amd_ordering(const BlockGraph& g, int nb) {
  std::vector<SuiteSparse_long> column_begin(g.begin.begin(), g.begin.end());
  std::vector<SuiteSparse_long> rows(g.adjacent.begin(), g.adjacent.end());
  rows.push_back(0);  // never empty: AMD rejects a null pointer
  std::vector<SuiteSparse_long> perm(nb);
  double control[AMD_CONTROL], info[AMD_INFO];
  amd_l_defaults(control);
  const SuiteSparse_long status =
      amd_l_order(nb, column_begin.data(), rows.data(), perm.data(), control, info);
  if (status != AMD_OK && status != AMD_OK_BUT_JUMBLED)
    throw Error("supernodal_cholesky: AMD ordering failed (status " + std::to_string(status) +
                (status == AMD_OUT_OF_MEMORY ? ": out of memory)" : ")"));
  return std::vector<int>(perm.begin(), perm.end());
}

// METIS nested dissection with the block sizes as vertex weights, or nullopt when METIS
// fails or the graph exceeds its 32-bit indices.
std::optional<std::vector<int>> metis_ordering(const BlockGraph& g, const BlockPattern& p) {
  const int nb = p.num_blocks();
  if (g.adjacent.size() >= static_cast<size_t>(std::numeric_limits<idx_t>::max()))
    return std::nullopt;
  std::vector<idx_t> xadj(g.begin.begin(), g.begin.end());
  std::vector<idx_t> adjncy(g.adjacent.begin(), g.adjacent.end());
  adjncy.push_back(0);
  std::vector<idx_t> weights(nb), perm(nb), iperm(nb);
  for (int i = 0; i < nb; ++i) weights[i] = p.block_size(i);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  idx_t n = nb;
  if (METIS_NodeND(&n, xadj.data(), adjncy.data(), weights.data(), options, perm.data(),
                   iperm.data()) != METIS_OK)
    return std::nullopt;
  // METIS' perm[k] is the vertex placed k-th (as AMD's).
  return std::vector<int>(perm.begin(), perm.end());
}

// The block elimination tree and block row structures of L for one block order.
struct BlockSymbolic {
  std::vector<int> parent;                // permuted block -> parent, -1 for a root
  std::vector<int64_t> structure_begin;  // num_blocks + 1
  std::vector<int> structure;             // block rows > j of block column j, increasing
  double nonzeros = 0, flops = 0;
};

BlockSymbolic block_symbolic(const BlockGraph& g, const BlockPattern& p,
                             const std::vector<int>& perm) {
  const int nb = p.num_blocks();
  std::vector<int> position(nb);
  for (int k = 0; k < nb; ++k) position[perm[k]] = k;
  BlockSymbolic s;
  s.parent.assign(nb, -1);
  s.structure_begin.assign(1, 0);
  std::vector<int> mark(nb, -1), first_child(nb, -1), next_sibling(nb, -1);
  for (int j = 0; j < nb; ++j) {
    mark[j] = j;
    const int original = perm[j];
    for (int64_t e = g.begin[original]; e < g.begin[original + 1]; ++e) {
      const int i = position[g.adjacent[e]];
      if (i > j && mark[i] != j) {
        mark[i] = j;
        s.structure.push_back(i);
      }
    }
    for (int c = first_child[j]; c >= 0; c = next_sibling[c])
      for (int64_t e = s.structure_begin[c]; e < s.structure_begin[c + 1]; ++e) {
        const int i = s.structure[e];
        if (mark[i] != j) {
          mark[i] = j;
          s.structure.push_back(i);
        }
      }
    const auto first = s.structure.begin() + s.structure_begin[j];
    std::sort(first, s.structure.end());
    s.structure_begin.push_back(static_cast<int64_t>(s.structure.size()));
    if (first != s.structure.end()) {
      const int parent = *first;
      s.parent[j] = parent;
      next_sibling[j] = first_child[parent];
      first_child[parent] = j;
    }
    double below = 0;
    for (auto it = first; it != s.structure.end(); ++it) below += p.block_size(perm[*it]);
    for (int a = p.block_size(original); a >= 1; --a) {
      const double count = a + below;
      s.nonzeros += count;
      s.flops += count * count;
    }
  }
  return s;
}

// A postorder of an elimination tree (children in increasing order): order[k] is the
// position, in the tree's numbering, of the k-th block of the postorder.
std::vector<int> postorder(const std::vector<int>& parent) {
  const int nb = static_cast<int>(parent.size());
  std::vector<int> first_child(nb, -1), next_sibling(nb, -1), order, stack;
  order.reserve(nb);
  for (int j = nb - 1; j >= 0; --j)
    if (parent[j] >= 0) {
      next_sibling[j] = first_child[parent[j]];
      first_child[parent[j]] = j;
    }
  std::vector<int> next_child(first_child);
  for (int root = 0; root < nb; ++root) {
    if (parent[root] >= 0) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const int j = stack.back();
      if (const int c = next_child[j]; c >= 0) {
        next_child[j] = next_sibling[c];
        stack.push_back(c);
      } else {
        order.push_back(j);
        stack.pop_back();
      }
    }
  }
  return order;
}

// The symbolic factorization of the same matrix in another order that has the same
// elimination tree (a postorder of it): the structures renumbered and re-sorted, the
// counts unchanged. Cheaper than block_symbolic's merges.
BlockSymbolic renumbered(BlockSymbolic s, const std::vector<int>& order) {
  const int nb = static_cast<int>(order.size());
  std::vector<int> new_of_old(nb);
  for (int k = 0; k < nb; ++k) new_of_old[order[k]] = k;
  BlockSymbolic r;
  r.nonzeros = s.nonzeros;
  r.flops = s.flops;
  r.parent.resize(nb);
  r.structure_begin.resize(nb + 1);
  r.structure.resize(s.structure.size());
  r.structure_begin[0] = 0;
  for (int k = 0; k < nb; ++k) {
    const int j = order[k];
    r.parent[k] = s.parent[j] < 0 ? -1 : new_of_old[s.parent[j]];
    const int64_t begin = r.structure_begin[k], count = s.structure_begin[j + 1] - s.structure_begin[j];
    for (int64_t e = 0; e < count; ++e)
      r.structure[begin + e] = new_of_old[s.structure[s.structure_begin[j] + e]];
    std::sort(r.structure.begin() + begin, r.structure.begin() + begin + count);
    r.structure_begin[k + 1] = begin + count;
  }
  return r;
}

// Supernode boundaries (in postordered blocks): fundamental supernodes, then relaxed
// amalgamation of a supernode into its parent when the parent follows it directly.
std::vector<int> supernode_boundaries(const BlockSymbolic& s, const BlockPattern& p,
                                      const std::vector<int>& perm) {
  const int nb = p.num_blocks();
  std::vector<int> children(nb, 0);
  for (int j = 0; j < nb; ++j)
    if (s.parent[j] >= 0) ++children[s.parent[j]];
  auto count = [&](int j) { return s.structure_begin[j + 1] - s.structure_begin[j]; };
  std::vector<int> fundamental{0};
  for (int j = 1; j < nb; ++j)
    if (!(s.parent[j - 1] == j && children[j] == 1 && count(j - 1) == count(j) + 1))
      fundamental.push_back(j);
  fundamental.push_back(nb);

  auto below_scalars = [&](int j) {
    int64_t below = 0;
    for (int64_t e = s.structure_begin[j]; e < s.structure_begin[j + 1]; ++e)
      below += p.block_size(perm[s.structure[e]]);
    return below;
  };
  // True lower entries of block columns [first, last) of one fundamental supernode.
  auto true_entries = [&](int first, int last) {
    double entries = 0;
    for (int j = first; j < last; ++j) {
      const int64_t below = below_scalars(j);
      for (int a = p.block_size(perm[j]); a >= 1; --a) entries += a + below;
    }
    return entries;
  };
  std::vector<int> boundaries{0};
  int64_t group_columns = 0;
  double group_entries = 0;
  const int num_fundamental = static_cast<int>(fundamental.size()) - 1;
  for (int f = 0; f < num_fundamental; ++f) {
    const int first = fundamental[f], last = fundamental[f + 1];
    int64_t columns = 0;
    for (int j = first; j < last; ++j) columns += p.block_size(perm[j]);
    group_columns += columns;
    group_entries += true_entries(first, last);
    // Merge the group (ending with this supernode) into the next one if it is the parent.
    if (f + 1 < num_fundamental && s.parent[last - 1] == last) {
      const int next_last = fundamental[f + 2];
      int64_t next_columns = 0;
      for (int j = last; j < next_last; ++j) next_columns += p.block_size(perm[j]);
      const double merged = static_cast<double>(group_columns + next_columns);
      const double below = static_cast<double>(below_scalars(next_last - 1));
      const double stored = merged * (merged + 1) / 2 + merged * below;
      const double zeros = (stored - group_entries - true_entries(last, next_last)) / stored;
      if (merged <= kRelaxColumns[0] || (merged <= kRelaxColumns[1] && zeros < kRelaxZeros[0]) ||
          (merged <= kRelaxColumns[2] && zeros < kRelaxZeros[1]) || zeros < kRelaxZeros[2])
        continue;
    }
    boundaries.push_back(last);
    group_columns = 0;
    group_entries = 0;
  }
  return boundaries;
}

}  // namespace

std::string block_permutation_problem(const std::vector<int>& blocks, int num_blocks) {
  std::vector<char> seen(static_cast<size_t>(std::max(num_blocks, 0)), 0);
  for (size_t k = 0; k < blocks.size(); ++k) {
    const int b = blocks[k];
    if (b < 0 || b >= num_blocks || seen[b])
      return "block " + std::to_string(b) + " at position " + std::to_string(k) +
             (b < 0 || b >= num_blocks ? " is out of range" : " appears twice");
    seen[b] = 1;
  }
  return "";
}

std::string ordering_provenance() {
  // The rules: kMetisWorthFlops, how Automatic compares the orderings and the
  // amalgamation's kRelax*. Bump it when any of them changes.
  constexpr int kOrderingRule = 2;
  return "rule " + std::to_string(kOrderingRule) + " amd " + std::to_string(AMD_MAIN_VERSION) + "." +
         std::to_string(AMD_SUB_VERSION) + "." + std::to_string(AMD_SUBSUB_VERSION) + " metis " +
         std::to_string(METIS_VER_MAJOR) + "." + std::to_string(METIS_VER_MINOR) + "." +
         std::to_string(METIS_VER_SUBMINOR);
}

const char* supernodal_ordering_name(SupernodalOrdering ordering) {
  switch (ordering) {
    case SupernodalOrdering::Automatic: return "automatic";
    case SupernodalOrdering::Amd: return "amd";
    case SupernodalOrdering::NestedDissection: return "nested_dissection";
  }
  return "unknown";
}

// METIS costs time per block, plus a second symbolic factorization, and what it saves
// cannot be predicted from the flops alone: small factors are bound by their many narrow
// supernodes, not their flops, so on the common pose graphs ND's somewhat fewer flops
// never made a solve faster, while on large generated graphs it cuts them several times
// over. So Automatic asks METIS only when one AMD factorization is at least a GFlop, about
// where it starts to pay (docs/benchmarks-history.md, "METIS only for large factors", has
// the measurements).
constexpr double kMetisWorthFlops = 1e9;

namespace {

// An empty pattern's analysis: nothing to order or factor.
SupernodalAnalysis empty_analysis() {
  SupernodalAnalysis a;
  for (auto* v : {&a.column_begin, &a.row_begin, &a.panel_offset, &a.update_begin, &a.permuted_offset})
    v->assign(1, 0);
  return a;
}

void check_dimension(const BlockPattern& p) {
  if (p.dim() > std::numeric_limits<int32_t>::max())
    throw Error("supernodal_cholesky: " + std::to_string(p.dim()) +
                " scalar rows exceed the factor's 32-bit panel row indices");
}

// The permutations of `a` for the postordered block order `perm`.
void set_permutation(SupernodalAnalysis& a, const BlockPattern& p, std::vector<int> perm) {
  const int nb = p.num_blocks();
  a.block_position.resize(nb);
  a.permuted_offset.assign(1, 0);
  a.scalar_perm.reserve(p.dim());
  for (int k = 0; k < nb; ++k) {
    a.block_position[perm[k]] = k;
    a.permuted_offset.push_back(a.permuted_offset.back() + p.block_size(perm[k]));
    for (int b = 0; b < p.block_size(perm[k]); ++b)
      a.scalar_perm.push_back(p.scalar_offset(perm[k]) + b);
  }
  a.block_perm = std::move(perm);
}

// Steps 2-4 once the ordering `perm` and its symbolic factorization are known: the
// elimination tree's postorder folded into the ordering, then the supernodes and the layout.
void finish_analysis(SupernodalAnalysis& a, const BlockPattern& p, std::vector<int> perm,
                     BlockSymbolic symbolic, PhaseClock& clock) {
  const int nb = p.num_blocks();
  const std::vector<int> order = postorder(symbolic.parent);
  {
    std::vector<int> post(nb);
    for (int k = 0; k < nb; ++k) post[k] = perm[order[k]];
    perm = std::move(post);
  }
  const BlockSymbolic s = renumbered(std::move(symbolic), order);
  a.factor_nonzeros = s.nonzeros;
  a.factorization_flops = s.flops;
  clock.charge(a.seconds.symbolic);

  const std::vector<int> supernode_begin = supernode_boundaries(s, p, perm);
  set_permutation(a, p, std::move(perm));
  // The rows below each supernode: L's structure below its last block column, which holds
  // the structure of all its columns.
  const int ns = static_cast<int>(supernode_begin.size()) - 1;
  std::vector<int64_t> below_begin(ns + 1, 0);
  std::vector<int> below;
  for (int sn = 0; sn < ns; ++sn) {
    const int last = supernode_begin[sn + 1] - 1;
    below.insert(below.end(), s.structure.begin() + s.structure_begin[last],
                 s.structure.begin() + s.structure_begin[last + 1]);
    below_begin[sn + 1] = static_cast<int64_t>(below.size());
  }
  lay_out_supernodes(a, p, supernode_begin, below_begin, below);
  clock.charge(a.seconds.layout);
}

}  // namespace

SupernodalAnalysis analyze_supernodal(const BlockPattern& p, SupernodalOrdering ordering) {
  const int nb = p.num_blocks();
  check_dimension(p);
  if (nb == 0) return empty_analysis();
  SupernodalAnalysis a;
  PhaseClock clock;
  const BlockGraph g = block_graph(p);
  clock.charge(a.seconds.graph);

  std::vector<int> perm;
  std::optional<BlockSymbolic> symbolic;  // of perm, kept for its elimination tree
  if (ordering != SupernodalOrdering::NestedDissection) {
    perm = amd_ordering(g, nb);
    a.ordering = SupernodalOrdering::Amd;
    clock.charge(a.seconds.amd);
    symbolic = block_symbolic(g, p, perm);
    clock.charge(a.seconds.symbolic);
  }
  // Automatic asks METIS only when AMD's factor is costly enough for a better ordering to
  // repay METIS' time (kMetisWorthFlops).
  const double amd_flops = symbolic ? symbolic->flops : 0;
  const bool try_metis = ordering == SupernodalOrdering::NestedDissection ||
                         (ordering == SupernodalOrdering::Automatic && amd_flops >= kMetisWorthFlops);
  if (try_metis) {
    std::optional<std::vector<int>> nd = metis_ordering(g, p);
    clock.charge(a.seconds.nested_dissection);
    if (!nd && ordering == SupernodalOrdering::NestedDissection)
      throw Error("supernodal_cholesky: METIS nested dissection failed");
    if (nd) {
      BlockSymbolic nd_symbolic = block_symbolic(g, p, *nd);
      if (perm.empty() || nd_symbolic.flops < amd_flops) {
        perm = std::move(*nd);
        symbolic = std::move(nd_symbolic);
        a.ordering = SupernodalOrdering::NestedDissection;
      }
    }
  }
  finish_analysis(a, p, std::move(perm), std::move(*symbolic), clock);
  return a;
}

namespace {

// What is wrong with `s` as a structure for `p`'s blocks, checked before anything is
// allocated on its word (lay_out_supernodes checks the rest as it goes); "" if nothing.
std::string structure_problem(const BlockPattern& p, const SupernodalStructure& s) {
  const int nb = p.num_blocks();
  if (s.ordering == SupernodalOrdering::Automatic) return "its ordering is automatic, not amd or nested_dissection";
  if (!(std::isfinite(s.factor_nonzeros) && s.factor_nonzeros >= 0 && std::isfinite(s.factorization_flops) &&
        s.factorization_flops >= 0))
    return "its nonzero or flop count is negative or not finite";
  if (s.block_perm.size() != static_cast<size_t>(nb))
    return "it orders " + std::to_string(s.block_perm.size()) + " blocks, the pattern has " + std::to_string(nb);
  if (std::string why = block_permutation_problem(s.block_perm, nb); !why.empty())
    return "its block order is not a permutation: " + why;
  const std::vector<int>& first = s.supernode_begin;
  if (first.empty() || first.front() != 0 || first.back() != nb)
    return "its supernodes do not run from block 0 to block " + std::to_string(nb);
  const size_t ns = first.size() - 1;
  for (size_t sn = 0; sn < ns; ++sn)
    if (first[sn] >= first[sn + 1]) return "supernode " + std::to_string(sn) + " has no blocks";
  const std::vector<int64_t>& begin = s.below_begin;
  if (begin.size() != ns + 1 || begin.front() != 0 || begin.back() != static_cast<int64_t>(s.below.size()))
    return "its lists of blocks below do not match its " + std::to_string(ns) + " supernodes";
  for (size_t sn = 0; sn < ns; ++sn) {
    if (begin[sn] > begin[sn + 1]) return "the blocks below supernode " + std::to_string(sn) + " end before they begin";
    int previous = first[sn + 1] - 1;  // the rows below come after the supernode's own
    for (int64_t e = begin[sn]; e < begin[sn + 1]; ++e) {
      if (s.below[e] <= previous || s.below[e] >= nb)
        return "the blocks below supernode " + std::to_string(sn) + " are not increasing past its own, within " +
               std::to_string(nb);
      previous = s.below[e];
    }
  }
  // The supernodes' tree (a parent holds a supernode's first row below) in postorder, each
  // subtree a contiguous range ending at its root: SupernodalSplit's bins rely on it. A
  // parent comes after its children, so a supernode's subtree is complete when it is reached.
  std::vector<int64_t> size(ns, 1), lowest(ns);
  for (size_t sn = 0; sn < ns; ++sn) lowest[sn] = static_cast<int64_t>(sn);
  for (size_t sn = 0; sn < ns; ++sn) {
    if (static_cast<int64_t>(sn) - lowest[sn] + 1 != size[sn])
      return "its supernodes are not in a postorder of their tree (supernode " + std::to_string(sn) + ")";
    if (begin[sn] == begin[sn + 1]) continue;  // a root
    const auto parent = std::upper_bound(first.begin(), first.end(), s.below[begin[sn]]) - first.begin() - 1;
    size[parent] += size[sn];
    lowest[parent] = std::min(lowest[parent], lowest[sn]);
  }
  return "";
}

}  // namespace

SupernodalAnalysis analyze_supernodal(const BlockPattern& p, const SupernodalStructure& s) {
  check_dimension(p);
  if (const std::string why = structure_problem(p, s); !why.empty())
    throw Error("supernodal_cholesky: the given structure does not fit the pattern: " + why);
  if (p.num_blocks() == 0) return empty_analysis();
  SupernodalAnalysis a;
  a.ordering = s.ordering;
  a.factor_nonzeros = s.factor_nonzeros;
  a.factorization_flops = s.factorization_flops;
  PhaseClock clock;
  set_permutation(a, p, s.block_perm);
  lay_out_supernodes(a, p, s.supernode_begin, s.below_begin, s.below);
  clock.charge(a.seconds.layout);
  return a;
}

SupernodalStructure supernodal_structure(const SupernodalAnalysis& a) {
  SupernodalStructure s;
  s.ordering = a.ordering;
  s.factor_nonzeros = a.factor_nonzeros;
  s.factorization_flops = a.factorization_flops;
  s.block_perm = a.block_perm;
  const int nb = static_cast<int>(a.block_perm.size());
  s.supernode_begin.assign(1, 0);
  for (int k = 1; k < nb; ++k)
    if (a.supernode_of_block[k] != a.supernode_of_block[k - 1]) s.supernode_begin.push_back(k);
  if (nb > 0) s.supernode_begin.push_back(nb);
  s.below_begin.assign(1, 0);
  // A panel's rows below its columns are whole blocks: each starts where a block does.
  for (int sn = 0; sn < a.num_supernodes(); ++sn) {
    const int64_t columns = a.column_begin[sn + 1] - a.column_begin[sn];
    for (int64_t r = a.row_begin[sn] + columns; r < a.row_begin[sn + 1];) {
      const auto block = std::upper_bound(a.permuted_offset.begin(), a.permuted_offset.end(), a.row_index[r]) -
                         a.permuted_offset.begin() - 1;
      s.below.push_back(static_cast<int>(block));
      r += a.permuted_offset[block + 1] - a.permuted_offset[block];
    }
    s.below_begin.push_back(static_cast<int64_t>(s.below.size()));
  }
  return s;
}

}  // namespace lsjit::linear
