"""The options of a bootstrap, declared and validated in one place.

Every layer that resamples (:func:`biasamp.bootstrap`, the accumulators' and
Dask's streamed bootstrap, the curves' per-point intervals, the audit) builds a
:class:`BootstrapOptions`, so ``n_boot``, ``level``, ``ci_method``,
``p_adjust`` and ``random_state`` are checked by one declaration each
(:mod:`biasamp._core.validation`) and a bad value is the same named error
everywhere. The audit's configuration (:class:`biasamp.report.AuditConfig`)
declares its bootstrap options with the same constraints.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any

from biasamp._core.validation import Checked, Interval, OneOf, Validated, check, option
from biasamp._engine.intervals import CI_METHODS
from biasamp._engine.resample import check_random_state
from biasamp._engine.runs import _check_n_boot

__all__ = ["CI_METHOD", "DEFAULT_LEVEL", "DEFAULT_N_BOOT", "LEVEL", "N_BOOT", "P_ADJUST", "P_ADJUST_CHOICE",
           "RANDOM_STATE", "BootstrapOptions",
           "check_ci_method", "check_p_adjust"]

#: multiplicity adjustments of the per-unit p-values
P_ADJUST = ("holm", "bh")

#: the one default of ``n_boot`` (bootstrap replicates) of every layer that resamples, the audit included
DEFAULT_N_BOOT = 1000
#: the one default of ``level`` (confidence level) of every interval, the audit and its renderers included
DEFAULT_LEVEL = 0.95

# the declared constraints (BootstrapOptions and the audit's configuration read them)
#: ``n_boot``: an integer >= 2, bounded (the checker of every bootstrap, reused: its bound has its own words)
N_BOOT = (Checked(_check_n_boot, "an integer >= 2"),)
#: ``level``: the confidence level
LEVEL = (Interval(Real, 0, 1, closed="neither"),)
#: ``ci_method``: the interval method
CI_METHOD = (OneOf(*CI_METHODS),)
#: ``p_adjust``: the multiplicity adjustment
P_ADJUST_CHOICE = (OneOf(*P_ADJUST),)
#: ``random_state``: None, a non-negative int or a numpy Generator/SeedSequence/RandomState (the one seed checker)
RANDOM_STATE = (Checked(check_random_state, "None, a non-negative integer or a numpy Generator"),)


def check_ci_method(ci_method: Any) -> str:
    """``ci_method`` if it is one of :data:`~biasamp._engine.intervals.CI_METHODS`, else ``ValueError``."""
    return check("ci_method", ci_method, CI_METHOD)


def check_p_adjust(p_adjust: Any) -> str:
    """``p_adjust`` if it is one of :data:`P_ADJUST`, else ``ValueError``."""
    return check("p_adjust", p_adjust, P_ADJUST_CHOICE)


@dataclass(frozen=True)
class BootstrapOptions(Validated):
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

    n_boot: int = option(DEFAULT_N_BOOT, *N_BOOT)
    level: float = option(DEFAULT_LEVEL, *LEVEL)
    ci_method: str = option("auto", *CI_METHOD)
    random_state: Any = option(None, *RANDOM_STATE)
    p_adjust: str = option("holm", *P_ADJUST_CHOICE)

    def _normalise(self) -> None:
        object.__setattr__(self, "n_boot", _check_n_boot(self.n_boot))
        check("level", self.level, LEVEL)
        object.__setattr__(self, "level", float(self.level))
