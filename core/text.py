"""How messages word what they count: "1 strip", "2 strips", never "1 strips"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 strip"``, ``"0 strips"``, ``"2 strips"``: ``n`` and ``noun`` agreeing (``plural``: the
    noun's plural when it is not ``noun + "s"``). Thousands are grouped (``"1,200 frames"``)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"

