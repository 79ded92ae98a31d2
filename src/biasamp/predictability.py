"""Predictability-based bias amplification: DPA and leakage amplification (SPEC §3).

An *attacker* is trained to predict one variable from another; how well it
does (the quality :math:`Q` on a held-out split) measures how much the input
"leaks" into the target. Comparing an attacker trained on the ground truth
with one trained on the model's predictions measures amplification:

* :func:`dpa`: Directional Predictability Amplification (Tokas, Nair &
  Kerner 2025), both directions A→T and T→A, relative change
  :math:`(\\Psi_M - \\Psi_D)/(\\Psi_M + \\Psi_D) \\in [-1, 1]`;
* :func:`leakage_amplification`: leakage amplification LA (Wang et al. 2019),
  the absolute change :math:`\\lambda_M - \\lambda_D` of the predictability
  of A from the task labels.

Built-in attackers: ``"mlp"`` (two hidden layers, the papers' choice),
``"logistic"`` and ``"tabular"`` (:class:`TabularAttacker`, the smoothed
empirical conditional distribution: the Bayes-optimal attacker for discrete
inputs, exact and instant). Any scikit-learn-style estimator instance works
too; it is cloned for every fit.

Every iteration draws its own random label flips (accuracy equalisation) and
its own stratified train/test split from a seed derived, before anything
runs, from ``np.random.SeedSequence(random_state).spawn(n_iter)``: results
are identical for any ``n_jobs``.

References
----------
.. [1] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure bias
   amplification in classification datasets". NeurIPS 2025
   (``papers/dpa-directional-predictability-amplification.txt``), Eq. 1-6,
   §3.1, App. D.
.. [2] T. Wang, J. Zhao, M. Yatskar, K.-W. Chang, V. Ordonez. "Balanced
   Datasets Are Not Enough: Estimating and Mitigating Gender Bias in Deep
   Image Representations". ICCV 2019.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import f1_score

from ._progress import show_progress
from ._results import ResultMixin, fmt
from .labels import _as_array, _check_finite, check_consistent_length, encode_labels
from .stats import confidence_interval

__all__ = [
    "DPADirectionResult",
    "DPAResult",
    "LeakageResult",
    "TabularAttacker",
    "dpa",
    "leakage_amplification",
]

_ATTACKERS = ("mlp", "logistic", "tabular")
_QUALITIES = ("inv_ce", "accuracy", "f1", "inv_rmse")
_CLASSIFICATION_QUALITIES = ("inv_ce", "accuracy", "f1")
_EPS = 1e-15  # probability clip for inv_ce, and RMSE floor for inv_rmse
_MLP_HIDDEN = 32
_MLP_MAX_ITER = 500


# --------------------------------------------------------------------------- #
# the tabular (Bayes-optimal) attacker
# --------------------------------------------------------------------------- #
def _row_ids(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``X`` (sorted) and the id of each row.

    One column, or 0/1 rows of at most 62 columns (packed into one integer
    key), take a fast 1-D ``np.unique``; anything else the row-wise one.
    """
    X = np.asarray(X)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.shape[1] == 1:
        keys, ids = np.unique(X[:, 0], return_inverse=True)
        return keys.reshape(-1, 1), np.asarray(ids).reshape(-1)
    if X.shape[1] <= 62 and X.dtype.kind in "biuf" and bool(((X == 0) | (X == 1)).all()):
        key = X.astype(np.int64) @ (np.int64(1) << np.arange(X.shape[1] - 1, -1, -1, dtype=np.int64))
        _, first, ids = np.unique(key, return_index=True, return_inverse=True)
        return X[first], np.asarray(ids).reshape(-1)
    rows, ids = np.unique(X, axis=0, return_inverse=True)
    return rows, np.asarray(ids).reshape(-1)


class TabularAttacker(ClassifierMixin, BaseEstimator):
    r"""The smoothed empirical conditional distribution: the Bayes-optimal attacker for discrete inputs.

    Every distinct input row :math:`x` (e.g. a one-hot or multi-hot label
    vector) is a cell; for a single-label target with :math:`K` classes

    .. math::

        \hat P(y = k \mid x) = \frac{n_{x,k} + \alpha}{n_x + K\alpha}

    with the counts :math:`n` of the training data (additive, Laplace
    smoothing). A multi-label (2-D 0/1) target gets one such estimate per
    label column, :math:`\hat P(y_j = 1 \mid x) = (n_{x,j} + \alpha)/(n_x +
    2\alpha)`. Input rows never seen in training get the smoothed training
    marginal. Predicting the class of highest probability is the plug-in
    Bayes classifier; as the counts grow it converges to the optimal attacker
    for any quality function, so no attacker can leak more from a discrete
    input (SPEC §3). Fitting is one ``bincount``: instant at any size.

    Parameters
    ----------
    alpha : float, default 1.0
        Additive smoothing (``>= 0``; 1 is Laplace's rule). It keeps every
        probability positive, hence the cross-entropy finite.

    Attributes
    ----------
    classes_ : ndarray
        Class labels (single-label), or the column indices (multi-label).
    rows_ : ndarray
        The distinct training input rows.
    proba_ : ndarray of shape (n_rows, K)
        Smoothed conditional distribution for each distinct row.
    prior_ : ndarray of shape (K,)
        Smoothed training marginal (for unseen rows).

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import TabularAttacker
    >>> X = np.array([[1, 0]] * 4 + [[0, 1]] * 4)
    >>> y = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    >>> TabularAttacker(alpha=1).fit(X, y).predict_proba([[1, 0], [0, 1]])
    array([[0.66666667, 0.33333333],
           [0.16666667, 0.83333333]])
    """

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "TabularAttacker":
        alpha = self.alpha
        if not isinstance(alpha, numbers.Real) or not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"TabularAttacker: alpha must be a finite number >= 0, got {alpha!r}")
        X = np.asarray(X)
        X = X.reshape(len(X), -1)
        y = np.asarray(y)
        if len(y) != len(X):
            raise ValueError(f"TabularAttacker: X has {len(X)} rows but y has {len(y)}")
        if len(X) == 0:
            raise ValueError("TabularAttacker: cannot fit on 0 rows")
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.rows_, ids = _row_ids(X)
        n_rows = len(self.rows_)
        if y.ndim == 1:
            self.multilabel_ = False
            self.classes_, codes = np.unique(y, return_inverse=True)
            k = len(self.classes_)
            counts = np.bincount(ids * k + codes.reshape(-1), weights=w, minlength=n_rows * k).reshape(n_rows, k)
            totals = counts.sum(axis=1, keepdims=True)
            self.proba_ = (counts + alpha) / (totals + k * alpha)
            marg = counts.sum(axis=0)
            self.prior_ = (marg + alpha) / (marg.sum() + k * alpha)
        elif y.ndim == 2:
            self.multilabel_ = True
            self.classes_ = np.arange(y.shape[1])
            onehot = sparse.csr_matrix(
                (np.ones(len(ids)) if w is None else w, (ids, np.arange(len(ids)))), shape=(n_rows, len(ids))
            )
            pos = np.asarray(onehot @ y.astype(np.float64))
            totals = np.asarray(onehot.sum(axis=1))
            self.proba_ = (pos + alpha) / (totals + 2 * alpha)
            self.prior_ = (pos.sum(axis=0) + alpha) / (totals.sum() + 2 * alpha)
        else:
            raise ValueError(f"TabularAttacker: y must be 1-D (classes) or 2-D (0/1 labels), got {y.ndim}-D")
        if not np.all(np.isfinite(self.proba_)):  # alpha = 0 with zero total weight
            raise ValueError("TabularAttacker: a cell has zero total weight and alpha = 0")
        self.n_features_in_ = X.shape[1]
        return self

    def _lookup(self, X: np.ndarray) -> np.ndarray:
        """Index into ``rows_`` of each row of ``X`` (``-1`` for unseen rows)."""
        X = np.asarray(X).reshape(len(X), -1)
        if X.shape[1] != self.rows_.shape[1]:
            raise ValueError(f"TabularAttacker: X has {X.shape[1]} columns, fitted on {self.rows_.shape[1]}")
        n_seen = len(self.rows_)
        both = np.concatenate([self.rows_.astype(np.result_type(self.rows_, X)), X])
        _, inv = _row_ids(both)
        to_seen = np.full(inv.max() + 1, -1, dtype=np.intp)
        to_seen[inv[:n_seen]] = np.arange(n_seen)
        return to_seen[inv[n_seen:]]

    def predict_proba(self, X: Any) -> np.ndarray:
        idx = self._lookup(np.asarray(X))
        return np.where((idx >= 0)[:, None], self.proba_[idx], self.prior_[None, :])

    def predict(self, X: Any) -> np.ndarray:
        p = self.predict_proba(X)
        if self.multilabel_:
            return (p > 0.5).astype(int)
        return self.classes_[p.argmax(axis=1)]


# --------------------------------------------------------------------------- #
# encoded variables
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class _Variable:
    """One label family (A or T), its prediction, as attacker inputs and targets.

    ``kind`` is ``"single"`` (``y`` = class codes), ``"multi"`` (``y`` = N x K
    0/1 matrix) or ``"continuous"`` (``y`` = float array). ``x`` / ``x_pred``
    are the float attacker inputs of the truth / prediction (soft predictions
    kept); ``y_pred`` is the hard prediction used as an attacker target.
    """

    name: str
    kind: str
    classes: tuple | None
    y: np.ndarray
    x: np.ndarray
    y_pred: np.ndarray | None
    x_pred: np.ndarray | None
    accuracy: np.ndarray | None  # scalar (single) or per column (multi); None: continuous / no prediction
    cache: dict = field(default_factory=dict, repr=False)

    def ids(self, which: str) -> tuple[np.ndarray, int]:
        """Cached distinct-row ids (and their number) of ``"y"`` (= truth input) or ``"x_pred"``."""
        if which not in self.cache:
            if which == "y" and self.kind == "single":
                self.cache[which] = (self.y, self.n_classes)
            else:
                rows, ids = _row_ids(self.y if which == "y" else self.x_pred)
                self.cache[which] = (ids, len(rows))
        return self.cache[which]

    @property
    def n_classes(self) -> int:
        return 0 if self.classes is None else len(self.classes)

    @property
    def discrete(self) -> bool:
        return self.kind != "continuous"

    def features(self, y: np.ndarray) -> np.ndarray:
        """Attacker input matrix for target-form labels ``y`` (one-hot for codes)."""
        if self.kind == "single":
            return _one_hot(y, self.n_classes)
        return np.asarray(y, dtype=np.float64).reshape(len(y), -1)

    def model_errors(self) -> np.ndarray | None:
        """Number of wrong predictions (per column for multi-label)."""
        if self.y_pred is None or self.kind == "continuous":
            return None
        if self.kind == "single":
            return np.array(int((self.y_pred != self.y).sum()))
        return (self.y_pred != self.y).sum(axis=0).astype(np.int64)


def _one_hot(codes: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(codes), k))
    out[np.arange(len(codes)), codes] = 1.0
    return out


def _is_continuous(arr: np.ndarray) -> bool:
    if arr.dtype.kind != "f":
        return False
    finite = arr[np.isfinite(arr)] if arr.size else arr
    if arr.ndim == 1:
        return not np.array_equal(finite, np.round(finite))
    return not bool(((finite == 0) | (finite == 1)).all())


def _encode_variable(truth: Any, pred: Any, name: str, pred_name: str, target_quality: str | None) -> _Variable:
    """Validate and encode one family; ``target_quality`` is set when it is an attacker target."""
    raw, _ = _as_array(truth, name)
    if _is_continuous(raw):
        if target_quality in _CLASSIFICATION_QUALITIES:
            raise ValueError(
                f"{name} has continuous (non-integer) values, but quality={target_quality!r} needs class "
                "labels; use quality='inv_rmse' for a continuous target, or pass class labels"
            )
        _check_finite(raw, name)
        y = raw.astype(np.float64)
        y_pred = x_pred = None
        if pred is not None:
            p, _ = _as_array(pred, pred_name)
            _check_finite(p, pred_name)
            if len(p) != len(y):
                raise ValueError(f"length mismatch: {name} has {len(y)}, {pred_name} has {len(p)} rows")
            if p.shape != y.shape:
                raise ValueError(f"{pred_name} has shape {p.shape} but {name} has shape {y.shape}")
            if not np.issubdtype(p.dtype, np.number):
                raise TypeError(f"{pred_name} must be numeric for a continuous {name}")
            y_pred = p.astype(np.float64)
            x_pred = y_pred.reshape(len(y_pred), -1)
        return _Variable(name, "continuous", None, y, y.reshape(len(y), -1), y_pred, x_pred, None)

    enc = encode_labels({name: truth}, {pred_name: pred}, allow_soft=True)
    m = enc[name]
    check_consistent_length(**{name: m, pred_name: enc.get(pred_name)})
    if m.codes is not None:
        kind, y = "single", m.codes
    elif m.n_classes > 1 and bool((m.dense.sum(axis=1) == 1).all()):
        kind, y = "single", np.asarray(m.dense).argmax(axis=1)  # a 2-D one-hot matrix is single-label
    else:
        kind, y = "multi", np.asarray(m.dense).astype(np.int8)
    y_pred = x_pred = accuracy = None
    if pred_name in enc:
        pm = enc[pred_name]
        if pm.codes is not None:
            y_pred = pm.codes if kind == "single" else pm.to_dense().astype(np.int8)
            x_pred = pm.to_dense()
        else:
            dense = np.asarray(pm.dense, dtype=np.float64)
            x_pred = dense
            if kind == "single":
                y_pred = dense.argmax(axis=1)  # soft or one-hot: the most probable class
            else:
                y_pred = (dense > 0.5).astype(np.int8)  # soft multi-label: threshold at 0.5
        accuracy = (y_pred == y).mean(axis=0)
    x = _one_hot(y, m.n_classes) if kind == "single" else y.astype(np.float64)
    return _Variable(name, kind, m.classes, y, x, y_pred, x_pred, accuracy)


# --------------------------------------------------------------------------- #
# accuracy equalisation
# --------------------------------------------------------------------------- #
def _flip(var: _Variable, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Ground truth with as many random flips as the model has errors (SPEC §3).

    ``round((1 - acc) * N)`` is exactly the model's number of errors, so that
    many rows are drawn without replacement. Single-label: a uniformly drawn
    other class (``1 - y`` when binary); multi-label: per column, with that
    column's own error count. Returns ``(flipped, n_flipped)``.
    """
    errors = var.model_errors()
    y = var.y.copy()
    n = len(y)
    if var.kind == "single":
        m = int(errors)
        k = var.n_classes
        if m == 0 or k < 2:
            return y, 0
        rows = rng.choice(n, size=m, replace=False)
        y[rows] = (y[rows] + rng.integers(1, k, size=m)) % k
        return y, m
    for j, m in enumerate(errors.tolist()):
        if m:
            rows = rng.choice(n, size=m, replace=False)
            y[rows, j] = 1 - y[rows, j]
    return y, int(errors.sum())


# --------------------------------------------------------------------------- #
# attackers
# --------------------------------------------------------------------------- #
def _check_attacker(attacker: Any) -> Any:
    if isinstance(attacker, str):
        if attacker not in _ATTACKERS:
            raise ValueError(f"attacker must be one of {_ATTACKERS} or an estimator instance, got {attacker!r}")
        return attacker
    if isinstance(attacker, type):
        raise TypeError(f"attacker must be an estimator *instance*, got the class {attacker.__name__}")
    if not (hasattr(attacker, "fit") and (hasattr(attacker, "predict") or hasattr(attacker, "predict_proba"))):
        raise TypeError(
            f"attacker must be one of {_ATTACKERS} or a scikit-learn-style estimator with fit/predict, "
            f"got {type(attacker).__name__}"
        )
    if not hasattr(attacker, "get_params"):
        raise TypeError(f"attacker {type(attacker).__name__} cannot be cloned: it has no get_params()")
    return attacker


def _attacker_name(attacker: Any) -> str:
    return attacker if isinstance(attacker, str) else type(attacker).__name__


def _check_quality(quality: Any) -> Any:
    if callable(quality):
        return quality
    if quality not in _QUALITIES:
        raise ValueError(f"quality must be one of {_QUALITIES} or a callable, got {quality!r}")
    return quality


def _quality_name(quality: Any) -> str:
    return quality if isinstance(quality, str) else getattr(quality, "__name__", type(quality).__name__)


def _check_proba_support(attacker: Any, quality: Any) -> None:
    if quality == "inv_ce" and not isinstance(attacker, str) and not hasattr(attacker, "predict_proba"):
        raise ValueError(
            f"attacker {attacker!r} has no predict_proba, which quality='inv_ce' (cross-entropy) needs; "
            "use quality='accuracy' or 'f1', or an estimator with predict_proba"
        )


def _accepts_sample_weight(est: Any) -> bool:
    try:
        return "sample_weight" in inspect.signature(est.fit).parameters
    except (TypeError, ValueError):
        return False


def _builtin(name: str, regression: bool, continuous_input: bool, seed: int) -> Any:
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if name == "tabular":
        if regression:
            raise ValueError("attacker='tabular' needs a discrete target; use 'mlp' or 'logistic' (linear)")
        return TabularAttacker()
    if regression:
        from sklearn.compose import TransformedTargetRegressor

        base = (
            MLPRegressor(hidden_layer_sizes=(_MLP_HIDDEN, _MLP_HIDDEN), solver="lbfgs",
                         max_iter=_MLP_MAX_ITER, random_state=seed)
            if name == "mlp" else LinearRegression()
        )
        return make_pipeline(StandardScaler(), TransformedTargetRegressor(base, transformer=StandardScaler()))
    if name == "mlp":
        est = MLPClassifier(hidden_layer_sizes=(_MLP_HIDDEN, _MLP_HIDDEN), solver="lbfgs",
                            max_iter=_MLP_MAX_ITER, random_state=seed)
    else:
        est = LogisticRegression(max_iter=1000)
    return make_pipeline(StandardScaler(), est) if continuous_input else est


def _make(attacker: Any, regression: bool, continuous_input: bool, seed: int) -> Any:
    if isinstance(attacker, str):
        return _builtin(attacker, regression, continuous_input, seed)
    est = clone(attacker)
    params = est.get_params()
    if "random_state" in params and params["random_state"] is None:
        est.set_params(random_state=seed)
    return est


def _fit(est: Any, x: np.ndarray, y: np.ndarray, compress: bool) -> Any:
    """Fit, silencing ConvergenceWarning; with ``compress``, fit the distinct (x, y) rows weighted by count."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if compress and _accepts_sample_weight(est):
            xy = np.column_stack([x, y.reshape(len(y), -1)])
            rows, ids = _row_ids(xy)
            counts = np.bincount(ids).astype(np.float64)
            xr, yr = rows[:, : x.shape[1]], rows[:, x.shape[1]:]
            yr = yr[:, 0] if y.ndim == 1 else yr
            yr = yr.astype(y.dtype)
            est.fit(xr, yr, sample_weight=counts)
        else:
            est.fit(x, y)
    return est


def _predict_on(est: Any, x: np.ndarray, method: str, discrete_input: bool) -> np.ndarray:
    """``est.<method>(x)``, evaluated once per distinct row for discrete inputs."""
    if discrete_input:
        rows, ids = _row_ids(x)
        out = np.asarray(getattr(est, method)(rows))
        return out[ids]
    return np.asarray(getattr(est, method)(x))


def _class_proba(est: Any, x: np.ndarray, k: int, discrete_input: bool) -> np.ndarray:
    """Probabilities over the classes ``0..k-1`` (one-hot of ``predict`` without ``predict_proba``)."""
    classes = np.asarray(est.classes_) if hasattr(est, "classes_") else None
    if hasattr(est, "predict_proba"):
        p = _predict_on(est, x, "predict_proba", discrete_input)
    else:
        pred = _predict_on(est, x, "predict", discrete_input).astype(np.intp)
        p = np.zeros((len(x), k))
        p[np.arange(len(x)), pred] = 1.0
        return p
    if classes is None or p.shape[1] == k and np.array_equal(classes, np.arange(k)):
        return p
    out = np.zeros((len(x), k))
    out[:, classes.astype(np.intp)] = p
    return out


def _attack(attacker: Any, kind: str, k: int, x_tr, y_tr, x_te, seed: int, discrete_input: bool) -> np.ndarray:
    """Fit on the training split, return probabilities (classification) or predictions on the test split.

    Single-label: an ``(n_test, k)`` matrix over all classes. Multi-label: the
    ``(n_test, k)`` matrix of ``P(y_j = 1)``. Continuous: the predictions.
    """
    n_te = len(x_te)
    builtin = isinstance(attacker, str)
    compress = builtin and discrete_input and attacker != "tabular"
    cont_in = not discrete_input
    if kind == "continuous":
        est = _fit(_make(attacker, True, cont_in, seed), x_tr, y_tr, False)
        pred = _predict_on(est, x_te, "predict", discrete_input)
        return pred.reshape((n_te,) + y_tr.shape[1:])
    if kind == "single":
        present = np.unique(y_tr)
        if len(present) == 1:  # one class in the training split: every attacker predicts it
            p = np.zeros((n_te, k))
            p[:, present[0]] = 1.0
            return p
        est = _fit(_make(attacker, False, cont_in, seed), x_tr, y_tr, compress)
        return _class_proba(est, x_te, k, discrete_input)
    # multi-label
    if builtin and attacker in ("tabular", "mlp") and all(len(np.unique(y_tr[:, j])) == 2 for j in range(k)):
        est = _fit(_make(attacker, False, cont_in, seed), x_tr, y_tr, compress)
        return np.asarray(_predict_on(est, x_te, "predict_proba", discrete_input)).reshape(n_te, k)
    out = np.empty((n_te, k))
    for j in range(k):  # one attacker per label column
        col = y_tr[:, j]
        present = np.unique(col)
        if len(present) == 1:
            out[:, j] = float(present[0])
            continue
        est = _fit(_make(attacker, False, cont_in, seed), x_tr, col, compress)
        out[:, j] = _class_proba(est, x_te, 2, discrete_input)[:, 1]
    return out


def _tabular_fast(ids_tr, y_tr, ids_te, n_ids: int, kind: str, k: int, alpha: float = 1.0) -> np.ndarray:
    """:class:`TabularAttacker` (``alpha=1``) on input-row ids, as one ``bincount``, over all ``k`` classes."""
    n_tr = len(ids_tr)
    seen = np.bincount(ids_tr, minlength=n_ids)
    if kind == "single":
        present = np.bincount(y_tr, minlength=k) > 0
        kk = int(present.sum())  # classes of the training split, as a fitted estimator knows them
        counts = np.bincount(ids_tr * k + y_tr, minlength=n_ids * k).reshape(n_ids, k).astype(np.float64)
        marg = counts.sum(axis=0)
        proba = np.where(present, (counts + alpha) / (seen[:, None] + kk * alpha), 0.0)
        prior = np.where(present, (marg + alpha) / (n_tr + kk * alpha), 0.0)
    else:
        pos = np.zeros((n_ids, k))
        np.add.at(pos, ids_tr, y_tr)
        proba = (pos + alpha) / (seen[:, None] + 2 * alpha)
        prior = (pos.sum(axis=0) + alpha) / (n_tr + 2 * alpha)
    return np.where((seen[ids_te] > 0)[:, None], proba[ids_te], prior[None, :])


# --------------------------------------------------------------------------- #
# quality functions
# --------------------------------------------------------------------------- #
def _score(quality: Any, kind: str, y: np.ndarray, p: np.ndarray) -> float:
    """Quality of attacker output ``p`` against the target ``y`` (>= 0, higher = more leakage)."""
    if callable(quality):
        q = quality(y, p)
        try:
            q = float(q)
        except (TypeError, ValueError):
            raise TypeError(f"quality callable returned {type(q).__name__}, expected a number") from None
        if not np.isfinite(q) or q < 0:
            raise ValueError(f"quality callable returned {q!r}; a quality must be finite and >= 0")
        return q
    if kind == "continuous":
        if quality != "inv_rmse":  # guarded earlier; kept for safety
            raise ValueError(f"quality={quality!r} needs class labels, the target is continuous")
        rmse = float(np.sqrt(np.mean((y.reshape(p.shape) - p) ** 2)))
        return 1.0 / max(rmse, _EPS)
    n = len(y)
    if kind == "single":
        if quality == "inv_ce":
            pt = np.clip(p[np.arange(n), y], _EPS, 1 - _EPS)
            return float(1.0 / -np.mean(np.log(pt)))
        hard = p.argmax(axis=1)
        if quality == "accuracy":
            return float(np.mean(hard == y))
        if quality == "f1":
            return float(f1_score(y, hard, average="macro", zero_division=0))
        onehot = np.zeros_like(p)
        onehot[np.arange(n), y] = 1.0
        rmse = float(np.sqrt(np.mean((onehot - p) ** 2)))
        return 1.0 / max(rmse, _EPS)
    # multi-label: p = P(y_j = 1)
    if quality == "inv_ce":
        pc = np.clip(p, _EPS, 1 - _EPS)
        ce = -np.mean(y * np.log(pc) + (1 - y) * np.log1p(-pc))
        return float(1.0 / ce)
    hard = (p > 0.5).astype(np.int8)
    if quality == "accuracy":
        return float(np.mean(hard == y))
    if quality == "f1":
        return float(f1_score(y, hard, average="macro", zero_division=0))
    rmse = float(np.sqrt(np.mean((y - p) ** 2)))
    return 1.0 / max(rmse, _EPS)


# --------------------------------------------------------------------------- #
# one iteration of one direction (module level: picklable for joblib)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class _Job:
    """Everything one direction needs, shared by all its iterations.

    ``mode="dpa"``: the input ``src`` predicts ``dst`` (dataset side: the
    flipped ``dst`` truth; model side: ``dst``'s prediction).
    ``mode="leakage"``: ``src``'s flipped truth (dataset side) or prediction
    (model side) predicts ``dst``'s truth.
    """

    mode: str
    src: _Variable
    dst: _Variable
    attacker: Any
    quality: Any
    test_size: float
    equalize: bool


def _split(var: _Variable, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train/test row indices, stratified on ``y`` where every class (distinct row) has >= 2 members.

    ``ceil(test_size * n)`` test rows. Stratified: each class gets its share
    (largest remainders; at least one test and one training row), drawn
    uniformly within the class.
    """
    n = len(var.y)
    n_test = int(np.ceil(test_size * n))
    n_test = min(max(n_test, 1), n - 1)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    counts = None
    if var.kind != "continuous":
        ids, n_ids = var.ids("y")
        counts = np.bincount(ids, minlength=n_ids)
        if counts.min() < 2 or len(counts) > min(n_test, n - n_test):  # (an absent class counts 0)
            counts = None
    if counts is None:
        test = np.zeros(n, dtype=bool)
        test[perm[:n_test]] = True
    else:
        share = counts * (n_test / n)
        per_class = np.floor(share).astype(np.int64)
        rest = n_test - per_class.sum()
        if rest > 0:
            per_class[np.argsort(-(share - per_class), kind="stable")[:rest]] += 1
        per_class = np.clip(per_class, 1, counts - 1)
        ids_perm = ids[perm]
        order = np.argsort(ids_perm, kind="stable")  # permuted rows grouped by class
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n) - starts[ids_perm[order]]
        test = np.zeros(n, dtype=bool)
        test[perm] = rank < per_class[ids_perm]
    return np.flatnonzero(~test), np.flatnonzero(test)


def _iteration(job: _Job, state: np.ndarray) -> tuple[float, float, int]:
    """``(psi_data, psi_model, n_flipped)`` of one iteration, from three 32-bit seeds."""
    split_seed, attacker_seed, flip_seed = (int(s) for s in state)
    rng = np.random.default_rng(flip_seed)
    src = job.src
    tabular = isinstance(job.attacker, str) and job.attacker == "tabular"
    if job.mode == "dpa":
        var = job.dst  # the target
        if job.equalize and var.discrete:
            y_data, n_flipped = _flip(var, rng)
        else:
            y_data, n_flipped = var.y, 0
        y_model = var.y_pred
        x_data = x_model = src.x
        ids_data = ids_model = src.ids("y") if tabular else None
        discrete_in = (src.discrete, src.discrete)
    else:  # leakage: src = task (input), dst = attribute (target)
        var = job.dst
        if job.equalize and src.discrete:
            flipped, n_flipped = _flip(src, rng)
        else:
            flipped, n_flipped = src.y, 0
        x_data, x_model = src.features(flipped), src.x_pred
        y_data = y_model = var.y
        if tabular:
            if src.kind == "single":
                ids_data = (flipped, src.n_classes)
            else:
                rows, ids = _row_ids(x_data)
                ids_data = (ids, len(rows))
            ids_model = src.ids("x_pred")
        discrete_in = (src.discrete, src.discrete and _is_hard(x_model))
    tr, te = _split(var, job.test_size, split_seed)
    kind, k = var.kind, var.n_classes
    scores = []
    sides = ((x_data, y_data, discrete_in[0]), (x_model, y_model, discrete_in[1]))
    for side, (x, y, disc) in enumerate(sides):
        if tabular and kind != "continuous":
            ids, n_ids = ids_data if side == 0 else ids_model
            out = _tabular_fast(ids[tr], y[tr], ids[te], n_ids, kind, k)
        else:
            out = _attack(job.attacker, kind, k, x[tr], y[tr], x[te], attacker_seed, disc)
        scores.append(_score(job.quality, kind, y[te], out))
    return scores[0], scores[1], n_flipped


def _is_hard(x: np.ndarray) -> bool:
    return bool(((x == 0) | (x == 1)).all())


def _run_task(job: _Job, state: np.ndarray) -> tuple[float, float, int]:
    return _iteration(job, state)


# --------------------------------------------------------------------------- #
# seeds, parallel loop, progress
# --------------------------------------------------------------------------- #
def _seed_states(random_state: Any, n_iter: int) -> list[np.ndarray]:
    """Six 32-bit seeds per iteration (three per direction), fixed before any dispatch."""
    if isinstance(random_state, np.random.Generator):
        entropy = int(random_state.integers(0, 2**63))
        root = np.random.SeedSequence(entropy)
    elif isinstance(random_state, np.random.SeedSequence):
        root = random_state
    elif random_state is None or (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)
                                  and random_state >= 0):
        root = np.random.SeedSequence(None if random_state is None else int(random_state))
    else:
        raise TypeError(
            f"random_state must be None, a non-negative int, a numpy SeedSequence or Generator, got {random_state!r}"
        )
    return [child.generate_state(6, dtype=np.uint32) for child in root.spawn(n_iter)]


def _check_n_iter(n_iter: Any, level: Any) -> int:
    if not isinstance(n_iter, numbers.Integral) or isinstance(n_iter, bool) or n_iter < 1:
        raise ValueError(f"n_iter must be a positive integer, got {n_iter!r}")
    if level is not None:
        if not isinstance(level, numbers.Real) or not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1) or None (no confidence interval), got {level!r}")
        if n_iter < 2:
            raise ValueError(
                f"n_iter={n_iter}: a confidence interval needs n_iter >= 2; pass level=None to skip the interval"
            )
    return int(n_iter)


def _check_test_size(test_size: Any) -> float:
    if not isinstance(test_size, numbers.Real) or not 0 < test_size < 1:
        raise ValueError(f"test_size must be a fraction in (0, 1), got {test_size!r}")
    return float(test_size)


def _run_all(tasks: list[tuple[_Job, np.ndarray]], n_jobs: Any, progress: bool, desc: str) -> list:
    """Run every (job, seeds) task, in order, sequentially or with joblib."""
    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), desc=desc, unit="fit pair", disable=not progress, leave=False)
    try:
        if n_jobs is None or n_jobs == 1:
            results = []
            for job, state in tasks:
                results.append(_run_task(job, state))
                bar.update()
            return results
        from joblib import Parallel, delayed

        calls = (delayed(_run_task)(job, state) for job, state in tasks)
        try:
            gen = Parallel(n_jobs=n_jobs, return_as="generator")(calls)
        except TypeError:  # joblib < 1.3: no generator output
            out = Parallel(n_jobs=n_jobs)(calls)
            bar.update(len(out))
            return out
        results = []
        for r in gen:
            results.append(r)
            bar.update()
        return results
    finally:
        bar.close()


# --------------------------------------------------------------------------- #
# results
# --------------------------------------------------------------------------- #
def _interval(values: np.ndarray, level: float | None, bounds: tuple[float, float] | None):
    if level is None:
        return None
    low, high = confidence_interval(values, level=level, method="t", bounds=bounds)
    return (low, high)


def _fmt_ci(ci: tuple[float, float] | None, level: float | None) -> str:
    if ci is None:
        return ""
    return f" [{round(100 * level):d}% CI {fmt(ci[0])}, {fmt(ci[1])}]"


def _mean_accuracy(acc: Any) -> float | None:
    if acc is None:
        return None
    return float(np.mean(acc))


@dataclass(frozen=True, eq=False, repr=False)
class DPADirectionResult(ResultMixin):
    """DPA in one direction.

    Attributes
    ----------
    direction : {"A->T", "T->A"}
    value : float
        Mean DPA over the iterations, in [-1, 1].
    std : float
        Sample standard deviation (ddof=1; 0 for one iteration) of the DPA.
    ci : (float, float) or None
        Confidence interval of the mean (t method), clipped to [-1, 1];
        ``None`` when ``level=None``.
    absolute : float
        Mean of the absolute variant :math:`\\Psi_M - \\Psi_D` (DPA App. D,
        the change LA measures), for comparison.
    absolute_std : float
    absolute_ci : (float, float) or None
        Unclipped (the absolute variant is unbounded).
    psi_data, psi_model : float
        Means of :math:`\\Psi_D` and :math:`\\Psi_M`.
    model_accuracy : float, pandas.Series or None
        Accuracy of the predicted variable against its ground truth (T̂ vs T
        for A→T), which the dataset side was equalised to: a number, a Series
        per label for a multi-label variable, ``None`` for a continuous one.
    iterations : pandas.DataFrame
        One row per iteration: ``iteration, psi_data, psi_model, dpa,
        absolute, n_flipped``.
    level : float or None
        Confidence level of ``ci``.
    """

    direction: str
    value: float
    std: float
    ci: tuple[float, float] | None
    absolute: float
    absolute_std: float
    absolute_ci: tuple[float, float] | None
    psi_data: float
    psi_model: float
    model_accuracy: Any
    iterations: pd.DataFrame
    level: float | None

    def __repr__(self) -> str:
        acc = _mean_accuracy(self.model_accuracy)
        acc_s = "" if acc is None else f", model accuracy {acc:.4f}"
        return (
            f"DPA {self.direction} = {fmt(self.value)}{_fmt_ci(self.ci, self.level)} "
            f"(sd {self.std:.4f}; Psi_D {self.psi_data:.4g}, Psi_M {self.psi_model:.4g}; "
            f"absolute {fmt(self.absolute)}{acc_s}; {len(self.iterations)} iterations)"
        )


@dataclass(frozen=True, eq=False, repr=False)
class DPAResult(ResultMixin):
    """Result of :func:`dpa`.

    Attributes
    ----------
    a_to_t, t_to_a : DPADirectionResult or None
        The two directions; ``None`` where the needed prediction was not given.
    attacker : str
        The attacker's name (built-in name or estimator class).
    quality : str
        The quality function's name.
    n_iter : int
    test_size : float
    equalized : bool
        Whether accuracy equalisation was applied (off for continuous targets).
    """

    a_to_t: DPADirectionResult | None
    t_to_a: DPADirectionResult | None
    attacker: str
    quality: str
    n_iter: int
    test_size: float
    equalized: bool

    def to_frame(self) -> pd.DataFrame:
        """Both directions' per-iteration tables stacked, with a ``direction`` column."""
        parts = [d.iterations.assign(direction=d.direction) for d in (self.a_to_t, self.t_to_a) if d is not None]
        return pd.concat(parts, ignore_index=True)

    def __repr__(self) -> str:
        lines = [f"DPAResult(attacker={self.attacker!r}, quality={self.quality!r}, n_iter={self.n_iter},"]
        for d in (self.a_to_t, self.t_to_a):
            if d is not None:
                lines.append(f"  {d!r},")
        lines[-1] = lines[-1].rstrip(",") + ")"
        return "\n".join(lines)


@dataclass(frozen=True, eq=False, repr=False)
class LeakageResult(ResultMixin):
    """Result of :func:`leakage_amplification`.

    Attributes
    ----------
    value : float
        Mean LA :math:`= \\lambda_M - \\lambda_D` over the iterations.
    std : float
        Sample standard deviation (ddof=1) over iterations.
    ci : (float, float) or None
        Confidence interval of the mean (t method); clipped to [-1, 1] for the
        bounded qualities ``"accuracy"`` and ``"f1"``.
    lambda_data, lambda_model : float
        Means of the dataset leakage :math:`\\lambda_D` and model leakage
        :math:`\\lambda_M`.
    model_accuracy : float, pandas.Series or None
        Accuracy of T̂ against T (the dataset side was equalised to it).
    iterations : pandas.DataFrame
        ``iteration, lambda_data, lambda_model, leakage, n_flipped``.
    attacker, quality : str
    level : float or None
    """

    value: float
    std: float
    ci: tuple[float, float] | None
    lambda_data: float
    lambda_model: float
    model_accuracy: Any
    iterations: pd.DataFrame
    attacker: str
    quality: str
    level: float | None

    def __repr__(self) -> str:
        acc = _mean_accuracy(self.model_accuracy)
        acc_s = "" if acc is None else f", model accuracy {acc:.4f}"
        return (
            f"LeakageResult(LA = {fmt(self.value)}{_fmt_ci(self.ci, self.level)} (sd {self.std:.4f}; "
            f"lambda_D {self.lambda_data:.4g}, lambda_M {self.lambda_model:.4g}{acc_s}; "
            f"attacker={self.attacker!r}, quality={self.quality!r}, {len(self.iterations)} iterations))"
        )


def _std(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) if len(x) > 1 else 0.0


def _accuracy_field(var: _Variable) -> Any:
    if var.accuracy is None:
        return None
    if var.kind == "multi":
        return pd.Series(var.accuracy, index=list(var.classes), name="accuracy")
    return float(var.accuracy)


def _direction_result(direction: str, runs: list, var: _Variable, level: float | None) -> DPADirectionResult:
    psi_d = np.array([r[0] for r in runs], dtype=np.float64)
    psi_m = np.array([r[1] for r in runs], dtype=np.float64)
    total = psi_m + psi_d
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total > 0, (psi_m - psi_d) / np.where(total > 0, total, 1.0), 0.0)
    ratio = np.clip(ratio, -1.0, 1.0)
    absolute = psi_m - psi_d
    table = pd.DataFrame({
        "iteration": np.arange(len(runs)),
        "psi_data": psi_d,
        "psi_model": psi_m,
        "dpa": ratio,
        "absolute": absolute,
        "n_flipped": np.array([r[2] for r in runs], dtype=np.int64),
    })
    return DPADirectionResult(
        direction=direction,
        value=float(ratio.mean()),
        std=_std(ratio),
        ci=_interval(ratio, level, (-1.0, 1.0)),
        absolute=float(absolute.mean()),
        absolute_std=_std(absolute),
        absolute_ci=_interval(absolute, level, None),
        psi_data=float(psi_d.mean()),
        psi_model=float(psi_m.mean()),
        model_accuracy=_accuracy_field(var),
        iterations=table,
        level=level,
    )


# --------------------------------------------------------------------------- #
# public functions
# --------------------------------------------------------------------------- #
def _common_checks(attacker, quality, n_iter, level, test_size):
    attacker = _check_attacker(attacker)
    quality = _check_quality(quality)
    _check_proba_support(attacker, quality)
    n_iter = _check_n_iter(n_iter, level)
    test_size = _check_test_size(test_size)
    return attacker, quality, n_iter, test_size


def dpa(
    attr: Any,
    task: Any,
    *,
    attr_pred: Any = None,
    task_pred: Any = None,
    attacker: Any = "mlp",
    quality: Any = "inv_ce",
    n_iter: int = 10,
    random_state: Any = None,
    level: float | None = 0.95,
    test_size: float = 0.2,
    equalize: bool = True,
    n_jobs: int | None = None,
    progress: bool | None = None,
) -> DPAResult:
    r"""Directional Predictability Amplification, DPA (Tokas, Nair & Kerner 2025), both directions.

    An attacker :math:`f` learns to predict one variable from the other; its
    quality :math:`Q` on a held-out split measures predictability:

    .. math::

        \Psi^D_A = Q\big(f_A^{T}(A),\, T'\big),\quad
        \Psi^M_A = Q\big(f_A^{\hat T}(A),\, \hat T\big),\quad
        \mathrm{DPA}_{A\rightarrow T} = \frac{\Psi^M_A - \Psi^D_A}{\Psi^M_A + \Psi^D_A} \in [-1, 1]

    and symmetrically :math:`\Psi^D_T = Q(f_T^{A}(T), A')`,
    :math:`\Psi^M_T = Q(f_T^{\hat A}(T), \hat A)` for T→A. :math:`T'`
    (:math:`A'`) is the ground truth with random flips that bring its
    agreement with the truth down to the model's accuracy (accuracy
    equalisation, so prediction errors are not read as bias).

    Parameters
    ----------
    attr : labels of shape (n,) or (n, K_A)
        Ground truth of the protected attribute A (any input kind of SPEC §0),
        or continuous values (for ``quality="inv_rmse"``).
    task : labels of shape (n,) or (n, K_T)
        Ground truth of the task T, on the same rows.
    attr_pred : labels, optional
        The model's Â (hard, or probabilities). Needed for T→A.
    task_pred : labels, optional
        The model's T̂ (hard, or probabilities). Needed for A→T.
    attacker : {"mlp", "logistic", "tabular"} or estimator, default "mlp"
        ``"mlp"``: scikit-learn ``MLPClassifier`` with two hidden layers of 32
        units (ReLU, L-BFGS, up to 500 iterations, seeded); ``"logistic"``:
        ``LogisticRegression`` (``LinearRegression`` for a continuous target);
        ``"tabular"``: :class:`TabularAttacker`, the Bayes-optimal attacker for
        discrete inputs. An estimator instance is cloned for every fit (its
        ``random_state``, when ``None``, is set to the iteration's seed).
    quality : {"inv_ce", "accuracy", "f1", "inv_rmse"} or callable, default "inv_ce"
        ``"inv_ce"``: 1 / cross-entropy (the paper's choice; probabilities are
        clipped to ``[1e-15, 1 - 1e-15]``, so it is finite); ``"accuracy"``;
        ``"f1"``: macro F1; ``"inv_rmse"``: 1 / RMSE (of the probabilities
        against the one-hot truth for a discrete target; RMSE floored at
        ``1e-15``). A callable gets ``(y_true, y_score)`` (class codes or 0/1
        matrix, and the ``(n, K)`` probability matrix; targets and predictions
        for a continuous target) and must return a finite number ``>= 0``.
    n_iter : int, default 10
        Number of iterations (flips, split and attacker seed redrawn each time).
    random_state : None, int, numpy SeedSequence or Generator
        Seed; a given value makes the result reproducible for any ``n_jobs``.
    level : float or None, default 0.95
        Confidence level of ``ci``; ``None`` skips the interval (and allows
        ``n_iter=1``).
    test_size : float, default 0.2
        Held-out fraction on which each attacker is scored.
    equalize : bool, default True
        Apply accuracy equalisation (ignored for a continuous target).
    n_jobs : int or None, default None
        Run the iterations in parallel with joblib (``-1``: all cores). The
        result does not depend on it.
    progress : bool or None, default None
        Show a progress bar; ``None``: only when stderr is a terminal.

    Returns
    -------
    DPAResult
        ``.a_to_t`` and ``.t_to_a`` (``None`` for a direction whose prediction
        was not given), each with ``.value``, ``.std``, ``.ci``, the absolute
        variant ``.absolute`` and the per-iteration table ``.iterations``.

    Raises
    ------
    ValueError
        Neither prediction given; bad labels (see :mod:`biasamp.labels`); a
        continuous target with a classification quality; an estimator without
        ``predict_proba`` with ``quality="inv_ce"``; ``n_iter < 2`` with a
        confidence interval; an unknown attacker or quality.
    TypeError
        An attacker that is not an estimator instance, or a bad
        ``random_state``.

    See Also
    --------
    leakage_amplification : the non-directional, absolute predecessor (LA).
    biasamp.bias_amp_directional : the co-occurrence directional metric BA→.

    Notes
    -----
    * **Accuracy equalisation** (SPEC §3): with acc the model's accuracy of the
      predicted variable against its ground truth (T̂ vs T for A→T), a random
      ``round((1 - acc) * N)`` rows — exactly the model's number of errors —
      are flipped, without replacement: a binary label becomes ``1 - y``, a
      multi-class label a uniformly drawn other class; a 2-D multi-label
      indicator (rows not all one-hot) is flipped per column with that
      column's error count. Redrawn every iteration. A 2-D one-hot matrix is
      read as single-label.
    * Within one iteration the dataset-side and model-side attackers share the
      train/test split and the attacker seed, so perfect predictions give
      exactly 0. The split is stratified on the target's ground truth when
      every class (distinct label row) has at least two members.
    * **Soft predictions**: the attacker target is the hard prediction (the
      most probable class; for multi-label, probability > 0.5), and the
      accuracy is that of the hard prediction.
    * **Multi-label targets**: ``"mlp"`` and ``"tabular"`` predict all label
      columns at once (one sigmoid output / one smoothed rate per column);
      ``"logistic"`` and estimator instances are fitted once per column.
      Qualities average over the columns (binary cross-entropy per entry,
      per-entry accuracy, macro F1 over labels).
    * The built-in attackers fit the distinct (input, target) rows of a
      discrete input weighted by their counts, which is the same objective
      as fitting every row (L-BFGS is full-batch) and much faster.
      ``ConvergenceWarning`` is silenced: a fixed iteration budget is part of
      the attacker's definition.
    * ``DPA = 0`` when :math:`\Psi_M + \Psi_D = 0` (no predictability at
      all on either side). With ``"inv_ce"``, an attacker with no information
      still has :math:`Q = 1/H > 0` (:math:`1/\ln 2` for a balanced binary
      target), so DPA values are compressed compared with ``"accuracy"``.
    * The absolute variant :math:`\Psi_M - \Psi_D` (App. D) is reported in
      ``.absolute`` for comparison; it is not bounded and depends more on the
      attacker's capacity.

    References
    ----------
    .. [1] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure
       bias amplification in classification datasets". NeurIPS 2025, Eq. 1-6,
       §3.1, App. D.
    .. [2] T. Wang et al. "Balanced Datasets Are Not Enough". ICCV 2019
       (accuracy equalisation).

    Examples
    --------
    A balanced dataset (BA→ reports 0 here) and a model whose task errors all
    push towards an association with the attribute:

    >>> import numpy as np
    >>> from biasamp import dpa
    >>> attr = np.repeat([0, 0, 1, 1], 250)
    >>> task = np.tile(np.repeat([0, 1], 250), 2)
    >>> task_pred = task.copy()
    >>> task_pred[250:350] = 0          # group 0: 100 positives predicted 0
    >>> task_pred[500:600] = 1          # group 1: 100 negatives predicted 1
    >>> res = dpa(attr, task, task_pred=task_pred, attacker="tabular",
    ...           n_iter=5, random_state=0, progress=False)
    >>> res.a_to_t.value > 0, res.t_to_a is None
    (True, True)
    """
    if attr_pred is None and task_pred is None:
        raise ValueError("give task_pred (for A->T) and/or attr_pred (for T->A); neither was given")
    attacker, quality, n_iter, test_size = _common_checks(attacker, quality, n_iter, level, test_size)
    q_for = quality if isinstance(quality, str) else None
    a = _encode_variable(attr, attr_pred, "attr", "attr_pred", q_for if attr_pred is not None else None)
    t = _encode_variable(task, task_pred, "task", "task_pred", q_for if task_pred is not None else None)
    _check_lengths(a, t)
    if attacker == "tabular":
        for var, pred in ((a, task_pred), (t, attr_pred)):
            if pred is not None and not var.discrete:
                raise ValueError(
                    f"attacker='tabular' needs a discrete input, but {var.name} is continuous; use 'mlp' or 'logistic'"
                )
    jobs = []
    if task_pred is not None:
        jobs.append(("A->T", _Job("dpa", a, t, attacker, quality, test_size, equalize), 0, t))
    if attr_pred is not None:
        jobs.append(("T->A", _Job("dpa", t, a, attacker, quality, test_size, equalize), 3, a))
    states = _seed_states(random_state, n_iter)
    tasks = [(job, st[off:off + 3]) for st in states for (_, job, off, _) in jobs]
    runs = _run_all(tasks, n_jobs, show_progress(progress), "DPA")
    out: dict[str, DPADirectionResult] = {}
    for j, (direction, _, _, var) in enumerate(jobs):
        out[direction] = _direction_result(direction, runs[j::len(jobs)], var, level)
    targets = [var for (_, _, _, var) in jobs]
    return DPAResult(
        a_to_t=out.get("A->T"),
        t_to_a=out.get("T->A"),
        attacker=_attacker_name(attacker),
        quality=_quality_name(quality),
        n_iter=n_iter,
        test_size=test_size,
        equalized=bool(equalize) and any(v.discrete for v in targets),
    )


def _check_lengths(a: _Variable, t: _Variable) -> int:
    lengths = {"attr": len(a.y), "task": len(t.y)}
    if a.y_pred is not None:
        lengths["attr_pred"] = len(a.y_pred)
    if t.y_pred is not None:
        lengths["task_pred"] = len(t.y_pred)
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"length mismatch: {desc} rows")
    n = lengths["attr"]
    if n < 4:
        raise ValueError(f"need at least 4 rows to split into attacker train/test sets, got {n}")
    return n


def leakage_amplification(
    attr: Any,
    task: Any,
    task_pred: Any,
    *,
    attacker: Any = "mlp",
    quality: Any = "accuracy",
    n_iter: int = 10,
    random_state: Any = None,
    level: float | None = 0.95,
    test_size: float = 0.2,
    equalize: bool = True,
    n_jobs: int | None = None,
    progress: bool | None = None,
) -> LeakageResult:
    r"""Leakage amplification LA (Wang et al. 2019): how much more A leaks from T̂ than from T.

    .. math::

        \lambda_D = Q\big(f^{A}(T'),\, A\big),\qquad
        \lambda_M = Q\big(f^{A}(\hat T),\, A\big),\qquad
        \mathrm{LA} = \lambda_M - \lambda_D

    where the attacker :math:`f^A` predicts the protected attribute and
    :math:`T'` is the task ground truth with random flips down to the
    model's task accuracy (accuracy equalisation, as in :func:`dpa`).

    Parameters
    ----------
    attr : labels of shape (n,) or (n, K_A)
        Ground truth of the protected attribute A (the attacker's target).
    task : labels of shape (n,) or (n, K_T)
        Ground truth of the task T.
    task_pred : labels
        The model's T̂: hard labels or probabilities; probabilities are fed
        to the model-side attacker as they are (the accuracy uses the hard
        prediction).
    attacker, quality, n_iter, random_state, level, test_size, equalize, n_jobs, progress
        As in :func:`dpa`; the default quality is ``"accuracy"`` (Wang et al.).

    Returns
    -------
    LeakageResult
        ``.value`` (mean LA), ``.std``, ``.ci``, ``.iterations``.

    Raises
    ------
    ValueError, TypeError
        As in :func:`dpa`.

    See Also
    --------
    dpa : the directional, relative (bounded) successor.

    Notes
    -----
    LA is not directional and measures an absolute change, so it depends on
    the dataset's own leakage and on the attacker's capacity (DPA §3.2).
    Both attackers of one iteration share the split (stratified on A) and the
    seed. The CI is clipped to [-1, 1] for ``"accuracy"`` and ``"f1"``.

    References
    ----------
    .. [1] T. Wang, J. Zhao, M. Yatskar, K.-W. Chang, V. Ordonez. "Balanced
       Datasets Are Not Enough: Estimating and Mitigating Gender Bias in Deep
       Image Representations". ICCV 2019.
    .. [2] B. Tokas, R. Nair, H. Kerner. "DPA". NeurIPS 2025, §2 and §3.2.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import leakage_amplification
    >>> attr = np.repeat([0, 1], 500)
    >>> task = np.tile([0, 1], 500)              # independent of attr
    >>> res = leakage_amplification(attr, task, attr, attacker="tabular",
    ...                             n_iter=3, random_state=0, progress=False)
    >>> res.lambda_model, 0.4 < res.value < 0.6   # T̂ = A leaks A completely
    (1.0, True)
    """
    if task_pred is None:
        raise ValueError("task_pred is None; leakage amplification needs the model's task predictions")
    attacker, quality, n_iter, test_size = _common_checks(attacker, quality, n_iter, level, test_size)
    q_for = quality if isinstance(quality, str) else None
    a = _encode_variable(attr, None, "attr", "attr_pred", q_for)
    t = _encode_variable(task, task_pred, "task", "task_pred", None)
    _check_lengths(a, t)
    if attacker == "tabular" and not t.discrete:
        raise ValueError("attacker='tabular' needs a discrete input, but task is continuous; use 'mlp' or 'logistic'")
    job = _Job("leakage", t, a, attacker, quality, test_size, equalize)
    states = _seed_states(random_state, n_iter)
    runs = _run_all([(job, st[0:3]) for st in states], n_jobs, show_progress(progress), "leakage")
    lam_d = np.array([r[0] for r in runs], dtype=np.float64)
    lam_m = np.array([r[1] for r in runs], dtype=np.float64)
    la = lam_m - lam_d
    bounded = quality in ("accuracy", "f1")
    table = pd.DataFrame({
        "iteration": np.arange(n_iter),
        "lambda_data": lam_d,
        "lambda_model": lam_m,
        "leakage": la,
        "n_flipped": np.array([r[2] for r in runs], dtype=np.int64),
    })
    return LeakageResult(
        value=float(la.mean()),
        std=_std(la),
        ci=_interval(la, level, (-1.0, 1.0) if bounded else None),
        lambda_data=float(lam_d.mean()),
        lambda_model=float(lam_m.mean()),
        model_accuracy=_accuracy_field(t),
        iterations=table,
        attacker=_attacker_name(attacker),
        quality=_quality_name(quality),
        level=level,
    )
