// Problem: the cost instances of a least-squares problem, recorded as runtime data.
//
//   lsjit::Problem problem;
//   problem.add(between, lsjit::SE3Var(i), lsjit::SE3Var(j), z, U);          // one instance
//   problem.add(between, lsjit::SE3Var::batch(is), lsjit::SE3Var::batch(js),  // many at once
//               zs, Us);
//   problem.set_constant(lsjit::SE3Var(0));
//   lsjit::AnalyzedProblem analyzed = problem.analyze();
//
// add() takes, per argument of the cost after `v`: a variable handle (Var), a batch of
// handles (Var::batch(ids)), a data value (double, fixed-size Eigen matrix, std::array,
// Lie group of double) or a std::vector of data values. In a batched add every batch
// must have the same length n and the call adds n instances; single handles and single
// data values are shared by all n. add() records IDs and data only: nothing is traced or
// compiled until analyze().
//
// Grouping. Instances of one cost object share one kernel group. add() recognises "the
// same cost" without tracing: same closure type, name, kind and argument types, and
// either the same object (Cost::identity: the same lsjit::cost() call, or a copy of its
// result) or, for a trivially copyable closure (e.g. one capturing doubles), the same
// captured bytes. A closure that is not trivially copyable (one capturing a std::vector)
// made by another lsjit::cost() call cannot be compared before tracing, so it starts a
// group of its own; analyze() traces each group once and merges groups whose traces are
// identical, so the result is the same, only the tracing is repeated, and
// SolveSummary::warnings says so once per cost name with the fix (make the cost once, or
// pass the values as data). Two groups of one cost name whose captured values differ
// trace to different graphs: analyze() compiles each, and the kernel cache counts and
// explains the recompile (pass varying values as data instead).
//
// This header declares analyze() but does not define AnalyzedProblem: a translation unit
// that only writes costs and adds them (<lsjit/costs.h>) does not pay for the solver's
// headers. Call analyze() where analyzed_problem.h (or <lsjit/lsjit.h>) is included.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/compiler/compile_options.h"
#include "lsjit/runtime/cost.h"
#include "lsjit/runtime/data_traits.h"
#include "lsjit/runtime/evaluate/huge_page_allocator.h"
#include "lsjit/runtime/loss.h"
#include "lsjit/runtime/values.h"
#include "lsjit/runtime/variables.h"

namespace lsjit {

namespace compiler {
class KernelCache;
}
class AnalyzedProblem;

struct AnalyzeOptions {
  compiler::CompileOptions compile;
  // The kernel cache to use; nullptr: compiler::default_cache() (configured from the
  // environment, disk cache included). The AnalyzedProblem keeps using it for the kernels
  // it makes at first use (AnalyzedProblem::evaluate_instances' Jacobians), so a cache of
  // your own must outlive the AnalyzedProblem and its copies.
  compiler::KernelCache* cache = nullptr;
  // Which variable type the Schur solvers (LinearSolver::DenseSchur, SparseSchur,
  // IterativeSchur) eliminate: "auto" picks, as jaxls' schur_elimination="auto" does, the
  // eliminable type with the most free variables; a type name ("Vec3", "SE3", or a Kind's
  // such as "landmark") names one; "none" eliminates nothing (the Schur solvers then fail).
  // A type is eliminable
  // when no cost has two variable slots of it, so that no block of H couples two of its
  // variables (BAL's points). The choice orders the linear system (eliminated variables
  // last); it never changes a kernel.
  std::string schur_elimination = "auto";
};

namespace detail {

// The instances recorded under one cost object.
struct CostGroup {
  std::string name;
  std::string identity;                        // see Problem::add; "" never merges
  std::function<ir::Trace()> trace;            // traces the cost (stage Traced)
  std::vector<const VariableType*> var_types;  // per variable slot
  // Huge-page backed when large: at 10^6 instances these are tens of megabytes written
  // once into fresh memory, where 4 KiB pages make every first touch a page fault.
  std::vector<BigVector<int64_t>> ids;         // [slot][instance]
  uint32_t data_stride = 0;                    // doubles per instance, data slots in order
  BigVector<double> data;                      // [instance * data_stride + offset + c]
  std::vector<Loss> losses;                    // per instance, or empty: no robust loss
  size_t instances = 0;
};

template <class T>
struct is_var_batch : std::false_type {};
template <class Var>
struct is_var_batch<VarBatch<Var>> : std::true_type {
  using var = Var;
};

template <class T>
struct is_data_batch : std::false_type {};
template <class T, class A>
struct is_data_batch<std::vector<T, A>> : std::true_type {
  using element = data_type_t<T>;
};

// The type one instance of an argument has: Var for a batch of Vars, T for a vector of T.
template <class Arg>
struct instance_type {
  using type = data_type_t<Arg>;
};
template <class Var>
struct instance_type<VarBatch<Var>> {
  using type = Var;
};
template <class T, class A>
struct instance_type<std::vector<T, A>> {
  using type = data_type_t<T>;
};
template <class Arg>
using instance_type_t = typename instance_type<std::remove_cvref_t<Arg>>::type;

template <class Arg>
size_t batch_length(const Arg& arg) {
  using A = std::remove_cvref_t<Arg>;
  if constexpr (is_var_batch<A>::value) return arg.ids.size();
  else if constexpr (is_data_batch<A>::value) return arg.size();
  else return 0;  // not a batch
}

template <class Arg>
void record_var(CostGroup& g, uint32_t& slot, const Arg& arg, size_t n) {
  using A = std::remove_cvref_t<Arg>;
  using T = instance_type_t<A>;
  if constexpr (is_variable_v<T>) {
    if (g.var_types.size() <= slot) g.var_types.push_back(variable_type<T>());
    if (g.ids.size() <= slot) g.ids.emplace_back();
    BigVector<int64_t>& ids = g.ids[slot++];
    if constexpr (is_var_batch<A>::value) ids.insert(ids.end(), arg.ids.begin(), arg.ids.end());
    else ids.insert(ids.end(), n, arg.id);
  }
}

template <class Arg>
void record_data(double* row_start, uint32_t& offset, const Arg& arg, size_t k) {
  using A = std::remove_cvref_t<Arg>;
  using T = instance_type_t<A>;
  if constexpr (!is_variable_v<T>) {
    using Traits = DataTraits<T>;
    if constexpr (is_data_batch<A>::value) Traits::flatten(T(arg[k]), row_start + offset);
    else Traits::flatten(T(arg), row_start + offset);
    offset += Traits::kRows * Traits::kCols;
  }
}

template <class Arg>
constexpr uint32_t data_size() {
  using T = instance_type_t<Arg>;
  if constexpr (is_variable_v<T>) return 0;
  else return DataTraits<T>::kRows * DataTraits<T>::kCols;
}

}  // namespace detail

// A cost known only at run time (Problem::add_runtime): what Problem::add derives from a
// Cost<F> and its argument types, given as values. `trace` records the cost's graph (it
// is called by analyze(), possibly on another thread than add_runtime's, and never after
// the Problem is destroyed); var_types point at process-lifetime descriptors.
struct RuntimeCost {
  std::string name;
  std::string identity;  // "" never merges
  CostKind kind = CostKind::LeastSquares;
  std::function<ir::Trace()> trace;
  std::vector<const VariableType*> var_types;
  uint32_t data_stride = 0;
};

// One data argument of Problem::add_runtime: `values` holds n instances' values one after
// another (or one instance's, shared by all n), each `rows` x `cols`, column-major as
// DataTraits flattens it unless row_major (numpy's order; add_runtime transposes).
struct RuntimeDataSlot {
  std::span<const double> values;
  uint32_t rows = 1, cols = 1;
  bool row_major = false;
};

class Problem {
 public:
  Problem();
  ~Problem();
  // A moved-from Problem is empty (no groups, no instances, no constants) and usable.
  Problem(Problem&&) noexcept;
  Problem& operator=(Problem&&) noexcept;
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  // Adds one instance, or n with batches (see above). Throws lsjit::Error when batch
  // lengths differ or a batch is empty; nothing is added then.
  template <class F, class... Args>
  void add(const Cost<F>& cost, const Args&... args) {
    add_with_loss(cost, nullptr, args...);
  }
  // The same, each instance robustified by `loss` (loss.h; least-squares costs only).
  template <class F, class... Args>
  void add(const Cost<F>& cost, const Loss& loss, const Args&... args) {
    if (cost.kind != CostKind::LeastSquares)
      throw Error("lsjit::Problem::add(" + cost.name + "): a robust loss applies to least-squares costs, "
                  "not constraints");
    add_with_loss(cost, &loss, args...);
  }

  // Holds a variable at its initial value. Which variables are constant is a runtime
  // input: it changes the linear system, never a kernel.
  template <class Var>
    requires is_variable_v<Var>
  void set_constant(const Var& var) {
    constant_.emplace(std::string(Var::kName), var.id);
  }
  template <class Var>
    requires is_variable_v<Var>
  void set_variable(const Var& var) {  // undoes set_constant
    constant_.erase({std::string(Var::kName), var.id});
  }

  // Holds the variable of type `type` (any name a Var has: "SE3", "Vec3", a Kind's) with
  // `id` constant: set_constant for callers that know the type only at run time.
  void set_constant(std::string_view type, int64_t id) { constant_.emplace(std::string(type), id); }

  // The type-erased add(), for callers whose costs are known only at run time (the Python
  // bindings, python/). `ids[slot]` holds n IDs (or one, shared by all n) per variable slot
  // of cost.var_types; `data[k]` is the k-th data argument (RuntimeDataSlot), their sizes
  // adding up to cost.data_stride; `loss` is nullptr or applies to all n instances. The
  // values are copied once, straight into the group. Instances of equal non-empty
  // cost.identity share a group, as Problem::add's do: the identity must therefore fix the
  // name, kind, variable types and data layout. Throws lsjit::Error, adding nothing, when
  // n is 0, the slot counts differ from var_types, a slot holds neither n nor 1 IDs or
  // instances, or the data slots' sizes do not add up to data_stride.
  void add_runtime(const RuntimeCost& cost, const std::vector<std::span<const int64_t>>& ids,
                   const std::vector<RuntimeDataSlot>& data, size_t n, const Loss* loss = nullptr);

  size_t num_instances() const { return instances_; }
  size_t num_groups() const { return groups_.size(); }

  // Traces each cost group once, differentiates, compiles (or finds in the cache) its
  // kernels and lays out the linear system. The Problem stays usable; the result shares
  // nothing mutable with it. Throws lsjit::Error when a cost cannot be traced: it returns
  // no residual (an empty std::array or Eigen vector), takes no variable argument, or
  // reads v[var] for a var that is not one of its arguments (an exception of the cost's
  // own propagates as it is). A problem without costs is not an error: it analyzes to an
  // empty AnalyzedProblem, whose solve() returns its initial values (see solve()).
  AnalyzedProblem analyze(const AnalyzeOptions& options = {}) const;

  // What IncrementalSolver::update reads of a Problem holding one update's costs: the
  // recorded groups and the set_constant() variables (internal; see parts()).
  struct Parts {
    const std::vector<std::unique_ptr<detail::CostGroup>>& groups;
    const std::set<std::pair<std::string, int64_t>>& constant;
  };

 private:
  Parts parts() const { return {groups_, constant_}; }

  // What add() instantiates per cost and argument types is only what depends on them:
  // the batch lengths, the group's identity and trace, and the copying of IDs and data.
  // Checks, lookups and bookkeeping are the out-of-line functions below (problem.cpp), so
  // a translation unit that adds a cost compiles less (docs/benchmarks-history.md).
  template <class F, class... Args>
  void add_with_loss(const Cost<F>& cost, const Loss* loss, const Args&... args) {
    constexpr std::array<bool, sizeof...(Args)> is_batch{
        (detail::is_var_batch<std::remove_cvref_t<Args>>::value ||
         detail::is_data_batch<std::remove_cvref_t<Args>>::value)...};
    const std::array<size_t, sizeof...(Args)> lengths{detail::batch_length(args)...};
    const size_t n = instance_count(cost.name, is_batch.data(), lengths.data(), sizeof...(Args));

    detail::CostGroup& g = group_for(cost, std::type_identity<std::tuple<detail::instance_type_t<Args>...>>{});
    uint32_t slot = 0;
    (detail::record_var(g, slot, args, n), ...);
    constexpr uint32_t stride = (detail::data_size<Args>() + ... + 0u);
    double* rows = append_instances(g, n, stride, loss);
    for (size_t k = 0; k < n; ++k) {
      uint32_t offset = 0;
      (detail::record_data(rows + k * stride, offset, args, k), ...);
    }
  }

  template <class F, class Tuple>
  detail::CostGroup& group_for(const Cost<F>& cost, std::type_identity<Tuple>) {
    std::string identity;
    if (std::is_trivially_copyable_v<F> || cost.identity != 0) {
      identity = std::string(typeid(F).name()) + '\0' + typeid(Tuple).name() + '\0' + cost.name +
                 '\0' + std::to_string(static_cast<int>(cost.kind));
      // An empty closure (no capture) has one byte of no value: reading it made equal
      // costs look different at random.
      if constexpr (std::is_empty_v<F>)
        identity += "\0empty";
      else if constexpr (std::is_trivially_copyable_v<F>)
        identity += '\0' + std::string(reinterpret_cast<const char*>(&cost.function), sizeof(F));
      else
        identity += "\0object " + std::to_string(cost.identity);
      for (const auto& names : {cost.var_names, cost.data_names})
        for (const auto& name : names) identity += '\0' + name;
      if (detail::CostGroup* found = group_with_identity(identity)) return *found;
    }
    return new_group(cost.name, std::move(identity), [cost] {
      // By reference: trace() reads only the types, and a copy of a default-constructed
      // Eigen matrix would read its uninitialized entries (-Wuninitialized).
      return std::apply([&](const auto&... example) { return lsjit::trace(cost, example...); }, Tuple{});
    });
  }

  // The number of instances an add() makes: the common length of its batches, 1 without
  // any. Throws lsjit::Error, naming `cost` and the arguments, for an empty batch or
  // batches of different lengths.
  static size_t instance_count(const std::string& cost, const bool* is_batch, const size_t* lengths,
                               size_t arguments);
  // The group recorded under `identity` (never ""), or nullptr.
  detail::CostGroup* group_with_identity(const std::string& identity);
  // A new group; one with a non-empty identity is found again by group_with_identity.
  detail::CostGroup& new_group(const std::string& name, std::string identity,
                               std::function<ir::Trace()> trace);
  // Appends n instances of `stride` doubles of data (and of `loss`, or the trivial loss
  // where other instances have one) to `g` and counts them; returns the first new data
  // row, for the caller to fill.
  double* append_instances(detail::CostGroup& g, size_t n, uint32_t stride, const Loss* loss);

  std::vector<std::unique_ptr<detail::CostGroup>> groups_;
  std::map<std::string, size_t> by_identity_;
  std::set<std::pair<std::string, int64_t>> constant_;
  size_t instances_ = 0;

  friend class AnalyzedProblem;
  friend class IncrementalSolver;
};

}  // namespace lsjit
