"""The options of the multi-attribute family, declared with their constraints (``Family.options``).

:func:`~biasamp.multi_bias_amp` builds :class:`MultiOptions` from its keywords
at entry; the bootstrap's generic driver builds it from the same call
(:meth:`biasamp._family.Family.plan_of`) for the family's count, compute and
resample hooks, and its streaming settings check the combination sizes
through it (``_metrics._check_sizes``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from numbers import Integral

from biasamp._core.policy import THRESHOLD
from biasamp._core.policy_options import DEFAULT_THRESHOLD, MISSING, BinaryTaskOptions, CrossFitOptions, GroupOptions
from biasamp._core.validation import NONE, Interval, OneOf, Validated, option

__all__ = ["MultiOptions"]

#: ``combinations``: the task sets seen in training, or every combination of the tasks
_MODES = ("observed", "all")
#: ``support``: how ``min_support`` counts a combination's training instances
_SUPPORTS = ("containment", "exact")
#: ``attr_pred_rule``: how a multi-column ``attr_pred`` is read
_ATTR_PRED_RULES = ("one_hot", "argmax")
#: the options that are counts (stored as Python ints)
_SIZES = ("min_size", "max_size", "min_support", "max_combinations")


@dataclass(frozen=True)
class MultiOptions(GroupOptions, CrossFitOptions, BinaryTaskOptions, Validated):
    """Options of :func:`~biasamp.multi_bias_amp`.

    No ``soft``: the multi-attribute metrics threshold probabilities (the
    function refuses ``soft="expected"``: containment of a combination in
    expected rates is not defined), so a layer that forwards the probability
    policy forwards ``threshold`` alone to this family.

    Besides each option's own constraint, two rules join options:
    ``max_size`` (when given) is at least ``min_size``, and
    ``support="exact"`` needs ``combinations="observed"``.
    """

    combinations: str = option("observed", OneOf(*_MODES), doc="the candidate task combinations")
    min_size: int = option(1, Interval(Integral, 1, None), doc="smallest combination")
    max_size: int | None = option(None, NONE, Interval(Integral, 1, None), doc="largest combination (None: no limit)")
    min_support: int = option(1, Interval(Integral, 1, None), doc="training rows that must contain a combination")
    max_combinations: int = option(200_000, Interval(Integral, 1, None), doc="most combinations mined")
    support: str = option("containment", OneOf(*_SUPPORTS), doc="how min_support counts")
    attr_pred_rule: str = option("one_hot", OneOf(*_ATTR_PRED_RULES), doc="how attr_pred is read")
    missing: str = option("raise", *MISSING, doc="rows with a missing value: 'raise', 'drop' or 'group'")
    threshold: float = option(DEFAULT_THRESHOLD, *THRESHOLD, doc="probabilities above it are positive predictions")

    def _normalise(self) -> None:
        for name in _SIZES:  # a numpy integer is stored as an int (the counts record it in their selection)
            value = getattr(self, name)
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))

    def _check_jointly(self) -> None:
        if self.max_size is not None and self.max_size < self.min_size:
            raise ValueError(f"max_size ({self.max_size}) must be >= min_size ({self.min_size})")
        if self.support == "exact" and self.combinations != "observed":
            raise ValueError("support='exact' counts the training instances whose task set *is* m, which only "
                             "combinations='observed' selects on; use support='containment' with combinations='all'")

    def sizes(self) -> tuple[int, int | None, int, int]:
        """``(min_size, max_size, min_support, max_combinations)``."""
        return self.min_size, self.max_size, self.min_support, self.max_combinations
