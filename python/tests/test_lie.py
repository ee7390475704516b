"""lsjit.SO2 SE2 SO3 SE3 on numbers: the C++ layouts, and the group laws checked against
their matrices."""

import numpy as np
import pytest

import lsjit

GROUPS = [(lsjit.SO2, 1, 2), (lsjit.SE2, 3, 3), (lsjit.SO3, 3, 3), (lsjit.SE3, 6, 4)]


def test_layouts_are_the_cpp_ones():
    np.testing.assert_array_equal(lsjit.SE3.identity().params(), [0, 0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(lsjit.SO3.identity().params(), [0, 0, 0, 1])
    np.testing.assert_array_equal(lsjit.SE2.identity().params(), [0, 0, 1, 0])
    np.testing.assert_array_equal(lsjit.SO2.identity().params(), [1, 0])
    g = lsjit.SE2.exp([1.0, 2.0, 0.0])
    np.testing.assert_allclose(g.translation(), [1.0, 2.0])
    t = lsjit.SE3.exp([1.0, 2.0, 3.0, 0, 0, 0])
    np.testing.assert_allclose(t.params()[:3], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("group,tangent,matrix", GROUPS)
def test_group_laws_match_the_matrices(group, tangent, matrix):
    rng = np.random.default_rng(tangent)
    a, b = group.exp(rng.normal(size=tangent)), group.exp(rng.normal(size=tangent))
    np.testing.assert_allclose((a @ b).as_matrix(), a.as_matrix() @ b.as_matrix(), atol=1e-12)
    np.testing.assert_allclose(a.inverse().as_matrix(), np.linalg.inv(a.as_matrix()), atol=1e-12)
    xi = 0.5 * rng.normal(size=tangent)
    np.testing.assert_allclose(group.exp(xi).log(), xi, atol=1e-12)
    np.testing.assert_allclose(a.local(a.retract(xi)), xi, atol=1e-10)
    assert group.exp(xi).as_matrix().shape == (matrix, matrix)


@pytest.mark.parametrize("group,dim", [(lsjit.SE2, 2), (lsjit.SE3, 3), (lsjit.SO3, 3)])
def test_act_is_the_homogeneous_product(group, dim):
    rng = np.random.default_rng(dim)
    g = group.exp(rng.normal(size=group._f64.tangent))
    p = rng.normal(size=dim)
    m = g.as_matrix()
    expected = m @ p if m.shape[0] == dim else (m @ np.append(p, 1.0))[:dim]
    np.testing.assert_allclose(g @ p, expected, atol=1e-12)
    np.testing.assert_allclose(g.act(p), expected, atol=1e-12)


def test_rotation_and_translation_round_trip():
    g = lsjit.SE3.exp([0.1, -0.2, 0.3, 0.4, 0.5, -0.6])
    h = lsjit.SE3.from_rotation_and_translation(g.rotation(), g.translation())
    np.testing.assert_allclose(h.params(), g.params())


def test_bad_sizes_are_errors():
    with pytest.raises(ValueError, match="7 numbers"):
        lsjit.SE3.from_params([0, 0, 1])
    with pytest.raises(ValueError, match="tangent"):
        lsjit.SE2.exp([1.0])
