"""Thin Blender layer: properties, panel (operators come later).

Converts between Blender data and ``core`` motions, calls ``core``, writes
back in bulk and reports. Every class is registered from ``CLASSES`` in
dependency order: a PropertyGroup before anything that points to it.
"""

import bpy

from . import panels, properties

CLASSES = (
    properties.SmartMotionSettings,
    panels.SMART_MOTION_PT_main,
)

_register_classes, _unregister_classes = bpy.utils.register_classes_factory(CLASSES)


def register() -> None:
    _register_classes()
    bpy.types.Scene.smart_motion = bpy.props.PointerProperty(
        type=properties.SmartMotionSettings,
        name="Smart Motion",
        description="Smart Motion settings of this scene",
    )


def unregister() -> None:
    # The pointer goes first: it refers to a class about to be unregistered.
    del bpy.types.Scene.smart_motion
    _unregister_classes()
