"""The options of the multi-attribute family, declared with their constraints (``Family.options``)."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from biasamp._core.policy import THRESHOLD
from biasamp._core.policy_options import MISSING, CrossFitOptions, GroupOptions
from biasamp._core.validation import NONE, Interval, OneOf, Validated, option
from biasamp.multiattribute._metrics import _ATTR_PRED_RULES, _MODES, _SUPPORTS

__all__ = ["MultiOptions"]


@dataclass(frozen=True)
class MultiOptions(GroupOptions, CrossFitOptions, Validated):
    """Options of :func:`~biasamp.multi_bias_amp`.

    No ``soft``: the multi-attribute metrics threshold probabilities (the
    function refuses ``soft="expected"``: containment of a combination in
    expected rates is not defined), so a layer that forwards the probability
    policy forwards ``threshold`` alone to this family.
    """

    combinations: str = option("observed", OneOf(*_MODES), doc="the candidate task combinations")
    min_size: int = option(1, Interval(Integral, 1, None), doc="smallest combination")
    max_size: int | None = option(None, NONE, Interval(Integral, 1, None), doc="largest combination (None: no limit)")
    min_support: int = option(1, Interval(Integral, 1, None), doc="training rows that must contain a combination")
    max_combinations: int = option(200_000, Interval(Integral, 1, None), doc="most combinations mined")
    support: str = option("containment", OneOf(*_SUPPORTS), doc="how min_support counts")
    attr_pred_rule: str = option("one_hot", OneOf(*_ATTR_PRED_RULES), doc="how attr_pred is read")
    missing: str = option("raise", *MISSING, doc="rows with a missing value: 'raise', 'drop' or 'group'")
    threshold: float = option(0.5, *THRESHOLD, doc="probabilities above it are positive predictions")
