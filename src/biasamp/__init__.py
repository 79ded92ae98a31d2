"""biasamp: bias and bias amplification metrics for machine-learning classifiers.

The public API (see SPEC §8):

* :func:`bias_amp_mals`, :func:`bias_amp_directional`: co-occurrence bias
  amplification (Zhao et al. 2017; Wang & Russakovsky 2021);
* :func:`calibrate_thresholds`: well-calibrated decision thresholds;
* :class:`CooccurrenceCounts`: the count tables every co-occurrence metric
  is computed from (add them, update them batch by batch), with
  :func:`directional_from_counts` and :func:`mals_from_counts`.
"""

from .calibration import Thresholds, calibrate_thresholds
from .cooccurrence import (
    DirectionalBiasAmpResult,
    DirectionResult,
    MALSResult,
    bias_amp_directional,
    bias_amp_mals,
    directional_from_counts,
    mals_from_counts,
)
from .counts import CooccurrenceCounts
from .exceptions import UndefinedPairWarning

__version__ = "0.1.0"

__all__ = [
    "CooccurrenceCounts",
    "DirectionResult",
    "DirectionalBiasAmpResult",
    "MALSResult",
    "Thresholds",
    "UndefinedPairWarning",
    "__version__",
    "bias_amp_directional",
    "bias_amp_mals",
    "calibrate_thresholds",
    "directional_from_counts",
    "mals_from_counts",
]
