// The symbolic analysis of SupernodalCholesky (supernodal_cholesky.h): everything about the
// factorization of A = LLᵀ that depends only on A's BlockPattern, computed once per
// structure so that a numeric factorization allocates nothing and searches for nothing.
//
// It works on the BLOCK graph (one node per variable, as Ceres does): the ordering, the
// elimination tree and the row structures are computed on blocks, whose scalars stay
// adjacent and in order, and only the sizes are expanded to scalars.
//
//   1. ordering: AMD (SuiteSparse's libamd, amd_l_order) and METIS nested dissection
//      (METIS_NodeND, vertex weights = block sizes) of the block graph; the one with fewer
//      predicted flops is kept unless one is forced (Automatic asks METIS only when one AMD
//      factorization is at least kMetisWorthFlops, a GFlop: below that METIS costs more
//      time than it saves). Then the elimination tree's postorder
//      is folded into it (same fill, and every supernode's columns become contiguous).
//   2. the block row structure of every block column of L (children's structures merged
//      up the elimination tree), hence the scalar column counts, factor_nonzeros() and
//      factorization_flops() (CHOLMOD's definition: Σ over scalar columns of count²).
//   3. fundamental supernodes (chains of block columns with nested structures), then
//      relaxed amalgamation: a supernode is merged into its parent when it is the parent's
//      last child (so the columns stay contiguous) and the explicit zeros this adds are few
//      (see kRelax* in the .cpp for the rule).
//   4. the layout of the factor: one arena of doubles holding every supernode's panel
//      (supernodal_layout.h; from steps 1-3's SupernodalStructure, which a cache can keep).
//
// Panel layout (supernode s, `columns` scalar columns, `rows` = columns + below rows):
// column-major, leading dimension `rows`, at arena offset panel_offset[s]. Panel row r is
// the factor's permuted scalar row row_index[row_begin[s] + r]; the first `columns` rows
// are the supernode's own columns (its diagonal block, only its lower triangle meaningful),
// the others are the rows below, increasing. Permuted scalar row k is A's scalar row
// scalar_perm[k].
//
// The arrays with an entry per scalar row, stored block, update or run are BigVectors
// (huge_page_allocator.h): a warm process lays them out on every analysis from the cached
// structure, and on fresh 4 KiB heap pages much of that would be page faults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lsjit/runtime/evaluate/huge_page_allocator.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"

namespace lsjit::linear {

enum class SupernodalOrdering { Automatic, Amd, NestedDissection };

struct SupernodalAnalysis {
  SupernodalOrdering ordering = SupernodalOrdering::Amd;  // the one chosen (never Automatic)
  double factor_nonzeros = 0;      // nonzeros of L without the amalgamation's zeros
  double factorization_flops = 0;  // Σ count² over L's scalar columns (CHOLMOD's measure)
  double stored_entries = 0;       // lower-trapezoid entries of all panels, zeros included

  // Permutations. block_perm[k] is A's block at permuted position k; block_position is its
  // inverse. scalar_perm[k] is A's scalar row at permuted scalar row k.
  std::vector<int> block_perm, block_position;
  detail::BigVector<int64_t> scalar_perm;
  std::vector<int64_t> permuted_offset;  // permuted block k starts at scalar row permuted_offset[k]

  // Supernodes, in postorder (children before parents). Supernode s owns the permuted
  // scalar columns [column_begin[s], column_begin[s + 1]).
  std::vector<int64_t> column_begin;   // num_supernodes + 1
  std::vector<int64_t> row_begin;      // num_supernodes + 1, into row_index
  detail::BigVector<int64_t> row_index;  // permuted scalar rows of each panel (see above)
  std::vector<int64_t> panel_offset;   // num_supernodes + 1, into the arena; last = its size
  std::vector<int> supernode_of_block;  // permuted block -> supernode

  // Where each stored block k of A (BlockPattern numbering) goes in the arena: value
  // (a, b) of the row-major ri x cj block lands at target[k] + a * ld + b (Direct, and
  // Diagonal for b >= a only) or at target[k] + b * ld + a (Transposed), ld = the panel's
  // leading dimension stored alongside.
  enum class Placement : uint8_t { Diagonal, Direct, Transposed };
  struct BlockTarget {
    int64_t offset;
    int64_t ld;
    Placement placement;
  };
  detail::BigVector<BlockTarget> block_target;

  // The update of supernode s (its below rows' L_b L_bᵀ, computed into a dense
  // below x below workspace, lower triangle) goes into the ancestors listed in
  // updates[update_begin[s] .. update_begin[s + 1]). Each names the target supernode, the
  // workspace columns [first, last) that are the target's columns, and the runs of
  // workspace rows (from `first` down) that land on contiguous rows of the target panel.
  struct RowRun {
    int32_t source_row;  // workspace row
    int32_t target_row;  // target panel row
    int32_t length;
  };
  struct Update {
    int target;
    int32_t first, last;
    int64_t run_begin, run_end;  // into runs
  };
  std::vector<int64_t> update_begin;  // num_supernodes + 1
  detail::BigVector<Update> updates;
  detail::BigVector<RowRun> runs;

  int64_t max_below_rows = 0;  // the update workspace is max_below_rows² doubles
  int64_t max_rows = 0;        // the largest panel's row count (solve workspace)

  // Wall time of each phase, for benchmarks (tools/bench/scale_bench.cpp): the block graph,
  // each ordering (0 when not computed), the symbolic factorizations (elimination trees,
  // structures, counts) and the supernodes with the panels' layout.
  struct Seconds {
    double graph = 0, amd = 0, nested_dissection = 0, symbolic = 0, layout = 0;
  } seconds;

  int num_supernodes() const { return static_cast<int>(column_begin.size()) - 1; }
};

// Throws lsjit::Error when an ordering library fails (out of memory, or a forced
// NestedDissection that METIS rejects).
SupernodalAnalysis analyze_supernodal(const BlockPattern& pattern, SupernodalOrdering ordering);

// What steps 1-3 find, from which step 4 lays the factor out again: the ordering chosen and
// its counts, the postordered block order (SupernodalAnalysis::block_perm), the supernodes
// as ranges of permuted blocks and the permuted blocks of the rows below each supernode's
// columns. runtime/analyze/ordering_cache.h keeps it by pattern, so that a warm process skips the
// block graph, the ordering, the symbolic factorization and the supernode search.
struct SupernodalStructure {
  SupernodalOrdering ordering = SupernodalOrdering::Amd;
  double factor_nonzeros = 0, factorization_flops = 0;
  std::vector<int> block_perm;
  std::vector<int> supernode_begin;  // num_supernodes + 1, from 0 to num_blocks
  std::vector<int64_t> below_begin;  // num_supernodes + 1, into below
  std::vector<int> below;            // each supernode's, increasing, past its own blocks
};

// The structure `analysis` was laid out from.
SupernodalStructure supernodal_structure(const SupernodalAnalysis& analysis);

// The analysis of `pattern` from a structure an earlier analysis of it had
// (supernodal_structure): step 4 only, and the result equals that earlier analysis (timings
// aside). Any structure that holds every block of the pattern and whose updates land on
// rows of their targets gives a valid factorization; one that does not (a block order that
// is not a permutation, supernodes or rows out of order or out of range, a block of the
// pattern or a row of an update with no place, supernodes out of a postorder of their tree,
// an automatic ordering, counts negative or not finite) throws lsjit::Error. Sizes and orders are checked before anything is
// allocated on the structure's word.
SupernodalAnalysis analyze_supernodal(const BlockPattern& pattern, const SupernodalStructure& structure);

// "" when `blocks` lists each of [0, num_blocks) exactly once (its size is the caller's to
// check); else what is wrong with the first entry that does not: "block B at position K
// is out of range" or "block B at position K appears twice".
std::string block_permutation_problem(const std::vector<int>& blocks, int num_blocks);

// The ordering libraries' versions and the version of lsjit's rules (the choice between
// orderings, the supernodes' amalgamation), e.g. "rule 2 amd 2.4.6 metis 5.1.0": a
// structure made under another value may differ, so caches key on it.
std::string ordering_provenance();

// Name for messages and benchmarks: "amd", "nested_dissection", "automatic".
const char* supernodal_ordering_name(SupernodalOrdering ordering);

}  // namespace lsjit::linear
