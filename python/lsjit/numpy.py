"""lsjit.numpy: jax.numpy-style functions on traced values.

Inside a cost, vectors and matrices of traced scalars are numpy arrays of dtype object
holding lsjit.Sym; Python's operators, ``@``, indexing and slicing work on them as numpy
defines them. These functions add what numpy cannot do elementwise on Syms by itself,
and apply numpy's own to arrays of numbers, so the same cost code also runs on numbers.
"""

import numpy as _np

from . import _lsjit
from .lie import _has_sym
from .symarray import holds as _holds
from .symarray import wrap as _wrap


def asarray(x):
    """x as an array: of dtype object when it holds a Sym, else of floats."""
    if isinstance(x, _np.ndarray) and x.dtype != object:
        return x
    if _has_sym(x):
        return _wrap(_np.asarray(x, dtype=object))
    return _np.asarray(x, dtype=float)


array = asarray


def _unary(name, numpy_function, sym_function):
    scalar = _np.frompyfunc(sym_function, 1, 1)

    def f(x):
        if not _has_sym(x):
            return numpy_function(x)
        if isinstance(x, _lsjit.Sym):
            return sym_function(x)
        return _wrap(scalar(_np.asarray(x, dtype=object)))

    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{numpy_function.__name__}."
    return f


def _binary(name, numpy_function, sym_function):
    pair = _np.frompyfunc(sym_function, 2, 1)

    def f(a, b):
        if not _has_sym(a) and not _has_sym(b):
            return numpy_function(a, b)
        if isinstance(a, _lsjit.Sym) and isinstance(b, _lsjit.Sym):
            return sym_function(a, b)
        return _wrap(pair(_np.asarray(a, dtype=object), _np.asarray(b, dtype=object)))

    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{numpy_function.__name__}."
    return f


sin = _unary("sin", _np.sin, _lsjit.sin)
cos = _unary("cos", _np.cos, _lsjit.cos)
tan = _unary("tan", _np.tan, _lsjit.tan)
arcsin = _unary("arcsin", _np.arcsin, _lsjit.arcsin)
arccos = _unary("arccos", _np.arccos, _lsjit.arccos)
arctan = _unary("arctan", _np.arctan, _lsjit.arctan)
sinh = _unary("sinh", _np.sinh, _lsjit.sinh)
cosh = _unary("cosh", _np.cosh, _lsjit.cosh)
tanh = _unary("tanh", _np.tanh, _lsjit.tanh)
sqrt = _unary("sqrt", _np.sqrt, _lsjit.sqrt)
cbrt = _unary("cbrt", _np.cbrt, _lsjit.cbrt)
exp = _unary("exp", _np.exp, _lsjit.exp)
expm1 = _unary("expm1", _np.expm1, _lsjit.expm1)
log = _unary("log", _np.log, _lsjit.log)
log1p = _unary("log1p", _np.log1p, _lsjit.log1p)
abs = _unary("abs", _np.abs, _lsjit.abs)  # noqa: A001 (jax.numpy's name)
absolute = abs
floor = _unary("floor", _np.floor, _lsjit.floor)
ceil = _unary("ceil", _np.ceil, _lsjit.ceil)
square = _unary("square", _np.square, lambda x: x * x)
arctan2 = _binary("arctan2", _np.arctan2, _lsjit.arctan2)
atan2 = arctan2
hypot = _binary("hypot", _np.hypot, _lsjit.hypot)
minimum = _binary("minimum", _np.minimum, _lsjit.minimum)
maximum = _binary("maximum", _np.maximum, _lsjit.maximum)
power = _binary("power", _np.power, lambda a, b: a ** b)

_select = _np.frompyfunc(_lsjit.select, 3, 1)


def where(cond, a, b):
    """a where cond holds, else b, elementwise (jax.numpy.where): the traced `cond ? a : b`.
    Both a and b are computed; derivatives flow through the chosen one."""
    if not _has_sym(cond) and not _has_sym(a) and not _has_sym(b) and not _holds(cond, _lsjit.SymBool):
        return _np.where(cond, a, b)
    if isinstance(cond, (_lsjit.SymBool, bool)) and not isinstance(a, _np.ndarray) and not isinstance(b, _np.ndarray):
        return _lsjit.select(cond, a, b)
    return _wrap(_select(_np.asarray(cond, dtype=object), _np.asarray(a, dtype=object),
                         _np.asarray(b, dtype=object)))


select = where


def stack(arrays, axis=0):
    return _wrap(_np.stack([asarray(a) for a in arrays], axis=axis))


def concatenate(arrays, axis=0):
    return _wrap(_np.concatenate([_np.atleast_1d(asarray(a)) for a in arrays], axis=axis))


def sum(x, axis=None):  # noqa: A001
    x = asarray(x)
    return _np.sum(x, axis=axis)


def dot(a, b):
    return _wrap(_np.dot(asarray(a), asarray(b)))


def cross(a, b):
    """The cross product of two 3-vectors."""
    a, b = asarray(a), asarray(b)
    if a.shape != (3,) or b.shape != (3,):
        raise ValueError(f"lsjit.numpy.cross: expected two 3-vectors, got shapes {a.shape} and {b.shape}")
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def norm(x):
    """The Euclidean norm of a vector (of every entry of an array)."""
    x = asarray(x)
    return sqrt(sum(x * x))


def zeros(shape):
    return _np.zeros(shape)


def eye(n):
    return _np.eye(n)
