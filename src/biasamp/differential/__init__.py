"""Differential-fairness bias amplification (Foulds, Islam, Keya & Pan 2020): intersectional ε of the
labels and of the predictions, and their difference."""

from ._metrics import *  # noqa: F403
from ._metrics import __all__  # noqa: F401
