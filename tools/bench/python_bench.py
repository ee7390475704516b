#!/usr/bin/env python3
"""Python costs against the C++ built-ins (issue 47), side by side in one run.

Per g2o file and repeat, four children, alternated: the Python package solving the graph
with costs written in Python (python/lsjit), cold (an empty kernel cache) and warm (the
same cache again), and `lsjit solve FILE --init file` with the C++ built-in costs, cold and
warm. Both start from the file's poses, hold the first pose constant and use the pose-graph
options (initial trust region radius 1e8), so their iterations and final costs compare.

Printed per file, medians over repeats: the process wall time, analyze (trace, compile),
the solver's time, iterations and final cost; and the Python / C++ ratios of the warm
process and of the solver's time. The Python child's process time includes starting the
interpreter, importing numpy and lsjit, and parsing the file in Python.

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/python_bench.py --cli build/lsjit \
        data/pose_graph_se3_500.g2o ../shared/data/pose_graph/sphere2500.g2o --repeats 5
"""
import time

_STARTED = time.perf_counter()  # before numpy and lsjit are imported: the child's import time starts here

import argparse  # noqa: E402
import json
import os
import statistics
import subprocess
import sys
import tempfile  # noqa: E402

import numpy as np  # noqa: E402


def parse_g2o(path):
    """(dim, vertex ids, vertex params, edges (i, j), measurement params, sqrt information)
    for the SE2 and SE3:QUAT lines lsjit's benchmarks use (trusted benchmark data)."""
    vertices, edges = {}, []
    dim = None
    with open(path) as f:
        for line in f:
            t = line.split()
            if not t:
                continue
            if t[0] == "VERTEX_SE2":
                dim = 2
                x, y, th = map(float, t[2:5])
                vertices[int(t[1])] = [x, y, np.cos(th), np.sin(th)]
            elif t[0] == "VERTEX_SE3:QUAT":
                dim = 3
                vertices[int(t[1])] = list(map(float, t[2:9]))
            elif t[0] == "EDGE_SE2":
                x, y, th = map(float, t[3:6])
                info = np.zeros((3, 3))
                info[np.triu_indices(3)] = list(map(float, t[6:12]))
                edges.append((int(t[1]), int(t[2]), [x, y, np.cos(th), np.sin(th)], info))
            elif t[0] == "EDGE_SE3:QUAT":
                info = np.zeros((6, 6))
                info[np.triu_indices(6)] = list(map(float, t[10:31]))
                edges.append((int(t[1]), int(t[2]), list(map(float, t[3:10])), info))
    ids = np.array(sorted(vertices), dtype=np.int64)
    params = np.array([vertices[i] for i in ids])
    pairs = np.array([(e[0], e[1]) for e in edges], dtype=np.int64)
    zs = np.array([e[2] for e in edges])
    sqrt_info = []
    for e in edges:
        info = e[3] + np.triu(e[3], 1).T
        sqrt_info.append(np.linalg.cholesky(info).T)  # upper U with UᵀU = Ω, as lsjit's reader
    return dim, ids, params, pairs, zs, np.array(sqrt_info)


def child(path):
    import lsjit  # noqa: PLC0415 (imported in the child only, and timed as part of it)

    start = time.perf_counter()
    imported = start - _STARTED
    dim, ids, params, pairs, zs, sqrt_info = parse_g2o(path)
    parsed = time.perf_counter()

    @lsjit.cost(name="py_se2_between")
    def se2_between(v, a, b, z, U):
        xa, xb, zz = v[a], v[b], lsjit.SE2.from_params(z)
        t_ab = xa.rotation().inverse().act(xb.translation() - xa.translation())
        e_t = t_ab - zz.translation()
        e_r = (zz.rotation().inverse() @ xa.rotation().inverse() @ xb.rotation()).log()
        return U @ lsjit.numpy.concatenate([e_t, e_r])

    @lsjit.cost(name="py_se3_between")
    def se3_between(v, a, b, z, U):
        xa, xb, zz = v[a], v[b], lsjit.SE3.from_params(z)
        ra_inv = xa.rotation().inverse()
        p_ab = ra_inv.act(xb.translation() - xa.translation())
        dq = (zz.rotation() @ (ra_inv @ xb.rotation()).inverse()).params()
        return U @ lsjit.numpy.concatenate([p_ab - zz.translation(), 2.0 * dq[:3]])

    Var, between = (lsjit.SE2Var, se2_between) if dim == 2 else (lsjit.SE3Var, se3_between)
    problem = lsjit.Problem()
    problem.add(between, Var(pairs[:, 0]), Var(pairs[:, 1]), zs, sqrt_info)
    problem.set_constant(Var(int(ids[0])))
    initial = lsjit.Values({Var(ids): params})
    built = time.perf_counter()
    analyzed = problem.analyze()
    analyzed_at = time.perf_counter()
    result = analyzed.solve(initial, lsjit.SolverOptions(initial_trust_region_radius=1e8))
    done = time.perf_counter()
    s = result.summary
    print(json.dumps({"import_s": imported, "parse_s": parsed - start, "build_s": built - parsed,
                      "analyze_s": analyzed_at - built, "trace_s": analyzed.trace_s, "compile_s": analyzed.compile_s,
                      "solve_wall_s": done - analyzed_at, "solve_s": s.solve_s,
                      "iterations": s.iterations, "final_cost": s.final_cost, "compiles": s.compiles}))


def run(command, cache):
    env = dict(os.environ, LSJIT_CACHE_DIR=cache, OMP_THREAD_LIMIT="1", OPENBLAS_NUM_THREADS="1")
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"python_bench: {' '.join(command)} failed:\n{done.stderr}")
    out = json.loads(done.stdout.strip().splitlines()[-1] if command[0] != "cli" else done.stdout)
    out["process_s"] = wall
    return out


def bench(path, cli, repeats):
    rows = {"python cold": [], "python warm": [], "C++ cold": [], "C++ warm": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as py_cache, tempfile.TemporaryDirectory() as cpp_cache:
            py = [sys.executable, os.path.abspath(__file__), "--child", path]
            cpp = [cli, "solve", path, "--init", "file", "--json"]
            rows["python cold"].append(run(py, py_cache))
            rows["C++ cold"].append(run(cpp, cpp_cache))
            rows["python warm"].append(run(py, py_cache))
            rows["C++ warm"].append(run(cpp, cpp_cache))
    med = {k: {f: statistics.median(r[f] for r in v) for f in ("process_s", "analyze_s", "trace_s", "compile_s",
                                                                 "solve_s", "iterations", "final_cost")}
           for k, v in rows.items()}
    print(f"\n{os.path.basename(path)}: medians of {repeats} (ms; solver: SolveSummary.solve_s, the same field in both)")
    print("| run | process | analyze | trace | compile | solver | iterations | final cost |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k, m in med.items():
        print(f"| {k} | {1e3 * m['process_s']:.1f} | {1e3 * m['analyze_s']:.1f} | {1e3 * m['trace_s']:.2f} | "
              f"{1e3 * m['compile_s']:.1f} | {1e3 * m['solve_s']:.1f} | {m['iterations']:.0f} | {m['final_cost']:.6g} |")
    warm = rows["python warm"]
    print("Python warm child, medians (ms): " + ", ".join(
        f"{f[:-2]} {1e3 * statistics.median(r[f] for r in warm):.1f}" for f in ("import_s", "parse_s", "build_s")))
    ratio = lambda f: statistics.median(p[f] / c[f] for p, c in zip(rows["python warm"], rows["C++ warm"]))  # noqa: E731
    print(f"Python / C++, warm, median of per-repeat ratios: process {ratio('process_s'):.2f}x, "
          f"solver {ratio('solve_s'):.2f}x")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*")
    p.add_argument("--cli", default="build/lsjit")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--child")
    a = p.parse_args()
    if a.child:
        return child(a.child)
    for f in a.files:
        bench(f, a.cli, a.repeats)


if __name__ == "__main__":
    main()
