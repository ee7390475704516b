"""Variable types: what a cost's variable arguments are.

A variable is a type plus an integer ID, as in C++ (runtime/variables.h): ``SE3Var(7)`` is
one variable, ``SE3Var(np.arange(100))`` a batch of 100 for one ``Problem.add``. The type
is static (it fixes the Jacobian block size and the retraction); the IDs are runtime
inputs and never recompile.

A subclass is a kind of its own (C++'s ``lsjit::Kind``), with its own ID space::

    class Landmark(lsjit.Vec3Var): pass              # the kind "Landmark"
    class Pose(lsjit.SE3Var, kind="pose"): pass       # the kind "pose"
"""

import numpy as np

from . import _lsjit
from . import lie
from ._lsjit import InputError


class Var:
    """A variable handle (one ID) or a batch of them (a 1-D array of IDs)."""

    type_name = None  # "SE3", "Vec3", or a kind's name
    layout = None  # the built-in type whose layout it has
    _type = None  # the C++ descriptor (lsjit._lsjit.VariableType)

    def __init_subclass__(cls, kind=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_builtin", False):
            return
        if cls.layout is None:
            raise TypeError("lsjit: a variable class derives from a built-in one (SE3Var, Vec3Var, ...)")
        name = kind if kind is not None else cls.__name__
        cls._type = _lsjit.kind_type(name, _lsjit.variable_type(cls.layout))
        cls.type_name = name

    def __init__(self, id):  # noqa: A002 (jaxls' keyword: MyVar(id=jnp.arange(100)))
        ids = id
        if type(self)._type is None:
            raise TypeError("lsjit.Var is abstract: use SE3Var, Vec3Var, ... or a subclass of one")
        try:
            a = np.asarray(ids)
        except (TypeError, ValueError) as e:
            raise InputError(f"lsjit.{type(self).__name__}: IDs must be integers: {e}") from None
        if a.dtype.kind not in "iu" and not (a.dtype == object and a.size == 0):
            if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.floor(a)) and \
                    np.all(np.abs(a) < 2.0**63):
                a = a.astype(np.int64)
            else:
                raise InputError(f"lsjit.{type(self).__name__}: IDs must be integers, got {a.dtype}")
        if a.ndim == 0:
            self.id = int(a)
            self.ids = None
        elif a.ndim == 1:
            if a.size == 0:
                raise InputError(f"lsjit.{type(self).__name__}: an empty batch of IDs")
            self.id = None
            self.ids = a.astype(np.int64, copy=False)
        else:
            raise InputError(f"lsjit.{type(self).__name__}: IDs must be one integer or a 1-D array, got shape "
                             f"{a.shape}")

    @classmethod
    def batch(cls, ids):
        """Many variables of this type for one Problem.add (the C++ Var::batch)."""
        v = cls(np.asarray(ids, dtype=np.int64).reshape(-1))
        return v

    @property
    def batched(self):
        return self.ids is not None

    def id_array(self):
        return self.ids if self.batched else np.array([self.id], dtype=np.int64)

    def __len__(self):
        if not self.batched:
            raise TypeError(f"lsjit.{type(self).__name__}({self.id}) is one variable, not a batch")
        return len(self.ids)

    def with_value(self, value):
        """(self, value): an entry for Values.make, as jaxls' Var.with_value."""
        return (self, value)

    @classmethod
    def default_params(cls):
        """The parameters of the default value: the identity of a group, zeros otherwise."""
        t = cls._type
        if cls.layout in lie.GROUPS:
            return lie.GROUPS[cls.layout].identity().params()
        return np.zeros(t.ambient)

    def __repr__(self):
        what = self.id if not self.batched else f"batch of {len(self.ids)}"
        return f"{type(self).__name__}({what})"


def _builtin(name, python_name):
    cls = type(python_name, (Var,), {"_builtin": True, "type_name": name, "layout": name,
                                     "_type": _lsjit.variable_type(name)})
    cls.__module__ = "lsjit"
    return cls


ScalarVar = _builtin("Scalar", "ScalarVar")
SO2Var = _builtin("SO2", "SO2Var")
SE2Var = _builtin("SE2", "SE2Var")
SO3Var = _builtin("SO3", "SO3Var")
SE3Var = _builtin("SE3", "SE3Var")

_VEC = {}


def VecVar(n):
    """The variable type of an n-vector, 1 <= n <= 32 (C++'s VecVar<n>): VecVar(3) is Vec3Var."""
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= 32:
        raise InputError(f"lsjit.VecVar: the size must be an integer from 1 to 32, got {n!r} "
                         "(split a larger state into kinds of its parts, docs/variables.md)")
    n = int(n)
    if n not in _VEC:
        _VEC[n] = _builtin(f"Vec{n}", f"Vec{n}Var")
    return _VEC[n]


Vec1Var, Vec2Var, Vec3Var, Vec4Var, Vec5Var, Vec6Var, Vec7Var, Vec8Var, Vec9Var = (VecVar(n) for n in range(1, 10))
