"""Command line of the numpy core.

    python -m core analyze CLIP.bvh [--json] [--map ROLE=JOINT ...]
    python -m core synthesize CLIP.bvh[@START][:CORE_START-CORE_END] ... -o OUT.bvh
                              [--responsiveness W] [--plan PLAN.json] [--current FRAME]

A clip without @START (CLIP.bvh, CLIP.bvh@:CORE_START-CORE_END) runs as soon as
possible after the clips before it on the command line (2014 section 5); with
--current FRAME, its blends start after FRAME and output frames up to FRAME stay
as the clips before it alone give them (eq. 17).
    python -m core blend A.bvh B.bvh [C.bvh ...] -o OUT.bvh [--weights 0.5,0.5] [--priorities 2,1]
                         [--starts 0,30] [--cyclic A,B] [--plan PLAN.json] [--no-sync]
                         [--part-weights CLIP:PART=W,...] [--ends CLIP=FRAME,...]

blend plays the clips at the same time, each from its start (output frame 0 is
the earliest), synchronized on their support phases and blended (Ménardais
2004, core.mkm); --no-sync gives the NLA's frame-by-frame blend instead. Weights
may be scaled per body part (legs, upper, arms): a clip whose feet stand still
gets legs=0 unless told otherwise. Each clip fades out where it ends (or at
--ends), the others taking its weight; a cyclic clip repeats as long as the
blend runs, until --ends ends it; a clip of weight 0 is left out.
    python -m core demo [--json] [--write DIR]
    python -m core hops precompute LIBRARY_DIR --src A.bvh --dst B.bvh --offset FRAMES -o TABLE.npz
                        [--blend SECONDS] [--weight W] [--workers N] [--scheduler ADDRESS] [--map ROLE=JOINT ...]
    python -m core hops show TABLE.npz [--trigger FRAME] [--json]
    python -m core hops render TABLE.npz --trigger FRAME -o OUT.bvh [--plain] [--direct]
                       [--library DIR] [--src A.bvh] [--dst B.bvh] [--map ROLE=JOINT ...]

    python -m core assemble QUERY.bvh --part PART=LIBRARY_DIR [--part PART=DIR ...] -o OUT.bvh
                            [--report R.json] [--map ROLE=JOINT ...]

assemble replaces body parts of the query (left.arm, right.arm, left.leg,
right.leg, upper, lower) with the most similar segment of a folder of clips on
its skeleton, time-aligned on feature poses, the junctures standardised to the
query's statistics (Juang et al. 2009, section 4, core.assemble).

hops precompute finds, for every trigger frame of A, the best one-hop
transition to B through a clip of the library (Koyama & Goto 2019, core.hops),
B's frame k playing at A's frame k + FRAMES; show prints the table; render
writes the transition at one trigger frame (core.hops_render): through the
synthesis engine, with the paper's plain blends (--plain), or the plain direct
transition (--direct). The clips are read from DIR (default: the table's
folder), the source and destination from --src/--dst when given.

    python -m core reach EXAMPLES_DIR --target X,Y,Z [--effector ROLE] [--feature highest|farthest]
                         -o OUT.bvh [--report R.json]

reach blends the examples of one action (Juang et al. 2009, core.reach) so that
the effector's hit point lands on the target, given in the first example's file
coordinates (by file name); the output starts where and as that example starts.


Errors in the input (a malformed file, a rig whose legs cannot be found or
point up, two clips of other scales) end the program with a one-line message
saying what to fix and exit status 2.
Nothing the user gave is lost: an output path that is an input (however
spelled) or the other output is refused, every output folder is checked
before anything is read or written, and each file is written whole or not at
all (core.files). A plan or report begins with the output it belongs to, its
file name and SHA-256 ("output"), and replaces its old file after the output
does: a run killed between the two leaves a record that does not name the
output beside it.
Work whose arrays would exceed the memory budget (2 GiB;
--max-memory GIB, on every command, raises it) is refused before it starts,
naming the size it would need (core.budget); what follows from frame counts
alone is checked from the files' headers, before a clip is read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from contextlib import contextmanager

from .options import SynthesisOptions
from .text import counted


def _gib(text: str) -> float:
    """``--max-memory GIB`` -> bytes."""
    from .budget import GiB

    try:
        gib = float(text)
    except ValueError:
        gib = float("nan")
    if not (0 < gib < float("inf")):
        raise argparse.ArgumentTypeError(f"expects a positive number of GiB (for example 8), got {text!r}")
    return gib * GiB


def _declared(paths) -> list | None:
    """What the header of each BVH file declares (core.bvh.declared_size), or None when one does
    not say: the sizes a command will need are then checked as the files are read."""
    from .bvh import declared_size

    sizes = [declared_size(path) for path in paths]
    return None if any(size is None for size in sizes) else sizes


def _frames_at(declared, fps: float) -> int:
    """A declared clip's frames once resampled to ``fps`` (core.motion.Motion.resampled)."""
    from .motion import resampled_frames

    return resampled_frames(declared.frames, declared.fps, fps)


def _overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs or []:
        role, sep, joint = pair.partition("=")
        if not sep or not role or not joint:
            raise ValueError(f"--map expects ROLE=JOINT (for example left.ankle=LeftFoot), got {pair!r}")
        out[role.strip()] = joint.strip()
    return out


def _write_with_record(output: str, text: str, record_path: str | None, record: dict | None = None, *,
                       allow_nan: bool = False) -> None:
    """The BVH ``text`` to ``output`` and, given ``record_path``, the JSON ``record`` (a plan or a
    report) with ``"output"`` first: the output's file (from the record's folder) and SHA-256.

    Both are made and flushed before either replaces its old file, the output renamed first and
    its record last (core.files.write_files_atomically): a kill between the two renames leaves
    the new output beside the old record, which names another output."""
    import hashlib

    from .files import write_files_atomically

    data = text.encode("utf-8")
    files = {output: data}
    if record_path is not None:
        folder = os.path.dirname(os.path.abspath(record_path))
        try:
            name = os.path.relpath(os.path.abspath(output), folder)
        except ValueError:  # (Windows: another drive)
            name = os.path.abspath(output)
        named = {"output": {"file": name, "sha256": hashlib.sha256(data).hexdigest()}, **(record or {})}
        files[record_path] = json.dumps(named, indent=2, allow_nan=allow_nan).encode("utf-8")
    write_files_atomically(files)


def cmd_analyze(args) -> int:
    from .analysis import analyze
    from .bvh import read_bvh
    from .rig import find_rig

    motion = read_bvh(args.clip)
    rig = find_rig(motion, overrides=_overrides(args.map), clip=args.clip)
    result = analyze(motion, rig)
    if args.json:
        print(result.to_json(indent=2))
    else:
        print(f"{args.clip}")
        print(result.summary())
    return 0


_WHOLE = re.compile(r"^[+-]?\d+$")
_CORE = re.compile(r"^\s*([+-]?\d+)\s*-\s*([+-]?\d+)\s*$")


def parse_clip_spec(spec: str) -> tuple[str, int | None, tuple[int, int] | None]:
    """``PATH[@START][:CORE_START-CORE_END]`` -> (path, start or None, core or None).

    START is an output frame (any whole number); without it (``PATH`` or
    ``PATH@:CORE_START-CORE_END``) the clip runs as soon as possible. The core's
    frames are the clip's own, from 0. The spec splits at its last ``@``: a file
    whose name has one needs its ``@START`` (``take@2.bvh@0``). Each message says
    which part is wrong.
    """
    path, at, rest = spec.rpartition("@")
    if not at:
        if not spec.strip():
            raise ValueError("clip '': expected PATH[@START][:CORE_START-CORE_END], e.g. walk.bvh@0:30-120")
        return spec, None, None
    if not path:
        raise ValueError(f"clip {spec!r}: expected PATH[@START][:CORE_START-CORE_END], e.g. walk.bvh@0:30-120")
    start_text, colon, core_text = rest.partition(":")
    if not start_text.strip() and colon:
        start = None  # as soon as possible, with a core
    elif not _WHOLE.match(start_text.strip()):
        raise ValueError(f"clip {spec!r}: START {start_text!r} must be a whole output frame, as in walk.bvh@0:30-120 "
                         f"(or leave it out, as in walk.bvh@:30-120, to run the clip as soon as possible)"
                         + _at_sign_hint(spec))
    else:
        start = _checked_frame(int(start_text), f"clip {spec!r}: START")
    core = None
    if colon:
        match = _CORE.match(core_text)
        if match is None:
            raise ValueError(f"clip {spec!r}: the core {core_text!r} must be two whole clip frames, FIRST-LAST, "
                             f"as in walk.bvh@0:30-120")
        core = tuple(_checked_frame(int(match.group(k)), f"clip {spec!r}: the core") for k in (1, 2))
    return path, start, core


# No timeline or clip is this long (a year at 30 fps): a larger frame number is a typo, and
# believing it overflowed numpy's 64-bit integers (an OverflowError traceback)
MAX_FRAME = 10**9


def _checked_frame(value: int, what: str) -> int:
    if abs(value) > MAX_FRAME:
        raise ValueError(f"{what} {value} is beyond {MAX_FRAME:,} frames (a year at 30 fps): give the frame meant")
    return value


def _frame(text: str) -> int:
    """argparse type: a frame number, whole and within MAX_FRAME either way."""
    try:
        return _checked_frame(int(text), "frame")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error) if "beyond" in str(error) else f"{text!r} is not a whole frame")


def _finite(low: float, high: float, what: str):
    """argparse type: a number from ``low`` to ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:  # (NaN fails too)
            raise argparse.ArgumentTypeError(f"{what} must be from {low:g} to {high:g}, got {text}")
        return value
    return parse


def _at_sign_hint(spec: str) -> str:
    """``"; ... e.g. take@2.bvh@0"`` when ``spec`` (or its part before a ``:CORE``) names an existing
    file with ``@`` in its name, which :func:`parse_clip_spec` split at that ``@``; else ``""``."""
    from pathlib import Path

    for file, core in ((spec, ""), (spec.rpartition(":")[0], ":" + spec.rpartition(":")[2])):
        if "@" in file and Path(file).is_file():
            return (f"; {file} is a file: a file name containing @ needs its @START given (CLIP.bvh@START[:CORE]), "
                    f"e.g. {file}@0{core}")
    return ""


def cmd_synthesize(args) -> int:
    from dataclasses import replace
    from pathlib import Path

    from .bvh import format_bvh, read_bvh
    from .files import check_outputs
    from .rig import find_rig
    from .synthesize import Clip, check_synthesis_size, scheduled_start, synthesize, unique_names

    specs = [parse_clip_spec(spec) for spec in args.clips]
    for spec, (path, _, _) in zip(args.clips, specs):
        if not Path(path).exists():
            raise ValueError(f"clip {spec!r}: no such file {path}" + _at_sign_hint(spec))
    if args.current is not None and all(start is not None for _, start, _ in specs):
        raise ValueError("--current FRAME applies to clips given without @START (run as soon as possible); "
                         "give one, e.g. kick.bvh or kick.bvh@:10-40")
    # before anything is read or written: no output may be an input or the other output,
    # and every output's folder must take the file
    outputs = {"-o": args.output, **({"--plan": args.plan} if args.plan is not None else {})}
    check_outputs({f"clip '{spec}'": path for spec, (path, _, _) in zip(args.clips, specs)}, outputs)
    declared = _declared([path for path, _, _ in specs])
    if declared:
        # before the clips are read (a long one takes seconds): the output runs at least from the
        # first start to the last placed clip's end, and past --current
        placed = [(start or 0, _frames_at(d, declared[0].fps))  # (the first clip starts at 0 when not placed)
                  for k, ((_, start, _), d) in enumerate(zip(specs, declared)) if start is not None or k == 0]
        check_synthesis_size(placed, declared[0].joints, args.current)
    names = unique_names([Path(path).stem for path, _, _ in specs])
    blends = _clip_blends(args.blend, names)
    clips = [Clip(read_bvh(path), start if start is not None else 0, core, name, blend_s=blends.get(name))
             for (path, start, core), name in zip(specs, names)]
    check_blend_lengths(blends, clips)
    rig = find_rig(clips[0].motion, overrides=_overrides(args.map), clip=f"clip '{clips[0].name}'")
    placed = []
    for clip, (_, start, _) in zip(clips, specs):
        if start is None and placed:
            # as soon as possible after the clips before it on the command line (2014 section 5)
            scheduled = scheduled_start(placed, clip, responsiveness=args.responsiveness, t_current=args.current,
                                        rig=rig)
            start = scheduled.start
            clip = replace(clip, start=start, current=args.current)
            print(f"'{clip.name}' runs as soon as possible: from output frame {start}, its core from "
                  f"{start + clip.core_range[0]}" + (f" (after the current frame {args.current})"
                                                     if args.current is not None else "")
                  + (f", {counted(scheduled.moved, 'frame')} later than W alone would start it, so that its gap is not "
                     "flagged" if scheduled.moved else "")
                  + (f"; no start within {SynthesisOptions().give_room_s:g} s keeps its gap unflagged "
                     f"({', '.join(scheduled.flags)})"
                     if scheduled.flags else ""))
        placed.append(clip)
    clips = placed
    rooms = None
    if args.give_room:
        from .resynthesis import Resynthesis
        from .room import give_room_to_every_flagged_gap

        # each gap's search confirms a start on the whole timeline: one re-synthesis keeps what it can
        live = Resynthesis(rig=rig)
        clips, rooms = give_room_to_every_flagged_gap(
            clips, responsiveness=args.responsiveness, rig=rig,
            synthesized=lambda timeline: live.update(timeline, responsiveness=args.responsiveness))
        for room in rooms:
            print(f"give room: {room.text()}")
        if not rooms:
            print("give room: no gap is flagged; nothing moved")
    result = synthesize(clips, responsiveness=args.responsiveness, rig=rig)
    record = None
    if args.plan is not None:
        # (the plan as Plan.to_json writes it, naming its output; with --give-room, the moves)
        record = result.plan.to_dict()
        if rooms is not None:
            record["give_room"] = [room.to_dict() for room in rooms]
    _write_with_record(args.output, format_bvh(result.motion), args.plan, record)
    print(result.plan.summary())
    for line in result.plan.gap_warnings():
        print(f"warning: {line}")
    print(f"wrote {result.motion.n_frames} frames to {args.output}" + (f" and the plan to {args.plan}" if args.plan else ""))
    return 0


def _numbers(text: str | None, flag: str, kind=float, example: str | None = None) -> list | None:
    """``"0.5,0.5"`` -> ``[0.5, 0.5]``; None stays None. ``example``: the option's value to show in
    the message for a bad number (default a list of numbers)."""
    if text is None:
        return None
    out = []
    for part in text.split(","):
        try:
            out.append(kind(part.strip()))
        except ValueError:
            what = "whole numbers" if kind is int else "numbers"
            if example is None:
                example = "0,30" if kind is int else "0.5,0.5"
                what += " separated by commas"
            else:
                what = f"{'a whole number' if kind is int else 'a number'} after each '='"
            where = f" in {text!r}" if text.strip() != part.strip() else ""
            raise ValueError(f"{flag} expects {what} (for example {flag} {example}), got {part.strip()!r}{where}"
                             ) from None
    return out


def _clip_named(name: str, names: list[str], flag: str) -> str:
    """``name`` if it names exactly one clip given, else ``ValueError`` saying what to write."""
    if name not in names:
        raise ValueError(f"{flag} names {name!r}, which is not a clip given; name clips by their file name without "
                         f"extension: {names}")
    if names.count(name) > 1:
        raise ValueError(f"{flag} {name!r} names more than one clip (files of the same name in other folders); "
                         f"rename one of them")
    return name


def _clip_weights(text: str | None, names: list[str]) -> list | None:
    """``--weights``: ``"0.5,0.5"`` one per clip, or ``"walk=1,wave=0.5"`` by name (a clip not named
    weighs 1)."""
    if text is None or "=" not in text:
        return _numbers(text, "--weights")
    given = {}
    for item in text.split(","):
        name, equals, value = item.partition("=")
        if not equals:
            raise ValueError(f"--weights: give every clip's weight by name (walk=1,wave=0.5) or none (1,0.5), got "
                             f"{item.strip()!r} in {text!r}")
        name = _clip_named(name.strip(), names, "--weights")
        if name in given:
            raise _repeated("--weights", name, text)
        given[name] = _numbers(value, "--weights", example="walk=1,wave=0.5")[0]
    return [given.get(n, 1.0) for n in names]


def _repeated(flag: str, what: str, text: str) -> ValueError:
    """The error for ``what`` given twice in ``flag``'s value ``text`` (the last would win unseen)."""
    return ValueError(f"{flag} gives {what!r} more than once in {text!r}: give each once")


def _part_weights(text: str | None, names: list[str]) -> dict | None:
    """``--part-weights wave:legs=0,wave:arms=2`` -> ``{"wave": {"legs": 0.0, "arms": 2.0}}``."""
    if text is None:
        return None
    from .mkm import BODY_PARTS

    out: dict = {}
    for item in text.split(","):
        clip, colon, rest = item.strip().partition(":")
        part, equals, value = rest.partition("=")
        if not (colon and equals):
            raise ValueError(f"--part-weights expects CLIP:PART=WEIGHT separated by commas (for example "
                             f"--part-weights wave:legs=0), PART one of {', '.join(BODY_PARTS)}; got {item.strip()!r}")
        clip, part = _clip_named(clip.strip(), names, "--part-weights"), part.strip()
        if part in out.get(clip, {}):
            raise _repeated("--part-weights", f"{clip}:{part}", text)
        out.setdefault(clip, {})[part] = _numbers(value, "--part-weights", example="wave:legs=0")[0]
    return out


def _per_clip(text: str, names: list[str], option: str, usage: str, value_of) -> dict:
    """``CLIP=VALUE,...`` of ``option`` -> ``{clip: value_of(clip, VALUE)}``, each clip named once."""
    out = {}
    for item in text.split(","):
        name, equals, value = item.strip().partition("=")
        if not equals:
            raise ValueError(f"{option} expects {usage}, got {item.strip()!r}")
        name = _clip_named(name.strip(), names, option)
        if name in out:
            raise _repeated(option, name, text)
        out[name] = value_of(name, value)
    return out


def _clip_blends(text: str | None, names: list[str]) -> dict[str, float]:
    """``--blend guide=0.8`` -> ``{"guide": 0.8}``: the user's blend length into each named clip, seconds."""
    def seconds(name: str, value: str) -> float:
        length = _numbers(value, "--blend", example="guide=0.8")[0]
        if not 0.0 < length:
            raise ValueError(f"--blend {name}={value.strip()}: give a length in seconds above 0 "
                             "(leave the clip out for the automatic length)")
        return length

    return {} if text is None else _per_clip(
        text, names, "--blend", "CLIP=SECONDS separated by commas (for example --blend guide=0.8: "
        "the blends into 'guide' last 0.8 s)", seconds)


def check_blend_lengths(blends: dict[str, float], clips: list) -> None:
    """Refuse a ``--blend`` length longer than every clip together: a blend lies within the frames of
    the clips it joins, so no plan could come near it (a length the possible ranges cannot meet
    is otherwise planned at the nearest they allow, and the plan's note says so)."""
    longest = sum(c.motion.n_frames / c.motion.fps for c in clips)
    for name, seconds in blends.items():
        if seconds > longest:
            raise ValueError(f"--blend {name}={seconds:g}: no blend can last longer than the clips together, "
                             f"{longest:.2f} s; give a shorter length (or leave the clip out for the automatic one)")


def _clip_ends(text: str | None, names: list[str]) -> dict | None:
    """``--ends run=120`` -> ``{"run": 120}``: the last clip frame each named clip plays."""
    return None if text is None else _per_clip(
        text, names, "--ends", "CLIP=FRAME separated by commas (for example --ends run=120: the last "
        "frame of its own, from 0, that the clip plays)",
        lambda _name, value: _checked_frame(_numbers(value, "--ends", int, example="run=120")[0], "--ends: a frame"))


def cmd_blend(args) -> int:
    from pathlib import Path

    from .bvh import format_bvh, read_bvh
    from .files import check_outputs
    from .mkm import blend_clips, check_blend_size
    from .rig import find_rig

    names = [Path(path).stem for path in args.clips]
    weights = _clip_weights(args.weights, names)
    part_weights = _part_weights(args.part_weights, names)
    ends = _clip_ends(args.ends, names)
    priorities = _numbers(args.priorities, "--priorities")
    starts = _numbers(args.starts, "--starts", int)
    if starts is not None:
        starts = [_checked_frame(x, "--starts: a start") for x in starts]
    cyclic = None
    if args.cyclic is not None:
        named = [n.strip() for n in args.cyclic.split(",") if n.strip()]
        unknown = [n for n in named if n not in names]
        if unknown:
            raise ValueError(f"--cyclic names {unknown}, which are not clips given; name clips by their file name "
                             f"without extension: {names}")
        ambiguous = [n for n in named if names.count(n) > 1]
        if ambiguous:
            raise ValueError(f"--cyclic {ambiguous[0]!r} names more than one clip (files of the same name in other "
                             f"folders); rename one of them")
        cyclic = [n in named for n in names]
    outputs = {"-o": args.output, **({"--plan": args.plan} if args.plan is not None else {})}
    check_outputs({f"clip '{name}'": path for name, path in zip(names, args.clips)}, outputs)
    declared = _declared(args.clips)
    if declared and len(declared) > 1 and (starts is None or len(starts) == len(declared)):
        check_blend_size([_frames_at(d, declared[0].fps) for d in declared], starts or [0] * len(declared),
                         declared[0].joints)
    motions = [read_bvh(path) for path in args.clips]
    # (the naive blend reads no joint roles)
    rig = None if args.no_sync else find_rig(motions[0], overrides=_overrides(args.map), clip=f"clip '{names[0]}'")
    if args.no_sync and cyclic is not None:
        print("note: --cyclic is not used by --no-sync (the NLA does not repeat a strip unless told to)")
    result = blend_clips(motions, names=names, weights=weights, priorities=priorities, starts=starts, cyclic=cyclic,
                         sync=not args.no_sync, rig=rig, part_weights=part_weights, ends=ends)
    _write_with_record(args.output, format_bvh(result.motion), args.plan,
                       result.to_dict() if args.plan is not None else None)
    print(result.summary())
    print(f"wrote {result.motion.n_frames} frames to {args.output}" + (f" and the plan to {args.plan}" if args.plan else ""))
    return 0


def cmd_demo(args) -> int:
    from .analysis import analyze
    from .demo import demo_clips, write_demo_files

    if args.write is not None:
        written = write_demo_files(args.write)
        for group, paths in written.items():
            print(f"wrote {len(paths)} {group} to {os.path.join(args.write, group)}: "
                  + ", ".join(os.path.basename(str(path)) for path in paths))
        return 0
    clips = demo_clips()
    report = {}
    for name, clip in clips.items():
        result = analyze(clip.motion)
        report[name] = result.to_dict()
        if not args.json:
            print(f"== demo clip '{name}'")
            print(result.summary())
            print()
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


def _library_files(folder: str, src: str, dst: str) -> dict[str, str]:
    """``{file name: path}``: the folder's BVH files, with the source and destination added when they
    are not among them; ``ValueError`` for a missing or empty folder, or two files of one name."""
    import os
    from pathlib import Path

    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"the library {folder} is not a folder: give a folder of BVH clips")
    files = sorted(p for p in root.iterdir() if p.suffix.lower() == ".bvh" and p.is_file())
    if not files:
        raise ValueError(f"the library {folder} has no .bvh files: give a folder of BVH clips on the source's skeleton")
    out = {p.name: str(p) for p in files}
    for flag, path in (("--src", src), ("--dst", dst)):
        given = Path(path)
        if not given.is_file():
            raise ValueError(f"{flag} {path}: no such file")
        same = out.get(given.name)
        if same is None:
            out[given.name] = str(given)
        elif not os.path.samefile(same, given):
            raise ValueError(f"{flag} {path} has the name of another clip of the library ({same}); the table names "
                             f"clips by file name: rename one of them")
    return out


def _read_library(files: dict[str, str], needed: tuple[str, ...]) -> tuple[dict, dict[str, str]]:
    """``({name: Motion}, {name: why})``: the library's files read, and those that could not be
    (core.bvh.read_bvh's message) left out, as a clip of another skeleton is (core.hops.checked_library):
    one broken file of a folder must not refuse the rest. The ``needed`` ones (source and
    destination) must read: their error is raised as it is."""
    from .bvh import read_bvh

    library, unreadable = {}, {}
    for name, path in files.items():
        try:
            library[name] = read_bvh(path)
        except (ValueError, OSError) as error:  # (BVHError is a ValueError; a broken link or a folder an OSError)
            if name in needed:
                raise
            unreadable[name] = f"{name!r} could not be read ({error})"
    return library, unreadable


def _processors() -> int:
    """The processors this process may run on (its affinity: a container's share, not the host's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # (not on every system)
        return os.cpu_count() or 1


def _local_workers(clips: dict, src: str, dst: str, blend: float, weight_given: bool) -> tuple[int, str]:
    """``(workers, why_here)`` for MeasuredRunner: one worker per processor, and why the work must
    stay here whatever its size ("" when it need not): Dask missing, or a memory budget without
    room for that many processes computing at once (core.hops.precompute_bytes)."""
    from importlib.util import find_spec

    from .budget import OverBudget, in_gib
    from .hops import blend_frames_of, check_precompute_size, precompute_pairs

    workers = _processors()
    if workers < 2:
        return workers, ""
    if not find_spec("distributed"):
        return workers, "Dask is not installed (make demo installs it)"
    names = sorted(clips)
    s, d = names.index(src), names.index(dst)
    lengths = [clips[name].n_frames for name in names]
    length = blend_frames_of(blend, clips[src].fps)
    try:
        check_precompute_size(names, lengths, len(clips[src].skeleton), s, d,
                              precompute_pairs(lengths, s, d, length, weight_given=weight_given), length, workers)
    except OverBudget as error:
        return workers, f"{workers} processes at once would exceed the memory budget (they would need {in_gib(error.needed)})"
    return workers, ""


def cmd_hops_precompute(args) -> int:
    from pathlib import Path

    from .files import check_outputs
    from .hops import (BLEND_SECONDS, MeasuredRunner, SerialRunner, blend_frames_of, check_precompute_size,
                       checked_library, precompute, precompute_pairs)
    from .rig import find_rig

    files = _library_files(args.library, args.src, args.dst)
    check_outputs({f"clip '{name}'": path for name, path in files.items()}, {"-o": args.output})
    src, dst = Path(args.src).name, Path(args.dst).name
    measured = args.workers is None and args.scheduler is None  # (the default: MeasuredRunner)
    # (the work starts in this process when measured: a cluster is started only if the budget has room for it)
    processes = 1 if args.workers == 0 or measured else 0 if args.scheduler is not None else args.workers
    names = sorted(files)
    declared = _declared([files[name] for name in names])
    if declared:
        # before the clips are read: the distance matrices follow from the frame counts alone
        s, d = names.index(src), names.index(dst)
        lengths = [_frames_at(clip, declared[s].fps) for clip in declared]
        length = blend_frames_of(BLEND_SECONDS if args.blend is None else args.blend, declared[s].fps)
        check_precompute_size(names, lengths, declared[s].joints, s, d,
                              precompute_pairs(lengths, s, d, length, weight_given=args.weight is not None), length,
                              processes)
    library, unreadable = _read_library(files, (src, dst))
    rig = find_rig(library[src], overrides=_overrides(args.map), clip=f"the source {src!r}")
    names, motions, warnings = checked_library(library, src, dst, rig, unreadable=unreadable)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    clips = dict(zip(names, motions))  # (now all at the source's rate)
    blend = BLEND_SECONDS if args.blend is None else args.blend
    if args.scheduler is not None:
        if args.workers is not None:
            raise ValueError("--workers starts a cluster on this machine and --scheduler uses a running one, whose "
                             "workers are its own: give one of the two")
        runner = _cluster_runner(None, args.scheduler)
    elif args.workers == 0:
        from contextlib import nullcontext

        runner = nullcontext(SerialRunner(progress=True))
    elif args.workers is not None:
        runner = _cluster_runner(args.workers, None)
    else:  # by default here, until the work measured says a local cluster of one worker per processor pays
        workers, why_here = _local_workers(clips, src, dst, blend, args.weight is not None)
        runner = MeasuredRunner(lambda: _cluster_runner(workers, None), workers, progress=True, why_here=why_here)
    with runner as run:
        table = precompute(clips, src, dst, args.offset, blend_seconds=blend, weight=args.weight, runner=run, rig=rig,
                           processes=processes)
    table.save(args.output)
    if isinstance(run, MeasuredRunner):
        print(f"ran {run.summary()}")
    print(table.summary())
    print(f"wrote the table of {len(table.triggers)} trigger frames to {args.output}")
    return 0


def _cluster_runner(workers: int | None, scheduler: str | None):
    """core.cluster's DaskRunner: ``workers`` local processes, or (``workers`` None) the cluster at ``scheduler``."""
    if workers is not None and workers < 0:
        raise ValueError(f"--workers must be 0 (in this process) or more, got {workers}")
    try:
        from .cluster import DaskRunner
    except ImportError as exc:
        raise ValueError(f"the precompute runs on Dask (local processes by default), which is not available here "
                         f"({exc}); install dask[distributed] (make demo does), or give --workers 0 to run it in "
                         "this process") from None
    return DaskRunner(address=scheduler, n_workers=workers)


def cmd_hops_show(args) -> int:
    from .hops import HopTable

    table = HopTable.load(args.table)
    entries = [table.entry(args.trigger)] if args.trigger is not None else table.entries()
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    print(table.summary())
    print(f"{'trigger':>7}  {'hop':<28} {'offset':>6} {'stay_src':>8} {'stay_hop':>8} {'S':>9} {'wR':>9} {'direct':>9}")
    for e in entries:
        print(f"{e['trigger']:>7}  {e['hop']:<28} {e['offset']:>6} {e['stay_src']:>8} {e['stay_hop']:>8} "
              f"{e['smoothness']:>9.4g} {e['responsiveness']:>9.4g} {e['direct']:>9.4g}")
    return 0


def _table_clip_files(table, trigger: int, direct: bool, library: str, src: str | None, dst: str | None
                      ) -> dict[str, str]:
    """``{file name: path}`` of the clips a render at ``trigger`` reads (the table names them by file
    name only): the source and destination from --src/--dst when given, everything else from the
    library folder; ``ValueError`` naming a missing file and the option that gives it."""
    from pathlib import Path

    from .hops_render import clips_needed

    given = {"source": (src, "--src"), "destination": (dst, "--dst")}
    files = {}
    for role, name in clips_needed(table, trigger, direct=direct).items():
        path, flag = given.get(role, (None, None))
        if path is not None:
            if not Path(path).is_file():
                raise ValueError(f"{flag} {path}: no such file")
            files[name] = path
            continue
        path = Path(library) / name
        if not path.is_file():
            how = f"pass {flag} PATH, or " if flag else ""
            raise ValueError(f"the {role} {name!r} of the table is not in {library}: {how}pass --library DIR, the "
                             f"folder of the clips the table was computed from")
        files[name] = str(path)
    return files


@contextmanager
def progress_bar(description: str):
    """A progress callback (core.progress) drawing a tqdm bar on stderr, as ``hops precompute``'s maps
    do, where stderr is a terminal (piped or captured, it stays clean for the messages); the bar
    closes with the block. tqdm is the command line's alone: the add-on never imports it."""
    from tqdm import tqdm

    steps = 1000
    with tqdm(total=steps, desc=description, unit="‰", leave=False, disable=None) as bar:
        def update(fraction: float) -> None:
            bar.update(max(round(min(max(fraction, 0.0), 1.0) * steps) - bar.n, 0))

        yield update


def read_with_progress(paths, description: str) -> list:
    """Each BVH file of ``paths`` read, with a progress bar over the files (a large library takes a while)."""
    from .bvh import read_bvh

    paths = list(paths)
    with progress_bar(description) as progress:
        read = []
        for path in paths:
            read.append(read_bvh(path))
            progress(len(read) / len(paths))
    return read


def cmd_hops_render(args) -> int:
    from pathlib import Path

    from .bvh import format_bvh, read_bvh
    from .files import check_outputs, write_atomically
    from .hops import HopTable
    from .hops_render import DIRECT, ENGINE, PLAIN, render_entry
    from .rig import find_rig

    # -o against the table before the table is read (a FIFO given as the table would block)
    check_outputs({"the table": args.table}, {"-o": args.output})
    table = HopTable.load(args.table)
    table.index(args.trigger)  # (a trigger not in the table, before any file is looked for)
    library = args.library if args.library is not None else str(Path(args.table).resolve().parent)
    files = _table_clip_files(table, args.trigger, args.direct, library, args.src, args.dst)
    # every file the table names is an input, read by this render or not: each is a clip of the
    # user's library (a direct render reads two of them, and wrote over a third)
    named = {f"clip '{name}' of the table": Path(library) / name for name in table.hops}
    given = {f"{flag} {path}": path for flag, path in (("--src", args.src), ("--dst", args.dst)) if path is not None}
    check_outputs(named | given | {f"clip '{name}'": path for name, path in files.items()}
                  | {"the table": args.table}, {"-o": args.output})
    clips = dict(zip(files, read_with_progress(files.values(), "reading the clips")))
    source = table.hops[table.src]
    rig = find_rig(clips[source], overrides=_overrides(args.map), clip=f"the source {source!r}") if args.map else None
    method = DIRECT if args.direct else PLAIN if args.plain else ENGINE
    render, warnings = render_entry(table, clips, args.trigger, method=method, rig=rig)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    write_atomically(args.output, format_bvh(render.motion))
    print(render.summary())
    if render.plan is not None:
        print(render.plan.summary())
    print(f"wrote {render.motion.n_frames} frames to {args.output} (its frame 0 is the source's frame {render.first})")
    return 0


def _bvh_folder(folder: str, flag: str) -> dict[str, str]:
    """``{file name: path}`` of the BVH files of ``folder``; ``ValueError`` for a missing or empty folder."""
    from pathlib import Path

    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{flag}: the library {folder} is not a folder: give a folder of BVH clips")
    files = sorted(p for p in root.iterdir() if p.suffix.lower() == ".bvh" and p.is_file())
    if not files:
        raise ValueError(f"{flag}: the library {folder} has no .bvh files: give a folder of BVH clips on the query's "
                         f"skeleton")
    return {p.name: str(p) for p in files}


def _assembly_parts(specs: list[str]) -> dict[str, str]:
    """``["upper=DIR", ...]`` -> ``{part: folder}``; ``ValueError`` saying what to give."""
    from .assemble import PARTS

    parts = {}
    for spec in specs:
        part, sep, folder = spec.partition("=")
        part, folder = part.strip(), folder.strip()
        if not sep or not part or not folder:
            raise ValueError(f"--part expects PART=LIBRARY_DIR (for example upper=clips/punches), got {spec!r}")
        if part not in PARTS:
            raise ValueError(f"--part {spec}: unknown body part {part!r}; give one of {', '.join(PARTS)}")
        if part in parts:
            raise ValueError(f"--part {part} is given twice: give each body part once")
        parts[part] = folder
    return parts


def cmd_assemble(args) -> int:
    from .assemble import assemble
    from .bvh import format_bvh, read_bvh
    from .files import check_outputs
    from .rig import find_rig

    folders = _assembly_parts(args.part)
    files = {part: _bvh_folder(folder, f"--part {part}") for part, folder in folders.items()}
    outputs = {"-o": args.output, **({"--report": args.report} if args.report is not None else {})}
    inputs = {"the query": args.query} | {f"clip '{name}'": path
                                          for clips in files.values() for name, path in clips.items()}
    check_outputs(inputs, outputs)
    query = read_bvh(args.query)
    # one library per folder: two parts from one folder share its clips (and their features)
    by_folder: dict[str, dict] = {}
    libraries = {}
    for part, folder in folders.items():
        key = os.path.realpath(folder)
        if key not in by_folder:
            by_folder[key] = dict(zip(files[part], read_with_progress(files[part].values(), f"reading {folder}")))
        libraries[part] = by_folder[key]
    rig = find_rig(query, overrides=_overrides(args.map), clip=f"the query {args.query}")
    with progress_bar("assembling") as progress:
        result = assemble(query, libraries, rig=rig, progress=progress)
    def piece_record(piece) -> dict:
        m = piece.match
        return {"first": piece.first, "last": piece.stop - 1, "clip": m.clip, "start": m.start, "length": m.length,
                "cost": m.cost, "bits": m.bits, "feature_poses": piece.feature_poses()}

    report = {"parts": {part: {"clip": m.clip, "start": m.start, "length": m.length, "frames": query.n_frames,
                               "cost": m.cost, "bits": m.bits, "feature_poses": result.feature_poses(part),
                               "left_out": list(result.left_out.get(part, ())),
                               "pieces": [piece_record(p) for p in result.pieces[part]]}
                        for part, m in result.matches.items()}}
    _write_with_record(args.output, format_bvh(result.motion), args.report, report)
    for part, own in result.left_out.items():
        print(f"warning: {', '.join(own)} in the library of {part} is the query itself; left out",
              file=sys.stderr)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for part, pieces in result.pieces.items():
        if len(pieces) > 1:
            # (issue 24, item 9: say that the query was cut, and where)
            print(f"{part}: the query's {query.n_frames} frames are longer than the library's clips hold, so it "
                  f"was assembled piecewise: {len(pieces)} pieces of {pieces[0].stop - pieces[0].first} frames, "
                  f"each retrieved on its own and joined by slerp over the frames they share")
        for piece in pieces:
            m = piece.match
            within = f" frames {piece.first}-{piece.stop - 1}" if len(pieces) > 1 else ""
            print(f"{part}{within}: {m.clip} frames {m.start}-{m.start + m.length - 1} ({m.length} frames over the "
                  f"query's {piece.stop - piece.first}), {piece.feature_poses()} feature poses paired, cost "
                  f"{m.cost:.3f} (Boolean features differing {m.bits:.1%})")
    print(f"wrote {result.motion.n_frames} frames to {args.output}"
          + (f" and the report to {args.report}" if args.report else ""))
    return 0


def _target_point(text: str) -> "list[float]":
    """``X,Y,Z`` -> three numbers; ``ValueError`` saying what to write otherwise."""
    parts = text.split(",")
    try:
        point = [float(p) for p in parts]
    except ValueError:
        point = []
    if len(point) != 3 or not all(abs(v) < float("inf") for v in point):
        raise ValueError(f"--target expects three numbers X,Y,Z in the first example's file coordinates (for a "
                         f"negative first one write --target=-15.7,128.4,18.6), got {text!r}")
    return point


def cmd_reach(args) -> int:
    from pathlib import Path

    import numpy as np

    from .bvh import format_bvh, read_bvh
    from .files import check_outputs
    from .reach import ReachSpace, check_reach_size

    target = _target_point(args.target)
    folder = Path(args.examples)
    if not folder.is_dir():
        raise ValueError(f"{args.examples} is not a folder: give a folder of BVH examples of one action")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".bvh" and p.is_file())
    if not files:
        raise ValueError(f"{args.examples} has no .bvh files: give a folder of BVH examples of one action")
    outputs = {"-o": args.output} | ({"--report": args.report} if args.report is not None else {})
    check_outputs({f"example '{p.name}'": p for p in files}, outputs)
    declared = _declared(files)
    if declared:
        # before the examples are read: the registration's grids follow from the frame counts alone
        check_reach_size(declared[0].frames, [_frames_at(d, declared[0].fps) for d in declared], declared[0].joints)
    examples = read_with_progress(files, "reading the examples")
    with progress_bar("aligning the examples") as progress:
        space = ReachSpace.build(examples, effector=args.effector, feature=args.feature,
                                 names=[p.name for p in files], progress=progress)
    result = space.reach(np.array(target))
    report = {
        "error": result.error,
        "weights": {p.name: float(w) for p, w in zip(files, result.weights)},
        "partial": result.partial,
        "why": result.why,
        "limited": list(result.limited),
        "feet_held": result.feet_held,
        "hit_point": [float(v) for v in result.hit_point],
        "hit_frame": result.hit_frame,
        "target": target,
        "effector": args.effector,
        "feature": args.feature,
    }
    _write_with_record(args.output, format_bvh(result.motion), args.report, report)
    used = sorted(((w, p.name) for p, w in zip(files, result.weights) if w > 1e-3), reverse=True)
    print(f"reach of {args.effector} ({args.feature}) to {target}: hit at frame {result.hit_frame}, "
          f"error {result.error:.4g} (file units)" + (", with partial blending (section 3.2)" if result.partial else ""))
    print(f"why: {result.why} (lengths in file units)")
    if result.limited:
        print(f"joint limit: {', '.join(result.limited)} turned as far as the examples' range (and its margin) "
              f"allows, no further")
    if result.feet_held:
        print("feet: held where the examples have them down (the contact stage of synthesis)")
    print("blend: " + ", ".join(f"{name} {w:.3f}" for w, name in used))
    print(f"wrote {result.motion.n_frames} frames to {args.output}" + (f" and the report to {args.report}" if args.report else ""))
    return 0


# Options whose value is a list of numbers. argparse takes a value such as "-5,0" for an option
# (it is no negative number to it) and answers "expected one argument"; joined to its option
# ("--starts=-5,0") it is a value.
_NUMBER_LISTS = ("--weights", "--priorities", "--starts", "--target")
_NEGATIVE = re.compile(r"-\.?\d")


def _negative_lists_joined(argv: list[str]) -> list[str]:
    """``argv`` with each list option followed by a negative value (``--starts -5,0``) written as
    one argument (``--starts=-5,0``); nothing after ``--``."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return out + argv[i:]
        if (len(arg) > 2 and any(option.startswith(arg) for option in _NUMBER_LISTS) and i + 1 < len(argv)
                and _NEGATIVE.match(argv[i + 1])):
            out.append(f"{arg}={argv[i + 1]}")
            i += 2
        else:
            out.append(arg)
            i += 1
    return out


def _quiet_stdout() -> None:
    """Send what is left of standard output to /dev/null (its reader has gone)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # (a stdout with no file descriptor, as under a test)
        pass


def main(argv: list[str] | None = None) -> int:
    from .budget import MEMORY_BUDGET, OverBudget, in_gib, memory_budget

    parser = argparse.ArgumentParser(prog="python -m core", description="Smart Motion core tools")
    sub = parser.add_subparsers(dest="command", required=True)
    budget = argparse.ArgumentParser(add_help=False)
    budget.add_argument("--max-memory", type=_gib, metavar="GIB",
                        help=f"the memory budget in GiB (default {in_gib(MEMORY_BUDGET).split()[0]}): work whose "
                             f"arrays would need more is refused before it starts, naming the size it needs")

    p = sub.add_parser("analyze", parents=[budget], help="support phases and body orientation of a BVH clip")
    p.add_argument("clip", help="a BVH file")
    p.add_argument("--json", action="store_true", help="print JSON: fps, segments, orientation_start, orientation_end")
    p.add_argument("--map", action="append", metavar="ROLE=JOINT", help="override a joint role, e.g. left.ankle=LeftFoot (repeatable)")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("synthesize", parents=[budget], help="one continuous motion from clips on a timeline")
    p.add_argument("clips", nargs="+", metavar="CLIP.bvh[@START][:CORE_START-CORE_END]",
                   help="a clip, the output frame its first frame plays at (left out: as soon as possible after the "
                        "clips before it), and optionally its core (clip frames, inclusive)")
    p.add_argument("-o", "--output", required=True, help="the BVH file to write (on the first clip's skeleton)")
    p.add_argument("--responsiveness", "-W", type=float, default=0.5, help="0 most responsive .. 1 smoothest (default 0.5)")
    p.add_argument("--plan", help="also write the plan as JSON here")
    p.add_argument("--map", action="append", metavar="ROLE=JOINT", help="override a joint role (repeatable)")
    p.add_argument("--current", type=_frame, metavar="FRAME",
                   help="the output frame being played when the clips without @START are added (eq. 17): output "
                        "frames up to it stay as the clips before them alone give them")
    p.add_argument("--blend", metavar="CLIP=SECONDS,...",
                   help="the blends into a clip last this long, by file name without extension: guide=0.8 (the "
                        "user's length, kept by the plan; default: the range search chooses it, eq. 9)")
    p.add_argument("--give-room", action="store_true",
                   help="move the clips after each flagged gap later, first gap first, by the least that puts the "
                        f"gap under its flag threshold (at most {SynthesisOptions().give_room_s:g} s), and print what "
                        "moved (the plan records it)")
    p.set_defaults(func=cmd_synthesize)

    p = sub.add_parser("blend", parents=[budget],
                       help="clips played at the same time, synchronized and blended (Ménardais 2004)")
    p.add_argument("clips", nargs="+", metavar="CLIP.bvh", help="the clips, on one skeleton (at least two)")
    p.add_argument("-o", "--output", required=True, help="the BVH file to write (on the first clip's skeleton)")
    p.add_argument("--weights", metavar="W1,W2,...",
                   help="one weight >= 0 per clip, or by name: walk=1,wave=0.5 (default: equal)")
    p.add_argument("--part-weights", metavar="CLIP:PART=W,...",
                   help="scale a clip's weight on one body part (legs, upper, arms), by file name without "
                        "extension: wave:legs=0 takes the wave out of the legs and their timing and keeps its "
                        "arms (default: a clip whose feet stand still while another's move gets legs=0)")
    p.add_argument("--ends", metavar="CLIP=FRAME,...",
                   help="end a clip at its own frame FRAME (from 0; a cyclic clip's count on through its "
                        "repeats): it fades out there and the others take its weight (default: a clip fades out "
                        "where it ends, a cyclic one repeats as long as the blend runs)")
    p.add_argument("--priorities", metavar="P1,P2,...",
                   help="one priority per clip, higher first (default: in the order given, the first highest)")
    p.add_argument("--starts", metavar="S1,S2,...", help="the output frame each clip joins at (default: all 0)")
    p.add_argument("--cyclic", metavar="NAME,...",
                   help="the clips that repeat, by file name without extension (default: detected)")
    p.add_argument("--plan", help="also write the plan (the synchronization, weights, delays) as JSON here")
    p.add_argument("--no-sync", action="store_true",
                   help="the NLA's frame-by-frame blend instead, no time warp and no contact stage (for comparison)")
    p.add_argument("--map", action="append", metavar="ROLE=JOINT", help="override a joint role (repeatable)")
    p.set_defaults(func=cmd_blend)

    p = sub.add_parser("demo", parents=[budget], help="analyse the embedded demo clips, or write them as BVH files")
    p.add_argument("--json", action="store_true")
    p.add_argument("--write", metavar="DIR",
                   help="write the demo content as BVH files instead: DIR/clips (walk, turn, kick, jump, stand, "
                        "two hops) and DIR/reaches (six right-hand raises), Z up, metres, 30 fps")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("hops", help="one-hop transitions through a clip library (Koyama & Goto 2019)")
    hops = p.add_subparsers(dest="hops_command", required=True)
    q = hops.add_parser("precompute", parents=[budget],
                        help="the best one-hop transition at every trigger frame of a source")
    q.add_argument("library", metavar="LIBRARY_DIR", help="a folder of BVH clips on one skeleton: the hop candidates")
    q.add_argument("--src", required=True, metavar="A.bvh", help="the source clip (in the library or not)")
    q.add_argument("--dst", required=True, metavar="B.bvh", help="the destination clip (in the library or not)")
    q.add_argument("--offset", required=True, type=_frame, metavar="FRAMES",
                   help="the destination's frame k plays at the source's frame k + FRAMES")
    q.add_argument("-o", "--output", required=True, metavar="TABLE.npz", help="the table to write")
    q.add_argument("--blend", type=_finite(1e-3, 60.0, "--blend"), metavar="SECONDS",
                   help="the length of each blend (default 0.5 s)")
    q.add_argument("--weight", type=_finite(0.0, 1e6, "--weight"), metavar="W",
                   help="w of eq. (2), per second of stays (it is divided by the frame rate, so the choices do not "
                        "change with it); default: eq. (5) on 100 seeded random conditions of the library")
    q.add_argument("--workers", type=int, metavar="N",
                   help="run on a local Dask cluster of N worker processes; 0 runs it in this process. Default: "
                        "in this process, moving to a local cluster of one worker per processor once the work "
                        "measured would take longer here than the cluster costs to start (it says which ran)")
    q.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask cluster at ADDRESS (tcp://HOST:8786)")
    q.add_argument("--map", action="append", metavar="ROLE=JOINT",
                   help="override a joint role of the source's rig (repeatable)")
    q.set_defaults(func=cmd_hops_precompute)
    q = hops.add_parser("show", parents=[budget], help="print a precomputed table")
    q.add_argument("table", metavar="TABLE.npz")
    q.add_argument("--trigger", type=_frame, metavar="FRAME", help="only this trigger frame")
    q.add_argument("--json", action="store_true",
                   help="print a list with one object per trigger frame: trigger, hop, offset, stay_src, stay_hop, "
                        "smoothness, responsiveness, direct")
    q.set_defaults(func=cmd_hops_show)
    q = hops.add_parser("render", parents=[budget], help="write the transition at one trigger frame as BVH",
                        description="Render a table's one-hop transition at one trigger frame, from L frames before "
                                    "the trigger to L after the destination takes over (L: the blend), on the "
                                    "source's frames and in its world. By default through the synthesis engine "
                                    "(source, hop and destination as three clips, the frames each plays alone its "
                                    "core); --plain: the paper's crossfades; --direct: the plain direct transition.")
    q.add_argument("table", metavar="TABLE.npz")
    q.add_argument("--trigger", type=_frame, required=True, metavar="FRAME", help="the source frame of the trigger")
    q.add_argument("-o", "--output", required=True, metavar="OUT.bvh", help="the BVH file to write")
    q.add_argument("--plain", action="store_true", help="the paper's plain blends instead of the synthesis engine")
    q.add_argument("--direct", action="store_true",
                   help="the direct transition (a plain crossfade to the destination at the trigger), for comparison "
                        "(with or without --plain)")
    q.add_argument("--library", metavar="DIR",
                   help="the folder of the clips the table was computed from (default: the table's folder)")
    q.add_argument("--src", metavar="A.bvh", help="the source clip, when it is not in the library folder")
    q.add_argument("--dst", metavar="B.bvh", help="the destination clip, when it is not in the library folder")
    q.add_argument("--map", action="append", metavar="ROLE=JOINT",
                   help="override a joint role of the source's rig (repeatable), as given to precompute")
    q.set_defaults(func=cmd_hops_render)

    p = sub.add_parser("assemble", parents=[budget],
                       help="replace body parts of a clip by the most similar ones of a library "
                            "(Juang et al. 2009)",
                       description="Each --part PART=DIR replaces that body part of the query (left.arm, right.arm, "
                                   "left.leg, right.leg, upper, lower) with the library segment most like it, aligned "
                                   "on feature poses, its juncture joints standardised to the query's mean and "
                                   "standard deviation (eq. 1), a replaced leg's feet held where its source has "
                                   "them down. The output has the query's skeleton, frame rate and frames.")
    p.add_argument("query", metavar="QUERY.bvh", help="the motion whose parts are replaced")
    p.add_argument("--part", action="append", required=True, metavar="PART=LIBRARY_DIR",
                   help="a body part and the folder of BVH clips (on the query's skeleton) to take it from "
                        "(repeatable)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.bvh", help="the BVH file to write")
    p.add_argument("--report", metavar="R.json",
                   help="also write JSON: per part the clip, start and length (its own frames), the query's frames, "
                        "the feature poses paired and the cost")
    p.add_argument("--map", action="append", metavar="ROLE=JOINT", help="override a joint role of the query (repeatable)")
    p.set_defaults(func=cmd_assemble)
    p = sub.add_parser("reach", parents=[budget],
                       help="a motion whose effector hits a target, by blending examples (Juang et al. 2009)",
                       description="Blend examples of one action (the .bvh files of a folder, sorted by name) so that "
                                   "the effector's hit point (its highest or farthest point) lands on the target; "
                                   "beyond what whole-body blending reaches, partial blending (section 3.2), its "
                                   "turned joints kept within the range the examples show; the feet the examples "
                                   "have down held. One example is reached by partial blending alone.")
    p.add_argument("examples", metavar="EXAMPLES_DIR", help="a folder of BVH examples of one action, on one skeleton")
    p.add_argument("--target", required=True, metavar="X,Y,Z",
                   help="the point to hit, in the first example's file coordinates (by file name); the output "
                        "starts where and as that example starts. Negative first coordinate: --target=-15.7,128.4,18.6")
    p.add_argument("--effector", default="right.wrist", metavar="ROLE",
                   help="the rig role that hits (default right.wrist; e.g. left.wrist, right.ankle)")
    p.add_argument("--feature", default="highest", choices=("highest", "farthest"),
                   help="the hit point: the effector's highest point (default) or its farthest from the pelvis")
    p.add_argument("-o", "--output", required=True, metavar="OUT.bvh", help="the BVH file to write")
    p.add_argument("--report", metavar="R.json",
                   help="also write JSON: error (file units), weights (file name -> weight), partial, why (which "
                        "blending and why), limited (joints held at the examples' range), feet_held, hit_point, "
                        "hit_frame")
    p.set_defaults(func=cmd_reach)

    args = parser.parse_args(_negative_lists_joined(sys.argv[1:] if argv is None else list(argv)))
    try:
        with memory_budget(args.max_memory or MEMORY_BUDGET):
            code = args.func(args)
        sys.stdout.flush()  # (here, where a reader gone is caught, not at exit)
        return code
    except OverBudget as exc:
        print(f"error: {exc.with_option('--max-memory')}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader of our output has gone (`hops show t.npz | head`): stop quietly, as command-line
        # tools do. Output still buffered for the closed pipe is sent to /dev/null, else Python's own
        # flush at exit would report the broken pipe after all.
        _quiet_stdout()
        return 128 + 13  # (as a tool the pipe's SIGPIPE ends: the shell's status for it)
    except (ValueError, KeyError, OSError, OverflowError) as exc:
        # (an OverflowError: a number past what a computation can hold, e.g. a rate of 1e308)
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        # (every output is written whole or not at all: an interrupted run leaves the old files; one
        # interrupted while its files are renamed finishes the renames first, and says so: core.files)
        print(exc.args[0] if exc.args else "interrupted: no file was written or changed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
