"""Reading the NLA: which strips to work on, their settings, what a strip plays.

Strip selection and solo (:func:`selected_strips`, :func:`plays`), the
settings kept per strip that follow renames (:func:`strip_settings`, by
:func:`strip_identity`), the preview track's name and its segment actions,
and the frames a strip spans. Reads Blender data; decides nothing about the
timeline (:mod:`.timeline` does, with core).
"""

from __future__ import annotations

from typing import Iterable, Iterator

import bpy


PREVIEW_TRACK = "[Smart Motion preview]"
PREVIEW_STRIP = "Smart Motion preview"
_PREVIEW_SUFFIX = "_SmartMotion_preview"
_BAKED_SUFFIX = "_SmartMotion"
FRAME_TOLERANCE = 1e-4


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
    item = strip_settings(obj, strip)
    return track_plays(obj, track) and not (item.mute_before if item is not None and item.muted_by_preview
                                            else strip.mute)


def track_plays(obj: bpy.types.Object, track: bpy.types.NlaTrack, solo=False) -> bool:
    """Whether Blender plays the source ``track`` of ``obj``: not muted, and the solo track if one is
    (:func:`solo_track`, passed as ``solo`` when already known). The track itself is compared, not
    its name: tracks may share one."""
    solo = solo_track(obj) if solo is False else solo
    return not (is_preview_track(track) or track.mute or (solo is not None and track != solo))


def solo_track(obj: bpy.types.Object) -> bpy.types.NlaTrack | None:
    """The solo track among the sources, ``None`` if none is.

    While the preview holds the solo, the track that had it before
    (:func:`solo_before`): only one track can be solo, and the preview takes
    it so that Blender plays the preview (:func:`.preview.show_preview`).
    """
    anim = obj.animation_data
    solo = next((t for t in (anim.nla_tracks if anim is not None else ()) if t.is_solo), None)
    if solo is not None and is_preview_track(solo):
        return solo_before(obj)
    return solo


def track_place(obj: bpy.types.Object, track: bpy.types.NlaTrack) -> tuple[str, int]:
    """What finds ``track`` again (:func:`solo_before`): its name and its index among ``obj``'s tracks,
    from the bottom. An NLA track holds no property of ours and names need not be unique."""
    return track.name, next(k for k, t in enumerate(obj.animation_data.nla_tracks) if t == track)


def solo_before(obj: bpy.types.Object) -> bpy.types.NlaTrack | None:
    """The source track that was solo when the preview took the solo, recorded by :func:`track_place`
    in ``solo_before`` (name) and ``solo_before_index``: the track of that name at that index; else
    the one track of that name (tracks were added or removed below it); else, none having that name
    any more, the track at that index (it was renamed); ``None`` when none was solo."""
    state, anim = obj.smart_motion, obj.animation_data
    if not state.solo_before or anim is None:
        return None
    tracks = [t for t in anim.nla_tracks if not is_preview_track(t)]
    index = state.solo_before_index
    at_index = tracks[index] if 0 <= index < len(tracks) else None
    named = [t for t in tracks if t.name == state.solo_before]
    if at_index is not None and (at_index in named or not named):
        return at_index
    return named[0] if named else None


def unique_track_name(obj: bpy.types.Object, name: str) -> str:
    """``name``, or ``"name.001"``, ``.002`` ... if one of ``obj``'s NLA tracks has it already: Blender
    lets tracks share a name, which the user then cannot tell apart."""
    anim = obj.animation_data
    taken = {t.name for t in (anim.nla_tracks if anim is not None else ())}
    if name not in taken:
        return name
    return next(f"{name}.{k:03d}" for k in range(1, len(taken) + 2) if f"{name}.{k:03d}" not in taken)


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


def core_neighbours(obj: bpy.types.Object) -> list[bpy.types.NlaStrip]:
    """The strips default cores are taken among: while a preview is on, its sources that play
    (live updates read those, whatever is selected: selecting a strip to drag it must not
    change the cores); else the selected strips that play, as Synthesize reads them."""
    strips = source_strips(obj)
    sources = [s for s in strips if _is_preview_source(obj, s)]
    if sources:
        return [s for s in sources if plays(obj, s)]
    return [s for s in strips if s.select and plays(obj, s)]


def find_strip(obj: bpy.types.Object, name: str) -> bpy.types.NlaStrip | None:
    """The NLA strip called ``name`` on any track of ``obj``, or ``None``."""
    anim = obj.animation_data if obj is not None else None
    if anim is None:
        return None
    for track in anim.nla_tracks:
        strip = track.strips.get(name)
        if strip is not None:
            return strip
    return None


def all_strips(obj: bpy.types.Object) -> Iterator[bpy.types.NlaStrip]:
    """Every NLA strip of ``obj``, those inside meta strips included."""
    anim = obj.animation_data
    pending = [strip for track in (anim.nla_tracks if anim is not None else ()) for strip in track.strips]
    while pending:
        strip = pending.pop()
        yield strip
        pending.extend(strip.strips)


def track_index(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> int:
    """The index of the NLA track holding ``strip`` among ``obj``'s tracks, from the bottom (-1: none).
    A synchronized group weighs its strips by track (:func:`by_track_from_top`): a strip dragged to
    another track changes the blend while its name, frames and action stay."""
    return next((k for k, t in enumerate(obj.animation_data.nla_tracks) if any(s == strip for s in t.strips)), -1)


def by_track_from_top(obj: bpy.types.Object, strips: list) -> list:
    """``strips`` the upper track first, as the NLA evaluates (on one track: by start)."""
    order = {t.name: k for k, t in enumerate(obj.animation_data.nla_tracks)}
    track = {s.name: t.name for t in obj.animation_data.nla_tracks for s in t.strips}
    return sorted(strips, key=lambda s: (-order[track[s.name]], s.frame_start))


# ---------------------------------------------------------------------------
# Settings by strip, found again after a rename


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


def prune_settings(obj: bpy.types.Object) -> None:
    """Re-key the settings of renamed strips; drop those of strips that no longer exist."""
    follow_renames(obj)
    items = obj.smart_motion.strips
    for index in reversed(range(len(items))):
        if find_strip(obj, items[index].name) is None:
            items.remove(index)


def follow_renames(obj: bpy.types.Object) -> None:
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


def strip_signature(strip: bpy.types.NlaStrip) -> str:
    """What a strip plays, apart from where: its phases are out of date when this changes."""
    action = strip.action.name if strip.action is not None else ""
    return "|".join(
        [action, f"{strip.action_frame_start:g}", f"{strip.action_frame_end:g}", f"{strip.scale:g}",
         f"{strip.repeat:g}", str(int(strip.use_reverse))]
    )


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


def user_blend_s(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> float | None:
    """The user's blend length into ``strip`` in seconds (its Blend Length setting), ``None`` when
    automatic (0, or no settings): what ``core.plan.Clip.blend_s`` takes."""
    item = strip_settings(obj, strip)
    return float(item.blend_length) if item is not None and item.blend_length > 0.0 else None


def mark_performed(obj: bpy.types.Object, strip: bpy.types.NlaStrip, current: int) -> None:
    """Record that Perform added ``strip`` while scene frame ``current`` played (:func:`performed_current`)."""
    item = strip_settings(obj, strip, create=True)
    item.performed_current = current
    item.performed_at = strip_identity(strip)


# ---------------------------------------------------------------------------
# A strip's frames


def strip_frame_count(strip: bpy.types.NlaStrip) -> int:
    """Frames sampled from a strip, both ends included (as ``convert.strip_to_motion``)."""
    return max(int(strip.frame_end - strip.frame_start + 1e-6), 0) + 1


def strip_frames(strip: bpy.types.NlaStrip) -> tuple[int, int]:
    """The scene frames ``strip`` spans, ``(first, last)``, both sampled."""
    start = round(strip.frame_start)
    return start, start + strip_frame_count(strip) - 1


def whole_strip_if_empty(offsets: tuple[int, int], strip: bpy.types.NlaStrip) -> tuple[int, int]:
    """``offsets`` (first, last from the strip's start), or the whole strip where they hold no frame."""
    first, last = offsets
    return (0, strip_frame_count(strip) - 1) if first > last else offsets


# ---------------------------------------------------------------------------
# The preview's track and its sources


def preview_track(obj: bpy.types.Object) -> bpy.types.NlaTrack | None:
    anim = obj.animation_data
    return anim.nla_tracks.get(PREVIEW_TRACK) if anim is not None else None


def has_preview(obj: bpy.types.Object) -> bool:
    return preview_track(obj) is not None or obj.smart_motion.preview_action is not None


def track_segments(track: bpy.types.NlaTrack | None) -> list[bpy.types.Action]:
    """The preview's segment actions, in frame order: what the preview track's strips play."""
    if track is None:
        return []
    return [s.action for s in sorted(track.strips, key=lambda s: s.frame_start) if s.action is not None]


def preview_segments(obj: bpy.types.Object) -> list[bpy.types.Action]:
    """``obj``'s preview's segment actions in frame order (:mod:`.preview`); ``[]`` without one."""
    if obj.smart_motion.preview_action is None:
        return []
    return track_segments(preview_track(obj)) or [obj.smart_motion.preview_action]


def preview_actions() -> set:
    """Every action of the file that is (a segment of) an armature's preview."""
    return {a for o in bpy.data.objects if o.type == 'ARMATURE'
            for a in [o.smart_motion.preview_action, *track_segments(preview_track(o))] if a is not None}


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
