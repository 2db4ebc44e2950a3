"""Quaternion helpers: round trips, broadcasting, corner cases (rotations by pi, opposite signs)."""

import numpy as np
import pytest

from core import quat

ORDERS = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]


def random_quats(rng, shape):
    return quat.normalize(rng.normal(size=shape + (4,)))


def same_rotation(a, b, atol=1e-9):
    """Quaternions equal up to sign."""
    return np.all(np.abs(np.abs(np.sum(a * b, axis=-1)) - 1.0) < atol)


def test_mul_matches_matrix_product():
    rng = np.random.default_rng(0)
    a, b = random_quats(rng, (50,)), random_quats(rng, (50,))
    np.testing.assert_allclose(quat.to_matrix(quat.mul(a, b)), quat.to_matrix(a) @ quat.to_matrix(b), atol=1e-12)


def test_mul_vec_matches_matrix_and_inverse_undoes_it():
    rng = np.random.default_rng(1)
    q, v = random_quats(rng, (40,)), rng.normal(size=(40, 3))
    np.testing.assert_allclose(quat.mul_vec(q, v), np.einsum("nij,nj->ni", quat.to_matrix(q), v), atol=1e-12)
    np.testing.assert_allclose(quat.inv_mul_vec(q, quat.mul_vec(q, v)), v, atol=1e-12)


def test_matrix_round_trip_including_rotations_by_pi():
    rng = np.random.default_rng(2)
    q = random_quats(rng, (100,))
    pi_turns = quat.from_axis_angle(np.eye(3), np.full(3, np.pi))
    q = np.concatenate([q, pi_turns, -pi_turns])
    assert same_rotation(quat.from_matrix(quat.to_matrix(q)), q)


@pytest.mark.parametrize("order", ORDERS)
def test_euler_round_trip_every_order(order):
    rng = np.random.default_rng(3)
    q = random_quats(rng, (200,))
    assert same_rotation(quat.from_euler(quat.to_euler(q, order), order), q)
    angles = rng.uniform(-1.4, 1.4, size=(200, 3))
    np.testing.assert_allclose(quat.to_euler(quat.from_euler(angles, order), order), angles, atol=1e-9)


def test_euler_order_means_matrix_product_in_listed_order():
    a = np.array([0.3, -0.5, 1.1])
    rz, rx, ry = (quat.to_matrix(quat.from_axis_angle(np.eye(3)[i], v)) for i, v in [(2, a[0]), (0, a[1]), (1, a[2])])
    np.testing.assert_allclose(quat.to_matrix(quat.from_euler(a, "ZXY")), rz @ rx @ ry, atol=1e-12)


def test_slerp_takes_the_short_arc_for_opposite_signs():
    a = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.2)
    b = -quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.6)
    mid = quat.slerp(a, b, 0.5)
    assert same_rotation(mid, quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.4))
    assert same_rotation(quat.slerp(a, b, 0.0), a) and same_rotation(quat.slerp(a, b, 1.0), b)


def test_slerp_of_identical_quaternions_is_that_quaternion():
    a = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 1.0)
    np.testing.assert_allclose(quat.slerp(a, a, 0.3), a, atol=1e-12)


def test_log_exp_round_trip_and_rotation_by_pi():
    rng = np.random.default_rng(4)
    q = random_quats(rng, (100,))
    assert same_rotation(quat.exp(quat.log(q)), q)
    r = quat.log(quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), np.pi))
    np.testing.assert_allclose(np.linalg.norm(r), np.pi, atol=1e-9)


def test_unroll_makes_neighbours_agree_without_changing_rotations():
    rng = np.random.default_rng(5)
    q = quat.slerp(random_quats(rng, ()), random_quats(rng, ()), np.linspace(0, 1, 30))
    flipped = q * rng.choice([-1.0, 1.0], size=(30, 1))
    un = quat.unroll(flipped)
    assert np.all(np.sum(un[1:] * un[:-1], axis=-1) >= 0)
    assert same_rotation(un, q)


def test_between_handles_opposite_directions():
    u = np.array([[1.0, 0, 0], [0, 1.0, 0], [0.3, 0.4, 0.5]])
    v = np.array([[-1.0, 0, 0], [0, 0, 1.0], [0.3, 0.4, 0.5]])
    np.testing.assert_allclose(quat.mul_vec(quat.between(u, v), u / np.linalg.norm(u, axis=-1, keepdims=True)),
                               v / np.linalg.norm(v, axis=-1, keepdims=True), atol=1e-12)


def test_bad_shapes_name_the_shape():
    with pytest.raises(ValueError, match=r"\(5, 3\)"):
        quat.mul(np.zeros((5, 3)), np.zeros((5, 4)))


def test_power_takes_its_own_arc_even_the_long_way():
    up = np.array([0.0, 0.0, 1.0])
    long_way = -quat.from_axis_angle(up, 0.5)  # the same rotation, its arc the long way round (2 pi - 0.5)
    half = quat.power(long_way, 0.5)
    assert np.isclose(quat.angle(half, quat.identity()), np.pi - 0.25)
    np.testing.assert_allclose(np.abs(quat.dot(quat.power(long_way, 1.0), long_way)), 1.0)
    np.testing.assert_allclose(quat.power(quat.from_axis_angle(up, 0.5), 0.5), quat.from_axis_angle(up, 0.25))


def test_mul_vec_and_cross_component_wise_are_the_stacked_formula_bit_for_bit():
    """The hot component-wise mul_vec and cross compute the obvious stacked formula
    (v + w t + u x t, t = 2 u x v) with the same products in the same order, broadcasting alike."""
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.normal(size=(5, 1, 4)))
    v = rng.normal(size=(1, 7, 3))

    def stacked_cross(a, b):
        return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                         a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)

    u = q[..., 1:]
    t = 2.0 * stacked_cross(u, v)
    assert np.array_equal(quat.mul_vec(q, v), v + q[..., :1] * t + stacked_cross(u, t))
    assert np.array_equal(quat.cross(u, v), stacked_cross(u, v))
    assert np.allclose(quat.cross(u, v), np.cross(u, v))
    assert quat.mul_vec(q[0, 0], v[0, 0]).shape == (3,)


@pytest.mark.parametrize("shapes", [((4,), (4,)), ((1, 4), (9, 4)), ((9, 4), (4,)), ((5, 1, 4), (1, 7, 4)), ((40, 4), (40, 4))])
def test_small_inputs_all_components_at_once_are_the_component_wise_formula_bit_for_bit(shapes, monkeypatch):
    """mul and mul_vec on a few quaternions compute every component at once; the
    result is the component-wise one to the last bit (signed zeros included), broadcasting alike."""
    rng = np.random.default_rng(4)
    a, b = (quat.normalize(rng.normal(size=s)) for s in shapes)
    a.reshape(-1, 4)[::2, 2] = 0.0  # exact zeros and negative zeros, as rest poses have
    b.reshape(-1, 4)[1::3, 1] = -0.0
    v = rng.normal(size=shapes[1][:-1] + (3,))
    fast = quat.mul(a, b), quat.mul_vec(a, v), quat.mul_vec(b, v[..., :1, :] if v.ndim > 1 else v)
    monkeypatch.setattr(quat, "SMALL", -1)
    slow = quat.mul(a, b), quat.mul_vec(a, v), quat.mul_vec(b, v[..., :1, :] if v.ndim > 1 else v)
    for x, y in zip(fast, slow):
        assert x.shape == y.shape
        assert np.array_equal(x, y) and np.array_equal(np.signbit(x), np.signbit(y))


def test_cross_is_numpys_bit_for_bit():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(6, 3)), rng.normal(size=3)
    assert np.array_equal(quat.cross(a, b), np.cross(a, b))


@pytest.mark.parametrize("components", [2, 3, 4, 7])
def test_sum_last_is_numpys_reduction_bit_for_bit(components):
    rng = np.random.default_rng(components)
    shape = (300, 5, components)  # many values: the component-slice path
    v = rng.normal(size=shape) * 10.0 ** rng.integers(-9, 9, shape)
    v[rng.random(shape) < 0.1] = -0.0  # a sum of zeros only is +0, as the reduction has it
    v[:20] = -0.0
    for x in (v, v.swapaxes(0, 1), v[:2]):  # a strided view, and few values (the reduction itself)
        for keepdims in (False, True):
            got, want = quat.sum_last(x, keepdims=keepdims), np.add.reduce(x, axis=-1, keepdims=keepdims)
            assert got.shape == want.shape
            assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("rows", [3, 200])  # few values (sums by reduction) and many (by slices)
def test_slerp_on_component_planes_is_slerp_bit_for_bit(rows):
    rng = np.random.default_rng(rows)
    a, b = random_quats(rng, (rows, 5)), random_quats(rng, (rows, 5))
    b[0] = -a[0]  # opposite signs: the short arc
    b[1] = a[1]  # the same rotation: sin(theta) below 1e-6, the other formula
    t = rng.random(rows)
    t[2] = 0.0
    planes = lambda q: np.moveaxis(q, -1, 0)  # noqa: E731
    for weights in (t, np.zeros(rows)):  # (t = 0 throughout takes slerp's shortcut)
        want = quat.slerp(a, b, weights[:, None])
        got = np.moveaxis(quat.slerp_planes(planes(a), planes(b), weights[:, None]), 0, -1)
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
        far = slice(2, None)  # (without the near-identical pair: slerp's usual formula)
        want = quat.slerp(a[far], b[far], weights[far, None])
        got = np.moveaxis(quat.slerp_planes(planes(a[far]), planes(b[far]), weights[far, None]), 0, -1)
        assert np.array_equal(got, want)
