"""One entry function per user action, as io_anim_bvh's ``load()`` is for its operator.

The work behind Analyze, Synthesize and Bake to Action, as plain functions that
the operators, Perform, the demo, the benchmarks and the tests all call. They
act on an armature object and the ``select`` flags of its NLA strips, never on
an editor area, so they work headless.

Every function that changes Blender data comes in two steps: first everything
that can fail (reading strips, finding the rig, synthesizing) into plain
values, then the writes, which do not fail on valid input. An error
(``ValueError`` with a message saying what to fix) therefore leaves the file
as it was.
"""

from __future__ import annotations

import json
from typing import Callable

import bpy

from .bake import bake, bake_preview
from .convert import find_armature_rig, strip_to_motion
from .fcurves import keys_read_once
from .preview import current_preview, show_preview, signature_parts
from .report import plan_dict, plan_json, Synthesis
from .strips import left_out_text, prune_settings, strip_settings, strip_signature
from .sync_groups import sync_groups
from .timeline import sequence_clips, strip_clips


def analyze_strips(obj: bpy.types.Object, strips: list) -> dict:
    """``{strip name: core.analysis.Analysis}`` of each strip (2008, section 4); changes nothing."""
    from ..core.analysis import analyze

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
    prune_settings(obj)
    for strip in strips:
        item = strip_settings(obj, strip, create=True)
        item.phases.clear()
        for segment in analyses[strip.name].segments:
            phase = item.phases.add()
            phase.phase, phase.start, phase.end = segment.phase.name, int(segment.start), int(segment.end)
        item.analysed = strip_signature(strip)


def synthesize_strips(obj: bpy.types.Object, strips: list, responsiveness: float):
    """The ``core.synthesize.Result`` of the strips on the scene's timeline; changes nothing.

    Raises ``ValueError`` for fewer than two strips (a synchronized group of
    two or more is enough: it plays as one clip), a strip that cannot be
    read, a group that cannot be blended, or a rig whose legs cannot be found. Strips whose cores overlap an
    earlier core are not errors: the plan lists them as rejected.
    """
    from ..core.synthesize import synthesize

    if not sync_groups(obj, strips):
        require_two(obj, strips, "select at least two strips that play to synthesize a motion from them")
    clips, groups = sequence_clips(obj, strips)
    rig = find_armature_rig(obj, clips[0].motion)
    return Synthesis(synthesize(clips, responsiveness=responsiveness, rig=rig), groups)


def preview_synthesis(obj: bpy.types.Object, strips: list, responsiveness: float) -> Synthesis:
    """Synthesize: ``strips`` synthesized at ``responsiveness``, played as the preview
    (:func:`.preview.show_preview`) and the plan recorded for the panel; the result.

    The one entry of the Synthesize operator and of Perform. Raises ``ValueError`` as
    :func:`synthesize_strips` does, with nothing changed.
    """
    with keys_read_once():  # (the signature hashes the sources' keys the synthesis read)
        result = synthesize_strips(obj, strips, responsiveness)
        signature = list(signature_parts(obj, strips, result.plan.responsiveness))
    show_preview(obj, strips, result, signature)
    record_plan(obj, strips, result)
    return result


def require_two(obj: bpy.types.Object, strips: list, what_to_do: str) -> None:
    """Raise ``ValueError`` saying how many strips are selected, which are left out, and ``what_to_do``,
    for fewer than two."""
    if len(strips) < 2:
        raise ValueError(
            f"{len(strips)} NLA strip{'' if len(strips) == 1 else 's'} of armature {obj.name!r} selected"
            f"{left_out_text(obj)}; {what_to_do}"
        )


def record_plan(obj: bpy.types.Object, strips: list, result) -> None:
    """Keep the plan on the armature (the panel shows it) and settings for every source strip."""
    prune_settings(obj)
    for strip in strips:
        strip_settings(obj, strip, create=True)
    obj.smart_motion.plan_json = plan_json(result)


def bake_strips(
    obj: bpy.types.Object,
    strips: list,
    responsiveness: float,
    progress: Callable[[float], None] | None = None,
) -> tuple[bpy.types.Action, dict, bool]:
    """Bake to Action: ``(action, plan as Plan.to_dict(), whether the preview was kept)``.

    With a :func:`.preview.current_preview`, its action is copied (:func:`.bake.bake_preview`);
    otherwise the strips are synthesized and baked (:func:`.bake.bake`) and the plan
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
