"""SymArray: the numpy arrays (dtype object) that hold traced scalars inside a cost.

numpy compares arrays of dtype object elementwise but then converts each result to a
Python bool, which a traced comparison cannot become. SymArray keeps the comparisons'
results as arrays of lsjit.SymBool, for lsjit.where; everything else is numpy's own.
Every array of Syms lsjit hands to a cost is a SymArray, and numpy's arithmetic keeps
the subclass.
"""

import operator

import numpy as np


def _compare(op):
    elementwise = np.frompyfunc(op, 2, 1)

    def method(self, other):
        return np.asarray(elementwise(np.asarray(self), other), dtype=object).view(SymArray)

    return method


class SymArray(np.ndarray):
    __lt__ = _compare(operator.lt)
    __le__ = _compare(operator.le)
    __gt__ = _compare(operator.gt)
    __ge__ = _compare(operator.ge)
    __eq__ = _compare(operator.eq)
    __ne__ = _compare(operator.ne)
    __hash__ = None


def wrap(x):
    """x as a SymArray when it is an array of dtype object; anything else as it is."""
    if isinstance(x, np.ndarray) and x.dtype == object and not isinstance(x, SymArray):
        return x.view(SymArray)
    return x
