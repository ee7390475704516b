#include "lsjit/runtime/evaluator.h"

#include <algorithm>
#include <cmath>

namespace lsjit::detail {

Evaluator::Evaluator(const ProblemLayout& layout, ThreadPool& pool)
    : layout_(layout), pool_(pool) {
  for (uint32_t g = 0; g < layout.groups.size(); ++g)
    for (int64_t b = 0; b < layout.groups[g].instances; b += kChunk)
      tasks_.push_back({g, b, std::min(b + kChunk, layout.groups[g].instances)});
  partial_.resize(tasks_.size());
}

void Evaluator::run_kernel(const KernelGroup& kg, const compiler::Kernel& kernel, int64_t begin,
                           int64_t end, const State& state, double* buffer,
                           const uint64_t* offsets, size_t arrays) {
  const double* values[kMaxSlots];
  const int32_t* indices[kMaxSlots];
  double* outputs[1 + kMaxSlots + kMaxSlots * (kMaxSlots + 1) / 2];
  const size_t slots = kg.slot_type.size();
  for (size_t s = 0; s < slots; ++s) {
    values[s] = state[kg.slot_type[s]].data();
    indices[s] = kg.rows[s].data();
  }
  for (size_t a = 0; a < arrays; ++a) outputs[a] = buffer + offsets[a];
  compiler::KernelArgs args;
  args.begin = begin;
  args.end = end;
  args.indices = indices;
  args.values = values;
  args.data = kg.data.empty() ? nullptr : kg.data.data();
  args.outputs = outputs;
  kernel(args);
}

double Evaluator::cost(const State& state) {
  if (residual_buffer_.empty()) residual_buffer_.resize(layout_.residual_buffer_size);
  pool_.run(tasks_.size(), [&](size_t t) {
    const Task& task = tasks_[t];
    const KernelGroup& kg = layout_.groups[task.group];
    run_kernel(kg, *kg.residual, task.begin, task.end, state, residual_buffer_.data(),
               &kg.residual_offset, 1);
    const double* r = residual_buffer_.data() + kg.residual_offset;
    double sum = 0;
    for (int64_t k = task.begin * kg.residual_dim; k < task.end * kg.residual_dim; ++k) sum += r[k] * r[k];
    partial_[t] = 0.5 * sum;
  });
  double cost = 0;
  for (double p : partial_) cost += p;
  return cost;
}

std::string Evaluator::first_non_finite_residual() const {
  for (const KernelGroup& kg : layout_.groups) {
    const double* r = residual_buffer_.data() + kg.residual_offset;
    for (int64_t k = 0; k < kg.instances * kg.residual_dim; ++k)
      if (!std::isfinite(r[k]))
        return "cost '" + kg.name + "' instance " + std::to_string(k / kg.residual_dim) +
               " (residual " + std::to_string(k % kg.residual_dim) + " = " + std::to_string(r[k]) + ")";
  }
  return "";
}

double Evaluator::normal_equations(const State& state, double* g,
                                   linear::BlockSparseSymmetric& H) {
  if (normal_buffer_.empty()) normal_buffer_.resize(layout_.normal_buffer_size);
  double* buffer = normal_buffer_.data();
  pool_.run(tasks_.size(), [&](size_t t) {
    const Task& task = tasks_[t];
    const KernelGroup& kg = layout_.groups[task.group];
    run_kernel(kg, *kg.normal, task.begin, task.end, state, buffer, kg.normal_offset.data(),
               kg.normal_offset.size());
    const double* c = buffer + kg.normal_offset[0];
    double sum = 0;
    for (int64_t i = task.begin; i < task.end; ++i) sum += c[i];
    partial_[t] = sum;
  });
  double cost = 0;
  for (double p : partial_) cost += p;

  // Assembly: every destination is written by one task, its sources summed in order.
  const size_t blocks = layout_.h_value_offset.size();
  const size_t vars = layout_.free.size();
  constexpr size_t kBlocksPerTask = 512;
  const size_t h_tasks = (blocks + kBlocksPerTask - 1) / kBlocksPerTask;
  const size_t g_tasks = (vars + kBlocksPerTask - 1) / kBlocksPerTask;
  double* values = H.values().data();
  pool_.run(h_tasks + g_tasks, [&](size_t t) {
    if (t < h_tasks) {
      for (size_t b = t * kBlocksPerTask; b < std::min(blocks, (t + 1) * kBlocksPerTask); ++b) {
        const uint32_t rows = layout_.h_rows[b], cols = layout_.h_cols[b];
        double* dst = values + layout_.h_value_offset[b];
        std::fill(dst, dst + rows * cols, 0.0);
        for (uint64_t s = layout_.h_begin[b]; s < layout_.h_begin[b + 1]; ++s) {
          const Source& src = layout_.h_sources[s];
          const double* in = buffer + src.offset;
          if (!src.transpose) {
            for (uint32_t k = 0; k < rows * cols; ++k) dst[k] += in[k];
          } else {  // in is cols x rows
            for (uint32_t r = 0; r < rows; ++r)
              for (uint32_t c = 0; c < cols; ++c) dst[r * cols + c] += in[c * rows + r];
          }
        }
      }
    } else {
      const size_t first = (t - h_tasks) * kBlocksPerTask;
      for (size_t k = first; k < std::min(vars, first + kBlocksPerTask); ++k) {
        const FreeVariable& f = layout_.free[k];
        double* dst = g + f.offset;
        std::fill(dst, dst + f.tangent, 0.0);
        for (uint64_t s = layout_.g_begin[k]; s < layout_.g_begin[k + 1]; ++s) {
          const double* in = buffer + layout_.g_sources[s];
          for (uint32_t c = 0; c < f.tangent; ++c) dst[c] += in[c];
        }
      }
    }
  });
  return cost;
}

}  // namespace lsjit::detail
