"""The options of the differential-fairness family, declared with their constraints (``Family.options``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biasamp._core.policy_options import MISSING, GroupOptions, PolicyOptions
from biasamp._core.validation import Checked, option
from biasamp.differential._metrics import _check_concentration

__all__ = ["DifferentialOptions"]


@dataclass(frozen=True)
class DifferentialOptions(PolicyOptions, GroupOptions):
    """Options of :func:`~biasamp.df_bias_amplification`."""

    concentration: float = option(1.0, Checked(_check_concentration, "a finite number > 0"),
                                  doc="Dirichlet smoothing of the group rates")
    pos_label: Any = option(1, doc="the positive outcome")
    missing: str = option("raise", *MISSING, doc="rows with a missing value: 'raise', 'drop' or 'group'")
