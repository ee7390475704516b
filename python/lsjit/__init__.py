"""lsjit: costs written in Python, traced in milliseconds, solved at native speed.

See docs/python.md. The names follow lsjit's C++ API (include <lsjit/lsjit.h>) and, where
jaxls users expect them, jaxls'.
"""

import atexit

from . import _lsjit
from . import symarray

# At exit, wait for solves and analyses running without the GIL in other (daemon) threads,
# and start no new ones: python/src/bindings.h, NativeCall.
atexit.register(_lsjit._finish_native_calls)

_lsjit._set_array_type(symarray.SymArray)
# numpy hands any ufunc that meets a Sym or SymBool to them: results come back as SymArrays.
_lsjit.Sym.__array_ufunc__ = symarray._array_ufunc
_lsjit.SymBool.__array_ufunc__ = symarray._array_ufunc

from . import numpy  # noqa: E402 (after the array type is set)
from . import cache  # noqa: E402
from . import io  # noqa: E402
from ._lsjit import (ConcretizationTypeError, Error, InputError, MissingValueError, SolveSummary, Sym, SymBool,
                     TraceError, select)
from .costs import Cost, CostInstances, cost
from .incremental import IncrementalSolver
from .lie import SE2, SE3, SO2, SO3
from .problem import (AnalyzedProblem, LeastSquaresProblem, Loss, Problem, SolveResult, SolverOptions, Values,
                      arctan_loss, cauchy_loss, huber_loss, soft_l_one_loss, solve_batch, solve_sequence, sweep,
                      tukey_loss)
from .variables import (ScalarVar, SE2Var, SE3Var, SO2Var, SO3Var, Var, Vec1Var, Vec2Var, Vec3Var, Vec4Var,
                        Vec5Var, Vec6Var, Vec7Var, Vec8Var, Vec9Var, VecVar)

where = numpy.where

__all__ = [
    "AnalyzedProblem", "ConcretizationTypeError", "Cost", "CostInstances", "Error", "IncrementalSolver", "InputError",
    "MissingValueError", "TraceError", "LeastSquaresProblem", "Loss", "Problem", "SE2",
    "SE2Var", "SE3", "SE3Var", "SO2", "SO2Var", "SO3", "SO3Var", "ScalarVar", "SolveResult", "SolveSummary",
    "SolverOptions", "Sym", "SymBool", "Values", "Var", "Vec1Var", "Vec2Var", "Vec3Var", "Vec4Var", "Vec5Var",
    "Vec6Var", "Vec7Var", "Vec8Var", "Vec9Var", "VecVar", "arctan_loss", "cache", "io", "cauchy_loss", "cost", "huber_loss",
    "numpy", "select", "soft_l_one_loss", "solve_batch", "solve_sequence", "sweep", "tukey_loss", "where",
]
