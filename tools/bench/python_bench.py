#!/usr/bin/env python3
"""Python against C++ (issue 47), side by side in one run.

Per file and repeat, four children, alternated: the Python example for the file's kind
(docs/examples/python/pose_graph.py or bundle_adjustment.py, costs written in Python, the
file read by lsjit.io) cold (an empty kernel cache) and warm (the same cache again), and
`lsjit solve FILE --json` (`--init file` for g2o) with the C++ built-in costs, cold and warm.
Both start from the file's values with the same options. Printed per file, medians over
repeats: the process wall time (the Python one from the interpreter's start: importing
numpy and lsjit included), analyze's trace and compile, the solver's solve_s, iterations and
final cost; the Python / C++ ratios of the warm process and of solve_s; and how far apart the
final costs are.

Then, with --instances N (default 10^6), the time Problem.add takes for N instances of a
reprojection-like cost (two variable batches and a 2-vector per instance) and of an SE3
between cost (a 7-vector and a 6x6 matrix per instance), medians of the repeats.

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/python_bench.py --cli build/lsjit \\
        ../shared/data/pose_graph/sphere2500.g2o ../shared/data/bal/problem-49-7776-pre.txt --repeats 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "docs", "examples", "python")


def run(command, cache):
    env = dict(os.environ, LSJIT_CACHE_DIR=cache, OMP_THREAD_LIMIT="1", OPENBLAS_NUM_THREADS="1")
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"python_bench: {' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["process_s"] = wall
    return out


def bench_file(path, cli, repeats):
    is_bal = not path.endswith(".g2o")
    example = os.path.join(EXAMPLES, "bundle_adjustment.py" if is_bal else "pose_graph.py")
    py = [sys.executable, example, path, "--json"]
    cpp = [cli, "solve", path, "--json"] + ([] if is_bal else ["--init", "file"])
    rows = {"python cold": [], "python warm": [], "C++ cold": [], "C++ warm": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as py_cache, tempfile.TemporaryDirectory() as cpp_cache:
            rows["python cold"].append(run(py, py_cache))
            rows["C++ cold"].append(run(cpp, cpp_cache))
            rows["python warm"].append(run(py, py_cache))
            rows["C++ warm"].append(run(cpp, cpp_cache))
    fields = ("process_s", "trace_s", "compile_s", "solve_s", "iterations", "final_cost")
    med = {k: {f: statistics.median(r[f] for r in v) for f in fields} for k, v in rows.items()}
    print(f"\n{os.path.basename(path)}: medians of {repeats}, ms")
    print("| run | process | trace | compile | solve_s | iterations | final cost |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k, m in med.items():
        print(f"| {k} | {1e3 * m['process_s']:.1f} | {1e3 * m['trace_s']:.2f} | {1e3 * m['compile_s']:.1f} | "
              f"{1e3 * m['solve_s']:.1f} | {m['iterations']:.0f} | {m['final_cost']:.17g} |")
    ratio = lambda f: statistics.median(p[f] / c[f] for p, c in zip(rows["python warm"], rows["C++ warm"]))  # noqa: E731
    py_cost, cpp_cost = rows["python warm"][0]["final_cost"], rows["C++ warm"][0]["final_cost"]
    print(f"Python / C++, warm, median of per-repeat ratios: process {ratio('process_s'):.2f}x, "
          f"solve_s {ratio('solve_s'):.2f}x; final costs {'bit-identical' if py_cost == cpp_cost else 'differ by'}"
          + ("" if py_cost == cpp_cost else f" {abs(py_cost - cpp_cost) / cpp_cost:.1e} relative"))


def bench_instances(n, repeats):
    import numpy as np  # noqa: PLC0415
    import lsjit  # noqa: PLC0415

    @lsjit.cost
    def reprojection_like(v, camera, point, obs):
        return v[point][:2] / v[point][2] * v[camera][6] - obs

    @lsjit.cost
    def between(v, a, b, z, U):
        return U @ (lsjit.SE3.from_params(z).inverse() @ v[a].inverse() @ v[b]).log()

    rng = np.random.default_rng(0)
    cameras, points, obs = rng.integers(0, 1000, n), np.arange(n), rng.normal(size=(n, 2))
    i = np.arange(n)
    zs, U = np.tile(lsjit.SE3.identity().params(), (n, 1)), np.tile(np.eye(6), (n, 1, 1))
    times = {"reprojection-like (2 doubles of data each)": [], "SE3 between (7 + 36 doubles of data each)": []}
    for _ in range(repeats):
        for name, add in zip(times, (
                lambda p: p.add(reprojection_like, lsjit.VecVar(9)(cameras), lsjit.Vec3Var(points), obs),
                lambda p: p.add(between, lsjit.SE3Var(i), lsjit.SE3Var((i + 1) % n), zs, U))):
            problem = lsjit.Problem()
            start = time.perf_counter()
            add(problem)
            times[name].append(time.perf_counter() - start)
            del problem
    print(f"\nProblem.add of {n} instances from numpy arrays, median (min, max) of {repeats}, ms")
    for name, t in times.items():
        print(f"- {name}: {1e3 * statistics.median(t):.1f} ({1e3 * min(t):.1f}, {1e3 * max(t):.1f})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*")
    p.add_argument("--cli", default="build/lsjit")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--instances", type=int, default=10**6)
    a = p.parse_args()
    for f in a.files:
        bench_file(f, a.cli, a.repeats)
    if a.instances:
        bench_instances(a.instances, a.repeats)


if __name__ == "__main__":
    main()
