"""scikit-learn scorers: select models by bias amplification or group fairness.

:func:`make_scorer` turns a biasamp metric into a scikit-learn scorer for
``GridSearchCV``, ``RandomizedSearchCV``, ``cross_validate`` and every other
``scoring=`` argument. The protected attribute is not a feature or the target,
so it reaches the scorer as *metadata*, through scikit-learn's metadata routing
(scikit-learn >= 1.4): it is passed to ``fit`` (``search.fit(X, y,
sensitive_features=s)``) or in ``params=`` (``cross_validate``), split along
the same folds as ``X`` and ``y``, and handed to the scorers that request it
(``set_score_request``).

Which metadata a metric needs depends on what the estimator predicts:

======================  ====================  =============================
metric                  the estimator         metadata the scorer requests
                        predicts ``y`` =
======================  ====================  =============================
"DP" "DI" "SPSF"        the target            ``sensitive_features``
"FPSF" "EOFP" "EOTP"                          (the groups)
"BA"
"BiasAmp A->T"          the task T            ``attr`` (the protected
"Multi G->M"                                  attribute A)
"BiasAmp T->A"          the attribute A       ``task`` (the task labels T)
"Multi M->G"
======================  ====================  =============================

Every biasamp metric measures a bias, so a smaller value is better: the scorers
are made with ``greater_is_better=False`` and return the *negated* value
(scikit-learn maximises scores), and ``rank_test_<name> == 1`` is the
candidate with the smallest bias. Fold-level amplification uses the fold's
test ground truth for the training statistics (``train_source="test"``),
unless fixed ``attr_train=`` / ``task_train=`` are given to
:func:`make_scorer`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from .cooccurrence import bias_amp_directional
from .fairness import (
    METRICS,
    demographic_parity,
    equalized_odds_false_positive,
    equalized_odds_true_positive,
    fairness_metrics,
    false_positive_subgroup_fairness,
    group_bias_amplification,
    normalized_disparate_impact,
    statistical_parity_subgroup_fairness,
)
from .multiattribute import multi_bias_amp

__all__ = ["SCORER_NAMES", "make_scorer"]


# --------------------------------------------------------------------------- #
# score functions: score(y_true, y_pred, *, <metadata>, **options) -> float
# --------------------------------------------------------------------------- #
def fairness_score(y_true: Any, y_pred: Any, *, sensitive_features: Any, metric: str) -> float:
    """One group fairness metric (overall value) of :func:`~biasamp.fairness_metrics`."""
    return float(fairness_metrics(y_true, y_pred, sensitive_features=sensitive_features, metrics=[metric])
                 .overall[metric])


def bias_amp_a_to_t_score(y_true: Any, y_pred: Any, *, attr: Any, **options: Any) -> float:
    """BiasAmp→ A→T with ``y`` = the task T: ``bias_amp_directional(attr, y_true, task_pred=y_pred).a_to_t``."""
    return float(bias_amp_directional(attr, y_true, task_pred=y_pred, **options).a_to_t.value)


def bias_amp_t_to_a_score(y_true: Any, y_pred: Any, *, task: Any, **options: Any) -> float:
    """BiasAmp→ T→A with ``y`` = the attribute A: ``bias_amp_directional(y_true, task, attr_pred=y_pred).t_to_a``."""
    return float(bias_amp_directional(y_true, task, attr_pred=y_pred, **options).t_to_a.value)


def multi_g_to_m_score(y_true: Any, y_pred: Any, *, attr: Any, raw: bool = False, **options: Any) -> float:
    """Multi→ G→M with ``y`` = the multi-label task: ``multi_bias_amp(attr, y_true, task_pred=y_pred).g_to_m``."""
    part = multi_bias_amp(attr, y_true, task_pred=y_pred, **options).g_to_m
    return float(part.raw if raw else part.value)


def multi_m_to_g_score(y_true: Any, y_pred: Any, *, task: Any, raw: bool = False, **options: Any) -> float:
    """Multi→ M→G with ``y`` = the attribute: ``multi_bias_amp(y_true, task, attr_pred=y_pred).m_to_g``."""
    part = multi_bias_amp(y_true, task, attr_pred=y_pred, **options).m_to_g
    return float(part.raw if raw else part.value)


# canonical name -> (score function, fixed options, the metadata it requests)
_REGISTRY: dict[str, tuple[Callable, dict, str]] = {
    **{m: (fairness_score, {"metric": m}, "sensitive_features") for m in METRICS},
    "BiasAmp A->T": (bias_amp_a_to_t_score, {}, "attr"),
    "BiasAmp T->A": (bias_amp_t_to_a_score, {}, "task"),
    "Multi G->M": (multi_g_to_m_score, {}, "attr"),
    "Multi M->G": (multi_m_to_g_score, {}, "task"),
}

SCORER_NAMES: tuple[str, ...] = tuple(_REGISTRY)
"""The metric names :func:`make_scorer` accepts (arrows may be written ``->`` or ``→``)."""

_FUNCTIONS = {
    demographic_parity: "DP", normalized_disparate_impact: "DI", statistical_parity_subgroup_fairness: "SPSF",
    false_positive_subgroup_fairness: "FPSF", equalized_odds_false_positive: "EOFP",
    equalized_odds_true_positive: "EOTP", group_bias_amplification: "BA",
    bias_amp_directional: "BiasAmp A->T", multi_bias_amp: "Multi G->M",
}


def _key(name: str) -> str:
    return re.sub(r"[\s_]+", "", name.replace("→", "->")).lower()


_ALIASES: dict[str, str] = {}
for _name in SCORER_NAMES:
    _ALIASES[_key(_name)] = _name
for _fn, _name in _FUNCTIONS.items():
    if _name in METRICS:
        _ALIASES[_key(_fn.__name__)] = _name
for _name, _alias in (("BiasAmp A->T", "BiasAmp-> A->T"), ("BiasAmp T->A", "BiasAmp-> T->A"),
                      ("Multi G->M", "Multi-> G->M"), ("Multi M->G", "Multi-> M->G")):
    _ALIASES[_key(_alias)] = _name
del _name, _fn, _alias


def _resolve(metric: Any) -> tuple[str, Callable, dict, str]:
    """(name, score function, fixed options, metadata) of a biasamp metric name or function."""
    if isinstance(metric, str):
        name = _ALIASES.get(_key(metric))
        if name is None:
            raise ValueError(f"unknown metric {metric!r}; biasamp scorers: {', '.join(map(repr, SCORER_NAMES))} "
                             "(or pass a function)")
    else:
        name = next(n for f, n in _FUNCTIONS.items() if f is metric)
    return (name, *_REGISTRY[name])


def _sklearn_version() -> tuple[int, int]:
    import sklearn

    major, minor = (int(x) for x in re.findall(r"\d+", sklearn.__version__)[:2])
    return major, minor


def make_scorer(
    metric: str | Callable,
    *,
    greater_is_better: bool | None = None,
    response_method: str | list | tuple = "predict",
    **kwargs: Any,
) -> Callable:
    r"""A scikit-learn scorer for a biasamp metric, with the protected attribute routed as metadata.

    Parameters
    ----------
    metric : str or callable
        A name in :data:`SCORER_NAMES`: the group fairness metrics ``"DP"``,
        ``"DI"``, ``"SPSF"``, ``"FPSF"``, ``"EOFP"``, ``"EOTP"``, ``"BA"``;
        directional bias amplification ``"BiasAmp A->T"`` / ``"BiasAmp
        T->A"``; multi-attribute ``"Multi G->M"`` / ``"Multi M->G"``
        (``→`` for ``->``, case and spacing free). Or a biasamp function
        (``biasamp.demographic_parity``, ...; ``biasamp.bias_amp_directional``
        means A→T), or any ``score(y_true, y_pred, **kw) -> float`` (then say
        ``greater_is_better``); its keyword parameters without a default are
        the metadata it requests.
    greater_is_better : bool, optional
        Default for biasamp metrics: False (a smaller bias is better; the
        scorer returns the negated value, as scikit-learn does for losses).
        Required for other callables.
    response_method : str or list of str, default "predict"
        The estimator's method whose output is ``y_pred`` (biasamp metrics
        also take probabilities, as expected counts).
    **kwargs
        Fixed options of the metric, e.g. ``attr_train=`` / ``task_train=``
        (training statistics of BiasAmp→), ``combinations=``,
        ``min_support=`` or ``raw=True`` (Multi→).

    Returns
    -------
    scorer : callable
        A scikit-learn scorer, ``scorer(estimator, X, y, **metadata)``. It
        requests its metadata (``sensitive_features``, ``attr`` or ``task``,
        see the table in :mod:`biasamp.sklearn`) when metadata routing is
        enabled at the time it is made; otherwise call
        ``scorer.set_score_request(sensitive_features=True)`` (or an alias,
        e.g. ``set_score_request(attr="sensitive_features")`` to feed one
        column to fairness and amplification scorers) after enabling it.

    Raises
    ------
    ValueError
        An unknown metric name.
    TypeError
        A callable that is not a biasamp function without
        ``greater_is_better``, or a non-bool ``greater_is_better``.
    ImportError
        scikit-learn older than 1.4 (no metadata routing in model selection).

    See Also
    --------
    sklearn.metrics.make_scorer : the scikit-learn factory this wraps.
    biasamp.bias_amp_directional, biasamp.fairness_metrics : the metrics.

    Notes
    -----
    With ``greater_is_better=False`` the cross-validation scores are
    :math:`-\text{metric}`: ``cv_results_["mean_test_<name>"]`` is minus the
    mean over folds, and rank 1 is the least biased candidate.

    Examples
    --------
    >>> import numpy as np, sklearn
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_validate
    >>> from biasamp.sklearn import make_scorer
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, 1000)
    >>> X = np.column_stack([rng.normal(size=1000), group])
    >>> y = (0.5 * X[:, 0] + group + rng.normal(size=1000) > 1).astype(int)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     scoring = {"acc": "accuracy", "biasamp": make_scorer("BiasAmp A->T")}
    ...     cv = cross_validate(LogisticRegression(), X, y, scoring=scoring, params={"attr": group})
    >>> bool(np.all(cv["test_biasamp"] < 0))  # the negated BiasAmp A->T: the model amplifies
    True
    """
    if _sklearn_version() < (1, 4):
        raise ImportError("biasamp.sklearn needs scikit-learn >= 1.4 (metadata routing in model selection)")
    import sklearn
    from sklearn.metrics import make_scorer as sk_make_scorer

    if greater_is_better is not None and not isinstance(greater_is_better, bool):
        raise TypeError(f"greater_is_better must be a bool or None, got {type(greater_is_better).__name__}")
    if isinstance(metric, str) or any(metric is f for f in _FUNCTIONS):
        _, score, options, request = _resolve(metric)
        requests = [request]
        kwargs = {**options, **kwargs}
        if greater_is_better is None:
            greater_is_better = False
    elif callable(metric):
        if greater_is_better is None:
            raise TypeError(
                f"{getattr(metric, '__name__', metric)!r} is not a biasamp metric: say greater_is_better=True "
                "(a score) or False (a loss or a bias)"
            )
        score = metric
        params = list(inspect.signature(metric).parameters.values())[2:]
        requests = [p.name for p in params if p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in kwargs]
    else:
        raise TypeError(f"metric must be a metric name or a callable, got {type(metric).__name__}")
    scorer = sk_make_scorer(score, response_method=response_method, greater_is_better=greater_is_better, **kwargs)
    if requests and sklearn.get_config().get("enable_metadata_routing", False):
        scorer.set_score_request(**{name: True for name in requests})
    return scorer
