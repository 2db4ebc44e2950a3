"""Reach Target: a blend of examples whose effector hits an Empty (Juang et al. 2009, sections 3.1-3.2).

The work behind the Reach Target operator, as plain functions (they run
without an operator, headless). The active armature's examples of one action
(the actions of its Reach Examples list, or the BVH files of the Reach
Examples Folder in the add-on's preferences) are aligned once into a
``core.reach.ReachSpace``; the Empty's position is a query of it, and the
reach it gives is keyed into a new action and played by a new strip at the
playhead, on a new track above the armature's strips.

Coordinates. A motion of the armature is in armature space, Blender units
(:mod:`.convert`), and the reach's motion is "in the reference example's
coordinates", the reference being the first example by name. Both are the
armature's space, so the target is the Empty's world position taken into
the armature object's space, ``inv(M_armature) @ p_empty``, once, here; the
reach then starts where and as the first example starts, relative to the
armature, wherever the armature object stands or turns. The hit error is
measured back in the world, between the Empty and the effector's hit point
carried out by ``M_armature``: in scene units, as the user sees them
(a scaled armature scales the motion's units, not the world's).

Cache. Aligning the examples is the slow part (DTW per example, then the
sampled parameter space); a query is cheap. So the space is kept for the
session by what it was built from (each example's poses and rate, the
skeleton, effector and feature, :func:`cached_space`): a second target, or a
moved Empty, only queries it.

As in :mod:`.hops`, everything that can fail comes first, into plain values
(:class:`ReachFound`); the writes (:func:`insert_reach`) follow and do not fail.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import bpy
import numpy as np

from ..core.text import counted
from .state import session_store

REACH_TRACK = "[Smart Motion] reach"

#: ReachSpaces kept for the session, by content (:func:`space_key`), the least recently used dropped beyond 4.
_SPACES = session_store("reach spaces", 4)


@dataclass(frozen=True)
class ReachFound:
    """What Reach Target found, before anything is written.

    target       the Empty's name.
    target_world (3,) the Empty's world position.
    examples     the examples' names, by name (the first is the reference).
    library      "actions" or the folder.
    reach        core.reach.Reach, in the armature's space (the reference example's coordinates).
    hit_world    (3,) the effector's hit point in the world.
    error        |hit_world - target_world|, scene units.
    effector, feature  as asked.
    seconds      the query's time (and the alignment's, unless the space was cached).
    cached       whether the aligned examples were the session's, not aligned anew.
    """

    target: str
    target_world: np.ndarray
    examples: tuple
    library: str
    reach: object
    hit_world: np.ndarray
    error: float
    effector: str
    feature: str
    seconds: float
    cached: bool

    def weights(self, most: int = 3) -> list[tuple[str, float]]:
        """The examples with the largest weights, ``[(name, weight)]``, at most ``most``, largest first."""
        order = np.argsort(-np.asarray(self.reach.weights), kind="stable")[:most]
        return [(self.examples[k], float(self.reach.weights[k])) for k in order if self.reach.weights[k] > 0]

    def to_dict(self) -> dict:
        """As the panel reads it (``Object.smart_motion.reach_json``)."""
        return {"target": self.target, "error": self.error, "partial": bool(self.reach.partial),
                "why": self.reach.why, "limited": list(self.reach.limited), "feet_held": bool(self.reach.feet_held),
                "hit_frame": int(self.reach.hit_frame), "examples": len(self.examples), "reference": self.examples[0],
                "weights": self.weights(), "effector": self.effector, "feature": self.feature,
                "library": self.library, "seconds": self.seconds, "cached": self.cached}


# ---------------------------------------------------------------------------
# What to work on


def target_empty(obj: bpy.types.Object, view_layer: bpy.types.ViewLayer) -> bpy.types.Object:
    """The target: ``obj``'s Reach Target when set, else the one selected Empty, else the view layer's
    only Empty; ``ValueError`` saying how to give one."""
    chosen = obj.smart_motion.reach_target
    if chosen is not None:
        return chosen
    empties = [o for o in view_layer.objects if o.type == 'EMPTY']
    selected = [o for o in empties if o.select_get(view_layer=view_layer)]
    for candidates in (selected, empties):
        if len(candidates) == 1:
            return candidates[0]
    if not empties:
        raise ValueError("no target: add an Empty where the hand should reach (Add > Empty) and pick it as Reach "
                         "Target in the Smart Motion panel")
    raise ValueError(f"no target: {len(selected) or len(empties)} Empties are "
                     f"{'selected' if selected else 'in the scene'} and no Reach Target is set; pick one as Reach "
                     "Target in the Smart Motion panel, or select only it")


def target_in_armature(obj: bpy.types.Object, empty: bpy.types.Object) -> np.ndarray:
    """``(3,)`` the Empty's world position in ``obj``'s object space: the coordinates of a motion of
    ``obj`` (:mod:`.convert`), and so of the first example, where the reach is asked."""
    local = obj.matrix_world.inverted() @ empty.matrix_world.translation
    return np.array(local, dtype=np.float64)


def listed_examples(obj: bpy.types.Object, fps: float) -> list[tuple[str, object]]:
    """``[(name, motion)]`` of the actions of ``obj``'s Reach Examples list, by name, at ``fps``;
    ``ValueError`` for an empty list, an empty row, an action listed twice or one of another skeleton."""
    from .convert import action_to_motion

    rows = obj.smart_motion.reach_examples
    if len(rows) == 0:
        raise ValueError(f"no examples: add actions of armature {obj.name!r} to Reach Examples in the Smart Motion "
                         "panel (examples of one action, such as raises of the right hand), or use a folder")
    actions = [row.action for row in rows]
    if any(action is None for action in actions):
        raise ValueError(f"row {actions.index(None) + 1} of Reach Examples has no action: pick one or remove the row")
    names = [action.name for action in actions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"action {twice[0]!r} is listed twice in Reach Examples; remove one row")
    examples = []
    for action in sorted(actions, key=lambda a: a.name):
        try:
            examples.append((action.name, action_to_motion(obj, action, fps=fps)))
        except ValueError as error:
            raise ValueError(f"Reach example {action.name!r}: {error}; remove it from Reach Examples") from None
    return examples


def folder_examples(obj: bpy.types.Object, folder: str, fps: float) -> list[tuple[str, object]]:
    """``[(file name, motion)]`` of the folder's BVH files, by name, mapped onto ``obj`` at ``fps``;
    every file must be on ``obj``'s skeleton (``ValueError`` naming the one that is not)."""
    from .clips import folder_clips

    clips, _ = folder_clips(obj, folder, fps, library="reach examples", setting="Reach Examples Folder", strict=True)
    return [(clip.name, clip.motion) for clip in clips]


def space_key(motions: list, effector: str, feature: str, rig) -> tuple:
    """What a ReachSpace is built from: each example's poses and rate (core.hops.clip_digest), in
    order, the skeleton's joints, the effector, the feature and the joint roles (``rig``, the
    armature's Bone Mapping applied: another mapping is another effector and other body parts)."""
    from ..core.hops import clip_digest

    skeleton = motions[0].skeleton
    return (tuple(clip_digest(m) for m in motions), tuple(skeleton.names), skeleton.offsets.tobytes(),
            effector, feature, rig)


def cached_space(motions: list, effector: str, feature: str, rig=None, progress=None) -> tuple[object, bool]:
    """``(ReachSpace, cached)``: the examples aligned (``core.reach.ReachSpace.build``, the first the
    reference, ``rig`` their joint roles, found from the names when ``None``), kept for the session by
    :func:`space_key`; ``cached`` when it was kept already. ``progress`` (core.progress) hears the first
    build (3 to 5 s on a few examples)."""
    from ..core.reach import ReachSpace

    key = space_key(motions, effector, feature, rig)
    if key in _SPACES:
        if progress is not None:
            progress(1.0)
        return _SPACES.get(key), True
    space = ReachSpace.build(motions, effector=effector, feature=feature, reference=0, rig=rig, progress=progress)
    _SPACES.put(key, space)
    return space, False


def find_reach(obj: bpy.types.Object, empty: bpy.types.Object, *, effector: str, feature: str,
               folder: str | None = None, progress=None) -> ReachFound:
    """The reach of ``obj``'s examples (its Reach Examples list, or with ``folder`` its BVH files)
    whose ``effector`` hits ``empty`` at the ``feature``. Changes nothing; ``ValueError`` saying what to fix."""
    from .convert import scene_fps
    from .convert import find_armature_rig

    fps = scene_fps(bpy.context.scene)
    examples = listed_examples(obj, fps) if folder is None else folder_examples(obj, folder, fps)
    rig = find_armature_rig(obj, examples[0][1])  # (the Bone Mapping; every example is on the armature's bones)
    began = time.perf_counter()
    space, cached = cached_space([motion for _, motion in examples], effector, feature, rig, progress)
    # (the examples' distances are the armature's; the scene shows them scaled by the object into the world)
    scale = float(np.cbrt(abs(np.linalg.det(np.array(obj.matrix_world)[:3, :3]))))
    reach = space.reach(target_in_armature(obj, empty), length=lambda d: length_text(d * scale, bpy.context.scene))
    seconds = time.perf_counter() - began
    target_world = np.array(empty.matrix_world.translation, dtype=np.float64)
    hit_world = (np.array(obj.matrix_world) @ np.append(reach.hit_point, 1.0))[:3]
    return ReachFound(empty.name, target_world, tuple(name for name, _ in examples),
                      "actions" if folder is None else folder, reach, hit_world,
                      float(np.linalg.norm(hit_world - target_world)), effector, feature, seconds, cached)


# ---------------------------------------------------------------------------
# The writes


def insert_reach(obj: bpy.types.Object, found: ReachFound, start: int) -> bpy.types.NlaStrip:
    """Key the reach into a new action (from scene frame ``start``) and play it by a new strip at ``start``
    on a new track above the armature's strips; record the result for the panel. No other strip or action
    is changed."""
    from .clips import add_result_strip, result_action, track_above

    motion = found.reach.motion
    action = result_action(obj, motion, f"reach {found.target}", start, "reach")
    track = track_above(obj, [], start, start + motion.n_frames - 1, REACH_TRACK, reuse=False)
    strip = add_result_strip(obj, track, action, start)
    obj.smart_motion.reach_json = json.dumps(found.to_dict() | {"strip": strip.name, "action": action.name,
                                                                "hit_scene_frame": start + int(found.reach.hit_frame)})
    return strip


# ---------------------------------------------------------------------------
# Reports and the panel


def length_text(value: float, scene: bpy.types.Scene) -> str:
    """A length in Blender units as the scene shows lengths (its unit system and scale); "under 1 µm" (or
    its equivalent) where the unit system would round it to nothing."""
    units = scene.unit_settings
    least = 1e-6 / units.scale_length if units.system != 'NONE' else 1e-6  # (1 µm, or 1e-6 units)
    if value < least:
        return f"under {length_text(least, scene)}"
    return bpy.utils.units.to_string(units.system, 'LENGTH', value * units.scale_length, precision=3)


def reach_text(found: ReachFound, strip: bpy.types.NlaStrip, scene: bpy.types.Scene) -> str:
    """The operator's report."""
    blend = "partial blending (section 3.2)" if found.reach.partial else "whole-body blending (section 3.1)"
    weights = ", ".join(f"{name} {w:.2f}" for name, w in found.weights())
    timing = ("the examples' alignment kept from before" if found.cached else "examples aligned")
    error = length_text(found.error, scene)
    limit = (f"; joint limit: {', '.join(found.reach.limited)} turned as far as the examples' range allows, no "
             f"further" if found.reach.limited else "")
    feet = "; feet held where the examples have them down" if found.reach.feet_held else ""
    return (f"{found.effector} reaches {found.target!r} with a hit error of {error} at frame "
            f"{round(strip.frame_start) + int(found.reach.hit_frame)}, by {blend} of {len(found.examples)} "
            f"examples ({weights}){limit}{feet}; why: {found.reach.why}; new "
            f"action {strip.action.name!r} as strip {strip.name!r} from frame {round(strip.frame_start)} "
            f"({timing}, {found.seconds:.2f} s)")


def limit_warnings(found: ReachFound, scene: bpy.types.Scene) -> list[str]:
    """The operator's warning when a joint limit stopped partial blending's turns (core.reach.JointRanges)
    and the target was missed for it (by more than core.reach's tolerance); a limit that bit on the way
    to a hit is only in the report (:func:`reach_text`)."""
    if not found.reach.limited or not found.reach.missed:
        return []
    return [f"{', '.join(found.reach.limited)} turned only as far as the examples' range (and its margin) allows; "
            f"the hit error is {length_text(found.error, scene)}: examples that reach further that way would "
            f"reach this target"]


def reach_lines(shown: dict, scene: bpy.types.Scene) -> list[str]:
    """The panel's lines of the last Reach Target (``to_dict`` and where it went)."""
    lines = [f"Reach {shown['target']}: error {length_text(shown['error'], scene)}",
             f"    {'partial' if shown['partial'] else 'whole-body'} blending, hit at frame "
             f"{shown.get('hit_scene_frame', shown['hit_frame'])}",
             f"    {counted(shown['examples'], 'example')} ({'listed' if shown['library'] == 'actions' else 'folder'}), "
             f"from {shown['reference']}"]
    if shown.get("limited"):
        lines.append(f"    joint limit: {', '.join(shown['limited'])}")
    lines += [f"    {weight:.2f} {name}" for name, weight in shown["weights"]]
    if shown.get("strip"):
        lines.append(f"    strip {shown['strip']}")
    return lines
