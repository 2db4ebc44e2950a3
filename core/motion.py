"""The one motion type of the project, its skeleton, and forward kinematics.

Conventions, written down once:

* Quaternions are unit ``(w, x, y, z)`` (see :mod:`core.quat`).
* ``Motion.rotations (F, J, 4)`` are *local* joint rotations: joint ``j``'s
  frame relative to its parent's frame (joint 0 relative to the world).
* ``Motion.positions (F, J, 3)`` are *local* joint translations: joint ``j``'s
  origin in its parent's frame. For joint 0 that is its world position. For
  joints whose translation is not animated this is simply the rest offset;
  keeping it per frame lets files that animate any joint's translation (for
  example a fixed ``Root`` whose child ``Hips`` carries the world motion)
  be represented without a special case.
* Lengths are in the file's own unit and the up axis is the file's own; the
  skeleton records both (``unit`` in metres per file unit, ``up`` as a unit
  vector) so that analysis can measure relative to body size and height
  above the floor without assuming centimetres or Y-up.
* Frames are indexed from 0; ranges in this project are end *inclusive*
  unless a name says otherwise (``stop``).

Arrays of a :class:`Motion` are read-only; every edit returns a new motion.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import quat


def _frozen(a: np.ndarray, dtype=np.float64) -> np.ndarray:
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Skeleton:
    """A joint hierarchy.

    names    (J,) joint names, unique.
    parents  (J,) parent index of each joint, ``-1`` for joint 0 only, and
             ``parents[j] < j`` (parents come first).
    offsets  (J, 3) rest offset of each joint from its parent, parent frame.
    end_sites  {joint index: (3,) offset} of BVH End Sites (leaf tips), kept
             so that files round-trip and leaf directions are known.
    channels (J,) per joint, the BVH channel names in file order, e.g.
             ``("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation",
             "Yrotation")``; used by the BVH writer to reproduce the layout.
    up       (3,) unit vector of the up axis in this skeleton's coordinates.
    unit     metres per length unit of ``offsets`` (0.01 for centimetres).
    """

    names: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    end_sites: dict = field(default_factory=dict)
    channels: tuple = ()
    up: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0, 0.0]))
    unit: float = 1.0

    def __post_init__(self):
        names = tuple(str(n) for n in self.names)
        parents = np.asarray(self.parents, dtype=np.int64).reshape(-1)
        offsets = np.asarray(self.offsets, dtype=np.float64)
        J = len(names)
        if J == 0:
            raise ValueError("a skeleton needs at least one joint")
        if len(set(names)) != J:
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"joint names must be unique; repeated: {dup}")
        if parents.shape != (J,):
            raise ValueError(f"parents must have shape ({J},), got {parents.shape}")
        if offsets.shape != (J, 3):
            raise ValueError(f"offsets must have shape ({J}, 3), got {offsets.shape}")
        if parents[0] != -1 or np.any(parents[1:] < 0) or np.any(parents[1:] >= np.arange(1, J)):
            raise ValueError("parents must satisfy parents[0] == -1 and 0 <= parents[j] < j")
        up = np.asarray(self.up, dtype=np.float64).reshape(3)
        if not np.isclose(np.linalg.norm(up), 1.0, atol=1e-6):
            raise ValueError(f"up must be a unit vector, got {up}")
        if not (self.unit > 0):
            raise ValueError(f"unit must be positive (metres per unit), got {self.unit}")
        channels = tuple(tuple(c) for c in self.channels) if self.channels else ()
        if channels and len(channels) != J:
            raise ValueError(f"channels must list {J} joints, got {len(channels)}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "parents", _frozen(parents, np.int64))
        object.__setattr__(self, "offsets", _frozen(offsets))
        object.__setattr__(self, "up", _frozen(up))
        object.__setattr__(self, "end_sites", {int(k): _frozen(v) for k, v in self.end_sites.items()})
        object.__setattr__(self, "channels", channels)

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no joint named {name!r}; joints are {list(self.names)}") from None

    def children(self, j: int) -> list[int]:
        return [int(c) for c in np.flatnonzero(self.parents == j)]

    def chain(self, j: int) -> list[int]:
        """Joint indices from joint 0 down to ``j``, both included."""
        out = [j]
        while self.parents[out[-1]] >= 0:
            out.append(int(self.parents[out[-1]]))
        return out[::-1]

    def rest_positions(self) -> np.ndarray:
        """Global rest positions ``(J, 3)`` (rest offsets summed down the tree)."""
        pos = np.zeros((len(self), 3))
        for j in range(1, len(self)):
            pos[j] = pos[self.parents[j]] + self.offsets[j]
        return pos

    def renamed(self, names: dict[str, str] | list[str]) -> "Skeleton":
        if isinstance(names, dict):
            names = [names.get(n, n) for n in self.names]
        return replace(self, names=tuple(names))

    def scaled(self, factor: float) -> "Skeleton":
        return replace(
            self,
            offsets=self.offsets * factor,
            end_sites={k: v * factor for k, v in self.end_sites.items()},
            unit=self.unit / factor,
        )


def skeleton_mismatch(skeleton: Skeleton, reference: Skeleton) -> str:
    """Why ``skeleton`` is not ``reference``'s (joint names and hierarchy), for a message saying what
    to fix; "" when it is the same skeleton (bone lengths may differ)."""
    if skeleton.names == reference.names and np.array_equal(skeleton.parents, reference.parents):
        return ""
    only = sorted(set(reference.names) ^ set(skeleton.names))
    return f"joints only in one of them: {only[:6]}" if only else "the same joints in another hierarchy or order"


# Clips on one skeleton are one body when their bones are about as long: another performer's
# differ by tens of percent. A factor of 2 or more is another unit (centimetres beside metres,
# inches), a scaled export or a typo; every measure normalised by one clip's size (its leg
# length) then puts the other's poses metres, or 1e12 leg lengths, away.
MAX_BONE_SCALE = 2.0


def bone_scale(skeleton: Skeleton, reference: Skeleton) -> float:
    """How many times as long the bones of ``skeleton`` are as those of ``reference``, which has
    the same joints (:func:`skeleton_mismatch`): the median over the bones of their ratio of
    lengths, so that a few bones of other proportions do not decide. Bones are the offsets of
    joints 1.. (joint 0's is where the skeleton stands) that either skeleton has; a bone one of
    them lacks counts as 0 or inf. 1 when neither has a bone."""
    if len(skeleton) != len(reference):
        raise ValueError(f"bone_scale compares skeletons of the same joints, got {len(skeleton)} and {len(reference)}")
    own = np.linalg.norm(skeleton.offsets[1:], axis=-1)
    ref = np.linalg.norm(reference.offsets[1:], axis=-1)
    either = (own > 0) | (ref > 0)
    if not either.any():
        return 1.0
    with np.errstate(divide="ignore"):
        return float(np.median(own[either] / ref[either]))


def scale_mismatch(skeleton: Skeleton, reference: Skeleton, name: str = "the clip",
                   reference_name: str = "the reference") -> str:
    """Why ``skeleton`` is not at the scale of ``reference`` (same joints): its bones more than
    MAX_BONE_SCALE times as long or as short (:func:`bone_scale`), for a message naming both by
    ``name`` and ``reference_name`` and saying what to fix; "" when it is at that scale."""
    factor = bone_scale(skeleton, reference)
    if 1.0 / MAX_BONE_SCALE <= factor <= MAX_BONE_SCALE:
        return ""
    return (f"{name} has bones {factor:.3g} times as long as those of {reference_name} (the median ratio), "
            f"more than a factor of {MAX_BONE_SCALE:g} apart: not one body at one scale but another unit "
            f"(centimetres beside metres), a scaled export or a typo; scale one to the other's unit")


@dataclass(frozen=True, eq=False)
class Motion:
    """A clip: ``F`` frames of a ``J``-joint skeleton.

    skeleton   the :class:`Skeleton`.
    rotations  (F, J, 4) local unit quaternions (w, x, y, z).
    positions  (F, J, 3) local translations (joint 0: world position).
    fps        frames per second.
    """

    skeleton: Skeleton
    rotations: np.ndarray
    positions: np.ndarray
    fps: float

    def __post_init__(self):
        J = len(self.skeleton)
        rot = np.asarray(self.rotations, dtype=np.float64)
        pos = np.asarray(self.positions, dtype=np.float64)
        if rot.ndim != 3 or rot.shape[1:] != (J, 4):
            raise ValueError(f"rotations must have shape (F, {J}, 4), got {rot.shape}")
        if pos.shape != rot.shape[:2] + (3,):
            raise ValueError(f"positions must have shape ({rot.shape[0]}, {J}, 3), got {pos.shape}")
        if not (np.all(np.isfinite(rot)) and np.all(np.isfinite(pos))):
            raise ValueError("motion contains NaN or infinite values")
        rot = _normalised(rot)
        if not (self.fps > 0):
            raise ValueError(f"fps must be positive, got {self.fps}")
        object.__setattr__(self, "rotations", _frozen(rot))
        object.__setattr__(self, "positions", _frozen(pos))
        object.__setattr__(self, "fps", float(self.fps))

    @classmethod
    def from_root(cls, skeleton: Skeleton, rotations: np.ndarray, root: np.ndarray, fps: float) -> "Motion":
        """A motion whose only animated translation is joint 0's world position ``root (F, 3)``."""
        root = np.asarray(root, dtype=np.float64)
        pos = np.broadcast_to(skeleton.offsets, (len(root),) + skeleton.offsets.shape).copy()
        pos[:, 0] = root
        return cls(skeleton, rotations, pos, fps)

    @property
    def n_frames(self) -> int:
        return self.rotations.shape[0]

    def __len__(self) -> int:
        return self.n_frames

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame."""
        return max(self.n_frames - 1, 0) / self.fps

    def __getitem__(self, frames) -> "Motion":
        """Frames selected by a slice or an index array, as a new motion."""
        if isinstance(frames, (int, np.integer)):
            frames = slice(frames, frames + 1 if frames != -1 else None)
        # frames of a valid motion are valid: no need to check (or copy) them again
        return Motion.unchecked(self.skeleton, self.rotations[frames], self.positions[frames], self.fps)

    @classmethod
    def unchecked(cls, skeleton: Skeleton, rotations: np.ndarray, positions: np.ndarray, fps: float) -> "Motion":
        """A motion from arrays the caller vouches for, built without the constructor's checks:
        shapes ``(F, J, 4)`` and ``(F, J, 3)`` on ``skeleton``, finite values, unit quaternions
        (products and slerps of a valid motion's, frames of one). The arrays are made read-only,
        not copied; nothing is normalised, so every bit is kept. Anything else goes through
        ``Motion(...)``, which checks and says what is wrong."""
        motion = object.__new__(cls)
        for name, value in (("skeleton", skeleton), ("rotations", rotations), ("positions", positions), ("fps", float(fps))):
            if isinstance(value, np.ndarray) and value.flags.writeable:
                value = value.view()
                value.setflags(write=False)
            object.__setattr__(motion, name, value)
        return motion

    def with_joint_rotations(self, joints, rotations: np.ndarray) -> "Motion":
        """This motion with the local rotations of ``joints`` (a ``(J,)`` bool mask or indices)
        replaced by ``rotations (F, K, 4)``, K the joints given: those checked and normalised as the
        constructor does, every other joint's rotations and every position kept as they are, bit for
        bit (the constructor, given them again, would normalise them again and move their last bits)."""
        joints = np.asarray(joints)
        joints = np.flatnonzero(joints) if joints.dtype == bool else joints.astype(np.int64).reshape(-1)
        rot = np.asarray(rotations, dtype=np.float64)
        if rot.shape != (self.n_frames, len(joints), 4):
            raise ValueError(f"rotations of {len(joints)} joints must have shape ({self.n_frames}, {len(joints)}, 4), "
                             f"got {rot.shape}")
        if not np.all(np.isfinite(rot)):
            raise ValueError("rotations contain NaN or infinite values")
        out = np.array(self.rotations)
        out[:, joints] = _normalised(rot)
        return Motion.unchecked(self.skeleton, out, self.positions, self.fps)

    def with_arrays(self, rotations=None, positions=None) -> "Motion":
        return replace(
            self,
            rotations=self.rotations if rotations is None else rotations,
            positions=self.positions if positions is None else positions,
        )

    def global_transforms(self) -> tuple[np.ndarray, np.ndarray]:
        """World ``(positions (F, J, 3), rotations (F, J, 4))`` of every joint."""
        return forward_kinematics(self.rotations, self.positions, self.skeleton.parents)

    def global_positions(self) -> np.ndarray:
        return self.global_transforms()[0]

    def scaled(self, factor: float) -> "Motion":
        """Every length times ``factor`` (a change of unit); rotations unchanged."""
        return replace(self, skeleton=self.skeleton.scaled(factor), positions=self.positions * factor)

    def renamed(self, names) -> "Motion":
        return replace(self, skeleton=self.skeleton.renamed(names))

    def transformed(self, rotation: np.ndarray, translation: np.ndarray = np.zeros(3)) -> "Motion":
        """The whole clip rotated by ``rotation (4,)`` about the world origin, then moved.

        Only joint 0's world transform changes; the skeleton's ``up`` turns with it.
        """
        rotation = np.asarray(rotation, dtype=np.float64)
        rot = self.rotations.copy()
        pos = self.positions.copy()
        rot[:, 0] = quat.mul(rotation, rot[:, 0])
        pos[:, 0] = quat.mul_vec(rotation, pos[:, 0]) + translation
        skel = replace(self.skeleton, up=quat.mul_vec(rotation, self.skeleton.up))
        return Motion(skel, rot, pos, self.fps)

    def resampled(self, fps: float) -> "Motion":
        """The same clip sampled at ``fps``: positions interpolated linearly, rotations by slerp."""
        if self.n_frames < 2:
            return replace(self, fps=fps)
        n = resampled_frames(self.n_frames, self.fps, fps)
        t = np.arange(n) * (self.fps / fps)
        t = np.minimum(t, self.n_frames - 1)
        i0 = np.minimum(np.floor(t).astype(int), self.n_frames - 2)
        a = t - i0
        rot = quat.unroll(self.rotations, axis=0)
        rot = quat.slerp(rot[i0], rot[i0 + 1], np.broadcast_to(a[:, None], (n, len(self.skeleton))))
        pos = self.positions[i0] + a[:, None, None] * (self.positions[i0 + 1] - self.positions[i0])
        return Motion(self.skeleton, rot, pos, fps)


def _normalised(rot: np.ndarray) -> np.ndarray:
    """Quaternions ``rot (..., 4)`` divided by their lengths; ``ValueError`` unless each is of unit
    length already, to rounding (the test of np.allclose, without its dispatch)."""
    if not rot.size:
        return rot
    # one norm for the check and the normalisation (over a whole timeline it is not free)
    norm = quat.length(rot, keepdims=True)
    # (np.allclose's test, |norm - 1| <= atol + rtol * 1, without its dispatch: a gap's
    # window is checked on every live update)
    if not np.all(np.abs(norm - 1.0) <= 1e-4 + 1e-5):
        raise ValueError("rotations must be unit quaternions")
    return rot / norm


def resampled_frames(n_frames: int, fps: float, new_fps: float) -> int:
    """The frames of a clip of ``n_frames`` at ``fps`` once :meth:`Motion.resampled` to ``new_fps``
    (its duration kept), known before it is resampled."""
    return int(round((n_frames - 1) / fps * new_fps)) + 1 if n_frames >= 2 else n_frames


def similarity_fit(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, float]:
    """``(A (3, 3), s, c (3,), rms)`` minimising ``|q - (s A p + c)|`` over points ``p, q (N, 3)``:
    the turn, scale and shift that best put one rest pose on another, and the RMS distance left
    (Umeyama 1991, eqs. 40-42; ``A`` a rotation, never a reflection)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if p.ndim != 2 or p.shape[1:] != (3,) or p.shape != q.shape or not len(p):
        raise ValueError(f"similarity_fit needs two (N, 3) arrays of the same points, N >= 1; got {p.shape} and "
                         f"{q.shape}")
    pc, qc = p - p.mean(axis=0), q - q.mean(axis=0)
    u, sigma, vt = np.linalg.svd(qc.T @ pc)
    # (the sign of the last singular direction flipped where the best orthogonal fit is a reflection)
    sign = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt)) or 1.0])
    turn = u @ sign @ vt
    scale = float(np.trace(np.diag(sigma) @ sign) / max(np.sum(pc ** 2), 1e-300))
    shift = q.mean(axis=0) - scale * p.mean(axis=0) @ turn.T
    error = float(np.sqrt(np.mean(np.sum((q - (scale * p @ turn.T + shift)) ** 2, axis=1))))
    return turn, scale, shift, error


# Up to this many frames forward kinematics goes generation by generation of
# the skeleton rather than joint by joint (see forward_kinematics); and over more
# frames while frames times joints evaluated stay within FEW_JOINT_FRAMES (the
# legs and feet of a few hundred frames: 10 joints over 316 frames 0.37 ms against
# 0.50 joint by joint). Not much beyond: the gathered copies outgrow the cache
# (14 joints over two clips' 600 frames came out twice as slow in a blend).
FEW_FRAMES = 256
FEW_JOINT_FRAMES = 4000


def forward_kinematics(
    rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray, joints=None, *, rotations_out: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """World joint transforms from local ones.

    rotations (F, J, 4), positions (F, J, 3), parents (J,) with parents[j] < j
    -> (global positions (F, J, 3), global rotations (F, J, 4)).
    With ``joints`` (K indices) only those joints and their ancestors are
    evaluated and the result is ``(F, K, 3), (F, K, 4)`` in that order.
    ``rotations_out=False`` returns positions only (rotations None): the
    world rotation of a joint no evaluated joint hangs from is then skipped.

    Loops over joints (a parent must be finished first), never over frames.
    Works on component planes ``(4, J, F)``/``(3, J, F)`` so that every
    arithmetic step runs over one contiguous array of frames: about five
    times faster than broadcasting over the last axis. Over a few frames (up
    to FEW_FRAMES: single poses, the frames where two clips meet; a few joints
    over more, FEW_JOINT_FRAMES) the cost is
    the number of numpy calls rather than the arithmetic, and
    :func:`_by_generation` makes fewer of them; both compute every joint with
    the same products in the same order, so they agree to the last bit.
    Which joints to evaluate, and in which generations, depends only on the
    skeleton and the joints asked for: it is worked out once (:func:`_fk_layout`).
    """
    rotations = np.asarray(rotations, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    parents = np.asarray(parents)
    J = rotations.shape[-2]
    lead = rotations.shape[:-2]
    layout = _fk_layout(parents, joints, rotations_out)
    if layout.roots is not None:
        # (a root's world transform is its local one, copied: as the passes below copy it, without
        # their bookkeeping; moving a clip carried by its pelvis asks for a still root's)
        return (positions[..., layout.roots, :],
                rotations[..., layout.roots, :] if rotations_out else None)
    rot = rotations.reshape((-1, J, 4))
    pos = positions.reshape((-1, J, 3))
    F = rot.shape[0]
    if layout.generations is not None and (F <= FEW_FRAMES or F * len(layout.keep) <= FEW_JOINT_FRAMES):
        gp, gr = _by_generation(rot, pos, layout.generations)
        out, chosen = layout.generations.out, layout.generations.chosen
    else:
        gp, gr = _by_joint(rot, pos, layout.keep, layout.column, parents, rotations_out)
        out, chosen = layout.out, layout.chosen
    K = len(out)
    gpos = (gp[:, out] if chosen else gp).transpose(2, 1, 0).reshape(lead + (K, 3))
    if not rotations_out:
        return gpos, None
    return gpos, (gr[:, out] if chosen else gr).transpose(2, 1, 0).reshape(lead + (K, 4))


@dataclass(frozen=True)
class _Generations:
    """The joints of a :class:`_Layout` in generations, for :func:`_by_generation`.

    keep     the joints evaluated, generation after generation (the roots first), so
             that each generation is one slice of columns: read and written in place
             rather than gathered and scattered;
    out      the columns of the joints asked for; ``chosen``: not all of ``keep`` as it is;
    turned   per generation after the roots', ``(its columns whose world rotations are
             computed, their parents' columns)``: those with children, or all when the
             rotations are asked for, first in their generation;
    summed   per generation after the roots', ``(its columns, their parents' columns)``;
    children, child_parents  every generation's columns after the roots' at once, and
             their parents'.
    """

    keep: np.ndarray
    out: np.ndarray
    chosen: bool
    turned: list
    summed: list
    children: slice
    child_parents: np.ndarray


@dataclass(frozen=True)
class _Layout:
    """What forward kinematics of some joints evaluates, independent of the frames.

    keep      the joints evaluated (those asked for and their ancestors), in order;
    column    (J,) each joint's column among ``keep`` (-1: not evaluated);
    out       the columns of the joints asked for; ``chosen``: they are not all of ``keep``;
    generations  the same in generations (:class:`_Generations`), or None where going
              joint by joint makes fewer numpy calls;
    roots     the joints asked for when every one of them is a root (their world transforms
              are their local ones), else None.
    """

    keep: np.ndarray
    column: np.ndarray
    out: np.ndarray
    chosen: bool
    generations: _Generations | None
    roots: np.ndarray | None = None


_LAYOUTS: dict = {}


def _fk_layout(parents: np.ndarray, joints, rotations_out: bool) -> _Layout:
    """The :class:`_Layout` of ``joints`` (None: all) on ``parents``, made once per skeleton and joints
    (forward kinematics runs many times on a few frames, where this bookkeeping costs as much
    as the arithmetic)."""
    wanted = None if joints is None else np.asarray(joints, dtype=np.int64).reshape(-1)
    key = (parents.tobytes(), None if wanted is None else wanted.tobytes(), rotations_out)
    layout = _LAYOUTS.get(key)
    if layout is None:
        if len(_LAYOUTS) > 4096:  # (a long session with many skeletons: start over)
            _LAYOUTS.clear()
        layout = _LAYOUTS[key] = _make_layout(parents, wanted, rotations_out)
    return layout


def _make_layout(parents: np.ndarray, wanted: np.ndarray | None, rotations_out: bool) -> _Layout:
    J = len(parents)
    every = wanted is None
    if every:
        keep = np.arange(J)
        wanted = keep
    else:
        closed = set()
        for j in wanted:
            while j >= 0 and j not in closed:
                closed.add(int(j))
                j = parents[j]
        keep = np.array(sorted(closed), dtype=np.int64)
    column = np.full(J, -1)
    column[keep] = np.arange(len(keep))
    out = column[wanted]
    chosen = not every or len(keep) < J  # columns to pick out of those evaluated
    generations = None
    if len(keep) >= 6:
        parent_columns = np.where(parents[keep] >= 0, column[parents[keep]], -1).tolist()
        # by generation only where the joints outnumber their generations (its own few calls
        # cost about as much as four joints)
        if len(keep) >= max(_depths(parent_columns)) + 4:
            generations = _in_generations(keep, parent_columns, out, rotations_out)
    roots = wanted if not every and len(wanted) and bool(np.all(parents[wanted] < 0)) else None
    return _Layout(keep, column, out, chosen, generations, roots)


def _depths(parent_columns: list[int]) -> list[int]:
    """How many ancestors each of the joints whose parents are ``parent_columns`` (-1: a root) has."""
    depth = []
    for p in parent_columns:
        depth.append(depth[p] + 1 if p >= 0 else 0)
    return depth


def _in_generations(keep: np.ndarray, parent_columns: list[int], out: np.ndarray, rotations_out: bool) -> _Generations:
    """:class:`_Generations` of joints ``keep`` (parents before children) whose parents are
    ``parent_columns``, of which columns ``out`` are asked for."""
    depth = _depths(parent_columns)
    # a joint's world rotation is needed for its children, or when asked for
    parent_of = set(parent_columns)
    turns = [rotations_out or k in parent_of for k in range(len(keep))]
    order = sorted(range(len(keep)), key=lambda k: (depth[k], not turns[k], k))
    new = np.empty(len(keep), dtype=np.int64)
    new[order] = np.arange(len(keep))
    turned, summed = [], []
    start = sum(1 for d in depth if d == 0)
    children = start
    for d in range(1, max(depth) + 1):
        members = [k for k in order if depth[k] == d]
        end = start + len(members)
        ps = new[[parent_columns[k] for k in members]]
        count = sum(turns[k] for k in members)
        if count:
            turned.append((slice(start, start + count), ps[:count]))
        summed.append((slice(start, end), ps))
        start = end
    child_parents = np.concatenate([ps for _, ps in summed])
    moved = new[out]
    chosen = not np.array_equal(moved, np.arange(len(keep)))
    return _Generations(keep[order], moved, chosen, turned, summed, slice(children, len(keep)), child_parents)


def _by_joint(rot: np.ndarray, pos: np.ndarray, keep: np.ndarray, column: np.ndarray, parents: np.ndarray,
              rotations_out: bool) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``(3, K, F)`` and rotations ``(4, K, F)`` (planes) of joints ``keep``
    from ``rot (F, J, 4)``, ``pos (F, J, 3)``, one joint after the other."""
    J, F = len(parents), rot.shape[0]
    gr = np.empty((4, len(keep), F))
    gp = np.empty((3, len(keep), F))
    # a joint's world rotation is needed for its children, or when asked for
    parent_of = np.zeros(J, dtype=bool)
    parent_of[parents[keep][parents[keep] >= 0]] = True
    for k, j in enumerate(keep):
        p = column[parents[j]] if parents[j] >= 0 else -1
        # one joint's frames as contiguous component planes: cheaper than
        # transposing (or fancy-indexing) the whole (F, J, 4) array at once
        lp = np.ascontiguousarray(pos[:, j].T)
        turned = rotations_out or parent_of[j]
        lr = np.ascontiguousarray(rot[:, j].T) if turned else None
        if p < 0:
            gp[:, k] = lp
            if turned:
                gr[:, k] = lr
        else:
            if turned:
                _mul_planes(gr[:, p], lr, out=gr[:, k])
            _rotate_planes(gr[:, p], lp, out=gp[:, k])
            gp[:, k] += gp[:, p]
    return gp, gr


def _by_generation(rot: np.ndarray, pos: np.ndarray, layout: _Generations) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_by_joint` over a few frames: all joints of one generation at once, their
    parents' rotations taken from the generations before; then every joint's offset
    turned by its parent's world rotation in one go, and the offsets summed down the
    generations. Columns in ``layout.keep``'s order (generation after generation)."""
    local_rot = np.ascontiguousarray(rot[:, layout.keep].transpose(2, 1, 0))
    local_pos = np.ascontiguousarray(pos[:, layout.keep].transpose(2, 1, 0))
    gr = local_rot.copy()
    if layout.turned:
        # _mul_planes's products, the local side of each of them permuted and signed once for
        # every joint rather than once per generation (over a few frames the count of numpy
        # calls is the cost): a generation's product is then one multiplication and three
        # sums, in _mul_planes's order, so the same bits
        signed = _MUL_SIGNS_ALL * local_rot[_MUL_ORDER_ALL]
        for columns, parents in layout.turned:
            terms = gr[:, parents][:, None] * signed[:, :, columns]
            out = gr[:, columns]
            np.add(terms[0], terms[1], out=out)
            out += terms[2]
            out += terms[3]
    children = layout.children
    gp = local_pos.copy()
    _rotate_planes(gr[:, layout.child_parents], local_pos[:, children], out=gp[:, children])
    for columns, parents in layout.summed:
        gp[:, columns] += gp[:, parents]
    return gp, gr


# Up to this many values per component plane the quaternion arithmetic below runs on all
# components at once (a few numpy calls over stacked planes) rather than one component at
# a time; above it the stacking costs more than the calls it saves (measured on one plane:
# stacked 16 against 24 us at 316 frames, 20 against 26-29 at 600, the same at about 1000)
SMALL_PLANES = 640

# Hamilton product a * b, component by component: aw * b, then the terms of ax, ay and az,
# each with b's components permuted and signed; e.g. out[0] = aw bw - ax bx - ay by - az bz
_MUL_ORDER = np.array([[1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]])
_MUL_SIGNS = np.array([[-1.0, 1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0]])
# the same with aw * b as the first of the four terms (b as it is), for _by_generation
_MUL_ORDER_ALL = np.concatenate([[[0, 1, 2, 3]], _MUL_ORDER])
_MUL_SIGNS_ALL = np.concatenate([np.ones((1, 4)), _MUL_SIGNS]).reshape(4, 4, 1, 1)
# u x v as u[A] v[B] - u[A'] v[B']: A, A' pick (y, z, x) and (z, x, y) out of a quaternion,
# B, B' (z, x, y) and (y, z, x) out of a vector
_CROSS_PAIRS = (np.array([[2, 3, 1], [3, 1, 2]]), np.array([[2, 0, 1], [1, 2, 0]]))


def _mul_planes(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions stored as planes ``(4, F)``, written into ``out``.

    On small planes every component at once: the same products summed in the same
    order as the component-wise formula (a difference negated, ``x - y == x + (-y)``,
    and ``(-a) b == -(a b)``, both exact), so both agree to the last bit."""
    if a[0].size <= SMALL_PLANES:
        shape = (3, 4) + (1,) * (a.ndim - 1)
        terms = (a[1:, None] * _MUL_SIGNS.reshape(shape)) * b[_MUL_ORDER]
        np.multiply(a[0], b, out=out)
        out += terms[0]
        out += terms[1]
        out += terms[2]
        return out
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    out[0] = aw * bw - ax * bx - ay * by - az * bz
    out[1] = aw * bx + ax * bw + ay * bz - az * by
    out[2] = aw * by - ax * bz + ay * bw + az * bx
    out[3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def _rotate_planes(q: np.ndarray, v: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Rotate vectors ``(3, F)`` by quaternions ``(4, F)`` (planes), written into ``out``.

    On small planes every component at once, with the same products and sums in
    the same order as the component-wise formula (so to the last bit)."""
    if v[0].size <= SMALL_PLANES:
        # t = 2 u x v (u the vector part), then v + w t + u x t
        u = q[_CROSS_PAIRS[0]]  # (y, z, x) and (z, x, y) of the vector part
        p = u * v[_CROSS_PAIRS[1]]
        t = p[0] - p[1]
        t *= 2.0
        np.multiply(q[0], t, out=out)
        out += v
        p = u * t[_CROSS_PAIRS[1]]
        out += p[0] - p[1]
        return out
    w, x, y, z = q
    vx, vy, vz = v
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    out[0] = vx + w * tx + (y * tz - z * ty)
    out[1] = vy + w * ty + (z * tx - x * tz)
    out[2] = vz + w * tz + (x * ty - y * tx)
    return out
