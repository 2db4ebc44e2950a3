"""The demo scene: the embedded demo clips as NLA strips, synthesized and baked.

``make demo`` runs this module headless::

    .venv/bin/python addon/demo.py [--out DIR] [--responsiveness W]

It builds an armature from the demo skeleton (:mod:`core.demo`: Z up,
metres, so no conversion), writes each demo clip to an action, lays the
actions out as five NLA strips with their cores, synthesizes them, bakes
the result to a new action, and writes ``DIR/demo.blend`` (opens with the
baked action playing over the scene's frame range), ``DIR/demo.bvh`` (the
result, in the armature's own axes: Z up, metres) and prints the plan. The
plan flags no gap from W = 0.3 up (the default is 0.5); at W = 0 and 0.25
the quick blend into the turn pops a hand (docs/design.md, "What the demo
shows").
:func:`build_demo_scene` does the Blender part and is what the tests call.

Overlapping strips cannot share an NLA track, so the strips alternate
between two tracks, as NLA users lay out clips to be blended.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import bpy

ARMATURE = "SmartMotionDemo"
TRACKS = ("Demo clips A", "Demo clips B")


@dataclass
class DemoScene:
    """What :func:`build_demo_scene` made: the armature, its strips, the synthesis result and the baked action."""

    armature: bpy.types.Object
    strips: list
    result: object  # core.synthesize.Result
    action: bpy.types.Action


def build_demo_scene(scene: bpy.types.Scene | None = None, *, responsiveness: float = 0.5) -> DemoScene:
    """Build, synthesize and bake the demo in ``scene`` (default the context's).

    Needs the add-on registered (``Object.smart_motion``). Sets the scene to
    30 fps and its frame range to the result's, and leaves the armature
    active with the baked action assigned.
    """
    from ..core.demo import DEMO_FPS, DEMO_TIMELINE, demo_clips, demo_skeleton
    from .bake import bake
    from .strips import strip_settings
    from .synthesis import record_plan, synthesize_strips
    from .convert import armature_from_skeleton, write_action

    scene = scene or bpy.context.scene
    scene.render.fps, scene.render.fps_base = round(DEMO_FPS), 1.0
    clips = demo_clips(DEMO_FPS)
    obj = armature_from_skeleton(demo_skeleton(), ARMATURE, scene.collection)
    anim = obj.animation_data_create()
    tracks = []
    for name in TRACKS:
        track = anim.nla_tracks.new()
        track.name = name
        tracks.append(track)
    strips = []
    for name, start, (first, last), track in DEMO_TIMELINE:
        action = write_action(obj, clips[name].motion, f"demo {name}", frame_start=1)
        strip = tracks[track].strips.new(name, start, action)
        strip.select = True
        item = strip_settings(obj, strip, create=True)
        item.core_first, item.core_last, item.has_core = first, last, True
        strips.append(strip)
    result = synthesize_strips(obj, strips, responsiveness)
    record_plan(obj, strips, result)
    action = bake(obj, result)
    scene.frame_start, scene.frame_end = result.plan.start, result.plan.end
    scene.frame_set(result.plan.start)
    return DemoScene(obj, strips, result, action)


def main(argv: list[str] | None = None, register: Callable[[], None] | None = None) -> int:
    """Build the demo in a new file and write ``demo.blend`` and ``demo.bvh``; prints the plan.

    ``register`` registers the add-on where it is not (run from a checkout: the package's
    ``register``, passed by the caller above this module); an enabled extension needs none.
    """
    from ..core.bvh import write_bvh

    parser = argparse.ArgumentParser(prog="python addon/demo.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="out", help="folder for demo.blend and demo.bvh (default: out)")
    parser.add_argument("--responsiveness", "-W", type=float, default=0.5, help="0 most responsive .. 1 smoothest (default 0.5; no flagged gap from 0.3 up)")
    parser.add_argument("--pictures", metavar="DIR", action="append", default=[],
                        help="also copy the pictures into DIR (make pictures: docs/images); may be given again")
    args = parser.parse_args(argv)

    # A new empty file from the factory startup file; the preferences, and so
    # an enabled Smart Motion extension, stay as they are.
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    if not hasattr(bpy.types.Object, "smart_motion"):
        if register is None:
            raise SystemExit("the Smart Motion add-on is not registered: enable the extension, or run "
                             "python addon/demo.py from the repository root")
        register()
    bpy.context.scene.smart_motion.responsiveness = args.responsiveness
    demo = build_demo_scene(responsiveness=args.responsiveness)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    blend, bvh = out / "demo.blend", out / "demo.bvh"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), check_existing=False)
    write_bvh(demo.result.motion, bvh)
    plan = demo.result.plan
    print(plan.summary())
    print(f"baked {plan.end - plan.start + 1} frames into action {demo.action.name!r} of armature {demo.armature.name!r}")
    print(f"wrote {blend}")
    print(f"wrote {bvh}")
    from .pictures import write_pictures

    # (after the .blend is saved: the pictures' camera, bodies and crossfade are no part of it)
    for picture in write_pictures(demo, out):
        print(f"wrote {picture}")
        for folder in args.pictures:
            copy = Path(folder).resolve() / picture.name
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(picture, copy)
            print(f"wrote {copy}")
    return 0


def _run_from_checkout() -> int:
    """``python addon/demo.py`` from a checkout: run as a script, so that no top-level ``addon``
    package is imported (``python -m addon.demo`` would import it, and its modules' relative
    imports of the core, ``..core``, cannot resolve above a top-level package).

    The add-on's modules import the core relatively, as Blender's extension
    package requires, so the checkout is loaded as the package
    ``smart_motion``, the extension's id, and the demo run from there.
    """
    import importlib
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("smart_motion", root / "__init__.py", submodule_search_locations=[str(root)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["smart_motion"] = package
    spec.loader.exec_module(package)
    return importlib.import_module("smart_motion.addon.demo").main(register=package.register)


if __name__ == "__main__":
    code = _run_from_checkout()
    # Everything is written by now. Blender 4.5's bpy module can hang in its own teardown at exit
    # (a thread waiting forever, seen headless after this demo), so the process ends here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
