"""Co-occurrence bias amplification: BiasAmp_MALS (Zhao et al. 2017) and BiasAmp→ (Wang & Russakovsky 2021)."""

from ._metrics import *  # noqa: F403
from ._metrics import __all__  # noqa: F401
