"""Thin Blender layer: NLA strips to one synthesized motion, and back to keys.

Converts between Blender data and ``core`` motions, calls ``core``, writes
back in bulk and reports. Data flows one way: strips -> core clips ->
synthesis -> preview or baked keys. Every file has one job, and imports only
files of a lower layer (never one above it, so there is no circle):

=====  =========================  ============================================================
layer  module                     what it does
=====  =========================  ============================================================
1      :mod:`.fcurves`            channel bags, bulk sampling and writing of F-curves, digests
1      :mod:`.strips`             reading the NLA: selection, solo, settings per strip (following
                                  renames), identity, the preview track's name and segments
1      :mod:`.pose`               Blender's pose channels <-> the core's joint channels (pure numpy)
1      :mod:`.state`              what the session keeps (one eviction rule), and hooks
2      :mod:`.convert`            armature and action <-> ``core.motion.Motion``; the armature's rig
2      :mod:`.timeline`           strips -> core clips: spans, default cores, the clips to join
2      :mod:`.sync_groups`        strips blended synchronized, and their NLA influences
3      :mod:`.preview`            the preview in segment actions, its signature, Clear
3      :mod:`.report`             the plan's text and warnings; :class:`.report.Synthesis`
4      :mod:`.synthesis`          one entry per user action: Analyze, Synthesize
                                  (:func:`.synthesis.preview_synthesis`), Bake
                                  (:func:`.synthesis.bake_strips`)
4      :mod:`.bake`               writing a bake, re-baking in place
5      :mod:`.arrange`            Add as Soon as Possible, Pack
5      :mod:`.live`               live re-synthesis while strips are edited
5      :mod:`.perform`            live performance from the keyboard
5      :mod:`.hops`               Insert Hop: one-hop transitions between two strips
5      :mod:`.reach`              Reach Target
5      :mod:`.assemble`           Assemble Parts
5      :mod:`.clips`              clip libraries (the file's actions, BVH folders), result tracks
5      :mod:`.demo`               the demo scene ``make demo`` builds
5      :mod:`.footprints`         the Footprints overlay: the preview's contacts as a mesh of prints
5      :mod:`.pictures`           the demo's pictures: a Workbench contact sheet, the speed plot
6      :mod:`.properties`         property groups only
6      :mod:`.operators`          thin operators: gather inputs, call, report
6      :mod:`.panels`             the NLA sidebar, drawn from what was recorded
7      this file                  registration
=====  =========================  ============================================================

(The layers are checked by ``tests/core/test_layout.py``; what each button
does for an animator is in ``docs/blender.md``.)

Timeline. Scene frames are the core's output frames: a strip starting at
scene frame ``s`` is a :class:`core.synthesize.Clip` with ``start = s``, its
clip frame ``k`` plays at ``s + k``, and its core (kept relative to the strip,
see :mod:`.properties`) becomes clip frames.

Two steps. Every function that changes Blender data first does everything
that can fail (reading strips, finding the rig, synthesizing) into plain
values, then the writes, which do not fail on valid input. An error
(``ValueError`` with a message saying what to fix) therefore leaves the file
as it was. The entry functions act on an armature object and the ``select``
flags of its NLA strips, never on an editor area, so they work headless.

Preview. Synthesize writes the result into segment actions
``"<armature>_SmartMotion_preview 1"``, ``… 2`` and so on (:mod:`.preview`),
played on their own NLA track above the sources, which takes the solo while
it plays; Clear removes them and restores the rest. Neither touches the
source actions. Bake after a preview copies its keys when its signature
says it is still what synthesizing the selected strips would give; else it
synthesizes as it would without a preview. Either way the baked action is
the same.

Every class is registered from ``CLASSES`` in dependency order: a
PropertyGroup before anything that points to it. numpy and ``core.motion``
come with the conversion modules; the rest of ``core`` (analysis,
synthesis, the searches) is imported when an operator runs.
"""
import bpy

from . import footprints, live, operators, panels, perform, properties  # (footprints: its preview hook)

CLASSES = (
    *properties.CLASSES,
    *operators.CLASSES,
    *panels.CLASSES,
    *perform.CLASSES,  # its panel goes under the main one
)

_register_classes, _unregister_classes = bpy.utils.register_classes_factory(CLASSES)


def register() -> None:
    _register_classes()
    bpy.types.Scene.smart_motion = bpy.props.PointerProperty(
        type=properties.SmartMotionSettings,
        name="Smart Motion",
        description="Smart Motion settings of this scene",
    )
    bpy.types.Object.smart_motion = bpy.props.PointerProperty(
        type=properties.SmartMotionObject,
        name="Smart Motion",
        description="Smart Motion strip settings, preview and plan of this armature",
    )
    live.register()


def unregister() -> None:
    live.unregister()
    # The pointers go first: they refer to classes about to be unregistered.
    del bpy.types.Object.smart_motion
    del bpy.types.Scene.smart_motion
    _unregister_classes()
