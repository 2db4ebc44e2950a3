"""Flat quaternion functions over arrays of shape ``(..., 4)``.

Convention (the only one in this project): quaternions are ``(w, x, y, z)``,
real part first, as Blender stores them. They represent rotations acting on
column vectors, ``mul(a, b)`` applies ``b`` first, then ``a``. Every function
broadcasts over the leading ``...`` axes and never changes its inputs.

Euler angles are given in radians with an ``order`` string such as ``"ZXY"``
meaning the matrix product ``R_Z @ R_X @ R_Y`` (the order in which BVH lists
its rotation channels; the rightmost rotation is applied to a vector first).
"""

from __future__ import annotations

import numpy as np

# (sums over the last axis are written np.add.reduce, np.sum's own reduction, the same bits,
# without its dispatch, which costs more than the arithmetic on the few frames most calls see;
# or, over many, :func:`sum_last`)

# From this many values on, :func:`sum_last` adds a short last axis's components one by one.
MANY_VALUES = 512


def sum_last(v: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """``np.add.reduce(v, axis=-1)``: the same bits, faster over many values.

    Over a last axis of fewer than 8 components numpy's reduction adds them in order to its
    identity, ``(((0 + v0) + v1) + v2) + v3`` (its pairwise sum starts at 8), but strides along that short
    axis: about seven times slower over a few thousand quaternions (a clip's poses) than the
    same additions of whole component slices. Over a few values the one reduction call is
    cheaper, and is kept; so is it for other types than float64 (float16 sums in float32)."""
    n = v.shape[-1] if v.ndim else 0
    if v.size < MANY_VALUES or not 2 <= n < 8 or v.dtype != np.float64:
        return np.add.reduce(v, axis=-1, keepdims=keepdims)
    out = v[..., 0] + v[..., 1]
    for c in range(2, n):
        out += v[..., c]
    # (0 + v0 differs from v0 only for v0 = -0, and then the sum only where every term is -0:
    # adding the 0 last makes that sum +0, as the reduction has it, and changes nothing else)
    out += 0.0
    return out[..., None] if keepdims else out


_AXES = {"X": 0, "Y": 1, "Z": 2}


def _check(q: np.ndarray, name: str = "q") -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    if q.shape[-1:] != (4,):
        raise ValueError(f"{name} must have shape (..., 4), got {q.shape}")
    return q


def _broadcast(a: tuple, b: tuple) -> tuple:
    """``np.broadcast_shapes`` of two shapes, at once where they are equal (the common case, and
    the hot functions here run mostly on a few frames, where its overhead counts)."""
    return a if a == b else np.broadcast_shapes(a, b)


def identity(shape: tuple[int, ...] = ()) -> np.ndarray:
    """Identity rotations of shape ``shape + (4,)``."""
    q = np.zeros(tuple(shape) + (4,))
    q[..., 0] = 1.0
    return q


def length(v: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """Euclidean length over the last axis of real ``v (..., n)``: ``np.linalg.norm(v, axis=-1)``'s
    own arithmetic (the same bits) without its dispatch, which costs more than the arithmetic on
    the few frames most calls here see."""
    v = np.asarray(v)
    if v.dtype.kind != "f":
        v = v.astype(np.float64)
    return np.sqrt(sum_last(v * v, keepdims=keepdims))


def normalize(q: np.ndarray) -> np.ndarray:
    """Unit quaternions ``(..., 4)``; raises on zero-length input."""
    q = _check(q)
    n = length(q, keepdims=True)
    if (n < 1e-12).any():
        raise ValueError("cannot normalise a zero-length quaternion")
    return q / n


# Up to this many values, :func:`mul` and :func:`mul_vec` compute all components at once
# (a few numpy calls over gathered components) rather than one component at a time;
# above it the gathering costs more than the calls it saves.
SMALL = 160

# the Hamilton product a * b as aw * b plus the terms of ax, ay and az, each with b's
# components in this order and with these signs (e.g. w: aw bw - ax bx - ay by - az bz)
_MUL_ORDER = np.array([[1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]])
_MUL_SIGNS = np.array([[-1.0, 1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0]])
# the same with aw b as the first of four terms
_MUL_ORDER_ALL = np.concatenate([[[0, 1, 2, 3]], _MUL_ORDER])
_MUL_SIGNS_ALL = np.concatenate([np.ones((1, 4)), _MUL_SIGNS])
# u x v as u[(y, z, x)] v[(z, x, y)] - u[(z, x, y)] v[(y, z, x)]: the quaternion's and the vector's indices
_CROSS_Q = np.array([[2, 3, 1], [3, 1, 2]])
_CROSS_V = np.array([[2, 0, 1], [1, 2, 0]])


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b``: the rotation ``b`` followed by ``a``."""
    a, b = _check(a, "a"), _check(b, "b")
    if a.size <= SMALL and b.size <= SMALL:
        # every component at once: the same products summed in the same order as below
        # (``x - y == x + (-y)`` and ``a (-b) == -(a b)``, both exact), so the same bits
        terms = a[..., :, None] * (b[..., _MUL_ORDER_ALL] * _MUL_SIGNS_ALL)
        out = np.add(terms[..., 0, :], terms[..., 1, :])
        out += terms[..., 2, :]
        out += terms[..., 3, :]
        return out
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    # written into one array rather than stacked: it is hot, mostly on a few frames
    out = np.empty(_broadcast(a.shape, b.shape))
    out[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


_CONJUGATE = np.array([1.0, -1.0, -1.0, -1.0])


def inv(q: np.ndarray) -> np.ndarray:
    """Inverse of unit quaternions (the conjugate)."""
    q = _check(q)
    return q * _CONJUGATE


def inv_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``inv(a) * b``: ``b`` expressed relative to ``a``."""
    return mul(inv(a), b)


def mul_vec(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v (..., 3)`` by unit quaternions ``q (..., 4)``."""
    q = _check(q)
    v = np.asarray(v, dtype=np.float64)
    if q.size <= SMALL and v.size <= SMALL:
        # v + w t + u x t with t = 2 u x v, every component at once (the same
        # products and sums in the same order as below, so the same bits)
        u = q[..., _CROSS_Q]
        p = u * v[..., _CROSS_V]
        t = p[..., 0, :] - p[..., 1, :]
        t *= 2.0
        out = q[..., :1] * t
        out += v
        p = u * t[..., _CROSS_V]
        out += p[..., 0, :] - p[..., 1, :]
        return out
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    vx, vy, vz = v[..., 0], v[..., 1], v[..., 2]
    # v + w t + u x t with t = 2 u x v (u the vector part), component by component
    # into one array: it is hot, mostly on a few frames, where stacking costs more
    # than the arithmetic
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    out = np.empty(_broadcast(q.shape[:-1] + (3,), v.shape))
    out[..., 0] = vx + w * tx + (y * tz - z * ty)
    out[..., 1] = vy + w * ty + (z * tx - x * tz)
    out[..., 2] = vz + w * tz + (x * ty - y * tx)
    return out


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` over the last axis of 3-vectors (broadcast), without its axis bookkeeping (it is hot)."""
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(_broadcast(np.shape(a), np.shape(b)))
    out[..., 0] = ay * bz - az * by
    out[..., 1] = az * bx - ax * bz
    out[..., 2] = ax * by - ay * bx
    return out


def inv_mul_vec(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors by the inverse of ``q``."""
    return mul_vec(inv(q), v)


def standardize(q: np.ndarray) -> np.ndarray:
    """Pick the sign with ``w >= 0`` (q and -q are the same rotation)."""
    q = _check(q)
    return np.where(q[..., :1] < 0.0, -q, q)


def unroll(q: np.ndarray, axis: int = 0) -> np.ndarray:
    """Flip signs along ``axis`` so that neighbouring quaternions agree.

    Keeping the sign continuous is sequential (each flip depends on the
    previous decision), so this is the one honest loop over frames; it is
    done as a cumulative parity over the per-step sign disagreements, which
    is the same thing in closed form.
    """
    q = np.moveaxis(_check(q), axis, 0).copy()
    if len(q) < 2:
        return np.moveaxis(q, 0, axis)
    dots = np.add.reduce(q[1:] * q[:-1], axis=-1)
    flips = np.cumsum(dots < 0.0, axis=0) % 2
    q[1:] *= np.where(flips[..., None] == 1, -1.0, 1.0)
    return np.moveaxis(q, 0, axis)


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return sum_last(_check(a, "a") * _check(b, "b"))


def angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle in radians between two unit quaternions, in [0, pi]."""
    d = np.clip(np.abs(dot(a, b)), 0.0, 1.0)
    return 2.0 * np.arccos(d)


def slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """Spherical interpolation from ``a`` (t=0) to ``b`` (t=1).

    Takes the shorter arc (``b`` is flipped into ``a``'s hemisphere), so the
    result never swings the long way round. ``t`` broadcasts against
    ``(...)`` of the quaternions.
    """
    a, b = _check(a, "a"), _check(b, "b")
    t = np.asarray(t, dtype=np.float64)[..., None]
    d = sum_last(a * b, keepdims=True)
    # b flipped into a's hemisphere, as a sign on its weight: x (-b) and (-x) b are the same
    # number (a product's sign is its factors'), and the weights are a quarter of b's size
    sign = np.where(d < 0.0, -1.0, 1.0)
    if not t.any():
        # t = 0 throughout (poses sampled at whole frames): below, wa is exactly 1
        # (sin(theta) / sin(theta), or 1 - t) and wb exactly t (sin(t theta) / sin(theta)
        # is a zero of t's sign, or t), so this is the same sum, to the sign of a zero,
        # without the four transcendental functions
        return normalize(a + t * sign * b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    near = s < 1e-6
    if not near.any():  # (the usual case: each np.where below would take its second branch)
        return normalize(np.sin((1.0 - t) * theta) / s * a + np.sin(t * theta) / s * sign * b)
    safe = np.where(near, 1.0, s)
    wa = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(near, t, np.sin(t * theta) / safe) * sign
    return normalize(wa * a + wb * b)


def slerp_planes(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """:func:`slerp` of quaternions stored as component planes ``a, b (4, ...)``, ``t``
    broadcasting against ``(...)``: the same arithmetic, to the last bit, without broadcasting
    a weight over a last axis of four (numpy then loops four values at a time: this is about
    twice as fast over a few thousand quaternions, the refinement's blends of one chain)."""
    t = np.asarray(t, dtype=np.float64)
    d = _summed_planes(a * b)
    sign = np.where(d < 0.0, -1.0, 1.0)
    if not t.any():  # (as in slerp)
        return normalize_planes(a + t * sign * b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    near = s < 1e-6
    if not near.any():
        return normalize_planes(np.sin((1.0 - t) * theta) / s * a + np.sin(t * theta) / s * sign * b)
    safe = np.where(near, 1.0, s)
    wa = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(near, t, np.sin(t * theta) / safe) * sign
    return normalize_planes(wa * a + wb * b)


def _summed_planes(v: np.ndarray) -> np.ndarray:
    """The sum of the four planes ``v (4, ...)`` in :func:`sum_last`'s order (the same bits)."""
    out = v[0] + v[1]
    out += v[2]
    out += v[3]
    out += 0.0
    return out


def normalize_planes(q: np.ndarray) -> np.ndarray:
    """:func:`normalize` of quaternions stored as planes ``(4, ...)`` (the same bits)."""
    n = np.sqrt(_summed_planes(q * q))
    if (n < 1e-12).any():
        raise ValueError("cannot normalise a zero-length quaternion")
    return q / n


def power(q: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """``q`` to the power ``t``: the fraction ``t`` of its own arc, the long way round
    when its real part is negative (unlike :func:`slerp` from the identity, which
    takes the shorter arc). ``t`` broadcasts against ``(...)``."""
    q = _check(q)
    t = np.asarray(t, dtype=np.float64)[..., None]
    s = length(q[..., 1:], keepdims=True)
    half = np.arctan2(s, q[..., :1])  # in [0, pi]
    axis = q[..., 1:] / np.where(s < 1e-12, 1.0, s)
    return np.concatenate([np.cos(t * half), np.sin(t * half) * axis], axis=-1) * np.ones_like(q)


def from_axis_angle(axis: np.ndarray, angle_rad: np.ndarray) -> np.ndarray:
    """Rotation of ``angle_rad (...)`` about unit ``axis (..., 3)``."""
    axis = np.asarray(axis, dtype=np.float64)
    half = 0.5 * np.asarray(angle_rad, dtype=np.float64)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def log(q: np.ndarray) -> np.ndarray:
    """Rotation vectors ``(..., 3)`` (axis times angle) of unit quaternions."""
    q = standardize(q)
    v = q[..., 1:]
    s = length(v, keepdims=True)
    theta = 2.0 * np.arctan2(s, q[..., :1])
    scale = np.where(s < 1e-12, 2.0, theta / np.where(s < 1e-12, 1.0, s))
    return v * scale


def exp(r: np.ndarray) -> np.ndarray:
    """Unit quaternions from rotation vectors ``(..., 3)``; inverse of :func:`log`."""
    r = np.asarray(r, dtype=np.float64)
    theta = length(r, keepdims=True)
    half = 0.5 * theta
    k = np.where(theta < 1e-12, 0.5, np.sin(half) / np.where(theta < 1e-12, 1.0, theta))
    return np.concatenate([np.cos(half), r * k], axis=-1)


def to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of unit quaternions."""
    w, x, y, z = np.moveaxis(_check(q), -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


def from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternions (w >= 0) of rotation matrices ``(..., 3, 3)``.

    Uses the numerically safest of the four branches for each matrix
    (largest diagonal term), so rotations by pi are exact.
    """
    m = np.asarray(m, dtype=np.float64)
    if m.shape[-2:] != (3, 3):
        raise ValueError(f"matrices must have shape (..., 3, 3), got {m.shape}")
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    cands = np.stack(
        [
            np.stack([1 + m00 + m11 + m22, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1),
            np.stack([m[..., 2, 1] - m[..., 1, 2], 1 + m00 - m11 - m22, m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0]], -1),
            np.stack([m[..., 0, 2] - m[..., 2, 0], m[..., 0, 1] + m[..., 1, 0], 1 - m00 + m11 - m22, m[..., 1, 2] + m[..., 2, 1]], -1),
            np.stack([m[..., 1, 0] - m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1], 1 - m00 - m11 + m22], -1),
        ],
        axis=-2,
    )
    best = np.argmax(np.stack([1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22], -1), -1)
    q = np.take_along_axis(cands, best[..., None, None], axis=-2)[..., 0, :]
    return standardize(normalize(q))


def _check_order(order: str) -> tuple[int, int, int]:
    order = order.upper()
    if len(order) != 3 or set(order) != {"X", "Y", "Z"}:
        raise ValueError(f"Euler order must be a permutation of 'XYZ', got {order!r}")
    return tuple(_AXES[c] for c in order)  # type: ignore[return-value]


def from_euler(angles: np.ndarray, order: str) -> np.ndarray:
    """Quaternions of Euler angles ``(..., 3)`` in radians, ``R = R_o0 R_o1 R_o2``."""
    angles = np.asarray(angles, dtype=np.float64)
    axes = _check_order(order)
    q = None
    for k, a in enumerate(axes):
        axis = np.zeros(3)
        axis[a] = 1.0
        qk = from_axis_angle(axis, angles[..., k])
        q = qk if q is None else mul(q, qk)
    return q


def to_euler(q: np.ndarray, order: str) -> np.ndarray:
    """Euler angles ``(..., 3)`` in radians with ``R = R_o0 R_o1 R_o2``.

    The middle angle is in [-pi/2, pi/2]; the outer two in (-pi, pi].
    At gimbal lock (middle angle +-pi/2) only a combination of the outer two
    is defined; the last angle is then 0 and the first carries the rotation.
    """
    i, j, k = _check_order(order)
    r = to_matrix(q)
    # +1 when (i, j, k) is a cyclic permutation of (X, Y, Z), -1 otherwise.
    s = 1.0 if (j - i) % 3 == 1 else -1.0
    a0 = np.arctan2(-s * r[..., j, k], r[..., k, k])
    # cos(a1) from the row (cos a1 cos a2, -s cos a1 sin a2): near +-pi/2 an
    # arcsin of s * r[i, k] would lose half the digits (1e-8 rad).
    cos_a1 = np.hypot(r[..., i, i], r[..., i, j])
    a1 = np.arctan2(s * r[..., i, k], cos_a1)
    a2 = np.arctan2(-s * r[..., i, j], r[..., i, i])
    # At gimbal lock the four entries above are all cos(a1) times something,
    # i.e. rounding noise, and a0, a2 would be arbitrary. With a2 = 0 the
    # matrix is R_i(a0) R_j(a1), whose column j is R_i(a0) e_j.
    locked = cos_a1 < 1e-9
    a0 = np.where(locked, np.arctan2(s * r[..., k, j], r[..., j, j]), a0)
    a2 = np.where(locked, 0.0, a2)
    return np.stack([a0, a1, a2], axis=-1)


def between(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Shortest rotation taking direction ``u (..., 3)`` to direction ``v (..., 3)``.

    Opposite directions get a rotation by pi about an axis perpendicular to ``u``.
    """
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = u / length(u, keepdims=True)
    v = v / length(v, keepdims=True)
    w = 1.0 + np.add.reduce(u * v, axis=-1, keepdims=True)
    xyz = cross(u, v)
    opposite = w[..., 0] < 1e-9
    if np.any(opposite):
        # any axis perpendicular to u: cross with the least-aligned basis vector
        basis = np.eye(3)[np.argmin(np.abs(u), axis=-1)]
        perp = cross(u, basis)
        perp /= length(perp, keepdims=True)
        xyz = np.where(opposite[..., None], perp, xyz)
        w = np.where(opposite[..., None], 0.0, w)
    return normalize(np.concatenate([w, xyz], axis=-1))
