"""Predictability-based bias amplification: DPA (Tokas, Nair & Kerner 2025) and leakage
amplification (Wang et al. 2019), with their attackers."""

from ._metrics import *  # noqa: F403
from ._metrics import __all__  # noqa: F401
