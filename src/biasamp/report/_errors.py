"""The error of an audit with no number to report (raised by :func:`~biasamp.report.audit`, caught per attribute
by :func:`~biasamp.report._attributes.audit_attributes` and by the command line)."""

from __future__ import annotations

from typing import Any

__all__ = ["NothingComputedError"]


class NothingComputedError(ValueError):
    """Every section of an audit that ran failed: :func:`~biasamp.report.audit` has no number to report.

    A ``ValueError`` whose message lists each section's error; ``report``
    holds the report of the failed sections (a :class:`~biasamp.report.Report`;
    the command line prints their errors and writes nothing).
    """

    def __init__(self, message: str, report: Any) -> None:
        super().__init__(message)
        self.report = report
