"""Partial-figure retrieval and assembly (Juang et al. 2009, 4.1 and 4.2): relational features, segment
retrieval, segment alignment, eq. (1) at the junctures, the contact stage under a replaced lower body."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core import quat
from core.__main__ import main
from core.bvh import format_bvh, read_bvh
from core.assemble import (EULER_ORDER, PARTS, FeatureLibrary, Thresholds, anatomical_frame, assemble, best_window,
                           feature_changes,
                           flexion, juncture_angles, juncture_joints, monotone_time_curve, paired_feature_poses,
                           part_relational_features, part_joints, relational_features, retrieve_part, retrieve_parts,
                           is_the_query, standardized_angles, window_mismatches)
from core.motion import Motion, Skeleton
from core.quality import foot_levels, foot_positions, gap_skate
from core.rig import RigError, find_rig
from broken_rigs import legs_flipped_up
from rig_names import CMU_NAMES

PUNCH = "bandai1/punch_normal_001"
WALK = "bandai1/walk_normal_001"
KICK = "bandai1/kick_normal_001"

EXACT_CHANGES = {
    "cmu names": lambda m: m.renamed(CMU_NAMES),
    "mixamo names": lambda m: m.renamed({k: "mixamorig:" + v for k, v in CMU_NAMES.items()}),
    "metres": lambda m: m.scaled(0.01),
    "z up": lambda m: m.transformed(quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2)),
    "moved and turned": lambda m: m.transformed(quat.from_axis_angle(np.array([0, 1.0, 0]), 2.2),
                                                np.array([310.0, 0, -75.0])),
}


def punch_peak(motion):
    """The frame where the punching (left) hand is farthest from its shoulder, measured directly."""
    g = motion.global_positions()
    names = motion.skeleton.names
    reach = np.linalg.norm(g[:, names.index("Hand_L")] - g[:, names.index("UpperArm_L")], axis=1)
    return int(np.argmax(reach))


# --- features behave as their names claim ---------------------------------------


def test_a_punching_hand_is_out_and_its_elbow_stretched_at_the_punch_peak(mocap):
    punch = mocap(PUNCH)
    features = relational_features(punch)
    peak = punch_peak(punch)
    assert features["left.hand_out"][peak]
    assert not features["left.elbow_bent"][peak]
    # in the guard before it the same elbow is bent and the hand near the body, held in front
    assert features["left.elbow_bent"][:10].all()
    assert not features["left.hand_out"][:10].any()
    assert features["left.hand_in_front"][:10].all()


def test_a_walks_arms_swing_in_front_in_turn(mocap):
    features = relational_features(mocap(WALK))
    left, right = features["left.hand_in_front"], features["right.hand_in_front"]
    assert left.any() and right.any()
    assert not (left & right).any()
    assert not (features["left.hand_out"] | features["right.hand_out"]).any()
    assert not (features["left.hand_fast"] | features["right.hand_fast"]).any(), "a swing is not a punch"


def test_a_walks_forward_speed_does_not_make_its_hands_fast(mocap):
    walk = mocap(WALK)
    # the pelvis (below bandai's fixed joint_Root) held where it starts: the arms move as before
    pelvis = np.arange(len(walk.skeleton))[None, :, None] == find_rig(walk).pelvis
    standing = walk.with_arrays(positions=np.where(pelvis, walk.positions[:1], walk.positions))
    assert np.ptp(standing.global_positions()[:, find_rig(walk).pelvis], axis=0).max() < 1e-9
    assert np.array_equal(relational_features(walk)["left.hand_fast"], relational_features(standing)["left.hand_fast"])


def test_a_punch_is_fast_on_its_way_out(mocap):
    punch = mocap(PUNCH)
    features = relational_features(punch)
    peak = punch_peak(punch)
    assert features["left.hand_fast"][peak - 4:peak].any()


def test_a_walks_knees_bend_and_stretch_and_its_feet_alternate_in_front(mocap):
    features = relational_features(mocap(WALK))
    for side in ("left", "right"):
        bent = features[f"{side}.knee_bent"]
        # several bend-stretch cycles, not one flicker
        assert np.count_nonzero(np.diff(bent.astype(int)) == 1) >= 3
        assert 0.15 < bent.mean() < 0.6
    left, right = features["left.foot_in_front"], features["right.foot_in_front"]
    assert left.any() and right.any()
    assert not (left & right).any(), "both feet well ahead of the pelvis at once in a walk"


def test_a_walks_swinging_foot_is_raised_while_the_other_is_planted(mocap):
    features = relational_features(mocap(WALK))
    assert features["left.foot_raised"].any() and features["right.foot_raised"].any()
    assert not (features["left.foot_raised"] & features["right.foot_raised"]).any()


def test_a_kicks_leg_is_in_front_and_raised_at_once(mocap):
    features = relational_features(mocap(KICK))
    assert (features["right.foot_in_front"] & features["right.foot_raised"]).any()


def test_walking_arms_hang_below_the_shoulders_with_elbows_stretched(mocap):
    features = relational_features(mocap(WALK))
    for side in ("left", "right"):
        assert not features[f"{side}.hand_raised"].any()
        assert not features[f"{side}.elbow_bent"].any()


def test_flexion_is_zero_stretched_and_ninety_at_a_right_angle():
    root = np.array([[0.0, 0, 0], [0, 0, 0]])
    middle = np.array([[1.0, 0, 0], [1, 0, 0]])
    tip = np.array([[2.0, 0, 0], [1, 1, 0]])
    np.testing.assert_allclose(flexion(root, middle, tip), [0.0, 90.0], atol=1e-9)


def test_parts_group_the_features_of_their_limbs(mocap):
    features = relational_features(mocap(WALK))
    assert part_relational_features(features, "upper").shape == (mocap(WALK).n_frames, 10)
    assert set(PARTS["upper"]) == set(PARTS["left.arm"]) | set(PARTS["right.arm"])
    assert set(PARTS["lower"]) == set(PARTS["left.leg"]) | set(PARTS["right.leg"])
    with pytest.raises(ValueError, match="upper"):
        part_relational_features(features, "torso")


# --- invariance -------------------------------------------------------------------


@pytest.mark.parametrize("clip", [PUNCH, WALK])
@pytest.mark.parametrize("change", list(EXACT_CHANGES))
def test_features_do_not_depend_on_names_units_up_axis_or_placement(mocap, clip, change):
    original = mocap(clip)
    expected = relational_features(original)
    got = relational_features(EXACT_CHANGES[change](original))
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


@pytest.mark.parametrize("clip", [PUNCH, WALK])
def test_features_at_120_fps_agree_with_30_fps_on_the_shared_frames(mocap, clip):
    original = mocap(clip)
    fast = original.resampled(4 * original.fps)
    expected = relational_features(original)
    got = relational_features(fast)
    ratio = fast.fps / original.fps
    shared = np.round(np.arange(original.n_frames) * ratio).astype(int)
    shared = shared[shared < fast.n_frames]
    for key in expected:
        # speeds are central differences over a shorter step, so a few frames near a threshold may differ
        agreement = np.mean(got[key][shared] == expected[key][: len(shared)])
        assert agreement > 0.95, (key, agreement)


# --- retrieval ----------------------------------------------------------------------


def plain_mismatches(query, library):
    n = len(query)
    return np.array([sum(query[i, k] != library[s + i, k] for i in range(n) for k in range(query.shape[1]))
                     for s in range(len(library) - n + 1)])


@pytest.mark.parametrize("n, m, k", [(1, 1, 1), (3, 7, 2), (5, 5, 4), (4, 12, 3)])
def test_the_sliding_comparison_equals_a_plain_loop(n, m, k):
    rng = np.random.default_rng(n * 100 + m * 10 + k)
    query, library = rng.random((n, k)) < 0.5, rng.random((m, k)) < 0.5
    np.testing.assert_array_equal(window_mismatches(query, library), plain_mismatches(query, library))


def test_a_library_clip_shorter_than_the_query_has_no_window():
    assert len(window_mismatches(np.ones((5, 2), bool), np.ones((4, 2), bool))) == 0
    with pytest.raises(ValueError, match="shorter than the query"):
        best_window(np.ones((5, 2), bool), {"short": np.ones((4, 2), bool)})


def test_mismatched_feature_columns_are_refused():
    with pytest.raises(ValueError, match="same features"):
        window_mismatches(np.ones((2, 3), bool), np.ones((5, 4), bool))


def test_the_best_window_is_the_one_with_fewest_differing_bits():
    query = np.array([[1, 0], [1, 1]], bool)
    library = {"a": np.array([[0, 0], [0, 0], [1, 0]], bool), "b": np.array([[0, 1], [1, 0], [1, 1]], bool)}
    match = best_window(query, library)
    assert (match.clip, match.start, match.cost) == ("b", 1, 0.0)


@pytest.mark.parametrize("part, clip, start, stop", [
    ("left.arm", PUNCH, 120, 180),
    ("upper", PUNCH, 100, 170),
    ("lower", WALK, 40, 100),
    ("right.leg", KICK, 30, 120),
])
def test_a_segment_of_a_library_clip_retrieves_that_clip_and_start(mocap, part, clip, start, stop):
    library = {name: mocap(name) for name in (WALK, PUNCH, KICK)}
    match = retrieve_part(library[clip][start:stop + 1], library, part)
    # every bit the same (the continuous measures differ a little at the segment's two ends, where
    # its speeds are one-sided differences and its swing windows are cut short: see below)
    assert (match.clip, match.start, match.bits) == (clip, start, 0.0)


def test_a_renamed_metric_z_up_query_retrieves_the_same_segment(mocap):
    library = {name: mocap(name) for name in (WALK, PUNCH, KICK)}
    query = library[PUNCH][120:181].renamed(CMU_NAMES).scaled(0.01)
    query = query.transformed(quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2))
    match = retrieve_part(query, library, "left.arm")
    assert (match.clip, match.start) == (PUNCH, 120)


def test_a_query_at_120_fps_retrieves_its_segment_in_the_library_clips_frames(mocap):
    library = {name: mocap(name) for name in (WALK, PUNCH, KICK)}
    query = library[PUNCH][120:181].resampled(120)
    match = retrieve_part(query, library, "left.arm")
    assert match.clip == PUNCH
    assert abs(match.start - 120) <= 1
    assert match.cost < 0.05


def test_several_parts_come_from_one_precomputed_library_each_from_its_own_clip(mocap):
    library = {name: mocap(name) for name in (WALK, PUNCH, KICK)}
    features = FeatureLibrary.build(library, library[WALK].fps)
    # a query whose arms punch while its legs walk: the walk's legs under the punch's arms
    punch, walk = library[PUNCH][120:181], library[WALK][40:101]
    lower = find_rig(walk).lower_body_mask(walk.skeleton)[None, :, None]
    query = punch.with_arrays(rotations=np.where(lower, walk.rotations, punch.rotations),
                              positions=np.where(lower, walk.positions, punch.positions))
    matches = retrieve_parts(query, features, ["upper", "lower"])
    assert (matches["upper"].clip, matches["upper"].start) == (PUNCH, 120)
    assert (matches["lower"].clip, matches["lower"].start) == (WALK, 40)


def test_a_library_built_at_another_rate_is_refused(mocap):
    library = {WALK: mocap(WALK)}
    features = FeatureLibrary.build(library, 60)
    with pytest.raises(ValueError, match="build it at the query's rate"):
        retrieve_parts(mocap(WALK)[:30], features, ["lower"])


def test_an_unknown_part_is_refused_naming_the_parts(mocap):
    with pytest.raises(ValueError, match="left.arm"):
        retrieve_part(mocap(WALK), {"walk": mocap(WALK)}, "arms")


def test_rig_found_once_can_be_passed_in(mocap):
    walk = mocap(WALK)
    a = relational_features(walk, find_rig(walk))
    b = relational_features(walk)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_a_skeleton_without_arms_is_refused_saying_how_to_name_them(mocap):
    walk = mocap(WALK)
    skeleton = walk.skeleton
    keep = [j for j, n in enumerate(skeleton.names)
            if n in ("joint_Root", "Hips") or n.startswith(("UpperLeg", "LowerLeg", "Foot", "Toes"))]
    parents = [-1] + [keep.index(skeleton.parents[j]) for j in keep[1:]]
    legs_only = Skeleton(tuple(skeleton.names[j] for j in keep), parents, skeleton.offsets[keep])
    motion = Motion(legs_only, walk.rotations[:, keep], walk.positions[:, keep], walk.fps)
    with pytest.raises(ValueError, match="overrides"):
        relational_features(motion)


def test_thresholds_move_where_a_feature_turns_true(mocap):
    walk = mocap(WALK)
    usual = relational_features(walk)["left.knee_bent"]
    stricter = relational_features(walk, thresholds=Thresholds(knee_bent_deg=55.0))["left.knee_bent"]
    assert stricter.sum() < usual.sum() and not (stricter & ~usual).any()


WALK_STYLES = ["active", "angry", "childish", "feminine", "happy", "masculinity", "musical", "normal",
               "not-confident", "proud", "sad"]


@pytest.mark.parametrize("style", WALK_STYLES)
def test_knees_bend_and_stretch_in_every_walking_style(mocap, style):
    features = relational_features(mocap(f"bandai1/walk_{style}_001"))
    for side in ("left", "right"):
        bent = features[f"{side}.knee_bent"]
        assert np.count_nonzero(np.diff(bent.astype(int)) == 1) >= 3, side
        assert features[f"{side}.foot_in_front"].any() and not features[f"{side}.foot_in_front"].all()


# --- retrieval of segments of another length (4.2.1) -----------------------------------


def plain_scaled_mismatches(query, library, scale):
    offsets = [int(round(i * scale)) for i in range(len(query))]
    return np.array([sum(query[i, k] != library[s + offsets[i], k] for i in range(len(query))
                         for k in range(query.shape[1]))
                     for s in range(len(library) - offsets[-1])])


@pytest.mark.parametrize("scale", [0.7, 0.84, 1.0, 1.19, 1.5])
@pytest.mark.parametrize("bits", [3, 14])  # (packed into integers up to PACKED_BITS, compared bit by bit beyond)
def test_a_scaled_window_compares_the_nearest_library_frames_as_a_plain_loop_does(scale, bits):
    rng = np.random.default_rng(int(scale * 100) + bits)
    query, library = rng.random((9, bits)) < 0.5, rng.random((30, bits)) < 0.5
    np.testing.assert_array_equal(window_mismatches(query, library, scale),
                                  plain_scaled_mismatches(query, library, scale))


def test_a_slower_playing_of_a_library_segment_is_retrieved_as_the_longer_segment_it_plays(mocap):
    library = {name: mocap(name) for name in (WALK, PUNCH, KICK)}
    # 72 frames played over 61: the query is 2^(1/4) (one of SEGMENT_SCALES) times faster
    segment = library[PUNCH][100:172]
    query = segment[np.rint(np.arange(61) * 71 / 60).astype(int)]
    match = retrieve_part(query, library, "upper")
    # (a hand played faster is faster: a few speed bits differ, so the window may sit a frame or two off)
    assert match.clip == PUNCH and abs(match.start - 100) <= 3
    assert match.length == 72
    assert match.cost < retrieve_part(query, library, "upper", scales=(1.0,)).cost


# --- segment alignment (4.2.1) ------------------------------------------------------


def test_feature_changes_mark_each_bit_turning_on_and_off():
    bits = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], bool)
    np.testing.assert_array_equal(feature_changes(bits), [[0, 0], [1, 0], [0, -1], [-1, 0]])


def test_feature_poses_pair_in_order_each_with_the_same_change_of_the_same_bit():
    rng = np.random.default_rng(3)
    query = np.repeat(rng.random((12, 4)) < 0.5, 5, axis=0)  # 60 frames, bits held 5 frames each
    segment = query[np.rint(np.arange(80) * 59 / 79).astype(int)]  # the same, played slower
    pairs = paired_feature_poses(query, segment)
    assert len(pairs) >= 8
    assert np.all(np.diff(pairs, axis=0) > 0), "pairs strictly in order in both"
    q, s = feature_changes(query), feature_changes(segment)
    for a, b in pairs:
        assert ((q[a] == s[b]) & (q[a] != 0)).any()
    # each query pose pairs with the frame the slower playing shows it at
    np.testing.assert_allclose(pairs[:, 1], pairs[:, 0] * 79 / 59, atol=1.0)


def test_the_bezier_time_curve_is_monotone_and_passes_through_the_paired_feature_poses():
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = np.concatenate([[0], np.sort(rng.choice(np.arange(1, 59), 8, replace=False)), [59]])
        y = np.concatenate([[0], np.sort(rng.choice(np.arange(1, 89), 8, replace=False)), [89]])
        knots = np.stack([x, y], axis=1)
        np.testing.assert_allclose(monotone_time_curve(knots, x), y, atol=1e-9)
        dense = monotone_time_curve(knots, np.linspace(0, 59, 5000))
        assert np.all(np.diff(dense) >= -1e-12)
        assert dense[0] == 0 and abs(dense[-1] - 89) < 1e-9


def test_a_straight_line_of_knots_gives_a_uniform_time_map():
    knots = np.array([[0, 0], [10, 15], [20, 30], [40, 60]])
    np.testing.assert_allclose(monotone_time_curve(knots, np.arange(41)), 1.5 * np.arange(41), atol=1e-9)


def test_a_time_curve_through_knots_out_of_order_is_refused():
    with pytest.raises(ValueError, match="increasing"):
        monotone_time_curve(np.array([[0, 0], [5, 7], [4, 9]]), np.arange(5))


# --- eq. (1) ---------------------------------------------------------------------------


def test_eq1_gives_the_query_mean_and_standard_deviation_per_axis():
    rng = np.random.default_rng(11)
    retrieved, query = rng.normal(0.3, 0.2, (50, 3)), rng.normal(-0.1, 0.05, (50, 3))
    s = standardized_angles(retrieved, query)
    np.testing.assert_allclose(s.mean(axis=0), query.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(s.std(axis=0), query.std(axis=0), atol=1e-12)
    # the retrieved local variation is kept, scaled: S is an increasing affine map of R per axis
    assert all(np.corrcoef(s[:, k], retrieved[:, k])[0, 1] > 1 - 1e-12 for k in range(3))


def test_eq1_moves_an_axis_the_retrieved_motion_holds_still_to_the_query_mean_only():
    retrieved = np.zeros((20, 3))
    retrieved[:, 0] = np.linspace(0, 1, 20)
    query = np.random.default_rng(2).normal(0.5, 0.1, (20, 3))
    s = standardized_angles(retrieved, query)
    np.testing.assert_allclose(s[:, 1:], np.broadcast_to(query[:, 1:].mean(axis=0), (20, 2)), atol=1e-12)


def test_juncture_angles_do_not_depend_on_the_turn_the_motion_starts_on():
    angles = np.stack([np.linspace(3.0, 3.4, 30), np.zeros(30), np.zeros(30)], axis=1)  # across +-pi
    a = juncture_angles(quat.from_euler(angles, EULER_ORDER), quat.identity())
    assert np.all(np.abs(np.diff(a[:, 0])) < 0.1), "unwrapped along time"
    np.testing.assert_allclose(np.cos(a), np.cos(angles), atol=1e-12)


# --- assembly (4.2) --------------------------------------------------------------------

PUNCH_FRAMES = slice(120, 181)   # two jabs of the left hand in bandai1's punch
WALK_FRAMES = slice(40, 101)     # two steps of the normal walk
LIBRARY = ["bandai1/punch_normal_002", KICK, "bandai1/walk_happy_001", "bandai1/walk_angry_001",
           "bandai1/slash_normal_001", "bandai1/run_normal_001", "bandai1/bye_normal_001"]
# the features the assembled arms keep from the retrieved segment: those measured in the chest's
# frame (hand_raised is against the world's up, which the query's walking posture tilts)
CHEST_FEATURES = [k for k in PARTS["upper"] if not k.endswith("hand_raised")]


def punch_over_walk(mocap, change=lambda m: m):
    """A crude query (a bandai1 punch's upper-body rotations copied over a walk) and a library
    without those punch frames. bandai1 has two punch takes, one left-handed (this one) and one
    right-handed, so the library's left-handed jabs are the same take's other jabs, the query's
    frames and half a second either side cut out; the right-handed take, a kick, walks, a
    slash, a run and a wave are there too."""
    walk, punch = change(mocap(WALK))[WALK_FRAMES], change(mocap(PUNCH))
    upper = find_rig(walk).upper_body_mask(walk.skeleton)[None, :, None]
    query = walk.with_arrays(rotations=np.where(upper, punch[PUNCH_FRAMES].rotations, walk.rotations))
    library = {name: change(mocap(name)) for name in LIBRARY}
    library["punch before"], library["punch after"] = punch[:PUNCH_FRAMES.start - 15], punch[PUNCH_FRAMES.stop + 15:]
    return query, library


def skate(motion):
    rig, up = find_rig(motion), motion.skeleton.up
    feet = foot_positions(motion, rig)
    return gap_skate(feet, 0, (0, motion.n_frames - 1), foot_levels(feet @ up, motion.fps), up, motion.fps)


@pytest.fixture(scope="module")
def punch_assembly(mocap):
    query, library = punch_over_walk(mocap)
    return query, library, assemble(query, {"upper": library})


def test_the_upper_body_retrieved_for_a_punch_over_a_walk_is_a_punch(punch_assembly):
    _, _, result = punch_assembly
    assert result.matches["upper"].clip in ("punch before", "punch after")
    assert result.matches["upper"].bits < 0.1


def test_assembling_the_upper_body_leaves_the_walks_legs_and_pelvis_bit_for_bit(punch_assembly):
    query, _, result = punch_assembly
    kept = ~part_joints(query.skeleton, find_rig(query), "upper")
    assert np.array_equal(result.motion.rotations[:, kept], query.rotations[:, kept])
    assert np.array_equal(result.motion.positions, query.positions)
    # so the feet skate exactly as the walk's own (the feet-planted measure)
    assert skate(result.motion) == pytest.approx(skate(query), abs=1e-9)


def uniform_time_map(query, segment):
    """The time map without feature poses: the segment played evenly over the query's frames."""
    n, L = len(query), len(segment)
    return np.arange(n) * (L - 1) / (n - 1), np.array([[0, 0], [n - 1, L - 1]])


def test_the_arms_follow_the_retrieved_punch_time_aligned_on_feature_poses(punch_assembly, monkeypatch):
    query, library, result = punch_assembly
    match = result.matches["upper"]
    clip = library[match.clip]
    aligned = np.rint(match.start + result.time_maps["upper"]).astype(int)
    out, own, wanted = relational_features(result.motion), relational_features(clip), relational_features(query)
    agree = np.all([out[k] == own[k][aligned] for k in CHEST_FEATURES], axis=0)
    assert agree.mean() >= 0.9, "the arms are the punch's"
    # what the alignment buys: the arms' features change when the query's do. Played evenly (the same
    # segment, no feature poses), they agree with the query's on fewer frames (measured 0.951 against 0.885)
    timing = np.all([out[k] == wanted[k] for k in CHEST_FEATURES], axis=0).mean()
    monkeypatch.setattr("core.assemble.segment_time_map", uniform_time_map)
    even = assemble(query, {"upper": library})
    assert even.matches["upper"] == match
    even_out = relational_features(even.motion)
    even_timing = np.all([even_out[k] == wanted[k] for k in CHEST_FEATURES], axis=0).mean()
    assert timing >= 0.93 and timing - even_timing >= 0.04, (timing, even_timing)
    # the time map goes through the paired feature poses
    knots = result.knots["upper"]
    assert len(knots) >= 6
    np.testing.assert_allclose(result.time_maps["upper"][knots[:, 0]], knots[:, 1], atol=1e-9)


def test_the_juncture_has_the_querys_mean_and_standard_deviation_per_euler_axis(punch_assembly):
    query, _, result = punch_assembly
    rig = find_rig(query)
    junctures = juncture_joints(query.skeleton, part_joints(query.skeleton, rig, "upper"))
    assert list(junctures) == [rig.spine[0]]
    j = junctures[0]
    frame = anatomical_frame(query, rig)
    out = juncture_angles(result.motion.rotations[:, j], frame)
    want = juncture_angles(query.rotations[:, j], frame)
    np.testing.assert_allclose(out.mean(axis=0), want.mean(axis=0), atol=1e-9)
    np.testing.assert_allclose(out.std(axis=0), want.std(axis=0), atol=1e-9)


def test_the_anatomical_frame_is_right_to_left_up_and_forwards(mocap):
    walk = mocap(WALK)
    rig = find_rig(walk)
    axes = quat.to_matrix(anatomical_frame(walk, rig))
    np.testing.assert_allclose(axes.T @ axes, np.eye(3), atol=1e-12)
    assert np.linalg.det(axes) == pytest.approx(1.0)
    # (bandai's root joint is not turned: up is the file's Y)
    np.testing.assert_allclose(axes[:, 1], walk.skeleton.up, atol=1e-6)
    rest = walk.skeleton.rest_positions()
    across = rest[rig.left_leg.hip] - rest[rig.right_leg.hip]
    assert across @ axes[:, 0] == pytest.approx(np.linalg.norm(across - (across @ axes[:, 1]) * axes[:, 1]))


def assert_same_matches(result, expected):
    """The same clips, windows and Boolean costs; the measures' costs to rounding."""
    assert {p: (m.clip, m.start, m.length, m.bits) for p, m in result.items()} == \
        {p: (m.clip, m.start, m.length, m.bits) for p, m in expected.items()}
    for part, m in result.items():
        assert m.cost == pytest.approx(expected[part].cost, abs=1e-12)


def re_expressed(motion, rotation):
    """The same motion in other axes: every offset and the root's path turned by ``rotation``, every
    local rotation conjugated by it (the pose in the new axes), the up axis turned, BVH channels dropped
    (as an armature's motion has none). Global positions are then ``rotation`` times the old ones."""
    skeleton = motion.skeleton
    turned = replace(skeleton, offsets=quat.mul_vec(rotation, skeleton.offsets), channels=(),
                     end_sites={j: quat.mul_vec(rotation, o) for j, o in skeleton.end_sites.items()},
                     up=quat.mul_vec(rotation, skeleton.up))
    rotations = quat.mul(quat.mul(rotation, motion.rotations), quat.inv(rotation))
    return Motion(turned, rotations, quat.mul_vec(rotation, motion.positions), motion.fps)


AXES = {"blender z up": quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2),
        "oblique": quat.from_axis_angle(np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0), 0.7)}


@pytest.mark.parametrize("axes", sorted(AXES))
@pytest.mark.parametrize("part", ["upper", "left.arm", "lower"])
def test_an_assembly_in_other_axes_is_the_same_assembly_in_those_axes(mocap, axes, part):
    rotation = AXES[axes]
    query, library = punch_over_walk(mocap)
    turned_query, turned_library = punch_over_walk(mocap, lambda m: re_expressed(m, rotation))
    expected = assemble(query, {part: library}, contacts=None)
    result = assemble(turned_query, {part: turned_library}, contacts=None)
    assert_same_matches(result.matches, expected.matches)
    np.testing.assert_allclose(result.time_maps[part], expected.time_maps[part], atol=1e-9)
    back = quat.mul(quat.mul(quat.inv(rotation), result.motion.rotations), rotation)
    a = expected.motion.rotations
    assert np.minimum(np.abs(back - a).max(axis=-1), np.abs(back + a).max(axis=-1)).max() < 1e-9, "(up to sign)"
    # and eq. (1) holds exactly at every juncture, in the turned skeleton's own anatomical frame
    skeleton, rig = turned_query.skeleton, find_rig(turned_query)
    frame = anatomical_frame(turned_query, rig)
    for j in juncture_joints(skeleton, part_joints(skeleton, rig, part)):
        out = juncture_angles(result.motion.rotations[:, j], frame)
        want = juncture_angles(turned_query.rotations[:, j], frame)
        np.testing.assert_allclose(out.mean(axis=0), want.mean(axis=0), atol=1e-9)
        np.testing.assert_allclose(out.std(axis=0), want.std(axis=0), atol=1e-9)


def test_the_same_assembly_renamed_in_metres_z_up(mocap, punch_assembly):
    query, _, expected = punch_assembly
    def change(m):
        m = m.renamed(CMU_NAMES).scaled(0.01)
        return m.transformed(quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2))
    changed, library = punch_over_walk(mocap, change)
    result = assemble(changed, {"upper": library})
    assert_same_matches(result.matches, expected.matches)
    np.testing.assert_allclose(result.time_maps["upper"], expected.time_maps["upper"], atol=1e-9)
    # local rotations below the root are the same numbers
    np.testing.assert_allclose(result.motion.rotations[:, 1:], expected.motion.rotations[:, 1:], atol=1e-9)
    assert skate(result.motion) == pytest.approx(skate(changed), abs=1e-9)


def test_a_swapped_lower_body_keeps_its_feet_planted(mocap):
    walk = mocap(WALK)[WALK_FRAMES]
    # (the stage, not retrieval, is under test: two clips, of which the angry walk's legs are taken)
    library = {name: mocap(name) for name in ("bandai1/walk_angry_001", KICK)}
    held = assemble(walk, {"lower": library})
    sliding = assemble(walk, {"lower": library}, contacts=None)
    assert held.matches["lower"].clip.startswith("bandai1/walk")
    # the legs come from the other walk, time-aligned (not the query's legs)
    legs = part_joints(walk.skeleton, find_rig(walk), "lower")
    assert not np.allclose(held.motion.rotations[:, legs], walk.rotations[:, legs], atol=1e-3)
    # the same legs with the contact stage left out slide with the walk's pelvis; held, most of it is gone
    assert skate(held.motion) < 0.3 * skate(sliding.motion)  # (measured 8.0 against 57.9 cm/s)
    # Not all: against the walk's own 4.1 cm/s (and the retrieved segment's, played along the time map,
    # 3.7) the held feet skate 8.0, 1.95 times the walk's. The held foot's heading is held, and while
    # heel and toe are both down its pitch too (the walk's pelvis tilt under the source's leg pitched
    # it about the held ankle and slid its toe: 11.3, 2.7 times, before). Nearly all that is left is
    # a landing in the first frames, which the measure counts down while it still moves (two samples
    # at about 170 cm/s); the held feet's ankle and toe samples are mostly under 3 cm/s.
    assert skate(held.motion) < 2.2 * skate(walk)
    # the upper body stays the walk's
    upper = part_joints(walk.skeleton, find_rig(walk), "upper")
    assert np.array_equal(held.motion.rotations[:, upper], walk.rotations[:, upper])


def test_a_library_clip_at_another_rate_is_resampled_and_its_match_given_in_its_own_frames(mocap, punch_assembly):
    query, library, expected = punch_assembly
    clip = expected.matches["upper"].clip
    fast = dict(library)
    fast[clip] = library[clip].resampled(60)
    match = assemble(query, {"upper": fast}).matches["upper"]
    assert match.clip == clip
    assert abs(match.start - 2 * expected.matches["upper"].start) <= 2
    assert abs(match.length - 2 * expected.matches["upper"].length) <= 2, "the segment's 60 fps frames"


def test_a_query_inside_its_own_library_is_left_out_not_retrieved(mocap, punch_assembly):
    query, library, expected = punch_assembly
    with_itself = dict(library, itself=query)
    result = assemble(query, {"upper": with_itself})
    assert result.left_out == {"upper": ("itself",)} and expected.left_out == {}
    assert result.matches == expected.matches
    assert np.array_equal(result.motion.rotations, expected.motion.rotations)
    # the same poses at another rate, or another motion of as many frames, are clips like any other
    assert not is_the_query(query.resampled(60), query) and not is_the_query(mocap(WALK)[:query.n_frames], query)
    with pytest.raises(ValueError, match="holds only the query itself"):
        assemble(query, {"upper": {"itself": query}})


def test_library_clips_at_another_scale_or_with_legs_up_are_left_out_with_a_warning(punch_assembly):
    """A folder may hold a clip in another unit, or one exported with its legs turned up: either
    would be retrieved at the wrong size or upside down. They are left out, the warning says why,
    and the assembly is the one the library without them gives."""
    query, library, expected = punch_assembly
    odd = dict(library, **{"punch in metres": library["punch before"].scaled(0.01),
                           "punch legs up": legs_flipped_up(library["punch after"])})
    result = assemble(query, {"upper": odd})
    assert result.matches == expected.matches
    assert np.array_equal(result.motion.rotations, expected.motion.rotations)
    assert len(result.warnings) == 2 and expected.warnings == ()
    assert result.warnings[0].startswith("library clip 'punch in metres' has bones 0.01 times as long as those of "
                                         "the query")
    assert result.warnings[1].startswith("library clip 'punch legs up': the legs point up")
    assert all(w.endswith("; left out of the library of upper") for w in result.warnings)


def test_a_library_with_no_clip_at_the_querys_scale_is_refused(punch_assembly):
    query, library, _ = punch_assembly
    with pytest.raises(ValueError, match="no clip of the library of upper can stand beside the query: library clip "
                                         "'kick' has bones 100 times as long"):
        assemble(query, {"upper": {"kick": library["punch before"].scaled(100.0)}})


def test_a_query_whose_legs_point_up_is_refused(punch_assembly):
    query, library, _ = punch_assembly
    with pytest.raises(RigError, match="the legs point up"):
        assemble(legs_flipped_up(query), {"upper": library})


def test_a_one_frame_query_pairs_no_feature_poses(mocap, punch_assembly):
    query, library, _ = punch_assembly
    result = assemble(query[:1], {"upper": library})
    assert result.motion.n_frames == 1 and result.feature_poses("upper") == 0


def test_the_output_has_the_querys_skeleton_rate_and_frames(punch_assembly):
    query, _, result = punch_assembly
    assert result.motion.skeleton is query.skeleton
    assert (result.motion.fps, result.motion.n_frames) == (query.fps, query.n_frames)


# --- bad input ---------------------------------------------------------------------------


def test_a_library_clip_of_another_skeleton_is_refused_naming_it(mocap):
    walk = mocap(WALK)[WALK_FRAMES]
    other = mocap(KICK).renamed({"Hand_L": "LeftHand"})
    with pytest.raises(ValueError, match="'the odd one'.*another skeleton"):
        assemble(walk, {"upper": {"kick": mocap(KICK), "the odd one": other}})


def test_unknown_overlapping_or_missing_parts_are_refused_saying_what_to_give(mocap):
    walk = mocap(WALK)[WALK_FRAMES]
    library = {"kick": mocap(KICK)}
    with pytest.raises(ValueError, match="left.arm"):
        assemble(walk, {"arms": library})
    with pytest.raises(ValueError, match="overlap"):
        assemble(walk, {"upper": library, "left.arm": library})
    with pytest.raises(ValueError, match="at least one body part"):
        assemble(walk, {})
    with pytest.raises(ValueError, match="empty"):
        assemble(walk, {"upper": {}})
    features_only = FeatureLibrary(walk.fps, FeatureLibrary.build(library, walk.fps).features, {"kick": walk.fps})
    with pytest.raises(ValueError, match="holds the clips too|so that it holds"):
        assemble(walk, {"upper": features_only})


def test_parts_are_the_joints_their_names_say(mocap):
    walk = mocap(WALK)
    rig, skeleton = find_rig(walk), walk.skeleton
    names = lambda part: {skeleton.names[j] for j in np.flatnonzero(part_joints(skeleton, rig, part))}  # noqa: E731
    assert names("left.arm") == {"Shoulder_L", "UpperArm_L", "LowerArm_L", "Hand_L"}
    assert names("right.leg") == {"UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"}
    assert names("upper") == {"Spine", "Chest", "Neck", "Head"} | names("left.arm") | names("right.arm")
    assert names("lower") == names("left.leg") | names("right.leg")
    assert "Hips" not in names("upper") | names("lower")


# --- the command line ----------------------------------------------------------------------

BANDAI1 = Path(__file__).resolve().parents[2].parent / "shared" / "mocap" / "bandai1"


def library_folder(tmp_path, names):
    folder = tmp_path / "library"
    folder.mkdir()
    for name in names:
        (folder / f"{name}.bvh").symlink_to(BANDAI1 / f"{name}.bvh")
    return folder


def test_the_assemble_command_writes_the_assembly_and_its_report(mocap, tmp_path, capsys):
    folder = library_folder(tmp_path, ["punch_normal_002", "kick_normal_001", "walk_angry_001"])
    query = tmp_path / "query.bvh"
    query.write_text(format_bvh(mocap(WALK)[WALK_FRAMES]))
    out, report = tmp_path / "out.bvh", tmp_path / "report.json"
    assert main(["assemble", str(query), "--part", f"upper={folder}", "--part", f"lower={folder}", "-o", str(out),
                 "--report", str(report)]) == 0
    written = read_bvh(out)
    assert written.n_frames == WALK_FRAMES.stop - WALK_FRAMES.start
    assert written.skeleton.names == mocap(WALK).skeleton.names
    parts = json.loads(report.read_text())["parts"]
    assert set(parts) == {"upper", "lower"}
    assert set(parts["upper"]) == {"clip", "start", "length", "frames", "cost", "bits", "feature_poses", "left_out",
                                   "pieces"}
    assert parts["lower"]["clip"] == "walk_angry_001.bvh" and parts["lower"]["left_out"] == []
    assert "wrote" in capsys.readouterr().out


def test_the_assemble_command_leaves_the_query_out_of_its_own_library_and_warns(mocap, tmp_path, capsys):
    folder = library_folder(tmp_path, ["punch_normal_002", "kick_normal_001"])
    query = folder / "query.bvh"
    query.write_text(format_bvh(mocap(WALK)[WALK_FRAMES]))
    report = tmp_path / "report.json"
    assert main(["assemble", str(query), "--part", f"upper={folder}", "-o", str(tmp_path / "out.bvh"),
                 "--report", str(report)]) == 0
    upper = json.loads(report.read_text())["parts"]["upper"]
    assert upper["left_out"] == ["query.bvh"] and upper["clip"] != "query.bvh"
    assert "query.bvh in the library of upper is the query itself; left out" in capsys.readouterr().err


def test_the_assemble_command_takes_the_joint_roles_of_map(mocap, tmp_path):
    """--map exchanging the arms: the left arm replaced is the one the map names, bones Shoulder_R and below."""
    folder = library_folder(tmp_path, ["punch_normal_002", "kick_normal_001"])
    walk = mocap(WALK)[WALK_FRAMES]
    query = tmp_path / "query.bvh"
    query.write_text(format_bvh(walk))
    roles = [f"{side}.{role}={bone}_{other}" for side, other in (("left", "R"), ("right", "L"))
             for role, bone in (("clavicle", "Shoulder"), ("shoulder", "UpperArm"), ("elbow", "LowerArm"),
                                ("wrist", "Hand"))]
    out = tmp_path / "out.bvh"
    assert main(["assemble", str(query), "--part", f"left.arm={folder}", "-o", str(out),
                 *(a for r in roles for a in ("--map", r))]) == 0
    written, read = read_bvh(out), read_bvh(query)
    names = written.skeleton.names
    changed = {names[j] for j in range(len(names))
               if quat.angle(written.rotations[:, j], read.rotations[:, j]).max() > 1e-3}
    assert changed and all(name.endswith("_R") for name in changed), sorted(changed)


def test_the_assemble_command_refuses_to_write_over_an_input(mocap, tmp_path, capsys):
    folder = library_folder(tmp_path, ["kick_normal_001"])
    query = tmp_path / "query.bvh"
    query.write_text(format_bvh(mocap(WALK)[WALK_FRAMES]))
    before = query.read_text()
    for output in (query, folder / "kick_normal_001.bvh"):
        assert main(["assemble", str(query), "--part", f"upper={folder}", "-o", str(output)]) == 2
        assert "writing there would destroy it" in capsys.readouterr().err
    assert query.read_text() == before


@pytest.mark.parametrize("part, message", [("uper", "unknown body part 'uper'; give one of left.arm"),
                                           ("upper", "no .bvh files"),
                                           ("upper=", "expects PART=LIBRARY_DIR")])
def test_the_assemble_command_says_what_to_fix_in_a_bad_part(mocap, tmp_path, capsys, part, message):
    empty = tmp_path / "empty"
    empty.mkdir()
    query = tmp_path / "query.bvh"
    query.write_text(format_bvh(mocap(WALK)[WALK_FRAMES]))
    spec = part if part.endswith("=") else f"{part}={empty}"
    assert main(["assemble", str(query), "--part", spec, "-o", str(tmp_path / "out.bvh")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.bvh").exists()


def test_the_assemble_command_refuses_a_library_clip_of_another_skeleton_naming_it(mocap, tmp_path, capsys):
    folder = library_folder(tmp_path, ["kick_normal_001"])
    (folder / "cmu.bvh").write_text(format_bvh(mocap(KICK).renamed(CMU_NAMES)))
    query = tmp_path / "query.bvh"
    query.write_text(format_bvh(mocap(WALK)[WALK_FRAMES]))
    assert main(["assemble", str(query), "--part", f"upper={folder}", "-o", str(tmp_path / "out.bvh")]) == 2
    err = capsys.readouterr().err
    assert "'cmu.bvh'" in err and "another skeleton" in err


@pytest.mark.parametrize("part", ["left.arm", "right.arm", "lower"])
def test_every_juncture_of_an_arm_or_of_the_legs_has_the_querys_statistics_before_the_contact_stage(mocap, part):
    query, library = punch_over_walk(mocap)
    result = assemble(query, {part: library}, contacts=None)
    skeleton = query.skeleton
    junctures = juncture_joints(skeleton, part_joints(skeleton, find_rig(query), part))
    assert len(junctures) == (2 if part == "lower" else 1)
    frame = anatomical_frame(query, find_rig(query))
    for j in junctures:
        out = juncture_angles(result.motion.rotations[:, j], frame)
        want = juncture_angles(query.rotations[:, j], frame)
        np.testing.assert_allclose(out.mean(axis=0), want.mean(axis=0), atol=1e-9)
        np.testing.assert_allclose(out.std(axis=0), want.std(axis=0), atol=1e-9)


def test_a_replaced_leg_leaves_the_pelvis_and_the_other_leg_the_query_s_bit_for_bit(mocap):
    """The pelvis stays the query's and a leg left as the query's is the query's, bit for bit,
    while the replaced leg's feet are held (the review of the legs issue's reach rule found
    the body brought down to the held feet in assembly too, the other leg bent with it)."""
    walk = mocap(WALK)[WALK_FRAMES]
    library = {name: mocap(name) for name in ("bandai1/walk_angry_001", "bandai1/walk_happy_001", KICK)}
    rig = find_rig(walk)
    for part, kept_side in (("left.leg", "R"), ("lower", None)):
        out = assemble(walk, {part: library}).motion
        assert np.array_equal(out.positions[:, rig.pelvis], walk.positions[:, rig.pelvis]), part
        if kept_side:
            leg = rig.leg(kept_side)
            joints = [leg.hip, leg.knee, leg.ankle, leg.toe]
            assert np.array_equal(out.rotations[:, joints], walk.rotations[:, joints]), part


# --- issue 24, item 8: what the Boolean features cannot tell apart ------------------------------


def middle(motion, frames=61):
    first = (motion.n_frames - frames) // 2
    return motion[first:first + frames]


@pytest.mark.parametrize("clip", [WALK, "bandai1/run_happy_001"])
@pytest.mark.parametrize("change", list(EXACT_CHANGES))
def test_speed_swing_and_pose_do_not_depend_on_names_units_up_axis_or_placement(mocap, clip, change):
    from core.assemble import continuous_features
    measures, poses = continuous_features(mocap(clip))
    got_measures, got_poses = continuous_features(EXACT_CHANGES[change](mocap(clip)))
    for key in measures:
        np.testing.assert_allclose(got_measures[key], measures[key], atol=1e-9, err_msg=key)
    for key in poses:
        np.testing.assert_allclose(got_poses[key], poses[key], atol=1e-9, err_msg=key)


def test_speed_and_swing_at_60_fps_are_those_at_30_fps(mocap):
    """Per second and over a window in seconds: the rate does not change them (but for the
    differences' shorter step)."""
    from core.assemble import continuous_features
    original = mocap("bandai1/run_happy_001")
    expected, _ = continuous_features(original)
    got, _ = continuous_features(original.resampled(2 * original.fps))
    for key in expected:
        shared = got[key][::2][: len(expected[key])]
        inner = slice(5, len(shared) - 5)
        assert np.median(np.abs(shared[inner] - expected[key][inner])) < 0.02 * np.median(expected[key]) + 1e-3, key


def test_a_run_carries_its_arms_faster_than_a_walk_in_leg_lengths_per_second(mocap):
    from core.assemble import continuous_features
    walk, _ = continuous_features(mocap(WALK))
    run, _ = continuous_features(mocap("bandai1/run_happy_001"))
    for side in ("left", "right"):
        assert np.median(run[f"{side}.arm.carried_speed"]) > 1.3 * np.median(walk[f"{side}.arm.carried_speed"])


def test_arms_whose_bits_never_change_are_taken_from_the_nearest_pose_not_the_first_clip():
    """Bits that tie everywhere leave retrieval to the first clip by name; the pose decides."""
    from core.assemble import PartFrames, best_window
    rng = np.random.default_rng(7)
    n = 20
    poses = rng.normal(size=(n, 6))
    query = PartFrames(np.zeros((n, 5), bool), np.ones((n, 2)), poses, np.array([0.25, 0.05]))
    far = PartFrames(np.zeros((40, 5), bool), np.ones((40, 2)), rng.normal(size=(40, 6)) + 3.0, query.floors)
    near_poses = rng.normal(size=(40, 6)) + 3.0
    near_poses[11:11 + n] = poses + 0.01
    near = PartFrames(np.zeros((40, 5), bool), np.ones((40, 2)), near_poses, query.floors)
    match = best_window(query, {"a dance": far, "b walk": near})
    assert (match.clip, match.start, match.cost, match.bits) == ("b walk", 11, 0.0, 0.0)


@pytest.mark.parametrize("query", ["bandai1/walk_sad_001", "bandai1/walk_angry_002"])
def test_a_walks_arms_come_from_a_walk_not_from_the_first_clip_whose_bits_match(mocap, query):
    """The walks' arms hang and swing without a bit changing, as a bow's do: with bits alone a bow
    (first by name) matched at cost 0."""
    library = {name: mocap(name) for name in ("bandai1/bow_angry_001", "bandai1/bow_normal_001",
                                              "bandai1/dance-short_normal_001", WALK, "bandai1/walk_happy_001",
                                              "bandai1/walk-back_not-confident_001")}
    matches = retrieve_parts(middle(mocap(query)), library, ["upper", "right.arm"])
    for part, match in matches.items():
        assert "walk" in match.clip, (part, match)


def test_a_runs_upper_body_comes_from_a_run_not_a_walk(mocap):
    """bandai1's normal run: with bits alone its arms matched the normal walk's (cost 0.121)."""
    library = {name: mocap(name) for name in (
        "bandai1/walk_happy_001", "bandai1/walk_angry_001", WALK, "bandai1/walk_sad_001", "bandai1/run_happy_001",
        "bandai1/run_sad_001", "bandai1/run_musical_001", "bandai1/run_proud_001", "bandai1/run_feminine_001")}
    match = retrieve_part(mocap("bandai1/run_normal_001"), library, "upper")
    assert "/run_" in match.clip, match


def test_a_part_none_of_whose_feature_poses_pair_is_warned_of(mocap):
    """A query holding one pose has no feature pose: the segment plays at an even speed, and
    nothing but the measures and the pose chose it; the user is told."""
    still = mocap(WALK)[np.full(40, 50)]
    result = assemble(still, {"upper": {name: mocap(name) for name in (PUNCH, "bandai1/walk_happy_001")}})
    assert result.feature_poses("upper") == 0
    assert any("no feature pose of the upper" in w and result.matches["upper"].clip in w for w in result.warnings)
    # a query whose poses pair is not warned of
    _, _, punch = punch_assembly_result(mocap)
    assert punch.feature_poses("upper") > 0 and not any("feature pose" in w for w in punch.warnings)


def punch_assembly_result(mocap):
    query, library = punch_over_walk(mocap)
    return query, library, assemble(query, {"upper": library})


# --- issue 24, item 9: a query longer than the library's clips -------------------------------------


def test_a_query_the_library_can_hold_is_assembled_whole():
    from core.assemble import assembly_pieces
    assert assembly_pieces(61, [150, 200, 40], 30) == [(0, 61)]
    # the smallest scale (2 ** -0.5) lets a 125-frame clip hold a 170-frame query's window
    assert assembly_pieces(170, [125, 125, 500], 30) == [(0, 170)]
    assert len(assembly_pieces(170, [110, 110, 500], 30)) > 1


def test_snippets_too_short_for_a_piece_do_not_cut_a_query_longer_clips_can_hold():
    """The review of issue 24, item 9: the plain median clip decided, so three 8-frame snippets beside
    two whole walks cut a 195-frame walk into 33 pieces of 8 frames."""
    from core.assemble import assembly_pieces
    assert assembly_pieces(195, [213, 347, 8, 8, 8], 30) == [(0, 195)]
    # at any rate: the shortest piece is in seconds
    assert assembly_pieces(780, [852, 1388, 32, 32, 32], 120) == [(0, 780)]
    # snippets a second long count, by their frames: fewer frames than the walks, the walks decide
    assert assembly_pieces(195, [213, 347, 30, 30, 30], 30) == [(0, 195)]
    # many of them hold more frames than the two walks: pieces, each as long as they are
    pieces = assembly_pieces(195, [213, 347] + [40] * 20, 30)
    assert len(pieces) > 1 and {stop - first for first, stop in pieces} <= set(range(30, 41))


def test_no_piece_is_shorter_than_about_a_stride_where_a_clip_holds_one():
    from core.assemble import SHORTEST_PIECE_S, assembly_pieces
    pieces = assembly_pieces(400, [8] * 50 + [45, 60], 30)
    assert min(stop - first for first, stop in pieces) >= SHORTEST_PIECE_S * 30
    # a library of nothing that long still assembles, in pieces its clips can hold
    pieces = assembly_pieces(100, [8, 10, 10], 30)
    assert pieces[0][0] == 0 and pieces[-1][1] == 100 and max(stop - first for first, stop in pieces) <= 10


def test_one_long_take_does_not_outvote_a_library_of_shorter_clips():
    """A clip counts with its frames up to the query's: a 1,900-frame dance beside a hundred walks
    of 150 frames does not make a 400-frame walk whole (only the dance could hold it)."""
    from core.assemble import assembly_pieces
    pieces = assembly_pieces(400, [1900] + [150] * 100, 30)
    assert len(pieces) > 1 and max(stop - first for first, stop in pieces) <= 150


def test_a_long_query_is_cut_into_overlapping_pieces_the_library_can_hold():
    from core.assemble import PIECE_OVERLAP, assembly_pieces
    clips = [60, 100, 152, 300, 40]
    pieces = assembly_pieces(400, clips, 30)
    lengths = {stop - first for first, stop in pieces}
    # clips of 152 frames and more hold 452 of the 652 frames, of 300 and more 300: pieces of 152
    assert len(lengths) == 1 and max(lengths) <= 152, "pieces of one length, as long as half the frames can hold"
    assert pieces[0][0] == 0 and pieces[-1][1] == 400
    overlaps = [a[1] - b[0] for a, b in zip(pieces, pieces[1:])]
    assert min(overlaps) >= round(PIECE_OVERLAP * 152) - 1, "every piece shares frames with the next (to a frame)"
    assert all(a[1] <= c[0] for a, c in zip(pieces, pieces[2:])), "and with its neighbours only"
    # the fewest pieces that keep to that length
    assert len(pieces) == int(np.ceil((400 - 38) / (152 - 38)))


def test_a_walk_two_whole_walks_can_hold_is_assembled_whole_beside_snippets(mocap):
    """The reviewer's case: before, 33 pieces of 8 frames, each warned of for pairing no feature pose."""
    query = mocap(WALK)
    assert query.n_frames == 195
    library = {name: mocap(name) for name in ("bandai1/walk_happy_001", "bandai1/walk_sad_001")}
    snippets = mocap("bandai1/walk_angry_001")
    library.update({f"snippet {k}": snippets[40 * k:40 * k + 8] for k in range(3)})
    result = assemble(query, {"upper": library})
    assert len(result.pieces["upper"]) == 1 and result.matches["upper"].clip in ("bandai1/walk_happy_001",
                                                                                  "bandai1/walk_sad_001")
    assert result.feature_poses("upper") > 0 and not result.warnings


def test_pieces_are_joined_by_slerp_along_a_smoothstep_weight():
    from core.assemble import joined_pieces, piece_weights
    pieces = [(0, 10), (6, 16)]
    weights = piece_weights(pieces, 16)
    np.testing.assert_allclose(weights.sum(axis=0), 1.0)
    assert np.all(np.diff(weights[1, 6:10]) > 0) and weights[1, 5] == 0 and weights[1, 10] == 1
    a = np.broadcast_to(quat.from_axis_angle(np.array([0, 0, 1.0]), 0.0), (10, 1, 4))
    b = np.broadcast_to(quat.from_axis_angle(np.array([0, 0, 1.0]), 1.0), (10, 1, 4))
    joined = joined_pieces(pieces, [a, b], 16)
    angle = 2 * np.arctan2(joined[:, 0, 3], joined[:, 0, 0])
    np.testing.assert_allclose(angle[:6], 0.0, atol=1e-12)
    np.testing.assert_allclose(angle[10:], 1.0, atol=1e-12)
    np.testing.assert_allclose(angle[6:10], weights[1, 6:10], atol=1e-12)  # the angle follows the weight


def no_join_differences(joined, library, n, distance, scale=1.0):
    """core.assemble.window_join_differences left out: each piece retrieved on its own, as before
    the review of issue 24, item 9."""
    from core.assemble import window_offsets
    return np.zeros(max(len(library) - int(window_offsets(n, scale)[-1]), 0))


def short_walks(mocap, frames=60):
    """Library clips of two steps each, shorter than 0.7 of a 180-frame query."""
    return {f"{name} {first}": mocap(name)[first:first + frames]
            for name in ("bandai1/walk_happy_001", "bandai1/walk_angry_001", "bandai1/walk_sad_001")
            for first in (0, 60, 120)}


def test_a_long_walk_takes_its_arms_from_shorter_clips_piece_by_piece(mocap):
    """Before, every clip shorter than 0.7 of the query ruled itself out: this library held none."""
    query = mocap(WALK)[:180]
    library = short_walks(mocap)
    result = assemble(query, {"upper": library})
    pieces = result.pieces["upper"]
    assert len(pieces) > 1
    assert pieces[0].first == 0 and pieces[-1].stop == query.n_frames
    assert all(a.stop > b.first for a, b in zip(pieces, pieces[1:])), "each piece overlaps the next"
    assert all(p.match.clip in library and p.match.length <= 60 for p in pieces)
    assert result.matches["upper"] == pieces[0].match
    # the legs and pelvis stay the query's, bit for bit
    kept = ~part_joints(query.skeleton, find_rig(query), "upper")
    assert np.array_equal(result.motion.rotations[:, kept], query.rotations[:, kept])


def test_the_joins_between_pieces_turn_slower_than_pieces_butted_together(mocap, monkeypatch):
    """Across each overlap the output passes from one piece to the next by slerp; butted (a cut at
    the overlap's middle), the part's joints jump there. (The pieces retrieved each on its own, not
    with the piece before in mind, so that they differ across the joins.)"""
    import core.assemble as assembly
    query = mocap(WALK)[:180]
    library = short_walks(mocap)
    monkeypatch.setattr(assembly, "window_join_differences", no_join_differences)
    result = assemble(query, {"upper": library})
    pieces = result.pieces["upper"]
    upper = part_joints(query.skeleton, find_rig(query), "upper")

    def steps(motion):
        r = motion.rotations[:, upper]
        return 2 * np.arccos(np.clip(np.abs(np.sum(r[1:] * r[:-1], axis=-1)), 0, 1)).max(axis=1)  # (F - 1,)

    at_joins = np.zeros(query.n_frames - 1, bool)
    for a, b in zip(pieces, pieces[1:]):
        at_joins[b.first - 1:a.stop] = True
    joined = steps(result.motion)

    def cut(layout, n):
        weights = np.zeros((len(layout), n))
        for k, (first, stop) in enumerate(layout):
            weights[k, first:stop] = 1.0
            if k:
                middle = (first + layout[k - 1][1]) // 2
                weights[k, first:middle], weights[k - 1, middle:layout[k - 1][1]] = 0.0, 0.0
        return weights

    monkeypatch.setattr(assembly, "piece_weights", cut)
    butted = steps(assemble(query, {"upper": library}).motion)
    assert butted[at_joins].max() > 1.5 * joined[at_joins].max()


def test_a_long_lower_body_from_shorter_clips_keeps_its_feet_planted(mocap):
    query = mocap(WALK)[:180]
    library = short_walks(mocap)
    held = assemble(query, {"lower": library})
    sliding = assemble(query, {"lower": library}, contacts=None)
    assert len(held.pieces["lower"]) > 1
    assert skate(held.motion) < 0.5 * skate(sliding.motion)


def test_assembly_uses_no_private_name_of_another_module():
    """The house style: a private name (``_x``) is not used across modules (review of issue 24: the
    assembly built its motions with ``Motion._trusted``); if two modules need it, it is public."""
    import ast
    import core.assemble
    tree = ast.parse(Path(core.assemble.__file__).read_text())
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    private = sorted({f"{node.value.id}.{node.attr}" for node in ast.walk(tree)
                      if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id in imported and node.attr.startswith("_") and not node.attr.startswith("__")}
                     | {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                        for alias in node.names if alias.name.startswith("_")})
    assert not private, private


def plain_join_differences(joined, library, n, distance, scale):
    """window_join_differences as the obvious loop over windows, frames and limbs."""
    from core.assemble import window_offsets
    offsets = window_offsets(n, scale)
    span = offsets[-1] + 1
    out = []
    for start in range(len(library) - span + 1):
        mean = library[start:start + span].mean(axis=0)
        total = 0.0
        for i, pose in enumerate(joined):
            for limb in range(0, library.shape[1], 6):
                d = (library[start + offsets[i], limb:limb + 6] - mean[limb:limb + 6] - pose[limb:limb + 6])
                total += min(np.sqrt(np.mean(np.sum(d.reshape(2, 3) ** 2, axis=1))) / distance, 1.0)
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("scale", [1.0, 2 ** -0.5, 2 ** 0.25])
def test_the_windows_join_differences_equal_a_plain_loop(scale):
    from core.assemble import window_join_differences
    rng = np.random.default_rng(5)
    library, joined = rng.normal(scale=0.3, size=(60, 12)), rng.normal(scale=0.3, size=(4, 12))
    np.testing.assert_allclose(window_join_differences(joined, library, 15, 0.25, scale),
                               plain_join_differences(joined, library, 15, 0.25, scale), rtol=1e-5, atol=1e-5)


def swinging_arm(n, phase):
    """``(n, 6)`` an arm's pose (elbow, wrist; leg lengths) swinging fore and aft once every 30 frames."""
    swing = np.sin(2 * np.pi * np.arange(n) / 30 + phase)
    pose = np.zeros((n, 6))
    pose[:, 0], pose[:, 2], pose[:, 3], pose[:, 5] = 0.1 * swing, -0.25, 0.3 * swing, -0.5
    return pose


def test_a_piece_takes_the_window_that_goes_on_swinging_as_the_piece_before_it():
    """Review of issue 24, item 9: each piece took its best window whatever the piece before played
    over their overlap. Of two clips whose bits both match (one a frame less well, by a bit), the one
    swinging in phase with the piece before is taken; retrieved on its own, the other."""
    from dataclasses import replace
    from core.assemble import PartFrames, best_window
    n, m, overlap = 30, 30, 8

    def clip(phase, differing=0):
        bits = np.zeros((m, 5), bool)
        bits[:differing, 0] = True
        return PartFrames(bits, np.ones((m, 2)), swinging_arm(m, phase), np.array([0.25, 0.05]))

    library = {"a out of phase": clip(np.pi), "b in phase": clip(0.0, differing=1)}
    query = PartFrames(np.zeros((n, 5), bool), np.ones((n, 2)), np.zeros((n, 6)), np.array([0.25, 0.05]))
    assert best_window(query, library).clip == "a out of phase"
    # what the piece before plays over the overlap, about its mean
    before = swinging_arm(overlap, 0.0) - swinging_arm(m, 0.0).mean(axis=0)
    joined = replace(query, joined=before, join_distance=Thresholds().join_distance)
    assert best_window(joined, library).clip == "b in phase"


def assembled_in_pieces(query, library, monkeypatch, part="upper"):
    """``(assembly, each piece's own rotations (stop - first, J, 4))`` of ``query``'s ``part``."""
    import core.assemble as assembly
    join, seen = assembly.joined_pieces, {}

    def recorded(layout, rotations, n):
        seen["rotations"] = rotations
        return join(layout, rotations, n)

    monkeypatch.setattr(assembly, "joined_pieces", recorded)
    result = assemble(query, {part: library})
    monkeypatch.setattr(assembly, "joined_pieces", join)
    return result, seen["rotations"]


def swing_kept_across_joins(query, result, rotations):
    """tests/bench/metrics.py's swing_kept_across_joins (a folder of scripts: loaded by path)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_metrics", Path(__file__).resolve().parents[1] / "bench"
                                                  / "metrics.py")
    metrics = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(metrics)
    return metrics.swing_kept_across_joins(query, result.motion, result.pieces["upper"], rotations)


def test_adjacent_pieces_swing_their_arms_in_phase_across_each_join(mocap, monkeypatch):
    """Review of issue 24, item 9: retrieved each on its own, a piece of this walk swung its right arm
    out of phase with the piece before, and across their join the output kept 0.89 of the swing."""
    import core.assemble as assembly
    query, library = mocap(WALK)[:180], short_walks(mocap)
    result, rotations = assembled_in_pieces(query, library, monkeypatch)
    assert len(rotations) > 2
    joined = swing_kept_across_joins(query, result, rotations)
    assert joined.min() >= 0.95, joined

    monkeypatch.setattr(assembly, "window_join_differences", no_join_differences)  # each piece on its own
    alone = swing_kept_across_joins(query, *assembled_in_pieces(query, library, monkeypatch))
    assert joined.min() > alone.min()


def test_the_assemble_command_says_it_assembled_piecewise(mocap, tmp_path, capsys):
    folder = tmp_path / "library"
    folder.mkdir()
    for name, clip in short_walks(mocap).items():
        (folder / f"{name.split('/')[1].replace(' ', '_')}.bvh").write_text(format_bvh(clip))
    query = tmp_path / "query.bvh"
    query.write_text(format_bvh(mocap(WALK)[:180]))
    report = tmp_path / "report.json"
    assert main(["assemble", str(query), "--part", f"upper={folder}", "-o", str(tmp_path / "out.bvh"),
                 "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "assembled piecewise" in out and "upper frames 0-" in out
    pieces = json.loads(report.read_text())["parts"]["upper"]["pieces"]
    assert len(pieces) > 1 and pieces[0]["first"] == 0 and pieces[-1]["last"] == 179


@pytest.mark.parametrize("scale", [1.0, 2 ** -0.5, 2 ** 0.25])
def test_the_windows_measure_differences_equal_a_plain_loop(scale):
    from core.assemble import measure_differences, window_measure_differences, window_offsets
    rng = np.random.default_rng(3)
    query, library, floors = rng.gamma(2.0, size=(9, 4)), rng.gamma(2.0, size=(40, 4)), np.array([0.25, 0.05] * 2)
    offsets = window_offsets(len(query), scale)
    plain = [measure_differences(query, library[start + offsets], floors).sum()
             for start in range(len(library) - offsets[-1])]
    np.testing.assert_allclose(window_measure_differences(query, library, floors, scale), plain, rtol=1e-5)


RUN_LIBRARY = ("bandai1/walk_happy_001", "bandai1/walk_angry_001", WALK, "bandai1/run_happy_001",
               "bandai1/run_sad_001", "bandai1/run_musical_001", "bandai1/bow_angry_001")


@pytest.mark.parametrize("change", list(EXACT_CHANGES))
def test_retrieval_with_the_measures_does_not_depend_on_names_units_up_axis_or_placement(mocap, change):
    query = mocap("bandai1/run_normal_001")
    expected = retrieve_parts(query, {n: mocap(n) for n in RUN_LIBRARY}, ["upper", "right.arm", "lower"])
    changed = EXACT_CHANGES[change]
    got = retrieve_parts(changed(query), {n: changed(mocap(n)) for n in RUN_LIBRARY}, ["upper", "right.arm", "lower"])
    assert_same_matches(got, expected)


def test_retrieval_with_the_measures_does_not_depend_on_the_rate(mocap):
    """The library at 60 fps, the query at 30: the same clips, windows given in the clips' own frames."""
    query = mocap("bandai1/run_normal_001")
    expected = retrieve_parts(query, {n: mocap(n) for n in RUN_LIBRARY}, ["upper", "right.arm", "lower"])
    got = retrieve_parts(query, {n: mocap(n).resampled(60) for n in RUN_LIBRARY}, ["upper", "right.arm", "lower"])
    for part, match in got.items():
        assert match.clip == expected[part].clip, part
        assert abs(match.start - 2 * expected[part].start) <= 2, part


@pytest.mark.parametrize("part", ["left.leg", "right.arm"])
def test_a_legs_speed_is_compared_as_the_window_plays_it(part):
    """Section 4.2.1 plays a retrieved segment in the query's time: a window of twice the query's
    frames carries the limb twice as fast as its clip did. A leg stands under the query's pelvis, so
    a clip walking at half the query's speed matches its legs, at scale 2, as well as one at its
    speed; an arm's speed tells the clip's action, so there it is compared as the clip has it (the
    swing, a distance, unchanged either way)."""
    from core.assemble import part_feature_names, part_frames
    n, m = 20, 100

    def frames(speed, length):
        return part_frames({k: np.zeros(length, bool) for k in part_feature_names(part)}, part,
                           {f"{part}.carried_speed": np.full(length, speed), f"{part}.swing": np.full(length, 0.8)},
                           {part: np.zeros((length, 6))})

    query, half = frames(2.0, n), {"half the speed": frames(1.0, m)}
    at_own_pace = np.log2((2.0 + Thresholds().speed_floor) / (1.0 + Thresholds().speed_floor))
    share = at_own_pace / (len(part_feature_names(part)) + 2)  # nearly a whole soft bit per frame
    assert best_window(query, half, scales=(1.0,)).cost == pytest.approx(share)
    match = best_window(query, half, scales=(1.0, 2.0))
    if part.endswith("leg"):
        assert match.length == 2 * n - 1 and match.cost == 0.0
    else:  # (the same cost at both scales: the tie goes to the scale listed first)
        assert match.length == n and match.cost == pytest.approx(share)


OTHER_WALKS = ("bandai1/walk_active_001", "bandai1/walk_active_002", "bandai1/walk-right_active_001",
               "bandai1/walk_feminine_002", "bandai1/walk_musical_001", "bandai1/walk_musical_002")


@pytest.mark.parametrize("first", [0, 40])
def test_a_fast_walks_legs_from_other_walks_keep_its_feet_planted(mocap, first):
    """The legs stand under the query's pelvis, so they are retrieved by the speed they are played
    at: two steps of the angry (fast) walk's legs from walks of other styles skate less than the
    walk itself. Compared at the clips' own pace, a slower walk played at the angry walk's speed
    counted as too slow (a turning walk with half again as many differing bits won, its feet landing
    still sliding), and an active walk played a fifth faster than the angry walk as fitting
    (14.2 and 10.4 cm/s against the walk's own 3.6 and 4.6)."""
    query = mocap("bandai1/walk_angry_001")[first:first + 61]
    held = assemble(query, {"lower": {name: mocap(name) for name in OTHER_WALKS}})
    assert skate(held.motion) < skate(query)
