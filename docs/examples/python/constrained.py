#!/usr/bin/env python3
"""Constrained least squares in Python: a three-link planar arm (lengths 1.0, 0.8, 0.5,
relative joint angles q) brings its tip as close as it can to a target out of its reach,
while its last link stays horizontal, q0 + q1 + q2 = 0 (an equality), and its first joint
stays at most 1 rad, q0 - 1 <= 0 (an inequality). Unconstrained it would point straight at
the target (q0 about 1.64), so the limit binds. The port of docs/examples/constrained.cpp.

    python3 docs/examples/python/constrained.py

Exits 1 if a constraint is violated by more than 1e-8 or the joint limit does not bind.
"""

import sys

import numpy as np

import lsjit
import lsjit.numpy as lnp

LENGTHS = (1.0, 0.8, 0.5)


def tip(q):
    """Forward kinematics; the same code runs on numbers and, inside the costs, on Syms."""
    x = y = angle = 0.0
    for i, length in enumerate(LENGTHS):
        angle = angle + q[i]
        x = x + length * lnp.cos(angle)
        y = y + length * lnp.sin(angle)
    return lnp.stack([x, y])


@lsjit.cost(name="arm_reach")
def reach(v, q, target):
    return tip(v[q]) - target


@lsjit.cost(name="last_link_level", kind="equality")
def level(v, q):
    return v[q][0] + v[q][1] + v[q][2]


@lsjit.cost(name="joint_limit", kind="inequality_le")
def limit(v, q):
    return v[q][0] - 1.0


def main():
    q = lsjit.Vec3Var(0)
    target = np.array([-0.2, 3.0])  # out of reach: the arm is 2.3 long
    problem = lsjit.Problem([reach(q, target), level(q), limit(q)])
    result = problem.analyze().solve(lsjit.Values({q: [0.5, 0.2, -0.7]}))  # feasible: level, q0 < 1
    angles = result[q]
    print(result.summary.brief_report())
    print(f"q = {angles}, tip = {tip(angles)}, sum(q) = {angles.sum():.2e}")
    if abs(angles.sum()) > 1e-8:
        print("FAILED: the last link is not level")
        return 1
    if abs(angles[0] - 1.0) > 1e-8:
        print(f"FAILED: the joint limit should bind, q0 = {angles[0]:.9f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
