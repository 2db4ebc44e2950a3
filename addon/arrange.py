"""Arranging strips: Add as Soon as Possible (2014 section 5, eq. 17), Pack and Give Room.

Each decides first (:func:`asap_placement`, :func:`pack_placements`,
:func:`room_for`: plain values, nothing changed) and then writes
(:func:`add_strip`, :func:`pack_strips`, :func:`give_room_strips`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import bpy

from ..core.timeline import NlaLane, PackMove, pack_lanes
from ..core.text import counted
from .convert import action_to_motion, find_armature_rig
from .fcurves import slot_for
from .strips import (find_strip, is_preview_track, left_out_text, preview_actions, strip_identity, strip_settings,
                     track_plays, unique_track_name)
from .sync_groups import group_name, sync_groups
from .synthesis import require_two
from .timeline import additional_strips, core_offsets, sequence_clips, strip_clips


@dataclass(frozen=True)
class Placement:
    """Where :func:`asap_placement` puts an action: its start and what it had to wait for.

    start   scene frame of the new strip's first frame.
    after   the frame its blends start after: the playhead, or the last core's end when later.
    waited  what ``after`` is, for the report (``"the playhead"``, ``"the core of 'walk'"``).
    clip    the new clip, its core the whole action (it has no neighbour to lose frames to).
    cores   each strip's core offsets the placement assumed, by strip name.
    flags   what of the new gap stays flagged (core.quality) where no start within 2 s keeps it
            under its flag threshold (the placement says so), else ``()``.
    """

    start: int
    after: int
    waited: str
    clip: object
    cores: dict
    flags: tuple = ()


def addable_actions(obj: bpy.types.Object | None = None) -> list[bpy.types.Action]:
    """Every action of the file but Smart Motion's previews, by name: what Add as Soon as Possible offers."""
    previews = preview_actions()
    return sorted((a for a in bpy.data.actions if a not in previews), key=lambda a: a.name)


def asap_placement(obj: bpy.types.Object, strips: list, action: bpy.types.Action, responsiveness: float,
                   current: int, read: Callable | None = None, place: Callable | None = None) -> Placement:
    """The earliest start of ``action`` after ``strips`` (as Synthesize reads them) whose blends start
    after scene frame ``current`` (eq. 17); changes nothing. ``read`` reads a strip as in
    :func:`.timeline.strip_clips`, ``place(clips, clip, responsiveness=, t_current=, rig=)`` places it
    (``core.synthesize.scheduled_start`` when ``None``); live updates pass theirs, which keep
    what they read and synthesized (:func:`.live.reader`, :func:`.live.placer`).

    Raises ``ValueError`` for no strips, a strip that cannot be read, an action
    not for this armature (:func:`.convert.action_to_motion`) or a rig whose
    legs cannot be found.
    """
    from ..core.synthesize import Clip, scheduled_start

    if not strips:
        raise ValueError(
            f"no NLA strip of armature {obj.name!r} is selected{left_out_text(obj)}; select the strips that play "
            f"before {action.name!r} (Synthesize joins the same ones)"
        )
    clips, _ = sequence_clips(obj, strips, read=read)  # (a synchronized group is one clip, as Synthesize joins it)
    clip = Clip(action_to_motion(obj, action), 0, None, action.name)
    rig = find_armature_rig(obj, clips[0].motion)
    scheduled = (place or scheduled_start)(clips, clip, responsiveness=responsiveness, t_current=current, rig=rig)
    start = scheduled.start
    last = max(clips, key=lambda c: c.start + c.core_range[1])
    core_end = last.start + last.core_range[1]
    after, waited = (current, "the playhead") if current >= core_end else (core_end, f"the core of {last.name!r}")
    return Placement(start, after, waited, replace(clip, start=start), {c.name: c.core_range for c in clips},
                     tuple(scheduled.flags))


def add_strip(obj: bpy.types.Object, action: bpy.types.Action, placement: Placement) -> bpy.types.NlaStrip:
    """A new strip playing ``action`` from ``placement.start``, selected, on the first source track with
    room that plays, else on a new track above the sources (below the preview).

    Its core is the whole strip, as placed. A strip whose default core the new
    one would cut (it overlaps it) keeps the core the placement assumed, set
    as an edited core (Default Core gives it back). No strip or action is
    otherwise changed.
    """
    first, last = placement.start, placement.clip.end
    anim = obj.animation_data or obj.animation_data_create()
    track = next((t for t in anim.nla_tracks if _has_room(obj, t, first, last)), None)
    if track is None:
        sources = [t for t in anim.nla_tracks if not is_preview_track(t)]
        track = anim.nla_tracks.new(prev=sources[-1] if sources else None)
        track.name = unique_track_name(obj, f"[Smart Motion] {action.name}")
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
    text = (f"added {action.name!r} at frame {placement.start}, as soon as it can blend after frame "
            f"{placement.after} ({placement.waited})")
    if placement.flags:
        text += (f"; no start within 2 s keeps its gap unflagged ({', '.join(placement.flags)}): set a blend "
                 "length on it, or move the cores")
    return text


@dataclass(frozen=True)
class Packing:
    """:func:`pack_placements`' answer: the moves in pack order and each strip's core as the placement assumed."""

    moves: tuple[PackMove, ...]
    cores: dict
    flagged: dict = None  # strip name -> what of its gap stays flagged where no start within 2 s avoids it


def pack_placements(obj: bpy.types.Object, strips: list, responsiveness: float) -> Packing:
    """Each of ``strips`` (as Synthesize reads them) re-timed as soon as possible after the ones
    before it (2014, section 5); changes nothing.

    In the order of their starts now: the first stays, each next one starts
    where ``core.synthesize.as_soon_as_possible`` puts it after the clips before
    it as placed, its core the one it has now (edited, or its default core in
    the layout as it is). The playhead is not a limit (no eq. 17): packing
    re-times a timeline being edited, not one being played. An additional
    motion (:func:`.timeline.additional_strips`) is not a clip of the sequence: it moves
    with the strip it lies inside, and so keeps composing over it.

    Each moved strip's track is chosen as :func:`pack_tracks` says. Raises
    ``ValueError`` (nothing changed) for fewer than two strips, a synchronized
    group among them (:func:`.sync_groups.sync_groups`: it would have to move as one), a strip that
    cannot be read (another skeleton's action, no action, ...), a rig whose
    legs cannot be found, or a strip that must change track with animated
    influence.
    """
    from ..core.synthesize import scheduled_start

    require_two(obj, strips, "select the strips to pack, at least two that play")
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
    placed, flagged = [], {}
    for clip in clips:
        if clip.name in additional:
            continue
        if placed:
            scheduled = scheduled_start(placed, clip, responsiveness=responsiveness, rig=rig)
            clip = replace(clip, start=scheduled.start)
            if scheduled.flags:
                flagged[clip.name] = tuple(scheduled.flags)
        placed.append(clip)
    starts = {clip.name: clip.start for clip in placed}
    for clip in clips:
        if clip.name in additional:
            base = additional[clip.name][0]
            starts[clip.name] = clip.start + starts[base] - next(c.start for c in clips if c.name == base)
    moves = pack_tracks(obj, [(strip, starts[strip.name]) for strip in strips])
    moves = tuple(replace(m, over=additional[m.name][0]) if m.name in additional else m for m in moves)
    return Packing(moves, {clip.name: clip.core_range for clip in clips}, flagged)


def pack_tracks(obj: bpy.types.Object, wanted: list[tuple[bpy.types.NlaStrip, int]]) -> list[PackMove]:
    """The :class:`core.timeline.PackMove` of each ``(strip, new start)``, its track chosen; changes
    nothing. core.timeline.pack_lanes decides, over the source tracks (those Blender plays are open
    to strips, as for :func:`add_strip`); a new track goes above the sources, below the preview."""
    anim = obj.animation_data
    lanes = [NlaLane(t.name, _plays_track(obj, t), tuple((s.name, s.frame_start, s.frame_end) for s in t.strips))
             for t in anim.nla_tracks if not is_preview_track(t)]
    return pack_lanes(lanes, [(strip.name, start) for strip, start in wanted],
                      animated={strip.name for strip, _ in wanted if strip.use_animated_influence},
                      taken_names={t.name for t in anim.nla_tracks}, armature=obj.name)


def _plays_track(obj: bpy.types.Object, track: bpy.types.NlaTrack) -> bool:
    """Whether ``track`` is a source track Blender plays (not muted, solo respected): one to put strips on."""
    return track_plays(obj, track)


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
        if track.name == move.lane and not move.new_lane:
            strip.frame_start_ui = move.start
            continue
        if move.new_lane:
            sources = [t for t in anim.nla_tracks if not is_preview_track(t)]
            made[move.lane] = anim.nla_tracks.new(prev=sources[-1])
            made[move.lane].name = move.lane  # (core.timeline.pack_lanes: a name no track has)
        _remade_on(track, strip, made.get(move.lane) or anim.nla_tracks[move.lane], move.start)
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
            text += f" on {'new ' if m.new_lane else ''}track {m.lane!r}, as {m.blocked}"
        parts.append(text)
    flagged = "".join(f"; no start of {name!r} within 2 s keeps its gap unflagged ({', '.join(flags)})"
                      for name, flags in (packing.flagged or {}).items())
    return f"packed {counted(len(packing.moves), 'strip')}: " + ", ".join(parts) + flagged


# ---------------------------------------------------------------------------
# Give Room (issue 26): the least move of a flagged gap's later strips that unflags it


@dataclass(frozen=True)
class RoomMove:
    """:func:`room_for`'s answer: core.room's :class:`Room` and the strips it moves, by name, with the
    core each strip keeps (as the search read it), so that a default core that would change with
    the new layout is kept as an edited one (as :func:`pack_strips` does)."""

    room: object
    strips: tuple[str, ...]
    cores: dict
    read: tuple[str, ...] = ()  # every strip the search read (the neighbours of the default cores)


def room_for(obj: bpy.types.Object, strips: list, next_name: str, responsiveness: float) -> RoomMove:
    """Give Room to the gap into clip ``next_name`` of the synthesis of ``strips`` (as Synthesize reads
    them): core.room.give_room decides; changes nothing. A synchronized group moves as one clip (all
    its strips). Raises ``ValueError`` for strips that cannot be read, or no pair into that clip."""
    from ..core.room import give_room

    require_two(obj, strips, "select the strips of the synthesis, at least two that play")
    clips, groups = sequence_clips(obj, strips)
    rig = find_armature_rig(obj, clips[0].motion)
    room = give_room(clips, next_name, responsiveness=responsiveness, rig=rig)
    members = {g["name"]: tuple(g["strips"]) for g in groups}
    moved = tuple(name for clip in room.moved for name in members.get(clip, (clip,)))
    return RoomMove(room, moved, {c.name: c.core_range for c in clips if c.name not in members},
                    tuple(s.name for s in strips))


def give_room_strips(obj: bpy.types.Object, move: RoomMove) -> None:
    """Move the strips ``move`` names later by its frames, along their tracks (actions untouched), the
    latest first so that none meets another being moved; each strip of the synthesis keeps the core the
    search read. Raises ``ValueError`` (nothing moved) where a strip staying put lies in the way."""
    frames = move.room.frames
    if not frames:
        return
    moving = [find_strip(obj, name) for name in move.strips]
    for strip in moving:
        track = next(t for t in obj.animation_data.nla_tracks if strip.name in t.strips)
        first, last = strip.frame_start, strip.frame_end + frames
        blocking = next((s.name for s in track.strips if s.name not in move.strips
                         and not (s.frame_end < first or s.frame_start > last)), None)
        if blocking is not None:
            raise ValueError(f"Give Room would move NLA strip {strip.name!r} onto {blocking!r} on track "
                             f"{track.name!r}; move {blocking!r} off that track (or later) first")
    for strip in sorted(moving, key=lambda s: s.frame_start, reverse=True):
        strip.frame_start_ui = strip.frame_start + frames  # (keeps its length, as Pack moves a strip)
    everyone = [find_strip(obj, name) for name in move.read]
    for name, offsets in move.cores.items():
        strip = find_strip(obj, name)
        if core_offsets(obj, strip, everyone) != tuple(offsets):
            item = strip_settings(obj, strip, create=True)
            item.core_first, item.core_last = offsets
            item.has_core = True
