// Evaluation of an analyzed problem at a state: the cost alone (Residual kernels), or the
// cost, gradient and Gauss–Newton matrix (NormalEquations kernels plus assembly through
// the gather lists of problem_layout.h).
//
// The normal-equation kernels write per-instance blocks (for BAL 91 doubles an
// instance), so instances are taken in waves: a wave's kernels fill one buffer, then every
// destination block the wave touches adds the wave's sources to itself, in instance order.
// A wave holds as many whole chunks as fit in about kWaveBytes, so that its buffer is
// still in cache when the assembly reads it back (a buffer of many megabytes is read back
// from memory, and the assembly then takes longer than the kernels; half a megabyte leaves
// room in a 1 MB L2 for the destinations); the destinations a wave touches and where their
// sources sit in the buffer are listed once, at construction, so a wave costs only
// its own sources. Memory is one wave's buffer plus the lists (one entry per source),
// whatever the problem size. Work inside a wave is cut into fixed chunks of kChunk
// instances and fixed runs of destinations, independent of the thread count; each
// destination's sum is taken in instance order across waves and partial cost sums are
// combined in chunk order, so every result is bit-identical for any number of threads.
//
// A camera-point block of bundle adjustment (an H[v,w], v < w, that is the only source of
// its destination, without loss or transpose) is not copied through the buffer: the kernel
// writes it into H itself, through the scattered output array's block pointers
// (compiler/kernel.h). That copy would be a sizeable share of a bundle-adjustment
// evaluation.
//
// Robust losses (loss.h) are applied here, per instance, to the kernels' outputs: the
// cost sums ½ρ(s) and the assembly adds ρ'·g and ρ'·(H − β g_v g_wᵀ).
//
// State: per variable type t, state[t] holds the rows of `ambient` doubles in the row
// order of ProblemLayout::types[t].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/evaluate/huge_page_allocator.h"
#include "lsjit/runtime/evaluate/thread_pool.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"

namespace lsjit::detail {

using State = std::vector<std::vector<double>>;

// An offset into the Evaluator's wave buffer, in 32 bits: a wave buffer holds about
// kWaveBytes (the constructor checks), and the offset lists have an entry per source of
// H and g (1.3 MB of fresh pages per Ladybug-49 solve at 64 bits).
using WaveOffset = uint32_t;

class Evaluator {
 public:
  static constexpr int64_t kChunk = 256;
  static constexpr uint64_t kWaveBytes = 1 << 19;

  // Borrows layout and pool for its lifetime. Without apply_losses every instance counts
  // as if it had no robust loss (ρ(s) = s): what covariance without the loss's weights
  // (CovarianceOptions::apply_loss_function = false) evaluates.
  Evaluator(const ProblemLayout& layout, ThreadPool& pool, bool apply_losses = true);

  // ½Σ‖r‖² (NaN or inf if any residual is not finite), constraints' augmented-Lagrangian
  // terms included.
  double cost(const State& state);
  // The same over the least-squares groups only: the objective of a constrained problem.
  double objective(const State& state);
  // Constraint group `group`'s c(x), residual_dim values per instance (its constraint kernel).
  void constraint_values(const State& state, uint32_t group, double* c);
  // Runs group `group`'s kernels on `data` (same layout as KernelGroup::data; borrowed)
  // instead of the group's own: how a solve passes its multipliers and penalties.
  void set_group_data(uint32_t group, const double* data) { data_[group] = data; }
  // After cost(): the first instance with a non-finite residual, as "cost 'NAME' instance
  // K (residual R = VALUE)", or "" if there is none.
  std::string first_non_finite_residual() const;
  // After cost() returned a value that is not finite: why, as text to append to "the cost
  // ... is not finite": ": " + first_non_finite_residual() where a residual is not finite;
  // else the instance whose squared norm or robust loss overflowed, or, where every
  // instance's cost is finite, that their sum overflowed and which instance is largest.
  std::string why_cost_not_finite() const;

  // Cost, g = Jᵀr (tangent_dim doubles) and H = JᵀJ over the free variables (H must have
  // layout.pattern). Returns the cost. With scale (tangent_dim doubles) H is returned as
  // diag(scale) H diag(scale) (Levenberg–Marquardt's Jacobi scaling), each block scaled as
  // its sum completes, while it is in cache. Every value of g and H is overwritten: a
  // destination's first source is copied, not added to zero.
  double normal_equations(const State& state, double* g, linear::BlockSparseSymmetric& H,
                          const double* scale = nullptr);
  // H ← diag(scale) H diag(scale) for an H that normal_equations returned unscaled: the same
  // arithmetic, block by block, so that H scaled afterwards equals H evaluated with scale.
  void scale(const double* scale, linear::BlockSparseSymmetric& H) const;

 private:
  struct Task {  // instances [begin, end) of one group
    uint32_t group;
    int64_t begin, end;
  };
  // The sources of one destination (H block or free variable) inside one wave.
  struct Gather {
    uint32_t destination;  // H: stored block of layout.pattern; g: free variable
    uint32_t count;        // sources
    uint32_t size;         // doubles summed into the destination (packed for a diagonal block)
    uint64_t first;        // first source in layout.h_sources / g_sources and in the offsets
    bool h;                // an H block (else a g segment)
    bool plain;            // no transpose, no loss, the destination's shape: a straight sum
    bool opens, closes;    // the destination's first (last) gather, over all waves
    bool unpacks;          // closes a diagonal H block, which it unpacks
  };
  struct Wave {
    int64_t begin, end;                 // its instances, across groups
    size_t first_task, last_task;       // its kernel tasks, [first, last)
    std::vector<int64_t> group_begin;   // per group: first local instance in the wave
    std::vector<std::vector<uint64_t>> array_base;  // per group, per output array: offset
                                                    // of its block in the wave buffer
    // Its assembly tasks: runs of gathers [assembly[k], assembly[k+1]) in `gathers_`.
    std::vector<size_t> assembly;
    std::vector<uint32_t> direct;  // the H blocks its kernels write directly (to scale)
  };
  // A scattered block written straight into H: its table entry and H's offset.
  struct DirectBlock {
    uint32_t group, array;
    int64_t instance;     // local to the group
    uint64_t h_offset;    // in H's values()
  };
  // Per group and output array, what the set-up's loops over sources ask of a source.
  struct SourceFlags {
    enum : uint8_t { kNoLoss = 1, kPacked = 2, kScattered = 4 };
    std::vector<uint8_t> flags;  // [group * arrays_per_group + array]
    size_t arrays_per_group = 0;
    uint8_t operator()(const Source& s) const { return flags[s.group * arrays_per_group + s.array]; }
  };
  // The constructor's steps, in order (evaluator.cpp).
  void plan_waves();
  void fill_scatter_tables();
  SourceFlags source_flags() const;
  std::vector<bool> list_direct_blocks(const SourceFlags& flags);
  std::vector<size_t> list_gathers(const SourceFlags& flags, const std::vector<bool>& direct_destination);
  void cut_assembly_tasks(const std::vector<size_t>& wave_first);

  void add_gather(const Wave& wave, const Gather& gather, double* values, double* g, const double* scale);
  // The H part of add_gather, for gathers that are not plain (normal_equations sums the
  // plain ones itself): the sources, transposed or robustified, summed into dst (a rows x
  // cols block), which is zeroed first when the gather opens the destination.
  void sum_h_sources(const Wave& wave, const Gather& gather, double* dst, uint32_t rows, uint32_t cols);
  // H block d (of values) ← diag(scale) block diag(scale): the Jacobi scaling of one block,
  // the same arithmetic wherever it is applied.
  void scale_h_block(uint32_t d, double* values, const double* scale) const;
  // Diagonal blocks of H are summed as packed upper triangles, like the kernels' diagonal
  // outputs (compiler/kernel.h), in the first entries of the block; their last gather
  // unpacks them to the full block. A source is packed when it is an H[v,v] output.
  bool diagonal(uint32_t d) const { return h_block_row_[d] == layout_.pattern->col(d); }
  bool packed_source(const Source& s) const;
  uint32_t accumulated_size(uint32_t d) const;  // doubles summed into block d
  // After a diagonal block's last source: its packed upper triangle to the full block.
  void unpack_h_block(uint32_t d, double* values) const;
  // What follows summing an H gather's sources: on the destination's last gather, the
  // unpacking of a diagonal block, then the Jacobi scaling when `scale`.
  void finish_h_gather(const Gather& gather, double* values, const double* scale) const {
    if (gather.unpacks) unpack_h_block(gather.destination, values);
    if (scale != nullptr && gather.closes) scale_h_block(gather.destination, values, scale);
  }
  void run_kernel(uint32_t group, const compiler::Kernel& kernel, int64_t begin, int64_t end,
                  int64_t shift, const State& state, double* const* outputs,
                  double* const* const* scatter = nullptr);
  // Points the direct blocks' table entries at H's values, if they point elsewhere.
  void point_direct_blocks_at(double* values);
  double residual_cost(const State& state, bool constraints);
  uint64_t offset(const Wave& wave, const Source& s, uint32_t array) const;
  const double* source(const Wave& wave, const Source& s, uint32_t array) const;

  const ProblemLayout& layout_;
  ThreadPool& pool_;
  const bool apply_losses_;
  // Whether group kg's instances are robustified in this evaluator.
  bool robust(const KernelGroup& kg) const { return apply_losses_ && !kg.losses.empty(); }
  std::vector<Task> residual_tasks_, normal_tasks_;
  std::vector<const double*> data_;  // per group
  std::vector<Wave> waves_;
  std::vector<std::vector<uint32_t>> per_instance_;  // per group, per output array
  BigVector<double> residual_buffer_, wave_buffer_, partial_;
  std::vector<detail::Correction> corrections_;  // per instance of the current wave
  int64_t wave_instances_ = 0;
  BigVector<Gather> gathers_;  // H's and g's, wave by wave
  // Per source of layout.h_sources / g_sources: its block's offset in the wave buffer.
  BigVector<WaveOffset> h_offset_, g_offset_;
  // Per stored block of H: its block row (its column is the pattern's). Scalar offsets,
  // two int64 per block, would be four times the fresh pages every set-up faults in.
  BigVector<int32_t> h_block_row_;
  // The H blocks and free variables no source reaches (none in practice): zeroed per call.
  std::vector<uint32_t> h_unreached_, g_unreached_;
  // Per group, per output array: for a scattered array, each instance's block pointer
  // (into the wave buffer, or into H for a direct block); empty otherwise.
  std::vector<std::vector<BigVector<double*>>> scatter_;
  BigVector<DirectBlock> direct_;
  double* direct_values_ = nullptr;        // the H values direct_ points into
};

}  // namespace lsjit::detail
