"""The benchmarks' lsjit children as the comparison scripts run them (cold_warm.py,
ab_child.py): one solve in a process of its own, its emitted fields in ms."""
import argparse
import os
import statistics
import subprocess
import sys

# As lsjit_bench_pose_graph and lsjit_bench_bal run their children.
CHILD_ENV = dict(os.environ, OMP_THREAD_LIMIT="1", OPENBLAS_NUM_THREADS="1")


def child(kind, program, data, cache, env, keys):
    """Runs `program --child lsjit` on `data` with kernel cache directory `cache`: a pose
    graph (kind "pose"), or Ladybug-49 as lsjit_bench_bal runs it (dense Schur to Ceres'
    final cost). Returns {key: value in ms} for `keys` (fields ending in _s); exits naming
    the program if it fails."""
    if kind == "pose":
        args = [program, "--child", "lsjit", data, cache]
    else:
        args = [program, "--child", "lsjit", "source=file:" + data, "cache=" + cache, "solver=dense_schur",
                "tolerance=0.1", "max_iterations=50", "target=13345.02223", "fixed=0"]
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{program} failed: {out.stderr.strip()}")
    fields = dict(line.split()[:2] for line in out.stdout.splitlines() if len(line.split()) >= 2)
    return {k: float(fields[k]) * 1e3 for k in keys}


def argument_parser(doc):
    """The scripts' common arguments: the child's kind, the data file, the builds."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["pose", "bal"])
    p.add_argument("data")
    p.add_argument("programs", nargs="+")
    return p


def median_quartiles(values, digits, suffix=""):
    """ "median (q1-q3)" of `values`, each with `digits` decimals and `suffix`; the median
    alone for fewer than four values."""
    m = f"{statistics.median(values):.{digits}f}{suffix}"
    if len(values) < 4:
        return m
    q = statistics.quantiles(values, n=4)
    return f"{m} ({q[0]:.{digits}f}-{q[2]:.{digits}f})"
