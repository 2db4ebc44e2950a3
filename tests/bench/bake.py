"""Bake speed: Smart Motion's Bake to Action against Blender's own NLA bake, same NLA setup.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/bake.py

Ten real clips (the TIMELINE of tests/bench/common.py, about 3,000
frames once overlapped) are imported with Blender's BVH importer onto one
armature of 25 bones and laid out as NLA strips,
each starting 0.5 s before the previous one ends, cores leaving 0.5 s at
each end, on three alternating tracks. Then, median of REPEAT runs each, the
variants taking turns (one run of each per round: the machine may be shared):

  cold         bpy.ops.smart_motion.bake() with no preview: read the strips,
               synthesize (analysis, plan, rendering with leg IK), write a
               new action keyed on every frame (rotation and location of
               every bone).
    of which   reading, synthesis (strips to a core Result) and keys (write_action).
  warm         the usual flow: Synthesize (not timed), then
               bpy.ops.smart_motion.bake() alone, which finds the preview
               current (hashes of the strips' settings and of the rig; for
               the keys, the preview's and the sources', the depsgraph's edit
               reports: addon.preview.unedited, sources_unedited) and writes
               the motion Synthesize kept with its bone channels
               (addon.preview.shown_motion).
    naive      the same Bake hashing the sources' keys (sources_unedited
               answering "don't know", as before issue 25's third change);
               and the same Bake with the kept motion forgotten
               (state.forget_all after Synthesize): the preview's segments
               read back and joined (preview.bake_into), as before its second.
    of which   the check that the preview is current (addon.preview.current_preview);
               next to it, the naive check: the same plus a hash of every key,
               the sources' and the preview's (fcurves.action_digest), as
               before issue 25.
  synthesize   bpy.ops.smart_motion.synthesize(), for the whole usual flow;
    naive      the same reading the sources' keys a second time for the
               signature (fcurves.keys_read_once off), as before issue 25's
               third change.
The Bandai Namco skeleton has 22 joints; as game rigs carry a few more
bones than the capture (props, attachment points), each clip is first given
three extra animated bones (a prop in each hand, a head-top marker) with
``core.bvh`` and written to the temporary folder, so the armature has 25
bones, every one of them keyed in every clip.

  blender      bpy.ops.nla.bake(): Blender evaluates the NLA (its own plain
               strip blending, no synthesis) frame by frame and keys the same
               channels (location and rotation of every bone, every frame).

Targets (issue 25): our Bake to Action at least 10 times faster than
Blender's bake, and the usual flow, Synthesize then Bake, at least 3 times.
It is read for Bake as the panel offers it, after Synthesize (warm): the
synthesized motion is there and Bake writes it, the work Blender's bake
does from its own NLA evaluation. The cold Bake, which must read the strips
and synthesize first (work Blender's bake does not do at all), is printed
next to it with its parts.

The extension is loaded from this checkout under its id, with Blender's user
profile pointed at a temporary folder, as the tests do.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
MOCAP = ROOT.parent / "shared" / "mocap"
PROFILE = Path(tempfile.mkdtemp(prefix="smart_motion_bench_profile_"))
for variable, folder in (
    ("BLENDER_USER_RESOURCES", PROFILE),
    ("BLENDER_USER_CONFIG", PROFILE / "config"),
    ("BLENDER_USER_SCRIPTS", PROFILE / "scripts"),
    ("BLENDER_USER_DATAFILES", PROFILE / "datafiles"),
    ("BLENDER_USER_EXTENSIONS", PROFILE / "extensions"),
):
    os.environ[variable] = str(folder)

import bpy  # noqa: E402  (after the profile folders are set)
import numpy as np  # noqa: E402

sys.path.insert(0, str(ROOT))
from core import quat  # noqa: E402
from core.bvh import read_bvh, write_bvh  # noqa: E402
from core.motion import Motion, Skeleton  # noqa: E402

from common import TIMELINE  # noqa: E402  (tests/bench, next to this script)

REPEAT = 7
# (new bone, parent, offset in the parent's frame, cm): the three bones a game rig adds
EXTRA_BONES = (("Prop_L", "Hand_L", (10.0, 0.0, 0.0)), ("Prop_R", "Hand_R", (10.0, 0.0, 0.0)),
               ("HeadTop", "Head", (12.0, 0.0, 0.0)))
OVERLAP_S = 0.5
MARGIN_S = 0.5
TRACKS = 3


def load_extension():
    """The checkout as the package ``smart_motion`` (the extension's id), registered."""
    spec = importlib.util.spec_from_file_location("smart_motion", ROOT / "__init__.py", submodule_search_locations=[str(ROOT)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["smart_motion"] = package
    spec.loader.exec_module(package)
    package.register()
    return addon_modules("smart_motion"), importlib.import_module("smart_motion.addon.convert")


ADDON_MODULES = ("fcurves", "strips", "pose", "convert", "timeline", "sync_groups", "state", "preview", "report",
                 "synthesis", "bake", "arrange", "clips")


def addon_modules(package: str) -> SimpleNamespace:
    """The add-on's modules of ``package`` by role (``.timeline``, ``.synthesis``, ...), as loaded."""
    return SimpleNamespace(**{name: importlib.import_module(f"{package}.addon.{name}") for name in ADDON_MODULES})


def with_extra_bones(motion: Motion) -> Motion:
    """``motion`` with the EXTRA_BONES appended, each swaying a little about its parent."""
    skeleton = motion.skeleton
    names, parents, offsets, channels = list(skeleton.names), list(skeleton.parents), list(skeleton.offsets), list(skeleton.channels)
    for name, parent, offset in EXTRA_BONES:
        names.append(name)
        parents.append(skeleton.index(parent))
        offsets.append(offset)
        channels.append(("Zrotation", "Xrotation", "Yrotation"))
    extended = Skeleton(tuple(names), np.array(parents), np.array(offsets), dict(skeleton.end_sites), tuple(channels),
                        skeleton.up, skeleton.unit)
    t = np.arange(motion.n_frames) / motion.fps
    sway = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.2 * np.sin(2.0 * np.pi * t))  # (F, 4)
    rotations = np.concatenate([motion.rotations, np.repeat(sway[:, None], len(EXTRA_BONES), axis=1)], axis=1)
    positions = np.concatenate([motion.positions, np.broadcast_to(np.array([o for _, _, o in EXTRA_BONES]),
                                                                 (motion.n_frames, len(EXTRA_BONES), 3))], axis=1)
    return Motion(extended, rotations, positions, motion.fps)


def build_scene(addon) -> bpy.types.Object:
    """One armature, a strip per clip of TIMELINE, all selected, cores set."""
    bpy.ops.wm.read_homefile(use_empty=True)
    obj = None
    start = 1
    for k, (name, frames) in enumerate(TIMELINE):
        source = MOCAP / f"{name}.bvh"
        if not source.is_file():
            sys.exit(f"mocap clip not found: {source} (the benchmark needs ../shared/mocap)")
        path = PROFILE / f"{Path(name).name}.bvh"  # the clip on the 25-bone rig
        write_bvh(with_extra_bones(read_bvh(source)), path)
        bpy.ops.import_anim.bvh(filepath=str(path), global_scale=0.01, rotate_mode='NATIVE', update_scene_fps=True)
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
        strip = obj.animation_data.nla_tracks[k % TRACKS].strips.new(Path(name).name, start, action)
        if frames is not None:
            strip.action_frame_end = strip.action_frame_start + frames - 1
        n = int(strip.frame_end - strip.frame_start) + 1
        fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
        margin = min(int(round(MARGIN_S * fps)), n // 4)
        item = addon.strips.strip_settings(obj, strip, create=True)
        item.core_first, item.core_last, item.has_core = margin, n - 1 - margin, True
        start += n - int(round(OVERLAP_S * fps))
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def interleaved_medians(variants: dict) -> dict:
    """``{name: median seconds}`` of each variant's ``run`` after its ``reset`` (neither timed), over
    REPEAT rounds in which the variants take turns, one run of each per round, so that a change of the
    machine's load (it is shared) falls on them alike. ``variants``: ``{name: (run, reset, after)}``;
    ``after``, if any, is called untimed after each run."""
    times = {name: [] for name in variants}
    for _ in range(REPEAT):
        for name, (run, reset, after) in variants.items():
            reset()
            # (the variant before left no evaluation pending, nor garbage, for this one to pay for)
            bpy.context.view_layer.update()
            gc.collect()
            t = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t)
            if after is not None:
                after()
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def main() -> None:
    addon, convert = load_extension()
    obj = build_scene(addon)
    scene = bpy.context.scene
    strips = addon.strips.selected_strips(obj)
    responsiveness = scene.smart_motion.responsiveness
    synthesis_runs = count_calls(addon.synthesis, "synthesize_strips")

    def reset():
        # back to the bare NLA setup: no preview, no active action, no baked actions
        addon.preview.clear_preview(obj)
        obj.smart_motion.plan_json = ""
        obj.animation_data.action = None
        for action in [a for a in bpy.data.actions if a.users == 0]:
            bpy.data.actions.remove(action)

    def reset_to_preview():
        reset()
        assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    result = addon.synthesis.synthesize_strips(obj, strips, responsiveness)
    first, last = result.plan.start, result.plan.end
    n_frames, n_bones = last - first + 1, len(obj.pose.bones)
    print(f"{len(strips)} strips, {n_frames} frames ({first}..{last}), {n_bones} bones, "
          f"{len(result.plan.rejected)} rejected, methods: {', '.join(p.method for p in result.plan.pairs)}")

    def blender_bake():
        # the same strips over the same frames and the same channels (no scale, B-Bone or custom properties)
        bpy.ops.nla.bake(frame_start=first, frame_end=last, only_selected=False, bake_types={'POSE'},
                         channel_types={'LOCATION', 'ROTATION'})

    def reset_to_preview_forgotten():
        reset_to_preview()
        addon.state.forget_all()

    def bake_without_synthesis():
        # the warm Bakes write the preview Synthesize made, never synthesizing again
        before = synthesis_runs[0]
        assert bpy.ops.smart_motion.bake() == {'FINISHED'}
        if synthesis_runs[0] != before:
            sys.exit("a warm Bake synthesized again")

    def bake_hashing_the_sources():
        with replaced(addon.preview, "sources_unedited", lambda *args: False):
            bake_without_synthesis()

    def synthesize_reading_twice():
        with replaced(addon.synthesis, "keys_read_once", contextlib.nullcontext):
            bpy.ops.smart_motion.synthesize()

    def naive_check():
        addon.preview.current_preview(obj, strips, responsiveness)
        [addon.fcurves.action_digest(a) for a in [*addon.preview.source_actions(strips),
                                                  *addon.strips.preview_segments(obj)]]

    keys_written = {}
    times = interleaved_medians({
        "cold": (lambda: bpy.ops.smart_motion.bake(), reset, lambda: keys_written.setdefault("cold", key_count(obj))),
        "warm": (bake_without_synthesis, reset_to_preview, lambda: keys_written.setdefault("warm", key_count(obj))),
        "warm hashing": (bake_hashing_the_sources, reset_to_preview, None),
        "warm read back": (bake_without_synthesis, reset_to_preview_forgotten, None),
        "synthesize": (lambda: bpy.ops.smart_motion.synthesize(), reset, None),
        "synthesize reading twice": (synthesize_reading_twice, reset, None),
        "checking": (lambda: addon.preview.current_preview(obj, strips, responsiveness), reset_to_preview, None),
        "naive checking": (naive_check, reset_to_preview, None),
        "reading": (lambda: addon.timeline.strip_clips(obj, strips), reset, None),
        "synthesis": (lambda: addon.synthesis.synthesize_strips(obj, strips, responsiveness), reset, None),
        "keys": (lambda: convert.write_action(obj, result.motion, "keys only", frame_start=first), reset, None),
        "blender": (blender_bake, reset, lambda: keys_written.setdefault("blender", key_count(obj))),
    })
    cold, warm, warm_hashing, warm_read_back, synthesize, synthesize_reading_twice, checking, naive_checking, \
        reading, synthesis, keys, blender = times.values()
    print(f"keys written: ours cold {keys_written['cold']:,}, warm {keys_written['warm']:,}, "
          f"Blender's {keys_written['blender']:,}")

    print(f"{'':44s}{'seconds':>9s}{'ms/frame':>10s}")
    for label, seconds in (
        ("ours, cold: Bake to Action, no preview", cold),
        ("  reading the strips", reading),
        ("  reading + core synthesis", synthesis),
        ("  writing the keys", keys),
        ("ours, warm: Bake to Action after Synthesize", warm),
        ("  checking the preview is current", checking),
        ("  naive check: hashing every key too", naive_checking),
        ("  naive: the sources' keys hashed", warm_hashing),
        ("  naive: the segments read back instead", warm_read_back),
        ("ours: Synthesize (preview)", synthesize),
        ("  naive: the sources' keys read twice", synthesize_reading_twice),
        ("ours: usual flow, Synthesize + warm Bake", synthesize + warm),
        ("  naive: both naive as above", synthesize_reading_twice + warm_hashing),
        ("Blender: nla.bake", blender),
    ):
        print(f"{label:44s}{seconds:9.3f}{1000 * seconds / n_frames:10.3f}")
    ratio = blender / warm
    print(f"Blender's bake / our Bake to Action after Synthesize: {ratio:5.1f}x  "
          f"(target >= 10x: {'met' if ratio >= 10.0 else 'NOT met'})")
    print(f"Blender's bake / the same Bake hashing the sources' keys: {blender / warm_hashing:5.1f}x")
    print(f"Blender's bake / the same Bake reading the preview's segments back: {blender / warm_read_back:5.1f}x")
    print(f"Blender's bake / our cold Bake (reading and synthesis included): {blender / cold:5.1f}x")
    flow = synthesize + warm
    print(f"Blender's bake / our whole usual flow (Synthesize + Bake): {blender / flow:5.1f}x  "
          f"(target >= 3x: {'met' if blender / flow >= 3.0 else 'NOT met'}); "
          f"both naive: {blender / (synthesize_reading_twice + warm_hashing):5.1f}x")
    print(f"Blender's bake / our key writing: {blender / keys:5.1f}x  (the same work: frames to keys)")


@contextlib.contextmanager
def replaced(module, name: str, value):
    """``module.name`` is ``value`` within."""
    kept = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, kept)


def count_calls(module, name: str) -> list[int]:
    """Replace ``module.name`` by a wrapper counting its calls; the count is ``[n]``."""
    calls = [0]
    function = getattr(module, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return function(*args, **kwargs)

    setattr(module, name, counted)
    return calls


def key_count(obj) -> int:
    """Keys of ``obj``'s active action."""
    action = obj.animation_data.action
    return sum(len(fcurve.keyframe_points) for layer in action.layers for strip in layer.strips
               for channelbag in strip.channelbags for fcurve in channelbag.fcurves)


if __name__ == "__main__":
    main()
