"""The engine's tuning constants, in one keyword-only dataclass with their units.

Every length is in leg lengths (hip to knee to ankle) and every duration in
seconds, so that a rig's unit and frame rate do not change what they mean.
``synthesize(..., options=SynthesisOptions(...))`` overrides any of them;
``docs/design.md`` lists them with the reasons for their values.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class ContactOptions:
    """Constants of the contact stage, each relative to the body or in seconds."""

    heel_rise: float = 0.05  # leg lengths: a held foot whose heel stands this much higher above its floor than its toe pivots fully about the toe
    step_apart: float = 0.01  # leg lengths: a foot held at both ends of a gap further apart than this steps
    step_s: float = 0.4  # seconds a foot takes for such a step (less when the gap is shorter)
    min_step_s: float = 0.1  # seconds: a gap leaving less than this for a step glides instead
    step_delay: float = 0.1  # share of a step's time at either end in which it rises or lands, not travels
    # a step the contact stage adds on its own rises this share of its length within these leg
    # lengths; a planned step rises this share at the clips' pace, no more than the upper one,
    # lower when quicker (core.methods, the plan's way)
    step_rise: float = 0.25  # ratio
    step_height: tuple[float, float] = (0.04, 0.25)  # legs
    settle_s: float = 0.1  # seconds in which a foot held from a core settles onto the gap's floor
    # seconds over which the leg solver's easing of a nearly straight leg's reach
    # (core.ik.soft_extension) fades in from the first frame of a hold and out to its last
    # (adaptation's legs too), so a held leg never bends in one frame; the holds themselves
    # apply in full, so a held foot is held from its first frame
    hold_fade_s: float = 0.1
    pelvis_s: float = 0.2  # seconds either side over which the pelvis's drop to held feet is smoothed


MOTION_TO_MOTION_SLOPES = ("zero", "eq16")


@dataclass(frozen=True, kw_only=True)
class SynthesisOptions:
    """Constants of planning and rendering (``synthesize(..., options=...)``)."""

    # 2008, eq. (1): each original segment of a transition is time-scaled by a factor
    # between s_min and s_max at most (the values of the paper's experiments); a
    # connection's step may stretch to s_max times its own length
    s_min: float = 0.7  # ratio
    s_max: float = 1.5  # ratio
    orientation_window_s: float = 3.0  # s: how far body orientation looks from a join (2008, 4.3)
    # the end slopes of a motion-to-motion blend: "zero" (beyond the paper: both sides move, and
    # a slope adds a step of velocity to theirs, core.weights.motion_to_motion_weights) or
    # "eq16" (2014, 4.4.1 as written); tests/bench/motion_to_motion.py measures both
    motion_to_motion_slopes: str = "zero"
    min_blend_s: float = 0.2  # s: no blend shorter where its possible range allows (nor by Fig. 4b)
    # s: no blend longer. The longest eq. (9) picks between real clips in a gap of any
    # length is about 9 s (two still clips at W = 1, whose acceleration limit asks for a
    # slow change); the bound keeps the range search over a long gap linear in the gap
    max_blend_s: float = 12.0
    accel_step_s: float = 1.0 / 30.0  # s: time step of the clips' pose acceleration (the blend limit)
    warp_ramp_s: float = 0.1  # s over which a time warp changes a clip's playback speed
    stand_reach: float = 0.1  # legs: how far a connection may bend a foot beyond the previous phase's own step
    keep_reach: float = 0.5  # legs: adaptation keeps a previous foot only this close to the clip's own
    step_apart: float = 0.01  # legs: a foot nothing takes home steps when this far from the clip's stance
    step_window_s: float = 5.0  # s: the previous motion's steps are timed over its last this long
    step_s: float = 0.4  # s: a step's length in time when neither clip takes a step
    step_delay: float = 0.1  # share of a step at either end in which a foot rises or lands, not travels
    # a foot already in the air when adaptation starts rises step_rise times its way's
    # length, no less than step_height nor more than step_max_height
    step_height: float = 0.1  # legs
    step_rise: float = 0.25  # ratio
    step_max_height: float = 0.25  # legs
    # 2014 section 5: a clip run as soon as possible is placed with its core this long
    # after the previous core (the paper's fixed interval), among other starts from the
    # shortest room up to max_blend_s, its blending ranges optimised at each, and the
    # start chosen pulled earlier (core.schedule)
    asap_interval_s: float = 1.0  # s
    # issue 26: Give Room moves a flagged gap's next clip (and everything after it) later, frame
    # by frame, at most this long, until the gap is under its flag threshold; Add as Soon as
    # Possible and Pack delay a start they chose by as much at most to keep its gap unflagged
    give_room_s: float = 2.0  # s
    # 2008, 8.1: a clip inside another is an additional motion when one shoulder angle
    # (upper arm against the trunk, core.compose.shoulder_angles) ranges over more than
    # this. Walks in ../shared/mocap swing it 16-31 degrees in their normal style (bandai1
    # and bandai2) and up to about 68 in exaggerated ones (angry, happy; the musical walk
    # dances with raised arms, 130); waving and raising a hand range 70-138. 50 lies
    # between a walk's swing and the smallest deliberate arm movement (docs/design.md).
    additional_shoulder_deg: float = 50.0  # degrees
    # 2008, 8: an additional motion is "a motion in which mainly the upper body is moved":
    # its body stays in place, the pelvis within this many leg lengths of where it starts
    # (a walk, however wide it swings its arms, travels; waving or raising a hand does not)
    additional_travel: float = 0.5  # legs
    composition_blend_s: float = 0.3  # s: an additional motion's parts blend in (out) over this (Fig. 6)
    contacts: ContactOptions = field(default_factory=ContactOptions)  # the contact stage's own

    def __post_init__(self):
        if self.motion_to_motion_slopes not in MOTION_TO_MOTION_SLOPES:
            raise ValueError(f"motion_to_motion_slopes must be one of {MOTION_TO_MOTION_SLOPES} (\"zero\": slope 0 at "
                             f"both ends, the default; \"eq16\": the paper's), got {self.motion_to_motion_slopes!r}")

    def min_blend_frames(self, fps: float) -> int:
        """``min_blend_s`` as a whole number of frames at ``fps``: the nearest one. A room between cores
        is whole frames, so a duration is met to within half a frame, ``0.5 / fps`` s; a rate read
        from a file carries the noise of its frame time's decimals (Blender's BVH importer sets
        30 / 30.00003 fps), which must not cost a frame (6.000006 frames at 0.2 s is 6)."""
        return int(round(self.min_blend_s * fps))
