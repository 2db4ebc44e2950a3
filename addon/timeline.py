"""Strips to core clips: spans, default cores, the clips Synthesize joins.

Scene frames are the core's output frames: a strip starting at scene frame
``s`` is a :class:`core.synthesize.Clip` with ``start = s``, its clip frame
``k`` plays at ``s + k``, and its core (kept relative to the strip, see
:mod:`.properties`) becomes clip frames. A strip's default core comes from
its blends and the strips it overlaps (:func:`default_core`); a synchronized
group (:mod:`.sync_groups`) is one clip, the blend of its strips
(:func:`group_clip`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Callable

import bpy

from ..core import timeline as rules
from ..core.timeline import DefaultCore, Span, default_core

from .convert import find_armature_rig, scene_fps, strip_to_motion
from .fcurves import action_digest
from .state import session_store
from .strips import (by_track_from_top, core_neighbours, FRAME_TOLERANCE, performed_current, strip_frame_count,
                     strip_settings, strip_signature, user_blend_s, whole_strip_if_empty)
from .sync_groups import (blending_key, blends_synchronized, edited_group_core, group_name, group_weights,
                          not_replace_warnings, strip_part_weights, sync_groups, weights_varying)


# ---------------------------------------------------------------------------
# Default cores of strips


def strip_span(strip: bpy.types.NlaStrip) -> Span:
    start = round(strip.frame_start)
    return Span(strip.name, start, start + strip_frame_count(strip) - 1, strip.blend_in, strip.blend_out)


def shortest_blend_frames() -> int:
    """``SynthesisOptions.min_blend_s`` at the scene's frame rate: the room default cores leave."""
    from ..core.options import SynthesisOptions

    return SynthesisOptions().min_blend_frames(scene_fps(bpy.context.scene))


def default_cores(obj: bpy.types.Object, neighbours: list | None = None) -> dict[str, DefaultCore]:
    """``{strip name: its default core}`` for every one of ``neighbours`` (:func:`.strips.core_neighbours` when
    ``None``), as :func:`strip_default_core` takes each: the groups, additional motions and spans worked
    out once for them all (the panel draws every strip's core on every redraw)."""
    room = shortest_blend_frames()
    neighbours = core_neighbours(obj) if neighbours is None else neighbours
    groups = sync_groups(obj, neighbours)
    grouped = {s.name: group for group in groups for s in group}
    additional = additional_strips(obj, [s for s in neighbours if s.name not in grouped])
    spans = sequence_spans([s for s in neighbours if s.name not in additional], groups)
    index = {span.name: k for k, span in enumerate(spans)}
    cores = {}
    for strip in neighbours:
        if strip.name in additional:
            over, parts = additional[strip.name]
            span = strip_span(strip)
            cores[strip.name] = DefaultCore(span.first, span.last, over=over, parts=parts)
            continue
        name = group_name(grouped[strip.name]) if strip.name in grouped else strip.name
        k = index[name]
        core = default_core(spans[k], spans[:k], spans[k + 1:], room)
        cores[strip.name] = replace(core, group=name) if strip.name in grouped else core
    return cores


def strip_default_core(obj: bpy.types.Object, strip: bpy.types.NlaStrip, neighbours: list | None = None) -> DefaultCore:
    """:func:`default_core` of ``strip`` among ``neighbours`` (strips in start order), on any track.

    ``neighbours`` default to the strips a synthesis would read now
    (:func:`.strips.core_neighbours`). A strip that is not one of them is taken
    alone. The shortest blend is ``SynthesisOptions.min_blend_s`` at the
    scene's frame rate.

    Additional motions (2008, section 8; :func:`additional_strips`: a strip
    wholly inside another's span, on another track, that core would compose)
    are no neighbours: the strip they lie in keeps its core as if they were not
    there, and their own default core is their whole strip (composition plays
    all of it). A strip inside another that does not qualify (a walk inside a
    walk) is a neighbour as any other: it cuts the other's core, and goes in
    sequence.
    """
    neighbours = core_neighbours(obj) if neighbours is None else neighbours
    found = default_cores(obj, neighbours).get(strip.name)
    return found if found is not None else default_core(strip_span(strip), room=shortest_blend_frames())


def core_offsets(obj: bpy.types.Object, strip: bpy.types.NlaStrip, neighbours: list | None = None) -> tuple[int, int]:
    """(first, last) core frames of ``strip`` counted from its start: as edited, else its :func:`default_core`
    (among ``neighbours``, as :func:`strip_default_core`)."""
    item = strip_settings(obj, strip)
    if item is not None and item.has_core:
        return item.core_offsets(strip)
    core = strip_default_core(obj, strip, neighbours)
    start = round(strip.frame_start)
    return (core.first - start, core.last - start)


def sequence_spans(strips: list, groups: list) -> list[Span]:
    """The spans of what goes in sequence: each of ``strips`` not in one of ``groups``, and each
    group as one span from its earliest strip's first frame to its latest last frame, by start
    (core.timeline.sequence_spans)."""
    grouped = {s.name for group in groups for s in group}
    free = [s for s in strips if s.name not in grouped]
    spans = [strip_span(s) for s in free] + [strip_span(s) for group in groups for s in group]
    at, indices = len(free), []
    for group in groups:
        indices.append(list(range(at, at + len(group))))
        at += len(group)
    return rules.sequence_spans(spans, indices)


def additional_strips(obj: bpy.types.Object, strips: list) -> dict[str, tuple[str, str]]:
    """``{strip name: (name of the strip it lies in, parts)}`` of the additional motions among ``strips``
    (:func:`additional_spans`); changes nothing.

    Whether a strip's motion qualifies is read once per what it plays
    (:func:`additional_parts_of_strip`). A strip that cannot be read does not
    qualify here (synthesis says what is wrong with it).
    """
    # (in playing order, as the engine takes its clips: by core, an edited one's where it is set, else by start;
    # an additional motion that would play before the sequence's first core goes in sequence)
    strips = sorted(strips, key=lambda s: _core_start(obj, s))
    spans = [strip_span(s) for s in strips]
    gone = rejected_clips(obj.smart_motion.plan_json) if hasattr(obj, "smart_motion") else frozenset()
    found = rules.additional_spans(spans, lambda k: additional_parts_of_strip(obj, strips[k]),
                                   rejected=[k for k, s in enumerate(strips) if s.name in gone])
    return {strips[k].name: (strips[b].name, parts) for k, (b, parts) in found.items()}


def _core_start(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> int:
    """Where ``strip``'s core begins in scene frames when edited, else where the strip does."""
    item = strip_settings(obj, strip)
    start = round(strip.frame_start)
    return start + item.core_offsets(strip)[0] if item is not None and item.has_core else start


# the clips each recorded plan rejected, by its text (rejected_clips)
_REJECTED = session_store("rejected clips", 4)


def rejected_clips(plan_json: str) -> frozenset[str]:
    """The clips the recorded plan (its JSON) rejected: what lies inside one goes in sequence, as
    the engine reruns it (core.timeline.additional_spans); read once per plan, not per redraw."""
    return _REJECTED.get(plan_json, lambda: _rejected_in(plan_json))


def _rejected_in(plan_json: str) -> frozenset[str]:
    try:
        plan = json.loads(plan_json) if plan_json else {}
    except ValueError:  # (a plan from another version: nothing is known to be rejected)
        return frozenset()
    if not isinstance(plan, dict):
        return frozenset()
    return frozenset(r["clip"] for r in plan.get("rejected", ()) if isinstance(r, dict) and "clip" in r)


# what a strip's motion lends as an additional motion, by what it plays (additional_parts_of_strip)
_ADDITIONAL_PARTS = session_store("additional parts", 256)


def additional_parts_of_strip(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> str | None:
    """``core.synthesize.additional_motion_parts`` of what ``strip`` plays on ``obj``, ``None`` if it
    cannot be read.

    The panel draws default cores often, so the answer is kept per armature,
    what the strip plays (:func:`.strips.strip_signature`, slot, length), the action's
    keys (:func:`.convert.action_digest`), Bone Mapping and frame rate.
    """
    from ..core.synthesize import additional_motion_parts

    if strip.type != 'CLIP' or strip.action is None or blends_synchronized(obj, strip):
        return None  # (a strip blended synchronized never composes, even alone)
    key = (obj.name, obj.data.name, strip_signature(strip), strip_frame_count(strip),
           None if strip.action_slot is None else strip.action_slot.identifier, action_digest(strip.action),
           obj.smart_motion.bone_mapping, scene_fps(bpy.context.scene))
    def parts() -> str | None:
        try:
            motion = strip_to_motion(obj, strip)
            return additional_motion_parts(motion, find_armature_rig(obj, motion))
        except ValueError:
            return None

    return _ADDITIONAL_PARTS.get(key, parts)


def strip_group(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> list | None:
    """The synchronized group (:func:`.sync_groups.sync_groups`) ``strip`` is one of among the strips a synthesis
    would read now (:func:`.strips.core_neighbours`), or ``None``."""
    neighbours = core_neighbours(obj)
    if strip.name not in {s.name for s in neighbours}:
        return None
    return next((g for g in sync_groups(obj, neighbours) if any(s.name == strip.name for s in g)), None)


def core_to_edit(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> tuple[int, int]:
    """The offsets Edit Core starts ``strip``'s core from: the core it has now (a strip of a synchronized
    group: the group's, :func:`group_core` before the cut to the blend), cut to the strip; the whole
    strip where that leaves no frame."""
    group = strip_group(obj, strip)
    edited = edited_group_core(obj, group) if group is not None else None
    start = round(strip.frame_start)
    first, last = (edited[0] - start, edited[1] - start) if edited is not None else core_offsets(obj, strip)
    return whole_strip_if_empty((max(first, 0), min(last, strip_frame_count(strip) - 1)), strip)


def group_core(obj: bpy.types.Object, group: list, neighbours: list, first: int, n: int) -> tuple:
    """``((first, last) scene frames, where it comes from, a warning or "")``: the core of a synchronized
    group whose blend plays ``n`` frames from scene frame ``first``.

    Where any of its strips has an edited core, the group's core runs over the scene frames
    those cores span (:func:`.sync_groups.edited_group_core`: the first's start to the last's end); else it
    is the group's default core (:func:`strip_default_core`: its span minus its neighbours').
    Either way cut to the blend's frames, ``first`` to ``first + n - 1``.

    Scene frames, not the strips' own frames: the time warp plays each strip at the group's
    common pace (and may delay one), so the strip's own frame ``k`` plays at some other scene
    frame than its start plus ``k``, and the blend may end before or after the strips do. A
    core edited over scene frames 60-150 keeps the group's blend over scene frames 60-150, as
    the preview shows it on the timeline; which of each strip's own frames play there the
    warp decides. An edited core the blend does not reach is refused (``ValueError`` saying what
    to edit); one it reaches in part is cut, with a warning saying so.
    """
    edited = edited_group_core(obj, group)
    last_frame = first + n - 1
    if edited is None:
        core = strip_default_core(obj, group[0], neighbours)
        why = core.why()
        if max(core.first, first) > min(core.last, last_frame):
            raise ValueError(f"no frame is left for its core ({why}); move it away from the strips it overlaps")
        return (max(core.first, first), min(core.last, last_frame)), why, ""
    lo, hi, names = edited
    on = ", ".join(repr(name) for name in names)
    why = f"edited on {on}"
    if lo > last_frame or hi < first:
        raise ValueError(
            f"the core edited on {on}, frames {lo}-{hi}, lies outside the group's blend, frames {first}-{last_frame} "
            "(the time warp plays its strips at one pace, so the blend can end before they do); edit the core "
            f"to lie within frames {first}-{last_frame}, or give it back its default (the X button by the core)")
    cut = (max(lo, first), min(hi, last_frame))
    warning = ""
    if cut != (lo, hi):
        warning = (f"the core edited on {on}, frames {lo}-{hi}, is cut to the blend's frames, {cut[0]}-{cut[1]} (the "
                   "time warp plays its strips at one pace, so the blend can end before they do)")
    return cut, why, warning


# ---------------------------------------------------------------------------
# Strips to clips


def strip_clips(obj: bpy.types.Object, strips: list, fps: float | None = None,
                read: Callable | None = None, neighbours: list | None = None) -> list:
    """One :class:`core.synthesize.Clip` per strip, its core from the strip's settings (default
    cores taken among ``neighbours``, ``strips`` when ``None``).

    ``read(obj, strip, fps) -> Motion`` reads a strip (:func:`.convert.strip_to_motion`
    when ``None``; live updates pass one that keeps what it read).

    Raises ``ValueError`` naming the strip for anything a strip cannot be
    read for (no action, an action for other bones or without keys, zero
    length, a start between frames, a core reaching past the strip).
    """
    from ..core.synthesize import Clip

    read = read or strip_to_motion
    neighbours = strips if neighbours is None else neighbours
    clips = []
    for strip in strips:
        start = round(strip.frame_start)
        if abs(strip.frame_start - start) > FRAME_TOLERANCE:
            raise ValueError(
                f"NLA strip {strip.name!r} of armature {obj.name!r} starts between frames, at "
                f"{strip.frame_start:g}; move it onto a whole frame"
            )
        motion = read(obj, strip, fps)
        first, last = core_offsets(obj, strip, neighbours)
        if first > last:
            raise ValueError(
                f"NLA strip {strip.name!r} of armature {obj.name!r} leaves no frame for its default core "
                f"({strip_default_core(obj, strip, neighbours).why()}); move it away from the strips it overlaps, deselect "
                "one of them, or set its core with Edit Core in the Smart Motion panel (it starts from the "
                "whole strip)"
            )
        if last > motion.n_frames - 1:
            raise ValueError(
                f"the core of NLA strip {strip.name!r} of armature {obj.name!r}, frames {start + first}-"
                f"{start + last}, reaches past the strip, which ends at frame {start + motion.n_frames - 1}; "
                "edit the core in the Smart Motion panel (or Default Core), or lengthen the strip"
            )
        clips.append(Clip(motion, start, (first, last), strip.name, current=performed_current(obj, strip),
                          blend_s=user_blend_s(obj, strip)))
    return clips


def sequence_clips(obj: bpy.types.Object, strips: list, fps: float | None = None,
                   read: Callable | None = None, kept: dict | None = None) -> tuple[list, tuple[dict, ...]]:
    """What Synthesize joins: ``(clips by start, the groups' plans)``. A strip is a clip as
    :func:`strip_clips` reads it; each synchronized group (:func:`.sync_groups.sync_groups`) is one clip, the
    blend of its strips (:func:`group_clip`). Default cores are taken among ``strips``, a group
    counting as one span. ``kept``: the groups' blends kept between calls (:func:`group_clip`;
    live updates pass one). Raises ``ValueError`` as :func:`strip_clips` does, and for a group
    that cannot be blended (naming its strips)."""
    from ..core.rig import RigError

    groups = sync_groups(obj, strips)
    grouped = {s.name for group in groups for s in group}
    clips = strip_clips(obj, [s for s in strips if s.name not in grouped], fps, read, neighbours=strips)
    plans = []
    for group in groups:
        try:
            clip, plan = group_clip(obj, group, strips, fps, read, kept)
        except RigError:
            raise  # (says what to map on the armature)
        except ValueError as error:
            raise ValueError(f"the synchronized group {group_name(group)!r} of armature {obj.name!r} cannot be "
                             f"blended: {error}") from None
        clips.append(clip)
        plans.append(plan)
    return sorted(clips, key=lambda c: c.start), tuple(plans)


def group_clip(obj: bpy.types.Object, group: list, neighbours: list, fps: float | None = None,
               read: Callable | None = None, kept: dict | None = None) -> tuple:
    """One synchronized group as one ``core.synthesize.Clip`` and its plan for the panel (a dict).

    Its motion is ``core.mkm.blend_clips`` of the group's strips, the upper track
    first with the higher priority; each strip's weight at every scene frame of the
    group is what the NLA's Replace mode gives it from the influences, a track's strips
    in turn (:func:`.sync_groups.group_weights`; a number where it does not change), each ended where
    its strip ends (its repeats included: a cyclic strip does not repeat past it). The clip
    starts at the group's earliest strip start, and its core is :func:`group_core`: over
    its strips' edited cores where any has one, else the default core of the group's span
    among ``neighbours``, in scene frames, cut to the blend.

    ``kept`` (a dict, or ``None``) keeps each group's blend by what it read: the same motions
    (the very objects ``read`` returned: live updates' reader keeps them), starts, tracks,
    influences (:func:`.sync_groups.blending_key`) and Bone Mapping give the kept blend back, so that
    dragging another strip does not blend the group again.
    """
    import numpy as np

    from ..core.mkm import BODY_PARTS, blend_clips
    from ..core.synthesize import Clip

    read = read or strip_to_motion
    ordered = by_track_from_top(obj, group)
    for strip in ordered:
        if abs(strip.frame_start - round(strip.frame_start)) > FRAME_TOLERANCE:
            raise ValueError(f"NLA strip {strip.name!r} starts between frames, at {strip.frame_start:g}; move it "
                             "onto a whole frame")
    motions = [read(obj, s, fps) for s in ordered]
    starts = [round(s.frame_start) for s in ordered]
    first = min(starts)
    last = max(st + m.n_frames - 1 for st, m in zip(starts, motions))
    frames = np.arange(first, last + 1)
    influences, playing, weights = group_weights(obj, ordered, frames)
    if not np.any(weights > 0):
        raise ValueError("its strips' influence is 0 at every frame, so Replace mode shows none of them; raise "
                         "the influence of one (Animated Influence on, and a key above 0)")
    varying = weights_varying(obj, ordered, frames, influences, playing, weights)
    given = [w if s.name in varying else float(w[0]) for s, w in zip(ordered, weights)]
    tracks = {s.name: t.name for t in obj.animation_data.nla_tracks for s in t.strips}
    key = tuple((s.name, st, tracks[s.name], blending_key(obj, s)) for s, st in zip(ordered, starts))
    key += (obj.smart_motion.bone_mapping,)
    name = group_name(group)
    found = kept.get(name) if kept is not None else None
    if found is not None and found[0] == key and all(a is b for a, b in zip(found[1], motions)):
        blend = found[2]
    else:
        rig = find_armature_rig(obj, motions[0])
        # (a strip's length, its repeats included, is where the user ends it: a cyclic one stops there
        # too rather than repeat to the group's end, §4.3's rule for a clip not ended)
        blend = blend_clips(motions, names=[s.name for s in ordered], weights=given,
                            priorities=list(range(len(ordered), 0, -1)), starts=starts, rig=rig,
                            part_weights=[strip_part_weights(obj, s) for s in ordered],
                            ends=[m.n_frames - 1 for m in motions])
        if kept is not None:
            kept[name] = (key, motions, blend)
    n = blend.motion.n_frames
    first += blend.origin  # (later where the earliest strip weighs nothing and is left out)
    (core_first, core_last), core_why, cut = group_core(obj, group, neighbours, first, n)
    offsets = (core_first - first, core_last - first)
    plan = blend.plan
    group_plan = {
        "name": name,
        "strips": [s.name for s in ordered],
        "start": first,
        "frames": n,
        "core": [core_first, core_last],
        "core_from": core_why,
        "combined": plan.to_dict()["combined"],
        "delays": {s.name: int(d) for s, d in zip(ordered, plan.delays)},
        # (the strips that start playing past their first frame, in step with the others: core.sync)
        "entered": {s.name: f for s, f in zip(ordered, plan.entry_frames()) if f},
        "weights": {s.name: float(w[0]) for s, w in zip(ordered, weights)},
        "varying": varying,
        "cyclic": [s.name for s, c in zip(ordered, blend.cyclic) if c],
        "part_weights": {s.name: dict(zip(BODY_PARTS, map(float, f))) for s, f in zip(ordered, blend.part_weights)
                         if any(x != 1.0 for x in f)},
        "ends": {s.name: round(float(e), 2) for s, e, w in zip(ordered, plan.ends, plan.warps)
                 if not np.all(np.isnan(w))},
        "notes": list(blend.notes),
        "warnings": list(blend.warnings) + not_replace_warnings(ordered) + ([cut] if cut else []),
    }
    return Clip(blend.motion, first, offsets, name), group_plan
