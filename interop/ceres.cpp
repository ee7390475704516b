// The non-template half of interop/ceres.h: checking an ambient trace, getting its
// kernels, and running a kernel on the one instance a Ceres residual block is.
#include "lsjit/interop/ceres.h"

#include <array>
#include <cmath>

namespace lsjit {
namespace detail {

std::shared_ptr<const CeresKernels> make_ceres_kernels(const ir::Trace& ambient) {
  const ir::Signature& sig = ambient.signature;
  if (sig.kind != CostKind::LeastSquares)
    throw Error("lsjit::ceres_cost_function(" + sig.name + "): a " +
                std::string(ir::cost_kind_name(sig.kind)) +
                " cost is a constraint; Ceres solves least-squares costs only");
  if (sig.vars.empty() || sig.vars.size() > kMaxCeresVariables)
    throw Error("lsjit::ceres_cost_function(" + sig.name + "): the cost has " +
                std::to_string(sig.vars.size()) + " variables; a Ceres cost function here takes 1 to " +
                std::to_string(kMaxCeresVariables));
  const auto got = compiler::default_cache().lookup_modes(
      ambient, {compiler::KernelMode::Residual, compiler::KernelMode::ResidualJacobian});
  auto k = std::make_shared<CeresKernels>();
  k->name = sig.name;
  k->residual = got[0].kernel;
  k->jacobian = got[1].kernel;
  for (const ir::VarSlot& v : sig.vars) k->block_sizes.push_back(static_cast<int32_t>(v.ambient));
  k->num_residuals = static_cast<int>(sig.residual_dim);
  k->data_size = k->jacobian->layout.data_stride;
  return k;
}

void run_one_instance(const compiler::Kernel& kernel, const double* const* values, const double* data,
                      double* const* outputs) {
  // Absolute instance 0 reads row indices[s][0] = 0 of each slot: the block itself.
  static const int32_t kRowZero = 0;
  std::array<const int32_t*, kMaxCeresVariables> indices;
  indices.fill(&kRowZero);
  compiler::KernelArgs args;
  args.begin = 0;
  args.end = 1;
  args.indices = indices.data();
  args.values = values;
  args.data = data;
  args.outputs = outputs;
  kernel(args);
}

}  // namespace detail

CeresCostFunction::CeresCostFunction(std::shared_ptr<const detail::CeresKernels> kernels,
                                     std::vector<double> data)
    : kernels_(std::move(kernels)), data_(std::move(data)) {
  if (data_.size() != kernels_->data_size)
    throw Error("lsjit::CeresCostFunction(" + kernels_->name +
                "): " + std::to_string(data_.size()) + " doubles of data for a cost that takes " +
                std::to_string(kernels_->data_size));
  set_num_residuals(kernels_->num_residuals);
  *mutable_parameter_block_sizes() = kernels_->block_sizes;
}

bool CeresCostFunction::Evaluate(double const* const* parameters, double* residuals,
                                 double** jacobians) const {
  const detail::CeresKernels& k = *kernels_;
  const double* data = data_.empty() ? nullptr : data_.data();
  std::array<double*, 1 + kMaxCeresVariables> outputs;
  outputs[0] = residuals;
  if (!jacobians) {
    detail::run_one_instance(*k.residual, parameters, data, outputs.data());
  } else {
    // The kernel writes every Jacobian block; those of constant blocks (null in
    // `jacobians`) go to scratch space.
    size_t scratch_size = 0;
    for (size_t v = 0; v < k.block_sizes.size(); ++v)
      if (!jacobians[v]) scratch_size += static_cast<size_t>(k.num_residuals) * k.block_sizes[v];
    std::array<double, 512> on_stack;
    std::vector<double> on_heap;
    double* scratch = on_stack.data();
    if (scratch_size > on_stack.size()) {
      on_heap.resize(scratch_size);
      scratch = on_heap.data();
    }
    for (size_t v = 0; v < k.block_sizes.size(); ++v) {
      if (jacobians[v]) {
        outputs[1 + v] = jacobians[v];
      } else {
        outputs[1 + v] = scratch;
        scratch += static_cast<size_t>(k.num_residuals) * k.block_sizes[v];
      }
    }
    detail::run_one_instance(*k.jacobian, parameters, data, outputs.data());
  }
  for (int r = 0; r < k.num_residuals; ++r)
    if (!std::isfinite(residuals[r])) return false;
  return true;
}

}  // namespace lsjit
