"""Co-occurrence bias amplification: BiasAmp_MALS and directional BiasAmp→.

Both metrics are pure functions of :class:`~biasamp.counts.CooccurrenceCounts`
tables (:func:`mals_from_counts`, :func:`directional_from_counts`); the
label-level functions :func:`bias_amp_mals` and :func:`bias_amp_directional`
encode and count their inputs in one vectorized pass (:func:`mals_count`,
:func:`directional_count`: the families' ``count`` hooks, which the
bootstrap drives as well) and call them (:func:`mals_compute`,
:func:`directional_compute`).

References
----------
.. [1] J. Zhao, T. Wang, M. Yatskar, V. Ordonez, K.-W. Chang. "Men Also Like
   Shopping: Reducing Gender Bias Amplification using Corpus-level
   Constraints". EMNLP 2017.
.. [2] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021,
   Eq. 1 and Eq. 2.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.crossfit import check_cross_fit, crossfit_folds, describe, fold_weights, splits_and_fold_counts
from biasamp._core.deprecation import old_positional_order
from biasamp._core.labels import LabelMatrix, check_consistent_length, encode_labels, read_task_roles
from biasamp._core.policy import (
    check_include_small_groups,
    check_min_group_size,
    harden_roles,
    joined,
    small_groups,
    warn_small_groups,
)
from biasamp._core.policy_options import DEFAULT_MIN_GROUP_SIZE, DEFAULT_THRESHOLD
from biasamp._core.results import ResultMixin, fmt, top_rows
from biasamp._core.rows import RowFilter, select_rows
from biasamp._core.typing import BinaryTask, Labels, Missing, Soft, Weights
from biasamp._engine.pair_terms import (
    _as_count,
    _direction_arrays,
    _mals_arrays,
    crossfit_mean,
    fold_keep,
    mals_crossfit_arrays,
    sign_of,
)
from biasamp._engine.train_test_rows import _rows_lines, select_train_test, take_rows
from biasamp._engine.undefined import _all_undefined_error, _warn_undefined, _warn_undefined_statistics
from biasamp.cooccurrence._counts import CooccurrenceCounts
from biasamp.cooccurrence._options import DirectionalOptions, MALSOptions

__all__ = [
    "DirectionResult",
    "DirectionalBiasAmpResult",
    "MALSResult",
    "bias_amp_directional",
    "bias_amp_mals",
    "directional_from_counts",
    "mals_from_counts",
]


# --------------------------------------------------------------------------- #
# results
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False, repr=False)
class DirectionResult(ResultMixin):
    r"""BiasAmp→ in one direction.

    Attributes
    ----------
    direction : {"A->T", "T->A"}
    value : float
        Mean of ``y_at * Δ_at`` over the defined (attribute, task) pairs.
    pairs : pandas.DataFrame
        One row per pair: ``attr, task, y, p_true, p_pred, delta,
        contribution (= y * delta), n_attr, n_task, n_both, undefined``.
        ``p_true``/``p_pred`` are ``P(T_t|A_a)``/``P(T̂_t|A_a)`` for A→T and
        ``P(A_a|T_t)``/``P(Â_a|T_t)`` for T→A; ``n_*`` are test supports.
    n_pairs : int
        Number of defined pairs averaged over.
    n_undefined : int
        Number of pairs left out because their conditional was undefined.
    undefined : bool
        True when *every* pair is undefined: the direction itself is then
        undefined, ``value`` is NaN and ``reason`` says why
        (:ref:`def-undefined`); the other direction of the call is still
        returned.
    reason : str or None
        Why the direction is undefined (``None`` when it is defined).

    Notes
    -----
    .. math::

        \text{value} = \frac{1}{|D|}\sum_{(a,t) \in D} y_{at}\,\Delta_{at}

    over the set D of defined pairs, with :math:`y_{at}` the exact sign of the
    training correlation and :math:`\Delta_{at}` the change of the
    conditional rate from ground truth to prediction (:ref:`def-directional`).
    ``to_frame()`` is ``pairs``: the mean of its ``contribution`` column over
    the rows not flagged ``undefined`` is ``value``.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.

    Examples
    --------
    The "shortcoming 2" example of Wang & Russakovsky (§3.2):

    >>> import numpy as np
    >>> from biasamp import bias_amp_directional
    >>> attr = np.repeat([1, 2], [90, 30])
    >>> task = np.concatenate([np.repeat([0, 1], [60, 30]), np.repeat([0, 1], [10, 20])])
    >>> res = bias_amp_directional(attr, task, task_pred=(attr == 2).astype(int), attr_pred=attr)
    >>> res.a_to_t  # the binary task's positive class, with each group
    BiasAmp A->T = +0.3333 (2 pairs)
    >>> res.a_to_t.top(1)[["attr", "task", "y", "delta"]]
      attr task  y     delta
    0    1    1 -1 -0.333333
    """

    direction: str
    value: float
    pairs: pd.DataFrame
    n_pairs: int
    n_undefined: int
    undefined: bool = False
    reason: str | None = None
    n_small: int = 0

    def top(self, k: int = 10) -> pd.DataFrame:
        """The ``k`` defined pairs with the largest ``|y * Δ|``."""
        return top_rows(self.pairs, "contribution", k)

    def __repr__(self) -> str:
        if self.undefined:
            return f"BiasAmp {self.direction} = undefined: {self.reason}"
        extra = f", {self.n_undefined} undefined" if self.n_undefined else ""
        extra += f", {self.n_small} of small groups left out" if self.n_small else ""
        return f"BiasAmp {self.direction} = {fmt(self.value)} ({self.n_pairs} pairs{extra})"


@dataclass(frozen=True, eq=False, repr=False)
class DirectionalBiasAmpResult(ResultMixin):
    r"""Result of :func:`bias_amp_directional`.

    Attributes
    ----------
    a_to_t, t_to_a : DirectionResult or None
        The two directions; ``None`` where the needed predictions were not given.
    train_source : {"train", "test"}
        Where the correlation signs ``y_at`` came from: the training ground
        truth, or the test ground truth when no training set was given.
    rows : RowFilter or None
        What happened to the test rows before counting: the ``missing=``
        choice and how many rows were given, dropped, grouped or had weight
        0 (``None`` for counts built by hand).
    train_rows : RowFilter or None
        The same for the training rows (``None`` without a training set).
    weighted : bool
        Whether ``sample_weight`` (or ``train_sample_weight``) was given:
        every count is then a sum of weights.
    predictions : str
        What the probability policy did to the predictions (``"hard"`` when
        they were labels).
    small_groups : tuple
        Attribute classes left out of the means (fewer than
        ``min_group_size`` test members).
    cross_fit : bool
        Whether the signs were cross-fitted over two folds of the test rows
        (no training set, ``cross_fit`` None or True; docs/definitions.md,
        "No training set"). The per-pair tables then add the folds' signs
        ``y_fold0`` and ``y_fold1`` (``y``, ``p_true``, ``p_pred`` and
        ``delta`` stay those of every row), and ``contribution`` is the mean
        of the two ways, ``y_fold0`` times Δ on fold 1 and ``y_fold1`` times Δ
        on fold 0 (one way where the other fold has no member of the
        conditioning event).
    binary_task : str or None
        How a binary task was read (:ref:`def-binary-task`): ``"positive class
        1"`` (its positive class alone, the default) or ``"both classes 0, 1"``
        (``binary_task="both"``, the one-hot reading); None when the task is
        not binary (every class is read).

    Notes
    -----
    There is no single ``value``: BiasAmp→ is directional, and the two
    directions measure different things (A→T: the attribute drives the task
    predictions; T→A: the task drives the attribute predictions), so each has
    its own ``.value``,

    .. math::

        \text{BiasAmp}_{\rightarrow} = \frac{1}{|D|}\sum_{(a,t) \in D} y_{at}\,\Delta_{at}

    over the defined pairs D of that direction (:ref:`def-directional`).
    ``to_frame()`` stacks both per-pair tables.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import bias_amp_directional
    >>> attr = np.repeat([1, 2], [90, 30])
    >>> task = np.concatenate([np.repeat([0, 1], [60, 30]), np.repeat([0, 1], [10, 20])])
    >>> res = bias_amp_directional(attr, task, task_pred=(attr == 2).astype(int), attr_pred=attr)
    >>> round(res.a_to_t.value, 4), res.t_to_a.value, res.train_source
    (0.3333, 0.0, 'test')
    >>> res.to_frame().groupby("direction")["contribution"].mean().round(4).to_dict()
    {'A->T': 0.3333, 'T->A': 0.0}
    """

    a_to_t: DirectionResult | None
    t_to_a: DirectionResult | None
    train_source: str
    rows: RowFilter | None = None
    train_rows: RowFilter | None = None
    weighted: bool = False
    predictions: str = "hard"
    small_groups: tuple = ()  # attribute classes left out of the means (fewer than min_group_size test members)
    cross_fit: bool = False
    binary_task: str | None = None

    @property
    def undefined_reasons(self) -> dict:
        """Directions undefined for every pair, with the reason (``{"T->A": "..."}``)."""
        return {d.direction: d.reason for d in (self.a_to_t, self.t_to_a) if d is not None and d.undefined}

    def to_frame(self) -> pd.DataFrame:
        """Both directions' per-pair tables stacked, with a ``direction`` column.

        ``frame.attrs["undefined_reasons"]`` names the directions that are
        undefined (all their rows are flagged ``undefined``).
        """
        parts = [d.pairs.assign(direction=d.direction) for d in (self.a_to_t, self.t_to_a) if d is not None]
        frame = pd.concat(parts, ignore_index=True)
        frame.attrs["undefined_reasons"] = self.undefined_reasons
        return frame

    def __repr__(self) -> str:
        lines = ["DirectionalBiasAmpResult("]
        for d in (self.a_to_t, self.t_to_a):
            if d is not None:
                lines.append(f"  {d!r},")
        lines += _rows_lines(self.rows, self.train_rows, self.weighted)
        if self.predictions != "hard":
            lines.append(f"  predictions: {self.predictions},")
        if self.binary_task is not None:
            lines.append(f"  binary task: {self.binary_task},")
        lines.append(f"  y_at from: {self.train_source} ground truth"
                     + ("" if self.train_source == "train" else f", {describe(self.cross_fit, 'test')}") + ")")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False, repr=False)
class MALSResult(ResultMixin):
    r"""Result of :func:`bias_amp_mals`.

    Attributes
    ----------
    value : float
        BiasAmp_MALS (a fraction, not multiplied by 100).
    pairs : pandas.DataFrame
        One row per (attribute, task): ``attr, task, bias_train, bias_pred,
        indicator, delta (= bias_pred - bias_train), contribution
        (= indicator * delta), n_train, n_pred, undefined``.
    n_tasks : int
        ``|T|``: tasks with a defined ``bias_train`` (the denominator).
    n_undefined : int
        Pairs left out: those of tasks without a positive training instance,
        and indicator-1 pairs whose task is never predicted.
    undefined : bool
        Always False in a returned result: BiasAmp_MALS is the only statistic
        of its call, so a call where every pair is undefined raises
        ``ValueError`` (:ref:`def-undefined`).
    reason : str or None
        Why it would be undefined (``None``).
    rows, train_rows : RowFilter or None
        What happened to the prediction (test) rows and to the training rows
        before counting (``missing=``, rows dropped, grouped, zero weights).
    weighted : bool
        Whether sample weights were given.
    predictions : str
        What the probability policy did to the predictions.
    small_groups : tuple
        Attribute classes left out of the sum (fewer than ``min_group_size``
        predicted rows).
    cross_fit : bool
        Whether the indicator was cross-fitted over two folds of the rows
        (the training rows were the prediction rows, ``cross_fit=True``;
        docs/definitions.md, "No training set"). ``pairs`` then adds
        ``indicator_fold0`` and ``indicator_fold1``, and ``contribution`` is the
        mean of the ways ``indicator_fold0 · (b_pred − b_train)`` on fold 1 and
        ``indicator_fold1 · (b_pred − b_train)`` on fold 0.

    Notes
    -----
    .. math::

        \text{value} = \frac{1}{|\mathcal T|}\sum_{a,t}
        \mathbb 1\big[b_\text{train}(a,t) > 1/|\mathcal A|\big]
        \big(b_\text{pred}(a,t) - b_\text{train}(a,t)\big)

    (:ref:`def-mals`). ``to_frame()`` is ``pairs``: the sum of its
    ``contribution`` column divided by ``n_tasks`` is ``value``.

    References
    ----------
    .. [1] J. Zhao, T. Wang, M. Yatskar, V. Ordonez, K.-W. Chang. "Men Also Like
       Shopping: Reducing Gender Bias Amplification using Corpus-level
       Constraints". EMNLP 2017.
    .. [2] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 1.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import bias_amp_mals
    >>> attr = np.array([0, 0, 0, 0, 1, 0, 1])
    >>> task = np.array([[1], [1], [1], [1], [1], [0], [0]])
    >>> res = bias_amp_mals(attr, task, attr_pred=attr, task_pred=np.array([[1], [1], [1], [1], [0], [0], [0]]),
    ...                     attr_train=attr, task_train=task)
    >>> res
    BiasAmp_MALS = +0.2000 (1 task)
    >>> round(float(res.to_frame()["contribution"].sum() / res.n_tasks), 4)
    0.2
    """

    value: float
    pairs: pd.DataFrame
    n_tasks: int
    n_undefined: int
    undefined: bool = False
    reason: str | None = None
    rows: RowFilter | None = None
    train_rows: RowFilter | None = None
    weighted: bool = False
    predictions: str = "hard"
    small_groups: tuple = ()  # attribute classes left out of the sum (fewer than min_group_size)
    cross_fit: bool = False
    binary_task: str | None = None  # how a binary task was read (None: not binary), as DirectionalBiasAmpResult's

    def top(self, k: int = 10) -> pd.DataFrame:
        """The ``k`` defined pairs with the largest ``|contribution|``."""
        return top_rows(self.pairs, "contribution", k)

    def __repr__(self) -> str:
        if self.undefined:
            return f"BiasAmp_MALS = undefined: {self.reason}"
        extra = f", {self.n_undefined} undefined pairs" if self.n_undefined else ""
        extra += ", indicator cross-fitted (2 folds)" if self.cross_fit else ""
        extra += f"; predictions: {self.predictions}" if self.predictions != "hard" else ""
        extra += f", binary task: {self.binary_task}" if self.binary_task is not None else ""
        lines = [line.strip(" ,") for line in _rows_lines(self.rows, self.train_rows, self.weighted)]
        tail = "".join(f"; {line}" for line in lines)
        tasks = f"{self.n_tasks} task{'s' if self.n_tasks != 1 else ''}"
        return f"BiasAmp_MALS = {fmt(self.value)} ({tasks}{extra}{tail})"


# --------------------------------------------------------------------------- #
# pure functions of the count tables
# --------------------------------------------------------------------------- #
def _exact(counts: np.ndarray) -> np.ndarray:
    """Ground-truth counts as exact integers (they are sums of 0/1 values)."""
    return np.rint(counts).astype(np.int64)


def _pair_frame(attr_classes, task_classes, **columns: np.ndarray) -> pd.DataFrame:
    ka, kt = len(attr_classes), len(task_classes)
    index = {
        "attr": np.repeat(np.array(attr_classes, dtype=object), kt),
        "task": np.tile(np.array(task_classes, dtype=object), ka),
    }
    data = {k: np.broadcast_to(v, (ka, kt)).ravel() for k, v in columns.items()}
    return pd.DataFrame({**index, **data})


def correlation_sign(train: CooccurrenceCounts) -> np.ndarray:
    """``y_at = sign(P(a,t) − P(a)P(t))`` on the training ground truth, exactly.

    Computed in integers as ``sign(n·#(a,t) − #a·#t)`` so that exactly
    independent pairs get 0 (:ref:`def-directional`). Weighted counts that
    are not integers (non-integer ``sample_weight``) are compared in float64
    with a relative tolerance of 1e-12 (differences below it are 0).
    """
    return sign_of(train.n, train.cross("attr", "task"), train.total("attr"), train.total("task"))


def _direction_inputs(direction: str, gram: np.ndarray, ka: int, kt: int, roles: tuple):
    """``(both, support, predicted)`` of one direction from stacked Gram tables ``(..., 1+.., 1+..)``.

    ``roles`` = (attr_roles, task_roles) of the table layout.
    """
    a_roles, t_roles = roles
    a_pred = slice(1 + ka * a_roles.index("attr_pred"), 1 + ka * (a_roles.index("attr_pred") + 1)) \
        if "attr_pred" in a_roles else None
    t_pred = slice(1 + kt * t_roles.index("task_pred"), 1 + kt * (t_roles.index("task_pred") + 1)) \
        if "task_pred" in t_roles else None
    both = gram[..., 1:1 + ka, 1:1 + kt]
    if direction == "A->T":
        support = np.broadcast_to(gram[..., 1:1 + ka, 0:1], both.shape)
        predicted = gram[..., 1:1 + ka, t_pred]
    else:
        support = np.broadcast_to(gram[..., 0:1, 1:1 + kt], both.shape)
        predicted = gram[..., a_pred, 1:1 + kt]
    return both, support, predicted


def _mean_defined(values: np.ndarray, undefined: np.ndarray) -> np.ndarray:
    """Mean over the last two axes of the defined entries (NaN where none is defined)."""
    cnt = (~undefined).sum(axis=(-2, -1))
    total = np.where(undefined, 0.0, values).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, total / np.where(cnt > 0, cnt, 1), np.nan)


_DIRECTION_UNDEFINED = {
    "A->T": "no attribute class has a test member, so P(T_t | A_a) conditions on an empty event for every pair",
    "T->A": "no task has a positive test instance, so P(A_a | T_t) conditions on an empty event for every pair",
}


def _one_direction(direction: str, y: np.ndarray, test: CooccurrenceCounts, small: np.ndarray,
                   excluded: np.ndarray) -> DirectionResult:
    """One direction; the pairs of the ``excluded`` attribute classes (small groups) stay in the table, flagged
    ``small``, and out of the mean."""
    both, support, predicted = _direction_inputs(
        direction, test.gram, len(test.attr_classes), len(test.task_classes), (test.attr_roles, test.task_roles))
    p_true, p_pred, delta, contribution, undefined = _direction_arrays(y, both, support, predicted)
    return _direction_result(direction, test, both, contribution, undefined, small, excluded,
                             {"y": y, "p_true": p_true, "p_pred": p_pred, "delta": delta})


def _direction_result(direction: str, test: CooccurrenceCounts, both: np.ndarray, contribution: np.ndarray,
                      undefined: np.ndarray, small: np.ndarray, excluded: np.ndarray, columns: dict,
                      after: dict | None = None) -> DirectionResult:
    """The result of one direction from its per-pair ``contribution`` (y·Δ, plug-in or cross-fitted): the mean
    over the defined pairs of the groups kept in the headline, and the per-pair table (``columns``, the
    contribution, ``after``, the supports)."""
    n_undefined = int(undefined.sum())
    all_undefined = bool(undefined.size) and n_undefined == undefined.size
    reason = _DIRECTION_UNDEFINED[direction] if all_undefined else None
    _warn_undefined(n_undefined, undefined.size, f"BiasAmp {direction}")
    left_out = np.broadcast_to(excluded[:, None], undefined.shape) & ~undefined
    value = float(_mean_defined(contribution, undefined | left_out))
    pairs = _pair_frame(
        test.attr_classes, test.task_classes, **columns, contribution=contribution, **(after or {}),
        n_attr=_as_count(test.total("attr"))[:, None], n_task=_as_count(test.total("task"))[None, :],
        n_both=_as_count(both), small=np.broadcast_to(small[:, None], undefined.shape), undefined=undefined,
    )
    return DirectionResult(direction, value, pairs, int((~undefined & ~left_out).sum()), n_undefined, all_undefined,
                           reason, int(left_out.sum()))




def small_attr_groups(test: CooccurrenceCounts, min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                      include_small_groups: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(small, excluded)`` over the attribute classes, from their (weighted) test sizes."""
    return small_groups(test.total("attr"), check_min_group_size(min_group_size),
                        check_include_small_groups(include_small_groups))


def directional_from_counts(
    train: CooccurrenceCounts, test: CooccurrenceCounts, *, train_source: str = "train",
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    include_small_groups: bool = False,
) -> DirectionalBiasAmpResult:
    r"""Directional bias amplification from count tables.

    Parameters
    ----------
    train : CooccurrenceCounts
        Counts of the training ground truth (roles ``attr`` and ``task``).
    test : CooccurrenceCounts
        Counts of the test set: ground truth ``attr``, ``task`` and at least
        one of ``task_pred`` (for A→T) and ``attr_pred`` (for T→A).
    train_source : str, default "train"
        Recorded in the result (``"test"`` when ``train`` was built from the
        test ground truth).
    min_group_size, include_small_groups : int, bool
        Attribute classes with fewer (weighted) test members are small: their
        pairs stay in ``pairs`` (flagged ``small``) and out of the mean
        (:ref:`def-small-groups`).

    Returns
    -------
    DirectionalBiasAmpResult

    Raises
    ------
    ValueError
        A table without the roles a direction needs, tables with different
        classes, or every direction given undefined (every pair undefined).

    See Also
    --------
    bias_amp_directional : the same from labels.

    Notes
    -----
    A pure function of the counts: with :math:`n` rows, :math:`\#a`,
    :math:`\#t` and :math:`\#(a,t)` from ``train``,
    :math:`y_{at} = \operatorname{sign}(n\,\#(a,t) - \#a\,\#t)`, and from
    ``test`` for A→T :math:`\Delta_{at} = \#(a,\hat t)/\#a - \#(a,t)/\#a`
    (T→A likewise with the roles swapped); see :func:`bias_amp_directional`
    and :ref:`def-directional`.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.

    Examples
    --------
    Counts of the test set, with its ground truth standing in for training:

    >>> import numpy as np
    >>> from biasamp import CooccurrenceCounts, directional_from_counts
    >>> attr = np.repeat([1, 2], [90, 30])
    >>> task = np.concatenate([np.repeat([0, 1], [60, 30]), np.repeat([0, 1], [10, 20])])
    >>> test = CooccurrenceCounts.from_labels(attr, task, task_pred=(attr == 2).astype(int), attr_pred=attr)
    >>> res = directional_from_counts(test.restrict(["attr"], ["task"]), test, train_source="test")
    >>> round(res.a_to_t.value, 4), res.t_to_a.value
    (0.3333, 0.0)
    """
    if train.attr_classes != test.attr_classes or train.task_classes != test.task_classes:
        raise ValueError("train and test counts have different classes")
    if not test.has("attr", "task"):
        raise ValueError("test counts need the ground truth roles 'attr' and 'task'")
    if not test.has("task_pred") and not test.has("attr_pred"):
        raise ValueError("test counts hold neither task_pred (for A->T) nor attr_pred (for T->A)")
    y = correlation_sign(train)
    small, excluded = small_attr_groups(test, min_group_size, include_small_groups)
    a_to_t = _one_direction("A->T", y, test, small, excluded) if test.has("task_pred") else None
    t_to_a = _one_direction("T->A", y, test, small, excluded) if test.has("attr_pred") else None
    warn_small_groups(small, excluded, test.attr_classes, test.total("attr"), min_group_size, include_small_groups,
                      "BiasAmp->")
    given = [d for d in (a_to_t, t_to_a) if d is not None]
    if all(d.undefined for d in given):
        raise _all_undefined_error([(f"BiasAmp {d.direction}", len(d.pairs), d.reason) for d in given])
    _warn_undefined_statistics({f"BiasAmp {d.direction}": d.reason for d in given if d.undefined})
    return DirectionalBiasAmpResult(a_to_t, t_to_a, train_source, test.rows,
                                    train.rows if train_source == "train" else None,
                                    bool(test.weighted or train.weighted),
                                    small_groups=tuple(c for c, e in zip(test.attr_classes, excluded) if e),
                                    predictions=test.predictions)


# --------------------------------------------------------------------------- #
# cross-fitted signs (no training set): two folds of the test rows
# --------------------------------------------------------------------------- #
def crossfit_direction(direction: str, y0: np.ndarray, y1: np.ndarray, gram0: np.ndarray, gram1: np.ndarray,
                       ka: int, kt: int, roles: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One direction of cross-fitted BiasAmp→ from two folds' test tables (any leading axes).

    ``y_f`` are the signs of fold f, ``gram_f`` its test Gram table of layout
    ``roles``. Way 0 is ``y0 · Δ`` on fold 1, way 1 ``y1 · Δ`` on fold 0.
    Returns ``(delta0, delta1, contribution, undefined)``: the folds' Δ (NaN
    where undefined) and, per pair, the mean of its defined ways.
    """
    _, _, d0, _, u0 = _direction_arrays(1, *_direction_inputs(direction, gram0, ka, kt, roles))
    _, _, d1, _, u1 = _direction_arrays(1, *_direction_inputs(direction, gram1, ka, kt, roles))
    contribution, undefined = crossfit_mean(y0 * d1, y1 * d0, u1, u0)
    return d0, d1, contribution, undefined


def _one_direction_crossfit(direction: str, folds: tuple, signs: tuple, small: np.ndarray,
                            excluded: np.ndarray) -> DirectionResult:
    """One direction with cross-fitted signs; the per-pair table keeps ``y`` and Δ of every row."""
    test = folds[0] + folds[1]
    ka, kt = len(test.attr_classes), len(test.task_classes)
    roles = (test.attr_roles, test.task_roles)
    y = correlation_sign(signs[0] + signs[1])
    y0, y1 = correlation_sign(signs[0]), correlation_sign(signs[1])
    both, support, predicted = _direction_inputs(direction, test.gram, ka, kt, roles)
    p_true, p_pred, delta, _, _ = _direction_arrays(y, both, support, predicted)
    d0, d1, contribution, undefined = crossfit_direction(direction, y0, y1, folds[0].gram, folds[1].gram, ka, kt,
                                                         roles)
    return _direction_result(direction, test, both, contribution, undefined, small, excluded,
                             {"y": y, "p_true": p_true, "p_pred": p_pred, "delta": delta},
                             {"y_fold0": y0, "y_fold1": y1})


_NEEDS = {"A->T": "task_pred", "T->A": "attr_pred"}


def directional_from_folds(
    folds: dict, *, sign_tables: dict | None = None, min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    include_small_groups: bool = False,
) -> DirectionalBiasAmpResult:
    r"""BiasAmp→ with cross-fitted signs, from the count tables of two folds of the test rows.

    The pure function of cross-fitting (docs/definitions.md, "No training
    set"): for each way f ∈ {0, 1}, the signs :math:`y^{(f)}` come from fold
    f's ground truth and the change :math:`\Delta^{(1-f)}` from the other
    fold; a pair's value is the mean of its defined ways,
    :math:`\tilde c_{at} = \tfrac12\big(y^{(0)}_{at}\Delta^{(1)}_{at} +
    y^{(1)}_{at}\Delta^{(0)}_{at}\big)`, and each direction is the mean of
    :math:`\tilde c_{at}` over the defined pairs (small groups left out, their
    sizes from both folds).

    Parameters
    ----------
    folds : dict
        ``{"A->T": (fold0, fold1), "T->A": (fold0, fold1)}`` (either key may
        be absent): each direction's two folds as :class:`CooccurrenceCounts`
        with the roles ``attr``, ``task`` and the prediction the direction
        reads (``task_pred`` for A→T, ``attr_pred`` for T→A), counted with the
        same classes. Each direction has its own split of the rows (drawn from
        the rows it reads), so its value does not depend on whether the other
        direction's predictions were given; a layer that splits once may pass
        the same folds for both.
    sign_tables : dict, optional
        Per direction, the two tables its signs come from (default: each
        fold's ground truth; ``drop_empty_train_rows`` passes them with the
        empty rows left out).
    min_group_size, include_small_groups : int, bool
        The small-group rule (:ref:`def-small-groups`), on both folds together.

    Returns
    -------
    DirectionalBiasAmpResult
        With ``cross_fit=True``. Its per-pair tables keep ``y``, ``p_true``,
        ``p_pred`` and ``delta`` of every row (fold 0 + fold 1), and add the
        folds' signs ``y_fold0``, ``y_fold1``; ``contribution`` is the
        cross-fitted :math:`\tilde c_{at}`.
    """
    if not isinstance(folds, dict) or not folds or set(folds) - set(_NEEDS):
        raise ValueError(f"folds must map 'A->T' and/or 'T->A' to two count tables, got {folds!r}")
    for direction, pair in folds.items():
        if len(pair) != 2 or not all(isinstance(f, CooccurrenceCounts) for f in pair):
            raise TypeError(f"folds[{direction!r}] must be two CooccurrenceCounts (fold 0, fold 1)")
        if not (pair[0] + pair[1]).has("attr", "task", _NEEDS[direction]):
            raise ValueError(f"folds[{direction!r}] need the roles 'attr', 'task' and {_NEEDS[direction]!r}")
    signs = {d: (sign_tables or {}).get(d) or tuple(f.restrict(["attr"], ["task"]) for f in pair)
             for d, pair in folds.items()}
    test = next(iter(folds.values()))
    test = test[0] + test[1]
    small, excluded = small_attr_groups(test, min_group_size, include_small_groups)
    out = {d: _one_direction_crossfit(d, folds[d], signs[d], small, excluded) if d in folds else None
           for d in ("A->T", "T->A")}
    warn_small_groups(small, excluded, test.attr_classes, test.total("attr"), min_group_size, include_small_groups,
                      "BiasAmp->")
    given = [d for d in out.values() if d is not None]
    if all(d.undefined for d in given):
        raise _all_undefined_error([(f"BiasAmp {d.direction}", len(d.pairs), d.reason) for d in given])
    _warn_undefined_statistics({f"BiasAmp {d.direction}": d.reason for d in given if d.undefined})
    return DirectionalBiasAmpResult(out["A->T"], out["T->A"], "test", test.rows, None,
                                    any(f.weighted for pair in folds.values() for f in pair),
                                    small_groups=tuple(c for c, e in zip(test.attr_classes, excluded) if e),
                                    cross_fit=True,
                                    predictions=joined(*(f.predictions for pair in folds.values() for f in pair)))


# --------------------------------------------------------------------------- #
# BiasAmp_MALS
# --------------------------------------------------------------------------- #
def _mals_value(contribution: np.ndarray, n_tasks: int) -> np.ndarray:
    return np.where(np.isnan(contribution), 0.0, contribution).sum(axis=(-2, -1)) / n_tasks


def mals_from_counts(train: CooccurrenceCounts, pred: CooccurrenceCounts, *,
                     min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                     include_small_groups: bool = False) -> MALSResult:
    r"""BiasAmp_MALS from count tables.

    Parameters
    ----------
    train : CooccurrenceCounts
        Counts of the training ground truth (roles ``attr`` and ``task``).
    pred : CooccurrenceCounts
        Counts of the test predictions (roles ``attr_pred`` and ``task_pred``).
    min_group_size, include_small_groups : int, bool
        Attribute classes predicted for fewer (weighted) test rows are small:
        their pairs stay in ``pairs`` (flagged ``small``) and out of the sum
        (:ref:`def-small-groups`).

    Returns
    -------
    MALSResult

    Raises
    ------
    ValueError
        Tables with different classes, or every pair undefined (BiasAmp_MALS
        is then undefined, and it is the only statistic asked for).

    See Also
    --------
    bias_amp_mals : the same from labels.

    Notes
    -----
    With :math:`b(a,t) = \#(a,t)/\sum_{a'}\#(a',t)` from each table,
    :math:`\text{BiasAmp}_\text{MALS} = \frac{1}{|\mathcal T|}\sum_{a,t}
    \mathbb 1[b_\text{train} > 1/|\mathcal A|](b_\text{pred} - b_\text{train})`;
    see :func:`bias_amp_mals` and :ref:`def-mals`.

    References
    ----------
    .. [1] J. Zhao, T. Wang, M. Yatskar, V. Ordonez, K.-W. Chang. "Men Also Like
       Shopping: Reducing Gender Bias Amplification using Corpus-level
       Constraints". EMNLP 2017.
    .. [2] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 1.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import CooccurrenceCounts, mals_from_counts
    >>> attr = np.array([0, 0, 0, 0, 1, 0, 1])
    >>> train = CooccurrenceCounts.from_labels(attr, np.array([[1], [1], [1], [1], [1], [0], [0]]))
    >>> pred = CooccurrenceCounts.from_labels(attr_pred=attr, task_pred=np.array([[1], [1], [1], [1], [0], [0], [0]]),
    ...                                       attr_classes=train.attr_classes, task_classes=train.task_classes)
    >>> round(mals_from_counts(train, pred).value, 4)
    0.2
    """
    if train.attr_classes != pred.attr_classes or train.task_classes != pred.task_classes:
        raise ValueError("train and prediction counts have different classes")
    at = _as_count(train.cross("attr", "task"))
    pp = pred.cross("attr_pred", "task_pred")
    bias_train, bias_pred, indicator, delta, contribution, undefined, n_tasks = _mals_arrays(at, pp)
    n_undefined = int(undefined.sum())
    if n_undefined == undefined.size:
        raise _all_undefined_error([("BiasAmp_MALS", undefined.size, _MALS_UNDEFINED)])
    _warn_undefined(n_undefined, undefined.size, "BiasAmp_MALS")
    # the groups' test sizes are the rows predicted in them (MALS reads no test ground truth)
    small, excluded = small_groups(pred.total("attr_pred"), check_min_group_size(min_group_size),
                                   check_include_small_groups(include_small_groups))
    warn_small_groups(small, excluded, pred.attr_classes, pred.total("attr_pred"), min_group_size,
                      include_small_groups, "BiasAmp_MALS")
    value = float(_mals_value(np.where(excluded[:, None], np.nan, contribution), n_tasks))
    pairs = _pair_frame(
        train.attr_classes, train.task_classes,
        bias_train=bias_train, bias_pred=bias_pred, indicator=indicator, delta=delta,
        contribution=contribution, n_train=at, n_pred=pp if pred.soft_roles else _as_count(pp),
        small=np.broadcast_to(small[:, None], undefined.shape), undefined=undefined,
    )
    return MALSResult(value, pairs, n_tasks, n_undefined, rows=pred.rows, train_rows=train.rows,
                      weighted=bool(pred.weighted or train.weighted),
                      small_groups=tuple(c for c, e in zip(pred.attr_classes, excluded) if e),
                      predictions=pred.predictions)


_MALS_UNDEFINED = "no task has a positive training instance, so no bias_train(a, t) is defined"


def mals_from_folds(fold0: CooccurrenceCounts, fold1: CooccurrenceCounts, *,
                    min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                    include_small_groups: bool = False) -> MALSResult:
    r"""BiasAmp_MALS with a cross-fitted indicator, from the count tables of two folds of the same rows.

    The rows are both the "training" rows (their ground truth gives
    :math:`b_\text{train}`) and the prediction rows (no training set). For
    each way f ∈ {0, 1} the indicator comes from fold f and the change
    :math:`b_\text{pred} - b_\text{train}` from the other fold; a pair's term
    is the mean of its defined ways,

    .. math::

        \tilde\Delta_{at} = \tfrac12\sum_{f} k^{(f)}_a\,\mathbb 1\big[b^{(f)}_\text{train}(a,t) > 1/|\mathcal A|\big]
            \big(b^{(1-f)}_\text{pred}(a,t) - b^{(1-f)}_\text{train}(a,t)\big),

    where :math:`k^{(f)}_a` is 1 when group a is not small in fold f (at
    least ``min_group_size / 2`` predicted members there, :func:`fold_keep`)
    or small groups are included. The folds are drawn without stratifying
    by attribute class: a group's share in one fold then does not carry the
    sample's group size into the other (docs/definitions.md).

    and BiasAmp_MALS is :math:`\frac{1}{|\mathcal T|}\sum_{a,t}\tilde\Delta_{at}`
    (docs/definitions.md, "No training set").

    Parameters
    ----------
    fold0, fold1 : CooccurrenceCounts
        Counts of each fold with the roles ``attr``, ``attr_pred`` (attribute
        side) and ``task``, ``task_pred`` (task side): ``#(a, t)`` of the ground
        truth and ``#(â, t̂)`` of the predictions.
    min_group_size, include_small_groups : int, bool
        The small-group rule (:ref:`def-small-groups`), per way on the
        predicted groups of the indicator's fold; the ``small`` flag of the
        table is the rule on both folds together, and a group small in both
        folds is out of the headline (``small_groups``).

    Returns
    -------
    MALSResult
        With ``cross_fit=True``; its ``pairs`` keep ``bias_train``,
        ``bias_pred``, ``indicator`` and ``delta`` of every row and add
        ``indicator_fold0``, ``indicator_fold1``, ``small_fold0``,
        ``small_fold1``; ``contribution`` is :math:`\tilde\Delta_{at}`.
    """
    test = fold0 + fold1
    at = [_as_count(f.cross("attr", "task")) for f in (fold0, fold1)]
    pp = [_as_count(f.cross("attr_pred", "task_pred")) for f in (fold0, fold1)]
    min_group_size = check_min_group_size(min_group_size)
    include_small_groups = check_include_small_groups(include_small_groups)
    keep = fold_keep((fold0.total("attr_pred"), fold1.total("attr_pred")), min_group_size, include_small_groups)
    i0, i1, contribution, undefined, n_tasks = mals_crossfit_arrays(at[0], at[1], pp[0], pp[1],
                                                                    keep=(keep[0][:, None], keep[1][:, None]))
    n_tasks = int(n_tasks)
    at_all, pp_all = _as_count(test.cross("attr", "task")), test.cross("attr_pred", "task_pred")
    bias_train, bias_pred, indicator, delta, _, _, _ = _mals_arrays(at_all, pp_all)
    n_undefined = int(undefined.sum())
    if n_undefined == undefined.size:
        raise _all_undefined_error([("BiasAmp_MALS", undefined.size, _MALS_UNDEFINED_CROSSFIT)])
    _warn_undefined(n_undefined, undefined.size, "BiasAmp_MALS")
    # small on every row (the flag), left out of the headline where small in both folds (the ways' rule)
    small = small_groups(test.total("attr_pred"), min_group_size, include_small_groups)[0]
    excluded = ~keep[0] & ~keep[1]
    warn_small_groups(small, excluded, test.attr_classes, test.total("attr_pred"), min_group_size,
                      include_small_groups, "BiasAmp_MALS")
    value = float(_mals_value(np.where(excluded[:, None], np.nan, contribution), n_tasks))
    shape = undefined.shape
    pairs = _pair_frame(
        test.attr_classes, test.task_classes,
        bias_train=bias_train, bias_pred=bias_pred, indicator=indicator, delta=delta, contribution=contribution,
        indicator_fold0=i0, indicator_fold1=i1, n_train=at_all,
        n_pred=pp_all if test.soft_roles else _as_count(pp_all),
        small=np.broadcast_to(small[:, None], shape), small_fold0=np.broadcast_to(~keep[0][:, None], shape),
        small_fold1=np.broadcast_to(~keep[1][:, None], shape), undefined=undefined,
    )
    return MALSResult(value, pairs, n_tasks, n_undefined, rows=test.rows, train_rows=test.rows,
                      weighted=bool(test.weighted),
                      small_groups=tuple(c for c, e in zip(test.attr_classes, excluded) if e),
                      cross_fit=True, predictions=test.predictions)


_MALS_UNDEFINED_CROSSFIT = ("no pair has a defined term in either fold (a task needs a positive in one fold for its "
                            "indicator, and, where the indicator is 1, a positive and a prediction in the other)")


# --------------------------------------------------------------------------- #
# label-level API
# --------------------------------------------------------------------------- #
def bias_amp_directional(
    attr: Labels,
    task: Labels,
    *,
    attr_pred: Labels | None = None,
    task_pred: Labels | None = None,
    attr_train: Labels | None = None,
    task_train: Labels | None = None,
    drop_empty_train_rows: bool = False,
    sample_weight: Weights | None = None,
    train_sample_weight: Weights | None = None,
    missing: Missing = "raise",
    threshold: float = DEFAULT_THRESHOLD,
    soft: Soft = "threshold",
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    include_small_groups: bool = False,
    cross_fit: bool | None = None,
    cross_fit_random_state: Any = None,
    binary_task: BinaryTask = "positive",
    pos_label: Any = None,
) -> DirectionalBiasAmpResult:
    r"""Directional bias amplification BiasAmp→ (Wang & Russakovsky 2021), both directions.

    .. math::

        \text{BiasAmp}_{\rightarrow} = \frac{1}{|\mathcal{A}||\mathcal{T}|}
            \sum_{a, t} y_{at}\,\Delta_{at},\qquad
        y_{at} = \operatorname{sign}\big(P(A_a{=}1, T_t{=}1) - P(A_a{=}1)P(T_t{=}1)\big)

    with :math:`y_{at}` from the training ground truth and, on the test set,

    * A→T: :math:`\Delta_{at} = P(\hat T_t{=}1 \mid A_a{=}1) - P(T_t{=}1 \mid A_a{=}1)`
    * T→A: :math:`\Delta_{at} = P(\hat A_a{=}1 \mid T_t{=}1) - P(A_a{=}1 \mid T_t{=}1)`

    Parameters
    ----------
    attr : labels of shape (n,) or (n, K_A)
        Test ground truth of the protected attribute A (class ids/names, or an
        indicator matrix; any input kind of :ref:`def-inputs`).
    task : labels of shape (n,) or (n, K_T)
        Test ground truth of the task T.
    attr_pred : labels, optional
        Predicted attribute Â (hard 0/1 or probabilities). Needed for T→A.
    task_pred : labels, optional
        Predicted task T̂ (hard 0/1 or probabilities). Needed for A→T.
    attr_train, task_train : labels, optional
        Training ground truth, used only for the signs :math:`y_{at}`. Give
        both or neither; when neither, the signs come from the test ground
        truth, cross-fitted (``cross_fit``), and the result records
        ``train_source="test"``.
    drop_empty_train_rows : bool, default False
        Leave out of the signs the training rows with no attribute class and
        no task label (possible with indicator matrices), as Wang &
        Russakovsky's code and the multi-attribute authors' copy of it do. It only changes :math:`n` in
        :math:`\operatorname{sign}(n\,\#(a,t) - \#a\,\#t)`; see Notes.
    sample_weight : array-like of shape (n,), optional
        One non-negative weight per test row: every test count (and, without
        a training set, every training count) becomes a sum of weights; rows
        of weight 0 are dropped (:ref:`def-weights`). The bootstrap resamples
        rows with their weights.
    train_sample_weight : array-like of shape (n_train,), optional
        Weights of the training rows (needs ``attr_train``/``task_train``).
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value (NaN, None, ``pd.NA``): raise
        ``ValueError`` naming the argument and the rows; drop them (in the
        test and the training set separately); or, for a 1-D ``attr`` /
        ``attr_train``, make a missing attribute its own class ``"missing"``
        (missing values elsewhere still raise) (:ref:`def-missing`). What
        happened is recorded in ``.rows`` / ``.train_rows``.
    threshold : float, default 0.5
        Probabilities given as ``attr_pred`` / ``task_pred`` are predictions
        when they exceed it (per label; the argmax for a multi-class
        attribute) (:ref:`def-probabilities`).
    soft : {"threshold", "expected"}, default "threshold"
        ``"expected"``: probabilities count as expected counts instead (the
        directional paper's reading for sentence completion). The result's
        ``predictions`` says which was used.
    min_group_size : int, default 30
        Attribute classes with fewer (weighted) test members are small: their
        pairs stay in ``pairs`` (flagged ``small``) but are left out of both
        directions' means, with a ``SmallGroupWarning``, unless
        ``include_small_groups`` or fewer than two larger classes would remain
        (:ref:`def-small-groups`; the rule of the fairness metrics).
    include_small_groups : bool, default False
        Keep the small classes' pairs in the means.
    cross_fit : bool or None, default None
        How the signs are estimated without a training set. ``None``: cross-fit
        exactly when no training set is given. ``True``: the test rows are split
        in two folds (stratified by attribute class); the signs of one fold are
        applied to the Δ of the other, both ways, and a pair's value is the
        mean of the two ways (see Notes). ``False``: the signs come from every
        test row and are applied to the same rows (the plug-in of the papers'
        examples, biased toward "reduced"). ``True`` with a training set raises
        ``ValueError``: the training set fixes the signs.
    cross_fit_random_state : None, int or numpy Generator, default None
        The seed of the split. ``None`` is a fixed split (seed 0), so the same
        data always give the same value; another seed draws another split.
        (Named apart from :func:`biasamp.bootstrap`'s own ``random_state``, the
        seed of its replicates.)
    binary_task : {"positive", "both"}, default "positive"
        How a binary task is read (:ref:`def-binary-task`): a task whose
        classes are 0 and 1 (or False and True, or any two classes with
        ``pos_label``) is its positive class alone, the same labels as an
        ``N x 1`` indicator of that class, so a 1-D column and the indicator
        give one number. ``"both"``: both classes, each a task of its own
        (the one-hot reading some papers use, e.g. the DPA paper's COMPAS
        tables). The result's ``binary_task`` says which was read.
    pos_label : object, optional
        The positive class of a binary task (default: 1/True for a 0/1
        task); with it, a task of two other classes (names) is read as this
        class.

    Returns
    -------
    DirectionalBiasAmpResult
        ``.a_to_t`` and ``.t_to_a`` (each with ``.value`` and the per-pair
        table ``.pairs``); a direction whose predictions were not given is
        ``None``. A direction whose every pair is undefined has
        ``undefined=True``, ``value`` NaN and a ``reason``; the other
        direction is still returned.

    Raises
    ------
    ValueError
        Bad labels (see :mod:`biasamp.labels`), no predictions at all, only
        one of ``attr_train``/``task_train``, bad weights (negative, NaN,
        wrong length: the message names the argument), an unknown
        ``missing``, or every direction asked for undefined.

    Warns
    -----
    UndefinedPairWarning
        When some pairs condition on an empty test event (a group with no
        test member for A→T, a task with no positive test instance for T→A);
        they are excluded from the mean and flagged in ``.pairs``. Also when
        a whole direction is undefined.

    Notes
    -----
    * :math:`y_{at}` is the *sign* (−1, 0, +1), computed exactly from integer
      counts as :math:`\operatorname{sign}(n\,\#(a,t) - \#a\,\#t)`. The paper
      prints :math:`y \in \{0,1\}` with :math:`(1-y)(-\Delta)`; the sign is what
      the authors' code does and what makes an exactly independent pair
      contribute 0 (:ref:`def-directional`). Such pairs still count in the mean.
    * **Empty training rows** (``drop_empty_train_rows``): a row with no
      attribute class and no task label is an instance where neither
      co-occurs, and it is kept by default (it is part of the population
      :math:`P(\cdot)` is taken over). Wang & Russakovsky's code
      (``directional_biasamp.py``) and the code of Zhao, Andrews & Xiang
      (their copy of BiasAmp→ and Multi→) drop such training rows first,
      which lowers :math:`n` and can flip a sign from + to −. Single-label
      (1-D) labels never have empty rows; the option matters only for
      indicator matrices with all-zero rows (:doc:`/protocol_empty_rows`).
    * A binary task (classes 0 and 1) is read as its positive class, one
      column of pairs, whether it is a 1-D column or an ``N x 1`` indicator;
      ``binary_task="both"`` reads both classes, two columns of pairs
      (:ref:`def-binary-task`). A 1-D protected attribute is always every
      class: its classes are the groups.
    * Soft predictions turn every probability into an expected rate.
    * Values are fractions, not percentages.
    * **No training set** (:ref:`def-no-train`): signs estimated on the very
      rows they are applied to bias the value toward "reduced" (a task
      frequent in a group by chance gets :math:`y = +1`, and its rate then
      regresses): an attribute of 200 random levels reads about −0.045 with
      95% intervals excluding 0. The default therefore cross-fits: the test
      rows are split in two folds :math:`F_0, F_1` (every attribute class
      halved; rows of the same content interchangeable, so neither the order
      of the rows nor the names of the classes matter), and

      .. math::

          \tilde c_{at} = \tfrac12\big(y^{(F_0)}_{at}\,\Delta^{(F_1)}_{at}
              + y^{(F_1)}_{at}\,\Delta^{(F_0)}_{at}\big)

      (one way alone where the other is undefined); each direction is the
      mean of :math:`\tilde c_{at}`. A test set balanced *by design* (every
      sign 0 on all rows) has its folds' chance imbalance read as signs: pass
      the design as the training set, or ``cross_fit=False``.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.
    .. [2] V. Chernozhukov et al. "Double/debiased machine learning for treatment
       and structural parameters". The Econometrics Journal 21(1), 2018
       (cross-fitting).

    Examples
    --------
    The "shortcoming 2" example of Wang & Russakovsky (§3.2): a model that
    predicts T̂ = 0 for every member of group 1 and T̂ = 1 for group 2; the
    constructed data are also the training set the signs come from.

    >>> import numpy as np
    >>> from biasamp import bias_amp_directional
    >>> attr = np.repeat([1, 2], [90, 30])
    >>> task = np.concatenate([np.repeat([0, 1], [60, 30]), np.repeat([0, 1], [10, 20])])
    >>> task_pred = (attr == 2).astype(int)
    >>> res = bias_amp_directional(attr, task, task_pred=task_pred, attr_pred=attr, attr_train=attr, task_train=task)
    >>> round(res.a_to_t.value, 4), res.t_to_a.value
    (0.3333, 0.0)

    Without a training set the signs are cross-fitted; ``cross_fit=False``
    gives the plug-in, whose bias shows on an attribute that is pure noise:

    >>> rng = np.random.default_rng(3)
    >>> g, y = rng.integers(0, 200, 6000), rng.random(6000) < 0.45
    >>> p = y ^ (rng.random(6000) < 0.3)
    >>> round(bias_amp_directional(g, y, task_pred=p, cross_fit=False).a_to_t.value, 3)
    -0.046
    >>> round(bias_amp_directional(g, y, task_pred=p).a_to_t.value, 3)
    -0.004

    Integer sample weights count like repeated rows:

    >>> w = np.where(attr == 2, 2, 1)
    >>> weighted = bias_amp_directional(attr, task, task_pred=task_pred, sample_weight=w, cross_fit=False)
    >>> rows = np.repeat(np.arange(len(attr)), w)
    >>> weighted.a_to_t.value == bias_amp_directional(attr[rows], task[rows], task_pred=task_pred[rows],
    ...                                               cross_fit=False).a_to_t.value
    True
    """
    opts, labels = DirectionalOptions.call_of(locals())  # the declared options, checked; the labels
    return directional_compute(directional_count(labels, opts), opts)


@old_positional_order("0.3.0", "0.4.0", ("attr_train", "task_train", "attr_pred", "task_pred"), fill=(None, None))
def bias_amp_mals(attr: Labels | None = None, task: Labels | None = None, *, attr_pred: Labels, task_pred: Labels,
                  attr_train: Labels | None = None, task_train: Labels | None = None,
                  sample_weight: Weights | None = None, train_sample_weight: Weights | None = None,
                  missing: Missing = "raise", threshold: float = DEFAULT_THRESHOLD, soft: Soft = "threshold",
                  min_group_size: int = DEFAULT_MIN_GROUP_SIZE, include_small_groups: bool = False,
                  cross_fit: bool | None = None,
                  cross_fit_random_state: Any = None, binary_task: BinaryTask = "positive",
                  pos_label: Any = None) -> MALSResult:
    r"""BiasAmp_MALS, the bias amplification of Zhao et al. (2017).

    .. math::

        \text{BiasAmp}_{\text{MALS}} = \frac{1}{|\mathcal{T}|} \sum_{a, t}
            \mathbb{1}\Big[b_{\text{train}}(a,t) > \tfrac{1}{|\mathcal{A}|}\Big]
            \big(b_{\text{pred}}(a,t) - b_{\text{train}}(a,t)\big),
        \qquad b(a,t) = \frac{\#(A_a{=}1, T_t{=}1)}{\sum_{a'} \#(A_{a'}{=}1, T_t{=}1)}

    with :math:`b_{\text{train}}` on the training ground truth and
    :math:`b_{\text{pred}}` on the test *predictions* (both Â and T̂ predicted).

    Parameters
    ----------
    attr, task : labels of shape (n,) or (n, K)
        Test ground truth of the protected attribute and the task (the rows
        of the predictions). Without a training set it stands in for one (see
        ``cross_fit``); with one, the metric does not read it (it may be
        omitted).
    attr_pred, task_pred : labels, keyword-only
        Test predictions Â and T̂ (hard, or probabilities: expected counts).
    attr_train, task_train : labels, optional
        Training ground truth of the protected attribute and the task, where
        :math:`b_{\text{train}}` is counted. Give both or neither.
    sample_weight : array-like of shape (n,), optional
        One non-negative weight per *test* row (the rows of ``attr_pred`` /
        ``task_pred``, which the bootstrap resamples): every predicted count
        becomes a sum of weights; rows of weight 0 are dropped
        (:ref:`def-weights`).
    train_sample_weight : array-like of shape (n_train,), optional
        Weights of the training rows (``attr_train`` / ``task_train``).
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value: raise ``ValueError`` naming the argument;
        drop them (in the training and the test rows separately); or, for a
        1-D ``attr_train``, make a missing attribute its own class
        ``"missing"`` (:ref:`def-missing`). Recorded in ``.rows`` /
        ``.train_rows``.
    threshold : float, default 0.5
        Probabilities given as ``attr_pred`` / ``task_pred`` are predictions
        when they exceed it (per label; the argmax for a multi-class
        attribute) (:ref:`def-probabilities`).
    soft : {"threshold", "expected"}, default "threshold"
        ``"expected"``: probabilities count as expected counts instead (the
        directional paper's reading for sentence completion). The result's
        ``predictions`` says which was used.
    min_group_size : int, default 30
        Attribute classes predicted for fewer (weighted) test rows are small:
        their pairs stay in ``pairs`` (flagged ``small``) but out of the sum,
        with a ``SmallGroupWarning``, unless ``include_small_groups`` or fewer
        than two larger classes would remain (:ref:`def-small-groups`).
    include_small_groups : bool, default False
        Keep the small classes' pairs in the sum.
    cross_fit : bool or None, default None
        How the indicator is estimated without a training set, where the test
        ground truth ``attr`` / ``task`` stands in for it. ``None``: cross-fit
        exactly when no training set is given (as :func:`bias_amp_directional`
        and :func:`biasamp.audit`). ``True``: the rows are split in two folds
        and the indicator of one fold is applied to the change
        ``b_pred − b_train`` of the other, both ways (see Notes). ``False``:
        the plug-in (indicator and change on every row, biased toward
        "reduced"). ``True`` with a training set raises ``ValueError``.
    cross_fit_random_state : None, int or numpy Generator, default None
        The seed of the split (``None``: a fixed split, seed 0).
    binary_task : {"positive", "both"}, default "positive"
        How a binary task is read (:ref:`def-binary-task`): its positive class
        alone (a 1-D 0/1 column and an ``N x 1`` indicator give one number), or
        ``"both"`` classes (the one-hot reading). Recorded in the result's
        ``binary_task``.
    pos_label : object, optional
        The positive class of a binary task (default: 1/True for a 0/1 task).

    Returns
    -------
    MALSResult
        ``.value`` and the per-pair table ``.pairs``.

    Raises
    ------
    ValueError
        Bad labels, bad weights (the message names the argument), an unknown
        ``missing``, or every pair undefined (no task has a positive training
        instance: BiasAmp_MALS, the only statistic of the call, is undefined).

    Warns
    -----
    UndefinedPairWarning
        When some terms are undefined (see Notes).

    Notes
    -----
    * The comparison with :math:`1/|\mathcal{A}|` is strict and exact
      (:math:`|\mathcal{A}|\,\#(a,t) > \sum_{a'}\#(a',t)` in integers). A task
      whose ratio is exactly :math:`1/|\mathcal{A}|` adds 0 but counts in
      :math:`|\mathcal{T}|`.
    * A task with no positive training instance (with any attribute) has no
      :math:`b_{\text{train}}`: undefined, out of the sum and of
      :math:`|\mathcal{T}|`. An indicator-1 pair whose task is never predicted
      (with any attribute) has no :math:`b_{\text{pred}}`: undefined, out of
      the sum, :math:`|\mathcal{T}|` unchanged. Indicator-0 pairs are defined
      zeros (:ref:`def-mals`).
    * The metric needs no test ground truth; it cannot tell the direction of
      amplification (use :func:`bias_amp_directional`).
    * Without a training set (only ``attr``/``task``), an indicator estimated
      on the rows it is applied to selects the pairs whose ratio is high by
      chance, and the predictions then regress: the value is biased toward
      "reduced". The default cross-fits, which removes that selection
      (:ref:`def-no-train`):

      .. math::

          \tilde\Delta_{at} = \tfrac12\sum_{f \in \{0,1\}}
              \mathbb 1\big[b^{(f)}_{\text{train}}(a,t) > \tfrac{1}{|\mathcal{A}|}\big]
              \big(b^{(1-f)}_{\text{pred}}(a,t) - b^{(1-f)}_{\text{train}}(a,t)\big)

    References
    ----------
    .. [1] J. Zhao et al. "Men Also Like Shopping". EMNLP 2017.
    .. [2] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 1.

    Examples
    --------
    Two groups and one task; the task is 80% group 0 in training and the model
    predicts it only for group 0.

    >>> import numpy as np
    >>> from biasamp import bias_amp_mals
    >>> attr = np.array([0, 0, 0, 0, 1, 0, 1])
    >>> task = np.array([[1], [1], [1], [1], [1], [0], [0]])
    >>> task_pred = np.array([[1], [1], [1], [1], [0], [0], [0]])
    >>> round(bias_amp_mals(attr, task, attr_pred=attr, task_pred=task_pred, attr_train=attr,
    ...                     task_train=task).value, 4)
    0.2

    The 0.2 order (training ground truth first, four positional arguments)
    still works until 0.4, with a ``FutureWarning``.
    """
    opts, labels = MALSOptions.call_of(locals())  # the declared options, checked; the labels
    return mals_compute(mals_count(labels, opts), opts)


def mals_cross_fit(attr: Any, task: Any, attr_train: Any, task_train: Any, train_sample_weight: Any,
                   cross_fit: Any) -> bool:
    """Whether BiasAmp_MALS cross-fits its indicator: the one decision of every path (:func:`mals_count`, Dask).

    With a training set (``attr_train`` and ``task_train``, both or neither):
    no (``cross_fit=True`` raises). Without one the test ground truth stands
    in for it (it must be given, and ``train_sample_weight`` must not: the
    test rows' ``sample_weight`` weights it), cross-fitted unless
    ``cross_fit=False`` (:func:`~biasamp._core.crossfit.check_cross_fit`).
    """
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    has_train = attr_train is not None
    cross_fit = check_cross_fit(cross_fit, has_train)
    if not has_train:
        if attr is None or task is None:
            raise TypeError("bias_amp_mals needs the test ground truth attr and task, or a training set "
                            "(attr_train=..., task_train=...)")
        if train_sample_weight is not None:
            raise ValueError("train_sample_weight weights the training rows, but attr_train/task_train were not "
                             "given (without a training set the test rows and sample_weight stand in for it)")
    return cross_fit


def mals_training(attr: Any, task: Any, attr_pred: Any, attr_train: Any, task_train: Any, sample_weight: Any,
                  train_sample_weight: Any, cross_fit: Any) -> tuple[tuple[Any, Any], Any, bool]:
    """Where :func:`bias_amp_mals` counts :math:`b_{\text{train}}`: ``((attr, task), weights, cross_fit)``.

    The training set when given (the test ground truth, if given too, must
    have the prediction rows); else the test ground truth, with the test
    rows' weights, cross-fitted unless ``cross_fit=False`` (:func:`mals_cross_fit`).
    """
    from biasamp._core.batch import length

    cross_fit = mals_cross_fit(attr, task, attr_train, task_train, train_sample_weight, cross_fit)
    if attr_train is not None:
        for name, x in (("attr", attr), ("task", task)):
            if x is not None and attr_pred is not None and length(x) != length(attr_pred):
                raise ValueError(f"{name} has {length(x)} rows but attr_pred has {length(attr_pred)}: the test "
                                 "ground truth has one row per prediction")
        return (attr_train, task_train), train_sample_weight, cross_fit
    return (attr, task), sample_weight, cross_fit


def _as_role(m: LabelMatrix, role: str) -> LabelMatrix:
    """The same matrix under a counts role name (e.g. ``attr_train`` counted as ``attr``)."""
    return replace(m, name=role)


_DIRECTIONAL_PAIRS = frozenset({("attr", "task"), ("attr_pred", "task"), ("attr", "task_pred")})


def _empty_rows(attr: LabelMatrix, task: LabelMatrix, weights: np.ndarray | None = None) -> float:
    """Number (total weight) of rows with no attribute class and no task label (only indicator matrices have them)."""
    if attr.codes is not None or task.codes is not None:
        return 0
    empty = _empty_row_mask(attr, task)
    return int(empty.sum()) if weights is None else float(weights[empty].sum())


def _empty_row_mask(attr: LabelMatrix, task: LabelMatrix) -> np.ndarray:
    """Per row: no attribute class and no task label (two indicator matrices, neither held as ``codes``)."""
    return np.asarray(~(attr._dense() != 0).any(axis=1) & ~(task._dense() != 0).any(axis=1))


def _without_empty_rows(train: CooccurrenceCounts, n_empty: float) -> CooccurrenceCounts:
    """``train`` minus ``n_empty`` all-zero rows: only ``n`` changes (every other count is a sum of zeros)."""
    if not n_empty:
        return train
    gram = train.gram.copy()
    gram[0, 0] -= n_empty
    return replace(train, gram=gram)


@dataclass(frozen=True, eq=False)
class Folds:
    """The two folds of a cross-fitted call: the fold of every row and each fold's count tables.

    ``of_rows``: every (selected) row's share of fold 0 (:func:`biasamp._core.crossfit.crossfit_splits`; None
    for a stream's folds, which keep tables, not rows);
    ``tests``: each fold's test table;
    ``signs``: each fold's table of the signs (its ground truth, without the
    empty rows when ``drop_empty_train_rows``); ``empty``: per row, whether it
    is an empty row left out of the signs (None when none is).
    """

    of_rows: np.ndarray | None
    tests: tuple
    signs: tuple
    empty: np.ndarray | None = None


def _directional_folds(left: list, right: list, weights: np.ndarray | None, rows: RowFilter | None,
                       drop_empty_train_rows: bool, random_state: Any) -> dict:
    """Per direction, the rows it reads split in two folds (:func:`biasamp._core.crossfit.crossfit_splits`), counted.

    A→T reads ``attr``, ``task``, ``task_pred``; T→A ``attr``, ``task``,
    ``attr_pred``: each direction's split is drawn from its own roles, so its
    value does not change when the other direction's predictions are given.
    """
    by_role = {m.name: m for m in (*left, *right)}
    empty: np.ndarray | None = None
    if drop_empty_train_rows and by_role["attr"].codes is None and by_role["task"].codes is None:
        empty = _empty_row_mask(by_role["attr"], by_role["task"])
    out = {}
    reads = {"A->T": (["attr"], ["task", "task_pred"]), "T->A": (["attr", "attr_pred"], ["task"])}
    given = [d for d, pred in _NEEDS.items() if pred in by_role]
    # the split's counts of all the rows (when it made them) and its rows' bytes: each fold 0 counted, fold 1 the rest
    # (each split's fold 0 counted in the thread that dealt it)
    splits, totals, octets, fold0, counts0 = splits_and_fold_counts(
        by_role, [tuple(reads[d][0] + reads[d][1]) for d in given], weights, random_state, True,
        [(tuple(reads[d][0]), tuple(reads[d][1])) for d in given])
    counted = None
    if weights is None and not any(m.soft for m in by_role.values()):  # every fold of every split in one pass
        plan = [(of_rows, *reads[d]) for d, of_rows in zip(given, splits)]
        if totals is not None:
            counted = CooccurrenceCounts._from_fold_counts(left, right, plan, totals, octets, fold0, counts0)
        if counted is None:
            counted = CooccurrenceCounts._from_encoded_splits(left, right, plan)
    for i, (direction, of_rows) in enumerate(zip(given, splits)):
        lroles, rroles = reads[direction]
        if counted is not None:
            tests = list(counted[i])
            n_empty = [] if empty is None else [float(np.sum(empty & (of_rows == 1 - f))) for f in (0, 1)]
        else:
            tests, n_empty = [], []
            for share in fold_weights(of_rows, weights):
                idx = np.flatnonzero(share > 0)
                lf, rf = [take_rows(by_role[r], idx) for r in lroles], [take_rows(by_role[r], idx) for r in rroles]
                wf = None if weights is None else share[idx]
                tests.append(CooccurrenceCounts.from_encoded(lf, rf, pairs=_DIRECTIONAL_PAIRS & {
                    (a, t) for a in lroles for t in rroles}, weights=wf))
                if empty is not None:
                    n_empty.append(float(empty[idx].sum()) if wf is None else float(wf[empty[idx]].sum()))
        signs = [test.restrict(["attr"], ["task"]) for test in tests]
        if empty is not None:  # the empty rows of each fold: their number, or their weight in it
            signs = [_without_empty_rows(sign, k) for sign, k in zip(signs, n_empty)]
        out[direction] = Folds(of_rows, tuple(tests), tuple(signs), empty)
    return out


@dataclass(frozen=True, eq=False)
class Counted:
    """A counted call of :func:`bias_amp_directional` or :func:`bias_amp_mals`: what the families' ``count`` hooks give.

    ``train``: the training side, a :class:`~biasamp.counts.CooccurrenceCounts` (a
    training set, or the test ground truth standing in for it, plug-in) or,
    with ``cross_fit``, the :class:`Folds` of the test rows (BiasAmp→: one
    per direction, in a dict); ``test``: the test counts (BiasAmp_MALS: of
    the predictions; cross-fitted: the sum of a split's folds); ``left``,
    ``right``: the encoded test matrices, attribute side and task side (the
    resampling cells' rows; None for a stream's counts, which keep tables,
    not rows); ``weights``: the test rows' weights (or None);
    ``source``: ``"train"`` or ``"test"``, where the training counts come
    from; ``predictions``: what the probability policy did
    (:mod:`biasamp._core.policy`); ``binary_task``: how a binary task was
    read (:func:`biasamp._core.labels.read_task_roles`); ``cross_fit``: the
    resolved option.
    """

    train: Any
    test: CooccurrenceCounts
    left: list | None
    right: list | None
    weights: np.ndarray | None
    source: str
    predictions: str
    binary_task: str | None
    cross_fit: bool

    def encoded(self) -> tuple[list, list, np.ndarray | None]:
        """``(left, right, weights)``: the encoded test rows of a counted call (the resampling cells' rows)."""
        if self.left is None or self.right is None:
            raise ValueError("a stream's counts keep tables, not rows: no resampling cells")
        return self.left, self.right, self.weights


def directional_count(labels: dict, opts: DirectionalOptions) -> Counted:
    """The counting pass of a :func:`bias_amp_directional` call (the family's ``count`` hook).

    ``labels``: the call's ``attr``, ``task``, ``attr_pred``, ``task_pred``,
    ``attr_train``, ``task_train``, ``sample_weight``,
    ``train_sample_weight`` by name. Validates them, selects their rows,
    encodes and counts them. With ``drop_empty_train_rows`` the training
    counts leave out the rows with no attribute class and no task label.
    Cross-fitted (no training set, unless ``cross_fit=False``) the training
    side is each direction's :class:`Folds` and ``test`` the sum of the first
    direction's folds; BiasAmp→ reads #(a,t), #(â,t) and #(a,t̂), so #(â,t̂)
    is not counted.
    """
    attr, task, attr_pred, task_pred, attr_train, task_train = (
        labels[k] for k in ("attr", "task", "attr_pred", "task_pred", "attr_train", "task_train"))
    cross_fit = check_cross_fit(opts.cross_fit, attr_train is not None or task_train is not None)
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    if attr_pred is None and task_pred is None:
        raise ValueError("give task_pred (for A->T) and/or attr_pred (for T->A); neither was given")
    te, w, rows, tr, tw, train_rows = select_train_test(
        {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred},
        None if attr_train is None else {"attr_train": attr_train, "task_train": task_train},
        sample_weight=labels["sample_weight"], train_sample_weight=labels["train_sample_weight"], missing=opts.missing)
    tr = tr or {"attr_train": None, "task_train": None}
    a = encode_labels({"attr": te["attr"], "attr_train": tr["attr_train"]}, {"attr_pred": te["attr_pred"]},
                      allow_soft=True)
    t = encode_labels({"task": te["task"], "task_train": tr["task_train"]}, {"task_pred": te["task_pred"]},
                      allow_soft=True)
    threshold = float(opts.threshold)  # the option keeps the caller's number type
    a, said_a = harden_roles(a, (("attr", "attr_pred"),), opts.soft, threshold)
    t, said_t = harden_roles(t, (("task", "task_pred"),), opts.soft, threshold)
    t, reading = read_task_roles(t, "task", opts.binary_task, opts.pos_label)
    predictions = joined(said_a, said_t)
    left = [a[r] for r in ("attr", "attr_pred") if r in a]
    right = [t[r] for r in ("task", "task_pred") if r in t]
    check_consistent_length(**{m.name: m for m in (*left, *right)})
    if cross_fit:  # signs from one fold applied to the other: each fold counted on its own rows
        folds = _directional_folds(left, right, w, rows, opts.drop_empty_train_rows, opts.cross_fit_random_state)
        first = next(iter(folds.values()))
        return Counted(folds, replace(first.tests[0] + first.tests[1], rows=rows), left, right, w, "test",
                       predictions, reading, cross_fit)
    test = CooccurrenceCounts.from_encoded(left, right, pairs=_DIRECTIONAL_PAIRS, weights=w, rows=rows,
                                           predictions=predictions)
    if attr_train is None:
        train = test.restrict(["attr"], ["task"])
        if opts.drop_empty_train_rows:
            train = _without_empty_rows(train, _empty_rows(a["attr"], t["task"], w))
        return Counted(train, test, left, right, w, "test", predictions, reading, cross_fit)
    check_consistent_length(attr_train=a["attr_train"], task_train=t["task_train"])
    train = CooccurrenceCounts.from_encoded([_as_role(a["attr_train"], "attr")], [_as_role(t["task_train"], "task")],
                                            weights=tw, rows=train_rows)
    if opts.drop_empty_train_rows:
        train = _without_empty_rows(train, _empty_rows(a["attr_train"], t["task_train"], tw))
    return Counted(train, test, left, right, w, "train", predictions, reading, cross_fit)


def _group_options(opts: MALSOptions) -> dict[str, Any]:
    """The small-group rule of a call, as the keywords of the ``*_from_counts`` / ``*_from_folds`` functions."""
    return {"min_group_size": opts.min_group_size, "include_small_groups": opts.include_small_groups}


def directional_compute(counted: Counted, opts: DirectionalOptions) -> DirectionalBiasAmpResult:
    """The result of a counted :func:`bias_amp_directional` call (the family's ``compute`` hook).

    :func:`directional_from_folds` on the folds' tables (cross-fitted signs)
    or :func:`directional_from_counts` on the training and test counts, with
    the small-group options, and what the counting did: the probability
    policy's ``predictions``, the binary task's reading and, cross-fitted,
    the test rows.
    """
    groups = _group_options(opts)
    if counted.cross_fit:
        res = directional_from_folds({d: f.tests for d, f in counted.train.items()},
                                     sign_tables={d: f.signs for d, f in counted.train.items()}, **groups)
        return replace(res, predictions=counted.predictions, rows=counted.test.rows, binary_task=counted.binary_task)
    return replace(directional_from_counts(counted.train, counted.test, train_source=counted.source, **groups),
                   predictions=counted.predictions, binary_task=counted.binary_task)


def mals_count(labels: dict, opts: MALSOptions) -> Counted:
    """The counting pass of a :func:`bias_amp_mals` call (the family's ``count`` hook).

    ``labels``: the call's ``attr``, ``task``, ``attr_pred``, ``task_pred``,
    ``attr_train``, ``task_train``, ``sample_weight``,
    ``train_sample_weight`` by name. The training co-occurrences are counted
    where :func:`mals_training` says (a training set, or the test ground
    truth standing in for it); cross-fitted (:func:`mals_cross_fit`) the
    training rows are the prediction rows, split in two folds
    (:func:`_count_mals_crossfit`).
    """
    (attr_train, task_train), train_weights, cross_fit = mals_training(
        labels["attr"], labels["task"], labels["attr_pred"], labels["attr_train"], labels["task_train"],
        labels["sample_weight"], labels["train_sample_weight"], opts.cross_fit)
    count = _count_mals_crossfit if cross_fit else _count_mals
    train, pred, (left, right, w), predictions, reading = count(
        attr_train, task_train, labels["attr_pred"], labels["task_pred"], labels["sample_weight"], train_weights, opts)
    return Counted(train, pred, left, right, w, "test" if labels["attr_train"] is None else "train", predictions,
                   reading, cross_fit)


def mals_compute(counted: Counted, opts: MALSOptions) -> MALSResult:
    """The result of a counted :func:`bias_amp_mals` call (the family's ``compute`` hook).

    :func:`mals_from_folds` on the folds' tables (cross-fitted indicator) or
    :func:`mals_from_counts` on the training and prediction counts, with the
    small-group options, and what the counting did: the probability policy's
    ``predictions``, the binary task's reading and, cross-fitted, the rows
    (the training rows are the prediction rows).
    """
    groups = _group_options(opts)
    if counted.cross_fit:
        return replace(mals_from_folds(*counted.train.tests, **groups), predictions=counted.predictions,
                       rows=counted.test.rows, train_rows=counted.test.rows, binary_task=counted.binary_task)
    return replace(mals_from_counts(counted.train, counted.test, **groups), predictions=counted.predictions,
                   binary_task=counted.binary_task)


def _count_mals(attr_train: Any, task_train: Any, attr_pred: Any, task_pred: Any, sample_weight: Any,
                train_sample_weight: Any, opts: MALSOptions) -> tuple:
    """Select the rows of, encode and count a training set and the predictions (:func:`mals_count`).

    Returns ``(train, pred, (left, right, weights), predictions, binary_task)``
    with the encoded prediction matrices, the prediction rows' weights (or
    None), what the probability policy did and how a binary task was read.
    """
    threshold = float(opts.threshold)  # the option keeps the caller's number type
    pr, w, rows, tr, tw, train_rows = select_train_test(
        {"attr_pred": attr_pred, "task_pred": task_pred}, {"attr_train": attr_train, "task_train": task_train},
        sample_weight=sample_weight, train_sample_weight=train_sample_weight, missing=opts.missing)
    a = encode_labels({"attr_train": tr["attr_train"]}, {"attr_pred": pr["attr_pred"]}, allow_soft=True)
    t = encode_labels({"task_train": tr["task_train"]}, {"task_pred": pr["task_pred"]}, allow_soft=True)
    a, said_a = harden_roles(a, (("attr_train", "attr_pred"),), opts.soft, threshold)
    t, said_t = harden_roles(t, (("task_train", "task_pred"),), opts.soft, threshold)
    t, reading = read_task_roles(t, "task_train", opts.binary_task, opts.pos_label)
    check_consistent_length(attr_train=a["attr_train"], task_train=t["task_train"])
    train = CooccurrenceCounts.from_encoded([_as_role(a["attr_train"], "attr")], [_as_role(t["task_train"], "task")],
                                            weights=tw, rows=train_rows)
    left, right = [a["attr_pred"]], [t["task_pred"]]
    check_consistent_length(attr_pred=left[0], task_pred=right[0])
    predictions = joined(said_a, said_t)
    return (train, CooccurrenceCounts.from_encoded(left, right, weights=w, rows=rows, predictions=predictions),
            (left, right, w), predictions, reading)


_MALS_PAIRS = frozenset({("attr", "task"), ("attr_pred", "task_pred")})


def _count_mals_crossfit(attr_train: Any, task_train: Any, attr_pred: Any, task_pred: Any, sample_weight: Any,
                         train_sample_weight: Any, opts: MALSOptions) -> tuple:
    """:func:`_count_mals` when the training rows are the prediction rows (cross-fitted).

    The four arguments are one set of rows (selected together: ``missing``
    drops a row from all of them), weighted by ``sample_weight``. Returns
    ``(folds, pred, (left, right, weights), predictions, binary_task)``: ``folds`` a
    :class:`Folds` whose tables hold ``[1|A|Â]ᵀ[1|T|T̂]`` of each fold, ``pred``
    their sum; ``left`` = ``[A, Â]`` and ``right`` = ``[T, T̂]`` (roles
    ``attr``, ``attr_pred``, ``task``, ``task_pred``).
    """
    if train_sample_weight is not None and (sample_weight is None or not np.array_equal(
            np.asarray(train_sample_weight, dtype=np.float64), np.asarray(sample_weight, dtype=np.float64))):
        raise ValueError("cross_fit=True: the training rows are the prediction rows, so they have one weight each: "
                         "pass sample_weight only (train_sample_weight, if given, must equal it)")
    lengths = {name: len(x) for name, x in (("attr_train", attr_train), ("attr_pred", attr_pred))
               if hasattr(x, "__len__")}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"cross_fit=True: the training rows must be the prediction rows (the test rows standing in "
                         f"for a training set), but attr_train has {lengths['attr_train']} rows and attr_pred "
                         f"{lengths['attr_pred']}; with a separate training set leave cross_fit=None")
    te, w, rows = select_rows({"attr_train": attr_train, "task_train": task_train, "attr_pred": attr_pred,
                               "task_pred": task_pred}, missing=opts.missing, group_args=("attr_train",),
                              sample_weight=sample_weight, group_columns=False)
    a = encode_labels({"attr_train": te["attr_train"]}, {"attr_pred": te["attr_pred"]}, allow_soft=True)
    t = encode_labels({"task_train": te["task_train"]}, {"task_pred": te["task_pred"]}, allow_soft=True)
    threshold = float(opts.threshold)  # the option keeps the caller's number type
    a, said_a = harden_roles(a, (("attr_train", "attr_pred"),), opts.soft, threshold)
    t, said_t = harden_roles(t, (("task_train", "task_pred"),), opts.soft, threshold)
    t, reading = read_task_roles(t, "task_train", opts.binary_task, opts.pos_label)
    left = [_as_role(a["attr_train"], "attr"), a["attr_pred"]]
    right = [_as_role(t["task_train"], "task"), t["task_pred"]]
    check_consistent_length(attr_train=left[0], task_train=right[0], attr_pred=left[1], task_pred=right[1])
    # unstratified: the indicator's fold and the change's fold must not share the sample's group sizes
    of_rows = crossfit_folds(left[0], right, attr_pred=left[1], weights=w, random_state=opts.cross_fit_random_state,
                             stratified=False)
    tests = []
    for share in fold_weights(of_rows, w):
        idx = np.flatnonzero(share > 0)
        tests.append(CooccurrenceCounts.from_encoded([take_rows(m, idx) for m in left],
                                                     [take_rows(m, idx) for m in right], pairs=_MALS_PAIRS,
                                                     weights=None if w is None else share[idx],
                                                     predictions=joined(said_a, said_t)))
    folds = Folds(of_rows, tuple(tests), tuple(tests))
    return folds, replace(tests[0] + tests[1], rows=rows), (left, right, w), joined(said_a, said_t), reading
