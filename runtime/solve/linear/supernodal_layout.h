// Step 4 of the supernodal analysis (supernodal_analysis.h): the factor's layout from its
// supernodes and the blocks below each, whether the symbolic factorization just found them
// or a cached SupernodalStructure brings them back.
//
// Why a pass of its own: the layout is the one step both ways of making an analysis share,
// and the one that must not trust its input. A structure read from the cache is laid out by
// the same code that lays out a fresh one, and that code checks, as it goes, the two
// properties a factorization needs of any structure: every stored block of A has a place in
// a panel, and every update's rows are rows of the ancestor it lands on (so the factor's
// fill is held, and no update writes outside its target panel).
#pragma once

#include <cstdint>
#include <vector>

#include "lsjit/runtime/solve/linear/supernodal_analysis.h"

namespace lsjit::linear {

// Fills `a`'s supernodes, panels, block targets and updates. On entry `a` holds the
// permutations (block_perm, block_position, permuted_offset, scalar_perm). Supernode s owns
// the permuted blocks [supernode_begin[s], supernode_begin[s + 1]); the rows below its
// columns are the permuted blocks below[below_begin[s] .. below_begin[s + 1]), increasing,
// each past its own blocks (the caller checks these orders and ranges). Throws lsjit::Error
// when a block of `p` or a row of an update has no place in the structure; `a` is then
// partly filled and must be dropped.
void lay_out_supernodes(SupernodalAnalysis& a, const BlockPattern& p,
                        const std::vector<int>& supernode_begin,
                        const std::vector<int64_t>& below_begin, const std::vector<int>& below);

}  // namespace lsjit::linear
