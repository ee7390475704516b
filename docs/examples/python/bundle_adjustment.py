#!/usr/bin/env python3
"""Bundle adjustment from a BAL file, with Snavely's reprojection cost written in Python
(jaxls' bundle-adjustment example).

    python3 docs/examples/python/bundle_adjustment.py [FILE.bal] [--json]

Without a FILE it writes a small synthetic problem with the CLI's generator (`lsjit generate
bal`, found beside the build's Python package or as $LSJIT_CLI) to a temporary file. Points
are Vec3 variables, which Auto Schur-eliminates (the cameras are VecVar(9)). Exits 1 if the solve does not reduce the cost
fiftyfold on generated data or does not converge.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import lsjit
import lsjit.numpy as lnp


def rotate(w, p):
    """Rodrigues' rotation of p by the angle-axis w, both branches computed (lsjit.where)."""
    theta2 = lnp.dot(w, w)
    small = theta2 <= np.finfo(float).eps
    theta = lnp.sqrt(lnp.where(small, 1.0, theta2))
    axis = w / theta
    c, s = lnp.cos(theta), lnp.sin(theta)
    rodrigues = p * c + lnp.cross(axis, p) * s + axis * (lnp.dot(axis, p) * (1.0 - c))
    return lnp.where(small, p + lnp.cross(w, p), rodrigues)


@lsjit.cost(name="snavely_reprojection", var_names=["camera", "point"], data_names=["obs"])
def snavely(v, camera, point, obs):
    cam, X = v[camera], v[point]
    P = rotate(cam[0:3], X) + cam[3:6]
    xp, yp = -P[0] / P[2], -P[1] / P[2]
    r2 = xp * xp + yp * yp
    distortion = 1.0 + r2 * (cam[7] + cam[8] * r2)
    return lnp.stack([cam[6] * distortion * xp - obs[0], cam[6] * distortion * yp - obs[1]])


def generated_file(directory):
    cli = os.environ.get("LSJIT_CLI") or os.path.join(os.path.dirname(lsjit.__file__), "..", "..", "lsjit")
    path = os.path.join(directory, "synthetic.bal")
    subprocess.run([cli, "generate", "bal", "--cameras", "8", "--points", "300", "--observations-per-point", "4",
                    "--seed", "3", "--out", path], check=True, capture_output=True)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", nargs="?")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or generated_file(tmp)
        bal = lsjit.io.read_bal(path)

    Camera = lsjit.VecVar(9)
    problem = lsjit.Problem()
    problem.add(snavely, Camera(bal["camera_index"]), lsjit.Vec3Var(bal["point_index"]), bal["observations"])
    initial = lsjit.Values({Camera(np.arange(len(bal["cameras"]))): bal["cameras"],
                            lsjit.Vec3Var(np.arange(len(bal["points"]))): bal["points"]})
    result = problem.analyze().solve(initial)
    s = result.summary
    print(s.json() if args.json else s.report())
    reduced = s.final_cost < s.initial_cost / (50 if args.file is None else 1)
    return 0 if s.usable and reduced else 1


if __name__ == "__main__":
    sys.exit(main())
