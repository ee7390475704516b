// The sparse Cholesky's symbolic analysis kept in the kernel cache's directory, keyed by
// the block pattern it analyzes.
//
// Why: the analysis depends only on H's block pattern, which a problem's structure fixes,
// yet AMD, the block graph, the symbolic factorization and the supernode search were a
// large share of every warm process's set-up on pose graphs of a few thousand poses
// (docs/benchmarks-history.md). Kernels are cached by their static structure; this caches the
// factor's structure by the pattern's, as a data entry of compiler::KernelCache (read_data,
// store_data): authenticated with the directory's key, kept or dropped by the same LRU. A
// warm process only lays the factor out from it (linear/supernodal_layout.h).
//
// Entry (the data of key ("data", "supernodal_structure"), ("provenance",
// linear::ordering_provenance()), ("ordering", requested), ("blocks", N), ("stored_blocks",
// M), ("pattern", BlockPattern::structure_hash)), little endian: a u32 for the ordering
// chosen (1 amd, 2 nested_dissection), the f64 factor_nonzeros and factorization_flops, a
// u32 S (supernodes) and a u32 E (blocks below, all supernodes), then u32 arrays: N of
// block_perm, S + 1 of supernode_begin, S + 1 of below_begin, E of below (the fields of
// linear::SupernodalStructure). A read is used only if its size is exactly that and
// analyze_supernodal accepts it for this pattern (a permutation, supernodes and rows in
// order and in range, in a postorder of their tree, every block of the pattern held, every
// update landing on rows of its target); anything else is warned about, and the analysis
// is made from scratch and stored again. Any structure accepted gives a correct
// factorization, so not even a stale or colliding entry can change more than the fill. The analysis made from a read is the one
// made from scratch: results are bit-identical.
#pragma once

#include <memory>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"
#include "lsjit/runtime/solve/linear/supernodal_analysis.h"

namespace lsjit::detail {

// Patterns of fewer blocks are ordered afresh: reading an entry (opening the key file and
// the entry, the tag) takes about what AMD takes for a pose graph of a hundred or two
// poses, so the cache pays only above that.
inline constexpr int kMinCachedBlocks = 128;

// The key of `pattern`'s entry when `ordering` is asked for (see above).
compiler::CacheKey structure_cache_key(const linear::BlockPattern& pattern, linear::SupernodalOrdering ordering);

// analyze_supernodal(pattern, ordering), laid out from the structure in `cache`'s directory
// when it holds this pattern's, and stored there otherwise when it is worth it
// (KernelCache::data_worth_storing: the first structure a cache makes, and any pattern it
// meets a second time), so that a problem growing online, whose pattern changes at every
// step, writes one entry rather than one per step. `cache` nullptr, or a cache
// without a directory: no caching. Throws what analyze_supernodal throws.
std::shared_ptr<const linear::SupernodalAnalysis> cached_supernodal_analysis(
    const linear::BlockPattern& pattern, linear::SupernodalOrdering ordering,
    compiler::KernelCache* cache);

}  // namespace lsjit::detail
