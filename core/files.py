"""Writing files without losing any: outputs checked against the inputs first, each written whole or not at all.

A studio's clips are its work. The command line refuses an output path that
is one of its inputs (however it is spelled: relative, through a symlink, a
hard link) or the other output, and checks every output's folder before it
reads or writes anything. Each file is written to a temporary file in its own
folder and then renamed over the target, which on POSIX and Windows replaces
it in one step: a run that fails half way leaves the old file as it was.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths may name one file: the same resolved path, also when only the case
    differs (macOS and Windows fold case; refusing there too is the safe side), or (both
    existing) the same inode."""
    if os.path.normcase(str(a.resolve())).casefold() == os.path.normcase(str(b.resolve())).casefold():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(inputs: dict[str, str | Path], outputs: dict[str, str | Path]) -> None:
    """Raise ``ValueError`` saying what to change if writing ``outputs`` could lose data.

    inputs   ``{what it is: path}``, e.g. ``{"clip 'walk'": "walk.bvh"}``;
    outputs  ``{how it was given: path}``, e.g. ``{"-o": "out.bvh", "--plan": "plan.json"}``.

    Refused: an output that is an input or another output (also differing in
    case only), a folder, device or read-only file given as an output, and an
    output whose folder is missing or cannot be written to.
    """
    for flag, out in outputs.items():
        out = Path(out)
        for what, given in inputs.items():
            if _same_file(out, Path(given)):
                raise ValueError(f"{flag} {out} is the file of {what} ({given}): writing there would destroy it; "
                                 f"give {flag} another file")
        if out.is_dir():
            raise ValueError(f"{flag} {out} is a folder: give a file name, e.g. {out / 'out'}")
        if out.exists() and not out.is_file():
            raise ValueError(f"{flag} {out} is not a regular file (a device or a pipe): give a file name")
        if out.exists() and (not os.access(out, os.W_OK) or not out.stat().st_mode & 0o222):
            # (marked read-only: a rename over it would replace it even where the user may write it)
            raise ValueError(f"{flag} {out} is read-only: make it writable or write elsewhere")
        folder = out.resolve().parent
        if not folder.is_dir():
            raise ValueError(f"{flag} {out}: the folder {folder} does not exist; create it or write elsewhere")
        if not os.access(folder, os.W_OK):
            raise ValueError(f"{flag} {out}: the folder {folder} cannot be written to; write elsewhere")
    flags = list(outputs)
    for i, a in enumerate(flags):
        for b in flags[i + 1 :]:
            if _same_file(Path(outputs[a]), Path(outputs[b])):
                raise ValueError(f"{a} and {b} are the same file ({outputs[a]}): give each its own file")


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` whole or not at all (:func:`write_bytes_atomically`)."""
    write_bytes_atomically(path, text.encode("utf-8"))


def write_bytes_atomically(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all.

    The data goes to a temporary file in the same folder (so the rename stays
    on one file system), is flushed to disk, and replaces ``path`` in one
    rename; on any failure the temporary file is removed and ``path`` is
    left as it was. A new file gets the permissions a plain write would give.
    """
    path = Path(path).resolve()  # through a symlink: the file it points to is replaced, the link kept
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    """The process's file creation mask (read by setting it, then setting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
