"""The co-occurrence count tables every BiasAmp metric is computed from.

The implementation lives in ``biasamp.cooccurrence._counts``; this public path re-exports it.
"""

from biasamp.cooccurrence._counts import *  # noqa: F403
from biasamp.cooccurrence._counts import __all__  # noqa: F401
