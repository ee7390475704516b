#include "lsjit/runtime/analyze/gather_lists.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

namespace lsjit::detail {
namespace {

// A group's per-slot arrays, hoisted out of the loops over its instances: each slot's rows
// and its type's free numbers, which looked up through the layout per instance would be
// most of the passes below.
struct SlotTables {
  std::array<const int32_t*, kMaxSlots> rows{}, free_index{};
  uint32_t n = 0;
  SlotTables(const ProblemLayout& layout, const KernelGroup& kg) : n(static_cast<uint32_t>(kg.slot_type.size())) {
    for (uint32_t v = 0; v < n; ++v) {
      rows[v] = kg.rows[v].data();
      free_index[v] = layout.types[kg.slot_type[v]].free_index.data();
    }
  }
  // The free variable of slot v of the group's instance i, or -1 if it is constant.
  int free(uint32_t v, int64_t i) const { return free_index[v][rows[v][i]]; }
};

// The pattern of H from every pair of distinct free variables that share an instance;
// `pair_blocks` gets where each pair (in the order for_each_source meets them) is stored.
void build_pattern(ProblemLayout& layout, BigBuffer<int64_t>& pair_blocks) {
  std::vector<int> block_sizes;
  for (const auto& f : layout.free) block_sizes.push_back(static_cast<int>(f.tangent));
  BigVector<std::pair<int, int>> pairs;
  for (const auto& kg : layout.groups) {
    const SlotTables slots(layout, kg);
    for (int64_t i = 0; i < kg.instances; ++i)
      for (uint32_t v = 0; v < slots.n; ++v)
        for (uint32_t w = v + 1; w < slots.n; ++w) {
          const int a = slots.free(v, i), b = slots.free(w, i);
          if (a >= 0 && b >= 0 && a != b) pairs.emplace_back(std::min(a, b), std::max(a, b));
        }
  }
  pair_blocks = BigBuffer<int64_t>(pairs.size());
  layout.pattern = std::make_shared<const linear::BlockPattern>(
      std::move(block_sizes), std::span<const std::pair<int, int>>(pairs), std::span<int64_t>(pair_blocks));
}

// Calls h_item(stored block, source) and g_item(free variable, source) for every kernel
// output, group by group, instance by instance: the order of the gather lists. The H
// output array of each slot pair is looked up once per group, not per instance.
template <class HItem, class GItem>
void for_each_source(const ProblemLayout& layout, const BigBuffer<int64_t>& pair_blocks, HItem&& h_item,
                     GItem&& g_item) {
  const linear::BlockPattern& P = *layout.pattern;
  const int64_t* next_pair = pair_blocks.data();
  for (uint16_t gi = 0; gi < layout.groups.size(); ++gi) {
    const KernelGroup& kg = layout.groups[gi];
    const compiler::KernelLayout& L = kg.normal->layout;
    const SlotTables slots(layout, kg);
    const uint32_t n = slots.n;
    std::array<uint8_t, kMaxSlots * kMaxSlots> array_of{};
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t w = v; w < n; ++w) array_of[v * n + w] = static_cast<uint8_t>(L.hessian_array(v, w));
    std::array<int, kMaxSlots> free{};
    for (int64_t i = 0; i < kg.instances; ++i) {
      const auto instance = static_cast<uint32_t>(kg.first_instance + i);
      for (uint32_t v = 0; v < n; ++v) free[v] = slots.free(v, i);
      for (uint32_t v = 0; v < n; ++v) {
        const int a = free[v];
        if (a < 0) continue;
        g_item(a, Source{instance, gi, static_cast<uint8_t>(1 + v), false});
        for (uint32_t w = v; w < n; ++w) {
          const int b = free[w];
          if (b < 0) continue;
          const uint8_t array = array_of[v * n + w];
          // A diagonal block is its row's first (BlockPattern): no search for it.
          if (v == w) {
            h_item(P.row_begin(a), Source{instance, gi, array, false});
          } else if (a == b) {  // one variable in two slots: J_vᵀJ_w + J_wᵀJ_v
            h_item(P.row_begin(a), Source{instance, gi, array, false});
            h_item(P.row_begin(a), Source{instance, gi, array, true});
          } else {  // the pattern's pair, transposed when stored as (b, a)
            h_item(*next_pair++, Source{instance, gi, array, a > b});
          }
        }
      }
    }
  }
}

// The CSR lists, by a counting sort run as two passes over the same enumeration.
void fill_sources(ProblemLayout& layout, const BigBuffer<int64_t>& pair_blocks) {
  layout.h_begin.assign(layout.pattern->num_stored_blocks() + 1, 0);
  layout.g_begin.assign(layout.free.size() + 1, 0);
  for_each_source(layout, pair_blocks, [&](int64_t k, const Source&) { ++layout.h_begin[k + 1]; },
                  [&](int a, const Source&) { ++layout.g_begin[a + 1]; });
  std::partial_sum(layout.h_begin.begin(), layout.h_begin.end(), layout.h_begin.begin());
  std::partial_sum(layout.g_begin.begin(), layout.g_begin.end(), layout.g_begin.begin());
  layout.h_sources.resize(layout.h_begin.back());
  layout.g_sources.resize(layout.g_begin.back());
  BigVector<uint64_t> h_next(layout.h_begin.begin(), layout.h_begin.end() - 1);
  BigVector<uint64_t> g_next(layout.g_begin.begin(), layout.g_begin.end() - 1);
  for_each_source(layout, pair_blocks, [&](int64_t k, const Source& src) { layout.h_sources[h_next[k]++] = src; },
                  [&](int a, const Source& src) { layout.g_sources[g_next[a]++] = src; });
}

// Each stored block's offset in H's values and its dimensions.
void fill_block_tables(ProblemLayout& layout) {
  const linear::BlockPattern& P = *layout.pattern;
  const int64_t stored = P.num_stored_blocks();
  layout.h_value_offset.resize(stored);
  layout.h_rows.resize(stored);
  layout.h_cols.resize(stored);
  for (int i = 0; i < P.num_blocks(); ++i)
    for (int64_t k = P.row_begin(i); k < P.row_end(i); ++k) {
      layout.h_value_offset[k] = static_cast<uint64_t>(P.offset(k));
      layout.h_rows[k] = static_cast<uint32_t>(P.block_size(i));
      layout.h_cols[k] = static_cast<uint32_t>(P.block_size(P.col(k)));
    }
}

}  // namespace

void build_gather_lists(ProblemLayout& layout) {
  BigBuffer<int64_t> pair_blocks;
  build_pattern(layout, pair_blocks);
  fill_sources(layout, pair_blocks);
  fill_block_tables(layout);
}

}  // namespace lsjit::detail
