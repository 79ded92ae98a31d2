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

from biasamp._families import REGISTRY

__all__ = ["SCORER_NAMES", "make_scorer"]


# --------------------------------------------------------------------------- #
# one score function for every registered statistic that declares a scorer
# --------------------------------------------------------------------------- #
def statistic_score(y_true: Any, y_pred: Any, *, statistic: str, **metadata_and_options: Any) -> float:
    """``statistic`` of its family's function, with ``y_true``/``y_pred`` in the roles its scorer declares.

    The metadata the scorer requests (``sensitive_features``, ``attr`` or
    ``task``) fills the remaining label role; every other keyword is an
    option of the family's function and reaches it unchanged.
    """
    family, spec = REGISTRY.scorer(statistic)
    scorer = spec.scorer
    assert scorer is not None  # REGISTRY.scorer finds only statistics that have a scorer
    options = dict(metadata_and_options)
    if scorer.request not in options:
        raise TypeError(f"the {scorer.name} scorer needs the metadata {scorer.request!r} (see biasamp.sklearn)")
    for option, other in scorer.switches.items():  # e.g. raw=True reads the signed value
        if options.pop(option, False):
            spec = family.statistic(other)
    roles = {scorer.target: y_true, f"{scorer.target}_pred": y_pred, scorer.metadata: options.pop(scorer.request)}
    args, kwargs = family.call(roles, {**scorer.options, **options})
    return spec.read(family.function(*args, **kwargs))[0]


SCORER_NAMES: tuple[str, ...] = REGISTRY.scorer_names
"""The metric names :func:`make_scorer` accepts (arrows may be written ``->`` or ``→``)."""


def _resolve(metric: Any) -> tuple[str, str]:
    """(canonical scorer name, metadata it requests) of a biasamp metric name or function."""
    if isinstance(metric, str):
        _, spec = REGISTRY.scorer(metric)
    else:
        family = REGISTRY.get(metric)
        assert family is not None  # a biasamp function (checked by the caller)
        spec = next(s for s in family.statistics_of(metric) if s.scorer is not None)
    scorer = spec.scorer
    assert scorer is not None  # REGISTRY.scorer finds only statistics that have a scorer
    return scorer.name, scorer.request


def _is_biasamp_metric(metric: Any) -> bool:
    family = REGISTRY.get(metric)
    return family is not None and any(s.scorer is not None for s in family.statistics_of(metric))


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
    if isinstance(metric, str) or _is_biasamp_metric(metric):
        name, request = _resolve(metric)
        score = statistic_score
        requests = [request]
        kwargs = {"statistic": name, **kwargs}
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
        scorer.set_score_request(**dict.fromkeys(requests, True))
    return scorer
