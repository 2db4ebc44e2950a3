"""Clip libraries and result tracks shared by Insert Hop, Reach Target and Assemble Parts.

A library is either the file's actions made for the armature or the BVH files
of a folder set in the add-on's preferences (Hop Library Folder, Reach
Examples Folder, Assembly Library Folder). The add-on has no BVH importer of
its own: a file is read only when its joints are the armature's bones, mapped
onto it by :func:`motion_on_armature`; a file of another skeleton is
either left out with the reason (a hop library may mix rigs) or refused with
it (examples and assembly libraries, where the user picked the folder for
this armature and a stray file is a mistake to fix).

Results are written into new actions and played by new strips on a track
above the strips they came from (:func:`track_above`), so that the NLA plays
them over their sources, which are never written. A result action is tagged
(:data:`RESULT_PROPERTY`, :func:`result_action`) and is not part of a library
made of the file's actions (:func:`file_actions`): a second Assemble Parts
would otherwise take its part from the first one's result, not from a clip.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

from ..core import quat
from ..core.motion import Motion, Skeleton, similarity_fit
from .convert import armature_skeleton, listed_names
from .pose import REST_QUATERNION
from .strips import is_preview_track, preview_actions, solo_track, track_plays, unique_track_name

#: Custom property of an action Reach Target or Assemble Parts made: what made it ("reach", "assembly").
RESULT_PROPERTY = "smart_motion_result"


@dataclass(frozen=True)
class FolderClip:
    """A BVH file of a library folder as a motion of the armature.

    name    the file's name (``walk_normal_001.bvh``).
    motion  its frames at the rate asked (the scene's, or its own), on the armature (core.motion.Motion).
    path    the file.
    """

    name: str
    motion: object
    path: Path


def file_actions(obj: bpy.types.Object, left_out=frozenset()) -> list[tuple[bpy.types.Action, object]]:
    """``[(action, motion)]`` of the file's actions that fit ``obj`` (by name), Smart Motion's previews,
    baked actions and results (:func:`result_action`) and the actions in ``left_out`` excepted. An action
    of another armature is not of this one's library: it is passed over, not refused."""
    from .convert import action_to_motion

    baked = {o.smart_motion.baked_action for o in bpy.data.objects if o.type == 'ARMATURE'}
    left_out = preview_actions() | baked | set(left_out)
    found = []
    for action in sorted(bpy.data.actions, key=lambda a: a.name):
        if action in left_out or action.get(RESULT_PROPERTY) is not None:
            continue
        try:
            found.append((action, action_to_motion(obj, action)))
        except ValueError:  # not an action of this armature
            continue
    return found


def result_action(obj: bpy.types.Object, motion, name: str, frame_start: float, made_by: str) -> bpy.types.Action:
    """A new action keying ``motion`` on ``obj`` from scene frame ``frame_start`` (:func:`.convert.write_action`),
    tagged as a result of ``made_by`` (:data:`RESULT_PROPERTY`) so that no library of file actions holds it."""
    from .convert import write_action

    action = write_action(obj, motion, name, frame_start=frame_start)
    action[RESULT_PROPERTY] = made_by
    return action


def library_path(folder: str, *, library: str, setting: str) -> Path:
    """The folder ``folder`` (a preference, maybe relative to the .blend file) as a path;
    ``ValueError`` naming the preference ``setting`` when it is not set or not found."""
    if not folder:
        raise ValueError(f"the {library} is a folder of BVH files, but none is set: set {setting} in the Smart "
                         "Motion add-on's preferences, or use the file's actions")
    path = Path(bpy.path.abspath(folder))
    if not path.is_dir():
        raise ValueError(f"the {library} folder {str(path)!r} is not found: set {setting} in the Smart Motion "
                         "add-on's preferences to a folder of BVH files")
    return path


def folder_clips(obj: bpy.types.Object, folder: str, fps: float | None, *, library: str, setting: str,
                 strict: bool = False) -> tuple[list[FolderClip], list[str]]:
    """``([FolderClip], skipped)``: the BVH files of ``folder`` by name, mapped onto ``obj`` at ``fps``
    (each at its own rate with ``None``).

    A file of another skeleton is left out with why (``skipped``), or with ``strict`` refused:
    ``ValueError`` naming it and saying to take it out of the folder. ``ValueError`` also when
    the folder is not set (``setting``: the preference's name), not found, or has no file on
    ``obj``'s skeleton. ``library`` names the library in the messages ("hop library").
    """
    path = library_path(folder, library=library, setting=setting)
    armature = armature_skeleton(obj)
    clips, skipped = [], []
    for file in sorted(path.glob("*.bvh")):
        try:
            clips.append(folder_clip(obj, file, fps, armature))
        except ValueError as error:  # BVHError too
            if strict:
                raise ValueError(f"{error}; in the {library} folder {str(path)!r} every file must be on the "
                                 f"skeleton of armature {obj.name!r}: move it out of the folder") from None
            skipped.append(str(error))
    if not clips:
        raise ValueError(f"no BVH file of {str(path)!r} is on the skeleton of armature {obj.name!r}"
                         + (f" ({skipped[0]})" if skipped else " (it has no .bvh file)")
                         + "; only files whose joint names are the armature's bone names are read")
    return clips, skipped


def folder_clip(obj: bpy.types.Object, file: Path, fps: float | None, armature: tuple | None = None) -> FolderClip:
    """The BVH ``file`` as a clip of ``obj`` at ``fps`` (at its own rate with ``None``:
    :func:`motion_on_armature`, which raises ``ValueError`` for a file on another skeleton)."""
    from ..core.bvh import read_bvh

    motion = motion_on_armature(obj, read_bvh(file), file.name, armature)
    if fps is not None and abs(motion.fps - fps) > 1e-4 * fps:
        motion = motion.resampled(fps)
    return FolderClip(file.name, motion, file)


def track_above(obj: bpy.types.Object, strips: list, first: float, last: float, name: str, *,
                reuse: bool = True) -> bpy.types.NlaTrack:
    """A track above every track holding one of ``strips`` (above all the sources when there is none), for
    a strip over scene frames ``first..last``: with ``reuse``, the lowest such track that plays and has no
    strip there; else (or without one) a new track called ``name`` right above them, below
    Smart Motion's preview. The NLA plays an upper strip over the lower ones."""
    anim = obj.animation_data or obj.animation_data_create()
    tracks = list(anim.nla_tracks)
    holding = [k for k, t in enumerate(tracks) if any(s.name in t.strips for s in strips)]
    sources = [k for k, t in enumerate(tracks) if not is_preview_track(t)]
    above = max(holding) if holding else (max(sources) if sources else -1)
    if reuse:
        solo = solo_track(obj)
        for track in tracks[above + 1:]:
            if (track_plays(obj, track, solo)
                    and all(s.frame_end < first or s.frame_start > last for s in track.strips)):
                return track
    track = anim.nla_tracks.new(prev=tracks[above] if above >= 0 else None)
    track.name = unique_track_name(obj, name)
    return track


def add_result_strip(obj: bpy.types.Object, track: bpy.types.NlaTrack, action: bpy.types.Action,
                     start: float) -> bpy.types.NlaStrip:
    """A strip on ``track`` playing the whole of ``action`` (its object slot) from scene frame ``start``,
    which may be fractional (a result keyed on the frames a fractional strip was sampled at).

    Not selected, and no other strip's selection changed: the operators that read the selected strips
    (Synthesize, Assemble Parts) go on reading what the user chose."""
    from .fcurves import slot_for

    strip = track.strips.new(action.name, round(start), action)  # (Blender takes a whole frame here)
    if strip.frame_start != start:
        strip.frame_start_ui = start  # (moves the strip, its length kept)
    if strip.action_slot is None:
        strip.action_slot = slot_for(obj, action, None)
    strip.select = False
    return strip


def active_action_warning(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> list[str]:
    """A warning when ``obj`` has an active action: Blender plays it over every NLA track, ``strip`` included."""
    anim = obj.animation_data
    if anim is None or anim.action is None:
        return []
    return [f"armature {obj.name!r} plays its active action {anim.action.name!r} over the NLA, so strip "
            f"{strip.name!r} does not show: push the action down to a strip, or unassign it, to see it"]


def motion_on_armature(obj: bpy.types.Object, motion: Motion, what: str, armature: tuple | None = None,
                       *, tolerance: float = 0.02) -> Motion:
    """``motion`` (a BVH file's, :func:`core.bvh.read_bvh`) as a motion of the armature ``obj``.

    The add-on has no importer of its own: this maps only a clip whose joints are the armature's
    bones, by name, with the same parents, and whose rest pose is the armature's up to a turn and
    a scale (a file the armature was imported from, in its own axes and unit, for example). The
    turn ``A`` and scale ``s`` are the least-squares fit of the armature's rest heads to the
    file's rest joints (Umeyama's closed form, no reflection), an origin joint left out
    (:func:`body_joints`: a file of the same bones captured elsewhere fits); then every joint rotation
    becomes ``A R inv(A)`` and every joint's translation ``s A p`` (the root's plus the fitted
    shift; connected bones keep their rest offsets, as Blender plays them). ``tolerance``: the
    fit's RMS error, as a fraction of the rest pose's size, above which the rest poses differ
    and the clip is refused.

    ``ValueError`` naming ``what`` (the file) and what differs. ``obj`` is not changed.
    """
    skeleton, info = armature or armature_skeleton(obj)
    bones = [name for name, bone in zip(skeleton.names, info.bones) if bone is not None]
    names = motion.skeleton.names
    if sorted(names) != sorted(bones):
        missing, extra = sorted(set(bones) - set(names)), sorted(set(names) - set(bones))
        raise ValueError(f"{what}: its joints are not the bones of armature {obj.name!r}"
                         + (f"; it lacks {listed_names(missing)}" if missing else "")
                         + (f"; it has {listed_names(extra)}, which the armature does not" if extra else "")
                         + " (only files whose joint names are the armature's bone names are read)")
    joints = np.array([skeleton.index(n) for n in names])
    parent_of = {n: (names[p] if p >= 0 else None) for n, p in zip(names, motion.skeleton.parents)}
    def bone_parent(name):  # (None for a root bone, under the origin joint of a several-root armature or not)
        p = skeleton.parents[skeleton.index(name)]
        return skeleton.names[p] if p >= 0 and info.bones[p] is not None else None

    moved = [n for n in names if bone_parent(n) != parent_of[n]]
    if moved:
        raise ValueError(f"{what}: joints {listed_names(moved)} hang from other parents than the bones of armature "
                         f"{obj.name!r} of the same names")
    rest_armature = (skeleton.offsets[0] + skeleton.rest_positions())[joints]
    rest_file = motion.skeleton.offsets[0] + motion.skeleton.rest_positions()
    body = body_joints(motion.skeleton)
    # (the shift puts the file's body at rest on the armature's, as the file imported by Blender and its
    # action played on this armature stands)
    turn, scale, shift, error = similarity_fit(rest_file[body], rest_armature[body])
    size = np.sqrt(np.mean(np.sum((rest_armature[body] - rest_armature[body].mean(axis=0)) ** 2, axis=1)))
    if not error <= tolerance * size:
        raise ValueError(f"{what}: its rest pose is not that of armature {obj.name!r} (after the best turn and scale the "
                         f"joints are {error / size:.0%} of the body's size away); only a clip in the armature's rest "
                         f"pose is read")
    a = quat.from_matrix(turn)
    rotations = np.tile(np.array(REST_QUATERNION), (motion.n_frames, len(skeleton), 1))
    rotations[:, joints] = quat.mul(quat.mul(a, motion.rotations), quat.inv(a))
    positions = np.broadcast_to(skeleton.offsets, (motion.n_frames, len(skeleton), 3)).copy()
    # every joint's translation turned and scaled (a file may move a joint below its root: Bandai's Hips),
    # but a connected bone's, whose location Blender ignores
    free = np.array([not info.connected[j] for j in joints])
    positions[:, joints[free]] = scale * motion.positions[:, free] @ turn.T
    root = joints[0]  # the file's joint 0, the armature's root bone (joint 0, or 1 under a several-root origin)
    positions[:, root] += shift - (skeleton.offsets[0] if root != 0 else 0.0)
    return Motion(skeleton, rotations, positions, motion.fps)


def body_joints(skeleton: Skeleton) -> np.ndarray:
    """The joints whose rest positions give a skeleton's rest pose: all of them, but an origin joint.

    A joint 0 with a single child (Bandai's ``joint_Root``) is an origin: its child's rest offset is
    where the body stood at the capture, not its shape. Files of one capture set differ there by
    metres and nowhere else (bandai2-raise's styles), so the rest pose is the child's subtree.
    """
    parents = np.asarray(skeleton.parents)
    if len(parents) > 2 and np.count_nonzero(parents == 0) == 1:
        return np.arange(1, len(parents))
    return np.arange(len(parents))


