"""When to show a progress bar."""

from __future__ import annotations

import sys


def show_progress(progress: bool | None) -> bool:
    """``progress``, or (``None``) whether stderr is a terminal: bars by default in a terminal only."""
    if progress is None:
        try:
            return bool(sys.stderr.isatty())
        except (AttributeError, ValueError):
            return False
    return bool(progress)
