#!/usr/bin/env python3
"""A g2o pose graph solved with its between cost written in Python (jaxls' pose-graph example).

    python3 docs/examples/python/pose_graph.py [FILE.g2o] [--json]

Reads FILE (default: the bundled data/pose_graph_se3_500.g2o) with lsjit's reader, adds one
between cost per edge in one batched call, holds the file's constant pose (its FIX lines,
else the first vertex) fixed and solves from the file's poses. Prints the solver's report,
or with --json one object: the summary's fields (final_cost, iterations, solve_s, ...) plus
trace_s and compile_s of analyze(). The kernel cache is the CLI's: LSJIT_CACHE_DIR, else
$XDG_CACHE_HOME/lsjit or ~/.cache/lsjit. Exits 1 if the solve did not converge.
"""

import argparse
import json
import os
import sys

import numpy as np

import lsjit
import lsjit.numpy as lnp


@lsjit.cost(var_names=["a", "b"], data_names=["z", "U"])
def se2_between(v, a, b, z, U):
    xa, xb, zz = v[a], v[b], lsjit.SE2.from_params(z)
    t_ab = xa.rotation().inverse().act(xb.translation() - xa.translation())
    theta = (zz.rotation().inverse() @ xa.rotation().inverse() @ xb.rotation()).log()
    return U @ lnp.concatenate([t_ab - zz.translation(), theta])


@lsjit.cost(var_names=["a", "b"], data_names=["z", "U"])
def se3_between(v, a, b, z, U):
    xa, xb, zz = v[a], v[b], lsjit.SE3.from_params(z)
    ra_inv = xa.rotation().inverse()
    p_ab = ra_inv.act(xb.translation() - xa.translation())
    dq = (zz.rotation() @ (ra_inv @ xb.rotation()).inverse()).params()  # (qx, qy, qz, qw)
    return U @ lnp.concatenate([p_ab - zz.translation(), 2.0 * dq[:3]])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", nargs="?", default=os.path.join(here, "..", "..", "..", "data", "pose_graph_se3_500.g2o"))
    p.add_argument("--json", action="store_true")
    args = p.parse_args()

    graph = lsjit.io.read_g2o(args.file)
    Pose, between = (lsjit.SE2Var, se2_between) if graph["dimension"] == 2 else (lsjit.SE3Var, se3_between)
    edges = graph["edges"]
    problem = lsjit.Problem()
    problem.add(between, Pose(edges[:, 0]), Pose(edges[:, 1]), graph["measurements"], graph["sqrt_information"])
    problem.set_constant(Pose(graph["held_constant"]))
    initial = lsjit.Values({Pose(graph["vertex_ids"]): graph["poses"]})

    analyzed = problem.analyze()
    options = lsjit.SolverOptions(initial_trust_region_radius=1e8)  # lsjit solve's for pose graphs
    result = analyzed.solve(initial, options)
    s = result.summary
    if args.json:
        out = json.loads(s.json())
        out.update(trace_s=analyzed.trace_s, compile_s=analyzed.compile_s, file=os.path.basename(args.file))
        print(json.dumps(out))
    else:
        print(s.report())
    return 0 if s.converged and np.isfinite(s.final_cost) and s.final_cost < s.initial_cost else 1


if __name__ == "__main__":
    sys.exit(main())
