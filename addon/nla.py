"""NLA strips to one synthesized motion: sources, analysis, preview track, bake.

The work behind the Analyze, Synthesize, Bake to Action and Clear operators,
as plain functions that also run without an operator (the demo, the
benchmark, the tests). They act on an armature object and the ``select``
flags of its NLA strips, never on an editor area, so they work headless.

Every function that changes Blender data comes in two steps: first
everything that can fail (reading strips, finding the rig, synthesizing)
into plain values, then the writes, which do not fail on valid input. An
error (``ValueError`` with a message saying what to fix) therefore leaves
the file as it was.

Timeline. Scene frames are the core's output frames: a strip starting at
scene frame ``s`` is a :class:`core.synthesize.Clip` with ``start = s``, its
clip frame ``k`` plays at ``s + k``, and its core (kept relative to the strip,
see :mod:`.properties`) becomes clip frames.

Preview. Synthesize writes the result into the actions
``"<armature>_SmartMotion_preview 1"``, ``… 2`` and so on, one per segment of
a few hundred frames (:mod:`.preview`, so that a live update rewrites only
the segments it changes), played by one strip each on its own NLA track,
named :data:`PREVIEW_TRACK`, above the sources. The track takes the solo while it
plays, so the sources keep their own mute flags, and an active action, which
Blender would play on top of every track, is set aside. Synthesizing again
replaces the preview action and track; Clear removes them and restores the
rest. Neither touches the source actions.

Bake after a preview. The usual flow is Synthesize, look, Bake. Synthesize
records with the preview a signature: a hash of everything the synthesis
read (:func:`signature_parts`) and of the preview's keys. Bake works on
the selected strips, as always; when the signature of those strips, as they
are now, and of the preview's keys equals the recorded one, the preview *is*
what synthesizing them would give, so Bake copies the preview's keys (its
segments joined) instead of synthesizing again. Any difference (another
selection, a strip moved by a frame, an edited key, another responsiveness,
an edited preview) and Bake synthesizes as it would without a preview.
Either way the baked action is the same.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

import bpy

from .properties import find_strip, strip_frame_count

PREVIEW_TRACK = "[Smart Motion preview]"
PREVIEW_STRIP = "Smart Motion preview"
_PREVIEW_SUFFIX = "_SmartMotion_preview"
_BAKED_SUFFIX = "_SmartMotion"
_FRAME_TOLERANCE = 1e-4


def preview_action_name(obj: bpy.types.Object) -> str:
    return obj.name + _PREVIEW_SUFFIX


def baked_action_name(obj: bpy.types.Object) -> str:
    return obj.name + _BAKED_SUFFIX


# ---------------------------------------------------------------------------
# What to work on


def active_armature(context: bpy.types.Context) -> bpy.types.Object:
    """The active object, which must be an armature in Object or Pose mode with its NLA editable."""
    obj = getattr(context, "active_object", None)
    if obj is None:
        raise ValueError("no active object: click the armature whose NLA strips to use, then try again")
    if obj.type != 'ARMATURE':
        raise ValueError(
            f"the active object {obj.name!r} is a {obj.type.lower()}, not an armature; "
            "make the armature whose NLA strips to use the active object"
        )
    if obj.mode == 'EDIT':
        raise ValueError(f"armature {obj.name!r} is in Edit Mode; switch to Object or Pose Mode first")
    anim = obj.animation_data
    if anim is not None and anim.use_tweak_mode:
        raise ValueError(
            f"the NLA of armature {obj.name!r} is in tweak mode; leave it first (Tab in the NLA editor)"
        )
    return obj


def is_preview_track(track: bpy.types.NlaTrack) -> bool:
    return track.name == PREVIEW_TRACK


def source_strips(obj: bpy.types.Object) -> list[bpy.types.NlaStrip]:
    """Every strip on ``obj``'s NLA tracks except the preview's, by start frame."""
    anim = obj.animation_data
    if anim is None:
        return []
    strips = [strip for track in anim.nla_tracks if not is_preview_track(track) for strip in track.strips]
    return sorted(strips, key=lambda strip: strip.frame_start)


def selected_strips(obj: bpy.types.Object, objects: Iterable[bpy.types.Object] = ()) -> list[bpy.types.NlaStrip]:
    """The selected strips of ``obj`` that Blender plays (:func:`plays`; not the preview's), by start frame.

    Strips are selected in the NLA editor, which shows every object's tracks;
    selected strips of any other object in ``objects`` are refused, as the
    user may have meant them.
    """
    elsewhere = []
    for other in objects:
        if other == obj or other.animation_data is None:
            continue
        names = [strip.name for track in other.animation_data.nla_tracks for strip in track.strips if strip.select]
        if names:
            elsewhere.append(f"{', '.join(repr(n) for n in names)} of {other.name!r}")
    if elsewhere:
        raise ValueError(
            f"NLA strips of another object are selected: {'; '.join(elsewhere)}. Smart Motion uses the "
            f"strips of the active armature {obj.name!r} only: deselect those, or make their object active"
        )
    return [strip for strip in source_strips(obj) if strip.select and plays(obj, strip)]


def plays(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> bool:
    """Whether Blender's NLA evaluation plays ``strip``: not muted, on an unmuted track, solo respected.

    With a track soloed, only that track plays. A source Smart Motion's
    preview muted counts with the mute it had before the preview, and with
    the solo it had before the preview took it (:func:`solo_track`).
    """
    track = next(t for t in obj.animation_data.nla_tracks if strip.name in t.strips)
    solo = solo_track(obj)
    if track.mute or (solo is not None and track.name != solo):
        return False
    item = strip_settings(obj, strip)
    return not (item.mute_before if item is not None and item.muted_by_preview else strip.mute)


def solo_track(obj: bpy.types.Object) -> str | None:
    """The name of the solo track among the sources, ``None`` if none is.

    While the preview holds the solo, the track that had it before
    (``solo_before``): only one track can be solo, and the preview takes
    it so that Blender plays the preview (:func:`show_preview`).
    """
    anim = obj.animation_data
    solo = next((t for t in (anim.nla_tracks if anim is not None else ()) if t.is_solo), None)
    if solo is None:
        return None
    if is_preview_track(solo):
        return obj.smart_motion.solo_before or None
    return solo.name


def left_out_strips(obj: bpy.types.Object) -> list[str]:
    """Names of the selected strips of ``obj`` that Blender does not play (:func:`plays`), left out."""
    return [strip.name for strip in source_strips(obj) if strip.select and not plays(obj, strip)]


def left_out_text(obj: bpy.types.Object) -> str:
    """``"; left out, as Blender does not play them (muted, or another track solo): 'kick'"`` or ``""``."""
    names = left_out_strips(obj)
    if not names:
        return ""
    return ("; left out, as Blender does not play them (muted, or another track solo): "
            + ", ".join(repr(name) for name in names))


# ---------------------------------------------------------------------------
# Per-strip settings


def strip_settings(obj: bpy.types.Object, strip, *, create: bool = False):
    """The :class:`~.properties.SmartMotionStrip` of ``strip`` (an NLA strip or its name), maybe ``None``.

    Settings are keyed by the strip's name, since a strip cannot hold
    properties. A strip renamed since its settings were last written finds
    them by what it plays and where (:func:`strip_identity`); with
    ``create`` they are re-keyed to its new name, or created if there are
    none, and their identity is brought up to date.
    """
    items = obj.smart_motion.strips
    if isinstance(strip, str):
        item = items.get(strip)
        return _new_settings(items, strip) if item is None and create else item
    item = items.get(strip.name) or _renamed_settings(obj, strip)
    if create:
        if item is None:
            item = _new_settings(items, strip.name)
        item.name = strip.name
        item.identity = strip_identity(strip)
    return item


def _new_settings(items, name: str):
    item = items.add()
    item.name = name
    return item


def _renamed_settings(obj: bpy.types.Object, strip: bpy.types.NlaStrip):
    """Settings left by ``strip`` under a name no strip has any more, if any."""
    identity = strip_identity(strip)
    for item in obj.smart_motion.strips:
        if item.identity == identity and find_strip(obj, item.name) is None:
            return item
    return None


def _prune_settings(obj: bpy.types.Object) -> None:
    """Re-key the settings of renamed strips; drop those of strips that no longer exist."""
    _follow_renames(obj)
    items = obj.smart_motion.strips
    for index in reversed(range(len(items))):
        if find_strip(obj, items[index].name) is None:
            items.remove(index)


def _follow_renames(obj: bpy.types.Object) -> None:
    """Re-key the settings of strips renamed since they were written to the strips' new names."""
    anim = obj.animation_data
    for track in (anim.nla_tracks if anim is not None else ()):
        for strip in track.strips:
            if obj.smart_motion.strips.get(strip.name) is None:
                item = _renamed_settings(obj, strip)
                if item is not None:
                    item.name = strip.name


def strip_identity(strip: bpy.types.NlaStrip) -> str:
    """What a strip plays and where: how its settings recognise it after a rename."""
    return f"{strip_signature(strip)}|{strip.frame_start:g}|{strip.frame_end:g}"


def core_offsets(obj: bpy.types.Object, strip: bpy.types.NlaStrip, neighbours: list | None = None) -> tuple[int, int]:
    """(first, last) core frames of ``strip`` counted from its start: as edited, else its :func:`default_core`
    (among ``neighbours``, as :func:`strip_default_core`)."""
    item = strip_settings(obj, strip)
    if item is not None and item.has_core:
        return item.core_offsets(strip)
    core = strip_default_core(obj, strip, neighbours)
    start = round(strip.frame_start)
    return (core.first - start, core.last - start)


@dataclass(frozen=True)
class Span:
    """What of a strip its default core depends on: its scene frames (both ends sampled) and blends."""

    name: str
    first: int
    last: int
    blend_in: float = 0.0
    blend_out: float = 0.0


@dataclass(frozen=True)
class DefaultCore:
    """A default core in scene frames, end inclusive, and what was taken off the strip, for the panel.

    Empty (``first > last``) where the strip's neighbours cover all of it.
    """

    first: int
    last: int
    taken_off: tuple[str, ...] = ()
    over: str = ""  # an additional motion: the strip it lies inside (see additional_spans)
    parts: str = ""
    group: str = ""  # a strip blended synchronized: the group's name, whose core this is (see sync_groups)

    @property
    def empty(self) -> bool:
        return self.first > self.last

    def why(self) -> str:
        if self.over:
            return f"whole strip: lies inside {self.over!r} and moves its {self.parts}, so it composes over it"
        what = f"group {self.group!r}" if self.group else "strip"
        why = f"{what} minus {', '.join(self.taken_off)}" if self.taken_off else f"whole {what}"
        if self.group:
            why = f"synchronized blend: the core of the {why}"
        return f"no frame left: {why}" if self.empty else why


def default_core(span: Span, earlier: Iterable[Span] = (), later: Iterable[Span] = (), room: int = 0) -> DefaultCore:
    """The core a strip gets until edited, between the other selected strips that play.

    ``earlier`` are those before ``span`` in start order, ``later`` those
    after, on any track. The strip minus its blend-in and blend-out, which
    Blender's auto-blend sets to the overlap with the neighbour, then minus
    what still overlaps any of them: an earlier strip takes the frames up
    to its end off the start, a later one the frames from its start off the
    end (so a strip laid over a longer one cuts the longer one's core where
    it begins, and the longer one covers all of it). Where two strips butt,
    or overlap with neither blending, the core also stops ``room // 2``
    frames (rounded up) short of the frames they share, so that each
    transition gets at least ``room`` frames (the shortest blend) between
    the cores. May come out empty (``DefaultCore.empty``).
    """
    first, last, taken = span.first, span.last, []
    if span.blend_in > 0:
        first += math.ceil(span.blend_in)
        taken.append(f"blend-in {span.blend_in:g}")
    if span.blend_out > 0:
        last -= math.ceil(span.blend_out)
        taken.append(f"blend-out {span.blend_out:g}")
    half = -(-room // 2)
    for previous in earlier:
        if span.first <= previous.last + 1:
            unblended = span.blend_in <= 0 and previous.blend_out <= 0
            limit = previous.last + 1 + (half if unblended else 0)
            if limit > first:
                first = limit
                taken.append(f"{'room to blend' if unblended else 'overlap'} with {previous.name!r}"
                             + (f" (frames {previous.first}-{previous.last}, all of it)" if limit > last else ""))
    for following in later:
        if following.first <= span.last + 1:
            unblended = span.blend_out <= 0 and following.blend_in <= 0
            limit = following.first - 1 - (half if unblended else 0)
            if limit < last:
                last = limit
                taken.append(f"{'room to blend' if unblended else 'overlap'} with {following.name!r}")
    return DefaultCore(first, last, tuple(taken))


def strip_span(strip: bpy.types.NlaStrip) -> Span:
    start = round(strip.frame_start)
    return Span(strip.name, start, start + strip_frame_count(strip) - 1, strip.blend_in, strip.blend_out)


def strip_default_core(obj: bpy.types.Object, strip: bpy.types.NlaStrip, neighbours: list | None = None) -> DefaultCore:
    """:func:`default_core` of ``strip`` among ``neighbours`` (strips in start order), on any track.

    ``neighbours`` default to the strips a synthesis would read now
    (:func:`core_neighbours`). A strip that is not one of them is taken
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
    from ..core.options import SynthesisOptions
    from .convert import scene_fps

    room = round(SynthesisOptions().min_blend_s * scene_fps(bpy.context.scene))
    neighbours = core_neighbours(obj) if neighbours is None else neighbours
    if strip.name not in [s.name for s in neighbours]:
        return default_core(strip_span(strip), room=room)
    groups = sync_groups(obj, neighbours)
    grouped = {s.name: group for group in groups for s in group}
    additional = additional_strips(obj, [s for s in neighbours if s.name not in grouped])
    span = strip_span(strip)
    if strip.name in additional:
        over, parts = additional[strip.name]
        return DefaultCore(span.first, span.last, over=over, parts=parts)
    spans = sequence_spans([s for s in neighbours if s.name not in additional], groups)
    name = group_name(grouped[strip.name]) if strip.name in grouped else strip.name
    k = [s.name for s in spans].index(name)
    core = default_core(spans[k], spans[:k], spans[k + 1:], room)
    return replace(core, group=name) if strip.name in grouped else core


def sequence_spans(strips: list, groups: list) -> list[Span]:
    """The spans of what goes in sequence: each of ``strips`` not in one of ``groups``, and each
    group as one span from its earliest strip's first frame to its latest last frame, by start."""
    grouped = {s.name for group in groups for s in group}
    spans = [strip_span(s) for s in strips if s.name not in grouped]
    spans += [Span(group_name(group), min(strip_span(s).first for s in group), max(strip_span(s).last for s in group))
              for group in groups]
    return sorted(spans, key=lambda span: span.first)


def core_neighbours(obj: bpy.types.Object) -> list[bpy.types.NlaStrip]:
    """The strips default cores are taken among: while a preview is on, its sources that play
    (live updates read those, whatever is selected: selecting a strip to drag it must not
    change the cores); else the selected strips that play, as Synthesize reads them."""
    strips = source_strips(obj)
    sources = [s for s in strips if _is_preview_source(obj, s)]
    if sources:
        return [s for s in sources if plays(obj, s)]
    return [s for s in strips if s.select and plays(obj, s)]


def _is_preview_source(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> bool:
    item = strip_settings(obj, strip)
    return item is not None and item.preview_source


def preview_sources(obj: bpy.types.Object) -> list[bpy.types.NlaStrip]:
    """The strips the preview was synthesized from, and those it left out as Blender did not play them, by start.

    A preview of a file saved by an earlier version has no such flags: its sources are the strips
    it muted (``muted_by_preview``).
    """
    if not has_preview(obj):
        return []
    strips = source_strips(obj)
    flagged = [s for s in strips if _is_preview_source(obj, s)]
    if flagged:
        return flagged
    return [s for s in strips if (item := strip_settings(obj, s)) is not None and item.muted_by_preview]


def additional_spans(spans: list[Span], parts_of: Callable[[int], str | None]) -> dict[int, tuple[int, str]]:
    """``{k: (index of the span it lies in, parts)}`` for each of ``spans`` that core would compose
    as an additional motion (2008, section 8); pure.

    As ``core.synthesize`` decides: the longer spans first, a span wholly inside
    one that goes in sequence is additional when ``parts_of(k)`` (its motion
    alone: :func:`core.synthesize.additional_motion_parts`) names parts; asked
    only for spans inside another. Others go in sequence.
    """
    order = sorted(range(len(spans)), key=lambda k: (-(spans[k].last - spans[k].first), k))
    in_sequence, additional = [], {}
    for k in order:
        span = spans[k]
        base = next((b for b in sorted(in_sequence) if spans[b].first <= span.first and span.last <= spans[b].last),
                    None)
        parts = parts_of(k) if base is not None else None
        if parts:
            additional[k] = (base, parts)
        else:
            in_sequence.append(k)
    return additional


def additional_strips(obj: bpy.types.Object, strips: list) -> dict[str, tuple[str, str]]:
    """``{strip name: (name of the strip it lies in, parts)}`` of the additional motions among ``strips``
    (:func:`additional_spans`); changes nothing.

    Whether a strip's motion qualifies is read once per what it plays
    (:func:`additional_parts_of_strip`). A strip that cannot be read does not
    qualify here (synthesis says what is wrong with it).
    """
    spans = [strip_span(s) for s in strips]
    found = additional_spans(spans, lambda k: additional_parts_of_strip(obj, strips[k]))
    return {strips[k].name: (strips[b].name, parts) for k, (b, parts) in found.items()}


# what a strip's motion lends as an additional motion, by what it plays (additional_parts_of_strip)
_ADDITIONAL_PARTS: dict[tuple, str | None] = {}


def additional_parts_of_strip(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> str | None:
    """``core.synthesize.additional_motion_parts`` of what ``strip`` plays on ``obj``, ``None`` if it
    cannot be read.

    The panel draws default cores often, so the answer is kept per armature,
    what the strip plays (:func:`strip_signature`, slot, length), the action's
    keys (:func:`.convert.action_digest`), Bone Mapping and frame rate.
    """
    from ..core.synthesize import additional_motion_parts
    from .convert import action_digest, scene_fps

    if strip.type != 'CLIP' or strip.action is None or blends_synchronized(obj, strip):
        return None  # (a strip blended synchronized never composes, even alone)
    key = (obj.name, obj.data.name, strip_signature(strip), strip_frame_count(strip),
           None if strip.action_slot is None else strip.action_slot.identifier, action_digest(strip.action),
           obj.smart_motion.bone_mapping, scene_fps(bpy.context.scene))
    if key not in _ADDITIONAL_PARTS:
        from .convert import strip_to_motion

        if len(_ADDITIONAL_PARTS) > 256:
            _ADDITIONAL_PARTS.clear()  # keys of edited actions and strips pile up otherwise

        try:
            motion = strip_to_motion(obj, strip)
            _ADDITIONAL_PARTS[key] = additional_motion_parts(motion, find_armature_rig(obj, motion))
        except ValueError:
            _ADDITIONAL_PARTS[key] = None
    return _ADDITIONAL_PARTS[key]


def strip_group(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> list | None:
    """The synchronized group (:func:`sync_groups`) ``strip`` is one of among the strips a synthesis
    would read now (:func:`core_neighbours`), or ``None``."""
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


def whole_strip_if_empty(offsets: tuple[int, int], strip: bpy.types.NlaStrip) -> tuple[int, int]:
    """``offsets`` (first, last from the strip's start), or the whole strip where they hold no frame."""
    first, last = offsets
    return (0, strip_frame_count(strip) - 1) if first > last else offsets


def strip_signature(strip: bpy.types.NlaStrip) -> str:
    """What a strip plays, apart from where: its phases are out of date when this changes."""
    action = strip.action.name if strip.action is not None else ""
    return "|".join(
        [action, f"{strip.action_frame_start:g}", f"{strip.action_frame_end:g}", f"{strip.scale:g}",
         f"{strip.repeat:g}", str(int(strip.use_reverse))]
    )


# ---------------------------------------------------------------------------
# Rig


def parse_bone_mapping(text: str) -> dict[str, str]:
    """``"left.ankle=foot.L, right.ankle=foot.R"`` -> ``{"left.ankle": "foot.L", ...}``.

    Pairs are separated by commas, semicolons or new lines. A piece without
    ``=`` continues the previous value, so ``spine=Spine, Spine1`` lists two
    spine bones. A role set to ``none`` (toes, clavicles) means "no such bone".
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


def find_armature_rig(obj: bpy.types.Object, motion):
    """The joint roles of ``obj`` (``core.rig.find_rig`` with the armature's Bone Mapping)."""
    from ..core.rig import RigError, find_rig

    overrides = parse_bone_mapping(obj.smart_motion.bone_mapping)
    try:
        return find_rig(motion, overrides=overrides or None)
    except RigError as error:
        raise RigError(
            f"armature {obj.name!r}: {error}. In Blender, map the bones in the Smart Motion panel's "
            "Bone Mapping field, e.g. left.hip=thigh_L, left.knee=shin_L, left.ankle=foot_L, "
            "right.hip=thigh_R, right.knee=shin_R, right.ankle=foot_R"
        ) from None


# ---------------------------------------------------------------------------
# Strips to clips, analysis, synthesis


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
    from .convert import strip_to_motion

    read = read or strip_to_motion
    neighbours = strips if neighbours is None else neighbours
    clips = []
    for strip in strips:
        start = round(strip.frame_start)
        if abs(strip.frame_start - start) > _FRAME_TOLERANCE:
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
        clips.append(Clip(motion, start, (first, last), strip.name, current=performed_current(obj, strip)))
    return clips


# ---------------------------------------------------------------------------
# Synchronized groups: strips played at the same time, blended as one (Ménardais et al. 2004, MKM)


def blends_synchronized(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> bool:
    """Whether ``strip`` has "Blend synchronized with overlapping strips" on."""
    item = strip_settings(obj, strip)
    return item is not None and item.sync_blend


def sync_groups(obj: bpy.types.Object, strips: list) -> list[list[bpy.types.NlaStrip]]:
    """The synchronized groups among ``strips``: those with the option on (:func:`blends_synchronized`)
    that overlap in time, directly or through a chain of overlaps, two or more to a group; each
    group in start order, the groups by start. A strip with the option on that overlaps none of
    the others with it on is no group: it goes in sequence as any strip (and does not compose).

    Overlapping means sharing more than one frame: strips that butt (one starts on the frame the
    other ends on, as strips one after another on a track do) play one after the other, not at
    the same time, and go in sequence."""
    on = sorted((s for s in strips if blends_synchronized(obj, s)), key=lambda s: (s.frame_start, s.name))
    groups, last = [], None
    for strip in on:
        span = strip_span(strip)
        if groups and span.first < last:  # (sorted by start: overlapping the group's span is overlapping one of it)
            groups[-1].append(strip)
            last = max(last, span.last)
        else:
            groups.append([strip])
            last = span.last
    return [group for group in groups if len(group) > 1]


def group_name(group: list) -> str:
    """``"walk + run"``: the group's strips' names joined, in start order."""
    return " + ".join(s.name for s in group)


def by_track_from_top(obj: bpy.types.Object, strips: list) -> list:
    """``strips`` the upper track first, as the NLA evaluates (on one track: by start)."""
    order = {t.name: k for k, t in enumerate(obj.animation_data.nla_tracks)}
    track = {s.name: t.name for t in obj.animation_data.nla_tracks for s in t.strips}
    return sorted(strips, key=lambda s: (-order[track[s.name]], s.frame_start))


def strip_influences(strip: bpy.types.NlaStrip, frames) -> "np.ndarray":
    """The influence ``(T,)`` Blender gives ``strip`` at scene frames ``frames``: with Animated
    Influence its ``influence`` F-curve (its value where it has no curve), else its blend-in and
    blend-out ramps (1 between them), as the NLA computes a strip's influence.

    Read in scene frames, as the NLA evaluates a strip's controls, and, where the NLA holds the
    strip (its extrapolation), at the strip's first frame before it and its last after it: a
    synchronized clip plays on past its strip's end where the time warp slows it (it stops at
    its own last frame: the group passes each strip's end), with the influence the strip ends
    with. Where the NLA does not play it, 0: before it unless it is Hold (Hold
    Forward holds only after), after it when it is Nothing."""
    import numpy as np

    frames = np.asarray(frames, dtype=np.float64)
    held = np.clip(frames, strip.frame_start, strip.frame_end)
    if not strip.use_animated_influence:
        out = _blend_ramps(strip, held)
    elif (curve := strip.fcurves.find("influence")) is None:
        out = np.full(len(frames), float(strip.influence))
    else:
        # (one evaluation per frame: Blender has no bulk evaluation of an F-curve)
        out = np.clip([curve.evaluate(float(f)) for f in held], 0.0, 1.0)
    out[(frames < strip.frame_start) & (strip.extrapolation != 'HOLD')] = 0.0
    out[(frames > strip.frame_end) & (strip.extrapolation == 'NOTHING')] = 0.0
    return out


def _blend_ramps(strip: bpy.types.NlaStrip, frames) -> "np.ndarray":
    """The influence of a strip without Animated Influence at scene frames ``frames`` within it: its
    blend-in rising from 0 at its start, its blend-out falling to 0 at its end, 1 between (the
    NLA's nlastrip_get_influence: the blend-in taken first where the two meet)."""
    import numpy as np

    frames = np.asarray(frames, dtype=np.float64)
    blend_in, blend_out = abs(strip.blend_in), abs(strip.blend_out)
    out = np.ones(len(frames))
    if blend_out > 0.0:
        ending = frames >= strip.frame_end - blend_out
        out[ending] = np.abs(strip.frame_end - frames[ending]) / blend_out
    if blend_in > 0.0:
        starting = frames <= strip.frame_start + blend_in
        out[starting] = np.abs(frames[starting] - strip.frame_start) / blend_in
    return out


def blending_key(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> tuple:
    """What a synchronized blend reads of ``strip`` beyond what it plays: the option, and with it on
    its extrapolation (where the NLA holds it), its Blending (the plan warns of all but Replace),
    whether the influence is animated, and its F-curve's keys (and handles) or, not animated, the
    blend-in and blend-out that ramp it.

    Not ``strip.influence`` itself: Blender sets it at every frame it plays (the key would change
    with the frame), from the curve or the ramps (:func:`strip_influences`); only a curve-less
    animated strip reads it."""
    if not blends_synchronized(obj, strip):
        return (False,)
    parts = strip_part_weights(obj, strip)
    return _influence_key(strip) + (None if parts is None else tuple(sorted(parts.items())),)


def strip_part_weights(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> dict | None:
    """The strip's weights per body part for ``core.mkm.blend_clips`` (``{part: factor}``), or ``None``
    where Weigh body parts is off (core's defaults: 1, and 0 on the legs of a strip standing still)."""
    item = strip_settings(obj, strip)
    return None if item is None else item.part_weights()


def _influence_key(strip: bpy.types.NlaStrip) -> tuple:
    """:func:`blending_key`'s part for the influence (the option on)."""
    if not strip.use_animated_influence:
        return (True, strip.extrapolation, strip.blend_type, False, strip.blend_in, strip.blend_out)
    curve = strip.fcurves.find("influence")
    if curve is None:
        return (True, strip.extrapolation, strip.blend_type, True, round(float(strip.influence), 6))
    keys = tuple((tuple(k.co), tuple(k.handle_left), tuple(k.handle_right), k.interpolation, k.easing)
                 for k in curve.keyframe_points)
    return (True, strip.extrapolation, strip.blend_type, True, keys, curve.extrapolation, curve.mute,
            len(curve.modifiers))


def sequence_clips(obj: bpy.types.Object, strips: list, fps: float | None = None,
                   read: Callable | None = None, kept: dict | None = None) -> tuple[list, tuple[dict, ...]]:
    """What Synthesize joins: ``(clips by start, the groups' plans)``. A strip is a clip as
    :func:`strip_clips` reads it; each synchronized group (:func:`sync_groups`) is one clip, the
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
    in turn (:func:`group_weights`; a number where it does not change), each ended where
    its strip ends (its repeats included: a cyclic strip does not repeat past it). The clip
    starts at the group's earliest strip start, and its core is :func:`group_core`: over
    its strips' edited cores where any has one, else the default core of the group's span
    among ``neighbours``, in scene frames, cut to the blend.

    ``kept`` (a dict, or ``None``) keeps each group's blend by what it read: the same motions
    (the very objects ``read`` returned: live updates' reader keeps them), starts, tracks,
    influences (:func:`blending_key`) and Bone Mapping give the kept blend back, so that
    dragging another strip does not blend the group again.
    """
    import numpy as np

    from ..core.mkm import BODY_PARTS, blend_clips
    from ..core.synthesize import Clip
    from .convert import strip_to_motion

    read = read or strip_to_motion
    ordered = by_track_from_top(obj, group)
    for strip in ordered:
        if abs(strip.frame_start - round(strip.frame_start)) > _FRAME_TOLERANCE:
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


def not_replace_warnings(ordered: list) -> list[str]:
    """A warning for the strips of a group whose Blending is not Replace: the group weighs every strip
    as Replace mode does (:func:`group_weights`), so the NLA shows them otherwise than it blends."""
    modes = {}
    for strip in ordered:
        if strip.blend_type != 'REPLACE':
            modes.setdefault(strip.blend_type.title(), []).append(repr(strip.name))
    return [f"{', '.join(names)} blend{'s' if len(names) == 1 else ''} in {mode} mode in the NLA, but the group "
            "weighs its strips as Replace mode does (the upper one's influence u, 1 − u beneath): set Blending "
            "to Replace on the strip (NLA sidebar, Strip tab) for the NLA to show what the group blends"
            for mode, names in modes.items()]


def edited_group_core(obj: bpy.types.Object, group: list) -> tuple[int, int, list[str]] | None:
    """``(first, last, names)``: the scene frames the edited cores of ``group``'s strips span (from the
    first one's first frame to the last one's last) and the strips that have one, by start; ``None``
    where none of them has an edited core. Raises ``ValueError`` for an edited core reaching past its
    strip, as :func:`strip_clips` does."""
    edited = []
    for strip in group:
        item = strip_settings(obj, strip)
        if item is None or not item.has_core:
            continue
        a, b = item.core_offsets(strip)
        start = round(strip.frame_start)
        if b > strip_frame_count(strip) - 1:
            raise ValueError(
                f"the core of NLA strip {strip.name!r}, frames {start + a}-{start + b}, reaches past the strip, "
                f"which ends at frame {start + strip_frame_count(strip) - 1}; edit the core in the Smart Motion "
                "panel (or Default Core), or lengthen the strip")
        edited.append((start + a, start + b, strip.name))
    if not edited:
        return None
    return min(e[0] for e in edited), max(e[1] for e in edited), [e[2] for e in edited]


def group_core(obj: bpy.types.Object, group: list, neighbours: list, first: int, n: int) -> tuple:
    """``((first, last) scene frames, where it comes from, a warning or "")``: the core of a synchronized
    group whose blend plays ``n`` frames from scene frame ``first``.

    Where any of its strips has an edited core, the group's core runs over the scene frames
    those cores span (:func:`edited_group_core`: the first's start to the last's end); else it
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


def group_weights(obj: bpy.types.Object, ordered: list, frames) -> tuple:
    """``(influences, playing, weights)``, each ``(K, T)``, of a group's strips ``ordered`` (upper
    track first, :func:`by_track_from_top`) at scene frames ``frames (T,)``: each strip's own
    influence (:func:`strip_influences`), whether its track plays it, and the weight the NLA's
    Replace mode gives it (``core.mkm.replace_contributions`` over the tracks, upper first).

    A track plays one strip at a time: the one that covers the frame, else the last one that
    ended before it (held until the next one starts), else, before them all, its first. So
    strips of one track follow one another, as the NLA plays them: a track's influence is that
    of the strip it plays, and its share goes to that strip alone (0 to the others of the track).
    """
    import numpy as np

    from ..core.mkm import replace_contributions

    track_of = {s.name: t.name for t in obj.animation_data.nla_tracks for s in t.strips}
    tracks = list(dict.fromkeys(track_of[s.name] for s in ordered))  # (upper first, as ``ordered``)
    frames = np.asarray(frames, dtype=np.float64)
    influences = np.stack([strip_influences(s, frames) for s in ordered])
    playing = np.zeros(influences.shape, dtype=bool)
    row = np.empty(len(ordered), dtype=np.int64)
    for i, track in enumerate(tracks):
        members = [k for k, s in enumerate(ordered) if track_of[s.name] == track]  # (by start)
        starts = np.array([ordered[k].frame_start for k in members])
        played = np.maximum(np.searchsorted(starts, frames, side='right') - 1, 0)
        for j, k in enumerate(members):
            playing[k] = played == j
            row[k] = i
    on_track = np.zeros((len(tracks), len(frames)))
    np.add.at(on_track, row, np.where(playing, influences, 0.0))
    weights = np.where(playing, replace_contributions(on_track)[row], 0.0)
    return influences, playing, weights


def weights_varying(obj: bpy.types.Object, ordered: list, frames, influences, playing, weights) -> dict[str, str]:
    """``{strip name: why its weight varies}`` for the strips of a group ``ordered`` whose weight
    changes over the group's scene frames ``frames`` (:func:`group_weights`' arrays): ``"animated"``
    where its own influence varies along its Animated Influence curve, ``"ramped"`` where it varies
    along its blend-in and blend-out (Animated Influence off), ``"extrapolation Nothing"`` (or
    ``Hold Forward``) where the NLA does not hold it outside its frames; else, its own influence constant,
    ``"in turn with 'b'"`` where its track plays another of the group before or after it, and
    ``"under 'run'"`` where strips above take a share that varies."""
    import numpy as np

    own = [bool(np.ptp(u[p]) > 1e-9) if p.any() else False for u, p in zip(influences, playing)]
    track_of = {s.name: t.name for t in obj.animation_data.nla_tracks for s in t.strips}
    out = {}
    for k, (strip, w) in enumerate(zip(ordered, weights)):
        if not np.ptp(w) > 1e-9:
            continue
        if own[k]:
            # (within the strip its curve or ramps; outside it, the NLA not holding it)
            within = (frames >= strip.frame_start) & (frames <= strip.frame_end) & playing[k]
            why = [("animated" if strip.use_animated_influence else "ramped")] \
                if within.any() and np.ptp(influences[k][within]) > 1e-9 else []
            if strip.extrapolation != 'HOLD' and (playing[k] & ~within).any():
                why.append(f"extrapolation {strip.extrapolation.replace('_', ' ').title()}")
            out[strip.name] = ", ".join(why)
            continue
        why = []
        if not playing[k].all():
            turns = [repr(s.name) for s in ordered if s != strip and track_of[s.name] == track_of[strip.name]]
            why.append(f"in turn with {', '.join(turns)}")
        above = [repr(s.name) for s, moving in zip(ordered, own) if moving and track_of[s.name] != track_of[strip.name]]
        if above:
            why.append(f"under {', '.join(above)}")
        out[strip.name] = ", ".join(why)
    return out


def group_lines(group: dict, width: int = 12) -> list[str]:
    """The panel's lines for one synchronized group of a plan: its combined sequence (the first
    ``width`` steps), delays and weights (influences' share at the group's start, and why one
    varies: :func:`weights_varying`), and the strips that start past their first frame, in step
    with the others."""
    combined = group["combined"]
    sequence = " ".join(combined[:width]) + (" …" if len(combined) > width else "")
    varying = group.get("varying", {})
    weights = ", ".join(f"{name} {w:.2f}" + (f" {varying[name]}" if name in varying else "")
                        for name, w in group["weights"].items())
    delays = [f"{name} by {d}" for name, d in group["delays"].items() if d]
    entered = [f"{name} at its frame {f}" for name, f in group.get("entered", {}).items()]
    parts = [f"{name} " + ", ".join(f"{part} {f:g}" for part, f in factors.items() if f != 1.0)
             for name, factors in group.get("part_weights", {}).items()]
    start = group["start"]
    # (a strip ending before the group does fades out there, the others taking its weight)
    ends = [f"{name} at {start + e:.0f}" for name, e in group.get("ends", {}).items()
            if e < group["frames"] - 1]
    return [
        f"{group['name']} synchronized, frames {start}-{start + group['frames'] - 1}",
        f"    {sequence}",
        f"    weights {weights}",
        *([f"    parts: {'; '.join(parts)}"] if parts else []),
        f"    delayed: {', '.join(delays)}" if delays else "    no delay",
        *([f"    starts in step: {', '.join(entered)}"] if entered else []),
        *([f"    fades out: {', '.join(ends)}"] if ends else []),
        *(f"    {note}" for note in group.get("notes", ())),
    ]


@dataclass(frozen=True, eq=False)
class Synthesis:
    """A ``core.synthesize.Result`` (or core.resynthesis's) and the synchronized groups that played as
    one clip in it (:func:`group_clip`'s plans): what the preview, the bake and the plan box read."""

    result: object
    groups: tuple = ()

    @property
    def motion(self):
        return self.result.motion

    @property
    def plan(self):
        return self.result.plan

    @property
    def start(self) -> int:
        return self.result.start

    @property
    def contacts(self):
        return self.result.contacts


def plan_dict(result) -> dict:
    """The plan of ``result`` (``Plan.to_dict()``) with its synchronized groups under ``"groups"``."""
    plan = result.plan.to_dict()
    plan["groups"] = list(getattr(result, "groups", ()))
    return plan


def plan_json(result) -> str:
    return json.dumps(plan_dict(result))


def performed_current(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> int | None:
    """t_current of eq. (17) for a strip Perform added: the frame being played when it was added.

    Its blends start after that frame, so the performance up to it stays as
    it was played whatever is added later. Only while the strip is still
    what and where Perform put it (:func:`strip_identity`): moved, trimmed or
    re-timed, the user has taken it out of the performance and it blends as
    any strip. ``None`` for every other strip.
    """
    item = strip_settings(obj, strip)
    if item is None or not item.performed_at or item.performed_at != strip_identity(strip):
        return None
    return item.performed_current


def mark_performed(obj: bpy.types.Object, strip: bpy.types.NlaStrip, current: int) -> None:
    """Record that Perform added ``strip`` while scene frame ``current`` played (:func:`performed_current`)."""
    item = strip_settings(obj, strip, create=True)
    item.performed_current = current
    item.performed_at = strip_identity(strip)


def analyze_strips(obj: bpy.types.Object, strips: list) -> dict:
    """``{strip name: core.analysis.Analysis}`` of each strip (2008, section 4); changes nothing."""
    from ..core.analysis import analyze
    from .convert import strip_to_motion

    if not strips:
        raise ValueError(f"no NLA strip of armature {obj.name!r} is selected; select the strips to analyse")
    # (a strip of a synchronized group has no core of its own to check: the group's may reach past it)
    grouped = {s.name for group in sync_groups(obj, strips) for s in group}
    motions = {clip.name: clip.motion for clip in strip_clips(obj, [s for s in strips if s.name not in grouped],
                                                              neighbours=strips)}
    motions.update({s.name: strip_to_motion(obj, s) for s in strips if s.name in grouped})
    rig = find_armature_rig(obj, motions[strips[0].name])
    return {s.name: analyze(motions[s.name], rig) for s in strips}


def record_analysis(obj: bpy.types.Object, strips: list, analyses: dict) -> None:
    """Store each strip's support phases with its settings (strip frames)."""
    _prune_settings(obj)
    for strip in strips:
        item = strip_settings(obj, strip, create=True)
        item.phases.clear()
        for segment in analyses[strip.name].segments:
            phase = item.phases.add()
            phase.phase, phase.start, phase.end = segment.phase.name, int(segment.start), int(segment.end)
        item.analysed = strip_signature(strip)


def phases_text(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> str:
    """``"DS 1-16, LS 17-28, ..."`` in scene frames, or ``""`` if the strip was not analysed."""
    item = strip_settings(obj, strip)
    if item is None or not item.phases:
        return ""
    start = round(strip.frame_start)
    return ", ".join(f"{p.phase} {start + p.start}-{start + p.end}" for p in item.phases)


def synthesize_strips(obj: bpy.types.Object, strips: list, responsiveness: float):
    """The ``core.synthesize.Result`` of the strips on the scene's timeline; changes nothing.

    Raises ``ValueError`` for fewer than two strips (a synchronized group of
    two or more is enough: it plays as one clip), a strip that cannot be
    read, a group that cannot be blended, or a rig whose legs cannot be found. Strips whose cores overlap an
    earlier core are not errors: the plan lists them as rejected.
    """
    from ..core.synthesize import synthesize

    if not sync_groups(obj, strips):
        _require_two(obj, strips, "select at least two strips that play to synthesize a motion from them")
    clips, groups = sequence_clips(obj, strips)
    rig = find_armature_rig(obj, clips[0].motion)
    return Synthesis(synthesize(clips, responsiveness=responsiveness, rig=rig), groups)


def _require_two(obj: bpy.types.Object, strips: list, what_to_do: str) -> None:
    """Raise ``ValueError`` saying how many strips are selected, which are left out, and ``what_to_do``,
    for fewer than two."""
    if len(strips) < 2:
        raise ValueError(
            f"{len(strips)} NLA strip{'' if len(strips) == 1 else 's'} of armature {obj.name!r} selected"
            f"{left_out_text(obj)}; {what_to_do}"
        )


def record_plan(obj: bpy.types.Object, strips: list, result) -> None:
    """Keep the plan on the armature (the panel shows it) and settings for every source strip."""
    _prune_settings(obj)
    for strip in strips:
        strip_settings(obj, strip, create=True)
    obj.smart_motion.plan_json = plan_json(result)


def plan_warnings(plan: dict) -> list[str]:
    """What in ``plan`` (``Plan.to_dict()``) the user must hear about, one line each, or ``[]``.

    Every rejected strip and why; the plan's warnings about the timeline;
    per pair its warning and a gap whose quality figures are flagged against
    their references (``core.quality``; never against the range search's
    limits at W, which move with W on a motion that does not change); and a
    synthesis left with one strip, which joins nothing.
    """
    from ..core.quality import GapQuality

    lines = [f"strip {r['clip']!r} rejected: {r['reason']}" for r in plan["rejected"]]
    lines += plan.get("warnings", ())
    lines += [f"synchronized group {g['name']!r}: {w}" for g in plan.get("groups", ()) for w in g.get("warnings", ())]
    for pair in plan["pairs"]:
        between = f"{pair['prev']!r} → {pair['next']!r}"
        if pair.get("warning"):
            lines.append(f"{between}: {pair['warning']}")
        if pair.get("quality"):
            flags = GapQuality.from_dict(pair["quality"]).flags
            if flags:
                first, last = pair["gap"]
                lines.append(f"{between}: the gap {first}-{last} has {', '.join(flags)}; "
                             "give the clips more room or move the cores")
    kept = [name for name in plan["clips"] if name not in {r["clip"] for r in plan["rejected"]}]
    if len(kept) == 1 and kept[0] not in {g["name"] for g in plan.get("groups", ())}:
        lines.append(f"only strip {kept[0]!r} is left, so nothing is joined: it plays as it is; "
                     "fix the rejections above to synthesize")
    return lines


def composition_lines(composition: dict) -> list[str]:
    """The panel's lines for one composition of a plan (``Composition.to_dict()``)."""
    (in0, in1), (out0, out1) = composition["blend_in"], composition["blend_out"]
    spine = composition["spine_vibration_deg"]
    scaled = composition.get("vertical_scale", 1.0)
    return [
        f"{composition['clip']} composed over {composition['base']}: {composition['parts']}",
        f"    blend in {in0}-{in1}, out {out0}-{out1}",
        f"    vibration: pelvis {composition['pelvis_vibration']:.3g}"
        + (f", spine {spine:.1f}°" if spine else "")
        + (f", vertical kept {scaled:.0%} (legs)" if scaled < 1.0 else ""),
    ]


def composed_text(obj: bpy.types.Object, name: str) -> str:
    """``"composed over 'walk' (right arm)"`` if the last synthesis composed strip ``name``, else ``""``."""
    if not obj.smart_motion.plan_json:
        return ""
    plan = json.loads(obj.smart_motion.plan_json)
    found = next((c for c in plan.get("compositions", ()) if c["clip"] == name), None)
    return f"composed over {found['base']!r} ({found['parts']})" if found else ""


def signature_parts(
    obj: bpy.types.Object, strips: list, responsiveness: float, preview: list | None = None,
) -> Iterator[str]:
    """Hashes of everything :func:`synthesize_strips` reads, cheapest first: same hashes, same result.

    Yields, lazily, so that a comparison stops at the first difference:

    1. the setup: per strip in order its name and type, its action's name and
       slot, where it sits and what part of the action it plays (frames,
       action range, scale, repeat, reverse, animated time), its core and
       the frame Perform added it at (:func:`performed_current`);
       the armature (bones, rest pose, rotation modes,
       :func:`.convert.armature_digest`), its name and Bone Mapping, the
       responsiveness, the scene's fps and unit scale, the extension's code;
    2. the strips' actions: every key and F-curve setting
       (:func:`.convert.action_digest`, keys read in bulk);
    3. with ``preview`` (the preview's segment actions, :mod:`.preview`), the
       same of those actions.

    The option to blend synchronized, and with it on the strip's influence
    and its F-curve's keys (:func:`blending_key`).
    Not the strips' mute flags, influence or blending as such: mutes decide
    which strips are passed in, blends and neighbours reach the synthesis
    through the default cores, which are hashed (the preview mutes the
    sources itself). Changes nothing.
    """
    from .convert import action_digest, armature_digest, scene_fps

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
        )))
    yield _hashed(setup)
    actions = {strip.action.session_uid: strip.action for strip in strips if strip.action is not None}
    # once per action, however many strips play it
    yield _hashed([action_digest(action) for action in actions.values()])
    if preview is not None:
        yield _hashed([action_digest(action) for action in preview])


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


def wrapped(text: str, width: int = 44) -> list[str]:
    """``text`` in lines of at most ``width`` characters, for panel labels."""
    return textwrap.wrap(text, width) or [""]


# ---------------------------------------------------------------------------
# As soon as possible (2014 section 5, eq. 17)


@dataclass(frozen=True)
class Placement:
    """Where :func:`asap_placement` puts an action: its start and what it had to wait for.

    start   scene frame of the new strip's first frame.
    after   the frame its blends start after: the playhead, or the last core's end when later.
    waited  what ``after`` is, for the report (``"the playhead"``, ``"the core of 'walk'"``).
    clip    the new clip, its core the whole action (it has no neighbour to lose frames to).
    cores   each strip's core offsets the placement assumed, by strip name.
    """

    start: int
    after: int
    waited: str
    clip: object
    cores: dict


def addable_actions(obj: bpy.types.Object | None = None) -> list[bpy.types.Action]:
    """Every action of the file but Smart Motion's previews, by name: what Add as Soon as Possible offers."""
    previews = preview_actions()
    return sorted((a for a in bpy.data.actions if a not in previews), key=lambda a: a.name)


def preview_actions() -> set:
    """Every action of the file that is (a segment of) an armature's preview."""
    from .preview import segments

    return {a for o in bpy.data.objects if o.type == 'ARMATURE'
            for a in [o.smart_motion.preview_action, *segments(preview_track(o))] if a is not None}


def preview_segments(obj: bpy.types.Object) -> list[bpy.types.Action]:
    """``obj``'s preview's segment actions in frame order (:mod:`.preview`); ``[]`` without one."""
    from .preview import segments

    if obj.smart_motion.preview_action is None:
        return []
    return segments(preview_track(obj)) or [obj.smart_motion.preview_action]


def asap_placement(obj: bpy.types.Object, strips: list, action: bpy.types.Action, responsiveness: float,
                   current: int, read: Callable | None = None, place: Callable | None = None) -> Placement:
    """The earliest start of ``action`` after ``strips`` (as Synthesize reads them) whose blends start
    after scene frame ``current`` (eq. 17); changes nothing. ``read`` reads a strip as in
    :func:`strip_clips`, ``place(clips, clip, responsiveness=, t_current=, rig=)`` places it
    (``core.synthesize.as_soon_as_possible`` when ``None``); live updates pass theirs, which keep
    what they read and synthesized (:func:`.live.reader`, :func:`.live.placer`).

    Raises ``ValueError`` for no strips, a strip that cannot be read, an action
    not for this armature (:func:`.convert.action_to_motion`) or a rig whose
    legs cannot be found.
    """
    from ..core.synthesize import Clip, as_soon_as_possible
    from .convert import action_to_motion

    if not strips:
        raise ValueError(
            f"no NLA strip of armature {obj.name!r} is selected{left_out_text(obj)}; select the strips that play "
            f"before {action.name!r} (Synthesize joins the same ones)"
        )
    clips, _ = sequence_clips(obj, strips, read=read)  # (a synchronized group is one clip, as Synthesize joins it)
    clip = Clip(action_to_motion(obj, action), 0, None, action.name)
    rig = find_armature_rig(obj, clips[0].motion)
    start = (place or as_soon_as_possible)(clips, clip, responsiveness=responsiveness, t_current=current, rig=rig)
    last = max(clips, key=lambda c: c.start + c.core_range[1])
    core_end = last.start + last.core_range[1]
    after, waited = (current, "the playhead") if current >= core_end else (core_end, f"the core of {last.name!r}")
    return Placement(start, after, waited, replace(clip, start=start), {c.name: c.core_range for c in clips})


def add_strip(obj: bpy.types.Object, action: bpy.types.Action, placement: Placement) -> bpy.types.NlaStrip:
    """A new strip playing ``action`` from ``placement.start``, selected, on the first source track with
    room that plays, else on a new track above the sources (below the preview).

    Its core is the whole strip, as placed. A strip whose default core the new
    one would cut (it overlaps it) keeps the core the placement assumed, set
    as an edited core (Default Core gives it back). No strip or action is
    otherwise changed.
    """
    from .convert import slot_for

    first, last = placement.start, placement.clip.end
    anim = obj.animation_data or obj.animation_data_create()
    track = next((t for t in anim.nla_tracks if _has_room(obj, t, first, last)), None)
    if track is None:
        sources = [t for t in anim.nla_tracks if not is_preview_track(t)]
        track = anim.nla_tracks.new(prev=sources[-1] if sources else None)
        track.name = f"[Smart Motion] {action.name}"
    strip = track.strips.new(action.name, first, action)
    if strip.action_slot is None:
        strip.action_slot = slot_for(obj, action, None)
    strip.select = True
    item = strip_settings(obj, strip, create=True)
    item.core_first, item.core_last = placement.clip.core_range
    item.has_core = True
    for name, offsets in placement.cores.items():
        other = find_strip(obj, name)
        if other is not None and core_offsets(obj, other) != offsets:
            kept = strip_settings(obj, other, create=True)
            kept.core_first, kept.core_last = offsets
            kept.has_core = True
    return strip


def _has_room(obj: bpy.types.Object, track: bpy.types.NlaTrack, first: int, last: int) -> bool:
    """Whether ``track`` is a source track that plays and has no strip over scene frames ``first..last``."""
    return _plays_track(obj, track) and all(s.frame_end < first or s.frame_start > last for s in track.strips)


def placement_text(action: bpy.types.Action, placement: Placement) -> str:
    """``"added 'kick' at frame 212, as soon as it can blend after frame 180 (the playhead)"``."""
    return (f"added {action.name!r} at frame {placement.start}, as soon as it can blend after frame "
            f"{placement.after} ({placement.waited})")


# ---------------------------------------------------------------------------
# Pack Selected Strips (2014 section 5, one strip after another)


@dataclass(frozen=True)
class Move:
    """Where :func:`pack_placements` puts one strip.

    name     the strip.
    before   its start now; ``start`` its start once packed (scene frames).
    track    the track it ends on; ``new_track`` when the pack makes that track.
    blocked  why it leaves its own track (``"'bow' lies there on 'clips 1'"``), else ``""``.
    over     for an additional motion (2008, section 8): the strip it lies inside and moves with.
    """

    name: str
    before: int
    start: int
    track: str
    new_track: bool = False
    blocked: str = ""
    over: str = ""

    @property
    def moved(self) -> bool:
        return self.start != self.before


@dataclass(frozen=True)
class Packing:
    """:func:`pack_placements`' answer: the moves in pack order and each strip's core as the placement assumed."""

    moves: tuple[Move, ...]
    cores: dict


def pack_placements(obj: bpy.types.Object, strips: list, responsiveness: float) -> Packing:
    """Each of ``strips`` (as Synthesize reads them) re-timed as soon as possible after the ones
    before it (2014, section 5); changes nothing.

    In the order of their starts now: the first stays, each next one starts
    where ``core.synthesize.as_soon_as_possible`` puts it after the clips before
    it as placed, its core the one it has now (edited, or its default core in
    the layout as it is). The playhead is not a limit (no eq. 17): packing
    re-times a timeline being edited, not one being played. An additional
    motion (:func:`additional_strips`) is not a clip of the sequence: it moves
    with the strip it lies inside, and so keeps composing over it.

    Each moved strip's track is chosen as :func:`pack_tracks` says. Raises
    ``ValueError`` (nothing changed) for fewer than two strips, a synchronized
    group among them (:func:`sync_groups`: it would have to move as one), a strip that
    cannot be read (another skeleton's action, no action, ...), a rig whose
    legs cannot be found, or a strip that must change track with animated
    influence.
    """
    from ..core.synthesize import as_soon_as_possible

    _require_two(obj, strips, "select the strips to pack, at least two that play")
    groups = sync_groups(obj, strips)
    if groups:
        raise ValueError(
            f"Pack does not re-time synchronized groups: {', '.join(repr(group_name(g)) for g in groups)} of "
            f"armature {obj.name!r} blend as one clip; deselect their strips, or turn off 'Blend synchronized "
            "with overlapping strips' on them, to pack the others")
    # nor is the frame a strip was performed at: moved, it blends as any strip (performed_current)
    clips = [replace(clip, current=None) for clip in strip_clips(obj, strips)]
    rig = find_armature_rig(obj, clips[0].motion)
    additional = additional_strips(obj, strips)
    placed = []
    for clip in clips:
        if clip.name in additional:
            continue
        if placed:
            clip = replace(clip, start=as_soon_as_possible(placed, clip, responsiveness=responsiveness, rig=rig))
        placed.append(clip)
    starts = {clip.name: clip.start for clip in placed}
    for clip in clips:
        if clip.name in additional:
            base = additional[clip.name][0]
            starts[clip.name] = clip.start + starts[base] - next(c.start for c in clips if c.name == base)
    moves = pack_tracks(obj, [(strip, starts[strip.name]) for strip in strips])
    moves = tuple(replace(m, over=additional[m.name][0]) if m.name in additional else m for m in moves)
    return Packing(moves, {clip.name: clip.core_range for clip in clips})


def pack_tracks(obj: bpy.types.Object, wanted: list[tuple[bpy.types.NlaStrip, int]]) -> list[Move]:
    """The :class:`Move` of each ``(strip, new start)``, its track chosen; changes nothing.

    Strips on one track cannot overlap, nor pass one another (Blender stops a
    strip moved along its track at its neighbour), so a strip stays on its
    track when nothing else there lies between where it is and where it goes;
    else it goes to the first source track that plays with room where it goes
    (as :func:`add_strip`), else to a new track above the sources, below the
    preview. The strips move in the order given, each seeing the ones before
    it where they went and the others where they are.
    """
    anim = obj.animation_data
    # every source track: its name, whether a strip may be put on it, and what lies on it (name, first, last)
    tracks = [[t.name, _plays_track(obj, t), [(s.name, s.frame_start, s.frame_end) for s in t.strips]]
              for t in anim.nla_tracks if not is_preview_track(t)]
    moves = []
    for strip, start in wanted:
        before = round(strip.frame_start)
        here = next(k for k, t in enumerate(tracks) if any(name == strip.name for name, _, _ in t[2]))
        first, last = start, start + strip.frame_end - strip.frame_start
        others = [(name, a, b) for name, a, b in tracks[here][2] if name != strip.name]
        swept = (min(first, strip.frame_start), max(last, strip.frame_end))
        blocking = next((name for name, a, b in others if not (b < swept[0] or a > swept[1])), None)
        tracks[here][2] = others
        if start == before or blocking is None:
            k, new = here, False
        else:
            if strip.use_animated_influence:
                raise ValueError(
                    f"NLA strip {strip.name!r} of armature {obj.name!r} must leave track {tracks[here][0]!r} "
                    f"({blocking!r} lies in the way) but has animated influence, which Blender keeps on the strip; "
                    f"move {blocking!r} off that track first, or turn off Animated Influence"
                )
            k = next((k for k, (_, free, on) in enumerate(tracks)
                      if free and all(b < first or a > last for _, a, b in on)), None)
            new = k is None
            if new:
                taken = {t[0] for t in tracks} | {t.name for t in anim.nla_tracks}
                name = next(n for n in (f"[Smart Motion] {strip.name}{'' if i == 1 else f' {i}'}"
                                        for i in range(1, len(taken) + 2)) if n not in taken)
                tracks.append([name, True, []])
                k = len(tracks) - 1
        tracks[k][2].append((strip.name, first, last))
        moves.append(Move(strip.name, before, start, tracks[k][0], new,
                          f"{blocking!r} lies there on {tracks[here][0]!r}" if k != here else ""))
    return moves


def _plays_track(obj: bpy.types.Object, track: bpy.types.NlaTrack) -> bool:
    """Whether ``track`` is a source track Blender plays (not muted, solo respected): one to put strips on."""
    solo = solo_track(obj)
    return not (is_preview_track(track) or track.mute or (solo is not None and track.name != solo))


def pack_strips(obj: bpy.types.Object, packing: Packing) -> None:
    """Move the strips as ``packing`` says; each keeps its core as the placement assumed.

    A strip moves along its track (``frame_start_ui``, which keeps its length;
    ``frame_start`` would stretch it), or is made again on its new track with
    every setting it had, under the same name, so that its Smart Motion
    settings follow it. A strip whose default core would change with the new
    layout keeps the core the placement assumed as an edited core (Default
    Core gives it back), as :func:`add_strip` does. Actions are not touched.
    """
    anim = obj.animation_data
    made = {}
    for move in packing.moves:
        if not move.moved:
            continue
        strip = find_strip(obj, move.name)
        track = next(t for t in anim.nla_tracks if move.name in t.strips)
        if track.name == move.track and not move.new_track:
            strip.frame_start_ui = move.start
            continue
        if move.new_track:
            sources = [t for t in anim.nla_tracks if not is_preview_track(t)]
            made[move.track] = anim.nla_tracks.new(prev=sources[-1])
            made[move.track].name = move.track
        _remade_on(track, strip, made.get(move.track) or anim.nla_tracks[move.track], move.start)
    packed = sorted((find_strip(obj, name) for name in packing.cores), key=lambda s: s.frame_start)
    for name, offsets in packing.cores.items():
        strip = find_strip(obj, name)
        item = strip_settings(obj, strip)
        # (the default core among the packed strips, as the placement read them, whatever a preview plays)
        if core_offsets(obj, strip, packed) != tuple(offsets):
            item = strip_settings(obj, strip, create=True)
            item.core_first, item.core_last = offsets
            item.has_core = True
        if item is not None:
            item.identity = strip_identity(strip)


# what a strip made again on another track takes along (the frames follow from the action's range, scale, repeat)
_STRIP_SETTINGS = ("action_frame_start", "action_frame_end", "scale", "repeat", "blend_type", "extrapolation",
                   "use_auto_blend", "blend_in", "blend_out", "influence", "use_reverse", "use_sync_length",
                   "use_animated_time_cyclic", "mute", "select")


def _remade_on(old_track, strip, track, start: int) -> bpy.types.NlaStrip:
    """``strip`` made again on ``track`` starting at ``start``, with its name and settings; the old one removed."""
    name, action, slot = strip.name, strip.action, strip.action_slot
    settings = {key: getattr(strip, key) for key in _STRIP_SETTINGS}
    old_track.strips.remove(strip)
    new = track.strips.new(name, start, action)
    if slot is not None:
        new.action_slot = slot
    # the end first where the range moves later, so the start never passes the end
    order = ("action_frame_end", "action_frame_start") if settings["action_frame_start"] > new.action_frame_end \
        else ("action_frame_start", "action_frame_end")
    for key in order + _STRIP_SETTINGS[2:]:
        setattr(new, key, settings[key])
    new.name = name
    return new


def pack_text(packing: Packing) -> str:
    """``"packed 3 strips: 'walk' stays at 1, 'bow' 180 -> 142, ..."``, or that they are packed already."""
    if not any(m.moved for m in packing.moves):
        return (f"the {len(packing.moves)} selected strips are packed already ("
                + ", ".join(f"{m.name!r} at {m.start}" for m in packing.moves) + "); nothing moved")
    parts = []
    for m in packing.moves:
        text = f"{m.name!r} {m.before} -> {m.start}" if m.moved else f"{m.name!r} stays at {m.start}"
        if m.over:
            text += f" (with {m.over!r}, which it composes over)"
        if m.blocked:
            text += f" on {'new ' if m.new_track else ''}track {m.track!r}, as {m.blocked}"
        parts.append(text)
    return f"packed {len(packing.moves)} strips: " + ", ".join(parts)


# ---------------------------------------------------------------------------
# Preview and bake


def preview_track(obj: bpy.types.Object) -> bpy.types.NlaTrack | None:
    anim = obj.animation_data
    return anim.nla_tracks.get(PREVIEW_TRACK) if anim is not None else None


def has_preview(obj: bpy.types.Object) -> bool:
    return preview_track(obj) is not None or obj.smart_motion.preview_action is not None


def show_preview(obj: bpy.types.Object, strips: list, result) -> bpy.types.Action:
    """Play ``result`` on ``obj`` from a preview track above ``strips``, the track solo.

    Replaces an earlier preview (its action is removed, not piled up). The
    preview track holds the solo, so Blender plays it alone while the sources
    keep their own mute flags: muting or unmuting a source is the user's way
    to leave it out or take it back in (live re-synthesis follows it,
    :mod:`.live`). A track that was solo gets its solo back from
    :func:`clear_preview`. Source actions and strips are not changed.
    ``strips`` and the selected strips Blender does not play are the preview's
    sources (``preview_source``). ``obj.smart_motion.preview_signature`` records
    what the preview was made from and its keys (:func:`signature_parts`), for
    Bake to keep it while current.
    """
    from .convert import action_digest
    from .preview import play, write

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
    actions = write(obj, result.motion, preview_action_name(obj), result.start)
    state.preview_action = actions[0]
    solo = next((t for t in anim.nla_tracks if t.is_solo), None)
    track = anim.nla_tracks.new()  # a new track goes on top
    track.name = PREVIEW_TRACK
    play(track, actions, result.start, result.motion.n_frames, PREVIEW_STRIP)
    state.preview_signature = " ".join([*signature, _hashed([action_digest(a) for a in actions])])
    if solo is not None:
        # one solo track per object: soloing the preview un-solos this one, so its name is
        # kept for Clear to solo it again (and for plays() meanwhile)
        state.solo_before = solo.name
    track.is_solo = True
    for source in source_strips(obj):
        strip_settings(obj, source, create=True).preview_source = source.name in sources
    from . import live  # (live imports this module)

    live.adopt(obj)
    return actions[0]


def sign_preview(obj: bpy.types.Object, strips: list, responsiveness: float) -> None:
    """Record the preview as what synthesizing ``strips`` at ``responsiveness`` gives now
    (``preview_signature``, as :func:`show_preview` does), for Bake to keep it.

    For a preview the live re-synthesis brought up to date (:mod:`.live`), whose
    keys equal a fresh synthesis's to rounding; it signs the keys as they are.
    """
    actions = preview_segments(obj)
    if actions:
        obj.smart_motion.preview_signature = " ".join(signature_parts(obj, strips, responsiveness, actions))


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
        solo = anim.nla_tracks.get(state.solo_before) if anim is not None else None
        if solo is not None:
            solo.is_solo = True
        state.solo_before = ""
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
    _follow_renames(obj)  # a source strip renamed while the preview is on is unmuted all the same
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
    return cleared


def plan_cleared_text(obj: bpy.types.Object) -> str:
    """What Clear did with no preview on, typically after a Bake: it removed the plan, nothing else."""
    text = "removed the plan of the last synthesis from the panel; there was no preview to remove"
    anim = obj.animation_data
    baked = obj.smart_motion.baked_action
    if baked is not None and anim is not None and anim.action == baked:
        text += (f"; the baked action {baked.name!r} stays assigned to {obj.name!r} and plays over the strips "
                 "(unassign it in the Action Editor to play the strips)")
    return text


def current_preview(obj: bpy.types.Object, strips: list, responsiveness: float) -> list | None:
    """The preview's segment actions if they hold what synthesizing ``strips`` now would give, else ``None``.

    That is, if the preview was synthesized from these strips (same names,
    same order) at this ``responsiveness``, nothing the synthesis reads has
    changed since, and the preview's keys are still those Synthesize wrote:
    the recorded :func:`signature_parts` match, compared cheapest first.
    Changes nothing.
    """
    state = obj.smart_motion
    actions = preview_segments(obj)
    recorded = state.preview_signature.split()
    if not actions or len(recorded) != 3 or not state.plan_json:
        return None
    current = signature_parts(obj, strips, responsiveness, actions)
    return actions if all(now == then for now, then in zip(current, recorded)) else None


def bake_strips(
    obj: bpy.types.Object,
    strips: list,
    responsiveness: float,
    progress: Callable[[float], None] | None = None,
) -> tuple[bpy.types.Action, dict, bool]:
    """Bake to Action: ``(action, plan as Plan.to_dict(), whether the preview was kept)``.

    With a :func:`current_preview`, its action is copied (:func:`bake_preview`);
    otherwise the strips are synthesized and baked (:func:`bake`) and the plan
    recorded. Either way the new action is the same. ``progress`` gets the
    fraction done. Raises ``ValueError`` as :func:`synthesize_strips` does,
    with nothing changed.
    """
    report = progress or (lambda fraction: None)
    preview = current_preview(obj, strips, responsiveness)
    if preview is not None:
        plan = json.loads(obj.smart_motion.plan_json)
        action = bake_preview(obj, preview, strips)
        report(1.0)
        return action, plan, True
    report(0.05)
    result = synthesize_strips(obj, strips, responsiveness)
    report(0.5)
    action = bake(obj, result, progress=lambda done: report(0.5 + 0.5 * done), strips=strips)
    record_plan(obj, strips, result)
    return action, plan_dict(result), False


def bake(
    obj: bpy.types.Object,
    result,
    progress: Callable[[float], None] | None = None,
    strips: list = (),
) -> bpy.types.Action:
    """Write ``result`` into ``"<armature>_SmartMotion"`` and make it ``obj``'s action.

    The action of the last bake (:func:`rebake_target`) gets its keys
    replaced; otherwise a new action is made, never overwriting another of
    that name (Blender names it ``.001`` and so on). Every bone's rotation
    and location (not for connected bones) is keyed on every frame of the
    result. The preview, if any, is cleared first. ``progress`` gets the
    fraction of bones written.
    """
    from .convert import write_action

    clear_preview(obj)
    action = write_action(obj, result.motion, baked_action_name(obj), frame_start=result.start, progress=progress,
                          into=rebake_target(obj, strips))
    _assign(obj, action)
    return action


def bake_preview(obj: bpy.types.Object, preview: list, strips: list = ()) -> bpy.types.Action:
    """Keep the preview: its keys become ``obj``'s action, as :func:`bake` would write them.

    The preview's segment actions ``preview`` (:mod:`.preview`) hold the keys
    :func:`bake` writes for the synthesis result, so the segments joined into
    one slot for ``obj``, in the action of the last bake or a new
    ``"<armature>_SmartMotion"`` as :func:`bake` chooses, are the baked
    action. Then the preview is cleared. Only valid for a
    :func:`current_preview`.
    """
    from .preview import bake_into

    action = rebake_target(obj, strips)
    if action is None:
        action = bpy.data.actions.new(baked_action_name(obj))
    bake_into(preview, action, obj)
    clear_preview(obj)
    _assign(obj, action)
    return action


def rebake_target(obj: bpy.types.Object, strips: list = ()) -> bpy.types.Action | None:
    """The action the last Bake wrote, to be written again, or ``None`` for a new one.

    Baking again replaces its keys rather than leave it behind with no
    user, to be lost on save. Only while nothing but ``obj`` as its active
    action uses it (:func:`rebake_refusal`): once it is on an NLA strip,
    of any object, muted or not, or used by another ID, it is a source,
    and sources are never written.
    """
    action = obj.smart_motion.baked_action
    if action is None or rebake_refusal(obj, action, strips):
        return None
    return action


def rebake_refusal(obj: bpy.types.Object, action: bpy.types.Action, strips: list = ()) -> str:
    """Why Bake must not write ``action`` again, ``""`` if it may.

    It may while the only ID using it is ``obj`` and no NLA strip of any
    object (meta strips included) plays it: ``obj`` uses it as its active
    action and through Smart Motion's own settings, which Bake reassigns
    anyway. ``strips`` (the selected sources) are named first.
    """
    for strip in strips:
        if strip.action == action:
            return f"NLA strip {strip.name!r}, a source of this bake, plays it"
    for other in bpy.data.objects:
        for strip in _all_strips(other):
            if strip.action == action:
                return f"NLA strip {strip.name!r} of {other.name!r} plays it"
    users = bpy.data.user_map(subset=[action])[action]
    others = sorted(user.name for user in users if user != obj)
    if others:
        return f"{', '.join(repr(name) for name in others)} use{'s' if len(others) == 1 else ''} it"
    return ""


def rebake_note(obj: bpy.types.Object, strips: list = ()) -> str:
    """For the Bake report: ``"; the last bake 'x' is kept as it is, as ..."`` or ``""``."""
    action = obj.smart_motion.baked_action
    why = rebake_refusal(obj, action, strips) if action is not None else ""
    if not why:
        return ""
    return (f"; a new action, as the last bake {action.name!r} is kept as it is: {why} "
            "(Smart Motion never writes an action that plays elsewhere)")


def _all_strips(obj: bpy.types.Object) -> Iterator[bpy.types.NlaStrip]:
    """Every NLA strip of ``obj``, those inside meta strips included."""
    anim = obj.animation_data
    pending = [strip for track in (anim.nla_tracks if anim is not None else ()) for strip in track.strips]
    while pending:
        strip = pending.pop()
        yield strip
        pending.extend(strip.strips)


def _assign(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    obj.smart_motion.baked_action = action
    anim = obj.animation_data or obj.animation_data_create()
    anim.action = action
    if anim.action_slot is None:
        anim.action_slot = action.slots[0]
