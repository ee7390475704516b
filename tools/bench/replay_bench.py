#!/usr/bin/env python3
"""Online SLAM side by side: `lsjit replay` (at its defaults, and at GTSAM ISAM2's
thresholds) against GTSAM 4.3a0's ISAM2 at its defaults (tools/bench/gtsam's driver, mode
isam2), replaying the same g2o files pose by pose, in alternating runs; medians over the
repeats. lsjit runs with a warm kernel cache (a first run fills it). GTSAM is skipped with a
message when its driver is not built (tools/bench/gtsam/build_gtsam.sh).

    python3 tools/bench/replay_bench.py --build build --data ../shared/data/pose_graph \
        --files intel,parking-garage,sphere2500,M3500 --generated 10000 --repeats 3

Columns: total seconds (read + every update + the final estimate), per-update median and
99th percentile in ms, and the final cost's relative gap to lsjit's batch solve of the same
file. GTSAM's cost is its own graph error, which equals lsjit's convention on these files
apart from the prior GTSAM puts on the first pose (lsjit holds it constant).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ISAM2_THRESHOLDS = ["--relinearize-threshold", "0.1", "--relinearize-skip", "10", "--wildfire", "1e-3"]


def run_json(command, env, timeout):
    try:
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1] if (out.stderr or out.stdout) else
                f"exit {out.returncode}"}
    return out


def lsjit_run(lsjit, path, extra, env, timeout):
    out = run_json([lsjit, "replay", path, "--json"] + extra, env, timeout)
    if isinstance(out, dict):
        return out
    return json.loads(out.stdout)


def gtsam_run(driver, path, env, timeout, scratch):
    out = run_json([driver, "isam2", path, os.path.join(scratch, "gtsam_solution.txt")], env, timeout)
    if isinstance(out, dict):
        return out
    fields = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                fields[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return fields


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--data", default="../shared/data/pose_graph")
    p.add_argument("--files", default="intel,parking-garage,sphere2500,M3500")
    p.add_argument("--generated", type=int, default=10000, help="poses of a generated 2D graph (0: none)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600)
    a = p.parse_args()
    lsjit = os.path.join(a.build, "lsjit")
    driver = os.path.join(a.build, "lsjit_bench_gtsam")
    have_gtsam = os.path.exists(driver)
    if not have_gtsam:
        print(f"GTSAM skipped: {driver} is not built (tools/bench/gtsam/build_gtsam.sh, then reconfigure)")
    scratch = tempfile.mkdtemp(prefix="lsjit-replay-bench-")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_THREAD_LIMIT="1",
               LSJIT_CACHE_DIR=os.path.join(scratch, "cache"))
    files = [(name, os.path.join(a.data, name + ".g2o")) for name in a.files.split(",") if name]
    if a.generated > 0:
        path = os.path.join(scratch, f"generated{a.generated}.g2o")
        subprocess.run([lsjit, "generate", "pose-graph", "--dim", "2", "--poses", str(a.generated),
                        "--loop-closures", str(a.generated // 5), "--seed", "7", "--out", path],
                       check=True, capture_output=True)
        files.append((f"generated 2D, {a.generated} poses", path))
    configs = [("lsjit", []), ("lsjit, ISAM2 thresholds", ISAM2_THRESHOLDS)]
    print("| graph | solver | total s | update median ms | update p99 ms | final cost gap to batch | runs |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    try:
        for name, path in files:
            if not os.path.exists(path):
                print(f"| {name} | skipped: {path} not found | | | | | |")
                continue
            lsjit_run(lsjit, path, [], env, a.timeout)  # fills the kernel cache
            results = {label: [] for label, _ in configs}
            results["GTSAM ISAM2"] = []
            batch_cost = None
            for _ in range(a.repeats):
                for label, extra in configs:
                    r = lsjit_run(lsjit, path, extra, env, a.timeout)
                    results[label].append(r)
                    batch_cost = r.get("batch_final_cost", batch_cost)
                if have_gtsam:
                    results["GTSAM ISAM2"].append(gtsam_run(driver, path, env, a.timeout, scratch))
            for label, runs in results.items():
                if not runs:
                    continue
                ok = [r for r in runs if "error" not in r]
                if not ok:
                    print(f"| {name} | {label} | failed: {runs[0]['error']} | | | | {len(runs)} |")
                    continue
                cost_key = "final_cost" if "final_cost" in ok[0] else "gtsam_final_error"
                cost = median([r[cost_key] for r in ok])
                gap = (cost - batch_cost) / batch_cost if batch_cost else float("nan")
                print(f"| {name} | {label} | {median([r['total_s'] for r in ok]):.3f} | "
                      f"{1e3 * median([r['update_s_median'] for r in ok]):.3f} | "
                      f"{1e3 * median([r['update_s_p99'] for r in ok]):.2f} | {gap:+.1e} | {len(ok)} |")
            sys.stdout.flush()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
