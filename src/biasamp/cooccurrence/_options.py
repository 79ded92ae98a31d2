"""The options of the co-occurrence families, declared with their constraints (``Family.options``)."""

from __future__ import annotations

from dataclasses import dataclass

from biasamp._core.policy_options import MISSING, BinaryTaskOptions, CrossFitOptions, GroupOptions, PolicyOptions
from biasamp._core.validation import BOOL, option

__all__ = ["DirectionalOptions", "MALSOptions"]


@dataclass(frozen=True)
class MALSOptions(PolicyOptions, GroupOptions, CrossFitOptions, BinaryTaskOptions):
    """Options of :func:`~biasamp.bias_amp_mals`: the probability policy, the small-group rule, the binary task,
    ``missing``."""

    missing: str = option("raise", *MISSING, doc="rows with a missing value: 'raise', 'drop' or 'group'")


@dataclass(frozen=True)
class DirectionalOptions(MALSOptions):
    """Options of :func:`~biasamp.bias_amp_directional`: those of BiasAmp_MALS and ``drop_empty_train_rows``."""

    drop_empty_train_rows: bool = option(False, BOOL, doc="leave training rows without any task label out")
