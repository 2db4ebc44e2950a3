"""Perform (2014 section 5): how long a key waits to run, and how long the interface pauses per key.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/perform.py

1. Waits, in frames, as core.synthesize.as_soon_as_possible places a clip (W 0 / 0.5),
   for real bandai1 clips played whole (their cores all of them, as Perform adds them):
   - from one clip's last frame to the next one's start, for each ordered pair of
     walk, bow, kick and punch (keys pressed faster than the clips run);
   - from the trigger frame to the clip's start, after a walk strip (frames 1-195, core
     to 101), with the trigger while the walk moves (150), at its end (194) and once it
     holds its last pose (195, 230): eq. (17), the clip blends after the trigger.
   Beside each, the naive wait: a clip that starts after the previous one ends waits
   the rest of it.
2. The pause per key in Blender, on the ten-strip, 3,003-frame timeline of
   tests/bench/bake.py with a preview: a key pressed near the end, three times
   (addon/perform.Performance.trigger: the placement; Performance.keep_in_step: the
   preview brought up to date by the live re-synthesis). The first key builds the
   live session; the next ones show the steady pause.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bake  # noqa: E402  (tests/bench: bpy with a temporary profile, the ten-strip timeline)

import bpy  # noqa: E402

from core.bvh import read_bvh  # noqa: E402
from core.synthesize import Clip, as_soon_as_possible  # noqa: E402

NAMES = ("walk", "bow", "kick", "punch")
LEVELS = (0.0, 0.5)
TRIGGERS = (150, 194, 195, 230)


def waits() -> None:
    motions = {n: read_bvh(bake.MOCAP / "bandai1" / f"{n}_normal_001.bvh", unit=0.01) for n in NAMES}
    print("frames from one whole clip's last frame to the next one's start (W 0 / 0.5)")
    print(f"{'after / next':>13} " + " ".join(f"{n:>9}" for n in NAMES))
    for a in NAMES:
        prev = Clip(motions[a], 0, None, a)
        cells = []
        for b in NAMES:
            w = [as_soon_as_possible([prev], Clip(motions[b], 0, None, b), responsiveness=level) - motions[a].n_frames
                 for level in LEVELS]
            cells.append(f"{w[0]:>4} /{w[1]:>3}")
        print(f"{a:>13} " + " ".join(cells))
    walk = Clip(motions["walk"], 1, (0, 100), "walk")
    end = walk.start + motions["walk"].n_frames - 1
    print(f"\nframes from the trigger to the clip's start after a walk (frames 1-{end}, core to 101; W 0 / 0.5);"
          " naive: the rest of the walk")
    for current in TRIGGERS:
        cells = []
        for b in NAMES:
            w = [as_soon_as_possible([walk], Clip(motions[b], 0, None, b), responsiveness=level,
                                     t_current=current) - current for level in LEVELS]
            cells.append(f"{b} {w[0]}/{w[1]}")
        print(f"  trigger {current:>3}: {', '.join(cells)}   (naive {max(end + 1 - current, 1)})")


def pauses() -> None:
    addon, _ = bake.load_extension()
    perform = importlib.import_module("smart_motion.addon.perform")
    obj = bake.build_scene(addon)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    bpy.context.view_layer.update()
    scene = bpy.context.scene
    scene.frame_set(int(max(s.frame_end for s in addon.strips.selected_strips(obj))) - 50)
    performance = perform.Performance(obj, bpy.context)
    performance.keep_in_step()
    action = next(a for a in bpy.data.actions if a.name.startswith("bow"))
    print("\npause per key in Blender (ten strips, 3,003 frames; a bow near the end each time)")
    for key in range(3):
        t = time.perf_counter()
        strip, _ = performance.trigger(action, scene.frame_current)
        placed = time.perf_counter()
        performance.keep_in_step()
        done = time.perf_counter()
        print(f"  key {key + 1}: placement {1000 * (placed - t):4.0f} ms, preview {1000 * (done - placed):4.0f} ms, "
              f"pause {1000 * (done - t):4.0f} ms (clip at frame {strip.frame_start:g})")
        scene.frame_set(int(strip.frame_end) - 5)


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    waits()
    pauses()
