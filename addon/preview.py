"""The preview, keyed in segments so that a live update rewrites only the frames it changes.

Blender writes keys in bulk only a whole F-curve at a time
(``keyframe_points.foreach_set``), and after keys of an action changed it
copies that whole action for its evaluation. A live update that moves one
strip of a long timeline changes a few hundred frames of most channels (and
the rest of the root's, as the later clips move with it): kept in one action
of one F-curve per channel, every key of the preview would be written and
copied again. So the preview is keyed in consecutive segments of
:data:`SEGMENT` frames, each an action of its own played by its own strip on
the preview track, and a live update (:mod:`.live`) writes, and Blender
copies, only the segments that hold a changed key. (Measured on a ten-clip
timeline of 3,000 frames, ``tests/bench/live.py``: the copy after a move
takes about 1.7 ms for nine segments of twelve, against 5.4 ms for one action
with a slot per segment.)

Consecutive segments share their boundary frame (its key is in both) and
their strips touch there, so that between two frames Blender interpolates
across a boundary as within a segment (subframes, as motion blur samples
them). Read back (:func:`keyed_rows`) or baked (:func:`bake_into`), the
preview is one key per frame and channel, as :func:`.convert.write_action`
writes a whole motion. The segments are the actions the preview track's
strips play (:func:`segments`), in frame order; the first is the armature's
``preview_action``.
"""

from __future__ import annotations

import bpy
import numpy as np

from .convert import _LINEAR, _add_curves, _channelbag, _new_fcurve, bone_channels, emptied_channelbag

# Frames per segment: a few hundred keep a moved strip's rewrite to a segment or two per channel,
# while each segment's own cost (its strip, its F-curves, copied whole when written) stays small
# against its keys.
SEGMENT = 256


def segment_ranges(n_frames: int, length: int = SEGMENT) -> list[tuple[int, int]]:
    """``(first, last)`` frame indices (from 0) of the segments keying ``n_frames`` frames: one every
    ``length`` frames, each sharing its last frame with the next one's first."""
    return [(first, min(first + length, n_frames - 1)) for first in range(0, max(n_frames - 1, 1), length)]


def segments_holding(first: int, last: int, n_frames: int, length: int = SEGMENT) -> range:
    """The segments of ``n_frames`` frames keying any frame from ``first`` to ``last`` (indices from 0;
    a boundary frame is keyed in the segments on both sides)."""
    count = max(-(-(n_frames - 1) // length), 1)
    return range(max(first - 1, 0) // length, min(last // length, count - 1) + 1)


def segment_name(name: str, k: int) -> str:
    """The name of segment ``k`` (from 0) of the preview ``name``."""
    return f"{name} {k + 1}"


def segments(track: bpy.types.NlaTrack | None) -> list[bpy.types.Action]:
    """The preview's segment actions, in frame order: what the preview track's strips play."""
    if track is None:
        return []
    return [s.action for s in sorted(track.strips, key=lambda s: s.frame_start) if s.action is not None]


def write(obj: bpy.types.Object, motion, name: str, frame_start: int, into: list = ()) -> list[bpy.types.Action]:
    """The segment actions of a preview posing the armature ``obj`` as ``motion`` does from
    ``frame_start``: the keys :func:`.convert.write_action` would write, segment by segment, one
    action each (named by :func:`segment_name`, one slot for ``obj``).

    The actions ``into`` are written again, in order, instead of new ones (so
    that what plays them plays the new keys); those left over are removed.
    :func:`play` makes the strips that play them.
    """
    channels = bone_channels(obj, motion)
    ranges = segment_ranges(motion.n_frames)
    frames = float(frame_start) + np.arange(motion.n_frames, dtype=np.float64)
    actions = []
    for k, (first, last) in enumerate(ranges):
        action = into[k] if k < len(into) else bpy.data.actions.new(segment_name(name, k))
        bag = emptied_channelbag(action, obj)
        for bone, prop, values in channels:
            _add_curves(bag, bone, prop, frames[first:last + 1], values[first:last + 1])
        actions.append(action)
    for extra in into[len(ranges):]:
        bpy.data.actions.remove(extra)
    return actions


def play(track: bpy.types.NlaTrack, actions: list, start: int, n_frames: int, name: str) -> None:
    """``track``'s strips made again (strips keep the range they were made with): one per segment
    action of a preview of ``n_frames`` frames from ``start``, each over its own frames, named
    ``name`` (numbered by Blender after the first), none selected."""
    for strip in list(track.strips):
        track.strips.remove(strip)
    for k, (action, (first, last)) in enumerate(zip(actions, segment_ranges(n_frames))):
        strip = track.strips.new(name, start + first, action)
        if strip.action_slot is None:
            strip.action_slot = action.slots[0]
        # (the end first: a strip made before its slot is set plays the slot-less range 0-1)
        strip.action_frame_end = start + last
        strip.action_frame_start = start + first
        if k:
            strip.extrapolation = 'HOLD_FORWARD'  # (as Blender makes a track's later strips)
        strip.select = False


def grow(actions: list, curves: dict, rows: dict, obj: bpy.types.Object, name: str) -> list[bpy.types.Action]:
    """The preview's segment ``actions`` and their ``curves`` (:func:`segment_curves`, extended in place)
    grown to the frames of ``rows`` (``{(data path, index): (F, 2) (frame, value) rows}``, every
    channel of ``curves``, on the frames they had and after): the last segment's curves take keys
    up to its full length, new segments are new actions (:func:`segment_name` of ``name``).
    Returns the actions, old and new (:func:`play` makes the new ones' strips)."""
    n_frames = len(next(iter(rows.values())))
    ranges = segment_ranges(n_frames)
    actions = list(actions)
    for k in range(len(actions), len(ranges)):
        action = bpy.data.actions.new(segment_name(name, k))
        emptied_channelbag(action, obj)
        actions.append(action)
    bags = [_channelbag(a, a.slots[0]) for a in actions]
    linear = np.full(ranges[0][1] - ranges[0][0] + 1, _LINEAR, dtype=np.int32)
    before = len(next(iter(curves.values())))
    for (path, index), segment in curves.items():
        group = segment[0].group.name if segment[0].group is not None else ""
        for k in range(before - 1, len(ranges)):
            first, last = ranges[k]
            if k == len(segment):
                segment.append(_new_fcurve(bags[k], path, index, group))
            points = segment[k].keyframe_points
            points.add(last - first + 1 - len(points))
            points.foreach_set("co", rows[(path, index)][first:last + 1].ravel())
            points.foreach_set("interpolation", linear[:last - first + 1])
            segment[k].update()  # (handles of the keys added)
    return actions


def segment_curves(actions: list) -> dict:
    """``{(data path, index): [F-curve of each segment, in frame order]}`` of the segment ``actions``."""
    curves: dict = {}
    for action in actions:
        for slot in action.slots:
            # (looked up, not iterated: keys of F-curves reached through strip.channelbags are read and
            # written about three times slower, as convert.action_digest found)
            bag = _channelbag(action, slot)
            for fcurve in (bag.fcurves if bag is not None else ()):
                curves.setdefault((fcurve.data_path, fcurve.array_index), []).append(fcurve)
    return curves


def keyed_rows(curves: dict) -> dict:
    """``{(data path, index): (F, 2) float32 (frame, value) rows}`` of :func:`segment_curves`, read in
    bulk (as ``foreach_set`` takes them back), the segments joined with each boundary key once."""
    return {key: _joined(segment, "co", 2, np.float32) for key, segment in curves.items()}


def _joined(segment: list, prop: str, size: int, dtype) -> np.ndarray:
    """Keyframe property ``prop`` of a channel's segment curves, one row per frame: each segment's first
    row left out where it repeats the frame the one before ends on."""
    parts, last = [], None
    for fcurve in segment:
        points = fcurve.keyframe_points
        rows = np.empty((len(points), size), dtype=dtype)
        points.foreach_get(prop, rows.ravel())
        first = points[0].co[0] if len(points) else None
        parts.append(rows[1:] if last is not None and first == last else rows)
        last = points[-1].co[0] if len(points) else last
    return np.concatenate(parts) if parts else np.empty((0, size), dtype=dtype)


def bake_into(actions: list, target: bpy.types.Action, obj: bpy.types.Object) -> None:
    """Replace ``target``'s keys by the preview's, its segment ``actions`` joined in one slot for ``obj``:
    the action :func:`.convert.write_action` writes for the whole motion (linear keys, handles as
    ``update`` computes them, each bone's curves in its group)."""
    channelbag = emptied_channelbag(target, obj)
    for (path, index), segment in segment_curves(actions).items():
        co = _joined(segment, "co", 2, np.float32)
        kind = _joined(segment, "interpolation", 1, np.int32)
        group = segment[0].group.name if segment[0].group is not None else ""
        fcurve = _new_fcurve(channelbag, path, index, group)
        fcurve.keyframe_points.add(len(co))
        fcurve.keyframe_points.foreach_set("co", co.ravel())
        fcurve.keyframe_points.foreach_set("interpolation", kind.ravel())
        fcurve.update()
