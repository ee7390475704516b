#!/usr/bin/env python3
"""Side by side: two lsjit CLIs on the same g2o files, warm (each with a kernel cache of its
own, filled by a first run), alternating runs, medians of the solver's own times from
`lsjit solve --json` (analyze_s, solve_s, total_s), in ms. For a change's before/after:

    python3 tools/bench/cli_compare.py BEFORE/lsjit AFTER/lsjit \
        --data ../shared/data/pose_graph --files tinyGrid3D,ring,intel --repeats 15
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--data", default="../shared/data/pose_graph")
    p.add_argument("--files", default="tinyGrid3D,ring,smallGrid3D,intel,M3500")
    p.add_argument("--repeats", type=int, default=15)
    a = p.parse_args()
    programs = {"before": a.before, "after": a.after}
    root = tempfile.mkdtemp(prefix="lsjit-cli-compare-")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_THREAD_LIMIT="1")
    print("| graph | program | analyze ms | solve ms | total ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    try:
        for name in a.files.split(","):
            path = os.path.join(a.data, name + ".g2o")
            if not os.path.exists(path):
                print(f"| {name} | skipped: {path} not found | | | |")
                continue
            times = {label: [] for label in programs}
            for r in range(a.repeats + 1):  # run 0 fills each warm cache
                for label, program in programs.items():
                    env["LSJIT_CACHE_DIR"] = os.path.join(root, label)
                    out = subprocess.run([program, "solve", path, "--json"], env=env,
                                         capture_output=True, text=True, check=True).stdout
                    if r > 0:
                        d = json.loads(out)
                        times[label].append((d["analyze_s"], d["solve_s"], d["total_s"]))
            for label in programs:
                m = [1e3 * statistics.median(t[i] for t in times[label]) for i in range(3)]
                print(f"| {name} | {label} | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.2f} |")
            sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
