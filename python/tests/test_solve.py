"""Problems built and solved from Python: pose graphs, batches, kinds, robust losses,
constraints, options, and the errors a user meets."""

import numpy as np
import pytest

import lsjit
import lsjit.numpy as lnp
from conftest import ring_pose_graph, se2_between


def ring_problem(n, noise=0.0):
    truth, edges, zs = ring_pose_graph(n, noise)
    problem = lsjit.Problem()
    problem.add(se2_between, lsjit.SE2Var(edges[:, 0]), lsjit.SE2Var(edges[:, 1]), zs)
    problem.set_constant(lsjit.SE2Var(0))
    return truth, problem


def test_exact_ring_solves_to_the_truth():
    truth, problem = ring_problem(40)
    rng = np.random.default_rng(1)
    initial = lsjit.Values({lsjit.SE2Var(k): t.retract(0.05 * rng.normal(size=3)) if k else t
                            for k, t in enumerate(truth)})
    result = problem.analyze().solve(initial, lsjit.SolverOptions(function_tolerance=1e-14, gradient_tolerance=1e-14))
    assert result.summary.usable and result.summary.final_cost < 1e-20
    for k, t in enumerate(truth):
        np.testing.assert_allclose(result[lsjit.SE2Var(k)].params(), t.params(), atol=1e-8)
    batch = result.values[lsjit.SE2Var(np.arange(40))]
    assert batch.shape == (40, 4)


def test_one_instance_at_a_time_is_the_same_problem_as_a_batch():
    truth, edges, zs = ring_pose_graph(12, noise=0.01)
    one = lsjit.Problem()
    for (i, j), z in zip(edges, zs):
        one.add(se2_between, lsjit.SE2Var(int(i)), lsjit.SE2Var(int(j)), z)
    one.set_constant(lsjit.SE2Var(0))
    many = lsjit.Problem([se2_between(lsjit.SE2Var(edges[:, 0]), lsjit.SE2Var(edges[:, 1]), zs)])
    many.set_constant(lsjit.SE2Var(0))
    initial = lsjit.Values({lsjit.SE2Var(k): t for k, t in enumerate(truth)})
    a, b = one.analyze(), many.analyze()
    assert len(a.groups()) == 1 and a.num_instances == b.num_instances == 12
    ra, rb = a.solve(initial), b.solve(initial)
    assert ra.summary.final_cost == rb.summary.final_cost
    np.testing.assert_array_equal(ra.values[lsjit.SE2Var(np.arange(12))], rb.values[lsjit.SE2Var(np.arange(12))])


def test_default_values_are_identity_and_zero():
    @lsjit.cost
    def prior(v, x, z):
        return v[x] - z

    z = np.array([1.0, -2.0, 3.0])
    problem = lsjit.Problem()
    problem.add(prior, lsjit.Vec3Var(4), z)
    result = problem.analyze().solve()
    assert result.summary.initial_cost == pytest.approx(0.5 * z @ z)
    np.testing.assert_allclose(result[lsjit.Vec3Var(4)], z, atol=1e-9)


def test_kinds_have_their_own_ids():
    class Landmark(lsjit.Vec3Var):
        pass

    @lsjit.cost
    def prior(v, x, z):
        return v[x] - z

    problem = lsjit.Problem()
    problem.add(prior, lsjit.Vec3Var(0), np.ones(3))
    problem.add(prior, Landmark(0), -np.ones(3))
    result = problem.analyze().solve()
    np.testing.assert_allclose(result[lsjit.Vec3Var(0)], np.ones(3), atol=1e-9)
    np.testing.assert_allclose(result[Landmark(0)], -np.ones(3), atol=1e-9)
    assert Landmark.type_name == "Landmark"
    with pytest.raises(lsjit.Error, match="built-in"):
        class Vec3(lsjit.Vec3Var):  # noqa: F841 (the kind's name is a built-in type's)
            pass


def test_robust_loss_discounts_an_outlier():
    @lsjit.cost
    def line(v, ab, xy):
        return v[ab][0] * xy[0] + v[ab][1] - xy[1]

    x = np.linspace(0, 1, 30)
    y = 2.0 * x + 1.0
    y[5] += 50.0
    data = np.stack([x, y], axis=1)
    fits = {}
    for name, loss in (("plain", None), ("cauchy", lsjit.cauchy_loss(0.1))):
        problem = lsjit.Problem()
        problem.add(line, lsjit.Vec2Var(np.zeros(30, dtype=int)), data, loss=loss)
        fits[name] = problem.analyze().solve()[lsjit.Vec2Var(0)]
    assert np.abs(fits["cauchy"] - [2.0, 1.0]).max() < 1e-3
    assert np.abs(fits["plain"] - [2.0, 1.0]).max() > 0.5


def test_equality_constraint():
    @lsjit.cost
    def near(v, x, a):
        return v[x] - a

    @lsjit.cost(kind="equality")
    def sums_to_one(v, x):
        return v[x][0] + v[x][1] + v[x][2] - 1.0

    a = np.array([0.5, 0.2, 0.9])
    problem = lsjit.Problem([near(lsjit.Vec3Var(0), a), sums_to_one(lsjit.Vec3Var(0))])
    result = problem.analyze().solve()
    np.testing.assert_allclose(result[lsjit.Vec3Var(0)], a - (a.sum() - 1.0) / 3, atol=1e-6)


def test_inequality_constraints():
    @lsjit.cost
    def near(v, x, a):
        return v[x] - a

    @lsjit.cost(kind="inequality_le")
    def at_most_one(v, x):
        return v[x][0] - 1.0  # x0 <= 1

    @lsjit.cost(kind="inequality_ge")
    def at_least_two(v, x):
        return v[x][1] - 2.0  # x1 >= 2

    problem = lsjit.Problem([near(lsjit.Vec2Var(0), np.array([3.0, 0.0])), at_most_one(lsjit.Vec2Var(0)),
                             at_least_two(lsjit.Vec2Var(0))])
    result = problem.analyze().solve()
    np.testing.assert_allclose(result[lsjit.Vec2Var(0)], [1.0, 2.0], atol=1e-6)
    assert result.summary.constraint_violation < 1e-8


def test_data_broadcasts_over_a_batch_and_matrices_keep_their_layout():
    @lsjit.cost
    def weighted(v, x, w, z):
        return w @ (v[x] - z)

    w = np.array([[2.0, 1.0], [0.0, 3.0]])
    zs = np.arange(10.0).reshape(5, 2)
    problem = lsjit.Problem()
    problem.add(weighted, lsjit.Vec2Var(np.arange(5)), w[None], zs)
    values = lsjit.Values({lsjit.Vec2Var(np.arange(5)): np.zeros((5, 2))})
    (group,) = problem.analyze().evaluate_costs(values)
    np.testing.assert_allclose(group["residuals"], -(zs @ w.T))


def test_options_and_summary():
    _, problem = ring_problem(10, noise=0.05)
    analyzed = problem.analyze()
    result = analyzed.solve(None, lsjit.SolverOptions(max_iterations=1, linear_solver="dense_cholesky"))
    assert result.summary.iterations <= 1
    assert result.summary.linear_solver == "dense_cholesky"
    assert "final cost" in result.summary.brief_report() and "Termination" in result.summary.report()
    assert '"final_cost"' in result.summary.json()
    with pytest.raises(TypeError, match="no field 'max_iteration'"):
        lsjit.SolverOptions(max_iteration=3)
    with pytest.raises(ValueError, match="unknown solver"):
        lsjit.SolverOptions(linear_solver="qr")


def test_sequential_solves_reuse_the_analysis():
    truth, problem = ring_problem(20, noise=0.02)
    analyzed = problem.analyze()
    first = analyzed.solve()
    again = analyzed.solve(first.values)
    assert again.summary.compiles == 0
    assert again.summary.final_cost <= first.summary.final_cost * (1 + 1e-12)


def test_bad_input_is_a_clear_error_and_adds_nothing():
    problem = lsjit.Problem()
    ids3, ids2 = lsjit.SE2Var(np.arange(3)), lsjit.SE2Var(np.arange(2))
    cases = [
        (lambda: problem.add(se2_between, ids3, lsjit.SE2Var(np.arange(1, 4)), np.zeros((2, 4))),
         "data argument 3 has shape \\(2, 4\\): with 3 instances"),
        (lambda: problem.add(se2_between, ids3, ids2, np.zeros((3, 4))), "different lengths"),
        (lambda: problem.add(se2_between, np.zeros(4)), "at least one variable"),
        (lambda: problem.add(se2_between, ids3, lsjit.SE2Var(np.arange(3)), [["a"] * 4] * 3), "not numbers"),
        (lambda: problem.add(se2_between, ids3, lsjit.SE2Var(np.arange(3)), np.full((3, 4), np.nan)),
         "NaN or an infinity \\(first at instance 0\\)"),
        (lambda: problem.add(se2_between, ids3, lsjit.SE2Var(np.arange(3)), np.zeros((3, 2, 2, 1))),
         "expected a number, a vector or a matrix"),
        (lambda: lsjit.SE2Var(np.array([0.5])), "integers"),
        (lambda: lsjit.SE2Var(np.zeros((2, 2), dtype=int)), "1-D array"),
        (lambda: lsjit.VecVar(40), "from 1 to 32"),
        (lambda: lsjit.Values({lsjit.SE2Var(0): np.zeros(3)}), "shape \\(4,\\)"),
        (lambda: lsjit.Values({lsjit.Vec2Var(0): [np.nan, 0.0]}), "not finite"),
        (lambda: lsjit.SE3.from_params([0, 0, 1]), "7 numbers"),
    ]
    for call, message in cases:
        with pytest.raises(lsjit.InputError, match=message):
            call()
    assert issubclass(lsjit.InputError, ValueError) and issubclass(lsjit.InputError, lsjit.Error)
    assert problem.num_instances == 0
    with pytest.raises(lsjit.Error, match="quaternion"):
        lsjit.Values({lsjit.SE3Var(0): np.zeros(7)})
    with pytest.raises(lsjit.MissingValueError, match="no value for SE2 variable 9"):
        lsjit.Values()[lsjit.SE2Var(9)]


def test_a_missing_initial_value_is_an_error_that_names_it():
    _, problem = ring_problem(5)
    initial = lsjit.Values({lsjit.SE2Var(k): lsjit.SE2.identity() for k in range(4)})
    with pytest.raises(lsjit.MissingValueError, match="SE2 variable 4"):
        problem.analyze().solve(initial)
    assert issubclass(lsjit.MissingValueError, KeyError)


def test_a_cost_returning_the_wrong_thing_is_a_trace_error():
    @lsjit.cost
    def ragged(v, x):
        return [v[x], v[x][0]]

    @lsjit.cost
    def empty(v, x):
        return []

    @lsjit.cost
    def text(v, x):
        return "residual"

    for cost, message in ((ragged, "returned a list"), (empty, "no residual"), (text, "returned a str")):
        problem = lsjit.Problem()
        problem.add(cost, lsjit.Vec2Var(0))
        with pytest.raises(lsjit.TraceError, match=message):
            problem.analyze()


def test_non_finite_values_at_the_start_are_a_failure_summary():
    @lsjit.cost
    def log_prior(v, x):
        return lnp.log(v[x])

    problem = lsjit.Problem()
    problem.add(log_prior, lsjit.Vec2Var(0))
    result = problem.analyze().solve(lsjit.Values({lsjit.Vec2Var(0): [-1.0, 1.0]}))
    assert result.summary.termination == "failure" and "not finite" in result.summary.message


def test_evaluate_matches_finite_differences():
    truth, problem = ring_problem(8, noise=0.1)
    analyzed = problem.analyze()
    values = lsjit.Values({lsjit.SE2Var(k): t for k, t in enumerate(truth)})
    cost, gradient, hessian = analyzed.evaluate(values, gauss_newton=True)
    assert cost == pytest.approx(analyzed.cost(values))
    free = analyzed.free_variables()
    assert len(free) == 7 and gradient.shape == (21,) and hessian.shape == (21, 21)
    h = 1e-6
    for type_name, var_id, offset, tangent in free[:3]:
        for c in range(tangent):
            delta = np.zeros(tangent)
            delta[c] = h
            plus, minus = values.copy(), values.copy()
            plus[lsjit.SE2Var(var_id)] = values[lsjit.SE2Var(var_id)].retract(delta)
            minus[lsjit.SE2Var(var_id)] = values[lsjit.SE2Var(var_id)].retract(-delta)
            numeric = (analyzed.cost(plus) - analyzed.cost(minus)) / (2 * h)
            assert gradient[offset + c] == pytest.approx(numeric, rel=1e-5, abs=1e-8)


def test_batch_sweep_and_sequence_give_what_single_solves_give():
    truth, problem = ring_problem(30, noise=0.05)
    analyzed = problem.analyze()
    rng = np.random.default_rng(4)
    starts = [lsjit.Values({lsjit.SE2Var(k): t.retract(0.1 * rng.normal(size=3)) if k else t
                            for k, t in enumerate(truth)}) for _ in range(3)]
    ids = lsjit.SE2Var(np.arange(30))
    batch = lsjit.solve_batch(analyzed, starts, threads=2)
    for start, r in zip(starts, batch):
        alone = analyzed.solve(start)
        assert r.summary.final_cost == alone.summary.final_cost
        np.testing.assert_array_equal(r.values[ids], alone.values[ids])
    options = [lsjit.SolverOptions(initial_trust_region_radius=radius) for radius in (1e-2, 1e4)]
    swept = lsjit.sweep(analyzed, starts[0], options)
    assert [r.summary.iterations for r in swept] == [analyzed.solve(starts[0], o).summary.iterations
                                                     for o in options]
    chain = lsjit.solve_sequence([analyzed, analyzed], starts[0])
    assert len(chain) == 2
    np.testing.assert_array_equal(chain[1].values[ids], analyzed.solve(chain[0].values).values[ids])


def test_jaxls_style_ports_line_by_line():
    class MyVar(lsjit.Vec2Var):
        pass

    @lsjit.Cost.factory
    def pairwise_cost(vals, a, b, d):
        return vals[b] - vals[a] - d

    data = np.ones((10, 2))
    costs_a = [pairwise_cost(MyVar(id=np.arange(10)), MyVar(id=np.arange(10) + 1), data)]
    costs_b = [pairwise_cost(MyVar(id=i), MyVar(id=i + 1), data[i]) for i in range(10)]
    prior = lsjit.Cost.factory(lambda vals, v: vals[v])(MyVar(id=0))
    solutions = []
    for costs in (costs_a, costs_b):
        problem = lsjit.LeastSquaresProblem(costs + [prior]).analyze()
        assert len(problem.groups()) == 2
        solutions.append(problem.solve().vals[MyVar(id=np.arange(11))])
    np.testing.assert_allclose(solutions[0], np.arange(11)[:, None] * np.ones(2), atol=1e-9)
    np.testing.assert_array_equal(solutions[0], solutions[1])


def test_covariance_of_a_linear_problem_is_the_inverse_information():
    @lsjit.cost
    def weighted_prior(v, x, z, U):
        return U @ (v[x] - z)

    @lsjit.cost
    def difference(v, x, y):
        return v[y] - v[x]

    U = np.array([[2.0, 0.5], [0.0, 1.0]])
    problem = lsjit.Problem()
    problem.add(weighted_prior, lsjit.Vec2Var(0), np.zeros(2), U)
    problem.add(difference, lsjit.Vec2Var(0), lsjit.Vec2Var(1))
    analyzed = problem.analyze()
    values = analyzed.solve().values
    J = np.block([[U, np.zeros((2, 2))], [-np.eye(2), np.eye(2)]])
    expected = np.linalg.inv(J.T @ J)
    for algorithm in ("dense", "sparse"):
        p00, p01 = analyzed.covariance(values, [lsjit.Vec2Var(0), (lsjit.Vec2Var(0), lsjit.Vec2Var(1))],
                                       algorithm=algorithm)
        np.testing.assert_allclose(p00, expected[:2, :2], atol=1e-12)
        np.testing.assert_allclose(p01, expected[:2, 2:], atol=1e-12)
    with pytest.raises(lsjit.Error, match="Covariance"):
        analyzed.covariance(values, [lsjit.Vec2Var(7)])


def test_more_bad_input_is_an_lsjit_error():
    _, problem = ring_problem(5)
    analyzed = problem.analyze()
    v = lsjit.Values({lsjit.SE2Var(k): lsjit.SE2.identity() for k in range(5)})
    cases = [
        (lambda: problem.add(se2_between, lsjit.SE2Var(0), lsjit.SE2Var(1), np.zeros(4), loss="huber"), "loss"),
        (lambda: analyzed.solve(v, "fast"), "SolverOptions"),
        (lambda: lsjit.SolverOptions(max_iterations=2.5), "max_iterations"),
        (lambda: problem.set_constant(3), "expected a variable"),
        (lambda: v[3], "as key"),
        (lambda: 3 in v, "expected a variable"),
        (lambda: analyzed.cost({}), "lsjit.Values"),
        (lambda: lsjit.solve_sequence([], v), "no problems"),
        (lambda: lsjit.SO2.from_angle("x"), "number or a Sym"),
        (lambda: lsjit.SE3.from_rotation_and_translation([0, 0, 0, 1], np.zeros(3)), "lsjit.SO3"),
        (lambda: lsjit.SE2Var(float("inf")), "integers"),
        (lambda: lsjit.SE2Var(1e30), "integers"),
        (lambda: lsjit.Values({lsjit.Vec2Var(0): [1j, 0]}), "complex"),
        (lambda: problem.add(se2_between, lsjit.SE2Var(0), lsjit.SE2Var(1), np.zeros(4) * 1j), "complex"),
        (lambda: lsjit.Values({lsjit.SE3Var(0): np.zeros(7)}), "zero quaternion"),
        (lambda: lsjit.Values({lsjit.SO2Var(0): np.zeros(2)}), "zero rotation"),
    ]
    for call, message in cases:
        with pytest.raises(lsjit.InputError, match=message):
            call()
    with pytest.raises(TypeError, match="no field 'validate'"):
        lsjit.SolverOptions(validate=3)
    partial = lsjit.Values({lsjit.SE2Var(k): lsjit.SE2.identity() for k in range(4)})
    for call in (lambda: analyzed.cost(partial), lambda: analyzed.evaluate(partial),
                 lambda: analyzed.evaluate_costs(partial), lambda: analyzed.check_gradients(partial)):
        with pytest.raises(lsjit.MissingValueError, match="SE2 variable 4"):
            call()


def test_named_copies_of_a_cost_share_one_group():
    problem = lsjit.Problem()
    for k in range(10):
        problem.add(se2_between.named(["a", "b"], ["z"]), lsjit.SE2Var(k), lsjit.SE2Var(k + 1), np.zeros(4) + [0, 0, 1, 0])
    assert len(problem.analyze().groups()) == 1


def test_lie_group_data_arguments():
    @lsjit.cost(name="py_se2_prior")
    def se2_prior(v, x, prior, U):
        assert isinstance(prior, lsjit.SE2) and prior.is_traced  # the element, as C++'s SE2d data
        return U @ (prior.inverse() @ v[x]).log()

    targets = [lsjit.SE2.exp([0.1 * k, 0.2, 0.3 - 0.1 * k]) for k in range(4)]
    problem = lsjit.Problem()
    problem.add(se2_prior, lsjit.SE2Var(np.arange(3)), lsjit.SE2.batch(targets[:3]), 2 * np.eye(3)[None])
    problem.add(se2_prior, lsjit.SE2Var(3), targets[3], np.eye(3))  # one element, one instance
    analyzed = problem.analyze()
    assert len(analyzed.groups()) == 1
    result = analyzed.solve()
    for k, t in enumerate(targets):
        np.testing.assert_allclose(result[lsjit.SE2Var(k)].params(), t.params(), atol=1e-8)
    with pytest.raises(lsjit.InputError, match="2 SE2 elements: expected 3"):
        problem.add(se2_prior, lsjit.SE2Var(np.arange(3)), lsjit.SE2.batch(targets[:2]), np.eye(3)[None])
    with pytest.raises(lsjit.InputError, match="shape \\(n, 4\\)"):
        lsjit.SE2.batch(np.zeros((3, 3)))
