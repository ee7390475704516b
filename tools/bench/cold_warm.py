#!/usr/bin/env python3
"""Cold against warm solves (issue 20: cold <= 1.1x warm), for one or more builds side by
side: per repeat and build, a cold child (an empty kernel cache) and then a warm one on the
same directory, the builds alternated. Prints medians of the solver's total time, of the
evaluation time and of the start to the first iteration (cold and warm), and the median of each
repeat's cold / warm ratio, in ms.

The children are the benchmarks' own (lsjit_bench_pose_graph and lsjit_bench_bal --child
lsjit), run with OMP_THREAD_LIMIT=1 OPENBLAS_NUM_THREADS=1 as those benchmarks run them.

    python3 tools/bench/cold_warm.py pose ../shared/data/pose_graph/sphere2500.g2o \
        BEFORE/build/lsjit_bench_pose_graph AFTER/build/lsjit_bench_pose_graph --repeats 7
    python3 tools/bench/cold_warm.py bal ../shared/data/bal/problem-49-7776-pre.txt \
        BEFORE/build/lsjit_bench_bal AFTER/build/lsjit_bench_bal --repeats 7
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def child(kind, program, data, cache, env):
    if kind == "pose":
        args = [program, "--child", "lsjit", data, cache]
    else:  # Ladybug-49 as lsjit_bench_bal runs it: dense Schur to Ceres' final cost
        args = [program, "--child", "lsjit", "source=file:" + data, "cache=" + cache, "solver=dense_schur",
                "tolerance=0.1", "max_iterations=50", "target=13345.02223", "fixed=0"]
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{program} failed: {out.stderr.strip()}")
    fields = dict(line.split()[:2] for line in out.stdout.splitlines() if len(line.split()) >= 2)
    return {k: float(fields[k]) * 1e3 for k in ("total_s", "jacobian_s", "to_first_iteration_s")}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["pose", "bal"])
    p.add_argument("data")
    p.add_argument("programs", nargs="+")
    p.add_argument("--repeats", type=int, default=7)
    a = p.parse_args()
    env = dict(os.environ, OMP_THREAD_LIMIT="1", OPENBLAS_NUM_THREADS="1")
    runs = {prog: [] for prog in a.programs}
    for _ in range(a.repeats):
        for prog in a.programs:
            cache = tempfile.mkdtemp()
            try:
                runs[prog].append((child(a.kind, prog, a.data, cache, env), child(a.kind, prog, a.data, cache, env)))
            finally:
                shutil.rmtree(cache)
    print("| program | cold total | warm total | cold / warm | evaluations cold | evaluations warm | cold to first iteration | warm to first iteration |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for prog, r in runs.items():
        med = lambda which, key: statistics.median(x[which][key] for x in r)
        ratio = statistics.median(c["total_s"] / w["total_s"] for c, w in r)
        print(f"| {prog} | {med(0, 'total_s'):.1f} | {med(1, 'total_s'):.1f} | {ratio:.2f}x | "
              f"{med(0, 'jacobian_s'):.1f} | {med(1, 'jacobian_s'):.1f} | {med(0, 'to_first_iteration_s'):.1f} | "
              f"{med(1, 'to_first_iteration_s'):.1f} |")


if __name__ == "__main__":
    main()
