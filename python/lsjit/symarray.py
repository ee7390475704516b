"""SymArray: the numpy arrays (dtype object) that hold traced scalars inside a cost.

numpy compares arrays of dtype object elementwise but then converts each result to a
Python bool, which a traced comparison cannot become. So every numpy ufunc that meets a
Sym or a SymArray (arithmetic, comparisons, np.sin, `@`, ...) runs in dtype object here and
returns a SymArray (a Sym or SymBool for a scalar result): comparisons stay arrays of
lsjit.SymBool, for lsjit.where, whichever operand was the Sym and whatever numpy made the
other (`np.ones(3) * x[0] > 0` included). Every array of Syms lsjit hands to a cost is a
SymArray.
"""

import numpy as np


def _as_object(x):
    """x as a plain ndarray of dtype object: no SymArray and no Sym left among the inputs, so
    that the ufunc below does not come back here."""
    if isinstance(x, np.ndarray):
        return np.asarray(x).astype(object, copy=False)
    return np.asarray(x, dtype=object)  # a Sym, SymBool, number or list: 0-d or n-d


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if kwargs.get("out") is not None:
        return NotImplemented
    kwargs.pop("out", None)
    if method in ("__call__", "reduce", "accumulate", "reduceat", "outer"):
        kwargs["dtype"] = object
    result = getattr(ufunc, method)(*[_as_object(x) for x in inputs], **kwargs)
    if isinstance(result, tuple):
        return tuple(wrap(r) for r in result)
    return wrap(result)


class SymArray(np.ndarray):
    __array_ufunc__ = _array_ufunc
    __hash__ = None


def holds(x, kind):
    """Whether x is a `kind` (lsjit.Sym, lsjit.SymBool) or an array or sequence holding one."""
    if isinstance(x, kind):
        return True
    a = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=object)
    return a.dtype == object and any(isinstance(e, kind) for e in a.flat)


def wrap(x):
    """x as a SymArray when it is an array of dtype object (a 0-d one as its element);
    anything else as it is."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        if x.ndim == 0:
            return x[()]
        if not isinstance(x, SymArray):
            return x.view(SymArray)
    return x
