"""Lie groups SO2, SE2, SO3 and SE3, with lsjit's C++ layouts (runtime/lie/).

One class per group that holds numbers or, inside a cost being traced, Syms: the same
code computes a value and records a trace. Parameters:

    SO2 (cos, sin)             tangent θ
    SE2 (x, y, cos, sin)       tangent (ρx, ρy, θ)
    SO3 (qx, qy, qz, qw)       tangent ω
    SE3 (tx, ty, tz, qx, qy, qz, qw)   tangent (ρ, ω)

(jaxlie orders SE3 as (qw, qx, qy, qz, tx, ty, tz) and its tangent the same way as here:
docs/python.md's porting table.) ``a @ b`` composes two groups and ``g @ p`` acts on a point.
"""

import numpy as np

from . import _lsjit
from .symarray import holds


def _has_sym(x):
    return x.is_traced if isinstance(x, _Group) else holds(x, _lsjit.Sym)


class _Group:
    _f64 = None
    _sym = None

    def __init__(self, impl):
        self._impl = impl

    @property
    def is_traced(self):
        return isinstance(self._impl, self._sym)

    def _as_traced(self):
        return self if self.is_traced else type(self)(self._sym.from_params(self._impl.params()))

    def _pair(self, other):
        if not isinstance(other, type(self)):
            raise TypeError(f"lsjit.{type(self).__name__}: cannot combine with {type(other).__name__}")
        if self.is_traced or other.is_traced:
            return self._as_traced()._impl, other._as_traced()._impl
        return self._impl, other._impl

    @classmethod
    def _impl_for(cls, *values):
        return cls._sym if any(_has_sym(v) for v in values) else cls._f64

    @classmethod
    def identity(cls):
        return cls(cls._f64.identity())

    @classmethod
    def batch(cls, params):
        """Many elements as one data argument of Problem.add: `params` holds one row of
        parameters per instance (or is a list of elements of this group). Inside the cost each
        instance's is an element of this group, as a C++ cost's SE3d data argument is."""
        return GroupBatch(cls, params)

    @classmethod
    def from_params(cls, params):
        """The group element of these parameters (the layout above)."""
        return cls(cls._impl_for(params).from_params(params))

    @classmethod
    def exp(cls, tangent):
        return cls(cls._impl_for(tangent).exp(tangent))

    def log(self):
        return self._impl.log()

    def params(self):
        return self._impl.params()

    parameters = params

    def inverse(self):
        return type(self)(self._impl.inverse())

    def compose(self, other):
        a, b = self._pair(other)
        return type(self)(a.compose(b))

    def act(self, point):
        impl = self._as_traced()._impl if _has_sym(point) else self._impl
        return impl.act(point)

    apply = act

    def __matmul__(self, other):
        return self.compose(other) if isinstance(other, _Group) else self.act(other)

    def as_matrix(self):
        return self._impl.as_matrix()

    def retract(self, delta):
        impl = self._as_traced()._impl if _has_sym(delta) else self._impl
        return type(self)(impl.retract(delta))

    def local(self, other):
        a, b = self._pair(other)
        return a.local(b)

    def __repr__(self):
        return repr(self._impl) if not self.is_traced else f"lsjit.{type(self).__name__}(traced)"


class SO2(_Group):
    _f64, _sym = _lsjit.SO2_f64, _lsjit.SO2_sym

    @classmethod
    def from_angle(cls, theta):
        if not isinstance(theta, (_lsjit.Sym, int, float, np.number)):
            raise _lsjit.InputError(f"lsjit.SO2.from_angle: the angle is a number or a Sym, got {type(theta).__name__}")
        return cls(cls._impl_for(theta).from_angle(theta))


class SO3(_Group):
    _f64, _sym = _lsjit.SO3_f64, _lsjit.SO3_sym


class _Rigid(_Group):
    _rotation = None

    @classmethod
    def from_rotation_and_translation(cls, rotation, translation):
        if not isinstance(rotation, cls._rotation):
            raise _lsjit.InputError(f"lsjit.{cls.__name__}.from_rotation_and_translation: the rotation is an "
                                    f"lsjit.{cls._rotation.__name__}, got {type(rotation).__name__}")
        if rotation.is_traced or _has_sym(translation):
            return cls(cls._sym.from_rotation_and_translation(rotation._as_traced()._impl, translation))
        return cls(cls._f64.from_rotation_and_translation(rotation._impl, translation))

    def rotation(self):
        return self._rotation(self._impl.rotation())

    def translation(self):
        return self._impl.translation()


class SE2(_Rigid):
    _f64, _sym = _lsjit.SE2_f64, _lsjit.SE2_sym
    _rotation = SO2


class SE3(_Rigid):
    _f64, _sym = _lsjit.SE3_f64, _lsjit.SE3_sym
    _rotation = SO3


GROUPS = {"SO2": SO2, "SE2": SE2, "SO3": SO3, "SE3": SE3}


class GroupBatch:
    """Elements of one group as a data argument (made by SE3.batch(...) and the like)."""

    def __init__(self, group, params):
        if isinstance(params, (list, tuple)) and params and all(isinstance(g, group) for g in params):
            params = [g.params() for g in params]
        try:
            rows = np.asarray(params, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise _lsjit.InputError(f"lsjit.{group.__name__}.batch: parameters are numbers: {e}") from None
        ambient = group._f64.ambient
        if rows.ndim != 2 or rows.shape[1] != ambient or rows.shape[0] == 0:
            raise _lsjit.InputError(f"lsjit.{group.__name__}.batch: expected parameters of shape (n, {ambient}), "
                                    f"got {rows.shape}")
        self.group, self.params = group, rows

    def __len__(self):
        return len(self.params)


def wrap(layout, impl):
    """A group of layout `layout` around a bound C++ object; other values as they are."""
    cls = GROUPS.get(layout)
    return cls(impl) if cls is not None else impl
