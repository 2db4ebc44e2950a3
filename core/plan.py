"""The plan of a synthesis: every decision as data (Oshita 2014, section 4).

A :class:`Plan` records, per pair of clips, the method (transition,
connection, adaptation), every blending segment with its possible and chosen
range and weight function, the alignment, the feet adaptation keeps or steps,
the gap's quality figures, and every clip rejected with its reason. It prints
(:meth:`Plan.summary`), serialises (:meth:`Plan.to_dict`, ``--plan`` JSON) and
loads back (:meth:`Plan.from_dict`). Rendering (``core.render``) and the
contact stage (``core.contacts``) draw frames from it without deciding again.

Timeline conventions: output frames are integers on the clips' common
timeline (clip frame ``k`` of a clip starting at ``s`` plays at ``s + k``);
every range is end inclusive. Core ranges are clip frames.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

import numpy as np

from .align import Alignment
from .motion import Motion
from .options import ContactOptions, SynthesisOptions
from .quality import GapQuality
from .weights import WeightFunction

TRANSITION = "transition"
CONNECTION = "connection"
ADAPTATION = "adaptation"
ADAPTATION_HOLD = "adaptation without lower-body transition"

# the parts an additional motion uses in motion composition (2008, 8.1)
RIGHT_ARM = "right arm"
LEFT_ARM = "left arm"
UPPER_BODY = "upper body"


@dataclass(frozen=True, eq=False)
class Clip:
    """A clip placed on the output timeline.

    motion  the clip.
    start   output frame at which clip frame 0 plays.
    core    (first, last) clip frames of the core part, inclusive; None: the whole clip.
    name    for messages and the plan.
    current t_current of 2014 eq. (17): the output frame being played when the clip
            was added (None: added before playing). Every blend into it starts after
            this frame, and no stage changes a frame at or before it.
    blend_s the user's length of the blends into this clip, in seconds (None: the
            range search chooses it, eq. 9); eq. (9) then chooses only where they lie.
    """

    motion: Motion
    start: int
    core: tuple[int, int] | None = None
    name: str = ""
    current: int | None = None
    blend_s: float | None = None

    @property
    def core_range(self) -> tuple[int, int]:
        return self.core if self.core is not None else (0, self.motion.n_frames - 1)

    @property
    def end(self) -> int:
        """Output frame of the clip's last frame."""
        return self.start + self.motion.n_frames - 1


@dataclass(frozen=True)
class Segment:
    """One blending segment of a pair (2014, 4.2).

    part     "lower" or "upper" body.
    blend    "motion-to-motion", "motion-to-pose", "pose-to-motion",
             "pose-to-pose", "deformation" (the lower-body deformation of
             adaptation, eqs. 7-8, which keeps the previous feet), "step"
             (adaptation: a standing foot steps during S1, one at a time: it
             stands on the segment's first frame and lands on its last) or
             "swing" (adaptation: a foot the previous motion has in the air when
             S1 starts lands on its own place by the segment's end) or "glide"
             (adaptation: a foot S1 has no room to step at the clips' pace slides
             along the floor to its place over the segment).
    start, end  output frames, inclusive.
    weights  the weight function (None for a deformation).
    possible (first start, last start, first end, last end) of eqs. (1)-(8).
    excess   how far the range asks more of the body than the clips do (the
             speed and acceleration limits of the range search, 1 at a limit):
             above 1 only when no range in ``possible`` keeps within them. The
             search's own estimate, kept as data: the limits move with W, so it is
             no verdict on the gap (its quality figures are, core.quality).
    way      for a step or a glide: where the ankle stands when it leaves and
             where the aligned clip has it when it lands (world, the output's
             unit), and how high the step rises (0 for a glide); the contact
             stage draws it so.
    """

    part: str
    blend: str
    start: int
    end: int
    weights: WeightFunction | None = None
    possible: tuple[int, int, int, int] | None = None
    foot: str | None = None  # "left"/"right" for a foot released (eq. 5) or stepping in adaptation
    excess: float = 0.0
    way: tuple | None = None  # steps: (from (3,), to (3,), lift)

    def to_dict(self) -> dict:
        return {
            "part": self.part,
            "blend": self.blend,
            "start": self.start,
            "end": self.end,
            "weights": self.weights.to_dict() if self.weights else None,
            "possible": list(self.possible) if self.possible else None,
            **({"foot": self.foot} if self.foot else {}),
            **({"excess": self.excess} if self.excess > 1.0 else {}),
            **({"from": [float(v) for v in self.way[0]], "to": [float(v) for v in self.way[1]],
                "lift": float(self.way[2])} if self.way else {}),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Segment":
        return cls(d["part"], d["blend"], int(d["start"]), int(d["end"]),
                   WeightFunction.from_dict(d["weights"]) if d.get("weights") else None,
                   tuple(d["possible"]) if d.get("possible") else None, d.get("foot"), float(d.get("excess", 0.0)),
                   (tuple(d["from"]), tuple(d["to"]), float(d["lift"])) if "from" in d else None)


@dataclass(frozen=True)
class PairPlan:
    """How one clip was joined to everything before it."""

    prev: str
    next: str
    method: str
    prev_phase: tuple[str, int, int] | None  # (phase, first, last) output frames, foot-moving phase used
    next_phase: tuple[str, int, int] | None
    segments: tuple[Segment, ...]
    alignment: Alignment
    warning: str | None = None  # e.g. cores that leave no room for a smooth blend
    note: str | None = None  # e.g. a blend lengthened so that feet can step one at a time
    gap: tuple[int, int] | None = None  # output frames from the previous core's last to the next core's first
    quality: GapQuality | None = None  # the gap measured against the untouched clips (core.quality)
    blend_s: float | None = None  # the user's blend length into ``next`` (Clip.blend_s), None: eq. (9)'s own

    def segment(self, part: str, blend: str | None = None) -> Segment | None:
        for s in self.segments:
            if s.part == part and (blend is None or s.blend == blend):
                return s
        return None

    def to_dict(self) -> dict:
        return {
            "prev": self.prev,
            "next": self.next,
            "method": self.method,
            "prev_phase": list(self.prev_phase) if self.prev_phase else None,
            "next_phase": list(self.next_phase) if self.next_phase else None,
            "segments": [s.to_dict() for s in self.segments],
            "alignment": self.alignment.to_dict(),
            "warning": self.warning,
            "note": self.note,
            "gap": list(self.gap) if self.gap else None,
            "quality": self.quality.to_dict() if self.quality else None,
            **({"blend": "user", "blend_s": self.blend_s} if self.blend_s is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "PairPlan":
        def phase(p):
            return (p[0], int(p[1]), int(p[2])) if p else None
        return cls(d["prev"], d["next"], d["method"], phase(d.get("prev_phase")), phase(d.get("next_phase")),
                   tuple(Segment.from_dict(s) for s in d["segments"]), Alignment.from_dict(d["alignment"]),
                   d.get("warning"), d.get("note"), tuple(d["gap"]) if d.get("gap") else None,
                   GapQuality.from_dict(d["quality"]) if d.get("quality") else None,
                   float(d["blend_s"]) if d.get("blend_s") is not None else None)


@dataclass(frozen=True)
class Composition:
    """One additional motion composed over the output (2008, section 8).

    clip, base     names of the additional clip and of the clip it lies inside.
    parts          RIGHT_ARM, LEFT_ARM or UPPER_BODY (8.1).
    shoulder_range_deg  (left, right) range of the shoulder angles, degrees.
    movement       (t2, t3) output frames between which the parts move (Fig. 6).
    blend_in, blend_out  (first, last) output frames of the blends (Fig. 6).
    spine_vibration_deg  the largest spine angle added by eq. (3), degrees (0 for
                   UPPER_BODY, whose spine is the additional motion's own).
    pelvis_vibration    the largest pelvis move added, in the output's unit.
    vertical_scale the peak of the vertical pelvis vibration kept, as a share of the
                   clip's own (1: no leg would have over-extended).
    """

    clip: str
    base: str
    parts: str
    shoulder_range_deg: tuple[float, float]
    movement: tuple[int, int]
    blend_in: tuple[int, int]
    blend_out: tuple[int, int]
    spine_vibration_deg: float
    pelvis_vibration: float
    vertical_scale: float = 1.0

    def to_dict(self) -> dict:
        return {
            "clip": self.clip,
            "base": self.base,
            "parts": self.parts,
            "shoulder_range_deg": list(self.shoulder_range_deg),
            "movement": list(self.movement),
            "blend_in": list(self.blend_in),
            "blend_out": list(self.blend_out),
            "spine_vibration_deg": self.spine_vibration_deg,
            "pelvis_vibration": self.pelvis_vibration,
            "vertical_scale": self.vertical_scale,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Composition":
        return cls(d["clip"], d["base"], d["parts"], tuple(float(v) for v in d["shoulder_range_deg"]),
                   tuple(int(v) for v in d["movement"]), tuple(int(v) for v in d["blend_in"]),
                   tuple(int(v) for v in d["blend_out"]), float(d["spine_vibration_deg"]),
                   float(d["pelvis_vibration"]), float(d.get("vertical_scale", 1.0)))

    def summary(self) -> str:
        scale = f", vertical pelvis vibration scaled to {self.vertical_scale:.3f}" if self.vertical_scale < 1.0 else ""
        return (f"{self.clip} composed over {self.base}: {self.parts} (shoulder ranges L {self.shoulder_range_deg[0]:.0f}, "
                f"R {self.shoulder_range_deg[1]:.0f} deg), blend in {self.blend_in[0]} .. {self.blend_in[1]}, "
                f"out {self.blend_out[0]} .. {self.blend_out[1]}, vibration spine {self.spine_vibration_deg:.2f} deg, "
                f"pelvis {self.pelvis_vibration:.3g}{scale}")


@dataclass(frozen=True)
class Rejection:
    clip: str
    reason: str

    def to_dict(self) -> dict:
        return {"clip": self.clip, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: dict) -> "Rejection":
        return cls(d["clip"], d["reason"])


@dataclass(frozen=True)
class Plan:
    fps: float
    responsiveness: float
    start: int  # output frame of the first frame of the result
    end: int
    clips: tuple[str, ...]
    pairs: tuple[PairPlan, ...]
    rejected: tuple[Rejection, ...]
    warnings: tuple[str, ...] = ()  # about the timeline as a whole (clips on another skeleton's bone lengths)
    compositions: tuple[Composition, ...] = ()  # additional motions composed over the output (2008, 8)
    pose_ends: str = "eased"  # how blends meet their motions (core.synthesize.synthesize)
    options: SynthesisOptions | None = None  # the tuning constants planned with (None: the defaults)

    def to_dict(self) -> dict:
        return {
            "fps": self.fps,
            "responsiveness": self.responsiveness,
            "start": self.start,
            "end": self.end,
            "clips": list(self.clips),
            "pairs": [p.to_dict() for p in self.pairs],
            "rejected": [r.to_dict() for r in self.rejected],
            "warnings": list(self.warnings),
            "compositions": [c.to_dict() for c in self.compositions],
            "pose_ends": self.pose_ends,
            "options": None if self.options is None else asdict(self.options),
        }

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict) -> "Plan":
        """The plan :meth:`to_dict` wrote (the JSON of ``--plan``), back as data."""
        return cls(float(d["fps"]), float(d["responsiveness"]), int(d["start"]), int(d["end"]), tuple(d["clips"]),
                   tuple(PairPlan.from_dict(p) for p in d["pairs"]), tuple(Rejection.from_dict(r) for r in d["rejected"]),
                   tuple(d.get("warnings", ())), tuple(Composition.from_dict(c) for c in d.get("compositions", ())),
                   d.get("pose_ends", "eased"), options_from_dict(d["options"]) if d.get("options") else None)

    def gap_warnings(self) -> list[str]:
        """One line per gap with anything to say (core.quality.gap_warning), in the order of the pairs."""
        from .quality import gap_warning

        lines = [gap_warning(p.prev, p.next, p.gap, p.quality, p.warning) for p in self.pairs]
        return [line for line in lines if line]

    def summary(self) -> str:
        lines = [f"frames {self.start}..{self.end} at {self.fps:g} fps, responsiveness W = {self.responsiveness:g}"]
        lines += [f"warning: {w}" for w in self.warnings]
        for p in self.pairs:
            lines.append(f"{p.prev} -> {p.next}: {p.method}"
                         + (f" (blend {p.blend_s:g} s, the user's)" if p.blend_s is not None else ""))
            if p.warning:
                lines.append(f"    note: {p.warning}")
            if p.note:
                lines.append(f"    note: {p.note}")
            if p.quality:
                lines.append(f"    gap {p.gap[0]} .. {p.gap[1]}: {p.quality.summary()}")
            for s in p.segments:
                w = f", slopes {s.weights.slope_start:.2f}/{s.weights.slope_end:.2f}" if s.weights else ""
                foot = f" {s.foot}" if s.foot and s.blend in ("step", "swing", "glide") else ""
                way = ""
                if s.way:
                    length = float(np.linalg.norm(np.subtract(s.way[1], s.way[0])))
                    way = f", {length:.3g} units away, rising {s.way[2]:.3g}"
                lines.append(f"    {s.part:5s} {s.blend:16s} {s.start:5d} .. {s.end:5d}{w}{foot}{way}")
        for c in self.compositions:
            lines.append(c.summary())
        for r in self.rejected:
            lines.append(f"rejected {r.clip}: {r.reason}")
        return "\n".join(lines)


def options_from_dict(d: dict) -> SynthesisOptions:
    """The options :func:`dataclasses.asdict` wrote, back (JSON's lists as the tuples they were;
    a name this version does not know is an error, not silently dropped)."""
    def made(cls, values: dict):
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"the plan's options name {unknown}, which this version does not have")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})
    d = dict(d)
    return made(SynthesisOptions, {**d, "contacts": made(ContactOptions, d.get("contacts", {}))})


@dataclass(frozen=True, eq=False)
class Result:
    """The output motion (frame 0 plays at output frame ``plan.start``), its plan, and which
    feet it has down: ``contacts (F, 2)`` left, right, as the blended sources say (the
    contact stage holds those feet between cores)."""

    motion: Motion
    plan: Plan
    contacts: np.ndarray | None = None

    @property
    def start(self) -> int:
        return self.plan.start
