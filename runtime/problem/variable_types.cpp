// Variable types by name (variable_types.h): a table of the built-ins, and the kinds made
// at run time, kept for the process because Values and Problems hold their pointers.
#include "lsjit/runtime/variable_types.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "lsjit/common/error.h"

namespace lsjit {
namespace {

template <int... N>
void add_vec_types(std::map<std::string, const VariableType*, std::less<>>& table,
                   std::integer_sequence<int, N...>) {
  ((table[std::string(VecVar<N + 1>::kName)] = variable_type<VecVar<N + 1>>()), ...);
}

const std::map<std::string, const VariableType*, std::less<>>& builtin_table() {
  static const auto table = [] {
    std::map<std::string, const VariableType*, std::less<>> t;
    t["Scalar"] = variable_type<ScalarVar>();
    t["SO2"] = variable_type<SO2Var>();
    t["SE2"] = variable_type<SE2Var>();
    t["SO3"] = variable_type<SO3Var>();
    t["SE3"] = variable_type<SE3Var>();
    add_vec_types(t, std::make_integer_sequence<int, kMaxVecVarSize>{});
    return t;
  }();
  return table;
}

}  // namespace

const VariableType* builtin_variable_type(std::string_view name) {
  const auto& table = builtin_table();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

const VariableType* kind_variable_type(std::string_view name, const VariableType& base) {
  const std::string quoted = "'" + std::string(name) + "'";
  if (!detail::is_kind_name(name))
    throw Error("lsjit: the kind name " + quoted +
                " is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters)");
  if (builtin_variable_type(name))
    throw Error("lsjit: the kind name " + quoted +
                " is a built-in type's (Scalar, SO2, SE2, SO3, SE3, VecN): choose one of the kind's own");
  if (builtin_variable_type(base.name) != &base)
    throw Error("lsjit: the kind " + quoted + " must have a built-in base type, not '" + base.name + "'");
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<VariableType>, std::less<>> kinds;
  std::lock_guard lock(mutex);
  auto it = kinds.find(name);
  if (it != kinds.end()) {
    if (it->second->layout != base.name)
      throw Error("lsjit: the kind " + quoted + " was made with base " + it->second->layout + ", not " + base.name);
    return it->second.get();
  }
  auto type = std::make_unique<VariableType>(base);
  type->name = std::string(name);
  type->layout = base.name;
  return kinds.emplace(std::string(name), std::move(type)).first->second.get();
}

}  // namespace lsjit
