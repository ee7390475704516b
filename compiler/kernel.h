// The kernel contract: what a compiled cost kernel computes, the arguments it takes, and
// where it writes. No LLVM here: the runtime and the tests use this header alone.
//
// One kernel per (cost group, mode). It evaluates the cost's graph for every instance in
// the runtime range [begin, end), SIMD across instances, reading:
//   indices[s][i]   the row of instance i's variable in slot s (int32, one per instance)
//   values[s]       the value array of slot s: `ambient` doubles per row, row-major, so
//                   instance i reads values[s][indices[s][i] * ambient + c]
//   data            per-instance data, instance-major: data[i * data_stride + offset + c]
//                   with the data slots concatenated in signature order
// and writing, for each output array k of the mode (KernelLayout::outputs), the block of
// instance i at outputs[k][i * per_instance ...], or, for a scattered array, at
// scatter[k][i] (per_instance doubles there; outputs[k] is not read). Indices are absolute
// instance numbers, so threads split [begin, end) and share every pointer. Pointers are
// never aliased (scattered blocks included: no two instances' blocks overlap); an output
// array the mode does not have is not touched.
//
// Modes and their output arrays, in order (n variable slots, T_v tangent dims, R residuals):
//   Residual          res                    R per instance
//   ResidualJacobian  res, J[0..n-1]         J[v]: R x T_v row-major (Ceres' layout)
//   NormalEquations   cost, g[0..n-1], H[v,w] for v <= w in row-major pair order
//                     cost: ½‖r‖² (1); g[v] = J_vᵀ r (T_v); H[v,w] = J_vᵀ J_w (T_v x T_w,
//                     row-major) for v < w. A diagonal block H[v,v] is symmetric and
//                     holds its upper triangle alone, row by row (packed_upper_index):
//                     T_v(T_v+1)/2 doubles, not T_v², so that a bundle-adjustment
//                     instance writes 91 doubles instead of 130. A solver accumulates
//                     these; J itself is never stored.
//                     The H[v,w] arrays with v < w are scattered: a block that is the
//                     only one added to its place in the global H (bundle adjustment's
//                     camera-point blocks, most pose-graph edges) goes there directly,
//                     with no copy through a buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/ir/graph.h"

namespace lsjit::compiler {

enum class KernelMode : uint8_t { Residual, ResidualJacobian, NormalEquations };
std::string_view mode_name(KernelMode mode);
std::optional<KernelMode> mode_from_name(std::string_view name);
inline constexpr KernelMode kAllModes[] = {KernelMode::Residual, KernelMode::ResidualJacobian,
                                           KernelMode::NormalEquations};

struct KernelArgs {
  int64_t begin = 0;
  int64_t end = 0;
  const int32_t* const* indices = nullptr;  // [variable slot]
  const double* const* values = nullptr;    // [variable slot]
  const double* data = nullptr;             // may be nullptr when data_stride == 0
  double* const* outputs = nullptr;         // [output array]; unused for scattered arrays
  // [output array]: for a scattered array, its instances' block pointers, indexed by the
  // absolute instance number; entries for other arrays are not read. May be nullptr
  // when the layout has no scattered array that the graph writes.
  double* const* const* scatter = nullptr;
};

// The generated function. `extern "C"`-style: one pointer argument.
using KernelFn = void (*)(const KernelArgs*);

struct OutputArray {
  std::string name;       // res, J[a], cost, g[a], H[a,b]
  uint32_t per_instance;  // doubles per instance
  bool scattered = false; // written through KernelArgs::scatter (NormalEquations' H[v,w], v < w)
};

// Where a cost's inputs and outputs live for one mode.
struct KernelLayout {
  KernelMode mode = KernelMode::Residual;
  uint32_t data_stride = 0;              // doubles of data per instance
  std::vector<uint32_t> data_offset;     // per data slot
  std::vector<uint32_t> ambient;         // per variable slot
  std::vector<OutputArray> outputs;

  // The output array and the offset within an instance's block of one graph output.
  struct Place {
    uint32_t array;
    uint32_t offset;
  };
  // Both H[v,v](a, b) and H[v,v](b, a) are placed at the packed (min, max) entry.
  Place place(const ir::Output& output) const;
  // The index of H[v,w] (v <= w) among the output arrays.
  uint32_t hessian_array(uint32_t v, uint32_t w) const;

  uint32_t num_vars = 0;
  std::vector<uint32_t> tangent;  // per variable slot
  uint32_t residual_dim = 0;
};

KernelLayout make_layout(const ir::Signature& signature, KernelMode mode);

// The packed upper triangle of a symmetric n x n block: entry (a, b), a <= b < n, is at
// a·n − a(a−1)/2 + (b − a); packed_size(n) = n(n+1)/2 entries.
constexpr uint32_t packed_upper_index(uint32_t a, uint32_t b, uint32_t n) {
  return a * n - a * (a - 1) / 2 + (b - a);
}
constexpr uint32_t packed_size(uint32_t n) { return n * (n + 1) / 2; }

// Per output of `graph_outputs`: whether it is the one a kernel stores at its place, the
// first output placed there (H[v,v](b, a) after H[v,v](a, b) is not: the normal-equation
// stage gives both the same node).
std::vector<bool> stored_outputs(const KernelLayout& layout, const std::vector<ir::Output>& graph_outputs);

// The most nodes and outputs a kernel's graph may have together: LLVM's time and memory
// grow faster than the graph (register allocation and scheduling on long bodies), and the
// graph is checked before any of that is spent. At the limit the slowest shape measured, a
// chain of sin, compiles in about a minute and 400 MB; a cost of two 32-dimensional
// variables with a dense 32 x 32 model has a 43,000-node normal-equations kernel, and
// se3_between's has about 2,500. docs/testing.md, "Limits on work and memory".
inline constexpr size_t kMaxKernelOps = size_t{1} << 17;

// What kMaxKernelOps bounds: the graph's nodes (inputs, constants, ops) plus its outputs.
size_t kernel_size(const ir::Graph& g);

// The graph a mode's kernel evaluates, from a traced cost: the simplified residual, the
// residual + Jacobian, or the normal-equation blocks (ir/normal_equations.h). Throws
// lsjit::Error, naming the cost, when the work it takes is above a limit of
// ir/work_limits.h or the graph is larger than kMaxKernelOps (checked on the simplified
// residual before the derivatives are built, where the trace is larger than that).
ir::Trace graph_for_mode(const ir::Trace& traced, KernelMode mode);

// Scatter tables that put instance i's block of a scattered array where an unscattered
// array would have it, at outputs[k] + i * per_instance, for instances [0, instances): what
// callers that keep every output array contiguous (tests, benchmarks) pass as
// KernelArgs::scatter (pointers.data()). pointers refers into tables, whose buffers stay
// put when the object is moved.
struct ScatterTables {
  std::vector<std::vector<double*>> tables;  // per output array; empty unless scattered
  std::vector<double* const*> pointers;      // per output array: tables[k].data(), or null
};
ScatterTables contiguous_scatter(const KernelLayout& layout, double* const* outputs, int64_t instances);

// Evaluates a mode's graph for instances [begin, end) with the reference interpreter,
// through exactly the argument and output layout a compiled kernel uses. This is what the
// JIT is tested against.
void run_reference(const ir::Trace& mode_graph, const KernelLayout& layout, const KernelArgs& args);

}  // namespace lsjit::compiler
