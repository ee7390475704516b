// IncrementalSolver::update (incremental_solver.h) as a script of named steps: check the
// request, find the cost types, relinearize (when due), add the variables and costs, remove
// costs, re-eliminate the changed paths, back-substitute. Everything that can reject the
// request runs before the first change.
#include "lsjit/runtime/incremental_solver.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/incremental/incremental_state.h"
#include "lsjit/runtime/incremental/kernel_registry.h"
#include "lsjit/runtime/incremental/linearize.h"

namespace lsjit {
namespace detail {
namespace {

const std::string kWhere = "lsjit::IncrementalSolver::update: ";

std::string variable_name(std::string_view type, int64_t id) {
  return std::string(type) + " variable " + std::to_string(id);
}

// The row of (type, id) in the state, or -1.
int32_t find_row(const IncrementalState& s, std::string_view type, int64_t id) {
  const auto t = s.type_index.find(type);
  if (t == s.type_index.end()) return -1;
  const auto row = s.types[t->second].row_of.find(id);
  return row == s.types[t->second].row_of.end() ? -1 : row->second;
}

// A new variable of the request.
struct NewVariable {
  const VariableType* type = nullptr;
  int64_t id = 0;
  const double* params = nullptr;
  bool constant = false, used = false;
};

using VariableKey = std::pair<std::string, int64_t>;

// new_values, checked: none exists already, all are valid values.
std::map<VariableKey, NewVariable> check_new_values(const IncrementalState& s, const Values& new_values) {
  std::map<VariableKey, NewVariable> fresh;
  new_values.for_each([&](const VariableType& type, int64_t id, const double* params) {
    if (find_row(s, type.name, id) >= 0)
      throw Error(kWhere + variable_name(type.name, id) +
                  " already exists: new_values holds new variables only (the solver keeps its estimate)");
    for (int a = 0; a < type.ambient; ++a)
      if (!std::isfinite(params[a]))
        throw Error(kWhere + variable_name(type.name, id) + " has parameter " + std::to_string(a) +
                    " not finite: expected finite values");
    Values::check_value(type, id, params);
    fresh.emplace(VariableKey{type.name, id}, NewVariable{&type, id, params});
  });
  return fresh;
}

// Every variable a new cost uses exists or is new (of the same layout); every new one is used.
void check_cost_variables(const IncrementalState& s, const Problem::Parts& costs,
                          std::map<VariableKey, NewVariable>& fresh) {
  for (const auto& g : costs.groups)
    for (size_t slot = 0; slot < g->var_types.size(); ++slot) {
      const VariableType& type = *g->var_types[slot];
      for (int64_t id : g->ids[slot]) {
        if (find_row(s, type.name, id) >= 0) continue;
        const auto found = fresh.find(VariableKey{type.name, id});
        if (found == fresh.end())
          throw Error(kWhere + "cost '" + g->name + "' uses " + variable_name(type.name, id) +
                      ", which neither exists nor is in new_values");
        if (found->second.type->ambient != type.ambient || found->second.type->tangent != type.tangent)
          throw Error(kWhere + variable_name(type.name, id) + " has a value of another layout than cost '" + g->name +
                      "' expects");
        found->second.used = true;
      }
    }
  for (const auto& [type, id] : costs.constant) {
    const auto found = fresh.find(VariableKey{type, id});
    if (found == fresh.end())
      throw Error(kWhere + "set_constant(" + variable_name(type, id) +
                  "): only a variable added by this update can be made constant");
    found->second.constant = true;
  }
  for (const auto& [key, v] : fresh)
    if (!v.used && !v.constant)
      throw Error(kWhere + variable_name(key.first, key.second) +
                  " is in new_values but no cost uses it: its value would be undetermined (a constant one may wait "
                  "for its costs: set_constant)");
}

// `removed`: live, distinct, and not the last costs of a variable the update does not give
// a new cost.
void check_removed(const IncrementalState& s, const Problem::Parts& costs, std::span<const CostHandle> removed) {
  std::set<std::pair<uint32_t, uint32_t>> seen;
  std::map<std::pair<uint32_t, int32_t>, int64_t> losing;  // (type, row) -> costs removed
  for (const CostHandle& h : removed) {
    if (h.kind >= s.costs.size() || h.instance >= s.costs[h.kind].live.size() || !s.costs[h.kind].live[h.instance])
      throw Error(kWhere + "removed cost handle {" + std::to_string(h.kind) + ", " + std::to_string(h.instance) +
                  "} names no live cost");
    if (!seen.insert({h.kind, h.instance}).second)
      throw Error(kWhere + "removed cost handle {" + std::to_string(h.kind) + ", " + std::to_string(h.instance) +
                  "} is listed twice");
    const CostType& kind = s.costs[h.kind];
    std::set<std::pair<uint32_t, int32_t>> vars;
    for (size_t slot = 0; slot < kind.rows.size(); ++slot) vars.insert({kind.slot_type[slot], kind.rows[slot][h.instance]});
    for (const auto& v : vars) ++losing[v];
  }
  for (const auto& [v, count] : losing) {
    const TypeState& type = s.types[v.first];
    if (static_cast<int64_t>(type.costs[v.second].size()) > count || type.column[v.second] < 0) continue;
    bool gains = false;
    for (const auto& g : costs.groups)
      for (size_t slot = 0; slot < g->var_types.size() && !gains; ++slot)
        if (g->var_types[slot]->name == type.type->name)
          gains = std::find(g->ids[slot].begin(), g->ids[slot].end(), type.ids[v.second]) != g->ids[slot].end();
    if (!gains)
      throw Error(kWhere + "removing these costs leaves " + variable_name(type.type->name, type.ids[v.second]) +
                  " without a cost: its value would be undetermined");
  }
}

// Throws lsjit::Error naming instance i of `kind` when its linearization is not finite (the
// cost's value or derivatives overflowed or hit a NaN at θ).
void check_finite(const IncrementalState& s, const CostType& kind, int32_t i, const LinearizedInstance& lin) {
  bool finite = true;
  for (double x : lin.H) finite = finite && std::isfinite(x);
  for (double x : lin.g) finite = finite && std::isfinite(x);
  if (finite) return;
  std::string vars;
  for (size_t slot = 0; slot < kind.rows.size(); ++slot) {
    const TypeState& type = s.types[kind.slot_type[slot]];
    vars += (slot ? ", " : "") + variable_name(type.type->name, type.ids[kind.rows[slot][i]]);
  }
  throw Error(kWhere + "cost '" + kind.name + "' on " + vars +
              " has a non-finite value or derivative where its variables were relinearized (θ ⊕ δ); the solver "
              "cannot continue from there: start a new one, or give the cost a domain that covers the step");
}

// Every new instance linearizes to finite numbers at its variables' values (θ, or the new
// value): checked before anything changes, so that a cost that overflows or takes the log of
// a negative number there rejects the update whole.
void check_linearizable(const IncrementalState& s, const Problem::Parts& costs, const std::vector<uint32_t>& kinds,
                        const std::map<VariableKey, NewVariable>& fresh) {
  for (size_t k = 0; k < costs.groups.size(); ++k) {
    const CostGroup& g = *costs.groups[k];
    std::vector<std::vector<double>> params(g.var_types.size());
    for (size_t slot = 0; slot < g.var_types.size(); ++slot) {
      const VariableType& type = *g.var_types[slot];
      const auto known = s.type_index.find(type.name);
      const TypeState* state_type = known == s.type_index.end() ? nullptr : &s.types[known->second];
      for (int64_t id : g.ids[slot]) {
        const double* p = nullptr;
        if (state_type)
          if (const auto row = state_type->row_of.find(id); row != state_type->row_of.end())
            p = state_type->theta.data() + int64_t{row->second} * type.ambient;
        if (!p) p = fresh.at(VariableKey{type.name, id}).params;
        params[slot].insert(params[slot].end(), p, p + type.ambient);
      }
    }
    const int64_t bad = first_non_finite(s.costs[kinds[k]], g, params);
    if (bad < 0) continue;
    std::string vars;
    for (size_t slot = 0; slot < g.var_types.size(); ++slot)
      vars += (slot ? ", " : "") + variable_name(g.var_types[slot]->name, g.ids[slot][bad]);
    throw Error(kWhere + "cost '" + g.name + "' on " + vars +
                " has a non-finite value or derivative at its variables' values (θ, or the new values): expected "
                "a cost that is finite there");
  }
}

// θ ⊕ δ of (type, row) into `out` (ambient doubles); θ itself is unchanged.
void retract_row(const IncrementalState& s, uint32_t t, int32_t row, std::span<const double> delta, double* out) {
  const TypeState& type = s.types[t];
  const double* theta = type.theta.data() + int64_t{row} * type.type->ambient;
  type.type->retract(theta, delta.data(), out);
}

// Linearizes again every live cost on `rows` and hands the result to the factor.
void relinearize_costs(IncrementalState& s, const std::vector<std::pair<uint32_t, int32_t>>& rows) {
  std::map<uint32_t, std::vector<int32_t>> by_kind;
  for (const auto& [t, row] : rows)
    for (const CostHandle& h : s.types[t].costs[row]) by_kind[h.kind].push_back(static_cast<int32_t>(h.instance));
  for (auto& [kind, instances] : by_kind) {
    std::sort(instances.begin(), instances.end());
    instances.erase(std::unique(instances.begin(), instances.end()), instances.end());
    linearize(s, kind, instances, [&](int32_t i, const LinearizedInstance& lin) {
      if (s.costs[kind].factor[i] < 0) return;
      check_finite(s, s.costs[kind], i, lin);
      s.factor.replace_factor(s.costs[kind].factor[i], lin.H, lin.g);
    });
  }
}

// Fluid relinearization: the free variables with ‖δ‖∞ >= threshold (all when `every`) take
// θ ← θ ⊕ δ, and their costs are linearized again. Returns how many moved.
int64_t relinearize(IncrementalState& s, bool every) {
  std::vector<std::pair<uint32_t, int32_t>> moved;
  std::vector<double> out;
  for (int32_t c = 0; c < s.factor.num_variables(); ++c) {
    const auto delta = s.factor.delta(c);
    double size = 0;
    for (double d : delta) size = std::max(size, std::abs(d));
    if (!every && !(size >= s.options.relinearize_threshold)) continue;
    const auto [t, row] = s.column_var[c];
    TypeState& type = s.types[t];
    out.resize(type.type->ambient);
    retract_row(s, t, row, delta, out.data());
    std::copy(out.begin(), out.end(), type.theta.begin() + int64_t{row} * type.type->ambient);
    s.theta_values.set_params(type.type, type.ids[row], out.data());
    s.factor.clear_delta(c);
    moved.emplace_back(t, row);
  }
  relinearize_costs(s, moved);
  return static_cast<int64_t>(moved.size());
}

void add_variables(IncrementalState& s, const std::map<VariableKey, NewVariable>& fresh) {
  for (const auto& [key, v] : fresh) {
    const uint32_t t = s.type_for(v.type);
    TypeState& type = s.types[t];
    const auto row = static_cast<int32_t>(type.ids.size());
    type.ids.push_back(v.id);
    type.row_of.emplace(v.id, row);
    type.theta.insert(type.theta.end(), v.params, v.params + v.type->ambient);
    type.costs.emplace_back();
    int32_t column = -1;
    if (!v.constant) {
      column = s.factor.add_variable(v.type->tangent);
      s.column_var.emplace_back(t, row);
    }
    type.column.push_back(column);
    s.estimate.set_params(v.type, v.id, v.params);
    s.theta_values.set_params(v.type, v.id, v.params);
  }
}

// Appends the groups' instances to their cost types, linearizes them and adds their factors.
int64_t add_costs(IncrementalState& s, const Problem::Parts& costs, const std::vector<uint32_t>& kinds) {
  s.last_added.clear();
  int64_t added = 0;
  for (size_t k = 0; k < costs.groups.size(); ++k) {
    const CostGroup& g = *costs.groups[k];
    CostType& kind = s.costs[kinds[k]];
    const auto first = static_cast<int32_t>(kind.live.size());
    for (size_t i = 0; i < g.instances; ++i) {
      const CostHandle handle{kinds[k], static_cast<uint32_t>(first + i)};
      for (size_t slot = 0; slot < g.var_types.size(); ++slot) {
        const int32_t row = find_row(s, g.var_types[slot]->name, g.ids[slot][i]);
        kind.rows[slot].push_back(row);
        auto& on = s.types[kind.slot_type[slot]].costs[row];
        if (on.empty() || on.back() != handle) on.push_back(handle);
      }
      kind.data.insert(kind.data.end(), g.data.begin() + int64_t(i) * g.data_stride,
                       g.data.begin() + int64_t(i + 1) * g.data_stride);
      kind.losses.push_back(g.losses.empty() ? TrivialLoss() : g.losses[i]);
      kind.factor.push_back(-1);
      kind.live.push_back(1);
      s.last_added.push_back(handle);
    }
    std::vector<int32_t> instances(g.instances);
    for (size_t i = 0; i < g.instances; ++i) instances[i] = first + static_cast<int32_t>(i);
    linearize(s, kinds[k], instances, [&](int32_t i, const LinearizedInstance& lin) {
      if (lin.columns.empty()) return;
      check_finite(s, kind, i, lin);
      kind.factor[i] = s.factor.add_factor(lin.columns, lin.H, lin.g, true);
    });
    added += static_cast<int64_t>(g.instances);
  }
  s.live_costs += added;
  return added;
}

void remove_costs(IncrementalState& s, std::span<const CostHandle> removed) {
  for (const CostHandle& h : removed) {
    CostType& kind = s.costs[h.kind];
    if (kind.factor[h.instance] >= 0) s.factor.remove_factor(kind.factor[h.instance]);
    kind.factor[h.instance] = -1;
    kind.live[h.instance] = 0;
    for (size_t slot = 0; slot < kind.rows.size(); ++slot) std::erase(s.types[kind.slot_type[slot]].costs[kind.rows[slot][h.instance]], h);
  }
  s.live_costs -= static_cast<int64_t>(removed.size());
}

// Re-eliminates the marked paths; if the result is not positive definite, relinearizes
// everything at the estimate and eliminates everything once more.
void refactor(IncrementalState& s, UpdateSummary& summary) {
  if (s.factor.refactor()) return;
  const std::string first = s.factor.last_error();
  summary.full_refactor = true;
  summary.variables_relinearized += relinearize(s, true);
  s.factor.mark_all();
  if (!s.factor.refactor())
    throw Error(kWhere + first + "; relinearizing every variable at the estimate did not help (" +
                s.factor.last_error() + "). The update's costs and variables were added; the estimate is unchanged");
}

// δ for the changed part, and the estimate θ ⊕ δ of the variables whose δ was rewritten.
void back_substitute(IncrementalState& s) {
  const std::vector<int32_t>& changed = s.factor.back_substitute(s.options.wildfire_threshold);
  std::vector<double> out;
  for (int32_t c : changed) {
    const auto [t, row] = s.column_var[c];
    const TypeState& type = s.types[t];
    out.resize(type.type->ambient);
    retract_row(s, t, row, s.factor.delta(c), out.data());
    s.estimate.set_params(type.type, type.ids[row], out.data());
  }
}

}  // namespace
}  // namespace detail

IncrementalSolver::IncrementalSolver(IncrementalOptions options) : state_(std::make_unique<detail::IncrementalState>()) {
  if (options.relinearize_skip < 1)
    throw Error("lsjit::IncrementalSolver: relinearize_skip = " + std::to_string(options.relinearize_skip) +
                ": expected 1 or more");
  if (!(options.relinearize_threshold >= 0) || !(options.wildfire_threshold >= 0))
    throw Error("lsjit::IncrementalSolver: relinearize_threshold and wildfire_threshold must be >= 0");
  state_->options = std::move(options);
}
IncrementalSolver::~IncrementalSolver() = default;
IncrementalSolver::IncrementalSolver(IncrementalSolver&&) noexcept = default;
IncrementalSolver& IncrementalSolver::operator=(IncrementalSolver&&) noexcept = default;

UpdateSummary IncrementalSolver::update(Problem&& new_costs, const Values& new_values,
                                        std::span<const CostHandle> removed) {
  using namespace detail;
  IncrementalState& s = *state_;
  UpdateSummary summary;
  const auto start = Clock::now();
  const Problem::Parts costs = new_costs.parts();
  std::map<VariableKey, NewVariable> fresh = check_new_values(s, new_values);
  check_cost_variables(s, costs, fresh);
  check_removed(s, costs, removed);
  const std::vector<uint32_t> kinds = find_cost_types(s, costs.groups, summary);
  check_linearizable(s, costs, kinds, fresh);

  if (++s.updates % s.options.relinearize_skip == 0) summary.variables_relinearized = relinearize(s, false);
  add_variables(s, fresh);
  summary.variables_added = static_cast<int64_t>(fresh.size());
  summary.costs_added = add_costs(s, costs, kinds);
  remove_costs(s, removed);
  summary.costs_removed = static_cast<int64_t>(removed.size());
  summary.linearize_s = seconds_since(start);

  const auto factor_start = Clock::now();
  refactor(s, summary);
  summary.factor_s = seconds_since(factor_start);
  const auto solve_start = Clock::now();
  back_substitute(s);
  summary.solve_s = seconds_since(solve_start);

  const auto& stats = s.factor.stats();
  summary.variables_reeliminated = stats.variables_reeliminated;
  summary.cliques_refactored = stats.cliques_refactored;
  summary.front_entries = stats.front_entries;
  summary.cliques_backsubstituted = stats.cliques_backsubstituted;
  summary.variables_changed = stats.variables_changed;
  summary.total_s = seconds_since(start);
  return summary;
}

const std::vector<CostHandle>& IncrementalSolver::last_added() const { return state_->last_added; }
const Values& IncrementalSolver::estimate() const { return state_->estimate; }
const Values& IncrementalSolver::linearization_point() const { return state_->theta_values; }
double IncrementalSolver::cost() const { return detail::total_cost(*state_, state_->estimate); }
double IncrementalSolver::cost(const Values& values) const { return detail::total_cost(*state_, values); }
int64_t IncrementalSolver::num_variables() const {
  int64_t n = 0;
  for (const auto& t : state_->types) n += static_cast<int64_t>(t.ids.size());
  return n;
}
int64_t IncrementalSolver::num_costs() const { return state_->live_costs; }
int64_t IncrementalSolver::traces() const { return state_->traces; }
int64_t IncrementalSolver::compiles() const { return state_->compiles; }

}  // namespace lsjit
