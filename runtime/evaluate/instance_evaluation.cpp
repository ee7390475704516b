// AnalyzedProblem::evaluate_instances, all_instances and finite_difference_jacobians: the
// chosen instances through their groups' kernels, on inputs gathered for them alone (each
// variable slot gets its own value rows, so only the chosen instances' variables are read
// from the Values, and a perturbed copy of a variable is just another row).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <string>

#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/analyzed_problem.h"

namespace lsjit {
namespace {

// Kernel inputs for `count` evaluations of one group's kernels.
struct Batch {
  std::vector<std::vector<double>> values;    // per slot: rows of `ambient` doubles
  std::vector<std::vector<int32_t>> indices;  // per slot: the row evaluation k reads
  std::vector<double> data;                   // evaluation k's data at k * data_stride
  int64_t count = 0;
};

// The group's data row of instance i: the user's data (a constraint's kernels of c(x) take
// it without the multiplier and penalty a solve appends).
const double* data_row(const detail::KernelGroup& kg, int64_t i) {
  if (kg.kind == ir::CostKind::LeastSquares) return kg.data.data() + i * kg.data_stride;
  return kg.user_data.data() + i * kg.user_data_stride;
}

const compiler::Kernel& residual_kernel(const detail::KernelGroup& kg) {
  return kg.kind == ir::CostKind::LeastSquares ? *kg.residual : *kg.constraint;
}

// Group g's ResidualJacobian kernel, from the analyze() cache at first use.
const compiler::Kernel& jacobian_kernel(const detail::ProblemLayout& L, size_t g) {
  std::lock_guard lock(L.jacobian_mutex);
  std::shared_ptr<const compiler::Kernel>& k = L.jacobian_kernels.at(g);
  if (!k) {
    const detail::KernelGroup& kg = L.groups[g];
    const ir::Trace& traced = kg.kind == ir::CostKind::LeastSquares ? kg.traced : kg.constraint_traced;
    k = L.cache->get(traced, compiler::KernelMode::ResidualJacobian, L.compile);
  }
  return *k;
}

// Runs `kernel` on the batch: its output arrays, per_instance * count doubles each.
std::vector<std::vector<double>> run(const compiler::Kernel& kernel, const Batch& b) {
  const compiler::KernelLayout& layout = kernel.layout;
  std::vector<std::vector<double>> out;
  std::vector<double*> out_ptr;
  for (const compiler::OutputArray& a : layout.outputs) out.emplace_back(a.per_instance * b.count);
  for (auto& o : out) out_ptr.push_back(o.data());
  std::vector<const int32_t*> indices;
  std::vector<const double*> values;
  for (size_t s = 0; s < b.values.size(); ++s) {
    indices.push_back(b.indices[s].data());
    values.push_back(b.values[s].data());
  }
  compiler::KernelArgs args;
  args.begin = 0;
  args.end = b.count;
  args.indices = indices.data();
  args.values = values.data();
  args.data = b.data.empty() ? nullptr : b.data.data();
  args.outputs = out_ptr.data();
  kernel(args);
  return out;
}

// A number in a message, with %g's significant digits ("nan", "1e-09", not "0.000000").
std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

std::string describe(const detail::ProblemLayout& L, const CostInstance& c) {
  return "cost '" + L.groups[c.group].name + "' instance " + std::to_string(c.instance);
}

void check_selection(const detail::ProblemLayout& L, const std::vector<CostInstance>& which,
                     const std::string& function) {
  for (const CostInstance& c : which) {
    if (c.group >= L.groups.size())
      throw Error(function + ": group " + std::to_string(c.group) + " does not exist: expected a group below " +
                  std::to_string(L.groups.size()) + " (AnalyzedProblem::groups())");
    if (c.instance >= static_cast<size_t>(L.groups[c.group].instances))
      throw Error(function + ": instance " + std::to_string(c.instance) + " of group " + std::to_string(c.group) +
                  " (cost '" + L.groups[c.group].name + "') does not exist: the group has " +
                  std::to_string(L.groups[c.group].instances) + " instances");
  }
}

// The batch of instances `which` (all of group g), one evaluation each.
Batch gather(const detail::ProblemLayout& L, size_t g, const std::vector<CostInstance>& which,
             const Values& values, const std::string& function) {
  const detail::KernelGroup& kg = L.groups[g];
  Batch b;
  b.count = static_cast<int64_t>(which.size());
  b.values.resize(kg.slot_type.size());
  b.indices.resize(kg.slot_type.size());
  for (const CostInstance& c : which) {
    const auto i = static_cast<int64_t>(c.instance);
    for (size_t s = 0; s < kg.slot_type.size(); ++s) {
      const detail::TypeTable& table = L.types[kg.slot_type[s]];
      const int64_t id = table.ids[kg.rows[s][i]];
      const double* p = values.params(table.type->name, id);
      const std::string var = table.type->name + " variable " + std::to_string(id);
      if (!p) throw Error(function + ": no value for " + var + " (" + describe(L, c) + " uses it)");
      for (int a = 0; a < table.type->ambient; ++a)
        if (!std::isfinite(p[a]))
          throw Error(function + ": " + var + " (" + describe(L, c) + " uses it) has parameter " +
                      std::to_string(a) + " = " + number(p[a]) + ": expected finite values");
      b.indices[s].push_back(static_cast<int32_t>(b.values[s].size() / table.type->ambient));
      b.values[s].insert(b.values[s].end(), p, p + table.type->ambient);
    }
    const double* d = data_row(kg, i);
    b.data.insert(b.data.end(), d, d + kg.user_data_stride);
  }
  return b;
}

// Residuals, costs, weights and variables (blocks without Jacobians) of group g's `which`.
void evaluate_residuals(const detail::ProblemLayout& L, size_t g, const std::vector<CostInstance>& which,
                        const Batch& b, InstanceEvaluation* out) {
  const detail::KernelGroup& kg = L.groups[g];
  const std::vector<double> res = run(residual_kernel(kg), b)[0];
  const uint32_t R = kg.residual_dim;
  for (size_t k = 0; k < which.size(); ++k) {
    InstanceEvaluation& e = out[k];
    e.which = which[k];
    e.residuals = Eigen::Map<const Eigen::VectorXd>(res.data() + k * R, R);
    double s = 0;
    for (uint32_t r = 0; r < R; ++r) s += res[k * R + r] * res[k * R + r];
    e.squared_norm = s;
    e.cost = 0.5 * s;
    e.weight = 1;
    if (kg.kind != ir::CostKind::LeastSquares) {
      e.cost = 0;
    } else if (!kg.losses.empty()) {
      double rho[3];
      kg.losses[which[k].instance].evaluate(s, rho);
      e.cost = 0.5 * rho[0];
      e.weight = rho[1];
    }
    e.blocks.clear();
    for (size_t slot = 0; slot < kg.slot_type.size(); ++slot) {
      const detail::TypeTable& table = L.types[kg.slot_type[slot]];
      const int32_t row = kg.rows[slot][which[k].instance];
      e.blocks.push_back({table.type->name, table.ids[row], table.free_index[row] < 0, {}});
    }
  }
}

// For each group with instances in `which`: f(g, its instances, their places in `which`).
template <class F>
void by_group(const std::vector<CostInstance>& which, F&& f) {
  std::vector<size_t> order(which.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return which[a].group < which[b].group; });
  for (size_t first = 0; first < order.size();) {
    const size_t g = which[order[first]].group;
    std::vector<CostInstance> mine;
    std::vector<size_t> places;
    for (; first < order.size() && which[order[first]].group == g; ++first) {
      mine.push_back(which[order[first]]);
      places.push_back(order[first]);
    }
    f(g, mine, places);
  }
}

// Instances per finite-difference batch: bounds its memory (6·ΣT evaluations each).
constexpr size_t kDifferenceChunk = 256;

// The step for tangent component c of a variable at x: relative_step · max(1, |x_c|) for a
// Euclidean type (ambient == tangent: VecVar, ScalarVar), whose components have scales of
// their own (a BAL camera's focal length and distortion); relative_step · max(1, ‖x‖∞)
// for a Lie group, whose tangent components mix its parameters.
double step(const VariableType& t, const double* x, int c, double relative_step) {
  if (t.ambient == t.tangent) return relative_step * std::max(1.0, std::abs(x[c]));
  double norm = 0;
  for (int a = 0; a < t.ambient; ++a) norm = std::max(norm, std::abs(x[a]));
  return relative_step * std::max(1.0, norm);
}

// The rounding probes: per tangent component, the residual at x ⊞ jη e_c for these j, with
// η = kProbeSpacing·h. Over so small a spacing the residual is a cubic to far below
// rounding, so the fourth difference f(−2) − 4f(−1) + 6f(0) − 4f(1) + f(2) (f(0) the
// instance's own residual) is rounding alone: with independent errors of deviation σ its
// deviation is √70·σ.
constexpr double kProbeOffsets[] = {-2.0, -1.0, 1.0, 2.0};
constexpr size_t kProbes = std::size(kProbeOffsets);
constexpr size_t kEvaluationsPerComponent = 2 + kProbes;
constexpr double kProbeSpacing = 1e-3;

// The central-difference batch of `base` (one evaluation per instance): per instance k,
// kEvaluationsPerComponent·ΣT evaluations, for slot s in order, component c in order,
// x_s ⊞ +h e_c, x_s ⊞ −h e_c and the probes x_s ⊞ jη e_c (the type's retraction), with the
// other slots at the instance's own rows. steps gets each component's h, in that order.
Batch perturbed(const detail::ProblemLayout& L, const detail::KernelGroup& kg, const Batch& base,
                double relative_step, std::vector<double>& steps) {
  const size_t n = kg.slot_type.size();
  Batch p;
  p.values = base.values;  // rows 0..count-1 stay the instances' own
  p.indices.resize(n);
  steps.clear();
  for (int64_t k = 0; k < base.count; ++k) {
    for (size_t s = 0; s < n; ++s) {
      const VariableType& t = *L.types[kg.slot_type[s]].type;
      const double* x = base.values[s].data() + k * t.ambient;
      std::vector<double> delta(static_cast<size_t>(t.tangent), 0.0);
      for (int c = 0; c < t.tangent; ++c) {
        const double h = steps.emplace_back(step(t, x, c, relative_step));
        for (const double offset : {1.0, -1.0, kProbeSpacing * kProbeOffsets[0], kProbeSpacing * kProbeOffsets[1],
                                    kProbeSpacing * kProbeOffsets[2], kProbeSpacing * kProbeOffsets[3]}) {
          delta[c] = offset * h;
          const size_t row = p.values[s].size() / static_cast<size_t>(t.ambient);
          p.values[s].resize(p.values[s].size() + static_cast<size_t>(t.ambient));
          t.retract(x, delta.data(), p.values[s].data() + row * static_cast<size_t>(t.ambient));
          for (size_t other = 0; other < n; ++other)
            p.indices[other].push_back(static_cast<int32_t>(other == s ? row : static_cast<size_t>(k)));
          const double* d = base.data.data() + k * kg.user_data_stride;
          p.data.insert(p.data.end(), d, d + kg.user_data_stride);
          ++p.count;
        }
        delta[c] = 0;
      }
    }
  }
  return p;
}

// The Jacobian blocks of `out` (the instances of `base`, in order) from central differences,
// and each entry's rounding allowance: kRoundingDeviations deviations of the difference
// quotient's rounding error, σ/(√2·h) for residual row noise σ, where σ is the largest
// fourth-difference estimate of the row over all of the instance's components (one
// estimate alone can be 0 by chance).
constexpr double kRoundingDeviations = 4.0;

void difference_jacobians(const detail::ProblemLayout& L, const detail::KernelGroup& kg, const Batch& base,
                          double relative_step, InstanceEvaluation* const* out) {
  std::vector<double> steps;
  const Batch p = perturbed(L, kg, base, relative_step, steps);
  const std::vector<double> res = run(residual_kernel(kg), p)[0];
  const size_t n = kg.slot_type.size(), R = kg.residual_dim;
  const size_t per_component = kEvaluationsPerComponent;
  size_t e = 0;  // first evaluation of the current component, in perturbed()'s order
  std::vector<double> noise(R);
  for (int64_t k = 0; k < base.count; ++k) {
    std::fill(noise.begin(), noise.end(), 0.0);
    const Eigen::VectorXd& f0 = out[k]->residuals;
    const size_t first = e;
    for (size_t s = 0; s < n; ++s) {
      const int T = L.types[kg.slot_type[s]].type->tangent;
      RowMajorMatrix& J = out[k]->blocks[s].jacobian;
      J.resize(static_cast<Eigen::Index>(R), T);
      for (int c = 0; c < T; ++c, e += per_component) {
        const double* plus = &res[e * R];
        const double* minus = &res[(e + 1) * R];
        const double* probe = &res[(e + 2) * R];  // offsets −2, −1, 1, 2
        for (size_t r = 0; r < R; ++r) {
          J(static_cast<Eigen::Index>(r), c) = (plus[r] - minus[r]) / (2 * steps[e / per_component]);
          const double fourth = probe[r] - 4 * probe[R + r] + 6 * f0(static_cast<Eigen::Index>(r)) -
                                4 * probe[2 * R + r] + probe[3 * R + r];
          noise[r] = std::max(noise[r], std::abs(fourth) / std::sqrt(70.0));
        }
      }
    }
    for (size_t s = 0, c0 = first; s < n; ++s) {
      const int T = L.types[kg.slot_type[s]].type->tangent;
      RowMajorMatrix& rounding = out[k]->blocks[s].rounding;
      rounding.resize(static_cast<Eigen::Index>(R), T);
      for (int c = 0; c < T; ++c, c0 += per_component)
        for (size_t r = 0; r < R; ++r)
          rounding(static_cast<Eigen::Index>(r), c) =
              kRoundingDeviations * noise[r] / (std::sqrt(2.0) * steps[c0 / per_component]);
    }
  }
}

}  // namespace

std::vector<CostInstance> AnalyzedProblem::all_instances() const {
  std::vector<CostInstance> out;
  for (size_t g = 0; g < layout().groups.size(); ++g)
    for (int64_t i = 0; i < layout().groups[g].instances; ++i) out.push_back({g, static_cast<size_t>(i)});
  return out;
}

std::vector<InstanceEvaluation> AnalyzedProblem::evaluate_instances(const Values& values,
                                                                    const std::vector<CostInstance>& which,
                                                                    bool jacobians) const {
  const detail::ProblemLayout& L = layout();
  const std::string function = "lsjit::AnalyzedProblem::evaluate_instances";
  check_selection(L, which, function);
  std::vector<InstanceEvaluation> out(which.size());
  by_group(which, [&](size_t g, const std::vector<CostInstance>& mine, const std::vector<size_t>& places) {
    const Batch b = gather(L, g, mine, values, function);
    std::vector<InstanceEvaluation> got(mine.size());
    evaluate_residuals(L, g, mine, b, got.data());
    if (jacobians) {
      const std::vector<std::vector<double>> rj = run(jacobian_kernel(L, g), b);
      const uint32_t R = L.groups[g].residual_dim;
      for (size_t k = 0; k < mine.size(); ++k)
        for (size_t s = 0; s < got[k].blocks.size(); ++s) {
          const int T = L.types[L.groups[g].slot_type[s]].type->tangent;
          got[k].blocks[s].jacobian = Eigen::Map<const RowMajorMatrix>(rj[1 + s].data() + k * R * T, R, T);
        }
    }
    for (size_t k = 0; k < mine.size(); ++k) out[places[k]] = std::move(got[k]);
  });
  return out;
}

std::vector<InstanceEvaluation> AnalyzedProblem::finite_difference_jacobians(
    const Values& values, const std::vector<CostInstance>& which, double relative_step) const {
  const detail::ProblemLayout& L = layout();
  const std::string function = "lsjit::AnalyzedProblem::finite_difference_jacobians";
  if (!(relative_step > 0) || !std::isfinite(relative_step))
    throw Error(function + ": relative_step is " + number(relative_step) +
                ": expected a positive, finite step");
  check_selection(L, which, function);
  std::vector<InstanceEvaluation> out = evaluate_instances(values, which, false);
  by_group(which, [&](size_t g, const std::vector<CostInstance>& mine, const std::vector<size_t>& places) {
    for (size_t first = 0; first < mine.size(); first += kDifferenceChunk) {
      const size_t last = std::min(mine.size(), first + kDifferenceChunk);
      const std::vector<CostInstance> chunk(mine.begin() + static_cast<ptrdiff_t>(first),
                                            mine.begin() + static_cast<ptrdiff_t>(last));
      std::vector<InstanceEvaluation*> targets;
      for (size_t k = first; k < last; ++k) targets.push_back(&out[places[k]]);
      difference_jacobians(L, L.groups[g], gather(L, g, chunk, values, function), relative_step, targets.data());
    }
  });
  return out;
}

}  // namespace lsjit
