"""Per-scene Smart Motion settings, stored as ``Scene.smart_motion``."""

import bpy
from bpy.props import FloatProperty


class SmartMotionSettings(bpy.types.PropertyGroup):
    """Settings the synthesis reads for the whole scene."""

    responsiveness: FloatProperty(
        name="Responsiveness",
        description="0 = most responsive, 1 = smoothest transitions",
        min=0.0,
        max=1.0,
        default=0.5,
        subtype='FACTOR',
    )
