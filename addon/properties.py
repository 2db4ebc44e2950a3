"""Smart Motion settings: ``Scene.smart_motion`` and ``Object.smart_motion``.

Where per-strip settings live, and why. An ``NlaStrip`` is not an ID: it
takes neither custom properties (``strip["x"] = 1`` raises "id properties not
supported for this type") nor registered ones (``bpy.types.NlaStrip.x =
IntProperty()`` leaves a read-only attribute); both checked against Blender
5.0. So the armature object carries them: ``Object.smart_motion.strips`` is a
collection with one :class:`SmartMotionStrip` per strip, keyed by the strip's
name. Blender keeps strip names unique over all the tracks of one object
(a second "walk" becomes "walk.001"), so the name alone identifies a strip;
moving a strip along its track or to another track keeps its settings, and
renaming it starts it afresh (the old entry is dropped at the next Analyze or
Synthesize).

The core range is stored relative to the strip (frames from the strip's
start), so that it moves with the strip, and shown and edited in scene frames
(``core_start``, ``core_end``). Until it is edited, the core is the whole
strip, following the strip's length if that changes.
"""

from __future__ import annotations

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty,
                       StringProperty)

from .state import setting_changed
from .strips import find_strip, strip_frame_count


def _live_request(self, context) -> None:
    """A setting the depsgraph does not see changed: live updates look (the hook addon/live.py registers)."""
    setting_changed(context.scene)


def _footprints_toggled(self, context) -> None:
    """The Footprints toggle: the prints shown or removed (addon/footprints.py)."""
    from .footprints import footprints_toggled

    footprints_toggled(self.id_data)


def _not_a_preview(settings, action: bpy.types.Action) -> bool:
    """Poll of the palette's action fields: any action but Smart Motion's previews (as Add as Soon as Possible)."""
    from .strips import preview_actions

    return action not in preview_actions()


class SmartMotionPalette(bpy.types.PropertyGroup):
    """Perform's palette: the action number key 1 to 9 adds (``action_1`` .. ``action_9``)."""

    __annotations__ = {
        f"action_{key}": PointerProperty(
            type=bpy.types.Action,
            name=f"Key {key}",
            description=f"The action key {key} adds while performing (Perform)",
            poll=_not_a_preview,
        )
        for key in range(1, 10)
    }

    def action(self, key: int) -> bpy.types.Action | None:
        return getattr(self, f"action_{key}")


def _is_empty(settings, obj: bpy.types.Object) -> bool:
    """Poll of Reach Target's target field: Empties only (an Empty marks a point, nothing else)."""
    return obj.type == 'EMPTY'


class SmartMotionExample(bpy.types.PropertyGroup):
    """One row of an armature's Reach Examples list: an action of that armature."""

    action: PointerProperty(
        type=bpy.types.Action,
        name="Action",
        description="An example of the action to reach with (a raise, a punch), made for this armature",
        poll=_not_a_preview,
    )


#: Reach Target's effectors: rig roles (core.rig), the joints whose position the reach aims.
REACH_EFFECTORS = (
    ('right.wrist', "Right Wrist", "The right hand reaches the target"),
    ('left.wrist', "Left Wrist", "The left hand reaches the target"),
    ('right.ankle', "Right Ankle", "The right foot reaches the target (a kick)"),
    ('left.ankle', "Left Ankle", "The left foot reaches the target (a kick)"),
)

#: Assemble Parts' body parts: core.assemble.PARTS (kept literal here, as registering must not import numpy;
#: tests/blender/test_reach_assemble.py checks they agree).
ASSEMBLY_PARTS = (
    ('upper', "Upper Body", "The spine above the pelvis and all above it: chest, neck, head, both arms"),
    ('lower', "Lower Body", "Both legs (the pelvis stays the strip's)"),
    ('left.arm', "Left Arm", "The left arm"),
    ('right.arm', "Right Arm", "The right arm"),
    ('left.leg', "Left Leg", "The left leg"),
    ('right.leg', "Right Leg", "The right leg"),
)


def _library_items(listed: str, listed_description: str, setting: str) -> tuple:
    """The two kinds of library of an operator: ``listed`` actions of the file, or a folder preference's BVH files."""
    return (
        ('ACTIONS', listed, listed_description),
        ('FOLDER', "Folder", f"The BVH files of the folder set as {setting} in the add-on's preferences, whose joint "
                             "names are the armature's bone names"),
    )


class SmartMotionSettings(bpy.types.PropertyGroup):
    """Settings the synthesis reads for the whole scene, and Perform's palette."""

    responsiveness: FloatProperty(
        name="Responsiveness",
        description="0 = most responsive, 1 = smoothest transitions",
        min=0.0,
        max=1.0,
        default=0.5,
        subtype='FACTOR',
        update=_live_request,
    )
    live: BoolProperty(
        name="Live Updates",
        description=(
            "While a preview is on, update it by itself when a source strip is moved, trimmed, re-timed, "
            "muted or unmuted, a core range or the responsiveness changes"
        ),
        default=True,
        update=_live_request,
    )
    footprints: BoolProperty(
        name="Footprints",
        description=(
            "Show where the preview's feet are down: a dark print where a foot is held, a red streak where it "
            "slides (a mesh in the collection 'Smart Motion footprints', following the preview)"
        ),
        default=False,
        update=_footprints_toggled,
    )
    palette: PointerProperty(type=SmartMotionPalette, name="Palette", description="Perform's number keys")
    hop_library: EnumProperty(
        name="Hop Library",
        description="Where Insert Hop looks for hop clips",
        items=(
            ('ACTIONS', "File's Actions", "The actions of this file made for the armature (not Smart Motion's previews "
                                          "or bakes)"),
            ('FOLDER', "Folder", "The BVH files of the folder set in the add-on's preferences whose joint names are "
                                 "the armature's bone names"),
        ),
        default='ACTIONS',
    )
    hop_weight_auto: BoolProperty(
        name="Automatic Weight",
        description=(
            "Insert Hop's stay weight w from the library itself (Koyama & Goto eq. 5: how much 1 s of stays "
            "lowers the smoothness cost over 100 seeded random transitions of the library), worked out once per "
            "library and kept; off: the Stay Weight given"
        ),
        default=True,
    )
    hop_weight: FloatProperty(
        name="Stay Weight",
        description=(
            "w of Insert Hop's cost S + wR (Koyama & Goto eq. 2), per second of stay, when Automatic Weight is "
            "off: higher waits less before and inside the hop. 0 bounds each stay by 1 s instead"
        ),
        min=0.0,
        soft_max=0.1,
        default=0.01,
        precision=4,
    )
    hop_blend: FloatProperty(
        name="Hop Blend",
        description="Seconds of each of Insert Hop's blends",
        min=0.01,
        soft_max=2.0,
        default=0.5,
        unit='TIME_ABSOLUTE',
    )
    reach_library: EnumProperty(
        name="Reach Examples",
        description="Where Reach Target takes its examples of one action",
        items=_library_items("Listed Actions", "The actions of the armature's Reach Examples list",
                             "Reach Examples Folder"),
        default='ACTIONS',
    )
    reach_effector: EnumProperty(
        name="Effector",
        description="The joint Reach Target makes hit the target",
        items=REACH_EFFECTORS,
        default='right.wrist',
    )
    reach_feature: EnumProperty(
        name="Feature",
        description="Which moment of each example is its hit point (Juang et al. 2009, section 3.1)",
        items=(
            ('highest', "Highest", "The effector's highest point (a raise, a reach up)"),
            ('farthest', "Farthest", "The effector's farthest point from the hips (a punch, a kick)"),
        ),
        default='highest',
    )
    assembly_part: EnumProperty(
        name="Body Part",
        description="The body part Assemble Parts replaces with the library's best match (Juang et al. 2009, "
                    "section 4)",
        items=ASSEMBLY_PARTS,
        default='upper',
    )
    assembly_library: EnumProperty(
        name="Assembly Library",
        description="Where Assemble Parts looks for the body part",
        items=_library_items("File's Actions", "The actions of this file made for the armature, but the "
                             "selected strip's own (not Smart Motion's previews or bakes)", "Assembly Library Folder"),
        default='ACTIONS',
    )


class SmartMotionPhase(bpy.types.PropertyGroup):
    """One support phase of a strip (2008, 4.1): ``phase`` over strip frames ``start..end``."""

    phase: StringProperty(name="Phase", description="DS, LS, RS or NS")
    start: IntProperty(name="Start", description="First frame, counted from the strip's start")
    end: IntProperty(name="End", description="Last frame (inclusive), counted from the strip's start")


class SmartMotionStrip(bpy.types.PropertyGroup):
    """Settings and analysis of one NLA strip; ``name`` is the strip's name."""

    has_core: BoolProperty(
        name="Custom Core",
        description="The core was set by hand; otherwise it is the default core (the strip minus its blends and overlaps)",
        default=False,
    )
    identity: StringProperty(
        name="Identity",
        description="What the strip plays and where, as last seen (finds these settings after a rename)",
        options={'HIDDEN'},
    )
    core_first: IntProperty(name="Core First", description="First core frame, counted from the strip's start", min=0)
    core_last: IntProperty(name="Core Last", description="Last core frame (inclusive), counted from the strip's start", min=0)

    def core_offsets(self, strip: bpy.types.NlaStrip | None) -> tuple[int, int]:
        """(first, last) core frames counted from the strip's start: as stored once edited, else the whole strip.

        An edited core is returned as stored, even where the strip has since
        been shortened under it: synthesis refuses such a core rather than
        quietly cut it (:func:`.timeline.strip_clips`).
        """
        if strip is None or self.has_core:
            return (self.core_first, max(self.core_last, self.core_first))
        return (0, strip_frame_count(strip) - 1)

    def _strip(self) -> bpy.types.NlaStrip | None:
        return find_strip(self.id_data, self.name)

    def _offsets(self, strip: bpy.types.NlaStrip | None) -> tuple[int, int]:
        """As :meth:`core_offsets`, with the default core (which depends on the neighbours) until edited."""
        if strip is None or self.has_core:
            return self.core_offsets(strip)
        from .timeline import core_offsets

        return core_offsets(self.id_data, strip)

    def _get_core_start(self) -> int:
        strip = self._strip()
        base = round(strip.frame_start) if strip is not None else 0
        return base + self._offsets(strip)[0]

    def _set_core_start(self, value: int) -> None:
        self._set_core(value, end=False)

    def _get_core_end(self) -> int:
        strip = self._strip()
        base = round(strip.frame_start) if strip is not None else 0
        return base + self._offsets(strip)[1]

    def _set_core_end(self, value: int) -> None:
        self._set_core(value, end=True)

    def _set_core(self, scene_frame: int, *, end: bool) -> None:
        # As for the scene's frame range: moving one end past the other pushes it along.
        strip = self._strip()
        if strip is None:
            return
        last_frame = strip_frame_count(strip) - 1
        first, last = (min(frame, last_frame) for frame in self._offsets(strip))  # back inside a shortened strip
        offset = min(max(int(scene_frame) - round(strip.frame_start), 0), last_frame)
        if end:
            first, last = min(first, offset), offset
        else:
            first, last = offset, max(last, offset)
        self.core_first, self.core_last, self.has_core = first, last, True
        _live_request(self, bpy.context)

    core_start: IntProperty(
        name="Core Start",
        description="First frame of the strip's core (scene frame): the part kept as captured",
        get=_get_core_start,
        set=_set_core_start,
    )
    core_end: IntProperty(
        name="Core End",
        description="Last frame of the strip's core (scene frame, inclusive)",
        get=_get_core_end,
        set=_set_core_end,
    )

    sync_blend: BoolProperty(
        name="Blend synchronized with overlapping strips",
        description=(
            "Strips with this on that overlap in time blend as one motion with their steps synchronized "
            "first (MKM), weighted by their influence as the NLA's Replace mode reads it, the upper track "
            "first; the group plays as one clip in the sequence Synthesize joins, and never composes"
        ),
        default=False,
        update=_live_request,
    )
    weigh_parts: BoolProperty(
        name="Weigh body parts",
        description=(
            "Scale this strip's weight in its synchronized group per body part. Off: every part as the "
            "influence gives it, except that a strip whose feet stand still (a gesture done standing) "
            "weighs nothing on the legs, so it does not slow the others' steps"
        ),
        default=False,
        update=_live_request,
    )
    legs_weight: FloatProperty(
        name="Legs",
        description=(
            "This strip's weight on the legs, the body's path and the steps' timing, times its influence's "
            "share (0: out of the legs and their timing, still in the upper body and arms)"
        ),
        default=1.0, min=0.0, soft_max=2.0,
        update=_live_request,
    )
    upper_weight: FloatProperty(
        name="Upper Body",
        description="This strip's weight on the spine, neck and head, times its influence's share",
        default=1.0, min=0.0, soft_max=2.0,
        update=_live_request,
    )
    arms_weight: FloatProperty(
        name="Arms",
        description="This strip's weight on the arms, times its influence's share",
        default=1.0, min=0.0, soft_max=2.0,
        update=_live_request,
    )

    blend_length: FloatProperty(
        name="Blend Length",
        description=(
            "How long the transition into this strip blends, in seconds; 0: automatic (the range search "
            "chooses it for the responsiveness, 2014 eq. 9). Set, the plan keeps it as yours and only "
            "chooses where the blend lies"
        ),
        default=0.0, min=0.0, soft_max=3.0, precision=2, step=5,
        update=_live_request,
    )

    def part_weights(self) -> dict | None:
        """``{part: factor}`` for core.mkm.blend_clips, or ``None`` (its defaults) with Weigh body parts off."""
        if not self.weigh_parts:
            return None
        return {"legs": self.legs_weight, "upper": self.upper_weight, "arms": self.arms_weight}

    phases: CollectionProperty(type=SmartMotionPhase, name="Support Phases")
    analysed: StringProperty(
        name="Analysed",
        description="What the strip played when it was analysed; the phases are out of date when it differs",
    )
    preview_source: BoolProperty(
        name="Preview Source",
        description="The preview was synthesized from this strip (or left it out as Blender does not play it); live updates follow it",
    )
    performed_current: IntProperty(
        name="Played Until",
        description=(
            "The frame being played when Perform added this strip (2014 eq. 17): its blends start after it, "
            "so the performance up to that frame stays as it was played"
        ),
    )
    performed_at: StringProperty(
        name="Performed At",
        description="What the strip played and where when Perform added it; moved, trimmed or re-timed, it "
                    "blends freely again",
        options={'HIDDEN'},
    )
    muted_by_preview: BoolProperty(
        name="Muted by Preview",
        description="Smart Motion muted this strip while its preview plays (previews of earlier versions; the preview now takes the solo)",
    )
    mute_before: BoolProperty(name="Mute Before", description="The strip's mute state before the preview")


class SmartMotionObject(bpy.types.PropertyGroup):
    """Smart Motion state of one armature object: strip settings, bone mapping, preview, plan."""

    strips: CollectionProperty(type=SmartMotionStrip, name="Strips")
    bone_mapping: StringProperty(
        name="Bone Mapping",
        description=(
            "Joint roles for rigs whose legs are not found by name, as ROLE=BONE pairs separated by "
            "commas, e.g. left.hip=thigh_L, left.knee=shin_L, left.ankle=foot_L (roles: pelvis, "
            "spine, chest, neck, head, left./right. hip, knee, ankle, toe, clavicle, shoulder, elbow, wrist)"
        ),
    )
    preview_action: PointerProperty(
        type=bpy.types.Action,
        name="Preview Action",
        description="The action the preview track plays; replaced by each Synthesize, removed by Clear",
    )
    preview_signature: StringProperty(
        name="Preview Signature",
        description=(
            "Hashes of what the preview was synthesized from (strips, their actions and cores, rig, bone "
            "mapping, responsiveness, fps) and of its keys; Bake to Action keeps the preview while both match"
        ),
    )
    baked_action: PointerProperty(
        type=bpy.types.Action,
        name="Baked Action",
        description="The action Bake to Action wrote; the next Bake replaces its keys rather than add another",
    )
    set_aside_action: PointerProperty(
        type=bpy.types.Action,
        name="Set-Aside Action",
        description="The armature's active action, taken off while the preview plays; Clear puts it back",
    )
    set_aside_slot: StringProperty(name="Set-Aside Slot", description="Identifier of the set-aside action's slot")
    solo_before: StringProperty(
        name="Solo Track Before",
        description=(
            "The track that was solo when the preview took the solo (only one track can be), so that "
            "Blender plays the preview; Clear makes it solo again"
        ),
    )
    solo_before_index: IntProperty(
        name="Solo Track Before, Index",
        description="Where the track of Solo Track Before was among the tracks, from the bottom: tracks may share a name",
        default=-1,
    )
    live_error: StringProperty(
        name="Live Update Error",
        description="Why the last live update left the preview as it was; empty when it is up to date",
    )
    plan_json: StringProperty(
        name="Plan",
        description="The last synthesis plan as JSON (core.synthesize.Plan.to_dict)",
    )
    hop_json: StringProperty(
        name="Hop",
        description="The last Insert Hop's choice and costs as JSON (addon.hops.HopChoice.to_dict)",
    )
    reach_target: PointerProperty(
        type=bpy.types.Object,
        name="Target",
        description="The Empty Reach Target makes the effector hit; when none is set, the selected Empty (or the "
                    "scene's only one)",
        poll=_is_empty,
    )
    reach_examples: CollectionProperty(type=SmartMotionExample, name="Reach Examples",
                                       description="Examples of one action Reach Target blends")
    reach_example_index: IntProperty(name="Active Example", description="The row of Reach Examples selected")
    reach_json: StringProperty(
        name="Reach",
        description="The last Reach Target's result as JSON (addon.reach.ReachFound.to_dict)",
    )
    assembly_json: StringProperty(
        name="Assembly",
        description="The last Assemble Parts' result as JSON (addon.assemble.AssemblyFound.to_dict)",
    )


# The add-on's module name as Blender registers it (bl_ext.<repository>.smart_motion): this package's parent.
ADDON = __package__.rpartition(".")[0]


class SmartMotionPreferences(bpy.types.AddonPreferences):
    """The add-on's preferences (Edit > Preferences > Add-ons > Smart Motion)."""

    bl_idname = ADDON

    hop_folder: StringProperty(
        name="Hop Library Folder",
        description=(
            "A folder of BVH clips Insert Hop searches when the scene's Hop Library is Folder; only files whose "
            "joint names are the armature's bone names, in its rest pose, are read"
        ),
        subtype='DIR_PATH',
    )

    reach_folder: StringProperty(
        name="Reach Examples Folder",
        description=(
            "A folder of BVH examples of one action (raises, punches) Reach Target blends when the scene's Reach "
            "Examples is Folder; every file must have the armature's bone names and rest pose"
        ),
        subtype='DIR_PATH',
    )
    assembly_folder: StringProperty(
        name="Assembly Library Folder",
        description=(
            "A folder of BVH clips Assemble Parts takes body parts from when the scene's Assembly Library is "
            "Folder; every file must have the armature's bone names and rest pose"
        ),
        subtype='DIR_PATH',
    )

    def draw(self, context):
        for name in ("hop_folder", "reach_folder", "assembly_folder"):
            self.layout.prop(self, name)


def preferences(context) -> SmartMotionPreferences | None:
    """The add-on's preferences, or None where it is not registered as an add-on."""
    addon = context.preferences.addons.get(ADDON)
    return addon.preferences if addon is not None else None


CLASSES = (SmartMotionPreferences, SmartMotionPalette, SmartMotionSettings, SmartMotionPhase, SmartMotionStrip,
           SmartMotionExample, SmartMotionObject)
