"""Bake to Action: a synthesis, or a current preview, written into the armature's action.

Bake after a preview. The usual flow is Synthesize, look, Bake. When the
preview is current (:func:`.preview.current_preview`), its keys are what
synthesizing the strips would give, so Bake copies them (:func:`bake_preview`)
instead of synthesizing again. Either way the baked action is the same. Baking
again rewrites the action of the last bake while nothing else uses it
(:func:`rebake_target`).
"""

from __future__ import annotations

from typing import Callable

import bpy

from .convert import write_action
from .preview import bake_into, clear_preview, shown_motion
from .strips import all_strips, baked_action_name


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
    :func:`.preview.current_preview`.

    The segments' keys are what Synthesize wrote for the motion it kept
    (:func:`.preview.shown_motion`): with it, that motion is written as
    :func:`bake` writes it, the same keys without reading them back; without
    it, the segments are read and joined (:func:`.preview.bake_into`). The motion's bone channels,
    computed for the preview, are kept with it and written as they are.
    """
    shown = shown_motion(obj)
    if shown is not None:
        motion, start, channels = shown
        clear_preview(obj)
        action = write_action(obj, motion, baked_action_name(obj), frame_start=start,
                              into=rebake_target(obj, strips), channels=channels)
        _assign(obj, action)
        return action
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
        for strip in all_strips(other):
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


def _assign(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    obj.smart_motion.baked_action = action
    anim = obj.animation_data or obj.animation_data_create()
    anim.action = action
    if anim.action_slot is None:
        anim.action_slot = action.slots[0]
