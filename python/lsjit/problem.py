"""Problem, Values, SolverOptions and solving, shaped after the C++ API and jaxls.

    problem = lsjit.Problem()
    problem.add(between, lsjit.SE2Var(i), lsjit.SE2Var(j), z, U)     # arrays: many at once
    problem.set_constant(lsjit.SE2Var(0))
    analyzed = problem.analyze()          # trace, differentiate, compile (without the GIL)
    result = analyzed.solve(initial, lsjit.SolverOptions(verbose=True))
    result.values[lsjit.SE2Var(3)], result.summary.report()

Batches. A variable argument with an array of n IDs makes n instances; every batched data
argument then has a leading instance axis of length n (or 1, shared by all). Without any
batched variable, data arguments are one instance's value. One instance's data is a
number, a vector (k,) or a matrix (r, c): C++'s double, Vec<k> and Mat<r>x<c>.
"""

import os
import sys

import numpy as np

from . import _lsjit
from ._lsjit import Error, InputError, MissingValueError
from .costs import Cost, CostInstances, TracedValues
from .lie import _Group, GROUPS, GroupBatch
from .variables import Var

Loss = _lsjit.Loss
huber_loss = _lsjit.huber_loss
soft_l_one_loss = _lsjit.soft_l_one_loss
cauchy_loss = _lsjit.cauchy_loss
arctan_loss = _lsjit.arctan_loss
tukey_loss = _lsjit.tukey_loss


class SolverOptions(_lsjit.SolverOptions):
    """The C++ SolverOptions, field for field: ``SolverOptions(max_iterations=20, verbose=True)``."""

    def __init__(self, **fields):
        super().__init__()
        for name, value in fields.items():
            if name.startswith("_") or not hasattr(self, name) or callable(getattr(self, name)):
                raise TypeError(f"lsjit.SolverOptions: no field {name!r}")
            try:
                setattr(self, name, value)
            except TypeError:
                raise InputError(f"lsjit.SolverOptions: {name} = {value!r} is not a "
                                 f"{type(getattr(_lsjit.SolverOptions(), name)).__name__}") from None


def _options(options):
    if options is None:
        return SolverOptions()
    if not isinstance(options, _lsjit.SolverOptions):
        raise InputError(f"lsjit: options are an lsjit.SolverOptions, got {type(options).__name__}")
    return options


def _values(values, what="values"):
    if not isinstance(values, Values):
        raise InputError(f"lsjit: {what} are an lsjit.Values, got {type(values).__name__}")
    return values


def _var(var, what="a variable"):
    if not isinstance(var, Var):
        raise InputError(f"lsjit: expected {what} (lsjit.SE3Var(7), ...), got {type(var).__name__}")
    return var


def _group_data_slot(a, n, batched, where):
    """A group element or GroupBatch as a data argument: the C++ slot type of SE3d (...)."""
    group, rows = (type(a), a.params()[None]) if isinstance(a, _Group) else (a.group, a.params)
    if isinstance(a, _Group) and a.is_traced:
        raise InputError(f"{where} is a traced {group.__name__}: data are numbers")
    if isinstance(a, GroupBatch) and (not batched or len(rows) not in (1, n)):
        raise InputError(f"{where} has {len(rows)} {group.__name__} elements: expected "
                         f"{n if batched else 'one (a single element, not a batch)'}")
    if not np.isfinite(rows).all():
        raise InputError(f"{where} holds a NaN or an infinity")
    return (group.__name__, rows.shape[1], 1, group), rows


def _data_slot(a, n, batched, cost, position):
    """(slot description, array of n or 1 instances in numpy's C order) for one data argument."""
    where = f"lsjit.Problem.add({cost.name}): data argument {position}"
    if isinstance(a, (_Group, GroupBatch)):
        return _group_data_slot(a, n, batched, where)
    if np.iscomplexobj(a):
        raise InputError(f"{where} holds complex numbers: data are real")
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{where} is not numbers ({type(a).__name__}): {e}") from None
    if batched:
        if a.ndim == 0 or a.shape[0] not in (1, n):
            raise InputError(f"{where} has shape {a.shape}: with {n} instances it needs a leading axis of {n} "
                             "(or 1, shared by all)")
    else:
        a = a[None]
    shape = a.shape[1:]
    if len(shape) == 0:
        type_name, rows, cols = "f64", 1, 1
    elif len(shape) == 1:
        type_name, rows, cols = f"Vec{shape[0]}", shape[0], 1
    elif len(shape) == 2:
        type_name, rows, cols = f"Mat{shape[0]}x{shape[1]}", shape[0], shape[1]
    else:
        raise InputError(f"{where} has one instance of shape {shape}: expected a number, a vector or a matrix")
    if rows * cols == 0:
        raise InputError(f"{where} is empty (shape {shape})")
    if not np.isfinite(a).all():
        raise InputError(f"{where} holds a NaN or an infinity (first at instance "
                             f"{int(np.argwhere(~np.isfinite(a.reshape(a.shape[0], -1)))[0, 0])})")
    return (type_name, rows, cols, shape), a


def _traced_data(slot, shape):
    d = _lsjit._traced_data(slot)
    if isinstance(shape, type):  # a group's slot: the traced element, as C++'s DataTraits makes it
        return shape.from_params(d)
    if len(shape) == 0:
        return d[0]
    if len(shape) == 1:
        return d
    return d.reshape(shape[1], shape[0]).T


class Problem:
    """The cost instances of a least-squares problem (C++: lsjit::Problem)."""

    def __init__(self, costs=()):
        self._problem = _lsjit.Problem()
        self._analyzing = False
        self._variables = {}  # type name -> (class, [ID arrays as added]): what the costs use
        for c in costs:
            self.add(c)

    def _check_not_analyzing(self, what):
        if self._analyzing:
            raise Error(f"lsjit.Problem.{what}: the problem is being analyzed (from a cost it is tracing, or "
                        "another thread); a Problem is changed only between analyze() calls")

    def add(self, cost, *args, loss=None):
        """Adds one instance, or n with batches (module docstring). `loss` robustifies each."""
        self._check_not_analyzing("add")
        if loss is not None and not isinstance(loss, Loss):
            raise InputError(f"lsjit.Problem.add: loss is an lsjit loss (lsjit.huber_loss(1.0), ...), got "
                             f"{type(loss).__name__}")
        if isinstance(cost, CostInstances):
            if args:
                raise TypeError("lsjit.Problem.add: cost instances already carry their arguments")
            cost, args, loss = cost.cost, cost.args, (loss if loss is not None else cost.loss)
        if not isinstance(cost, Cost):
            raise TypeError(f"lsjit.Problem.add: expected an lsjit.Cost (from @lsjit.cost), got {type(cost).__name__}")
        var_args = [a for a in args if isinstance(a, Var)]
        if not var_args:
            raise InputError(f"lsjit.Problem.add({cost.name}): a cost needs at least one variable argument")
        lengths = {len(v.ids) for v in var_args if v.batched}
        if len(lengths) > 1:
            raise InputError(f"lsjit.Problem.add({cost.name}): variable batches of different lengths {sorted(lengths)}")
        batched = bool(lengths)
        n = lengths.pop() if batched else 1

        kinds, ids, data_slots, columns, types = [], [], [], [], []
        for position, a in enumerate(args, start=1):
            if isinstance(a, Var):
                kinds.append(type(a))
                types.append(type(a)._type)
                ids.append(a.ids if a.batched else np.array([a.id], dtype=np.int64))
            else:
                (type_name, rows, cols, shape), column = _data_slot(a, n, batched, cost, position)
                slot = len(data_slots)
                name = cost.data_names[slot] if slot < len(cost.data_names) else f"d{slot}"
                data_slots.append((name, type_name, rows, cols))
                kinds.append(shape)
                columns.append(column)
        _explain_captured_numbers(cost)
        # The function, not the Cost object: Cost.named() copies share one group. The Problem
        # keeps the function alive (its trace holds the cost), so its id is not reused.
        identity = "\0".join(["python", str(id(cost.function)), cost.name, cost.kind] + [t.name for t in types] +
                             [f"{d[1]}" for d in data_slots] + cost.var_names + cost.data_names)
        self._problem.add(cost.name, identity, cost.kind, _tracer(cost, kinds), types, cost.var_names,
                          data_slots, ids, columns, n, loss)
        for a in var_args:
            self._variables.setdefault(a.type_name, (type(a), []))[1].append(a.id_array())

    def set_constant(self, var):
        """Holds the variable(s) at their initial values."""
        self._check_not_analyzing("set_constant")
        for i in _var(var).id_array():
            self._problem.set_constant(var.type_name, int(i))

    @property
    def num_instances(self):
        return self._problem.num_instances

    def analyze(self):
        """Traces each cost group once, differentiates, compiles (or finds in the cache) and lays out
        the linear system; the GIL is released except while a Python cost is traced."""
        self._check_not_analyzing("analyze")
        self._analyzing = True
        try:
            analyzed = self._problem.analyze()
        finally:
            self._analyzing = False
        used = {name: (cls, np.unique(np.concatenate(id_arrays))) for name, (cls, id_arrays) in self._variables.items()}
        return AnalyzedProblem(analyzed, used)


# Per (cost name, code object): the numbers its closure captured when last added.
_captured_before = {}


def _explain_captured_numbers(cost):
    """With LSJIT_EXPLAIN_CACHE_MISSES set, names the closure variables of `cost` whose numbers
    differ from an earlier cost of the same name and code: the kernel cache's explanation of
    the recompile names the constant by its value, this names the Python variable."""
    function = cost.function
    code, closure = getattr(function, "__code__", None), getattr(function, "__closure__", None)
    if code is None or not closure:
        return
    numbers = {}
    for name, cell in zip(code.co_freevars, closure):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            numbers[name] = value
    key = (cost.name, code)
    before = _captured_before.get(key)
    _captured_before[key] = numbers
    if before is None or not os.environ.get("LSJIT_EXPLAIN_CACHE_MISSES"):
        return
    for name, value in numbers.items():
        if name in before and before[name] != value:
            print(f"lsjit: cost '{cost.name}' captures {name} = {value!r} (it was {before[name]!r}): captured "
                  f"values are baked into the kernel as constants, so this traces another graph; pass {name} "
                  "as a data argument to change it without recompiling", file=sys.stderr)


def _tracer(cost, kinds):
    def trace():
        args, var_slot, data_slot = [], 0, 0
        for kind in kinds:
            if isinstance(kind, type) and issubclass(kind, Var):
                args.append(kind(var_slot))
                var_slot += 1
            else:
                args.append(_traced_data(data_slot, kind))
                data_slot += 1
        return cost.function(TracedValues(), *args)

    return trace


class Values:
    """Variable values by (type, ID) (C++: lsjit::Values). ``values[var] = x`` and ``values[var]``;
    for a batch, x has one row per ID. A Lie group's value is an lsjit.SE3 (...) or its parameters."""

    def __init__(self, entries=None):
        self._values = _lsjit.Values()
        for var, value in (entries.items() if isinstance(entries, dict) else entries or ()):
            self[var] = value

    make = classmethod(lambda cls, entries: cls(entries))

    def copy(self):
        v = Values()
        v._values = self._values.copy()
        return v

    def __len__(self):
        return len(self._values)

    def __setitem__(self, var, value):
        _var(var, "a variable as key")
        if isinstance(value, _Group):
            value = value.params()
        if np.iscomplexobj(value):
            raise InputError(f"lsjit.Values: the value for {var!r} holds complex numbers")
        t = type(var)._type
        try:
            rows = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(f"lsjit.Values: the value for {var!r} is not numbers: {e}") from None
        expected = (len(var.ids), t.ambient) if var.batched else (t.ambient,)
        if var.layout == "Scalar" and rows.shape == expected[:-1]:
            rows = rows[..., None]  # a Scalar's value may be a number (or one per ID)
        if rows.shape != expected:
            raise InputError(f"lsjit.Values: {var!r} takes a value of shape {expected} ({t.ambient} parameters "
                             f"per {var.type_name}), got {rows.shape}")
        rows = rows.reshape(-1, t.ambient)
        self._values.set_rows(t, var.id_array(), rows)

    def __getitem__(self, var):
        rows = self._values.get_rows(type(_var(var, "a variable as key"))._type, var.id_array())
        if var.batched:
            return rows
        if var.layout in GROUPS:
            return GROUPS[var.layout].from_params(rows[0])
        return float(rows[0, 0]) if var.layout == "Scalar" else rows[0]

    def __contains__(self, var):
        _var(var, "a variable")
        return all(self._values.has(var.type_name, int(i)) for i in var.id_array())


class SolveResult:
    """The solution (values) and the summary of a solve; result[var] is result.values[var]
    (and result.vals, jaxls' name, is result.values)."""

    def __init__(self, values, summary):
        self.values, self.summary = values, summary

    @property
    def vals(self):
        return self.values

    @staticmethod
    def _of(pair):
        values, summary = pair
        out = Values()
        out._values = values
        return SolveResult(out, summary)

    def __getitem__(self, var):
        return self.values[var]


class AnalyzedProblem:
    """A Problem after analyze(): solve it any number of times, from any values, with any
    options, from any thread; nothing recompiles."""

    def __init__(self, analyzed, used):
        self._analyzed = analyzed
        self._used = used  # type name -> (variable class, sorted unique IDs): the costs' variables at analyze()

    def _check_values(self, values):
        """Raises MissingValueError naming the first variable a cost uses that `values` lacks."""
        for type_name, (cls, ids) in self._used.items():
            missing = values._values.first_missing(type_name, ids)
            if missing >= 0:
                raise MissingValueError(f"lsjit.solve: no initial value for {type_name} variable {missing}, which a "
                                        "cost uses (solve(None) starts every variable at its default)")

    def _defaults(self):
        values = Values()
        for cls, ids in self._used.values():
            values._values.set_rows(cls._type, ids, np.tile(cls.default_params(), (len(ids), 1)))
        return values

    def solve(self, initial=None, options=None, **fields):
        """Levenberg–Marquardt from `initial` (every variable's default value when None: a group's
        identity, zeros otherwise). Options as a SolverOptions or as its fields."""
        if fields:
            if options is not None:
                raise TypeError("lsjit.solve: pass either options or option fields, not both")
            options = SolverOptions(**fields)
        options = _options(options)
        return SolveResult._of(self._analyzed.solve(self._start(initial)._values, options))

    def _start(self, initial):
        if initial is None:
            return self._defaults()
        _values(initial, "initial values")
        self._check_values(initial)
        return initial

    def cost(self, values):
        """½Σ‖r‖² of the least-squares costs at `values`."""
        return self._analyzed.cost(self._start(_values(values))._values)

    def evaluate(self, values, gauss_newton=False):
        """(cost, gradient Jᵀr, Gauss–Newton matrix JᵀJ or None) at `values`, over the free
        variables in free_variables() order, in tangent space (Ceres' Problem::Evaluate)."""
        return self._analyzed.evaluate(self._start(_values(values))._values, gauss_newton)

    def evaluate_costs(self, values):
        """Per cost group: {"cost": name, "residuals": (n, dim), "costs": (n,), "weights": (n,)}
        at `values`; residuals before any robust loss, weights ρ' (1 without a loss)."""
        return self._analyzed.evaluate_groups(self._start(_values(values))._values)

    def check_gradients(self, values, relative_step=1e-6, relative_tolerance=1e-6, absolute_tolerance=1e-8):
        """Every instance's Jacobian against central differences (C++: check_gradients): a dict
        with passed, instances, entries, failed_entries, max errors and the report."""
        return self._analyzed.check_gradients(self._start(_values(values))._values, relative_step, relative_tolerance,
                                              absolute_tolerance)

    def covariance(self, values, pairs, algorithm="auto", min_reciprocal_condition_number=1e-14,
                   apply_loss_function=True):
        """Blocks of (JᵀJ)⁻¹ at `values` (C++: compute_covariance; Ceres' Covariance, GTSAM's
        Marginals): one matrix (tangent a x tangent b) per (a, b) in `pairs`, or per variable
        when an entry is one variable (its own block). Tangent orders are docs/variables.md's;
        not scaled by a residual variance. A rank-deficient JᵀJ is an lsjit.Error."""
        refs = []
        for pair in pairs:
            a, b = (pair, pair) if isinstance(pair, Var) else pair
            for v in (a, b):
                if not isinstance(v, Var) or v.batched:
                    raise TypeError("lsjit covariance: pairs are of single variables (lsjit.SE3Var(3)), or variables")
            refs.append(((a.type_name, a.id), (b.type_name, b.id)))
        return self._analyzed.covariance(self._start(_values(values))._values, refs, algorithm,
                                         min_reciprocal_condition_number, apply_loss_function)

    def free_variables(self):
        """(type name, ID, offset, tangent size) per free variable, in the linear system's order."""
        return self._analyzed.free_variables()

    def groups(self):
        return self._analyzed.groups()

    @property
    def num_instances(self):
        return self._analyzed.num_instances

    @property
    def tangent_dim(self):
        return self._analyzed.tangent_dim

    @property
    def trace_s(self):
        return self._analyzed.trace_s

    @property
    def compile_s(self):
        return self._analyzed.compile_s


def solve_batch(problems, initial, options=None, threads=0):
    """Solves problems[k] from initial[k] for every k, `threads` at a time (0: one per core),
    without the GIL; each result is the one its solve gives alone (C++: solve_batch, the
    analogue of jax.vmap over solve). `problems` may be one AnalyzedProblem (many starts);
    `options` one SolverOptions or one per item."""
    initial = list(initial)
    if isinstance(problems, AnalyzedProblem):
        problems = [problems] * len(initial)
    problems = list(problems)
    options = [_options(o) for o in options] if isinstance(options, (list, tuple)) else [_options(options)] * len(problems)
    if len(problems) != len(initial) or len(options) != len(initial):
        raise InputError(f"lsjit.solve_batch: {len(problems)} problems, {len(initial)} starts and {len(options)} "
                         "options: expected as many of each")
    starts = [p._start(v)._values for p, v in zip(problems, initial)]
    pairs = _lsjit.solve_batch([p._analyzed for p in problems], starts, options, threads)
    return [SolveResult._of(pair) for pair in pairs]


def sweep(problem, initial, options, threads=0):
    """One problem and start, one solve per SolverOptions (a parameter sweep: damping,
    tolerances and iteration limits are runtime inputs)."""
    pairs = _lsjit.sweep(problem._analyzed, problem._start(initial)._values, [_options(o) for o in options], threads)
    return [SolveResult._of(pair) for pair in pairs]


def solve_sequence(problems, initial, options=None):
    """problems[0] from `initial`, then each from the previous solution (jax.lax.scan's warm
    starts); stops after a solve that fails."""
    problems = list(problems)
    if not problems:
        raise InputError("lsjit.solve_sequence: no problems")
    pairs = _lsjit.solve_sequence([p._analyzed for p in problems], problems[0]._start(initial)._values,
                                  _options(options))
    return [SolveResult._of(pair) for pair in pairs]


LeastSquaresProblem = Problem  # jaxls' name
