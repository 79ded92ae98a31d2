"""``biasamp.scan``: where a model amplifies, with intervals adjusted for the selection over every subgroup."""

from __future__ import annotations

from typing import Any

from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT
from biasamp.subgroups._accumulator import ScanAccumulator, find_classes, n_rows, statistic_of
from biasamp.subgroups._levels import FeatureLevels, feature_frame, levels_of
from biasamp.subgroups._result import ScanResult

__all__ = ["feature_levels", "scan"]


def feature_levels(features: Any) -> tuple[FeatureLevels, ...]:
    """The levels of every column of ``features`` by the scan's rule (docs/scan.md, "Features").

    Categorical, string and boolean columns keep their values; numeric
    columns with at most 10 distinct values keep them, others are cut at
    their quartiles; missing values are a level ``"missing"``. Give the result
    to :class:`biasamp.ScanAccumulator` (or :func:`biasamp.scan`'s ``levels``) so
    that every batch is read alike.

    Parameters
    ----------
    features : pandas.DataFrame or DataFrame-like
        The columns to scan.

    Returns
    -------
    tuple of FeatureLevels

    Examples
    --------
    >>> import pandas as pd
    >>> from biasamp.subgroups import feature_levels
    >>> (age,) = feature_levels(pd.DataFrame({"age": range(20, 60)}))
    >>> age.condition(0)
    'age in [20, 29.75)'
    """
    frame = feature_frame(features)
    return tuple(levels_of(str(name), frame[name]) for name in frame.columns)


def scan(attr: Any, task: Any, *, features: Any, attr_pred: Any = None, task_pred: Any = None,
         attr_train: Any = None, task_train: Any = None, statistic: str = "A->T", max_order: int = 2,
         min_group_size: float = 100, level: float = DEFAULT_LEVEL, n_boot: int = DEFAULT_N_BOOT,
         random_state: Any = None,
         sample_weight: Any = None, train_sample_weight: Any = None, levels: Any = None,
         min_class_size: int | None = None, **options: Any) -> ScanResult:
    """Where a statistic lives: every subgroup of up to ``max_order`` conditions, with selection-adjusted intervals.

    Every subpopulation defined by up to ``max_order`` conditions
    ``feature = value`` on the columns of ``features`` (numeric columns with
    more than 10 distinct values cut at their quartiles, missing values a level
    of their own: :func:`~biasamp.subgroups.feature_levels`) with at least ``min_group_size`` rows
    (weighted) gets the statistic, an interval and a p-value **adjusted for the
    selection over every subgroup scanned**: a simultaneous max-t band from one
    grouped bootstrap of all the subgroups at once, so that, with probability
    at least ``level``, every subgroup's interval holds its value (family-wise
    error at most ``1 - level``; measured in docs/scan.md). The unadjusted
    interval of each subgroup alone is given beside it, named as such.

    One counting pass: the rows are counted once by the family's streaming
    hooks, each row's table going to its cell of features and its bootstrap
    group; a subgroup's statistic is the family's plan of the whole population
    evaluated on the subgroup's table (signs, indicators and combinations stay
    the population's: a training set's, or without one the cross-fitted fold
    signs of the whole test set; docs/scan.md).

    Parameters
    ----------
    attr, task : array-like
        Protected attribute and task labels of the test rows (group fairness
        and differential fairness: the groups and ``y_true``), as the family's
        function takes them.
    features : pandas.DataFrame or DataFrame-like
        One row per test row: the columns whose values define the subgroups.
    attr_pred, task_pred : array-like, optional
        Predictions (the statistic's family says which it needs).
    attr_train, task_train : array-like, optional
        Training ground truth (families that read one; the others ignore it).
    statistic : str, default "A->T"
        Any registered count statistic: ``"A->T"``, ``"T->A"``, ``"MALS"``,
        ``"Multi_MALS"``, ``"G->M"``, ``"M->G"`` (and their ``raw`` forms),
        ``"DP"``, ``"DI"``, ``"SPSF"``, ``"FPSF"``, ``"EOFP"``, ``"EOTP"``,
        ``"BA"``, ``"DF amplification"``, ``"epsilon_true"``,
        ``"epsilon_pred"``.
    max_order : int, default 2
        Conditions per subgroup at most.
    min_group_size : float, default 100
        Rows (weighted) a subgroup needs to be scanned.
    level : float, default 0.95
        Simultaneous coverage of the adjusted intervals.
    n_boot : int, default 1000
        Bootstrap replicates (at least 20).
    random_state : int, numpy Generator or None
        Seed of the bootstrap.
    sample_weight, train_sample_weight : array-like, optional
        Weights of the test and training rows.
    levels : sequence of FeatureLevels, optional
        The features' levels (default: :func:`~biasamp.subgroups.feature_levels` of
        ``features``).
    min_class_size : int, optional
        The family's own small-group rule (its ``min_group_size``: attribute
        classes or groups with fewer test rows are left out of the value),
        applied on the whole population; default the family's (30).
    **options
        The family's options (``threshold``, ``soft``, ``cross_fit``,
        ``cross_fit_random_state``, ``include_small_groups``, ``metrics``,
        ``concentration``, ...).

    Returns
    -------
    ScanResult

    Raises
    ------
    ValueError
        An unknown statistic, a missing prediction it needs, features whose
        rows do not match the labels, or a statistic undefined on every row.

    Notes
    -----
    For subgroup :math:`s` with estimate :math:`\\hat\\theta_s`, standard
    error :math:`\\widehat{SE}_s` (the delete-one-group jackknife's),
    bootstrap replicates :math:`\\theta^*_{sb}` (the same grouped draws for
    every subgroup) and the replicate's own standard error
    :math:`\\widehat{SE}^*_{sb}` (the same jackknife on its rows, linearised),

    .. math::

        T_b = \\max_s \\frac{|\\theta^*_{sb} - \\hat\\theta_s|}{\\widehat{SE}^*_{sb}}, \\qquad
        \\hat\\theta_s \\pm c\\,\\widehat{SE}_s, \\qquad
        p_s = \\frac{1}{B}\\#\\{b : T_b \\ge |\\hat\\theta_s| / \\widehat{SE}_s\\},

    with :math:`c` the ``ceil(level·B)``-th smallest :math:`T_b`, the
    interval clipped to the statistic's range (a bootstrap-t: studentising
    every replicate by its own standard error keeps the family-wise error
    at ``1 - level`` where small subgroups' standard errors are noisy). A statistic built from maxima
    or absolute values (DP, EOTP, Multi_MALS, ...) takes the max over its
    signed parts instead (its group-rate differences, its per-combination
    Δ), and its interval is derived from their band, as in
    :func:`biasamp.bootstrap`. A subgroup whose statistic is undefined, or
    constant over the replicates, is flagged with a reason and left out of the
    maximum. docs/scan.md gives the measured family-wise error and power.

    References
    ----------
    .. [1] J. Cherian, E. Candès. "Statistical inference for fairness
       auditing". 2023 (simultaneous bounds over subgroups).
    .. [2] K. Lum, Y. Zhang, A. Bower. "De-biasing 'bias' measurement". FAccT
       2022 (the largest of many subgroup estimates is biased upward).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import biasamp
    >>> rng = np.random.default_rng(0)
    >>> n = 4000
    >>> feats = pd.DataFrame({"region": rng.choice(["n", "s"], n), "age": rng.choice(["young", "old"], n)})
    >>> a = rng.integers(0, 2, n)
    >>> t = (rng.random(n) < np.where(a == 1, 0.6, 0.4)).astype(int)
    >>> t_hat = t.copy()
    >>> planted = ((feats.region == "s") & (feats.age == "old")).to_numpy()
    >>> t_hat[planted & (a == 1) & (rng.random(n) < 0.4)] = 1  # amplifies there: more T for a=1 ...
    >>> t_hat[planted & (a == 0) & (rng.random(n) < 0.4)] = 0  # ... less for a=0
    >>> res = biasamp.scan(a, t, task_pred=t_hat, features=feats, random_state=0, n_boot=200)
    >>> res.top(1).rule[0]
    'region = s & age = old'
    >>> bool(res.top(1).flagged[0])
    True
    """
    fam, spec = statistic_of(statistic)
    roles = {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred,
             "attr_train": attr_train, "task_train": task_train, "sample_weight": sample_weight}
    missing = [r for r in spec.needs if roles.get(r) is None]
    if missing:
        raise ValueError(f"statistic {statistic!r} needs {' and '.join(missing)}")
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    frame = feature_frame(features)
    n = len(frame)
    for r in ("attr", "task", "attr_pred", "task_pred", "sample_weight"):
        if roles[r] is not None and n_rows(r, roles[r]) != n:
            raise ValueError(f"{r} has {len(roles[r])} rows, features has {n}: one row of features per test row")
    levels = feature_levels(frame) if levels is None else tuple(levels)
    if min_class_size is not None:
        options["min_group_size"] = min_class_size
    train = attr_train is not None and fam.stream is not None and fam.stream.count_train is not None
    acc = ScanAccumulator(statistic, find_classes(fam, roles), levels, max_order=max_order, n_boot=n_boot,
                          random_state=random_state, train=train, **options)
    train_roles = {"attr_train": attr_train, "task_train": task_train, "train_sample_weight": train_sample_weight}
    if acc.phase == "collect":  # the family's pre-pass (multi-attribute: its combinations), training rows first
        test_roles = {r: roles[r] for r in ("attr", "task", "attr_pred", "task_pred", "sample_weight")}
        acc.prepass(train_roles if attr_train is not None else test_roles)
        acc.end_prepass()
    if train:
        acc.update_train(train_roles)
    acc.update(frame, {r: roles[r] for r in ("attr", "task", "attr_pred", "task_pred", "sample_weight")})
    return acc.result(level=level, min_group_size=min_group_size)


