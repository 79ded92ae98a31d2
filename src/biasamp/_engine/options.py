"""The options of a bootstrap, validated in one place.

Every layer that resamples (:func:`biasamp.bootstrap`, the accumulators' and
Dask's streamed bootstrap, the curves' per-point intervals, the audit) builds a
:class:`BootstrapOptions`, so ``n_boot``, ``level``, ``ci_method``,
``p_adjust`` and ``random_state`` are checked by one function each and a bad
value is the same named error everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biasamp._engine.intervals import CI_METHODS
from biasamp._engine.resample import check_random_state
from biasamp._engine.runs import _check_level, _check_n_boot

__all__ = ["P_ADJUST", "BootstrapOptions", "check_ci_method", "check_p_adjust"]

#: multiplicity adjustments of the per-unit p-values
P_ADJUST = ("holm", "bh")


def check_ci_method(ci_method: Any) -> str:
    """``ci_method`` if it is one of :data:`~biasamp._engine.intervals.CI_METHODS`, else ``ValueError``."""
    if not isinstance(ci_method, str) or ci_method not in CI_METHODS:
        raise ValueError(f"ci_method must be one of {CI_METHODS}, got {ci_method!r}")
    return ci_method


def check_p_adjust(p_adjust: Any) -> str:
    """``p_adjust`` if it is one of :data:`P_ADJUST`, else ``ValueError``."""
    if not isinstance(p_adjust, str) or p_adjust not in P_ADJUST:
        raise ValueError(f"p_adjust must be one of {P_ADJUST}, got {p_adjust!r}")
    return p_adjust


@dataclass(frozen=True)
class BootstrapOptions:
    """Validated bootstrap options (the keywords of :func:`biasamp.bootstrap` are sugar for this object).

    Attributes
    ----------
    n_boot : int
        Replicates (an integer >= 2, bounded).
    level : float
        Confidence level in (0, 1).
    ci_method : str
        One of ``"auto"``, ``"percentile"``, ``"basic"``, ``"bca"``, ``"band"``.
    random_state : None, int or numpy Generator/SeedSequence
        The seed.
    p_adjust : str
        ``"holm"`` or ``"bh"``.
    """

    n_boot: int = 1000
    level: float = 0.95
    ci_method: str = "auto"
    random_state: Any = None
    p_adjust: str = "holm"

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_boot", _check_n_boot(self.n_boot))
        object.__setattr__(self, "level", _check_level(self.level))
        check_ci_method(self.ci_method)
        check_p_adjust(self.p_adjust)
        check_random_state(self.random_state)
