// Variable types by name, for callers that know them only at run time (the Python
// bindings, python/; Problem::add_runtime). C++ code names its types statically
// (SE3Var, Kind<...>) and does not need this.
#pragma once

#include <string_view>

#include "lsjit/runtime/values.h"

namespace lsjit {

// The descriptor of a built-in type: "Scalar", "SO2", "SE2", "SO3", "SE3", "Vec1" ... "Vec32";
// nullptr for any other name. The same pointer as variable_type<Var>() for that Var.
const VariableType* builtin_variable_type(std::string_view name);

// The descriptor of the kind `name` with the layout of the built-in `base`: what
// Kind<Base, "name"> is to C++ (variables.h), made on first request and kept for the
// process. Throws lsjit::Error when `name` is not an identifier of at most 63 characters,
// is a built-in type's name, or was made before with another base. Thread safe.
const VariableType* kind_variable_type(std::string_view name, const VariableType& base);

}  // namespace lsjit
