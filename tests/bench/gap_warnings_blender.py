"""Warnings on a 16-strip timeline in Blender, as the issue counted them (issue 26): before and after.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/gap_warnings_blender.py

The sixteen real clips of tests/bench/gap_warnings.py (common.SIXTEEN) imported with
Blender's own BVH importer (centimetres to metres, the file's rate: it sets the
scene's fps_base to 0.999999 for the capture's 30.00003 fps), laid on one armature
over three tracks, each starting half a second before the one before it ends, then
again end to end, every core the default one, all selected; then Synthesize. The
plan is read by the add-on's warning rule as it stood before issue 26
(tests/bench/old_report.py: ``addon/report.py`` at c8939b3, per pair its warning
and its flagged figures on lines of their own) and as it is (one line per gap),
and both counts are printed with today's lines. The "less than 0.2 s" warnings
that fps_base raised on every gap come from the cores' rule, which another item
of the issue fixes; they are counted here as they come.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bake  # noqa: E402  (tests/bench: loads bpy with a temporary profile)

import bpy  # noqa: E402

from common import SIXTEEN as CLIPS  # noqa: E402
from old_report import OLD_COMMIT, old_plan_warnings  # noqa: E402

# half a second, as tests/bench/gap_warnings.py; and none (end to end), where the default cores leave
# exactly the shortest blend, 0.2 s, between them
OVERLAPS_S = (0.5, 0.0)
TRACKS = 3


def build(strip_settings, overlap_s: float) -> bpy.types.Object:
    """One armature, a strip per clip of CLIPS, each starting ``overlap_s`` before the one before it ends
    (0: end to end), default cores."""
    bpy.ops.wm.read_homefile(use_empty=True)
    obj, start = None, 1
    for k, (name, frames) in enumerate(CLIPS):
        bpy.ops.import_anim.bvh(filepath=str(bake.MOCAP / f"{name}.bvh"), global_scale=0.01, rotate_mode='NATIVE',
                                update_scene_fps=True)
        imported = bpy.context.view_layer.objects.active
        action = imported.animation_data.action
        if obj is None:
            obj = imported
            obj.animation_data.action = None
            for t in range(TRACKS):
                obj.animation_data.nla_tracks.new().name = f"clips {t + 1}"
        else:
            data = imported.data
            bpy.data.objects.remove(imported)
            bpy.data.armatures.remove(data)
        strip = obj.animation_data.nla_tracks[k % TRACKS].strips.new(f"{k + 1:02d} {Path(name).name}", start, action)
        if frames is not None:
            strip.action_frame_end = strip.action_frame_start + frames - 1
        strip.select = True
        strip_settings(obj, strip, create=True)
        fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
        start += int(strip.frame_end - strip.frame_start) + 1 - int(round(overlap_s * fps))
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def main() -> None:
    addon, _ = bake.load_extension()
    rule = old_plan_warnings()
    for overlap_s in OVERLAPS_S:
        obj = build(addon.strips.strip_settings, overlap_s)
        render = bpy.context.scene.render
        assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
        plan = json.loads(obj.smart_motion.plan_json)
        old, new = rule(plan), addon.report.plan_warnings(plan)
        gaps = [line for line in new if " → " in line]
        print(f"\n{len(CLIPS)} strips imported by Blender's BVH importer, {overlap_s:g} s of overlap: scene fps "
              f"{render.fps}, fps_base {render.fps_base:.6f}; {len(plan['pairs'])} gaps, {len(gaps)} with a "
              "warning line")
        print(f"warnings: {len(old)} lines before (the rule at {OLD_COMMIT}), {len(new)} after (one per gap)")
        print(f"  of them, 'less than 0.2 s': {sum('less than 0.2 s' in line for line in old)} before, "
              f"{sum('less than 0.2 s' in line for line in new)} after")
        for line in new:
            print(f"  {line}")


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    main()
