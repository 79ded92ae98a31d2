"""The option groups every count-based family shares, declared once.

:class:`PolicyOptions` (how probabilities given as predictions are read:
``threshold``, ``soft``; :mod:`biasamp._core.policy`) and :class:`GroupOptions`
(the small-group rule: ``min_group_size``, ``include_small_groups``) are the
bases of the families' options dataclasses (``biasamp/<family>/_options.py``),
so the defaults and constraints of these options are written once;
:data:`MISSING` declares the ``missing=`` choice of :mod:`biasamp._core.rows`.
"""

from __future__ import annotations

from dataclasses import dataclass

from biasamp._core.crossfit import split_seed
from biasamp._core.policy import INCLUDE_SMALL_GROUPS, MIN_GROUP_SIZE, SOFT, THRESHOLD
from biasamp._core.rows import MISSING_CHOICES
from biasamp._core.validation import BOOL, NONE, Checked, OneOf, Validated, option

__all__ = ["MISSING", "CrossFitOptions", "GroupOptions", "PolicyOptions"]

#: ``missing``: raise, drop the rows, or make a missing protected attribute its own group
MISSING = (OneOf(*MISSING_CHOICES),)


@dataclass(frozen=True)
class PolicyOptions(Validated):
    """The probability policy: scores above ``threshold`` are positive, or (``soft="expected"``) expected rates."""

    threshold: float = option(0.5, *THRESHOLD, doc="probabilities above it are positive predictions")
    soft: str = option("threshold", *SOFT, doc="'threshold' the probabilities, or use them as 'expected' rates")


@dataclass(frozen=True)
class GroupOptions(Validated):
    """The small-group rule: groups below ``min_group_size`` are flagged and left out of the headline."""

    min_group_size: int = option(30, *MIN_GROUP_SIZE, doc="groups with fewer (weighted) test members are small")
    include_small_groups: bool = option(False, *INCLUDE_SMALL_GROUPS, doc="keep the small groups in the headline")


@dataclass(frozen=True)
class CrossFitOptions(Validated):
    """Signs from the test rows (no training set): cross-fitted over two folds, or read from every row."""

    cross_fit: bool | None = option(None, NONE, BOOL,
                                    doc="None: cross-fit exactly when no training set is given; False: plug-in")
    cross_fit_random_state: object = option(None, Checked(split_seed, "None, an int >= 0 or a numpy Generator"),
                                            doc="the seed of the two-fold split (None: a fixed default)")
