"""Reports say what happened, at the right level: what the user must look at is a warning.

An operator's reports are printed (``Info: ...``, ``Warning: ...``) when it
runs without a window, which is how these tests read them.
"""

import json

import bpy
import pytest

from scenes import WALK_BOW_PUNCH, clips_on_one_armature

OPERATORS = ("synthesize", "bake")


def run(operator: str, capfd) -> list[str]:
    """Run ``operator``, which must finish; its printed report lines."""
    capfd.readouterr()
    assert getattr(bpy.ops.smart_motion, operator)() == {'FINISHED'}
    return [line for line in capfd.readouterr().out.splitlines() if line.startswith(("Info: ", "Warning: "))]


def warnings(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("Warning: ")]


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_clean_synthesis_is_information_only(empty_scene, operator, capfd):
    """The walk into the bow at W 1. (At the default W 0.5 the range search, which judges a
    blend on the mean over the upper body's joints, blends the arms over 10 frames of the
    80 the cores leave, and the left hand peaks at 1.7 times what the clips do there: a true
    flag of the per-joint measure, and the legs issue's item 5, scoring ranges on what will
    be rendered. At W 0.75 the right knee straightens onto its moved landing in a frame at
    1.7 times the untouched clips', since the pelvis comes down to the standing foot (the
    reach rule, docs/design.md): a true flag too, 1.45 before it.)"""
    clips_on_one_armature(WALK_BOW_PUNCH[:2])
    bpy.context.scene.smart_motion.responsiveness = 1.0
    lines = run(operator, capfd)
    assert lines and not warnings(lines), lines


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_blend_beyond_the_range_search_s_limits_at_W_is_no_warning_by_itself(empty_scene, operator, capfd):
    """The bow's core ends half a second before the kick's starts (as in the panel's test): the
    range search cannot keep within its limits at W, which move with W on a motion that does
    not change; only the gap's quality figures against their references are a warning."""
    from core.quality import GapQuality

    obj = clips_on_one_armature((("bow_normal_001", 1, (16, 123)), ("kick_normal_001", 124, (139, 466))))
    lines = warnings(run(operator, capfd))
    pair = plan_of(obj)["pairs"][0]
    assert [s for s in pair["segments"] if s.get("excess", 0.0) > 1.0]
    assert not [line for line in lines if "abrupt" in line], lines
    flags = GapQuality.from_dict(pair["quality"]).flags
    assert bool(flags) == any(line.startswith("Warning: 'bow' → 'kick', frames ") for line in lines), lines


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_gap_flagged_by_its_quality_figures_is_a_warning(empty_scene, operator, capfd):
    """A walk cut at frame 151 into a kick from 160: the gap skates and jerks beyond 1.5x the clips'."""
    obj = clips_on_one_armature((("walk_normal_001", 1, (1, 151)), ("kick_normal_001", 160, (160, 400))))
    lines = warnings(run(operator, capfd))
    from core.quality import GapQuality

    pair = plan_of(obj)["pairs"][0]
    quality = GapQuality.from_dict(pair["quality"])
    assert quality.flags
    first, last = pair["gap"]
    # one line for the gap: where, what, what to do
    mine = [line for line in lines if line.startswith(f"Warning: 'walk' → 'kick', frames {first}-{last}: ")]
    assert len(mine) == 1 and ", ".join(quality.flags) in mine[0] and "Give Room" in mine[0], lines


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_rejected_strip_is_a_warning(empty_scene, operator, capfd):
    clips_on_one_armature((("walk_normal_001", 1, (1, 190)), ("bow_normal_001", 151, (181, 288)),
                           ("punch_normal_001", 300, (300, 523))))
    lines = run(operator, capfd)
    assert any(line.startswith("Warning: strip 'bow' rejected: its core (output frames 181..") for line in lines)


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_synthesis_left_with_one_strip_is_a_warning(empty_scene, operator, capfd):
    clips_on_one_armature((("walk_normal_001", 1, (1, 190)), ("bow_normal_001", 151, (181, 288))))
    lines = warnings(run(operator, capfd))
    assert "Warning: only strip 'walk' is left, so nothing is joined: it plays as it is; " \
           "fix the rejections above to synthesize" in lines, lines


def test_clear_after_a_bake_says_what_it_did(empty_scene, capfd):
    obj = clips_on_one_armature(WALK_BOW_PUNCH)
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    lines = run("clear", capfd)
    assert lines == [
        "Info: removed the plan of the last synthesis from the panel; there was no preview to remove; the baked "
        f"action 'walk_normal_001_SmartMotion' stays assigned to {obj.name!r} and plays over the strips "
        "(unassign it in the Action Editor to play the strips)"
    ]
    assert obj.animation_data.action.name == "walk_normal_001_SmartMotion"
    assert obj.smart_motion.plan_json == ""
