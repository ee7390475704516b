"""solve() and analyze() release the GIL: Python threads solve at once, with the results
they get alone."""

import threading

import numpy as np

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
