"""The contact stage: feet the blended sources hold down stay planted, over every gap between cores.

Synthesis is plan -> render -> contacts. Rendering blends and warps the
clips; the blend of two feet planted in different places slides, and one
that lands inside a blend lands wherever the weights bring it. This stage
runs last, over each gap between one core's last frame and the next core's
first frame, and only changes frames strictly inside it (cores stay exact):

* a foot the blended sources say is down is held rigidly, in position and
  in heading, where it stands: where the core leaves it for a contact that
  began in the previous core, where the next core wants it for one that goes
  on into it, where it touched down otherwise (2008, 7.2: "the foot position
  is fixed while the foot is on the ground"), on the gap's floor (the lower
  of the two clips'), settling onto it within settle_s of a core. So a foot touching down inside
  a blend lands on its final spot: its swing bends there, rather than
  landing and then sliding there;
* through heel-off the foot pivots about its toe, as captured feet do: it
  keeps the blended foot's pitch and roll (its change since the hold began,
  the heading held) and the ankle goes where that puts it with the toe held;
  with the heel down it pivots about the ankle. Which one is down is read off
  the blended foot's heights above their floors, not off how far the ankle
  rose since the hold began (a foot held from a heel-off pivoted about its
  ankle and slid its toe). While heel and toe are both down the foot is flat
  and does not pitch or roll either (a blend can pitch a flat foot about its
  held ankle and slide its toe); it takes the blended pitch again as heel or
  toe rises. Neither toe nor ankle goes below its floor;
* corrections ease in and out only while the foot is in the air, along a
  smoothstep between the correction where the foot leaves the floor and the
  one where it lands (zero at the cores); a foot in the air between two
  places on the floor rises at least as a step of that length would, so a
  blended swing flattened by a foot at rest does not skim the floor;
* a step the plan has a foot take (core.methods: adaptation's steps) goes
  from where the foot stands to where the plan lands it, over the frames and
  as high as the plan says; a glide (a foot the plan has no room to step)
  slides along the floor over its frames instead, not held meanwhile;
* a foot down through the whole gap whose two ends are apart (the cores
  stand it in different places) steps from one to the other, lifted, in the
  middle of the gap; two such feet step one after the other, the other foot
  standing meanwhile. Only a gap too short to step in glides.

The legs reach the held feet by two-bone IK (``render.adapt_legs``), with the
foot's world orientation given. The solver eases a leg's reach near full
extension (``core.ik.soft_extension``), so a nearly straight leg's held foot
stands a little short of its place; that easing fades in and out with each hold
over ``hold_fade_s``, inside its run of frames (so the cores stay exact). No held
leg is stretched past the larger of ``render.REACH`` of its length and its own
extension as blended (a nearly straight leg stretched further swings its knee
across by many times the change); where that leaves a held foot short, the body
comes down to it: the pelvis drops along up (:func:`pelvis_drop`), smoothly, and
every foot the stage leaves alone keeps its own path in the world.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import quat
from .analysis import horizontal
from .ik import SOFT_ZONE, chain_joints
from .motion import Motion, forward_kinematics
from .render import REACH, adapt_legs, contact_runs, move_pelvis_by
from .options import ContactOptions
from .rig import Rig, leg_length
from .weights import smoothstep


def twist_free(q: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The swing of rotations ``q (..., 4)``: ``q`` without its twist about ``up`` (its change of heading)."""
    along = (q[..., 1:] @ up)[..., None] * up
    twist = np.concatenate([q[..., :1], along], axis=-1)
    norm = quat.length(twist, keepdims=True)
    if (norm > 1e-12).all():  # (the usual case: np.where below would take every value from twist / norm)
        twist = twist / norm
    else:
        twist = np.where(norm > 1e-12, twist / np.maximum(norm, 1e-12), quat.identity(q.shape[:-1]))
    return quat.mul(q, quat.inv(twist))


@dataclass(frozen=True)
class _Foot:
    """One leg's joints and world poses over the gap, as rendered."""

    ankle: np.ndarray  # (n, 3)
    rotation: np.ndarray  # (n, 4) the ankle's world rotation
    toe_local: np.ndarray | None  # (n, 3) the toe in the ankle's frame (None: no toe joint)
    # (n, 3) the toe from the ankle in world axes, as rendered: ``toe_local`` turned by
    # ``rotation``, once for every frame (the holds look it up run by run)
    toe_offset: np.ndarray | None = field(init=False)

    def __post_init__(self):
        offset = None if self.toe_local is None else quat.mul_vec(self.rotation, self.toe_local)
        object.__setattr__(self, "toe_offset", offset)


@dataclass(frozen=True)
class PlannedStep:
    """A step the plan has a foot take in a gap (core.plan: a "step" or "glide" segment, or a
    kept foot released onto its own swing, eq. 5): the foot stands on output frame ``first``,
    is off its hold after it and lands on ``last``.

    to     where it lands, its world ankle (None: where the rendered frames have it);
    lift   how high it rises above the line between where it leaves and where it lands
           (None: as :func:`step_lift` has a step of its way rise);
    glide  it does not lift: it slides along the floor over all its frames.
    """

    first: int
    last: int
    to: np.ndarray | None = None
    lift: float | None = None
    glide: bool = False


@dataclass(frozen=True)
class SourceFeet:
    """What the sources' own feet do at every frame of a blend of motions played at the
    same time (core.mkm), weighted as the blend weighs them: the contact stage given this
    corrects only what the blend broke. A run of a foot down that the blend keeps where
    the sources' own steps take it is left as blended (a blend that equals one of its
    sources is left as it is); one the blend slides away from there (two feet planted in
    different places, blended) is held as synthesis holds it. A swing is lifted only
    where it passes lower than the sources' own swings go.

    steps      (F, 2, 3) each foot's step across the floor from the frame before (zero at
               frame 0), of the part of it on the floor (its ankle, or its toe through
               heel-off, as :func:`_planted` pivots), in the blend's world: each source's
               step turned from its body's heading to the blend's, weighted;
    turns      (F, 2) how far each foot's heading (its twist about up) turns from the
               frame before, radians, weighted;
    clearance  (F, 2) how high the foot's lowest point (ankle or toe) stands above the
               sources' floors, weighted;
    reach      (F, 2) the highest of those clearances among the sources that weigh
               something: how high their own swings go;
    floors     (2, 2) the floors of (ankle, toe) for (left, right) these are measured from:
               the sources' own, weighted (the blend stands as high as they do, weighted).
    """

    steps: np.ndarray
    turns: np.ndarray
    clearance: np.ndarray
    reach: np.ndarray
    floors: np.ndarray

    def foot(self, k: int, frames: slice) -> "SourceFeet":
        """Foot ``k``'s figures over ``frames``."""
        return SourceFeet(*(a[frames, k] for a in (self.steps, self.turns, self.clearance, self.reach)), self.floors[k])


def source_feet(ankles: np.ndarray, rotations: np.ndarray, toes: np.ndarray | None, weights: np.ndarray,
                floors: np.ndarray, headings: np.ndarray, heading: np.ndarray, *, up: np.ndarray, leg: float,
                options: ContactOptions = ContactOptions()) -> SourceFeet:
    """:class:`SourceFeet` of K sources at F frames: their ankles ``(K, F, 2, 3)`` and ankle world
    rotations ``(K, F, 2, 4)``, their toes ``(K, F, 2, 3)`` (None: no toe joints), (left, right),
    continuous over the frames (a repeated clip carried on by its travel); ``weights (K, F)``
    (non-negative, summing to 1 at each frame), each source's floors ``(K, 2, 2)``
    (core.quality.floors_by_foot), its body's heading ``headings (K, F)`` and the blend's
    ``heading (F,)`` (radians about ``up``, unwrapped). Steps and turns are weighted by the
    mean of the weights at both ends of the step."""
    ankles, rotations, weights = (np.asarray(a, dtype=np.float64) for a in (ankles, rotations, weights))
    floors = np.asarray(floors, dtype=np.float64)
    heights = ankles @ up - floors[:, None, :, 0]
    # (each floor weighted by the source's mean weight: with weights 1 and 0 throughout, the first's)
    floor = np.einsum("k,kfs->fs", weights.mean(axis=1), floors)
    moves = np.diff(ankles, axis=1)
    if toes is not None:
        toe_heights = np.asarray(toes) @ up - floors[:, None, :, 1]
        s = smoothstep((heights - toe_heights) / (options.heel_rise * leg))[..., None]
        s = 0.5 * (s[:, 1:] + s[:, :-1])
        # how the part of the foot on the floor moves (not how the pivot passes from heel to toe)
        moves = (1.0 - s) * moves + s * np.diff(toes, axis=1)
        heights = np.minimum(heights, toe_heights)
    turns = _wrapped(np.diff(_foot_heading(rotations, rotations[:, :1], up), axis=1))
    step_weights = 0.5 * (weights[:, 1:] + weights[:, :-1])
    # each source's step from its body's heading to the blend's, half way through the step
    between = lambda a: 0.5 * (a[..., 1:] + a[..., :-1])  # noqa: E731
    to_blend = quat.from_axis_angle(up, (between(heading)[None] - between(np.asarray(headings)))[..., None])
    steps = np.einsum("kf,kfsc->fsc", step_weights, quat.mul_vec(to_blend, horizontal(moves, up)))
    return SourceFeet(np.concatenate([np.zeros((1, 2, 3)), steps]),
                      np.concatenate([np.zeros((1, 2)), np.einsum("kf,kfs->fs", step_weights, turns)]),
                      np.einsum("kf,kfs->fs", weights, heights),
                      np.where(weights[..., None] > 0, heights, -np.inf).max(axis=0), floor)


def _heading(rotations: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The twist ``(...)`` about ``up`` of world rotations ``(..., 4)``, radians."""
    return 2.0 * np.arctan2(rotations[..., 1:] @ up, rotations[..., 0])


def _foot_heading(rotations: np.ndarray, reference: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Where feet point ``(...)``, radians about ``up``, from their world rotations ``(..., 4)``:
    the twist about up of each rotation taken from ``reference`` (one of the same foot's own
    rotations, broadcast against them). The twist of a world rotation alone depends on how the
    rig's ankle is oriented at rest, which differs between rigs of one capture; taken from a pose
    of the same foot, that orientation cancels. Only differences of these headings are used.
    (Not the ankle-to-toe direction: pitched steeply at toe-off, its horizontal part is short and
    a little roll swings it about.)"""
    return _heading(quat.mul(rotations, quat.inv(reference)), up)


def _wrapped(angles: np.ndarray) -> np.ndarray:
    """Angles brought into [-pi, pi)."""
    return (angles + np.pi) % (2.0 * np.pi) - np.pi


def hold_feet(motion: Motion, first: int, contacts: np.ndarray, gaps: list[tuple[int, int]], rig: Rig, *,
              up: np.ndarray, leg: float, floors: np.ndarray, steps: list[dict] | None = None,
              sources: SourceFeet | None = None, options: ContactOptions = ContactOptions(),
              pelvis_down: bool = False) -> Motion:
    """``motion`` with its feet held over each of output frames ``gaps`` (inclusive, cores at both ends).

    motion, first  the output and the timeline frame of its frame 0;
    contacts       (F, 2) bool, left and right foot down, as the blended sources say;
    floors         (2, 2) floor heights of (ankle, toe) for (left, right) (see core.quality),
                   or one such per gap;
    steps          per gap, {foot (0 left, 1 right): [PlannedStep, ...]}: the steps and
                   glides the plan has that foot take (inside the gap), drawn as planned;
    sources        what the sources' own feet do at every frame of ``motion``, for a blend of
                   motions played at the same time (core.mkm, :class:`SourceFeet`): a run
                   down that the blend keeps within ``step_apart`` of where the sources'
                   own steps take it is left as blended, held from twice that, the hold
                   eased in between; a swing is lifted, and kept above the floor, no
                   higher than theirs go (so a blend equal to one source is left as it
                   is). None (synthesis): every foot down held still, on the floor.
    pelvis_down    whether the body may come down to held feet out of reach (:func:`pelvis_drop`,
                   synthesis's gaps), no leg stretched past render.REACH or its own extension;
                   False leaves the pelvis and every leg not held as they are, and eases legs
                   into their full reach, as before the reach rule (assembly keeps the query's
                   pelvis and the legs it does not replace).

    The legs of every gap are solved in one evaluation of the whole motion.
    """
    F = motion.n_frames
    legs = [rig.leg("L"), rig.leg("R")]
    joints = [leg.ankle for leg in legs] + [leg.toe for leg in legs if leg.toe is not None]
    has_toes = len(joints) == 4
    feet = len(joints)
    targets = np.zeros((F, 2, 3))
    rotations = np.zeros((F, 2, 4))
    active = np.zeros((F, 2), dtype=bool)
    steps = steps or [{} for _ in gaps]
    floors = [np.asarray(floors)] * len(gaps) if np.ndim(floors) == 2 else list(floors)
    # (gaps too short to change a frame in, or outside the motion, are left alone)
    kept = [i for i, (g0, g1) in enumerate(gaps) if g1 - g0 >= 2 and g0 - first >= 0 and g1 - first < F]
    if not kept:
        return motion
    spans = [(gaps[i][0] - first, gaps[i][1] - first) for i in kept]
    steps, floors = [steps[i] for i in kept], [floors[i] for i in kept]
    # the feet over every gap, in one pass of forward kinematics; over one gap, the legs'
    # chains too, for the IK below (whose frames all lie inside that gap)
    # (one gap's frames as a slice: a view, where gathering them would copy the motion)
    frames = slice(spans[0][0], spans[0][1] + 1) if len(spans) == 1 else np.concatenate(
        [np.arange(g0, g1 + 1) for g0, g1 in spans])
    chains = chain_joints(motion.skeleton.parents, [(leg.hip, leg.knee, leg.ankle) for leg in legs])
    hips = [leg.hip for leg in legs]
    gpos_all, grot_all = forward_kinematics(motion.rotations[frames], motion.positions[frames], motion.skeleton.parents,
                                            joints + hips + chains if len(spans) == 1 else joints + hips)
    evaluated = (spans[0][0], chains, gpos_all[:, feet + 2 :], grot_all[:, feet + 2 :]) if len(spans) == 1 else None
    hips_all = gpos_all[:, feet : feet + 2]
    gpos_all, grot_all = gpos_all[:, :feet], grot_all[:, :feet]
    blended = np.zeros((F, 2, 3)), np.zeros((F, 2, 4)), np.zeros((F, 2, 3))  # ankles, their rotations, hips
    at = 0
    for (g0, g1), planned_steps, gap_floors in zip(spans, steps, floors):
        n = g1 - g0 + 1
        gpos, grot = gpos_all[at : at + n], grot_all[at : at + n]
        blended[0][g0 : g1 + 1], blended[1][g0 : g1 + 1] = gpos[:, :2], grot[:, :2]
        blended[2][g0 : g1 + 1] = hips_all[at : at + n]
        at += n
        down = np.array(contacts[g0 : g1 + 1], dtype=bool)
        # a planned step stands on its first frame and lands on its last, off its hold between:
        # its slot (gap frames), how high it rises and whether it glides
        slots = {k: [replace(p, first=max(p.first + 1 - first - g0, 1), last=min(p.last - 1 - first - g0, n - 2))
                     for p in planned_steps.get(k, [])] for k in range(2)}
        slots = {k: [x for x in slots[k] if x.last >= x.first] for k in range(2)}
        # where the plan lands each step (its way's end), by the frame it lands on
        landings = {k: {p.last - first - g0: p.to for p in planned_steps.get(k, []) if p.to is not None}
                    for k in range(2)}
        # a foot's ankle and toe (the ankle again without a toe): its place and its heading
        points = gpos[:, [0, 2, 1, 3]].reshape(n, 2, 2, 3) if has_toes else np.repeat(gpos[:, :2, None], 2, axis=2)
        # a foot the plan says nothing about may step on its own
        unplanned = [k for k in range(2) if not planned_steps.get(k)]
        for k, slot in _step_slots(down, points, slots, unplanned, motion.fps, leg, up, options).items():
            slots[k] = [PlannedStep(*slot)]
        for k in range(2):
            toe_local = quat.inv_mul_vec(grot[:, k], gpos[:, 2 + k] - gpos[:, k]) if has_toes else None
            foot = _Foot(gpos[:, k], grot[:, k], toe_local)
            window = slice(g0, g1 + 1)
            targets[window, k], rotations[window, k], active[window, k] = _held_foot(
                foot, down[:, k], slots[k], up, leg, gap_floors[k], options, landings[k], fps=motion.fps,
                own=None if sources is None else sources.foot(k, window))
    if not active.any():
        return motion
    lengths = np.array([leg_length(motion.skeleton, rig, side) for side in "LR"])
    drop = np.zeros(F)
    for g0, g1 in spans if pelvis_down else ():
        window = slice(g0, g1 + 1)
        # (only for feet held down: a foot in the air is the step's to bring, not the body's)
        held_down = active[window] & np.asarray(contacts[window], dtype=bool)
        drop[window] = pelvis_drop(blended[2][window], blended[0][window], targets[window], held_down, lengths,
                                   up, motion.fps, options.pelvis_s)
    drop[drop < 1e-9 * lengths.mean()] = 0.0  # (rounding: the same rig in other units drops alike)
    if drop.any():
        # the body comes down to the feet: the pelvis drops, every foot the stage leaves alone
        # keeps its own path in the world
        shift = -drop[:, None] * up
        motion = move_pelvis_by(motion, rig, shift)
        if evaluated is not None:
            f0 = evaluated[0]
            evaluated = (f0, evaluated[1], evaluated[2] + shift[f0 : f0 + len(evaluated[2]), None], evaluated[3])
        free = (drop > 0.0)[:, None] & ~active
        targets = np.where(free[..., None], blended[0], targets)
        rotations = np.where(free[..., None], blended[1], rotations)
        active = active | free
    return adapt_legs(motion, rig, targets, active, ankle_rotations=rotations, evaluated=evaluated,
                      fade_s=options.hold_fade_s, reach_rule=pelvis_down)


def pelvis_drop(hips: np.ndarray, ankles: np.ndarray, targets: np.ndarray, active: np.ndarray, lengths: np.ndarray,
                up: np.ndarray, fps: float, width_s: float) -> np.ndarray:
    """How far the pelvis comes down ``(n,)`` over a gap's frames (cores at both ends) so
    that every held ankle is within its leg's reach (render.REACH of its length, or its own
    extension as blended where longer): the least drop each frame needs, its upper
    envelope smoothed over ``width_s`` either side (so never below the need), eased to
    nothing at the cores."""
    n = len(hips)
    own = quat.length(ankles - hips) / lengths
    r = np.maximum(own, REACH) * lengths
    v = hips - targets
    vu = v @ up
    across2 = np.maximum(np.add.reduce(v * v, axis=-1) - vu * vu, 0.0)
    need = np.where(across2 < r * r, vu - np.sqrt(np.maximum(r * r - across2, 0.0)), 0.0)
    need = np.where(active, np.clip(need, 0.0, SOFT_ZONE * lengths), 0.0).max(axis=1)
    if not need.any():
        return need
    w = max(int(round(width_s * fps)), 1)
    padded = np.pad(need, w)
    envelope = np.lib.stride_tricks.sliding_window_view(padded, 2 * w + 1).max(axis=1)
    kernel = np.hanning(2 * w + 3)[1:-1]
    smooth = np.convolve(np.pad(envelope, w, mode="edge"), kernel / kernel.sum(), mode="valid")
    t = np.arange(n)
    ends = smoothstep(np.minimum(t, n - 1 - t) / (w * 1.0))
    return smooth * ends


def _step_slots(down: np.ndarray, points: np.ndarray, planned: dict, feet: list[int], fps: float, leg: float,
                up: np.ndarray, options: ContactOptions) -> dict[int, tuple[int, int]]:
    """Frames ``{foot: (first, last)}`` in which a foot of ``feet`` down through the whole
    gap, with its two ends apart (its ankle or its toe, ``points (n, 2, 2, 3)``: a turn on
    the spot counts), steps from one to the other, while the other foot stands: in the
    middle of the longest run of frames in which the other foot is down and not in a
    step of ``planned`` ``{foot: [PlannedStep]}`` (gap frames). Two such feet step one after the other."""
    n = len(down)
    moved = quat.length(horizontal(points[-1] - points[0], up)).max(axis=-1)
    apart = [k for k in feet if down[:, k].all() and moved[k] > options.step_apart * leg]
    standing = down.copy()
    for k, steps in planned.items():
        for step in steps:
            standing[step.first : step.last + 1, k] = False
    slots = {}
    for i, k in enumerate(apart):
        # its share of the inner frames (two such feet: each half), in which the other foot stands
        lo, hi = (1, n - 1) if len(apart) == 1 else ((1, n // 2) if i == 0 else (n // 2, n - 1))
        free = np.zeros(n, dtype=bool)
        free[lo:hi] = standing[lo:hi, 1 - k]
        runs = contact_runs(free)
        if not runs:
            continue
        a, b = max(runs, key=lambda run: run[1] - run[0])
        length = min(options.step_s * fps, b - a + 1)
        if length < options.min_step_s * fps - 1e-9:
            continue  # too short to step: it glides
        mid = 0.5 * (a + b + 1)
        slots[k] = (int(np.floor(mid - 0.5 * length)), int(np.ceil(mid + 0.5 * length)) - 1)
    return slots


@dataclass(frozen=True)
class _FootOverGap:
    """One foot over one gap, and what every rule of :func:`_held_foot` measures it by.

    foot     its rendered poses over the gap's ``n`` frames (:class:`_Foot`);
    floors   (2,) the floors of its (ankle, toe);
    up, leg  the up axis and the leg length (the rules' unit);
    ends     how high each core has the foot's lowest point above ``floors`` (start, end): a
             foot held from (or into) a core settles from there onto the floor;
    settle   over how many frames it does (``settle_s``, at least one frame).
    """

    foot: _Foot
    floors: np.ndarray
    up: np.ndarray
    leg: float
    options: ContactOptions
    ends: np.ndarray
    settle: float

    @property
    def n(self) -> int:
        return len(self.foot.ankle)

    def settled(self, frames: np.ndarray) -> np.ndarray:
        """How high the foot stands above the floor at gap ``frames`` when down: settling from
        the cores' heights onto the floor within ``settle`` frames of either core. (A clip whose
        floor lies 2 mm above the other's would otherwise stand its feet 2 mm up through the gap.)"""
        return np.maximum(self.ends[0] * (1.0 - smoothstep(frames / self.settle)),
                          self.ends[1] * (1.0 - smoothstep((self.n - 1 - frames) / self.settle)))

    def clearance(self, place, rotation, frames, turned_toe=None, floors=None) -> np.ndarray:
        """:func:`_clearance` of this foot, above its floors (or ``floors``)."""
        return _clearance(place, rotation, self.foot, frames, self.up, self.floors if floors is None else floors,
                          turned_toe)

    def correction(self, frames, place, rotation) -> tuple[np.ndarray, np.ndarray]:
        """The correction that brings the rendered foot at ``frames`` to ``place`` and ``rotation``:
        a translation of the ankle ``(m, 3)`` and a rotation of the foot ``(m, 4)``."""
        return place - self.foot.ankle[frames], quat.mul(rotation, quat.inv(self.foot.rotation[frames]))


def _held_foot(foot: _Foot, down: np.ndarray, slots: list[PlannedStep], up: np.ndarray, leg: float,
               floors: np.ndarray, options: ContactOptions, landings: dict | None = None, *, fps: float,
               own: SourceFeet | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World ankle targets ``(n, 3)``, ankle rotations ``(n, 4)`` and where they apply ``(n,)``
    for one foot over the gap (frame 0 and n - 1 are the cores' and stay as they are).

    slots  the steps the foot takes (:class:`PlannedStep`, in gap frames ``first .. last``
           it is off its hold, between the frames it stands on and lands on; ``to``
           unused): off its hold there, whatever the sources say, along :func:`_step_path`.
    own    this foot's :class:`SourceFeet` over the gap ``(n,)`` (a blend of motions played
           at the same time): each rule gives way to what the sources' own foot does.

    The rules run in order, each on the frames the ones before left unknown or on its own:
    runs down (:func:`_glide_between_cores`, :func:`_held_runs`), planned steps
    (:func:`_step_along_slot`), the air between (:func:`_eased_through_air`), swings lifted
    clear (:func:`_swing_lift`) and the floor (:func:`_kept_above_floor`).
    """
    n = len(down)
    down = down.copy()
    if own is None:
        # no lower than the floor, nor than the cores at either end already have the foot
        # (with the sources' own feet at hand, the rules below give way to how low theirs go)
        floors = np.minimum(floors, _heights(foot, [0, n - 1], up).min(axis=0))
    for slot in slots:
        down[slot.first : slot.last + 1] = False
    ends = _clearance(foot.ankle[[0, -1]], foot.rotation[[0, -1]], foot, np.array([0, n - 1]), up, floors)
    gap = _FootOverGap(foot, floors, up, leg, options, ends, max(options.settle_s * fps, 1.0))
    # the correction at each frame (NaN: not known yet), the cores' own frames none
    offset = np.full((n, 3), np.nan)
    turn = np.full((n, 4), np.nan)
    offset[[0, -1]], turn[[0, -1]] = 0.0, quat.identity()
    runs = contact_runs(down)
    holds = [1.0] * len(runs) if own is None else _run_holds(gap, runs, own)
    held_runs = []
    for (start, end), hold in zip(runs, holds):
        if start == 0 and end == n - 1:
            frames = np.arange(start, end + 1)
            offset[frames], turn[frames] = gap.correction(frames, *_glide_between_cores(gap, frames))
        elif hold == 0.0:
            offset[start : end + 1], turn[start : end + 1] = 0.0, quat.identity()
        else:
            held_runs.append((start, end, 0 if start == 0 else (n - 1 if end == n - 1 else start), hold))
    if held_runs:
        frames, offset_held, turn_held = _held_runs(gap, held_runs, landings or {})
        offset[frames], turn[frames] = offset_held, turn_held
    for slot in slots:
        # (one slot at a time: a step may leave from where the one before it lands)
        ends = np.array([slot.first - 1, slot.last + 1])
        unknown = ends[np.isnan(offset[ends, 0])]
        offset[unknown], turn[unknown] = 0.0, quat.identity()
        frames = np.arange(slot.first, slot.last + 1)
        offset[frames], turn[frames] = gap.correction(
            frames, *_step_along_slot(gap, slot, bool(down[slot.last + 1]), offset[ends], turn[ends]))
    air = np.flatnonzero(np.isnan(offset[:, 0]))
    if len(air):
        offset[air], turn[air] = _eased_through_air(offset, turn, air)
    rotation = quat.mul(turn, foot.rotation)
    frames, rise = _swing_lift(gap, down, air, offset, rotation, own)
    if len(frames):
        offset[frames] += rise[:, None] * up
    target = _kept_above_floor(gap, offset, rotation, own)
    offset = target - foot.ankle
    active = (quat.length(offset) > 1e-9 * leg) | (quat.angle(turn, quat.identity()) > 1e-9)
    active[[0, -1]] = False
    return target, rotation, active


def _run_holds(gap: _FootOverGap, runs: list[tuple[int, int]], own: SourceFeet) -> list[float]:
    """How much of the hold applies to each run down ``[0, 1]``, from how far the blend takes the
    foot from where the sources' own feet would over the run, from the frame it is held at (the
    turn counted at the toe: a foot is about 0.3 legs long), all runs at once.

    A blend that keeps the foot where the sources' own feet take it (within step_apart: places
    closer count as one) broke nothing: 0, left as blended; one that takes it twice that far
    away: 1, held; in between the hold is eased in, so the output changes continuously with the
    weights."""
    if not runs:
        return []
    n, leg = gap.n, gap.leg
    shift, twist = _drift_sums(gap.foot, own, gap.up, leg, gap.options)
    frames = np.concatenate([np.arange(a, b + 1) for a, b in runs])
    at = np.repeat([0 if a == 0 else (n - 1 if b == n - 1 else a) for a, b in runs], [b - a + 1 for a, b in runs])
    apart = np.maximum(quat.length(shift[frames] - shift[at]), 0.3 * leg * np.abs(twist[frames] - twist[at]))
    drifts = np.maximum.reduceat(apart, np.cumsum([0] + [b - a + 1 for a, b in runs[:-1]]))
    return smoothstep(drifts / (gap.options.step_apart * leg) - 1.0).tolist()


def _glide_between_cores(gap: _FootOverGap, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ankle places and rotations of a foot down through a whole gap too short to step in: it
    glides from one core's place to the other's, on the floor as it settles."""
    foot = gap.foot
    u = smoothstep(frames / (gap.n - 1))[:, None]
    place = (1.0 - u) * foot.ankle[0] + u * foot.ankle[-1]
    rotation = quat.slerp(foot.rotation[0], foot.rotation[-1], u[:, 0])
    return place + (gap.settled(frames) - gap.clearance(place, rotation, frames))[:, None] * gap.up, rotation


def _held_runs(gap: _FootOverGap, held_runs: list[tuple[int, int, int, float]], landings: dict
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frames of runs down ``(start, end, h, hold)`` and their corrections (offsets ``(m, 3)``,
    turns ``(m, 4)``): each run held where it is at frame ``h`` (where it touches down, or where
    the core at an end has it; :func:`_planted`), a planned step's landing ``landings {frame: to}``
    where the plan lands it, on the floor as it settles, ``hold`` of the way.

    Evaluated together: each frame is worked out on its own, from the frame its run is held at."""
    lengths = [end - start + 1 for start, end, _, _ in held_runs]
    frames = np.concatenate([np.arange(start, end + 1) for start, end, _, _ in held_runs])
    at = np.repeat([h for _, _, h, _ in held_runs], lengths)
    place, rotation, toe = _planted(gap.foot, frames, at, gap.up, gap.leg, gap.floors, gap.options)
    first_of_run = np.cumsum([0] + lengths[:-1])
    for (start, end, h, _), i in zip(held_runs, first_of_run):
        if h == start and start in landings:
            # a planned step lands where the plan says (its way's end), on the floor it has
            place[i : i + end - start + 1] += horizontal(landings[start] - place[i], gap.up)
    # it stands on the floor, settling from (or into) the core it goes on from; a
    # touch-down inside the gap too (the blend of a foot down and a foot in the
    # air would otherwise hold it hovering)
    place = place + (gap.settled(frames) - gap.clearance(place, rotation, frames, toe))[:, None] * gap.up
    offset, turn = gap.correction(frames, place, rotation)
    hold = np.repeat([hold for *_, hold in held_runs], lengths)
    eased = hold < 1.0
    if eased.any():
        offset[eased] *= hold[eased, None]
        turn[eased] = quat.slerp(quat.identity(), turn[eased], hold[eased])
    return frames, offset, turn


def _step_along_slot(gap: _FootOverGap, slot: PlannedStep, lands: bool, offsets: np.ndarray, turns: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Ankle places and rotations over a step's frames ``slot.first .. slot.last``, from the
    corrections ``offsets (2, 3)`` and ``turns (2, 4)`` of the frames it stands on and lands on.

    A step goes from where the foot stands before it (where it is not down just before, from
    where the blend has it) to where it lands, clear of the floor. A step that does not land
    (onto a swing of the clip's own, a run starting in flight) leaves the same way and merges
    into that swing over its second half, so that it joins the swing at the swing's own speed."""
    foot, up, options = gap.foot, gap.up, gap.options
    a, b = slot.first, slot.last
    ends = np.array([a - 1, b + 1])
    places, rotations = foot.ankle[ends] + offsets, quat.mul(turns, foot.rotation[ends])
    frames = np.arange(a, b + 1)
    x = (frames - a + 1) / (b - a + 2)
    # (a step the plan has not sized: as high as a step of its way, its toe's where it turns)
    lift = step_lift(_step_length(places, rotations, up, gap.leg), gap.leg, options) if slot.lift is None else slot.lift
    place, rotation = _step_path(places, rotations, x, up, lift, 0.0 if slot.glide else options.step_delay)
    if slot.glide:
        # it slides on the floor: its lowest point (ankle or toe) as high above the floor
        # as where it leaves and where it lands, in between as it goes (a foot turning from
        # its toe onto its heel on the way would otherwise lift clear in the middle)
        clear = gap.clearance(places, rotations, ends)
        want = (1.0 - smoothstep(x)) * clear[0] + smoothstep(x) * clear[1]
        place = place + (want - gap.clearance(place, rotation, frames))[:, None] * up
    if not lands:
        v = smoothstep(2.0 * x - 1.0)
        place = (1.0 - v)[:, None] * place + v[:, None] * foot.ankle[frames]
        rotation = quat.slerp(rotation, foot.rotation[frames], v)
    return place, rotation


def _eased_through_air(offset: np.ndarray, turn: np.ndarray, air: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The corrections at frames ``air`` (those not known in ``offset (n, 3)``, ``turn (n, 4)``):
    in the air the correction eases from where the foot left the floor to where it lands."""
    known = np.flatnonzero(~np.isnan(offset[:, 0]))
    after = known[np.searchsorted(known, air)]
    before = known[np.searchsorted(known, air) - 1]
    u = smoothstep((air - before) / (after - before))
    return (1.0 - u)[:, None] * offset[before] + u[:, None] * offset[after], quat.slerp(turn[before], turn[after], u)


def _swing_lift(gap: _FootOverGap, down: np.ndarray, air: np.ndarray, offset: np.ndarray, rotation: np.ndarray,
                own: SourceFeet | None) -> tuple[np.ndarray, np.ndarray]:
    """Gap frames and how far ``(m,)`` along up a foot in the air between two places on the floor
    rises, so that it clears the floor as a step would: the blend of a swing and a foot at rest
    carries the swing across low enough to skim it. ``offset (n, 3)`` and ``rotation (n, 4)``:
    the foot as corrected so far."""
    foot, up, leg, options = gap.foot, gap.up, gap.leg, gap.options
    n = gap.n
    in_air = np.zeros(n, dtype=bool)
    in_air[air] = True
    # (each such stretch reads only the frames down at its ends: all of them at once)
    swings = [(start, end) for start, end in contact_runs(in_air)
              if start > 0 and end < n - 1 and down[start - 1] and down[end + 1]]
    if not swings:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    first, last = (np.array(e) for e in zip(*swings))
    lengths = last - first + 1
    ways = horizontal(foot.ankle[last + 1] + offset[last + 1] - foot.ankle[first - 1] - offset[first - 1], up)
    # (a norm per stretch, as step_lift takes one)
    lift = np.clip(options.step_rise * np.array([np.linalg.norm(w) for w in ways]), *(h * leg for h in options.step_height))
    frames = np.concatenate([np.arange(a, b + 1) for a, b in swings])
    clearance = gap.clearance(foot.ankle[frames] + offset[frames], rotation[frames], frames,
                              floors=None if own is None else own.floors)
    # a swing is raised to no more than it clears already, or a step's least lift: the
    # blend of a swing and a foot at rest skims the floor, and is lifted clear of it; a
    # swing of a clip's own clears it by a few centimetres, as captured, and is left so
    # (a walk's swing of 1.3 m raised to a quarter of its length jerked the knee up and
    # down at three times its own acceleration)
    peaks = np.maximum.reduceat(clearance, np.cumsum(np.concatenate([[0], lengths[:-1]])))
    lift = np.minimum(lift, np.maximum(peaks, options.step_height[0] * leg))
    x = (frames - np.repeat(first, lengths) + 1) / np.repeat(lengths + 1, lengths)
    need = np.repeat(lift, lengths) * smoothstep(1.0 - np.abs(2.0 * x - 1.0))
    if own is not None:
        # no higher than the sources' own swings go: only a swing the blend lowered is lifted
        need = np.minimum(need, own.reach[frames])
    return frames, np.maximum(need - clearance, 0.0)


def _kept_above_floor(gap: _FootOverGap, offset: np.ndarray, rotation: np.ndarray, own: SourceFeet | None
                      ) -> np.ndarray:
    """World ankle targets ``(n, 3)``: the corrected foot with neither the ankle nor the toe below
    its floor, in the air too (nor below where the sources' own feet go, if they go lower)."""
    foot, every = gap.foot, np.arange(gap.n)
    if own is None:
        return _above_floor(foot.ankle + offset, rotation, foot, every, gap.up, gap.floors)
    # (no lower than the floor, or than the sources' own feet go below theirs)
    return _above_floor(foot.ankle + offset, rotation, foot, every, gap.up,
                        np.maximum(gap.floors, own.floors), np.minimum(own.clearance, 0.0))


def step_lift(length: float, leg: float, options: ContactOptions) -> float:
    """How high a step of ``length`` rises: ``step_rise`` of it, within ``step_height`` leg lengths."""
    return float(np.clip(options.step_rise * length, *(h * leg for h in options.step_height)))


def _step_length(places: np.ndarray, rotations: np.ndarray, up: np.ndarray, leg: float) -> float:
    """How far a step from ``places[0]`` (rotation ``rotations[0]``) to ``places[1]`` goes: its
    ankle, or its toe where the foot turns (a foot is about 0.3 leg long)."""
    return max(float(np.linalg.norm(horizontal(places[1] - places[0], up))),
               float(quat.angle(rotations[0], rotations[1])) * 0.3 * leg)


def _step_path(places: np.ndarray, rotations: np.ndarray, x: np.ndarray, up: np.ndarray, lift: float,
               delay: float) -> tuple[np.ndarray, np.ndarray]:
    """Ankle places and world rotations of a step from ``places[0]`` (rotation ``rotations[0]``)
    to ``places[1]`` at times ``x`` in (0, 1), rising ``lift`` half way.

    The foot clears the floor before it travels and comes down before it lands:
    it moves across only after the first ``delay`` of the step and before its last,
    while it rises along a bump highest half way (a bump of height h over T seconds
    peaks at 24 h / T^2 up and down). Speeds are zero at both ends, so the step leaves
    and lands without a jerk. A glide (no lift, no delay) slides along the floor the
    whole time.
    """
    along = smoothstep((x - delay) / (1.0 - 2.0 * delay))
    u = smoothstep(x)
    start, end = places
    across = horizontal(end - start, up)
    bump = lift * smoothstep(1.0 - np.abs(2.0 * x - 1.0))
    level = (1.0 - u) * (start @ up) + u * (end @ up) + bump
    place = horizontal(start, up) + along[:, None] * across + level[:, None] * up
    # it turns while it travels, clear of the floor
    return place, quat.slerp(rotations[0], rotations[1], along)


def _planted(foot: _Foot, frames: np.ndarray, h: int | np.ndarray, up: np.ndarray, leg: float, floors: np.ndarray,
             options: ContactOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Ankle places and world rotations of a foot held down over ``frames`` where it is at frame ``h``
    (one frame, or one per frame of ``frames``: several runs at once, each frame worked out on
    its own), and the toe's offsets from the ankle turned to those rotations (None without a
    toe joint: :func:`_clearance` reads them next).

    The heading is held (the toe's direction across the floor); pitch and roll
    follow the blended foot's change since ``h``, about the toe where the blended
    heel stands higher above its floor than the toe above its own (heel-off, at
    ``h`` already or later) and about the ankle otherwise, so a planted foot
    rolls onto its toes as captured and its toe does not slide. While heel and
    toe are both down (neither stands ``heel_rise`` higher above its floor than
    the other), the foot is flat on the floor and does not pitch or roll either:
    it keeps its run's flat orientation (the blended foot's, averaged over the
    run weighted by how flat it is), and it takes the blended foot's pitch again
    along the smoothstep by which heel or toe rises. (A blend can pitch a flat
    foot: a query's pelvis tilt over another clip's leg, in core.assemble, turned
    it about the held ankle and slid its toe 1-2 cm back and forth on the floor.)
    """
    swing = twist_free(quat.mul(foot.rotation[frames], quat.inv(foot.rotation[h])), up)
    if foot.toe_local is not None:
        heights = _heights(foot, frames, up) - floors
        rise = (heights[:, 0] - heights[:, 1]) / (options.heel_rise * leg)  # heel above toe, in heel_rise
        flat = 1.0 - smoothstep(np.abs(rise))
        # each run's flat orientation (swings near one another, from its own h: their sum,
        # normalised); the identity for a run never flat, where it is not used
        run = np.unique(np.broadcast_to(h, np.shape(frames)), return_inverse=True)[1]
        flat_swing = _run_sums(quat.standardize(swing), flat, run)
        flat_swing[quat.length(flat_swing) < 1e-12] = quat.identity()
        swing = quat.slerp(quat.normalize(flat_swing), swing, 1.0 - flat)
    rotation = quat.mul(swing, foot.rotation[h])
    place = np.broadcast_to(foot.ankle[h], (len(frames), 3))
    if foot.toe_local is None:
        return place.copy(), rotation, None
    # the heading is the toe's: turn each frame about up so the toe points where it did at h
    # (a swing about a horizontal axis still turns a pitched foot's toe sideways)
    held = horizontal(foot.toe_offset[h], up)
    now = horizontal(quat.mul_vec(rotation, foot.toe_local[frames]), up)
    angle = np.arctan2(quat.cross(now, held) @ up, quat.sum_last(now * held))
    rotation = quat.mul(quat.from_axis_angle(up, angle), rotation)
    toe = foot.ankle[h] + foot.toe_offset[h]
    turned = quat.mul_vec(rotation, foot.toe_local[frames])
    about_toe = toe - turned
    # the part of the foot on the floor stays put: the toe where the blended heel is higher
    # above its floor than the toe above its own (heel-off), the ankle otherwise; the toe
    # only as far as the foot has left its flat orientation (squared), since that
    # orientation does not put the toe where it was at h and the ankle would drift with it
    s = (smoothstep(rise) ** 2)[:, None]
    return (1.0 - s) * place + s * about_toe, rotation, turned


def _run_sums(values: np.ndarray, weights: np.ndarray, run: np.ndarray) -> np.ndarray:
    """The sums of ``values (m, d)`` weighted by ``weights (m,)`` over each run ``run (m,)``
    (numbered 0, 1, ...), for every frame of the run."""
    count = run.max() + 1
    return np.stack([np.bincount(run, weights * v, count) for v in values.T], axis=-1)[run]


def _drift_sums(foot: _Foot, own: SourceFeet, up: np.ndarray, leg: float, options: ContactOptions
                ) -> tuple[np.ndarray, np.ndarray]:
    """How far the blend takes a foot from where the sources' own feet would, summed from the
    gap's frame 0 ``(n, 3)``, and its turn beyond theirs ``(n,)``: the blend's steps across the
    floor of the part of the foot on the floor (its ankle, or its toe through heel-off, as
    :func:`_planted` pivots) less the sources' weighted steps ``own.steps``, and its turns less
    theirs ``own.turns``. Over a run of frames down, the difference of two of these sums is
    how far the blend has taken the foot from theirs between those frames."""
    step = np.diff(foot.ankle, axis=0)
    if foot.toe_local is not None:
        heights = _heights(foot, slice(None), up) - own.floors
        s = smoothstep((heights[:, 0] - heights[:, 1]) / (options.heel_rise * leg))[:, None]
        between = 0.5 * (s[1:] + s[:-1])
        # how the part of the foot on the floor moves (not how the pivot passes from heel to toe)
        step = (1.0 - between) * step + between * np.diff(foot.ankle + foot.toe_offset, axis=0)
    turn = _wrapped(np.diff(_foot_heading(foot.rotation, foot.rotation[:1], up)))
    shift = np.concatenate([np.zeros((1, 3)), np.cumsum(horizontal(step, up) - own.steps[1:], axis=0)])
    twist = np.concatenate([[0.0], np.cumsum(turn - own.turns[1:])])
    return shift, twist


def _heights(foot: _Foot, frames, up: np.ndarray) -> np.ndarray:
    """Heights ``(len(frames), 2)`` of the ankle and the toe (the ankle again without a toe)."""
    ankle = foot.ankle[frames]
    toe = ankle if foot.toe_local is None else ankle + foot.toe_offset[frames]
    return np.stack([ankle @ up, toe @ up], axis=-1)


def _clearance(place: np.ndarray, rotation: np.ndarray, foot: _Foot, frames: np.ndarray, up: np.ndarray,
               floors: np.ndarray, turned_toe: np.ndarray | None = None) -> np.ndarray:
    """How high the lowest of the ankle and the toe is above its floor ``floors (ankle, toe)``,
    the ankle at ``place`` turned to ``rotation``; ``turned_toe``: the toe's offsets from the
    ankle turned so, where the caller has them."""
    above = place @ up - floors[0]
    if foot.toe_local is not None:
        toe = place + (quat.mul_vec(rotation, foot.toe_local[frames]) if turned_toe is None else turned_toe)
        above = np.minimum(above, toe @ up - floors[1])
    return above


def _above_floor(place: np.ndarray, rotation: np.ndarray, foot: _Foot, frames: np.ndarray, up: np.ndarray,
                 floors: np.ndarray, lowest: np.ndarray | None = None) -> np.ndarray:
    """Ankle places raised where the ankle or the toe would go below its floor ``floors (ankle, toe)``
    (or below ``lowest (n,)`` above it, where given)."""
    below = -_clearance(place, rotation, foot, frames, up, floors)
    if lowest is not None:
        below = below + lowest
    return place + np.maximum(below, 0.0)[:, None] * up
