"""The declaration of the differential-fairness family (Foulds et al. 2020)."""

from __future__ import annotations

from biasamp._engine.groups import fairness_call
from biasamp._family import Family, Scorer, StatisticSpec
from biasamp.differential._metrics import df_bias_amplification, df_compute, df_count
from biasamp.differential._named import NAMED
from biasamp.differential._options import DifferentialOptions
from biasamp.differential._plan import df_resample
from biasamp.differential._stream import DIFFERENTIAL_STREAM

__all__ = ["DIFFERENTIAL"]


def _read(field: str):
    return lambda res: (float(getattr(res, field)), 0)


DIFFERENTIAL = Family(
    key="differential",
    title="Differential-fairness bias amplification",
    function=df_bias_amplification,
    citation='J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional Definition of Fairness". ICDE 2020.',
    roles=("attr", "task", "task_pred", "sample_weight"),
    statistics=(
        StatisticSpec("DF amplification", "df_amplification", ("task_pred",), _read("value"), (-float("inf"),
                      float("inf")), regular=True, signed=True,
                      scorer=Scorer("DF amplification", target="task", metadata="attr", request="sensitive_features",
                                    aliases=("df_bias_amplification", "differential fairness"))),
        StatisticSpec("epsilon_true", "epsilon_true", ("task_pred",), _read("epsilon_true"), (0.0, float("inf")),
                      regular=False, signed=False),
        StatisticSpec("epsilon_pred", "epsilon_pred", ("task_pred",), _read("epsilon_pred"), (0.0, float("inf")),
                      regular=False, signed=False),
    ),
    call=fairness_call,
    task_labels="binary",
    task_kinds=("binary",),
    count=df_count,
    compute=df_compute,
    resample=df_resample,
    section="differential",
    stream=DIFFERENTIAL_STREAM,
    options=DifferentialOptions,
    named=NAMED,
)
