"""Synchronized groups: strips played at the same time, blended as one (Ménardais et al. 2004, MKM).

Which strips blend synchronized (:func:`sync_groups`), and what the NLA's
influences give each of a group's strips at every frame
(:func:`group_weights`: Replace mode over the tracks, upper first).
"""

from __future__ import annotations

import bpy

from ..core.timeline import Span, overlap_groups
from ..core.timeline import group_name as timeline_group_name
from .fcurves import rna_settings
from .strips import strip_frame_count, strip_frames, strip_settings


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
    on = [s for s in strips if blends_synchronized(obj, s)]
    spans = [Span(s.name, *strip_frames(s)) for s in on]
    return [[on[k] for k in group] for group in overlap_groups(spans)]  # (core.timeline decides)


def group_name(group: list) -> str:
    """``"walk + run"``: the group's strips' names joined, in start order (core.timeline.group_name)."""
    return timeline_group_name(s.name for s in group)


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
    keys = tuple((tuple(k.co), tuple(k.handle_left), tuple(k.handle_right), k.interpolation, k.easing, k.back,
                  k.amplitude, k.period) for k in curve.keyframe_points)
    # (every modifier setting: Blender evaluates the curve with them, strip_influences too)
    return (True, strip.extrapolation, strip.blend_type, True, keys, curve.extrapolation, curve.mute,
            tuple(rna_settings(modifier) for modifier in curve.modifiers))


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
    strip, as :func:`.timeline.strip_clips` does."""
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


def pin_group_core(obj: bpy.types.Object, group: list, first: int, last: int) -> None:
    """Edited cores on ``group``'s strips such that :func:`edited_group_core` reads scene frames
    ``first``-``last``: each strip keeps the part of them it plays; one that plays none has no
    edited core (it is then not read). What Give Room keeps where a group's default core would
    change with the move."""
    for strip in group:
        start = round(strip.frame_start)
        lo, hi = max(first, start), min(last, start + strip_frame_count(strip) - 1)
        item = strip_settings(obj, strip, create=lo <= hi)
        if lo <= hi:
            item.core_first, item.core_last = lo - start, hi - start
            item.has_core = True
        elif item is not None:
            item.has_core = False


def group_weights(obj: bpy.types.Object, ordered: list, frames) -> tuple:
    """``(influences, playing, weights)``, each ``(K, T)``, of a group's strips ``ordered`` (upper
    track first, :func:`.strips.by_track_from_top`) at scene frames ``frames (T,)``: each strip's own
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
