"""Progress of long work: a callback given the share of the work done, a fraction rising to 1.

Core never draws a bar: the command line passes a tqdm-driven callback (core.__main__), the
add-on Blender's window manager's progress indicator (addon/operators.py), and ``None`` reports
nothing. A step of a longer job reports through :func:`part_of`, its fractions mapped into its
share of the whole.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[float], None]


def part_of(progress: Progress | None, start: float, stop: float) -> Progress | None:
    """``progress`` seen by a step that does the work from ``start`` to ``stop`` (fractions of the whole):
    the step's own 0..1 mapped there; ``None`` stays ``None``."""
    if progress is None:
        return None
    return lambda fraction: progress(start + (stop - start) * min(max(fraction, 0.0), 1.0))


def report(progress: Progress | None, fraction: float) -> None:
    """Call ``progress`` with ``fraction`` when there is one."""
    if progress is not None:
        progress(fraction)
