#include "lsjit/runtime/evaluate/evaluator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <utility>

#include "lsjit/common/cpu.h"

namespace lsjit::detail {

// Lists, once, everything an evaluation walks (evaluator.h), step by step below.
Evaluator::Evaluator(const ProblemLayout& layout, ThreadPool& pool, bool apply_losses)
    : layout_(layout), pool_(pool), apply_losses_(apply_losses) {
  plan_waves();
  const linear::BlockPattern& pattern = *layout.pattern;
  h_block_row_.resize(static_cast<size_t>(pattern.num_stored_blocks()));
  for (int i = 0; i < pattern.num_blocks(); ++i)
    std::fill(h_block_row_.begin() + pattern.row_begin(i), h_block_row_.begin() + pattern.row_end(i), i);
  fill_scatter_tables();
  const SourceFlags flags = source_flags();
  const std::vector<bool> direct = list_direct_blocks(flags);
  cut_assembly_tasks(list_gathers(flags, direct));
  for (size_t d = 0; d + 1 < layout.h_begin.size(); ++d)
    if (layout.h_begin[d] == layout.h_begin[d + 1]) h_unreached_.push_back(static_cast<uint32_t>(d));
  for (size_t d = 0; d + 1 < layout.g_begin.size(); ++d)
    if (layout.g_begin[d] == layout.g_begin[d + 1]) g_unreached_.push_back(static_cast<uint32_t>(d));
  corrections_.resize(static_cast<size_t>(std::min(wave_instances_, layout.instances)));
  partial_.resize(std::max(residual_tasks_.size(), normal_tasks_.size()));
}

// Kernel tasks (chunks of kChunk instances) and the waves that group them, with each
// wave's place for every group's output arrays in the wave buffer.
void Evaluator::plan_waves() {
  const ProblemLayout& layout = layout_;
  for (uint32_t g = 0; g < layout.groups.size(); ++g) {
    const KernelGroup& kg = layout.groups[g];
    data_.push_back(kg.data.empty() ? nullptr : kg.data.data());
    for (int64_t b = 0; b < kg.instances; b += kChunk)
      residual_tasks_.push_back({g, b, std::min(b + kChunk, kg.instances)});
    std::vector<uint32_t> per;
    for (const compiler::OutputArray& a : kg.normal->layout.outputs) per.push_back(a.per_instance);
    per_instance_.push_back(std::move(per));
  }
  // Waves over the instances of all groups in order, whole chunks of about kWaveBytes of
  // kernel output; inside a wave, chunks per group.
  uint64_t widest = 1;  // doubles an instance writes, the most of any group
  for (const std::vector<uint32_t>& per : per_instance_) {
    uint64_t sum = 0;
    for (uint32_t p : per) sum += p;
    widest = std::max(widest, sum);
  }
  wave_instances_ = std::max<int64_t>(1, static_cast<int64_t>(kWaveBytes / (8 * widest)) / kChunk) * kChunk;
  // As many waves as that needs, made as even as whole chunks allow: the buffer is sized by
  // the largest wave, and its pages are fresh memory in every solve (intel: 2512 instances
  // in waves of 2304 and 208 took 516 KB, in two of 1280, 287 KB).
  if (const int64_t waves = (layout.instances + wave_instances_ - 1) / wave_instances_; waves > 0)
    wave_instances_ = ((layout.instances + waves - 1) / waves + kChunk - 1) / kChunk * kChunk;
  uint64_t buffer = 0;
  for (int64_t start = 0; start < layout.instances; start += wave_instances_) {
    Wave w;
    w.begin = start;
    w.end = std::min(start + wave_instances_, layout.instances);
    w.first_task = normal_tasks_.size();
    uint64_t used = 0;
    for (uint32_t g = 0; g < layout.groups.size(); ++g) {
      const KernelGroup& kg = layout.groups[g];
      const int64_t lo = std::clamp(start - kg.first_instance, int64_t{0}, kg.instances);
      const int64_t hi = std::clamp(w.end - kg.first_instance, int64_t{0}, kg.instances);
      w.group_begin.push_back(lo);
      std::vector<uint64_t> bases;
      for (uint32_t per : per_instance_[g]) {
        bases.push_back(used);
        used += static_cast<uint64_t>(hi - lo) * per;
      }
      w.array_base.push_back(std::move(bases));
      for (int64_t b = lo; b < hi; b += kChunk) normal_tasks_.push_back({g, b, std::min(b + kChunk, hi)});
    }
    w.last_task = normal_tasks_.size();
    buffer = std::max(buffer, used);
    waves_.push_back(std::move(w));
  }

  if (buffer > std::numeric_limits<WaveOffset>::max())
    throw Error("the normal-equation kernels of " + std::to_string(wave_instances_) + " instances write " +
                std::to_string(buffer) + " doubles, more than a wave's offsets can address");
  wave_buffer_.resize(buffer);
}

// Scattered arrays: every block in its place in the wave buffer, except the direct ones
// (their pointers go into H: point_direct_blocks_at).
void Evaluator::fill_scatter_tables() {
  const ProblemLayout& layout = layout_;
  scatter_.resize(layout.groups.size());
  for (uint32_t g = 0; g < layout.groups.size(); ++g) {
    const KernelGroup& kg = layout.groups[g];
    const std::vector<compiler::OutputArray>& arrays = kg.normal->layout.outputs;
    scatter_[g].resize(arrays.size());
    for (uint32_t k = 0; k < arrays.size(); ++k) {
      if (!arrays[k].scattered) continue;
      BigVector<double*>& table = scatter_[g][k];
      table.resize(static_cast<size_t>(kg.instances));
      // Wave by wave, the group's instances there in order: a run of equal strides.
      for (const Wave& wave : waves_) {
        const int64_t lo = wave.group_begin[g];
        const int64_t hi = std::clamp(wave.end - kg.first_instance, int64_t{0}, kg.instances);
        double* const base = wave_buffer_.data() + wave.array_base[g][k];
        for (int64_t i = lo; i < hi; ++i)
          table[static_cast<size_t>(i)] = base + static_cast<uint64_t>(i - lo) * per_instance_[g][k];
      }
    }
  }
}

// Per group and output array, what the loops over sources below ask of a source's array:
// looked up in the layout, it would be most of their time.
Evaluator::SourceFlags Evaluator::source_flags() const {
  const ProblemLayout& layout = layout_;
  SourceFlags flags;
  for (const KernelGroup& kg : layout.groups)
    flags.arrays_per_group = std::max(flags.arrays_per_group, kg.normal->layout.outputs.size());
  flags.flags.assign(layout.groups.size() * flags.arrays_per_group, 0);
  for (uint32_t g = 0; g < layout.groups.size(); ++g) {
    const KernelGroup& kg = layout.groups[g];
    for (uint32_t a = 0; a < kg.normal->layout.outputs.size(); ++a) {
      uint8_t& f = flags.flags[g * flags.arrays_per_group + a];
      f = robust(kg) ? 0 : SourceFlags::kNoLoss;
      if (kg.normal->layout.outputs[a].scattered) f |= SourceFlags::kScattered;
      const Source first{static_cast<uint32_t>(kg.first_instance), static_cast<uint16_t>(g), static_cast<uint8_t>(a), false};
      if (packed_source(first)) f |= SourceFlags::kPacked;
    }
  }
  return flags;
}

// The H blocks a kernel writes into H itself (evaluator.h): a block's only source, without
// loss or transpose, from a scattered array, and not diagonal. Listed in direct_ and in
// their waves (to be scaled); returns the mark per stored block.
std::vector<bool> Evaluator::list_direct_blocks(const SourceFlags& flags) {
  const ProblemLayout& layout = layout_;
  constexpr uint8_t kDirectable = SourceFlags::kNoLoss | SourceFlags::kScattered;
  std::vector<bool> direct_destination(h_block_row_.size(), false);  // per stored block of H
  for (size_t d = 0; d + 1 < layout.h_begin.size(); ++d) {
    if (layout.h_begin[d + 1] - layout.h_begin[d] != 1) continue;
    const Source& s = layout.h_sources[layout.h_begin[d]];
    direct_destination[d] =
        (flags(s) & kDirectable) == kDirectable && !s.transpose && !diagonal(static_cast<uint32_t>(d));
  }
  direct_.reserve(static_cast<size_t>(std::count(direct_destination.begin(), direct_destination.end(), true)));
  for (size_t d = 0; d + 1 < layout.h_begin.size(); ++d) {
    if (!direct_destination[d]) continue;
    const Source& s = layout.h_sources[layout.h_begin[d]];
    direct_.push_back({s.group, s.array, s.instance - layout.groups[s.group].first_instance, layout.h_value_offset[d]});
    waves_[static_cast<size_t>(s.instance / wave_instances_)].direct.push_back(static_cast<uint32_t>(d));
  }
  return direct_destination;
}

// Gathers: each destination's sources split by wave (they are in instance order), with
// their offsets in the wave buffer, stored wave after wave in gathers_. One walk over the
// sources visits them (counting per wave, then placing): no per-wave vectors to grow.
std::vector<size_t> Evaluator::list_gathers(const SourceFlags& flags, const std::vector<bool>& direct_destination) {
  const ProblemLayout& layout = layout_;
  auto for_each_gather = [&](auto&& visit) {
    auto list = [&](const BigVector<uint64_t>& begin, const BigVector<Source>& sources, bool h) {
      for (size_t d = 0; d + 1 < begin.size(); ++d) {
        if (h && direct_destination[d]) continue;  // written by its kernel
        for (uint64_t s = begin[d]; s < begin[d + 1];) {
          const size_t w = static_cast<size_t>(sources[s].instance / wave_instances_);
          const uint32_t size = h ? accumulated_size(static_cast<uint32_t>(d)) : layout.free[d].tangent;
          Gather gather{static_cast<uint32_t>(d), 0, size, s, h, true, s == begin[d], false, false};
          for (; s < begin[d + 1] && sources[s].instance < waves_[w].end; ++s) {
            // Plain: summed as they are, packed into a packed destination or full into a
            // full one (a diagonal block's full sources come from one variable in two slots).
            const uint8_t f = flags(sources[s]);
            const bool same_shape = !h || ((f & SourceFlags::kPacked) != 0) == diagonal(static_cast<uint32_t>(d));
            gather.plain = gather.plain && !sources[s].transpose && (f & SourceFlags::kNoLoss) && same_shape;
            ++gather.count;
          }
          gather.closes = s == begin[d + 1];
          gather.unpacks = gather.closes && h && diagonal(static_cast<uint32_t>(d));
          visit(w, gather);
        }
      }
    };
    list(layout.h_begin, layout.h_sources, true);
    list(layout.g_begin, layout.g_sources, false);
  };
  std::vector<size_t> wave_first(waves_.size() + 1, 0);
  for_each_gather([&](size_t w, const Gather&) { ++wave_first[w + 1]; });
  std::partial_sum(wave_first.begin(), wave_first.end(), wave_first.begin());
  gathers_.resize(wave_first.back());
  h_offset_.resize(layout.h_sources.size());
  g_offset_.resize(layout.g_sources.size());
  {
    // offset() of a source as origin + instance * stride, its origin per wave, group and
    // array in one flat table: offset()'s lookups through the waves' nested vectors would
    // be most of this pass, which visits every source.
    const size_t groups = layout.groups.size();
    std::vector<int64_t> stride(groups * flags.arrays_per_group, 0), origin(waves_.size() * stride.size(), 0);
    for (size_t g = 0; g < groups; ++g)
      for (size_t a = 0; a < per_instance_[g].size(); ++a) stride[g * flags.arrays_per_group + a] = per_instance_[g][a];
    for (size_t w = 0; w < waves_.size(); ++w)
      for (size_t g = 0; g < groups; ++g)
        for (size_t a = 0; a < per_instance_[g].size(); ++a)
          origin[w * stride.size() + g * flags.arrays_per_group + a] =
              static_cast<int64_t>(waves_[w].array_base[g][a]) -
              (layout.groups[g].first_instance + waves_[w].group_begin[g]) * stride[g * flags.arrays_per_group + a];
    std::vector<size_t> next(wave_first.begin(), wave_first.end() - 1);
    for_each_gather([&](size_t w, const Gather& gather) {
      gathers_[next[w]++] = gather;
      const BigVector<Source>& sources = gather.h ? layout.h_sources : layout.g_sources;
      BigVector<WaveOffset>& offsets = gather.h ? h_offset_ : g_offset_;
      const int64_t* wave_origin = origin.data() + w * stride.size();
      for (uint64_t s = gather.first; s < gather.first + gather.count; ++s) {
        const Source& src = sources[s];
        const size_t at = src.group * flags.arrays_per_group + src.array;
        offsets[s] = static_cast<WaveOffset>(wave_origin[at] + src.instance * stride[at]);
      }
    });
  }
  return wave_first;
}

// Assembly tasks: runs of gathers of about kTaskWork doubles added, cut by structure alone.
void Evaluator::cut_assembly_tasks(const std::vector<size_t>& wave_first) {
  constexpr uint64_t kTaskWork = 16384;
  for (size_t w = 0; w < waves_.size(); ++w) {
    waves_[w].assembly.push_back(wave_first[w]);
    uint64_t work = 0;
    for (size_t k = wave_first[w]; k < wave_first[w + 1]; ++k) {
      const Gather& gather = gathers_[k];
      work += gather.count * gather.size + 8;
      if (work >= kTaskWork) {
        waves_[w].assembly.push_back(k + 1);
        work = 0;
      }
    }
    if (waves_[w].assembly.back() != wave_first[w + 1]) waves_[w].assembly.push_back(wave_first[w + 1]);
  }
}

// Runs `kernel` on the group's instances [begin, end), whose outputs go to `outputs` at
// (i - shift) * per_instance: the index and data arrays are offset by `shift` so that the
// kernel's absolute indexing lands in a buffer that starts at instance `shift`.
void Evaluator::run_kernel(uint32_t group, const compiler::Kernel& kernel, int64_t begin, int64_t end,
                           int64_t shift, const State& state, double* const* outputs,
                           double* const* const* scatter) {
  const KernelGroup& kg = layout_.groups[group];
  const double* values[kMaxSlots];
  const int32_t* indices[kMaxSlots];
  for (size_t s = 0; s < kg.slot_type.size(); ++s) {
    values[s] = state[kg.slot_type[s]].data();
    indices[s] = kg.rows[s].data() + shift;
  }
  compiler::KernelArgs args;
  args.begin = begin - shift;
  args.end = end - shift;
  args.indices = indices;
  args.values = values;
  // A constraint's plain kernel reads the user's data alone; the others the group's rows.
  const bool plain = &kernel == kg.constraint.get();
  const double* data = plain ? (kg.user_data.empty() ? nullptr : kg.user_data.data()) : data_[group];
  args.data = data ? data + shift * kernel.layout.data_stride : nullptr;
  args.outputs = outputs;
  args.scatter = scatter;
  kernel(args);
}

void Evaluator::point_direct_blocks_at(double* values) {
  if (values == direct_values_) return;
  for (const DirectBlock& b : direct_) scatter_[b.group][b.array][static_cast<size_t>(b.instance)] = values + b.h_offset;
  direct_values_ = values;
}

double Evaluator::cost(const State& state) { return residual_cost(state, true); }
double Evaluator::objective(const State& state) { return residual_cost(state, false); }

double Evaluator::residual_cost(const State& state, bool constraints) {
  if (residual_buffer_.empty()) residual_buffer_.resize(layout_.residual_buffer_size);
  pool_.run(residual_tasks_.size(), [&](size_t t) {
    const Task& task = residual_tasks_[t];
    const KernelGroup& kg = layout_.groups[task.group];
    if (!constraints && kg.kind != ir::CostKind::LeastSquares) {
      partial_[t] = 0;
      return;
    }
    double* res = residual_buffer_.data() + kg.residual_offset;
    run_kernel(task.group, *kg.residual, task.begin, task.end, 0, state, &res);
    double sum = 0;
    if (!robust(kg)) {
      for (int64_t k = task.begin * kg.residual_dim; k < task.end * kg.residual_dim; ++k) sum += res[k] * res[k];
      sum *= 0.5;
    } else {
      for (int64_t i = task.begin; i < task.end; ++i) {
        double s = 0;
        for (uint32_t k = 0; k < kg.residual_dim; ++k) s += res[i * kg.residual_dim + k] * res[i * kg.residual_dim + k];
        double rho[3];
        kg.losses[i].evaluate(s, rho);
        sum += 0.5 * rho[0];
      }
    }
    partial_[t] = sum;
  });
  double cost = 0;
  for (size_t t = 0; t < residual_tasks_.size(); ++t) cost += partial_[t];
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

std::string Evaluator::why_cost_not_finite() const {
  if (std::string residual = first_non_finite_residual(); !residual.empty()) return ": " + residual;
  // Every residual is finite: an instance's ½ρ(|r|²) overflowed, or their sum did.
  const auto number = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x);
    return std::string(buf);
  };
  std::string largest;
  double largest_cost = -1;
  for (const KernelGroup& kg : layout_.groups) {
    if (kg.kind != ir::CostKind::LeastSquares) continue;
    const double* r = residual_buffer_.data() + kg.residual_offset;
    for (int64_t i = 0; i < kg.instances; ++i) {
      double s = 0, max_abs = 0;
      for (uint32_t k = 0; k < kg.residual_dim; ++k) {
        s += r[i * kg.residual_dim + k] * r[i * kg.residual_dim + k];
        max_abs = std::max(max_abs, std::abs(r[i * kg.residual_dim + k]));
      }
      double rho[3] = {s, 1, 0};
      if (robust(kg)) kg.losses[i].evaluate(s, rho);
      const std::string where = "cost '" + kg.name + "' instance " + std::to_string(i);
      if (!std::isfinite(s))
        return ": the cost overflowed at " + where + ": its residuals are finite (the largest " + number(max_abs) +
               ") but their squared norm is not";
      if (!std::isfinite(rho[0]))
        return ": the cost overflowed at " + where + ": its robust loss of |r|^2 = " + number(s) + " is not finite";
      if (0.5 * rho[0] > largest_cost) {
        largest_cost = 0.5 * rho[0];
        largest = where;
      }
    }
  }
  if (largest.empty()) return " (its gradient or Gauss-Newton matrix is)";
  return ": the cost overflowed: every instance's cost is finite but their sum exceeds the largest double "
         "(the largest, " + number(largest_cost) + ", is " + largest + ")";
}

void Evaluator::constraint_values(const State& state, uint32_t group, double* c) {
  const KernelGroup& kg = layout_.groups[group];
  std::vector<size_t> tasks;
  for (size_t t = 0; t < residual_tasks_.size(); ++t)
    if (residual_tasks_[t].group == group) tasks.push_back(t);
  pool_.run(tasks.size(), [&](size_t k) {
    const Task& task = residual_tasks_[tasks[k]];
    run_kernel(group, *kg.constraint, task.begin, task.end, 0, state, &c);
  });
}

uint64_t Evaluator::offset(const Wave& wave, const Source& s, uint32_t array) const {
  const int64_t local = s.instance - layout_.groups[s.group].first_instance - wave.group_begin[s.group];
  return wave.array_base[s.group][array] + static_cast<uint64_t>(local) * per_instance_[s.group][array];
}

const double* Evaluator::source(const Wave& wave, const Source& s, uint32_t array) const {
  return wave_buffer_.data() + offset(wave, s, array);
}


namespace {

// The plain gathers (no transpose, no loss) and the Jacobi scaling: nearly all of the
// assembly's time on bundle adjustment (about 160k source blocks of 3 to 45 doubles per
// evaluation on Ladybug-49). Written with V-wide vectors and compiled for AVX-512, for AVX2
// and for generic x86-64, chosen once by the CPU (as in runtime/solve/linear/schur_kernels.cpp:
// nothing out of line in the bodies). dst (H or g) and the sources (the wave buffer) never
// overlap, which the compiler cannot know; each element gets the same additions in the same
// order whatever the width, so results are identical to the bit across instruction sets.
template <int V>
[[gnu::always_inline]] inline void add_block_body(double* __restrict dst, const double* __restrict in, uint32_t n) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  uint32_t k = 0;
  for (; k + V <= n; k += V) {
    Vec a, b;
    __builtin_memcpy(&a, dst + k, sizeof a);
    __builtin_memcpy(&b, in + k, sizeof b);
    a += b;
    __builtin_memcpy(dst + k, &a, sizeof a);
  }
  for (; k < n; ++k) dst[k] += in[k];
}

// dst[0, n) = Σ_s buffer[offsets[s] + (0, n)] over s in [0, count), in order; the first
// source copied when `open` (the destination's first gather), else added to dst.
template <int V>
[[gnu::always_inline]] inline void sum_blocks_body(double* __restrict dst, const double* __restrict buffer,
                                                   const WaveOffset* offsets, uint64_t count, uint32_t n, bool open) {
  uint64_t s = 0;
  if (open && count > 0) {
    __builtin_memcpy(dst, buffer + offsets[0], n * sizeof(double));
    s = 1;
  }
  for (; s < count; ++s) add_block_body<V>(dst, buffer + offsets[s], n);
}

// The same sum for a size known at compile time, up to kRegisterSum doubles: the
// destination is held in registers across the sources (12 AVX2 vectors for a packed 9x9
// block), so a source costs its loads and adds alone, not a load and store of dst as well.
constexpr uint32_t kRegisterSum = 48;
template <int V, int N>
[[gnu::always_inline]] inline void sum_fixed_body(double* __restrict dst, const double* __restrict buffer,
                                                  const WaveOffset* offsets, uint64_t count, bool open) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  constexpr int kVectors = N / V, kTail = N % V;
  if (open && count == 0) return;
  Vec acc[kVectors + 1];
  double tail[kTail + 1];
  const double* first = open ? buffer + offsets[0] : dst;
#pragma GCC unroll 16
  for (int k = 0; k < kVectors; ++k) __builtin_memcpy(&acc[k], first + k * V, sizeof(Vec));
#pragma GCC unroll 8
  for (int t = 0; t < kTail; ++t) tail[t] = first[kVectors * V + t];
  for (uint64_t s = open ? 1 : 0; s < count; ++s) {
    const double* in = buffer + offsets[s];
#pragma GCC unroll 16
    for (int k = 0; k < kVectors; ++k) {
      Vec b;
      __builtin_memcpy(&b, in + k * V, sizeof b);
      acc[k] += b;
    }
#pragma GCC unroll 8
    for (int t = 0; t < kTail; ++t) tail[t] += in[kVectors * V + t];
  }
#pragma GCC unroll 16
  for (int k = 0; k < kVectors; ++k) __builtin_memcpy(dst + k * V, &acc[k], sizeof(Vec));
#pragma GCC unroll 8
  for (int t = 0; t < kTail; ++t) dst[kVectors * V + t] = tail[t];
}

// dst (rows x cols, row-major) ← (dst · s_r) · s_c entrywise.
template <int V>
[[gnu::always_inline]] inline void scale_block_body(double* dst, uint32_t rows, uint32_t cols,
                                                    const double* sr, const double* sc) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  for (uint32_t r = 0; r < rows; ++r) {
    double* row = dst + uint64_t{r} * cols;
    const double f = sr[r];
    uint32_t c = 0;
    for (; c + V <= cols; c += V) {
      Vec a, b;
      __builtin_memcpy(&a, row + c, sizeof a);
      __builtin_memcpy(&b, sc + c, sizeof b);
      a = a * f * b;
      __builtin_memcpy(row + c, &a, sizeof a);
    }
    for (; c < cols; ++c) row[c] = row[c] * f * sc[c];
  }
}

using SumBlocksFn = void (*)(double*, const double*, const WaveOffset*, uint64_t, uint32_t, bool);
using SumBlocksTable = std::array<SumBlocksFn, kRegisterSum + 1>;  // [n]: size n; [0]: any size

struct AssemblyKernels {
  SumBlocksTable sum_blocks;
  void (*scale_block)(double*, uint32_t, uint32_t, const double*, const double*);
  SumBlocksFn sum_blocks_for(uint32_t n) const { return sum_blocks[n <= kRegisterSum ? n : 0]; }
};

template <int V>
void sum_blocks_v(double* dst, const double* buffer, const WaveOffset* offsets, uint64_t count, uint32_t n, bool open) {
  sum_blocks_body<V>(dst, buffer, offsets, count, n, open);
}
template <int V, int N>
void sum_fixed_v(double* dst, const double* buffer, const WaveOffset* offsets, uint64_t count, uint32_t, bool open) {
  sum_fixed_body<V, N>(dst, buffer, offsets, count, open);
}
template <size_t... I>
SumBlocksTable generic_sums(std::index_sequence<I...>) {
  return {&sum_blocks_v<2>, &sum_fixed_v<2, static_cast<int>(I) + 1>...};
}
template <int V>
void scale_block_v(double* dst, uint32_t rows, uint32_t cols, const double* sr, const double* sc) {
  scale_block_body<V>(dst, rows, cols, sr, sc);
}

#if defined(__x86_64__)
[[gnu::target("avx2")]] void sum_blocks_avx2(double* dst, const double* buffer, const WaveOffset* offsets,
                                             uint64_t count, uint32_t n, bool open) {
  sum_blocks_body<4>(dst, buffer, offsets, count, n, open);
}
[[gnu::target("avx2")]] void scale_block_avx2(double* dst, uint32_t rows, uint32_t cols, const double* sr,
                                              const double* sc) {
  scale_block_body<4>(dst, rows, cols, sr, sc);
}
[[gnu::target("avx512f")]] void sum_blocks_avx512(double* dst, const double* buffer, const WaveOffset* offsets,
                                                  uint64_t count, uint32_t n, bool open) {
  sum_blocks_body<8>(dst, buffer, offsets, count, n, open);
}
[[gnu::target("avx512f")]] void scale_block_avx512(double* dst, uint32_t rows, uint32_t cols, const double* sr,
                                                   const double* sc) {
  scale_block_body<8>(dst, rows, cols, sr, sc);
}
template <int N>
[[gnu::target("avx2")]] void sum_fixed_avx2(double* dst, const double* buffer, const WaveOffset* offsets,
                                            uint64_t count, uint32_t, bool open) {
  sum_fixed_body<4, N>(dst, buffer, offsets, count, open);
}
template <int N>
[[gnu::target("avx512f")]] void sum_fixed_avx512(double* dst, const double* buffer, const WaveOffset* offsets,
                                                 uint64_t count, uint32_t, bool open) {
  sum_fixed_body<8, N>(dst, buffer, offsets, count, open);
}
template <size_t... I>
SumBlocksTable avx2_sums(std::index_sequence<I...>) {
  return {&sum_blocks_avx2, &sum_fixed_avx2<static_cast<int>(I) + 1>...};
}
template <size_t... I>
SumBlocksTable avx512_sums(std::index_sequence<I...>) {
  return {&sum_blocks_avx512, &sum_fixed_avx512<static_cast<int>(I) + 1>...};
}
#endif

// Without FMA (no "fma" in the targets) a · f · b rounds the same everywhere. On a CPU that
// splits 512-bit operations (Zen 4) the AVX2 variants are the faster ones.
const AssemblyKernels& assembly_kernels() {
  static const AssemblyKernels kernels = [] {
#if defined(__x86_64__)
    __builtin_cpu_init();
    constexpr auto sizes = std::make_index_sequence<kRegisterSum>();
    if (__builtin_cpu_supports("avx512f") && !cpu_splits_512_bit_operations())
      return AssemblyKernels{avx512_sums(sizes), &scale_block_avx512};
    if (__builtin_cpu_supports("avx2")) return AssemblyKernels{avx2_sums(sizes), &scale_block_avx2};
#endif
    return AssemblyKernels{generic_sums(std::make_index_sequence<kRegisterSum>()), &scale_block_v<2>};
  }();
  return kernels;
}

}  // namespace

void Evaluator::add_gather(const Wave& wave, const Gather& gather, double* values, double* g,
                           const double* scale) {
  const double* buffer = wave_buffer_.data();
  const uint32_t d = gather.destination;
  if (!gather.h) {
    const uint32_t n = layout_.free[d].tangent;
    double* dst = g + layout_.free[d].offset;
    if (gather.plain) {
      assembly_kernels().sum_blocks_for(n)(dst, buffer, g_offset_.data() + gather.first, gather.count, n, gather.opens);
      return;
    }
    if (gather.opens) std::fill(dst, dst + n, 0.0);
    for (uint64_t s = gather.first; s < gather.first + gather.count; ++s) {
      const double* in = buffer + g_offset_[s];
      const Source& src = layout_.g_sources[s];
      const double rho1 = !robust(layout_.groups[src.group])
                              ? 1.0
                              : corrections_[static_cast<size_t>(src.instance - wave.begin)].rho1;
      for (uint32_t c = 0; c < n; ++c) dst[c] += rho1 * in[c];
    }
    return;
  }
  sum_h_sources(wave, gather, values + layout_.h_value_offset[d], layout_.h_rows[d], layout_.h_cols[d]);
  finish_h_gather(gather, values, scale);
}

bool Evaluator::packed_source(const Source& s) const {
  const auto [v, w] = layout_.groups[s.group].hessian_slots[s.array];
  return v == w;
}

uint32_t Evaluator::accumulated_size(uint32_t d) const {
  return diagonal(d) ? compiler::packed_size(layout_.h_rows[d]) : layout_.h_rows[d] * layout_.h_cols[d];
}

void Evaluator::unpack_h_block(uint32_t d, double* values) const {
  // From the last entry back: (a, b)'s full places a·n + b and b·n + a are at or after its
  // packed place, which is after every packed place still to be read.
  double* block = values + layout_.h_value_offset[d];
  const uint32_t n = layout_.h_rows[d];
  uint32_t p = compiler::packed_size(n);
  for (uint32_t a = n; a-- > 0;)
    for (uint32_t b = n; b-- > a;) {
      const double x = block[--p];
      block[a * n + b] = x;
      block[b * n + a] = x;
    }
}

void Evaluator::scale_h_block(uint32_t d, double* values, const double* scale) const {
  assembly_kernels().scale_block(values + layout_.h_value_offset[d], layout_.h_rows[d], layout_.h_cols[d],
                                 scale + layout_.pattern->scalar_offset(h_block_row_[d]),
                                 scale + layout_.pattern->scalar_offset(layout_.pattern->col(d)));
}

void Evaluator::scale(const double* scale, linear::BlockSparseSymmetric& H) const {
  for (size_t d = 0; d < h_block_row_.size(); ++d) scale_h_block(static_cast<uint32_t>(d), H.values().data(), scale);
}

void Evaluator::sum_h_sources(const Wave& wave, const Gather& gather, double* dst, uint32_t rows,
                              uint32_t cols) {
  const double* buffer = wave_buffer_.data();
  const bool packed_dst = diagonal(gather.destination);
  if (gather.opens) std::fill(dst, dst + gather.size, 0.0);
  for (uint64_t s = gather.first; s < gather.first + gather.count; ++s) {
    const Source& src = layout_.h_sources[s];
    const double* in = buffer + h_offset_[s];
    const KernelGroup& kg = layout_.groups[src.group];
    const bool packed_in = packed_source(src);
    if (!robust(kg) && packed_in == packed_dst && !src.transpose) {
      assembly_kernels().sum_blocks_for(gather.size)(dst, buffer, &h_offset_[s], 1, gather.size, false);
      continue;
    }
    // Entry by entry: ρ'(H[v,w] − β g_v g_wᵀ) for a robust source (else H[v,w] itself), at
    // (a, c) of the source, added at (c, a) of the destination when transposed; a packed
    // destination takes its upper triangle alone.
    const bool robust_source = robust(kg);
    const Correction k = robust_source ? corrections_[static_cast<size_t>(src.instance - wave.begin)] : Correction{};
    const auto [v, w] = kg.hessian_slots[src.array];
    const double* gv = robust_source ? source(wave, src, 1 + v) : nullptr;
    const double* gw = robust_source ? source(wave, src, 1 + w) : nullptr;
    const uint32_t tv = src.transpose ? cols : rows, tw = src.transpose ? rows : cols;
    for (uint32_t a = 0; a < tv; ++a)
      for (uint32_t c = 0; c < tw; ++c) {
        const uint32_t r = src.transpose ? c : a, col = src.transpose ? a : c;
        if (packed_dst && r > col) continue;
        double h = packed_in ? in[compiler::packed_upper_index(std::min(a, c), std::max(a, c), tv)] : in[a * tw + c];
        if (robust_source) h = k.rho1 * (h - k.beta * gv[a] * gw[c]);
        dst[packed_dst ? compiler::packed_upper_index(r, col, rows) : r * cols + col] += h;
      }
  }
}

double Evaluator::normal_equations(const State& state, double* g, linear::BlockSparseSymmetric& H,
                                   const double* scale) {
  double* values = H.values().data();
  point_direct_blocks_at(values);
  for (uint32_t d : h_unreached_)
    std::fill(values + layout_.h_value_offset[d],
              values + layout_.h_value_offset[d] + uint64_t{layout_.h_rows[d]} * layout_.h_cols[d], 0.0);
  for (uint32_t d : g_unreached_)
    std::fill(g + layout_.free[d].offset, g + layout_.free[d].offset + layout_.free[d].tangent, 0.0);

  double cost = 0;
  for (const Wave& wave : waves_) {
    // Kernels: this wave's instances into the wave buffer.
    pool_.run(wave.last_task - wave.first_task, [&](size_t t) {
      const Task& task = normal_tasks_[wave.first_task + t];
      const KernelGroup& kg = layout_.groups[task.group];
      const int64_t shift = wave.group_begin[task.group];
      double* outputs[kMaxOutputArrays];
      double* const* scatter[kMaxOutputArrays];
      for (size_t a = 0; a < wave.array_base[task.group].size(); ++a) {
        outputs[a] = wave_buffer_.data() + wave.array_base[task.group][a];
        // Tables are indexed by group-local instance; the kernel's indices start at shift.
        const BigVector<double*>& table = scatter_[task.group][a];
        scatter[a] = table.empty() ? nullptr : table.data() + shift;
      }
      run_kernel(task.group, *kg.normal, task.begin, task.end, shift, state, outputs, scatter);
      const double* c = outputs[0];
      double sum = 0;
      if (!robust(kg)) {
        for (int64_t i = task.begin; i < task.end; ++i) sum += c[i - shift];
      } else {
        for (int64_t i = task.begin; i < task.end; ++i) {
          const Correction k = correction(kg.losses[i], 2.0 * c[i - shift]);
          corrections_[static_cast<size_t>(kg.first_instance + i - wave.begin)] = k;
          sum += k.half_rho;
        }
      }
      partial_[wave.first_task + t] = sum;
    });
    for (size_t t = wave.first_task; t < wave.last_task; ++t) cost += partial_[t];
    if (scale != nullptr)  // the blocks the kernels wrote into H, scaled as the gathered ones are
      for (uint32_t d : wave.direct) scale_h_block(d, values, scale);

    // Assembly: every destination the wave touches is in one gather of one task, which
    // adds the wave's sources in instance order.
    pool_.run(wave.assembly.size() - 1, [&](size_t t) {
      const AssemblyKernels& kernels = assembly_kernels();
      const double* buffer = wave_buffer_.data();
      for (size_t k = wave.assembly[t]; k < wave.assembly[t + 1]; ++k) {
        const Gather& gather = gathers_[k];
        // The common case inline, with the kernels fetched once per task: a plain sum of
        // blocks into an H block (every H gather of bundle adjustment).
        if (gather.h && gather.plain) {
          const uint32_t d = gather.destination;
          kernels.sum_blocks_for(gather.size)(values + layout_.h_value_offset[d], buffer,
                                              h_offset_.data() + gather.first, gather.count, gather.size,
                                              gather.opens);
          finish_h_gather(gather, values, scale);
          continue;
        }
        add_gather(wave, gather, values, g, scale);
      }
    });
  }
  return cost;
}

}  // namespace lsjit::detail
