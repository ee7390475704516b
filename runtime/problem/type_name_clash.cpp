#include "lsjit/runtime/problem/type_name_clash.h"

namespace lsjit::detail {

std::string type_name_clash(const VariableType& first, const VariableType& other) {
  if (first.ambient == other.ambient && first.tangent == other.tangent) return "";
  return "two variable types are named '" + first.name + "', one with " + std::to_string(first.ambient) +
         " parameters and tangent " + std::to_string(first.tangent) + ", one with " + std::to_string(other.ambient) +
         " and " + std::to_string(other.tangent) + ": expected one name per type (give each a name of its own, see " +
         "lsjit::Kind)";
}

}  // namespace lsjit::detail
