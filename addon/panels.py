"""The Smart Motion sidebar panel of the NLA editor (N panel, own tab)."""

import bpy


def active_armature(context: bpy.types.Context) -> bpy.types.Object | None:
    """The active object if it is an armature, else ``None``."""
    obj = context.active_object
    if obj is not None and obj.type == 'ARMATURE':
        return obj
    return None


class SMART_MOTION_PT_main(bpy.types.Panel):
    bl_idname = "SMART_MOTION_PT_main"
    bl_label = "Smart Motion"
    bl_space_type = 'NLA_EDITOR'
    bl_region_type = 'UI'
    bl_category = "Smart Motion"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        armature = active_armature(context)
        if armature is None:
            layout.label(text="Select an armature", icon='INFO')
        else:
            layout.label(text=armature.name, icon='ARMATURE_DATA')
        layout.prop(context.scene.smart_motion, "responsiveness", slider=True)
