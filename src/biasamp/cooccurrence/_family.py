"""The declarations of the co-occurrence families: BiasAmp→ and BiasAmp_MALS."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biasamp._engine.sweep import ThresholdSweep
from biasamp._family import Family, Named, Scorer, StatisticSpec, read_attribute, truth_call
from biasamp.cooccurrence._metrics import (
    bias_amp_directional,
    bias_amp_mals,
    directional_compute,
    directional_count,
    mals_compute,
    mals_count,
)
from biasamp.cooccurrence._options import DirectionalOptions, MALSOptions
from biasamp.cooccurrence._plan import directional_resample, mals_resample
from biasamp.cooccurrence._stream import DIRECTIONAL_STREAM, MALS_STREAM
from biasamp.cooccurrence._sweep import directional_sweep, mals_sweep

__all__ = ["DIRECTIONAL", "MALS"]


def _mals_call(roles: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[tuple, dict]:
    """``bias_amp_mals(attr, task, *, attr_pred, task_pred, attr_train, task_train, sample_weight, **options)``:
    without a training set the test ground truth stands in for it, cross-fitted (the function's default)."""
    if roles.get("attr_pred") is None or roles.get("task_pred") is None:
        raise ValueError("BiasAmp_MALS needs both predictions: Â (attr_pred or attr_scores) and T̂ "
                         "(task_pred or task_scores)")
    return truth_call(roles, options)


def _mals_stream_roles(roles: Mapping[str, Any], train: bool) -> dict:
    """A batch of test rows as BiasAmp_MALS's accumulator counts it: the predictions, their weights and row ids, and,
    without a training set, the test ground truth ``attr``, ``task``, which stands in for it (its indicator
    cross-fitted over the test rows), as :func:`_mals_call` makes it stand in for a call."""
    read = ("attr_pred", "task_pred", "sample_weight", "row_ids") + (() if train else ("attr", "task"))
    return {r: roles.get(r) for r in read}


DIRECTIONAL = Family(
    key="directional",
    title="Directional bias amplification BiasAmp→",
    function=bias_amp_directional,
    citation='A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.',
    roles=("attr", "task", "attr_pred", "task_pred", "attr_train", "task_train", "sample_weight"),
    statistics=(
        StatisticSpec("A->T", "a_to_t", ("task_pred",), read_attribute("a_to_t"), (-1.0, 1.0), regular=True,
                      signed=True, scorer=Scorer("BiasAmp A->T", target="task", metadata="attr", request="attr",
                                                 aliases=("BiasAmp-> A->T",)), label="BiasAmp->", direction="A->T"),
        StatisticSpec("T->A", "t_to_a", ("attr_pred",), read_attribute("t_to_a"), (-1.0, 1.0), regular=True,
                      signed=True, scorer=Scorer("BiasAmp T->A", target="attr", metadata="task", request="task",
                                                 aliases=("BiasAmp-> T->A",)), label="BiasAmp->", direction="T->A"),
    ),
    call=truth_call,
    count=directional_count,
    compute=directional_compute,
    resample=directional_resample,
    sweep=ThresholdSweep(directional_sweep, options=("binary_task", "pos_label")),
    options=DirectionalOptions,
    # the streamed forms count the training table as it comes: no option to leave its empty rows out
    named=Named(accumulator="CooccurrenceAccumulator", metric="BiasAmpDirectional", dask=True,
                skips=("drop_empty_train_rows",)),
    section="directional",
    stream=DIRECTIONAL_STREAM,
    cross_fit=True,
)

MALS = Family(
    key="mals",
    title="BiasAmp_MALS",
    function=bias_amp_mals,
    citation='J. Zhao et al. "Men Also Like Shopping: Reducing Gender Bias Amplification using Corpus-level '
             'Constraints". EMNLP 2017.',
    roles=("attr", "task", "attr_pred", "task_pred", "attr_train", "task_train", "sample_weight"),
    statistics=(
        StatisticSpec("MALS", "mals", ("attr_pred", "task_pred"),
                      lambda res: (float(res.value), int(res.n_undefined)), (-1.0, 1.0), regular=True, signed=True,
                      label="BiasAmp_MALS"),
    ),
    call=_mals_call,
    count=mals_count,
    compute=mals_compute,
    resample=mals_resample,
    sweep=ThresholdSweep(mals_sweep, options=("binary_task", "pos_label")),
    options=MALSOptions,
    named=Named(accumulator="CooccurrenceAccumulator", metric="BiasAmpMALS", dask=True, fixed={"metric": "mals"}),
    section="mals",
    stream=MALS_STREAM,
    stream_roles=_mals_stream_roles,
    cross_fit=True,
)
