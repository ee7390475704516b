"""One kernel cache for Python and C++: kernels found again across processes, a captured
constant that changes is a recompile that says so, the environment switches work, and a
Python cost that traces to a C++ cost's graph is that graph."""

import os
import subprocess
import sys
import textwrap

import pytest

LSJIT_CLI = os.environ.get("LSJIT_CLI_PATH")

CURVE_FIT = textwrap.dedent("""
    import numpy as np, lsjit, lsjit.numpy as lnp

    def make(scale):
        @lsjit.cost(name="curve_fit", var_names=["m", "c"], data_names=["x", "y"])
        def curve_fit(v, m, c, x, y):
            offset = v[c]  # read first: GCC evaluates the C++ built-in's operands in this order
            slope = v[m] if scale == 1.0 else scale * v[m]  # Python control flow on a constant: static
            return y - lnp.exp(slope * x + offset)
        return curve_fit

    def solve(scale):
        x = np.linspace(0, 1, 20)
        y = np.exp(0.3 * x + 0.1)
        p = lsjit.Problem()
        p.add(make(scale), lsjit.ScalarVar(np.zeros(20, dtype=int)), lsjit.ScalarVar(np.ones(20, dtype=int)), x, y)
        try:
            r = p.analyze().solve()
        except lsjit.Error as e:
            print("error:", e)
            return
        print("compiles", r.summary.compiles, "m", r[lsjit.ScalarVar(0)] * scale)
""")


def run(script, cache_dir, **env):
    environment = dict(os.environ, LSJIT_CACHE_DIR=str(cache_dir), **env)
    for name in ("LSJIT_EXPLAIN_CACHE_MISSES", "LSJIT_FAIL_ON_RECOMPILE", "LSJIT_DUMP_DIR", "LSJIT_LOG_COMPILES"):
        if name not in env:
            environment.pop(name, None)
    done = subprocess.run([sys.executable, "-c", CURVE_FIT + textwrap.dedent(script)], env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def test_a_second_process_finds_the_kernels_on_disk(tmp_path):
    first, _ = run("solve(1.0)", tmp_path)
    second, _ = run("solve(1.0)", tmp_path)
    assert first.startswith("compiles 2 ") and "m 0.3" in first
    assert second.startswith("compiles 0 ") and "m 0.3" in second


def test_a_changed_captured_constant_recompiles_and_says_to_pass_it_as_data(tmp_path):
    out, err = run("solve(2.0)\nsolve(3.0)", tmp_path, LSJIT_EXPLAIN_CACHE_MISSES="1")
    assert out.splitlines()[1].startswith("compiles 2 ")
    assert "a captured constant differs" in err and "2 -> 3" in err
    assert "pass values that vary between instances as data" in err
    assert "captures scale = 3.0 (it was 2.0)" in err and "pass scale as a data argument" in err


def test_fail_on_recompile_is_an_exception(tmp_path):
    out, _ = run("solve(1.0)\nsolve(2.0)", tmp_path, LSJIT_FAIL_ON_RECOMPILE="1")
    assert out.splitlines()[0].startswith("compiles 2 ")
    assert out.splitlines()[1].startswith("error: kernel cache: cost 'curve_fit'")


def test_log_compiles_and_dump_dir(tmp_path):
    dump = tmp_path / "dump"
    _, err = run("solve(1.0)", tmp_path / "cache", LSJIT_LOG_COMPILES="1", LSJIT_DUMP_DIR=str(dump))
    assert "lsjit: kernel curve_fit residual" in err
    assert sorted(p.suffixes[-2] for p in dump.iterdir()) == [".jacobian", ".normal_equations", ".simplified",
                                                              ".traced"]


@pytest.mark.skipif(not LSJIT_CLI, reason="LSJIT_CLI_PATH names no lsjit CLI (ctest sets it)")
def test_the_python_cost_is_the_cpp_builtins_graph(tmp_path):
    dump = tmp_path / "dump"
    run("solve(1.0)", tmp_path / "cache", LSJIT_DUMP_DIR=str(dump))
    (traced,) = dump.glob("*.traced.ir")
    cpp = subprocess.run([LSJIT_CLI, "trace", "curve_fit", "--stage", "traced"], capture_output=True, text=True,
                         check=True).stdout
    # Node for node the built-in's graph: the same structural hash, so the same cache key and
    # one kernel for both languages.
    assert traced.read_text() == cpp


def test_lsjit_cache_lists_verifies_and_clears_what_python_compiled(tmp_path):
    import lsjit

    run("solve(1.0)", tmp_path)
    listed = lsjit.cache.list(dir=tmp_path)
    assert sorted((e["cost"], e["mode"]) for e in listed["entries"]) == [("curve_fit", "normal_equations"),
                                                                         ("curve_fit", "residual")]
    shown = lsjit.cache.show(listed["entries"][0]["id"][:10], dir=tmp_path)
    assert "cost curve_fit" in shown["ir"]
    assert lsjit.cache.stats(dir=tmp_path)["entries"] == 2
    verified = lsjit.cache.verify(dir=tmp_path)
    assert verified["bad"] == 0 and all(r["ok"] for r in verified["results"])
    with pytest.raises(lsjit.Error, match="not an entry id"):
        lsjit.cache.show("zz", dir=tmp_path)
    # An entry altered on disk is reported, never trusted.
    entry = next(tmp_path.glob("*.lsjitk"))
    data = bytearray(entry.read_bytes())
    data[-1] ^= 1
    entry.write_bytes(bytes(data))
    assert lsjit.cache.verify(dir=tmp_path)["bad"] == 1
    assert lsjit.cache.clear(dir=tmp_path)["removed"] == 2
    assert lsjit.cache.list(dir=tmp_path)["entries"] == []
