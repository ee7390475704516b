"""lsjit.IncrementalSolver from Python: a ring grown pose by pose against the batch solve,
no trace after the first update, removal, and errors that change nothing."""

import numpy as np
import pytest

import lsjit
from conftest import ring_pose_graph, se2_between


def replay_ring(n, noise, solver):
    truth, edges, zs = ring_pose_graph(n, noise, seed=3)
    for k in range(n):
        costs = lsjit.Problem()
        values = lsjit.Values()
        if k == 0:
            values[lsjit.SE2Var(0)] = truth[0]
            costs.set_constant(lsjit.SE2Var(0))
        else:
            start = solver.estimate()[lsjit.SE2Var(k - 1)] @ lsjit.SE2.from_params(zs[k - 1])
            values[lsjit.SE2Var(k)] = start
            costs.add(se2_between, lsjit.SE2Var(k - 1), lsjit.SE2Var(k), zs[k - 1])
            if k == n - 1:  # the closing edge
                costs.add(se2_between, lsjit.SE2Var(n - 1), lsjit.SE2Var(0), zs[n - 1])
        summary = solver.update(costs, values)
        assert costs.num_instances == 0  # consumed
    return truth, edges, zs, summary


def test_a_grown_ring_ends_at_the_batch_optimum_without_tracing_again():
    solver = lsjit.IncrementalSolver()
    truth, edges, zs, last = replay_ring(60, 0.02, solver)
    assert solver.traces == 1
    assert last["traces"] == 0 and last["compiles"] == 0
    assert solver.num_variables == 60 and solver.num_costs == 60
    batch = lsjit.Problem()
    batch.add(se2_between, lsjit.SE2Var(edges[:, 0]), lsjit.SE2Var(edges[:, 1]), zs)
    batch.set_constant(lsjit.SE2Var(0))
    initial = lsjit.Values({lsjit.SE2Var(np.arange(60)): np.array([t.params() for t in truth])})
    optimum = batch.analyze().solve(initial).summary.final_cost
    # The ring closes at the last update, a long loop linearized once: as with ISAM2, empty
    # updates relinearize and take further Gauss-Newton steps.
    assert solver.cost() > optimum * (1 + 1e-3)
    for _ in range(10):
        solver.update()
    assert optimum <= solver.cost() <= optimum * (1 + 1e-3) + 1e-12


def test_removing_a_cost_and_bad_updates():
    solver = lsjit.IncrementalSolver(relinearize_threshold=0.0, relinearize_skip=1, wildfire_threshold=0.0)
    replay_ring(20, 0.0, solver)
    cost = solver.cost()
    wrong = lsjit.Problem()
    wrong.add(se2_between, lsjit.SE2Var(2), lsjit.SE2Var(12), [3.0, 1.0, 1.0, 0.0])
    solver.update(wrong)
    assert solver.num_costs == 21 and solver.cost() > cost + 1
    solver.update(removed=solver.last_added)
    assert solver.num_costs == 20
    for _ in range(5):  # Gauss-Newton steps back to the ring (everything relinearized at each)
        solver.update()
    assert solver.cost() == pytest.approx(cost, abs=1e-9)
    unknown = lsjit.Problem()
    unknown.add(se2_between, lsjit.SE2Var(2), lsjit.SE2Var(99), [1.0, 0.0, 1.0, 0.0])
    with pytest.raises(lsjit.Error, match="SE2 variable 99, which neither exists nor is in new_values"):
        solver.update(unknown)
    with pytest.raises(lsjit.Error, match="already exists"):
        solver.update(None, lsjit.Values({lsjit.SE2Var(3): [0.0, 0.0, 1.0, 0.0]}))
    with pytest.raises(lsjit.Error, match="names no live cost"):
        solver.update(removed=[(0, 999)])
    with pytest.raises(lsjit.InputError, match="a \\(kind, instance\\) pair"):
        solver.update(removed=["x"])
    assert solver.num_costs == 20 and solver.cost() == pytest.approx(cost, abs=1e-9)
