"""Reaching in ordinary use (issue 24, items 5 and 6; Juang et al. 2009, section 3.2).

One example is reached by partial blending alone; partial blending keeps the feet the
examples have down where they stand (the contact stage of synthesis) and turns no joint
beyond the range the examples show, saying when that stopped it.
"""

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from real_capture import require

from core import quat
from core.__main__ import main
from core.bvh import read_bvh
from core.motion import forward_kinematics
import core.reach as reach_module
from core.reach import ReachOptions, ReachSpace, cross_validation, joint_ranges

RAISES = Path(__file__).resolve().parents[2].parent / "shared" / "mocap" / "bandai2-raise"
_PATH = Path(__file__).resolve().parents[1] / "bench" / "metrics.py"
# tests/bench is a folder of scripts, not a package: load the module by path
_spec = importlib.util.spec_from_file_location("bench_metrics", _PATH)
metrics = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(metrics)

# beyond the eight raises' space by a rule: 8 cm past the hit furthest that way (Y up, cm)
AWAY = ([-8.0, 0, 0], [8.0, 0, 0], [0, 0, 10.0], [0, 0, -10.0])


@pytest.fixture(scope="module")
def raises():
    require(RAISES)
    return [read_bvh(p) for p in sorted(RAISES.glob("*.bvh"))[::5]]  # (eight, every style among them)


@pytest.fixture(scope="module")
def spaces(raises):
    """The eight raises' space as the product builds it, and as before issue 24 (no contact stage, no limits)."""
    return {name: ReachSpace.build(raises, n_blends=400, options=options) for name, options in (
        ("product", ReachOptions()), ("before", ReachOptions(hold_feet=False, joint_limits=False)))}


def beyond(space):
    """Targets beyond the space, one per direction of AWAY."""
    points = space.space.hit_points
    return [points[np.argmax(points @ np.sign(away))] + np.array(away) for away in AWAY]


def measured(space, motion):
    """``(F, J, 4)`` each joint's rotation as core.reach.JointRanges takes it: against its parent's,
    the pelvis and the joints above it in the world."""
    rotations = motion.rotations.copy()
    above = np.flatnonzero(space.ranges.in_world)
    _, world = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, list(above))
    rotations[:, above] = world
    return rotations


def range_excess(space, motion, joints):
    """``(n,)`` radians: how far each joint of ``joints`` goes, over ``motion``'s frames, beyond the
    range the space's examples show (its margin included)."""
    ranges = space.ranges
    v = quat.log(quat.mul(quat.inv(ranges.centre[joints]), measured(space, motion)[:, joints]))
    return np.linalg.norm(v - np.clip(v, ranges.low[joints], ranges.high[joints]), axis=-1).max(axis=0)


# --------------------------------------------------------------------------
# Item 6: the turned joints within the range the examples show


def test_partial_blending_turns_no_joint_beyond_the_range_the_examples_show(spaces):
    rig = spaces["product"].rig
    turned = [rig.pelvis, rig.chest, rig.arm("right").clavicle]
    worst = {}
    for name, space in spaces.items():
        results = [space.reach(target) for target in beyond(space)]
        assert all(r.partial for r in results)
        worst[name] = max(range_excess(space, r.motion, turned).max() for r in results)
        if name == "product":
            limited = [r for r in results if r.limited]
            assert limited, "a target 8 cm beyond eight raises asks for more turn than they show"
            for r in limited:
                assert set(r.limited) <= {rig.names["pelvis"], rig.names["chest"], rig.names["right.clavicle"]}
                assert "the range the examples show stopped the turn of " + ", ".join(r.limited) in r.why
    # (docs/design.md: 8 cm beyond the side, the limits keep the chest and collar and the target is
    # missed by 4.5 cm, said so; pinned within the hit tolerance)
    side = spaces["product"].reach(beyond(spaces["product"])[0])
    assert side.error == pytest.approx(4.52, abs=spaces["product"].tolerance) and side.limited
    assert worst["product"] < np.radians(0.01)
    assert worst["before"] > np.radians(10.0)  # (what the limit stops: chest or collar turned 30-40 degrees)


def test_the_margin_is_how_far_the_example_that_goes_furthest_takes_the_range(raises):
    space = ReachSpace.build(raises, n_blends=0)
    ranges = space.ranges
    v = quat.log(quat.mul(quat.inv(ranges.centre), np.stack([measured(space, m) for m in space.registration.motions])))
    for k_axis, (extreme, sign) in enumerate(((v.min(axis=1), -1), (v.max(axis=1), 1))):
        # the obvious leave-one-out: how far each example takes the range beyond all the others
        beyond_others = np.stack([sign * (extreme[k] - (np.delete(extreme, k, axis=0).max(axis=0) if sign > 0 else
                                                        np.delete(extreme, k, axis=0).min(axis=0)))
                                  for k in range(len(raises))]).max(axis=0)
        np.testing.assert_allclose(ranges.margin[..., k_axis], np.maximum(beyond_others, 0.0), atol=1e-12)
    np.testing.assert_allclose(ranges.low, v.min(axis=(0, 1)) - ranges.margin[..., 0], atol=1e-12)
    np.testing.assert_allclose(ranges.high, v.max(axis=(0, 1)) + ranges.margin[..., 1], atol=1e-12)
    one = joint_ranges(space.registration.motions[:1], space.rig)
    assert not one.margin.any(), "one example says nothing of how the action varies"
    assert ranges.varied and not one.varied
    assert not joint_ranges(space.registration.motions[:1] * 3, space.rig).varied, "copies are one performance"


def test_a_whole_body_result_names_no_joint_limit(raises):
    """Whole-body blending turns no joint beyond the examples: where it is kept over a partial
    blending that a limit stopped, that limit is the reason given, not a limit of the result."""
    rows = cross_validation(raises, range(len(raises)), n_blends=400)
    regular = [r for r in rows if not r.partial]
    assert regular, "the eight raises' cross-validation keeps whole-body blending somewhere"
    assert all(not r.limited for r in regular)
    assert any(r.limited for r in rows if r.partial)


def test_the_budget_counts_the_joint_ranges_and_the_examples_feet(raises, monkeypatch):
    """core.budget's estimate of a reach (reach_bytes) holds what building the space and its first
    query take, the joint ranges (every example's rotations over every frame, posed) and the
    examples' feet (their global positions) included. The block of hit points made small, so
    that it does not hide them."""
    import tracemalloc

    monkeypatch.setattr(reach_module, "HIT_BLOCK_BYTES", 1 << 20)
    tracemalloc.start()
    try:
        space = ReachSpace.build(raises, n_blends=300)
        space.reach(space.space.hit_points.mean(axis=0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    frames = raises[0].n_frames
    assert peak <= reach_module.reach_bytes(frames, [m.n_frames for m in raises], len(raises[0].skeleton))


# --------------------------------------------------------------------------
# Item 6: the feet the examples have down held


def test_partial_blending_keeps_the_feet_the_examples_hold_down(raises, spaces):
    rig = spaces["product"].rig
    own = np.median([metrics.ankle_drift(m, rig) for m in raises])
    drift = {name: [metrics.ankle_drift(space.reach(target).motion, rig) for target in beyond(space)]
             for name, space in spaces.items()}
    assert max(drift["product"]) <= 1.5 * own
    assert max(drift["before"]) > 1.5 * own  # (partial blending's turned pelvis carried the feet along)


def test_holding_the_feet_leaves_the_hit_where_it_was(raises):
    held = ReachSpace.build(raises, n_blends=400)
    free = ReachSpace(held.registration, n_blends=400, options=ReachOptions(hold_feet=False))
    rig = held.rig
    for target in beyond(held):
        a, b = held.reach(target), free.reach(target)
        assert a.feet_held and not b.feet_held
        np.testing.assert_allclose(a.hit_point, b.hit_point, atol=1e-9)
        assert a.error == pytest.approx(b.error, abs=1e-9)
        # only the legs changed
        legs = [j for side in "LR" for j in rig.leg(side).joints if j is not None]
        rest = np.setdiff1d(np.arange(len(a.motion.skeleton)), legs)
        np.testing.assert_allclose(a.motion.rotations[:, rest], b.motion.rotations[:, rest], atol=1e-12)


# --------------------------------------------------------------------------
# Item 5: one example


@pytest.mark.parametrize("copies", [1, 2])
def test_one_example_is_reached_by_partial_blending_alone(raises, copies):
    space = ReachSpace.build([raises[0]] * copies)
    own = space.chains.hits(np.full((1, copies), 1.0 / copies), between_frames=True)[0][0]
    at_its_own = space.reach(own)
    assert at_its_own.error <= space.tolerance
    target = own + np.array([0.0, 0.0, 3.0])  # (3 cm in front of its own hit point)
    result = space.reach(target)
    assert result.partial and not space.inside(target)
    assert ("one example hits" if copies == 1 else "examples all hit") in result.why
    assert "partial blending (section 3.2) alone" in result.why
    assert result.error < 0.5 * 3.0  # (turning its joints takes the hand more than half way there)
    np.testing.assert_allclose(np.linalg.norm(result.hit_point - target), result.error)


# around one raise's hit: below, to either side, in front and behind (Y up, cm)
AROUND = ([0, -10.0, 0], [8.0, 0, 0], [-8.0, 0, 0], [0, 0, 3.0], [0, 0, -3.0])


def test_one_example_is_reached_around_its_hit_in_every_direction(raises):
    """Item 5: one example works by partial blending alone. One performance shows no range of how far
    its joints may turn, so none is kept (and the reach says so): kept to its own frames' range, the
    turns barely moved the hand (10 cm below its hit: missed by 9.8 cm)."""
    space = ReachSpace.build(raises[:1])
    assert space.options.joint_limits and space.limits is None
    own = space.chains.hits(np.ones((1, 1)), between_frames=True)[0][0]
    results = [space.reach(own + np.array(away)) for away in AROUND]
    for away, result in zip(AROUND, results):
        assert result.partial and not result.limited
        assert "no joint limits: one performance" in result.why
        assert result.error < 0.25 * np.linalg.norm(away), f"{away}: missed by {result.error:.3g}"
    assert sum(r.error <= space.tolerance for r in results) >= 4


def test_the_reach_command_reaches_with_a_folder_of_one_example(tmp_path, capsys):
    require(RAISES)
    folder = tmp_path / "one"
    folder.mkdir()
    first = sorted(RAISES.glob("*.bvh"))[0]
    (folder / first.name).symlink_to(first)
    out, report = tmp_path / "out.bvh", tmp_path / "r.json"
    assert main(["reach", str(folder), "--target=-20,160,10", "-o", str(out), "--report", str(report)]) == 0
    printed = capsys.readouterr().out
    record = json.loads(report.read_text())
    assert record["partial"] and "one example hits at one point" in record["why"]
    assert "why: the one example hits at one point" in printed
    assert list(record["weights"]) == [first.name] and read_bvh(out).n_frames > 1


# --------------------------------------------------------------------------
# Section 3.2's kick: the standing foot is the vertical blend's


def left_foot_lifted(motion, rig):
    """``motion`` with its left knee bent 70 degrees over the middle third of its frames, about an
    axis across the shin (whatever the rig's bone axes): the left foot off the ground there."""
    rotations = motion.rotations.copy()
    middle = slice(motion.n_frames // 3, 2 * motion.n_frames // 3)
    knee, shin = rig.leg("L").knee, motion.skeleton.offsets[rig.leg("L").ankle]
    across = np.cross(shin, np.eye(3)[np.argmin(np.abs(shin))])
    bend = quat.from_axis_angle(across / np.linalg.norm(across), np.radians(70.0))
    rotations[middle, knee] = quat.mul(rotations[middle, knee], bend)
    return motion.with_arrays(rotations=rotations)


def test_a_kicks_standing_foot_is_held_as_the_blend_it_came_from_has_it(raises):
    """For a kick, the body with the standing leg is M_V and only the kicking leg M_H's: the standing
    foot is held where P_V's examples have it down. P_H's weights, which the kicking leg alone
    follows, change nothing of it, even on an example whose left foot is off the ground."""
    rig = ReachSpace.build(raises[:1], n_blends=0).rig
    examples = raises + [left_foot_lifted(raises[1], rig)]
    space = ReachSpace.build(examples, effector="right.ankle", n_blends=400, options=ReachOptions(hold_feet=False))
    contacts, _ = space._example_feet()
    assert contacts[:-1, :, 0].all() and not contacts[-1, :, 0].all()  # (the raises stand throughout)
    points = space.space.hit_points
    result = space.reach(points[np.argmax(points[:, 1])] + np.array([0.0, 8.0, 0.0]))  # (8 cm above the highest)
    assert result.partial and result.vertical_weights is not None and result.vertical_weights[-1] < 0.5
    np.testing.assert_allclose(space.foot_sources(result)[0], result.vertical_weights / result.vertical_weights.sum())
    standing = [j for j in rig.leg("L").joints if j is not None]
    held = space.feet_held(result, result.hit_point).motion
    lifted = replace(result, weights=np.eye(len(examples))[-1])  # (as if P_H were the one lifting its foot)
    np.testing.assert_allclose(space.feet_held(lifted, result.hit_point).motion.rotations[:, standing],
                               held.rotations[:, standing], atol=1e-12)
