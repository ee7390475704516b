#!/usr/bin/env python3
"""Side by side: two lsjit CLIs, fork to exit, as a user runs them: wall time and the
process's CPU time (user + system, all threads) of `lsjit solve FILE` (or `lsjit --help`),
medians over alternating runs, in ms. Cold runs get a fresh kernel cache each; warm runs
share one per program, filled by a first run.

Unlike the other benchmarks it leaves OPENBLAS_NUM_THREADS and OMP_THREAD_LIMIT as the
caller has them, so that what OpenBLAS or OpenMP do in a user's process is measured too.

    python3 tools/bench/cli_wall.py BEFORE/lsjit AFTER/lsjit \
        --data ../shared/data/pose_graph --files intel,sphere2500 --repeats 11
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time


def run(program, args, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([program] + args, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def compare(programs, args, cold, repeats, root):
    times = {label: [] for label in programs}
    env = dict(os.environ)
    for r in range(repeats + (0 if cold else 1)):  # warm: run 0 fills each cache
        for label, program in programs.items():
            cache = tempfile.mkdtemp(dir=root) if cold else os.path.join(root, label)
            env["LSJIT_CACHE_DIR"] = cache
            t = run(program, args, env)
            if cold:
                shutil.rmtree(cache, ignore_errors=True)
            if cold or r > 0:
                times[label].append(t)
    return {label: [1e3 * statistics.median(x[i] for x in t) for i in range(2)]
            for label, t in times.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--data", default="../shared/data/pose_graph")
    p.add_argument("--files", default="intel,sphere2500")
    p.add_argument("--repeats", type=int, default=11)
    a = p.parse_args()
    programs = {"before": a.before, "after": a.after}
    root = tempfile.mkdtemp(prefix="lsjit-cli-wall-")
    print("| run | before wall ms | after wall ms | before CPU ms | after CPU ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    try:
        runs = [("--help", ["--help"], False)]
        for name in a.files.split(","):
            path = os.path.join(a.data, name + ".g2o")
            if not os.path.exists(path):
                print(f"| {name} | skipped: {path} not found | | | |")
                continue
            runs += [(f"{name}, cold", ["solve", path], True), (f"{name}, warm", ["solve", path], False)]
        for title, args, cold in runs:
            m = compare(programs, args, cold, a.repeats, root)
            print(f"| {title} | {m['before'][0]:.1f} | {m['after'][0]:.1f} | "
                  f"{m['before'][1]:.1f} | {m['after'][1]:.1f} |", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
