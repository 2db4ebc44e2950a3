"""Reach Target and Assemble Parts in Blender (issue 14 item 7): how long they take, and the hit error Blender shows.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/reach_assemble_blender.py

Reach Target (Juang et al. 2009, sections 3.1-3.2), the add-on's own functions
as the operator calls them (``addon.reach.find_reach`` then ``insert_reach``;
the bench loads the extension without installing it, so the operator would
not see the Reach Examples Folder preference), on the armature of the first
raise of bandai2-raise, imported with Blender's BVH importer:

  listed   the eight raises of tests/blender/test_reach_assemble.py (one in
           five, every style) imported as the armature's Reach Examples;
  folder   every one of bandai2-raise's 40 files, read from the shared
           folder as the Reach Examples Folder would be.

Two Empties' positions among the eight raises' hit points (core.reach's
registration, n_blends=0). Each run, median of REPEAT:

  first    the alignment cache emptied, the Empty at target A: reading the
           examples, aligning them (core.reach.ReachSpace.build) with the
           query, keying the new action and strip.
  second   the Empty at target B: the kept alignment, a query only.
  naive    target B again with the cache emptied: what every target would
           cost if the alignment were not kept.

Each is split into reading (examples read and mapped onto the armature),
aligning + query (``ReachFound.seconds``: the query alone when the alignment
was kept), writing (``insert_reach``). After each run the hit error is
measured as Blender evaluates it: the effector's pose bone head at the frame
the reach reports, through the armature's world matrix, against the Empty;
the worst over the runs is printed beside the worst reported error.

Assemble Parts (section 4): bandai1's walk as a strip of its armature, the
other nine clips of tests/bench/hops_search.py imported as the file's
actions (the library). The operator (upper, then lower) beside
core.assemble.assemble alone on the same motions (the strip and actions
converted beforehand): the difference is the add-on's overhead (reading the
strip and the actions, writing the result). Each result is removed before
the next run, so every run sees the same file.

Machine load (os.getloadavg) is printed before and after: other work on the
machine slows every figure alike.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import statistics
import sys
from types import SimpleNamespace
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bake  # noqa: E402  (tests/bench: loads bpy with a temporary profile)

import bpy  # noqa: E402
import numpy as np  # noqa: E402

from hops_search import LIBRARY  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blender"))
sys.path.append(str(Path(__file__).resolve().parents[1]))  # (scenes.py reads real_capture.py there)
from scenes import clips_on_one_armature, examples_on_one_armature, import_action  # noqa: E402  (the Blender tests' scenes)

RAISES = bake.MOCAP / "bandai2-raise"
REPEAT = 5
PLAYHEAD = 20
PARTS = ("upper", "lower")


def load(module: str):
    return importlib.import_module(f"smart_motion.{module}")


@contextlib.contextmanager
def quiet():
    """Blender's own prints (the importer's, an operator's report) kept off the table: fd 1 to /dev/null."""
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(null)
        os.close(saved)


def load_text() -> str:
    return "load average %.2f %.2f %.2f (1, 5, 15 min), %d cores" % (*os.getloadavg(), os.cpu_count())


# ---------------------------------------------------------------- Reach Target


def raise_files() -> list[Path]:
    files = sorted(RAISES.glob("*.bvh"))
    assert len(files) == 40, f"bandai2-raise's 40 raises are expected in {RAISES}"
    return files


def build_reach_scene() -> bpy.types.Object:
    """The first raise's armature, no action assigned, one in five raises as its Reach Examples, an Empty."""
    bpy.ops.wm.read_homefile(use_empty=True)
    with quiet():
        obj, actions = examples_on_one_armature(raise_files()[::5])
    for action in actions:
        obj.smart_motion.reach_examples.add().action = action
    bpy.ops.object.empty_add(location=(0, 0, 0))
    bpy.context.view_layer.objects.active = obj
    bpy.context.scene.frame_current = PLAYHEAD
    return obj


def targets(obj) -> tuple[np.ndarray, np.ndarray]:
    """Two points among the eight listed raises' hit points, in the armature's space."""
    convert, core_reach = load("addon.convert"), load("core.reach")
    motions = [convert.action_to_motion(obj, row.action)
               for row in sorted(obj.smart_motion.reach_examples, key=lambda r: r.action.name)]
    points = core_reach.parameter_space(core_reach.register_examples(motions), n_blends=0).hit_points
    return points[1:3].mean(axis=0), points[4:6].mean(axis=0)


def place_empty(obj, local) -> bpy.types.Object:
    from mathutils import Vector

    empty = bpy.data.objects["Empty"]
    empty.location = obj.matrix_world @ Vector(tuple(local))
    bpy.context.view_layer.update()
    return empty


def evaluated_error(obj, empty, frame: int, bone: str) -> float:
    """|effector head - Empty| in the world, as Blender evaluates ``obj`` at scene ``frame``."""
    bpy.context.scene.frame_set(frame)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    head = np.array(evaluated.matrix_world @ evaluated.pose.bones[bone].head)
    bpy.context.scene.frame_set(PLAYHEAD)
    return float(np.linalg.norm(head - np.array(empty.matrix_world.translation)))


def one_reach(obj, local, folder, bone: str, *, clear: bool) -> dict:
    """One Reach Target (the add-on's find_reach and insert_reach), timed in parts, its hit error as Blender
    evaluates it; the result (strip, track, action) removed afterwards."""
    reach = load("addon.reach")
    if clear:
        reach._SPACES.clear()
    empty = place_empty(obj, local)
    began = time.perf_counter()
    found = reach.find_reach(obj, empty, effector="right.wrist", feature="highest", folder=folder)
    found_at = time.perf_counter()
    strip = reach.insert_reach(obj, found, PLAYHEAD)
    ended = time.perf_counter()
    seconds = {"read": found_at - began - found.seconds, "align+query": found.seconds, "write": ended - found_at,
               "total": ended - began}
    evaluated = evaluated_error(obj, empty, PLAYHEAD + int(found.reach.hit_frame), bone)
    track = next(t for t in obj.animation_data.nla_tracks if strip.name in t.strips)
    action = strip.action
    obj.animation_data.nla_tracks.remove(track)
    bpy.data.actions.remove(action)
    return {"seconds": seconds, "cached": found.cached, "error": found.error, "evaluated": evaluated,
            "examples": len(found.examples), "partial": bool(found.reach.partial)}


def query_alone(local) -> float:
    """The kept ReachSpace's query of ``local`` alone (no reading, no cache key), seconds."""
    space = next(reversed(load("addon.reach")._SPACES.values()))  # (the one just used)
    began = time.perf_counter()
    space.reach(local)
    return time.perf_counter() - began


def reach_rows(obj, name: str, folder, local_a, local_b, bone: str) -> tuple[list[tuple], float]:
    """The table's rows for one library, and the median of the kept space's query alone."""
    runs = {"first": [], "second": [], "naive": []}
    queries = []
    for _ in range(REPEAT):
        runs["first"].append(one_reach(obj, local_a, folder, bone, clear=True))
        runs["second"].append(one_reach(obj, local_b, folder, bone, clear=False))
        queries.append(query_alone(local_b))
        runs["naive"].append(one_reach(obj, local_b, folder, bone, clear=True))
    assert all(not r["cached"] for r in runs["first"] + runs["naive"]) and all(r["cached"] for r in runs["second"])
    rows = []
    for kind, done in runs.items():
        median = {part: statistics.median(r["seconds"][part] for r in done) for part in done[0]["seconds"]}
        rows.append((f"{name} ({done[0]['examples']})", kind, median, max(r["error"] for r in done),
                     max(r["evaluated"] for r in done), sum(r["partial"] for r in done)))
    return rows, statistics.median(queries)


def bench_reach() -> tuple[list[tuple], dict]:
    obj = build_reach_scene()
    local_a, local_b = targets(obj)
    skeleton, _ = load("addon.convert").armature_skeleton(obj)
    bone = load("core.rig").find_rig(skeleton).names["right.wrist"]
    listed, listed_query = reach_rows(obj, "listed", None, local_a, local_b, bone)
    folder, folder_query = reach_rows(obj, "folder", str(RAISES), local_a, local_b, bone)
    return listed + folder, {"listed": listed_query, "folder": folder_query}


# ---------------------------------------------------------------- Assemble Parts


def build_assembly_scene() -> bpy.types.Object:
    """The walk as the one (selected) strip of its armature, the other library clips as the file's actions."""
    bpy.ops.wm.read_homefile(use_empty=True)
    with quiet():
        obj = clips_on_one_armature((("walk_normal_001", 1, None),), tracks=1)
        for name in LIBRARY:
            if name != "walk_normal_001":
                import_action(name)
    bpy.context.view_layer.objects.active = obj
    return obj


def remove_result(obj, tracks_before: set) -> None:
    """The assembly's strip, its track when it made one, and its action: the file as before."""
    import json

    shown = json.loads(obj.smart_motion.assembly_json)
    for track in list(obj.animation_data.nla_tracks):
        if track.name not in tracks_before:
            obj.animation_data.nla_tracks.remove(track)
        elif shown["new_strip"] in track.strips:
            track.strips.remove(track.strips[shown["new_strip"]])
    bpy.data.actions.remove(bpy.data.actions[shown["action"]])


def bench_assembly() -> tuple[list[tuple], str]:
    import json

    obj = build_assembly_scene()
    convert, addon, clips = load("addon.convert"), SimpleNamespace(strips=load("addon.strips"), convert=load("addon.convert")), load("addon.clips")
    core_assemble = load("core.assemble")
    scene = bpy.context.scene
    strip = addon.strips.selected_strips(obj, bpy.context.view_layer.objects)[0]
    query = convert.strip_to_motion(obj, strip, convert.scene_fps(scene))
    library = {action.name: motion for action, motion in clips.file_actions(obj, {strip.action})}
    rig = addon.convert.find_armature_rig(obj, query)
    about = (f"query: strip 'walk' ({query.n_frames} frames); library: {len(library)} actions, "
             f"{sum(m.n_frames for m in library.values())} frames")
    rows = []
    for part in PARTS:
        scene.smart_motion.assembly_part = part
        operator, inner, alone, read, write = [], [], [], [], []
        assembly_module = load("addon.assemble")
        for _ in range(REPEAT):
            before = {t.name for t in obj.animation_data.nla_tracks}
            began = time.perf_counter()
            with quiet():
                assert bpy.ops.smart_motion.assemble_parts() == {'FINISHED'}
            operator.append(time.perf_counter() - began)
            shown = json.loads(obj.smart_motion.assembly_json)
            inner.append(shown["seconds"])
            remove_result(obj, before)
            began = time.perf_counter()  # (the operator's two steps, timed apart)
            found = assembly_module.find_assembly(obj, addon.strips.selected_strips(obj, bpy.context.view_layer.objects),
                                                  part)
            found_at = time.perf_counter()
            assembly_module.insert_assembly(obj, found)
            write.append(time.perf_counter() - found_at)
            read.append(found_at - began - found.seconds)
            remove_result(obj, before)
            began = time.perf_counter()
            assembly = core_assemble.assemble(query, {part: library}, rig=rig)
            alone.append(time.perf_counter() - began)
            match = assembly.matches[part]
            assert match.clip == shown["clip"] and shown["frames"][0] == 1 + int(match.start), "the same choice"
        rows.append((part, f"{shown['clip']} {shown['frames'][0]}-{shown['frames'][1]}",
                     *(statistics.median(t) for t in (operator, read, inner, write, alone))))
    return rows, about


# ---------------------------------------------------------------- the table


def main():
    with quiet():
        bake.load_extension()
    print(f"Blender {bpy.app.version_string}; before: {load_text()}")
    began = time.perf_counter()
    reach_rows_, queries = bench_reach()
    print(f"\nReach Target, right.wrist, highest; median of {REPEAT} runs (s); hit error: worst of the runs, as "
          "reported and as Blender evaluates it")
    print(f"{'examples':>13} {'target':>7} {'read':>7} {'align+query':>12} {'write':>7} {'total':>7} "
          f"{'reported':>10} {'evaluated':>10} {'partial':>8}")
    for name, kind, median, reported, evaluated, partial in reach_rows_:
        print(f"{name:>13} {kind:>7} {median['read']:7.3f} {median['align+query']:12.3f} {median['write']:7.3f} "
              f"{median['total']:7.3f} {reported * 1000:8.3f}mm {evaluated * 1000:8.3f}mm {partial:>6}/{REPEAT}")
    for name in ("listed", "folder"):
        by = {kind: median["total"] for n, kind, median, *_ in reach_rows_ if n.startswith(name)}
        print(f"  {name}: a second target takes {by['second']:.3f} s with the kept alignment, "
              f"{by['naive']:.3f} s aligning again ({by['naive'] / by['second']:.1f}x); the kept space's query "
              f"alone {queries[name]:.3f} s")
    assembly_rows, about = bench_assembly()
    print(f"\nAssemble Parts, {about}; median of {REPEAT} runs (s)")
    print(f"{'part':>6} {'chosen':>24} {'operator':>9} {'read':>7} {'core':>7} {'write':>7} {'core alone':>11} "
          f"{'overhead':>9}")
    for part, chosen, operator, read, inner, write, alone in assembly_rows:
        print(f"{part:>6} {chosen:>24} {operator:9.3f} {read:7.3f} {inner:7.3f} {write:7.3f} {alone:11.3f} "
              f"{operator - alone:9.3f}")
    print("  (operator: bpy.ops.smart_motion.assemble_parts; read, core, write: its find_assembly (reading the strip\n"
          "   and the actions, then core.assemble: AssemblyFound.seconds) and insert_assembly, timed apart;\n"
          "   core alone: core.assemble.assemble on the strip and actions converted beforehand; overhead: operator\n"
          "   less core alone)")
    print(f"\nwhole run {time.perf_counter() - began:.1f} s; after: {load_text()}")


if __name__ == "__main__":
    from common import require_capture

    require_capture("bandai2-raise")
    try:
        main()
    finally:
        # (Blender 4.5 as a module does not exit while the extension is registered: it waits on a lock)
        if "smart_motion" in sys.modules:
            sys.modules["smart_motion"].unregister()
