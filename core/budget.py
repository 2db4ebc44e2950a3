"""The memory budget every tool keeps to, and the refusal of work that would exceed it.

The large arrays of each tool follow from the sizes of its inputs (frames, joints,
clips): a distance grid is frames x frames, a synthesis is output frames x joints.
Each tool estimates what it will need from those sizes before it allocates any of
it (the estimates live next to the arrays they count, in the modules that make
them) and refuses what exceeds the budget with the size it would need, rather
than asking the system for tens of gigabytes and ending in a MemoryError, or in a
machine swapping until the process is killed.

The budget is :data:`MEMORY_BUDGET` unless a caller raises it for what it runs
(``with memory_budget(n): ...``), as the command line's ``--max-memory`` does.
Estimates are of the arrays a tool holds at its peak, not of the process (the
interpreter and numpy take a few tens of megabytes besides).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["GiB", "MEMORY_BUDGET", "OverBudget", "memory_budget", "current_budget", "check_budget", "in_gib"]

GiB = 1 << 30
MEMORY_BUDGET = 2 * GiB

# (a context variable, not a global: a raised budget ends with the block that raised it,
# also when it fails, and a thread of the add-on keeps its own)
_budget: ContextVar[int] = ContextVar("memory_budget", default=MEMORY_BUDGET)


def current_budget() -> int:
    """The budget in bytes of what runs now: :data:`MEMORY_BUDGET` or the one :func:`memory_budget` set."""
    return _budget.get()


@contextmanager
def memory_budget(nbytes: float):
    """Run the block under a budget of ``nbytes`` (> 0) instead of the current one."""
    if not (nbytes > 0 and math.isfinite(nbytes)):
        raise ValueError(f"a memory budget must be a positive number of bytes, got {nbytes}")
    token = _budget.set(int(nbytes))
    try:
        yield
    finally:
        _budget.reset(token)


def in_gib(nbytes: float) -> str:
    """``"74.5 GiB"``: a size as people compare it with their machine, three figures (MiB below a
    tenth of a GiB, thousands grouped above a thousand)."""
    gib = nbytes / GiB
    if gib >= 1000:
        return f"{gib:,.0f} GiB"
    return f"{gib:.3g} GiB" if gib >= 0.1 else f"{nbytes / (1 << 20):.3g} MiB"


class OverBudget(ValueError):
    """Work refused because its arrays would exceed the memory budget.

    what    the work, as the user names it ("reach", "reading walk.bvh").
    needed  the bytes it would need; ``budget`` the bytes allowed.
    sizes   the sizes that make it so ("100,000 frames x 100,000 frames").
    remedy  what to give instead ("give shorter clips").
    more_than  ``needed`` is a least: the rest was never looked at (a pipe read up to the budget).
    """

    def __init__(self, what: str, needed: float, budget: int, sizes: str, remedy: str, *, more_than: bool = False):
        self.what, self.needed, self.budget, self.sizes, self.remedy = what, float(needed), int(budget), sizes, remedy
        self.more_than = more_than
        super().__init__(f"{self._need()}, above the {in_gib(budget)} memory budget: {remedy}")

    def _need(self) -> str:
        return f"{self.what} would need {'more than ' * self.more_than}{in_gib(self.needed)} ({self.sizes})"

    def with_option(self, option: str) -> str:
        """The message naming the option that raises the budget (``--max-memory``), in whole GiB."""
        # (of a size never seen whole no figure can be named)
        raise_it = f"a larger {option}" if self.more_than else f"{option} {math.ceil(self.needed / GiB)}"
        return f"{self._need()}, above the {in_gib(self.budget)} budget: pass {raise_it} or {self.remedy}"


def check_budget(what: str, needed: float, sizes: str, *, remedy: str) -> None:
    """Refuse (:class:`OverBudget`) work whose arrays would need ``needed`` bytes when that exceeds
    the current budget; see :class:`OverBudget` for the words."""
    budget = current_budget()
    if needed > budget:
        raise OverBudget(what, needed, budget, sizes, remedy)
