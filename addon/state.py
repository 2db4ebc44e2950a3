"""What Smart Motion keeps for the session, in one place, with one eviction rule.

Results worth keeping between clicks (eq. (5)'s weight of a library, a reach
space, what a strip lends as an additional motion, a live session per
armature) are kept in named :class:`Kept` stores (:func:`session_store`), all evicting the same way:
the least recently used entry goes once a store holds more than its size.
Nothing here is saved with the file; each store is keyed by what its
result was computed from, so an entry never goes stale, it only ages out.

It imports nothing of the add-on, so every layer may use it (it sits in the
lowest one, beside :mod:`.strips`). Hooks let a lower layer announce an
event that a higher one acts on, without importing it: :mod:`.live` registers what to do when a preview is shown
(:func:`on_preview_shown`), and :mod:`.preview` calls :func:`preview_shown`;
it registers what to do when a setting the depsgraph does not see changes
(:func:`on_setting_changed`), and :mod:`.properties`' update callbacks call
:func:`setting_changed`. :mod:`.footprints` registers what to do when the motion a
preview shows changes (:func:`on_preview_motion`): :mod:`.preview` calls
:func:`preview_motion` when it shows or clears one, :mod:`.live` when it updates one.

Edits the depsgraph reports (:func:`note_edited`, from :mod:`.live`'s
handler) are kept here too, with a clock, so that :mod:`.preview` can tell
that none of its actions was edited since it was signed (:func:`edit_stamp`,
:func:`edited_since`) without hashing their keys again, and, by the types
the depsgraph reports updated (actions it does not evaluate included), that
no action at all was.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from typing import Callable, Hashable


class Kept:
    """A store of at most ``size`` entries, the least recently used evicted first."""
    def __init__(self, name: str, size: int):
        if size < 1:
            raise ValueError(f"store {name!r}: size {size} keeps nothing; give it at least 1")
        self.name, self.size = name, size
        self._entries: OrderedDict = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], object] | None = None):
        """The entry of ``key`` (now the most recently used); without one, ``compute()`` kept, or ``None``."""
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        if compute is None:
            return None
        value = compute()
        self.put(key, value)
        return value

    def put(self, key: Hashable, value) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def pop(self, key: Hashable, default=None):
        return self._entries.pop(key, default)

    def clear(self) -> None:
        self._entries.clear()

    def __getitem__(self, key: Hashable):
        if key not in self._entries:
            raise KeyError(f"store {self.name!r} keeps nothing for {key!r}")
        return self.get(key)

    __setitem__ = put

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def values(self):
        return list(self._entries.values())


_STORES: dict[str, Kept] = {}


def session_store(name: str, size: int) -> Kept:
    """The session's store called ``name`` (made on first use, holding at most ``size`` entries)."""
    store = _STORES.get(name)
    if store is None:
        store = _STORES[name] = Kept(name, size)
    return store


def forget_all() -> None:
    """Empty every store (what the benchmarks call the naive panel: everything read again)."""
    for store in _STORES.values():
        store.clear()


_PREVIEW_SHOWN: dict[str, Callable] = {}
_SETTING_CHANGED: dict[str, Callable] = {}


def on_preview_shown(name: str, hook: Callable) -> None:
    """Call ``hook(obj)`` whenever a preview is shown on armature ``obj`` (one hook per ``name``)."""
    _PREVIEW_SHOWN[name] = hook


def preview_shown(obj) -> None:
    for hook in list(_PREVIEW_SHOWN.values()):
        hook(obj)


_PREVIEW_MOTION: dict[str, Callable] = {}


def on_preview_motion(name: str, hook: Callable) -> None:
    """Call ``hook(obj, motion, start)`` whenever the motion armature ``obj``'s preview shows changes:
    shown or live-updated (the core ``Motion`` and the scene frame of its first frame), or cleared
    (``None, 0``). One hook per ``name``."""
    _PREVIEW_MOTION[name] = hook


def preview_motion(obj, motion, start: int) -> None:
    for hook in list(_PREVIEW_MOTION.values()):
        hook(obj, motion, start)


def on_setting_changed(name: str, hook: Callable) -> None:
    """Call ``hook(scene)`` whenever a setting the depsgraph does not see changes (one hook per ``name``)."""
    _SETTING_CHANGED[name] = hook


def setting_changed(scene) -> None:
    for hook in list(_SETTING_CHANGED.values()):
        hook(scene)


# The depsgraph's reports of edited IDs: ID session_uid (or ID type, for its id_type_updated) -> the clock
# when last reported. The epoch
# changes whenever what was reported can no longer be trusted to be complete (an undo, a file load,
# nobody listening), so that a stamp from before it answers "don't know".
_EDITS = {"epoch": uuid.uuid4().hex[:12], "clock": 0, "watching": False, "restoring": False}
_EDITED: dict[int | str, int] = {}

# ID types noted by type too (edited_since's id_types): edits of the actions the depsgraph does not evaluate,
# such as the sources under the preview's solo, are reported only so (its id_type_updated), not by ID
WATCHED_TYPES = ('ACTION',)


def watch_edits(on: bool) -> None:
    """Whether a depsgraph handler now reports every edit (:func:`note_edited`); off forgets them."""
    if not on or not _EDITS["watching"]:
        forget_edits()
    _EDITS["watching"] = on


def note_edited(session_uids, id_types=()) -> None:
    """The IDs of ``session_uids`` were reported updated by the depsgraph (as its ``updates``), and some
    ID of each type of ``id_types`` (``'ACTION'``, as its ``id_type_updated``), evaluated or not."""
    keys = [*session_uids, *(_type_key(t) for t in id_types)]
    if keys and not _EDITS["restoring"]:
        _EDITS["clock"] += 1
        for key in keys:
            _EDITED[key] = _EDITS["clock"]


def _type_key(id_type: str) -> str:
    return f"type {id_type}"  # (a string: never a session_uid)


def restoring(on: bool) -> None:
    """While on, reports are of data an undo or redo put back as a step of the file had it, with that
    step's signatures (no edit: any edit since a signature was reported before the step was pushed)."""
    _EDITS["restoring"] = on


def forget_edits() -> None:
    """What was reported may be incomplete from here on (an undo put back other data, another file):
    every earlier stamp answers "don't know"."""
    _EDITS["epoch"] = uuid.uuid4().hex[:12]
    _EDITED.clear()


def edit_stamp() -> str:
    """Now, for :func:`edited_since` (``""`` while no handler reports edits: nothing can be known)."""
    return f"{_EDITS['epoch']}:{_EDITS['clock']}" if _EDITS["watching"] else ""


def edited_since(stamp: str, session_uids=(), id_types=()) -> bool | None:
    """Whether any ID of ``session_uids``, or any ID of a type of ``id_types``, was reported edited after
    :func:`edit_stamp` gave ``stamp``; ``None`` when that cannot be known (another epoch, an empty stamp,
    nobody watching)."""
    epoch, _, clock = stamp.partition(":")
    if not _EDITS["watching"] or epoch != _EDITS["epoch"] or not clock.isdigit():
        return None
    keys = [*session_uids, *(_type_key(t) for t in id_types)]
    return any(_EDITED.get(key, 0) > int(clock) for key in keys)
