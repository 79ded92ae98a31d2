"""The options of the differential-fairness family, declared with their constraints (``Family.options``).

:func:`~biasamp.df_bias_amplification` builds :class:`DifferentialOptions`
from its keywords at entry.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from biasamp._core.policy_options import MISSING, BinaryTaskOptions, GroupOptions, PolicyOptions
from biasamp._core.validation import Checked, option

__all__ = ["DifferentialOptions"]


#: The smallest concentration: the smoothed rate (c/2) / (N_s + c) of an outcome a group never has must stay a
#: normal float64 for every weighted group size N_s up to 2**53 (a subnormal c, 5e-324, made it 0: ε infinite)
MIN_CONCENTRATION = 1e-100


def _check_concentration(concentration: Any) -> float:
    """The Dirichlet concentration as a float, when finite and >= :data:`MIN_CONCENTRATION` (else a named error)."""
    if isinstance(concentration, bool) or not isinstance(concentration, numbers.Real):
        raise TypeError(f"concentration must be a positive number, got {type(concentration).__name__}")
    c = float(concentration)
    if not (np.isfinite(c) and c > 0):
        raise ValueError(
            f"concentration must be a finite number > 0, got {concentration!r} (without smoothing, ε is infinite "
            "as soon as one group never has an outcome; use a small concentration instead)"
        )
    if c < MIN_CONCENTRATION:
        raise ValueError(f"concentration must be at least {MIN_CONCENTRATION:g}, got {concentration!r} (a smaller "
                         "one rounds to no smoothing in float64: ε infinite as soon as one group never has an "
                         "outcome)")
    return c


@dataclass(frozen=True)
class DifferentialOptions(PolicyOptions, GroupOptions, BinaryTaskOptions):
    """Options of :func:`~biasamp.df_bias_amplification`."""

    concentration: float = option(1.0, Checked(_check_concentration, f"a finite number >= {MIN_CONCENTRATION:g}"),
                                  doc="Dirichlet smoothing of the group rates")
    pos_label: Any = option(1, doc="the positive outcome")
    missing: str = option("raise", *MISSING, doc="rows with a missing value: 'raise', 'drop' or 'group'")
