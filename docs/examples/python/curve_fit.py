#!/usr/bin/env python3
"""A robust curve fit: y = exp(m x + c) through points with outliers, as Ceres' robust
curve-fitting example, written in Python.

    python3 docs/examples/python/curve_fit.py

The same data is fitted twice, plainly and with a Cauchy loss; the outliers pull the plain
fit away and the robust fit recovers (m, c). Exits 1 if it does not.
"""

import sys

import numpy as np

import lsjit
import lsjit.numpy as lnp


@lsjit.cost(var_names=["m", "c"], data_names=["x", "y"])
def exponential(v, m, c, x, y):
    return y - lnp.exp(v[m] * x + v[c])


def main():
    rng = np.random.default_rng(7)
    m_true, c_true = 0.3, 0.1
    x = np.linspace(0, 5, 60)
    y = np.exp(m_true * x + c_true) + rng.normal(scale=0.2, size=x.size)
    y[::10] += 4.0  # outliers
    n = x.size
    fits = {}
    for name, loss in (("plain", None), ("cauchy", lsjit.cauchy_loss(0.5))):
        problem = lsjit.Problem()
        problem.add(exponential, lsjit.ScalarVar(np.zeros(n, int)), lsjit.ScalarVar(np.ones(n, int)), x, y,
                    loss=loss)
        analyzed = problem.analyze()
        result = analyzed.solve(lsjit.Values({lsjit.ScalarVar(0): 0.0, lsjit.ScalarVar(1): 0.0}))
        fits[name] = (result[lsjit.ScalarVar(0)], result[lsjit.ScalarVar(1)])
        weights = analyzed.evaluate_costs(result.values)[0]["weights"]
        print(f"{name:6s}: m = {fits[name][0]:.4f}, c = {fits[name][1]:.4f}  ({result.summary.brief_report()})")
        if loss is not None:
            print(f"        down-weighted below 0.1: instances {np.flatnonzero(weights < 0.1).tolist()}")
    robust_error = max(abs(fits["cauchy"][0] - m_true), abs(fits["cauchy"][1] - c_true))
    plain_error = max(abs(fits["plain"][0] - m_true), abs(fits["plain"][1] - c_true))
    return 0 if robust_error < 0.1 and plain_error > 2 * robust_error else 1


if __name__ == "__main__":
    sys.exit(main())
