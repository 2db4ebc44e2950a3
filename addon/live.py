"""Live re-synthesis: while a preview is on, it follows the user's edits by itself (Oshita 2008, 3.3).

The 2008 prototype re-synthesized while clips were dragged; here the preview
follows, with no button, whenever the user moves, trims or re-times a source
strip, mutes or unmutes one, changes a core range or the responsiveness
slider, or turns a strip's synchronized blending on or off or edits the
influence of one that has it on. The Live Updates toggle in the panel (``Scene.smart_motion.live``)
turns it off.

How a change reaches the preview:

1. ``depsgraph_update_post``, after Blender has evaluated an edit (never
   while drawing), compares each previewed armature's :func:`timeline_key`,
   everything the synthesis reads from the strips, with the one last
   synthesized. A difference asks for an update. Updates while the frame
   moves (playback, scrubbing) are not compared: strips are edited while it
   stands still. An edit of a source action's keys is not followed (under
   the preview's solo Blender does not evaluate the sources); Synthesize is.
2. The update runs from a timer: a drag gives many depsgraph updates, and
   the timer runs one re-synthesis for all of those since its last run. In
   background Blender, where no timer runs, it runs at once.
3. :func:`refresh` re-reads only the strips whose reading changed (the
   motions are kept by what each strip plays), re-synthesizes with
   :class:`core.resynthesis.Resynthesis`, which re-plans only from the first
   pair the change touches, and rewrites only the preview keys whose values
   changed: the preview is keyed in segments (:mod:`.preview`), and only
   the segments holding them are written.

What is kept per armature (:class:`_Session`) lives in this module, not in
the file: it is a cache, rebuilt from the strips whenever it cannot be
trusted (a file load, an undo or redo, another Synthesize).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

import bpy
from bpy.app.handlers import persistent

from . import timeline
from .convert import (armature_skeleton, bone_channels, changed_bone_channels, find_armature_rig, scene_fps,
                      strip_to_motion)
from .fcurves import bone_path
from .preview import (changed_windows, curve_count, grow, keyed_rows, play, segment_curves, segment_name,
                      segment_ranges, segments_holding, solo_back, write)
from .report import plan_json, Synthesis
from .state import (forget_edits, note_edited, on_preview_shown, on_setting_changed, preview_motion, restoring,
                    session_store, watch_edits, WATCHED_TYPES)
from .strips import (follow_renames, performed_current, plays, preview_action_name, preview_segments, preview_sources,
                     PREVIEW_STRIP, preview_track, track_index, user_blend_s)
from .sync_groups import blending_key
from .synthesis import record_plan

# Keys another synthesis wrote (Synthesize, an undone state) that differ from the live one's by
# less than this share are rounding (a few float32 steps), and are left as they are.
ROUNDING = 5e-7


@dataclass
class _Session:
    """What the last live update of one armature computed, to redo only what changes."""

    resynthesis: object  # core.resynthesis.Resynthesis
    rig_key: tuple = ()
    rig: object = None
    motions: dict = field(default_factory=dict)  # strip name -> (read key, action session_uid, Motion)
    key: tuple | None = None  # the timeline_key last synthesized
    actions: tuple = ()  # session_uid of each segment action of the preview whose keys ``channels`` holds
    start: int = 0  # its first frame
    channels: dict | None = None  # (data path, index) -> (F, 2) float32 (frame, value) rows, as keyed
    values: dict = field(default_factory=dict)  # (data path, index) -> the value column of ``channels``
    motion: object = None  # the core Motion the keys show (None: not known), to find the frames that change
    curves: dict = field(default_factory=dict)  # (data path, index) -> the preview's F-curve per segment
    ranges: list = field(default_factory=list)  # (first, last) frame indices of each segment (.preview)
    armature: tuple | None = None  # armature_skeleton of the armature, read once per session
    stats: dict = field(default_factory=dict)  # what the last refresh did, for the benchmark and tests
    groups: dict = field(default_factory=dict)  # synchronized groups' blends, by group (timeline.group_clip)


_sessions = session_store("live sessions", 64)  # armature session_uid -> _Session
_pending: set[str] = set()  # names of armatures waiting for the timer
_last_frame: dict[int, int] = {}  # scene session_uid -> frame at the last depsgraph update or frame change


def _session(obj: bpy.types.Object) -> _Session:
    session = _sessions.get(obj.session_uid)
    if session is None:
        from ..core.resynthesis import Resynthesis

        session = _sessions[obj.session_uid] = _Session(Resynthesis())
    return session


def forget(obj: bpy.types.Object | None = None) -> None:
    """Drop what live updates keep of ``obj`` (of every armature when ``None``)."""
    if obj is None:
        _sessions.clear()
    else:
        _sessions.pop(obj.session_uid, None)


def adopt(obj: bpy.types.Object, scene: bpy.types.Scene | None = None) -> None:
    """Take a preview Synthesize just wrote as up to date: nothing is synthesized again until an edit.

    Its keys are read, and the motion they show computed, only at the first
    live update (:func:`_rewritten`).
    """
    actions = preview_segments(obj)
    if not actions:
        return
    session = _session(obj)
    session.key = timeline_key(obj, scene or bpy.context.scene)
    session.actions, session.channels, session.motion = _identity(actions), None, None
    obj.smart_motion.live_error = ""  # (why an earlier live update failed is not this preview's)
    # Synthesize read every strip: what was kept may be of actions edited since (their keys are
    # not in the timeline key, and under the preview's solo Blender does not evaluate them)
    session.motions, session.groups = {}, {}


on_preview_shown("live", adopt)  # a preview shown is one live updates follow from then on


def timeline_key(obj: bpy.types.Object, scene: bpy.types.Scene) -> tuple:
    """Everything a live synthesis of ``obj`` reads from its strips and settings, cheap to compare."""
    sources = preview_sources(obj)
    playing = [s for s in sources if plays(obj, s)]
    strips = tuple(
        (s.name, s.frame_start, s.frame_end, _read_key(s), s in playing, timeline.core_offsets(obj, s, playing),
         performed_current(obj, s), blending_key(obj, s), user_blend_s(obj, s), track_index(obj, s))
        for s in sources)
    return (scene.smart_motion.responsiveness, scene_fps(scene), obj.smart_motion.bone_mapping, strips)


def _read_key(strip: bpy.types.NlaStrip) -> tuple:
    """What reading ``strip`` into a motion depends on apart from the action's keys: not where it starts
    (whole frames), only what part of the action it plays and how."""
    action = strip.action
    return (strip.type, action.session_uid if action is not None else 0,
            strip.action_slot.identifier if strip.action_slot is not None else "",
            strip.action_frame_start, strip.action_frame_end, strip.scale, strip.repeat, strip.use_reverse,
            strip.use_animated_time, strip.frame_end - strip.frame_start, strip.frame_start % 1.0)


def reader(obj: bpy.types.Object):
    """A strip reader for :func:`.timeline.strip_clips` sharing what the live updates of ``obj`` read
    (Perform places each clip after strips the preview has just read), or ``None``."""
    session = _sessions.get(obj.session_uid)
    return _reader(session) if session is not None else None


def placer(obj: bpy.types.Object):
    """``place(clips, clip, *, responsiveness, t_current, rig) -> core.synthesize.Scheduled`` for :func:`.arrange.asap_placement` from the
    live re-synthesis of ``obj`` (its track and analyses of the strips it last synthesized; the
    same start as from scratch, :meth:`core.resynthesis.Resynthesis.as_soon_as_possible`), or
    ``None`` without one."""
    session = _sessions.get(obj.session_uid)
    if session is None or session.rig is None:
        return None

    def place(clips, clip, *, responsiveness, t_current, rig):
        return session.resynthesis.scheduled_start(clips, clip, responsiveness=responsiveness,
                                                   t_current=t_current)

    return place


def _reader(session: _Session):
    """``read(obj, strip, fps)`` for :func:`.timeline.strip_clips` that keeps what it read, by strip."""
    def read(obj, strip, fps):
        fps = scene_fps(bpy.context.scene) if fps is None else fps  # (what strip_to_motion reads with)
        key = (_read_key(strip), fps)
        kept = session.motions.get(strip.name)
        if kept is not None and kept[0] == key:
            return kept[2]
        motion = strip_to_motion(obj, strip, fps)
        session.motions[strip.name] = (key, strip.action.session_uid, motion)
        session.stats["strips read"] = session.stats.get("strips read", 0) + 1
        return motion

    return read


def refresh(obj: bpy.types.Object, scene: bpy.types.Scene | None = None, *, raising: bool = False) -> bool:
    """Bring ``obj``'s preview up to date with its sources; whether anything was synthesized.

    Nothing happens without a preview or while it is up to date. A timeline
    that cannot be synthesized (fewer than two sources that play, a strip
    that cannot be read) leaves the preview as it is, and the reason in
    ``obj.smart_motion.live_error`` for the panel; the next edit tries again.
    With ``raising`` (Perform), the ``ValueError`` is raised instead.
    """
    import time

    scene = scene or bpy.context.scene
    if obj.smart_motion.preview_action is None or preview_track(obj) is None:
        return False
    preview = _own_preview(obj, preview_segments(obj))
    # a source renamed is known by its settings only until it moves: re-key them to its name now
    follow_renames(obj)
    session = _session(obj)
    key = timeline_key(obj, scene)
    if key == session.key and session.actions == _identity(preview):
        return False
    began = time.perf_counter()
    session.stats = {"strips read": 0}
    try:
        result, sources = _synthesized(obj, scene, session)
    except ValueError as error:  # what the user can fix: the panel says what
        if raising:
            raise
        obj.smart_motion.live_error = str(error)
        session.key = key  # tried; the next edit tries again
        return False
    except Exception as error:
        return _failed(obj, session, key, error, raising)
    obj.smart_motion.live_error = ""
    synthesized = time.perf_counter()
    try:
        written = _write_preview(obj, preview, session, result)
    except Exception as error:
        return _failed(obj, session, key, error, raising)
    if written or _plan_changed(obj, result):
        record_plan(obj, sources, result)
    if written:
        preview_motion(obj, result.motion, result.start)  # (the footprints follow it: addon/footprints.py)
        # The keys now differ from those Synthesize wrote: Bake synthesizes anew (the same
        # result) rather than every live update hashing every source key.
        obj.smart_motion.preview_signature = ""
    # (no key written: preview and plan stay, equal to rounding to what was recomputed; unless the plan
    # says other clips, rejections or compositions, as when a rejected strip moves or is muted)
    session.key = key
    session.stats.update({"keys written": written, "synthesis s": synthesized - began,
                          "total s": time.perf_counter() - began,
                          "core": getattr(session.resynthesis, "last", None)})
    return True


def _failed(obj: bpy.types.Object, session: _Session, key: tuple, error: Exception, raising: bool) -> bool:
    """After an unexpected error (a fault of ours): tried for this timeline, so that it is said once
    (a traceback) and not again on every depsgraph update but at the next edit; nothing kept is
    trusted (the keys may be half written, the incremental synthesis half updated); the panel says
    what went wrong. Raised again with ``raising``; else returns False (nothing synthesized)."""
    session.key, session.channels, session.motion, session.rig_key = key, None, None, ()
    obj.smart_motion.live_error = (f"live update failed ({type(error).__name__}: {error}); "
                                   "Synthesize makes the preview anew")
    if raising:
        raise error
    traceback.print_exc()
    return False


def _plan_changed(obj: bpy.types.Object, result) -> bool:
    """Whether ``result``'s plan differs from the one recorded on ``obj`` in more than rounding: in its
    clips, rejections, warnings or what composes over what (the rest follows the keys)."""
    import json

    try:
        recorded = json.loads(obj.smart_motion.plan_json)
    except ValueError:
        return True
    plan = json.loads(plan_json(result))  # (as recorded: lists, not tuples)

    def composed(p: dict) -> list:
        return [(c.get("clip"), c.get("base"), c.get("parts"), c.get("blend_in"), c.get("blend_out"))
                for c in p.get("compositions", ())]

    return (any(plan.get(k) != recorded.get(k) for k in ("clips", "rejected", "warnings", "groups"))
            or composed(plan) != composed(recorded))


def _own_preview(obj: bpy.types.Object, preview: list) -> list:
    """``obj``'s preview segment actions, its own: a duplicated armature shares its original's (the
    ``preview_action`` pointer and the preview track are copied with it), and a live update of one
    must not write the other's preview: copies of the shared ones, played from then on."""
    others = {a for o in bpy.data.objects if o != obj and o.type == 'ARMATURE'
              for a in preview_segments(o)}
    if not others.intersection(preview):
        return preview
    own = [action.copy() for action in preview]
    for k, action in enumerate(own):
        action.name = segment_name(preview_action_name(obj), k)
    obj.smart_motion.preview_action = own[0]
    first = min(a.frame_range[0] for a in own)
    last = max(a.frame_range[1] for a in own)
    play(preview_track(obj), own, round(first), round(last - first) + 1, PREVIEW_STRIP)
    return own


def _identity(actions: list) -> tuple:
    """What tells the preview's segment actions from any others (an undo or another Synthesize makes new ones)."""
    return tuple(a.session_uid for a in actions)


def _synthesized(obj: bpy.types.Object, scene: bpy.types.Scene, session: _Session):
    """The Result of the preview's sources that play, re-synthesized incrementally, and those sources."""
    sources = [s for s in preview_sources(obj) if plays(obj, s)]
    if len(sources) < 2:
        raise ValueError(
            f"{len(sources)} source strip{'' if len(sources) == 1 else 's'} of the preview play"
            f"{'s' if len(sources) == 1 else ''}; unmute one to join it again, or Synthesize other strips")
    # (a synchronized group is one clip, blended again only when what it reads changed)
    clips, groups = timeline.sequence_clips(obj, sources, scene_fps(scene), read=_reader(session), kept=session.groups)
    rig_key = (obj.smart_motion.bone_mapping, id(clips[0].motion))
    if session.rig_key != rig_key:
        session.rig, session.rig_key = find_armature_rig(obj, clips[0].motion), rig_key
        from ..core.resynthesis import Resynthesis

        session.resynthesis = Resynthesis(rig=session.rig)
    result = session.resynthesis.update(clips, responsiveness=scene.smart_motion.responsiveness)
    return Synthesis(result, groups), sources


def _write_preview(obj: bpy.types.Object, preview: list, session: _Session, result) -> int:
    """Write ``result`` into the preview's segment actions ``preview`` (:mod:`.preview`): per channel
    whose values changed, its segments from the first changed key to the last; or every key when
    the preview's frames changed (another start or length). Returns the keys that changed."""
    import numpy as np

    motion, start = result.motion, result.start
    if (session.actions != _identity(preview) or session.channels is None
            or curve_count(preview) != sum(len(c) for c in session.curves.values())):
        # keys written by someone else (Synthesize, an undo; F-curves deleted or added by hand, whose
        # kept references would be stale): read them; what motion they show is not known
        _keep_keys(session, segment_curves(preview))
        session.actions, session.start, session.motion = _identity(preview), _first_frame(session), None
        session.armature = armature_skeleton(obj)
    grows = session.motion is not None and session.start == start and motion.n_frames > session.motion.n_frames
    if grows:
        # a clip added after the others (Add as Soon as Possible, Perform): the keys up to the old end
        # stay where they do not change, the curves grow by the new frames
        old = session.motion
        windows = changed_windows(old, motion[:old.n_frames])
        preview = _grow(session, obj, preview, motion.n_frames)
        windows = {j: (windows.get(j, (old.n_frames,))[0], motion.n_frames - 1)
                   for j in range(len(motion.skeleton))}
    elif session.motion is None or session.start != start or session.motion.n_frames != motion.n_frames:
        return _rewritten(obj, preview, session, result)
    else:
        windows = changed_windows(session.motion, motion)
    written = 0
    for path, index, first, values in changed_bone_channels(obj, motion, windows, session.values,
                                                            session.armature):
        keyed = session.values[(path, index)]
        values = values.astype(np.float32)
        changed = first + np.flatnonzero(values != keyed[first:first + len(values)])
        if not changed.size:
            continue
        keyed[first:first + len(values)] = values
        segments = segments_holding(int(changed[0]), int(changed[-1]), len(keyed))
        if not _write_segments(session, (path, index), segments):
            # keys of the preview edited by hand: the whole preview written anew
            session.values, session.curves = {}, {}
            return _rewritten(obj, preview, session, result)
        written += changed.size
    return _written(obj, preview, session, motion, start, grows, written)


def _write_segments(session: _Session, channel: tuple, segments) -> bool:
    """The kept rows of ``channel`` written into its F-curves of ``segments`` (in bulk: Blender's one bulk
    write takes a whole curve); False where a curve no longer has the keys it had (edited by hand: the
    caller writes the preview anew)."""
    co, curves = session.channels[channel], session.curves.get(channel, ())
    if len(curves) != len(session.ranges):
        return False
    for k in segments:
        first, last = session.ranges[k]
        points = curves[k].keyframe_points
        if len(points) != last - first + 1:
            return False
        points.foreach_set("co", co[first:last + 1].ravel())  # (rows of the kept array: no copy)
    return True


def _written(obj: bpy.types.Object, preview: list, session: _Session, motion, start: int, grows: bool,
             written: int) -> int:
    """The keys written for ``motion`` are in: the preview's strips over them when the curves grew, the
    depsgraph told when any changed; returns ``written``."""
    session.motion = motion
    if grows:
        play(preview_track(obj), preview, start, motion.n_frames, PREVIEW_STRIP)
    if written:
        # The armature's animation evaluated again, at the frame Blender stands on, from the keys as
        # now written (a test shows the pose). (Blender copies each segment action written into for
        # its evaluation, whatever is tagged here: hence segments of their own, :mod:`.preview`.)
        obj.update_tag(refresh={'TIME'})
    return written


def _grow(session: _Session, obj: bpy.types.Object, preview: list, frames: int) -> list:
    """Every preview curve grown to ``frames`` linear keys (:func:`.preview.grow`), the kept rows with
    it: the new keys hold the last value until written. Returns the segment actions, new ones added."""
    import numpy as np

    grown = {}
    for key, co in session.channels.items():
        rows = np.empty((frames, 2), dtype=np.float32)
        rows[:len(co)] = co
        rows[len(co):, 0] = co[-1, 0] + np.arange(1, frames - len(co) + 1)
        rows[len(co):, 1] = co[-1, 1]
        grown[key] = rows
    preview = grow(preview, session.curves, grown, obj, preview_action_name(obj))
    _keep_keys(session, session.curves, grown)
    session.actions = _identity(preview)
    return preview


def _rewritten(obj: bpy.types.Object, preview: list, session: _Session, result) -> int:
    """The preview's keys brought to ``result`` when the motion they show is not known (after
    Synthesize, an undo) or its frames changed; returns the keys written.

    On the same frames, or more frames from the same start (the curves grow
    first, :func:`_grow`), every channel is computed and only the keys that
    differ by more than rounding are written (the keys may come from a full
    synthesis, which an incremental one equals to rounding: rewriting those
    would only make Bake synthesize again); on other frames, the segments are
    written anew and the preview strips made again over them.
    """
    import numpy as np

    motion, start = result.motion, result.start
    lengths = {len(v) for v in session.values.values()}
    if session.start == start and len(lengths) == 1 and lengths.pop() <= motion.n_frames:
        grows = len(next(iter(session.values.values()))) < motion.n_frames
        if grows:
            preview = _grow(session, obj, preview, motion.n_frames)
        keyed = session.values
        written = 0
        for bone, prop, values in bone_channels(obj, motion):
            path = bone_path(bone, prop)
            for index in range(values.shape[1]):
                new = values[:, index].astype(np.float32)
                old = keyed.get((path, index))
                if old is None:
                    break  # a channel the preview lacks: write it whole below
                changed = np.flatnonzero(np.abs(new - old) > ROUNDING * np.abs(old) + 1e-9)
                if changed.size:
                    old[changed] = new[changed]  # (the others stay as keyed)
                    segments = segments_holding(int(changed[0]), int(changed[-1]), len(old))
                    if not _write_segments(session, (path, index), segments):
                        break
                    written += changed.size
            else:
                continue
            break
        else:
            return _written(obj, preview, session, motion, start, grows, written)
    preview = write(obj, motion, preview_action_name(obj), start, into=preview)
    obj.smart_motion.preview_action = preview[0]
    play(preview_track(obj), preview, start, motion.n_frames, PREVIEW_STRIP)
    _keep_keys(session, segment_curves(preview))
    session.actions, session.start, session.motion = _identity(preview), start, motion
    return sum(len(v) for v in session.channels.values())


def _keep_keys(session: _Session, curves: dict, rows: dict | None = None) -> None:
    """Keep the preview's F-curves (:func:`.preview.segment_curves`) and their keys as read
    (:func:`.preview.keyed_rows`, or ``rows`` as just written), with a view of each curve's values."""
    session.curves = curves
    session.channels = keyed_rows(curves) if rows is None else rows
    session.values = {key: co[:, 1] for key, co in session.channels.items()}
    session.ranges = segment_ranges(len(next(iter(session.channels.values()), ())))


def _first_frame(session: _Session) -> int:
    return next((round(float(co[0, 0])) for co in session.channels.values() if len(co)), 0)


# ---------------------------------------------------------------------------
# Handlers


def _previewed(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    return [o for o in scene.objects if o.type == 'ARMATURE' and o.smart_motion.preview_action is not None]


@persistent
def on_depsgraph_update(scene: bpy.types.Scene, depsgraph) -> None:
    """Note the IDs the depsgraph updated (:func:`.state.note_edited`: Bake knows a preview unedited by
    them); ask for a live update of every previewed armature whose timeline changed."""
    # (whatever the Live Updates toggle says: Bake reads these; evaluated copies have uids of their own)
    note_edited((u.id.original.session_uid for u in depsgraph.updates), filter(depsgraph.id_type_updated, WATCHED_TYPES))
    for obj in _previewed(scene):
        solo_back(obj)  # (a source soloed, then un-soloed, while the preview played)
    if not scene.smart_motion.live:
        return
    frame = scene.frame_current
    moved = _last_frame.get(scene.session_uid) != frame
    _last_frame[scene.session_uid] = frame
    if moved and all((session := _sessions.get(o.session_uid)) is not None and session.key is not None
                     for o in _previewed(scene)):
        # Playback and scrubbing: every frame is a depsgraph update, and strips are edited while the frame
        # stands still; comparing every timeline on every frame would slow playback down with many strips;
        # an edit made during playback is taken in once it stops. (An undo asks again whatever the frame.)
        return
    request(scene)


def request(scene: bpy.types.Scene) -> None:
    """Ask for a live update of every previewed armature of ``scene`` whose timeline changed: after each
    depsgraph update, and for the settings the depsgraph does not see (the slider, a core range)."""
    if not scene.smart_motion.live:
        return
    for obj in _previewed(scene):
        follow_renames(obj)  # (as refresh: a renamed source stays one when it moves next)
        session = _sessions.get(obj.session_uid)
        if session is None or session.key != timeline_key(obj, scene):
            _pending.add(obj.name)
    if not _pending:
        return
    if bpy.app.background:
        run_pending()  # no event loop runs timers
    elif not bpy.app.timers.is_registered(run_pending):
        bpy.app.timers.register(run_pending, first_interval=0.0)


on_setting_changed("live", request)  # the slider, a core range: settings the depsgraph does not see


def run_pending() -> None:
    """The live updates asked for since the last run (a timer callback: returns ``None``, runs once)."""
    scene = bpy.context.scene
    names = sorted(_pending)
    _pending.clear()
    for name in names:
        obj = bpy.data.objects.get(name)
        if obj is not None and obj.type == 'ARMATURE' and scene.smart_motion.live:
            refresh(obj, scene)
    return None


@persistent
def on_undo(*_args) -> None:
    """An undo or a redo may have put back other preview keys and other strips: keep the motions
    read, but read the keys again and re-synthesize before trusting the preview."""
    for session in _sessions.values():
        session.key = session.channels = None
    # The data put back is reported at the next depsgraph update: taken here, before any new edit can
    # join it, as no edit (the step holds its own signatures; .state.restoring).
    view_layer = bpy.context.view_layer
    if view_layer is not None:
        restoring(True)
        try:
            view_layer.update()
        finally:
            restoring(False)


@persistent
def on_frame_change_pre(scene: bpy.types.Scene, *_args) -> None:
    """Report edits made since the last depsgraph update (:func:`on_depsgraph_update`) before the frame change
    evaluates them with no such handler; only with a preview shown (with nothing pending an update still
    costs ~0.2 ms a frame: playback and Blender's frame-stepping bake would pay it); renders: their own frames."""
    if bpy.context.view_layer is not None and not bpy.app.is_job_running('RENDER') and _previewed(scene):
        bpy.context.view_layer.update()


@persistent
def on_frame_change(scene: bpy.types.Scene, *_args) -> None:
    """The frame moved: known as seen, so that the next edit, made where the frame now stands, is not
    taken for a frame move (a frame change runs this handler, not ``depsgraph_update_post``)."""
    _last_frame[scene.session_uid] = scene.frame_current


@persistent
def on_load(*_args) -> None:
    """Another file: nothing kept is about its armatures."""
    forget_edits()
    _pending.clear()
    _last_frame.clear()
    forget()


HANDLERS = (
    (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update),
    (bpy.app.handlers.frame_change_pre, on_frame_change_pre),
    (bpy.app.handlers.frame_change_post, on_frame_change),
    (bpy.app.handlers.undo_post, on_undo),
    (bpy.app.handlers.redo_post, on_undo),
    (bpy.app.handlers.load_post, on_load),
)


def register() -> None:
    for handlers, handler in HANDLERS:
        if handler not in handlers:
            handlers.append(handler)
    watch_edits(True)


def unregister() -> None:
    for handlers, handler in HANDLERS:
        if handler in handlers:
            handlers.remove(handler)
    watch_edits(False)
    if bpy.app.timers.is_registered(run_pending):
        bpy.app.timers.unregister(run_pending)
    _pending.clear()
    forget()
