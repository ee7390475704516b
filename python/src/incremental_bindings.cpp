// lsjit.IncrementalSolver's native half (python/lsjit/incremental.py has the Python API):
// the C++ IncrementalSolver, whose update() runs without the GIL (a new Python cost type is
// traced with it taken back, as analyze() does).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "lsjit/runtime/incremental_solver.h"
#include "python/src/bindings.h"

namespace lsjit::python {

namespace {

py::dict summary_dict(const UpdateSummary& s) {
  py::dict d;
  d["linearize_s"] = s.linearize_s;
  d["factor_s"] = s.factor_s;
  d["solve_s"] = s.solve_s;
  d["total_s"] = s.total_s;
  d["variables_added"] = s.variables_added;
  d["costs_added"] = s.costs_added;
  d["costs_removed"] = s.costs_removed;
  d["variables_relinearized"] = s.variables_relinearized;
  d["variables_reeliminated"] = s.variables_reeliminated;
  d["cliques_refactored"] = s.cliques_refactored;
  d["front_entries"] = s.front_entries;
  d["cliques_backsubstituted"] = s.cliques_backsubstituted;
  d["variables_changed"] = s.variables_changed;
  d["traces"] = s.traces;
  d["compiles"] = s.compiles;
  d["full_refactor"] = s.full_refactor;
  return d;
}

}  // namespace

void bind_incremental(py::module_& m) {
  py::class_<IncrementalSolver>(m, "IncrementalSolver")
      .def(py::init([](double relinearize_threshold, int relinearize_skip, double wildfire_threshold) {
             IncrementalOptions o;
             o.relinearize_threshold = relinearize_threshold;
             o.relinearize_skip = relinearize_skip;
             o.wildfire_threshold = wildfire_threshold;
             return IncrementalSolver(o);
           }),
           py::arg("relinearize_threshold") = IncrementalOptions{}.relinearize_threshold,
           py::arg("relinearize_skip") = IncrementalOptions{}.relinearize_skip,
           py::arg("wildfire_threshold") = IncrementalOptions{}.wildfire_threshold)
      // `costs` is emptied (moved into the solver), as C++'s update(Problem&&) takes it.
      .def("update",
           [](IncrementalSolver& solver, Problem& costs, const Values& new_values,
              const std::vector<std::pair<uint32_t, uint32_t>>& removed) {
             std::vector<CostHandle> handles;
             for (const auto& [kind, instance] : removed) handles.push_back({kind, instance});
             UpdateSummary s;
             {
               NativeCall call;
               s = solver.update(std::move(costs), new_values, handles);
             }
             return summary_dict(s);
           })
      .def_property_readonly("last_added",
                             [](const IncrementalSolver& solver) {
                               std::vector<std::pair<uint32_t, uint32_t>> out;
                               for (const CostHandle& h : solver.last_added()) out.emplace_back(h.kind, h.instance);
                               return out;
                             })
      .def("estimate", [](const IncrementalSolver& solver) { return Values(solver.estimate()); })
      .def("linearization_point", [](const IncrementalSolver& solver) { return Values(solver.linearization_point()); })
      .def("cost", [](const IncrementalSolver& solver) { return solver.cost(); })
      .def_property_readonly("num_variables", &IncrementalSolver::num_variables)
      .def_property_readonly("num_costs", &IncrementalSolver::num_costs)
      .def_property_readonly("traces", &IncrementalSolver::traces)
      .def_property_readonly("compiles", &IncrementalSolver::compiles);
}

}  // namespace lsjit::python
