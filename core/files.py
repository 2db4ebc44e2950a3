"""Writing files without losing any: outputs checked against the inputs first, each written whole or not at all.

A studio's clips are its work. The command line refuses an output path that
is empty or one of its inputs (however it is spelled: relative, through a
symlink, a hard link) or the other output, and checks every output's folder
before it reads or writes anything. Each file is written to a temporary file
in its own folder and then renamed over the target, which on POSIX and
Windows replaces it in one step: a run that fails half way leaves the old
file as it was.

A run that is killed cannot remove its temporary file, as large as the file it
was writing. Its name says whose it is, ``.NAME.PID.HOST.RANDOM.tmp`` (the
writing process and machine), and the next write of ``NAME`` in that folder
removes those of this machine whose process has ended; never another live
run's, nor another machine's (its process ids are not ours to check), nor
one of the older unnamed kind ``.NAME.RANDOM.tmp``.

Files written together (a BVH and the plan that names it) are all written to
their temporary files before any is renamed, then renamed in the order given;
Ctrl-C waits for the renames. Only a kill between two renames (microseconds)
leaves the first new file beside the second's old one, and the second's
temporary file for the next run to remove: so the record goes last, and names
the file it belongs to by its SHA-256 (see ``core.__main__``).
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from collections.abc import Mapping
from contextlib import contextmanager
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

    Refused: an empty (or blank) path, an output that is an input or another
    output (also differing in case only), a folder, device or read-only file
    given as an output, and an output whose folder is missing or cannot be
    written to.
    """
    for flag, given in outputs.items():
        if not str(given).strip():  # (before Path(""), which is the current folder)
            raise ValueError(f"{flag} {str(given)!r} is an empty file name: give the file to write")
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
    """Write ``data`` to ``path`` whole or not at all (:func:`write_files_atomically` of one file)."""
    write_files_atomically({path: data})


def write_files_atomically(files: Mapping[str | Path, bytes]) -> None:
    """Write each ``{path: data}``, whole or not at all, all made before any is replaced.

    Each file's data goes to a temporary file in its folder (so the rename stays
    on one file system, named by :func:`temporary_prefix`) and is flushed to
    disk; only when every one is, each replaces its path in one rename, in the
    order given (put a file that names the others last). On a failure before
    the renames every temporary file is removed and every path left as it was.
    Ctrl-C during the renames takes effect after them. A new file gets the
    permissions a plain write would give. Before writing, the temporary files
    of ended runs beside each path are removed (:func:`remove_stale_temporaries`).
    """
    # through a symlink: the file it points to is replaced, the link kept
    pending = [(Path(path).resolve(), data) for path, data in files.items()]
    made: list[tuple[str, Path]] = []
    try:
        for path, data in pending:
            remove_stale_temporaries(path)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temporary_prefix(path), suffix=".tmp")
            made.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        with _interrupts_held():
            while made:
                tmp, path = made[0]
                os.replace(tmp, path)
                made.pop(0)
    except BaseException:
        for tmp, _ in made:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise


def temporary_prefix(path: str | Path, *, pid: int | None = None) -> str:
    """``".NAME.PID.HOST."``: how the temporary files of ``path`` written by process ``pid``
    (default: this one) of this machine begin; a random part and ``.tmp`` follow. NAME is the
    file's name, cut to 120 bytes (a name near the file system's 255 would leave no room)."""
    return f"{_head(path)}{os.getpid() if pid is None else pid}.{_host()}."


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files of ``path`` (:func:`temporary_prefix`) left by processes of this
    machine that have ended, and return them. A live process's are kept, another machine's and
    the older unnamed kind too; so is every one where processes cannot be asked about (Windows,
    where ``os.kill`` would end the process), and any this process may not remove."""
    if os.name != "posix":
        return []
    path = Path(path)
    head = _head(path)
    pattern = re.compile(re.escape(head) + r"(\d+)\." + re.escape(_host()) + r"\.[a-z0-9_]+\.tmp")
    removed = []
    try:
        entries = [e for e in os.scandir(path.parent) if e.name.startswith(head)]
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or _alive(int(match.group(1))):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:  # (gone already: another run removed it; or not ours to remove)
            pass
    return removed


def _head(path: str | Path) -> str:
    """``".NAME."``, NAME cut to 120 bytes: how every temporary file of ``path`` begins."""
    return f".{os.fsdecode(os.fsencode(Path(path).name)[:120])}."


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine exists (POSIX: signal 0 checks without sending)."""
    if pid <= 0:
        return True  # (0 and negative ids name process groups: never ask)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # (another user's process; or an id no process can have: keep it, the safe side)
    return True


def _host() -> str:
    """This machine's name as it goes into a temporary file's name: letters, digits and hyphens."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"


@contextmanager
def _interrupts_held():
    """Ctrl-C received inside the block takes effect after it, as ``KeyboardInterrupt`` saying the
    files were written. Only where Python's own handler is installed, in the main thread (the
    command line; Blender keeps its own)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    received = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if received:
        raise KeyboardInterrupt("interrupted once every file was written")


def _umask() -> int:
    """The process's file creation mask (read by setting it, then setting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
