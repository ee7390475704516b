// The work an IR graph may ask of lsjit, bounded before it is done: an input's size must
// bound the time and memory spent on it, whether it comes from an IR text file (`lsjit
// trace FILE.ir`) or from a user's cost traced through the API.
//
// Each bound is predicted from counts known before the work starts, so a graph above a
// limit is refused with lsjit::Error before anything is allocated for it:
//   - the parser refuses more than kMaxGraphNodes nodes;
//   - differentiate() predicts the node visits of forward accumulation (δ-dependent nodes
//     × tangent components) and of reverse accumulation (δ-dependent nodes × residuals),
//     builds only a mode within kMaxDifferentiationVisits, and refuses when neither is;
//   - normal_equations() refuses more than kMaxNormalEquationsEntries Gauss-Newton entries
//     (about n²/2 for n tangent components) or kMaxNormalEquationsProducts products
//     (entries × residuals);
//   - the compiler refuses a kernel graph of more than kMaxKernelOps nodes and outputs
//     (compiler/kernel.h), which LLVM's time and memory grow faster than.
// The limits are far above every realistic cost (the largest built-in, se3_between, has
// 539 traced nodes, 12 tangent components, 2423 normal-equations ops) and far below what
// exhausts this machine; docs/testing.md ("Limits on work and memory") has the numbers.
#pragma once

#include <cstdint>

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

inline constexpr uint64_t kMaxGraphNodes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxDifferentiationVisits = uint64_t{1} << 24;
inline constexpr uint64_t kMaxNormalEquationsEntries = uint64_t{1} << 14;
inline constexpr uint64_t kMaxNormalEquationsProducts = uint64_t{1} << 20;

// What a traced graph would cost to differentiate and lower, from its size alone.
struct WorkEstimate {
  uint64_t nodes = 0;              // of the traced graph
  uint64_t dependent_nodes = 0;    // nodes that depend on a tangent input δ
  uint64_t residuals = 0;          // m
  uint64_t tangent = 0;            // n: tangent components of all variables
  uint64_t forward_visits = 0;     // dependent_nodes × n: an upper bound of forward accumulation's work
  uint64_t reverse_visits = 0;     // dependent_nodes × m: ... of reverse accumulation's
  uint64_t hessian_entries = 0;    // Σ over variable pairs v <= w of tangent(v) × tangent(w)
  uint64_t hessian_products = 0;   // hessian_entries × m
};
WorkEstimate estimate_work(const Trace& traced);

// Throws lsjit::Error naming the cost, what it would take, the limit and what to do about
// it ("split the cost into smaller costs"), when `what` exceeds `limit`.
void check_work(const Trace& trace, const char* what, uint64_t amount, uint64_t limit);

}  // namespace lsjit::ir
