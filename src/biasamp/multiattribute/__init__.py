"""Multi-attribute bias amplification: Multi_MALS and Multi→ (Zhao, Andrews & Xiang 2023)."""

from ._metrics import *  # noqa: F403
from ._metrics import __all__  # noqa: F401
