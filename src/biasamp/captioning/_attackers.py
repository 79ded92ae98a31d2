"""Text attackers of LIC and DBAC: built-in scikit-learn n-gram models, any estimator, or encoder vectors.

* ``"tfidf"`` (what ``"auto"`` runs without an encoder): word uni- and
  bigrams of the masked caption, TF-IDF weighted (sublinear term frequency,
  L2-normalised rows), then an L2-regularised logistic regression
  (``C=1``, L-BFGS). The vocabulary and the IDF weights are learnt on the
  attacker's training captions only.
* ``"bow"``: the same with binary bag-of-n-grams counts.
* ``"logistic"`` (what ``"auto"`` runs with an ``encoder``): standardised
  encoder vectors, then the same logistic regression.
* an estimator instance (a scikit-learn pipeline taking a list of strings,
  or a classifier taking the encoder's vectors): cloned for every fit, its
  ``random_state`` set from the iteration's seed when it is ``None``.

Training captions that hold no word at all (empty or punctuation only; a
built-in n-gram attacker would have an empty vocabulary) teach nothing: the
attacker predicts the training rows' class frequencies.

Multi-label targets (DBAC A->T with an indicator matrix) get one binary
classifier per label (one-vs-rest); a label constant in the training split
is predicted as that constant. Every fit runs with BLAS/OpenMP limited to
one thread (by the caller), so results do not depend on thread settings.
"""

from __future__ import annotations

import numbers
import time
import warnings
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from ._deps import _PARALLEL_MIN_SECONDS, _check_attacker, _idle_cores, single_threaded
from ._text import distinct

TEXT_ATTACKERS = ("auto", "tfidf", "bow", "logistic")


def check_text_attacker(attacker: Any, encoder: Any) -> Any:
    """Validate ``attacker`` (with or without ``encoder``); return it resolved (``"auto"`` -> a name)."""
    if encoder is not None and not callable(encoder):
        raise TypeError(f"encoder must be a callable (list of texts -> array of vectors), got {type(encoder).__name__}")
    if isinstance(attacker, str):
        if attacker not in TEXT_ATTACKERS:
            raise ValueError(f"attacker must be one of {TEXT_ATTACKERS} or an estimator instance, got {attacker!r}")
        if attacker == "auto":
            return "logistic" if encoder is not None else "tfidf"
        if attacker in ("tfidf", "bow") and encoder is not None:
            raise ValueError(f"attacker={attacker!r} reads the caption text, but encoder= was given; use "
                             "attacker='logistic' (or 'auto') with an encoder")
        if attacker == "logistic" and encoder is None:
            raise ValueError("attacker='logistic' fits the encoder's vectors: give encoder= (a callable text -> "
                             "vector), or use 'tfidf' / 'bow' / 'auto'")
        return attacker
    return _check_attacker(attacker)  # the library's check: an estimator instance with fit / predict


def attacker_name(attacker: Any) -> str:
    return attacker if isinstance(attacker, str) else type(attacker).__name__


def _logistic() -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, max_iter=1000)


def _builtin(name: str, multilabel: bool) -> Any:
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = OneVsRestClassifier(_logistic()) if multilabel else _logistic()
    if name == "logistic":
        return make_pipeline(StandardScaler(), clf)
    kw = dict(token_pattern=r"\S+", lowercase=False, ngram_range=(1, 2))
    vec = TfidfVectorizer(sublinear_tf=True, **kw) if name == "tfidf" else CountVectorizer(binary=True, **kw)
    return make_pipeline(vec, clf)


def make_attacker(attacker: Any, multilabel: bool, seed: int) -> Any:
    if isinstance(attacker, str):
        return _builtin(attacker, multilabel)
    est = clone(attacker)
    params = est.get_params()
    for key in [k for k in params if k == "random_state" or k.endswith("__random_state")]:
        if params[key] is None:
            est.set_params(**{key: seed})
    if multilabel:
        from sklearn.multiclass import OneVsRestClassifier

        return OneVsRestClassifier(est)
    return est


def _subset(x: Any, rows: np.ndarray) -> Any:
    if isinstance(x, np.ndarray):
        return x[rows]
    return [x[i] for i in rows.tolist()]


def fit_proba(attacker: Any, x: Any, y: np.ndarray, train: np.ndarray, test: np.ndarray, k: int,
              seed: int) -> np.ndarray:
    """Fit on rows ``train`` of ``(x, y)``, return probabilities on rows ``test``.

    Single-label ``y`` (class codes ``0..k-1``): an ``(n_test, k)`` matrix
    over all classes (0 for a class absent from the training rows).
    Multi-label ``y`` (``n x k`` 0/1): the ``(n_test, k)`` matrix of
    :math:`P(y_j = 1)`.
    """
    n_te = len(test)
    y_tr = y[train]
    x_tr, x_te = _subset(x, train), _subset(x, test)
    if isinstance(attacker, str) and attacker != "logistic" and not any(x_tr):  # no word to learn from
        prior = np.bincount(y_tr, minlength=k) / len(y_tr) if y.ndim == 1 else y_tr.mean(axis=0)
        return np.tile(np.asarray(prior, dtype=np.float64), (n_te, 1))
    if y.ndim == 1:
        present = np.unique(y_tr)
        if len(present) == 1:
            p = np.zeros((n_te, k))
            p[:, present[0]] = 1.0
            return p
        est = make_attacker(attacker, False, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(x_tr, y_tr)
        return _class_proba(est, x_te, k)
    out = np.empty((n_te, k))
    varying = np.flatnonzero(y_tr.min(axis=0) != y_tr.max(axis=0))
    const = np.setdiff1d(np.arange(k), varying)
    out[:, const] = y_tr[0, const] if len(y_tr) else 0.0
    if len(varying):
        est = make_attacker(attacker, True, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(x_tr, y_tr[:, varying])
        out[:, varying] = np.asarray(est.predict_proba(x_te), dtype=np.float64).reshape(n_te, len(varying))
    return out


def _class_proba(est: Any, x: Any, k: int) -> np.ndarray:
    classes = np.asarray(getattr(est, "classes_", np.arange(k))).astype(np.intp)
    if hasattr(est, "predict_proba"):
        p = np.asarray(est.predict_proba(x), dtype=np.float64)
    else:  # a classifier without probabilities: its hard prediction as probability 1
        pred = np.asarray(est.predict(x)).astype(np.intp)
        p = (pred[:, None] == classes[None, :]).astype(np.float64)
    out = np.zeros((p.shape[0], k))
    out[:, classes] = p
    return out


def encode_texts(encoder: Any, texts: list[str]) -> np.ndarray:
    """The encoder's vectors of ``texts`` (each distinct text encoded once), checked."""
    uniq, inv = distinct(texts)
    vec = encoder(uniq)
    try:
        vec = np.asarray(vec, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("encoder must return numbers (an array of shape (n_texts, d)), "
                        f"got {type(vec).__name__}") from None
    if vec.ndim != 2 or len(vec) != len(uniq):
        raise ValueError(f"encoder returned shape {vec.shape} for {len(uniq)} texts; expected ({len(uniq)}, d)")
    if not np.isfinite(vec).all():
        raise ValueError("encoder returned NaN or infinite values")
    return vec[inv]


def deterministic(attacker: Any) -> bool:
    """Whether a fit depends only on its rows: the built-in attackers (L-BFGS logistic regressions, no seed)."""
    return isinstance(attacker, str)


def check_n_jobs(n_jobs: Any) -> int | None:
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or int(n_jobs) == 0 or int(n_jobs) < -1:
        raise ValueError(f"n_jobs must be None, -1 (all cores) or a positive integer, got {n_jobs!r}")
    return int(n_jobs)


def _fit_task(attacker: Any, x: Any, y: np.ndarray, train: np.ndarray, test: np.ndarray, k: int,
              seed: int) -> np.ndarray:
    """:func:`fit_proba` with BLAS/OpenMP limited to one thread (in a worker process)."""
    with single_threaded():
        return fit_proba(attacker, x, y, train, test, k, seed)


def run_fits(tasks: list[tuple], n_jobs: int | None, bar: Any) -> list[np.ndarray]:
    """:func:`fit_proba` of every task ``(attacker, x, y, train, test, k, seed)``, in order.

    Every fit runs with one BLAS/OpenMP thread, here or in a worker process,
    so the probabilities do not depend on ``n_jobs``. ``n_jobs=None``: the
    first fit runs here, timed; the others go to one worker per idle core
    when they would take more than ``_PARALLEL_MIN_SECONDS`` here (starting
    the workers costs seconds) and more than one core is idle; ``1``: all
    here; ``-1`` or ``k > 1``: all in workers (joblib).
    """
    out: list[np.ndarray] = []
    first = len(tasks) if n_jobs == 1 else 0 if n_jobs is not None else min(1, len(tasks))
    start = time.perf_counter()
    with single_threaded():
        for task in tasks[:first]:
            out.append(fit_proba(*task))
            bar.update()
    rest = tasks[first:]
    if not rest:
        return out
    workers = n_jobs
    if n_jobs is None:
        estimate = (time.perf_counter() - start) * len(rest) / max(first, 1)
        workers = min(_idle_cores(), len(rest)) if estimate > _PARALLEL_MIN_SECONDS else 1
    if workers == 1:
        with single_threaded():
            for task in rest:
                out.append(fit_proba(*task))
                bar.update()
        return out
    from joblib import Parallel, delayed

    calls = (delayed(_fit_task)(*task) for task in rest)
    try:
        results = Parallel(n_jobs=workers, return_as="generator")(calls)
    except TypeError:  # joblib < 1.3: no generator output
        results = Parallel(n_jobs=workers)(calls)
    for p in results:
        out.append(p)
        bar.update()
    return out
