// Two variable types under one name. Types are told apart by name (kernel keys, Values'
// blocks, the solver's rows), so two with different shapes under one name would share one
// ID space and one block of parameter rows. Values, analyze() and solve() each refuse that
// where they first meet the two types, with this one message.
#pragma once

#include <string>

#include "lsjit/runtime/values.h"

namespace lsjit::detail {

// "" when `first` and `other` (same name) have the same parameter and tangent sizes;
// else "two variable types are named 'N', one with A parameters and tangent T, one with
// ...: expected one name per type (give each a name of its own, see lsjit::Kind)", for
// the caller to prefix with where it met them.
std::string type_name_clash(const VariableType& first, const VariableType& other);

}  // namespace lsjit::detail
