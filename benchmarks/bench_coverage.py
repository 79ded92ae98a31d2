"""Benchmark: coverage of ``biasamp.bootstrap``'s 95% intervals on populations with known values.

Each scenario is a finite population whose metric values are computed exactly
(from the population's cell probabilities, by the formulas of the definitions;
no estimate from a finite sample). From it the script draws many test samples
(seeded), calls ``biasamp.bootstrap(metric, ..., n_boot=B, level=0.95,
ci_method=M, random_state=seed)`` for M in ``"auto" "percentile" "basic"
"bca"``, and reports, per statistic x scenario x method:

* **coverage**: the fraction of intervals that contain the true value;
* **holds est.**: the fraction of intervals that contain their own estimate;
* **mean width** of the intervals;
* a **verdict** against the targets: coverage >= 0.93 where the true value is
  away from 0, >= 0.90 where it is exactly 0 (no disparity / no
  amplification), and every interval holding its own estimate.

A method that ``bootstrap`` does not support (``ValueError``/``TypeError`` on
the first sample) is reported as ``n/a``. The table is printed as text and,
at the end, as markdown.

Scenarios (rows per test sample in brackets):

* ``fair2-none`` / ``fair2-real`` [1000]: group fairness, binary task (1-D
  labels 0/1, both classes averaged: ``average="macro"``), two groups; the
  joint of (label, prediction) identical in both groups (every metric is 0),
  or different base rates, TPRs and FPRs.
* ``fair2b-none`` / ``fair2b-real`` [1000]: the same populations with the
  library's default for a binary task, ``average="binary"`` (class 1 only).
* ``fair40-none`` / ``fair40-real`` [4000]: binary task, class 1, 40 groups
  (one of 20%, 39 of about 2%): more groups than ``PAIRWISE_MAX_GROUPS``, so
  the intervals of DP, EOFP and EOTP come from a band on the 40 group rates
  instead of the 780 pairwise differences.
* ``fair3-none`` / ``fair3-real`` [2000]: three classes x three groups, the
  same two cases; ``fair3-part`` [2000]: one group (20%) differs from the
  others only in how it confuses the classes, so that some per-class terms
  are exactly 0 and the others small (the case where the percentile interval
  of FPSF/EOFP covers well below 95%).
* ``dir-amp`` / ``dir-none`` [1000]: BiasAmp-> (A->T, T->A), two groups x
  three multi-label tasks, fixed training set; a model that amplifies both
  directions, and a model with P(T^|A) = P(T|A) and P(A^|T) = P(A|T) exactly
  (both values 0).
* ``mals-amp`` [1000]: BiasAmp_MALS, fixed training set, amplifying model.
* ``multi-amp`` / ``multi-none`` [1000]: Multi_MALS and Multi-> (G->M, M->G;
  "abs" and "raw"), two groups x three attributes (the seven non-empty
  attribute sets are the combinations), fixed training set; amplifying model
  and a model with no amplification (every Delta exactly 0).
* ``noise-dir`` / ``noise-mals`` / ``noise-multi`` [6000]: **no training set**
  (the signs, the MALS indicator and Multi->'s y come from the test rows,
  cross-fitted by default): an attribute of 200 equally likely levels,
  independent of a binary task (P(T=1) = .45); T^ is T flipped with
  probability .3, A^ is A with probability .8 and a uniformly drawn level
  otherwise. Every sign and indicator of the population is 0, so A->T, T->A,
  MALS and the raw Multi values are exactly 0 (issue 21's reproducer: the
  plug-in signs read A->T at about -0.045). ``--plug-in`` runs them with
  ``cross_fit=False`` (the signs of the same test rows), for comparison;
  ``--include-small-groups`` with ``include_small_groups=True``.

Populations of the co-occurrence scenarios: the (attribute, tasks) part of the
population *is* the empirical distribution of the fixed training set (drawn
once per scenario), so the training statistics (signs y, bias_train, the
indicator, the combinations) are those of the population and the
no-amplification models have every true value exactly 0, Multi_MALS and MALS
included. The predictions come from a model (a kernel P(A^, T^ | A, T)); the
no-amplification kernel mixes the perfect prediction, "T^ redrawn from
P(T | A) with A^ = A" and "A^ redrawn from P(A | T) with T^ = T", each of
which preserves P(T^ | A), P(A^ | T) and the joint of (A^, T^).

The true values are checked twice: against the library's pure functions of
the counts on the expected count tables (exact, ``check_truth_exact``), and,
unless ``--no-truth-check``, against the label-level metric on one large
sample (``--check-rows``, default 5,000,000).

Run: ``python benchmarks/bench_coverage.py [--quick] [--n-samples N] [--n-boot B]
[--only KEY ...] [--methods M ...] [--seed S] [--n-jobs J] [--groups G] [--plug-in]
[--include-small-groups] [--stream [P]] [--stream-groups G] [--weights]``

``--weights`` gives every row of a noise-* sample an integer weight 1-3 drawn independently of its labels (the
truth does not change): the coverage of the weighted cross-fitted bootstrap, in memory or streamed.

``--groups G`` forces the grouped bootstrap (the scheme ``biasamp.bootstrap``
switches to on large data: rows split at random into G groups, replicates
resample the groups) at these small sizes, to measure its coverage.

``--stream [P]`` measures the streamed bootstrap instead (the accumulators', Dask's and ``biasamp audit
--stream``'s): the same calls through ``biasamp.dask.bootstrap`` with the label arrays cut into P Dask
partitions (default 3; the training statistics stay fixed, as in memory), so every test row is hashed into one
of 1,000 groups and the replicates resample the non-empty groups; ``--stream-groups G`` sets G (e.g. 50: groups
of 20-80 rows at these sizes, the regime of large streams). The noise-* scenarios (no training set) cross-fit
the signs over every row as the function does (streams keep their distinct rows and split them at the end), and
their replicates deal those rows' units to the groups at the end.

``--only dpa`` (or a longer prefix of ``dpa-noise-80``, ``dpa-noise-3000``, ``dpa-noise3-3000``,
``dpa-noise-80-mlp``) measures instead the coverage of 0 by the DPA and LA intervals
(``biasamp.dpa`` / ``biasamp.leakage_amplification`` with ``ci_over="both"``, ``"rows"`` and
``"iterations"``) on noise, where every true value is exactly 0 (:class:`PredictabilityCase`);
the tabular attacker for most samples, the early-stopped MLP on a few.

``--quick`` is 100 samples x 300 replicates, truth check on 1M rows. The
simulation code is shared with ``tests/test_coverage.py`` (a small seeded run).
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import biasamp

METHODS = ("auto", "percentile", "basic", "bca")
LEVEL = 0.95
TARGET_AWAY = 0.93
TARGET_ZERO = 0.90
ZERO = 1e-12  # |truth| below this is "exactly 0" (float rounding of exact zeros)
TOL = 1e-10  # tolerance on interval ends for "contains"

FAIRNESS_STATS = tuple(biasamp.METRICS)  # DP DI SPSF FPSF EOFP EOTP BA
DIRECTIONAL_STATS = ("A->T", "T->A")
MALS_STATS = ("MALS",)
MULTI_STATS = ("Multi_MALS", "G->M", "M->G", "Multi_MALS raw", "G->M raw", "M->G raw")
DF_STATS = ("DF amplification", "epsilon_true", "epsilon_pred")


# --------------------------------------------------------------------------- #
# scenario
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class Scenario:
    """A population with exact true values, and how to call ``bootstrap`` on a sample of it.

    ``cells`` holds one array per label column (one entry per population
    cell), ``prob`` the cells' probabilities; a test sample draws ``n`` cells
    with replacement. ``truth`` maps each statistic to its population value.
    """

    key: str
    title: str
    family: str  # "fairness" | "directional" | "mals" | "multi" | "differential" | "noise-dir" | ...
    index: int  # the scenario's number in every seed (its creation order in build_scenarios)
    n: int
    stats: tuple
    cells: dict
    prob: np.ndarray
    truth: dict
    train: dict = field(default_factory=dict)
    detail: dict = field(default_factory=dict)  # what the truth was computed from

    def draw(self, rng: np.random.Generator, n: int | None = None) -> dict:
        """One test sample (a dict of label arrays)."""
        idx = rng.choice(len(self.prob), size=self.n if n is None else n, p=self.prob)
        return {name: col[idx] for name, col in self.cells.items()}

    def bootstrap(self, sample: dict, **kwargs: Any):
        """``biasamp.bootstrap`` of this scenario's metric on one sample."""
        return _CALLS[self.family](self, sample, **kwargs)

    def metric_values(self, sample: dict) -> dict:
        """The label-level metric (no bootstrap) on one sample, statistic -> value."""
        return _VALUES[self.family](self, sample)


# --stream: the same calls through biasamp.dask.bootstrap, the label arrays as Dask arrays of STREAM_PARTITIONS
# partitions (the accumulators' streamed bootstrap: hashed group tables; the training statistics stay fixed). Set
# through the environment so that joblib's worker processes see it too.
STREAM_PARTITIONS = int(os.environ.get("BIASAMP_BENCH_STREAM", "0"))
STREAM_FAMILIES = ("fairness", "directional", "mals", "multi", "differential", "noise-dir", "noise-mals",
                   "noise-multi")  # every scenario: streams cross-fit the signs as the function does (the row set)
STREAM_GROUPS = int(os.environ.get("BIASAMP_BENCH_STREAM_GROUPS", "0"))  # --stream-groups G (0: the library's)


def _to_dask(x: Any) -> Any:
    import dask.array as da

    x = np.asarray(x)
    rows = -(-len(x) // STREAM_PARTITIONS)
    return da.from_array(x, chunks=(rows,) + x.shape[1:])


def _boot(metric, *args, **kwargs):
    """``biasamp.bootstrap``, or with ``--stream`` ``biasamp.dask.bootstrap`` (test rows as Dask arrays)."""
    if not STREAM_PARTITIONS:
        return biasamp.bootstrap(metric, *args, **kwargs)
    import dask

    import biasamp.dask as bdask
    from biasamp._engine import resample

    if STREAM_GROUPS:  # set here, in the process that counts (joblib's workers import biasamp afresh)
        resample.STREAM_GROUPS = STREAM_GROUPS

    args = tuple(_to_dask(a) for a in args)  # every label array, the training set's too (its own partitions)
    kwargs = {k: (_to_dask(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    with dask.config.set(scheduler="synchronous"):
        return bdask.bootstrap(metric, *args, **kwargs)


def _fairness_kwargs(sc) -> dict:
    """The average the scenario's truth uses: ``"macro"`` (mean over classes) or ``"binary"`` (class 1)."""
    return {"average": sc.detail.get("average", "macro")}


def _call_fairness(sc, s, **kw):
    return _boot(biasamp.fairness_metrics, s["y"], s["y_pred"], sensitive_features=s["group"],
                             **_fairness_kwargs(sc), **kw)


def _call_directional(sc, s, **kw):
    return _boot(biasamp.bias_amp_directional, s["attr"], s["task"], attr_pred=s["attr_pred"],
                             task_pred=s["task_pred"], attr_train=sc.train["attr"], task_train=sc.train["task"], **kw)


def _call_mals(sc, s, **kw):
    return _boot(biasamp.bias_amp_mals, attr_pred=s["attr_pred"], task_pred=s["task_pred"],
                 attr_train=sc.train["attr"], task_train=sc.train["task"], **kw)


def _call_multi(sc, s, **kw):
    return _boot(biasamp.multi_bias_amp, s["attr"], s["task"], attr_pred=s["attr_pred"],
                             task_pred=s["task_pred"], attr_train=sc.train["attr"], task_train=sc.train["task"], **kw)


def _call_differential(sc, s, **kw):
    return _boot(biasamp.df_bias_amplification, s["y"], s["y_pred"], sensitive_features=s["group"], **kw)


def _values_differential(sc, s):
    r = biasamp.df_bias_amplification(s["y"], s["y_pred"], sensitive_features=s["group"])
    return {"DF amplification": r.value, "epsilon_true": r.epsilon_true, "epsilon_pred": r.epsilon_pred}


def _values_fairness(sc, s):
    return dict(biasamp.fairness_metrics(s["y"], s["y_pred"], sensitive_features=s["group"],
                                         **_fairness_kwargs(sc)).overall)


def _values_directional(sc, s):
    r = biasamp.bias_amp_directional(s["attr"], s["task"], attr_pred=s["attr_pred"], task_pred=s["task_pred"],
                                     attr_train=sc.train["attr"], task_train=sc.train["task"])
    return {"A->T": r.a_to_t.value, "T->A": r.t_to_a.value}


def _values_mals(sc, s):
    return {"MALS": biasamp.bias_amp_mals(attr_pred=s["attr_pred"], task_pred=s["task_pred"],
                                          attr_train=sc.train["attr"], task_train=sc.train["task"]).value}


def _values_multi(sc, s):
    r = biasamp.multi_bias_amp(s["attr"], s["task"], attr_pred=s["attr_pred"], task_pred=s["task_pred"],
                               attr_train=sc.train["attr"], task_train=sc.train["task"])
    return {"Multi_MALS": r.mals.value, "G->M": r.g_to_m.value, "M->G": r.m_to_g.value,
            "Multi_MALS raw": r.mals.raw, "G->M raw": r.g_to_m.raw, "M->G raw": r.m_to_g.raw}


# without a training set (the noise scenarios): the signs come from the test rows, cross-fitted unless
# PLUG_IN["cross_fit"] is False (--plug-in); --include-small-groups adds include_small_groups=True
PLUG_IN: dict = {}
# --weights: every row of a noise-* sample gets an integer weight 1-3 drawn independently of its labels (so the
# weighted metric has the unweighted truth); through the environment for joblib's workers
WEIGHTED = os.environ.get("BIASAMP_BENCH_WEIGHTS", "") == "1"


def _labels(s: dict) -> tuple:
    preds = {"attr_pred": s["attr_pred"], "task_pred": s["task_pred"]}
    if WEIGHTED:  # one weight vector per sample, a function of the sample's size and first labels
        seed = [len(s["attr"]), *np.asarray(s["attr"][:8], dtype=np.int64).tolist()]
        preds["sample_weight"] = np.random.default_rng(seed).integers(1, 4, len(s["attr"])).astype(float)
    return (s["attr"], s["task"]), preds


def _call_noise_dir(sc, s, **kw):
    args, preds = _labels(s)
    return _boot(biasamp.bias_amp_directional, *args, **preds, **PLUG_IN, **kw)


def _call_noise_mals(sc, s, **kw):  # the test rows stand in for the training set, as the audit does
    args, preds = _labels(s)
    return _boot(biasamp.bias_amp_mals, *args, **preds, **{"cross_fit": True, **PLUG_IN}, **kw)


def _call_noise_multi(sc, s, **kw):
    args, preds = _labels(s)
    return _boot(biasamp.multi_bias_amp, *args, **preds, **PLUG_IN, **kw)


def _values_noise_dir(sc, s):
    args, preds = _labels(s)
    r = biasamp.bias_amp_directional(*args, **preds, **PLUG_IN)
    return {"A->T": r.a_to_t.value, "T->A": r.t_to_a.value}


def _values_noise_mals(sc, s):
    args, preds = _labels(s)
    return {"MALS": biasamp.bias_amp_mals(*args, **preds, **{"cross_fit": True, **PLUG_IN}).value}


def _values_noise_multi(sc, s):
    args, preds = _labels(s)
    r = biasamp.multi_bias_amp(*args, **preds, **PLUG_IN)
    return {"Multi_MALS raw": r.mals.raw, "G->M raw": r.g_to_m.raw, "M->G raw": r.m_to_g.raw}


_CALLS: dict[str, Callable] = {"fairness": _call_fairness, "directional": _call_directional,
                               "mals": _call_mals, "multi": _call_multi, "differential": _call_differential,
                               "noise-dir": _call_noise_dir, "noise-mals": _call_noise_mals,
                               "noise-multi": _call_noise_multi}
_VALUES: dict[str, Callable] = {"fairness": _values_fairness, "directional": _values_directional,
                                "mals": _values_mals, "multi": _values_multi, "differential": _values_differential,
                                "noise-dir": _values_noise_dir, "noise-mals": _values_noise_mals,
                                "noise-multi": _values_noise_multi}


def _snap(truth: dict) -> dict:
    return {k: (0.0 if abs(v) < ZERO else float(v)) for k, v in truth.items()}


# --------------------------------------------------------------------------- #
# group fairness populations: cells (group, y, y_pred)
# --------------------------------------------------------------------------- #
def fairness_joint(pi: np.ndarray, base: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """P(group g, label k, prediction j), shape (G, K, K), from P(g), P(k | g), P(j | k, g)."""
    joint = pi[:, None, None] * base[:, :, None] * confusion
    assert np.isclose(joint.sum(), 1.0)
    return joint


def fairness_truth(joint: np.ndarray, average: str = "macro") -> dict:
    """The seven metrics of the population ``joint`` (G, K, K), per class one-vs-rest, then the mean over
    classes (``average="macro"``) or class 1's value (``"binary"``)."""
    n_g = joint.sum(axis=(1, 2))[:, None]  # (G, 1)
    pos = joint.sum(axis=2)  # P_gk
    pred = joint.sum(axis=1)  # (TP+FP)_gk
    tp = np.diagonal(joint, axis1=1, axis2=2)  # TP_gk
    fp, neg = pred - tp, n_g - pos
    ppr, tpr, fpr = pred / n_g, tp / pos, fp / neg
    w = n_g / n_g.sum()
    per_class = {
        "DP": ppr.max(0) - ppr.min(0),
        "DI": 1 - ppr.min(0) / ppr.max(0),
        "SPSF": (w * np.abs(pred.sum(0) - ppr)).sum(0),  # overall PPR = Σ_g pred_gk (n = 1)
        "FPSF": (w * np.abs(fp.sum(0) / neg.sum(0) - fpr)).sum(0),
        "EOFP": fpr.max(0) - fpr.min(0),
        "EOTP": tpr.max(0) - tpr.min(0),
    }
    gbar = np.argmax(pos, axis=0)  # first group with the most positives of the class
    k = np.arange(pos.shape[1])
    per_class["BA"] = np.abs(pred[gbar, k] / pred.sum(0) - pos[gbar, k] / pos.sum(0))
    if average == "binary":
        return _snap({m: float(per_class[m][1]) for m in FAIRNESS_STATS})
    return _snap({m: float(np.mean(per_class[m])) for m in FAIRNESS_STATS})


def fairness_scenario(key, title, index, n, pi, base, confusion, average="macro") -> Scenario:
    pi, base, confusion = (np.asarray(x, dtype=np.float64) for x in (pi, base, confusion))
    joint = fairness_joint(pi, base, confusion)
    g, y, yp = (a.ravel() for a in np.indices(joint.shape))
    keep = joint.ravel() > 0
    # population positives per class must have a unique largest group (BA's ḡ), away from a tie
    pos = joint.sum(axis=2)
    top2 = np.sort(pos, axis=0)[-2:]
    assert np.all(top2[1] - top2[0] > 0.02), "BA's ḡ is nearly tied: pick other rates"
    return Scenario(key, title, "fairness", index, n, FAIRNESS_STATS,
                    {"group": g[keep], "y": y[keep], "y_pred": yp[keep]},
                    joint.ravel()[keep] / joint.ravel()[keep].sum(), fairness_truth(joint, average),
                    detail={"joint": joint, "average": average})


def df_truth(joint: np.ndarray) -> dict:
    """ε of the labels and of the predictions of a binary population ``joint`` (G, 2, 2), unsmoothed.

    The estimator smooths each group's rate with a concentration of 1 (a bias of order 1/n_g); the truth is
    its large-sample limit, the population's ε (Foulds et al.'s ε with no smoothing).
    """
    n_g = joint.sum(axis=(1, 2))
    p_true, p_pred = joint[:, 1, :].sum(axis=1) / n_g, joint[:, :, 1].sum(axis=1) / n_g

    def eps(p: np.ndarray) -> float:
        return float(max(np.ptp(np.log(p)), np.ptp(np.log1p(-p))))

    return _snap({"DF amplification": eps(p_pred) - eps(p_true), "epsilon_true": eps(p_true),
                  "epsilon_pred": eps(p_pred)})


def df_scenario(key, title, index, n, pi, base, confusion) -> Scenario:
    """A binary fairness population read by differential fairness (intersectional groups = the groups)."""
    sc = fairness_scenario(key, title, index, n, pi, base, confusion, average="binary")
    return Scenario(key, title, "differential", index, n, DF_STATS, sc.cells, sc.prob, df_truth(sc.detail["joint"]),
                    detail=sc.detail)


# --------------------------------------------------------------------------- #
# co-occurrence populations: cells (attr a, task set T, attr_pred Â, task set T̂)
# --------------------------------------------------------------------------- #
def _bits(k: int) -> np.ndarray:
    """Row s = the 0/1 vector of the subset with bitmask s, shape (2^k, k)."""
    return ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(np.int8)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def draw_train(rng: np.random.Generator, n: int, pi: Sequence[float], rates: np.ndarray) -> dict:
    """A training set: attribute a ~ pi, task t present independently with probability rates[a, t]."""
    attr = rng.choice(len(pi), size=n, p=pi)
    task = (rng.random((n, rates.shape[1])) < rates[attr]).astype(np.int8)
    return {"attr": attr, "task": task}


def train_table(train: dict, n_attr: int) -> np.ndarray:
    """#(a, task set) of the training set, shape (A, 2^K)."""
    k = train["task"].shape[1]
    mask = (train["task"].astype(np.int64) << np.arange(k)).sum(axis=1)
    return np.bincount(train["attr"] * 2**k + mask, minlength=n_attr * 2**k).reshape(n_attr, 2**k)


def train_sign(table: np.ndarray, contain: np.ndarray) -> np.ndarray:
    """y = sign(n·#(a, m) − #a·#m) in integers, for the columns of ``contain`` (task sets -> items)."""
    table = table.astype(np.int64)
    joint = table @ contain.astype(np.int64)  # #(a, m ⊆ T)
    n, na, nm = table.sum(), table.sum(axis=1)[:, None], joint.sum(axis=0)[None, :]
    return np.sign(n * joint - na * nm)


def amplifying_kernel(table: np.ndarray, *, acc_attr: float = 0.90, cue: float = 1.0,
                      tpr: float = 0.85, fpr: float = 0.08, d_tpr: float = 0.10, d_fpr: float = 0.06) -> np.ndarray:
    """P(Â, T̂ | a, T) of a model that exaggerates the training correlations (two groups).

    T̂_t given (a, T_t): TPR ``tpr + d_tpr·y_at``, FPR ``fpr + d_fpr·y_at``
    (more positives of a task for the group it is associated with: A->T).
    Â = 1 with probability sigmoid(±logit(acc_attr) + cue·Σ_t y_1t T_t) (the
    tasks push towards the group they are associated with: T->A). Â and T̂ are
    independent given (a, T). Shape (2, 2^K, 2, 2^K).
    """
    n_attr, n_sets = table.shape
    assert n_attr == 2
    k = int(round(math.log2(n_sets)))
    bits = _bits(k).astype(np.float64)
    y = train_sign(table, bits).astype(np.float64)  # (2, K)
    # task part: P(T̂ = s' | a, T = s) = Π_t P(T̂_t | a, T_t)
    p1 = np.where(bits[None, :, :] == 1, tpr + d_tpr * y[:, None, :], fpr + d_fpr * y[:, None, :])  # (2, S, K)
    task_k = np.prod(np.where(bits[None, None, :, :] == 1, p1[:, :, None, :], 1 - p1[:, :, None, :]), axis=3)
    # attribute part
    logit = math.log(acc_attr / (1 - acc_attr)) * np.array([-1.0, 1.0])[:, None] + cue * (bits @ y[1])[None, :]
    p_attr1 = _sigmoid(logit)  # (2, S)
    attr_k = np.stack([1 - p_attr1, p_attr1], axis=-1)  # (2, S, 2)
    return attr_k[:, :, :, None] * task_k[:, :, None, :]


def neutral_kernel(table: np.ndarray, perfect: float = 0.6) -> np.ndarray:
    """P(Â, T̂ | a, T) with P(T̂ | a) = P(T | a), P(Â | T) = P(A | T) and (Â, T̂) ~ (A, T).

    A mixture of the perfect prediction (weight ``perfect``), "T̂ redrawn from
    P(T | a), Â = a" and "Â redrawn from P(A | T), T̂ = T" (the rest, half each).
    Every branch preserves the three properties, so every Δ of BiasAmp->,
    MALS, Multi_MALS and Multi-> is exactly 0 on the population.
    """
    p = table / table.sum()
    n_attr, n_sets = p.shape
    eye_a, eye_s = np.eye(n_attr), np.eye(n_sets)
    p_t_given_a = p / p.sum(axis=1, keepdims=True)  # (A, S)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_a_given_t = np.nan_to_num(p / p.sum(axis=0, keepdims=True))  # (A, S); columns of unseen sets unused
    perfect_k = eye_a[:, None, :, None] * eye_s[None, :, None, :]
    redraw_task = eye_a[:, None, :, None] * p_t_given_a[:, None, None, :]
    redraw_attr = p_a_given_t.T[None, :, :, None] * eye_s[None, :, None, :]
    half = (1 - perfect) / 2
    return perfect * perfect_k + half * redraw_task + half * redraw_attr


def cooc_population(table: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """q[a, T, Â, T̂] = P_train(a, T) · kernel[a, T, Â, T̂]."""
    q = (table / table.sum())[:, :, None, None] * kernel
    assert np.isclose(q.sum(), 1.0)
    return q


def directional_truth(q: np.ndarray, table: np.ndarray) -> dict:
    """BiasAmp-> A->T and T->A of the population q with the signs of the training table."""
    k = int(round(math.log2(q.shape[1])))
    bits = _bits(k).astype(np.float64)
    y = train_sign(table, bits)
    p_a = q.sum(axis=(1, 2, 3))[:, None]
    at = q.sum(axis=(2, 3)) @ bits  # P(a, T_t = 1)
    a_that = q.sum(axis=(1, 2)) @ bits  # P(a, T̂_t = 1)
    ahat_t = (q.sum(axis=(0, 3)).T @ bits)  # P(Â = a, T_t = 1)
    p_t = at.sum(axis=0)[None, :]
    d_at = (a_that - at) / p_a
    d_ta = (ahat_t - at) / p_t
    return _snap({"A->T": float((y * d_at).mean()), "T->A": float((y * d_ta).mean())})


def mals_truth(q: np.ndarray, table: np.ndarray) -> dict:
    """BiasAmp_MALS of the population predictions q against the training table."""
    n_attr = table.shape[0]
    k = int(round(math.log2(q.shape[1])))
    bits = _bits(k)
    at = table.astype(np.int64) @ bits.astype(np.int64)  # train #(a, t)
    col = at.sum(axis=0)
    assert (col > 0).all()
    indicator = n_attr * at > col[None, :]
    pp = q.sum(axis=(0, 1)) @ bits.astype(np.float64)  # P(Â = a, T̂_t = 1)
    delta = pp / pp.sum(axis=0, keepdims=True) - at / col[None, :]
    return _snap({"MALS": float(np.where(indicator, delta, 0.0).sum() / len(col))})


def combinations_of(table: np.ndarray) -> np.ndarray:
    """The combinations M of "observed" mode: the distinct non-empty task sets of the train (bitmasks)."""
    sets = np.flatnonzero(table.sum(axis=0) > 0)
    return sets[sets > 0]


def containment(n_sets: int, combos: np.ndarray) -> np.ndarray:
    """contain[S, m] = 1 iff combination m ⊆ set S (bitmasks), shape (n_sets, M)."""
    s = np.arange(n_sets)[:, None]
    return ((s & combos[None, :]) == combos[None, :]).astype(np.float64)


def multi_truth(q: np.ndarray, table: np.ndarray) -> dict:
    """Multi_MALS and Multi-> (abs and raw) of the population q, combinations and signs from the train."""
    n_groups, n_sets = table.shape
    combos = combinations_of(table)
    contain = containment(n_sets, combos)
    y = train_sign(table, contain)
    joint = q.sum(axis=(2, 3)) @ contain  # P(g, m ⊆ S)
    p_g = q.sum(axis=(1, 2, 3))[:, None]
    g_mhat = q.sum(axis=(1, 2)) @ contain  # P(g, m ⊆ Ŝ)
    ghat_m = q.sum(axis=(0, 3)).T @ contain  # P(ĝ = g, m ⊆ S)
    ghat_mhat = q.sum(axis=(0, 1)) @ contain  # P(ĝ = g, m ⊆ Ŝ)
    d_gm = (g_mhat - joint) / p_g
    d_mg = (ghat_m - joint) / joint.sum(axis=0, keepdims=True)
    tj = table.astype(np.int64) @ contain.astype(np.int64)  # train #(g, m ⊆ S)
    col = tj.sum(axis=0)
    indicator = n_groups * tj > col[None, :]
    d_mals = np.where(indicator, ghat_mhat / ghat_mhat.sum(axis=0, keepdims=True) - tj / col[None, :], 0.0)
    m = len(combos)
    return _snap({
        "Multi_MALS": float(np.abs(d_mals).sum() / m), "G->M": float(np.abs(d_gm).mean()),
        "M->G": float(np.abs(d_mg).mean()), "Multi_MALS raw": float(d_mals.sum() / m),
        "G->M raw": float((y * d_gm).mean()), "M->G raw": float((y * d_mg).mean()),
    })


def cooc_scenario(key, title, family, index, n, train, kernel_fn) -> Scenario:
    table = train_table(train, 2)
    kernel = kernel_fn(table)
    q = cooc_population(table, kernel)
    k = train["task"].shape[1]
    bits = _bits(k)
    a, s, ah, sh = (x.ravel() for x in np.indices(q.shape))
    keep = q.ravel() > 0
    cells = {"attr": a[keep], "task": bits[s[keep]], "attr_pred": ah[keep], "task_pred": bits[sh[keep]]}
    prob = q.ravel()[keep] / q.ravel()[keep].sum()
    if family == "directional":
        stats, truth = DIRECTIONAL_STATS, directional_truth(q, table)
    elif family == "mals":
        stats, truth = MALS_STATS, mals_truth(q, table)
    else:
        stats, truth = MULTI_STATS, multi_truth(q, table)
        combos = combinations_of(table)
        assert len(combos) == 2**k - 1, "every non-empty attribute set must occur in the training set"
        # every combination must occur in every test sample (else M changes): expected count >= 20
        assert (q.sum(axis=(0, 2, 3)) @ containment(2**k, combos)).min() * n >= 20
    return Scenario(key, title, family, index, n, stats, cells, prob, truth, train, {"q": q, "table": table})


# --------------------------------------------------------------------------- #
# no training set: a noise attribute (cells (a, T, Â, T̂), 1-D labels)
# --------------------------------------------------------------------------- #
NOISE_STATS = {"noise-dir": DIRECTIONAL_STATS, "noise-mals": MALS_STATS,
               "noise-multi": ("Multi_MALS raw", "G->M raw", "M->G raw")}


def noise_scenario(key, title, family, index, n, levels=200, base=0.45, flip=0.3, attr_noise=0.2) -> Scenario:
    """An attribute of ``levels`` equally likely levels independent of a binary task; noisy predictions.

    P(a, t, â, t̂) = 1/levels · P(t) · P(â | a) · P(t̂ | t), with t̂ = t flipped
    with probability ``flip`` and â = a with probability ``1 - attr_noise``,
    else a uniformly drawn level. A and T are independent, so every sign
    y_at, every MALS indicator (bias_train = 1/|A| exactly, and the comparison
    is strict) and every y_gm is 0: the statistics of ``NOISE_STATS`` are 0.
    """
    p_t = np.array([1 - base, base])
    p_that = np.array([[1 - flip, flip], [flip, 1 - flip]])  # [t, t̂]
    p_ahat = np.full((levels, levels), attr_noise / levels) + np.eye(levels) * (1 - attr_noise)  # [a, â]
    q = (np.full(levels, 1 / levels)[:, None, None, None] * p_t[None, :, None, None]
         * p_ahat[:, None, :, None] * p_that[None, :, None, :])
    assert np.isclose(q.sum(), 1.0)
    a, t, ah, th = (x.ravel() for x in np.indices(q.shape))
    cells = {"attr": a, "task": t, "attr_pred": ah, "task_pred": th}
    stats = NOISE_STATS[family]
    return Scenario(key, title, family, index, n, stats, cells, q.ravel(), dict.fromkeys(stats, 0.0),
                    detail={"q": q})


# --------------------------------------------------------------------------- #
# the scenarios
# --------------------------------------------------------------------------- #
# P(task t | group): task 0 goes with group 0, tasks 1 and 2 with group 1, clearly enough that the
# training set's signs y and MALS indicators agree whatever the draw
RATES = np.array([[0.45, 0.25, 0.25],   # group 0
                  [0.25, 0.45, 0.40]])  # group 1
PI_ATTR = (0.55, 0.45)
N_TRAIN = 2000


def build_scenarios(seed: int = 0) -> list[Scenario]:
    """The scenarios (keys ``fair2-none`` ... ``multi-none``), deterministic given ``seed``."""
    bin_conf = lambda tpr, fpr: np.array([[1 - fpr, fpr], [1 - tpr, tpr]])  # rows: true 0, 1
    sym3 = lambda d: np.full((3, 3), (1 - d) / 2) + np.eye(3) * (d - (1 - d) / 2)
    scenarios: list[Scenario] = []

    def add(make, *args, **kw):
        scenarios.append(make(*args, index=len(scenarios), **kw))

    add(fairness_scenario, "fair2-none", "fairness, binary, 2 groups, no disparity", n=1000,
        pi=[0.6, 0.4], base=[[0.6, 0.4], [0.6, 0.4]], confusion=[bin_conf(0.8, 0.15)] * 2)
    add(fairness_scenario, "fair2-real", "fairness, binary, 2 groups, disparity", n=1000,
        pi=[0.6, 0.4], base=[[0.55, 0.45], [0.65, 0.35]], confusion=[bin_conf(0.85, 0.10), bin_conf(0.70, 0.20)])
    add(fairness_scenario, "fair3-none", "fairness, 3 classes x 3 groups, no disparity", n=2000,
        pi=[0.5, 0.3, 0.2], base=[[0.5, 0.3, 0.2]] * 3, confusion=[sym3(0.8)] * 3)
    add(fairness_scenario, "fair3-real", "fairness, 3 classes x 3 groups, disparity", n=2000,
        pi=[0.5, 0.3, 0.2], base=[[0.5, 0.3, 0.2], [0.4, 0.35, 0.25], [0.3, 0.4, 0.3]],
        confusion=[sym3(0.85), sym3(0.75), [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.15, 0.15, 0.7]]])
    for key, title, family, kernel in (
        ("dir-amp", "BiasAmp->, 2 groups x 3 tasks, amplifying model", "directional", amplifying_kernel),
        ("dir-none", "BiasAmp->, 2 groups x 3 tasks, no amplification", "directional", neutral_kernel),
        ("mals-amp", "BiasAmp_MALS, 2 groups x 3 tasks, amplifying model", "mals", amplifying_kernel),
        ("multi-amp", "Multi_MALS/Multi->, 2 groups x 3 attributes, amplifying", "multi", amplifying_kernel),
        ("multi-none", "Multi_MALS/Multi->, 2 groups x 3 attributes, no amplification", "multi", neutral_kernel),
    ):
        # one fixed training set per scenario, drawn once from its own stream
        train = draw_train(np.random.default_rng([seed, 7919, len(scenarios)]), N_TRAIN, PI_ATTR, RATES)
        add(cooc_scenario, key, title, family, n=1000, train=train, kernel_fn=kernel)
    # created last so that the other scenarios keep their seeds; shown after fair3-real
    part = fairness_scenario(
        "fair3-part", "fairness, 3 classes x 3 groups, group 2 differs in classes 1-2 only", index=len(scenarios),
        n=2000, pi=[0.5, 0.3, 0.2], base=[[0.5, 0.3, 0.2]] * 3,
        confusion=[sym3(0.8), sym3(0.8), [[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]])
    scenarios.insert(4, part)
    # the binary default (the positive class 1 only), created last to keep the other seeds; shown after fair2-real
    for key, title, base, confusion in (
        ("fair2b-none", "fairness, binary, 2 groups, no disparity, class 1 (average='binary')",
         [[0.6, 0.4], [0.6, 0.4]], [bin_conf(0.8, 0.15)] * 2),
        ("fair2b-real", "fairness, binary, 2 groups, disparity, class 1 (average='binary')",
         [[0.55, 0.45], [0.65, 0.35]], [bin_conf(0.85, 0.10), bin_conf(0.70, 0.20)])):
        sc = fairness_scenario(key, title, index=len(scenarios), n=1000, pi=[0.6, 0.4], base=base,
                               confusion=confusion, average="binary")
        scenarios.insert(2 + (key == "fair2b-real"), sc)
    # many groups (40 > PAIRWISE_MAX_GROUPS): the band of DP/EOFP/EOTP is on the group rates, not on the 780
    # pairwise differences; created last to keep the other seeds; shown last
    n_many = 40
    pi = np.r_[0.2, np.full(n_many - 1, 0.8 / (n_many - 1))]  # one large group: BA's ḡ is not tied
    for key, title, base, confusion in (
        ("fair40-none", "fairness, binary, 40 groups, no disparity, class 1",
         [[0.6, 0.4]] * n_many, [bin_conf(0.8, 0.15)] * n_many),
        ("fair40-real", "fairness, binary, 40 groups, disparity, class 1",
         [[1 - b, b] for b in np.linspace(0.35, 0.45, n_many)],
         [bin_conf(t, f) for t, f in zip(np.linspace(0.7, 0.85, n_many), np.linspace(0.2, 0.1, n_many))])):
        scenarios.append(fairness_scenario(key, title, index=len(scenarios), n=4000, pi=pi, base=base,
                                           confusion=confusion, average="binary"))
    # differential fairness, created after the 40-group scenarios (keeping every other seed): three groups whose positive rates differ
    # (.3/.4/.5) and a model that widens the gap; then no disparity at all (every ε is 0)
    add(df_scenario, "df-amp", "differential fairness, 3 groups, the model widens the gap", n=2000,
        pi=[0.5, 0.3, 0.2], base=[[0.7, 0.3], [0.6, 0.4], [0.5, 0.5]],
        confusion=[bin_conf(0.75, 0.10), bin_conf(0.85, 0.12), bin_conf(0.95, 0.20)])
    add(df_scenario, "df-none", "differential fairness, 3 groups, no disparity", n=2000,
        pi=[0.5, 0.3, 0.2], base=[[0.6, 0.4]] * 3, confusion=[bin_conf(0.8, 0.15)] * 3)
    # no training set: a noise attribute (issue 21's reproducer), created last to keep the other seeds
    for family, what in (("noise-dir", "BiasAmp->"), ("noise-mals", "BiasAmp_MALS"), ("noise-multi", "Multi raw")):
        add(noise_scenario, family, f"{what}, no training set, 200-level noise attribute x binary task", family,
            n=6000)
    return scenarios


# --------------------------------------------------------------------------- #
# checks of the true values
# --------------------------------------------------------------------------- #
def truth_from_library_counts(sc: Scenario, total: float = 1e6) -> dict:
    """The statistics computed by the library's pure count functions on the expected count tables.

    Expected counts = population probabilities x ``total`` (floats); the
    training counts are the training set's. Must equal ``sc.truth``: two
    independent computations of the same definitions.
    """
    if sc.family in ("fairness", "differential"):
        joint = sc.detail["joint"] * total
        n_groups, k = joint.shape[:2]
        counts = biasamp.ConfusionCounts(
            classes=tuple(range(k)), groups=tuple(range(n_groups)), n=joint.sum(axis=(1, 2)),
            positives=joint.sum(axis=2), predicted=joint.sum(axis=1),
            true_positives=np.diagonal(joint, axis1=1, axis2=2).copy())
        extra = _fairness_kwargs(sc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if sc.family == "differential":  # a vanishing concentration: the unsmoothed population ε
                r = biasamp.df_from_counts(counts, concentration=1e-9)
                return {"DF amplification": r.value, "epsilon_true": r.epsilon_true, "epsilon_pred": r.epsilon_pred}
            return dict(biasamp.fairness_from_counts(counts, **extra).overall)
    if sc.family.startswith("noise"):  # the plug-in on the population itself: its signs are those of the truth
        w = sc.prob * total
        c = sc.cells
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if sc.family == "noise-multi":
                r = biasamp.multi_bias_amp(c["attr"], c["task"], attr_pred=c["attr_pred"], task_pred=c["task_pred"],
                                           sample_weight=w, cross_fit=False, include_small_groups=True)
                return {"Multi_MALS raw": r.mals.raw, "G->M raw": r.g_to_m.raw, "M->G raw": r.m_to_g.raw}
            test = biasamp.CooccurrenceCounts.from_labels(c["attr"], c["task"], attr_pred=c["attr_pred"],
                                                          task_pred=c["task_pred"], sample_weight=w)
            train = test.restrict(["attr"], ["task"])
            if sc.family == "noise-mals":
                return {"MALS": biasamp.mals_from_counts(train, test.restrict(["attr_pred"], ["task_pred"]),
                                                         include_small_groups=True).value}
            r = biasamp.directional_from_counts(train, test, include_small_groups=True)
            return {"A->T": r.a_to_t.value, "T->A": r.t_to_a.value}
    q, table = sc.detail["q"] * total, sc.detail["table"]
    n_attr, n_sets = table.shape
    k = int(round(math.log2(n_sets)))
    train = biasamp.CooccurrenceCounts.from_labels(sc.train["attr"], sc.train["task"])
    bits = _bits(k).astype(np.float64)
    eye = np.eye(n_attr)
    ones = np.ones((n_attr, n_sets, n_attr, n_sets, 1))
    a, s, ah, sh = np.indices(q.shape)
    w = q.ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if sc.family in ("directional", "mals"):
            if sc.family == "directional":
                left = np.concatenate([ones, eye[a], eye[ah]], axis=-1).reshape(w.size, -1)
                right = np.concatenate([ones, bits[s], bits[sh]], axis=-1).reshape(w.size, -1)
                roles = (("attr", "attr_pred"), ("task", "task_pred"))
            else:
                left = np.concatenate([ones, eye[ah]], axis=-1).reshape(w.size, -1)
                right = np.concatenate([ones, bits[sh]], axis=-1).reshape(w.size, -1)
                roles = (("attr_pred",), ("task_pred",))
            test = biasamp.CooccurrenceCounts(attr_classes=train.attr_classes, task_classes=train.task_classes,
                                              attr_roles=roles[0], task_roles=roles[1],
                                              gram=left.T @ (w[:, None] * right))
            if sc.family == "mals":
                return {"MALS": biasamp.mals_from_counts(train, test).value}
            r = biasamp.directional_from_counts(train, test)
            return {"A->T": r.a_to_t.value, "T->A": r.t_to_a.value}
        combos = combinations_of(table)
        contain = containment(n_sets, combos)
        counts = biasamp.MultiAttributeCounts(
            attr_classes=train.attr_classes, task_classes=train.task_classes,
            combinations=tuple(tuple(int(j) for j in np.flatnonzero(_bits(k)[m])) for m in combos),
            n_train=int(table.sum()), train_attr=table.sum(axis=1), train_joint=table @ contain.astype(np.int64),
            n_test=int(round(total)), test_attr=q.sum(axis=(1, 2, 3)), test_joint=q.sum(axis=(2, 3)) @ contain,
            pred_attr=q.sum(axis=(0, 1, 3)), joint_g_mhat=q.sum(axis=(1, 2)) @ contain,
            joint_ghat_m=q.sum(axis=(0, 3)).T @ contain, joint_ghat_mhat=q.sum(axis=(0, 1)) @ contain)
        r = biasamp.multi_from_counts(counts)
        return {"Multi_MALS": r.mals.value, "G->M": r.g_to_m.value, "M->G": r.m_to_g.value,
                "Multi_MALS raw": r.mals.raw, "G->M raw": r.g_to_m.raw, "M->G raw": r.m_to_g.raw}


def check_truth_exact(sc: Scenario) -> float:
    """Max |library on expected counts − truth|; raises AssertionError above 1e-9."""
    lib = truth_from_library_counts(sc)
    dev = max(abs(lib[k] - sc.truth[k]) for k in sc.stats)
    assert dev < 1e-9, f"{sc.key}: truth {sc.truth} != library on expected counts {lib}"
    return dev


def check_truth_sample(sc: Scenario, rows: int, seed: int = 0) -> float:
    """Max |metric on one sample of ``rows`` rows − truth|; raises AssertionError beyond sampling error.

    The tolerance, 5e-3 at 5M rows scaled by sqrt(5M / rows), is several
    standard errors of every statistic here (the largest, DI and the 3x3
    EOTP, have standard errors near 1e-3 at 5M rows).
    """
    rng = np.random.default_rng([seed, 104729, sc.index])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = sc.metric_values(sc.draw(rng, rows))
    dev = max(abs(got[k] - sc.truth[k]) for k in sc.stats)
    tol = 5e-3 * math.sqrt(5e6 / rows)
    assert dev < tol, f"{sc.key}: truth {sc.truth} vs {rows:,}-row sample {got} (tolerance {tol:.4f})"
    return dev


# --------------------------------------------------------------------------- #
# the simulation
# --------------------------------------------------------------------------- #
@dataclass
class Row:
    """Coverage summary of one (scenario, statistic, method)."""

    scenario: str
    statistic: str
    truth: float
    method: str
    n: int = 0  # intervals obtained
    n_errors: int = 0  # calls that raised after the first sample succeeded (counted as misses)
    covered: int = 0
    holds: int = 0
    width: float = 0.0
    na: str = ""  # why the method is not available

    @property
    def total(self) -> int:
        return self.n + self.n_errors

    @property
    def coverage(self) -> float:
        return self.covered / self.total if self.total else float("nan")

    @property
    def holds_estimate(self) -> float:
        return self.holds / self.total if self.total else float("nan")

    @property
    def mean_width(self) -> float:
        return self.width / self.n if self.n else float("nan")

    @property
    def target(self) -> float:
        return TARGET_ZERO if self.truth == 0.0 else TARGET_AWAY

    @property
    def verdict(self) -> str:
        if self.na:
            return "n/a"
        problems = []
        if self.coverage < self.target:
            upper = wilson_upper(self.covered, self.total)
            problems.append("LOW COVERAGE" if upper < self.target else "low coverage (within MC error)")
        if self.holds < self.total:
            problems.append("MISSES OWN ESTIMATE")
        return "; ".join(problems) or "ok"

    @property
    def passed(self) -> bool:
        return not self.na and self.coverage >= self.target and self.holds == self.total


def wilson_upper(k: int, n: int, z: float = 1.96) -> float:
    """Upper end of the Wilson 95% interval of a binomial proportion k/n."""
    if n == 0:
        return float("nan")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre + half


def _contains(lo: float, hi: float, x: float) -> bool:
    return bool(np.isfinite(lo) and np.isfinite(hi) and lo - TOL <= x <= hi + TOL)


def bootstrap_sample(sc: Scenario, s: int, methods: Sequence[str], n_boot: int, seed: int = 0,
                     level: float = LEVEL) -> dict:
    """Test sample ``s`` of ``sc`` bootstrapped with every method.

    Returns ``{method: (seconds, outcome)}`` where ``outcome`` is the
    ``"Error: message"`` string of a ``ValueError``/``TypeError``, or
    ``{statistic: (estimate, low, high)}`` (``None`` for a statistic missing
    from the result). The sample and the ``random_state`` depend only on
    ``(seed, scenario, s)``: every method sees the same sample and seed.
    """
    rng = np.random.default_rng([seed, sc.index, s])
    sample = sc.draw(rng)
    random_state = int(np.random.SeedSequence([seed, sc.index, s, 1]).generate_state(1)[0])
    out = {}
    for m in methods:
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = sc.bootstrap(sample, n_boot=n_boot, level=level, ci_method=m, random_state=random_state)
        except (ValueError, TypeError) as exc:
            out[m] = (time.perf_counter() - t0, f"{type(exc).__name__}: {exc}")
            continue
        seconds = time.perf_counter() - t0
        values = {}
        for st in sc.stats:
            if st in res.estimate and st in res.ci:
                lo, hi = (float(v) for v in res.ci[st])
                values[st] = (float(res.estimate[st]), lo, hi)
            else:
                values[st] = f"no statistic {st!r} in the result (has {sorted(res.estimate)})"
        out[m] = (seconds, values)
    return out


def run_scenario(sc: Scenario, methods: Sequence[str] = METHODS, n_samples: int = 400, n_boot: int = 1000,
                 seed: int = 0, level: float = LEVEL, n_jobs: int = 1) -> tuple[dict, dict]:
    """Draw ``n_samples`` test samples and bootstrap each with every method.

    Returns ``(rows, seconds)``: ``rows[method][statistic]`` is a :class:`Row`,
    ``seconds[method]`` the time spent in ``bootstrap`` (summed over
    workers). A method that raises on the first sample is ``n/a``; one that
    raises on a later sample counts a miss (``n_errors``). The result does not
    depend on ``n_jobs`` (samples are seeded by index and summed in order).
    """
    rows = {m: {st: Row(sc.key, st, sc.truth[st], m) for st in sc.stats} for m in methods}
    seconds = dict.fromkeys(methods, 0.0)
    if n_jobs == 1:
        outcomes = (bootstrap_sample(sc, s, methods, n_boot, seed, level) for s in range(n_samples))
    else:
        from joblib import Parallel, delayed

        outcomes = Parallel(n_jobs=n_jobs, batch_size=8)(
            delayed(bootstrap_sample)(sc, s, methods, n_boot, seed, level) for s in range(n_samples))
    for s, outcome in enumerate(outcomes):
        for m, (t, result) in outcome.items():
            seconds[m] += t
            for st, r in rows[m].items():
                if r.na:
                    continue
                value = result if isinstance(result, str) else result[st]
                if isinstance(value, str):  # an exception, or a statistic missing from the result
                    if s == 0 or value.startswith("no statistic"):
                        r.na = value
                    else:
                        r.n_errors += 1
                    continue
                est, lo, hi = value
                r.n += 1
                r.covered += _contains(lo, hi, r.truth)
                r.holds += _contains(lo, hi, est)
                if np.isfinite(lo) and np.isfinite(hi):
                    r.width += hi - lo
    return rows, seconds


# --------------------------------------------------------------------------- #
# DPA and LA (--only dpa): coverage of 0 on noise by the intervals over the rows and the iterations
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class PredictabilityCase:
    """Noise rows for ``biasamp.dpa`` / ``biasamp.leakage_amplification``: every true value is exactly 0.

    A, T, Â and T̂ are independent uniform draws of ``classes`` classes. The
    model's errors G = T̂ - T (mod K) and the flips F of accuracy
    equalisation are then exchangeable given (A, T) (both: a uniformly drawn
    set of rows of the same size, each moved to a uniformly drawn other
    class), so Ψ_D and Ψ_M (λ_D and λ_M) have the same distribution and DPA
    A->T, DPA T->A and LA have expectation exactly 0 at every size.
    """

    key: str
    index: int
    n: int
    attacker: str
    n_samples: int  # default samples (the MLP is slow)
    classes: int = 2
    ci_over: tuple = ("both", "rows", "iterations")

    def draw(self, rng: np.random.Generator) -> tuple:
        return tuple(rng.integers(0, self.classes, self.n) for _ in range(4))


PREDICTABILITY_STATS = ("DPA A->T", "DPA T->A", "LA")
PREDICTABILITY_CASES = (
    PredictabilityCase("dpa-noise-80", 0, 80, "tabular", 400),
    PredictabilityCase("dpa-noise-3000", 1, 3000, "tabular", 400),
    PredictabilityCase("dpa-noise3-3000", 2, 3000, "tabular", 200, classes=3),
    PredictabilityCase("dpa-noise-80-mlp", 3, 80, "mlp_es", 60, ci_over=("both", "iterations")),
)


def predictability_sample(case: PredictabilityCase, s: int, seed: int = 0, level: float = LEVEL) -> dict:
    """``{ci_over: {statistic: (estimate, low, high)}}`` of sample ``s`` (default ``n_iter``, ``n_boot``)."""
    rng = np.random.default_rng([seed, 104729, case.index, s])
    attr, task, attr_pred, task_pred = case.draw(rng)
    random_state = int(np.random.SeedSequence([seed, 104729, case.index, s, 1]).generate_state(1)[0])
    kw = {"attacker": case.attacker, "random_state": random_state, "level": level, "n_jobs": 1, "progress": False}
    out = {}
    for over in case.ci_over:
        d = biasamp.dpa(attr, task, attr_pred=attr_pred, task_pred=task_pred, ci_over=over, **kw)
        la = biasamp.leakage_amplification(attr, task, task_pred=task_pred, ci_over=over, **kw)
        out[over] = {name: (r.value, *r.ci) for name, r in zip(PREDICTABILITY_STATS, (d.a_to_t, d.t_to_a, la))}
    return out


def run_predictability(case: PredictabilityCase, n_samples: int, seed: int = 0, n_jobs: int = 1) -> list[Row]:
    """Coverage of 0 / intervals holding their estimate / mean width, per statistic and ``ci_over``."""
    rows = {(over, st): Row(case.key, st, 0.0, over) for over in case.ci_over for st in PREDICTABILITY_STATS}
    if n_jobs == 1:
        outcomes = (predictability_sample(case, s, seed) for s in range(n_samples))
    else:
        from joblib import Parallel, delayed

        outcomes = Parallel(n_jobs=n_jobs)(delayed(predictability_sample)(case, s, seed) for s in range(n_samples))
    for outcome in outcomes:
        for over, values in outcome.items():
            for st, (est, lo, hi) in values.items():
                r = rows[(over, st)]
                r.n += 1
                r.covered += _contains(lo, hi, 0.0)
                r.holds += _contains(lo, hi, est)
                r.width += hi - lo
    return [rows[(over, st)] for st in PREDICTABILITY_STATS for over in case.ci_over]


def predictability_main(prefixes: Sequence[str], n_samples: int | None, seed: int, n_jobs: int) -> int:
    """``--only dpa``: the DPA/LA noise cases whose key starts with one of ``prefixes``."""
    cases = [c for c in PREDICTABILITY_CASES if any(c.key.startswith(p) for p in prefixes)]
    print(f"biasamp {biasamp.__version__}: coverage of 0 by {LEVEL:.0%} DPA/LA intervals on noise (A, T, A^, T^ "
          f"independent and uniform: every true value is 0); defaults n_iter=10, n_boot=n_iter, quality inv_ce (DPA) "
          f"and accuracy (LA); seed={seed}, n_jobs={n_jobs}; target coverage >= {TARGET_ZERO}\n")
    all_rows: list[Row] = []
    for case in cases:
        t0 = time.perf_counter()
        k = n_samples or case.n_samples
        rows = run_predictability(case, k, seed, n_jobs)
        all_rows += rows
        print(f"  {case.key:<17} {k} samples of {case.n} rows, {case.classes} classes, attacker {case.attacker}: "
              f"{time.perf_counter() - t0:6.1f} s", flush=True)
    print()
    print(format_text(all_rows))
    print()
    print("Markdown (columns: ci_over):\n")
    print(format_markdown(all_rows))
    return 0


# --------------------------------------------------------------------------- #
# output
# --------------------------------------------------------------------------- #
HEADER = ("scenario", "statistic", "truth", "method", "coverage", "holds est.", "mean width", "verdict")


def _cells(r: Row) -> list[str]:
    if r.na:
        return [r.scenario, r.statistic, f"{r.truth:.4f}", r.method, "n/a", "n/a", "n/a", "n/a"]
    err = f" ({r.n_errors} err)" if r.n_errors else ""
    return [r.scenario, r.statistic, f"{r.truth:.4f}", r.method, f"{r.coverage:.3f}{err}",
            f"{r.holds_estimate:.3f}", f"{r.mean_width:.4f}", r.verdict]


def format_text(rows: list[Row]) -> str:
    body = [_cells(r) for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(HEADER)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    out = [line(HEADER), line(["-" * w for w in widths])]
    prev = None
    for r, b in zip(rows, body):
        if prev is not None and r.scenario != prev:
            out.append("")
        prev = r.scenario
        out.append(line(b))
    return "\n".join(out)


def format_markdown(rows: list[Row]) -> str:
    """One line per (scenario, statistic), one column per method: coverage / holds est. / mean width."""
    methods = list(dict.fromkeys(r.method for r in rows))
    lines = {}
    for r in rows:
        lines.setdefault((r.scenario, r.statistic, r.truth), {})[r.method] = r

    def cell(r: Row | None) -> str:
        if r is None or r.na:
            return "n/a"
        mark = "" if r.passed else " ✗"
        return f"{r.coverage:.3f} / {r.holds_estimate:.3f} / {r.mean_width:.4f}{mark}"

    out = [
        "Each method's cell: coverage of the true value / fraction of intervals holding their own "
        f"estimate / mean width; ✗: misses a target (coverage >= {TARGET_AWAY}, or >= {TARGET_ZERO} "
        "where the truth is 0; every interval holds its estimate).",
        "",
        "| scenario | statistic | truth | " + " | ".join(methods) + " |",
        "|---|---|---:|" + "---:|" * len(methods),
    ]
    for (scenario, statistic, truth), by_method in lines.items():
        out.append(f"| {scenario} | {statistic} | {truth:.4f} | "
                   + " | ".join(cell(by_method.get(m)) for m in methods) + " |")
    return "\n".join(out)


# --------------------------------------------------------------------------- #
# one inference per reading (issue 30): the printed p agrees with its interval, and the power at the MDE
# --------------------------------------------------------------------------- #
AGREEMENT_SCENARIOS = ("dir-amp", "dir-none", "fair2b-none", "fair2b-real", "mals-amp")


def p_interval_agreement(scenarios: Sequence[Scenario], methods: Sequence[str], n_samples: int, n_boot: int,
                         seed: int = 0, level: float = LEVEL) -> list[tuple]:
    """Per (scenario, method): samples x statistics where ``p < 1 - level`` iff the interval excludes 0, of all.

    The p-value of :func:`biasamp.bootstrap` is its interval's inversion, so the count must be all of them; also
    counted: the intervals excluding 0 (a check that both sides of the equivalence are exercised).
    """
    from biasamp._engine.inference import excludes_zero

    out = []
    for sc in scenarios:
        for m in methods:
            agree = total = excluded = 0
            for s in range(n_samples):
                rng = np.random.default_rng([seed, sc.index, s])
                random_state = int(np.random.SeedSequence([seed, sc.index, s, 1]).generate_state(1)[0])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = sc.bootstrap(sc.draw(rng), n_boot=n_boot, level=level, ci_method=m,
                                       random_state=random_state)
                for st in sc.stats:
                    lo, hi = res.ci[st]
                    ex = bool(excludes_zero(lo, hi))
                    agree += (res.p_value[st] < 1 - level) == ex
                    excluded += ex
                    total += 1
            out.append((sc.key, m, agree, total, excluded))
    return out


def _power_population(family: str, effect: float, rng: np.random.Generator, n: int) -> tuple:
    """A sample of ``n`` rows whose true value is ``effect``: ``"dp"`` (group fairness DP, binary task, two equal
    groups, PPR 0.5 and 0.5 + effect: TPR and FPR of group 1 both raised by ``effect``) or ``"a->t"`` (BiasAmp->
    A->T, two equal groups, one task with P(T | A) = 0.4 / 0.6 fixed by the training set; the model redraws T^
    from P(T | A) for 30% of the rows, then turns a negative into a positive with probability q in group 1 and a
    positive into a negative with probability q in group 0: A->T = 0.4 q)."""
    g = rng.integers(0, 2, n)
    if family == "dp":
        y = (rng.random(n) < 0.5).astype(int)
        rate = np.where(y == 1, 0.7, 0.3) + effect * g
        return g, y, (rng.random(n) < rate).astype(int)
    p_true = np.where(g == 1, 0.6, 0.4)
    t = (rng.random(n) < p_true).astype(int)
    tp = np.where(rng.random(n) < 0.3, (rng.random(n) < p_true).astype(int), t)
    q = effect / 0.4
    turn = rng.random(n) < q
    tp = np.where((g == 1) & (tp == 0) & turn, 1, np.where((g == 0) & (tp == 1) & turn, 0, tp))
    return g, t, tp


_POWER_TRAIN = 20_000


def _power_call(family: str, sample: tuple, train: tuple, n_boot: int, random_state: int, level: float):
    g, y, p = sample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family == "dp":
            res = biasamp.bootstrap(biasamp.fairness_metrics, y, p, sensitive_features=g, metrics=["DP"],
                                    n_boot=n_boot, level=level, random_state=random_state)
            return res, "DP"
        res = biasamp.bootstrap(biasamp.bias_amp_directional, g, y, task_pred=p, attr_train=train[0],
                                task_train=train[1], n_boot=n_boot, level=level, random_state=random_state)
        return res, "A->T"


def power_at_mde(family: str, n: int, n_samples: int, n_boot: int, seed: int = 0, level: float = LEVEL) -> dict:
    """The power at a true effect equal to the reported MDE, found by two fixed-point steps.

    Step 0: the mean reported MDE over ``n_samples`` samples of the population without effect (the MDE grows
    a little with the effect: the model's errors add variance); steps 1 and 2: the population whose true value is
    the previous step's mean MDE, its mean reported MDE, and the fraction of its intervals excluding 0 (the
    power; about 0.8 if the MDE is right) with its Monte-Carlo standard error.
    """
    from biasamp._engine.inference import excludes_zero

    rng = np.random.default_rng([seed, 30, 0])
    tg = rng.integers(0, 2, _POWER_TRAIN)
    train = (tg, (rng.random(_POWER_TRAIN) < np.where(tg == 1, 0.6, 0.4)).astype(int))
    steps = []
    effect = 0.0
    for step in range(3):
        mdes, hits = [], []
        for s in range(n_samples):
            sample = _power_population(family, effect, np.random.default_rng([seed, 30, step + 1, s]), n)
            res, st = _power_call(family, sample, train, n_boot, int(seed * 1000 + s), level)
            mdes.append(res.min_detectable[st])
            hits.append(bool(excludes_zero(*res.ci[st])))
        power = float(np.mean(hits))
        steps.append({"effect": effect, "mde": float(np.mean(mdes)), "power": power,
                      "mc_se": math.sqrt(power * (1 - power) / n_samples)})
        effect = steps[-1]["mde"]
    return {"family": family, "n": n, "samples": n_samples, "steps": steps}


def inference_check(n_samples: int, n_boot: int, seed: int = 0, only: Sequence[str] | None = None,
                    methods: Sequence[str] = METHODS) -> int:
    """``--inference``: (a) the p-value / interval agreement count, (b) the power at the reported MDE."""
    t0 = time.perf_counter()
    keys = [k for k in AGREEMENT_SCENARIOS if not only or any(k.startswith(p) for p in only)]
    scenarios = [sc for sc in build_scenarios(seed) if sc.key in keys]
    print(f"biasamp {biasamp.__version__}: one inference per reading; {n_samples} samples, n_boot={n_boot}, "
          f"level {LEVEL}, seed {seed}\n")
    print("(a) p < 1 - level exactly when the interval excludes 0 (samples x statistics)\n")
    print("| scenario | method | agree | of | intervals excluding 0 |\n|---|---|---:|---:|---:|")
    bad = 0
    for key, m, agree, total, excluded in p_interval_agreement(scenarios, methods, n_samples, n_boot, seed):
        print(f"| {key} | {m} | {agree} | {total} | {excluded} |")
        bad += total - agree
    print(f"\n(b) power at a true effect equal to the reported MDE (target {0.8}; auto intervals; step 0: no "
          "effect, step k: the true effect is step k-1's mean MDE)\n")
    print("| statistic | rows | samples | step | true effect | mean reported MDE | intervals excluding 0 (MC SE) |"
          "\n|---|---:|---:|---:|---:|---:|---:|")
    for family, n in (("a->t", 1000), ("dp", 1000)):
        r = power_at_mde(family, n, n_samples, n_boot, seed)
        label = {"a->t": "BiasAmp-> A->T (BCa)", "dp": "DP (max-t band)"}[family]
        for k, st in enumerate(r["steps"]):
            print(f"| {label} | {n} | {r['samples']} | {k} | {st['effect']:.4f} | {st['mde']:.4f} | "
                  f"{st['power']:.3f} ({st['mc_se']:.3f}) |", flush=True)
    print(f"\ntotal time {time.perf_counter() - t0:.1f} s; disagreements: {bad}")
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 samples x 300 replicates, 1M-row truth check")
    parser.add_argument("--n-samples", type=int, default=None, help="test samples per scenario (default 400)")
    parser.add_argument("--n-boot", type=int, default=None, help="bootstrap replicates (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="+", default=None, metavar="KEY",
                        help="scenarios whose key starts with one of these (e.g. fair2 dir multi-none)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS),
                        help=f"ci_method values to measure (default: {' '.join(METHODS)})")
    parser.add_argument("--check-rows", type=int, default=None, help="rows of the truth-check sample (default 5M)")
    parser.add_argument("--no-truth-check", action="store_true", help="skip the large-sample truth check")
    parser.add_argument("--n-jobs", type=int, default=1,
                        help="worker processes over the samples (same results for any value; default 1)")
    parser.add_argument("--plug-in", action="store_true",
                        help="the no-training-set scenarios (noise-*) with cross_fit=False: the signs of the same "
                             "test rows (the biased plug-in), for comparison with the default cross-fitted signs")
    parser.add_argument("--include-small-groups", action="store_true",
                        help="the no-training-set scenarios (noise-*) with include_small_groups=True (their 200 "
                             "groups of about 30 rows are otherwise about half 'small', out of the headlines)")
    parser.add_argument("--groups", type=int, default=None, metavar="G",
                        help="force the grouped bootstrap with G groups of rows (the scheme biasamp.bootstrap "
                             "uses on large data) instead of the exact multinomial one; needs --n-jobs 1")
    parser.add_argument("--stream", type=int, nargs="?", const=3, default=None, metavar="P",
                        help="the streamed bootstrap instead: biasamp.dask.bootstrap on the test rows cut into P Dask "
                             "partitions (default 3), i.e. the accumulators' hashed-group bootstrap")
    parser.add_argument("--stream-groups", type=int, default=None, metavar="G",
                        help="with --stream: G hashed groups instead of the library's 1,000 (e.g. 50 for groups of "
                             "20-80 rows at these sizes)")
    parser.add_argument("--weights", action="store_true",
                        help="the no-training-set scenarios (noise-*) with integer sample weights 1-3 drawn "
                             "independently of the labels (the truth does not change): the weighted cross-fitted "
                             "bootstrap, in memory or with --stream")
    parser.add_argument("--inference", action="store_true",
                        help="one inference per reading instead of coverage: the p-value / interval agreement "
                             "count and the power at the reported MDE (default 200 samples, n_boot 500)")
    args = parser.parse_args(argv)
    if args.inference:
        return inference_check(args.n_samples or 200, args.n_boot or 500, args.seed, args.only, args.methods)
    if args.only and all(any(c.key.startswith(p) for c in PREDICTABILITY_CASES) for p in args.only):
        return predictability_main(args.only, args.n_samples or (40 if args.quick else None), args.seed, args.n_jobs)
    if args.stream is not None or args.stream_groups is not None:
        if args.stream is None or args.stream < 1 or (args.stream_groups is not None and args.stream_groups < 1):
            parser.error("--stream needs a positive number of partitions; --stream-groups needs --stream and G >= 1")
        global STREAM_PARTITIONS, STREAM_GROUPS
        STREAM_PARTITIONS, STREAM_GROUPS = args.stream, args.stream_groups or 0
        os.environ["BIASAMP_BENCH_STREAM"] = str(args.stream)  # for joblib's workers, whichever way they load us
        os.environ["BIASAMP_BENCH_STREAM_GROUPS"] = str(STREAM_GROUPS)
    if args.weights:
        global WEIGHTED
        WEIGHTED = True
        os.environ["BIASAMP_BENCH_WEIGHTS"] = "1"
    if args.groups is not None:
        if args.n_jobs != 1:
            parser.error("--groups needs --n-jobs 1 (the setting is made in this process)")
        from biasamp._engine import resample

        resample._EXACT_WORK, resample._GROUPS, resample._MIN_GROUP_ROWS = 0, args.groups, 1
    if args.plug_in or args.include_small_groups:
        if args.n_jobs != 1:
            parser.error("--plug-in and --include-small-groups need --n-jobs 1 (the setting is made in this process)")
        if args.plug_in:
            PLUG_IN["cross_fit"] = False
        if args.include_small_groups:
            PLUG_IN["include_small_groups"] = True
    n_samples = args.n_samples or (100 if args.quick else 400)
    n_boot = args.n_boot or (300 if args.quick else 1000)
    check_rows = args.check_rows or (1_000_000 if args.quick else 5_000_000)

    t_start = time.perf_counter()
    scenarios = build_scenarios(args.seed)
    if args.only:
        scenarios = [sc for sc in scenarios if any(sc.key.startswith(p) for p in args.only)]
        if not scenarios:
            parser.error(f"--only {args.only} matches no scenario")
    if STREAM_PARTITIONS:
        scenarios = [sc for sc in scenarios if sc.family in STREAM_FAMILIES]
    print(f"biasamp {biasamp.__version__}: coverage of {LEVEL:.0%} bootstrap intervals; {n_samples} samples "
          f"per scenario, n_boot={n_boot}, seed={args.seed}, methods {', '.join(args.methods)}, n_jobs={args.n_jobs}")
    if STREAM_PARTITIONS:
        from biasamp._engine import resample

        print(f"resampling: streamed (biasamp.dask.bootstrap, {STREAM_PARTITIONS} partitions): rows hashed into "
              f"{STREAM_GROUPS or resample.STREAM_GROUPS} groups, replicates resample the non-empty groups")
    else:
        print("resampling: " + (f"grouped bootstrap forced, {args.groups} groups of rows" if args.groups else
                                "the default (exact multinomial at these sizes)"))
    print("signs without a training set (noise-*): " + ("the plug-in (cross_fit=False)" if args.plug_in else
                                                        "cross-fitted (the default)")
          + (", include_small_groups=True" if args.include_small_groups else ""))
    print(f"targets: coverage >= {TARGET_AWAY} where the truth is away from 0, >= {TARGET_ZERO} at 0; "
          f"every interval holds its estimate. Monte Carlo SE of a coverage of 0.95: "
          f"{math.sqrt(0.95 * 0.05 / n_samples):.3f}\n")
    print("truth checks (max |deviation|): library on expected counts (exact) / one large sample")
    for sc in scenarios:
        exact = check_truth_exact(sc)
        big = "skipped" if args.no_truth_check else f"{check_truth_sample(sc, check_rows, args.seed):.1e} " \
                                                     f"({check_rows:,} rows)"
        truths = ", ".join(f"{k} {v:.4f}" for k, v in sc.truth.items())
        print(f"  {sc.key:<11} n={sc.n:<5} exact {exact:.0e}, sample {big}\n      {sc.title}: {truths}")
    print()

    all_rows: list[Row] = []
    totals = dict.fromkeys(args.methods, 0.0)
    for sc in scenarios:
        t0 = time.perf_counter()
        rows, seconds = run_scenario(sc, args.methods, n_samples, n_boot, args.seed, n_jobs=args.n_jobs)
        for m, t in seconds.items():
            totals[m] += t
        for st in sc.stats:
            all_rows.extend(rows[m][st] for m in args.methods)
        print(f"  {sc.key:<11} done in {time.perf_counter() - t0:6.1f} s  ("
              + ", ".join(f"{m} {t:.1f} s" for m, t in seconds.items()) + ")", flush=True)
    print()
    print(format_text(all_rows))
    print()
    reasons = {r.method: r.na for r in all_rows if r.na}
    for m, why in reasons.items():
        print(f"n/a {m}: {why[:160]}")
    print()
    for m in args.methods:
        rs = [r for r in all_rows if r.method == m and not r.na]
        if not rs:
            print(f"{m:<10}: n/a")
            continue
        n_pass = sum(r.passed for r in rs)
        own = sum(r.holds for r in rs) / max(1, sum(r.total for r in rs))
        print(f"{m:<10}: {n_pass}/{len(rs)} rows meet the targets; intervals holding their estimate "
              f"{own:.3f}; time in bootstrap {totals[m]:.1f} s" + (" (summed over workers)" if args.n_jobs != 1 else ""))
    print(f"total time {time.perf_counter() - t_start:.1f} s")
    print()
    print(f"Markdown ({n_samples} samples per scenario, n_boot={n_boot}, level {LEVEL}):\n")
    print(format_markdown(all_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
