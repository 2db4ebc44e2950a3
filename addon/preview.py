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
strips play (:func:`.strips.track_segments`), in frame order; the first is the armature's
``preview_action``.

Synthesize writes the preview (:func:`show_preview`), played by the preview
track, named :data:`.strips.PREVIEW_TRACK`, above the sources. The track takes
the solo while it plays, so the sources keep their own mute flags, and an
active action, which Blender would play on top of every track, is set aside.
Synthesizing again replaces the preview; Clear removes it and restores the
rest. Neither touches the source actions.

Synthesize records with the preview a signature: a hash of everything the
synthesis read (:func:`signature_parts`), and for the preview's own actions
an edit stamp (:func:`.state.edit_stamp`) and what the depsgraph does not
report of them (:func:`.fcurves.modifiers_digest`). The preview is current
(:func:`current_preview`) while the signature of the selected strips, as
they are now, equals it and the depsgraph reported no edit of the preview's
actions since (:func:`unedited`). The preview's keys are not hashed again:
the depsgraph evaluates the preview, so an edit of its keys, from the UI or
from Python, is reported once the depsgraph is brought up to date, which
:func:`unedited` does first. The sources' keys are hashed: under the
preview's solo Blender does not evaluate them, and no event reports them.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Iterator

import bpy
import numpy as np

from .convert import bone_channels, scene_fps
from .fcurves import (action_channelbag, action_digest, add_curves, armature_digest, emptied_channelbag, LINEAR,
                      modifiers_digest, new_fcurve)
from .state import edit_stamp, edited_since, preview_motion, preview_shown, session_store
from .strips import (find_strip, follow_renames, left_out_strips, performed_current, preview_action_name,
                     preview_actions, preview_segments, PREVIEW_STRIP, preview_track, PREVIEW_TRACK, solo_before,
                     source_strips, strip_settings, track_index, track_place, user_blend_s)
from .sync_groups import blending_key
from .timeline import core_offsets

# Frames per segment: a few hundred keep a moved strip's rewrite to a segment or two per channel,
# while each segment's own cost (its strip, its F-curves, copied whole when written) stays small
# against its keys.
SEGMENT = 256

# (armature session_uid, preview signature) -> (motion, first frame, bone channels) the preview was keyed from by
# show_preview: while the preview is current and unedited its keys are exactly what write_action writes
# for that motion, so Bake writes it instead of reading some 3,600 key arrays back from the segments
_SHOWN = session_store("shown previews", 4)


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


def write(obj: bpy.types.Object, motion, name: str, frame_start: int, into: list = (),
          channels: list | None = None) -> list[bpy.types.Action]:
    """The segment actions of a preview posing the armature ``obj`` as ``motion`` does from
    ``frame_start``: the keys :func:`.convert.write_action` would write, segment by segment, one
    action each (named by :func:`segment_name`, one slot for ``obj``).

    The actions ``into`` are written again, in order, instead of new ones (so
    that what plays them plays the new keys); those left over are removed.
    :func:`play` makes the strips that play them. ``channels``: :func:`.convert.bone_channels` of
    ``motion`` on ``obj`` when the caller has them.
    """
    channels = bone_channels(obj, motion) if channels is None else channels
    ranges = segment_ranges(motion.n_frames)
    frames = float(frame_start) + np.arange(motion.n_frames, dtype=np.float64)
    actions = []
    for k, (first, last) in enumerate(ranges):
        action = into[k] if k < len(into) else bpy.data.actions.new(segment_name(name, k))
        bag = emptied_channelbag(action, obj)
        for bone, prop, values in channels:
            add_curves(bag, bone, prop, frames[first:last + 1], values[first:last + 1])
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
    bags = [action_channelbag(a, a.slots[0]) for a in actions]
    linear = np.full(ranges[0][1] - ranges[0][0] + 1, LINEAR, dtype=np.int32)
    before = len(next(iter(curves.values())))
    for (path, index), segment in curves.items():
        group = segment[0].group.name if segment[0].group is not None else ""
        for k in range(before - 1, len(ranges)):
            first, last = ranges[k]
            if k == len(segment):
                segment.append(new_fcurve(bags[k], path, index, group))
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
            bag = action_channelbag(action, slot)
            for fcurve in (bag.fcurves if bag is not None else ()):
                curves.setdefault((fcurve.data_path, fcurve.array_index), []).append(fcurve)
    return curves


def keyed_rows(curves: dict) -> dict:
    """``{(data path, index): (F, 2) float32 (frame, value) rows}`` of :func:`segment_curves`, read in
    bulk (as ``foreach_set`` takes them back), the segments joined with each boundary key once."""
    return {key: _joined(_read(segment, "co", 2, np.float32))[0] for key, segment in curves.items()}


def _read(segment: list, prop: str, size: int, dtype) -> list[np.ndarray]:
    """Keyframe property ``prop`` of each of a channel's segment curves, ``(keys, size)``, in bulk."""
    parts = []
    for fcurve in segment:
        points = fcurve.keyframe_points
        rows = np.empty((len(points), size), dtype=dtype)
        points.foreach_get(prop, rows.ravel())
        parts.append(rows)
    return parts


def _joined(co: list[np.ndarray], *others: list[np.ndarray]) -> list[np.ndarray]:
    """A channel's segment rows ``co`` (:func:`_read` of ``"co"``) and ``others`` (other keyframe
    properties of the same curves) joined, one row per frame: each segment's first row left out where
    its frame repeats the one the segment before ends on (frames read from ``co``, not key by key)."""
    keep, last = [], None
    for rows in co:
        keep.append(1 if last is not None and len(rows) and rows[0, 0] == last else 0)
        last = rows[-1, 0] if len(rows) else last
    return [np.concatenate([rows[k:] for rows, k in zip(parts, keep)]) for parts in (co, *others)]


def bake_into(actions: list, target: bpy.types.Action, obj: bpy.types.Object) -> None:
    """Replace ``target``'s keys by the preview's, its segment ``actions`` joined in one slot for ``obj``:
    the action :func:`.convert.write_action` writes for the whole motion (linear keys, handles as
    ``update`` computes them, each bone's curves in its group)."""
    channelbag = emptied_channelbag(target, obj)
    for (path, index), segment in segment_curves(actions).items():
        co, kind = _joined(_read(segment, "co", 2, np.float32), _read(segment, "interpolation", 1, np.int32))
        group = segment[0].group.name if segment[0].group is not None else ""
        fcurve = new_fcurve(channelbag, path, index, group)
        fcurve.keyframe_points.add(len(co))
        fcurve.keyframe_points.foreach_set("co", co.ravel())
        fcurve.keyframe_points.foreach_set("interpolation", kind.ravel())
        fcurve.update()


def signature_parts(obj: bpy.types.Object, strips: list, responsiveness: float) -> Iterator[str]:
    """Hashes of everything :func:`.synthesis.synthesize_strips` reads, cheapest first: same hashes, same result.

    Yields, lazily, so that a comparison stops at the first difference:

    1. the setup: per strip in order its name and type, its action's name and
       slot, where it sits and what part of the action it plays (frames,
       action range, scale, repeat, reverse, animated time), its core and
       the frame Perform added it at (:func:`.strips.performed_current`), its
       Blend Length and its track (:func:`.strips.track_index`: a group is
       weighed by track); the armature (bones, rest pose, rotation modes,
       :func:`.convert.armature_digest`), its name and Bone Mapping, the
       responsiveness, the scene's fps and unit scale, the extension's code;
    2. the strips' actions: every key and F-curve setting
       (:func:`.convert.action_digest`, keys read in bulk).

    The preview's own actions are not hashed here (:func:`preview_record`).

    The option to blend synchronized, and with it on the strip's influence
    and its F-curve's keys (:func:`.sync_groups.blending_key`).
    Not the strips' mute flags, influence or blending as such: mutes decide
    which strips are passed in, blends and neighbours reach the synthesis
    through the default cores, which are hashed (the preview mutes the
    sources itself). Changes nothing.
    """
    scene = bpy.context.scene
    setup = [
        _code_digest(), obj.name, armature_digest(obj), obj.smart_motion.bone_mapping,
        repr(float(responsiveness)), repr(scene_fps(scene)), repr(scene.unit_settings.scale_length),
    ]
    for strip in strips:
        setup.append(repr((
            strip.name, strip.type, None if strip.action is None else strip.action.name,
            None if strip.action_slot is None else strip.action_slot.identifier,
            strip.frame_start, strip.frame_end, strip.action_frame_start, strip.action_frame_end,
            strip.scale, strip.repeat, strip.use_reverse, strip.use_animated_time,
            core_offsets(obj, strip, strips), performed_current(obj, strip), blending_key(obj, strip),
            user_blend_s(obj, strip), track_index(obj, strip),
        )))
    yield _hashed(setup)
    yield _hashed([action_digest(action) for action in source_actions(strips)])


def source_actions(strips: list) -> list[bpy.types.Action]:
    """The actions ``strips`` play, each once however many strips play it."""
    return list({strip.action.session_uid: strip.action for strip in strips if strip.action is not None}.values())


def _hashed(parts: list[str]) -> str:
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


@functools.cache
def _code_digest() -> str:
    """A hash of this extension's Python code: a preview made by other code is not reused."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted([*package.glob("core/*.py"), *package.glob("addon/*.py")]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def show_preview(obj: bpy.types.Object, strips: list, result, signature: list | None = None) -> bpy.types.Action:
    """Play ``result`` on ``obj`` from a preview track above ``strips``, the track solo.

    Replaces an earlier preview (its action is removed, not piled up). The
    preview track holds the solo, so Blender plays it alone while the sources
    keep their own mute flags: muting or unmuting a source is the user's way
    to leave it out or take it back in (live re-synthesis follows it,
    :mod:`.live`). A track that was solo gets its solo back from
    :func:`clear_preview`. Source actions and strips are not changed.
    ``strips`` and the selected strips Blender does not play are the preview's
    sources (``preview_source``). ``obj.smart_motion.preview_signature`` records
    what the preview was made from and its keys (:func:`signature_parts`, or ``signature`` if
    given, taken with ``result``), for Bake to keep it while current.
    """
    if signature is None:
        signature = list(signature_parts(obj, strips, result.plan.responsiveness))
    sources = {s.name for s in strips} | set(left_out_strips(obj))
    clear_preview(obj)
    state = obj.smart_motion
    anim = obj.animation_data or obj.animation_data_create()
    if anim.action is not None:
        # Blender plays the active action on top of every NLA track.
        state.set_aside_action = anim.action
        state.set_aside_slot = anim.action_slot.identifier if anim.action_slot is not None else ""
        anim.action = None
    channels = bone_channels(obj, result.motion)  # (kept with the motion: what Bake writes)
    actions = write(obj, result.motion, preview_action_name(obj), result.start, channels=channels)
    state.preview_action = actions[0]
    solo = next((t for t in anim.nla_tracks if t.is_solo), None)
    track = anim.nla_tracks.new()  # a new track goes on top
    track.name = PREVIEW_TRACK
    play(track, actions, result.start, result.motion.n_frames, PREVIEW_STRIP)
    if solo is not None:
        # one solo track per object: soloing the preview un-solos this one, so where it is is
        # kept for Clear to solo it again (and for plays() meanwhile)
        state.solo_before, state.solo_before_index = track_place(obj, solo)
    track.is_solo = True
    for source in source_strips(obj):
        strip_settings(obj, source, create=True).preview_source = source.name in sources
    preview_shown(obj)  # (live updates adopt it: addon/live.py)
    # (after the hooks: the update reporting our own writes must find the preview adopted)
    state.preview_signature = " ".join([*signature, *preview_record(obj, actions, strips)])
    _SHOWN.put((obj.session_uid, state.preview_signature), (result.motion, result.start, channels))
    preview_motion(obj, result.motion, result.start)  # (the footprints follow it: addon/footprints.py)
    return actions[0]


def shown_motion(obj: bpy.types.Object) -> tuple | None:
    """``(motion, first frame, its bone channels)`` that :func:`show_preview` keyed ``obj``'s preview from
    (the channels as :func:`.convert.bone_channels` gives them), kept for the
    session under the preview's signature; ``None`` when not kept (another session, evicted, or the
    preview signed again by :func:`sign_preview`, whose keys came from a live update).
    Only meaningful for a :func:`current_preview`."""
    signature = obj.smart_motion.preview_signature
    return _SHOWN.get((obj.session_uid, signature)) if signature else None


def sign_preview(obj: bpy.types.Object, strips: list, responsiveness: float) -> None:
    """Record the preview as what synthesizing ``strips`` at ``responsiveness`` gives now
    (``preview_signature``, as :func:`show_preview` does), for Bake to keep it.

    For a preview the live re-synthesis brought up to date (:mod:`.live`), whose
    keys equal a fresh synthesis's to rounding; it signs the keys as they are.
    """
    actions = preview_segments(obj)
    # (the keys are the live update's now, not those of the motion show_preview kept)
    _SHOWN.pop((obj.session_uid, obj.smart_motion.preview_signature))
    if actions:
        obj.smart_motion.preview_signature = " ".join([*signature_parts(obj, strips, responsiveness),
                                                       *preview_record(obj, actions, strips)])


def evaluated(obj: bpy.types.Object, actions: list) -> bool:
    """Bring the depsgraph up to date (edits tagged since are reported to :mod:`.live`'s handler, which
    notes them: :func:`.state.note_edited`); whether it evaluates every one of ``actions``, and so
    reports their edits (an armature outside the view layer, or hidden in viewports, is not evaluated)."""
    view_layer = bpy.context.view_layer
    if view_layer is None or obj.name not in view_layer.objects:
        return False
    view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return all(depsgraph.id_eval_get(action).is_evaluated for action in actions)


def preview_record(obj: bpy.types.Object, actions: list, strips: list) -> tuple[str, str, str]:
    """What :func:`unedited` compares of the preview's segment ``actions``: an edit stamp taken once the
    depsgraph reported our own writes (``"-"`` where it cannot report edits of them), and
    :func:`unseen_digest`; and what :func:`sources_unedited` compares of the actions ``strips`` play,
    their :func:`unseen_digest`."""
    stamp = edit_stamp() if evaluated(obj, actions) else ""
    return stamp or "-", unseen_digest(actions), unseen_digest(source_actions(strips))


def unseen_digest(actions: list) -> str:
    """A hash of which actions the preview's segments are and of what the depsgraph does not report of
    them (:func:`.fcurves.modifiers_digest`)."""
    return _hashed([str(a.session_uid) for a in actions] + [modifiers_digest(a) for a in actions])


def unedited(actions: list, stamp: str, record: str) -> bool:
    """Whether the preview's segment ``actions`` are as :func:`preview_record` recorded them (``stamp``,
    ``record``): the depsgraph reported no edit of them since, and what it does not report is
    unchanged. Not known (another session, an undo since, not evaluated then) is not unedited.
    Call :func:`evaluated` first, so that every edit made so far is reported."""
    if edited_since(stamp, [a.session_uid for a in actions]) is not False:
        return False
    return unseen_digest(actions) == record


def sources_unedited(strips: list, stamp: str, record: str) -> bool:
    """Whether the actions ``strips`` play are as :func:`preview_record` recorded them (``stamp``,
    ``record``): the depsgraph reported no edit of any action since, and what it does not report is
    unchanged. It reports edits of actions it does not evaluate, as the sources under the preview's solo,
    only by their type (``id_type_updated``, :data:`.state.WATCHED_TYPES`): so any action edited since,
    the preview's own or another, is "don't know". Call :func:`evaluated` first."""
    if edited_since(stamp, id_types=['ACTION']) is not False:
        return False
    return unseen_digest(source_actions(strips)) == record


def clear_preview(obj: bpy.types.Object) -> bool:
    """Remove the preview track and actions, unmute the sources, restore a set-aside action.

    Returns whether there was anything to clear.
    """
    state = obj.smart_motion
    anim = obj.animation_data
    cleared = False
    actions = preview_segments(obj)
    track = preview_track(obj)
    if track is not None:
        track.is_solo = False  # before removing it, so that no solo flag outlives its track
        anim.nla_tracks.remove(track)
        cleared = True
    if state.solo_before:
        solo = solo_before(obj)
        # (a track the user soloed while the preview played keeps its solo)
        if solo is not None and not any(t.is_solo for t in anim.nla_tracks):
            solo.is_solo = True
        state.solo_before, state.solo_before_index = "", -1
        cleared = True
    state.preview_signature = ""
    if state.preview_action is not None:
        state.preview_action = None
        # a duplicated armature shares its original's preview until a live update gives it its own
        shared = preview_actions()
        for action in actions:
            if action not in shared:
                bpy.data.actions.remove(action)
        cleared = True
    follow_renames(obj)  # a source strip renamed while the preview is on is unmuted all the same
    for item in state.strips:
        item.preview_source = False
        # previews of files saved before the preview took the solo muted their sources
        if item.muted_by_preview:
            strip = find_strip(obj, item.name)
            if strip is not None:
                strip.mute = item.mute_before
            item.muted_by_preview = False
            cleared = True
    aside = state.set_aside_action
    if aside is not None and anim is not None:
        anim.action = aside
        slot = aside.slots.get(state.set_aside_slot)
        if slot is not None and anim.action_slot != slot:
            anim.action_slot = slot
        state.set_aside_action = None
        state.set_aside_slot = ""
        cleared = True
    if cleared:
        preview_motion(obj, None, 0)  # (the footprints go with it: addon/footprints.py)
    return cleared


def solo_back(obj: bpy.types.Object) -> None:
    """Give the preview track the solo back when no track has it: the user soloed a source track while
    the preview played (Blender then plays that track), then un-soloed it. No track was solo before
    the preview any more: Clear then leaves none solo."""
    track = preview_track(obj)
    if track is not None and not any(t.is_solo for t in obj.animation_data.nla_tracks):
        obj.smart_motion.solo_before, obj.smart_motion.solo_before_index = "", -1
        track.is_solo = True


def current_preview(obj: bpy.types.Object, strips: list, responsiveness: float) -> list | None:
    """The preview's segment actions if they hold what synthesizing ``strips`` now would give, else ``None``.

    That is, if the preview was synthesized from these strips (same names,
    same order) at this ``responsiveness``, nothing the synthesis reads has
    changed since, and the preview's keys are still those Synthesize wrote:
    the depsgraph reported no edit of them (:func:`unedited`) and the
    recorded :func:`signature_parts` match, compared cheapest first.
    Changes nothing.
    """
    state = obj.smart_motion
    actions = preview_segments(obj)
    if not actions or not evaluated(obj, actions):
        return None
    # (read after the update: its handlers, as a live update, may have rewritten the preview)
    actions = preview_segments(obj)
    recorded = state.preview_signature.split()
    if not actions or len(recorded) != 5 or not state.plan_json:
        return None
    setup, sources, stamp, record, sources_record = recorded
    if not unedited(actions, stamp, record):
        return None
    current = signature_parts(obj, strips, responsiveness)
    if next(current) != setup:
        return None
    # (the sources' keys hashed only when the edit reports cannot answer)
    return actions if sources_unedited(strips, stamp, sources_record) or next(current) == sources else None


def curve_count(preview: list) -> int:
    """How many F-curves the preview's segment actions have."""
    return sum(len(bag.fcurves) for action in preview for layer in action.layers for strip in layer.strips
               if strip.type == 'KEYFRAME' for bag in strip.channelbags)


def changed_windows(before, after) -> dict:
    """``{joint: (first, last)}`` frames where joints of motion ``after`` differ from ``before`` (same
    frames); joints that do not differ are left out.

    A moved strip changes most joints over its own frames and the joint carrying
    its placement to the end: the joints whose changes run to the last frame share
    one window, the others another (the union of theirs), so that they are
    converted together. A window may hold frames where a joint did not change:
    they are written only where their keys differ (:func:`.live`'s rewrite).
    """
    # (F, J): any component differs; or-ed component by component, many times faster than
    # np.any over the last axis, whose reduction goes element by element
    rotations, positions = before.rotations != after.rotations, before.positions != after.positions
    changed = rotations[..., 0]
    for component in (*np.moveaxis(rotations[..., 1:], -1, 0), *np.moveaxis(positions, -1, 0)):
        changed = changed | component
    joints = np.flatnonzero(changed.any(axis=0))
    first = np.argmax(changed[:, joints], axis=0)
    last = len(changed) - 1 - np.argmax(changed[::-1, joints], axis=0)
    to_end = last == len(changed) - 1
    windows = {}
    for group in (to_end, ~to_end):
        if group.any():
            window = (int(first[group].min()), int(last[group].max()))
            windows.update({int(j): window for j in joints[group]})
    return windows
