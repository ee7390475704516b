// The state of an IncrementalSolver (internal to runtime/incremental/): variables by type
// with their linearization points, cost types with their kernels and instances, and the
// incremental factor. incremental_solver.cpp runs the updates over it; kernel_registry.cpp
// finds a new update's cost types; linearize.cpp evaluates instances into linear factors.
//
// Layout. Type t's variables are rows of TypeState::theta (ambient doubles each) in the order
// they were added, never moved, so a kernel reads them in place: CostType::rows[slot][i] is
// the row instance i reads. A free variable is also a column of the factor (its `column`),
// with its δ there; a constant one has column -1.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/incremental_solver.h"
#include "lsjit/runtime/loss.h"
#include "lsjit/runtime/solve/linear/incremental_factor.h"
#include "lsjit/runtime/values.h"

namespace lsjit::detail {

struct TypeState {
  const VariableType* type = nullptr;
  std::vector<double> theta;                // rows of ambient doubles
  std::vector<int64_t> ids;                 // per row
  std::unordered_map<int64_t, int32_t> row_of;
  std::vector<int32_t> column;              // per row: factor column, or -1 if constant
  std::vector<std::vector<CostHandle>> costs;  // per row: the live instances on it
};

// One traced cost type: its kernels and instances (instances are never moved; a removed one
// stays as dead).
struct CostType {
  std::string name;
  std::shared_ptr<const compiler::Kernel> residual, normal;
  std::vector<uint32_t> slot_type;  // per slot: index into IncrementalState::types
  uint32_t data_stride = 0;
  std::vector<std::vector<int32_t>> rows;  // [slot][instance]
  std::vector<double> data;                // [instance * data_stride + ...]
  std::vector<Loss> losses;                // per instance (TrivialLoss where none)
  std::vector<int64_t> factor;             // per instance: factor handle, -1 if all constant
  std::vector<uint8_t> live;               // per instance
};

struct IncrementalState {
  IncrementalOptions options;
  std::vector<TypeState> types;
  std::map<std::string, uint32_t, std::less<>> type_index;  // by type name
  std::vector<CostType> costs;
  std::map<std::string, uint32_t> cost_by_identity;  // Problem::add's identity (never "")
  std::map<std::string, uint32_t> cost_by_hash;      // structural hash + signature
  linear::IncrementalFactor factor;
  std::vector<std::pair<uint32_t, int32_t>> column_var;  // per factor column: (type, row)
  Values estimate, theta_values;
  std::vector<CostHandle> last_added;
  int64_t updates = 0, live_costs = 0, traces = 0, compiles = 0;

  uint32_t type_for(const VariableType* type);  // its TypeState, made on first use
};

}  // namespace lsjit::detail
