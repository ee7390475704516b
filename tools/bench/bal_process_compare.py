#!/usr/bin/env python3
"""Whole process against solver time on Ladybug-49 (issue 20: the whole-process speed-up
within 10% of the solver-time speed-up). Runs lsjit_bench_bal's own children, which solve
exactly as `lsjit_bench_bal` does (lsjit dense_schur warm, stopped at Ceres' 20-iteration
cost; Ceres DENSE_SCHUR, 20 iterations), as whole processes, alternating, and compares
fork-to-exit wall time with each solver's own total time. Both children are the same
program (it links lsjit and Ceres) and read the same file.

    python3 tools/bench/bal_process_compare.py --build build --data ../shared/data --repeats 7
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

TARGET = "13345.02223"  # Ceres DENSE_SCHUR's 20-iteration cost + 1e-9 of it (lsjit_bench_bal)


def run(cmd, env):
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    values = dict(line.split()[:2] for line in p.stdout.splitlines() if len(line.split()) >= 2)
    return wall, float(values["total_s"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--repeats", type=int, default=7)
    a = p.parse_args()
    problem = os.path.join(a.data, "bal", "problem-49-7776-pre.txt")
    if not os.path.exists(problem):
        print(f"skipped: {problem} is absent")
        return
    bench = os.path.join(a.build, "lsjit_bench_bal")
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_THREAD_LIMIT", "1")
    cache = tempfile.mkdtemp(prefix="lsjit_bal_process_")
    try:
        source = "source=file:" + problem
        lsjit = [bench, "--child", "lsjit", source, "cache=" + cache, "solver=dense_schur", "tolerance=0.1",
                 "max_iterations=50", "target=" + TARGET, "fixed=0"]
        ceres = [bench, "--child", "ceres", source, "solver=dense_schur", "max_iterations=20", "target=" + TARGET,
                 "fixed=0"]
        run(lsjit, env)  # fills the kernel cache: the timed lsjit runs are warm
        times = {"lsjit": [], "ceres": []}
        for _ in range(a.repeats):
            for name, cmd in (("lsjit", lsjit), ("ceres", ceres)):
                times[name].append(run(cmd, env))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    med = {n: (statistics.median(w for w, _ in t), statistics.median(s for _, s in t)) for n, t in times.items()}
    print("| program | whole process ms | solver total ms |\n| --- | ---: | ---: |")
    for n, (w, s) in med.items():
        print(f"| {n} | {1e3 * w:.1f} | {1e3 * s:.1f} |")
    process = med["ceres"][0] / med["lsjit"][0]
    solver = med["ceres"][1] / med["lsjit"][1]
    print(f"\nspeed-up over Ceres: whole process {process:.2f}x, solver time {solver:.2f}x "
          f"(whole process / solver: {process / solver:.2f})")


if __name__ == "__main__":
    main()
