#include "lsjit/runtime/analyze/number_variables.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "lsjit/common/error.h"
#include "lsjit/runtime/analyze/id_tables.h"
#include "lsjit/runtime/problem/type_name_clash.h"

namespace lsjit::detail {
namespace {

using Constants = std::set<std::pair<std::string, int64_t>>;

// Per type (numbered in order of first use), the IDs every slot of every part references,
// sorted and distinct; sets each group's slot_type and appends the types to layout.types.
std::vector<BigVector<int64_t>> collect_ids(const std::vector<TracedGroup>& groups, ProblemLayout& layout) {
  std::map<std::string, uint32_t> type_index;
  std::vector<BigVector<int64_t>> ids_of_type;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    auto& kg = layout.groups[gi];
    for (const CostGroup* part : groups[gi].parts) {
      for (size_t s = 0; s < part->var_types.size(); ++s) {
        const VariableType* vt = part->var_types[s];
        auto [it, inserted] = type_index.try_emplace(vt->name, static_cast<uint32_t>(layout.types.size()));
        if (inserted) {
          layout.types.push_back({vt, {}, {}});
          ids_of_type.emplace_back();
        }
        if (const std::string clash = type_name_clash(*layout.types[it->second].type, *vt); !clash.empty())
          throw Error("lsjit: " + clash);
        if (kg.slot_type.size() <= s) kg.slot_type.push_back(it->second);
        auto& ids = ids_of_type[it->second];
        ids.insert(ids.end(), part->ids[s].begin(), part->ids[s].end());
      }
    }
  }
  // They came once per cost slot, many times per variable.
  for (auto& ids : ids_of_type) sort_unique(ids);
  return ids_of_type;
}

// The type schur_elimination asks for, or "" when none can be eliminated. "auto" picks the
// type with the most free variables that is not all of them and that no cost uses twice.
std::string schur_type(const std::vector<TypeTable>& types,
                       const std::vector<BigVector<int64_t>>& ids_of_type,  // sorted, distinct
                       const Constants& constant, const std::vector<KernelGroup>& groups,
                       const std::string& request) {
  if (request == "none") return "";
  auto eliminable = [&](const std::string& name) {
    for (const KernelGroup& g : groups) {
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

// Renumbers the types in name order, `eliminated` last, with their ID tables and the
// groups' slot types.
void order_types(const std::string& eliminated, std::vector<BigVector<int64_t>>& ids_of_type,
                 ProblemLayout& layout) {
  std::vector<uint32_t> order(layout.types.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const std::string& na = layout.types[a].type->name;
    const std::string& nb = layout.types[b].type->name;
    return std::make_pair(na == eliminated, na) < std::make_pair(nb == eliminated, nb);
  });
  std::vector<uint32_t> new_index(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) new_index[order[k]] = k;
  std::vector<TypeTable> types(order.size());
  std::vector<BigVector<int64_t>> ids(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    types[k] = std::move(layout.types[order[k]]);
    ids[k] = std::move(ids_of_type[order[k]]);
  }
  layout.types = std::move(types);
  ids_of_type = std::move(ids);
  for (auto& kg : layout.groups)
    for (auto& t : kg.slot_type) t = new_index[t];
}

// Moves the ID tables into the types and numbers the free variables type by type.
void number_free_variables(std::vector<BigVector<int64_t>>& ids_of_type, const Constants& constant,
                           ProblemLayout& layout) {
  size_t referenced = 0;
  for (const auto& ids : ids_of_type) referenced += ids.size();
  layout.free.reserve(referenced);
  for (size_t t = 0; t < layout.types.size(); ++t) {
    TypeTable& table = layout.types[t];
    table.ids = std::move(ids_of_type[t]);
    table.free_index.assign(table.ids.size(), -1);
    for (size_t r = 0; r < table.ids.size(); ++r) {
      // (The lookup builds a std::string key: skipped when nothing is constant.)
      if (!constant.empty() && constant.count({table.type->name, table.ids[r]})) {
        ++layout.constant_variables;
        continue;
      }
      table.free_index[r] = static_cast<int32_t>(layout.free.size());
      layout.free.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(r),
                             static_cast<uint32_t>(table.type->tangent), layout.tangent_dim});
      layout.tangent_dim += table.type->tangent;
    }
  }
}

// Constants no cost uses are accepted (a mask entry that matches nothing) and reported.
void count_unused_constants(const Constants& constant, ProblemLayout& layout) {
  for (const auto& [type_name, id] : constant) {
    if (layout.uses_variable(type_name, id)) continue;
    if (layout.unused_constants++ < ProblemLayout::kNamedUnusedVariables)
      layout.unused_constant_names.push_back(type_name + " variable " + std::to_string(id));
  }
}

}  // namespace

void number_variables(const std::vector<TracedGroup>& groups, const Constants& constant,
                      const std::string& schur_elimination, ProblemLayout& layout) {
  std::vector<BigVector<int64_t>> ids_of_type = collect_ids(groups, layout);
  layout.eliminated_type = schur_type(layout.types, ids_of_type, constant, layout.groups, schur_elimination);
  order_types(layout.eliminated_type, ids_of_type, layout);
  number_free_variables(ids_of_type, constant, layout);
  count_unused_constants(constant, layout);
  layout.first_eliminated = static_cast<int64_t>(layout.free.size());
  for (size_t k = 0; k < layout.free.size(); ++k)
    if (layout.types[layout.free[k].type].type->name == layout.eliminated_type) {
      layout.first_eliminated = static_cast<int64_t>(k);
      break;
    }
}

}  // namespace lsjit::detail
