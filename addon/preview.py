"""The preview action, keyed in segments so that a live update rewrites only the frames it changes.

Blender writes keys in bulk only a whole F-curve at a time
(``keyframe_points.foreach_set``; one key at a time costs some fifty times
more per key), and evaluates an action again as a whole once a key of it
changed. A live update that moves one strip of a long timeline changes a few
hundred frames of most channels (and the rest of the root's, as the later
clips move with it): kept in one F-curve per channel, every key of the
preview would be written again. So the preview is keyed in consecutive
segments of :data:`SEGMENT` frames, each a slot of the one preview action
played by its own strip on the preview track, and a live update
(:mod:`.live`) rewrites only the segments that hold a changed key.

Consecutive segments share their boundary frame (its key is in both) and
their strips touch there, so that between two frames Blender interpolates
across a boundary as within a segment (subframes, as motion blur samples
them). Read back (:func:`keyed_rows`) or baked (:func:`bake_into`), the
preview is one key per frame and channel, as :func:`.convert.write_action`
writes a whole motion.
"""

from __future__ import annotations

import bpy
import numpy as np

from .convert import _LINEAR, _add_curves, _new_fcurve, bone_channels, emptied_channelbag

# Frames per segment: a few hundred keep a moved strip's rewrite to a segment or two per channel
# while a long preview needs few strips (ten or so for 3,000 frames).
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


def write(obj: bpy.types.Object, motion, name: str, frame_start: int,
          into: bpy.types.Action | None = None) -> bpy.types.Action:
    """A preview action posing the armature ``obj`` as ``motion`` does from ``frame_start``: the keys
    :func:`.convert.write_action` would write, in segments, one slot each (:func:`slots`).

    With ``into``, that action's keys are replaced instead (its slots kept as
    far as they go, so that what plays them plays the new keys); ``name`` is
    then ignored. :func:`play` makes the strips that play it.
    """
    channels = bone_channels(obj, motion)
    action = bpy.data.actions.new(name) if into is None else into
    for layer in list(action.layers):
        action.layers.remove(layer)
    ranges = segment_ranges(motion.n_frames)
    keyframes = action.layers.new("Layer").strips.new(type='KEYFRAME')
    frames = float(frame_start) + np.arange(motion.n_frames, dtype=np.float64)
    for slot, (first, last) in zip(slots(action, len(ranges)), ranges):
        bag = keyframes.channelbag(slot, ensure=True)
        for bone, prop, values in channels:
            _add_curves(bag, bone, prop, frames[first:last + 1], values[first:last + 1])
    return action


def slots(action: bpy.types.Action, count: int) -> list:
    """The first ``count`` slots of ``action`` for objects, one per segment, made as needed (named
    ``Segment 1``, ``Segment 2`` …); any further slot of it is removed."""
    found = [s for s in action.slots if s.target_id_type in ('OBJECT', 'UNSPECIFIED')]
    for extra in found[count:]:
        action.slots.remove(extra)
    for k in range(len(found), count):
        found.append(action.slots.new(id_type='OBJECT', name=f"Segment {k + 1}"))  # (Blender numbers a taken name)
    return found[:count]


def play(track: bpy.types.NlaTrack, action: bpy.types.Action, start: int, n_frames: int, name: str) -> None:
    """``track``'s strips made again (strips keep the range they were made with): one per segment of
    the preview ``action`` of ``n_frames`` frames from ``start``, each over its own frames, named
    ``name`` (numbered by Blender after the first), none selected."""
    for strip in list(track.strips):
        track.strips.remove(strip)
    ranges = segment_ranges(n_frames)
    for k, (slot, (first, last)) in enumerate(zip(slots(action, len(ranges)), ranges)):
        strip = track.strips.new(name, start + first, action)
        strip.action_slot = slot
        # (the end first: a strip made before its slot is set plays the slot-less range 0-1)
        strip.action_frame_end = start + last
        strip.action_frame_start = start + first
        if k:
            strip.extrapolation = 'HOLD_FORWARD'  # (as Blender makes a track's later strips)
        strip.select = False


def grow(action: bpy.types.Action, curves: dict, rows: dict) -> None:
    """The preview ``action``'s curves (:func:`segment_curves`, extended in place) grown to the frames of
    ``rows`` (``{(data path, index): (F, 2) (frame, value) rows}``, every channel of ``curves``, on
    the frames they had and after): the last segment's curves take keys up to its full length, new
    segments get a slot and curves each (:func:`play` makes their strips)."""
    n_frames = len(next(iter(rows.values())))
    before = len(next(iter(curves.values())))
    ranges = segment_ranges(n_frames)
    keyframes = next(strip for layer in action.layers for strip in layer.strips if strip.type == 'KEYFRAME')
    bags = [keyframes.channelbag(slot, ensure=True) for slot in slots(action, len(ranges))]
    linear = np.full(ranges[0][1] - ranges[0][0] + 1, _LINEAR, dtype=np.int32)
    for (path, index), segments in curves.items():
        group = segments[0].group.name if segments[0].group is not None else ""
        for k in range(before - 1, len(ranges)):
            first, last = ranges[k]
            if k == len(segments):
                segments.append(_new_fcurve(bags[k], path, index, group))
            points = segments[k].keyframe_points
            points.add(last - first + 1 - len(points))
            points.foreach_set("co", rows[(path, index)][first:last + 1].ravel())
            points.foreach_set("interpolation", linear[:last - first + 1])
            segments[k].update()  # (handles of the keys added)


def segment_curves(action: bpy.types.Action) -> dict:
    """``{(data path, index): [F-curve of each segment, in frame order]}`` of the preview ``action``."""
    bags = [bag for layer in action.layers for strip in layer.strips if strip.type == 'KEYFRAME'
            for bag in strip.channelbags]
    bags.sort(key=_first_key)
    curves: dict = {}
    for bag in bags:
        for fcurve in bag.fcurves:
            curves.setdefault((fcurve.data_path, fcurve.array_index), []).append(fcurve)
    return curves


def _first_key(bag) -> float:
    for fcurve in bag.fcurves:
        if len(fcurve.keyframe_points):
            return fcurve.keyframe_points[0].co[0]
    return float("inf")


def keyed_rows(curves: dict) -> dict:
    """``{(data path, index): (F, 2) float32 (frame, value) rows}`` of :func:`segment_curves`, read in
    bulk (as ``foreach_set`` takes them back), the segments joined with each boundary key once."""
    return {key: _joined(segments, "co", 2, np.float32) for key, segments in curves.items()}


def _joined(segments: list, prop: str, size: int, dtype) -> np.ndarray:
    """Keyframe property ``prop`` of a channel's segment curves, one row per frame: each segment's first
    row left out where it repeats the frame the one before ends on."""
    parts, last = [], None
    for fcurve in segments:
        points = fcurve.keyframe_points
        rows = np.empty((len(points), size), dtype=dtype)
        points.foreach_get(prop, rows.ravel())
        first = fcurve.keyframe_points[0].co[0] if len(points) else None
        parts.append(rows[1:] if last is not None and first == last else rows)
        last = fcurve.keyframe_points[-1].co[0] if len(points) else last
    return np.concatenate(parts) if parts else np.empty((0, size), dtype=dtype)


def bake_into(preview: bpy.types.Action, target: bpy.types.Action, obj: bpy.types.Object) -> None:
    """Replace ``target``'s keys by the preview's, its segments joined in one slot for ``obj``: the
    action :func:`.convert.write_action` writes for the whole motion (linear keys, handles as
    ``update`` computes them, each bone's curves in its group)."""
    channelbag = emptied_channelbag(target, obj)
    for (path, index), segments in segment_curves(preview).items():
        co = _joined(segments, "co", 2, np.float32)
        kind = _joined(segments, "interpolation", 1, np.int32)
        group = segments[0].group.name if segments[0].group is not None else ""
        fcurve = _new_fcurve(channelbag, path, index, group)
        fcurve.keyframe_points.add(len(co))
        fcurve.keyframe_points.foreach_set("co", co.ravel())
        fcurve.keyframe_points.foreach_set("interpolation", kind.ravel())
        fcurve.update()
