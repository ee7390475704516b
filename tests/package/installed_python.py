"""The installed Python package (tests/package/install_and_build.cmake): imported from the
prefix alone, it solves a problem whose kernels it must compile, through the prefix's LLVM
module. Arguments: the site directory and the installed liblsjit_llvm.so."""

import os
import sys

import numpy as np

site, llvm_module = sys.argv[1], os.path.realpath(sys.argv[2])
import lsjit  # noqa: E402

assert os.path.realpath(lsjit.__file__).startswith(os.path.realpath(site)), lsjit.__file__


@lsjit.cost
def circle(v, center, radius, xy):
    d = xy - v[center]
    return lsjit.numpy.sqrt(d @ d) - v[radius]


angles = np.linspace(0, 2 * np.pi, 40, endpoint=False)
points = np.stack([3 + 2 * np.cos(angles), -1 + 2 * np.sin(angles)], axis=1)
problem = lsjit.Problem()
problem.add(circle, lsjit.Vec2Var(np.zeros(40, dtype=int)), lsjit.ScalarVar(np.zeros(40, dtype=int)), points)
initial = lsjit.Values({lsjit.Vec2Var(0): [2.5, -0.5], lsjit.ScalarVar(0): 1.0})
result = problem.analyze().solve(initial)
assert result.summary.compiles > 0, "expected an empty kernel cache"
np.testing.assert_allclose(result[lsjit.Vec2Var(0)], [3, -1], atol=1e-8)
assert abs(result[lsjit.ScalarVar(0)] - 2) < 1e-8
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if "liblsjit_llvm" in line}
assert mapped and all(os.path.realpath(p) == llvm_module for p in mapped), (mapped, llvm_module)
print("installed python package: ok, LLVM module", llvm_module)
