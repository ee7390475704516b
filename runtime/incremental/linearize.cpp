#include "lsjit/runtime/incremental/linearize.h"

#include <algorithm>
#include <cmath>

#include "lsjit/common/error.h"

namespace lsjit::detail {
namespace {

// Kernel inputs for a compact batch of one cost type's instances, reading θ in place.
struct Batch {
  std::vector<std::vector<int32_t>> indices;  // per slot
  std::vector<const int32_t*> index_ptr;
  std::vector<const double*> value_ptr;
  std::vector<double> data;
  std::vector<std::vector<double>> outputs;
  std::vector<double*> output_ptr;
};

// Instances per kernel call: the outputs of a chunk stay in cache while they are read, and
// the scratch buffers stay small and warm (a relinearization may take thousands at once).
constexpr size_t kChunk = 128;

// Calls `kernel` on n instances whose inputs b.index_ptr, b.value_ptr and `data` already
// hold, into b.outputs (sized here; contiguous, scattered arrays included).
void call(const compiler::Kernel& kernel, const double* data, int64_t n, Batch& b) {
  b.outputs.resize(kernel.layout.outputs.size());
  b.output_ptr.clear();
  for (size_t k = 0; k < b.outputs.size(); ++k) {
    b.outputs[k].resize(kernel.layout.outputs[k].per_instance * n);
    b.output_ptr.push_back(b.outputs[k].data());
  }
  const compiler::ScatterTables scatter = compiler::contiguous_scatter(kernel.layout, b.output_ptr.data(), n);
  compiler::KernelArgs args;
  args.begin = 0;
  args.end = n;
  args.indices = b.index_ptr.data();
  args.values = b.value_ptr.data();
  args.data = data;
  args.outputs = b.output_ptr.data();
  args.scatter = scatter.pointers.data();
  kernel(args);
}

// Runs `kernel` of cost type `kind` on `instances` (at most kChunk), with per-slot value
// arrays `values`, into `b` (reused between calls: its buffers keep their memory).
void run(const CostType& kind, const compiler::Kernel& kernel, std::span<const int32_t> instances,
         const std::vector<const double*>& values, Batch& b) {
  b.indices.resize(kind.rows.size());
  b.index_ptr.clear();
  for (size_t s = 0; s < kind.rows.size(); ++s) {
    b.indices[s].clear();
    for (int32_t i : instances) b.indices[s].push_back(kind.rows[s][i]);
    b.index_ptr.push_back(b.indices[s].data());
  }
  b.value_ptr = values;
  b.data.clear();
  for (int32_t i : instances)
    b.data.insert(b.data.end(), kind.data.begin() + int64_t{i} * kind.data_stride,
                  kind.data.begin() + int64_t{i + 1} * kind.data_stride);
  call(kernel, b.data.empty() ? nullptr : b.data.data(), static_cast<int64_t>(instances.size()), b);
}

Batch& scratch() {
  static thread_local Batch b;
  return b;
}

}  // namespace

void linearize(const IncrementalState& state, uint32_t kind_index, std::span<const int32_t> instances,
               const std::function<void(int32_t, const LinearizedInstance&)>& use) {
  if (instances.empty()) return;
  const CostType& kind = state.costs[kind_index];
  const compiler::KernelLayout& layout = kind.normal->layout;
  std::vector<const double*> values;
  for (uint32_t t : kind.slot_type) values.push_back(state.types[t].theta.data());
  if (instances.size() > kChunk) {
    for (size_t at = 0; at < instances.size(); at += kChunk)
      linearize(state, kind_index, instances.subspan(at, std::min(kChunk, instances.size() - at)), use);
    return;
  }
  Batch& b = scratch();
  run(kind, *kind.normal, instances, values, b);
  const size_t slots = kind.rows.size();
  LinearizedInstance out;
  std::vector<int64_t> slot_offset(slots);  // in the instance's local tangent vector, -1: constant
  for (size_t k = 0; k < instances.size(); ++k) {
    const int32_t i = instances[k];
    out.columns.clear();
    int64_t n = 0;
    for (size_t s = 0; s < slots; ++s) {
      const int32_t column = state.types[kind.slot_type[s]].column[kind.rows[s][i]];
      slot_offset[s] = -1;
      if (column < 0) continue;
      int64_t at = 0;
      auto same = std::find(out.columns.begin(), out.columns.end(), column);
      for (auto c = out.columns.begin(); c != same; ++c) at += state.factor.dim(*c);
      if (same == out.columns.end()) {
        out.columns.push_back(column);
        n += state.factor.dim(column);
      }
      slot_offset[s] = at;
    }
    if (out.columns.empty()) {
      use(i, out);
      continue;
    }
    out.H.assign(n * n, 0.0);
    out.g.assign(n, 0.0);
    for (uint32_t v = 0; v < slots; ++v) {
      if (slot_offset[v] < 0) continue;
      const uint32_t tv = layout.tangent[v];
      const double* gv = b.outputs[1 + v].data() + k * tv;
      for (uint32_t a = 0; a < tv; ++a) out.g[slot_offset[v] + a] += gv[a];
      for (uint32_t w = v; w < slots; ++w) {
        if (slot_offset[w] < 0) continue;
        const uint32_t tw = layout.tangent[w];
        const uint32_t array = layout.hessian_array(v, w);
        const double* h = b.outputs[array].data() + k * layout.outputs[array].per_instance;
        for (uint32_t a = 0; a < tv; ++a)
          for (uint32_t c = 0; c < tw; ++c) {
            const double x = v == w ? h[compiler::packed_upper_index(std::min(a, c), std::max(a, c), tv)] : h[a * tw + c];
            const int64_t r = slot_offset[v] + a, col = slot_offset[w] + c;
            out.H[r + col * n] += x;
            if (v != w) out.H[col + r * n] += x;
          }
      }
    }
    const Loss& loss = kind.losses[i];
    if (loss.kind != Loss::Kind::Trivial) {
      const Correction corr = correction(loss, 2 * b.outputs[0][k]);
      for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r < n; ++r) out.H[r + c * n] = corr.rho1 * (out.H[r + c * n] - corr.beta * out.g[r] * out.g[c]);
      for (double& x : out.g) x *= corr.rho1;
    }
    use(i, out);
  }
}

int64_t first_non_finite(const CostType& kind, const CostGroup& group, const std::vector<std::vector<double>>& params) {
  const compiler::Kernel& kernel = *kind.normal;
  const auto n = static_cast<int64_t>(group.instances);
  Batch b;  // instance k reads row k of each slot's params
  b.indices.assign(params.size(), std::vector<int32_t>(group.instances));
  for (size_t s = 0; s < params.size(); ++s) {
    for (int64_t i = 0; i < n; ++i) b.indices[s][i] = static_cast<int32_t>(i);
    b.index_ptr.push_back(b.indices[s].data());
    b.value_ptr.push_back(params[s].data());
  }
  call(kernel, group.data.empty() ? nullptr : group.data.data(), n, b);
  for (size_t k = 0; k < b.outputs.size(); ++k) {
    const uint32_t per = kernel.layout.outputs[k].per_instance;
    for (int64_t i = 0; i < n; ++i)
      for (uint32_t c = 0; c < per; ++c)
        if (!std::isfinite(b.outputs[k][i * per + c])) return i;
  }
  return -1;
}

double total_cost(const IncrementalState& state, const Values& values) {
  // Each type's parameters from `values`, in row order.
  std::vector<std::vector<double>> params(state.types.size());
  for (size_t t = 0; t < state.types.size(); ++t) {
    const TypeState& type = state.types[t];
    for (int64_t id : type.ids) {
      const double* p = values.params(type.type->name, id);
      if (!p)
        throw Error("lsjit::IncrementalSolver::cost: no value for " + type.type->name + " variable " + std::to_string(id));
      params[t].insert(params[t].end(), p, p + type.type->ambient);
    }
  }
  double cost = 0;
  std::vector<int32_t> live;
  for (const CostType& kind : state.costs) {
    live.clear();
    for (size_t i = 0; i < kind.live.size(); ++i)
      if (kind.live[i]) live.push_back(static_cast<int32_t>(i));
    if (live.empty()) continue;
    std::vector<const double*> slot_values;
    for (uint32_t t : kind.slot_type) slot_values.push_back(params[t].data());
    const uint32_t R = kind.residual->layout.residual_dim;
    Batch& b = scratch();
    for (size_t at = 0; at < live.size(); at += kChunk) {
      const std::span<const int32_t> chunk(live.data() + at, std::min(kChunk, live.size() - at));
      run(kind, *kind.residual, chunk, slot_values, b);
      for (size_t k = 0; k < chunk.size(); ++k) {
        double s = 0;
        for (uint32_t r = 0; r < R; ++r) s += b.outputs[0][k * R + r] * b.outputs[0][k * R + r];
        cost += correction(kind.losses[chunk[k]], s).half_rho;
      }
    }
  }
  return cost;
}

}  // namespace lsjit::detail
