"""Warnings and exceptions raised by biasamp."""

from __future__ import annotations

__all__ = ["UndefinedPairWarning"]


class UndefinedPairWarning(UserWarning):
    """Some (attribute, task) pairs had an undefined term and were left out.

    A term is undefined when it conditions on an empty event, for example
    ``P(T̂ = 1 | A_a = 1)`` for a group ``a`` with no test member. Such pairs are
    excluded from the aggregate, marked ``undefined`` in the per-pair table and
    counted in the result's ``n_undefined`` (SPEC §0). biasamp never returns a
    silent NaN.
    """
