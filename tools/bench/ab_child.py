#!/usr/bin/env python3
"""Two or more builds' warm solves alternated (A B B A ...), for changes smaller than the
host's noise between runs: per pair, each build's benchmark child solves once on one shared,
warm kernel cache directory. Prints, per build, the medians and quartiles of the solver's
total time, the start to the first iteration, the evaluation time, the linear solver, the
solve's set-up, analyze() and its kernel lookups (from the disk cache), in ms.

The children are the benchmarks' own (lsjit_bench_pose_graph and lsjit_bench_bal --child
lsjit, Ladybug-49 with dense_schur to Ceres' final cost), run with OMP_THREAD_LIMIT=1
OPENBLAS_NUM_THREADS=1 as those benchmarks run them. The first run of each build fills the
cache and is not counted.

    python3 tools/bench/ab_child.py bal ../shared/data/bal/problem-49-7776-pre.txt \
        BEFORE/build/lsjit_bench_bal AFTER/build/lsjit_bench_bal --pairs 16
"""
import tempfile

import bench_children

# (field, decimals, column): the kernel loads are a fraction of a millisecond.
COLUMNS = (("total_s", 1, "total"), ("to_first_iteration_s", 1, "to the first iteration"),
           ("jacobian_s", 1, "evaluations"), ("linear_solver_s", 2, "linear solver"),
           ("setup_s", 2, "solve set-up"), ("analyze_s", 2, "analyze"),
           ("compile_s", 2, "of which kernels (disk loads)"))
KEYS = tuple(c[0] for c in COLUMNS)


def main():
    p = bench_children.argument_parser(__doc__)
    p.add_argument("--pairs", type=int, default=10)
    a = p.parse_args()
    def child(prog, cache):
        return bench_children.child(a.kind, prog, a.data, cache, bench_children.CHILD_ENV, KEYS)

    with tempfile.TemporaryDirectory() as cache:
        for prog in a.programs:  # fill the cache; not counted
            child(prog, cache)
        runs = {prog: [] for prog in a.programs}
        for i in range(a.pairs):
            for prog in (a.programs if i % 2 == 0 else a.programs[::-1]):
                runs[prog].append(child(prog, cache))

    print("| program | " + " | ".join(c[2] for c in COLUMNS) + " |")
    print("| --- |" + " ---: |" * len(COLUMNS))
    for prog, r in runs.items():
        print(f"| {prog} | " + " | ".join(bench_children.median_quartiles([x[k] for x in r], d) for k, d, _ in COLUMNS) + " |")


if __name__ == "__main__":
    main()
