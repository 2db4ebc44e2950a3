"""Footprints (core.footprints) and the demo's figures (core.figures): a held foot leaves a print,
a sliding foot a streak as long as its slide; the body-part speeds of Oshita 2014 Fig. 5."""

import numpy as np
import pytest

from core.demo import demo_clips, demo_timeline
from core.figures import (body_part_speeds, crossfade_influence_keys, crossfade_spans, gap_frames, gap_window, held_frames, lower_body_joints,
                          placed_motions, plot_gap_speeds, upper_body_joints)
from core.footprints import FootprintOptions, contact_runs, convex_hull, footprint_mesh, footprints, planted, sole_slide
from core import quat
from core.motion import Motion
from core.rig import find_rig, mean_leg_length
from core.synthesize import synthesize


@pytest.fixture(scope="module")
def clips():
    return demo_clips(30.0)


def slid(motion: Motion, distance: np.ndarray) -> Motion:
    """``motion`` with its root moved by ``distance (F, 3)`` more each frame: the whole body skates."""
    positions = np.array(motion.positions)
    positions[:, 0] += distance
    return Motion(motion.skeleton, motion.rotations, positions, motion.fps)


def area(polygon) -> float:
    """Area of a counter-clockwise polygon (K, 3) seen from above (positive)."""
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def inside(point, polygon) -> bool:
    """(x, y) of ``point`` in the convex counter-clockwise ``polygon`` (K, 3)."""
    edges = np.roll(polygon[:, :2], -1, axis=0) - polygon[:, :2]
    to_point = point[:2] - polygon[:, :2]
    return bool(np.all(edges[:, 0] * to_point[:, 1] - edges[:, 1] * to_point[:, 0] >= -1e-9))


def test_a_walk_leaves_one_held_print_per_plant_under_the_planted_foot(clips):
    walk = clips["walk"]
    skel = walk.motion.skeleton
    g = walk.motion.global_positions()

    prints = footprints(walk.motion)

    for k, side in enumerate("LR"):
        mine = [p for p in prints if p.side == side]
        authored = contact_runs(walk.contacts[:, k])
        assert len(mine) == len(authored) == 4, side  # three steps per foot, and the stance it starts from
        for p, (first, last) in zip(mine, authored):
            assert not p.sliding and p.slide < 1e-6
            # the print covers the authored plant, give or take the frames its heel or toe is still low
            assert p.frames[0] <= first + 2 and p.frames[1] >= last - 2, (side, p.frames, (first, last))
            for joint in (f"foot.{side}", f"toe.{side}"):
                assert inside(g[(first + last) // 2, skel.index(joint)], p.outline), (side, joint, p.frames)
            assert np.allclose(p.outline[:, 2], 0.02)  # on the floor of the lowest foot joint (the balls, 2 cm up)


def test_a_foot_sliding_while_down_leaves_a_streak_as_long_as_the_slide(clips):
    stand = clips["stand"].motion
    held = footprints(stand)
    distance = np.zeros((stand.n_frames, 3))
    distance[:, 0] = np.linspace(0.0, 0.3, stand.n_frames)  # 30 cm sideways over the clip

    streaks = footprints(slid(stand, distance))

    assert len(held) == len(streaks) == 2
    for before, after in zip(held, streaks):
        assert not before.sliding and after.sliding
        assert after.slide == pytest.approx(0.3, abs=0.01)
        width = np.ptp(after.outline[:, 0]) - np.ptp(before.outline[:, 0])
        assert width == pytest.approx(0.3, abs=0.02)


def turned_about(motion: Motion, pivot: np.ndarray, degrees: float) -> Motion:
    """``motion`` turned about the vertical line through ``pivot (3,)`` (world), by 0 on its first
    frame up to ``degrees`` on its last: the whole body swivels, the point at ``pivot`` stays."""
    angle = np.radians(np.linspace(0.0, degrees, motion.n_frames))
    turn = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), angle)  # (F, 4), the demo is Z up
    rotations, positions = np.array(motion.rotations), np.array(motion.positions)
    rotations[:, 0] = quat.mul(turn, rotations[:, 0])
    positions[:, 0] = quat.mul_vec(turn, positions[:, 0] - pivot) + pivot
    return Motion(motion.skeleton, rotations, positions, motion.fps)


@pytest.mark.parametrize("end", ["toe", "foot", "tip"])  # the ball of the foot, the heel (under the ankle), the toe tip
def test_a_foot_turning_on_its_ball_heel_or_toe_tip_does_not_slide_and_the_other_does(clips, end):
    """A pivot keeps one point of the sole in place: the left foot swivelling 60 degrees on its ball,
    its heel or the tip of its toes (the print's front edge) leaves a held print, while the right
    foot, carried round it, slides."""
    stand = clips["stand"].motion
    rig = find_rig(stand)
    leg = mean_leg_length(stand, rig)
    g = stand.global_positions()[0]
    ankle, ball = g[stand.skeleton.index("foot.L")], g[stand.skeleton.index("toe.L")]
    at = {"toe": ball, "foot": ankle, "tip": ball + FootprintOptions().toe_reach * (ball - ankle)}[end]
    pivot = at * np.array([1.0, 1.0, 0.0])

    left, right = footprints(turned_about(stand, pivot, 60.0), rig)

    assert (left.side, right.side) == ("L", "R")
    assert left.slide < 1e-6 and not left.sliding
    # the right foot, a hip's width and more from the pivot, is carried about as far round it
    assert right.slide > 2 * FootprintOptions().slide_legs * leg and right.sliding


# --- the sliding rule on real capture -----------------------------------------------------------

# every kind of stepping and standing the capture has, in both datasets (a take each)
CAPTURED = [f"bandai1/{content}_normal_001" for content in ("walk", "run", "dash", "walk-back", "walk-left",
                                                             "walk-right", "bow", "bye", "guide", "respond")] + \
           ["bandai1/walk_proud_001", "bandai1/run_proud_001", "bandai1/walk-right_proud_001"] + \
           [f"bandai2/{content}_normal_001" for content in ("walk", "run", "walk-turn-left", "walk-turn-right",
                                                            "wave-both-hands", "raise-up-left-hand")]


@pytest.mark.parametrize("name", CAPTURED)
def test_untouched_captured_steps_turns_and_gestures_leave_no_sliding_print(mocap, name):
    """Captured feet arrive moving (a running heel enters the contact band at three leg lengths a
    second) and roll from heel to ball: none of that is a slide, and no print of capture as it was
    taken reads as one."""
    motion = mocap(name)
    rig = find_rig(motion)

    prints = footprints(motion, rig)

    assert prints, name
    assert [(p.side, p.frames, round(p.slide / mean_leg_length(motion, rig), 3)) for p in prints if p.sliding] == []


def test_a_captured_walk_dragged_along_the_floor_slides_where_its_feet_are_planted(mocap):
    """The same real walk with the whole body dragged sideways at a third of a leg length a second
    (the skate of the demo's plain crossfade, walk into turn): every print planted for a third of
    a second or more slides."""
    walk = mocap("bandai2/walk_normal_001")
    rig = find_rig(walk)
    leg = mean_leg_length(walk, rig)
    speed = leg / 3.0
    sideways = np.cross(walk.skeleton.up, [0.0, 0.0, 1.0])  # (the walk goes along Z in this capture; any direction will do)
    drag = np.arange(walk.n_frames)[:, None] * (speed / walk.fps) * sideways

    held, dragged = footprints(walk, rig), footprints(slid(walk, drag), rig)

    assert [p.frames for p in held] == [p.frames for p in dragged]  # (the heights are those of the walk)
    long = [(a, b) for a, b in zip(held, dragged) if b.frames[1] - b.frames[0] - 2 >= walk.fps / 3.0]
    assert len(long) >= 8
    for a, b in long:
        assert not a.sliding and b.sliding, (b.side, b.frames, a.slide / leg, b.slide / leg)
        # no more than the drag over the whole run, on top of what the walk's own sole did
        assert b.slide <= speed * (b.frames[1] - b.frames[0]) / walk.fps + a.slide + 1e-9


def test_planted_is_down_a_whole_sample_from_touch_down_and_lift_off_like_the_slow_obvious_one():
    rng = np.random.default_rng(3)
    down = rng.random((60, 3)) < 0.7
    for step in (1, 2, 4):
        slow = np.array([[all(down[max(f - step, 0):min(f + step, 59) + 1, e]) for e in range(3)] for f in range(60)])
        np.testing.assert_array_equal(planted(down, step), slow)
    # (the motion's own first and last frames are no touch-down: the foot may have been down before)
    assert planted(np.ones((5, 1), bool), 1).all()


def test_a_foot_arriving_fast_then_held_does_not_slide_and_one_sliding_once_planted_does():
    """The touch-down sample does not count: a heel entering the band at 0.1 a frame and stopping
    there has not slid; one that goes on 0.1 over its planted frames has."""
    down = np.array([[False], [True], [True], [True], [True], [True], [False]])
    arriving = np.array([-0.2, -0.1, 0.0, 0.0, 0.0, 0.0, 0.1])
    sliding = np.array([-0.2, -0.1, 0.0, 0.03, 0.06, 0.1, 0.2])

    def slide(x):
        return sole_slide(np.column_stack([x, 0 * x, 0 * x])[:, None, :], planted(down, 1))

    assert slide(arriving) == 0.0 and slide(sliding) == pytest.approx(0.06)  # (frames 2-4: planted)
    assert sole_slide(np.zeros((3, 2, 3)), np.zeros((3, 2), bool)) == 0.0  # (never planted: a graze)


def test_prints_scale_with_the_body():
    """The same walk in centimetres: the same prints, a hundred times larger (no unit anywhere)."""
    walk = demo_clips(30.0)["walk"].motion
    skel = walk.skeleton
    from dataclasses import replace

    cm = Motion(replace(skel, offsets=skel.offsets * 100.0, end_sites={j: v * 100.0 for j, v in skel.end_sites.items()}),
                walk.rotations, walk.positions * 100.0, walk.fps)

    metres, centimetres = footprints(walk), footprints(cm)

    assert [p.frames for p in metres] == [p.frames for p in centimetres]
    for a, b in zip(metres, centimetres):
        # (the same outline, up to a vertex on a straight edge that rounding keeps in one and not the other)
        assert area(b.outline) == pytest.approx(1e4 * area(a.outline), rel=1e-9)
        np.testing.assert_allclose(b.outline.min(axis=0), 100.0 * a.outline.min(axis=0), atol=1e-6)
        np.testing.assert_allclose(b.outline.max(axis=0), 100.0 * a.outline.max(axis=0), atol=1e-6)
        assert a.slide == pytest.approx(b.slide / 100.0, abs=1e-9) and a.sliding == b.sliding


def test_convex_hull_matches_the_slow_obvious_one():
    rng = np.random.default_rng(7)
    for n in (3, 5, 40, 200):
        points = rng.normal(size=(n, 2))
        hull = convex_hull(points)
        polygon = np.column_stack([points[hull], np.zeros(len(hull))])
        # every point inside the counter-clockwise polygon, and every hull vertex a point no other's
        # convex combination makes: for each, some direction in which it is the only extreme point
        assert all(inside(np.r_[p, 0.0], polygon) for p in points)
        for i in hull:
            others = np.delete(points, i, axis=0)
            angles = np.linspace(0, 2 * np.pi, 720, endpoint=False)
            directions = np.column_stack([np.cos(angles), np.sin(angles)])
            assert np.any(directions @ points[i] > (others @ directions.T).max(axis=0) + 1e-12)


def test_footprints_mesh_has_one_face_per_print_and_says_which_slide(clips):
    stand = clips["stand"].motion
    distance = np.zeros((stand.n_frames, 3))
    distance[:, 1] = np.linspace(0.0, 0.2, stand.n_frames)
    prints = footprints(clips["walk"].motion) + footprints(slid(stand, distance))

    vertices, faces, sliding = footprint_mesh(prints)

    assert len(faces) == len(prints) and vertices.shape == (sum(len(p.outline) for p in prints), 3)
    assert sliding.tolist() == [False] * 8 + [True, True]
    for face, p in zip(faces, prints):
        np.testing.assert_array_equal(vertices[face], p.outline)


def test_footprints_say_what_shape_the_contacts_must_have(clips):
    walk = clips["walk"]
    with pytest.raises(ValueError, match=r"contacts must have shape \(130, 2\)"):
        footprints(walk.motion, contacts=walk.contacts[:-1])
    given = footprints(walk.motion, contacts=walk.contacts, options=FootprintOptions(min_run_s=0.0))
    assert [p.frames for p in given if p.side == "L"] == contact_runs(walk.contacts[:, 0])


# --- 2014 Fig. 5 ------------------------------------------------------------------------------


def test_body_part_speeds_are_the_mean_speeds_of_the_papers_joints_in_leg_lengths(clips):
    stand = clips["stand"].motion
    rig = find_rig(stand)
    names = stand.skeleton.names
    assert sorted(names[j] for j in lower_body_joints(rig)) == ["foot.L", "foot.R", "hips"]
    assert sorted(names[j] for j in upper_body_joints(rig)) == ["chest", "hand.L", "hand.R", "head"]
    leg = 0.88
    distance = np.zeros((stand.n_frames, 3))
    distance[:, 1] = np.arange(stand.n_frames) * (1.5 / stand.fps)  # 1.5 m/s forward, on top of the sway

    still = body_part_speeds(stand.global_positions(), rig, stand.fps, leg)
    moving = body_part_speeds(slid(stand, distance).global_positions(), rig, stand.fps, leg)

    assert still.shape == (stand.n_frames, 2) and np.all(still < 0.2)
    np.testing.assert_allclose(moving[5:-5], 1.5 / leg, atol=0.2)  # (the sway adds or takes a little)
    with pytest.raises(ValueError, match="shape"):
        body_part_speeds(stand.global_positions()[0], rig, stand.fps, leg)


def test_placed_clips_are_where_the_synthesis_plays_their_cores():
    clips = demo_timeline()
    result = synthesize(clips, responsiveness=0.5)
    rig = find_rig(clips[0].motion)
    out = result.motion.global_positions()

    placed = placed_motions(clips, result.plan, rig)

    assert len(gap_frames(result.plan)) == len(clips) - 1
    for clip, motion in zip(clips, placed):
        first, last = clip.core_range
        frames = np.arange(first, last + 1)
        np.testing.assert_allclose(motion.global_positions()[frames], out[clip.start + frames - result.start],
                                   atol=1e-9, err_msg=clip.name)


def test_the_plain_crossfade_fades_only_across_the_gaps_so_every_core_plays_unblended():
    """The crossfade compared with (core.figures.crossfade_spans) is fair: like the synthesis it
    keeps both cores, fading from the previous core's last frame to the next core's first."""
    clips = demo_timeline()
    plan = synthesize(clips, responsiveness=0.5).plan
    by_name = {clip.name: clip for clip in clips}

    spans = crossfade_spans(clips, plan)

    assert [s.name for s in spans] == list(plan.clips)
    assert (spans[0].first, spans[0].fade_in, spans[-1].last, spans[-1].fade_out) == (plan.start, 0, plan.end, 0)
    for span in spans:
        clip = by_name[span.name]
        first, last = clip.start + np.array(clip.core_range)
        # at full weight over the whole core: the fade in ends where it begins, the fade out begins where it ends
        assert span.first + span.fade_in <= first and last <= span.last - span.fade_out, span
    for (before, after), (gap_first, gap_last) in zip(zip(spans, spans[1:]), gap_frames(plan)):
        assert (after.first, after.first + after.fade_in) == (gap_first, gap_last)
        assert (before.last - before.fade_out, before.last) == (gap_first, gap_last)


def nla_replace_weights(spans: list, keys: list, lanes: list, frames: np.ndarray) -> np.ndarray:
    """``(F, C)``: how much of each clip NLA's Replace plays at ``frames``, tracks evaluated from
    the lowest up, each track playing its latest clip begun (held forward): a strip of influence
    w leaves (1 - w) of what the tracks below gave. Keys linear between, held outside."""
    weights = np.zeros((len(frames), len(keys)))
    for lane in sorted(set(lanes)):  # (NLA's order: the lowest track first)
        on = [c for c in range(len(spans)) if lanes[c] == lane]
        playing = np.array(on)[np.clip(np.searchsorted([spans[c].first for c in on], frames, side="right") - 1, 0, None)]
        for c in on:
            w = (np.interp(frames, *zip(*keys[c])) if keys[c] else np.ones(len(frames))) * (playing == c)
            weights *= (1.0 - w)[:, None]
            weights[:, c] += w
    return weights


def test_keyed_influences_make_nla_play_the_crossfade_linear_across_gaps_and_every_core_alone():
    """The influence keys (core.figures.crossfade_influence_keys), played as NLA's Replace plays
    strips on alternating tracks, give each clip weight 1 over its core and a linear 0..1 fade,
    summing to 1, across each gap between cores: the crossfade of crossfade_spans."""
    clips = demo_timeline()
    plan = synthesize(clips, responsiveness=0.5).plan
    spans = crossfade_spans(clips, plan)
    lanes = [k % 2 for k in range(len(spans))]
    frames = np.arange(plan.start, plan.end + 1)

    weights = nla_replace_weights(spans, crossfade_influence_keys(spans, lanes), lanes, frames)

    assert np.allclose(weights.sum(axis=1), 1.0)
    for c, clip in enumerate(clips):
        core = (frames >= clip.start + clip.core_range[0]) & (frames <= clip.start + clip.core_range[1])
        assert np.allclose(weights[core, c], 1.0), clip.name
    for k, (first, last) in enumerate(gap_frames(plan)):
        inside = (frames >= first) & (frames <= last)
        assert np.allclose(weights[inside, k + 1], (frames[inside] - first) / (last - first)), (k, first, last)


def test_a_fade_reaching_past_its_strip_ends_with_the_strip_so_no_share_of_it_stays_after():
    """NLA holds a strip's influence at its ends: the demo's jump ends 3 frames before the stand's
    core, so its fade out ends with it (weight 0 at its last frame), not part way."""
    clips = demo_timeline()
    spans = crossfade_spans(clips, synthesize(clips, responsiveness=0.5).plan)
    strips = [(clip.start, clip.start + clip.motion.n_frames - 1) for clip in clips]

    keys = crossfade_influence_keys(spans, [0, 1, 0, 1, 0], strip_frames=strips)

    jump = keys[3]
    assert spans[3].last > strips[3][1], "the gap into the stand reaches past the jump's frames"
    assert jump[-1] == (strips[3][1], 0.0) and all(first <= f <= last for f, _ in jump for first, last in [strips[3]])


def test_a_crossfade_of_clips_sharing_a_track_is_refused_naming_them():
    clips = demo_timeline()
    spans = crossfade_spans(clips, synthesize(clips, responsiveness=0.5).plan)
    with pytest.raises(ValueError, match="share an NLA track"):
        crossfade_influence_keys(spans, [0, 1, 1, 0, 1])


def test_a_clip_holds_its_end_poses_where_a_gap_reaches_past_its_frames():
    assert held_frames(10, 5, 8, 16).tolist() == [0, 0, 0, 1, 2, 3, 4, 4, 4]


def test_each_gaps_speed_panel_shows_the_gap_and_half_a_second_either_side_within_the_motion():
    assert gap_window((97, 118), 30.0, 1, 380) == (82, 133)
    assert gap_window((5, 20), 30.0, 1, 380) == (1, 35)  # (not before the motion's first frame)
    assert gap_window((370, 379), 60.0, 1, 380) == (340, 380)


def test_the_speed_plot_draws_a_panel_per_gap_and_refuses_none(tmp_path):
    pytest.importorskip("matplotlib")
    speeds = {"ours": np.abs(np.sin(np.arange(200)[:, None] * [0.1, 0.2]))}

    path = plot_gap_speeds(tmp_path / "speed.png", 1, 30.0, speeds, [((40, 60), "a \u2192 b", None),
                                                                     ((120, 150), "b \u2192 c", None)],
                           size_px=(600, 300))

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="no gap to plot"):
        plot_gap_speeds(tmp_path / "none.png", 1, 30.0, speeds, [])
