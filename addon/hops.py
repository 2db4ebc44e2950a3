"""Insert Hop: one-hop transitions (Koyama & Goto 2019, section 3) between two NLA strips.

The work behind the Insert Hop operator, as plain functions (they run
without an operator, headless). Two selected strips of the active armature
are the source (the one that starts first) and the destination; the playhead
is the trigger.

Timeline. Both strips play as they are placed: source frame ``j`` (what the
source strip plays, :func:`.convert.strip_to_motion`) at scene frame
``source.frame_start + j``, destination frame ``k`` at
``destination.frame_start + k``. In the source's frames the destination's
offset is therefore ``o_s->d = destination.frame_start - source.frame_start``
and the trigger ``t = playhead - source.frame_start``; core.hops' timeline
follows (its module docstring). The chosen ``T_t = (hop, o_s->h, s_s, s_h)``
becomes:

* the source strip ending where the first blend ends, scene frame
  ``source.frame_start + t + s_s + L - 1`` (its strip range, never its action);
* a hop strip from where the first blend begins (``t + s_s``) to where the
  second ends (``t + s_s + 2L + s_h - 1``), playing hop frame ``h`` at source
  frame ``h + o_s->h``, on a track above both strips (a new one if none has
  room), blending in and out over the ``L`` frames of each blend;
* when the direct transition wins (the destination at its own timing, no
  second blend), no hop strip: the source is only trimmed;
* each strip's core (Smart Motion's, kept on the armature) set to the frames
  it plays alone, as core.hops_render's engine render cuts them: the source
  until the first blend, the hop over its stay (one frame without one), the
  destination from the end of the last blend. Synthesize then joins the three
  in turn at the frames the search chose, placing each clip on the one
  before (the NLA alone plays every action where it was captured).

The library: the file's actions that fit the armature (as Add as Soon as
Possible offers them, :func:`.convert.action_to_motion` refusing the others)
or the BVH files of the folder set in the add-on's preferences, whose joints
must be the armature's bones (:func:`.convert.motion_on_armature`). The source
and destination strips are clips of it too (the action a strip plays whole is
then not read twice). No table is precomputed: :func:`core.hops.search_trigger`
searches this one trigger frame.

As in :mod:`.nla`, everything that can fail comes first, into plain values
(:class:`HopChoice`); the writes (:func:`insert_hop`) follow and do not fail.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import bpy

from .nla import is_preview_track, preview_actions, solo_track

HOP_TRACK = "[Smart Motion] hops"


@dataclass(frozen=True)
class HopClip:
    """One clip of the search.

    name    what the panel shows: the action's name, the BVH file's name, or the strip's.
    motion  its frames at the scene's rate (core.motion.Motion on the armature).
    action  the action a hop strip plays (None for a BVH file: keyed into a new action if chosen).
    first   the action frame of clip frame 0.
    scale   action frames per clip frame are ``1 / scale`` (a strip's Scale; 1 for a library clip).
    path    the BVH file, or "".
    """

    name: str
    motion: object
    action: object
    first: float
    scale: float = 1.0
    path: str = ""


@dataclass(frozen=True)
class HopChoice:
    """What Insert Hop found, before anything is written: the strips, the trigger and ``T_t``."""

    source: str
    destination: str
    source_start: int  # scene frame of source frame 0
    trigger: int  # t, source frames
    offset: int  # o_s->d, source frames
    blend_frames: int  # L
    hop: HopClip
    hop_offset: int  # o_s->h
    stay_src: int  # s_s
    stay_hop: int  # s_h
    smoothness: float  # S
    responsiveness: float  # w R
    direct: float  # D of the direct transition
    direct_won: bool
    weight: float  # w per second, as given or eq. (5)'s
    library: str  # "actions" or the folder
    n_clips: int
    seconds: float  # the search's time: the point clouds (forward kinematics of every clip), then search_trigger
    skipped: tuple = ()  # BVH files left out, with why
    warnings: tuple = ()  # what Blender will play otherwise than the transition found

    @property
    def source_end(self) -> int:
        """The source strip's new last frame (scene, inclusive): where the first blend ends."""
        return self.source_start + self.trigger + self.stay_src + self.blend_frames - 1

    @property
    def alone_until(self) -> int:
        """The source's last frame alone, counted from its start (frame 0 when the first blend starts there)."""
        return max(self.trigger + self.stay_src - 1, 0)

    @property
    def settled(self) -> int:
        """The first source frame at which the destination plays alone."""
        first = self.trigger + self.stay_src
        return first + self.blend_frames + (0 if self.direct_won else self.blend_frames + self.stay_hop)

    @property
    def hop_span(self) -> tuple[int, int]:
        """(first, last) scene frames of the hop strip: the first blend's start to the second blend's end."""
        first = self.source_start + self.trigger + self.stay_src
        return first, first + 2 * self.blend_frames + self.stay_hop - 1

    def to_dict(self) -> dict:
        """As the panel reads it (``Object.smart_motion.hop_json``); the show --json keys of the CLI, plus where."""
        return {"source": self.source, "destination": self.destination, "trigger": self.trigger,
                "trigger_frame": self.source_start + self.trigger, "hop": self.hop.name, "offset": self.hop_offset,
                "stay_src": self.stay_src, "stay_hop": self.stay_hop, "smoothness": self.smoothness,
                "responsiveness": self.responsiveness, "direct": self.direct, "direct_won": self.direct_won, "weight": self.weight,
                "blend_frames": self.blend_frames, "destination_offset": self.offset, "library": self.library,
                "clips": self.n_clips, "seconds": self.seconds, "source_end": self.source_end,
                "hop_span": list(self.hop_span) if not self.direct_won else None}


# ---------------------------------------------------------------------------
# What to work on


def hop_strips(obj: bpy.types.Object, strips: list, current: int) -> tuple:
    """``(source, destination)`` of the two selected ``strips`` (by start frame) for a trigger at scene
    frame ``current``, or ``ValueError`` saying what to fix."""
    if len(strips) != 2:
        raise ValueError(f"{len(strips)} NLA strips of armature {obj.name!r} are selected: Insert Hop needs two, "
                         "the source and then the destination (the one that starts first is the source); select "
                         "exactly two")
    source, destination = strips
    if round(source.frame_start) == round(destination.frame_start):
        raise ValueError(f"strips {source.name!r} and {destination.name!r} both start at frame "
                         f"{round(source.frame_start)}: the source must start first; move one of them")
    for strip in strips:
        if abs(strip.repeat - 1.0) > 1e-6 or strip.use_reverse:
            raise ValueError(f"strip {strip.name!r} repeats or plays backwards; Insert Hop needs Repeat 1 and "
                             "not Reversed (bake it to an action first)")
    if not source.frame_start <= current <= source.frame_end:
        raise ValueError(f"the playhead (frame {current}) is not inside the source strip {source.name!r} (frames "
                         f"{round(source.frame_start)}-{round(source.frame_end)}): put it where the transition "
                         "should start")
    if destination.frame_start > current:
        raise ValueError(f"the destination {destination.name!r} starts at frame {round(destination.frame_start)}, "
                         f"after the playhead (frame {current}): the transition blends into the destination as it "
                         "plays at the playhead, so it must have started; move the playhead or the destination")
    return source, destination


def library_actions(obj: bpy.types.Object, plain: set) -> list:
    """``[HopClip]`` of the file's actions that fit ``obj`` (by name), Smart Motion's previews and baked
    actions left out, and the actions in ``plain`` (played whole by the source or destination strip,
    which are clips already)."""
    from .convert import action_to_motion

    baked = {o.smart_motion.baked_action for o in bpy.data.objects if o.type == 'ARMATURE'}
    left_out = preview_actions() | baked | set(plain)
    clips = []
    for action in sorted(bpy.data.actions, key=lambda a: a.name):
        if action in left_out:
            continue
        try:
            motion = action_to_motion(obj, action)
        except ValueError:  # not an action of this armature: not in its library
            continue
        clips.append(HopClip(action.name, motion, action, float(action.frame_range[0])))
    return clips


def library_folder(obj: bpy.types.Object, folder: str, fps: float) -> tuple[list, list[str]]:
    """``([HopClip], skipped)`` of the BVH files in ``folder`` whose joints are ``obj``'s bones, at ``fps``;
    ``skipped`` says which files were left out and why. ``ValueError`` when the folder is not set, not
    found, or has no such file."""
    from ..core.bvh import read_bvh
    from .convert import armature_skeleton, motion_on_armature

    if not folder:
        raise ValueError("the hop library is a folder of BVH files, but none is set: set Hop Library Folder in the "
                         "Smart Motion add-on's preferences, or use the file's actions")
    path = Path(bpy.path.abspath(folder))
    if not path.is_dir():
        raise ValueError(f"the hop library folder {str(path)!r} is not found: set Hop Library Folder in the Smart "
                         "Motion add-on's preferences to a folder of BVH files")
    armature = armature_skeleton(obj)
    clips, skipped = [], []
    for file in sorted(path.glob("*.bvh")):
        try:
            motion = motion_on_armature(obj, read_bvh(file), file.name, armature)
        except ValueError as error:  # BVHError too
            skipped.append(str(error))
            continue
        if abs(motion.fps - fps) > 1e-4 * fps:
            motion = motion.resampled(fps)
        clips.append(HopClip(file.name, motion, None, 1.0, path=str(file)))
    if not clips:
        raise ValueError(f"no BVH file of {str(path)!r} is on armature {obj.name!r}'s skeleton"
                         + (f" ({skipped[0]})" if skipped else " (it has no .bvh file)")
                         + "; only files whose joint names are the armature's bone names are read")
    return clips, skipped


def plays_whole(strip: bpy.types.NlaStrip) -> bool:
    """Whether ``strip`` plays its action's whole range once, unscaled: what the action is as a clip."""
    start, end = strip.action.frame_range
    return (abs(strip.action_frame_start - start) < 1e-6 and abs(strip.action_frame_end - end) < 1e-6
            and abs(strip.scale - 1.0) < 1e-6)


# ---------------------------------------------------------------------------
# The search


#: eq. (5) weights by library: {(clip digests, blend frames, fps): w per second}. eq. (5) reads
#: 100 random transitions of the library (most of a second for ten clips), so it is worked out
#: once per library content and kept for the session, not at every click.
_DEFAULT_WEIGHTS: dict = {}


def library_weight(motions: list, clouds: list, blend_frames: int, fps: float) -> float:
    """eq. (5)'s default weight (core.hops.default_weight) of a library, per second, kept by content."""
    from ..core import hops

    key = (tuple(hops.clip_digest(m) for m in motions), int(blend_frames), float(fps))
    if key not in _DEFAULT_WEIGHTS:
        _DEFAULT_WEIGHTS[key] = hops.default_weight(clouds, blend_frames, fps)
    return _DEFAULT_WEIGHTS[key]


def find_hop(obj: bpy.types.Object, strips: list, current: int, *, weight: float | None, blend_seconds: float,
             folder: str | None = None) -> HopChoice:
    """The best one-hop transition from the source to the destination of ``strips`` at the playhead
    ``current`` (core.hops eq. 2), the library the file's actions or, with ``folder``, its BVH files.

    weight   w per second (>= 0); stays are bounded by the clips, and by 1 s each when it is 0.
             None: eq. (5)'s default for this library (:func:`library_weight`).
    Changes nothing; ``ValueError`` saying what to fix.
    """
    from ..core import hops
    from .convert import scene_fps, strip_to_motion
    from .nla import find_armature_rig

    source, destination = hop_strips(obj, strips, current)
    if weight is not None and not (weight >= 0):
        raise ValueError(f"the hop weight must be >= 0 (per second), got {weight}")
    fps = scene_fps(bpy.context.scene)
    length = hops.blend_frames_of(blend_seconds, fps)
    ends = [HopClip(s.name, strip_to_motion(obj, s, fps), s.action, s.action_frame_start, s.scale)
            for s in (source, destination)]
    start = round(source.frame_start)
    trigger, offset = current - start, round(destination.frame_start) - start
    n_src, n_dst = ends[0].motion.n_frames, ends[1].motion.n_frames
    if trigger + length > n_src or trigger - offset + length > n_dst:
        short = source if trigger + length > n_src else destination
        raise ValueError(f"the direct transition at the playhead (frame {current}) does not fit: a blend takes "
                         f"{length} frames and strip {short.name!r} ends at frame {round(short.frame_end)}, "
                         f"before frame {current + length - 1}; move the playhead earlier or lengthen the strip")
    skipped: list[str] = []
    if folder is None:
        plain = {s.action for s in (source, destination) if plays_whole(s)}
        library = library_actions(obj, plain)
    else:
        library, skipped = library_folder(obj, folder, fps)
    clips = [*library, *ends]
    src, dst = len(clips) - 2, len(clips) - 1
    began = time.perf_counter()
    rig = find_armature_rig(obj, ends[0].motion)
    clouds, _ = hops.library_point_clouds([c.motion for c in clips], src, rig)
    if weight is None:
        weight = library_weight([c.motion for c in clips], clouds, length, fps)
    max_stay = max(1, round(hops.S_MAX_SECONDS * fps)) if weight == 0 else None
    found = hops.search_trigger(clouds, src, dst, trigger, offset=offset, blend_frames=length, weight=weight / fps,
                                max_stay=max_stay)
    seconds = time.perf_counter() - began
    direct_won = found.hop == dst and found.hop_offset == offset and found.stay_hop == 0
    return HopChoice(source.name, destination.name, start, trigger, offset, length, clips[found.hop], found.hop_offset,
                     found.stay_src, found.stay_hop, found.smoothness, found.responsiveness, found.direct,
                     direct_won, float(weight), "actions" if folder is None else folder, len(clips), seconds, tuple(skipped),
                     tuple(covered_source(obj, source, destination, start + trigger + found.stay_src)))


def track_levels(obj: bpy.types.Object, *strips) -> list[int]:
    """The index of each strip's track, from the bottom (an upper strip replaces a lower one where both play)."""
    tracks = list(obj.animation_data.nla_tracks)
    return [next(k for k, t in enumerate(tracks) if strip.name in t.strips) for strip in strips]


def covered_source(obj: bpy.types.Object, source, destination, blend_start: int) -> list[str]:
    """A warning when the destination's track lies above the source's and it starts before ``blend_start``:
    the NLA then plays the destination over the source from its start, where the transition has the
    source play on."""
    below, above = track_levels(obj, source, destination)
    if above < below or destination.frame_start >= blend_start:
        return []
    return [f"Blender plays {destination.name!r} over {source.name!r} from frame {round(destination.frame_start)} "
            f"(its track is above), before the transition's first blend at frame {blend_start}; move "
            f"{destination.name!r} to a track below {source.name!r} to see the source until then"]


# ---------------------------------------------------------------------------
# The writes


def insert_hop(obj: bpy.types.Object, choice: HopChoice) -> tuple[bpy.types.NlaStrip | None, list[str]]:
    """Trim the source strip where the first blend ends and, unless the direct transition won, add the hop
    strip (selected) over both blends; record the choice for the panel. Returns the hop strip (or None)
    and notes for the report.

    The hop strip holds nothing past its ends (extrapolation Nothing), and so does the source strip
    when its track lies above the destination's: held, its last frame would cover the destination
    for good. The source's action is never written; a hop from a BVH file is keyed into a new action.
    """
    from .convert import slot_for, write_action
    from .nla import core_offsets
    from .properties import find_strip

    source, destination = find_strip(obj, choice.source), find_strip(obj, choice.destination)
    cores = {s.name: core_offsets(obj, s) for s in (source, destination)}  # (before the hop cuts them)
    strip = None
    if not choice.direct_won:
        hop = choice.hop
        action = hop.action
        if action is None:
            action = write_action(obj, hop.motion, Path(hop.path).stem, frame_start=hop.first)
        first, last = choice.hop_span
        # hop frame h plays at source frame h + o_sh, so the strip plays hop frames first - start - o_sh ..
        frames = [f - choice.source_start - choice.hop_offset for f in (first, last)]
        track = _hop_track(obj, [source, destination], first, first + _action_length(action) / hop.scale)
        strip = track.strips.new(hop.name, first, action)
        if strip.action_slot is None:
            strip.action_slot = slot_for(obj, action, None)
        strip.scale = hop.scale
        # the end first: the range shrinks from the whole action's, so the start never passes the end
        strip.action_frame_end = hop.first + frames[1] / hop.scale
        strip.action_frame_start = hop.first + frames[0] / hop.scale
        strip.frame_start_ui = first  # (the start stays put as the range shrinks; this says where it belongs)
        strip.use_auto_blend = False
        strip.extrapolation = 'NOTHING'
        strip.blend_in = strip.blend_out = choice.blend_frames - 1
        strip.select = True
        hop_core = (choice.blend_frames, max(choice.blend_frames + choice.stay_hop - 1, choice.blend_frames))
        _set_core(obj, strip, hop_core)
    _set_core(obj, source, (min(cores[source.name][0], choice.alone_until), choice.alone_until))
    settled = choice.settled - choice.offset  # destination frame from which it plays alone
    _set_core(obj, destination, (settled, max(cores[destination.name][1], settled)))
    # the strip's range, not its action: the end where the first blend ends
    source.action_frame_end = source.action_frame_start + (choice.source_end - choice.source_start) / source.scale
    notes = []
    source_level, destination_level = track_levels(obj, source, destination)
    if source_level > destination_level and source.extrapolation != 'NOTHING':
        notes.append(f"{source.name!r} no longer holds its last frame ({source.extrapolation.replace('_', ' ').title()}"
                     f" to Nothing): its track is above {destination.name!r}'s")
        source.extrapolation = 'NOTHING'
    obj.smart_motion.hop_json = json.dumps(choice.to_dict() | {"strip": strip.name if strip else ""})
    return strip, notes


def _set_core(obj: bpy.types.Object, strip, offsets: tuple[int, int]) -> None:
    """Give ``strip`` the edited core ``offsets`` (frames from its start), as Add as Soon as Possible keeps
    the cores its placement assumed: Synthesize then joins the strips as the search timed them."""
    from .nla import strip_settings

    item = strip_settings(obj, strip, create=True)
    item.core_first, item.core_last = offsets
    item.has_core = True


def _action_length(action) -> float:
    start, end = action.frame_range
    return end - start


def _hop_track(obj: bpy.types.Object, strips: list, first: float, last: float) -> bpy.types.NlaTrack:
    """The lowest track above both ``strips``' tracks that plays and has no strip over ``first..last``;
    else a new one right above the higher of them (the NLA blends an upper strip over the lower ones)."""
    anim = obj.animation_data
    tracks = list(anim.nla_tracks)
    above = max(k for k, t in enumerate(tracks) if any(s.name in t.strips for s in strips))
    solo = solo_track(obj)
    for track in tracks[above + 1:]:
        if (not (is_preview_track(track) or track.mute or (solo is not None and track.name != solo))
                and all(s.frame_end < first or s.frame_start > last for s in track.strips)):
            return track
    track = anim.nla_tracks.new(prev=tracks[above])
    track.name = HOP_TRACK
    return track


# ---------------------------------------------------------------------------
# Reports and the panel


def hop_text(choice: HopChoice) -> str:
    """The operator's report."""
    if choice.direct_won:
        what = (f"the direct transition wins (D {choice.direct:.4g}; no hop of {choice.n_clips - 2} clips does "
                f"better): {choice.source!r} trimmed to end at frame {choice.source_end}"
                + (f", {choice.stay_src} frames after the playhead" if choice.stay_src else ""))
    else:
        first, last = choice.hop_span
        what = (f"hop {choice.hop.name!r} inserted over frames {first}-{last}, S + wR "
                f"{choice.smoothness + choice.responsiveness:.4g} against direct {choice.direct:.4g}; "
                f"{choice.source!r} trimmed to end at frame {choice.source_end}")
    return f"{what} (searched {choice.n_clips} clips in {choice.seconds:.2f} s)"


def hop_lines(hop: dict) -> list[str]:
    """The panel's lines of the last Insert Hop (``to_dict``)."""
    lines = [f"Hop at frame {hop['trigger_frame']}: {hop['source']} → {hop['destination']}"]
    if hop["direct_won"]:
        lines.append(f"    direct wins (stay {hop['stay_src']} frames)")
    else:
        lines.append(f"    via {hop['hop']}, offset {hop['offset']} frames")
        lines.append(f"    stays {hop['stay_src']} + {hop['stay_hop']} frames, frames {hop['hop_span'][0]}-"
                     f"{hop['hop_span'][1]}")
    lines.append(f"    S {hop['smoothness']:.4g}, w·R {hop['responsiveness']:.4g}, direct D {hop['direct']:.4g}")
    if "weight" in hop:
        lines.append(f"    w {hop['weight']:.4g} per second")
    lines.append(f"    {hop['clips']} clips ({'file actions' if hop['library'] == 'actions' else 'folder'}), "
                 f"blends {hop['blend_frames']} frames, {hop['seconds']:.2f} s")
    return lines
