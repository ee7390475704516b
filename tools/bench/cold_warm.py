#!/usr/bin/env python3
"""Cold against warm solves (issue 20: cold <= 1.1x warm), for one or more builds side by
side: per repeat and build, a cold child (an empty kernel cache) and then a warm one on the
same directory, the builds alternated. Prints medians of the solver's total time, of the
evaluation time and of the start to the first iteration (cold and warm), and the median of each
repeat's cold / warm ratio with its quartiles, in ms.

With --phases, a second table gives each kind of child's phases as the solver splits them
(analyze, of which compile; the solve's set-up, evaluations, linear solver; the start to the
first iteration; the total), medians and quartiles.

With --tier0, each repeat also runs a cold child with LSJIT_TIER=0 (tier 0 only: no compile,
no LLVM), before the other two. Its excess over warm is what differentiation, tier 0's set-up
and tier 0's evaluations cost; the rest of a tiered cold solve's excess is what the background
compile costs the solve while it shares the machine.

The children are the benchmarks' own (lsjit_bench_pose_graph and lsjit_bench_bal --child
lsjit), run with OMP_THREAD_LIMIT=1 OPENBLAS_NUM_THREADS=1 as those benchmarks run them.

    python3 tools/bench/cold_warm.py pose ../shared/data/pose_graph/sphere2500.g2o \
        BEFORE/build/lsjit_bench_pose_graph AFTER/build/lsjit_bench_pose_graph --repeats 7
    python3 tools/bench/cold_warm.py bal ../shared/data/bal/problem-49-7776-pre.txt \
        BEFORE/build/lsjit_bench_bal AFTER/build/lsjit_bench_bal --repeats 7
"""
import statistics
import tempfile

import bench_children

KEYS = ("total_s", "jacobian_s", "to_first_iteration_s")
# With --phases: the solver's own split, per kind of child.
PHASES = ("analyze_s", "compile_s", "setup_s", "jacobian_s", "linear_solver_s", "to_first_iteration_s", "total_s")


def main():
    p = bench_children.argument_parser(__doc__)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--tier0", action="store_true", help="also a cold tier-0-only child per repeat")
    p.add_argument("--phases", action="store_true",
                   help="also a table of each kind of child's phases (analyze, compile, set-up, ...)")
    a = p.parse_args()
    keys = tuple(dict.fromkeys(KEYS + (PHASES if a.phases else ())))
    env = bench_children.CHILD_ENV
    tier0_env = dict(env, LSJIT_TIER="0")

    def child(prog, cache, env):
        return bench_children.child(a.kind, prog, a.data, cache, env, keys)

    runs = {prog: [] for prog in a.programs}
    for _ in range(a.repeats):
        for prog in a.programs:
            run = {}
            if a.tier0:
                with tempfile.TemporaryDirectory() as cache:
                    run["tier0"] = child(prog, cache, tier0_env)
            with tempfile.TemporaryDirectory() as cache:
                run["cold"] = child(prog, cache, env)
                run["warm"] = child(prog, cache, env)
            runs[prog].append(run)
    extra = " tier 0 only total | tier 0 only / warm |" if a.tier0 else ""
    print("| program | cold total | warm total | cold / warm (quartiles) |" + extra +
          " evaluations cold | evaluations warm | cold to first iteration | warm to first iteration |")
    print("| --- |" + " ---: |" * (9 if a.tier0 else 7))
    for prog, r in runs.items():
        med = lambda which, key: statistics.median(x[which][key] for x in r)
        ratios = lambda which: [x[which]["total_s"] / x["warm"]["total_s"] for x in r]
        spread = lambda values: bench_children.median_quartiles(values, 2, "x")
        tier0 = f" {med('tier0', 'total_s'):.1f} | {spread(ratios('tier0'))} |" if a.tier0 else ""
        print(f"| {prog} | {med('cold', 'total_s'):.1f} | {med('warm', 'total_s'):.1f} | {spread(ratios('cold'))} |"
              f"{tier0} {med('cold', 'jacobian_s'):.1f} | {med('warm', 'jacobian_s'):.1f} | "
              f"{med('cold', 'to_first_iteration_s'):.1f} | {med('warm', 'to_first_iteration_s'):.1f} |")
    if a.phases:
        print_phases(runs)


def print_phases(runs):
    """Medians (quartiles) of each phase, per program and kind of child, in ms."""
    print()
    print("| program | child | " + " | ".join(k[:-2].replace("_", " ") for k in PHASES) + " |")
    print("| --- | --- |" + " ---: |" * len(PHASES))
    for prog, r in runs.items():
        for which in ("tier0", "cold", "warm"):
            if which not in r[0]:
                continue
            cells = [bench_children.median_quartiles([x[which][k] for x in r], 2) for k in PHASES]
            print(f"| {prog} | {which} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
