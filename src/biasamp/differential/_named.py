r"""The named streaming forms of differential fairness: ``DifferentialAccumulator``, ``DifferentialFairness`` and
``biasamp.dask.df_bias_amplification``, generated from the declaration; here, only what is its own (names, the
keywords of ``update``, the definition and the examples of each form)."""

from __future__ import annotations

from biasamp._family import Named

__all__ = ["NAMED"]

_DEFINITION = r"""
.. math::

    \tilde P(y \mid s) = \frac{N_{y,s} + c/2}{N_s + c}, \qquad
    \varepsilon = \max_y \Big[\max_s \log \tilde P(y \mid s) - \min_s \log \tilde P(y \mid s)\Big]

and the amplification :math:`\varepsilon_{\text{pred}} - \varepsilon_{\text{true}}` (see
:func:`~biasamp.df_bias_amplification`).
"""

_REFERENCES = """
References
----------
.. [1] J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional
   Definition of Fairness". ICDE 2020.
"""

NAMED = Named(
    accumulator="DifferentialAccumulator", metric="DifferentialFairness", dask=True, generated=True,
    update={"y_true": "task", "y_pred": "task_pred", "sensitive_features": "attr", "sample_weight": "sample_weight"},
    skips=("missing",), returns=("DF amplification",), base="FairnessAccumulator",
    summary="Differential-fairness bias amplification (Foulds et al. 2020)",
    sections={
        "accumulator": f"""
Notes
-----
The counts are the group fairness family's (:class:`~biasamp.accumulators.FairnessAccumulator`: per group,
its size and the positives of the labels and of the predictions), so batches, ``merge``, ``sync``, Dask
partitions and the streamed bootstrap work alike; ``compute()`` turns them into
{_DEFINITION}
An accumulator of either kind only merges with its own kind.
{_REFERENCES}
Examples
--------
>>> from biasamp.accumulators import DifferentialAccumulator
>>> acc = DifferentialAccumulator([0, 1], ["a", "b"])
>>> acc.update([1, 1, 0, 0], [1, 1, 1, 0], sensitive_features=["a"] * 4)
DifferentialAccumulator(n=4, 2 classes, 2 groups, soft=False)
>>> acc.update([1, 1, 0, 0], [1, 0, 0, 0], sensitive_features=["b"] * 4)
DifferentialAccumulator(n=8, 2 classes, 2 groups, soft=False)
>>> round(acc.compute().value, 4)  # log(.7 / .3), as df_bias_amplification
0.8473
""",
        "metric": f"""
Notes
-----
The states are the counts of :class:`~biasamp.accumulators.DifferentialAccumulator` (summed across
processes); ``compute()`` returns
{_DEFINITION}
and :meth:`result` the whole :class:`~biasamp.DFBiasAmpResult`.
{_REFERENCES}
Examples
--------
>>> import pytest
>>> _ = pytest.importorskip("torchmetrics")
>>> from biasamp.torchmetrics import DifferentialFairness
>>> metric = DifferentialFairness([0, 1], ["a", "b"])
>>> metric.update([1, 1, 0, 0, 1, 1, 0, 0], [1, 1, 1, 0, 1, 0, 0, 0], sensitive_features=list("aaaabbbb"))
>>> round(float(metric.compute()), 4)
0.8473
""",
        "dask": f"""
Returns
-------
DFBiasAmpResult
    Identical to the in-memory result.

Notes
-----
The per-group counts of every partition, tree-merged:
{_DEFINITION}
{_REFERENCES}
Examples
--------
>>> import numpy as np, pytest
>>> da = pytest.importorskip("dask.array")  # the [dask] extra
>>> import biasamp.dask
>>> y = np.array([1, 1, 0, 0, 1, 1, 0, 0] * 50)
>>> p = np.array([1, 1, 1, 0, 1, 0, 0, 0] * 50)
>>> s = np.array(list("aaaabbbb") * 50)
>>> res = biasamp.dask.df_bias_amplification(da.from_array(y, chunks=100), da.from_array(p, chunks=100),
...                                          sensitive_features=da.from_array(s, chunks=100))
>>> round(res.value, 4) == round(biasamp.df_bias_amplification(y, p, sensitive_features=s).value, 4)
True
""",
    },
)
