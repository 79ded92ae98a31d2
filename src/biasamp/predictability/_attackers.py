"""Attackers of the predictability metrics (DPA, LA): built-in, user estimators, and the ``"auto"`` choice.

* :class:`TabularAttacker`: the smoothed empirical conditional distribution,
  Bayes-optimal for discrete inputs, one ``bincount`` at any size.
* ``"mlp_es"``: :class:`EarlyStoppedMLP`, the papers' two-hidden-layer MLP
  fitted by L-BFGS on the distinct weighted rows of a discrete input, stopped
  when the log-loss on a held-out tenth of the attacker's training rows stops
  improving; its cost is bounded (at most ``max_rows`` fitting rows and
  ``max_iter`` L-BFGS iterations).
* :func:`choose_attacker`: the ``"auto"`` rule, per direction.
* :func:`single_threaded`: every fit runs with BLAS/OpenMP limited to one
  thread, so that results are bit-identical whatever the thread settings.
"""

from __future__ import annotations

import inspect
import numbers
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning

from biasamp._core.labels import _check_finite, check_features, to_numpy

_ATTACKERS = ("auto", "mlp", "mlp_es", "logistic", "tabular")
_MLP_HIDDEN = 32
_MLP_MAX_ITER = 500

# "auto": the tabular attacker when at most _AUTO_MAX_RARE of the rows have an input row seen
# fewer than _AUTO_MIN_CELL times (the per-cell estimates are then reliable), else "mlp_es".
_AUTO_MIN_CELL = 10
_AUTO_MAX_RARE = 0.05


# --------------------------------------------------------------------------- #
# thread limits
# --------------------------------------------------------------------------- #
@contextmanager
def single_threaded() -> Iterator[None]:
    """BLAS and OpenMP limited to one thread (threadpoolctl), and PyTorch's intra-op pool when loaded.

    A floating-point reduction split over threads sums in an order that
    depends on the number of threads, so an attacker fitted under different
    thread settings ends a few ulps apart and, through L-BFGS, sometimes far
    apart. One thread per fit fixes the order; parallelism comes from running
    iterations in separate processes instead.
    """
    # the built-in attackers' native libraries, loaded before the limit
    import sklearn.linear_model
    import sklearn.neural_network  # noqa: F401
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    with threadpool_limits(limits=1):
        before = None
        if torch is not None and hasattr(torch, "get_num_threads"):
            before = torch.get_num_threads()
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if torch is not None and before is not None:
                torch.set_num_threads(before)


# --------------------------------------------------------------------------- #
# the tabular (Bayes-optimal) attacker
# --------------------------------------------------------------------------- #
def _factorize(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, ids)``: the first position of each distinct key (in sorted key order) and each key's id.

    Non-negative integer keys of a small range take a dense table (a
    ``bincount`` and a ``cumsum``, no sort); anything else ``np.unique``.
    """
    keys = np.asarray(keys).reshape(-1)
    n = len(keys)
    if n and keys.dtype.kind in "biu" and int(keys.min()) >= 0 and int(keys.max()) < max(1 << 16, 4 * n):
        keys = keys.astype(np.intp, copy=False)
        present = np.bincount(keys) > 0
        ids = (np.cumsum(present) - 1)[keys]
        first = np.full(int(present.sum()), n, dtype=np.intp)
        np.minimum.at(first, ids, np.arange(n))
        return first, ids
    _, first, ids = np.unique(keys, return_index=True, return_inverse=True)
    return first, np.asarray(ids).reshape(-1)


def _row_ids(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``X`` (in lexicographic order) and the id of each row.

    One column is factorized directly. 0/1 rows of any width are packed into
    bytes (first column most significant, so the order stays lexicographic):
    up to 8 bytes make one integer key, more a ``lexsort`` over 64-bit words.
    Anything else takes the row-wise ``np.unique``.
    """
    X = np.asarray(X)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    n = len(X)
    if X.shape[1] == 1:
        first, ids = _factorize(X[:, 0])
        return X[first], ids
    if n and X.dtype.kind in "biuf" and _is_binary(X):
        packed = np.packbits(X != 0, axis=1)
        if packed.shape[1] <= 8:  # one integer key: the bytes, big-endian
            key = np.zeros(n, dtype=np.uint64)
            for b in range(packed.shape[1]):
                key = (key << np.uint64(8)) | packed[:, b]
            first, ids = _factorize(key)
            return X[first], ids
        pad = -packed.shape[1] % 8
        if pad:
            packed = np.concatenate([packed, np.zeros((n, pad), dtype=np.uint8)], axis=1)
        words = np.ascontiguousarray(packed).view(">u8")  # big-endian: byte 0 most significant
        order = np.lexsort(words.T[::-1])  # stable: the first row of each group is its first occurrence
        ordered = words[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
        ids = np.empty(n, dtype=np.intp)
        ids[order] = np.cumsum(new) - 1
        return X[order[new]], ids
    rows, ids = np.unique(X, axis=0, return_inverse=True)
    return rows, np.asarray(ids).reshape(-1)


def _is_binary(x: np.ndarray) -> bool:
    return bool(((x == 0) | (x == 1)).all())


def _dense_features(X: Any) -> np.ndarray:
    """``check_features`` of a dense input; sparse input is refused by name (the cells are dense rows)."""
    if sparse.issparse(X):
        raise TypeError("X: sparse input is not supported by TabularAttacker (its cells are the distinct dense "
                        "rows); pass X.toarray()")
    return check_features(X, "X")


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
    input. Fitting is one ``bincount``: instant at any size.

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

    Notes
    -----
    With :math:`\\alpha \\to 0` and every cell seen, the estimate is the
    empirical :math:`P(y \\mid x)`, whose arg-max is the Bayes classifier of
    the empirical distribution.

    References
    ----------
    .. [1] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure
       bias amplification in classification datasets". NeurIPS 2025 (the
       attacker model of Eq. 1-6).

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

    # fitted attributes: set by fit (absent before it, which is how scikit-learn's check_is_fitted tells)
    rows_: np.ndarray  # the distinct rows of X seen in fit
    multilabel_: bool
    classes_: np.ndarray
    proba_: np.ndarray  # smoothed P(y | row), one row per entry of rows_
    prior_: np.ndarray  # smoothed P(y), for unseen rows
    n_features_in_: int

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha

    #: scikit-learn's ``check_estimator`` checks that do not apply, with the reason (tested in
    #: tests/test_attackers.py): the house rule names the argument in every error, and a 1-D input is one
    #: feature column (a 1-D label vector is the common attacker input), not a mistake to reshape.
    _sklearn_checks_not_applying = {
        "check_complex_data": "complex X raises a ValueError naming X, in biasamp's words, not scikit-learn's",
        "check_dtype_object": "object X of non-numbers raises a ValueError naming X, in biasamp's words",
        "check_estimators_empty_data_messages": "X with no columns raises a ValueError naming X, in biasamp's "
                                                "words, not scikit-learn's",
        "check_fit1d": "a 1-D X is one feature column by design (a 1-D label vector), not an error",
        "check_supervised_y_2d": "a 2-D y is a multi-label 0/1 matrix by design (one column, one label), not a "
                                 "column vector to ravel with a DataConversionWarning",
        "check_fit2d_predict1d": "a 1-D X is one feature column by design; predicting it on a model fitted on "
                                 "several columns raises a ValueError naming the feature counts",
    }

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> TabularAttacker:
        alpha = self.alpha
        if not isinstance(alpha, numbers.Real) or not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"TabularAttacker: alpha must be a finite number >= 0, got {alpha!r}")
        if y is None:
            raise ValueError("TabularAttacker requires y to be passed, but the target y is None")
        X = _dense_features(X)
        y = to_numpy(y, "y")
        if y.ndim not in (1, 2):
            raise ValueError(f"TabularAttacker: y must be 1-D (classes) or 2-D (0/1 labels), got {y.ndim}-D")
        if len(y) != len(X):
            raise ValueError(f"TabularAttacker: X has {len(X)} rows but y has {len(y)}")
        _check_finite(y, "y")
        if y.ndim == 1 and y.dtype.kind == "f" and not np.array_equal(y, np.round(y)):
            raise ValueError("TabularAttacker: Unknown label type: y is continuous; the tabular attacker needs "
                             "class labels (use the 'mlp_es', 'mlp' or 'logistic' attacker for a continuous target)")
        w = None
        if sample_weight is not None:
            w = check_features(sample_weight, "sample_weight").reshape(-1).astype(np.float64)
            if len(w) != len(X) or (w < 0).any():
                raise ValueError(f"sample_weight must hold {len(X)} non-negative finite weights, one per row of X")
            if not (w > 0).any():
                raise ValueError("sample_weight: every weight is zero, so there is nothing to fit")
            if not (w > 0).all():
                # a weight-0 row is no observation: it must not become a known cell (nor add a class's
                # count); the class list still comes from every row, as for scikit-learn's classifiers
                keep = w > 0
                classes_from = y
                X, y, w = X[keep], y[keep], w[keep]
            else:
                classes_from = y
        else:
            classes_from = y
        self.rows_, ids = _row_ids(X)
        n_rows = len(self.rows_)
        if y.ndim == 1:
            self.multilabel_ = False
            self.classes_ = np.unique(classes_from)
            codes = np.searchsorted(self.classes_, y)
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
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"TabularAttacker: X has {X.shape[1]} features, but TabularAttacker is expecting "
                             f"{self.n_features_in_} features as input")
        n_seen = len(self.rows_)
        both = np.concatenate([self.rows_.astype(np.result_type(self.rows_, X)), X])
        _, inv = _row_ids(both)
        to_seen = np.full(inv.max() + 1, -1, dtype=np.intp)
        to_seen[inv[:n_seen]] = np.arange(n_seen)
        return to_seen[inv[n_seen:]]

    def predict_proba(self, X: Any) -> np.ndarray:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, ("rows_", "proba_"))
        idx = self._lookup(_dense_features(X))
        return np.where((idx >= 0)[:, None], self.proba_[idx], self.prior_[None, :])

    def predict(self, X: Any) -> np.ndarray:
        p = self.predict_proba(X)
        if self.multilabel_:
            return (p > 0.5).astype(int)
        return self.classes_[p.argmax(axis=1)]


# --------------------------------------------------------------------------- #
# the two-layer MLP with early stopping (bounded cost)
# --------------------------------------------------------------------------- #
def _pair_ids(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Id of each distinct (x, y) row (lexicographic order) and the first row holding each."""
    _, ids_x = _row_ids(x)
    rows_y, ids_y = _row_ids(y)
    first, ids = _factorize(ids_x.astype(np.int64) * len(rows_y) + ids_y)
    return ids, first


def _compress(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (x, y) rows and their counts (as weights): the same weighted objective, fewer rows."""
    ids, first = _pair_ids(x, y)
    return x[first], y[first], np.bincount(ids).astype(np.float64)


class EarlyStoppedMLP(BaseEstimator):
    """Two hidden layers (ReLU), L-BFGS, stopped on a held-out log-loss: the ``"mlp_es"`` attacker.

    The network of the ``"mlp"`` attacker (and of the papers) trained the way
    a network is trained when its held-out quality matters: a tenth of the
    training rows is held out (drawn with ``random_state``), and the held-out
    loss (log-loss; squared error for a regressor) is checked after
    ``check_every``, ``2 check_every``, ``4 check_every``, ... L-BFGS
    iterations (doubling, capped at ``max_iter``); the weights with the lowest
    held-out loss are kept once ``patience`` checks in a row bring no
    improvement. Each check is one *uninterrupted* L-BFGS run of that many
    iterations from the same initialisation (L-BFGS is deterministic, so it
    is exactly the state one long run passes through): the kept weights are
    those of a single uninterrupted run stopped there, never of an optimizer
    restarted without its curvature memory. What it trades: the checks are
    at doubling iteration counts (coarser than every ``check_every``), and
    the work is at most about twice one run of the final length. L-BFGS to
    convergence overfits sparse high-dimensional inputs (on COCO's 79 object
    labels its held-out cross-entropy is worse than chance's).

    Bounded cost: a 0/1 input is fitted on its distinct (input, target) rows
    weighted by their counts (the same objective); at most ``max_rows``
    fitting rows (a uniform sample of the training rows beyond that) and
    ``max_iter`` L-BFGS iterations. A continuous input is standardised.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default (32, 32)
    regression : bool, default False
        A regressor (continuous target) instead of a classifier.
    alpha : float, default 1e-4
        L2 penalty.
    validation_fraction : float, default 0.1
    check_every : int, default 10
    patience : int, default 2
    max_iter : int, default 200
    max_rows : int, default 50000
    random_state : int or None

    Attributes
    ----------
    net_ : MLPClassifier or MLPRegressor
        The network of the kept check.
    n_iter_ : int
        Its number of L-BFGS iterations (one uninterrupted run).
    fit_rows_ : ndarray
        The training rows it was fitted on (the rest were held out).
    """

    # fitted attributes: set by fit
    binary_input_: bool
    x_mean_: float | np.ndarray  # 0.0 and 1.0 for a 0/1 input (not standardised), else per column
    x_scale_: float | np.ndarray
    y_mean_: np.ndarray
    y_scale_: np.ndarray
    fit_rows_: np.ndarray
    net_: Any
    n_iter_: int
    classes_: np.ndarray
    n_features_in_: int

    def __init__(self, hidden_layer_sizes: tuple = (_MLP_HIDDEN, _MLP_HIDDEN), regression: bool = False,
                 alpha: float = 1e-4, validation_fraction: float = 0.1, check_every: int = 10, patience: int = 2,
                 max_iter: int = 200, max_rows: int = 50_000, random_state: Any = None):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.regression = regression
        self.alpha = alpha
        self.validation_fraction = validation_fraction
        self.check_every = check_every
        self.patience = patience
        self.max_iter = max_iter
        self.max_rows = max_rows
        self.random_state = random_state

    def _network(self, max_iter: int, seed: int | np.integer) -> Any:
        from sklearn.neural_network import MLPClassifier, MLPRegressor

        cls = MLPRegressor if self.regression else MLPClassifier
        return cls(hidden_layer_sizes=tuple(self.hidden_layer_sizes), solver="lbfgs", alpha=self.alpha,
                   max_iter=max_iter, random_state=seed)

    def _loss(self, net: Any, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
        if self.regression:
            per_row = (net.predict(x).reshape(len(x), -1) - y.reshape(len(y), -1)) ** 2
            per_row = per_row.mean(axis=1)
        else:
            p = np.clip(net.predict_proba(x), 1e-15, 1 - 1e-15)
            if y.ndim == 2:
                per_row = -(y * np.log(p) + (1 - y) * np.log1p(-p)).mean(axis=1)
            else:
                col = np.searchsorted(net.classes_, y)
                known = (col < len(net.classes_)) & (net.classes_[np.minimum(col, len(net.classes_) - 1)] == y)
                per_row = -np.log(np.where(known, p[np.arange(len(y)), np.minimum(col, p.shape[1] - 1)], 1e-15))
        return float(np.dot(w, per_row) / w.sum())

    def fit(self, X: Any, y: Any) -> EarlyStoppedMLP:
        X = np.asarray(X, dtype=np.float64)
        X = X.reshape(len(X), -1)
        y = np.asarray(y)
        if self.regression:
            y = y.astype(np.float64)
        rng = np.random.default_rng(self.random_state)
        # one initialisation for every check (an int random_state is used as given)
        seed = self.random_state if isinstance(self.random_state, (int, np.integer)) else \
            int(rng.integers(2**31 - 1))
        binary = _is_binary(X)
        self.binary_input_ = binary
        rows = np.arange(len(X))
        pairs = _pair_ids(X, y) if binary else None  # (pair id of each row, first row of each pair)
        if len(rows) > self.max_rows and (pairs is None or len(pairs[1]) > self.max_rows):
            rows = np.sort(rng.choice(len(X), size=self.max_rows, replace=False))
        n_val = int(round(self.validation_fraction * len(rows)))
        perm = rng.permutation(rows)
        val, fit = (np.sort(perm[:n_val]), np.sort(perm[n_val:])) if n_val >= 10 else (rows[:0], rows)
        if not self.regression and y.ndim == 1 and len(val):
            lost = np.isin(y[val], y[fit], invert=True)  # a class only in the held-out rows goes back
            fit, val = np.sort(np.concatenate([fit, val[lost]])), val[~lost]
        # standardise a continuous input (and a regression target), on the fitting rows
        if binary:
            self.x_mean_, self.x_scale_ = 0.0, 1.0
        else:
            self.x_mean_ = X[fit].mean(axis=0)
            sd = X[fit].std(axis=0)
            self.x_scale_ = np.where(sd > 0, sd, 1.0)
        Xs = (X - self.x_mean_) / self.x_scale_
        if self.regression:
            self.y_mean_ = y[fit].mean(axis=0)
            sd = y[fit].std(axis=0)
            self.y_scale_ = np.where(sd > 0, sd, 1.0)
            ys = (y - self.y_mean_) / self.y_scale_
        else:
            ys = y
        net = self._network(self.check_every, seed)
        weighted = binary and _accepts_sample_weight(net)

        def part(idx):  # the rows idx, as distinct weighted rows when the input is 0/1
            if not weighted:
                return Xs[idx], ys[idx], np.ones(len(idx))
            counts = np.bincount(pairs[0][idx], minlength=len(pairs[1]))
            kept = np.flatnonzero(counts)
            return Xs[pairs[1][kept]], ys[pairs[1][kept]], counts[kept].astype(np.float64)

        xf, yf, wf = part(fit)
        held_out = part(val) if len(val) else None
        fit_kw = {"sample_weight": wf} if weighted else {}
        self.fit_rows_ = fit
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if held_out is None:  # too few rows to hold some out: the iteration budget alone
                net.set_params(max_iter=self.max_iter).fit(xf, yf, **fit_kw)
                self.n_iter_ = net.n_iter_
            else:
                xv, yv, wv = held_out
                best, best_net, bad = np.inf, None, 0
                n_iter = min(self.check_every, self.max_iter)
                while True:
                    # one uninterrupted L-BFGS run of n_iter iterations from the same initialisation
                    net = self._network(n_iter, seed).fit(xf, yf, **fit_kw)
                    loss = self._loss(net, xv, yv, wv)
                    if loss < best:
                        best, best_net, bad = loss, net, 0
                    else:
                        bad += 1
                    if bad >= self.patience or net.n_iter_ < n_iter or n_iter >= self.max_iter:
                        break  # no progress, converged, or the budget reached
                    n_iter = min(2 * n_iter, self.max_iter)
                if best_net is None:  # every check's held-out loss was NaN (a diverged network)
                    raise ValueError("EarlyStoppedMLP: the held-out loss is not a number at any check")
                net = best_net
                self.n_iter_ = net.n_iter_
        self.net_ = net
        if not self.regression:
            self.classes_ = net.classes_
        self.n_features_in_ = X.shape[1]
        return self

    def _inputs(self, X: Any) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return (X.reshape(len(X), -1) - self.x_mean_) / self.x_scale_

    def predict_proba(self, X: Any) -> np.ndarray:
        if self.regression:
            raise AttributeError("a regressor has no predict_proba")
        return self.net_.predict_proba(self._inputs(X))

    def predict(self, X: Any) -> np.ndarray:
        out = self.net_.predict(self._inputs(X))
        if self.regression:
            return out * self.y_scale_ + self.y_mean_
        return out


# --------------------------------------------------------------------------- #
# the "auto" rule
# --------------------------------------------------------------------------- #
def _coverage(ids: np.ndarray, n_ids: int) -> float:
    """Fraction of the rows whose input row occurs fewer than ``_AUTO_MIN_CELL`` times."""
    counts = np.bincount(ids, minlength=n_ids)
    return float(counts[counts < _AUTO_MIN_CELL].sum() / max(len(ids), 1))


def choose_attacker(inputs: Sequence[tuple[str, tuple[np.ndarray, int] | None]]) -> tuple[str, str]:
    """``(attacker, reason)`` for one direction, from its attacker inputs.

    ``inputs``: ``(name, (row ids, number of distinct rows))`` for each
    input the direction's attackers see (``None`` for a continuous or soft
    input). ``"tabular"`` when every input is discrete and at most
    ``_AUTO_MAX_RARE`` (5%) of its rows have an input row seen fewer than
    ``_AUTO_MIN_CELL`` (10) times; otherwise ``"mlp_es"``.
    """
    details = []
    for name, ids in inputs:
        if ids is None:
            return "mlp_es", (f"{name} is continuous or soft (not 0/1 labels), so the tabular attacker does not "
                              "apply; two-layer MLP with early stopping")
        rare = _coverage(*ids)
        if rare > _AUTO_MAX_RARE:
            return "mlp_es", (
                f"{name} has {ids[1]:,} distinct rows over {len(ids[0]):,} rows and {rare:.1%} of the rows have a "
                f"value seen fewer than {_AUTO_MIN_CELL} times (> {_AUTO_MAX_RARE:.0%}), too sparse for the "
                "tabular estimate; two-layer MLP with early stopping")
        details.append(f"{name}: {ids[1]:,} distinct rows, {rare:.1%} of rows seen fewer than {_AUTO_MIN_CELL} times")
    return "tabular", ("discrete input with well-filled cells (" + "; ".join(details)
                       + f"; at most {_AUTO_MAX_RARE:.0%} allowed): the tabular attacker is Bayes-optimal and exact")


# --------------------------------------------------------------------------- #
# attackers: checks, construction, fitting
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
            raise ValueError("attacker='tabular' needs a discrete target; use 'mlp_es', 'mlp' or 'logistic' (linear)")
        return TabularAttacker()
    if name == "mlp_es":
        return EarlyStoppedMLP(regression=regression, random_state=seed)
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
            xr, yr, counts = _compress(x, y)
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
    compress = builtin and discrete_input and attacker in ("mlp", "logistic")  # mlp_es compresses itself
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
    if builtin and (attacker == "mlp_es" or attacker in ("tabular", "mlp")
                    and all(len(np.unique(y_tr[:, j])) == 2 for j in range(k))):
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
        rows = sparse.csr_matrix((np.ones(n_tr), (ids_tr, np.arange(n_tr))), shape=(n_ids, n_tr))
        pos = np.asarray(rows @ np.asarray(y_tr, dtype=np.float64))  # positives per input row (exact sums)
        proba = (pos + alpha) / (seen[:, None] + 2 * alpha)
        prior = (pos.sum(axis=0) + alpha) / (n_tr + 2 * alpha)
    return np.where((seen[ids_te] > 0)[:, None], proba[ids_te], prior[None, :])

