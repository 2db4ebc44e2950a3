"""Smart Motion core: pure numpy motion model, analysis and synthesis.

Nothing in this package imports Blender (``bpy``/``mathutils``); the add-on in
``addon/`` converts Blender data to and from :class:`core.motion.Motion`.
"""
