"""Insert Hop in Blender (issue 13 item 7): how long the one-trigger search and the whole operator take.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/insert_hop_blender.py

A walk strip (the source) and a bow strip 100 frames later (the destination) on
one armature, and a library of the file's actions: the ten clips of
tests/bench/hops_search.py (86 to 478 frames, bandai1 at 30 fps, imported with
Blender's BVH importer) besides the two strips. For a few playheads it prints
the search as Insert Hop times it (the point clouds, forward kinematics of
every clip, then core.hops.search_trigger: only the distance rows and columns
the trigger reaches), the search alone, beside the same search on whole distance
matrices (what a precompute builds, core.hops.window_distance_matrix per clip pair,
then search_one_hop) measured in the same run, and the whole operator (reading
every action, the search, the writes). Target: under 2 s to wait for.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bake  # noqa: E402  (tests/bench: loads bpy with a temporary profile)

import bpy  # noqa: E402

from hops_search import LIBRARY, MOCAP  # noqa: E402

PLAYHEADS = (111, 131, 151, 171)
REPEAT = 3
TARGET_S = 2.0


def import_action(name: str) -> bpy.types.Action:
    assert bpy.ops.import_anim.bvh(filepath=str(MOCAP / f"{name}.bvh"), global_scale=0.01, rotate_mode='NATIVE',
                                   update_scene_fps=True) == {'FINISHED'}
    imported = bpy.context.view_layer.objects.active
    action = imported.animation_data.action
    action.use_fake_user = True
    return imported, action


def build_scene():
    """The armature with the walk and bow strips on two tracks, selected; the library's actions in the file."""
    bpy.ops.wm.read_homefile(use_empty=True)
    obj, walk = import_action("walk_normal_001")
    obj.animation_data.action = None
    for name in LIBRARY:
        if name != "walk_normal_001":
            other, _ = import_action(name)
            data = other.data
            bpy.data.objects.remove(other)
            bpy.data.armatures.remove(data)
    bow = bpy.data.actions["bow_normal_001"]
    tracks = obj.animation_data.nla_tracks
    tracks.new().strips.new("walk", 1, walk)
    tracks.new().strips.new("bow", 101, bow)
    bpy.context.view_layer.objects.active = obj
    return obj


def whole_matrix_search(hops, clouds, src, dst, trigger, offset, length, weight):
    """The naive alternative: every distance matrix of the source and destination, then the search."""
    began = time.perf_counter()
    from_source = [hops.window_distance_matrix(clouds[src], c, length, same=i == src) for i, c in enumerate(clouds)]
    to_destination = [hops.window_distance_matrix(c, clouds[dst], length, same=i == dst) for i, c in enumerate(clouds)]
    found = hops.search_one_hop(trigger, from_source, to_destination, offset=offset, blend_frames=length, dst=dst,
                                weight=weight)
    return time.perf_counter() - began, found


def main():
    import importlib

    bake.load_extension()
    addon_hops = importlib.import_module("smart_motion.addon.hops")
    addon = bake.addon_modules("smart_motion")
    core_hops = importlib.import_module("smart_motion.core.hops")
    convert = importlib.import_module("smart_motion.addon.convert")
    obj = build_scene()
    saved = Path(bake.PROFILE) / "insert_hop.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(saved))
    scene = bpy.context.scene
    settings = scene.smart_motion
    fps = scene.render.fps / scene.render.fps_base
    strips = addon.strips.selected_strips(obj)
    print(f"library: {len(LIBRARY) - 2} actions besides the walk and bow strips, "
          f"{sum(a.frame_range[1] - a.frame_range[0] + 1 for a in bpy.data.actions):.0f} frames in all")
    print(f"{'playhead':>8} {'hop':>22} {'clouds+search':>14} {'search':>9} {'whole matrices':>15} {'operator':>9}")
    operator_times = []
    for playhead in PLAYHEADS:
        scene.frame_current = playhead
        searches, choice = [], None
        for _ in range(REPEAT):
            choice = addon_hops.find_hop(obj, strips, playhead, weight=settings.hop_weight,
                                         blend_seconds=settings.hop_blend)
            searches.append(choice.seconds)
        clips = [c.motion for c in addon_hops.library_actions(obj, {s.action for s in strips})]
        clips += [convert.strip_to_motion(obj, s) for s in strips]  # (the strips' clips last, as find_hop has them)
        clouds, _ = core_hops.library_point_clouds(clips, len(clips) - 2)
        whole, found = whole_matrix_search(core_hops, clouds, len(clips) - 2, len(clips) - 1, choice.trigger,
                                           choice.offset, choice.blend_frames, settings.hop_weight / fps)
        assert (found.hop_offset, found.stay_src, found.stay_hop) == (choice.hop_offset, choice.stay_src,
                                                                      choice.stay_hop)
        trigger_only = []
        for _ in range(REPEAT):
            began = time.perf_counter()
            core_hops.search_trigger(clouds, len(clips) - 2, len(clips) - 1, choice.trigger, offset=choice.offset,
                                     blend_frames=choice.blend_frames, weight=settings.hop_weight / fps)
            trigger_only.append(time.perf_counter() - began)
        runs = []
        for _ in range(REPEAT):
            began = time.perf_counter()
            assert bpy.ops.smart_motion.insert_hop() == {'FINISHED'}
            runs.append(time.perf_counter() - began)
            bpy.ops.wm.open_mainfile(filepath=str(saved))  # (the strips as they were)
            obj, scene = bpy.data.objects["walk_normal_001"], bpy.context.scene
            bpy.context.view_layer.objects.active = obj
            scene.frame_current, settings = playhead, scene.smart_motion
            strips = addon.strips.selected_strips(obj)
        operator_times += runs
        name = "direct" if choice.direct_won else choice.hop.name
        print(f"{playhead:8d} {name:>22} {statistics.median(searches):12.3f} s "
              f"{statistics.median(trigger_only):7.3f} s {whole:13.3f} s "
              f"{statistics.median(runs):7.3f} s")
    worst = max(operator_times)
    print(f"slowest operator run {worst:.3f} s: {'within' if worst < TARGET_S else 'ABOVE'} the {TARGET_S:g} s target")


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    main()
