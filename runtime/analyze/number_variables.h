// Pass 3 of analyze(): the variables. Per type, the sorted IDs the costs reference; the
// type to eliminate by the Schur complement (AnalyzeOptions::schur_elimination); the types
// in name order with the eliminated one last; and the free variables (those not held
// constant) numbered in that order, each with its offset in the tangent vector.
//
// Why name order: the free variables' order, and with it the linear system and every
// iterate, must not depend on the order of add() calls.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/analyze/trace_groups.h"

namespace lsjit::detail {

// Fills layout.types (ids and free_index), each group's slot_type, layout.free,
// tangent_dim, eliminated_type, first_eliminated, constant_variables and the unused
// constants. layout.groups must hold one KernelGroup per traced group, in order.
// `constant` holds (type name, ID) pairs. Throws lsjit::Error for a schur_elimination
// request that names no type or a type no Schur complement can eliminate.
void number_variables(const std::vector<TracedGroup>& groups,
                      const std::set<std::pair<std::string, int64_t>>& constant,
                      const std::string& schur_elimination, ProblemLayout& layout);

}  // namespace lsjit::detail
