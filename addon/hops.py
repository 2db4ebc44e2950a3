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
then not read twice). A library that has not been precomputed is searched for
this one trigger frame (:func:`core.hops.search_trigger`).

Precomputed tables. In a folder library, the ``.npz`` files of the folder that
``core.hops.HopTable.load`` reads (``python -m core hops precompute``) come
first (:func:`folder_table`). A table holds file names, no paths, so it is the
table of the two strips when

* its offset, blend frames and frame rate are the scene's (``o_s->d``, Hop
  Blend, the scene's rate): otherwise it is another transition's, passed over;
* its source's and destination's file stems are the actions the source and
  destination strips play (Blender's BVH importer names an action after its
  file): otherwise it is another pair's, passed over;

and it is used unless it is stale, which the report says with the table's name
and what differs: a strip that does not play its action whole, a clip length
(the strip's, or the chosen hop file's in the folder) other than the frame
count the table keeps, a source or destination file of the folder whose poses,
mapped onto the armature, lie further than ``POSE_TOLERANCE`` of the body's
size from the strip's (RMS; an imported action is the file's up to rounding at
best, not bit for bit, so the table's digests cannot tell), or a chosen hop
file missing from the folder. The table's row at the trigger is then the choice (O(1)), its
weight the one used; the hop is the folder's file, mapped onto the armature as
in a search, or the strip's own action when the table chose the source or the
destination. Several tables of the same transition: the first by file name.

As in :mod:`.synthesis`, everything that can fail comes first, into plain values
(:class:`HopChoice`); the writes (:func:`insert_hop`) follow and do not fail.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

from ..core.text import counted
from .state import session_store

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
    weight: float  # w per second, as given, eq. (5)'s or the table's
    library: str  # "actions" or the folder
    n_clips: int
    seconds: float  # the search's time: the point clouds (forward kinematics of every clip), then search_trigger;
    # or the table's: reading the folder's tables and the files checked or used
    skipped: tuple = ()  # BVH files left out, with why
    warnings: tuple = ()  # what Blender will play otherwise than the transition found
    table: str = ""  # the precomputed table's file name the choice was read from; "" when searched

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
                "hop_span": list(self.hop_span) if not self.direct_won else None, "table": self.table}


# ---------------------------------------------------------------------------
# What to work on


def hop_strips(obj: bpy.types.Object, strips: list, current: int) -> tuple:
    """``(source, destination)`` of the two selected ``strips`` (by start frame) for a trigger at scene
    frame ``current``, or ``ValueError`` saying what to fix."""
    if len(strips) != 2:
        raise ValueError(f"{counted(len(strips), 'NLA strip')} of armature {obj.name!r} selected: Insert Hop needs two, "
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
    from .clips import file_actions

    return [HopClip(action.name, motion, action, float(action.frame_range[0]))
            for action, motion in file_actions(obj, plain)]


def library_folder(obj: bpy.types.Object, folder: str, fps: float) -> tuple[list, list[str]]:
    """``([HopClip], skipped)`` of the BVH files in ``folder`` whose joints are ``obj``'s bones, at ``fps``;
    ``skipped`` says which files were left out and why. ``ValueError`` when the folder is not set, not
    found, or has no such file."""
    from .clips import folder_clips

    clips, skipped = folder_clips(obj, folder, fps, library="hop library", setting="Hop Library Folder")
    return [_hop_clip(clip) for clip in clips], skipped


def folder_clip(obj: bpy.types.Object, file: Path, fps: float, armature: tuple | None = None) -> HopClip:
    """The BVH ``file`` as a clip of ``obj`` at ``fps`` (:func:`.clips.folder_clip`, which raises
    ``ValueError`` for a file on another skeleton)."""
    from . import clips

    return _hop_clip(clips.folder_clip(obj, file, fps, armature))


def _hop_clip(clip) -> HopClip:
    """A folder's clip (:class:`.clips.FolderClip`) as a hop clip: no action until it is chosen."""
    return HopClip(clip.name, clip.motion, None, 1.0, path=str(clip.path))


def plays_whole(strip: bpy.types.NlaStrip) -> bool:
    """Whether ``strip`` plays its action's whole range once, unscaled: what the action is as a clip."""
    start, end = strip.action.frame_range
    return (abs(strip.action_frame_start - start) < 1e-6 and abs(strip.action_frame_end - end) < 1e-6
            and abs(strip.scale - 1.0) < 1e-6)


# ---------------------------------------------------------------------------
# Precomputed tables


#: RMS joint distance between a folder's file and what a strip plays, in body sizes, below which they are the
#: same clip. Imported into this armature, a file and its action differ by rounding only (1e-6); imported
#: into another armature of the same bones and played on this one, by a little more (the test scene's bow:
#: 0.03, its bones' rest directions differ); another clip, even of the same kind of motion, by far more
#: (a happy bow against that bow: 0.17).
POSE_TOLERANCE = 0.05


def folder_table(obj: bpy.types.Object, folder: str, strips: tuple, ends: list, trigger: int, offset: int,
                 blend_frames: int, fps: float) -> tuple[tuple | None, list[str]]:
    """``((file name, HopTable, hop HopClip), warnings)``: the first table of ``folder`` (by file name) of the
    transition from ``strips[0]`` to ``strips[1]`` (whose clips are ``ends``) at ``offset``, ``blend_frames``
    and ``fps`` that is not stale, with the hop of its row at ``trigger``; ``(None, warnings)`` when there is
    none. ``warnings`` name each stale table and what differs (the rule: the module docstring)."""
    from ..core.hops import HopTable

    path = Path(bpy.path.abspath(folder))
    warnings: list[str] = []
    if not folder or not path.is_dir():
        return None, warnings  # (library_folder says what to set)
    for file in sorted(path.glob("*.npz")):
        try:
            table = HopTable.load(file)
        except ValueError:  # another .npz: not a table
            continue
        if not (table.offset == offset and table.blend_frames == blend_frames and abs(table.fps - fps) <= 1e-4 * fps
                and [Path(table.hops[k]).stem for k in (table.src, table.dst)] == [s.action.name for s in strips]):
            continue  # another transition's table
        try:
            hop = table_hop(obj, path, table, strips, ends, trigger)
        except ValueError as error:
            warnings.append(f"hop table {file.name!r} is stale, not used: {error}; searched instead (precompute "
                            "it again)")
            continue
        return (file.name, table, hop), warnings
    return None, warnings


def table_hop(obj: bpy.types.Object, folder: Path, table, strips: tuple, ends: list, trigger: int) -> HopClip:
    """The hop clip of ``table``'s row at ``trigger`` (a file of ``folder``, or ``ends[0]`` / ``ends[1]`` when
    it is the source or the destination), or ``ValueError`` saying what makes the table stale."""
    if len(table.frames) == 0:
        raise ValueError("it keeps no clip lengths (it was written before they were kept)")
    for k, strip, end in zip((table.src, table.dst), strips, ends):
        name = table.hops[k]
        if not plays_whole(strip):
            raise ValueError(f"strip {strip.name!r} plays part of action {strip.action.name!r}, the table the whole "
                             f"of {name}")
        if end.motion.n_frames != table.frames[k]:
            raise ValueError(f"strip {strip.name!r} plays {end.motion.n_frames} frames, the table's {name} has "
                             f"{table.frames[k]}")
        if (folder / name).is_file():
            away = pose_distance(end.motion, folder_clip(obj, folder / name, table.fps).motion)
            if away > POSE_TOLERANCE:
                raise ValueError(f"{name} of the folder is not what strip {strip.name!r} plays: their joints lie "
                                 f"{away:.1%} of the body's size apart (RMS)")
    hop = int(table.choices[table.index(trigger), 0])
    if hop in (table.src, table.dst):
        return ends[0 if hop == table.src else 1]
    file = folder / table.hops[hop]
    if not file.is_file():
        raise ValueError(f"its hop at trigger {trigger}, {table.hops[hop]}, is not in the folder")
    clip = folder_clip(obj, file, table.fps)
    if clip.motion.n_frames != table.frames[hop]:
        raise ValueError(f"{table.hops[hop]} of the folder has {clip.motion.n_frames} frames, the table's "
                         f"{table.frames[hop]}")
    if len(table.digests) and file_digest(file, table.fps) != table.digests[hop]:
        raise ValueError(f"{table.hops[hop]} of the folder is not the file the table was computed on (its poses "
                         "differ); precompute the table again")
    return clip


def file_digest(file: Path, fps: float) -> str:
    """core.hops.clip_digest of a BVH file read as ``hops precompute`` reads it (at the table's rate)."""
    from ..core.bvh import read_bvh
    from ..core.hops import clip_digest

    motion = read_bvh(file)
    return clip_digest(motion if abs(motion.fps - fps) <= 1e-4 * fps else motion.resampled(fps))


def overridden_weight(given: float | None, used: float, table: str) -> list[str]:
    """A warning when a Stay Weight was given (Automatic Weight off) and the table's, which its
    choices were made with, differs from it."""
    if given is None or math.isclose(given, used, rel_tol=1e-6, abs_tol=1e-12):
        return []
    return [f"the hop table {table!r} was computed with weight {used:.4g} per second, not the Stay Weight "
            f"{given:.4g} given: its choice is used; precompute it again with --weight {given:.4g}, or move it out "
            "of the folder to search with the weight given"]


def pose_distance(a, b) -> float:
    """The RMS distance of each joint of motion ``a`` from the same joint of ``b`` on the same frame (both
    on one skeleton), over every frame and joint, as a fraction of the body's size (the rest joints' RMS
    distance from their centre); inf when the frame counts differ."""
    if a.n_frames != b.n_frames:
        return math.inf
    rest = a.skeleton.rest_positions()
    size = np.sqrt(np.mean(np.sum((rest - rest.mean(axis=0)) ** 2, axis=1)))
    return float(np.sqrt(np.mean(np.sum((a.global_positions() - b.global_positions()) ** 2, axis=-1))) / size)


# ---------------------------------------------------------------------------
# The search


#: eq. (5) weights by library: {(clip digests, blend frames, fps): w per second}. eq. (5) reads
#: 100 random transitions of the library (most of a second for ten clips), so it is worked out
#: once per library content and kept for the session, not at every click.
_DEFAULT_WEIGHTS = session_store("library weights", 16)


def library_weight(motions: list, clouds: list, blend_frames: int, fps: float) -> float:
    """eq. (5)'s default weight (core.hops.default_weight) of a library, per second, kept by content."""
    from ..core import hops

    key = (tuple(hops.clip_digest(m) for m in motions), int(blend_frames), float(fps))
    return _DEFAULT_WEIGHTS.get(key, lambda: hops.default_weight(clouds, blend_frames, fps))


def find_hop(obj: bpy.types.Object, strips: list, current: int, *, weight: float | None, blend_seconds: float,
             folder: str | None = None, progress=None) -> HopChoice:
    """The best one-hop transition from the source to the destination of ``strips`` at the playhead
    ``current`` (core.hops eq. 2), the library the file's actions or, with ``folder``, its BVH files:
    read from a precomputed table of the folder when one is made for this transition (:func:`folder_table`,
    its weight then the one used), else searched for this trigger frame.

    weight   w per second (>= 0); stays are bounded by the clips, and by 1 s each when it is 0.
             None: eq. (5)'s default for this library (:func:`library_weight`).
    progress (core.progress) hears the search's share done.
    Changes nothing; ``ValueError`` saying what to fix.
    """
    from ..core import hops
    from .convert import scene_fps, strip_to_motion
    from .convert import find_armature_rig

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
    stale: list[str] = []  # tables of this transition not used, with why
    if folder is not None:
        began = time.perf_counter()
        precomputed, stale = folder_table(obj, folder, (source, destination), ends, trigger, offset, length, fps)
        if precomputed is not None:
            name, table, hop = precomputed
            row = table.index(trigger)  # O(1): the table's triggers are consecutive
            hop_index, hop_offset, stay_src, stay_hop = (int(x) for x in table.choices[row])
            return HopChoice(source.name, destination.name, start, trigger, offset, length, hop, hop_offset, stay_src,
                             stay_hop, float(table.smoothness[row]), float(table.responsiveness[row]),
                             float(table.direct[row]),
                             hop_index == table.dst and hop_offset == offset and stay_hop == 0, table.weight,
                             folder, len(table.hops), time.perf_counter() - began,
                             warnings=tuple(stale + overridden_weight(weight, table.weight, name)),
                             table=name)
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
                                max_stay=max_stay, progress=progress)
    seconds = time.perf_counter() - began
    direct_won = found.hop == dst and found.hop_offset == offset and found.stay_hop == 0
    return HopChoice(source.name, destination.name, start, trigger, offset, length, clips[found.hop], found.hop_offset,
                     found.stay_src, found.stay_hop, found.smoothness, found.responsiveness, found.direct,
                     direct_won, float(weight), "actions" if folder is None else folder, len(clips), seconds, tuple(skipped),
                     tuple(stale))


def track_levels(obj: bpy.types.Object, *strips) -> list[int]:
    """The index of each strip's track, from the bottom (an upper strip replaces a lower one where both play)."""
    tracks = list(obj.animation_data.nla_tracks)
    return [next(k for k, t in enumerate(tracks) if strip.name in t.strips) for strip in strips]


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
    from .clips import track_above
    from .convert import write_action
    from .fcurves import slot_for
    from .timeline import core_offsets
    from .strips import find_strip

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
        track = track_above(obj, [source, destination], first, first + _action_length(action) / hop.scale, HOP_TRACK)
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
                     f" to Nothing): its track is above that of {destination.name!r}")
        source.extrapolation = 'NOTHING'
    obj.smart_motion.hop_json = json.dumps(choice.to_dict() | {"strip": strip.name if strip else ""})
    return strip, notes


def _set_core(obj: bpy.types.Object, strip, offsets: tuple[int, int]) -> None:
    """Give ``strip`` the edited core ``offsets`` (frames from its start), as Add as Soon as Possible keeps
    the cores its placement assumed: Synthesize then joins the strips as the search timed them."""
    from .strips import strip_settings

    item = strip_settings(obj, strip, create=True)
    item.core_first, item.core_last = offsets
    item.has_core = True


def _action_length(action) -> float:
    start, end = action.frame_range
    return end - start


# ---------------------------------------------------------------------------
# Reports and the panel


def hop_text(choice: HopChoice) -> str:
    """The operator's report."""
    if choice.direct_won:
        from ..core.hops import HOP_MIN_GAIN

        what = (f"the direct transition wins (D {choice.direct:.4g}; no hop of {counted(choice.n_clips - 2, 'clip')} "
                f"lowers it by {HOP_MIN_GAIN:.0%} or more): {choice.source!r} trimmed to end at frame {choice.source_end}"
                + (f", {counted(choice.stay_src, 'frame')} after the playhead" if choice.stay_src else ""))
    else:
        first, last = choice.hop_span
        what = (f"hop {choice.hop.name!r} inserted over frames {first}-{last}, S + wR "
                f"{choice.smoothness + choice.responsiveness:.4g} against direct {choice.direct:.4g}; "
                f"{choice.source!r} trimmed to end at frame {choice.source_end}")
    if choice.table:
        return (f"{what} (from the precomputed table {choice.table!r} of {counted(choice.n_clips, 'clip')}, not searched: its "
                f"weight {choice.weight:.4g} per second; {choice.seconds:.2f} s)")
    return f"{what} (searched {counted(choice.n_clips, 'clip')} in {choice.seconds:.2f} s)"


def hop_lines(hop: dict) -> list[str]:
    """The panel's lines of the last Insert Hop (``to_dict``)."""
    lines = [f"Hop at frame {hop['trigger_frame']}: {hop['source']} → {hop['destination']}"]
    if hop["direct_won"]:
        lines.append(f"    direct wins" + (f", delayed by a stay of {counted(hop['stay_src'], 'frame')}" if hop['stay_src'] else ""))
    else:
        lines.append(f"    via {hop['hop']}, offset {counted(hop['offset'], 'frame')}")
        lines.append(f"    stays {hop['stay_src']} + {hop['stay_hop']} frames, frames {hop['hop_span'][0]}-"
                     f"{hop['hop_span'][1]}")
    lines.append(f"    S {hop['smoothness']:.4g}, w·R {hop['responsiveness']:.4g}, direct D {hop['direct']:.4g}")
    if "weight" in hop:
        lines.append(f"    w {hop['weight']:.4g} per second")
    lines.append(f"    {counted(hop['clips'], 'clip')} ({'file actions' if hop['library'] == 'actions' else 'folder'}), "
                 f"blends {counted(hop['blend_frames'], 'frame')}, {hop['seconds']:.2f} s")
    if hop.get("table"):
        lines.append(f"    from table {hop['table']} (not searched)")
    return lines
