"""Thin Blender layer: properties, operators, panel.

Converts between Blender data and ``core`` motions, calls ``core``, writes
back in bulk and reports. Every class is registered from ``CLASSES`` in
dependency order: a PropertyGroup before anything that points to it. The
numpy ``core`` is imported only when an operator runs.
"""

import bpy

from . import live, operators, panels, perform, properties

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
