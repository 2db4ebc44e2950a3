"""Clips made wrong the way exports make them wrong, for the tests of what the tools refuse
(a plain module: ``from broken_rigs import ...``)."""

from dataclasses import replace

import numpy as np

from core.motion import Motion
from core.rig import find_rig


def legs_flipped_up(motion: Motion) -> Motion:
    """``motion`` with every bone below the hips turned over, as an export that flips the legs
    leaves them: each joint's rest offset and per-frame translation below a hip negated, so that
    the legs point up along the spine, the rest of the body as it was."""
    skeleton = motion.skeleton
    rig = find_rig(motion)
    below = np.zeros(len(skeleton), dtype=bool)
    for side in "LR":
        below |= rig.subtree_mask(skeleton, rig.leg(side).hip)
        below[rig.leg(side).hip] = False  # (the hip hangs from the pelvis where it did)
    sign = np.where(below, -1.0, 1.0)[:, None]
    flipped = replace(skeleton, offsets=skeleton.offsets * sign,
                      end_sites={j: -v if below[j] else v for j, v in skeleton.end_sites.items()})
    return Motion(flipped, motion.rotations, motion.positions * sign, motion.fps)
