"""Smart Motion: the Blender extension's entry point.

Blender imports this file as ``bl_ext.<repository>.smart_motion``, so every
import inside the package is relative. Nothing here imports Blender at module
level: the Blender layer in ``addon/`` is loaded when Blender registers the
extension, and the numpy ``core`` only when an operator needs it. That keeps
``python -m core`` and the tests free of this file.
"""


def register() -> None:
    from . import addon

    addon.register()


def unregister() -> None:
    from . import addon

    addon.unregister()
