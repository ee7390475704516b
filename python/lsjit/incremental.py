"""Online solving, as GTSAM's ISAM2 does it (C++: lsjit::IncrementalSolver; docs/incremental.md).

    solver = lsjit.IncrementalSolver()
    for k in range(frames):
        values = lsjit.Values({lsjit.SE2Var(k): guess(k)})
        costs = lsjit.Problem()
        costs.add(between, lsjit.SE2Var(k - 1), lsjit.SE2Var(k), z[k], U)
        summary = solver.update(costs, values)          # a dict: times, counts
        pose = solver.estimate()[lsjit.SE2Var(k)]

Each update adds the given costs and new variables (only new ones), re-eliminates the part
of the factor they reach, and takes one Gauss-Newton step; a cost type seen before is
neither traced nor compiled again. The Problem passed in is consumed (left empty). The
update runs without the GIL, except while a new Python cost type is traced.
"""
from . import _lsjit
from ._lsjit import InputError
from .problem import Problem, Values


class IncrementalSolver:
    """lsjit::IncrementalSolver. Thresholds as IncrementalOptions' (GTSAM ISAM2Params' names:
    relinearizeThreshold 0.1, relinearizeSkip 10, wildfireThreshold 1e-3 for its defaults)."""

    def __init__(self, relinearize_threshold=0.03, relinearize_skip=5, wildfire_threshold=1e-4):
        self._solver = _lsjit.IncrementalSolver(relinearize_threshold, relinearize_skip, wildfire_threshold)

    def update(self, costs=None, new_values=None, removed=()):
        """Adds `costs` (an lsjit.Problem, or an iterable of cost instances) and `new_values`
        (an lsjit.Values of new variables), removes the cost handles `removed` (from
        last_added), and returns the update's summary as a dict."""
        problem = costs if isinstance(costs, Problem) else Problem(costs or ())
        values = Values() if new_values is None else new_values
        if not isinstance(values, Values):
            raise InputError(f"lsjit.IncrementalSolver.update: new_values are an lsjit.Values, got "
                             f"{type(values).__name__}")
        handles = []
        for h in removed:
            try:
                kind, instance = h
                handles.append((int(kind), int(instance)))
            except (TypeError, ValueError):
                raise InputError(f"lsjit.IncrementalSolver.update: a removed handle is a (kind, instance) pair "
                                 f"from last_added, got {h!r}") from None
        problem._check_not_analyzing("update")
        problem._analyzing = True
        try:
            summary = self._solver.update(problem._problem, values._values, handles)
        finally:
            problem._analyzing = False
        problem._problem = _lsjit.Problem()
        problem._variables = {}
        return summary

    @property
    def last_added(self):
        """(kind, instance) handles of the last update's cost instances, in the order added."""
        return self._solver.last_added

    def estimate(self):
        """theta (+) delta for every variable, as an lsjit.Values (a copy)."""
        v = Values()
        v._values = self._solver.estimate()
        return v

    def linearization_point(self):
        v = Values()
        v._values = self._solver.linearization_point()
        return v

    def cost(self):
        """1/2 sum rho(|r|^2) of the live costs at the estimate."""
        return self._solver.cost()

    num_variables = property(lambda self: self._solver.num_variables)
    num_costs = property(lambda self: self._solver.num_costs)
    traces = property(lambda self: self._solver.traces)
    compiles = property(lambda self: self._solver.compiles)
