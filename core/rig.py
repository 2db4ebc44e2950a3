"""Joint roles: which joint of a skeleton is the pelvis, a knee, a wrist.

Role keys (used by ``overrides``, :attr:`Rig.roles` and :attr:`Rig.names`)::

    pelvis  spine  chest  neck  head
    left.hip  left.knee  left.ankle  left.toe
    left.clavicle  left.shoulder  left.elbow  left.wrist
    right.hip ... right.wrist

* ``hip`` is the thigh joint (the joint that rotates the thigh), ``knee`` the
  shin joint, ``ankle`` the foot joint, ``toe`` the ball-of-foot joint;
  ``clavicle`` the collar bone, ``shoulder`` the upper-arm joint, ``elbow``
  the forearm joint, ``wrist`` the hand joint. ``toe`` and ``clavicle`` may be
  missing (``None``); so may the arms, ``chest``, ``neck`` and ``head`` on a
  skeleton that has no upper body. Pelvis and both legs (hip, knee, ankle)
  are required.
* ``spine`` is the chain of joints strictly between the pelvis and the neck,
  in order from the pelvis up; ``chest`` is its last joint (where the arms
  branch on usual rigs).
* Sides are the character's own: ``"L"`` is its left. Where geometry has to
  decide, left is ``up x forward`` (right-handed: facing +Z with Y up, the
  left side is +X), the forward direction being the average direction from
  ankle to toe (or, without toes, the direction knees bend).

How a rig is found, in order:

1. **Names.** Each name is reduced to a side and a stem: any ``prefix:`` is
   dropped (``mixamorig:``, ``mixamorig1:``), the name is split into words
   (camelCase, ``_ - . space``), the words ``L R left right`` give the side
   (``.L``, ``_l``, ``L_``, ``Left...``), words such as ``DEF`` and digits
   are dropped, and the rest is the stem (``LeftUpLeg`` -> ``L``, ``upleg``;
   ``DEF-upper_arm.L`` -> ``L``, ``upperarm``). Stems are scored against
   small alias tables per role. Rigify's ``.001`` segments score a little
   lower than the first segment; twist, roll, IK, end and finger joints are
   never candidates. For each side, the best-scoring assignment that forms
   an ancestor chain (hip above knee above ankle above toe; clavicle above
   shoulder above elbow above wrist) wins. The pelvis is the named hips or
   pelvis joint at or above the joint where the two legs branch (so a
   ``joint_Root`` above ``Hips`` is never the pelvis), else that branch joint.
2. **Topology and pose**, when names do not give both legs. A branch
   (a child's subtree) is *long* when its longest path of bones is at least
   a fifth of the longest leaf-to-leaf path below the candidate pelvis. The
   pelvis is the joint nearest the root with two long branches that are
   leg-like (three joints or more) besides the spine; the spine is the long
   branch that itself splits into two long branches (the arms, at the
   chest; of three, the most upward is the neck). Along a limb the two
   consecutive bones with the largest summed length are the thigh and shin
   (upper arm and forearm), so zero-length helper joints such as CMU's
   ``LHipJoint`` are skipped. The neck is the chest's longest branch that is
   not an arm, the head the end of the unbranched chain from it. Sides come
   from the pose: the rest pose of a :class:`Skeleton`, or, given a
   :class:`Motion`, up to 64 of its frames (which helps with files whose rest
   pose is not a standing pose). Unnamed twist segments are not recognised
   (one may be taken for the hip or the shoulder).

``overrides`` always win over both. Lengths are in the skeleton's own unit.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from . import quat
from .motion import Motion, Skeleton, scale_mismatch

SIDES = ("L", "R")
LEG_ROLES = ("hip", "knee", "ankle", "toe")
ARM_ROLES = ("clavicle", "shoulder", "elbow", "wrist")
CENTRE_ROLES = ("pelvis", "spine", "chest", "neck", "head")
_SIDE_WORD = {"L": "left", "R": "right"}
ROLE_KEYS = CENTRE_ROLES + tuple(f"{_SIDE_WORD[s]}.{r}" for s in SIDES for r in LEG_ROLES + ARM_ROLES)
_OPTIONAL_LIMB_ROLES = ("toe", "clavicle")

_LONG_BRANCH = 0.2  # a long branch: at least this fraction of the longest leaf-to-leaf path
_MAX_POSES = 64  # frames of a motion used to decide sides


class RigError(ValueError):
    """A skeleton whose roles cannot be found, or an override that does not fit it."""


# --- names -------------------------------------------------------------------------

# Exact stems per role with their scores; a stem that matches no role exactly
# may still contain an alias (``hipjoint``), which scores a third as much.
_ALIASES: dict[str, dict[str, float]] = {
    "pelvis": {"hips": 3, "pelvis": 3, "hip": 2},
    "hip": {"upleg": 3, "upperleg": 3, "thigh": 3, "femur": 3, "hip": 2},
    "knee": {"leg": 3, "lowerleg": 3, "loleg": 3, "lowleg": 3, "knee": 3, "shin": 3, "calf": 3, "tibia": 3},
    "ankle": {"foot": 3, "ankle": 3},
    # SMPL calls the ankle "ankle" and the ball of the foot "foot"
    "toe": {"toe": 3, "toes": 3, "toebase": 3, "ball": 3, "foot": 1},
    "clavicle": {"clavicle": 3, "shoulder": 3, "collar": 3, "collarbone": 3, "clav": 3},
    # "Shoulder" names the collar bone in CMU and Mixamo; it names the upper
    # arm joint only in rigs that have no better candidate.
    "shoulder": {"upperarm": 3, "uparm": 3, "arm": 3, "humerus": 3, "shoulder": 1},
    "elbow": {"forearm": 3, "lowerarm": 3, "loarm": 3, "lowarm": 3, "elbow": 3},
    "wrist": {"hand": 3, "wrist": 3},
    "neck": {"neck": 3},
    "head": {"head": 3},
}
_CENTRE_NAMED = ("pelvis", "neck", "head")
_SIDE_WORDS = {"l": "L", "left": "L", "r": "R", "right": "R"}
_NOISE_WORDS = {"def", "mixamorig", "bip", "biped", "character", "jnt", "bn", "bone", "cc", "base", "b"}
_EXCLUDE_WORDS = {
    "end", "nub", "tip", "top", "site", "twist", "roll", "ik", "fk", "pole", "target", "ctrl", "control",
    "mch", "org", "helper", "tweak", "bend", "corrective", "thumb", "index", "middle", "ring", "pinky",
    "finger", "fingers", "carpal", "metacarpal", "parent", "socket", "prop", "weapon", "ref", "vis", "jiggle",
}
_ALL_ALIASES = {a for table in _ALIASES.values() for a in table}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SEGMENT = re.compile(r"\.(\d{3})$")


class ParsedName(NamedTuple):
    """A joint name reduced for matching.

    side      ``"L"``, ``"R"`` or ``None``.
    stem      lower-case words other than side, noise and digits, joined (``"upperarm"``).
    segment   Rigify's trailing ``.001`` number, 0 without one.
    excluded  True for twist, roll, IK, end-site and finger joints, never given a role.
    """

    side: str | None
    stem: str
    segment: int
    excluded: bool


def parse_name(name: str) -> ParsedName:
    """Side and stem of a joint name, e.g. ``"mixamorig1:LeftUpLeg" -> ("L", "upleg", 0, False)``."""
    raw = re.split(r"[:|]", str(name))[-1]
    match = _SEGMENT.search(raw)
    segment = int(match.group(1)) if match else 0
    if match:
        raw = raw[: match.start()]
    words = [w.lower() for w in _WORD.findall(raw) if not w.isdigit()]
    sides = {_SIDE_WORDS[w] for w in words if w in _SIDE_WORDS}
    words = [w for w in words if w not in _SIDE_WORDS and w not in _NOISE_WORDS]
    stem = "".join(words)
    if not sides:
        # all-lower-case words such as "leftfoot" or "handright"
        for word, side in (("left", "L"), ("right", "R")):
            if stem.startswith(word) and stem[len(word):] in _ALL_ALIASES:
                sides, stem = {side}, stem[len(word):]
            elif stem.endswith(word) and stem[: -len(word)] in _ALL_ALIASES:
                sides, stem = {side}, stem[: -len(word)]
    side = sides.pop() if len(sides) == 1 else None
    return ParsedName(side, stem, segment, any(w in _EXCLUDE_WORDS for w in words))


def _role_scores(parsed: ParsedName) -> dict[str, float]:
    """{role: score} for one joint; limb roles need a side, pelvis/neck/head need none."""
    if parsed.excluded or not parsed.stem:
        return {}

    def allowed(role: str) -> bool:
        return (parsed.side is None) == (role in _CENTRE_NAMED)

    penalty = 0.1 * min(parsed.segment, 9)
    exact = {r: t[parsed.stem] - penalty for r, t in _ALIASES.items() if parsed.stem in t and allowed(r)}
    if exact:
        return exact
    partial = {}
    for role, table in _ALIASES.items():
        hits = [s for a, s in table.items() if len(a) >= 3 and a in parsed.stem]
        if hits and allowed(role):
            partial[role] = max(hits) / 3.0 - penalty
    return partial


# --- the tree ----------------------------------------------------------------------


class _Tree:
    """Parent/child relations and bone lengths of a skeleton, computed once.

    ancestors (J, J) bool, ``ancestors[j, a]``: ``a`` is a strict ancestor of ``j``.
    bone      (J,) length of the bone ending at each joint (0 for joint 0).
    reach     (J,) longest path of bones from a joint down to a leaf tip
              (End Sites included).
    total     (J,) summed bone length of a joint's subtree.
    span      (J,) longest path between two leaf tips (or a tip and the joint)
              within a joint's subtree.
    """

    def __init__(self, skeleton: Skeleton):
        parents = skeleton.parents
        J = len(parents)
        self.names = skeleton.names
        self.parents = parents
        self.children: list[list[int]] = [[] for _ in range(J)]
        self.ancestors = np.zeros((J, J), dtype=bool)
        self.depth = np.zeros(J, dtype=np.int64)
        # parents first: each joint's row is its parent's plus the parent
        for j in range(1, J):
            p = parents[j]
            self.children[p].append(j)
            self.ancestors[j] = self.ancestors[p]
            self.ancestors[j, p] = True
            self.depth[j] = self.depth[p] + 1
        self.bone = np.linalg.norm(skeleton.offsets, axis=1)
        self.bone[0] = 0.0
        tip = np.zeros(J)
        for j, offset in skeleton.end_sites.items():
            tip[j] = np.linalg.norm(offset)
        self.reach = tip.copy()
        self.total = tip.copy()
        self.span = np.zeros(J)
        # children first: a joint's reach is its longest child branch
        for j in range(J - 1, -1, -1):
            kids = self.children[j]
            branches = sorted([tip[j]] + [self.branch(c) for c in kids], reverse=True)
            self.reach[j] = branches[0]
            self.total[j] += sum(self.bone[c] + self.total[c] for c in kids)
            own = branches[0] + (branches[1] if len(branches) > 1 else 0.0)
            self.span[j] = max([own] + [self.span[c] for c in kids])

    def branch(self, c: int) -> float:
        """Longest path from ``c``'s parent down through ``c``."""
        return self.bone[c] + self.reach[c]

    def is_ancestor(self, a: int, j: int) -> bool:
        return bool(self.ancestors[j, a])

    def subtree(self, j: int) -> np.ndarray:
        """(J,) bool: ``j`` and its descendants."""
        mask = self.ancestors[:, j].copy()
        mask[j] = True
        return mask

    def between(self, a: int, b: int) -> list[int]:
        """Joints strictly between ancestor ``a`` and its descendant ``b``, from ``a`` down."""
        out = []
        j = int(self.parents[b])
        while j != a and j >= 0:
            out.append(j)
            j = int(self.parents[j])
        return out[::-1]

    def common_ancestor(self, a: int, b: int) -> int:
        shared = np.flatnonzero((self.ancestors[a] | (np.arange(len(self.parents)) == a))
                                & (self.ancestors[b] | (np.arange(len(self.parents)) == b)))
        return int(shared[np.argmax(self.depth[shared])])

    def longest_path(self, j: int) -> list[int]:
        """``j`` and the joints below it along the longest path of bones."""
        out = [j]
        while self.children[out[-1]]:
            kids = self.children[out[-1]]
            out.append(kids[int(np.argmax([self.branch(c) for c in kids]))])
        return out

    def single_chain_end(self, j: int) -> int:
        """Follow ``j``'s only child while there is exactly one; the last joint reached."""
        while len(self.children[j]) == 1:
            j = self.children[j][0]
        return j

    def long_children(self, j: int, scale: float) -> list[int]:
        """Children of ``j`` whose branch is at least a fifth of ``scale`` (a span)."""
        return [c for c in self.children[j] if self.branch(c) >= _LONG_BRANCH * scale]


# --- the rig -----------------------------------------------------------------------


@dataclass(frozen=True)
class Leg:
    """Joint indices of one leg; ``toe`` may be ``None``."""

    hip: int
    knee: int
    ankle: int
    toe: int | None = None

    @property
    def joints(self) -> tuple[int, ...]:
        """The leg's joints from hip down, without missing ones."""
        return tuple(j for j in (self.hip, self.knee, self.ankle, self.toe) if j is not None)


@dataclass(frozen=True)
class Arm:
    """Joint indices of one arm; ``clavicle`` may be ``None``."""

    clavicle: int | None
    shoulder: int
    elbow: int
    wrist: int

    @property
    def joints(self) -> tuple[int, ...]:
        """The arm's joints from clavicle (or shoulder) down, without missing ones."""
        return tuple(j for j in (self.clavicle, self.shoulder, self.elbow, self.wrist) if j is not None)


@dataclass(frozen=True)
class Rig:
    """Which joint plays which role, as indices into the skeleton's joints.

    pelvis      index of the pelvis (hips) joint.
    spine       joints strictly between pelvis and neck, from the pelvis up.
    chest       last spine joint, or ``None`` when there is no spine.
    neck, head  indices or ``None``.
    left_leg, right_leg   :class:`Leg`.
    left_arm, right_arm   :class:`Arm` or ``None``.
    joint_names the skeleton's joint names (for :attr:`names`).
    method      ``"names"`` or ``"topology"``: how the legs were found.
    """

    pelvis: int
    spine: tuple[int, ...]
    chest: int | None
    neck: int | None
    head: int | None
    left_leg: Leg
    right_leg: Leg
    left_arm: Arm | None
    right_arm: Arm | None
    joint_names: tuple[str, ...] = field(repr=False, default=())
    method: str = "names"

    def leg(self, side: str) -> Leg:
        """The :class:`Leg` of side ``"L"`` or ``"R"`` (``"left"``/``"right"`` also accepted)."""
        return self.left_leg if _side(side) == "L" else self.right_leg

    def arm(self, side: str) -> Arm | None:
        """The :class:`Arm` of side ``"L"`` or ``"R"``, ``None`` without arms."""
        return self.left_arm if _side(side) == "L" else self.right_arm

    @property
    def feet(self) -> tuple[int, int]:
        """Ankle indices ``(left, right)``; use as ``positions[:, list(rig.feet)]``."""
        return (self.left_leg.ankle, self.right_leg.ankle)

    @property
    def toes(self) -> tuple[int | None, int | None]:
        """Toe indices ``(left, right)``, ``None`` where a foot has no toe joint."""
        return (self.left_leg.toe, self.right_leg.toe)

    @property
    def roles(self) -> dict[str, int | tuple[int, ...] | None]:
        """{role key: joint index} for every key of :data:`ROLE_KEYS` (``spine`` a tuple)."""
        out: dict[str, int | tuple[int, ...] | None] = {
            "pelvis": self.pelvis, "spine": self.spine, "chest": self.chest, "neck": self.neck, "head": self.head,
        }
        for side in SIDES:
            leg, arm = self.leg(side), self.arm(side)
            for role in LEG_ROLES:
                out[f"{_SIDE_WORD[side]}.{role}"] = getattr(leg, role)
            for role in ARM_ROLES:
                out[f"{_SIDE_WORD[side]}.{role}"] = None if arm is None else getattr(arm, role)
        return out

    @property
    def names(self) -> dict[str, str | tuple[str, ...] | None]:
        """{role key: joint name}, for printing and for building ``overrides``."""
        def name(j):
            if j is None:
                return None
            if isinstance(j, tuple):
                return tuple(self.joint_names[i] for i in j)
            return self.joint_names[j]

        return {key: name(j) for key, j in self.roles.items()}

    def __str__(self) -> str:
        rows = []
        for key, value in self.names.items():
            value = ", ".join(value) if isinstance(value, tuple) else value
            rows.append(f"{key:>15}  {'-' if value in (None, '') else value}")
        return f"Rig (found by {self.method})\n" + "\n".join(rows)

    def lower_body_mask(self, skeleton: Skeleton) -> np.ndarray:
        """(J,) bool: pelvis, its ancestors (a root joint), the legs and all below them.

        Everything that is not upper body (:meth:`upper_body_mask`) is lower
        body, so the two masks partition the joints.
        """
        return ~self.upper_body_mask(skeleton)

    def upper_body_mask(self, skeleton: Skeleton) -> np.ndarray:
        """(J,) bool: spine, chest, neck, head, arms and every joint below them,
        except the legs and the joints leading from the pelvis to the hips."""
        tree = self._tree(skeleton)
        J = len(skeleton)
        seeds = list(self.spine) + [j for j in (self.chest, self.neck, self.head) if j is not None]
        for side in SIDES:
            arm = self.arm(side)
            seeds += list(arm.joints) if arm is not None else []
        upper = np.zeros(J, dtype=bool)
        for j in seeds:
            upper |= tree.subtree(j)
        lower = np.arange(J) == self.pelvis
        lower |= tree.ancestors[self.pelvis]
        for side in SIDES:
            hip = self.leg(side).hip
            lower |= tree.subtree(hip) | tree.ancestors[hip]
        return upper & ~lower

    def subtree_mask(self, skeleton: Skeleton, joint: int) -> np.ndarray:
        """(J,) bool: ``joint`` and every joint below it (e.g. an arm to the fingertips)."""
        return self._tree(skeleton).subtree(joint)

    def _tree(self, skeleton: Skeleton) -> _Tree:
        if self.joint_names and tuple(skeleton.names) != self.joint_names:
            raise ValueError(
                f"this rig was found on a skeleton with {len(self.joint_names)} joints "
                f"({', '.join(self.joint_names[:4])}, ...), not on this one with {len(skeleton)}"
            )
        return _tree_of(skeleton)


@functools.lru_cache(maxsize=64)
def _tree_of(skeleton: Skeleton) -> _Tree:
    """The skeleton's tree, built once: skeletons are immutable (and hash by identity)."""
    return _Tree(skeleton)


def _side(side: str) -> str:
    s = str(side).strip().lower()
    if s in ("l", "left"):
        return "L"
    if s in ("r", "right"):
        return "R"
    raise ValueError(f"side must be 'L' or 'R', got {side!r}")


# --- finding the rig ---------------------------------------------------------------


def find_rig(skeleton: Skeleton | Motion, overrides: dict | None = None, up=None, *, clip: str = "") -> Rig:
    """The joint roles of ``skeleton`` (see the module docstring for how).

    skeleton   a :class:`Skeleton`, or a :class:`Motion` whose frames then
               stand in for the rest pose wherever geometry has to decide.
    overrides  {role key: joint name}, e.g. ``{"left.ankle": "LeftFoot",
               "spine": "Spine,Spine1"}``; ``spine`` takes a comma-separated
               string or a list; ``left.toe``/``left.clavicle`` (and right)
               take ``None`` or ``""`` for "no such joint". ``l.``/``r.`` work
               for ``left.``/``right.``.
    up         (3,) up direction for the topology fallback; by default it is
               estimated per pose from the feet toward the upper body.
    clip       names the clip in error messages (``"clip 'walk'"``), where a
               command reads several.

    Raises :class:`RigError` for an unknown role key, an override naming a
    joint that does not exist, overrides that break the hierarchy, a
    skeleton whose legs cannot be found (the message lists what was found,
    what is missing, and the override keys to set), or legs that point up
    (:func:`legs_above_pelvis`; found by name or mapped alike).
    """
    try:
        return _find_rig(skeleton, overrides, up)
    except RigError as error:
        if not clip:
            raise
        raise RigError(f"{clip}: {error}") from None


def _find_rig(skeleton: Skeleton | Motion, overrides: dict | None, up) -> Rig:
    motion = skeleton if isinstance(skeleton, Motion) else None
    skel = motion.skeleton if motion is not None else skeleton
    if not isinstance(skel, Skeleton):
        raise TypeError(f"find_rig needs a Skeleton or a Motion, got {type(skeleton).__name__}")
    tree = _Tree(skel)
    fixed = _parse_overrides(skel, overrides)
    # per joint {role: score}, plus its side under "_side"
    scores = [{**_role_scores(p), "_side": p.side} for p in map(parse_name, skel.names)]
    poses = _Poses(skel, motion, up)

    method = "names"
    legs = {s: _named_chain(tree, scores, fixed, s, LEG_ROLES, required=("hip", "knee", "ankle")) for s in SIDES}
    if any(leg is None for leg in legs.values()) or not _legs_apart(tree, legs["L"], legs["R"]):
        method = "topology"
        legs = _apply_limb_overrides(_topology_legs(tree, poses, scores, fixed), fixed, LEG_ROLES)
    else:
        legs = {s: _fill_toe(tree, scores, fixed, s, legs[s]) for s in SIDES}
    legs = {s: Leg(*legs[s]) for s in SIDES}
    pelvis = fixed.get("pelvis", _pelvis(tree, scores, legs))

    arms = {s: _named_chain(tree, scores, fixed, s, ARM_ROLES, required=("shoulder", "elbow", "wrist")) for s in SIDES}
    if any(arm is None for arm in arms.values()):
        arms = _apply_limb_overrides(_topology_arms(tree, poses, pelvis, legs), fixed, ARM_ROLES)
    arms = {s: None if arms[s] is None else Arm(*arms[s]) for s in SIDES}

    spine, chest, neck, head = _centre(tree, scores, fixed, pelvis, legs, arms)
    rig = Rig(
        pelvis=int(pelvis), spine=tuple(int(j) for j in spine), chest=chest, neck=neck, head=head,
        left_leg=legs["L"], right_leg=legs["R"], left_arm=arms["L"], right_arm=arms["R"],
        joint_names=skel.names, method=method,
    )
    _validate(tree, rig)
    # legs found from the hierarchy alone may be the arms, when the leg bones are gone: they
    # must hang as legs do; legs found by their names (or mapped) may fold any way (a seated
    # clip's hang little), but not point up
    if method == "topology" and not any(k.endswith((".hip", ".knee", ".ankle")) for k in fixed):
        _check_topology_legs_hang(tree, skel, poses, rig)
    why = _legs_above(skel, rig, poses.positions if poses.has_motion else None)
    if why:
        raise RigError(why)
    return rig


def parse_bone_mapping(text: str) -> dict[str, str]:
    """``"left.ankle=foot.L, right.ankle=foot.R"`` -> ``{"left.ankle": "foot.L", ...}``: the
    overrides of :func:`find_rig` as a user writes them (the add-on's Bone Mapping field).

    Pairs are separated by commas, semicolons or new lines. A piece without
    ``=`` continues the previous value, so ``spine=Spine, Spine1`` lists two
    spine bones. A role set to ``none`` (toes, clavicles) means "no such bone".
    ``ValueError`` saying how to write a piece that is not ``ROLE=BONE``.
    """
    mapping: dict[str, str] = {}
    role = None
    for piece in text.replace(";", ",").replace("\n", ",").split(","):
        piece = piece.strip()
        if not piece:
            continue
        key, sep, bone = piece.partition("=")
        if sep:
            role = key.strip()
            if not role:
                raise ValueError(f"Bone Mapping: {piece!r} names no role; write ROLE=BONE, e.g. left.ankle=foot.L")
            mapping[role] = bone.strip()
        elif role is not None:
            mapping[role] += "," + piece
        else:
            raise ValueError(
                f"Bone Mapping: {piece!r} is not ROLE=BONE; write pairs separated by commas, "
                "e.g. left.ankle=foot.L, right.ankle=foot.R"
            )
    return mapping


def _parse_overrides(skel: Skeleton, overrides) -> dict:
    """{canonical role key (``"pelvis"``, ``"L.ankle"``, ``"spine"``): index, tuple or None}."""
    out: dict = {}
    for key, value in (overrides or {}).items():
        canonical = _canonical_key(key)
        role = canonical.split(".")[-1]
        if canonical == "spine":
            names = value.split(",") if isinstance(value, str) else list(value or [])
            out[canonical] = tuple(_override_joint(skel, key, n.strip()) for n in names if n.strip())
        elif value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")
                               and value.strip() not in skel.names):
            if role not in _OPTIONAL_LIMB_ROLES:
                raise RigError(f"override {key!r} cannot be empty: the {role} is required")
            out[canonical] = None
        else:
            out[canonical] = _override_joint(skel, key, str(value).strip())
    return out


def _canonical_key(key: str) -> str:
    parts = re.split(r"[._\s]+", str(key).strip().lower(), maxsplit=1)
    if len(parts) == 1 and parts[0] in CENTRE_ROLES:
        return parts[0]
    if len(parts) == 2 and parts[0] in ("l", "left", "r", "right") and parts[1] in LEG_ROLES + ARM_ROLES:
        return f"{_side(parts[0])}.{parts[1]}"
    raise RigError(f"unknown role key {key!r}; role keys are: {', '.join(ROLE_KEYS)}")


def _override_joint(skel: Skeleton, key: str, name: str) -> int:
    if name in skel.names:
        return skel.names.index(name)
    # forgive a missing "prefix:" or a different case, when that is unambiguous
    loose = [i for i, n in enumerate(skel.names) if re.split(r"[:|]", n)[-1].lower() == name.lower()]
    if len(loose) == 1:
        return loose[0]
    raise RigError(
        f"override {key!r} names joint {name!r}, which is not in the skeleton; "
        f"available joints are: {', '.join(skel.names)}"
    )


def _candidates(scores: list[dict], fixed: dict, side: str | None, role: str) -> list[tuple[int, float]]:
    key = role if side is None else f"{side}.{role}"
    if key in fixed:
        return [] if fixed[key] is None else [(fixed[key], 100.0)]
    want_side = side
    return [
        (j, s[role]) for j, s in enumerate(scores)
        if role in s and (want_side is None or s["_side"] == want_side)
    ]


def _named_chain(tree: _Tree, scores, fixed, side: str, roles: tuple[str, ...], required: tuple[str, ...]):
    """Best-scoring assignment of ``roles`` (root to tip) forming an ancestor chain, or None.

    Optional roles may stay empty. Ties go to the tighter chain (fewest joints
    in between), so "Neck" is preferred over "Neck1" and a limb's first
    Rigify segment over the later ones.
    """
    options = []
    for role in roles:
        cands = _candidates(scores, fixed, side, role)
        key = f"{side}.{role}"
        if role not in required and not (key in fixed and fixed[key] is not None):
            cands = cands + [(None, 0.0)]
        if not cands:
            return None
        options.append(cands)

    best, best_key = None, None

    def search(i, prev, picked, score, spread):
        nonlocal best, best_key
        if i == len(roles):
            key = (score, -spread)
            if best_key is None or key > best_key:
                best, best_key = picked, key
            return
        for j, s in options[i]:
            if j is None:
                search(i + 1, prev, picked + (None,), score, spread)
            elif (prev is None or tree.is_ancestor(prev, j)) and j not in picked:
                gap = 0 if prev is None else int(tree.depth[j] - tree.depth[prev])
                search(i + 1, j, picked + (j,), score + s, spread + gap)

    search(0, None, (), 0.0, 0)
    return None if best is None else tuple(None if j is None else int(j) for j in best)


def _fill_toe(tree: _Tree, scores, fixed, side: str, leg: tuple) -> tuple:
    """A leg named without a toe takes the ankle's next joint as its toe, unless
    that joint is an end, twist or other helper, or has a role of its own."""
    hip, knee, ankle, toe = leg
    if toe is not None or f"{side}.toe" in fixed or not tree.children[ankle]:
        return leg
    after = tree.longest_path(ankle)[1]
    roles = set(scores[after]) - {"_side"}
    if parse_name(tree.names[after]).excluded or roles:
        return leg
    return (hip, knee, ankle, after)


def _legs_apart(tree: _Tree, left, right) -> bool:
    a, b = left[0], right[0]
    return a != b and not tree.is_ancestor(a, b) and not tree.is_ancestor(b, a)


def _pelvis(tree: _Tree, scores, legs: dict) -> int:
    """The named hips/pelvis joint at or above where the legs branch, else that branch joint."""
    branch = tree.common_ancestor(legs["L"].hip, legs["R"].hip)
    named = [
        (s["pelvis"], int(tree.depth[j]), j) for j, s in enumerate(scores)
        if "pelvis" in s and s.get("_side") is None and (j == branch or tree.is_ancestor(j, branch))
    ]
    return max(named)[2] if named else branch


def _apply_limb_overrides(limbs: dict, fixed: dict, roles: tuple[str, ...]) -> dict:
    """Limbs found by topology with the overridden roles put in."""
    out = {}
    for side in SIDES:
        keys = [f"{side}.{r}" for r in roles]
        values = limbs[side]
        if any(k in fixed for k in keys):
            values = [fixed[k] if k in fixed else (None if values is None else v) for k, v in
                      zip(keys, values or [None] * len(roles))]
            missing = [f"{_SIDE_WORD[side]}.{r}" for r, v in zip(roles, values)
                       if v is None and r not in _OPTIONAL_LIMB_ROLES]
            if missing:
                raise RigError(f"overrides set part of a limb whose other joints cannot be found; "
                               f"also map {', '.join(missing)}")
        out[side] = None if values is None else tuple(values)
    return out


def _centre(tree: _Tree, scores, fixed: dict, pelvis: int, legs: dict, arms: dict):
    """(spine, chest, neck, head): overrides first, then names, then topology.

    Without names, the neck is the branch of the arms' common joint that is
    not an arm (the longest one: Rigify's chest also carries breast bones),
    and the head is the end of the unbranched chain from there. Without arms
    either, the head is the end of the longest path up from the pelvis.
    """
    in_legs = tree.subtree(legs["L"].hip) | tree.subtree(legs["R"].hip)

    def named(role, above=None):
        cands = [
            (s[role], -int(tree.depth[j]), -j) for j, s in enumerate(scores)
            if role in s and s["_side"] is None and tree.is_ancestor(pelvis, j) and not in_legs[j]
            and (above is None or j == above or tree.is_ancestor(j, above))
        ]
        return -max(cands)[2] if cands else None

    head = fixed["head"] if "head" in fixed else named("head")
    neck = fixed["neck"] if "neck" in fixed else named("neck", head)
    branch = None
    if arms["L"] is not None and arms["R"] is not None:
        branch = tree.common_ancestor(arms["L"].joints[0], arms["R"].joints[0])
    if neck is None or head is None:
        start = neck
        if start is None and branch is not None and branch != pelvis and not in_legs[branch]:
            in_arms = tree.subtree(arms["L"].joints[0]) | tree.subtree(arms["R"].joints[0])
            rest = [c for c in tree.children[branch] if not in_arms[c]
                    and (head is None or c == head or tree.is_ancestor(c, head))]
            start = max(rest, key=lambda c: (tree.branch(c), -c)) if rest else None
            neck = start
        if head is None:
            if start is None:
                rest = [c for c in tree.children[pelvis] if not in_legs[tree.subtree(c)].any()]
                start = tree.longest_path(max(rest, key=lambda c: (tree.total[c], -c)))[-1] if rest else None
            head = None if start is None else tree.single_chain_end(start)
    if neck is not None and neck == head:
        neck = None

    if "spine" in fixed:
        spine = list(fixed["spine"])
    elif neck is not None:
        spine = tree.between(pelvis, neck)
    elif head is not None:
        spine = tree.between(pelvis, head)
    elif branch is not None and branch != pelvis:
        spine = tree.between(pelvis, branch) + [branch]
    else:
        spine = []
    chest = fixed["chest"] if "chest" in fixed else (spine[-1] if spine else None)
    as_int = lambda j: None if j is None else int(j)  # noqa: E731
    return spine, as_int(chest), as_int(neck), as_int(head)


# A leg hangs from the hip: its ankle stands below the pelvis, away from the head, by most of
# the leg's length when standing (about its whole length), and by a good part of it in the
# motion's most extended frames however much it crouches or sits in the others. Arms taken
# for legs do not (in a T or A pose the wrist is near the shoulder's height; hanging at the
# sides the hands reach about the pelvis), nor does any other chain.
HANG_REST = 0.75  # leg lengths below the pelvis in the rest pose, at least
HANG_MOTION = 0.5  # leg lengths below the pelvis in the motion's most extended frames (90th percentile), at least
HANG_PERCENTILE = 90.0
# Legs found by their names (or mapped) may fold any way: kneeling on the heels, the ankles
# hang a tenth of a leg below the pelvis; sitting cross-legged and leaning back they may come
# up to about its height. They still hang on the side away from the head. Ankles that stand
# above the pelvis, on the head's side, in most of a clip's frames belong to legs turned up
# along the spine: leg bones flipped (their offsets or rotations turned over by an export),
# not a pose. Up found from the feet to the head (detect_up) then points down and every
# measure built on it turns the body over; so legs are judged by the body's own axis, from
# the pelvis towards the head, which flipped legs do not change. Most frames, not the most
# extended ones: bowing deep, the trunk lies across the legs, real or flipped, and the axis
# cannot tell them apart (the real clips' median frames, flipped, stand 0.59 to 0.97 leg
# lengths above the pelvis; as captured, 0.58 to 1.02 below).
ABOVE_PELVIS = 0.25  # leg lengths an ankle may stand above the pelvis, towards the head, in the median frame, at most
ABOVE_PERCENTILE = 50.0
_LEG_KEYS = ", ".join(f"{_SIDE_WORD[s]}.{r}" for s in SIDES for r in ("hip", "knee", "ankle"))  # (for messages)


def body_top(rig: Rig) -> int | None:
    """The joint the body's axis points to from the pelvis: the head, else the neck, else the
    chest; ``None`` when the rig has none of them above the pelvis."""
    return next((j for j in (rig.head, rig.neck, rig.chest) if j is not None and j != rig.pelvis), None)


def leg_hang(positions: np.ndarray, rig: Rig) -> np.ndarray:
    """``(K, J, 3) -> (K, 2)``: how far each ankle (left, right) hangs below the pelvis along the
    body's axis (from the pelvis towards :func:`body_top`), in the leg's own length in that pose
    (hip to knee plus knee to ankle). About 1 standing, 0.1 kneeling on the heels, -1 for a leg
    turned up along the spine; the same whichever way the world's up is (lying, a handstand)."""
    top = body_top(rig)
    if top is None:
        raise ValueError("the rig has no head, neck or chest above the pelvis to tell up from down by")
    pelvis = positions[:, rig.pelvis]
    axis = _unit(positions[:, top] - pelvis)
    out = np.empty((len(positions), 2))
    for k, side in enumerate(SIDES):
        leg = rig.leg(side)
        hip, knee, ankle = positions[:, leg.hip], positions[:, leg.knee], positions[:, leg.ankle]
        length = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
        out[:, k] = -np.sum((ankle - pelvis) * axis, axis=-1) / np.where(length > 0, length, 1.0)
    return out


def _hang_poses(skeleton: Skeleton, rig: Rig, positions: np.ndarray | None) -> tuple[np.ndarray, str] | None:
    """The poses ``(K, J, 3)`` that tell whether the legs hang, and where they come from: a
    motion's (``positions``, some of its frames' global joint positions), else the skeleton's
    rest pose when that is a pose; ``None`` when it is not (a file's rest pose may be any pose:
    Bandai Namco's lays every bone along X, one leg along the spine and the other against it;
    neither a standing pose nor arms held out do that, nor legs turned up, both along it)."""
    if positions is not None:
        return positions, "over the motion"
    rest = skeleton.rest_positions()[None]
    spine = _unit(rest[0, body_top(rig)] - rest[0, rig.pelvis])
    along = [float(_unit(rest[0, rig.leg(s).ankle] - rest[0, rig.leg(s).hip]) @ spine) > 0.9 for s in SIDES]
    return None if along[0] != along[1] else (rest, "in the rest pose")


def _spread_frames(n: int, most: int = _MAX_POSES) -> np.ndarray:
    """Up to ``most`` evenly spread frame indices of ``n`` frames, first and last included."""
    return np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(int))


def _lowest_hang(hang: np.ndarray, percentile: float) -> tuple[int, float]:
    """(side index, hang) of the leg that hangs least in the poses ``hang (K, 2)``
    (:func:`leg_hang`) at ``percentile`` over them (90: the most extended frames)."""
    over = np.percentile(hang, percentile, axis=0)
    k = int(np.argmin(over))
    return k, float(over[k])


def legs_above_pelvis(motion: Motion | Skeleton, rig: Rig, *, positions: np.ndarray | None = None) -> str:
    """Why the legs of ``motion`` are not legs, for a message: an ankle stands more than
    ABOVE_PELVIS leg lengths above the pelvis, towards the head, in the clip's median frame
    (:func:`leg_hang` over up to 64 evenly spread frames); "" when the legs hang, or when
    nothing tells (no head, neck or chest; a rest pose that is no pose).

    motion     a :class:`Motion`, or a bare :class:`Skeleton`, judged by its rest pose.
    positions  the motion's global joint positions ``(F, J, 3)`` when at hand.
    """
    skeleton = motion.skeleton if isinstance(motion, Motion) else motion
    sampled = None
    if isinstance(motion, Motion) and motion.n_frames > 0:
        frames = _spread_frames(motion.n_frames)
        sampled = motion[frames].global_positions() if positions is None else positions[frames]
    return _legs_above(skeleton, rig, sampled)


def check_legs_hang(motion: Motion | Skeleton, rig: Rig, *, clip: str = "", positions: np.ndarray | None = None
                    ) -> None:
    """Raise :class:`RigError` when the legs of ``motion`` point up (:func:`legs_above_pelvis`);
    ``clip`` names it in the message (e.g. ``"clip 'walk'"``). :func:`find_rig` checks its own
    input so; every command checks each other clip it takes with the rig it found."""
    why = legs_above_pelvis(motion, rig, positions=positions)
    if why:
        raise RigError(f"{clip}: {why}" if clip else why)


def body_mismatch(motion: Motion, reference: Motion | Skeleton, rig: Rig, name: str, reference_name: str, *,
                  positions: np.ndarray | None = None) -> str:
    """Why clip ``motion`` cannot stand beside ``reference`` (a clip or skeleton of the same joints,
    whose roles ``rig`` gives): its bones at another scale (core.motion.scale_mismatch) or its legs
    pointing up (:func:`legs_above_pelvis`), for a message naming both by ``name`` and
    ``reference_name``; "" when it can. ``positions`` as :func:`legs_above_pelvis`'s."""
    skeleton = reference.skeleton if isinstance(reference, Motion) else reference
    why = scale_mismatch(motion.skeleton, skeleton, name, reference_name)
    if why:
        return why
    legs = legs_above_pelvis(motion, rig, positions=positions)
    return f"{name}: {legs}" if legs else ""


def _legs_above(skeleton: Skeleton, rig: Rig, sampled: np.ndarray | None) -> str:
    """:func:`legs_above_pelvis` given some frames' global joint positions ``(K, J, 3)`` (None:
    the rest pose)."""
    if body_top(rig) is None:
        return ""
    poses = _hang_poses(skeleton, rig, sampled)
    if poses is None:
        return ""
    k, hang = _lowest_hang(leg_hang(poses[0], rig), ABOVE_PERCENTILE)
    if hang >= -ABOVE_PELVIS:
        return ""
    names, leg, top = skeleton.names, rig.leg(SIDES[k]), body_top(rig)
    chain = " -> ".join(names[j] for j in (leg.hip, leg.knee, leg.ankle))
    where = poses[1] if sampled is None else f"{poses[1]} (its median frame)"
    return (f"the legs point up: the {_SIDE_WORD[SIDES[k]]} ankle {names[leg.ankle]!r} stands {-hang:.2f} leg "
            f"lengths above the pelvis {names[rig.pelvis]!r}, on the side of {names[top]!r}, {where}, where a leg "
            f"hangs about 1 below it, away from the head. Legs turned up along the spine are flipped leg bones "
            f"(offsets or rotations turned over, as by an export on other axes), not a pose: fix the legs in the "
            f"file; or, if {chain} is not a leg, map the legs with overrides (--map) for {_LEG_KEYS}")


def _check_topology_legs_hang(tree: _Tree, skel: Skeleton, poses: _Poses, rig: Rig) -> None:
    """Raise :class:`RigError` when legs found from the hierarchy alone do not hang below the
    pelvis towards the floor, away from the head (or the top of the spine), by HANG_MOTION over
    the motion or HANG_REST in the rest pose: then they are not legs (arms, when the leg bones
    are gone), and the message says which roles to map."""
    if body_top(rig) is None:
        return  # nothing above the pelvis to tell up from down by
    found = _hang_poses(skel, rig, poses.positions if poses.has_motion else None)
    if found is None:
        return
    P, where = found
    least = HANG_MOTION if poses.has_motion else HANG_REST
    k, below = _lowest_hang(leg_hang(P, rig), HANG_PERCENTILE)
    if below < least:
        side, leg, names = SIDES[k], rig.leg(SIDES[k]), tree.names
        chain = " -> ".join(names[j] for j in (leg.hip, leg.knee, leg.ankle))
        raise RigError(
            f"the {_SIDE_WORD[side]} leg found ({chain}) does not hang below the pelvis "
            f"{names[rig.pelvis]!r} towards the floor {where}: its end is {below:.2f} leg lengths below "
            f"it, where a leg's is about 1. These joints are not a leg (arms?); map the legs with "
            f"overrides for {_LEG_KEYS} and 'pelvis', e.g. {{'left.ankle': 'LeftFoot'}}. "
            f"Joints: {', '.join(names)}")


def _validate(tree: _Tree, rig: Rig) -> None:
    """Raise :class:`RigError` when the roles do not form the body's chains."""
    names = tree.names
    problems = []

    def below(a, b, what):
        if a is not None and b is not None and not tree.is_ancestor(a, b):
            problems.append(f"{what}: {names[b]!r} is not below {names[a]!r}")

    for side in SIDES:
        word = _SIDE_WORD[side]
        leg = rig.leg(side)
        below(rig.pelvis, leg.hip, f"pelvis -> {word}.hip")
        below(leg.hip, leg.knee, f"{word}.hip -> {word}.knee")
        below(leg.knee, leg.ankle, f"{word}.knee -> {word}.ankle")
        below(leg.ankle, leg.toe, f"{word}.ankle -> {word}.toe")
        arm = rig.arm(side)
        if arm is not None:
            below(arm.clavicle, arm.shoulder, f"{word}.clavicle -> {word}.shoulder")
            below(arm.shoulder, arm.elbow, f"{word}.shoulder -> {word}.elbow")
            below(arm.elbow, arm.wrist, f"{word}.elbow -> {word}.wrist")
    if not _legs_apart(tree, rig.left_leg.joints, rig.right_leg.joints):
        problems.append(
            f"left.hip {names[rig.left_leg.hip]!r} and right.hip {names[rig.right_leg.hip]!r} are on one chain"
        )
    chain = [rig.pelvis] + list(rig.spine)
    for a, b in zip(chain, chain[1:]):
        below(a, b, "spine")
    below(rig.neck, rig.head, "neck -> head")
    if problems:
        raise RigError(
            "the joint roles do not fit the hierarchy (" + "; ".join(problems) + "); "
            "fix them with overrides, e.g. {'left.knee': 'JointName'}"
        )


# --- topology and pose --------------------------------------------------------------


class _Poses:
    """Global joint positions ``(K, J, 3)`` used where geometry decides, made on first use.

    The rest pose (K = 1) of a skeleton, or up to 64 evenly spaced frames of
    a motion. ``up`` (3,) fixes the up direction instead of estimating it.
    """

    def __init__(self, skeleton: Skeleton, motion: Motion | None, up):
        self._skeleton, self._motion = skeleton, motion
        self.has_motion = motion is not None and motion.n_frames > 0
        self.up = None if up is None else _unit(np.asarray(up, dtype=np.float64).reshape(3))
        self._positions = None

    @property
    def positions(self) -> np.ndarray:
        if self._positions is None:
            if self._motion is not None and self._motion.n_frames > 0:
                n = self._motion.n_frames
                frames = _spread_frames(n)
                self._positions = self._motion[frames].global_positions()
            else:
                self._positions = self._skeleton.rest_positions()[None]
        return self._positions


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n < 1e-12, 1.0, n)


def _split_limb(tree: _Tree, chain: list[int]) -> int:
    """Index ``k`` in ``chain`` of the middle joint (knee, elbow) of a limb.

    The two consecutive bones with the largest summed length, ``chain[k-1] ->
    chain[k] -> chain[k+1]``, are the thigh and shin (upper arm and forearm).
    """
    bones = tree.bone[chain]
    pairs = bones[1:-1] + bones[2:]
    return 1 + int(np.argmax(pairs))


def _leg_from_chain(tree: _Tree, chain: list[int]) -> tuple:
    k = _split_limb(tree, chain)
    toe = chain[k + 2] if k + 2 < len(chain) else None
    return (chain[k - 1], chain[k], chain[k + 1], toe)


def _arm_from_chain(tree: _Tree, chain: list[int]) -> tuple:
    k = _split_limb(tree, chain)
    clavicle = chain[k - 2] if k >= 2 else None
    return (clavicle, chain[k - 1], chain[k], chain[k + 1])


def _topology_legs(tree: _Tree, poses: _Poses, scores, fixed) -> dict:
    """{"L": (hip, knee, ankle, toe), "R": ...} from the hierarchy and the pose."""
    J = len(tree.parents)
    forks = [j for j in range(J) if len(tree.long_children(j, tree.span[j])) >= 2]
    if not forks:
        raise _legs_error(tree, scores, fixed, "no joint has two long branches (legs) below it")
    # the pelvis is the fork nearest the root that has two leg-like branches
    # (a root carrying long IK helper chains is passed over)
    for pelvis in sorted(forks, key=lambda j: (tree.depth[j], j)):
        scale = tree.span[pelvis]
        long = tree.long_children(pelvis, scale)
        # the spine is the long branch that splits again into two long branches (the arms)
        upper = [c for c in long
                 if any(len(tree.long_children(k, scale)) >= 2 for k in np.flatnonzero(tree.subtree(c)))]
        if upper:
            spine_child = max(upper, key=lambda c: (tree.total[c], -c))
        elif len(long) >= 3:
            spine_child = max(long, key=lambda c: (tree.total[c], -c))
        else:
            spine_child = None
        chains = [tree.longest_path(c) for c in long if c != spine_child]
        chains = [c for c in chains if len(c) >= 3]
        if len(chains) >= 2:
            break
    else:
        first = min(forks, key=lambda j: (tree.depth[j], j))
        raise _legs_error(tree, scores, fixed, f"the branches below {tree.names[first]!r} are too short for legs")
    P = poses.positions
    if len(chains) > 2:
        # e.g. a tail: keep the two chains that end lowest
        ref = P[:, tree.subtree(spine_child)].mean(axis=1) if spine_child is not None else P[:, pelvis]
        up = _unit(ref - P[:, [c[-1] for c in chains]].mean(axis=1)) if poses.up is None else poses.up
        height = [np.mean(np.sum(P[:, c[-1]] * up, axis=-1)) for c in chains]
        chains = [chains[i] for i in np.argsort(height, kind="stable")[:2]]
    a, b = (_leg_from_chain(tree, c) for c in chains)

    ankles = P[:, [a[2], b[2]]]
    if poses.up is not None:
        up = np.broadcast_to(poses.up, ankles[:, 0].shape)
    else:
        ref = P[:, tree.subtree(spine_child)].mean(axis=1) if spine_child is not None else P[:, pelvis]
        up = _unit(ref - ankles.mean(axis=1))
    if a[3] is not None and b[3] is not None:
        forward = (P[:, [a[3], b[3]]] - ankles).mean(axis=1)
    else:
        # knees bend forward
        forward = (P[:, [a[1], b[1]]] - 0.5 * (P[:, [a[0], b[0]]] + ankles)).mean(axis=1)
    left = _unit(quat.cross(up, forward))
    across = _unit(P[:, a[0]] - P[:, b[0]])
    vote = float(np.sum(np.sum(across * left, axis=-1)))
    # undecidable poses (no toes, straight legs) keep the hierarchy's order: first leg is left
    return {"L": a, "R": b} if vote >= 0.0 else {"L": b, "R": a}


def _legs_error(tree: _Tree, scores, fixed, reason: str) -> RigError:
    found = {}
    for side in SIDES:
        for role in LEG_ROLES + ARM_ROLES:
            cands = _candidates(scores, fixed, side, role)
            if cands:
                found[f"{_SIDE_WORD[side]}.{role}"] = tree.names[max(cands, key=lambda c: c[1])[0]]
    for role in _CENTRE_NAMED:
        cands = _candidates(scores, fixed, None, role)
        if cands:
            found[role] = tree.names[max(cands, key=lambda c: c[1])[0]]
    needed = [f"{_SIDE_WORD[s]}.{r}" for s in SIDES for r in ("hip", "knee", "ankle")]
    missing = [k for k in needed if k not in found]
    found_text = ", ".join(f"{k}={v!r}" for k, v in found.items()) or "no role"
    return RigError(
        f"cannot find the legs of this skeleton ({len(tree.names)} joints): {reason}. "
        f"From the joint names found {found_text}; missing {', '.join(missing) or 'a consistent chain'}. "
        f"Map them with overrides for the keys {', '.join(needed)} (and 'pelvis'), "
        f"e.g. {{'left.ankle': 'LeftFoot'}}. Joints: {', '.join(tree.names)}"
    )


def _topology_arms(tree: _Tree, poses: _Poses, pelvis: int, legs: dict) -> dict:
    """{"L": (clavicle, shoulder, elbow, wrist) or None, "R": ...}: the two long
    branches where the spine splits above the pelvis."""
    none = {"L": None, "R": None}
    in_legs = tree.subtree(legs["L"].hip) | tree.subtree(legs["R"].hip)
    start = [c for c in tree.children[pelvis] if not in_legs[tree.subtree(c)].any()]
    if not start:
        return none
    scale = tree.span[pelvis]
    j = max(start, key=lambda c: (tree.total[c], -c))
    while len(tree.long_children(j, scale)) < 2:
        if not tree.children[j]:
            return none
        j = tree.longest_path(j)[1]
    chest = j
    long = tree.long_children(chest, scale)
    P = poses.positions
    if len(long) > 2:
        # the most upward long branch is the neck and head, not an arm
        hips = P[:, [legs["L"].hip, legs["R"].hip]].mean(axis=1)
        up = _unit(P[:, chest] - hips) if poses.up is None else poses.up
        upness = [np.mean(np.sum(_unit(P[:, tree.longest_path(c)[-1]] - P[:, chest]) * up, axis=-1)) for c in long]
        long = [c for i, c in enumerate(long) if i != int(np.argmax(upness))]
        long = sorted(long, key=lambda c: (-tree.branch(c), c))[:2]
    chains = [tree.longest_path(c) for c in long]
    if any(len(c) < 3 for c in chains):
        return none
    a, b = (_arm_from_chain(tree, c) for c in chains)
    across = P[:, list(a[1:])].mean(axis=1) - P[:, list(b[1:])].mean(axis=1)
    left = P[:, legs["L"].hip] - P[:, legs["R"].hip]
    vote = float(np.sum(np.sum(_unit(across) * _unit(left), axis=-1)))
    return {"L": a, "R": b} if vote >= 0.0 else {"L": b, "R": a}


# --- measures ----------------------------------------------------------------------


def detect_up(motion: Motion, rig: Rig, positions: np.ndarray | None = None) -> np.ndarray:
    """(3,) the signed world axis (one of +-X, +-Y, +-Z) nearest to the mean
    direction from the midpoint of the ankles to the head over the clip
    (at most 256 evenly spread frames).

    Falls back to the neck, chest, then pelvis when the rig has no head.
    ``positions``: the motion's global joint positions ``(F, J, 3)`` when at hand.
    """
    if motion.n_frames == 0:
        raise ValueError("cannot detect the up axis of a motion with no frames")
    top = next(j for j in (rig.head, rig.neck, rig.chest, rig.pelvis) if j is not None)
    # Gravity does not change within a clip: a few hundred evenly spread
    # frames decide as well as every frame, at a fraction of the cost.
    frames = np.unique(np.linspace(0, motion.n_frames - 1, min(motion.n_frames, 256)).round().astype(int))
    gpos = motion[frames].global_positions() if positions is None else positions[frames]
    direction = _unit(gpos[:, top] - gpos[:, list(rig.feet)].mean(axis=1)).mean(axis=0)
    if np.linalg.norm(direction) < 1e-9:
        raise ValueError("the head is not consistently above the feet; pass the up axis explicitly")
    axis = int(np.argmax(np.abs(direction)))
    out = np.zeros(3)
    out[axis] = np.sign(direction[axis])
    return out


def leg_length(skeleton: Skeleton | Motion, rig: Rig, side: str) -> float:
    """Rest length of one leg, hip to ankle: the summed bone lengths along the
    hierarchy (twist joints in between included), in the skeleton's unit."""
    skel = skeleton.skeleton if isinstance(skeleton, Motion) else skeleton
    tree = rig._tree(skel)
    leg = rig.leg(side)
    path = tree.between(leg.hip, leg.ankle) + [leg.ankle]
    return float(tree.bone[path].sum())


def mean_leg_length(skeleton: Skeleton | Motion, rig: Rig) -> float:
    """The mean of the two legs' rest lengths (:func:`leg_length`, hip to ankle), in the skeleton's
    unit: the body-size measure that makes thresholds and speeds unit-free ("leg lengths")."""
    return 0.5 * (leg_length(skeleton, rig, "L") + leg_length(skeleton, rig, "R"))


def body_height(motion: Motion | Skeleton, rig: Rig) -> float:
    """A body-size measure in the motion's own length unit.

    The mean rest leg length (hip -> knee -> ankle, :func:`leg_length`) plus
    the rest length of the trunk: the bones from the pelvis up the spine to
    the head joint (to the neck or chest when there is no head). It leaves out
    the head's own size, the hip width and the ankle height, so for a person
    it is about 0.75-0.8 of standing height; analysis uses it to make
    thresholds unit-free, and it scales exactly with :meth:`Motion.scaled`.
    """
    skel = motion.skeleton if isinstance(motion, Motion) else motion
    tree = rig._tree(skel)
    legs = mean_leg_length(skel, rig)
    top = next((j for j in (rig.head, rig.neck, rig.chest) if j is not None), None)
    trunk = 0.0 if top is None else float(tree.bone[tree.between(rig.pelvis, top) + [top]].sum())
    return legs + trunk
