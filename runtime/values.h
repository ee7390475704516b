// Values: the variables' values, typed storage keyed by (variable type, ID).
//
//   lsjit::Values v;
//   v.set(lsjit::SE3Var(7), lsjit::SE3d::identity());
//   lsjit::SE3d x = v.get(lsjit::SE3Var(7));   // throws lsjit::Error if absent
//
// Values are a runtime input: the solver copies them into its own arrays, never into a
// kernel. Internally each variable type has one block of parameter rows (`ambient`
// doubles each, in the layout of docs/variables.md), so a variable is a row of its type.
// IDs are any int64 and need not be contiguous or sorted; the same ID under two types is
// two variables.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/runtime/variables.h"

namespace lsjit {

// What the solver needs to know of a variable type at run time.
struct VariableType {
  std::string name;    // Var::kName: "SE3", "Vec3", or a Kind's own name ("landmark")
  std::string layout;  // the built-in type whose layout it has: name, or a Kind's base's name
  int ambient = 0;
  int tangent = 0;
  void (*retract)(const double* x, const double* delta, double* out) = nullptr;
  // `retract` for `count` variables stored one after another: x, out advance by ambient
  // and delta by tangent. The same arithmetic, one call instead of one per variable (an
  // indirect call each: Levenberg-Marquardt retracts all 7,825 of Ladybug-49's per step).
  void (*retract_run)(const double* x, const double* delta, double* out, int64_t count) = nullptr;
};

namespace detail {
template <class Var>
void retract_run(const double* x, const double* delta, double* out, int64_t count) {
  for (int64_t k = 0; k < count; ++k)
    Var::retract_params(x + k * Var::kAmbient, delta + k * Var::kTangent, out + k * Var::kAmbient);
}

template <class Var>
constexpr std::string_view layout_name() {
  if constexpr (requires { Var::kLayoutName; }) return Var::kLayoutName;
  else return Var::kName;
}
}  // namespace detail

// The descriptor of Var, one per type for the whole process.
template <class Var>
const VariableType* variable_type() {
  static const VariableType type{std::string(Var::kName), std::string(detail::layout_name<Var>()),
                                 Var::kAmbient, Var::kTangent, &Var::retract_params,
                                 &detail::retract_run<Var>};
  return &type;
}

class Values {
 public:
  template <class Var>
    requires is_variable_v<Var>
  void set(const Var& var, const typename Var::template Value<double>& value) {
    const auto p = Var::params(value);
    check_value(*variable_type<Var>(), var.id, p.data());
    set_params(variable_type<Var>(), var.id, p.data());
  }

  template <class Var>
    requires is_variable_v<Var>
  typename Var::template Value<double> get(const Var& var) const {
    const double* p = params(Var::kName, var.id);
    if (!p)
      throw Error("lsjit::Values: no value for " + std::string(Var::kName) + " variable " +
                  std::to_string(var.id));
    return Var::template from_params<double>(
        Eigen::Map<const Eigen::Matrix<double, Var::kAmbient, 1>>(p));
  }

  template <class Var>
    requires is_variable_v<Var>
  bool has(const Var& var) const {
    return params(Var::kName, var.id) != nullptr;
  }

  size_t size() const;  // number of variables
  bool empty() const { return size() == 0; }

  // Type-erased access, for the solver and for file readers. params() points at the
  // variable's `ambient` doubles (valid until the next set of a new variable), or is
  // nullptr when absent. set_params copies type->ambient doubles; a variable keeps the
  // type it was first set with.
  const double* params(std::string_view type, int64_t id) const;
  void set_params(const VariableType* type, int64_t id, const double* params);

  // A type's variables in bulk, for the solver's copies in and out: the IDs in the order
  // first set and their rows, ambient doubles each, in the same order (both empty when the
  // type has none). Valid until the next set of a new variable.
  struct TypeRows {
    std::span<const int64_t> ids;
    std::span<const double> params;
    const VariableType* type = nullptr;  // the type the rows were set with; nullptr when none
  };
  TypeRows rows_of(std::string_view type) const;
  // set_params for each ids[k] with the row params + k * ambient, the type looked up once
  // (and one copy when the type's IDs are exactly `ids`, in order).
  void set_params_rows(const VariableType* type, std::span<const int64_t> ids, const double* params);

  // What set() refuses, as lsjit::Error naming the variable ("SE3 variable 7"): an SO3
  // or SE3 value whose quaternion is zero or not finite, which no rotation has (a solver
  // would divide by its norm). Other values are not checked.
  static void check_value(const VariableType& type, int64_t id, const double* params);

  // Every variable, by type name then in the order first set.
  void for_each(const std::function<void(const VariableType&, int64_t id, const double* params)>& f) const;

 private:
  // One type's rows, and an index from ID to row: open addressing in one array (row + 1
  // per slot, 0 empty, at most half full), so that copying Values (a solve copies its
  // initial values into its result) is three array copies, not a node allocation per
  // variable as with std::unordered_map.
  struct Block {
    const VariableType* type = nullptr;
    std::vector<uint32_t> slots;  // a power of two in size, or empty
    std::vector<int64_t> ids;
    std::vector<double> params;
    // The row of `id`, or -1.
    int64_t find(int64_t id) const;
    // The row of `id`, appended (params zeroed) if absent.
    size_t insert(int64_t id);
    void place(size_t row);  // ids[row] into the first free slot of its probe sequence
  };
  // `type`'s block, made on first use; it keeps the type it was first made with.
  Block& block_for(const VariableType* type);
  std::map<std::string, Block, std::less<>> blocks_;
};

}  // namespace lsjit
