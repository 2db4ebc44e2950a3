"""BVH reader and writer: real files round-trip channel for channel, unusual layouts
survive, forward kinematics of a hand-written file hits hand-computed points, and
every malformed file is refused with the line to fix."""

from pathlib import Path

import numpy as np
import pytest
from real_capture import require

from core import quat
from core.bvh import BVHError, format_bvh, parse_bvh, read_bvh, write_bvh
from core.motion import Motion, Skeleton

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "mocap"

REAL_FILES = [
    "bandai1/walk_normal_001.bvh",
    "bandai1/run_normal_001.bvh",
    "bandai1/kick_normal_001.bvh",
    "bandai1/dance-short_normal_001.bvh",
    "bandai1/bow_normal_001.bvh",
    "bandai1/punch_normal_001.bvh",
    "bandai1/walk-back_proud_001.bvh",  # a middle angle of 89.77°, near gimbal lock
    "bandai1/walk-right_normal_001.bvh",  # stores an angle of exactly -180°
    "bandai2/walk-turn-left_normal_001.bvh",
    "bandai2/wave-both-hands_normal_001.bvh",
]


def raw_frames(text):
    """The MOTION block as an (F, C) array, read the slow obvious way."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "MOTION")
    n_frames = int(lines[start + 1].split(":")[1])
    rows = [[float(v) for v in line.split()] for line in lines[start + 3 :] if line.strip()]
    assert len(rows) == n_frames
    return np.array(rows).reshape(n_frames, -1)


def rotation_columns(motion):
    """(C,) True for the rotation channels of a parsed motion, in file order."""
    return np.array([name.endswith("rotation") for joint in motion.skeleton.channels for name in joint])


def same_rotation(a, b, atol=1e-9):
    """Quaternions equal up to sign."""
    return np.all(np.abs(np.abs(np.sum(a * b, axis=-1)) - 1.0) < atol)


def wrapped_degrees(d):
    return (d + 180.0) % 360.0 - 180.0


def line_of(text, needle):
    """1-based number of the first line containing ``needle``."""
    return next(i + 1 for i, line in enumerate(text.split("\n")) if needle in line)


# ------------------------------------------------------------------ real mocap


@pytest.fixture(scope="module")
def mocap():
    require(MOCAP)
    return MOCAP


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_file_round_trips_every_channel(mocap, name):
    path = mocap / name
    text = path.read_text()
    original = raw_frames(text)
    motion = read_bvh(path)
    skel = motion.skeleton
    # the dataset's own conventions: 30 fps ("0.0333333"), 6 channels on every joint
    assert motion.fps == 1.0 / 0.0333333
    assert all(len(c) == 6 for c in skel.channels)
    assert motion.positions.shape == (len(original), len(skel), 3)

    # The files store every frame in to_euler's ranges, so writing frame by
    # frame reproduces each channel.
    principal = format_bvh(motion, continuous=False)
    np.testing.assert_allclose(raw_frames(principal), original, rtol=0, atol=1e-5)

    # Continuous writing differs only by whole turns, never steps by 180° or more.
    continuous = format_bvh(motion, continuous=True)
    written = raw_frames(continuous)
    rot = rotation_columns(motion)
    np.testing.assert_allclose(written[:, ~rot], original[:, ~rot], rtol=0, atol=1e-5)
    assert np.abs(wrapped_degrees(written[:, rot] - original[:, rot])).max() < 1e-5
    assert np.abs(np.diff(written[:, rot], axis=0)).max() <= 180.0

    again = parse_bvh(continuous)
    assert again.skeleton.names == skel.names and again.skeleton.channels == skel.channels
    np.testing.assert_array_equal(again.skeleton.parents, skel.parents)
    np.testing.assert_allclose(again.skeleton.offsets, skel.offsets, atol=1e-9)
    assert again.skeleton.end_sites.keys() == skel.end_sites.keys()
    assert again.fps == motion.fps
    assert same_rotation(again.rotations, motion.rotations)
    np.testing.assert_allclose(again.positions, motion.positions, atol=1e-8)


# ------------------------------------------------------------------ unusual layouts

UNUSUAL_HIERARCHY = """HIERARCHY
ROOT Hips
{
  OFFSET 1 2 3
  CHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Yrotation Xrotation Zrotation
    JOINT Head
    {
      OFFSET 0 5 0
      CHANNELS 6 Xrotation Zrotation Yrotation Xposition Yposition Zposition
      End Site
      {
        OFFSET 0 2.5 0
      }
    }
  }
  JOINT Prop
  {
    OFFSET 4 0 0
    CHANNELS 3 Xposition Yposition Zposition
    End Site
    {
      OFFSET 1 0 0
    }
  }
  JOINT Tail
  {
    OFFSET 0 -1 -2
    CHANNELS 1 Zrotation
    JOINT Tip
    {
      OFFSET 0 -1 0
      CHANNELS 0
      End Site
      {
        OFFSET 0 -0.5 0
      }
    }
  }
}
MOTION
"""
#            Hips 6, Spine 3, Head 6, Prop 3, Tail 1, Tip 0
N_CHANNELS = 6 + 3 + 6 + 3 + 1
ROTATION_COLUMNS = [3, 4, 5, 6, 7, 8, 9, 10, 11, 18]


def unusual_frames(n=240):
    """Smooth channel values: outer angles beyond ±180°, middle ones within ±90°."""
    t = np.linspace(0.0, 1.0, n)[:, None]
    rng = np.random.default_rng(7)
    phase = rng.uniform(0, 2 * np.pi, N_CHANNELS)
    values = 30.0 * np.sin(2 * np.pi * t + phase) + rng.uniform(-20, 20, N_CHANNELS)
    values[:, 4] = 80.0 * np.sin(3 * np.pi * t[:, 0])  # Hips middle angle (Y of XYZ) close to 90°
    values[:, 3] = 170.0 + 150.0 * t[:, 0]  # Hips X rotation turns past 180° to 320°
    values[:, 18] = -170.0 - 200.0 * t[:, 0]  # Tail's single Z channel turns past -180°
    return values


def unusual_text(values, frame_time="0.00833333"):
    rows = "\n".join(" ".join("%.6f" % v for v in row) for row in values)
    return UNUSUAL_HIERARCHY + f"Frames: {len(values)}\nFrame Time: {frame_time}\n{rows}\n"


def axis_matrix(axis, degrees):
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    return {
        "X": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
        "Y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
        "Z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]),
    }[axis]


def test_unusual_layouts_read_as_the_product_of_their_listed_rotations():
    """Checked against one matrix product per frame and joint, in listed order."""
    text = unusual_text(unusual_frames(12))
    values = raw_frames(text)
    motion = parse_bvh(text)
    skel = motion.skeleton
    assert skel.names == ("Hips", "Spine", "Head", "Prop", "Tail", "Tip")
    np.testing.assert_array_equal(skel.parents, [-1, 0, 1, 0, 0, 4])
    assert sorted(skel.end_sites) == [2, 3, 5]
    np.testing.assert_allclose(skel.end_sites[2], [0, 2.5, 0])
    assert skel.channels[4] == ("Zrotation",) and skel.channels[5] == ()
    assert motion.fps == 1.0 / 0.00833333

    column = 0
    for j, names in enumerate(skel.channels):
        for f in range(len(values)):
            expected_matrix = np.eye(3)
            expected_position = skel.offsets[j].copy()
            for k, name in enumerate(names):
                if name.endswith("rotation"):
                    expected_matrix = expected_matrix @ axis_matrix(name[0], values[f, column + k])
                else:
                    expected_position["XYZ".index(name[0])] = values[f, column + k]
            np.testing.assert_allclose(quat.to_matrix(motion.rotations[f, j]), expected_matrix, atol=1e-12)
            np.testing.assert_allclose(motion.positions[f, j], expected_position, atol=1e-12)
        column += len(names)


@pytest.mark.parametrize("frame_time", ["0.00833333", "0.008333333333333333", "0.04", "1"])
def test_unusual_layouts_round_trip_every_channel(frame_time):
    values = unusual_frames()
    text = unusual_text(values, frame_time)
    motion = parse_bvh(text)
    written = format_bvh(motion, continuous=True)
    # continuous channels that start in to_euler's ranges come back exactly,
    # including the X angle that runs to 320° and the Z angle that runs to -370°
    np.testing.assert_allclose(raw_frames(written), values, rtol=0, atol=1e-5)
    assert f"Frame Time: {frame_time}\n" in written
    again = parse_bvh(written)
    assert again.fps == motion.fps
    assert again.skeleton.channels == motion.skeleton.channels
    assert {k: v.tolist() for k, v in again.skeleton.end_sites.items()} == {k: v.tolist() for k, v in motion.skeleton.end_sites.items()}


def test_principal_writing_wraps_the_same_rotations_into_range():
    values = unusual_frames()
    motion = parse_bvh(unusual_text(values))
    written = raw_frames(format_bvh(motion, continuous=False))
    rot = ROTATION_COLUMNS
    assert np.all(np.abs(written[:, rot]) <= 180.0)
    assert np.abs(wrapped_degrees(written[:, rot] - values[:, rot])).max() < 1e-5
    assert same_rotation(parse_bvh(format_bvh(motion, continuous=False)).rotations, motion.rotations)


@pytest.mark.parametrize(
    "stored, meaning",
    [
        ("200 10 20", "an outer angle beyond 180° in the first frame"),
        ("10 120 20", "a middle angle beyond 90°"),
        ("30 90 -40", "gimbal lock: only the sum of the outer angles is defined"),
        ("30 -90 -40", "gimbal lock the other way"),
        ("180 0 180", "a rotation by pi"),
    ],
)
def test_values_outside_euler_ranges_keep_the_rotation(stored, meaning):
    text = UNUSUAL_HIERARCHY.replace(
        "CHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation",
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
    )
    rows = "\n".join(f"0 0 0 {stored} " + " ".join(["5"] * (N_CHANNELS - 6)) for _ in range(3))
    motion = parse_bvh(text + f"Frames: 3\nFrame Time: 0.1\n{rows}\n")
    again = parse_bvh(format_bvh(motion, continuous=True))
    assert same_rotation(again.rotations, motion.rotations), meaning
    written = raw_frames(format_bvh(motion, continuous=True))[:, 3:6]
    assert np.all(np.abs(written[:, 1]) <= 90.0) and np.all(np.abs(written[:, [0, 2]]) <= 180.0)


def test_a_motion_without_a_layout_gets_six_channels_on_the_root_and_zxy_elsewhere():
    rng = np.random.default_rng(3)
    skel = Skeleton(("root", "a", "b", "c"), [-1, 0, 1, 0], rng.normal(size=(4, 3)), end_sites={2: [0.0, 1.0, 0.0]})
    rotations = quat.normalize(rng.normal(size=(20, 4, 4)))
    motion = Motion.from_root(skel, rotations, rng.normal(size=(20, 3)), 24)
    again = parse_bvh(format_bvh(motion, continuous=True))
    zxy = ("Zrotation", "Xrotation", "Yrotation")
    assert again.skeleton.channels == (("Xposition", "Yposition", "Zposition") + zxy, zxy, zxy, zxy)
    assert again.fps == 24.0
    assert same_rotation(again.rotations, motion.rotations)
    np.testing.assert_allclose(again.positions, motion.positions, atol=1e-8)
    np.testing.assert_allclose(again.global_positions(), motion.global_positions(), atol=1e-8)


def test_joints_are_written_depth_first():
    rng = np.random.default_rng(5)
    skel = Skeleton(("root", "a", "b", "c"), [-1, 0, 0, 1], rng.normal(size=(4, 3)))
    motion = Motion.from_root(skel, quat.normalize(rng.normal(size=(6, 4, 4))), rng.normal(size=(6, 3)), 30)
    again = parse_bvh(format_bvh(motion, continuous=True))
    assert again.skeleton.names == ("root", "a", "c", "b")
    np.testing.assert_allclose(again.global_positions(), motion.global_positions()[:, [0, 1, 3, 2]], atol=1e-8)


def test_the_layout_widens_where_it_cannot_carry_the_motion():
    rng = np.random.default_rng(4)
    values = unusual_frames(10)
    motion = parse_bvh(unusual_text(values))
    rotations = motion.rotations.copy()
    positions = motion.positions.copy()
    rotations[:, 3] = quat.normalize(rng.normal(size=(10, 4)))  # Prop had position channels only
    rotations[:, 4] = quat.from_euler(np.radians([[0.0, 30.0, 0.0]]).repeat(10, 0), "ZXY")  # Tail had Z only
    positions[:, 1] += [0.0, 0.5, 0.0]  # Spine had rotations only
    edited = motion.with_arrays(rotations, positions)
    again = parse_bvh(format_bvh(edited, continuous=True))
    channels = again.skeleton.channels
    assert channels[0] == motion.skeleton.channels[0] and channels[2] == motion.skeleton.channels[2]
    assert channels[1] == ("Xposition", "Yposition", "Zposition", "Yrotation", "Xrotation", "Zrotation")
    assert channels[3] == ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
    assert channels[4] == ("Zrotation", "Xrotation", "Yrotation")
    assert same_rotation(again.rotations, edited.rotations)
    np.testing.assert_allclose(again.positions, edited.positions, atol=1e-8)


def test_a_two_axis_joint_keeps_its_two_channels_past_ninety_degrees():
    """Z then X = 120°: to_euler("ZXY") answers (Z + 180°, 60°, 180°), which needs a Y
    channel; the other Euler solution, (Z, 120°, 0), fits the joint's two channels."""
    x = np.linspace(60.0, 150.0, 10)
    rows = "\n".join(f"{-40.0 + k} {a}" for k, a in enumerate(x))
    text = f"HIERARCHY\nROOT Arm\n{{\n OFFSET 0 0 0\n CHANNELS 2 Zrotation Xrotation\n}}\nMOTION\nFrames: 10\nFrame Time: 0.1\n{rows}\n"
    motion = parse_bvh(text)
    written = format_bvh(motion, continuous=True)
    assert parse_bvh(written).skeleton.channels == (("Zrotation", "Xrotation"),)
    np.testing.assert_allclose(raw_frames(written), raw_frames(text), atol=1e-5)


def test_files_on_disk_crlf_and_zero_frames(tmp_path):
    values = unusual_frames(5)
    text = unusual_text(values)
    path = tmp_path / "clip.bvh"
    path.write_bytes(("\ufeff" + text).replace("\n", "\r\n").encode("utf-8"))
    motion = read_bvh(path, up=(0.0, 0.0, 1.0), unit=0.01)
    np.testing.assert_array_equal(motion.skeleton.up, [0.0, 0.0, 1.0])
    assert motion.skeleton.unit == 0.01
    out = tmp_path / "out.bvh"
    write_bvh(motion, out, continuous=True)  # this file's angles run continuously past 180°
    assert b"\r" not in out.read_bytes()
    np.testing.assert_allclose(raw_frames(out.read_text()), values, atol=1e-5)

    empty = motion[0:0]
    again = parse_bvh(format_bvh(empty, continuous=True))
    assert again.n_frames == 0 and again.skeleton.names == motion.skeleton.names


def test_lenient_spellings_are_read():
    text = (
        "HIERARCHY\nROOT Hips {\n OFFSET 0 0 0\n CHANNELS 3 zrotation XROTATION Yrotation\n"
        " End Site {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames:\t2\nFrame Time:\t0.5\n\n10 20 30   \n\n1e1 2E1 30\n\n"
    )
    motion = parse_bvh(text)
    assert motion.skeleton.channels == (("Zrotation", "Xrotation", "Yrotation"),)
    assert same_rotation(motion.rotations[0], motion.rotations[1])
    assert motion.fps == 2.0


# ------------------------------------------------------------------ forward kinematics

TINY = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0 5 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 2 0
      }
    }
  }
  JOINT Leg
  {
    OFFSET 3 0 0
    CHANNELS 3 Xposition Yposition Zposition
  }
}
MOTION
Frames: 2
Frame Time: 0.04
0 0 0 0 0 0 0 0 0 0 0 0 3 0 0
1 2 3 90 0 0 90 90 0 0 0 0 4 -1 0
"""


def test_forward_kinematics_of_a_tiny_file_matches_hand_computation():
    motion = parse_bvh(TINY)
    assert motion.fps == 25.0
    gpos = motion.global_positions()
    # rest pose: offsets summed down the tree
    np.testing.assert_allclose(gpos[0], [[0, 0, 0], [0, 10, 0], [0, 15, 0], [3, 0, 0]], atol=1e-12)
    # frame 1: Hips at (1, 2, 3) turned 90° about Z, which takes +Y to -X.
    #   Spine = (1, 2, 3) + Rz90 (0, 10, 0) = (-9, 2, 3).
    #   Spine is Rz90 @ Rx90 ("Zrotation Xrotation"), so its world rotation is
    #   Rz180 @ Rx90: Rx90 takes the Head offset (0, 5, 0) to (0, 0, 5), Rz180 keeps it.
    #   Head = (-9, 2, 8). (The other order, Rx90 @ Rz90, would give (-4, 2, 3).)
    #   Leg's position channels replace its offset: (1, 2, 3) + Rz90 (4, -1, 0) = (2, 6, 3).
    np.testing.assert_allclose(gpos[1], [[1, 2, 3], [-9, 2, 3], [-9, 2, 8], [2, 6, 3]], atol=1e-12)
    np.testing.assert_allclose(motion.skeleton.end_sites[2], [0, 2, 0])
    np.testing.assert_allclose(motion.positions[:, 3], [[3, 0, 0], [4, -1, 0]])


# ------------------------------------------------------------------ malformed files


def drop_line(text, needle):
    return "\n".join(line for line in text.split("\n") if needle not in line)


# Each case: the broken text, the text marking the line the message must name, words the message must contain.
MALFORMED = {
    "truncated block": (TINY.replace("Frames: 2", "Frames: 3"), "1 2 3 90", "truncated"),
    "truncated line": (TINY.replace(" 90 90 0 0 0 0 4 -1 0\n", " 90 90"), "1 2 3 90", "cut off"),
    "channel count": (TINY.replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 3 Zrotation Xrotation", 1), "CHANNELS 3 Zrotation Xrotation", "2 channel names"),
    "six named five": (TINY.replace("CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation", "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation"), "CHANNELS 6", "5 channel names"),
    "frame values": (TINY.replace("0 0 0 0 0 0 0 0 0 0 0 0 3 0 0", "0 0 0 0 0 0 0 0 0 0 0 0 3 0 0 7"), "0 0 0 0 0 0 0 0 0 0 0 0 3 0 0 7", "16 values"),
    "non-numeric value": (TINY.replace("4 -1 0", "4 -1 O"), "4 -1 O", "'O'"),
    "non-finite value": (TINY.replace("4 -1 0", "4 nan 0"), "4 nan 0", "'nan'"),
    "non-numeric offset": (TINY.replace("OFFSET 3 0 0", "OFFSET 3 0 x"), "OFFSET 3 0 x", "non-numeric"),
    "missing frames": (drop_line(TINY, "Frames:"), "Frame Time", "Frames:"),
    "missing frame time": (drop_line(TINY, "Frame Time"), "0 0 0 0 0 0", "Frame Time:"),
    "zero frame time": (TINY.replace("Frame Time: 0.04", "Frame Time: 0"), "Frame Time", "bad frame time"),
    "negative frame time": (TINY.replace("Frame Time: 0.04", "Frame Time: -0.04"), "Frame Time", "bad frame time"),
    "text frame time": (TINY.replace("Frame Time: 0.04", "Frame Time: fast"), "Frame Time", "bad frame time"),
    # no capture runs at a billion or at a tenth of a frame per second: a typo, refused before
    # it resamples a clip into gigabytes (1e-300 overflowed, 1e-9 took 1.9 GB)
    "tiny frame time": (TINY.replace("Frame Time: 0.04", "Frame Time: 1e-300"), "Frame Time", "outside 0.001 .. 1 s"),
    "nanosecond frame time": (TINY.replace("Frame Time: 0.04", "Frame Time: 1e-9"), "Frame Time", "outside 0.001 .. 1 s"),
    "ten second frame time": (TINY.replace("Frame Time: 0.04", "Frame Time: 10"), "Frame Time", "outside 0.001 .. 1 s"),
    "bad frame count": (TINY.replace("Frames: 2", "Frames: two"), "Frames:", "whole number"),
    "extra frames": (TINY.replace("Frames: 2", "Frames: 1"), "1 2 3 90", "more frame lines"),
    "unknown channel": (TINY.replace("CHANNELS 3 Xposition", "CHANNELS 3 Xpos"), "Xpos Yposition", "'Xpos'"),
    "repeated channel": (TINY.replace("CHANNELS 3 Xposition Yposition Zposition", "CHANNELS 3 Xposition Xposition Zposition"), "Xposition Xposition", "twice"),
    "missing close brace": (TINY.replace("  }\n  JOINT Leg", "  JOINT Leg"), "MOTION", "unclosed"),
    "extra close brace": (TINY.replace("}\nMOTION", "}\n}\nMOTION"), "}\nMOTION", "'}' closes nothing"),
    "joint after the root closed": (TINY.replace("  }\n  JOINT Leg", "  }\n}\n  JOINT Leg"), "JOINT Leg", "outside the ROOT"),
    "missing open brace": (TINY.replace("    JOINT Head\n    {\n", "    JOINT Head\n"), "OFFSET 0 5 0", "expected '{'"),
    "empty file": ("", None, "empty"),
    "blank file": ("\n  \n\t\n", None, "empty"),
    "no hierarchy": (TINY.replace("HIERARCHY\n", ""), "ROOT Hips", "HIERARCHY"),
    "no motion": (TINY.split("MOTION")[0], "}", "MOTION"),
    "no root": ("HIERARCHY\nMOTION\nFrames: 0\nFrame Time: 0.1\n", "MOTION", "no ROOT"),
    "two roots": (TINY.split("MOTION")[0] + "ROOT Other\n{\n OFFSET 0 0 0\n}\nMOTION\n", "ROOT Other", "second ROOT"),
    "repeated name": (TINY.replace("JOINT Leg", "JOINT Spine"), "JOINT Spine\n  {\n    OFFSET 3", "used twice"),
    "joint without offset": (drop_line(TINY, "OFFSET 3 0 0"), "JOINT Leg", "no OFFSET"),
    "offset of two": (TINY.replace("OFFSET 3 0 0", "OFFSET 3 0"), "OFFSET 3 0", "2 values"),
    "stray keyword": (TINY.replace("  JOINT Leg", "  LIMB Leg"), "LIMB Leg", "unexpected"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_file_is_refused_with_its_line(case):
    text, marker, words = MALFORMED[case]
    if marker is None:
        line = 1
    elif "\n" in marker:  # a marker spanning lines names its first line
        line = text[: text.index(marker)].count("\n") + 1
    elif marker == "}":
        line = max(i + 1 for i, l in enumerate(text.split("\n")) if l.strip())
    else:
        line = line_of(text, marker)
    with pytest.raises(BVHError) as caught:
        parse_bvh(text, "clip.bvh")
    message = str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert message.startswith(f"clip.bvh, line {line}:"), message
    assert words in message, message


def test_read_bvh_names_the_path_in_errors(tmp_path):
    path = tmp_path / "broken.bvh"
    text = TINY.replace("Frames: 2", "Frames: 5")
    path.write_text(text)
    with pytest.raises(BVHError, match=rf"broken\.bvh, line {line_of(text, '1 2 3 90')}: .*declares 5"):
        read_bvh(path)


def test_a_hierarchy_thousands_of_joints_deep_is_read_and_written_without_recursion(tmp_path):
    """A tail of 3,000 joints (deeper than Python's recursion limit) round-trips through a
    file, and its forward kinematics stands at the sum of its offsets."""
    depth = 3000
    names = tuple(f"j{i}" for i in range(depth))
    skeleton = Skeleton(names, [-1] + list(range(depth - 1)), [[0.0, 0.0, 0.0]] + [[0.0, 1.0, 0.0]] * (depth - 1))
    motion = Motion(skeleton, quat.identity((3, depth)), np.tile(skeleton.offsets, (3, 1, 1)), 30.0)
    path = tmp_path / "tail.bvh"
    write_bvh(motion, path)
    back = read_bvh(path)
    assert back.skeleton.names == names and np.array_equal(back.skeleton.parents, skeleton.parents)
    np.testing.assert_allclose(back.global_positions()[:, -1], [[0.0, depth - 1.0, 0.0]] * 3, atol=1e-9)


def _walk_text() -> list[str]:
    return require(MOCAP / "bandai1/walk_normal_001.bvh").read_text().splitlines()


def _line_of(lines: list[str], start: str) -> int:
    return next(i for i, line in enumerate(lines) if line.strip().startswith(start))


def test_values_no_capture_has_are_refused_with_their_line():
    """The trust issue: finite but extreme values passed the parser and overflowed later into a
    NaN written with exit 0. A value more than 1e6 times the skeleton's median bone length is
    refused where it is read, naming its line."""
    lines = _walk_text()
    motion_at = _line_of(lines, "MOTION")
    first_frame = motion_at + 3  # MOTION, Frames, Frame Time, then the frames (0-based here)
    cases = {}
    position = list(lines)
    values = position[first_frame + 5].split()
    values[0] = "1e308"  # the root's first channel: a position
    position[first_frame + 5] = " ".join(values)
    cases["a position of 1e308"] = (position, first_frame + 6)
    ramp = list(lines)
    for k in range(10):
        values = ramp[first_frame + k].split()
        values[1] = f"{10.0 ** (30 * k):g}"  # up to 1e270
        ramp[first_frame + k] = " ".join(values)
    cases["a root ramp to 1e270"] = (ramp, first_frame + 1 + next(k for k in range(10) if 10.0 ** (30 * k) > 1e8))
    offset = list(lines)
    at = [i for i, line in enumerate(lines) if line.strip().startswith("OFFSET")][3]
    offset[at] = offset[at].split("OFFSET")[0] + "OFFSET 1e308 0 0"
    cases["OFFSET 1e308"] = (offset, at + 1)
    for what, (text, line) in cases.items():
        with pytest.raises(BVHError, match=f"line {line}: .*median bone length"):
            parse_bvh("\n".join(text), "walk.bvh")


def test_a_rig_whose_offsets_are_all_zero_is_refused_when_it_is_read():
    """analyze printed NS for every frame and synthesize failed on a NaN speed: a skeleton with
    no bone cannot stand on anything."""
    lines = [line.split("OFFSET")[0] + "OFFSET 0 0 0" if line.strip().startswith("OFFSET") else line
             for line in _walk_text()]
    with pytest.raises(BVHError, match="every OFFSET below the root is zero"):
        parse_bvh("\n".join(lines), "flat.bvh")


def test_nothing_non_finite_is_ever_written():
    walk = read_bvh(require(MOCAP / "bandai1/walk_normal_001.bvh"))[:5]
    positions = np.array(walk.positions)
    positions[2, 1, 1] = np.nan  # as an overflow would leave it
    broken = Motion.unchecked(walk.skeleton, walk.rotations, positions, walk.fps)
    with pytest.raises(ValueError, match="non-finite positions: nothing was written"):
        format_bvh(broken)
