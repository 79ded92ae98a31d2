"""Group fairness metrics of Qian et al. (2021): DP, DI, SPSF, FPSF, EOFP, EOTP, BA, and the
MetricFrame-style per-group view."""

from ._groups import GroupMetrics
from ._metrics import *  # noqa: F403
from ._metrics import __all__ as _metrics_all

__all__ = [*_metrics_all, "GroupMetrics"]
