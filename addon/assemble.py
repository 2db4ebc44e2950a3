"""Assemble Parts: a strip's motion with one body part taken from a library (Juang et al. 2009, section 4).

The work behind the Assemble Parts operator, as plain functions (they run
without an operator, headless). The selected strip of the active armature is
the query (what it plays, :func:`.convert.strip_to_motion`, at the scene's
rate); the library is the file's actions made for the armature but the
query's own, or the BVH files of the Assembly Library Folder in the add-on's
preferences. ``core.assemble.assemble`` retrieves the library segment whose
part moves most like the query's (section 4.1) and puts it on the query
(section 4.2); the result, on the query's frames, is keyed into a new action
played by a new strip at the query strip's start, on a track above it, so
the NLA plays it over the query. The query's strip and action are never written.

As in :mod:`.hops`, everything that can fail comes first (:func:`find_assembly`);
the writes (:func:`insert_assembly`) follow and do not fail.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from dataclasses import dataclass

import bpy

from ..core.text import counted

ASSEMBLY_TRACK = "[Smart Motion] assembly"


@dataclass(frozen=True)
class AssemblyFound:
    """What Assemble Parts found, before anything is written.

    strip     the query strip's name; start its first scene frame (fractional where the strip starts
              between frames: the query was sampled there, and the result is keyed there).
    part      the body part replaced (a key of core.assemble.PARTS).
    assembly  core.assemble.Assembly: the new motion (the query's frames) and the match per part.
    library   "actions" or the folder; clips how many clips it held.
    seconds   the retrieval and assembly's time.
    first_frames  {clip: the frame number its first frame has}: an action's first frame
              (``frame_range[0]``), 1 for a folder's file (as Blender's BVH importer numbers it,
              and as Insert Hop reports folder clips).
    """

    strip: str
    start: float
    part: str
    assembly: object
    library: str
    clips: int
    seconds: float
    first_frames: dict

    @property
    def match(self):
        """The library segment used for the part (core.assemble.Match)."""
        return self.assembly.matches[self.part]

    @property
    def frames(self) -> tuple[float, float]:
        """(first, last) frames of the library clip used, numbered as the clip numbers them: the action's
        own frames, a folder file's frames at its own rate (section 4.2.1 maps the query's frames onto them
        along the time curve: the segment may be shorter or longer than the query)."""
        first = self.first_frames[self.match.clip] + int(self.match.start)
        return first, first + int(self.match.length) - 1

    @property
    def pieces(self) -> list[dict]:
        """Each piece the query was assembled in (one unless it is longer than the library's clips,
        core.assemble.assembly_pieces): its query frames (from 0) and the clip and frames it took,
        numbered as :attr:`frames` numbers them."""
        out = []
        for piece in self.assembly.pieces.get(self.part, ()):
            first = self.first_frames[piece.match.clip] + int(piece.match.start)
            out.append({"query_frames": [piece.first, piece.stop - 1], "clip": piece.match.clip,
                        "frames": [first, first + int(piece.match.length) - 1], "cost": float(piece.match.cost)})
        return out

    def to_dict(self) -> dict:
        """As the panel reads it (``Object.smart_motion.assembly_json``)."""
        bits = self.match.bits
        return {"strip": self.strip, "part": self.part, "clip": self.match.clip, "frames": list(self.frames),
                "cost": float(self.match.cost), "bits": None if bits is None else float(bits),
                "library": self.library, "clips": self.clips, "seconds": self.seconds, "pieces": self.pieces}


def query_strip(strips: list, obj: bpy.types.Object) -> bpy.types.NlaStrip:
    """The one selected strip of ``obj`` (``strips``: the selected ones that play), or ``ValueError``."""
    if len(strips) != 1:
        raise ValueError(f"{counted(len(strips), 'NLA strip')} of armature {obj.name!r} selected: Assemble Parts needs one, "
                         "the strip whose body part to replace; select exactly one")
    return strips[0]


def library_motions(obj: bpy.types.Object, query: bpy.types.NlaStrip, folder: str | None = None) -> tuple[dict, dict]:
    """``({clip name: motion}, {clip name: its first frame's number})``: the file's actions made for ``obj``
    but ``query``'s own (by action name; one sample per action frame from ``frame_range[0]``), or with
    ``folder`` its BVH files (every one on ``obj``'s skeleton, by file name) at their own rates, so that
    core.assemble reports a match in the file's own frames (it resamples a clip to the query's rate)."""
    from .clips import file_actions, folder_clips

    if folder is not None:
        clips, _ = folder_clips(obj, folder, None, library="assembly library", setting="Assembly Library Folder",
                                strict=True)
        return {clip.name: clip.motion for clip in clips}, {clip.name: 1 for clip in clips}
    actions = file_actions(obj, {query.action})
    library = {action.name: motion for action, motion in actions}
    if not library:
        raise ValueError(f"the file has no action for armature {obj.name!r} but the query's own "
                         f"({query.action.name!r}): import clips onto it to take the part from, or set Assembly "
                         "Library to Folder")
    return library, {action.name: _whole(action.frame_range[0]) for action, _ in actions}


def _whole(frame: float) -> float | int:
    """``frame`` as an int when it is a whole frame (as reports print it)."""
    return int(frame) if float(frame).is_integer() else float(frame)


def find_assembly(obj: bpy.types.Object, strips: list, part: str, folder: str | None = None,
                  progress=None) -> AssemblyFound:
    """The selected strip of ``strips`` with its body part ``part`` from the library's best match
    (``core.assemble.assemble``). Changes nothing; ``ValueError`` saying what to fix."""
    from ..core.assemble import PARTS, assemble
    from .convert import scene_fps, strip_to_motion
    from .convert import find_armature_rig

    if part not in PARTS:
        raise ValueError(f"unknown body part {part!r}; pick one of {', '.join(PARTS)}")
    strip = query_strip(strips, obj)
    query = strip_to_motion(obj, strip, scene_fps(bpy.context.scene))  # (sampled at strip.frame_start + k)
    rig = find_armature_rig(obj, query)  # (the Bone Mapping; the library's clips are on the same bones)
    library, first_frames = library_motions(obj, strip, folder)
    began = time.perf_counter()
    assembly = assemble(query, {part: library}, rig=rig, progress=progress)
    return AssemblyFound(strip.name, _whole(strip.frame_start), part, assembly,
                         "actions" if folder is None else folder, len(library), time.perf_counter() - began,
                         first_frames)


def insert_assembly(obj: bpy.types.Object, found: AssemblyFound) -> bpy.types.NlaStrip:
    """Key the assembled motion into a new action and play it by a new strip at the query strip's start, on
    a track above the query's; record the result for the panel. No other strip or action is changed."""
    from .clips import add_result_strip, result_action, track_above
    from .strips import find_strip

    motion = found.assembly.motion
    clip = Path(found.match.clip).stem
    action = result_action(obj, motion, f"{found.strip} {found.part} from {clip}", found.start, "assembly")
    last = found.start + motion.n_frames - 1
    track = track_above(obj, [find_strip(obj, found.strip)], found.start, last, ASSEMBLY_TRACK)
    strip = add_result_strip(obj, track, action, found.start)
    obj.smart_motion.assembly_json = json.dumps(found.to_dict() | {"new_strip": strip.name, "action": action.name})
    return strip


# ---------------------------------------------------------------------------
# Reports and the panel


def assembly_text(found: AssemblyFound, strip: bpy.types.NlaStrip) -> str:
    """The operator's report."""
    first, last = found.frames
    pieces = found.pieces
    more = "".join(f", then from {p['clip']!r} frames {p['frames'][0]}-{p['frames'][1]}" for p in pieces[1:])
    piecewise = (f" (longer than the library's clips: assembled in {len(pieces)} pieces joined over the frames "
                 f"they share)" if len(pieces) > 1 else "")
    return (f"{found.strip!r} with its {found.part} from {found.match.clip!r} frames {first}-{last}{more}"
            f"{piecewise} (cost {found.match.cost:.2f}, best of {counted(found.clips, 'clip')}): new action "
            f"{strip.action.name!r} as strip {strip.name!r} above it ({found.seconds:.2f} s)")


def left_out_warnings(found: AssemblyFound) -> list[str]:
    """A warning per library clip left out because it holds the query strip's own poses (core.assemble
    would retrieve the query itself), then core.assemble's own (a clip of another scale, or whose legs
    point up)."""
    return [f"library clip {clip!r} plays what strip {found.strip!r} plays: left out of the library, it would give "
            f"the strip's own {found.part} back" for clip in found.assembly.left_out.get(found.part, ())
            ] + list(found.assembly.warnings)


def assembly_lines(shown: dict) -> list[str]:
    """The panel's lines of the last Assemble Parts (``to_dict`` and where it went)."""
    first, last = shown["frames"]
    pieces = shown.get("pieces", [])
    taken = ([f"    from {shown['clip']} frames {first}-{last}"] if len(pieces) < 2 else
             [f"    in {len(pieces)} pieces (longer than the library's clips):"]
             + [f"    from {p['clip']} frames {p['frames'][0]}-{p['frames'][1]}" for p in pieces])
    return [f"Assembled {shown['strip']}: {shown['part']}", *taken,
            f"    cost {shown['cost']:.2f}, {counted(shown['clips'], 'clip')} "
            f"({'file actions' if shown['library'] == 'actions' else 'folder'})",
            f"    strip {shown.get('new_strip', '')}"]
