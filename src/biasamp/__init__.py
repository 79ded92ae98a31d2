"""biasamp: bias and bias amplification metrics for machine-learning classifiers.

The public API (the vocabulary: :ref:`def-vocabulary`):

* :func:`audit`: every applicable metric with confidence intervals in one
  :class:`Report` (terminal summary, JSON, self-contained HTML), its options
  in one :class:`AuditConfig`; the ``biasamp`` command line wraps it;

* :func:`bias_amp_mals`, :func:`bias_amp_directional`: co-occurrence bias
  amplification (Zhao et al. 2017; Wang & Russakovsky 2021);
* :func:`calibrate_thresholds`: well-calibrated decision thresholds;
* :func:`threshold_curve`, :func:`checkpoint_curve`: a count-based metric
  across decision thresholds (one sort of the scores) or training
  checkpoints, as a :class:`CurveResult` (table, plot, report);
* :class:`CooccurrenceCounts`: the count tables every co-occurrence metric
  is computed from (add them, update them batch by batch), with
  :func:`directional_from_counts` and :func:`mals_from_counts`;
* :func:`multi_bias_amp`: multi-attribute bias amplification Multi_MALS and
  Multi→ G→M / M→G (Zhao, Andrews & Xiang 2023), with
  :class:`MultiAttributeCounts` and :func:`multi_from_counts`;
* :func:`dpa`, :func:`leakage_amplification`: predictability-based bias
  amplification DPA (Tokas, Nair & Kerner 2025) and LA (Wang et al. 2019),
  with :class:`TabularAttacker`;
* :func:`attention_iou`, :func:`mask_score`, :func:`heatmap_score`,
  :class:`GradCAM`: Attention-IoU for vision models (Serianni et al.; the
  GradCAM features need ``biasamp[torch]``), with :func:`matthews_corrcoef`
  and :func:`subsample_to_mcc`;
* :class:`CooccurrenceAccumulator`, :class:`FairnessAccumulator`,
  :class:`MultiAttributeAccumulator`: streaming ``update``/``merge``/
  ``compute``, and ``sync`` over ``torch.distributed`` ranks; Dask inputs
  through :mod:`biasamp.dask` (the ``[dask]`` extra);
* :func:`fairness_metrics` and one function per metric: DP, DI, SPSF, FPSF,
  EOFP, EOTP, BA (Qian et al. 2021), on :class:`ConfusionCounts`;
* :func:`confidence_interval`, :func:`bootstrap` (multinomial resampling of
  the count tables), :func:`compare_runs`, :func:`run_summary`: statistics
  across training runs and samples.
"""

# The public names are loaded on first use (PEP 562): ``import biasamp`` costs little more than numpy
# and pandas, and scikit-learn, scipy.stats and matplotlib are imported by the features that use them.
# ``biasamp.<name>`` and ``from biasamp import <name>`` work as with eager imports.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._core.version import __version__

#: module of every public name
_MODULE_OF = {
    **dict.fromkeys([
        "BiasampWarning", "SmallGroupWarning", "UndefinedPairWarning",
    ], "biasamp.exceptions"),
    **dict.fromkeys([
        "DFBiasAmpResult", "df_bias_amplification", "df_from_counts",
    ], "biasamp.differential"),
    **dict.fromkeys([
        "METRICS", "ConfusionCounts", "FairnessResult", "FairnessSettings", "GroupMetrics",
        "demographic_parity", "equalized_odds_false_positive", "equalized_odds_true_positive",
        "fairness_from_counts", "fairness_metrics", "false_positive_subgroup_fairness",
        "group_bias_amplification", "normalized_disparate_impact",
        "statistical_parity_subgroup_fairness",
    ], "biasamp.fairness"),
    **dict.fromkeys([
        "CooccurrenceAccumulator", "DifferentialAccumulator", "FairnessAccumulator",
        "MultiAttributeAccumulator",
    ], "biasamp.accumulators"),
    **dict.fromkeys([
        "AuditConfig", "Report", "audit",
    ], "biasamp.report"),
    **dict.fromkeys([
        "AttentionScoreResult", "GradCAM", "SubsampleResult", "attention_iou",
        "attention_score_summary", "gradcam", "heatmap_score", "mask_score", "matthews_corrcoef",
        "subsample_to_mcc", "summarize_attention_scores",
    ], "biasamp.attention"),
    **dict.fromkeys([
        "DPADirectionResult", "DPAResult", "LeakageResult", "TabularAttacker", "dpa",
        "leakage_amplification",
    ], "biasamp.predictability"),
    **dict.fromkeys([
        "MultiAttributeCounts", "MultiBiasAmpResult", "MultiMetricResult", "multi_bias_amp",
        "multi_from_counts",
    ], "biasamp.multiattribute"),
    **dict.fromkeys([
        "BootstrapResult", "CompareRunsResult", "RunSummary", "bootstrap", "cohens_d_label",
        "compare_runs", "confidence_interval", "run_summary",
    ], "biasamp.stats"),
    **dict.fromkeys([
        "CooccurrenceCounts",
    ], "biasamp.counts"),
    **dict.fromkeys([
        "ScanAccumulator", "ScanResult", "scan",
    ], "biasamp.subgroups"),
    **dict.fromkeys([
        "CurveResult", "checkpoint_curve", "threshold_curve",
    ], "biasamp.curves"),
    **dict.fromkeys([
        "DirectionResult", "DirectionalBiasAmpResult", "MALSResult", "bias_amp_directional",
        "bias_amp_mals", "directional_from_counts", "mals_from_counts",
    ], "biasamp.cooccurrence"),
    **dict.fromkeys([
        "Thresholds", "calibrate_thresholds",
    ], "biasamp.calibration"),
    **dict.fromkeys([
        "CaptionGenderStats", "DBACDirectionResult", "DBACResult", "LICResult",
        "caption_gender_stats", "caption_labels", "dbac", "lic",
    ], "biasamp.captioning"),
}

__all__ = ["__version__", *_MODULE_OF]



def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'biasamp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # type checkers and IDEs see the names as if imported eagerly

    from .accumulators import (
        CooccurrenceAccumulator,
        DifferentialAccumulator,
        FairnessAccumulator,
        MultiAttributeAccumulator,
    )
    from .attention import (
        AttentionScoreResult,
        GradCAM,
        SubsampleResult,
        attention_iou,
        attention_score_summary,
        gradcam,
        heatmap_score,
        mask_score,
        matthews_corrcoef,
        subsample_to_mcc,
        summarize_attention_scores,
    )
    from .calibration import (
        Thresholds,
        calibrate_thresholds,
    )
    from .captioning import (
        CaptionGenderStats,
        DBACDirectionResult,
        DBACResult,
        LICResult,
        caption_gender_stats,
        caption_labels,
        dbac,
        lic,
    )
    from .cooccurrence import (
        DirectionalBiasAmpResult,
        DirectionResult,
        MALSResult,
        bias_amp_directional,
        bias_amp_mals,
        directional_from_counts,
        mals_from_counts,
    )
    from .counts import (
        CooccurrenceCounts,
    )
    from .curves import (
        CurveResult,
        checkpoint_curve,
        threshold_curve,
    )
    from .differential import (
        DFBiasAmpResult,
        df_bias_amplification,
        df_from_counts,
    )
    from .exceptions import (
        BiasampWarning,
        SmallGroupWarning,
        UndefinedPairWarning,
    )
    from .fairness import (
        METRICS,
        ConfusionCounts,
        FairnessResult,
        FairnessSettings,
        GroupMetrics,
        demographic_parity,
        equalized_odds_false_positive,
        equalized_odds_true_positive,
        fairness_from_counts,
        fairness_metrics,
        false_positive_subgroup_fairness,
        group_bias_amplification,
        normalized_disparate_impact,
        statistical_parity_subgroup_fairness,
    )
    from .multiattribute import (
        MultiAttributeCounts,
        MultiBiasAmpResult,
        MultiMetricResult,
        multi_bias_amp,
        multi_from_counts,
    )
    from .predictability import (
        DPADirectionResult,
        DPAResult,
        LeakageResult,
        TabularAttacker,
        dpa,
        leakage_amplification,
    )
    from .report import (
        AuditConfig,
        Report,
        audit,
    )
    from .stats import (
        BootstrapResult,
        CompareRunsResult,
        RunSummary,
        bootstrap,
        cohens_d_label,
        compare_runs,
        confidence_interval,
        run_summary,
    )
    from .subgroups import (
        ScanAccumulator,
        ScanResult,
        scan,
    )
