"""Partial-figure retrieval (Juang et al. 2009, 4.1): relational features and segment retrieval."""

import numpy as np
import pytest

from core import quat
from core.assemble import (PARTS, FeatureLibrary, Thresholds, best_window, flexion, part_features, relational_features,
                           retrieve_part, retrieve_parts, window_mismatches)
from core.motion import Motion, Skeleton
from core.rig import find_rig
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
    assert part_features(features, "upper").shape == (mocap(WALK).n_frames, 10)
    assert set(PARTS["upper"]) == set(PARTS["left.arm"]) | set(PARTS["right.arm"])
    assert set(PARTS["lower"]) == set(PARTS["left.leg"]) | set(PARTS["right.leg"])
    with pytest.raises(ValueError, match="upper"):
        part_features(features, "torso")


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
    assert (match.clip, match.start, match.cost) == (clip, start, 0.0)


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
