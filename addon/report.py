"""What the panel and the operators say: the plan's text, its warnings, the recorded result.

:class:`Synthesis` is what a synthesis recorded for the preview, the bake and
the plan box; the rest turns a plan (``Plan.to_dict()``) into lines.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass

import bpy

from .strips import strip_settings


def group_lines(group: dict, width: int = 12) -> list[str]:
    """The panel's lines for one synchronized group of a plan: its combined sequence (the first
    ``width`` steps), delays and weights (influences' share at the group's start, and why one
    varies: :func:`.sync_groups.weights_varying`), and the strips that start past their first frame, in step
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
        f"{group['name']} synchronized, frames {start}-{start + group['frames'] - 1}"
        + (f", core {group['core'][0]}-{group['core'][1]}" if "core" in group else ""),
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
    one clip in it (:func:`.timeline.group_clip`'s plans): what the preview, the bake and the plan box read."""

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


def phases_text(obj: bpy.types.Object, strip: bpy.types.NlaStrip) -> str:
    """``"DS 1-16, LS 17-28, ..."`` in scene frames, or ``""`` if the strip was not analysed."""
    item = strip_settings(obj, strip)
    if item is None or not item.phases:
        return ""
    start = round(strip.frame_start)
    return ", ".join(f"{p.phase} {start + p.start}-{start + p.end}" for p in item.phases)


def plan_warnings(plan: dict) -> list[str]:
    """What in ``plan`` (``Plan.to_dict()``) the user must hear about, one line each, or ``[]``.

    Every rejected strip and why; the plan's warnings about the timeline;
    one line per gap with anything to say (core.quality.gap_warning: the pair's
    warning, its figures flagged against their references, never against the
    range search's limits at W, which move with W on a motion that does not
    change, or why it was not measured); and a synthesis left with one strip,
    which joins nothing.
    """
    from ..core.quality import GapQuality, gap_warning

    lines = [f"strip {r['clip']!r} rejected: {r['reason']}" for r in plan["rejected"]]
    lines += plan.get("warnings", ())
    lines += [f"synchronized group {g['name']!r}: {w}" for g in plan.get("groups", ()) for w in g.get("warnings", ())]
    for pair in plan["pairs"]:
        quality = GapQuality.from_dict(pair["quality"]) if pair.get("quality") else None
        line = gap_warning(pair["prev"], pair["next"], pair.get("gap"), quality, pair.get("warning"))
        if line:
            lines.append(line)
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
    return composed_texts(obj).get(name, "")


def composed_texts(obj: bpy.types.Object) -> dict[str, str]:
    """:func:`composed_text` of every strip the last synthesis composed, by name: the recorded plan read once."""
    if not obj.smart_motion.plan_json:
        return {}
    plan = json.loads(obj.smart_motion.plan_json)
    return {c["clip"]: f"composed over {c['base']!r} ({c['parts']})" for c in plan.get("compositions", ())}


def wrapped(text: str, width: int = 44) -> list[str]:
    """``text`` in lines of at most ``width`` characters, for panel labels."""
    return textwrap.wrap(text, width) or [""]


def plan_cleared_text(obj: bpy.types.Object) -> str:
    """What Clear did with no preview on, typically after a Bake: it removed the plan, nothing else."""
    text = "removed the plan of the last synthesis from the panel; there was no preview to remove"
    anim = obj.animation_data
    baked = obj.smart_motion.baked_action
    if baked is not None and anim is not None and anim.action == baked:
        text += (f"; the baked action {baked.name!r} stays assigned to {obj.name!r} and plays over the strips "
                 "(unassign it in the Action Editor to play the strips)")
    return text
