"""The input layer: label arguments of every kind become validated label matrices.

The implementation lives in ``biasamp._core.labels``; this public path re-exports it.
"""

from biasamp._core.labels import *  # noqa: F403
from biasamp._core.labels import __all__  # noqa: F401
