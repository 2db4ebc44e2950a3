"""Motion analysis (Oshita 2008, section 4) on real capture, and its invariance to rig conventions."""

import numpy as np
import pytest

from core import quat
from core.analysis import (
    Phase,
    analyze,
    base_foot,
    body_orientation,
    foot_contacts,
    phase_segments,
    support_phases,
)
from core.motion import Motion
from core.rig import find_rig
from rig_names import CMU_NAMES

WALK = "bandai1/walk_normal_001"
KICK = "bandai1/kick_normal_001"
RUN = "bandai1/run_normal_001"
DASH = "bandai1/dash_normal_001"
BOW = "bandai1/bow_normal_001"


# ---------------------------------------------------------------- small pure pieces


def test_support_phase_of_each_contact_combination():
    contacts = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], dtype=bool)
    assert list(support_phases(contacts)) == [Phase.DS, Phase.LS, Phase.RS, Phase.NS]


def test_segments_are_end_inclusive_runs():
    phases = np.array([0, 0, 1, 1, 1, 0, 3])
    segs = [(s.phase.name, s.start, s.end) for s in phase_segments(phases)]
    assert segs == [("DS", 0, 1), ("LS", 2, 4), ("DS", 5, 5), ("NS", 6, 6)]
    assert phase_segments(np.array([], dtype=int)) == []


def test_moving_feet_follow_the_phase():
    segs = phase_segments(np.array([0, 1, 2, 3]))
    assert [s.moving_feet for s in segs] == [(False, False), (False, True), (True, False), (True, True)]


def test_base_foot_in_double_support_is_the_one_nearer_the_centre_of_mass():
    up = np.array([0.0, 1.0, 0.0])
    phases = np.array([Phase.DS, Phase.DS, Phase.LS, Phase.RS, Phase.NS])
    left = np.tile([1.0, 0.0, 0.0], (5, 1))
    right = np.tile([-1.0, 0.0, 0.0], (5, 1))
    centre = np.array([[0.5, 1.0, 0], [-0.5, 1.0, 0], [-0.9, 1, 0], [0.9, 1, 0], [0, 1, 0]])
    assert list(base_foot(phases, left, right, centre, up)) == [0, 1, 0, 1, -1]


@pytest.mark.parametrize("turn", [0, 1, 2, 3])
def test_body_orientation_snaps_movement_to_the_side_nearest_the_pelvis_facing(turn):
    """A figure stepping sideways faces where its pelvis faces, not where it moves (4.3)."""
    up = np.array([0.0, 1.0, 0.0])
    move = quat.mul_vec(quat.from_axis_angle(up, turn * np.pi / 2), np.array([0.0, 0.0, 1.0]))
    pelvis = np.linspace(0, 1, 20)[:, None] * move
    facing = np.tile(np.array([0.2, 0.0, 1.0]) / np.hypot(0.2, 1.0), (20, 1))
    got = body_orientation(pelvis, facing, up, distance=0.3)
    np.testing.assert_allclose(got, [0.0, 0.0, 1.0], atol=1e-12)


def test_body_orientation_of_a_clip_that_stays_put_is_the_pelvis_facing():
    up = np.array([0.0, 0.0, 1.0])
    facing = np.tile([0.0, -1.0, 0.0], (10, 1))
    got = body_orientation(np.zeros((10, 3)), facing, up, distance=0.1, at_end=True)
    np.testing.assert_allclose(got, [0.0, -1.0, 0.0])


def test_a_figure_turning_on_the_spot_faces_one_way_at_its_start_and_another_at_its_end():
    """No movement vector to go by (4.3): each end faces where its pelvis faces there, not where it
    faces on average (which is the same at both ends, and a clip aligned by it does not turn)."""
    up = np.array([0.0, 1.0, 0.0])
    turned = quat.from_axis_angle(up, np.linspace(0.0, np.pi / 2, 30))
    facing = quat.mul_vec(turned, np.array([0.0, 0.0, 1.0]))
    pelvis = 0.01 * np.sin(np.linspace(0, 6, 30))[:, None] * np.array([1.0, 0.0, 0.0])  # sways 1 cm
    np.testing.assert_allclose(body_orientation(pelvis, facing, up, distance=0.1), [0.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(body_orientation(pelvis, facing, up, distance=0.1, at_end=True), [1.0, 0.0, 0.0],
                               atol=1e-12)


def test_the_demo_turn_on_the_spot_reports_a_quarter_turn_between_its_ends():
    """The demo's turn steps round a quarter turn, its pelvis never 3 cm from where it stands: far
    under the 0.2 leg lengths the movement vector needs."""
    from core.align import signed_angle
    from core.demo import demo_clips

    result = analyze(demo_clips(30.0)["turn"].motion)
    turned = signed_angle(result.orientation_start, result.orientation_end, result.up)
    assert np.degrees(turned) == pytest.approx(90.0, abs=1.0)


# ---------------------------------------------------------------- real capture


def count_steps_from_speed_peaks(motion, rig, up):
    """Swings of either foot: runs where the ankle's horizontal speed exceeds half its peak."""
    g = motion.global_positions()
    steps = 0
    for side in ("L", "R"):
        x = g[:, rig.leg(side).ankle]
        v = np.gradient(x, axis=0) * motion.fps
        speed = np.linalg.norm(v - (v @ up)[:, None] * up, axis=-1)
        fast = speed > 0.5 * speed.max()
        steps += int(np.sum(fast[1:] & ~fast[:-1]) + fast[0])
    return steps


def test_a_walk_alternates_single_support_with_double_support_between(mocap):
    walk = mocap(WALK)
    result = analyze(walk)
    phases = [s.phase for s in result.segments]
    single = [p for p in phases if p in (Phase.LS, Phase.RS)]
    assert Phase.NS not in phases
    assert all(a != b for a, b in zip(single, single[1:])), "single supports must alternate left and right"
    inner = phases[1:-1]
    direct = sum({a, b} == {Phase.LS, Phase.RS} for a, b in zip(inner, inner[1:]))
    assert direct <= 1, f"double support is missing between {direct} steps: {phases}"
    assert len(single) == count_steps_from_speed_peaks(walk, result.rig, result.up)


def test_a_bow_is_in_double_support_nearly_throughout(mocap):
    result = analyze(mocap(BOW))
    assert np.mean(result.phases == Phase.DS) >= 0.9


def test_a_kick_stands_on_one_leg_while_the_other_rises(mocap):
    kick = mocap(KICK)
    result = analyze(kick)
    g = kick.global_positions()
    up = result.up
    found = False
    for s in result.segments:
        if s.phase not in (Phase.LS, Phase.RS) or s.n_frames / kick.fps < 0.3:
            continue
        free = result.rig.leg("R" if s.phase == Phase.LS else "L").ankle
        height = g[:, free] @ up
        rise = height[s.start : s.end + 1].max() - np.percentile(height, 5)
        found |= rise > 0.5 * result.leg_length
    assert found, [(s.phase.name, s.start, s.end) for s in result.segments]


@pytest.mark.parametrize("clip", [RUN, DASH])
def test_runs_have_flight_phases(mocap, clip):
    result = analyze(mocap(clip))
    assert Phase.NS in {s.phase for s in result.segments}


def test_a_walk_faces_where_it_walks(mocap):
    walk = mocap(WALK)
    result = analyze(walk)
    pelvis = walk.global_positions()[:, result.rig.pelvis]
    travel = pelvis[-1] - pelvis[0]
    travel -= (travel @ result.up) * result.up
    travel /= np.linalg.norm(travel)
    assert result.orientation_start @ travel > 0.9 and result.orientation_end @ travel > 0.9
    assert abs(result.orientation_start @ result.up) < 1e-9


def test_json_report_has_the_documented_keys(mocap):
    d = analyze(mocap(WALK)).to_dict()
    assert set(d) == {"fps", "segments", "orientation_start", "orientation_end"}
    assert set(d["segments"][0]) == {"phase", "start", "end"}
    assert d["segments"][-1]["end"] == mocap(WALK).n_frames - 1


# ---------------------------------------------------------------- invariance to rig conventions



def rigify_names(skeleton):
    table = {"Hips": "DEF-spine", "Spine": "DEF-spine.001", "Chest": "DEF-spine.002", "Neck": "DEF-spine.004",
             "Head": "DEF-spine.006", "UpperLeg": "DEF-thigh", "LowerLeg": "DEF-shin", "Foot": "DEF-foot",
             "Toes": "DEF-toe", "Shoulder": "DEF-shoulder", "UpperArm": "DEF-upper_arm", "LowerArm": "DEF-forearm",
             "Hand": "DEF-hand"}
    out = {}
    for n in skeleton.names:
        stem, _, side = n.partition("_")
        if stem in table:
            out[n] = table[stem] + (f".{side}" if side in ("L", "R") else "")
    return out


TRANSFORMS = {
    "cmu names": lambda m: m.renamed(CMU_NAMES),
    "mixamo names": lambda m: m.renamed({k: "mixamorig:" + v for k, v in CMU_NAMES.items()}),
    "rigify names": lambda m: m.renamed(rigify_names(m.skeleton)),
    "metres": lambda m: m.scaled(0.01),
    "inches": lambda m: m.scaled(1 / 2.54),
    "60 fps": lambda m: m.resampled(60),
    "120 fps": lambda m: m.resampled(120),
    "z up": lambda m: m.transformed(quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2)),
    "moved and turned": lambda m: m.transformed(quat.from_axis_angle(np.array([0, 1.0, 0]), 2.2), np.array([310.0, 0, -75.0])),
    "all at once": lambda m: m.renamed(CMU_NAMES).scaled(0.01).resampled(120).transformed(
        quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2)),
}


@pytest.mark.parametrize("clip", [WALK, KICK, RUN, BOW])
@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_phase_boundaries_do_not_depend_on_rig_conventions(mocap, clip, name):
    original = mocap(clip)
    changed = TRANSFORMS[name](original)
    expected = analyze(original).segments
    got = analyze(changed).segments
    ratio = changed.fps / original.fps
    assert [s.phase for s in got] == [s.phase for s in expected]
    # a boundary is the first frame of a segment; compare in original frames
    starts = np.array([s.start for s in got]) / ratio
    np.testing.assert_allclose(starts, [s.start for s in expected], atol=1.0)


@pytest.mark.parametrize("name", ["metres", "z up", "moved and turned", "120 fps"])
def test_body_orientation_turns_with_the_clip_and_nothing_else(mocap, name):
    original = mocap(WALK)
    changed = TRANSFORMS[name](original)
    a, b = analyze(original), analyze(changed)
    rotation = {"z up": quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2),
                "moved and turned": quat.from_axis_angle(np.array([0, 1.0, 0]), 2.2)}.get(name, quat.identity())
    np.testing.assert_allclose(b.orientation_start, quat.mul_vec(rotation, a.orientation_start), atol=2e-2)
    np.testing.assert_allclose(b.orientation_end, quat.mul_vec(rotation, a.orientation_end), atol=2e-2)


def test_rig_found_on_the_real_skeleton_is_used_by_default(mocap):
    walk = mocap(WALK)
    assert analyze(walk).rig.names["pelvis"] == find_rig(walk).names["pelvis"] == "Hips"


def test_an_empty_clip_is_refused_with_a_reason(mocap):
    with pytest.raises(ValueError, match="no frames"):
        analyze(mocap(WALK)[0:0])


# ---------------------------------------------------------------- ground truth by construction


@pytest.mark.parametrize("fps", [24, 30, 60, 120])
def test_analysis_finds_the_authored_contacts_of_the_demo_clips(fps):
    """The demo clips plant their feet on known frames; the detector finds those phases."""
    from core.demo import demo_clips

    for name, clip in demo_clips(fps).items():
        truth = phase_segments(support_phases(clip.contacts))
        got = analyze(clip.motion).segments
        assert [s.phase for s in got] == [s.phase for s in truth], name
        # one frame of the 30 fps rate, as at the other rates
        tolerance = max(1.0, fps / 30.0)
        np.testing.assert_allclose([s.start for s in got], [s.start for s in truth], atol=tolerance, err_msg=name)


def test_the_contact_filter_window_never_outgrows_the_clip(mocap):
    """A clip that claims a billion frames per second (made in code, past the BVH reader's
    limits) is analysed in the memory of its own frames: the smoothing window, in seconds,
    is clamped to the clip."""
    import tracemalloc

    walk = mocap("bandai1/walk_normal_001")[:20]
    fast = Motion(walk.skeleton, walk.rotations, walk.positions, 1e9)
    rig = find_rig(fast)
    tracemalloc.start()
    try:
        contacts = foot_contacts(fast, rig)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert contacts.shape == (20, 2)
    assert peak < 10e6, f"{peak / 1e6:.0f} MB for 20 frames"
