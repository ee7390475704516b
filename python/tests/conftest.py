"""Shared by the Python tests (run by ctest as "python: FILE", or by hand:
PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests)."""

import os
import sys

import numpy as np

# The build tree's package when PYTHONPATH names none (pytest run from the source tree).
_build_package = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "build", "python"))
if "lsjit" not in sys.modules and os.path.isdir(_build_package) and not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, _build_package)

import lsjit  # noqa: E402


class Numbers:
    """`v` for a cost run on numbers rather than traced: the cost is called with its variable
    arguments' slots (0, 1, ...) and v[slot] is that argument's value."""

    def __init__(self, *values):
        self.values = values

    def __getitem__(self, slot):
        return self.values[slot]


def ring_pose_graph(n, noise=0.0, seed=0):
    """An SE2 ring of n poses: truth, edges (odometry and the closing edge) and measurements,
    exact unless noise > 0 (tangent-space noise of that standard deviation)."""
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(n) / n
    truth = [lsjit.SE2.from_params([5 * np.cos(t), 5 * np.sin(t), np.cos(t + np.pi / 2), np.sin(t + np.pi / 2)])
             for t in angles]
    edges = np.array([(k, (k + 1) % n) for k in range(n)])
    zs = []
    for i, j in edges:
        z = truth[i].inverse() @ truth[j]
        if noise:
            z = z.retract(rng.normal(scale=noise, size=3))
        zs.append(z.params())
    return truth, edges, np.array(zs)


@lsjit.cost
def se2_between(v, a, b, z):
    return (lsjit.SE2.from_params(z).inverse() @ v[a].inverse() @ v[b]).log()
