"""Warnings and exceptions raised by biasamp."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

__all__ = ["UndefinedPairWarning", "warn_outside"]

_PACKAGE_DIR = str(Path(__file__).resolve().parent)


class UndefinedPairWarning(UserWarning):
    """Some (attribute, task) pairs had an undefined term and were left out.

    A term is undefined when it conditions on an empty event, for example
    ``P(T̂ = 1 | A_a = 1)`` for a group ``a`` with no test member. Such pairs are
    excluded from the aggregate, marked ``undefined`` in the per-pair table and
    counted in the result's ``n_undefined`` (SPEC §0). biasamp never returns a
    silent NaN.
    """


def warn_outside(message: str, category: type[Warning]) -> None:
    """Emit a warning attributed to the first caller outside the biasamp package."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2 = the caller of warn_outside
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
