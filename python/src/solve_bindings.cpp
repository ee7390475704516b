// The solver as Python sees it, one level below the package's own API (python/lsjit/):
// variable types by name, Problem::add_runtime with a Python cost as the trace, Values
// by rows, AnalyzedProblem, SolverOptions with the C++ field names, and SolveSummary.
// analyze() (tracing aside) and solve() run without the GIL: the trace re-takes it only
// while the Python cost runs.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <string>

#include "lsjit/common/error.h"
#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/batch_solve.h"
#include "lsjit/runtime/covariance.h"
#include "lsjit/runtime/loss.h"
#include "lsjit/runtime/problem.h"
#include "lsjit/runtime/variable_types.h"
#include "python/src/bindings.h"

namespace lsjit::python {
namespace {

// A Python object that C++ may copy and drop without the GIL (a Problem's trace functions
// are copied and destroyed inside analyze(), which runs without it).
std::shared_ptr<py::object> gil_safe(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

ir::Signature signature_of(const std::string& name, const std::string& kind, const std::vector<const VariableType*>& types,
                           const std::vector<std::string>& var_names, const std::vector<py::tuple>& data_slots) {
  ir::Signature sig;
  sig.name = name;
  const auto k = ir::cost_kind_from_name(kind);
  if (!k)
    throw py::value_error("lsjit.cost: kind must be 'least_squares', 'equality', 'inequality_le' or "
                          "'inequality_ge', got '" + kind + "'");
  sig.kind = *k;
  for (size_t i = 0; i < types.size(); ++i)
    sig.vars.push_back({i < var_names.size() ? var_names[i] : "x" + std::to_string(i), types[i]->name,
                        static_cast<uint32_t>(types[i]->ambient), static_cast<uint32_t>(types[i]->tangent)});
  for (const py::tuple& d : data_slots)
    sig.data.push_back({d[0].cast<std::string>(), d[1].cast<std::string>(), d[2].cast<uint32_t>(), d[3].cast<uint32_t>()});
  return sig;
}

using IdArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using DataArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// Problem.add's C++ half: `ids` one array per variable slot (n IDs, or 1 shared), `data` one
// C-ordered array per data slot (n instances, or 1 shared; matrices row-major, as numpy
// holds them), copied once into the group without the GIL.
void add_cost(Problem& problem, const std::string& name, const std::string& identity, const std::string& kind,
              py::object trace, const std::vector<const VariableType*>& types, const std::vector<std::string>& var_names,
              const std::vector<py::tuple>& data_slots, const std::vector<IdArray>& ids,
              const std::vector<DataArray>& data, size_t n, std::optional<Loss> loss) {
  for (const VariableType* t : types)
    if (!t) throw py::type_error("lsjit: a variable type is None");
  if (data.size() != data_slots.size()) throw py::value_error("lsjit: one data array per data slot expected");
  RuntimeCost cost;
  cost.name = name;
  cost.identity = identity;
  const ir::Signature sig = signature_of(name, kind, types, var_names, data_slots);
  cost.kind = sig.kind;
  for (const ir::DataSlot& d : sig.data) cost.data_stride += d.size();
  cost.var_types = types;
  cost.trace = [sig, fn = gil_safe(std::move(trace))] { return trace_python(sig, *fn); };
  std::vector<std::span<const int64_t>> id_spans;
  for (const auto& a : ids) id_spans.emplace_back(a.data(), static_cast<size_t>(a.size()));
  std::vector<RuntimeDataSlot> slots;
  for (size_t k = 0; k < data.size(); ++k)
    slots.push_back({std::span<const double>(data[k].data(), static_cast<size_t>(data[k].size())), sig.data[k].rows,
                     sig.data[k].cols, true});
  NativeCall call;
  problem.add_runtime(cost, id_spans, slots, n, loss ? &*loss : nullptr);
}

void bind_problem(py::module_& m) {
  py::class_<VariableType>(m, "VariableType")
      .def_readonly("name", &VariableType::name)
      .def_readonly("layout", &VariableType::layout)
      .def_readonly("ambient", &VariableType::ambient)
      .def_readonly("tangent", &VariableType::tangent);
  m.def("variable_type", &builtin_variable_type, py::return_value_policy::reference, py::arg("name"));
  m.def("kind_type", [](const std::string& name, const VariableType& base) { return kind_variable_type(name, base); },
        py::return_value_policy::reference, py::arg("name"), py::arg("base"));

  py::class_<Loss>(m, "Loss")
      .def_property_readonly("name", [](const Loss& l) { return std::string(loss_name(l.kind)); })
      .def_readonly("scale", &Loss::scale);
  m.def("huber_loss", &HuberLoss, py::arg("scale"));
  m.def("soft_l_one_loss", &SoftLOneLoss, py::arg("scale"));
  m.def("cauchy_loss", &CauchyLoss, py::arg("scale"));
  m.def("arctan_loss", &ArctanLoss, py::arg("scale"));
  m.def("tukey_loss", &TukeyLoss, py::arg("scale"));

  py::class_<Problem>(m, "Problem")
      .def(py::init<>())
      .def("add", &add_cost, py::arg("name"), py::arg("identity"), py::arg("kind"), py::arg("trace"),
           py::arg("types"), py::arg("var_names"), py::arg("data_slots"), py::arg("ids"), py::arg("data"),
           py::arg("n"), py::arg("loss"))
      .def("set_constant", [](Problem& p, const std::string& type, int64_t id) { p.set_constant(type, id); })
      .def_property_readonly("num_instances", &Problem::num_instances)
      .def_property_readonly("num_groups", &Problem::num_groups)
      .def("analyze", [](const Problem& p) {
        NativeCall call;
        return p.analyze();
      });
}

void bind_values(py::module_& m) {
  py::class_<Values>(m, "Values")
      .def(py::init<>())
      .def("copy", [](const Values& v) { return Values(v); })
      .def("__len__", &Values::size)
      .def("set_rows", [](Values& v, const VariableType& type,
                          const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& ids,
                          const py::array_t<double, py::array::c_style | py::array::forcecast>& params) {
        const auto n = static_cast<size_t>(ids.size());
        if (static_cast<size_t>(params.size()) != n * static_cast<size_t>(type.ambient))
          raise_error("InputError", "lsjit.Values: " + std::to_string(n) + " " + type.name + " variables need " +
                                        std::to_string(n * static_cast<size_t>(type.ambient)) + " parameters (" +
                                        std::to_string(type.ambient) + " each), got " + std::to_string(params.size()));
        for (py::ssize_t k = 0; k < params.size(); ++k)
          if (!std::isfinite(params.data()[k]))
            raise_error("InputError", "lsjit.Values: the value of " + type.name + " variable " +
                                          std::to_string(ids.data()[static_cast<size_t>(k) / type.ambient]) +
                                          " is not finite (NaN or infinite)");
        try {
          for (size_t k = 0; k < n; ++k) Values::check_value(type, ids.data()[k], params.data() + k * type.ambient);
        } catch (const Error& e) {
          raise_error("InputError", e.what());
        }
        v.set_params_rows(&type, std::span<const int64_t>(ids.data(), n), params.data());
      })
      .def("get_rows", [](const Values& v, const VariableType& type,
                          const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& ids) {
        py::array_t<double> out(std::vector<py::ssize_t>{ids.size(), type.ambient});
        for (py::ssize_t k = 0; k < ids.size(); ++k) {
          const double* p = v.params(type.name, ids.data()[k]);
          if (!p)
            raise_error("MissingValueError", "lsjit.Values: no value for " + type.name + " variable " +
                                                 std::to_string(ids.data()[k]));
          std::copy(p, p + type.ambient, out.mutable_data() + k * type.ambient);
        }
        return out;
      })
      .def("has", [](const Values& v, const std::string& type, int64_t id) { return v.params(type, id) != nullptr; })
      .def("first_missing", [](const Values& v, const std::string& type, const IdArray& ids) -> int64_t {
        for (py::ssize_t k = 0; k < ids.size(); ++k)
          if (!v.params(type, ids.data()[k])) return ids.data()[k];
        return -1;
      }, "The first of `ids` without a value of type `type`, or -1.");
}

void bind_options(py::module_& m) {
  py::class_<SolverOptions> o(m, "SolverOptions");
  o.def(py::init<>())
      .def_property("linear_solver", [](const SolverOptions& s) { return std::string(linear_solver_name(s.linear_solver)); },
                    [](SolverOptions& s, const std::string& name) {
                      const auto solver = linear_solver_from_name(name);
                      if (!solver)
                        throw py::value_error("lsjit.SolverOptions.linear_solver: unknown solver '" + name +
                                              "' (expected auto, dense_cholesky, sparse_cholesky, eigen_sparse_cholesky, "
                                              "cg, subgraph_cg, dense_schur, sparse_schur or iterative_schur)");
                      s.linear_solver = *solver;
                    });
#define LSJIT_FIELD(F) o.def_readwrite(#F, &SolverOptions::F);
  LSJIT_FIELD(max_direct_factor_bytes)
  LSJIT_FIELD(max_direct_factorization_flops)
  LSJIT_FIELD(initial_trust_region_radius)
  LSJIT_FIELD(max_trust_region_radius)
  LSJIT_FIELD(min_trust_region_radius)
  LSJIT_FIELD(min_relative_decrease)
  LSJIT_FIELD(very_successful_radius_growth)
  LSJIT_FIELD(min_lm_diagonal)
  LSJIT_FIELD(max_lm_diagonal)
  LSJIT_FIELD(jacobi_scaling)
  LSJIT_FIELD(gauss_newton)
  LSJIT_FIELD(function_tolerance)
  LSJIT_FIELD(gradient_tolerance)
  LSJIT_FIELD(parameter_tolerance)
  LSJIT_FIELD(max_iterations)
  LSJIT_FIELD(max_time_s)
  LSJIT_FIELD(max_linear_iterations)
  LSJIT_FIELD(linear_relative_tolerance)
  LSJIT_FIELD(max_num_refinement_iterations)
  LSJIT_FIELD(speculative_evaluation)
  LSJIT_FIELD(num_threads)
  LSJIT_FIELD(verbose)
#undef LSJIT_FIELD
  o.def("validate", [](const SolverOptions& s) { return validate(s); });
}

void bind_summary(py::module_& m) {
  py::class_<SolveSummary> s(m, "SolveSummary");
#define LSJIT_FIELD(F) s.def_readonly(#F, &SolveSummary::F);
  LSJIT_FIELD(initial_cost)
  LSJIT_FIELD(final_cost)
  LSJIT_FIELD(iterations)
  LSJIT_FIELD(successful_steps)
  LSJIT_FIELD(unsuccessful_steps)
  LSJIT_FIELD(message)
  LSJIT_FIELD(warnings)
  LSJIT_FIELD(trace_s)
  LSJIT_FIELD(compile_s)
  LSJIT_FIELD(analyze_s)
  LSJIT_FIELD(solve_s)
  LSJIT_FIELD(total_s)
  LSJIT_FIELD(cache_hits)
  LSJIT_FIELD(cache_misses)
  LSJIT_FIELD(compiles)
  LSJIT_FIELD(linear_solver)
  LSJIT_FIELD(constraint_violation)
#undef LSJIT_FIELD
  s.def_property_readonly("termination", [](const SolveSummary& x) { return std::string(termination_name(x.termination)); })
      .def_property_readonly("converged", [](const SolveSummary& x) { return converged(x.termination); })
      .def_property_readonly("usable", &SolveSummary::usable)
      .def("report", &SolveSummary::report)
      .def("brief_report", &SolveSummary::brief_report)
      .def("json", &SolveSummary::json);
}

// Per cost group, in analyze()'s group order: its name, and per instance its residuals
// (before any loss), its cost (½ρ(‖r‖²)) and its loss weight ρ'.
py::list evaluate_groups(const AnalyzedProblem& a, Values v) {
  std::vector<InstanceEvaluation> all;
  {
    NativeCall call;
    all = a.evaluate_instances(v, a.all_instances(), false);
  }
  const auto groups = a.groups();
  py::list out;
  size_t k = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const size_t n = groups[g].instances, dim = groups[g].residual_dim;
    py::array_t<double> residuals(std::vector<py::ssize_t>{static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(dim)});
    py::array_t<double> costs(static_cast<py::ssize_t>(n)), weights(static_cast<py::ssize_t>(n));
    for (size_t i = 0; i < n; ++i, ++k) {
      std::copy(all[k].residuals.data(), all[k].residuals.data() + dim, residuals.mutable_data() + i * dim);
      costs.mutable_data()[i] = all[k].cost;
      weights.mutable_data()[i] = all[k].weight;
    }
    py::dict d;
    d["cost"] = groups[g].cost;
    d["residuals"] = residuals;
    d["costs"] = costs;
    d["weights"] = weights;
    out.append(d);
  }
  return out;
}

// check_gradients' result as a dict (the report included).
py::dict check_gradients_dict(const AnalyzedProblem& a, Values v, double step, double rtol, double atol) {
  GradientCheckOptions o;
  o.relative_step = step;
  o.relative_tolerance = rtol;
  o.absolute_tolerance = atol;
  GradientCheckResult r;
  {
    NativeCall call;
    r = a.check_gradients(v, o);
  }
  py::dict d;
  d["passed"] = r.passed;
  d["instances"] = r.instances;
  d["entries"] = r.entries;
  d["failed_entries"] = r.failed_entries;
  d["max_absolute_error"] = r.max_absolute_error;
  d["max_relative_error"] = r.max_relative_error;
  d["report"] = r.report();
  return d;
}

using VariablePair = std::pair<std::pair<std::string, int64_t>, std::pair<std::string, int64_t>>;

// compute_covariance's block for each (type, id) pair, in order.
std::vector<Eigen::MatrixXd> covariance_blocks(const AnalyzedProblem& a, Values v, const std::vector<VariablePair>& pairs,
                                               const std::string& algorithm, double min_rcond, bool apply_loss) {
  std::vector<std::pair<VariableRef, VariableRef>> refs;
  for (const auto& [x, y] : pairs) refs.push_back({VariableRef(x.first, x.second), VariableRef(y.first, y.second)});
  CovarianceOptions o;
  if (algorithm == "auto") o.algorithm = CovarianceOptions::Algorithm::Auto;
  else if (algorithm == "dense") o.algorithm = CovarianceOptions::Algorithm::Dense;
  else if (algorithm == "sparse") o.algorithm = CovarianceOptions::Algorithm::Sparse;
  else raise_error("InputError", "lsjit covariance: algorithm must be 'auto', 'dense' or 'sparse', got '" + algorithm + "'");
  o.min_reciprocal_condition_number = min_rcond;
  o.apply_loss_function = apply_loss;
  std::vector<Eigen::MatrixXd> blocks;
  NativeCall call;
  const Covariance c = compute_covariance(a, v, refs, o);
  for (const auto& [x, y] : refs) blocks.push_back(c.block(x, y));
  return blocks;
}

// AnalyzedProblem::groups() as dicts.
py::list group_infos(const AnalyzedProblem& a) {
  py::list out;
  for (const auto& g : a.groups()) {
    py::dict d;
    d["cost"] = g.cost;
    d["instances"] = g.instances;
    d["residual_dim"] = g.residual_dim;
    d["residual_kernel_id"] = g.residual_kernel_id;
    d["normal_equations_kernel_id"] = g.normal_equations_kernel_id;
    out.append(d);
  }
  return out;
}

void bind_analyzed(py::module_& m) {
  py::class_<AnalyzedProblem>(m, "AnalyzedProblem")
      // Values and options by value: copied with the GIL held, so that another thread may
      // change the Python objects while this one works without it.
      .def("solve", [](const AnalyzedProblem& a, Values initial, SolverOptions options) {
        SolveResult r;
        {
          NativeCall call;
          r = a.solve(initial, options);
        }
        return py::make_tuple(std::move(r.values), std::move(r.summary));
      }, py::arg("initial"), py::arg("options"))
      .def("cost", [](const AnalyzedProblem& a, Values v) {
        NativeCall call;
        return a.cost(v);
      })
      .def("evaluate", [](const AnalyzedProblem& a, Values v, bool gauss_newton) {
        AnalyzedProblem::Evaluation e;
        {
          NativeCall call;
          e = a.evaluate(v, gauss_newton);
        }
        return py::make_tuple(e.cost, e.gradient, gauss_newton ? py::cast(e.gauss_newton) : py::none());
      }, py::arg("values"), py::arg("gauss_newton"))
      .def("evaluate_groups", &evaluate_groups, py::arg("values"))
      .def("check_gradients", &check_gradients_dict, py::arg("values"), py::arg("relative_step"),
           py::arg("relative_tolerance"), py::arg("absolute_tolerance"))
      .def("free_variables", [](const AnalyzedProblem& a) {
        py::list out;
        for (const auto& f : a.free_variables()) out.append(py::make_tuple(f.type, f.id, f.offset, f.tangent));
        return out;
      })
      .def("covariance", &covariance_blocks, py::arg("values"), py::arg("pairs"), py::arg("algorithm"),
           py::arg("min_reciprocal_condition_number"), py::arg("apply_loss_function"))
      .def_property_readonly("num_instances", &AnalyzedProblem::num_instances)
      .def_property_readonly("tangent_dim", &AnalyzedProblem::tangent_dim)
      .def_property_readonly("trace_s", &AnalyzedProblem::trace_s)
      .def_property_readonly("compile_s", &AnalyzedProblem::compile_s)
      .def("groups", &group_infos);
}

py::list results_list(std::vector<SolveResult>&& results) {
  py::list out;
  for (SolveResult& r : results) out.append(py::make_tuple(std::move(r.values), std::move(r.summary)));
  return out;
}

// batch_solve.h's three, without the GIL while they run.
void bind_batches(py::module_& m) {
  m.def("solve_batch", [](const std::vector<const AnalyzedProblem*>& problems, const std::vector<Values>& initial,
                          const std::vector<SolverOptions>& options, int threads) {
    if (problems.size() != initial.size() || problems.size() != options.size())
      throw py::value_error("lsjit.solve_batch: as many problems, initial values and options expected");
    std::vector<BatchItem> items;
    for (size_t k = 0; k < problems.size(); ++k) items.push_back({problems[k], initial[k], options[k]});
    std::vector<SolveResult> results;
    {
      NativeCall call;
      results = solve_batch(items, threads);
    }
    return results_list(std::move(results));
  });
  m.def("sweep", [](const AnalyzedProblem& problem, Values initial, std::vector<SolverOptions> options, int threads) {
    std::vector<SolveResult> results;
    {
      NativeCall call;
      results = sweep(problem, initial, options, threads);
    }
    return results_list(std::move(results));
  });
  m.def("solve_sequence", [](const std::vector<const AnalyzedProblem*>& problems, Values initial,
                             SolverOptions options) {
    std::vector<SolveResult> results;
    {
      NativeCall call;
      results = solve_sequence(problems, initial, options);
    }
    return results_list(std::move(results));
  });
}

}  // namespace

void bind_solve(py::module_& m) {
  bind_problem(m);
  bind_values(m);
  bind_options(m);
  bind_summary(m);
  bind_analyzed(m);
  bind_batches(m);
}

}  // namespace lsjit::python
