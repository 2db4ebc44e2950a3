"""Speed of forward kinematics and of the full motion analysis on 100,000 frames.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/analysis.py

The clip is a real walk from ../shared/mocap when present (else the embedded
demo walk), tiled to 100,000 frames on a 25-joint skeleton (the source rig plus
leaf joints). Each figure is printed next to the naive alternative measured in
the same run:
  FK:        joint-by-joint quaternion FK broadcasting over the last axis
             (the obvious vectorised version) versus ours on component planes;
  analysis:  the naive FK of the whole skeleton followed by the same contact
             and phase steps, versus ours (FK of the leg chains only, then
             contacts, phases, base foot and body orientation).
Target on a 2-core machine: under 0.3 s each (median of 5 runs).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common import timed  # noqa: E402  (tests/bench, next to this script)
from core import analysis, quat  # noqa: E402
from core.motion import Motion, Skeleton, forward_kinematics  # noqa: E402
from core.rig import find_rig  # noqa: E402

FRAMES = 100_000
JOINTS = 25


def source_clip() -> tuple[str, Motion]:
    mocap = ROOT.parent / "shared" / "mocap" / "bandai1" / "walk_normal_001.bvh"
    if mocap.exists():
        from core.bvh import read_bvh

        return mocap.name, read_bvh(mocap)
    from core.demo import demo_clips

    return "demo walk", demo_clips()["walk"].motion


def widen(motion: Motion, joints: int) -> Motion:
    """Append leaf joints (still, under the last joint) until the skeleton has ``joints``."""
    skel = motion.skeleton
    extra = joints - len(skel)
    if extra <= 0:
        return motion
    names = skel.names + tuple(f"leaf{i}" for i in range(extra))
    parents = np.r_[skel.parents, np.full(extra, len(skel) - 1)]
    offsets = np.r_[skel.offsets, np.tile([0.0, 5.0, 0.0], (extra, 1))]
    wide = Skeleton(names, parents, offsets, up=skel.up, unit=skel.unit)
    F = motion.n_frames
    rot = np.concatenate([motion.rotations, quat.identity((F, extra))], axis=1)
    pos = np.concatenate([motion.positions, np.broadcast_to(offsets[len(skel):], (F, extra, 3))], axis=1)
    return Motion(wide, rot, pos, motion.fps)


def tiled(motion: Motion, frames: int) -> Motion:
    reps = -(-frames // motion.n_frames)
    idx = np.tile(np.arange(motion.n_frames), reps)[:frames]
    return motion[idx]


def naive_fk(rotations, positions, parents):
    gpos = np.empty_like(positions)
    grot = np.empty_like(rotations)
    gpos[:, 0], grot[:, 0] = positions[:, 0], rotations[:, 0]
    for j in range(1, len(parents)):
        p = parents[j]
        gpos[:, j] = quat.mul_vec(grot[:, p], positions[:, j]) + gpos[:, p]
        grot[:, j] = quat.mul(grot[:, p], rotations[:, j])
    return gpos, grot


def naive_analysis(motion, rig):
    gpos, _ = naive_fk(motion.rotations, motion.positions, motion.skeleton.parents)
    contacts = analysis.foot_contacts(motion, rig, positions=gpos)
    return analysis.phase_segments(analysis.support_phases(contacts))


def main() -> None:
    name, clip = source_clip()
    wide = widen(clip, JOINTS)
    motion = tiled(wide, FRAMES)
    rig = find_rig(wide)
    print(f"{FRAMES} frames x {len(motion.skeleton)} joints, tiled from {name}")
    r, p, parents = motion.rotations, motion.positions, motion.skeleton.parents

    t_naive = timed(lambda: naive_fk(r, p, parents), repeat=3)
    t_fk = timed(lambda: forward_kinematics(r, p, parents))
    print(f"forward kinematics   ours {t_fk:6.3f} s   naive {t_naive:6.3f} s   ({t_naive / t_fk:4.1f}x)")

    t_naive = timed(lambda: naive_analysis(motion, rig), repeat=3)
    t_an = timed(lambda: analysis.analyze(motion, rig))
    print(f"full analysis        ours {t_an:6.3f} s   naive  {t_naive:6.3f} s   ({t_naive / t_an:4.1f}x)")
    print(f"target: under 0.3 s each -> FK {'met' if t_fk < 0.3 else 'NOT met'}, analysis {'met' if t_an < 0.3 else 'NOT met'}")


if __name__ == "__main__":
    main()
