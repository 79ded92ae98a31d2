"""Safe writing of a text file (the report's renderings and the command line's outputs).

The rules (docs/safety.md), as careful command-line tools apply them:

* a regular file (new or existing) is written through a temporary file in
  the same folder and a rename, so that it is never left half-written; the
  temporary file is removed on any exception, ``KeyboardInterrupt`` and
  (in the command line) ``SIGTERM`` included;
* a new file gets the mode ``0o666`` less the umask, as ``open()`` would
  give it; an existing file keeps its mode;
* a symbolic link to a file is followed: its target is written (atomically,
  keeping its mode) and the link stays a link; a dangling link or a loop of
  links is refused (it would create a file somewhere else);
* a FIFO (named pipe, ``/dev/stdout`` into a pipe) or a character device
  (``/dev/null``, a terminal) is written directly, as a shell's ``>`` does;
  it is never replaced by a regular file; a block device, a socket or a
  directory is refused;
* an input is never written over: not the input file, and not any file in
  an input directory (a Parquet dataset), including a file reached through
  a symbolic link; nor a new file inside an input directory;
* a file name that is not valid UTF-8 (bytes decoded with
  ``surrogateescape``) is written under its own bytes.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["_check_target", "_input_clash", "_write_atomic"]


def _umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _files_under(folder: Path) -> set[tuple[int, int]]:
    """(device, inode) of every file in ``folder``, symbolic links followed (once each)."""
    out, seen = set(), set()
    for root, dirs, files in os.walk(folder, followlinks=True):
        try:
            st = os.stat(root)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:  # a loop of links
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        for f in files:
            try:
                fs = os.stat(os.path.join(root, f))
            except OSError:
                continue
            out.add((fs.st_dev, fs.st_ino))
    return out


def _input_clash(path: str | os.PathLike, inputs: Iterable[str | os.PathLike | None]) -> str | None:
    """The input that an output at ``path`` would write over or into, else None."""
    target = Path(os.path.abspath(path))
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):
        resolved = target
    try:
        st = os.stat(target)
    except OSError:
        st = None
    for inp in inputs:
        if inp is None:
            continue
        p = Path(inp)
        if not p.exists():
            continue
        real = p.resolve()
        if resolved == real or (st is not None and os.path.samefile(target, p)):
            return str(inp)
        if p.is_dir():
            if real in resolved.parents or target.parent.resolve() == real:
                return str(inp)
            if st is not None and stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) in _files_under(p):
                return str(inp)
    return None


def _check_target(path: str | os.PathLike) -> tuple[Path, os.stat_result | None]:
    """``(where to write, its stat or None for a new file)``; ``ValueError``/``OSError`` for a refused target."""
    path = Path(path)
    try:
        st = os.stat(path)  # through symbolic links (also /dev/stdout -> /proc/self/fd/1 -> a pipe)
    except FileNotFoundError:
        st = None
        if os.path.islink(path):
            raise ValueError(f"{path} is a dangling symbolic link (to {os.readlink(path)}); refusing to create "
                             "a file through it") from None
    except OSError as exc:  # a loop of links, a folder we may not search
        raise ValueError(f"{path} cannot be followed: {exc.strerror or exc}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{path} is a directory")
        if stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
            kind = "a block device" if stat.S_ISBLK(st.st_mode) else "a socket"
            raise ValueError(f"{path} is {kind}; refusing to write a report to it")
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a character device: written in place, through its links
            return path, st
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(os.path.abspath(path))
    if not target.parent.is_dir():
        raise FileNotFoundError(f"the folder {target.parent} does not exist")
    return target, st


def _write_atomic(path: str | os.PathLike, text: str, *, protect: Iterable[str | os.PathLike] = ()) -> Path:
    """Write ``text`` to ``path`` by the rules of the module docstring; the path written.

    Never leaves a partial file at ``path``; refuses to write over or into
    any of the ``protect`` paths (the inputs).
    """
    clash = _input_clash(path, protect)
    if clash is not None:
        raise ValueError(f"refusing to overwrite the input {clash} with the report")
    target, st = _check_target(path)
    data = text.encode("utf-8", errors="backslashreplace")  # a lone surrogate (undecodable name): \\udcff
    if st is not None and not stat.S_ISREG(st.st_mode):  # a FIFO or a character device: write into it
        with open(target, "wb") as fh:
            fh.write(data)
        return target
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target
