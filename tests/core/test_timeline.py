"""The timeline's decisions from frame ranges alone (core.timeline), without Blender: default cores,
the sequence and its additional motions (Oshita 2008, 3.2 and 8.1), synchronized groups and Pack's lanes."""

import pytest

from core.timeline import (DefaultCore, NlaLane, PackMove, Span, additional_spans, default_core, default_cores,
                           group_span, overlap_groups, pack_lanes, sequence_spans, sequencing, settled_sequencing)


# ---------------------------------------------------------------------------
# default cores


def test_default_cores_leave_the_shortest_blend_between_unblended_neighbours():
    walk, bow = Span("walk", 1, 195), Span("bow", 180, 317)
    room = 6
    walk_core = default_core(walk, (), (bow,), room)
    bow_core = default_core(bow, (walk,), (), room)
    assert (walk_core.last, bow_core.first) == (176, 199), "3 frames short of the shared frames 180-195 each"
    assert walk_core.why() == "strip minus room to blend with 'bow'"

    blended = Span("bow", 180, 317, blend_in=16.0)
    assert default_core(blended, (walk,), (), room).first == 196, "the blend-in, then what overlaps still"
    assert default_core(walk, (), (blended,), room).last == 179
    apart = Span("bow", 250, 387)
    assert default_core(apart, (walk,), (), room) == DefaultCore(250, 387), "strips apart: the whole strip"
    assert default_core(apart, (walk,), (), room).why() == "whole strip"


def test_default_cores_take_off_every_overlapping_strip_not_only_the_adjacent_one():
    """A long strip A with B laid over it on another track and C overlapping A's end, past B."""
    a, b, c = Span("A", 1, 500), Span("B", 100, 200), Span("C", 400, 600)
    room = 6
    assert default_core(a, (), (b, c), room).last == 96, "A stops short of B, which begins inside it"
    assert default_core(c, (a, b), (), room).first == 504, "C starts after A, though B comes between them"
    covered = default_core(b, (a,), (c,), room)
    assert covered.empty
    assert covered.why() == "no frame left: strip minus room to blend with 'A' (frames 1-500, all of it)"


def test_a_synchronized_group_is_one_span_of_the_sequence_from_its_first_frame_to_its_last():
    walk, run, bow = Span("walk", 1, 195), Span("run", 41, 64), Span("bow", 300, 437)
    assert group_span([walk, run]) == Span("walk + run", 1, 195)
    assert [s.name for s in sequence_spans([bow, walk, run], [[1, 2]])] == ["walk + run", "bow"], "by start"


def test_a_strip_of_a_group_gets_the_groups_core_which_no_overlap_within_it_cuts():
    walk, run = Span("walk", 1, 195), Span("run", 41, 64)
    assert default_cores([walk, run], room=6)[1].empty, "in sequence the run lies inside the walk: no frame left"
    cores = default_cores([walk, run], groups=[[0, 1]], room=6)
    assert [(c.first, c.last, c.group) for c in cores] == [(1, 195, "walk + run")] * 2
    assert cores[1].why() == "synchronized blend: the core of the whole group 'walk + run'"


def test_an_additional_motion_is_no_neighbour_and_its_core_is_its_whole_strip():
    walk, wave, bow = Span("walk", 1, 273), Span("wave", 20, 220), Span("bow", 300, 437)
    alone = default_cores([walk, bow], room=6)
    cores = default_cores([walk, wave, bow], additional={1: (0, "right arm")}, room=6)
    assert (cores[0], cores[2]) == (alone[0], alone[1]), "the walk keeps its core as if the wave were not there"
    assert (cores[1].first, cores[1].last, cores[1].over) == (20, 220, "walk")
    assert cores[1].why() == "whole strip: lies inside 'walk' and moves its right arm, so it composes over it"


def test_default_cores_all_at_once_are_each_strips_default_core_among_the_others():
    spans = [Span("A", 1, 500), Span("B", 100, 200), Span("C", 400, 600, blend_in=20.0)]
    cores = default_cores(spans, room=6)
    assert cores == [default_core(s, spans[:k], spans[k + 1:], 6) for k, s in enumerate(spans)]


# ---------------------------------------------------------------------------
# the sequence and its additional motions (2008, 3.2 and 8.1)


def test_the_longer_strips_are_decided_first_and_only_strips_inside_another_are_asked():
    spans = [Span("walk", 1, 273), Span("long wave", 20, 220), Span("short wave", 40, 100), Span("kick", 300, 400)]
    parts = {1: "right arm", 2: "left arm", 3: "upper body"}
    asked = []
    found = additional_spans(spans, lambda k: asked.append(k) or parts.get(k))
    assert found == {1: (0, "right arm"), 2: (0, "left arm")}, "a wave inside a wave composes over the walk"
    assert sorted(asked) == [1, 2], "the walk and the kick lie inside nothing: their motion is not read"


def test_a_clip_inside_another_that_does_not_qualify_goes_in_sequence():
    spans = [Span("walk", 1, 273), Span("turn", 40, 100)]
    assert sequencing(spans, lambda k: False) == sequencing(spans, lambda k: False, in_sequence=[1])
    assert sequencing(spans, lambda k: False).sequence == (0, 1)
    assert sequencing(spans, lambda k: True).additional == {1: 0}


def test_a_clip_forced_in_sequence_goes_in_sequence_whatever_it_is_and_its_motion_is_not_read():
    spans = [Span("walk", 1, 273), Span("wave", 40, 100)]
    asked = []
    found = sequencing(spans, lambda k: asked.append(k) or True, in_sequence={1})
    assert (found.sequence, found.additional, asked) == ((0, 1), {}, [])


def test_an_additional_motion_starting_before_the_first_clip_of_the_sequence_goes_in_sequence():
    """Clips in the order of their cores: the jog's core comes first though the long walk starts
    earlier; a wave inside the walk but before the jog's start has nothing to compose over there."""
    spans = [Span("jog", 50, 90), Span("walk", 1, 400), Span("wave", 10, 40), Span("late wave", 200, 260)]
    found = sequencing(spans, lambda k: k in (2, 3))
    assert found.sequence == (0, 1, 2)
    assert found.additional == {3: 1}


def test_the_additional_motions_come_by_start_and_equal_lengths_are_decided_in_the_given_order():
    spans = [Span("walk", 1, 400), Span("late", 300, 350), Span("early", 100, 150)]
    assert list(sequencing(spans, lambda k: True).additional) == [2, 1]
    twins = [Span("a", 1, 100), Span("b", 1, 100)]
    assert sequencing(twins, lambda k: True) == sequencing(twins, lambda k: True)
    assert sequencing(twins, lambda k: True).additional == {1: 0}, "the earlier of two equal spans is the base"


def test_a_clip_inside_a_rejected_one_goes_in_sequence_and_the_sequence_is_joined_again():
    spans = [Span("walk", 1, 273), Span("wave", 40, 100), Span("run", 200, 500)]
    joins = []

    def join(found):
        joins.append(found.sequence)
        return f"joined {found.sequence}", [0] if 0 in found.sequence else []  # the walk is rejected

    found, joined = settled_sequencing(spans, lambda k: k == 1, join)
    assert joins == [(0, 2), (0, 1, 2)], "joined once with the wave composing, again with it in sequence"
    assert (found.sequence, found.additional, joined) == ((0, 1, 2), {}, "joined (0, 1, 2)")


def test_without_rejections_the_sequence_is_joined_once():
    spans = [Span("walk", 1, 273), Span("wave", 40, 100)]
    joins = []
    found, _ = settled_sequencing(spans, lambda k: True, lambda s: (joins.append(s) or None, []))
    assert len(joins) == 1 and found.additional == {1: 0}


# ---------------------------------------------------------------------------
# synchronized groups


def test_strips_that_butt_are_no_group_but_sharing_two_frames_they_are():
    walk = Span("walk", 1, 195)
    assert overlap_groups([walk, Span("run", 195, 280)]) == [], "one frame shared: one after the other"
    assert overlap_groups([walk, Span("run", 194, 279)]) == [[0, 1]]


def test_groups_chain_through_overlaps_in_start_order_and_a_lone_strip_is_no_group():
    spans = [Span("c", 150, 300), Span("a", 1, 100), Span("b", 90, 160), Span("alone", 400, 500)]
    assert overlap_groups(spans) == [[1, 2, 0]], "a overlaps b, b overlaps c: one group, by start"
    assert overlap_groups([Span("x", 1, 50), Span("y", 1, 50)]) == [[0, 1]], "ties by name"
    assert overlap_groups([Span("alone", 1, 50)]) == []


# ---------------------------------------------------------------------------
# Pack's lanes


SPREAD = NlaLane("clips 1", True, (("walk", 1.0, 138.0), ("bow", 400.0, 537.0), ("punch", 800.0, 1023.0)))


def test_a_strip_with_nothing_between_where_it_is_and_where_it_goes_slides_along_its_track():
    moves = pack_lanes([SPREAD], [("walk", 1), ("bow", 142), ("punch", 300)])
    assert moves[0] == PackMove("walk", 1, 1, "clips 1") and not moves[0].moved
    assert moves[2] == PackMove("punch", 800, 300, "clips 1"), "the bow moved first: nothing lies in the way"


def test_a_strip_that_would_overlap_one_on_its_track_goes_to_a_new_track_named_after_it():
    moves = pack_lanes([SPREAD], [("walk", 1), ("bow", 120), ("punch", 250)], taken_names={"[Smart Motion] bow"})
    assert moves[1] == PackMove("bow", 400, 120, "[Smart Motion] bow 2", True, "'walk' lies there on 'clips 1'")
    assert moves[2].lane == "clips 1", "the punch slides along its track, where the bow no longer lies"


def test_a_moved_strip_goes_to_the_first_open_track_with_room_before_a_new_one():
    lanes = [SPREAD, NlaLane("muted", False), NlaLane("busy", True, (("kick", 100.0, 200.0),)),
             NlaLane("free", True, (("kick 2", 500.0, 600.0),))]
    moves = pack_lanes(lanes, [("bow", 120)])
    assert (moves[0].lane, moves[0].new_lane) == ("free", False)


def test_a_strip_that_must_change_track_with_animated_influence_is_refused():
    with pytest.raises(ValueError, match=r"NLA strip 'bow' of armature 'walker' must leave track 'clips 1' "
                                         r"\('walk' lies in the way\) but has animated influence"):
        pack_lanes([SPREAD], [("bow", 120)], animated={"bow"}, armature="walker")
    assert pack_lanes([SPREAD], [("punch", 700)], animated={"punch"})[0].lane == "clips 1", "staying is fine"


def test_a_strip_on_none_of_the_tracks_is_named():
    with pytest.raises(ValueError, match="strip 'kick' lies on none of the tracks"):
        pack_lanes([SPREAD], [("kick", 10)])


def test_a_span_given_both_in_a_group_and_as_an_additional_motion_is_refused_by_name():
    walk, run = Span("walk", 1, 195), Span("run", 41, 64)
    with pytest.raises(ValueError, match=r"\['run'\] are given both as a synchronized group's and as additional"):
        default_cores([walk, run], groups=[[0, 1]], additional={1: (0, "right arm")})


def test_what_lies_inside_a_strip_the_last_synthesis_rejected_goes_in_sequence_as_the_engine_decides():
    spans = [Span("walk", 1, 273), Span("wave", 40, 100), Span("bow", 300, 437)]
    assert additional_spans(spans, lambda k: "right arm") == {1: (0, "right arm")}
    assert additional_spans(spans, lambda k: "right arm", rejected=[0]) == {}
    assert additional_spans(spans, lambda k: "right arm", rejected=[2]) == {1: (0, "right arm")}
