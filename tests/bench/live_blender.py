"""The live path in Blender: a source strip moved, to the preview updated (issue 11, live re-synthesis).

Run by hand (not collected as a test):  .venv/bin/python tests/bench/live_blender.py
(tests/bench/live.py runs it too, after the core's own figures.)

The ten-strip timeline of tests/bench/bake.py (TIMELINE of tests/bench/common.py,
about 3,000 frames of real clips on one 25-bone armature) is synthesized
once, as Synthesize does; then the fifth strip is moved by ten frames, back
and forth, REPEAT times, as a drag in the NLA editor moves it
(``frame_start_ui``). Each move is timed from the change to the preview
updated: one depsgraph update (``view_layer.update()``), whose handler runs
the live update (addon/live.py: strips re-read only where they changed, the
incremental re-synthesis, the changed keys written), Blender's own
evaluation of the scene included.

Printed beside it: the full re-synthesis of the same timeline
(bpy.ops.smart_motion.synthesize(): read every strip, synthesize from
scratch, write every key), and what Blender's own NLA does on the same
move (the depsgraph update with live updates off: its plain strip
blending needs no synthesis). Target: the live update's median under 50 ms.
"""

from __future__ import annotations

import importlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bake  # noqa: E402  (tests/bench: loads bpy with a temporary profile, builds the timeline)

import bpy  # noqa: E402

REPEAT = 20
MOVE = 10
TARGET_S = 0.05


def moves(strip, update, repeat: int = REPEAT) -> list[float]:
    """Seconds from each move of ``strip`` by MOVE frames (alternately on and back) to ``update`` done."""
    times = []
    for k in range(repeat):
        strip.frame_start_ui += MOVE if k % 2 == 0 else -MOVE
        t = time.perf_counter()
        update()
        times.append(time.perf_counter() - t)
    return times


def blender_timings() -> dict:
    """The figures of this benchmark, in seconds (median), and what the live updates did."""
    addon, _ = bake.load_extension()
    live = importlib.import_module("smart_motion.addon.live")
    obj = bake.build_scene(addon)
    scene = bpy.context.scene
    strips = addon.strips.selected_strips(obj)
    fifth = strips[4]

    def update():
        bpy.context.view_layer.update()

    full = []
    for _ in range(5):
        t = time.perf_counter()
        assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
        full.append(time.perf_counter() - t)
    update()  # the first live update after Synthesize takes the preview in as it is
    stats = []
    live_times = []
    for k in range(REPEAT):
        live_times += moves(fifth, update, 1) if k % 2 == 0 else moves_back(fifth, update)
        stats.append(dict(live._sessions[obj.session_uid].stats))
    scene.smart_motion.live = False
    plain = moves(fifth, update)
    scene.smart_motion.live = True
    plan = json_plan(obj)
    return {
        "strips": len(strips), "frames": plan["end"] - plan["start"] + 1, "bones": len(obj.pose.bones),
        "live": statistics.median(live_times), "live max": max(live_times),
        "synthesis": statistics.median(s["synthesis s"] for s in stats),
        "refresh": statistics.median(s["total s"] for s in stats),
        "keys written": statistics.median(s["keys written"] for s in stats),
        "strips read": statistics.median(s["strips read"] for s in stats),
        "keys": sum(len(fc.keyframe_points) for action in addon.strips.preview_segments(obj) for fc in _fcurves(action)),
        "full": statistics.median(full), "blender": statistics.median(plain),
    }


def moves_back(strip, update) -> list[float]:
    strip.frame_start_ui -= MOVE
    t = time.perf_counter()
    update()
    return [time.perf_counter() - t]


def json_plan(obj) -> dict:
    import json

    return json.loads(obj.smart_motion.plan_json)


def _fcurves(action):
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                yield from bag.fcurves


def ms(seconds: float) -> str:
    return f"{1000 * seconds:7.1f} ms"


def report(f: dict) -> None:
    print(f"\nBlender: {f['strips']} strips, {f['frames']} frames, {f['bones']} bones ({f['keys']:,} preview keys); "
          f"the fifth strip moved by {MOVE} frames, {REPEAT} times")
    print(f"  live update           {ms(f['live'])}   (median; slowest {ms(f['live max']).strip()})")
    print(f"    of which refresh    {ms(f['refresh'])}   (addon/live.py refresh: read, synthesize, write)")
    print(f"    of which synthesis  {ms(f['synthesis'])}   ({f['strips read']:.0f} strips read, "
          f"{f['keys written']:,.0f} keys written per move)")
    print(f"  full re-synthesis     {ms(f['full'])}   (Synthesize: every strip read, every key written)")
    print(f"  Blender's NLA alone   {ms(f['blender'])}   (the same move, live updates off: no synthesis)")
    print(f"  target: live update under {1000 * TARGET_S:.0f} ms -> {'met' if f['live'] < TARGET_S else 'NOT met'}")


if __name__ == "__main__":
    report(blender_timings())
