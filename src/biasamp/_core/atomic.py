"""Atomic writing of a text file (the report's renderings and the command line's outputs)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["_write_atomic"]


def _write_atomic(path: str | os.PathLike, text: str, *, protect: Iterable[str | os.PathLike] = ()) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    Never leaves a partial file at ``path``; refuses to write over any of the
    ``protect`` paths (the inputs).
    """
    path = Path(path)
    target = path.resolve()
    for p in protect:
        p = Path(p)
        if p.exists() and (target == p.resolve() or (path.exists() and os.path.samefile(path, p))):
            raise ValueError(f"refusing to overwrite the input file {p} with the report")
    if target.is_dir():
        raise IsADirectoryError(f"{path} is a directory")
    folder = target.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target
