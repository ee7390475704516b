// Costs and how they are traced.
//
//   auto between = lsjit::cost("se2_between",
//       [](const auto& v, lsjit::SE2Var a, lsjit::SE2Var b, const auto& z, const auto& U) {
//         return U * ...;   // an Eigen vector of Sym, a std::array<Sym, N> or a Sym
//       });
//   ir::Trace t = lsjit::trace(between, lsjit::SE2Var(0), lsjit::SE2Var(1), z, U);
//
// trace() takes the same arguments as Problem::add: variable handles and data values. Only
// their types matter (IDs and numbers are runtime inputs); they fix the signature. The
// cost is called once with a TracedValues `v` whose v[var] is var's value retracted by a
// traced tangent perturbation, x ⊞ δ, and with data arguments of the traced types of
// DataTraits. Variable handles are passed with their slot index as ID.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "lsjit/ir/graph.h"
#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/data_traits.h"
#include "lsjit/runtime/variables.h"

namespace lsjit {

using CostKind = ir::CostKind;

namespace detail {
// A number no other lsjit::cost() call in this process returns (never 0).
uint64_t next_cost_identity();
}  // namespace detail

template <class F>
struct Cost {
  std::string name;
  F function;
  CostKind kind = CostKind::LeastSquares;
  std::vector<std::string> var_names;   // optional names for the IR text; default x0, x1, ...
  std::vector<std::string> data_names;  // default d0, d1, ...
  // Which lsjit::cost() call made this object (copies keep it; 0 for a Cost built by hand).
  // Problem::add groups the instances of one object without comparing what its closure
  // captured, so a closure that captures a std::vector still makes one group (problem.h).
  uint64_t identity = 0;

  // The same cost with its arguments named, in order: variable slots, then data slots, as
  // the built-ins are (`.named({"camera", "point"}, {"obs"})`). The names show in the IR
  // text (`lsjit trace`, LSJIT_DUMP_DIR), in the gradient checker's report and in trace
  // errors; they are not part of the structural hash, so renaming never recompiles. Slots
  // past the names keep the defaults. Tracing throws lsjit::Error, naming the cost, for
  // more names than slots, a name that is not an identifier ([A-Za-z_][A-Za-z0-9_]*) or
  // two slots of a kind with one name.
  Cost named(std::vector<std::string> vars, std::vector<std::string> data = {}) const {
    Cost c = *this;
    c.var_names = std::move(vars);
    c.data_names = std::move(data);
    return c;
  }
};

template <class F>
Cost<std::decay_t<F>> cost(std::string name, F&& function, CostKind kind = CostKind::LeastSquares) {
  return {std::move(name), std::forward<F>(function), kind, {}, {}, detail::next_cost_identity()};
}

namespace detail {
// The argument slot `id` of the cost being traced by `tracer`, checked to exist and to hold
// a variable whose slot type is `type`: what v[var] does first, inside every cost trace.
inline uint32_t checked_slot(const Tracer& tracer, int64_t id, std::string_view type) {
  const auto& slots = tracer.signature().vars;
  if (id < 0 || static_cast<size_t>(id) >= slots.size())
    throw Error("lsjit: v[var] inside cost '" + tracer.signature().name +
                "' with a variable that is not one of the cost's arguments");
  const uint32_t slot = static_cast<uint32_t>(id);
  if (slots[slot].type != type)
    throw Error("lsjit: v[var] inside cost '" + tracer.signature().name + "': argument " +
                std::to_string(slot) + " is a " + slots[slot].type + ", not a " + std::string(type));
  return slot;
}
}  // namespace detail

// What `v` is inside a traced cost.
class TracedValues {
 public:
  explicit TracedValues(const Tracer& tracer) : tracer_(tracer) {}

  template <class Var>
    requires is_variable_v<Var>
  typename Var::template Value<Sym> operator[](const Var& var) const {
    const uint32_t slot = detail::checked_slot(tracer_, var.id, Var::kName);
    Eigen::Matrix<Sym, Var::kAmbient, 1> params;
    for (int i = 0; i < Var::kAmbient; ++i) params(i) = tracer_.var(slot, i);
    Eigen::Matrix<Sym, Var::kTangent, 1> delta;
    for (int i = 0; i < Var::kTangent; ++i) delta(i) = tracer_.tangent(slot, i);
    return Var::retract(Var::template from_params<Sym>(params), delta);
  }

 private:
  const Tracer& tracer_;
};

namespace detail {

inline void append_residual(std::vector<Sym>& out, const Sym& s) { out.push_back(s); }
template <size_t N>
void append_residual(std::vector<Sym>& out, const std::array<Sym, N>& a) {
  out.insert(out.end(), a.begin(), a.end());
}
template <class Derived>
void append_residual(std::vector<Sym>& out, const Eigen::MatrixBase<Derived>& m) {
  static_assert(std::is_same_v<typename Derived::Scalar, Sym>,
                "lsjit: a cost must return Syms computed from its arguments");
  const auto e = m.eval();
  for (Eigen::Index i = 0; i < e.size(); ++i) out.push_back(e.data()[i]);
}

// Throws lsjit::Error when Cost::named gave more names than the cost has slots.
inline void check_names_fit(const ir::Signature& sig, const std::vector<std::string>& var_names,
                            const std::vector<std::string>& data_names) {
  auto check = [&](const std::vector<std::string>& names, size_t slots, const char* kind) {
    if (names.size() <= slots) return;
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error("lsjit: cost '" + sig.name + "' names " + std::to_string(names.size()) + " " + kind +
                " arguments (" + list + ") but takes " + std::to_string(slots) +
                ": expected at most one name per " + kind + " argument, in order");
  };
  check(var_names, sig.vars.size(), "variable");
  check(data_names, sig.data.size(), "data");
}

template <class Arg>
void declare(ir::Signature& sig, const std::vector<std::string>& var_names,
             const std::vector<std::string>& data_names) {
  using T = data_type_t<Arg>;
  if constexpr (is_variable_v<T>) {
    const size_t i = sig.vars.size();
    sig.vars.push_back({i < var_names.size() ? var_names[i] : "x" + std::to_string(i),
                        std::string(T::kName), T::kAmbient, T::kTangent});
  } else {
    const size_t i = sig.data.size();
    sig.data.push_back({i < data_names.size() ? data_names[i] : "d" + std::to_string(i),
                        DataTraits<T>::type_name(), DataTraits<T>::kRows,
                        DataTraits<T>::kCols});
  }
}

// The argument the cost sees while tracing: the variable handle with its slot as ID, or
// the traced data value.
template <class Arg>
auto traced_argument(const Tracer& tracer, uint32_t& var_slot, uint32_t& data_slot) {
  using T = data_type_t<Arg>;
  if constexpr (is_variable_v<T>) {
    return T(static_cast<int64_t>(var_slot++));
  } else {
    const uint32_t slot = data_slot++;
    std::vector<Sym> in;
    for (uint32_t c = 0; c < tracer.signature().data[slot].size(); ++c)
      in.push_back(tracer.data(slot, c));
    return DataTraits<T>::traced(in.data());
  }
}

}  // namespace detail

template <class F, class... Args>
ir::Signature signature_of(const Cost<F>& cost) {
  ir::Signature sig;
  sig.name = cost.name;
  sig.kind = cost.kind;
  (detail::declare<Args>(sig, cost.var_names, cost.data_names), ...);
  detail::check_names_fit(sig, cost.var_names, cost.data_names);
  return sig;
}

template <class F, class... Args>
ir::Trace trace(const Cost<F>& cost, const Args&...) {
  Tracer tracer(signature_of<F, Args...>(cost));
  uint32_t var_slot = 0, data_slot = 0;
  // Braced initialization evaluates the arguments left to right.
  std::tuple<decltype(detail::traced_argument<Args>(tracer, var_slot, data_slot))...> args{
      detail::traced_argument<Args>(tracer, var_slot, data_slot)...};
  TracedValues values(tracer);
  auto result = std::apply([&](auto&... a) { return cost.function(values, a...); }, args);
  std::vector<Sym> residual;
  detail::append_residual(residual, result);
  tracer.set_residual(residual);
  return tracer.finish();
}

}  // namespace lsjit
