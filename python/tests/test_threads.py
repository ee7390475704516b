"""solve() and analyze() release the GIL: Python threads solve at once, with the results
they get alone."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import lsjit
from conftest import ring_pose_graph, se2_between


def problem_of(n, seed):
    truth, edges, zs = ring_pose_graph(n, noise=0.02, seed=seed)
    problem = lsjit.Problem()
    problem.add(se2_between, lsjit.SE2Var(edges[:, 0]), lsjit.SE2Var(edges[:, 1]), zs)
    problem.set_constant(lsjit.SE2Var(0))
    initial = lsjit.Values({lsjit.SE2Var(np.arange(n)): np.array([t.params() for t in truth])})
    return problem, initial


def in_threads(jobs):
    results = [None] * len(jobs)
    errors = []

    def run(k):
        try:
            results[k] = jobs[k]()
        except BaseException as e:  # noqa: BLE001 (reported below, in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_two_threads_solve_one_analyzed_problem_as_alone():
    problem, initial = problem_of(3000, seed=1)
    analyzed = problem.analyze()
    alone = analyzed.solve(initial)
    together = in_threads([lambda: analyzed.solve(initial)] * 2)
    ids = lsjit.SE2Var(np.arange(3000))
    for r in together:
        assert r.summary.final_cost == alone.summary.final_cost
        assert r.summary.iterations == alone.summary.iterations
        np.testing.assert_array_equal(r.values[ids], alone.values[ids])


def test_two_threads_analyze_and_solve_their_own_problems():
    def job(seed):
        problem, initial = problem_of(500, seed)
        return lambda: problem.analyze().solve(initial)

    alone = [job(s)() for s in (2, 3)]
    together = in_threads([job(2), job(3)])
    ids = lsjit.SE2Var(np.arange(500))
    for a, b in zip(alone, together):
        assert a.summary.final_cost == b.summary.final_cost
        np.testing.assert_array_equal(a.values[ids], b.values[ids])


def test_changing_the_problem_while_it_is_analyzed_is_an_error():
    problem = lsjit.Problem()
    other = lsjit.cost(lambda v, x: v[x] - 1.0)

    @lsjit.cost
    def adds_while_traced(v, x):
        problem.add(other, lsjit.ScalarVar(1))
        return v[x] - 2.0

    problem.add(adds_while_traced, lsjit.ScalarVar(0))
    with pytest.raises(lsjit.Error, match="being analyzed"):
        problem.analyze()
    assert problem.num_instances == 1  # nothing was added, and the problem still works
    problem._analyzing = False


def test_values_changed_by_another_thread_during_a_solve():
    problem, initial = problem_of(2000, seed=4)
    analyzed = problem.analyze()
    alone = analyzed.solve(initial)
    stop = threading.Event()

    def grow():  # adds variables no cost uses: the solve's copy is unaffected
        k = 0
        while not stop.is_set():
            initial[lsjit.Vec3Var(np.arange(k, k + 2000))] = np.zeros((2000, 3))
            k += 2000

    grower = threading.Thread(target=grow)
    grower.start()
    try:
        results = [analyzed.solve(initial) for _ in range(3)]
    finally:
        stop.set()
        grower.join()
    ids = lsjit.SE2Var(np.arange(2000))
    for r in results:
        np.testing.assert_array_equal(r.values[ids], alone.values[ids])


def test_exit_waits_for_a_daemon_thread_solving():
    script = textwrap.dedent("""
        import threading, time, numpy as np, lsjit
        from conftest import ring_pose_graph, se2_between
        truth, edges, zs = ring_pose_graph(400, noise=0.05)
        p = lsjit.Problem()
        p.add(se2_between, lsjit.SE2Var(edges[:, 0]), lsjit.SE2Var(edges[:, 1]), zs)
        a = p.analyze()
        def work():
            while True:
                a.solve(None, max_iterations=50)
        threading.Thread(target=work, daemon=True).start()
        time.sleep(0.3)
        print("main thread exits")
    """)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(lsjit.__file__)))
    env = dict(os.environ, PYTHONPATH=package_root)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env,
                          cwd=os.path.dirname(os.path.abspath(__file__)))
    assert done.returncode == 0, done.stderr
    assert "main thread exits" in done.stdout
