"""Rig mapping: every role found across naming schemes, from names or from the
hierarchy and pose alone; overrides; errors that say what to map; up axis and
body size."""

from pathlib import Path

import numpy as np
import pytest
from real_capture import MOCAP, require

from core import quat
from core.motion import Motion, Skeleton
from core.rig import (ROLE_KEYS, Arm, Leg, RigError, body_height, check_legs_hang, detect_up, find_rig, leg_hang,
                      leg_length, legs_above_pelvis, parse_name)
from broken_rigs import legs_flipped_up
from rig_names import CMU_NAMES

BANDAI = MOCAP / "bandai1" / "walk_normal_001.bvh"


# --- hand-built skeletons ------------------------------------------------------------
#
# One humanoid, Y up, centimetres, facing +Z, so its left side is +X. A scheme
# names its joints by role; "L.x" keys are mirrored to "R.x" by `mirror`.
# Optional keys add the structure some schemes have: a root joint above the
# pelvis, CMU's zero-length LHipJoint, Rigify's .001 segments, leaf "_End"
# joints, and extra joints hung from named parents.

def mirror(left: dict) -> dict:
    out = dict(left)
    for key, value in left.items():
        if key.startswith("L."):
            out["R." + key[2:]] = value("R") if callable(value) else value
            out[key] = value("L") if callable(value) else value
    return out


def humanoid(scheme: dict, *, knee_bend: float = 0.0, legs_first: bool = False, right_first: bool = False):
    """(Skeleton, expected {role key: joint name}) of a scheme."""
    entries = []  # (name, parent name, offset)

    def add(name, parent, offset):
        entries.append((name, parent, np.asarray(offset, dtype=float)))
        return name

    root = scheme.get("root")
    if root:
        add(root, None, (0, 0, 0))
    pelvis = add(scheme["pelvis"], root, (0, 94, 0))

    def upper():
        spine = scheme["spine"]
        top = pelvis
        for name in spine:
            top = add(name, top, (0, 25 / len(spine), 0))
        neck_top = top
        for name in scheme.get("neck", ()):
            neck_top = add(name, neck_top, (0, 20 / len(scheme["neck"]), 0))
        head = add(scheme["head"], neck_top, (0, 10, 0))
        if scheme.get("head_end"):
            add(scheme["head_end"], head, (0, 10, 0))
        for side in sides:
            if f"{side}.wrist" not in scheme:
                continue
            sx = 1.0 if side == "L" else -1.0
            j = top
            if scheme.get(f"{side}.clavicle"):
                j = add(scheme[f"{side}.clavicle"], j, (sx * 5, 15, 0))
                j = add(scheme[f"{side}.shoulder"], j, (sx * 12, 0, 0))
            else:
                j = add(scheme[f"{side}.shoulder"], j, (sx * 17, 15, 0))
            for role, length in (("shoulder", 28), ("elbow", 25)):
                seg = scheme.get(f"{side}.{role}_segment")
                if seg:
                    j = add(seg, j, (sx * length / 2, 0, 0))
                    length = length / 2
                j = add(scheme[f"{side}.{'elbow' if role == 'shoulder' else 'wrist'}"], j, (sx * length, 0, 0))

    def legs():
        for side in sides:
            sx = 1.0 if side == "L" else -1.0
            j = pelvis
            if scheme.get(f"{side}.hip_joint"):
                j = add(scheme[f"{side}.hip_joint"], j, (0, 0, 0))
            j = add(scheme[f"{side}.hip"], j, (sx * 9, -6, 0))
            for role, nxt, offset in (("hip", "knee", (0, -42, knee_bend)), ("knee", "ankle", (0, -40, -knee_bend))):
                seg = scheme.get(f"{side}.{role}_segment")
                if seg:
                    j = add(seg, j, np.multiply(offset, 0.5))
                    offset = np.multiply(offset, 0.5)
                j = add(scheme[f"{side}.{nxt}"], j, offset)
            if scheme.get(f"{side}.toe"):
                j = add(scheme[f"{side}.toe"], j, (0, -6, 12))
                if scheme.get(f"{side}.toe_end"):
                    add(scheme[f"{side}.toe_end"], j, (0, 0, 5))

    sides = ("R", "L") if right_first else ("L", "R")
    for part in (legs, upper) if legs_first else (upper, legs):
        part()
    for name, parent, offset in scheme.get("extras", ()):
        add(name, parent, offset)

    names = [e[0] for e in entries]
    parents = [-1 if e[1] is None else names.index(e[1]) for e in entries]
    end_sites = {names.index(n): (0, 0, 5) for n in names if parents.count(names.index(n)) == 0}
    skeleton = Skeleton(tuple(names), parents, np.array([e[2] for e in entries]), end_sites=end_sites)

    expected = {
        "pelvis": scheme["pelvis"],
        "spine": tuple(scheme["spine"]),
        "chest": scheme["spine"][-1],
        "neck": scheme.get("neck", (None,))[0],
        "head": scheme["head"],
    }
    for side, word in (("L", "left"), ("R", "right")):
        for role in ("hip", "knee", "ankle", "toe", "clavicle", "shoulder", "elbow", "wrist"):
            expected[f"{word}.{role}"] = scheme.get(f"{side}.{role}") or None
    return skeleton, expected


def lr(left: str, right: str):
    return lambda side: left if side == "L" else right


DATASET = mirror({
    "root": "joint_Root", "pelvis": "Hips", "spine": ["Spine", "Chest"], "neck": ["Neck"], "head": "Head",
    "L.clavicle": lr("Shoulder_L", "Shoulder_R"), "L.shoulder": lr("UpperArm_L", "UpperArm_R"),
    "L.elbow": lr("LowerArm_L", "LowerArm_R"), "L.wrist": lr("Hand_L", "Hand_R"),
    "L.hip": lr("UpperLeg_L", "UpperLeg_R"), "L.knee": lr("LowerLeg_L", "LowerLeg_R"),
    "L.ankle": lr("Foot_L", "Foot_R"), "L.toe": lr("Toes_L", "Toes_R"),
})


def cmu_side(side):
    return "Left" if side == "L" else "Right"


CMU = mirror({
    "pelvis": "Hips", "spine": ["LowerBack", "Spine", "Spine1"], "neck": ["Neck", "Neck1"], "head": "Head",
    "L.clavicle": lambda s: cmu_side(s) + "Shoulder", "L.shoulder": lambda s: cmu_side(s) + "Arm",
    "L.elbow": lambda s: cmu_side(s) + "ForeArm", "L.wrist": lambda s: cmu_side(s) + "Hand",
    "L.hip_joint": lambda s: s + "HipJoint", "L.hip": lambda s: cmu_side(s) + "UpLeg",
    "L.knee": lambda s: cmu_side(s) + "Leg", "L.ankle": lambda s: cmu_side(s) + "Foot",
    "L.toe": lambda s: cmu_side(s) + "ToeBase",
    "extras": [
        ("LeftFingerBase", "LeftHand", (6, 0, 0)), ("LeftHandIndex1", "LeftFingerBase", (3, 0, 0)),
        ("LThumb", "LeftHand", (3, 0, 3)), ("RightFingerBase", "RightHand", (-6, 0, 0)),
        ("RightHandIndex1", "RightFingerBase", (-3, 0, 0)), ("RThumb", "RightHand", (-3, 0, 3)),
    ],
})

CMU_HIP_KNEE = mirror({
    "pelvis": "Hips", "spine": ["Spine", "Spine1"], "neck": ["Neck"], "head": "Head",
    "L.shoulder": lambda s: cmu_side(s) + "Shoulder", "L.elbow": lambda s: cmu_side(s) + "Elbow",
    "L.wrist": lambda s: cmu_side(s) + "Wrist",
    "L.hip": lambda s: cmu_side(s) + "Hip", "L.knee": lambda s: cmu_side(s) + "Knee",
    "L.ankle": lambda s: cmu_side(s) + "Ankle", "L.toe": lambda s: cmu_side(s) + "Toe",
})


def mixamo(prefix):
    scheme = {k: v for k, v in CMU.items() if not k.endswith("hip_joint") and k != "extras"}
    scheme.update(spine=["Spine", "Spine1", "Spine2"], neck=["Neck"], head_end="HeadTop_End",
                  **{"L.toe_end": "LeftToe_End", "R.toe_end": "RightToe_End"},
                  extras=[("LeftHandIndex1", "LeftHand", (3, 0, 0)), ("RightHandIndex1", "RightHand", (-3, 0, 0))])
    out = {}
    for key, value in scheme.items():
        if isinstance(value, str):
            out[key] = prefix + value
        elif isinstance(value, list) and value and isinstance(value[0], str):
            out[key] = [prefix + v for v in value]
        elif key == "extras":
            out[key] = [(prefix + n, prefix + p, o) for n, p, o in value]
        else:
            out[key] = value
    return out


def dotted(side):
    return "." + side


RIGIFY = mirror({
    "pelvis": "DEF-spine", "spine": ["DEF-spine.001", "DEF-spine.002", "DEF-spine.003"],
    "neck": ["DEF-spine.004", "DEF-spine.005"], "head": "DEF-spine.006",
    "L.clavicle": lambda s: "DEF-shoulder" + dotted(s), "L.shoulder": lambda s: "DEF-upper_arm" + dotted(s),
    "L.shoulder_segment": lambda s: "DEF-upper_arm" + dotted(s) + ".001",
    "L.elbow": lambda s: "DEF-forearm" + dotted(s), "L.elbow_segment": lambda s: "DEF-forearm" + dotted(s) + ".001",
    "L.wrist": lambda s: "DEF-hand" + dotted(s),
    "L.hip": lambda s: "DEF-thigh" + dotted(s), "L.hip_segment": lambda s: "DEF-thigh" + dotted(s) + ".001",
    "L.knee": lambda s: "DEF-shin" + dotted(s), "L.knee_segment": lambda s: "DEF-shin" + dotted(s) + ".001",
    "L.ankle": lambda s: "DEF-foot" + dotted(s), "L.toe": lambda s: "DEF-toe" + dotted(s),
    "extras": [
        ("DEF-pelvis.L", "DEF-spine", (5, 0, 5)), ("DEF-pelvis.R", "DEF-spine", (-5, 0, 5)),
        ("DEF-breast.L", "DEF-spine.003", (8, 0, 8)), ("DEF-breast.R", "DEF-spine.003", (-8, 0, 8)),
    ],
})


def unreal_side(stem):
    return lambda s: f"{stem}_{s.lower()}"


UNREAL = mirror({
    "root": "root", "pelvis": "pelvis", "spine": ["spine_01", "spine_02", "spine_03"], "neck": ["neck_01"],
    "head": "head",
    "L.clavicle": unreal_side("clavicle"), "L.shoulder": unreal_side("upperarm"),
    "L.elbow": unreal_side("lowerarm"), "L.wrist": unreal_side("hand"),
    "L.hip": unreal_side("thigh"), "L.knee": unreal_side("calf"), "L.ankle": unreal_side("foot"),
    "L.toe": unreal_side("ball"),
    "extras": [
        ("upperarm_twist_01_l", "upperarm_l", (14, 0, 0)), ("upperarm_twist_01_r", "upperarm_r", (-14, 0, 0)),
        ("thigh_twist_01_l", "thigh_l", (0, -21, 0)), ("thigh_twist_01_r", "thigh_r", (0, -21, 0)),
        ("calf_twist_01_l", "calf_l", (0, -20, 0)), ("calf_twist_01_r", "calf_r", (0, -20, 0)),
        ("ik_foot_root", "root", (0, 0, 0)), ("ik_foot_l", "ik_foot_root", (9, 6, 0)),
        ("ik_foot_r", "ik_foot_root", (-9, 6, 0)), ("ik_hand_root", "root", (0, 0, 0)),
        ("ik_hand_gun", "ik_hand_root", (-70, 140, 0)), ("ik_hand_l", "ik_hand_gun", (140, 0, 0)),
        ("ik_hand_r", "ik_hand_gun", (0, 0, 0)),
    ],
})

BLENDER_DOTS = mirror({
    "pelvis": "hips", "spine": ["spine", "chest"], "neck": ["neck"], "head": "head",
    "L.clavicle": lambda s: "shoulder." + s, "L.shoulder": lambda s: "upper_arm." + s,
    "L.elbow": lambda s: "forearm." + s, "L.wrist": lambda s: "hand." + s,
    "L.hip": lambda s: "thigh." + s, "L.knee": lambda s: "shin." + s, "L.ankle": lambda s: "foot." + s,
    "L.toe": lambda s: "toe." + s,
})

UNDERSCORE_LOWER = mirror({
    "pelvis": "Pelvis", "spine": ["Spine", "Chest"], "neck": ["Neck"], "head": "Head",
    "L.clavicle": unreal_side("clavicle"), "L.shoulder": unreal_side("upper_arm"),
    "L.elbow": unreal_side("forearm"), "L.wrist": unreal_side("wrist"),
    "L.hip": unreal_side("thigh"), "L.knee": unreal_side("knee"), "L.ankle": unreal_side("ankle"),
    "L.toe": unreal_side("toe"),
})

PREFIX_UPPER = mirror({
    "root": "Root", "pelvis": "Pelvis", "spine": ["Spine1", "Spine2"], "neck": ["Neck"], "head": "Head",
    "L.clavicle": lambda s: s + "_Clavicle", "L.shoulder": lambda s: s + "_UpperArm",
    "L.elbow": lambda s: s + "_Elbow", "L.wrist": lambda s: s + "_Wrist",
    "L.hip": lambda s: s + "_Hip", "L.knee": lambda s: s + "_Knee", "L.ankle": lambda s: s + "_Ankle",
    "L.toe": lambda s: s + "_Toe",
})

LOWER_WORDS = mirror({
    "pelvis": "hips", "spine": ["spine", "chest"], "neck": ["neck"], "head": "head",
    "L.clavicle": lambda s: ("left" if s == "L" else "right") + "Collar",
    "L.shoulder": lambda s: ("left" if s == "L" else "right") + "_upper_arm",
    "L.elbow": lambda s: "forearm_" + ("left" if s == "L" else "right"),
    "L.wrist": lambda s: ("left" if s == "L" else "right") + "hand",
    "L.hip": lambda s: ("left" if s == "L" else "right") + "upleg",
    "L.knee": lambda s: ("left" if s == "L" else "right") + "leg",
    "L.ankle": lambda s: "foot" + ("left" if s == "L" else "right"),
    "L.toe": None,
})

SMPL = mirror({
    "pelvis": "pelvis", "spine": ["spine1", "spine2", "spine3"], "neck": ["neck"], "head": "head",
    "L.clavicle": lambda s: ("left" if s == "L" else "right") + "_collar",
    "L.shoulder": lambda s: ("left" if s == "L" else "right") + "_shoulder",
    "L.elbow": lambda s: ("left" if s == "L" else "right") + "_elbow",
    "L.wrist": lambda s: ("left" if s == "L" else "right") + "_wrist",
    "L.hip": lambda s: ("left" if s == "L" else "right") + "_hip",
    "L.knee": lambda s: ("left" if s == "L" else "right") + "_knee",
    "L.ankle": lambda s: ("left" if s == "L" else "right") + "_ankle",
    "L.toe": lambda s: ("left" if s == "L" else "right") + "_foot",
    "extras": [("left_hand", "left_wrist", (8, 0, 0)), ("right_hand", "right_wrist", (-8, 0, 0))],
})

SCHEMES = {
    "dataset": DATASET, "cmu": CMU, "cmu_hip_knee": CMU_HIP_KNEE, "mixamo": mixamo("mixamorig:"),
    "mixamo1": mixamo("mixamorig1:"), "rigify": RIGIFY, "unreal": UNREAL, "dots": BLENDER_DOTS,
    "underscore_lower": UNDERSCORE_LOWER, "prefix_upper": PREFIX_UPPER, "lower_words": LOWER_WORDS,
    "smpl": SMPL,
}


def anonymous(skeleton: Skeleton) -> Skeleton:
    return skeleton.renamed([f"j{i}" for i in range(len(skeleton))])


def rotated(skeleton: Skeleton, q) -> Skeleton:
    """The same skeleton with every rest offset turned by ``q`` (a rest pose in another up axis)."""
    return Skeleton(
        skeleton.names, skeleton.parents, quat.mul_vec(q, skeleton.offsets),
        end_sites={j: quat.mul_vec(q, v) for j, v in skeleton.end_sites.items()},
    )


def still(skeleton: Skeleton, frames: int = 4) -> Motion:
    """A motion holding the rest pose."""
    return Motion.from_root(skeleton, quat.identity((frames, len(skeleton))), np.zeros((frames, 3)), 30.0)


Y_TO_Z = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)


def read_hierarchy(path: Path) -> Skeleton:
    """Joint names, parents and offsets of a BVH file's HIERARCHY (no frames), so
    that these tests do not depend on the BVH reader."""
    names, parents, offsets, end_sites, stack = [], [], [], {}, []
    in_end = False
    for line in path.read_text().splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "MOTION":
            break
        if words[0] in ("ROOT", "JOINT"):
            names.append(words[1])
            parents.append(stack[-1] if stack else -1)
        elif words[0] == "End":
            in_end = True
        elif words[0] == "{":
            stack.append(-2 if in_end else len(names) - 1)
        elif words[0] == "}":
            stack.pop()
            in_end = False
        elif words[0] == "OFFSET":
            value = [float(w) for w in words[1:4]]
            if in_end:
                end_sites[stack[-1]] = value
            else:
                offsets.append(value)
    return Skeleton(tuple(names), parents, np.array(offsets), end_sites=end_sites)


# --- names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, side, stem",
    [
        ("mixamorig1:LeftUpLeg", "L", "upleg"),
        ("mixamorig:RightForeArm", "R", "forearm"),
        ("DEF-upper_arm.L", "L", "upperarm"),
        ("DEF-thigh.R.001", "R", "thigh"),
        ("UpperArm_R", "R", "upperarm"),
        ("UpperArm_L", "L", "upperarm"),
        ("thigh_l", "L", "thigh"),
        ("L_Knee", "L", "knee"),
        ("LHipJoint", "L", "hipjoint"),
        ("leftfoot", "L", "foot"),
        ("handright", "R", "hand"),
        ("Bip01 R Calf", "R", "calf"),
        ("spine_01", None, "spine"),
        ("Hips", None, "hips"),
    ],
)
def test_names_reduce_to_side_and_stem(name, side, stem):
    parsed = parse_name(name)
    assert (parsed.side, parsed.stem) == (side, stem)


def test_rigify_segments_and_helper_joints_are_marked():
    assert parse_name("DEF-shin.L.001").segment == 1
    assert parse_name("DEF-shin.L").segment == 0
    for helper in ("thigh_twist_01_l", "mixamorig:LeftToe_End", "HeadTop_End", "ik_foot_l", "LeftHandIndex1"):
        assert parse_name(helper).excluded, helper


# --- every scheme --------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_every_role_resolves_by_name(scheme):
    skeleton, expected = humanoid(SCHEMES[scheme])
    rig = find_rig(skeleton)
    assert rig.method == "names"
    assert rig.names == expected


@pytest.mark.parametrize("scheme", ["dataset", "cmu", "unreal", "dots"])
def test_names_win_over_a_rest_pose_that_disagrees(scheme):
    # the same skeleton with its rest pose mirrored left/right: the names still decide
    skeleton, expected = humanoid(SCHEMES[scheme])
    flipped = Skeleton(skeleton.names, skeleton.parents, skeleton.offsets * [-1, 1, 1])
    assert find_rig(flipped).names == expected


def test_dataset_pelvis_is_hips_not_the_root_at_the_origin():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton)
    assert skeleton.names[rig.pelvis] == "Hips"
    assert skeleton.names[0] == "joint_Root"


def test_cmu_shoulder_is_the_clavicle_and_leg_is_the_knee():
    skeleton, _ = humanoid(CMU)
    names = find_rig(skeleton).names
    assert names["left.clavicle"] == "LeftShoulder" and names["left.shoulder"] == "LeftArm"
    assert names["left.hip"] == "LeftUpLeg" and names["left.knee"] == "LeftLeg"
    assert names["neck"] == "Neck"  # not Neck1


def test_rigify_limbs_use_the_first_segment():
    skeleton, _ = humanoid(RIGIFY)
    names = find_rig(skeleton).names
    assert names["left.hip"] == "DEF-thigh.L" and names["left.knee"] == "DEF-shin.L"
    assert names["right.shoulder"] == "DEF-upper_arm.R" and names["right.elbow"] == "DEF-forearm.R"


def test_the_real_dataset_skeleton():
    skeleton = read_hierarchy(require(BANDAI))
    rig = find_rig(skeleton)
    expected = {
        "pelvis": "Hips", "spine": ("Spine", "Chest"), "chest": "Chest", "neck": "Neck", "head": "Head",
        "left.hip": "UpperLeg_L", "left.knee": "LowerLeg_L", "left.ankle": "Foot_L", "left.toe": "Toes_L",
        "left.clavicle": "Shoulder_L", "left.shoulder": "UpperArm_L", "left.elbow": "LowerArm_L",
        "left.wrist": "Hand_L",
    }
    expected.update({k.replace("left.", "right."): v.replace("_L", "_R") for k, v in expected.items()
                     if k.startswith("left.")})
    assert rig.names == expected


def test_a_rig_with_legs_only():
    scheme = {k: v for k, v in DATASET.items() if not k.endswith((".clavicle", ".shoulder", ".elbow", ".wrist"))}
    skeleton, _ = humanoid(scheme)
    legs_only = [n for n in skeleton.names
                 if n in ("joint_Root", "Hips") or n.startswith(("UpperLeg", "LowerLeg", "Foot", "Toes"))]
    keep = [skeleton.index(n) for n in legs_only]
    parents = [-1] + [keep.index(skeleton.parents[j]) for j in keep[1:]]
    skeleton = Skeleton(tuple(legs_only), parents, skeleton.offsets[keep])
    for skel in (skeleton, anonymous(skeleton)):
        rig = find_rig(skel)
        assert rig.arm("L") is None and rig.arm("R") is None
        assert rig.head is None and rig.spine == () and rig.chest is None
        assert skel.names[rig.pelvis] in ("Hips", "j1")
        assert not rig.upper_body_mask(skel).any()
        assert body_height(skel, rig) == pytest.approx(82.0)


def test_the_real_dataset_motion_anonymous_too():
    bvh = pytest.importorskip("core.bvh")
    if not hasattr(bvh, "read_bvh"):
        pytest.skip("core.bvh has no read_bvh")
    motion = bvh.read_bvh(require(BANDAI))
    rig = find_rig(motion)
    assert rig.names["left.ankle"] == "Foot_L" and rig.names["pelvis"] == "Hips"
    bare = motion.renamed([f"j{i}" for i in range(len(motion.skeleton))])
    assert find_rig(bare).roles == rig.roles
    np.testing.assert_array_equal(detect_up(motion, rig), [0, 1, 0])


# --- topology and pose ------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["dataset", "cmu", "unreal", "dots"])
@pytest.mark.parametrize("pose", ["y_up", "z_up"])
def test_anonymous_joints_are_found_from_topology_and_rest_pose(scheme, pose):
    skeleton, _ = humanoid(SCHEMES[scheme])
    named = find_rig(skeleton)
    bare = anonymous(skeleton)
    if pose == "z_up":
        bare = rotated(bare, Y_TO_Z)
    rig = find_rig(bare)
    assert rig.method == "topology"
    assert rig.roles == named.roles


@pytest.mark.parametrize("legs_first", [False, True])
@pytest.mark.parametrize("right_first", [False, True])
def test_sides_come_from_geometry_not_from_joint_order(legs_first, right_first):
    # facing +Z with Y up the left side is +X, whichever order the file lists the limbs in
    skeleton, expected = humanoid(DATASET, legs_first=legs_first, right_first=right_first)
    rig = find_rig(anonymous(skeleton))
    by_name = {key: skeleton.names.index(v) if isinstance(v, str) else v for key, v in expected.items()}
    by_name["spine"] = tuple(skeleton.names.index(v) for v in expected["spine"])
    assert rig.roles == by_name


def test_without_toes_the_knee_bend_tells_forward():
    scheme = {k: v for k, v in DATASET.items() if not k.endswith(".toe")}
    skeleton, _ = humanoid(scheme, knee_bend=4.0, right_first=True)
    named = find_rig(skeleton)
    assert named.toes == (None, None)
    assert find_rig(anonymous(skeleton)).roles == named.roles


def scrambled(skeleton: Skeleton, seed: int = 0) -> Motion:
    """A motion standing in ``skeleton``'s rest pose on a skeleton whose rest
    pose is not: every joint gets a random bind orientation, so each rest
    offset points its own way (as in the dataset's files, where the rest pose
    lies along X)."""
    rng = np.random.default_rng(seed)
    upright = skeleton.rest_positions()
    world = quat.normalize(rng.normal(size=(len(skeleton), 4)))
    parents = skeleton.parents
    offsets = np.zeros_like(upright)
    local = world.copy()
    offsets[0] = upright[0]
    offsets[1:] = quat.inv_mul_vec(world[parents[1:]], upright[1:] - upright[parents[1:]])
    local[1:] = quat.inv_mul(world[parents[1:]], world[1:])
    bare = Skeleton(skeleton.names, parents, offsets)
    motion = Motion.from_root(bare, np.broadcast_to(local, (3,) + local.shape), np.tile(offsets[0], (3, 1)), 30.0)
    np.testing.assert_allclose(motion.global_positions()[0], upright, atol=1e-9)
    return motion


@pytest.mark.parametrize("scheme", ["dataset", "cmu"])
def test_a_motion_stands_in_for_a_rest_pose_that_is_not_standing(scheme):
    skeleton, _ = humanoid(SCHEMES[scheme], right_first=True)
    named = find_rig(skeleton)
    from_rest = []
    for seed in range(8):
        motion = scrambled(anonymous(skeleton), seed)
        assert find_rig(motion).roles == named.roles
        try:
            from_rest.append(find_rig(motion.skeleton).roles == named.roles)
        except RigError:
            from_rest.append(False)
    assert not all(from_rest)  # the scrambled rest pose alone cannot tell left from right


def test_explicit_up_is_accepted():
    skeleton, _ = humanoid(DATASET)
    named = find_rig(skeleton)
    assert find_rig(anonymous(rotated(skeleton, Y_TO_Z)), up=[0, 0, 1]).roles == named.roles


# --- overrides ---------------------------------------------------------------------------------


def test_overrides_replace_single_roles():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton, overrides={"head": "Neck", "left.toe": None, "R.ankle": "Foot_R"})
    assert rig.names["head"] == "Neck" and rig.names["neck"] is None
    assert rig.toes == (None, skeleton.index("Toes_R"))


def test_overrides_name_every_role_of_an_anonymous_skeleton():
    skeleton, expected = humanoid(DATASET)
    bare = anonymous(skeleton)
    overrides = {key: (f"j{skeleton.index(v)}" if isinstance(v, str) else
                       ",".join(f"j{skeleton.index(n)}" for n in v))
                 for key, v in expected.items()
                 if key in ("pelvis", "spine", "head") or key.endswith((".hip", ".knee", ".ankle"))}
    rig = find_rig(bare, overrides=overrides)
    assert rig.method == "names"
    assert rig.roles == find_rig(skeleton).roles


def test_spine_override_takes_a_list_or_a_comma_separated_string():
    skeleton, _ = humanoid(CMU)
    a = find_rig(skeleton, overrides={"spine": "Spine, Spine1"})
    b = find_rig(skeleton, overrides={"spine": ["Spine", "Spine1"]})
    assert a.names["spine"] == b.names["spine"] == ("Spine", "Spine1")
    assert a.names["chest"] == "Spine1"


def test_override_forgives_a_missing_prefix():
    skeleton, _ = humanoid(mixamo("mixamorig:"))
    rig = find_rig(skeleton, overrides={"left.ankle": "LeftFoot"})
    assert rig.names["left.ankle"] == "mixamorig:LeftFoot"


def test_override_naming_a_missing_joint_lists_the_joints():
    skeleton, _ = humanoid(DATASET)
    with pytest.raises(RigError) as err:
        find_rig(skeleton, overrides={"left.ankle": "LeftFoot"})
    message = str(err.value)
    assert "'LeftFoot'" in message and "left.ankle" in message
    assert "Foot_L" in message and "UpperLeg_R" in message


def test_short_side_keys_are_accepted():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton, overrides={"l.toe": "", "Right.Toe": "none"})
    assert rig.toes == (None, None)


def test_overriding_part_of_an_arm_that_cannot_be_found_asks_for_the_rest():
    scheme = {k: v for k, v in DATASET.items() if not k.endswith((".clavicle", ".shoulder", ".elbow", ".wrist"))}
    skeleton, _ = humanoid(scheme)
    with pytest.raises(RigError, match="left.elbow"):
        find_rig(skeleton, overrides={"left.shoulder": "Chest"})


def test_required_roles_cannot_be_emptied():
    skeleton, _ = humanoid(DATASET)
    with pytest.raises(RigError, match="required"):
        find_rig(skeleton, overrides={"left.knee": None})


def test_unknown_role_key_lists_the_keys():
    skeleton, _ = humanoid(DATASET)
    with pytest.raises(RigError, match="left.ankle"):
        find_rig(skeleton, overrides={"left.foot": "Foot_L"})


def test_overrides_that_break_the_hierarchy_are_refused():
    skeleton, _ = humanoid(DATASET)
    with pytest.raises(RigError, match="not below"):
        find_rig(skeleton, overrides={"left.toe": "Hand_L"})


# --- errors --------------------------------------------------------------------------------


def test_a_single_chain_has_no_legs_and_the_error_says_what_was_found():
    names = ("Hips", "Spine", "Neck", "Head")
    skeleton = Skeleton(names, [-1, 0, 1, 2], [[0, 90, 0], [0, 20, 0], [0, 30, 0], [0, 10, 0]])
    with pytest.raises(RigError) as err:
        find_rig(skeleton)
    message = str(err.value)
    assert isinstance(err.value, ValueError)
    assert "pelvis='Hips'" in message and "head='Head'" in message
    assert "missing left.hip" in message
    for key in ("left.hip", "left.knee", "left.ankle", "right.hip", "right.knee", "right.ankle"):
        assert key in message
    assert "Spine" in message


def test_a_rig_with_one_named_leg_and_no_second_leg_is_refused():
    names = ("Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "Spine")
    skeleton = Skeleton(names, [-1, 0, 1, 2, 0], [[0, 90, 0], [9, -5, 0], [0, -40, 0], [0, -40, 0], [0, 20, 0]])
    with pytest.raises(RigError) as err:
        find_rig(skeleton)
    message = str(err.value)
    assert "left.hip='LeftUpLeg'" in message and "right.hip" in message


# --- the rig's helpers ------------------------------------------------------------------------


def test_limb_helpers():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton)
    index = skeleton.index
    assert rig.leg("L") == Leg(index("UpperLeg_L"), index("LowerLeg_L"), index("Foot_L"), index("Toes_L"))
    assert rig.leg("right") == rig.right_leg
    assert rig.arm("R") == Arm(index("Shoulder_R"), index("UpperArm_R"), index("LowerArm_R"), index("Hand_R"))
    assert rig.feet == (index("Foot_L"), index("Foot_R"))
    assert rig.toes == (index("Toes_L"), index("Toes_R"))
    assert rig.leg("L").joints == (index("UpperLeg_L"), index("LowerLeg_L"), index("Foot_L"), index("Toes_L"))
    assert set(rig.roles) == set(ROLE_KEYS)
    assert "left.ankle" in str(rig) and "Foot_L" in str(rig)
    with pytest.raises(ValueError):
        rig.leg("middle")
    with pytest.raises(AttributeError):
        rig.pelvis = 0  # frozen


def test_body_masks_split_the_skeleton():
    skeleton, _ = humanoid(CMU)
    rig = find_rig(skeleton)
    lower, upper = rig.lower_body_mask(skeleton), rig.upper_body_mask(skeleton)
    assert lower.shape == upper.shape == (len(skeleton),)
    assert not np.any(lower & upper) and np.all(lower | upper)
    names = np.array(skeleton.names)
    assert set(names[lower]) == {
        "Hips", "LHipJoint", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
        "RHipJoint", "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase",
    }
    assert {"LowerBack", "Spine1", "Neck1", "Head", "LeftHand", "LThumb", "RightHandIndex1"} <= set(names[upper])


def test_root_above_the_pelvis_counts_as_lower_body():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton)
    assert rig.lower_body_mask(skeleton)[skeleton.index("joint_Root")]


def test_masks_refuse_another_skeleton():
    skeleton, _ = humanoid(DATASET)
    other, _ = humanoid(CMU)
    with pytest.raises(ValueError, match="joints"):
        find_rig(skeleton).lower_body_mask(other)


# --- up axis and body size -----------------------------------------------------------------


def test_detect_up_of_a_y_up_motion_and_its_rotated_copies():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton)
    motion = still(skeleton)
    np.testing.assert_array_equal(detect_up(motion, rig), [0, 1, 0])
    np.testing.assert_array_equal(detect_up(motion.transformed(Y_TO_Z), rig), [0, 0, 1])
    np.testing.assert_array_equal(detect_up(motion.transformed(quat.inv(Y_TO_Z)), rig), [0, 0, -1])


def test_detect_up_of_a_z_up_rest_pose():
    skeleton, _ = humanoid(UNREAL)
    z_up = rotated(skeleton, Y_TO_Z)
    np.testing.assert_array_equal(detect_up(still(z_up), find_rig(z_up)), [0, 0, 1])


def test_detect_up_tolerates_a_leaning_body():
    skeleton, _ = humanoid(DATASET)
    lean = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.radians(40))
    motion = still(skeleton).transformed(lean)
    np.testing.assert_array_equal(detect_up(motion, find_rig(skeleton)), [0, 1, 0])


def test_leg_length_and_body_height():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton)
    assert leg_length(skeleton, rig, "L") == pytest.approx(82.0)
    assert leg_length(skeleton, rig, "R") == pytest.approx(82.0)
    # legs 82 + trunk: Spine 12.5 + Chest 12.5 + Neck 20 + Head 10
    assert body_height(still(skeleton), rig) == pytest.approx(82.0 + 55.0)


def test_leg_length_counts_twist_segments_once():
    skeleton, _ = humanoid(RIGIFY)
    assert leg_length(skeleton, find_rig(skeleton), "L") == pytest.approx(82.0)


def test_body_height_is_in_the_motions_own_unit():
    skeleton, _ = humanoid(DATASET)
    rig = find_rig(skeleton)
    motion = still(skeleton)
    assert body_height(motion.scaled(0.01), rig) == pytest.approx(0.01 * body_height(motion, rig))


def test_real_dataset_body_height():
    skeleton = read_hierarchy(require(BANDAI))
    rig = find_rig(skeleton)
    legs = 39.0811 + 40.9854
    trunk = 15.7357 + np.hypot(8.98455, 0.406207) + 16.3773 + 6.45672
    assert leg_length(skeleton, rig, "L") == pytest.approx(legs, rel=1e-5)
    assert body_height(skeleton, rig) == pytest.approx(legs + trunk, rel=1e-5)


def without(motion: Motion, dropped: set[str]) -> Motion:
    """``motion`` with the named joints and everything below them deleted (as a user deletes bones)."""
    skel = motion.skeleton
    keep = [j for j in range(len(skel)) if not any(
        a in dropped for a in (skel.names[k] for k in _chain_to_root(skel.parents, j)))]
    index = {old: new for new, old in enumerate(keep)}
    parents = [index[skel.parents[j]] if skel.parents[j] >= 0 else -1 for j in keep]
    small = Skeleton(tuple(skel.names[j] for j in keep), parents, skel.offsets[keep], up=skel.up, unit=skel.unit)
    return Motion(small, motion.rotations[:, keep], motion.positions[:, keep], motion.fps)


def _chain_to_root(parents, j):
    while j >= 0:
        yield j
        j = parents[j]


@pytest.mark.parametrize("clip", ["bandai1/walk_normal_001", "bandai1/bow_normal_001"])
def test_a_rig_whose_legs_were_deleted_is_refused_not_taken_by_its_arms(mocap, clip):
    """With the leg bones deleted, the arms are the only long pair of branches left: the
    finder must not take them as legs. Legs hang below the pelvis towards the floor, away
    from the head, over the motion; arms do not. The message says which roles to map."""
    legless = without(mocap(clip), {"UpperLeg_L", "UpperLeg_R"})
    with pytest.raises(RigError, match=r"does not hang below the pelvis .* towards the floor over the motion") as caught:
        find_rig(legless)
    message = str(caught.value)
    assert "left.hip, left.knee, left.ankle" in message and "'pelvis'" in message
    find_rig(mocap(clip))  # the whole skeleton is fine


def test_a_t_posed_skeleton_whose_legs_were_deleted_is_refused_by_its_rest_pose():
    """Without a motion the rest pose decides, when it is a pose at all (a T pose here)."""
    skel, _ = humanoid(CMU)
    legless = without(still(skel, 1), {"LHipJoint", "RHipJoint"}).skeleton
    with pytest.raises(RigError, match="does not hang below the pelvis .* in the rest pose"):
        find_rig(legless)
    find_rig(skel)


def test_legs_found_by_name_are_legs_however_they_fold(mocap):
    """Kneeling or sitting through a whole clip, the ankles hardly hang below the pelvis; legs
    found by their names are kept all the same (only legs found from the hierarchy alone,
    which may be the arms, must hang)."""
    walk = mocap("bandai1/walk_normal_001")
    names = walk.skeleton.names
    rotations = np.array(walk.rotations)
    fold = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.radians(150.0))
    for knee in ("LowerLeg_L", "LowerLeg_R"):
        rotations[:, names.index(knee)] = quat.mul(rotations[:, names.index(knee)], fold)
    kneeling = Motion(walk.skeleton, rotations, walk.positions, walk.fps)
    rig = find_rig(kneeling)
    assert rig.method == "names" and names[rig.left_leg.ankle] == "Foot_L"


# --- legs hang from the pelvis, away from the head ------------------------------------------


@pytest.mark.parametrize("clip", ["bandai1/walk_normal_001", "bandai1/bow_normal_001"])
def test_a_cmu_rig_with_its_legs_flipped_upward_is_refused(mocap, clip):
    """The issue: a CMU rig whose legs point up was taken as it was; up, found from the feet to
    the head, pointed down, and analysis reported the body facing backwards. Legs found by their
    names may fold any way, but they hang on the side of the pelvis away from the head; the
    message says what is wrong and what to fix. (A bow is the hard case: bent over, the trunk
    lies across the legs, real or flipped.)"""
    flipped = legs_flipped_up(mocap(clip).renamed(CMU_NAMES))
    with pytest.raises(RigError, match=r"the legs point up: the (left|right) ankle '(Left|Right)Foot' stands "
                                       r"0\.\d\d leg lengths above the pelvis 'Hips', on the side of 'Head', "
                                       r"over the motion") as caught:
        find_rig(flipped)
    assert "fix the legs in the file" in str(caught.value) and "left.ankle" in str(caught.value)
    find_rig(mocap(clip).renamed(CMU_NAMES))


@pytest.mark.parametrize("change", [
    lambda m: m.renamed(CMU_NAMES).scaled(0.01).transformed(Y_TO_Z),
    lambda m: m.resampled(120.0),
    # the whole clip upside down, as a handstand would be: the legs still hang from the pelvis
    # away from the head, and flipped ones still point at it
    lambda m: m.transformed(quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi)),
], ids=["cmu metres z-up", "120 fps", "upside down"])
def test_legs_are_judged_along_the_body_so_no_axis_unit_or_turn_hides_them(mocap, change):
    walk = mocap("bandai1/walk_normal_001")
    find_rig(change(walk))
    with pytest.raises(RigError, match="the legs point up"):
        find_rig(change(legs_flipped_up(walk)))


def test_a_bare_skeleton_whose_legs_point_up_in_its_rest_pose_is_refused():
    """Without a motion the rest pose decides when it is a pose: legs both along the spine point
    up; Bandai Namco's rest pose, one leg along the spine and the other against it, says nothing."""
    skel, _ = humanoid(CMU)
    with pytest.raises(RigError, match="the legs point up: .* in the rest pose"):
        find_rig(legs_flipped_up(still(skel)).skeleton)
    find_rig(skel)
    find_rig(read_hierarchy(require(BANDAI)))


def test_legs_mapped_by_hand_must_hang_too(mocap):
    walk = mocap("bandai1/walk_normal_001")
    legs = {f"{word}.{role}": f"{joint}_{side}" for side, word in (("L", "left"), ("R", "right"))
            for role, joint in (("hip", "UpperLeg"), ("knee", "LowerLeg"), ("ankle", "Foot"))}
    find_rig(walk, overrides=legs)
    with pytest.raises(RigError, match="the legs point up"):
        find_rig(legs_flipped_up(walk), overrides=legs)


def test_every_clip_beside_the_one_whose_rig_was_found_is_checked_with_that_rig(mocap):
    """Commands find the rig on one clip (the first, the source, the query) and check each other
    clip with it; the message names the clip."""
    walk = mocap("bandai1/walk_normal_001")
    rig = find_rig(walk)
    check_legs_hang(mocap("bandai1/bow_normal_001"), rig, clip="clip 'bow'")
    flipped = legs_flipped_up(mocap("bandai1/bow_normal_001"))
    with pytest.raises(RigError, match=r"^clip 'bow': the legs point up"):
        check_legs_hang(flipped, rig, clip="clip 'bow'")
    with pytest.raises(RigError, match=r"^clip 'bow': the legs point up"):
        find_rig(flipped, clip="clip 'bow'")
    assert legs_above_pelvis(walk, rig) == ""


def test_leg_hang_is_about_one_standing_and_minus_one_turned_up():
    skel, _ = humanoid(CMU)
    rig = find_rig(skel)
    standing = leg_hang(skel.rest_positions()[None], rig)
    flipped = leg_hang(legs_flipped_up(still(skel)).skeleton.rest_positions()[None], rig)
    np.testing.assert_allclose(standing, [[88 / 82, 88 / 82]])
    np.testing.assert_allclose(flipped, [[-76 / 82, -76 / 82]])


def test_bone_mapping_text_becomes_overrides():
    from core.rig import parse_bone_mapping

    assert parse_bone_mapping("") == {}
    assert parse_bone_mapping("left.ankle=foot.L, right.ankle = foot.R;\nspine=Spine, Spine1") == {
        "left.ankle": "foot.L", "right.ankle": "foot.R", "spine": "Spine,Spine1",
    }
    with pytest.raises(ValueError, match="names no role"):
        parse_bone_mapping("=foot.L")
    with pytest.raises(ValueError, match=r"Bone Mapping: 'Foot_L' is not ROLE=BONE"):
        parse_bone_mapping("Foot_L")


def test_a_parsed_bone_mapping_is_what_find_rig_takes_as_overrides():
    from core.rig import parse_bone_mapping

    skel = Skeleton(("hips", "thigh_l", "shin_l", "foot_l", "thigh_r", "shin_r", "foot_r"),
                    np.array([-1, 0, 1, 2, 0, 4, 5]),
                    np.array([[0, 90, 0], [10, -5, 0], [0, -40, 0], [0, -40, 0],
                              [-10, -5, 0], [0, -40, 0], [0, -40, 0]], dtype=float))
    rig = find_rig(skel, parse_bone_mapping("left.hip=thigh_r, left.knee=shin_r, left.ankle=foot_r;\n"
                                            "right.hip=thigh_l, right.knee=shin_l, right.ankle=foot_l"))
    assert (rig.left_leg.ankle, rig.right_leg.ankle) == (6, 3), "the mapping wins over the names"
