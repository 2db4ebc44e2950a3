"""The demo's pictures (issue 26 item 3): what they cost ``make demo``, and what they show, measured.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/demo_pictures.py

Builds the demo scene as ``make demo`` does (addon/demo.py: the five demo strips
synthesized and baked), times it, then times the pictures written after it
(addon/pictures.py: the crossfade armature evaluated by Blender's NLA, twelve
Workbench renders of the contact sheet and the speed plot), median of REPEAT.

Then whether the crossfade compared with is fair: per clip, the frames of its core
that Blender's NLA plays blended (not as the clip placed), under the crossfade the
pictures use (each strip fading only across the gaps between cores,
core.figures.crossfade_spans) against the naive set-up they used before (each
strip fading in and out over all of its overlap with its neighbours).

Then, per gap between cores, ours against the plain NLA crossfade of the same
strips, each clip where the synthesis placed it (what the contact sheet's bottom
row shows, evaluated by Blender): the foot skate by the plan's own measure
(core.quality.gap_skate, leg lengths per second, on the synthesized motion's
floor), the lower body's peak speed (2014 Fig. 5, leg lengths per second) and the
footprints that slide (core.footprints). Target: the pictures add under 60 s.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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

REPEAT = 3
TARGET_S = 60.0


def load_extension():
    """The checkout as the package ``smart_motion`` (the extension's id), registered."""
    spec = importlib.util.spec_from_file_location("smart_motion", ROOT / "__init__.py",
                                                  submodule_search_locations=[str(ROOT)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["smart_motion"] = package
    spec.loader.exec_module(package)
    package.register()


def overlap_crossfade_armature(made, scene, name: str):
    """The naive set-up: each clip a strip as laid out, strips alternating between two tracks, each
    upper strip fading in and out over all the frames it overlaps its neighbours (Blender clamps
    fades longer than the strip)."""
    from smart_motion.addon.convert import armature_from_skeleton, find_armature_rig, write_action
    from smart_motion.core.demo import demo_timeline
    from smart_motion.core.figures import placed_motions

    clips = demo_timeline()
    plan = made.result.plan
    rig = find_armature_rig(made.armature, clips[0].motion)
    placed = dict(zip(plan.clips, placed_motions(clips, plan, rig)))
    obj = armature_from_skeleton(clips[0].motion.skeleton, name, scene.collection)
    anim = obj.animation_data_create()
    tracks = [anim.nla_tracks.new(), anim.nla_tracks.new()]
    for k, clip in enumerate(clips):
        strip = tracks[k % 2].strips.new(clip.name, clip.start, write_action(obj, placed[clip.name], f"{name} {clip.name}",
                                                                             frame_start=1))
        if k % 2 == 0:
            strip.extrapolation = 'HOLD' if k == 0 else 'HOLD_FORWARD'
            continue
        strip.extrapolation = 'NOTHING'
        strip.blend_in = max(clips[k - 1].end - clip.start + 1, 0)
        strip.blend_out = max(clip.end - clips[k + 1].start + 1, 0) if k + 1 < len(clips) else 0
    return obj


def blended_core_frames(pictures, armature, made) -> dict:
    """Per clip, how many frames of its core ``armature``'s NLA plays other than the clip as placed."""
    from smart_motion.core.demo import demo_timeline
    from smart_motion.core.figures import placed_motions
    from smart_motion.core.rig import find_rig

    clips = demo_timeline()
    placed = placed_motions(clips, made.result.plan, find_rig(clips[0].motion))
    order = [armature.pose.bones.find(name) for name in clips[0].motion.skeleton.names]
    counts = {}
    for clip, motion in zip(clips, placed):
        frames = np.arange(clip.core_range[0], clip.core_range[1] + 1)
        played = pictures.evaluated_joints(armature, clip.start + frames)[:, order]
        counts[clip.name] = (int((np.abs(played - motion.global_positions()[frames]).max(axis=(1, 2)) > 1e-4).sum()),
                             len(frames))
    return counts


def main() -> int:
    load_extension()
    demo = importlib.import_module("smart_motion.addon.demo")
    pictures = importlib.import_module("smart_motion.addon.pictures")
    figures = importlib.import_module("smart_motion.core.figures")
    footprints = importlib.import_module("smart_motion.core.footprints")
    quality = importlib.import_module("smart_motion.core.quality")
    rig_of = importlib.import_module("smart_motion.core.rig").find_rig

    demo_s, pictures_s = [], []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(REPEAT):
            bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
            began = time.perf_counter()
            made = demo.build_demo_scene()
            demo_s.append(time.perf_counter() - began)
            began = time.perf_counter()
            pictures.write_pictures(made, Path(out))
            pictures_s.append(time.perf_counter() - began)
    print(f"demo scene (build, synthesize, bake)       {statistics.median(demo_s):7.2f} s")
    print(f"its pictures (crossfade, 12 renders, plot) {statistics.median(pictures_s):7.2f} s  "
          f"(target < {TARGET_S:.0f} s: {'met' if statistics.median(pictures_s) < TARGET_S else 'NOT met'})")

    scene = bpy.context.scene
    fair = blended_core_frames(pictures, pictures.crossfade_armature(made, scene), made)
    naive = blended_core_frames(pictures, overlap_crossfade_armature(made, scene, "naive crossfade"), made)
    print()
    print(f"{'core frames played blended':28s}{'gap crossfade (used)':>22s}{'overlap crossfade (before)':>28s}")
    for name, (blended, frames) in fair.items():
        print(f"{name:28s}{f'{blended} of {frames}':>22s}{f'{naive[name][0]} of {frames}':>28s}")

    # the figures of what the pictures show
    plan, motion = made.result.plan, made.result.motion
    rig = rig_of(motion)
    crossfade = pictures.crossfade_armature(made, scene)
    order = [crossfade.pose.bones.find(name) for name in motion.skeleton.names]
    blended = pictures.evaluated_joints(crossfade, np.arange(plan.start, plan.end + 1))[:, order]
    ours = motion.global_positions()
    up, leg = motion.skeleton.up, importlib.import_module("smart_motion.core.rig").mean_leg_length(motion, rig)
    feet = quality.foot_joints(rig)
    levels = quality.foot_levels(ours[:, feet] @ up, motion.fps)  # (one floor for both: the clips')
    speeds = {who: figures.body_part_speeds(g, rig, motion.fps, leg) for who, g in (("ours", ours), ("crossfade", blended))}
    prints = {"ours": footprints.footprints(motion, rig),
              "crossfade": footprints.footprints(motion, rig, positions=blended, reference=ours)}
    print()
    print(f"{'gap':28s}{'skate, legs/s':>22s}{'lower body peak, legs/s':>28s}{'prints sliding':>22s}")
    print(f"{'':28s}{'ours':>11s}{'crossfade':>11s}{'ours':>14s}{'crossfade':>14s}{'ours':>11s}{'crossfade':>11s}")
    for pair in plan.pairs:
        first, last = pair.gap
        skate = {who: quality.gap_skate(g[:, feet], plan.start, pair.gap, levels, up, motion.fps)
                 for who, g in (("ours", ours), ("crossfade", blended))}
        peak = {who: float(s[first - plan.start:last - plan.start + 1, 0].max()) for who, s in speeds.items()}
        sliding = {who: sum(p.sliding and p.frames[0] + plan.start <= last and p.frames[1] + plan.start >= first
                            for p in ps) for who, ps in prints.items()}

        def legs(x):
            return "-" if x is None else f"{x / leg:.3f}"

        print(f"{pair.prev + ' -> ' + pair.next + f' ({first}..{last})':28s}{legs(skate['ours']):>11s}"
              f"{legs(skate['crossfade']):>11s}{peak['ours']:14.2f}{peak['crossfade']:14.2f}"
              f"{sliding['ours']:11d}{sliding['crossfade']:11d}")
    print(f"footprints in all: ours {len(prints['ours'])} ({sum(p.sliding for p in prints['ours'])} sliding), "
          f"crossfade {len(prints['crossfade'])} ({sum(p.sliding for p in prints['crossfade'])} sliding)")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # (Blender 4.5's bpy can hang in its teardown at exit: addon/demo.py)
