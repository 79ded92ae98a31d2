"""The registry of the count-based metric families: one line per family.

Every layer that serves "every count-based metric" reads :data:`REGISTRY`
(see :mod:`biasamp._family` for the declaration and docs/architecture.md for
how to add a family).
"""

from __future__ import annotations

from biasamp._family import Registry
from biasamp.cooccurrence._family import DIRECTIONAL, MALS
from biasamp.differential._family import DIFFERENTIAL
from biasamp.fairness._family import FAIRNESS
from biasamp.multiattribute._family import MULTI

__all__ = ["REGISTRY"]

REGISTRY = Registry([DIRECTIONAL, MALS, MULTI, FAIRNESS, DIFFERENTIAL])
