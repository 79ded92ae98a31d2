"""The declaration of the multi-attribute family: Multi_MALS and Multi→ (G→M, M→G)."""

from __future__ import annotations

from biasamp._family import Family, Named, Scorer, StatisticSpec, truth_call
from biasamp.multiattribute._metrics import multi_bias_amp, multi_compute, multi_count
from biasamp.multiattribute._options import MultiOptions
from biasamp.multiattribute._plan import multi_resample
from biasamp.multiattribute._stream import MULTI_STREAM

__all__ = ["MULTI"]


def _read(field: str, raw: bool = False):
    def read(res):
        part = getattr(res, field)
        return float(part.raw if raw else part.value), int(part.n_undefined)

    return read


_NEEDS = {"mals": ("attr_pred", "task_pred"), "g_to_m": ("task_pred",), "m_to_g": ("attr_pred",)}
_NAMES = {"mals": "Multi_MALS", "g_to_m": "G->M", "m_to_g": "M->G"}
_LABELS = {"mals": ("Multi_MALS", ""), "g_to_m": ("Multi->", "G->M"), "m_to_g": ("Multi->", "M->G")}  # the report's
_SCORERS = {
    "g_to_m": Scorer("Multi G->M", target="task", metadata="attr", request="attr", aliases=("Multi-> G->M",),
                     switches={"raw": "G->M raw"}),
    "m_to_g": Scorer("Multi M->G", target="attr", metadata="task", request="task", aliases=("Multi-> M->G",),
                     switches={"raw": "M->G raw"}),
}

MULTI = Family(
    key="multi",
    title="Multi-attribute bias amplification Multi_MALS and Multi→",
    function=multi_bias_amp,
    citation='D. Zhao, J. Andrews, A. Xiang. "Men Also Do Laundry: Multi-Attribute Bias Amplification". ICML 2023.',
    roles=("attr", "task", "attr_pred", "task_pred", "attr_train", "task_train", "sample_weight"),
    # in report order: each mean |Delta| (a distance from the training associations) before its signed "raw" mean
    statistics=tuple(spec for f in _NAMES for spec in (
        StatisticSpec(_NAMES[f], "multi_mals" if f == "mals" else f, _NEEDS[f], _read(f), (0.0, 1.0),
                      regular=False, signed=False, scorer=_SCORERS.get(f), label=_LABELS[f][0],
                      direction=_LABELS[f][1], reading="distortion"),
        StatisticSpec(f"{_NAMES[f]} raw", f"{'multi_mals' if f == 'mals' else f}_raw", _NEEDS[f], _read(f, True),
                      (-1.0, 1.0), regular=True, signed=True, headline=False, label=_LABELS[f][0],
                      direction=f"{_LABELS[f][1]} raw".strip()),
    )),
    call=truth_call,
    count=multi_count,
    compute=multi_compute,
    resample=multi_resample,
    options=MultiOptions,
    named=Named(accumulator="MultiAttributeAccumulator", metric="MultiBiasAmp", dask=True,
                skips=("support", "attr_pred_rule")),
    section="multi",
    stream=MULTI_STREAM,
    cross_fit=True,
    task_kinds=("multilabel",),
    n_boot_option="n_boot_multi",  # its many combinations make a replicate costlier: the audit has its own count
)
