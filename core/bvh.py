"""Reading and writing BVH motion capture files.

A BVH file is a ``HIERARCHY`` of joints (each with an ``OFFSET`` from its
parent, a ``CHANNELS`` list and optional ``End Site`` tips) followed by a
``MOTION`` block: ``Frames: F``, ``Frame Time: seconds`` and ``F`` lines of
one number per channel, joints in the order they appear in the hierarchy.

Conventions at this edge (everything inside the project follows
:mod:`core.motion`):

* Joints are numbered in order of appearance (depth first), so parents come
  before their children.
* Rotation channels are Euler angles in degrees, applied in the listed order
  from the outside in: ``Zrotation Xrotation Yrotation`` means
  ``R = R_Z @ R_X @ R_Y``, which is ``quat.from_euler(radians, "ZXY")``.
  A joint may list fewer than three rotation channels; the missing axes are
  zero.
* Position channels give the joint's local translation absolutely: they
  replace the ``OFFSET`` (as Blender and most tools read the root), they are
  not added to it. Axes without a position channel keep the ``OFFSET`` value.
  Joints without position channels get their rest offset in every frame.
* ``fps = 1 / frame_time`` exactly as the file states it (``0.0333333``
  gives 30.00003 fps, not 30).
* No axis or unit conversion: lengths stay in the file's unit and the up axis
  is the file's own. ``up`` and ``unit`` only record them in the skeleton.

Malformed files raise :class:`BVHError`, whose message names the source, the
line and what to fix.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

import numpy as np

from . import quat
from .budget import OverBudget, check_budget, current_budget
from .files import write_atomically
from .motion import Motion, Skeleton

__all__ = ["BVHError", "read_bvh", "parse_bvh", "write_bvh", "format_bvh", "declared_size", "Declared"]

_CHANNEL_NAMES = ("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation")
_CANONICAL = {name.lower(): name for name in _CHANNEL_NAMES}
_AXIS = {"X": 0, "Y": 1, "Z": 2}

# Order in which missing rotation axes complete a partial rotation layout
# (and the layout of joints the skeleton says nothing about): BVH's usual ZXY.
_DEFAULT_ORDER = "ZXY"
_DEFAULT_ROOT = ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")

# A translation closer than this (file units) to the rest offset, or a
# missing rotation axis closer than this (radians) to zero, is "not animated".
# Both are far below what the written numbers resolve (1e-9).
_POSITION_TOL = 1e-6
_ANGLE_TOL = 1e-7

_FRAMES = re.compile(r"^\s*frames\s*:\s*(.*?)\s*$", re.IGNORECASE)
# No capture runs faster than 1,000 or slower than 1 frame per second; outside that a
# Frame Time is a typo, and believing it would resample a clip into gigabytes.
MIN_FRAME_TIME, MAX_FRAME_TIME = 1e-3, 1.0
_FRAME_TIME = re.compile(r"^\s*frame\s+time\s*:\s*(.*?)\s*$", re.IGNORECASE)


class BVHError(ValueError):
    """A malformed BVH file; the message says where (source, line) and what to fix."""


def _error(source: str, line: int, problem: str, fix: str) -> BVHError:
    return BVHError(f"{source}, line {line}: {problem}; {fix}")


# --------------------------------------------------------------------------- reading


def read_bvh(path, *, up=(0.0, 1.0, 0.0), unit: float = 1.0) -> Motion:
    """The motion stored in the BVH file at ``path``; see :func:`parse_bvh`.

    A file larger than the memory budget lets it read (:func:`readable_bytes`) is refused
    (:class:`core.budget.OverBudget`) before it is read, a pipe once it has given more; a
    device or a folder is refused as no file (:class:`BVHError`).
    """
    return parse_bvh(_text(_bounded_bytes(path)), str(path), up=up, unit=unit)


# Reading holds a file's bytes, then its text and its lines at once: a file is read only when
# this many times its size fits the memory budget. The values parsed from it are checked
# against the budget once the header has said how many there are (:func:`parse_bytes`).
READ_BYTES_PER_BYTE = 3


def readable_bytes() -> int:
    """The largest BVH file (bytes) the current memory budget lets :func:`read_bvh` read."""
    return current_budget() // READ_BYTES_PER_BYTE


# (with tracemalloc: the Bandai Namco walk tiled to 100,000 frames took 456 MB to parse, and
# parse_bytes says 458; the same frames written as zeros took 284 MB, and it says 306)
def parse_bytes(characters: int, n_lines: int, frames: int, channels: int, joints: int) -> int:
    """Bytes :func:`parse_bvh` holds at its peak for a text of ``characters`` (one byte each, as a
    file's ASCII) in ``n_lines``, declaring ``frames`` of ``channels`` values on ``joints``: the
    text and its lines (about 60 bytes a line besides its characters), the values as doubles,
    the motion's rotations and positions (7 doubles a joint, and a copy while it is checked)."""
    return 2 * characters + 64 * n_lines + 8 * frames * channels + 64 * frames * joints


def _bounded_bytes(path) -> bytes:
    """The bytes of the file at ``path``, read no further than :func:`readable_bytes`."""
    limit = readable_bytes()
    info = os.stat(path)
    mode = info.st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        # (a device such as /dev/zero never ends, a terminal waits for typing)
        kind = "a folder" if stat.S_ISDIR(mode) else "a device or socket, not a file"
        raise BVHError(f"{path} is {kind}: give a BVH file")
    remedy = "give a shorter clip"
    size = info.st_size if stat.S_ISREG(mode) else 0  # (a pipe's size is what it will give)
    check_budget(f"reading {path}", size * READ_BYTES_PER_BYTE, f"a file of {size:,} bytes", remedy=remedy)
    with _opened(path, mode) as f:
        # as much as the file says it holds, then on while it gives more, up to the limit (a
        # buffer of the limit's size, asked for at once, would be taken for any file)
        chunks = [f.read(size + 1)]
        read = len(chunks[0])
        while chunks[-1] and read <= limit:
            chunks.append(f.read(min(READ_CHUNK, limit + 1 - read)))
            read += len(chunks[-1])
    if read > limit:
        # a pipe (or a file that grew since): how much more it holds is not known
        raise OverBudget(f"reading {path}", read * READ_BYTES_PER_BYTE, current_budget(),
                         f"more than {limit:,} bytes", remedy, more_than=True)
    return b"".join(chunk for chunk in chunks if chunk)  # (one chunk is itself, not a copy)


READ_CHUNK = 1 << 20
PIPE_WAIT_S = 10.0  # seconds a pipe may take to give its first bytes


def _opened(path, mode: int):
    """``path`` opened for reading bytes; a pipe only once it gives its first bytes, within
    PIPE_WAIT_S (opening one that nobody writes would wait for ever)."""
    if not stat.S_ISFIFO(mode):
        return open(path, "rb")
    import fcntl
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([fd], [], [], PIPE_WAIT_S)
        if not ready:
            raise BVHError(f"{path} is a pipe nothing was written to within {PIPE_WAIT_S:g} s: give a BVH file, or "
                           f"start what writes the pipe first")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


@dataclass(frozen=True)
class Declared:
    """What a BVH file's header says of its size: ``frames``, ``joints`` and ``fps``."""

    frames: int
    joints: int
    fps: float


# The most of a file read for its header: a hierarchy of ten thousand joints is about a megabyte.
HEADER_BYTES = 1 << 20


def declared_size(path) -> Declared | None:
    """The frames, joints and frame rate the header of the BVH file at ``path`` declares, read
    without its frames (a header is small however long the clip), so that a tool can tell what
    the file will need before it reads it. None where the header does not say: not a regular
    file (a pipe is read once, by :func:`read_bvh`), or a header :func:`read_bvh` will refuse,
    saying why."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as f:
            head = f.read(HEADER_BYTES).decode("latin-1")
    except OSError:
        return None
    lines = iter(head.replace("\r", "\n").split("\n"))
    joints = 0
    for line in lines:
        words = line.split()
        if words and words[0].upper() in ("ROOT", "JOINT"):
            joints += 1
        elif words and words[0].upper() == "MOTION":
            break
    frames = _FRAMES.match(next((line for line in lines if line.strip()), ""))
    frame_time = _FRAME_TIME.match(next((line for line in lines if line.strip()), ""))
    try:
        n, seconds = int(frames.group(1)), float(frame_time.group(1))
    except (AttributeError, ValueError):  # (no such line, or no number on it)
        return None
    if not (joints and n >= 0 and MIN_FRAME_TIME <= seconds <= MAX_FRAME_TIME):
        return None
    return Declared(n, joints, 1.0 / seconds)


def _text(raw: bytes) -> str:
    # (a function of its own, so that the bytes are freed as soon as the text is made)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # Older exporters write joint names in a legacy 8-bit code page.
        return raw.decode("latin-1")


def parse_bvh(text: str, source: str = "<string>", *, up=(0.0, 1.0, 0.0), unit: float = 1.0) -> Motion:
    """The motion stored in BVH ``text``.

    Returns a :class:`Motion` with ``rotations (F, J, 4)`` (local, from the
    rotation channels), ``positions (F, J, 3)`` (position channels where the
    joint has them, the rest offset elsewhere), ``fps = 1 / frame_time`` and a
    :class:`Skeleton` holding the names, parents, offsets, ``end_sites`` and
    each joint's ``channels`` in file order. ``up (3,)`` and ``unit`` (metres
    per file unit) are recorded in the skeleton, nothing is converted.
    ``source`` names the text in error messages. Raises :class:`BVHError`.
    """
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    hierarchy, motion_line = _parse_hierarchy(lines, source)
    names, parents, offsets, end_sites, channels = hierarchy
    n_frames, frame_time, data_line = _parse_motion_header(lines, motion_line, source)
    n_channels = sum(len(c) for c in channels)
    check_budget(f"reading {source}", parse_bytes(len(text), len(lines), n_frames, n_channels, len(names)),
                 f"{n_frames:,} frames of {len(names)} joints, {n_channels} values each", remedy="give a shorter clip")
    data = _parse_frames(lines, data_line, n_frames, n_channels, source)

    J = len(names)
    offsets = np.array(offsets, dtype=np.float64).reshape(J, 3)
    _check_sizes(lines, source, offsets, parents, end_sites, channels, data, data_line)
    positions = np.broadcast_to(offsets, (n_frames, J, 3)).copy()
    rotations = np.empty((n_frames, J, 4))
    column = 0
    # One pass over joints, each over all frames at once.
    for j, joint_channels in enumerate(channels):
        axes, columns = [], []
        for name in joint_channels:
            if name.endswith("position"):
                positions[:, j, _AXIS[name[0]]] = data[:, column]
            else:
                axes.append(name[0])
                columns.append(column)
            column += 1
        order = _complete_order("".join(axes))
        angles = np.zeros((n_frames, 3))
        angles[:, : len(columns)] = np.radians(data[:, columns])
        rotations[:, j] = quat.from_euler(angles, order)
    del lines, data  # (the text's lines and values, larger than the motion, go before it is checked)

    skeleton = Skeleton(
        names=tuple(names),
        parents=np.array(parents),
        offsets=offsets,
        end_sites={j: np.array(o) for j, o in end_sites.items()},
        channels=tuple(channels),
        up=np.asarray(up, dtype=np.float64),
        unit=unit,
    )
    return Motion(skeleton, rotations, positions, 1.0 / frame_time)


# No capture places anything this many times its skeleton's median bone length away: a
# value beyond it is a corrupt file, and believing it overflows later (a position of 1e308
# squared is inf, and the output NaN)
MAX_SIZE_RATIO = 1e6


def _check_sizes(lines: list[str], source: str, offsets: np.ndarray, parents, end_sites: dict, channels,
                 data: np.ndarray, data_line: int) -> None:
    """Refuse a skeleton with no bone (every OFFSET zero) and any OFFSET or position value more
    than MAX_SIZE_RATIO times the median non-zero bone length, naming the line. (A bone's
    length is taken as its offset's largest component, within a factor 1.7 of it: squares of
    the values refused here would overflow.)"""
    bones = np.abs(np.concatenate([offsets[np.asarray(parents) >= 0].reshape(-1, 3),
                                   np.array(list(end_sites.values())).reshape(-1, 3)])).max(axis=1, initial=0.0)
    bones = bones[bones > 0]
    if not len(bones):
        if len(offsets) > 1 or len(end_sites):
            first = next((i for i, line in enumerate(lines) if line.strip().upper().startswith("OFFSET")), 0)
            raise _error(source, first + 1, "every OFFSET below the root is zero: the skeleton has no bones",
                         "export the rig with its rest pose offsets")
        return
    limit = MAX_SIZE_RATIO * float(np.median(bones))
    for i, line in enumerate(lines):
        words = line.split()
        if words and words[0].upper() == "OFFSET" and len(words) == 4:
            if max(abs(float(w)) for w in words[1:]) > limit:  # (a component: its square may overflow)
                raise _error(source, i + 1, f"OFFSET {' '.join(words[1:])} is more than {MAX_SIZE_RATIO:g} times "
                             f"the skeleton's median bone length ({limit / MAX_SIZE_RATIO:.4g})",
                             "no capture has such a value: check the file's units or export it again")
        elif line.strip().upper() == "MOTION":
            break
    columns = [k for k, name in enumerate(c for joint in channels for c in joint) if name.endswith("position")]
    if columns and len(data):
        huge = np.abs(data[:, columns]) > limit
        if huge.any():
            frame, col = np.argwhere(huge)[0]
            raise _error(source, data_line + 1 + int(frame), f"frame {int(frame)} has a position of "
                         f"{data[frame, columns[col]]:.4g}, more than {MAX_SIZE_RATIO:g} times the skeleton's median "
                         f"bone length ({limit / MAX_SIZE_RATIO:.4g})",
                         "no capture has such a value: check the file's units or export it again")


def _complete_order(axes: str) -> str:
    """A full Euler order starting with ``axes`` (the listed rotation channels)."""
    return axes + "".join(a for a in _DEFAULT_ORDER if a not in axes)


def _numbers(words: list[str], source: str, line: int, what: str) -> list[float]:
    try:
        values = [float(w) for w in words]
    except ValueError:
        raise _error(source, line, f"{what} has a non-numeric value in {' '.join(words)!r}", "write plain decimal numbers") from None
    if not all(np.isfinite(values)):
        raise _error(source, line, f"{what} has a non-finite value in {' '.join(words)!r}", "write finite numbers")
    return values


def _parse_hierarchy(lines: list[str], source: str):
    """Joints from the HIERARCHY section, and the index of the ``MOTION`` line.

    The hierarchy is small, so it is read line by line; every problem is
    reported with the line it was found on.
    """
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None:
        raise _error(source, 1, "the file is empty", "a BVH file starts with 'HIERARCHY', then 'ROOT <name>'")
    if lines[start].split()[0].upper() != "HIERARCHY":
        raise _error(source, start + 1, f"expected 'HIERARCHY', found {lines[start].strip()!r}", "a BVH file starts with 'HIERARCHY'")

    names: list[str] = []
    parents: list[int] = []
    offsets: list = []
    channels: list[tuple[str, ...]] = []
    end_sites: dict[int, list[float]] = {}
    opened_on: list[int] = []  # line of each joint's ROOT/JOINT keyword
    # Each open block is (kind, joint index, line); kind is "joint" or "end".
    stack: list[tuple[str, int, int]] = []
    pending = None  # a block announced by ROOT/JOINT/End Site, waiting for '{'
    end_offset: list | None = None

    for i in range(start + 1, len(lines)):
        n = i + 1
        words = lines[i].split()
        if not words:
            continue
        key = words[0].upper()
        opens_here = False
        if key in ("ROOT", "JOINT", "END") and len(words) > 1 and words[-1] == "{":
            # "JOINT Hips {" on one line
            words = words[:-1]
            opens_here = True
        if pending is not None and key != "{":
            kind, _, line = pending
            raise _error(source, n, f"expected '{{' after the {kind} on line {line}, found {lines[i].strip()!r}", "open every ROOT, JOINT and End Site with '{'")

        if key in ("ROOT", "JOINT"):
            name = " ".join(words[1:])
            if not name:
                raise _error(source, n, f"{words[0]} without a name", f"write '{words[0]} <name>'")
            if key == "ROOT":
                if names:
                    raise _error(source, n, f"a second ROOT {name!r}", "keep one skeleton per file (one ROOT)")
                parent = -1
            else:
                if not stack or stack[-1][0] != "joint":
                    where = "inside an End Site" if stack else "outside the ROOT's braces"
                    raise _error(source, n, f"JOINT {name!r} {where}", "place each JOINT inside its parent joint's braces (check the '{' and '}' before it)")
                parent = stack[-1][1]
            if name in names:
                raise _error(source, n, f"joint name {name!r} is used twice (first on line {opened_on[names.index(name)]})", "give every joint a unique name")
            names.append(name)
            parents.append(parent)
            offsets.append(None)
            channels.append(None)
            opened_on.append(n)
            pending = ("joint", len(names) - 1, n)
        elif key == "END":
            if len(words) < 2 or words[1].upper() != "SITE":
                raise _error(source, n, f"unexpected {lines[i].strip()!r}", "an End Site is written 'End Site'")
            if not stack or stack[-1][0] != "joint":
                raise _error(source, n, "End Site outside a joint", "place the End Site inside its joint's braces")
            j = stack[-1][1]
            if j in end_sites:
                raise _error(source, n, f"joint {names[j]!r} has a second End Site", "keep one End Site per joint")
            pending = ("end", j, n)
            end_offset = None
        elif key == "{":
            if len(words) > 1:
                raise _error(source, n, f"unexpected text after '{{': {' '.join(words[1:])!r}", "put '{' on a line of its own")
            if pending is None:
                raise _error(source, n, "'{' without a ROOT, JOINT or End Site before it", "remove the stray '{' or name the joint it opens")
            stack.append(pending)
            pending = None
        elif key == "}":
            if len(words) > 1:
                raise _error(source, n, f"unexpected text after '}}': {' '.join(words[1:])!r}", "put '}' on a line of its own")
            if not stack:
                raise _error(source, n, "'}' closes nothing (more '}' than '{')", "remove the extra '}'")
            kind, j, line = stack.pop()
            if kind == "joint" and offsets[j] is None:
                raise _error(source, line, f"joint {names[j]!r} has no OFFSET", "add 'OFFSET x y z' after its '{'")
            if kind == "end":
                if end_offset is None:
                    raise _error(source, line, f"the End Site of {names[j]!r} has no OFFSET", "add 'OFFSET x y z' after its '{'")
                end_sites[j] = end_offset
        elif key == "OFFSET":
            if not stack:
                raise _error(source, n, "OFFSET outside a joint", "place OFFSET inside a joint's braces")
            values = _numbers(words[1:], source, n, "OFFSET")
            if len(values) != 3:
                raise _error(source, n, f"OFFSET has {len(values)} values", "write exactly three: 'OFFSET x y z'")
            kind, j, _ = stack[-1]
            if kind == "end":
                end_offset = values
            elif offsets[j] is not None:
                raise _error(source, n, f"joint {names[j]!r} has a second OFFSET", "keep one OFFSET per joint")
            else:
                offsets[j] = values
        elif key == "CHANNELS":
            if not stack or stack[-1][0] != "joint":
                raise _error(source, n, "CHANNELS outside a joint", "place CHANNELS inside a ROOT or JOINT (End Sites have none)")
            j = stack[-1][1]
            if channels[j] is not None:
                raise _error(source, n, f"joint {names[j]!r} has a second CHANNELS line", "keep one CHANNELS line per joint")
            try:
                count = int(words[1]) if len(words) > 1 else -1
            except ValueError:
                count = -1
            if count < 0:
                raise _error(source, n, f"CHANNELS needs a count, found {' '.join(words[1:2])!r}", "write 'CHANNELS <count> <names...>'")
            listed = words[2:]
            if len(listed) != count:
                raise _error(
                    source, n,
                    f"CHANNELS {count} is followed by {len(listed)} channel names ({' '.join(listed)})",
                    "make the count match the names listed after it",
                )
            unknown = [c for c in listed if c.lower() not in _CANONICAL]
            if unknown:
                raise _error(source, n, f"unknown channel {unknown[0]!r}", f"channel names are {', '.join(_CHANNEL_NAMES)}")
            canonical = tuple(_CANONICAL[c.lower()] for c in listed)
            if len(set(canonical)) != len(canonical):
                raise _error(source, n, f"a channel is listed twice in {' '.join(listed)}", "list each channel at most once")
            channels[j] = canonical
        elif key == "MOTION":
            if stack:
                kind, j, line = stack[-1]
                what = f"joint {names[j]!r}" if kind == "joint" else f"the End Site of {names[j]!r}"
                raise _error(source, n, f"MOTION reached with {len(stack)} unclosed '{{' ({what}, opened on line {line})", "add the missing '}'")
            if not names:
                raise _error(source, n, "the HIERARCHY has no ROOT", "describe the skeleton with 'ROOT <name>' before MOTION")
            # A joint without a CHANNELS line is animated by nothing (as 'CHANNELS 0').
            channels = [c if c is not None else () for c in channels]
            return (names, parents, offsets, end_sites, channels), i
        else:
            raise _error(source, n, f"unexpected {lines[i].strip()!r} in the HIERARCHY", "only ROOT, JOINT, End Site, OFFSET, CHANNELS, braces and MOTION belong here")

        if opens_here:
            stack.append(pending)
            pending = None

    last = max((i + 1 for i, line in enumerate(lines) if line.strip()), default=1)
    if stack or pending is not None:
        kind, j, line = stack[-1] if stack else pending
        raise _error(source, last, f"the file ends inside {names[j]!r} (opened on line {line})", "add the missing '}' and the MOTION section")
    raise _error(source, last, "the file ends without a MOTION section", "add 'MOTION', 'Frames: <count>', 'Frame Time: <seconds>' and the frames")


def _parse_motion_header(lines: list[str], motion_line: int, source: str) -> tuple[int, float, int]:
    """``(frames, frame_time, index of the first frame line)`` after ``MOTION``."""

    def next_line(i: int) -> int:
        while i < len(lines) and not lines[i].strip():
            i += 1
        return i

    def where(i: int, previous: int) -> int:
        # 1-based line number; at the end of the file, the line after the last one read
        return i + 1 if i < len(lines) else previous + 2

    i = next_line(motion_line + 1)
    found = repr(lines[i].strip()) if i < len(lines) else "the end of the file"
    match = _FRAMES.match(lines[i]) if i < len(lines) else None
    if match is None:
        raise _error(source, where(i, motion_line), f"expected 'Frames: <count>' after MOTION (line {motion_line + 1}), found {found}", "add the 'Frames:' line with the number of frames")
    try:
        n_frames = int(match.group(1))
    except ValueError:
        n_frames = -1
    if n_frames < 0:
        raise _error(source, i + 1, f"'Frames:' must be a whole number >= 0, found {match.group(1)!r}", "write the number of frame lines that follow")
    frames_line = i

    i = next_line(i + 1)
    found = repr(lines[i].strip()) if i < len(lines) else "the end of the file"
    match = _FRAME_TIME.match(lines[i]) if i < len(lines) else None
    if match is None:
        raise _error(source, where(i, frames_line), f"expected 'Frame Time: <seconds>' after 'Frames:' (line {frames_line + 1}), found {found}", "add the 'Frame Time:' line (seconds per frame, e.g. 0.0333333 for 30 fps)")
    try:
        frame_time = float(match.group(1))
    except ValueError:
        frame_time = float("nan")
    if not (np.isfinite(frame_time) and frame_time > 0.0):
        raise _error(source, i + 1, f"bad frame time {match.group(1)!r}", "write a positive number of seconds per frame (e.g. 0.0333333 for 30 fps)")
    if not MIN_FRAME_TIME <= frame_time <= MAX_FRAME_TIME:
        raise _error(source, i + 1, f"Frame Time {match.group(1)} s is outside {MIN_FRAME_TIME:g} .. {MAX_FRAME_TIME:g} s "
                     f"({1 / MAX_FRAME_TIME:g} to {1 / MIN_FRAME_TIME:g} frames per second)",
                     "write the seconds per frame the capture was taken at (e.g. 0.0333333 for 30 fps, 0.00833333 for 120)")
    return n_frames, frame_time, i + 1


def _parse_frames(lines: list[str], first: int, n_frames: int, n_channels: int, source: str) -> np.ndarray:
    """The frame values ``(n_frames, n_channels)`` from ``lines[first:]``.

    Parsed in one call over the whole block (numpy's C reader); only when
    that fails, or the shape is not the declared one, are the lines walked
    one by one to find and report the first bad line.
    """
    block = lines[first:]
    if all(not line or line.isspace() for line in block):
        if n_channels == 0:
            # a skeleton without channels has empty frames
            return np.zeros((n_frames, 0))
        data = np.zeros((0, n_channels))
    else:
        try:
            # (the lines themselves, not one string of them: that string, and the reader's
            # copy of it, four bytes a character, were most of the memory a file took to read)
            data = np.loadtxt(block, dtype=np.float64, comments=None, ndmin=2)
        except ValueError:
            data = None
    if data is not None and data.shape == (n_frames, n_channels) and np.all(np.isfinite(data)):
        return data
    _diagnose_frames(lines, first, n_frames, n_channels, source)
    # _diagnose_frames finds every problem loadtxt can have; this is a safety net.
    raise _error(source, first + 1, "the MOTION block could not be read", "write one line of numbers per frame")


def _diagnose_frames(lines: list[str], first: int, n_frames: int, n_channels: int, source: str) -> None:
    """Raise :class:`BVHError` for the first bad frame line (error path only)."""
    frame = 0
    last = first  # 1-based number of the last line with content (the Frame Time line at first)
    for i in range(first, len(lines)):
        words = lines[i].split()
        if not words:
            continue
        last = i + 1
        if frame == n_frames:
            raise _error(source, i + 1, f"more frame lines than 'Frames: {n_frames}' declares", f"set 'Frames:' to the number of frame lines or remove the extra lines from line {i + 1} on")
        if len(words) != n_channels:
            truncated = " (the file may be cut off)" if frame == n_frames - 1 else ""
            raise _error(
                source, i + 1,
                f"frame {frame} has {len(words)} values but the HIERARCHY declares {n_channels} channels{truncated}",
                "write one value per channel on every frame line",
            )
        for k, word in enumerate(words):
            try:
                value = float(word)
            except ValueError:
                value = None
            if value is None or not np.isfinite(value) or "_" in word:
                raise _error(source, i + 1, f"frame {frame}, value {k + 1} is not a finite number: {word!r}", "write plain decimal numbers")
        frame += 1
    if frame < n_frames:
        raise _error(
            source, last,
            f"the MOTION block ends after {frame} frames but 'Frames:' declares {n_frames} (the file is truncated)",
            f"re-export the file, or set 'Frames: {frame}' to keep the frames present",
        )


# --------------------------------------------------------------------------- writing


def write_bvh(motion: Motion, path, *, continuous: bool = False) -> None:
    """Write ``motion`` to the BVH file at ``path``, whole or not at all (:func:`core.files.write_atomically`);
    see :func:`format_bvh`."""
    write_atomically(path, format_bvh(motion, continuous=continuous))


def format_bvh(motion: Motion, *, continuous: bool = False) -> str:
    """``motion`` as BVH text.

    Each joint keeps its channel layout from ``skeleton.channels``; without
    one, joint 0 gets ``Xposition Yposition Zposition Zrotation Xrotation
    Yrotation`` and the others ``Zrotation Xrotation Yrotation``. A joint
    whose translation leaves its rest offset gets position channels (6 in
    all) and one whose rotation its rotation channels cannot express gets
    all three, so nothing is lost.

    Angles are ``quat.to_euler`` in the joint's channel order, in degrees:
    middle angle in [-90°, 90°], outer two in (-180°, 180°].
    ``continuous=True`` then unwraps every angle channel over time (no jumps
    of 360°; the first frame keeps those ranges). Reading a file and writing
    it back so reproduces each channel exactly if the file's channels were
    continuous and started in those ranges, and modulo 360° otherwise.
    ``continuous=False`` keeps every frame in those ranges, the convention
    of files exported frame by frame (e.g. the Bandai Namco dataset, which
    it reproduces exactly). Angles the ranges cannot hold (a middle angle
    beyond ±90°) or that are not unique (gimbal lock, middle angle ±90°)
    come back as another Euler solution of the same rotation. Either way
    the rotations are the motion's.

    Joints are written depth first (children in index order); a skeleton
    numbered otherwise reads back in that order.
    """
    skeleton = motion.skeleton
    J = len(skeleton)
    # never a NaN or an infinity written: a result that has one is refused before any file is touched
    bad = [what for what, values in (("rotations", motion.rotations), ("positions", motion.positions),
                                     ("offsets", skeleton.offsets)) if not np.all(np.isfinite(values))]
    if bad or not all(np.all(np.isfinite(o)) for o in skeleton.end_sites.values()):
        raise ValueError(f"the motion has non-finite {' and '.join(bad) or 'end sites'}: nothing was written; "
                         f"check the inputs for values no capture has")
    for name in skeleton.names:
        if not name.strip() or "\n" in name or "\r" in name or name != name.strip():
            raise ValueError(f"joint name {name!r} cannot be written to BVH; use a non-empty name without surrounding spaces or line breaks")
    children = [skeleton.children(j) for j in range(J)]

    header = ["HIERARCHY"]
    columns: list[np.ndarray] = []

    # depth first, with a stack of its own rather than recursion: a hierarchy can be
    # thousands of joints deep (a rope, a tail) where Python's recursion limit is not
    todo: list[tuple[int, int, bool]] = [(0, 0, False)]  # (joint, depth, closing)
    while todo:
        j, depth, closing = todo.pop()
        indent = "\t" * depth
        if closing:
            if j in skeleton.end_sites:
                header.append(f"{indent}\tEnd Site")
                header.append(f"{indent}\t{{")
                header.append(f"{indent}\t\tOFFSET {_format_numbers(skeleton.end_sites[j])}")
                header.append(f"{indent}\t}}")
            header.append(f"{indent}}}")
            continue
        layout = _channel_layout(motion, j)
        columns.append(_channel_values(motion, j, layout, continuous))
        header.append(f"{indent}{'ROOT' if j == 0 else 'JOINT'} {skeleton.names[j]}")
        header.append(f"{indent}{{")
        header.append(f"{indent}\tOFFSET {_format_numbers(skeleton.offsets[j])}")
        header.append(f"{indent}\tCHANNELS {len(layout)}{''.join(' ' + c for c in layout)}")
        todo.append((j, depth, True))
        todo.extend((c, depth + 1, False) for c in reversed(children[j]))
    values = np.concatenate(columns, axis=1)
    header += ["MOTION", f"Frames: {motion.n_frames}", f"Frame Time: {_format_frame_time(motion.fps)}"]
    return "\n".join(header) + "\n" + _format_rows(values)


def _channel_layout(motion: Motion, j: int) -> tuple[str, ...]:
    """Joint ``j``'s channels: the skeleton's, widened if they cannot carry the motion."""
    skeleton = motion.skeleton
    if skeleton.channels:
        layout = tuple(skeleton.channels[j])
    else:
        layout = _DEFAULT_ROOT if j == 0 else tuple(f"{a}rotation" for a in _DEFAULT_ORDER)
    position = [c for c in layout if c.endswith("position")]
    rotation = [c for c in layout if c.endswith("rotation")]

    fixed_axes = [a for a in range(3) if "XYZ"[a] + "position" not in position]
    moved = np.abs(motion.positions[:, j, fixed_axes] - skeleton.offsets[j, fixed_axes])
    needs_position = moved.size > 0 and moved.max() > _POSITION_TOL

    needs_rotation = False
    if len(rotation) < 3 and motion.n_frames:
        axes = "".join(c[0] for c in rotation)
        a, b = _euler_branches(motion.rotations[:, j], _complete_order(axes))
        needs_rotation = not np.all(_expressible(a, len(axes)) | _expressible(b, len(axes)))

    if not (needs_position or needs_rotation):
        return layout
    if needs_position:
        position = ["Xposition", "Yposition", "Zposition"]
    if needs_rotation:
        rotation = [f"{a}rotation" for a in _complete_order("".join(c[0] for c in rotation))]
    return tuple(position + rotation)


def _wrap(a: np.ndarray) -> np.ndarray:
    """Angles in radians wrapped into [-pi, pi)."""
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def _euler_branches(q: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray]:
    """The two Euler solutions ``(F, 3)`` of rotations ``q (F, 4)``.

    The first is ``quat.to_euler``'s (middle angle in [-pi/2, pi/2]); the
    second is the same rotation as ``(a0 + pi, pi - a1, a2 + pi)``.
    """
    a = quat.to_euler(q, order)
    b = np.stack([a[:, 0] + np.pi, np.pi - a[:, 1], a[:, 2] + np.pi], axis=-1)
    b[:, [0, 2]] = _wrap(b[:, [0, 2]])
    return a, b


def _expressible(euler: np.ndarray, n_axes: int) -> np.ndarray:
    """``(F,)`` True where the angles after the first ``n_axes`` are zero."""
    return np.all(np.abs(_wrap(euler[:, n_axes:])) <= _ANGLE_TOL, axis=-1)


def _euler_degrees(q: np.ndarray, order: str, n_axes: int, continuous: bool) -> np.ndarray:
    """Euler angles in degrees ``(F, 3)`` of ``q (F, 4)`` in ``order`` for writing.

    Every frame starts from ``quat.to_euler``'s solution. ``n_axes`` is the
    number of rotation channels the joint has; the angles after them must be
    zero, so where only the other solution has them zero, that one is used.
    With ``continuous`` each angle is then unwrapped in time (multiples of
    360° added so that no step exceeds 180°), which keeps the first frame
    and reproduces any file whose channels were continuous, modulo 360°
    otherwise. The solution itself is not switched where the middle angle
    passes ±90°: near gimbal lock the outer angles of recorded data swing by
    up to 180° between frames, and switching there would trade those swings
    for angles the source never had.
    """
    a, b = _euler_branches(q, order)
    if n_axes < 3:
        euler = np.where((~_expressible(a, n_axes) & _expressible(b, n_axes))[:, None], b, a)
    else:
        euler = a
    if continuous and len(q) > 1:
        euler = np.unwrap(euler, axis=0)
    return np.degrees(euler)


def _channel_values(motion: Motion, j: int, layout: tuple[str, ...], continuous: bool) -> np.ndarray:
    """The values ``(F, len(layout))`` of joint ``j``'s channels, file units and degrees."""
    axes = "".join(c[0] for c in layout if c.endswith("rotation"))
    euler = _euler_degrees(motion.rotations[:, j], _complete_order(axes), len(axes), continuous) if axes else None
    out = np.empty((motion.n_frames, len(layout)))
    for k, name in enumerate(layout):
        if name.endswith("position"):
            out[:, k] = motion.positions[:, j, _AXIS[name[0]]]
        else:
            out[:, k] = euler[:, axes.index(name[0])]
    return out


def _clean(values: np.ndarray) -> np.ndarray:
    # Rounding to 1e-9 removes the float noise of the quaternion round trip
    # (179.99999999999997 -> 180) so numbers print as short as the file had
    # them; adding 0.0 turns -0.0 into 0.0.
    return np.round(np.asarray(values, dtype=np.float64), 9) + 0.0


def _format_numbers(values: np.ndarray) -> str:
    return " ".join("%.12g" % v for v in _clean(values))


def _format_rows(values: np.ndarray) -> str:
    """One line per frame of ``values (F, C)``.

    A single ``%`` over one format string per block of FORMAT_ROWS frames:
    the formatting runs in C, no Python loop over frames.
    """
    F, C = values.shape
    # (in blocks: each value becomes a Python float in a tuple first, about 60 bytes, so one
    # block of a 100,000-frame clip of 22 joints took twice the memory of the rest of the writing)
    row = " ".join(["%.12g"] * C) + "\n"
    return "".join((row * len(block)) % tuple(_clean(block).ravel().tolist())
                   for block in np.array_split(values, range(FORMAT_ROWS, F, FORMAT_ROWS)))


FORMAT_ROWS = 4096


def _format_frame_time(fps: float) -> str:
    """Seconds per frame, as short as reading it back still gives ``fps`` exactly."""
    frame_time = 1.0 / fps
    short = "%.10g" % frame_time
    return short if 1.0 / float(short) == fps else repr(frame_time)
