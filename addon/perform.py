"""Perform: live character control from the keyboard (Oshita 2014, section 5, eq. 17).

The scene plays from the playhead; number key 1 to 9 adds the action the
palette (``Scene.smart_motion.palette``) gives that key as an NLA strip, as
soon as possible after the frame being played, and the preview takes it in
before the next frame is shown. Esc (or right-click) ends the performance and
leaves the added strips and the preview, to be edited and baked like any.

The work is in :class:`Performance`, a plain class that also runs without an
operator: the modal operator only translates events (number keys to
:meth:`Performance.trigger`, timer ticks to :meth:`Performance.tick`, Esc to
:meth:`Performance.finish`), and its ``script`` property runs a list of
``FRAME:ACTION`` triggers through the same methods, headless.

Eq. (17). A trigger places the action with :func:`.arrange.asap_placement` at
t_current = the frame being played, exactly as Add as Soon as Possible does
at the playhead, and records that frame with the new strip
(:func:`.strips.mark_performed`), so that every later synthesis, the preview's
and Bake's, keeps the blends into it after that frame: what has been played
stays as it was played, bit for bit. Triggers pressed faster than the clips
can run queue up: each goes as soon as possible after all the strips before
it, the ones just added included (they are selected, as the synthesis reads
the selected strips).

Playback. The operator advances the playhead itself, one frame per timer tick
at the scene's frame rate, rather than run Blender's playback
(``screen.animation_play``). Blender's playback keeps to the clock: while a
trigger's re-synthesis holds the interface, it would skip ahead (frame
dropping, audio sync), past frames the new clip was already blending in,
and the character would jump. Advancing frame by frame, the frame after the
trigger is shown only once the preview has the new clip, so nothing already
seen changes and nothing is skipped; playback plays every frame, as
Blender's "Play Every Frame" does. It also never wraps at the scene's end:
once the playhead reaches the end of the last strip, it waits there, the
character holding its last pose, for the next key (whose clip then runs
after that frame), or Esc.

Where the playhead starts. Anywhere: before or inside the strips, a trigger
waits for the last core (the clip runs after it, see :class:`.arrange.Placement`);
after them, the clip runs after the playhead. Esc puts the playhead back where
the performance started, as Esc does after Blender's playback, so Play
replays it; the scene's end frame is moved out to the performance's end if
it was earlier, so that all of it plays.

Undo. The operator is ``{'REGISTER', 'UNDO'}``: the whole performance, every
strip it added and the preview, is one undo step, which Blender pushes when
the modal operator finishes (Ctrl+Z takes it all back). Esc before any key,
with nothing changed, cancels and pushes none.
"""

from __future__ import annotations

import time

import bpy
from bpy.props import StringProperty

from . import live
from .arrange import add_strip, asap_placement, Placement, placement_text
from .preview import clear_preview, current_preview, sign_preview
from .strips import (active_armature, find_strip, has_preview, left_out_text, mark_performed, preview_actions,
                     preview_sources, preview_track, selected_strips, strip_settings)
from .synthesis import preview_synthesis

# event type -> palette key
KEYS = {
    **{name: k for k, name in enumerate(("ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"), 1)},
    **{f"NUMPAD_{k}": k for k in range(1, 10)},
}
# events the operator lets through to the editors while it runs: looking around, never editing
_NAVIGATION = {"MOUSEMOVE", "INBETWEEN_MOUSEMOVE", "MIDDLEMOUSE", "WHEELUPMOUSE", "WHEELDOWNMOUSE",
               "WHEELINMOUSE", "WHEELOUTMOUSE", "TRACKPADPAN", "TRACKPADZOOM", "NDOF_MOTION"}


def palette_action(scene: bpy.types.Scene, key: int) -> bpy.types.Action:
    """The action of palette key ``key`` (1-9); ``ValueError`` saying where to set it when the slot is empty."""
    if not 1 <= key <= 9:
        raise ValueError(f"the Perform palette has keys 1 to 9, not {key}")
    action = scene.smart_motion.palette.action(key)
    if action is None:
        raise ValueError(f"key {key} has no action: pick one for it in the Perform list of the Smart Motion panel "
                         "(NLA editor sidebar)")
    return action


def parse_script(text: str, actions: list[str] = ()) -> list[tuple[int, str]]:
    """``"40:bow, 120:kick"`` -> ``[(40, "bow"), (120, "kick")]``: triggers in playing order.

    Separated by commas or new lines; the frames may not go back, as
    playback only goes forward. ``actions``: names of the file's actions, which the example of a
    malformed script names (never an action the file does not hold).
    """
    triggers = []
    for piece in text.replace("\n", ",").split(","):
        piece = piece.strip()
        if not piece:
            continue
        frame, sep, name = piece.partition(":")
        try:
            frame = int(frame)
        except ValueError:
            frame = None
        if not sep or frame is None or not name.strip():
            raise ValueError(f"Perform script: {piece!r} is not FRAME:ACTION; write e.g. {script_example(actions)}")
        if triggers and frame < triggers[-1][0]:
            raise ValueError(f"Perform script: {piece!r} comes after a trigger at frame {triggers[-1][0]}; "
                             "playback only goes forward, so give the triggers in frame order")
        triggers.append((frame, name.strip()))
    return triggers


def script_example(actions: list[str]) -> str:
    """``"40:walk, 120:bow"``: a script of (up to) the first two of ``actions``, ``"40:ACTION, 120:ACTION"``
    without any."""
    names = list(actions)[:2] or ["ACTION"]
    return ", ".join(f"{frame}:{name}" for frame, name in zip((40, 120), names * 2))


def performable_actions() -> list[str]:
    """Names of the file's actions a script may name: not Smart Motion's previews."""
    previews = preview_actions()
    return [a.name for a in bpy.data.actions if a not in previews]


def refresh_preview(obj: bpy.types.Object, strips: list, responsiveness: float) -> None:
    """Make the preview play ``strips`` synthesized: the one place a performance updates it.

    A single strip plays by itself: a preview of other strips is cleared
    (as Clear does). A preview of some of ``strips`` at this responsiveness
    takes the others in as its sources and is brought up to date by the live
    re-synthesis (:func:`.live.refresh`: only from the pair the new strip
    joins, only the keys that change, so what was played stays as keyed);
    else ``strips`` are synthesized and previewed anew. Raises ``ValueError``
    as :func:`.synthesis.preview_synthesis` does.
    """
    if len(strips) < 2:
        clear_preview(obj)
        obj.smart_motion.plan_json = ""
        return
    sources = {s.name for s in preview_sources(obj)}
    scene = bpy.context.scene
    # (a preview whose track was deleted by hand plays nothing: live.refresh leaves it, so it is made anew)
    if (sources and sources <= {s.name for s in strips} and scene.smart_motion.responsiveness == responsiveness
            and preview_track(obj) is not None and obj.smart_motion.preview_action is not None):
        for strip in strips:
            strip_settings(obj, strip, create=True).preview_source = True
        live.refresh(obj, scene, raising=True)
        return
    preview_synthesis(obj, strips, responsiveness)


class Performance:
    """One performance of the active armature ``obj``: the strips it plays, the ones it added.

    Starts from the selected strips that play (as Synthesize reads them) and
    the playhead; refuses, with nothing changed, when no strip is selected,
    as a trigger needs a motion to run after.
    """

    def __init__(self, obj: bpy.types.Object, context: bpy.types.Context):
        strips = selected_strips(obj, context.view_layer.objects)
        if not strips:
            raise ValueError(
                f"armature {obj.name!r} has no selected NLA strip to perform after{left_out_text(obj)}: "
                "select the strips the performance starts from (at least one; push an action down to the NLA "
                "first if there is none), then Perform")
        self.obj = obj
        self.scene = context.scene
        self.responsiveness = context.scene.smart_motion.responsiveness
        self.start_frame = context.scene.frame_current
        self.names = [strip.name for strip in strips]
        self.added: list[str] = []
        # the performance plays the synthesis of its strips from the first frame on: a preview of
        # other strips (or none, with two strips or more) is brought in step before playing
        self.stale = ((len(strips) > 1 or has_preview(obj))
                      and current_preview(obj, strips, self.responsiveness) is None)
        self.changed = False

    def strips(self) -> list[bpy.types.NlaStrip]:
        """The strips of the performance, by start frame (looked up by name: references go stale)."""
        found = [find_strip(self.obj, name) for name in self.names]
        return sorted((s for s in found if s is not None), key=lambda s: s.frame_start)

    def end(self) -> int:
        """The last frame of the performance's strips: where the playhead waits for the next key."""
        return max(round(strip.frame_end) for strip in self.strips())

    def trigger(self, action: bpy.types.Action, frame: int) -> tuple[bpy.types.NlaStrip, Placement]:
        """Add ``action`` as soon as possible after scene frame ``frame``, the one being played (eq. 17).

        The new strip is selected and remembers ``frame``; the preview takes it
        in at the next :meth:`keep_in_step`. Raises ``ValueError`` (an action
        of another skeleton, say) with nothing changed.
        """
        placement = asap_placement(self.obj, self.strips(), action, self.responsiveness, frame,
                                       read=live.reader(self.obj), place=live.placer(self.obj))
        strip = add_strip(self.obj, action, placement)
        mark_performed(self.obj, strip, frame)
        self.names.append(strip.name)
        self.added.append(strip.name)
        self.stale = self.changed = True
        return strip, placement

    def keep_in_step(self) -> None:
        """Bring the preview up to date with the strips, if a trigger (or the start) left it behind."""
        if self.stale:
            refresh_preview(self.obj, self.strips(), self.responsiveness)
            self.stale = False
            self.changed = True

    def tick(self) -> int:
        """One timer tick of playback: the preview in step, then the next frame shown; returns it.

        The playhead waits at the performance's end (or where it is, past that).
        """
        self.keep_in_step()
        frame = self.scene.frame_current
        if frame < self.end():
            frame += 1
            self.scene.frame_set(frame)
        return frame

    def finish(self) -> str:
        """End the performance: the preview in step, the playhead back at the start, the scene long enough.

        Returns what it did, for the report. The added strips and the preview stay.
        """
        self.keep_in_step()
        if self.added and len(self.strips()) > 1:
            # Bake keeps the preview as it was played: its keys are the live re-synthesis', equal to a
            # fresh synthesis of the strips to rounding (float32 keys), so they are signed as current
            sign_preview(self.obj, self.strips(), self.responsiveness)
        self.scene.frame_set(self.start_frame)
        if self.added:
            text = (f"performed {len(self.added)} strip{'' if len(self.added) == 1 else 's'} "
                    f"({', '.join(repr(name) for name in self.added)}) on the timeline; edit them like any strip, "
                    "Bake to Action keeps the performance")
        else:
            text = "no number key was pressed: nothing performed"
        end = self.end() if self.added else self.scene.frame_end
        if end > self.scene.frame_end:
            text += f"; the scene's end frame moved from {self.scene.frame_end} to {end}, so that Play plays all of it"
            self.scene.frame_end = end
            self.changed = True
        return text


def _status(performance: Performance, text: str) -> str:
    palette = performance.scene.smart_motion.palette
    keys = " ".join(f"{k}:{palette.action(k).name}" for k in range(1, 10) if palette.action(k) is not None)
    return f"Perform: {keys or 'the palette is empty'} · Esc ends · {text}"


class SMART_MOTION_OT_perform(bpy.types.Operator):
    """Play from the playhead; number keys 1-9 add the palette's actions as soon as possible, Esc ends"""

    bl_idname = "smart_motion.perform"
    bl_label = "Perform"
    bl_options = {'REGISTER', 'UNDO'}

    script: StringProperty(
        name="Script",
        description=(
            "Triggers to run without playing, as FRAME:ACTION separated by commas (e.g. 40:bow, 120:kick): "
            "each adds ACTION as soon as possible after FRAME, as the number keys do while playing"
        ),
    )

    def invoke(self, context, event):
        from .convert import scene_fps

        if self.script:
            return self.execute(context)
        try:
            obj = active_armature(context)
            self._performance = Performance(obj, context)
            self._performance.keep_in_step()
        except ValueError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        screen = context.screen
        if screen is not None and screen.is_animation_playing:
            bpy.ops.screen.animation_cancel(restore_frame=False)  # one playback at a time: ours
        wm = context.window_manager
        self._timer = wm.event_timer_add(1.0 / scene_fps(context.scene), window=context.window)
        self._ticked = time.monotonic()
        wm.modal_handler_add(self)
        self._area = context.area  # the editor it was started from shows the palette in its header
        self._header(f"frame {context.scene.frame_current}")
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        performance = self._performance
        if event.type == 'TIMER':
            # every timer of the window sends TIMER events: the pace is kept by the clock
            now = time.monotonic()
            if now - self._ticked < 0.75 * self._timer.time_step:
                return {'RUNNING_MODAL'}
            self._ticked = now
            try:
                performance.tick()
            except ValueError as error:
                self.report({'ERROR'}, str(error))
                return self._end(context)
            return {'RUNNING_MODAL'}
        if event.type in {'ESC', 'RIGHTMOUSE'} and event.value == 'PRESS':
            return self._end(context)
        if event.type in KEYS and event.value == 'PRESS' and not event.is_repeat:
            frame = context.scene.frame_current
            try:
                action = palette_action(context.scene, KEYS[event.type])
                _, placement = performance.trigger(action, frame)
            except ValueError as error:
                self.report({'WARNING'}, str(error))  # the performance goes on
                return {'RUNNING_MODAL'}
            text = placement_text(action, placement)
            self.report({'INFO'}, text)
            self._header(text)
            return {'RUNNING_MODAL'}
        if event.type in _NAVIGATION:
            return {'PASS_THROUGH'}
        return {'RUNNING_MODAL'}  # nothing else edits the scene while it plays

    def _end(self, context):
        context.window_manager.event_timer_remove(self._timer)
        if self._area is not None:
            self._area.header_text_set(None)
        performance = self._performance
        try:
            self.report({'INFO'}, performance.finish())
        except ValueError as error:
            self.report({'ERROR'}, str(error))
        # one undo step for all of it, pushed by Blender as the operator finishes
        return {'FINISHED'} if performance.changed else {'CANCELLED'}

    def _header(self, text: str) -> None:
        if self._area is not None:
            self._area.header_text_set(_status(self._performance, text))

    def execute(self, context):
        self._performance = None
        try:
            return self._run_script(context)
        except ValueError as error:
            self.report({'ERROR'}, str(error))
            # what was added before the error stays, and must be one undo step too (Operator docs)
            changed = self._performance is not None and self._performance.changed
            return {'FINISHED'} if changed else {'CANCELLED'}

    def _run_script(self, context):
        """The triggers of ``script`` through the same :class:`Performance` the number keys drive."""
        from .convert import action_to_motion

        triggers = parse_script(self.script, performable_actions())
        if not triggers:
            raise ValueError("Perform plays live: press its button in the Smart Motion panel, then number keys; "
                             "from a script, give script='FRAME:ACTION, ...'")
        obj = active_armature(context)
        actions = {}
        for _, name in triggers:
            action = bpy.data.actions.get(name)
            if action is None:
                import difflib

                names = performable_actions()
                near = difflib.get_close_matches(name, names, n=3, cutoff=0.5) or names[:3]
                raise ValueError(f"Perform script: there is no action {name!r}; name one of the file's actions"
                                 + (f", such as {', '.join(repr(n) for n in near)}" if near else " (it has none)"))
            actions[name] = action
        performance = self._performance = Performance(obj, context)
        for action in actions.values():
            action_to_motion(obj, action)  # an action of another skeleton is refused before anything is added
        performance.keep_in_step()
        reports = []
        for frame, name in triggers:
            context.scene.frame_set(frame)
            _, placement = performance.trigger(actions[name], frame)
            performance.keep_in_step()
            reports.append(placement_text(actions[name], placement))
        for text in reports:
            self.report({'INFO'}, text)
        self.report({'INFO'}, performance.finish())
        return {'FINISHED'}


class SMART_MOTION_PT_perform(bpy.types.Panel):
    """Perform's palette under the Smart Motion panel: key 1 to 9 and the action each adds."""

    bl_idname = "SMART_MOTION_PT_perform"
    bl_label = "Perform"
    bl_space_type = 'NLA_EDITOR'
    bl_region_type = 'UI'
    bl_category = "Smart Motion"
    bl_parent_id = "SMART_MOTION_PT_main"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == 'ARMATURE'

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        palette = context.scene.smart_motion.palette
        column = layout.column(align=True)
        for key in range(1, 10):
            column.prop(palette, f"action_{key}", text=str(key))
        layout.operator("smart_motion.perform", icon='PLAY')
        layout.label(text="Keys 1-9 add while it plays; Esc ends")


CLASSES = (SMART_MOTION_OT_perform, SMART_MOTION_PT_perform)
