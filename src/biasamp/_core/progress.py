"""Progress reporting: a bar on a terminal, a plain line every ~10 s elsewhere, nothing when off.

Three modes, chosen by :func:`progress_mode` from a ``progress`` argument:

* ``"bar"``: a tqdm bar on stderr (``progress=True``, or ``None`` when stderr
  is a terminal);
* ``"lines"``: ``progress=None`` when stderr is not a terminal (pipes, CI,
  notebooks' logs): a background ticker writes one plain line to stderr every
  :data:`LINE_INTERVAL` seconds (10, or ``$BIASAMP_PROGRESS_INTERVAL``) with
  the stage, done/total, the elapsed time and an estimate of the time left.
  Nested stages (an audit section running DPA) share one line, outer stage
  first. A call shorter than the interval prints nothing; one that printed
  ends with a "done" line.
* ``"off"``: ``progress=False``, or ``progress=None`` while the environment
  variable ``TQDM_DISABLE`` is set to a true value (``1``, ``true``, ``yes``,
  ``on``), tqdm's own switch for "no progress output" (an explicit
  ``progress=True`` still draws a bar, as tqdm's explicit ``disable=False`` does).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Sized
from typing import Any, Literal

MODES = ("bar", "lines", "off")


def _default_interval() -> float:
    try:
        return max(0.0, float(os.environ.get("BIASAMP_PROGRESS_INTERVAL", "10")))
    except ValueError:
        return 10.0


#: Seconds between two progress lines in ``"lines"`` mode (read when a stage starts).
LINE_INTERVAL: float = _default_interval()


def _stderr_is_tty() -> bool:
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def _tqdm_disabled() -> bool:
    """Whether ``$TQDM_DISABLE`` asks for no progress output (``1``/``true``/``yes``/``on``)."""
    return os.environ.get("TQDM_DISABLE", "").strip().lower() in ("1", "true", "yes", "on")


def progress_mode(progress: Any) -> str:
    """``"bar"``, ``"lines"`` or ``"off"`` for a ``progress`` argument (bool, None, or a mode).

    ``None``: nothing when ``$TQDM_DISABLE`` is true, else a bar when stderr
    is a terminal and plain lines otherwise; ``True``: a bar; ``False``: nothing.
    """
    if progress is None:
        if _tqdm_disabled():
            return "off"
        return "bar" if _stderr_is_tty() else "lines"
    if isinstance(progress, str):
        if progress not in MODES:
            raise ValueError(f"progress must be True, False, None or one of {MODES}, got {progress!r}")
        return progress
    return "bar" if progress else "off"


def show_progress(progress: bool | None) -> bool:
    """Whether to draw a tqdm bar: ``progress``, or (``None``) whether stderr is a terminal."""
    return progress_mode(progress) == "bar"


def progress_bar(iterable: Iterable | None = None, *, total: int | None = None, desc: str, progress: Any,
                 unit: str = "it", unit_scale: bool = False, tqdm_class: Any = None, **tqdm_kwargs: Any) -> Any:
    """A tqdm-like progress object (``update``, ``set_postfix_str``, ``close``, context manager, iteration).

    ``progress`` is resolved by :func:`progress_mode`. In ``"bar"`` and
    ``"off"`` modes it is ``tqdm_class`` (default ``tqdm.auto.tqdm``) with
    ``disable`` set accordingly; in ``"lines"`` mode a :class:`LineProgress`.
    """
    mode = progress_mode(progress)
    if total is None and isinstance(iterable, Sized):
        total = len(iterable)
    if mode == "lines":
        return LineProgress(iterable, total=total, desc=desc, unit=unit, unit_scale=unit_scale)
    if tqdm_class is None:
        from tqdm.auto import tqdm

        tqdm_class = tqdm
    kwargs = dict(total=total, desc=desc, disable=mode == "off", unit=unit, unit_scale=unit_scale, leave=False,
                  file=sys.stderr, dynamic_ncols=True)
    kwargs.update(tqdm_kwargs)
    if iterable is not None:
        kwargs["iterable"] = iterable
    return tqdm_class(**kwargs)


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _count(n: float, unit_scale: bool) -> str:
    if not unit_scale:
        return f"{int(n):,}"
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= factor:
            return f"{n / factor:.2f}{suffix}"
    return f"{int(n)}"


# The stages open in this process, outermost first; one ticker thread prints them as one line.
_STACK: list[LineProgress] = []
_LOCK = threading.RLock()


class LineProgress:
    """Plain progress lines on stderr, every :data:`LINE_INTERVAL` seconds while the stage is open.

    Same small interface as a tqdm bar: ``update(n)``, ``set_postfix_str``,
    ``set_description``, ``close``, iteration, context manager. The line is
    written by a daemon thread, so a stage whose single step takes minutes is
    not silent either.
    """

    def __init__(self, iterable: Iterable | None = None, *, total: int | None, desc: str, unit: str = "it",
                 unit_scale: bool = False, interval: float | None = None, file: Any = None):
        self.iterable, self.total, self.desc, self.unit, self.unit_scale = iterable, total, desc, unit, unit_scale
        self.interval = LINE_INTERVAL if interval is None else float(interval)
        self.file = file
        self.n: float = 0
        self.postfix = ""
        self.start = time.monotonic()
        self.closed = False
        self._printed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        with _LOCK:
            _STACK.append(self)
            if len(_STACK) == 1:  # the outermost stage owns the ticker
                self._thread = threading.Thread(target=self._tick, name="biasamp-progress", daemon=True)
                self._thread.start()

    # -- the tqdm-like interface ------------------------------------------------
    def update(self, n: float = 1) -> None:
        self.n += n

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = str(s)

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self.desc = desc or ""

    def refresh(self) -> None:
        pass

    def __iter__(self):
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:  # exhausted, or the loop was left early (the generator is closed)
            self.close()

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        self.close()
        return False

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with _LOCK:
            if self in _STACK:
                _STACK.remove(self)
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self._printed:
                self._write(f"{self.desc}: done, {self._done_text()} in {_clock(time.monotonic() - self.start)}")

    # -- the line -----------------------------------------------------------------
    def _done_text(self) -> str:
        done = _count(self.n, self.unit_scale)
        if self.total:
            return f"{done}/{_count(self.total, self.unit_scale)} {self.unit}"
        return f"{done} {self.unit}"

    def status(self) -> str:
        """``desc [postfix]: done/total unit (pct), elapsed, ~left``."""
        elapsed = time.monotonic() - self.start
        head = self.desc + (f" [{self.postfix}]" if self.postfix else "")
        text = f"{head}: {self._done_text()}"
        if self.total:
            text += f" ({100 * self.n / self.total:.0f}%)"
        text += f", {_clock(elapsed)} elapsed"
        if self.total and 0 < self.n < self.total:
            text += f", ~{_clock(elapsed / self.n * (self.total - self.n))} left"
        elif self.total and self.n == 0:
            text += ", estimating time left"
        return text

    def _write(self, text: str) -> None:
        out = self.file or sys.stderr
        try:
            out.write(f"biasamp: {text}\n")
            out.flush()
        except (ValueError, OSError):  # stderr closed
            pass

    def _tick(self) -> None:
        while not self._stop.wait(self.interval if self.interval > 0 else 0.001):
            with _LOCK:
                line = " | ".join(p.status() for p in _STACK if not p.closed)
            if line:
                self._write(line)
                self._printed = True


def format_size(n: float) -> str:
    """A number of bytes as people read it: ``512 B``, ``1.5 KiB``, ``2.0 GiB`` (powers of 1024)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
