"""Costs written in Python, and how lsjit traces them.

    @lsjit.cost
    def between(v, a: lsjit.SE2Var, b: lsjit.SE2Var, z, sqrt_info):
        return sqrt_info @ (lsjit.SE2.from_params(z).inverse() @ v[a].inverse() @ v[b]).log()

A cost is a Python function of ``v`` and its arguments, in the order Problem.add gets them:
variable handles and data arrays. lsjit calls it once per cost group while it analyzes the
problem (not once per instance): ``v[var]`` is then the variable's value retracted by a
traced perturbation (a Sym, an object array of Syms, or a Lie group of Syms), each
variable argument is a handle of its type, and each data argument is a Sym or an object
array of Syms of one instance's shape. It returns its residual: a Sym, or a sequence or
array of them. IDs, data and the number of instances are runtime inputs: they never
recompile. Values the function reads from elsewhere (a closure's, a global's) are baked
into the trace as constants, as in JAX: pass values that change as data.
"""

import re

from . import _lsjit

_KINDS = ("least_squares", "equality", "inequality_le", "inequality_ge")


class Cost:
    """A cost function and its name, kind and argument names (C++: lsjit::Cost)."""

    def __init__(self, function, name=None, kind="least_squares", var_names=None, data_names=None):
        if not callable(function):
            raise TypeError(f"lsjit.cost: expected a function, got {type(function).__name__}")
        if kind not in _KINDS:
            raise ValueError(f"lsjit.cost: kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        self.function = function
        # A function's own name as the default ("<lambda>" becomes "lambda": names are
        # letters, digits, '_', '.' and '-').
        self.name = name if name is not None else re.sub(r"[^A-Za-z0-9_.-]", "", getattr(function, "__name__", "")) or "cost"
        self.kind = kind
        self.var_names = list(var_names or [])
        self.data_names = list(data_names or [])

    def named(self, var_names, data_names=()):
        """The same cost with its argument names (shown in traces and errors; never recompiles)."""
        return Cost(self.function, self.name, self.kind, var_names, data_names)

    def __call__(self, *args, loss=None):
        """Instances of this cost, to pass to Problem (jaxls' factory style):
        ``Problem([between(a, b, z, U), prior(a, z0)])``."""
        return CostInstances(self, args, loss)

    def __repr__(self):
        return f"lsjit.Cost({self.name!r}, kind={self.kind!r})"


class CostInstances:
    """A cost with the arguments of one Problem.add, kept for later."""

    def __init__(self, cost, args, loss):
        self.cost, self.args, self.loss = cost, args, loss


def cost(function=None, *, name=None, kind="least_squares", var_names=None, data_names=None):
    """Makes a Cost; usable as ``@lsjit.cost`` or ``@lsjit.cost(name=..., kind=...)``."""
    if function is None:
        return lambda f: Cost(f, name, kind, var_names, data_names)
    return Cost(function, name, kind, var_names, data_names)


Cost.factory = staticmethod(cost)


class TracedValues:
    """What ``v`` is inside a cost being traced: v[var] is var's traced value."""

    def __getitem__(self, var):
        from .variables import Var  # noqa: PLC0415 (variables imports lie, which is fine either way)
        from . import lie  # noqa: PLC0415

        if not isinstance(var, Var) or var.batched:
            raise TypeError("lsjit: v[...] takes one of the cost's variable arguments")
        raw = _lsjit._traced_variable(var.id, var.type_name, var.layout)
        return lie.wrap(var.layout, raw)
