"""Undefined pairs of a count family's statistics: the warnings when some are, the error when all are."""

from __future__ import annotations

from biasamp.exceptions import UndefinedPairWarning, warn_outside


def _warn_undefined(n_undefined: int, total: int, what: str) -> None:
    """Warn about some undefined pairs (a statistic with *every* pair undefined: :func:`_warn_undefined_statistics`)."""
    if n_undefined and n_undefined < total:
        warn_outside(
            f"{what}: {n_undefined} of {total} pairs are undefined (conditioning on an empty "
            "event) and were excluded; see the 'undefined' column of the per-pair table",
            UndefinedPairWarning,
        )


def _warn_undefined_statistics(reasons: dict) -> None:
    """Warn that some statistics of a call are undefined (reported as NaN, flagged) while the others are returned."""
    if reasons:
        warn_outside(
            "; ".join(f"{name} is undefined: every pair is undefined ({why})" for name, why in reasons.items())
            + ". It is reported as NaN with undefined=True and a reason; the other statistics of the call are "
            "returned (see docs/definitions.md, 'Undefined quantities')",
            UndefinedPairWarning,
        )


def _all_undefined_error(parts: list) -> ValueError:
    """The error of a call whose every statistic is undefined; ``parts`` = [(name, n_pairs, reason)]."""
    desc = "; ".join(f"{name}: every one of the {n} pairs is undefined ({reason})" for name, n, reason in parts)
    return ValueError(f"every statistic asked for is undefined, {desc} (see docs/definitions.md, "
                      "'Undefined quantities')")
