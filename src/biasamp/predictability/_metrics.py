"""Predictability-based bias amplification: DPA and leakage amplification.

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

Built-in attackers (:mod:`biasamp.predictability._attackers`): ``"auto"`` (the default:
per direction, the tabular attacker where it is exact, else the MLP with
early stopping), ``"tabular"`` (:class:`TabularAttacker`, the smoothed
empirical conditional distribution: the Bayes-optimal attacker for discrete
inputs, exact and instant), ``"mlp_es"`` (two hidden layers, the papers'
network, stopped on a held-out loss, bounded cost), ``"mlp"`` (the same
network trained to convergence) and ``"logistic"``. Any scikit-learn-style
estimator instance works too; it is cloned for every fit.

Every iteration draws its own random label flips (accuracy equalisation) and
its own stratified train/test split from a seed derived, before anything
runs, from ``np.random.SeedSequence(random_state).spawn(n_iter)``, and every
attacker is fitted with BLAS/OpenMP limited to one thread: results are
bit-identical for any ``n_jobs`` and any thread settings.

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

import contextlib
import math
import numbers
import os
import time
from dataclasses import dataclass, field, replace
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.deprecation import keyword_only_since
from biasamp._core.labels import (
    _as_array,
    _check_finite,
    check_consistent_length,
    encode_labels,
)
from biasamp._core.progress import progress_bar
from biasamp._core.results import ResultMixin, fmt
from biasamp._core.validation import NONE, Interval, OneOf, check
from biasamp._engine.inference import t_min_detectable
from biasamp._engine.options import DEFAULT_LEVEL
from biasamp._engine.resample import seed_sequence
from biasamp._engine.runs import _check_n_iter as _check_n_iter_bound
from biasamp._engine.runs import iterations_and_data_intervals
from biasamp.predictability._attackers import (
    TabularAttacker,
    _attack,
    _attacker_name,
    _check_attacker,
    _factorize,
    _row_ids,
    _tabular_fast,
    choose_attacker,
    single_threaded,
)

__all__ = [
    "DPADirectionResult",
    "DPAResult",
    "LeakageResult",
    "TabularAttacker",
    "dpa",
    "leakage_amplification",
]

_QUALITIES = ("inv_ce", "accuracy", "f1", "inv_rmse")
_CLASSIFICATION_QUALITIES = ("inv_ce", "accuracy", "f1")
_EPS = 1e-15  # probability clip for inv_ce, and RMSE floor for inv_rmse
# n_jobs=None: the iterations left after the first round go to worker processes when they
# would take longer than this sequentially (starting the workers costs a few seconds) and
# more than one core is idle.
_PARALLEL_MIN_SECONDS = 5.0
#: what an interval is over (``ci_over``): the iterations and a bootstrap of the rows, the rows, the iterations only
CI_OVER = ("both", "rows", "iterations")

# --------------------------------------------------------------------------- #
# encoded variables
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class _Variable:
    """One label family (A or T), its prediction, as attacker inputs and targets.

    ``kind`` is ``"single"`` (``y`` = class codes), ``"multi"`` (``y`` = N x K
    0/1 matrix) or ``"continuous"`` (``y`` = float array). ``x`` / ``x_pred``
    are the float attacker inputs of the truth / prediction (soft predictions
    kept, in ``soft``); ``y_pred`` is the hard prediction used as an attacker
    target. The inputs derived from labels are built on first use and are not
    pickled (nor is the cache): a worker process gets only the labels.
    """

    name: str
    kind: str
    classes: tuple | None
    y: np.ndarray
    y_pred: np.ndarray | None
    soft: np.ndarray | None  # a prediction that is not hard labels (probabilities), as given
    accuracy: np.ndarray | None  # scalar (single) or per column (multi); None: continuous / no prediction
    n_train: int = 0  # protocol="train_test": rows [0, n_train) are the training set, the rest the test set
    cache: dict = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "cache": {}}

    @property
    def x(self) -> np.ndarray:
        """Attacker input of the ground truth."""
        if self.kind == "continuous":
            return self.y.reshape(len(self.y), -1)
        if "input" not in self.cache:
            self.cache["input"] = self.features(self.y)
        return self.cache["input"]

    @property
    def x_pred(self) -> np.ndarray | None:
        """Attacker input of the prediction (the probabilities themselves when soft)."""
        if self.soft is not None or self.y_pred is None:
            return self.soft
        if self.kind == "continuous":
            return self.y_pred.reshape(len(self.y_pred), -1)
        if "input_pred" not in self.cache:
            self.cache["input_pred"] = self.features(self.y_pred)
        return self.cache["input_pred"]

    def ids(self, which: str) -> tuple[np.ndarray, int]:
        """Cached distinct-row ids (and their number) of ``"y"`` (= truth input) or ``"x_pred"``."""
        key = "ids " + which
        if key not in self.cache:
            if which == "y" and self.kind == "single":
                self.cache[key] = (self.y, self.n_classes)
            else:
                rows, ids = _row_ids(self.y if which == "y" else self.prediction_input())
                self.cache[key] = (ids, len(rows))
        return self.cache[key]

    def prediction(self) -> np.ndarray:
        """``y_pred`` of a variable measured with its prediction (the public functions require it)."""
        if self.y_pred is None:
            raise ValueError(f"{self.name} has no prediction")
        return self.y_pred

    def prediction_input(self) -> np.ndarray:
        """``x_pred`` of a variable measured with its prediction (the public functions require it)."""
        x = self.x_pred
        if x is None:
            raise ValueError(f"{self.name} has no prediction")
        return x

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

    def model_errors(self, lo: int = 0, hi: int | None = None) -> np.ndarray | None:
        """Number of wrong predictions in rows ``lo:hi`` (per column for multi-label)."""
        if self.y_pred is None or self.kind == "continuous":
            return None
        wrong = self.y_pred[lo:hi] != self.y[lo:hi]
        if self.kind == "single":
            return np.array(int(wrong.sum()))
        return wrong.sum(axis=0).astype(np.int64)

    def parts(self) -> list[tuple[int, int]]:
        """Row ranges equalised separately: the whole set, or the training and the test rows."""
        n = len(self.y)
        return [(0, self.n_train), (self.n_train, n)] if self.n_train else [(0, n)]

    def take(self, rows: np.ndarray, n_train: int = 0) -> _Variable:
        """The variable on ``rows`` (a resample: rows may repeat), of which the first ``n_train`` are training rows."""
        pick = lambda a: None if a is None else a[rows]
        out = _Variable(self.name, self.kind, self.classes, self.y[rows], pick(self.y_pred), pick(self.soft),
                        self.accuracy, n_train)
        for key in ("ids y", "ids x_pred"):  # distinct-row ids computed here: those of the rows drawn, renumbered
            if key in self.cache and not (key == "ids y" and self.kind == "single"):
                first, ids = _factorize(self.cache[key][0][rows])  # (ids keep their order: lexicographic rows)
                out.cache[key] = (ids, len(first))
        return out


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


def _continuous_pred(pred: Any, pred_name: str, y: np.ndarray, name: str) -> np.ndarray:
    p, _ = _as_array(pred, pred_name)
    _check_finite(p, pred_name)
    if len(p) != len(y):
        raise ValueError(f"length mismatch: {name} has {len(y)}, {pred_name} has {len(p)} rows")
    if p.shape != y.shape:
        raise ValueError(f"{pred_name} has shape {p.shape} but {name} has shape {y.shape}")
    if not np.issubdtype(p.dtype, np.number):
        raise TypeError(f"{pred_name} must be numeric for a continuous {name}")
    return p.astype(np.float64)


def _encode_variable(truth: Any, pred: Any, name: str, pred_name: str, target_quality: str | None,
                     truth_train: Any = None, pred_train: Any = None) -> _Variable:
    """Validate and encode one family; ``target_quality`` is set when it is an attacker target.

    With ``truth_train`` (``protocol="train_test"``) the variable holds the
    training rows first, then the test rows, over the classes of both;
    ``pred_train`` is the model's prediction on the training rows.
    """
    train_name, pred_train_name = f"{name}_train", f"{pred_name}_train"
    raw, _ = _as_array(truth, name)
    if _is_continuous(raw):
        if target_quality in _CLASSIFICATION_QUALITIES:
            raise ValueError(
                f"{name} has continuous (non-integer) values, but quality={target_quality!r} needs class "
                "labels; use quality='inv_rmse' for a continuous target, or pass class labels"
            )
        _check_finite(raw, name)
        y = raw.astype(np.float64)
        y_pred = None if pred is None else _continuous_pred(pred, pred_name, y, name)
        n_train = 0
        if truth_train is not None:
            tr, _ = _as_array(truth_train, train_name)
            _check_finite(tr, train_name)
            if tr.shape[1:] != y.shape[1:] or not np.issubdtype(tr.dtype, np.number):
                raise ValueError(f"{train_name} must be numeric with the shape of {name} per row, got {tr.shape}")
            tr = tr.astype(np.float64)
            n_train = len(tr)
            if y_pred is not None:
                y_pred = np.concatenate([_continuous_pred(pred_train, pred_train_name, tr, train_name), y_pred])
            y = np.concatenate([tr, y])
        return _Variable(name, "continuous", None, y, y_pred, None, None, n_train)

    enc = encode_labels({train_name: truth_train, name: truth}, {pred_train_name: pred_train, pred_name: pred},
                        allow_soft=True)
    check_consistent_length(**{name: enc[name], pred_name: enc.get(pred_name)})
    n_train = 0
    if train_name in enc:
        check_consistent_length(**{train_name: enc[train_name], pred_train_name: enc.get(pred_train_name)})
        n_train = enc[train_name].n_rows
    truths = [enc[k] for k in (train_name, name) if k in enc]
    m = enc[name]

    def stack(mats, get):
        return get(mats[0]) if len(mats) == 1 else np.concatenate([get(x) for x in mats])

    if m.codes is not None:
        kind, y = "single", stack(truths, lambda x: x.codes)
    else:
        dense = stack(truths, lambda x: np.asarray(x.dense))
        if m.n_classes > 1 and bool((dense.sum(axis=1) == 1).all()):
            kind, y = "single", dense.argmax(axis=1)  # a 2-D one-hot matrix is single-label
        else:
            kind, y = "multi", dense.astype(np.int8)
    y_pred = soft = accuracy = None
    if pred_name in enc:
        preds = [enc[k] for k in (pred_train_name, pred_name) if k in enc]
        if all(pm.codes is not None for pm in preds):
            y_pred = stack(preds, lambda x: x.codes) if kind == "single" else \
                stack(preds, lambda x: x.to_dense().astype(np.int8))
        else:
            dense = stack(preds, lambda x: x.to_dense(np.float64))
            if kind == "single":
                y_pred = dense.argmax(axis=1)  # soft or one-hot: the most probable class
                hard = _one_hot(y_pred, m.n_classes)
            else:
                y_pred = (dense > 0.5).astype(np.int8)  # soft multi-label: threshold at 0.5
                hard = y_pred
            if not np.array_equal(dense, hard):  # probabilities: the model-side input of LA
                soft = dense
        accuracy = (y_pred[n_train:] == y[n_train:]).mean(axis=0)  # on the test rows
    return _Variable(name, kind, m.classes, y, y_pred, soft, accuracy, n_train)


# --------------------------------------------------------------------------- #
# accuracy equalisation
# --------------------------------------------------------------------------- #
def _flip(var: _Variable, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Ground truth with as many random flips as the model has errors (accuracy equalisation).

    ``round((1 - acc) * N)`` is exactly the model's number of errors, so that
    many rows are drawn without replacement. Single-label: a uniformly drawn
    other class (``1 - y`` when binary); multi-label: per column, with that
    column's own error count. Under ``protocol="train_test"`` the training
    and the test rows are flipped separately, each to the model's number of
    errors on that set. Returns ``(flipped, n_flipped)``.
    """
    y = var.y.copy()
    total = 0
    for lo, hi in var.parts():  # protocol="train_test": each set equalised to the model's errors on it
        errors = var.model_errors(lo, hi)
        assert errors is not None  # only a discrete variable with a prediction is equalised (_iteration)
        n = hi - lo
        if var.kind == "single":
            m = int(errors)
            k = var.n_classes
            if m == 0 or k < 2:
                continue
            rows = lo + rng.choice(n, size=m, replace=False)
            y[rows] = (y[rows] + rng.integers(1, k, size=m)) % k
            total += m
            continue
        for j, m in enumerate(errors.tolist()):
            if m:
                rows = lo + rng.choice(n, size=m, replace=False)
                y[rows, j] = 1 - y[rows, j]
        total += int(errors.sum())
    return y, total


# --------------------------------------------------------------------------- #
# attackers
# --------------------------------------------------------------------------- #

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
            from sklearn.metrics import f1_score  # imported where used: it costs start-up time

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
        from sklearn.metrics import f1_score  # imported where used: it costs start-up time

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
    reason: str = ""
    protocol: str = "split"
    fold: bool = False


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
        # permuted rows grouped by class (a 16-bit key sorts by radix: linear time, same stable order)
        order = np.argsort(ids_perm.astype(np.uint16) if n_ids <= 1 << 16 else ids_perm, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n) - starts[ids_perm[order]]
        test = np.zeros(n, dtype=bool)
        test[perm] = rank < per_class[ids_perm]
    return np.flatnonzero(~test), np.flatnonzero(test)


def _resample(job: _Job, boot_seed: int) -> _Job:
    """The job on a bootstrap resample of its rows (``protocol="train_test"``: of each set, to its own size)."""
    var = job.dst
    rng = np.random.default_rng(boot_seed)
    if job.protocol == "train_test":  # each set resampled to its own size
        tr, te = np.arange(var.n_train), np.arange(var.n_train, len(var.y))
        rows = np.concatenate([tr[rng.integers(0, len(tr), len(tr))], te[rng.integers(0, len(te), len(te))]])
    else:
        rows = rng.integers(0, len(var.y), len(var.y))
    return replace(job, src=job.src.take(rows, var.n_train), dst=job.dst.take(rows, var.n_train))


def _iteration(job: _Job, state: np.ndarray) -> tuple[float, float, int]:
    """``(psi_data, psi_model, n_flipped)`` of one iteration, from three 32-bit seeds.

    A fourth seed makes it a row-bootstrap replicate: the same iteration on a
    resample of the rows (:func:`_resample`), drawn with that seed.
    """
    split_seed, attacker_seed, flip_seed = (int(s) for s in state[:3])
    if len(state) > 3:
        job = _resample(job, int(state[3]))
    rng = np.random.default_rng(flip_seed)
    src = job.src
    tabular = isinstance(job.attacker, str) and job.attacker == "tabular"
    if job.mode == "dpa":
        var = job.dst  # the target
        if job.equalize and var.discrete:
            y_data, n_flipped = _flip(var, rng)
        else:
            y_data, n_flipped = var.y, 0
        y_model = var.prediction()
        x_data = x_model = src.x
        ids_data = ids_model = src.ids("y") if tabular else None
        discrete_in = (src.discrete, src.discrete)
    else:  # leakage: src = task (input), dst = attribute (target)
        var = job.dst
        if job.equalize and src.discrete:
            flipped, n_flipped = _flip(src, rng)
        else:
            flipped, n_flipped = src.y, 0
        x_data, x_model = src.features(flipped), src.prediction_input()
        y_data = y_model = var.y
        ids_data = ids_model = None
        if tabular:
            if src.kind == "single":
                ids_data = (flipped, src.n_classes)
            else:
                rows, ids = _row_ids(x_data)
                ids_data = (ids, len(rows))
            ids_model = src.ids("x_pred")
        discrete_in = (src.discrete, src.discrete and _is_hard(x_model))
    if job.protocol == "train_test":  # Wang et al. 2019: fit on the training set, score on the test set
        tr, te = np.arange(var.n_train), np.arange(var.n_train, len(var.y))
    else:
        tr, te = _split(var, job.test_size, split_seed)
    kind, k = var.kind, var.n_classes
    scores = []
    sides = ((x_data, y_data, discrete_in[0]), (x_model, y_model, discrete_in[1]))
    for side, (x, y, disc) in enumerate(sides):
        if tabular and kind != "continuous":
            side_ids = ids_data if side == 0 else ids_model
            assert side_ids is not None  # built above whenever the attacker is tabular
            ids, n_ids = side_ids
            out = _tabular_fast(ids[tr], y[tr], ids[te], n_ids, kind, k)
        else:
            out = _attack(job.attacker, kind, k, x[tr], y[tr], x[te], attacker_seed, disc)
        q = _score(job.quality, kind, y[te], out)
        scores.append(0.5 + abs(q - 0.5) if job.fold else q)  # Wang et al.'s folded accuracy
    return scores[0], scores[1], n_flipped


def _is_hard(x: np.ndarray) -> bool:
    return bool(((x == 0) | (x == 1)).all())


def _fits(jobs: list[_Job]) -> Any:
    """One BLAS/OpenMP thread while these jobs run, unless none fits a model (the tabular attacker counts)."""
    if all(isinstance(job.attacker, str) and job.attacker == "tabular" for job in jobs):
        return contextlib.nullcontext()
    return single_threaded()


def _run_task(job: _Job, state: np.ndarray) -> tuple[float, float, int]:
    """One iteration in a worker process, BLAS/OpenMP limited to one thread."""
    with _fits([job]):
        return _iteration(job, state)


# --------------------------------------------------------------------------- #
# seeds, parallel loop, progress
# --------------------------------------------------------------------------- #
def _seed_states(random_state: Any, n_iter: int, n_boot: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Seeds fixed before any dispatch: six 32-bit seeds per iteration (three per direction), and eight per
    row-bootstrap replicate (four per direction: an iteration's three and the resample's).

    The replicates' children are spawned after the iterations', so the
    iterations' seeds do not depend on ``n_boot``.
    """
    root = seed_sequence(random_state)  # the one seed checker: TypeError/ValueError naming random_state
    iterations = [child.generate_state(6, dtype=np.uint32) for child in root.spawn(n_iter)]
    return iterations, [child.generate_state(8, dtype=np.uint32) for child in root.spawn(n_boot)]


def _check_n_iter(n_iter: Any, level: Any) -> int:
    n_iter = _check_n_iter_bound(n_iter)
    if level is not None:
        if not isinstance(level, numbers.Real) or not 0 < float(level) < 1:
            raise ValueError(f"level must be in (0, 1) or None (no confidence interval), got {level!r}")
        if n_iter < 2:
            raise ValueError(
                f"n_iter={n_iter}: a confidence interval needs n_iter >= 2; pass level=None to skip the interval"
            )
    return int(n_iter)


def _check_test_size(test_size: Any) -> float:
    if not isinstance(test_size, numbers.Real) or not 0 < float(test_size) < 1:
        raise ValueError(f"test_size must be a fraction in (0, 1), got {test_size!r}")
    return float(test_size)


def _idle_cores() -> int:
    """Cores not already busy: the usable cores minus the 1-minute load average (this process excluded)."""
    from joblib import cpu_count

    cores = max(1, int(cpu_count()))
    try:
        busy = max(0.0, os.getloadavg()[0] - 1.0)
    except (AttributeError, OSError):  # no load average (Windows)
        busy = 0.0
    return max(1, min(cores, int(cores - busy + 0.5)))


def _parallel(tasks: list, n_jobs: int, bar: Any) -> list:
    """``_run_task`` over ``tasks`` in worker processes (joblib), in order."""
    from joblib import Parallel, delayed

    calls = (delayed(_run_task)(job, state) for job, state in tasks)
    try:
        gen = Parallel(n_jobs=n_jobs, return_as="generator")(calls)
    except TypeError:  # joblib < 1.3: no generator output
        out = Parallel(n_jobs=n_jobs)(calls)
        bar.update(len(out))
        return list(out)
    results = []
    for r in gen:
        results.append(r)
        bar.update()
    return results


def _run_all(tasks: list[tuple[_Job, np.ndarray]], n_jobs: Any, progress: Any, desc: str, stage: str) -> list:
    """Run every (job, seeds) task, results in order, sequentially or in worker processes.

    Every attacker fit runs with BLAS/OpenMP limited to one thread (here or in
    the worker), so the results do not depend on ``n_jobs`` or on the thread
    settings. ``n_jobs=None``: the first round (one task per direction) runs
    here, timed; the rest goes to one worker per idle core when it would take
    longer than ``_PARALLEL_MIN_SECONDS`` and more than one core is idle.
    """
    bar = progress_bar(total=len(tasks), desc=desc, progress=progress, unit="iterations")
    bar.set_postfix_str(stage)
    with bar:
        if n_jobs is not None and n_jobs != 1:
            return _parallel(tasks, n_jobs, bar)
        n_first = len(tasks) if n_jobs == 1 else len({id(job) for job, _ in tasks})
        jobs = [job for job, _ in tasks[:n_first]]
        results = []
        start = time.perf_counter()
        with _fits(jobs):
            for job, state in tasks[:n_first]:
                results.append(_iteration(job, state))
                bar.update()
        rest = tasks[n_first:]
        if not rest:
            return results
        estimate = (time.perf_counter() - start) * len(rest) / n_first
        if estimate > _PARALLEL_MIN_SECONDS:
            workers = min(_idle_cores(), len(rest))
            if workers > 1:
                return results + _parallel(rest, workers, bar)
        with _fits(jobs):
            for job, state in rest:
                results.append(_iteration(job, state))
                bar.update()
        return results


# --------------------------------------------------------------------------- #
# results
# --------------------------------------------------------------------------- #
def _interval(values: np.ndarray, boot: pd.DataFrame | None, column: str, level: float | None,
              bounds: tuple[float, float] | None, ci_over: str, job: _Job
              ) -> tuple[tuple[float, float] | None, float | None, float | None]:
    r"""``(ci, p_value, min_detectable)`` of the mean of ``values`` over ``ci_over``.

    docs/predictability.md, "Intervals".

    ``"iterations"``: the t-interval of the iterations. ``"rows"`` and
    ``"both"``: the rows' variance is that of the bootstrap replicates
    (``boot[column]``, each one iteration on a resample of the rows) less
    the iterations' own variance :math:`s^2`, at least
    :math:`s^2 \cdot` test_size / (1 - test_size) (``protocol="split"``);
    ``"both"`` adds :math:`s^2/J`. The p-value is that of the same t statistic.
    """
    if level is None:
        return None, None, None
    j = len(values)
    s2 = float(values.var(ddof=1))
    if ci_over == "iterations":
        se_rows, df_rows = 0.0, math.inf
    else:
        assert boot is not None  # replicates are fitted unless ci_over="iterations" (_common_checks)
        reps = boot[column].to_numpy(dtype=np.float64)
        floor = job.test_size / (1 - job.test_size) if job.protocol == "split" else 0.0
        se_rows = math.sqrt(max(float(reps.var(ddof=1)) - s2, floor * s2))
        df_rows = float(min(len(reps), j) - 1)
    iv = iterations_and_data_intervals(float(values.mean()), values, se_rows, level, bounds, df_rows)
    key = {"rows": "data"}.get(ci_over, ci_over)
    se, df = iv[f"se_df_{key}"]
    mde = t_min_detectable(se, df, level)
    return iv[key], iv[f"p_{key}"], (mde if math.isfinite(mde) else None)


def _fmt_ci(ci: tuple[float, float] | None, level: float | None, ci_over: str) -> str:
    if ci is None or level is None:  # an interval comes with its level (_interval)
        return ""
    return f" [{round(100 * level):d}% CI over {ci_over} {fmt(ci[0])}, {fmt(ci[1])}]"


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
        Confidence interval of the mean over what ``ci_over`` says, clipped
        to [-1, 1]; ``None`` when ``level=None``.
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
    attacker : str
        The attacker that ran in this direction (``"auto"`` resolved:
        ``"tabular"`` or ``"mlp_es"``; an estimator's class name).
    attacker_reason : str
        Why that attacker (the ``"auto"`` rule's reading of the input, or
        "requested").
    ci_over : {"both", "rows", "iterations", ""}
        What ``ci`` carries (``""`` without an interval).
    p_value : float or None
        Two-sided p-value of "DPA = 0" from the same t statistic as ``ci``.
    replicates : pandas.DataFrame or None
        The row-bootstrap replicates (``replicate`` and the columns of
        ``iterations``); ``None`` for ``ci_over="iterations"``.
    min_detectable : float or None
        The smallest absolute DPA that the t test of ``ci`` detects with 80% power
        (non-central t); ``None`` without an interval.

    Notes
    -----
    Per iteration, :math:`\\mathrm{DPA} = (\\Psi_M - \\Psi_D)/(\\Psi_M + \\Psi_D)`
    with the attacker's quality :math:`\\Psi` on the model's predictions
    (:math:`\\Psi_M`) and on the accuracy-equalised ground truth
    (:math:`\\Psi_D`); ``value`` is the mean over the iterations.

    References
    ----------
    .. [1] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure
       bias amplification in classification datasets". NeurIPS 2025, Eq. 1-6.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import dpa
    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 400)
    >>> task = np.where(rng.random(400) < 0.7, attr, 1 - attr)
    >>> d = dpa(attr, task, task_pred=task, n_iter=3, random_state=0).a_to_t
    >>> d.direction, d.value  # perfect predictions: no amplification
    ('A->T', 0.0)
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
    attacker: str = ""
    attacker_reason: str = ""
    ci_over: str = "iterations"
    p_value: float | None = None
    replicates: pd.DataFrame | None = None
    min_detectable: float | None = None

    def to_frame(self) -> pd.DataFrame:
        """The per-iteration table (a copy)."""
        return self.iterations.copy()

    def __repr__(self) -> str:
        acc = _mean_accuracy(self.model_accuracy)
        acc_s = "" if acc is None else f", model accuracy {acc:.4f}"
        att = f"{self.attacker} attacker, " if self.attacker else ""
        return (
            f"DPA {self.direction} = {fmt(self.value)}{_fmt_ci(self.ci, self.level, self.ci_over)} "
            f"(sd {self.std:.4f}; Psi_D {self.psi_data:.4g}, Psi_M {self.psi_model:.4g}; "
            f"absolute {fmt(self.absolute)}{acc_s}; {att}{len(self.iterations)} iterations)"
        )


@dataclass(frozen=True, eq=False, repr=False)
class DPAResult(ResultMixin):
    """Result of :func:`dpa`.

    Attributes
    ----------
    a_to_t, t_to_a : DPADirectionResult or None
        The two directions; ``None`` where the needed prediction was not given.
    attacker : str
        The attacker requested (built-in name, e.g. ``"auto"``, or estimator
        class); each direction's ``attacker`` and ``attacker_reason`` say
        which one ran and why.
    quality : str
        The quality function's name.
    n_iter : int
    test_size : float
    equalized : bool
        Whether accuracy equalisation was applied (off for continuous targets).
    protocol : {"split", "train_test"}
        Where the attackers were fitted and scored.
    fold : bool
        Whether accuracies were folded to :math:`0.5 + |acc - 0.5|`.

    Notes
    -----
    There is no single ``value``: DPA is directional (A→T: the attribute
    predicts the task predictions better than the task; T→A: the reverse), so
    each direction in ``a_to_t`` / ``t_to_a`` has its own
    :math:`\\mathrm{DPA} = (\\Psi_M - \\Psi_D)/(\\Psi_M + \\Psi_D)`.

    References
    ----------
    .. [1] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure
       bias amplification in classification datasets". NeurIPS 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import dpa
    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 400)
    >>> task = np.where(rng.random(400) < 0.7, attr, 1 - attr)
    >>> res = dpa(attr, task, attr_pred=attr, task_pred=task, n_iter=3, random_state=0)
    >>> res.a_to_t.value, res.t_to_a.value
    (0.0, 0.0)
    """

    a_to_t: DPADirectionResult | None
    t_to_a: DPADirectionResult | None
    attacker: str
    quality: str
    n_iter: int
    test_size: float
    equalized: bool
    protocol: str = "split"
    fold: bool = False

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
        Confidence interval of the mean over what ``ci_over`` says; clipped to
        [-1, 1] for the bounded qualities ``"accuracy"`` and ``"f1"``.
    lambda_data, lambda_model : float
        Means of the dataset leakage :math:`\\lambda_D` and model leakage
        :math:`\\lambda_M`.
    model_accuracy : float, pandas.Series or None
        Accuracy of T̂ against T (the dataset side was equalised to it).
    iterations : pandas.DataFrame
        ``iteration, lambda_data, lambda_model, leakage, n_flipped``.
    attacker : str
        The attacker that ran (``"auto"`` resolved: ``"tabular"`` or
        ``"mlp_es"``; an estimator's class name).
    quality : str
    level : float or None
    attacker_reason : str
        Why that attacker (the ``"auto"`` rule's reading of the input, or
        "requested").
    protocol : {"split", "train_test"}
        Where the attackers were fitted and scored.
    fold : bool
        Whether accuracies were folded to :math:`0.5 + |acc - 0.5|`.
    ci_over : str
        The interval ``ci`` is over: ``"both"`` (iterations and rows),
        ``"rows"`` or ``"iterations"``; ``""`` when there is none.
    p_value : float or None
        p-value of the test of LA = 0 that ``ci`` inverts (two-sided t).
    replicates : pandas.DataFrame or None
        One row per row-bootstrap replicate, with the columns of
        ``iterations``; none fitted for the interval over the iterations.
    min_detectable : float or None
        The smallest absolute LA that the t test of ``ci`` detects with 80% power
        (non-central t); ``None`` without an interval.

    Notes
    -----
    :math:`\\mathrm{LA} = \\lambda_M - \\lambda_D`: how much better an attacker
    recovers the protected attribute from the model's predictions than from
    the accuracy-equalised ground truth, averaged over the iterations.

    References
    ----------
    .. [1] T. Wang, J. Zhao, M. Yatskar, K.-W. Chang, V. Ordonez. "Balanced
       Datasets Are Not Enough". ICCV 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import leakage_amplification
    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 400)
    >>> task = np.where(rng.random(400) < 0.7, attr, 1 - attr)
    >>> leakage_amplification(attr, task, task_pred=task, n_iter=3, random_state=0).value
    0.0
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
    attacker_reason: str = ""
    protocol: str = "split"
    fold: bool = False
    ci_over: str = "iterations"
    p_value: float | None = None
    replicates: pd.DataFrame | None = None
    min_detectable: float | None = None

    def to_frame(self) -> pd.DataFrame:
        """The per-iteration table (a copy)."""
        return self.iterations.copy()

    def __repr__(self) -> str:
        acc = _mean_accuracy(self.model_accuracy)
        acc_s = "" if acc is None else f", model accuracy {acc:.4f}"
        return (
            f"LeakageResult(LA = {fmt(self.value)}{_fmt_ci(self.ci, self.level, self.ci_over)} (sd {self.std:.4f}; "
            f"lambda_D {self.lambda_data:.4g}, lambda_M {self.lambda_model:.4g}{acc_s}; "
            f"attacker={self.attacker!r}, quality={self.quality!r}, {len(self.iterations)} iterations))"
        )


def _std(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) if len(x) > 1 else 0.0


def _accuracy_field(var: _Variable) -> Any:
    if var.accuracy is None:
        return None
    if var.kind == "multi":
        assert var.classes is not None  # a multi-label variable has its classes (_encode_variable)
        return pd.Series(var.accuracy, index=list(var.classes), name="accuracy")
    return float(var.accuracy)


def _dpa_columns(runs: list) -> dict:
    """``psi_data, psi_model, dpa, absolute, n_flipped`` of a list of ``(psi_data, psi_model, n_flipped)`` runs."""
    psi_d = np.array([r[0] for r in runs], dtype=np.float64)
    psi_m = np.array([r[1] for r in runs], dtype=np.float64)
    total = psi_m + psi_d
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total > 0, (psi_m - psi_d) / np.where(total > 0, total, 1.0), 0.0)
    return {"psi_data": psi_d, "psi_model": psi_m, "dpa": np.clip(ratio, -1.0, 1.0), "absolute": psi_m - psi_d,
            "n_flipped": np.array([r[2] for r in runs], dtype=np.int64)}


def _direction_result(direction: str, runs: list, boot_runs: list, var: _Variable, level: float | None, job: _Job,
                      ci_over: str) -> DPADirectionResult:
    cols = _dpa_columns(runs)
    ratio, absolute = cols["dpa"], cols["absolute"]
    table = pd.DataFrame({"iteration": np.arange(len(runs)), **cols})
    boot = None
    if boot_runs:
        boot = pd.DataFrame({"replicate": np.arange(len(boot_runs)), **_dpa_columns(boot_runs)})
    ci, p_value, mde = _interval(ratio, boot, "dpa", level, (-1.0, 1.0), ci_over, job)
    return DPADirectionResult(
        direction=direction,
        value=float(ratio.mean()),
        std=_std(ratio),
        ci=ci,
        absolute=float(absolute.mean()),
        absolute_std=_std(absolute),
        absolute_ci=_interval(absolute, boot, "absolute", level, None, ci_over, job)[0],
        psi_data=float(cols["psi_data"].mean()),
        psi_model=float(cols["psi_model"].mean()),
        model_accuracy=_accuracy_field(var),
        iterations=table,
        level=level,
        attacker=_attacker_name(job.attacker),
        attacker_reason=job.reason,
        ci_over=ci_over if level is not None else "",
        p_value=p_value,
        replicates=boot,
        min_detectable=mde,
    )


def _resolve_attacker(attacker: Any, target: _Variable, inputs: list) -> tuple[Any, str]:
    """The attacker one direction runs, and why: ``"auto"`` resolved by :func:`choose_attacker`."""
    if not (isinstance(attacker, str) and attacker == "auto"):
        return attacker, "requested"
    if target.kind == "continuous":
        return "mlp_es", "continuous target: a regression attacker, the two-layer MLP with early stopping"
    return choose_attacker(inputs)


# --------------------------------------------------------------------------- #
# public functions
# --------------------------------------------------------------------------- #
def _common_checks(attacker, quality, n_iter, level, test_size, ci_over, n_boot):
    attacker = _check_attacker(attacker)
    quality = _check_quality(quality)
    _check_proba_support(attacker, quality)
    n_iter = _check_n_iter(n_iter, level)
    test_size = _check_test_size(test_size)
    check("ci_over", ci_over, (OneOf(*CI_OVER),))
    check("n_boot", n_boot, (Interval(Integral, 2, None), NONE))
    if level is None or ci_over == "iterations":
        n_boot = 0  # no interval, or none over the rows: no replicate to fit
    elif n_boot is None:
        n_boot = n_iter
    return attacker, quality, n_iter, test_size, int(n_boot)


def dpa(
    attr: Any,
    task: Any,
    *,
    attr_pred: Any = None,
    task_pred: Any = None,
    attacker: Any = "auto",
    quality: Any = "inv_ce",
    n_iter: int = 10,
    random_state: Any = None,
    level: float | None = DEFAULT_LEVEL,
    test_size: float = 0.2,
    equalize: bool = True,
    n_jobs: int | None = None,
    progress: bool | None = None,
    protocol: str = "split",
    fold: bool = False,
    attr_train: Any = None,
    task_train: Any = None,
    attr_pred_train: Any = None,
    task_pred_train: Any = None,
    ci_over: str = "both",
    n_boot: int | None = None,
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
        Ground truth of the protected attribute A (any label input kind),
        or continuous values (for ``quality="inv_rmse"``).
    task : labels of shape (n,) or (n, K_T)
        Ground truth of the task T, on the same rows.
    attr_pred : labels, optional
        The model's Â (hard, or probabilities). Needed for T→A.
    task_pred : labels, optional
        The model's T̂ (hard, or probabilities). Needed for A→T.
    attacker : {"auto", "tabular", "mlp_es", "mlp", "logistic"} or estimator, default "auto"
        ``"auto"``: per direction, ``"tabular"`` when the attacker input is
        discrete and at most 5% of the rows have an input row seen fewer than
        10 times (the tabular estimate is then exact), else ``"mlp_es"``; the
        result records which ran and why (``attacker``,
        ``attacker_reason``). ``"tabular"``: :class:`TabularAttacker`, the
        Bayes-optimal attacker for discrete inputs. ``"mlp_es"``: two hidden
        layers of 32 ReLU units, L-BFGS stopped on a held-out tenth's log-loss,
        on at most 50,000 (distinct, weighted) rows and 200 iterations.
        ``"mlp"``: the same network trained to convergence (up to 500
        iterations). ``"logistic"``: ``LogisticRegression``
        (``LinearRegression`` for a continuous target). An estimator instance
        is cloned for every fit (its ``random_state``, when ``None``, is set
        to the iteration's seed).
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
        Seed; a given value makes the result bit-identical for any ``n_jobs``
        and any number of BLAS/OpenMP threads.
    level : float or None, default 0.95
        Confidence level of ``ci``; ``None`` skips the interval (and allows
        ``n_iter=1``).
    test_size : float, default 0.2
        Held-out fraction on which each attacker is scored.
    equalize : bool, default True
        Apply accuracy equalisation (ignored for a continuous target).
    n_jobs : int or None, default None
        Worker processes for the iterations (joblib; ``-1``: all cores; ``1``:
        none). ``None``: the first iteration of each direction runs here, and
        the rest is spread over the idle cores (the cores minus the load
        average) when it would take more than 5 s. Each fit uses one thread,
        so the cores are not oversubscribed; the result does not depend on
        ``n_jobs``.
    progress : bool or None, default None
        ``None``: a progress bar when stderr is a terminal, otherwise a plain
        line on stderr every 10 s (stage, done/total, time left) once a call
        runs that long; ``True``: a bar; ``False``: nothing.
    protocol : {"split", "train_test"}, default "split"
        Where the attackers are fitted and scored (:ref:`def-predictability`).
        ``"split"`` (the DPA paper's): a random held-out ``test_size`` of the
        given rows, redrawn per iteration. ``"train_test"`` (Wang et al.
        2019): every attacker is fitted on the training set
        (``attr_train``/``task_train``, and the model's predictions on those
        rows for the model side) and scored on the given (test) rows; use it
        on balanced data, where ``"split"`` has a downward bias (Notes).
    fold : bool, default False
        Report a binary target's accuracy as :math:`0.5 + |acc - 0.5|`
        (Wang et al.'s code). Needs ``quality="accuracy"`` and binary targets.
    attr_train, task_train : labels, optional
        Training ground truth, for ``protocol="train_test"`` only (both).
    attr_pred_train, task_pred_train : labels, optional
        The model's Â / T̂ on the training rows, for ``protocol="train_test"``:
        the model-side attacker of T→A / A→T is fitted on them.
    ci_over : {"both", "rows", "iterations"}, default "both"
        What the interval carries: the iterations and the test rows
        (``"both"``), the rows alone, or the iterations alone (the t-interval
        of the iterations, as in earlier releases). The rows' part comes from
        ``n_boot`` row-bootstrap replicates, each one iteration on a resample
        of the rows (docs/predictability.md, "Intervals").
    n_boot : int or None, default None
        Row-bootstrap replicates (``>= 2``; ``None``: ``n_iter``), fitted when
        ``ci_over`` is ``"both"`` or ``"rows"`` and ``level`` is not ``None``.

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
        confidence interval; an unknown attacker or quality; an unknown
        ``protocol``; ``"train_test"`` without the training labels or the
        model's predictions on them (or training labels with ``"split"``);
        ``fold`` with another quality or a non-binary target.
    TypeError
        An attacker that is not an estimator instance, or a bad
        ``random_state``.

    See Also
    --------
    leakage_amplification : the non-directional, absolute predecessor (LA).
    biasamp.bias_amp_directional : the co-occurrence directional metric BA→.

    Notes
    -----
    * **Accuracy equalisation** (Wang et al. 2019; DPA §3.1): with acc the model's accuracy of the
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
    * **The split artifact.** On an exactly balanced dataset (every task
      equally frequent in every group) a held-out part of the *same* rows is
      anti-correlated with the rest: a task whose training part holds more of
      one group holds more of the other in the held-out part, so the
      dataset-side attacker scores *below* chance (Wang et al.'s λ_D on the
      balanced imSitu sample: 41% instead of their protocol's 51%), and DPA
      reads the model side as amplification. ``protocol="train_test"`` fits
      on a separate training set and has no such bias; under it the training
      and the test rows are each equalised to the model's accuracy on them.
    * **Soft predictions**: the attacker target is the hard prediction (the
      most probable class; for multi-label, probability > 0.5), and the
      accuracy is that of the hard prediction.
    * **Multi-label targets**: ``"mlp_es"``, ``"mlp"`` and ``"tabular"``
      predict all label columns at once (one sigmoid output / one smoothed
      rate per column); ``"logistic"`` and estimator instances are fitted once
      per column. Qualities average over the columns (binary cross-entropy
      per entry, per-entry accuracy, macro F1 over labels).
    * The built-in attackers fit the distinct (input, target) rows of a
      discrete input weighted by their counts, which is the same objective
      as fitting every row (L-BFGS is full-batch) and much faster.
      ``ConvergenceWarning`` is silenced: a fixed iteration budget is part of
      the attacker's definition.
    * **Thread invariance**: every fit (built-in attackers and estimator
      instances) runs with BLAS/OpenMP limited to one thread (threadpoolctl;
      PyTorch's intra-op pool too), in this process or in a worker, so the
      floating-point reductions inside a fit always run in the same order.
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
    attacker, quality, n_iter, test_size, n_boot = _common_checks(attacker, quality, n_iter, level, test_size, ci_over,
                                                                  n_boot)
    _check_protocol(protocol, fold, quality, attr_train, task_train,
                    {"attr_pred": (attr_pred, attr_pred_train, "T->A"),
                     "task_pred": (task_pred, task_pred_train, "A->T")})
    q_for = quality if isinstance(quality, str) else None
    a = _encode_variable(attr, attr_pred, "attr", "attr_pred", q_for if attr_pred is not None else None,
                         attr_train, attr_pred_train)
    t = _encode_variable(task, task_pred, "task", "task_pred", q_for if task_pred is not None else None,
                         task_train, task_pred_train)
    _check_lengths(a, t)
    if fold:
        _check_fold_targets([v for v, pred in ((t, task_pred), (a, attr_pred)) if pred is not None])
    if attacker == "tabular":
        for var, pred in ((a, task_pred), (t, attr_pred)):
            if pred is not None and not var.discrete:
                raise ValueError(
                    f"attacker='tabular' needs a discrete input, but {var.name} is continuous; use 'mlp' or 'logistic'"
                )
    jobs = []
    for direction, src, dst, pred, offset in (("A->T", a, t, task_pred, 0), ("T->A", t, a, attr_pred, 3)):
        if pred is not None:
            chosen, reason = _resolve_attacker(attacker, dst, [(src.name, src.ids("y") if src.discrete else None)])
            jobs.append((direction, _Job("dpa", src, dst, chosen, quality, test_size, equalize, reason, protocol,
                                         bool(fold)), offset, dst))
    states, boots = _seed_states(random_state, n_iter, n_boot)
    tasks = [(job, st[off:off + 3]) for st in states for (_, job, off, _) in jobs]
    tasks += [(job, st[off // 3 * 4:off // 3 * 4 + 4]) for st in boots for (_, job, off, _) in jobs]
    stage = ", ".join(f"{direction} {_attacker_name(job.attacker)}" for direction, job, _, _ in jobs)
    runs = _run_all(tasks, n_jobs, progress, "DPA", stage)
    split = n_iter * len(jobs)
    out: dict[str, DPADirectionResult] = {}
    for j, (direction, job, _, var) in enumerate(jobs):
        out[direction] = _direction_result(direction, runs[:split][j::len(jobs)], runs[split:][j::len(jobs)], var,
                                           level, job, ci_over)
    targets = [var for (_, _, _, var) in jobs]
    return DPAResult(
        a_to_t=out.get("A->T"),
        t_to_a=out.get("T->A"),
        attacker=_attacker_name(attacker),
        quality=_quality_name(quality),
        n_iter=n_iter,
        test_size=test_size,
        equalized=bool(equalize) and any(v.discrete for v in targets),
        protocol=protocol,
        fold=bool(fold),
    )


def _check_lengths(a: _Variable, t: _Variable) -> int:
    if a.n_train != t.n_train:
        raise ValueError(f"length mismatch: attr_train has {a.n_train}, task_train has {t.n_train} rows")
    lengths = {"attr": len(a.y) - a.n_train, "task": len(t.y) - t.n_train}
    if a.y_pred is not None:
        lengths["attr_pred"] = len(a.y_pred) - a.n_train
    if t.y_pred is not None:
        lengths["task_pred"] = len(t.y_pred) - t.n_train
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"length mismatch: {desc} rows")
    n = lengths["attr"]
    if a.n_train:
        if n < 2 or a.n_train < 2:
            raise ValueError(f"protocol='train_test' needs at least 2 training and 2 test rows, got "
                             f"{a.n_train} and {n}")
    elif n < 4:
        raise ValueError(f"need at least 4 rows to split into attacker train/test sets, got {n}")
    return n


_PROTOCOLS = ("split", "train_test")


def _check_protocol(protocol: Any, fold: Any, quality: Any, attr_train: Any, task_train: Any,
                    predictions: dict) -> None:
    """Validate ``protocol`` / ``fold`` and the training-side arguments they need.

    ``predictions``: ``{name: (test prediction, training prediction, direction)}``.
    """
    if not isinstance(protocol, str) or protocol not in _PROTOCOLS:
        raise ValueError(f"protocol must be one of {_PROTOCOLS}, got {protocol!r}")
    if not isinstance(fold, (bool, np.bool_)):
        raise TypeError(f"fold must be True or False, got {fold!r}")
    if fold and quality != "accuracy":
        raise ValueError(f"fold=True folds an accuracy (0.5 + |acc - 0.5|); it needs quality='accuracy', "
                         f"got {_quality_name(quality)!r}")
    given = [name for name, value in (("attr_train", attr_train), ("task_train", task_train)) if value is not None]
    given += [f"{name}_train" for name, (_, value, _) in predictions.items() if value is not None]
    if protocol == "split":
        if given:
            raise ValueError(f"{', '.join(given)} given, but protocol='split' fits and scores the attackers on "
                             "the given rows; pass protocol='train_test' to use a training set")
        return
    if attr_train is None or task_train is None:
        raise ValueError("protocol='train_test' needs the training ground truth: give attr_train and task_train")
    for name, (pred, pred_train, direction) in predictions.items():
        if pred is not None and pred_train is None:
            raise ValueError(f"protocol='train_test' fits the model-side attacker of {direction} on the model's "
                             f"predictions for the training rows: give {name}_train with {name}")
        if pred is None and pred_train is not None:
            raise ValueError(f"{name}_train given without {name}")


def _check_fold_targets(targets: list) -> None:
    for var in targets:
        if var.kind != "single" or var.n_classes != 2:
            raise ValueError(f"fold=True needs binary targets (0.5 + |acc - 0.5| folds a two-class accuracy), "
                             f"but {var.name} has {var.n_classes or 'continuous'} classes"
                             + (" (multi-label)" if var.kind == "multi" else ""))


@keyword_only_since("0.2.0", "task_pred")
def leakage_amplification(
    attr: Any,
    task: Any,
    *,
    task_pred: Any,
    attacker: Any = "auto",
    quality: Any = "accuracy",
    n_iter: int = 10,
    random_state: Any = None,
    level: float | None = DEFAULT_LEVEL,
    test_size: float = 0.2,
    equalize: bool = True,
    n_jobs: int | None = None,
    progress: bool | None = None,
    protocol: str = "split",
    fold: bool = False,
    attr_train: Any = None,
    task_train: Any = None,
    task_pred_train: Any = None,
    ci_over: str = "both",
    n_boot: int | None = None,
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
    task_pred : labels (keyword-only)
        The model's T̂: hard labels or probabilities; probabilities are fed
        to the model-side attacker as they are (the accuracy uses the hard
        prediction). The tabular attacker cannot condition on probabilities:
        ``attacker="tabular"`` with soft ``task_pred`` raises ``ValueError``
        (``"auto"`` takes the MLP for them).
    attacker, quality, n_iter, random_state, level, test_size, equalize, n_jobs, progress
        As in :func:`dpa`; the default quality is ``"accuracy"`` (Wang et al.).
    protocol : {"split", "train_test"}, default "split"
        As in :func:`dpa`. ``"train_test"`` is Wang et al.'s protocol: the
        attackers are fitted on the training set (the flipped T' and the
        model's T̂ on the training rows) and scored on the given rows.
    fold : bool, default False
        Report the accuracy as :math:`0.5 + |acc - 0.5|` (Wang et al.'s
        code); needs ``quality="accuracy"`` and a binary ``attr``.
    attr_train, task_train : labels, optional
        Training ground truth, for ``protocol="train_test"`` only.
    task_pred_train : labels, optional
        The model's T̂ on the training rows, for ``protocol="train_test"``.
    ci_over : {"both", "rows", "iterations"}, default "both"
        As in :func:`dpa`.
    n_boot : int or None, default None
        As in :func:`dpa`.

    Returns
    -------
    LeakageResult
        ``.value`` (mean LA), ``.std``, ``.ci``, ``.iterations``.

    Raises
    ------
    ValueError, TypeError
        As in :func:`dpa` (``protocol``, ``fold`` and the training arguments
        included); also ``attacker="tabular"`` with probabilities as ``task_pred``.

    See Also
    --------
    dpa : the directional, relative (bounded) successor.

    Notes
    -----
    LA is not directional and measures an absolute change, so it depends on
    the dataset's own leakage and on the attacker's capacity (DPA §3.2).
    Both attackers of one iteration share the split (stratified on A) and the
    seed. The CI is clipped to [-1, 1] for ``"accuracy"`` and ``"f1"``.
    On exactly balanced data the default ``protocol="split"`` puts
    :math:`\lambda_D` below chance (the split artifact of :func:`dpa`);
    ``protocol="train_test"`` does not.
    ``attacker="auto"`` reads both inputs, T (standing for the flipped T′,
    which has as many errors as T̂) and T̂: the tabular attacker only when
    both are discrete with well-filled cells (soft T̂ is continuous).

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
    >>> res = leakage_amplification(attr, task, task_pred=attr, attacker="tabular",
    ...                             n_iter=3, random_state=0, progress=False)
    >>> res.lambda_model, 0.4 < res.value < 0.6   # T̂ = A leaks A completely
    (1.0, True)
    """
    if task_pred is None:
        raise ValueError("task_pred is None; leakage amplification needs the model's task predictions")
    attacker, quality, n_iter, test_size, n_boot = _common_checks(attacker, quality, n_iter, level, test_size, ci_over,
                                                                  n_boot)
    _check_protocol(protocol, fold, quality, attr_train, task_train,
                    {"task_pred": (task_pred, task_pred_train, "LA")})
    q_for = quality if isinstance(quality, str) else None
    a = _encode_variable(attr, None, "attr", "attr_pred", q_for, attr_train, None)
    t = _encode_variable(task, task_pred, "task", "task_pred", None, task_train, task_pred_train)
    _check_lengths(a, t)
    if fold:
        _check_fold_targets([a])
    if attacker == "tabular" and not t.discrete:
        raise ValueError("attacker='tabular' needs a discrete input, but task is continuous; use 'mlp' or 'logistic'")
    if attacker == "tabular" and t.soft is not None:
        # the model-side attacker's input would be the probabilities themselves: almost every test row an
        # unseen cell, answered by the prior (a silent, meaningless lambda_M)
        raise ValueError(
            "attacker='tabular' needs a discrete input, but task_pred holds probabilities (soft predictions), "
            "which the tabular attacker cannot condition on; pass hard predictions, or use attacker='auto' "
            "(which takes the MLP for soft input), 'mlp_es', 'mlp' or 'logistic'"
        )
    inputs = [("task", t.ids("y") if t.discrete else None),
              ("task_pred", t.ids("x_pred") if t.discrete and _is_hard(t.prediction_input()) else None)]
    chosen, reason = _resolve_attacker(attacker, a, inputs)
    job = _Job("leakage", t, a, chosen, quality, test_size, equalize, reason, protocol, bool(fold))
    states, boots = _seed_states(random_state, n_iter, n_boot)
    tasks = [(job, st[0:3]) for st in states] + [(job, st[0:4]) for st in boots]
    runs = _run_all(tasks, n_jobs, progress, "leakage", _attacker_name(chosen))
    table = _leakage_table(runs[:n_iter], "iteration")
    boot = _leakage_table(runs[n_iter:], "replicate") if boots else None
    la, lam_d, lam_m = (table[c].to_numpy() for c in ("leakage", "lambda_data", "lambda_model"))
    bounded = quality in ("accuracy", "f1")
    ci, p_value, mde = _interval(la, boot, "leakage", level, (-1.0, 1.0) if bounded else None, ci_over, job)
    return LeakageResult(
        value=float(la.mean()),
        std=_std(la),
        ci=ci,
        lambda_data=float(lam_d.mean()),
        lambda_model=float(lam_m.mean()),
        model_accuracy=_accuracy_field(t),
        iterations=table,
        attacker=_attacker_name(chosen),
        quality=_quality_name(quality),
        level=level,
        attacker_reason=reason,
        protocol=protocol,
        fold=bool(fold),
        ci_over=ci_over if level is not None else "",
        p_value=p_value,
        replicates=boot,
        min_detectable=mde,
    )


def _leakage_table(runs: list, index: str) -> pd.DataFrame:
    """``index, lambda_data, lambda_model, leakage, n_flipped`` of ``(lambda_data, lambda_model, n_flipped)`` runs."""
    lam_d = np.array([r[0] for r in runs], dtype=np.float64)
    lam_m = np.array([r[1] for r in runs], dtype=np.float64)
    return pd.DataFrame({index: np.arange(len(runs)), "lambda_data": lam_d, "lambda_model": lam_m,
                         "leakage": lam_m - lam_d, "n_flipped": np.array([r[2] for r in runs], dtype=np.int64)})
