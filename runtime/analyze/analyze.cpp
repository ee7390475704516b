// Problem::analyze(): from recorded instances to a ProblemLayout (problem_layout.h).
//
//   1. trace each cost group once; merge groups whose traces are identical
//   2. dump the traces when LSJIT_DUMP_DIR is set
//   3. get each merged group's Residual and NormalEquations kernels from the kernel cache
//   4. number the referenced variables per type (sorted IDs) and the free ones
//   5. give each instance's slots their rows, concatenate the data
//   6. the block pattern of H and the gather lists that assemble H and g from the kernels'
//      per-instance blocks
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <utility>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/ir/augmented_lagrangian.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/normal_equations.h"
#include "lsjit/ir/printer.h"
#include "lsjit/ir/structural_hash.h"
#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/problem.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"

namespace lsjit {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// IDs are arbitrary int64s, but most problems number their variables 0..n-1 or close to it
// (BAL, g2o). When a type's IDs span at most kDenseIdSpan times as many values as it has
// rows, numbering them goes through an array over the span instead of sorting and binary
// searches: Ladybug-49's 63,686 references took 2.7 ms of analyze() that way.
constexpr uint64_t kDenseIdSpan = 4;


// The span hi − lo + 1 of IDs in [lo, hi] if an array over it is worth it for `rows` of
// them, else 0 (also when the span overflows: the int64 extremes).
uint64_t dense_span(int64_t lo, int64_t hi, size_t rows) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  return span != 0 && span <= kDenseIdSpan * rows + 64 ? span : 0;
}

// `ids` sorted, without duplicates.
void sort_unique(detail::BigVector<int64_t>& ids) {
  if (ids.empty()) return;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const int64_t first = *lo;
  if (const uint64_t span = dense_span(first, *hi, ids.size()); span != 0) {
    detail::BigVector<uint8_t> seen(span, 0);
    for (int64_t id : ids) seen[static_cast<uint64_t>(id) - static_cast<uint64_t>(first)] = 1;
    ids.clear();
    for (uint64_t k = 0; k < span; ++k)
      if (seen[k]) ids.push_back(static_cast<int64_t>(static_cast<uint64_t>(first) + k));
    return;
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

// The row of each ID of a sorted, duplicate-free table: an array over a dense span, else a
// binary search. Every ID looked up must be in the table.
class RowOfId {
 public:
  explicit RowOfId(const detail::BigVector<int64_t>& ids) : ids_(ids) {
    if (ids.empty()) return;
    const uint64_t span = dense_span(ids.front(), ids.back(), ids.size());
    if (span == 0) return;
    lo_ = ids.front();
    row_.assign(span, -1);
    for (size_t r = 0; r < ids.size(); ++r) row_[static_cast<uint64_t>(ids[r]) - static_cast<uint64_t>(lo_)] = static_cast<int32_t>(r);
  }
  int32_t operator()(int64_t id) const {
    if (!row_.empty()) return row_[static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_)];
    return static_cast<int32_t>(std::lower_bound(ids_.begin(), ids_.end(), id) - ids_.begin());
  }

 private:
  const detail::BigVector<int64_t>& ids_;
  int64_t lo_ = 0;
  detail::BigVector<int32_t> row_;
};

// A group's per-slot arrays, hoisted out of the loops over its instances: each slot's rows
// and its type's free numbers (looked up through the layout per instance, they were most
// of the pattern's and the gather lists' passes on Ladybug-49).
struct SlotTables {
  std::array<const int32_t*, detail::kMaxSlots> rows{}, free_index{};
  uint32_t n = 0;
  SlotTables(const detail::ProblemLayout& layout, const detail::KernelGroup& kg)
      : n(static_cast<uint32_t>(kg.slot_type.size())) {
    for (uint32_t v = 0; v < n; ++v) {
      rows[v] = kg.rows[v].data();
      free_index[v] = layout.types[kg.slot_type[v]].free_index.data();
    }
  }
  // The free variable of slot v of the group's instance i, or -1 if it is constant.
  int free(uint32_t v, int64_t i) const { return free_index[v][rows[v][i]]; }
};

struct Merged {
  ir::Trace traced;
  std::string hash;
  double trace_s = 0;
  std::vector<const detail::CostGroup*> parts;
};

// Writes every stage of `traced` to LSJIT_DUMP_DIR, one file per stage:
// <cost>-<first 12 hex digits of the structural hash>.<stage>.ir. A failure to write is
// reported once per process and otherwise ignored: dumping must never break a solve.
void dump_trace(const Merged& m) {
  const char* dir_env = std::getenv("LSJIT_DUMP_DIR");
  if (!dir_env || !*dir_env) return;
  namespace fs = std::filesystem;
  const fs::path dir(dir_env);
  static std::once_flag warned;
  try {
    fs::create_directories(dir);
    const ir::Trace jacobian = ir::differentiate(m.traced);
    const std::pair<const char*, ir::Trace> stages[] = {
        {"traced", m.traced},
        {"simplified", ir::simplify_residual(m.traced)},
        {"jacobian", jacobian},
        {"normal_equations", ir::normal_equations(jacobian)}};
    for (const auto& [stage, trace] : stages) {
      const fs::path path =
          dir / (m.traced.signature.name + "-" + m.hash.substr(0, 12) + "." + stage + ".ir");
      const fs::path tmp = path.string() + ".tmp";
      {
        std::ofstream out(tmp, std::ios::trunc);
        out << ir::print(trace);
        if (!out) throw std::runtime_error("cannot write " + tmp.string());
      }
      fs::rename(tmp, path);
    }
  } catch (const std::exception& e) {
    std::call_once(warned, [&] {
      std::cerr << "lsjit: LSJIT_DUMP_DIR: traces are not dumped (" << e.what() << ")\n";
    });
  }
}

// The type AnalyzeOptions::schur_elimination asks for, or "" when none can be eliminated.
std::string schur_type(const std::vector<detail::TypeTable>& types,
                       const std::vector<detail::BigVector<int64_t>>& ids_of_type,  // sorted, distinct
                       const std::set<std::pair<std::string, int64_t>>& constant,
                       const std::vector<detail::KernelGroup>& groups, const std::string& request) {
  if (request == "none") return "";
  auto eliminable = [&](const std::string& name) {
    for (const detail::KernelGroup& g : groups) {
      int slots = 0;
      for (const ir::VarSlot& v : g.traced.signature.vars) slots += v.type == name;
      if (slots > 1) return false;
    }
    return true;
  };
  // Free variables of a type: referenced and not constant.
  auto free_count = [&](size_t t) {
    if (constant.empty()) return ids_of_type[t].size();
    size_t n = 0;
    for (int64_t id : ids_of_type[t]) n += constant.count({types[t].type->name, id}) == 0;
    return n;
  };
  size_t total_free = 0;
  std::vector<size_t> counts;
  for (size_t t = 0; t < types.size(); ++t) total_free += counts.emplace_back(free_count(t));
  if (request != "auto") {
    for (size_t t = 0; t < types.size(); ++t)
      if (types[t].type->name == request) {
        if (!eliminable(request))
          throw Error("lsjit: schur_elimination = \"" + request + "\": a cost has two " + request +
                      " variables, so the Schur complement cannot eliminate them");
        return request;
      }
    throw Error("lsjit: schur_elimination = \"" + request + "\": no cost uses a variable of that type");
  }
  std::string best;
  size_t best_count = 0;
  for (size_t t = 0; t < types.size(); ++t) {
    const std::string& name = types[t].type->name;
    if (counts[t] > best_count && counts[t] < total_free && eliminable(name)) {
      best = name;
      best_count = counts[t];
    }
  }
  return best;
}

}  // namespace

Problem::Problem() = default;
Problem::~Problem() = default;
// A moved-from Problem is an empty one, as a moved-from std::vector is: its instance
// count goes with its groups, so it never reports instances it no longer holds.
Problem::Problem(Problem&& other) noexcept { *this = std::move(other); }
Problem& Problem::operator=(Problem&& other) noexcept {
  if (this == &other) return *this;
  groups_ = std::exchange(other.groups_, {});
  by_identity_ = std::exchange(other.by_identity_, {});
  constant_ = std::exchange(other.constant_, {});
  instances_ = std::exchange(other.instances_, 0);
  return *this;
}

AnalyzedProblem Problem::analyze(const AnalyzeOptions& options) const {
  const auto start = Clock::now();
  linear::supernodal::init_blas();  // joins OpenBLAS' spinning workers (supernodal_kernels.h)
  auto layout = std::make_shared<detail::ProblemLayout>();
  compiler::KernelCache& cache = options.cache ? *options.cache : compiler::default_cache();
  layout->cache = &cache;
  layout->compile = options.compile;

  // 1. Trace and merge.
  if (groups_.size() > std::numeric_limits<uint16_t>::max())
    throw Error("lsjit: more than 65535 cost groups in one problem");
  std::vector<Merged> merged;
  for (const auto& g : groups_) {
    if (g->var_types.size() > detail::kMaxSlots || g->var_types.empty())
      throw Error("lsjit: cost '" + g->name + "' has " + std::to_string(g->var_types.size()) +
                  " variable arguments; a cost takes 1 to " + std::to_string(detail::kMaxSlots));
    const auto t0 = Clock::now();
    ir::Trace traced = g->trace();
    const double trace_s = seconds_since(t0);
    layout->trace_s += trace_s;
    std::string hash = ir::structural_hash(traced).hex();
    auto same = std::find_if(merged.begin(), merged.end(), [&](const Merged& m) {
      return m.hash == hash && m.traced.signature == traced.signature;
    });
    if (same == merged.end()) {
      merged.push_back({std::move(traced), std::move(hash), trace_s, {}});
      same = merged.end() - 1;
    }
    same->parts.push_back(g.get());
  }

  // 2 and 3. Dump, then kernels. A constraint is solved through its augmented-Lagrangian
  // residual (ir/augmented_lagrangian.h); its plain value c(x), which the outer loop needs,
  // comes from a residual kernel of the constraint itself, under the name "NAME.constraint"
  // so that the cache does not take the two graphs for a recompile of one cost.
  for (Merged& m : merged) {
    detail::KernelGroup kg;
    kg.name = m.traced.signature.name;
    kg.kind = m.traced.signature.kind;
    std::vector<compiler::KernelCache::Lookup> got;
    if (kg.kind != CostKind::LeastSquares) {
      ir::Trace plain = m.traced;
      plain.signature.name += ".constraint";
      got.push_back(cache.lookup(plain, compiler::KernelMode::Residual, options.compile, m.trace_s));
      kg.constraint = got.back().kernel;
      kg.user_data_stride = kg.constraint->layout.data_stride;
      kg.constraint_traced = std::move(plain);
      m.traced = ir::augmented_lagrangian_residual(m.traced);
    }
    dump_trace(m);
    const auto lookups_start = Clock::now();
    const auto modes = cache.lookup_modes(
        m.traced, {compiler::KernelMode::Residual, compiler::KernelMode::NormalEquations},
        options.compile, m.trace_s);
    layout->kernels_wall_s += seconds_since(lookups_start);
    kg.residual = modes[0].kernel;
    kg.normal = modes[1].kernel;
    got.insert(got.end(), modes.begin(), modes.end());
    for (const auto& l : got) {
      if (l.source == compiler::KernelSource::Compiled) {
        ++layout->cache_misses;
        ++layout->compiles;
        layout->compile_s += l.seconds;
      } else if (l.source == compiler::KernelSource::Tier0) {  // built, not compiled (yet)
        ++layout->cache_misses;
        ++layout->tier0_kernels;
        layout->compile_s += l.seconds;
      } else {
        ++layout->cache_hits;
        if (l.source == compiler::KernelSource::Linked) ++layout->linked_kernels;
        if (l.source == compiler::KernelSource::Disk) layout->compile_s += l.seconds;
      }
    }
    kg.residual_dim = m.traced.signature.residual_dim;
    const compiler::KernelLayout& L = kg.normal->layout;
    kg.hessian_slots.assign(L.outputs.size(), {0, 0});
    for (uint32_t v = 0; v < L.num_vars; ++v)
      for (uint32_t w = v; w < L.num_vars; ++w) kg.hessian_slots[L.hessian_array(v, w)] = {v, w};
    kg.data_stride = kg.normal->layout.data_stride;
    if (kg.kind == CostKind::LeastSquares) kg.user_data_stride = kg.data_stride;
    kg.traced = std::move(m.traced);
    layout->groups.push_back(std::move(kg));
  }

  // 4. Variables: per type, the sorted referenced IDs; then the free ones.
  std::map<std::string, uint32_t> type_index;
  std::vector<detail::BigVector<int64_t>> ids_of_type;
  for (size_t gi = 0; gi < merged.size(); ++gi) {
    auto& kg = layout->groups[gi];
    for (const detail::CostGroup* part : merged[gi].parts) {
      for (size_t s = 0; s < part->var_types.size(); ++s) {
        const VariableType* vt = part->var_types[s];
        auto [it, inserted] = type_index.try_emplace(vt->name, static_cast<uint32_t>(layout->types.size()));
        if (inserted) {
          layout->types.push_back({vt, {}, {}});
          ids_of_type.emplace_back();
        }
        if (kg.slot_type.size() <= s) kg.slot_type.push_back(it->second);
        auto& ids = ids_of_type[it->second];
        ids.insert(ids.end(), part->ids[s].begin(), part->ids[s].end());
      }
    }
  }
  // Each type's referenced IDs, sorted and distinct (they came once per cost slot: 63,686
  // for Ladybug-49's 7,825 variables, which schur_type's std::set took 2 ms to sort).
  for (auto& ids : ids_of_type) sort_unique(ids);
  // Types numbered in name order, so that the free variables' order (and with it the
  // linear system) does not depend on the order of add() calls; the eliminated type last.
  {
    const std::string eliminated = schur_type(layout->types, ids_of_type, constant_, layout->groups,
                                              options.schur_elimination);
    layout->eliminated_type = eliminated;
    std::vector<uint32_t> order(layout->types.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const std::string& na = layout->types[a].type->name;
      const std::string& nb = layout->types[b].type->name;
      return std::make_pair(na == eliminated, na) < std::make_pair(nb == eliminated, nb);
    });
    std::vector<uint32_t> new_index(order.size());
    for (uint32_t k = 0; k < order.size(); ++k) new_index[order[k]] = k;
    std::vector<detail::TypeTable> types(order.size());
    std::vector<detail::BigVector<int64_t>> ids(order.size());
    for (uint32_t k = 0; k < order.size(); ++k) {
      types[k] = std::move(layout->types[order[k]]);
      ids[k] = std::move(ids_of_type[order[k]]);
    }
    layout->types = std::move(types);
    ids_of_type = std::move(ids);
    for (auto& kg : layout->groups)
      for (auto& t : kg.slot_type) t = new_index[t];
  }
  size_t referenced = 0;
  for (const auto& ids : ids_of_type) referenced += ids.size();
  layout->free.reserve(referenced);
  for (size_t t = 0; t < layout->types.size(); ++t) {
    auto& ids = ids_of_type[t];
    detail::TypeTable& table = layout->types[t];
    table.ids = std::move(ids);
    table.free_index.assign(table.ids.size(), -1);
    for (size_t r = 0; r < table.ids.size(); ++r) {
      // (The lookup builds a std::string key: skipped when nothing is constant.)
      if (!constant_.empty() && constant_.count({table.type->name, table.ids[r]})) {
        ++layout->constant_variables;
        continue;
      }
      table.free_index[r] = static_cast<int32_t>(layout->free.size());
      layout->free.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(r),
                              static_cast<uint32_t>(table.type->tangent), layout->tangent_dim});
      layout->tangent_dim += table.type->tangent;
    }
  }
  // Constants no cost uses: accepted (a mask entry that matches nothing), and reported.
  for (const auto& [type_name, id] : constant_) {
    if (layout->uses_variable(type_name, id)) continue;
    if (layout->unused_constants++ < detail::ProblemLayout::kNamedUnusedVariables)
      layout->unused_constant_names.push_back(type_name + " variable " + std::to_string(id));
  }
  layout->first_eliminated = static_cast<int64_t>(layout->free.size());
  for (size_t k = 0; k < layout->free.size(); ++k)
    if (layout->types[layout->free[k].type].type->name == layout->eliminated_type) {
      layout->first_eliminated = static_cast<int64_t>(k);
      break;
    }

  // 5. Rows and data, and each group's place in the evaluation buffers.
  std::vector<RowOfId> row_of_id;
  row_of_id.reserve(layout->types.size());
  for (const detail::TypeTable& table : layout->types) row_of_id.emplace_back(table.ids);
  for (size_t gi = 0; gi < merged.size(); ++gi) {
    detail::KernelGroup& kg = layout->groups[gi];
    kg.rows.resize(kg.slot_type.size());
    size_t group_instances = 0;
    for (const detail::CostGroup* part : merged[gi].parts) group_instances += part->instances;
    for (auto& rows : kg.rows) rows.reserve(group_instances);
    const bool robust = std::any_of(merged[gi].parts.begin(), merged[gi].parts.end(),
                                    [](const detail::CostGroup* part) { return !part->losses.empty(); });
    for (const detail::CostGroup* part : merged[gi].parts) {
      if (robust) {
        if (part->losses.empty()) kg.losses.insert(kg.losses.end(), part->instances, TrivialLoss());
        else kg.losses.insert(kg.losses.end(), part->losses.begin(), part->losses.end());
      }
      for (size_t s = 0; s < kg.slot_type.size(); ++s) {
        const RowOfId& row_of = row_of_id[kg.slot_type[s]];
        for (int64_t id : part->ids[s]) kg.rows[s].push_back(row_of(id));
      }
      if (part->data_stride != kg.user_data_stride)
        throw std::logic_error("analyze: data stride differs from the kernel layout's");
      if (kg.kind == CostKind::LeastSquares) {
        kg.data.insert(kg.data.end(), part->data.begin(), part->data.end());
      } else {  // room for the multiplier (0) and the penalty (1) after the user's data
        kg.user_data.insert(kg.user_data.end(), part->data.begin(), part->data.end());
        for (size_t i = 0; i < part->instances; ++i) {
          const auto row = part->data.begin() + static_cast<ptrdiff_t>(i * kg.user_data_stride);
          kg.data.insert(kg.data.end(), row, row + kg.user_data_stride);
          kg.data.insert(kg.data.end(), kg.residual_dim, 0.0);
          kg.data.push_back(1.0);
        }
      }
      kg.instances += static_cast<int64_t>(part->instances);
    }
    kg.first_instance = layout->instances;
    layout->instances += kg.instances;
    kg.residual_offset = layout->residual_buffer_size;
    layout->residual_buffer_size += static_cast<uint64_t>(kg.instances) * kg.residual_dim;
    layout->residuals += static_cast<size_t>(kg.instances) * kg.residual_dim;
  }

  if (layout->instances > detail::kMaxInstances)
    throw Error("analyze: " + std::to_string(layout->instances) + " cost instances, more than the " +
                std::to_string(detail::kMaxInstances) + " one problem can hold");

  // 6. The pattern of H and the gather lists.
  std::vector<int> block_sizes;
  for (const auto& f : layout->free) block_sizes.push_back(static_cast<int>(f.tangent));
  detail::BigVector<std::pair<int, int>> pairs;
  for (const auto& kg : layout->groups) {
    const SlotTables slots(*layout, kg);
    for (int64_t i = 0; i < kg.instances; ++i)
      for (uint32_t v = 0; v < slots.n; ++v)
        for (uint32_t w = v + 1; w < slots.n; ++w) {
          const int a = slots.free(v, i), b = slots.free(w, i);
          if (a >= 0 && b >= 0 && a != b) pairs.emplace_back(std::min(a, b), std::max(a, b));
        }
  }
  // Where each of those pairs is stored, in the order for_each_source meets them.
  detail::BigBuffer<int64_t> pair_blocks(pairs.size());
  layout->pattern = std::make_shared<const linear::BlockPattern>(
      std::move(block_sizes), std::span<const std::pair<int, int>>(pairs), std::span<int64_t>(pair_blocks));
  pairs = {};
  const linear::BlockPattern& P = *layout->pattern;
  const int64_t stored = P.num_stored_blocks();
  // Each stored block of H and each free variable's part of g gets the list of kernel outputs
  // (sources) summed into it, in instance order (which fixes the summation order), as CSR:
  // a counting sort, run as two passes over the same enumeration, counting then placing.
  // The H output array of each slot pair is looked up once per group, not per instance
  // (with SlotTables, the two passes on Ladybug-49 went from 2.1-2.8 to 1.5-2.2 ms).
  auto for_each_source = [&](auto&& h_item, auto&& g_item) {
    const int64_t* next_pair = pair_blocks.data();
    for (uint16_t gi = 0; gi < layout->groups.size(); ++gi) {
      const detail::KernelGroup& kg = layout->groups[gi];
      const compiler::KernelLayout& L = kg.normal->layout;
      const SlotTables slots(*layout, kg);
      const uint32_t n = slots.n;
      std::array<uint8_t, detail::kMaxSlots * detail::kMaxSlots> array_of{};
      for (uint32_t v = 0; v < n; ++v)
        for (uint32_t w = v; w < n; ++w) array_of[v * n + w] = static_cast<uint8_t>(L.hessian_array(v, w));
      std::array<int, detail::kMaxSlots> free{};
      for (int64_t i = 0; i < kg.instances; ++i) {
        const auto instance = static_cast<uint32_t>(kg.first_instance + i);
        for (uint32_t v = 0; v < n; ++v) free[v] = slots.free(v, i);
        for (uint32_t v = 0; v < n; ++v) {
          const int a = free[v];
          if (a < 0) continue;
          g_item(a, detail::Source{instance, gi, static_cast<uint8_t>(1 + v), false});
          for (uint32_t w = v; w < n; ++w) {
            const int b = free[w];
            if (b < 0) continue;
            const uint8_t array = array_of[v * n + w];
            // A diagonal block is its row's first (BlockPattern): no search for it.
            if (v == w) {
              h_item(P.row_begin(a), detail::Source{instance, gi, array, false});
            } else if (a == b) {  // one variable in two slots: J_vᵀJ_w + J_wᵀJ_v
              h_item(P.row_begin(a), detail::Source{instance, gi, array, false});
              h_item(P.row_begin(a), detail::Source{instance, gi, array, true});
            } else {  // the pattern's pair, transposed when stored as (b, a)
              h_item(*next_pair++, detail::Source{instance, gi, array, a > b});
            }
          }
        }
      }
    }
  };
  layout->h_begin.assign(stored + 1, 0);
  layout->g_begin.assign(layout->free.size() + 1, 0);
  for_each_source([&](int64_t k, const detail::Source&) { ++layout->h_begin[k + 1]; },
                  [&](int a, const detail::Source&) { ++layout->g_begin[a + 1]; });
  std::partial_sum(layout->h_begin.begin(), layout->h_begin.end(), layout->h_begin.begin());
  std::partial_sum(layout->g_begin.begin(), layout->g_begin.end(), layout->g_begin.begin());
  layout->h_sources.resize(layout->h_begin.back());
  layout->g_sources.resize(layout->g_begin.back());
  {
    detail::BigVector<uint64_t> h_next(layout->h_begin.begin(), layout->h_begin.end() - 1);
    detail::BigVector<uint64_t> g_next(layout->g_begin.begin(), layout->g_begin.end() - 1);
    for_each_source([&](int64_t k, const detail::Source& src) { layout->h_sources[h_next[k]++] = src; },
                    [&](int a, const detail::Source& src) { layout->g_sources[g_next[a]++] = src; });
  }
  layout->h_value_offset.resize(stored);
  layout->h_rows.resize(stored);
  layout->h_cols.resize(stored);
  for (int i = 0; i < P.num_blocks(); ++i)
    for (int64_t k = P.row_begin(i); k < P.row_end(i); ++k) {
      layout->h_value_offset[k] = static_cast<uint64_t>(P.offset(k));
      layout->h_rows[k] = static_cast<uint32_t>(P.block_size(i));
      layout->h_cols[k] = static_cast<uint32_t>(P.block_size(P.col(k)));
    }

  layout->jacobian_kernels.resize(layout->groups.size());
  layout->analyze_s = seconds_since(start);
  return AnalyzedProblem(std::move(layout));
}

}  // namespace lsjit
