// lsjit costs inside a Ceres problem, so that a Ceres user can switch one residual at a time.
// Built only where Ceres (2.1 or later) is installed: target lsjit_ceres.
//
//   auto reprojection = lsjit::cost("reprojection",
//       [](const auto& v, lsjit::VecVar<9> cam, lsjit::VecVar<3> pt, const auto& obs) {...});
//   ceres::CostFunction* f = lsjit::ceres_cost_function(reprojection, lsjit::VecVar<9>(),
//                                                       lsjit::VecVar<3>(), observation);
//   problem.AddResidualBlock(f, nullptr, camera, point);           // Ceres takes ownership
//
//   problem.AddParameterBlock(pose, 7, lsjit::ceres_manifold<lsjit::SE3Var>());
//
// ceres_cost_function(cost, args...) takes the arguments of one Problem::add instance:
// variable handles, whose types (in order) are those of the parameter blocks given to
// AddResidualBlock (their IDs are ignored: Ceres knows blocks by pointer), and data values,
// which are copied into the function. It returns a new CostFunction owned by the caller.
//   parameter_block_sizes  the ambient size of each variable (ScalarVar 1, VecVar<N> N,
//                          SO2 2, SE2 4, SO3 4, SE3 7); a block holds the variable's
//                          parameters in lsjit's layout (docs/variables.md)
//   num_residuals          the cost's residual dimension
//   Evaluate               residuals, and the Jacobians Ceres asks for (null entries are
//                          constant blocks): row-major, residuals x AMBIENT parameters,
//                          as Ceres wants them. Thread safe (Ceres' num_threads). Returns
//                          false when a residual is not finite, so Ceres rejects that
//                          point as it does for a functor returning false.
//
// Jacobians of Lie-group variables. Ceres differentiates with respect to the ambient
// parameters p of a block and applies the block's Manifold itself (J_tangent = J_ambient ·
// PlusJacobian). lsjit kernels are differentiated in the tangent space (x ⊞ δ at δ = 0).
// For ScalarVar and VecVar the two coincide. For a Lie-group variable, ceres_cost_function
// traces the cost with v[x] = from_params(p + δ), δ of the ambient size (trace_ambient
// below; the slot's type is "<name>.ambient", e.g. SE3.ambient, in the IR and the cache
// key), so its kernel's Jacobian is ∂r/∂p, the true derivative of the cost's formula —
// what AutoDiffCostFunction gives for a functor on the same parameters. It is therefore
// right with any Manifold on the block; with ceres_manifold<Var>() the product Ceres forms
// is exactly lsjit's tangent Jacobian (chain rule through p(x ⊞ δ)), so Ceres takes the
// steps lsjit's solver would. (The alternative, J_tangent · pinv(PlusJacobian), is right
// only with lsjit's manifold and needs a pseudo-inverse per evaluation.)
//
// Tracing and kernels. A cost is traced once per cost object: same closure type, argument
// types, name, kind and, for a trivially copyable closure, captured bytes (Problem::add's
// rule); a closure that is not trivially copyable is traced at every call. Its Residual
// and ResidualJacobian kernels come from compiler::default_cache(), keyed by static
// structure, so every residual block of one cost shares one kernel and the number of blocks
// never causes a compile. Kernels traced here stay loaded until the process exits.
//
// Errors (lsjit::Error): a constraint cost (Ceres has no constraints), a cost with no
// variable or more than kMaxCeresVariables variables, or any tracing or compile error.
//
// ceres_manifold<Var>() for a Lie-group Var returns a new Manifold owned by the caller
// (one may serve many blocks; ceres::Problem takes ownership by default):
//   Plus(x, δ)         x ⊞ δ = x · exp(δ), renormalized: the step of lsjit's solver
//   PlusJacobian(x)    ∂(x ⊞ δ)/∂δ at δ = 0, ambient x tangent, row-major
//   Minus(y, x)        log(x⁻¹ y), so Minus(Plus(x, δ), x) = δ (for |δ| below π)
//   MinusJacobian(x)   ∂Minus(y, x)/∂y at y = x, tangent x ambient; MinusJacobian(x) ·
//                      PlusJacobian(x) = I
// Both Jacobians are evaluated by lsjit kernels of the traced retraction and logarithm.
#pragma once

#include <ceres/cost_function.h>
#include <ceres/manifold.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/cost.h"
#include "lsjit/runtime/data_traits.h"
#include "lsjit/runtime/variables.h"

namespace lsjit {

inline constexpr size_t kMaxCeresVariables = 16;

// Variables whose tangent space is their parameter space (x ⊞ δ = x + δ).
template <class Var>
struct is_euclidean_variable : std::false_type {};
template <int N>
struct is_euclidean_variable<VecVar<N>> : std::true_type {};
template <>
struct is_euclidean_variable<ScalarVar> : std::true_type {};

// The slot type name of Var in an ambient trace: Var::kName for Euclidean variables (the
// trace is then the ordinary one), "<kName>.ambient" for the others.
template <class Var>
std::string ambient_type_name() {
  if constexpr (is_euclidean_variable<Var>::value) return std::string(Var::kName);
  else return std::string(Var::kName) + ".ambient";
}

// What `v` is inside a cost traced by trace_ambient: v[x] = from_params(p + δ).
class AmbientValues {
 public:
  explicit AmbientValues(const Tracer& tracer) : tracer_(tracer) {}

  template <class Var>
    requires is_variable_v<Var>
  typename Var::template Value<Sym> operator[](const Var& var) const {
    const uint32_t slot = detail::checked_slot(tracer_, var.id, ambient_type_name<Var>());
    Eigen::Matrix<Sym, Var::kAmbient, 1> params;
    for (int i = 0; i < Var::kAmbient; ++i) params(i) = tracer_.var(slot, i) + tracer_.tangent(slot, i);
    return Var::template from_params<Sym>(params);
  }

 private:
  const Tracer& tracer_;
};

// The cost traced over the ambient parameters of its variables: every variable slot has
// tangent dimension = ambient dimension and v[x] = from_params(p + δ). Its Jacobian is
// ∂r/∂p. For costs of Euclidean variables only, the result equals lsjit::trace's.
template <class F, class... Args>
ir::Trace trace_ambient(const Cost<F>& cost, const Args&...) {
  ir::Signature sig;
  sig.name = cost.name;
  sig.kind = cost.kind;
  auto declare = [&]<class Arg>(std::type_identity<Arg>) {
    using T = data_type_t<Arg>;
    if constexpr (is_variable_v<T>) {
      const size_t i = sig.vars.size();
      sig.vars.push_back({i < cost.var_names.size() ? cost.var_names[i] : "x" + std::to_string(i),
                          ambient_type_name<T>(), T::kAmbient, T::kAmbient});
    } else {
      detail::declare<Arg>(sig, cost.var_names, cost.data_names);
    }
  };
  (declare(std::type_identity<Args>{}), ...);
  Tracer tracer(std::move(sig));
  uint32_t var_slot = 0, data_slot = 0;
  // Braced initialization evaluates the arguments left to right.
  std::tuple<decltype(detail::traced_argument<Args>(tracer, var_slot, data_slot))...> args{
      detail::traced_argument<Args>(tracer, var_slot, data_slot)...};
  AmbientValues values(tracer);
  auto result = std::apply([&](auto&... a) { return cost.function(values, a...); }, args);
  std::vector<Sym> residual;
  detail::append_residual(residual, result);
  tracer.set_residual(residual);
  return tracer.finish();
}

namespace detail {

// The kernels of one ambient-traced cost, shared by all its CeresCostFunctions.
struct CeresKernels {
  std::string name;                                  // the cost's
  std::shared_ptr<const compiler::Kernel> residual;  // KernelMode::Residual
  std::shared_ptr<const compiler::Kernel> jacobian;  // KernelMode::ResidualJacobian
  std::vector<int32_t> block_sizes;                  // ambient size per variable slot
  int num_residuals = 0;
  size_t data_size = 0;                              // doubles of data per instance
};

// Checks that `ambient` (from trace_ambient) is usable in Ceres and gets its kernels from
// compiler::default_cache().
std::shared_ptr<const CeresKernels> make_ceres_kernels(const ir::Trace& ambient);

// Runs `kernel` on one instance: every slot reads row 0 of values[slot].
void run_one_instance(const compiler::Kernel& kernel, const double* const* values,
                      const double* data, double* const* outputs);

template <class Arg>
void flatten_data(std::vector<double>& out, const Arg& arg) {
  using T = data_type_t<Arg>;
  if constexpr (!is_variable_v<T>) {
    const size_t at = out.size();
    out.resize(at + DataTraits<T>::kRows * DataTraits<T>::kCols);
    DataTraits<T>::flatten(T(arg), out.data() + at);
  }
}

template <class F, class... Args>
std::shared_ptr<const CeresKernels> ceres_kernels_for(const Cost<F>& cost) {
  auto make = [&] {
    return make_ceres_kernels(std::apply([&](const auto&... example) { return trace_ambient(cost, example...); },
                                         std::tuple<data_type_t<Args>...>{}));
  };
  if constexpr (std::is_trivially_copyable_v<F>) {
    // One memo per (closure type, argument types); within it, by the rest of the identity.
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const CeresKernels>> memo;
    std::string identity = cost.name + '\0' + std::to_string(static_cast<int>(cost.kind)) + '\0' +
                           std::string(reinterpret_cast<const char*>(&cost.function), sizeof(F));
    for (const auto& names : {cost.var_names, cost.data_names})
      for (const auto& name : names) identity += '\0' + name;
    std::lock_guard lock(mutex);
    auto& kernels = memo[identity];
    if (!kernels) kernels = make();
    return kernels;
  } else {
    return make();
  }
}

}  // namespace detail

// A traced lsjit cost as a ceres::CostFunction (see the top of this file).
class CeresCostFunction final : public ceres::CostFunction {
 public:
  // `data`: one instance's data slots, flattened in signature order (DataTraits).
  CeresCostFunction(std::shared_ptr<const detail::CeresKernels> kernels, std::vector<double> data);

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override;

  const compiler::Kernel& residual_kernel() const { return *kernels_->residual; }
  const compiler::Kernel& jacobian_kernel() const { return *kernels_->jacobian; }

 private:
  std::shared_ptr<const detail::CeresKernels> kernels_;
  std::vector<double> data_;
};

template <class F, class... Args>
ceres::CostFunction* ceres_cost_function(const Cost<F>& cost, const Args&... args) {
  static_assert(sizeof...(Args) > 0, "lsjit::ceres_cost_function: pass the cost's variables and data");
  std::vector<double> data;
  (detail::flatten_data(data, args), ...);
  return new CeresCostFunction(detail::ceres_kernels_for<F, Args...>(cost), std::move(data));
}

// lsjit's retraction of a Lie-group variable as a ceres::Manifold (see the top of this file).
template <class Var>
class CeresManifold final : public ceres::Manifold {
  static_assert(is_variable_v<Var> && !is_euclidean_variable<Var>::value,
                "lsjit::CeresManifold: for Lie-group variables (SO2Var, SE2Var, SO3Var, SE3Var); "
                "Ceres treats blocks without a manifold as Euclidean, as VecVar and ScalarVar are");
  using Group = typename Var::template Value<double>;

 public:
  CeresManifold() : kernels_(kernels()) {}

  int AmbientSize() const override { return Var::kAmbient; }
  int TangentSize() const override { return Var::kTangent; }

  bool Plus(const double* x, const double* delta, double* x_plus_delta) const override {
    Var::retract_params(x, delta, x_plus_delta);
    return true;
  }
  bool PlusJacobian(const double* x, double* jacobian) const override {
    double params[Var::kAmbient];  // the residual output: x ⊞ 0, not needed
    double* outputs[] = {params, jacobian};
    detail::run_one_instance(*kernels_.plus, &x, nullptr, outputs);
    return true;
  }
  bool Minus(const double* y, const double* x, double* y_minus_x) const override {
    Eigen::Map<Eigen::Matrix<double, Var::kTangent, 1>> out(y_minus_x);
    out = group(x).local(group(y));
    return true;
  }
  bool MinusJacobian(const double* x, double* jacobian) const override {
    double zero[Var::kTangent];  // the residual output: Minus(x, x) = 0, not needed
    double* outputs[] = {zero, jacobian};
    detail::run_one_instance(*kernels_.minus, &x, x, outputs);
    return true;
  }

 private:
  struct Kernels {
    std::shared_ptr<const compiler::Kernel> plus;   // res = p(x ⊞ δ), J = ∂p/∂δ
    std::shared_ptr<const compiler::Kernel> minus;  // res = log(x⁻¹ y(p)), J = ∂/∂p, data x
  };
  static Group group(const double* p) {
    return Var::template from_params<double>(Eigen::Map<const Eigen::Matrix<double, Var::kAmbient, 1>>(p));
  }
  static const Kernels& kernels() {
    static const Kernels k = [] {
      const std::string name(Var::kName);
      const auto plus = cost("ceres_plus." + name, [](const auto& v, Var x) { return v[x].params(); });
      const auto minus = cost("ceres_minus." + name,
                              [](const auto& v, Var y, const auto& x) { return x.local(v[y]); });
      compiler::KernelCache& cache = compiler::default_cache();
      return Kernels{cache.get(trace(plus, Var()), compiler::KernelMode::ResidualJacobian),
                     cache.get(trace_ambient(minus, Var(), Group()), compiler::KernelMode::ResidualJacobian)};
    }();
    return k;
  }

  const Kernels& kernels_;
};

template <class Var>
ceres::Manifold* ceres_manifold() {
  return new CeresManifold<Var>();
}

}  // namespace lsjit
