"""Panel draw time on a 16-strip timeline: what every redraw of the Smart Motion panel costs.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/panel_draw.py

Sixteen strips of the real clips of tests/bench/common.py's TIMELINE (cycled)
on one armature of 25 bones, on three alternating tracks, each starting 0.5 s
before the previous one ends, all selected, none with an edited core: the
panel draws every strip's default core, which depends on its neighbours and
on whether its motion composes over another (an additional motion). Median
of REPEAT draws each:

  redraw        the panel drawn again, nothing changed (what Blender does on
                every mouse move over the sidebar).
  previewed     a redraw after Synthesize, the preview on.
  cores         the default cores alone, as the panel now works them out
                (timeline.default_cores: groups, additional motions and spans
                once for all strips) against the naive way, each strip's
                strip_default_core in turn (all of that again per strip).

and the rows the panel takes on screen (tests/blender/scenes.py's
RecordingLayout counts them as Blender lays them out: a row is one line, each
item of a column or box one), as a user first sees it (sub-panels closed by
default stay closed) and with every sub-panel opened, after Analyze and after
Synthesize.

Loads the checkout as the extension, as tests/bench/bake.py does; the same
script runs against an older checkout (it finds the strip settings and the
session's stores in either layout), so that before and after can be printed:
``--before REF`` runs it first on the git revision REF (extracted to a
temporary folder) and prints that run's figures above this checkout's.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bake  # noqa: E402  (tests/bench: loads bpy with a temporary profile)

import bpy  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "blender"), str(Path(__file__).resolve().parents[1])]
from scenes import draw_panel  # noqa: E402  (the tests' own row count; it reads tests/real_capture.py)

# (set by --before's child run: the checkout to load instead of this one)
if os.environ.get("SMART_MOTION_BENCH_CHECKOUT"):
    bake.ROOT = Path(os.environ["SMART_MOTION_BENCH_CHECKOUT"])

STRIPS = 16
REPEAT = 20


class Layout:
    """Records nothing: a stand-in for the panel's layout that accepts every call."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False

    def __setattr__(self, name, value):
        pass


def module(name: str):
    try:
        return importlib.import_module(f"smart_motion.addon.{name}")
    except ImportError:
        return None


def build(strip_settings) -> bpy.types.Object:
    """One armature, STRIPS strips of the TIMELINE's clips in turn, selected, default cores."""
    bpy.ops.wm.read_homefile(use_empty=True)
    actions, obj = {}, None
    for name, frames in bake.TIMELINE:
        path = bake.PROFILE / f"{Path(name).name}.bvh"
        bake.write_bvh(bake.with_extra_bones(bake.read_bvh(bake.MOCAP / f"{name}.bvh")), path)
        bpy.ops.import_anim.bvh(filepath=str(path), global_scale=0.01, rotate_mode='NATIVE', update_scene_fps=True)
        imported = bpy.context.view_layer.objects.active
        actions[name] = (imported.animation_data.action, frames)
        if obj is None:
            obj = imported
            obj.animation_data.action = None
            for t in range(bake.TRACKS):
                obj.animation_data.nla_tracks.new().name = f"clips {t + 1}"
        else:
            data = imported.data
            bpy.data.objects.remove(imported)
            bpy.data.armatures.remove(data)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    start, names = 1, list(actions)
    for k in range(STRIPS):
        action, frames = actions[names[k % len(names)]]
        strip = obj.animation_data.nla_tracks[k % bake.TRACKS].strips.new(f"{action.name} {k + 1}", start, action)
        if frames is not None:
            strip.action_frame_end = strip.action_frame_start + frames - 1
        strip.select = True
        strip_settings(obj, strip, create=True)
        start += int(strip.frame_end - strip.frame_start) + 1 - int(round(bake.OVERLAP_S * fps))
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def median_ms(run, before=lambda: None) -> float:
    times = []
    for _ in range(REPEAT):
        before()
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def rows() -> str:
    first, opened = draw_panel(opened=False).rows, draw_panel(opened=True).rows
    return f"{first:5d} rows as first shown, {opened:5d} with every sub-panel opened"


def main() -> None:
    bake.load_extension()
    strips = module("strips") or module("nla")
    timeline = module("timeline") or module("nla")
    obj = build(strips.strip_settings)
    panel = bpy.types.SMART_MOTION_PT_main
    context = SimpleNamespace(layout=Layout())

    def draw():
        panel.draw(context, bpy.context)

    t0 = time.perf_counter()
    draw()
    first = 1000 * (time.perf_counter() - t0)
    redraw = median_ms(draw)
    neighbours = timeline.core_neighbours(obj) if hasattr(timeline, "core_neighbours") else strips.core_neighbours(obj)
    per_strip = median_ms(lambda: [timeline.strip_default_core(obj, s) for s in neighbours])
    one_pass = median_ms(lambda: timeline.default_cores(obj)) if hasattr(timeline, "default_cores") else None
    assert bpy.ops.smart_motion.analyze() == {'FINISHED'}
    analysed = rows()
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    synthesized = rows()
    previewed = median_ms(draw)
    layout = "role files (addon/strips.py ...)" if module("strips") else "addon/nla.py"
    print(f"panel draw, {STRIPS} strips on {bake.TRACKS} tracks, {layout}; median of {REPEAT}")
    print(f"  first draw      {first:8.1f} ms")
    print(f"  redraw          {redraw:8.2f} ms")
    print(f"  previewed       {previewed:8.2f} ms   (after Synthesize)")
    print(f"  cores per strip {per_strip:8.2f} ms   (naive: strip_default_core for each strip)")
    if one_pass is not None:
        print(f"  cores one pass  {one_pass:8.2f} ms   (default_cores: {per_strip / one_pass:.1f} x faster)")
    print(f"  after Analyze    {analysed}")
    print(f"  after Synthesize {synthesized}")


def run_before(revision: str) -> None:
    """This script on the git ``revision`` of the checkout: its files extracted to a temporary folder."""
    archive = subprocess.run(["git", "archive", revision, "__init__.py", "blender_manifest.toml", "core", "addon"],
                             cwd=bake.ROOT, capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory(prefix="smart_motion_before_") as folder:
        tarfile.open(fileobj=io.BytesIO(archive)).extractall(folder)
        print(f"before ({revision}):", flush=True)
        subprocess.run([sys.executable, __file__], check=True,
                       env={**os.environ, "SMART_MOTION_BENCH_CHECKOUT": folder})
    print("after (this checkout):", flush=True)


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REF", help="first run on this git revision, e.g. main")
    arguments = parser.parse_args()
    if arguments.before:
        run_before(arguments.before)
    main()
