"""The option groups every count-based family shares, declared once.

:class:`PolicyOptions` (how probabilities given as predictions are read:
``threshold``, ``soft``; :mod:`biasamp._core.policy`) and :class:`GroupOptions`
(the small-group rule: ``min_group_size``, ``include_small_groups``) are the
bases of the families' options dataclasses (``biasamp/<family>/_options.py``),
so the defaults and constraints of these options are written once;
:class:`BinaryTaskOptions` (how a binary task is read: ``binary_task``,
``pos_label``; :func:`biasamp._core.labels.positive_class`) and :data:`MISSING` declares the ``missing=``
choice of :mod:`biasamp._core.rows`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from biasamp._core.crossfit import split_seed
from biasamp._core.labels import BINARY_TASK_CHOICES
from biasamp._core.policy import INCLUDE_SMALL_GROUPS, MIN_GROUP_SIZE, SOFT, THRESHOLD
from biasamp._core.rows import MISSING_CHOICES
from biasamp._core.validation import NONE, Checked, InstanceOf, OneOf, Validated, option

__all__ = ["BINARY_TASK", "CROSS_FIT", "DEFAULT_MIN_GROUP_SIZE", "DEFAULT_THRESHOLD", "MISSING", "SPLIT_SEED",
           "BinaryTaskOptions", "CrossFitOptions", "GroupOptions", "PolicyOptions"]

#: the one default of ``threshold``: probabilities above it are positive predictions (every signature reads it)
DEFAULT_THRESHOLD = 0.5
#: the one default of ``min_group_size``: groups with fewer (weighted) test members are small (every signature,
#: the audit's configuration and the command line read it)
DEFAULT_MIN_GROUP_SIZE = 30

#: ``binary_task``: a binary task read as its positive class, or as both classes (the one-hot reading)
BINARY_TASK = (OneOf(*BINARY_TASK_CHOICES),)

#: ``missing``: raise, drop the rows, or make a missing protected attribute its own group
MISSING = (OneOf(*MISSING_CHOICES),)
#: ``cross_fit``: None (cross-fit exactly when there is no training set), True or False
CROSS_FIT = (InstanceOf(bool, np.bool_, type(None), description="None, True or False"),)
#: ``cross_fit_random_state``: None, a random generator (accepted as it is: checking it must not draw from it), or
#: what :func:`~biasamp._core.crossfit.split_seed` accepts (a non-negative int), with its named errors
SPLIT_SEED = (NONE, InstanceOf(np.random.Generator, np.random.SeedSequence, np.random.RandomState,
                               description="a numpy Generator"),
              Checked(split_seed, "an int >= 0"))


@dataclass(frozen=True)
class PolicyOptions(Validated):
    """The probability policy: scores above ``threshold`` are positive, or (``soft="expected"``) expected rates."""

    threshold: float = option(DEFAULT_THRESHOLD, *THRESHOLD, doc="probabilities above it are positive predictions")
    soft: str = option("threshold", *SOFT, doc="'threshold' the probabilities, or use them as 'expected' rates")


@dataclass(frozen=True)
class GroupOptions(Validated):
    """The small-group rule: groups below ``min_group_size`` are flagged and left out of the headline."""

    min_group_size: int = option(DEFAULT_MIN_GROUP_SIZE, *MIN_GROUP_SIZE,
                                 doc="groups with fewer (weighted) test members are small")
    include_small_groups: bool = option(False, *INCLUDE_SMALL_GROUPS, doc="keep the small groups in the headline")


@dataclass(frozen=True)
class CrossFitOptions(Validated):
    """Signs from the test rows (no training set): cross-fitted over two folds, or read from every row."""

    cross_fit: bool | None = option(None, *CROSS_FIT,
                                    doc="None: cross-fit exactly when no training set is given; False: plug-in")
    cross_fit_random_state: object = option(None, *SPLIT_SEED,
                                            doc="the seed of the two-fold split (None: a fixed default)")


@dataclass(frozen=True)
class BinaryTaskOptions(Validated):
    """The rule for a binary task: read as its positive class (``pos_label``, default 1/True) or as both classes."""

    binary_task: str = option("positive", *BINARY_TASK,
                              doc="a binary task read as its 'positive' class, or as 'both' classes (one-hot)")
    pos_label: object = option(None, doc="the positive class of a binary task (None: 1/True for a 0/1 task)")
