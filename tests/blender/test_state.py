"""What the add-on keeps for the session (addon/state.py) and the panel's default cores worked out once."""

import importlib

import pytest

from scenes import WALK_BOW_PUNCH, clips_on_one_armature, strips_by_name


@pytest.fixture
def state(installed_extension):
    return importlib.import_module(f"{installed_extension}.addon.state")


@pytest.fixture
def timeline(installed_extension):
    return importlib.import_module(f"{installed_extension}.addon.timeline")


def test_a_store_drops_the_least_recently_used_entry_beyond_its_size(state):
    store = state.Kept("test", 2)
    store.put("a", 1)
    store.put("b", 2)
    assert store.get("a") == 1  # (now the most recently used)
    store.put("c", 3)
    assert "b" not in store and store.get("a") == 1 and store.get("c") == 3


def test_a_store_computes_an_entry_once_and_keeps_it(state):
    store, calls = state.Kept("test", 4), []
    for _ in range(3):
        assert store.get("key", lambda: calls.append(1) or 42) == 42
    assert calls == [1]


def test_a_store_that_keeps_nothing_is_refused_with_its_name(state):
    with pytest.raises(ValueError, match="'empty'.*at least 1"):
        state.Kept("empty", 0)


def test_every_session_store_is_one_of_the_state_module(installed_extension, state):
    for name in ("live", "hops", "reach", "timeline"):
        importlib.import_module(f"{installed_extension}.addon.{name}")
    assert {"live sessions", "library weights", "reach spaces", "additional parts"} <= set(state._STORES)


def test_the_default_cores_worked_out_at_once_are_each_strips_own(empty_scene, timeline):
    obj = clips_on_one_armature(WALK_BOW_PUNCH)
    strips = list(strips_by_name(obj).values())
    cores = timeline.default_cores(obj)
    assert set(cores) == {s.name for s in strips}
    assert all(cores[s.name] == timeline.strip_default_core(obj, s) for s in strips)


def test_an_edit_reported_by_type_answers_for_every_id_of_that_type_and_only_for_them(state):
    was_watching = state._EDITS["watching"]
    state.watch_edits(True)
    try:
        stamp = state.edit_stamp()
        assert state.edited_since(stamp, [1234], ['ACTION']) is False
        state.note_edited([], ['ACTION'])  # an action the depsgraph does not evaluate, as a source under the solo
        assert state.edited_since(stamp, id_types=['ACTION']) is True
        assert state.edited_since(stamp, [1234]) is False, "no ID of its own was reported"
        later = state.edit_stamp()
        state.restoring(True)
        state.note_edited([1234], ['ACTION'])  # data an undo put back: no edit
        state.restoring(False)
        assert state.edited_since(later, [1234], ['ACTION']) is False
        state.note_edited([1234])
        assert state.edited_since(later, id_types=['ACTION']) is False and state.edited_since(later, [1234]) is True
    finally:
        state.watch_edits(was_watching)
