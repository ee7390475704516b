"""Tracing Python costs: operators, lsjit.numpy, Lie groups and errors, each checked against
the same code run on numbers (every function here also takes plain numpy values)."""

import numpy as np
import pytest

import lsjit
import lsjit.numpy as lnp
from conftest import Numbers


def kitchen_sink(v, x, y, d):
    """Uses every operator and lsjit.numpy function the package offers."""
    a, b = v[x], v[y]
    u = lnp.stack([a[0] + b[1], a[1] * 2.0 - b[0], a[2] / (1.5 + b[2] ** 2)])
    w = lnp.cross(a, b) + d[:3] @ np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.25], [0.0, 0.0, 1.0]])
    s = lnp.norm(a - b) + lnp.dot(a, b)
    trig = lnp.concatenate([lnp.sin(a) * lnp.cos(b), lnp.tan(0.1 * a), lnp.arctan2(a, 2.0 + b * b)])
    other = lnp.stack([lnp.sqrt(1.0 + a[0] ** 2), lnp.exp(0.1 * a[1]), lnp.log(2.0 + b[2] ** 2),
                       lnp.abs(a[0] - b[0]), lnp.minimum(a[1], b[1]), lnp.maximum(a[2], b[2]),
                       lnp.where(a[0] > b[0], a[0] * b[0], -a[1]), -s, 3.0 - a[2], 1.0 / (2.0 + a[0] ** 2)])
    picked = lnp.where(a > 0.0, a, 0.5 * b)
    return lnp.concatenate([u, w, trig, other, picked, d[3:] * a[0]])


@pytest.mark.parametrize("seed", [0, 1])
def test_traced_cost_matches_the_same_code_on_numbers(seed):
    rng = np.random.default_rng(seed)
    xs, ys, ds = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 5))
    cost = lsjit.cost(kitchen_sink)
    problem = lsjit.Problem()
    problem.add(cost, lsjit.Vec3Var(np.arange(4)), lsjit.Vec3Var(np.arange(4, 8)), ds)
    values = lsjit.Values()
    values[lsjit.Vec3Var(np.arange(4))] = xs
    values[lsjit.Vec3Var(np.arange(4, 8))] = ys
    analyzed = problem.analyze()
    (group,) = analyzed.evaluate_costs(values)
    for k in range(4):
        expected = kitchen_sink(Numbers(xs[k], ys[k]), 0, 1, ds[k])
        np.testing.assert_allclose(group["residuals"][k], expected, rtol=1e-12, atol=1e-12)
    assert analyzed.check_gradients(values)["passed"]


def test_lie_costs_trace_and_match_numbers():
    rng = np.random.default_rng(3)

    def residual(v, a, b, z):
        return (lsjit.SE3.from_params(z).inverse() @ v[a].inverse() @ v[b]).log()

    poses = [lsjit.SE3.exp(rng.normal(size=6)) for _ in range(3)]
    z = lsjit.SE3.exp(rng.normal(size=6)).params()
    problem = lsjit.Problem()
    problem.add(lsjit.cost(residual), lsjit.SE3Var(0), lsjit.SE3Var(1), z)
    problem.add(lsjit.cost(residual), lsjit.SE3Var(1), lsjit.SE3Var(2), z)
    values = lsjit.Values({lsjit.SE3Var(k): poses[k] for k in range(3)})
    analyzed = problem.analyze()
    groups = analyzed.evaluate_costs(values)
    got = np.concatenate([g["residuals"] for g in groups])
    expected = [residual(Numbers(poses[0], poses[1]), 0, 1, z), residual(Numbers(poses[1], poses[2]), 0, 1, z)]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    check = analyzed.check_gradients(values)
    assert check["passed"], check["report"]
    assert check["entries"] == 2 * 2 * 6 * 6


def test_if_on_a_traced_comparison_names_lsjit_where():
    @lsjit.cost
    def branches(v, x):
        if v[x][0] > 0:
            return v[x]
        return -v[x]

    problem = lsjit.Problem()
    problem.add(branches, lsjit.Vec2Var(0))
    with pytest.raises(lsjit.ConcretizationTypeError, match="lsjit.where"):
        problem.analyze()
    assert issubclass(lsjit.ConcretizationTypeError, TypeError)


def test_float_of_a_traced_value_is_refused():
    @lsjit.cost
    def to_float(v, x):
        return float(v[x][0]) * v[x]

    problem = lsjit.Problem()
    problem.add(to_float, lsjit.Vec2Var(0))
    with pytest.raises(lsjit.ConcretizationTypeError, match="as data"):
        problem.analyze()


def test_a_cost_exception_propagates_as_it_is():
    @lsjit.cost
    def raises(v, x):
        raise KeyError("from the cost")

    problem = lsjit.Problem()
    problem.add(raises, lsjit.Vec2Var(0))
    with pytest.raises(KeyError, match="from the cost"):
        problem.analyze()


def test_a_cost_without_a_residual_is_an_error():
    @lsjit.cost
    def nothing(v, x):
        return None

    problem = lsjit.Problem()
    problem.add(nothing, lsjit.Vec2Var(0))
    with pytest.raises(lsjit.Error, match="returned None"):
        problem.analyze()


def test_v_of_a_variable_that_is_not_an_argument_is_an_error():
    @lsjit.cost
    def wrong(v, x):
        return v[lsjit.Vec2Var(5)]

    problem = lsjit.Problem()
    problem.add(wrong, lsjit.Vec2Var(0))
    with pytest.raises(lsjit.Error, match="not one of the cost's arguments"):
        problem.analyze()


def test_traced_values_outside_a_trace_are_refused():
    with pytest.raises(lsjit.Error, match="trace"):
        lsjit.SE3.from_params([lsjit.Sym(0.0)] * 7)


def test_numpy_arithmetic_with_traced_values_stays_traced():
    @lsjit.cost
    def mixed(v, x, mask):
        y = v[x]
        scaled = np.ones(3) * y[0]  # numpy made this array, not lsjit
        return lnp.concatenate([lnp.where(scaled > y, y, -y), np.sin(y), [lsjit.where(mask[0] > 0, y[1], 0.0)],
                                [lsjit.select(np.bool_(True), y[2], 0.0)], [y[0] ** 3, y[1] ** (2 ** 40 + 1)]])

    problem = lsjit.Problem()
    problem.add(mixed, lsjit.Vec3Var(0), np.array([1.0]))
    x = np.array([0.5, -1.0, 2.0])
    (group,) = problem.analyze().evaluate_costs(lsjit.Values({lsjit.Vec3Var(0): x}))
    expected = np.concatenate([np.where(x[0] > x, x, -x), np.sin(x), [x[1]], [x[2]], [x[0] ** 3, -1.0]])
    np.testing.assert_allclose(group["residuals"][0], expected, rtol=1e-12)


def test_v_of_a_negative_or_huge_id_is_an_lsjit_error():
    for bad in (-1, 2 ** 40):
        @lsjit.cost
        def wrong(v, x):
            return v[lsjit.ScalarVar(bad)]

        problem = lsjit.Problem()
        problem.add(wrong, lsjit.ScalarVar(0))
        with pytest.raises(lsjit.Error, match="not one of the cost's arguments"):
            problem.analyze()
