"""The demo's pictures (issue 26 item 3): what they cost ``make demo``, and what they show, measured.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/demo_pictures.py

Builds the demo scene as ``make demo`` does (addon/demo.py: the five demo strips
synthesized and baked), times it, then times the pictures written after it
(addon/pictures.py: the crossfade armature evaluated by Blender's NLA, twelve
Workbench renders of the contact sheet and the speed plot), median of REPEAT.

Then whether the crossfade compared with is fair: per clip, the frames of its core
that Blender's NLA plays blended (not as the clip's own action plays it), under the
crossfade the pictures use (the demo's own strips, each action as it is, the higher
strip's influence keyed across each gap between cores: core.figures.crossfade_spans,
crossfade_influence_keys), under the crossfade they used before (the same fades, each
clip moved where the synthesis placed it: core.figures.placed_motions) and under the
naive set-up before that (each placed strip fading in and out over all of its overlap
with its neighbours).

Then, per gap between cores, ours against both crossfades, evaluated by Blender: the
plain one (what the contact sheet's bottom row shows) and the placed one (a second
baseline: our alignment, 2008 4.2-4.3, with a plain blend): the foot skate by the plan's
own measure (core.quality.gap_skate, leg lengths per second, on the captured clips'
floor), the lower body's peak speed (2014 Fig. 5, leg lengths per second) and the
footprints that slide (core.footprints, on the same floor). Target: the pictures add
under 60 s.
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


def placed_armature(made, scene, name: str, fades):
    """The demo's clips each moved where the synthesis placed it (core.figures.placed_motions),
    as strips alternating between two tracks; ``fades(k, clip, clips, span)`` sets strip ``k``'s
    blend in and out (upper strips only; the lower ones play at full weight, held)."""
    from smart_motion.addon.convert import armature_from_skeleton, find_armature_rig, write_action
    from smart_motion.core.demo import demo_timeline
    from smart_motion.core.figures import crossfade_spans, held_frames, placed_motions

    clips = demo_timeline()
    plan = made.result.plan
    rig = find_armature_rig(made.armature, clips[0].motion)
    placed = dict(zip(plan.clips, placed_motions(clips, plan, rig)))
    obj = armature_from_skeleton(clips[0].motion.skeleton, name, scene.collection)
    obj.matrix_world = made.armature.matrix_world
    anim = obj.animation_data_create()
    tracks = [anim.nla_tracks.new(), anim.nla_tracks.new()]
    for k, (clip, span) in enumerate(zip(clips, crossfade_spans(clips, plan))):
        first, frames = fades(k, clip, clips, span)
        action = write_action(obj, placed[clip.name][held_frames(clip.start, clip.motion.n_frames, *frames)],
                              f"{name} {clip.name}", frame_start=1)
        strip = tracks[k % 2].strips.new(clip.name, first, action)
        if k % 2 == 0:
            strip.extrapolation = 'HOLD' if k == 0 else 'HOLD_FORWARD'
            continue
        strip.extrapolation = 'NOTHING'
        strip.blend_in, strip.blend_out = fades(k, clip, clips, span, blend=True)
    return obj


def gap_fades(k, clip, clips, span, blend=False):
    """The crossfade the pictures used before: each strip cut to its span (holding its end poses),
    fading across the gaps between cores."""
    return (span.fade_in, span.fade_out) if blend else (span.first, (span.first, span.last))


def overlap_fades(k, clip, clips, span, blend=False):
    """The naive set-up: each strip as laid out, fading over all the frames it overlaps its
    neighbours (Blender clamps fades longer than the strip)."""
    if not blend:
        return clip.start, (clip.start, clip.start + clip.motion.n_frames - 1)
    return (max(clips[k - 1].end - clip.start + 1, 0),
            max(clip.end - clips[k + 1].start + 1, 0) if k + 1 < len(clips) else 0)


def blended_core_frames(pictures, armature, references) -> dict:
    """Per clip, how many frames of its core ``armature``'s NLA plays other than ``references``
    (clip name -> the Motion it should play there, frame 0 at the clip's start)."""
    from smart_motion.core.demo import demo_timeline

    clips = demo_timeline()
    order = [armature.pose.bones.find(name) for name in clips[0].motion.skeleton.names]
    counts = {}
    for clip in clips:
        frames = np.arange(clip.core_range[0], clip.core_range[1] + 1)
        played = pictures.evaluated_joints(armature, clip.start + frames)[:, order]
        own = references[clip.name].global_positions()[frames]
        counts[clip.name] = (int((np.abs(played - own).max(axis=(1, 2)) > 1e-4).sum()), len(frames))
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
    clips = importlib.import_module("smart_motion.core.demo").demo_timeline()
    plan, motion = made.result.plan, made.result.motion
    rig = rig_of(motion)
    placed = dict(zip(plan.clips, figures.placed_motions(clips, plan, rig)))
    armatures = {"plain": pictures.crossfade_armature(made, scene),
                 "placed": placed_armature(made, scene, "placed crossfade", gap_fades),
                 "overlap": placed_armature(made, scene, "overlap crossfade", overlap_fades)}
    own = {clip.name: clip.motion for clip in clips}
    played = {"plain": blended_core_frames(pictures, armatures["plain"], own),
              "placed": blended_core_frames(pictures, armatures["placed"], placed),
              "overlap": blended_core_frames(pictures, armatures["overlap"], placed)}
    print()
    print(f"{'core frames played blended':28s}{'plain (used)':>16s}{'placed, gaps (before)':>24s}"
          f"{'placed, overlaps (first)':>26s}")
    for name, (_, frames) in played["plain"].items():
        print(f"{name:28s}" + "".join(f"{f'{played[who][name][0]} of {frames}':>{w}s}"
                                      for who, w in (("plain", 16), ("placed", 24), ("overlap", 26))))

    # the figures of what the pictures show, and of the placed crossfade beside them
    order = [armatures["plain"].pose.bones.find(name) for name in motion.skeleton.names]
    frames = np.arange(plan.start, plan.end + 1)
    positions = {"ours": motion.global_positions(),
                 "plain": pictures.evaluated_joints(armatures["plain"], frames)[:, order],
                 "placed": pictures.evaluated_joints(armatures["placed"], frames)[:, order]}
    up, leg = motion.skeleton.up, importlib.import_module("smart_motion.core.rig").mean_leg_length(motion, rig)
    feet = quality.foot_joints(rig)
    captured = np.concatenate([clip.motion.global_positions() for clip in clips])
    levels = quality.foot_levels(captured[:, feet] @ up, motion.fps)  # (one floor for all: the clips')
    speeds = {who: figures.body_part_speeds(g, rig, motion.fps, leg) for who, g in positions.items()}
    # (as the contact sheet takes them: ours on the synthesized motion's floor, a crossfade on the clips')
    prints = {who: footprints.footprints(motion, rig, positions=g, reference=None if who == "ours" else captured)
              for who, g in positions.items()}
    who_all = list(positions)
    print()
    print(f"{'gap':28s}{'skate, legs/s':>27s}{'lower body peak, legs/s':>27s}{'prints sliding':>27s}")
    print(f"{'':28s}" + "".join(f"{who:>9s}" for who in who_all) * 3)
    for pair in plan.pairs:
        first, last = pair.gap
        skate = {who: quality.gap_skate(g[:, feet], plan.start, pair.gap, levels, up, motion.fps)
                 for who, g in positions.items()}
        peak = {who: float(s[first - plan.start:last - plan.start + 1, 0].max()) for who, s in speeds.items()}
        sliding = {who: sum(p.sliding and p.frames[0] + plan.start <= last and p.frames[1] + plan.start >= first
                            for p in ps) for who, ps in prints.items()}

        def legs(x):
            return "-" if x is None else f"{x / leg:.3f}"

        print(f"{pair.prev + ' -> ' + pair.next + f' ({first}..{last})':28s}"
              + "".join(f"{legs(skate[who]):>9s}" for who in who_all)
              + "".join(f"{peak[who]:9.2f}" for who in who_all)
              + "".join(f"{sliding[who]:9d}" for who in who_all))
    print("footprints in all: " + ", ".join(f"{who} {len(ps)} ({sum(p.sliding for p in ps)} sliding)"
                                            for who, ps in prints.items()))
    print("(plain: the demo's strips in Blender's NLA, each action as it is, the contact sheet's bottom row; "
          "placed: the same fades, each clip moved where the synthesis placed it)")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # (Blender 4.5's bpy can hang in its teardown at exit: addon/demo.py)
