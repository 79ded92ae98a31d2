"""DBAC, directional bias amplification in image captioning (Nair, Tokas & Kerner 2025)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT

from . import _intervals as _iv
from . import _text
from ._attackers import attacker_name, check_n_jobs, check_text_attacker, deterministic, encode_texts, run_fits
from ._common import (
    check_bool,
    check_n,
    check_n_iter,
    check_split,
    check_test_size,
    fmt_ci,
    random_split,
    seeds,
    std,
)
from ._deps import (
    ResultMixin,
    _as_array,
    check_n_boot,
    encode_labels,
    fmt,
    progress_bar,
)

__all__ = ["DBACDirectionResult", "DBACResult", "dbac"]

_QUALITIES = ("proba", "accuracy", "inv_ce")
_SUBSTITUTE = ("none", "unknown", "contextual")
_DIRECTIONS = ("A->T", "T->A")
_EPS = 1e-15


@dataclass(frozen=True, eq=False, repr=False)
class DBACDirectionResult(ResultMixin):
    r"""DBAC in one direction.

    Attributes
    ----------
    direction : {"A->T", "T->A"}
    value : float
        Mean DBAC over the iterations, in [-1, 1].
    std : float
        Sample standard deviation (ddof=1) over the iterations.
    ci : (float, float) or None
        Interval of ``value`` over what ``ci_over`` says (default: the
        captions and the iterations together), clipped to [-1, 1]; ``None``
        when ``level=None``.
    psi_data, psi_model : float
        Means of :math:`\Psi_D` (human captions) and :math:`\Psi_M` (model captions).
    absolute : float
        Mean of :math:`\Psi_M - \Psi_D` (unbounded), for comparison with LIC.
    absolute_ci : (float, float) or None
        The same for ``absolute``.
    iterations : pandas.DataFrame
        ``iteration, psi_data, psi_model, dbac, absolute, n_train, n_test``.
    level : float or None
    n_substituted : (int, int)
        Words replaced in the human and in the model captions by the
        vocabulary substitution.
    intervals : pandas.DataFrame or None
        Per quantity (index ``dbac``, ``absolute``): ``estimate``,
        ``se_iterations``, ``se_captions`` and the intervals
        ``iterations_low/high`` (t over the iterations),
        ``captions_low/high`` (the caption bootstrap, attackers held fixed)
        and ``both_low/high`` (the variances added), as in
        :attr:`LICResult.intervals <biasamp.captioning.LICResult>`;
        ``None`` when ``level=None``.
    ci_over : {"both", "captions", "iterations"}
        Which of them ``ci`` and ``absolute_ci`` are.
    n_boot : int
        Caption-bootstrap replicates (0 when ``level=None``).

    Notes
    -----
    Per iteration :math:`\mathrm{DBAC} = (\Psi_M - \Psi_D)/(\Psi_M + \Psi_D)`
    (0 when both are 0), as DPA; ``value`` is the mean over the iterations.

    References
    ----------
    .. [1] R. Nair, B. Tokas, H. Kerner. "A Woman with a Knife or A Knife
       with a Woman? Measuring Directional Bias Amplification in Image
       Captions". arXiv:2503.07878, 2025.

    Examples
    --------
    >>> from biasamp import dbac
    >>> caps = ["a woman with a cup", "a man with a knife"] * 20
    >>> res = dbac(["f", "m"] * 20, ["cup", "knife"] * 20, captions=caps, captions_pred=caps,
    ...            n_iter=2, random_state=0, progress=False)
    >>> res.t_to_a.direction, res.t_to_a.value
    ('T->A', 0.0)
    """

    direction: str
    value: float
    std: float
    ci: tuple[float, float] | None
    psi_data: float
    psi_model: float
    absolute: float
    absolute_ci: tuple[float, float] | None
    iterations: pd.DataFrame
    level: float | None
    n_substituted: tuple[int, int] = (0, 0)
    intervals: pd.DataFrame | None = None
    ci_over: str = "both"
    n_boot: int = 0

    def to_frame(self) -> pd.DataFrame:
        """The per-iteration table."""
        return self.iterations.copy()

    def __repr__(self) -> str:
        return (f"DBAC {self.direction} = {fmt(self.value)}{fmt_ci(self.ci, self.level)} (sd {self.std:.4f}; "
                f"Psi_D {self.psi_data:.4g}, Psi_M {self.psi_model:.4g}; absolute {fmt(self.absolute)}; "
                f"{len(self.iterations)} iterations)")


@dataclass(frozen=True, eq=False, repr=False)
class DBACResult(ResultMixin):
    r"""Result of :func:`dbac`.

    Attributes
    ----------
    a_to_t, t_to_a : DBACDirectionResult or None
        The two directions (``None`` for a direction not requested).
    attacker : str
        The attacker that ran (``"auto"`` resolved).
    quality : str
        The quality :math:`\Psi` (``"proba"``, ``"accuracy"`` or ``"inv_ce"``).
    substitute : str
        The vocabulary substitution (``"none"``, ``"unknown"``, ``"contextual"``).
    priors : bool
        Whether the authors' fixed label priors reweighted the scores.
    n_iter : int

    Notes
    -----
    There is no single ``value``: DBAC is directional, so each direction in
    ``a_to_t`` / ``t_to_a`` has its own. A→T masks the task words (e.g. object names) and predicts the task labels
    from the rest of the caption, attribute words included; T→A masks the
    attribute words and predicts the attribute. Each direction:
    :math:`\mathrm{DBAC} = (\Psi_M - \Psi_D)/(\Psi_M + \Psi_D) \in [-1, 1]`.

    References
    ----------
    .. [1] R. Nair, B. Tokas, H. Kerner. "A Woman with a Knife or A Knife
       with a Woman? Measuring Directional Bias Amplification in Image
       Captions". arXiv:2503.07878, 2025.

    Examples
    --------
    >>> from biasamp import dbac
    >>> caps = ["a woman with a cup", "a man with a knife"] * 20
    >>> res = dbac(["f", "m"] * 20, ["cup", "knife"] * 20, captions=caps, captions_pred=caps,
    ...            n_iter=2, random_state=0, progress=False)
    >>> res.a_to_t.value, res.t_to_a.value
    (0.0, 0.0)
    """

    a_to_t: DBACDirectionResult | None
    t_to_a: DBACDirectionResult | None
    attacker: str
    quality: str
    substitute: str
    priors: bool
    n_iter: int

    def to_frame(self) -> pd.DataFrame:
        """Both directions' per-iteration tables stacked, with a ``direction`` column."""
        parts = [d.iterations.assign(direction=d.direction) for d in (self.a_to_t, self.t_to_a) if d is not None]
        return pd.concat(parts, ignore_index=True)

    def __repr__(self) -> str:
        lines = [(f"DBACResult(attacker={self.attacker!r}, quality={self.quality!r}, "
                  f"substitute={self.substitute!r}, priors={self.priors}, n_iter={self.n_iter},")]
        for d in (self.a_to_t, self.t_to_a):
            if d is not None:
                lines.append(f"  {d!r},")
        lines[-1] = lines[-1].rstrip(",") + ")"
        return "\n".join(lines)


# --------------------------------------------------------------------------- #
# targets and quality
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class _Target:
    name: str
    classes: tuple
    y: np.ndarray  # codes (n,) or indicator (n, K)
    y_pred: np.ndarray

    @property
    def multilabel(self) -> bool:
        return self.y.ndim == 2


def _encode_target(truth: Any, pred: Any, name: str, pred_name: str) -> _Target:
    raw, _ = _as_array(truth, name)
    if raw.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D labels or a 2-D 0/1 indicator matrix, got shape {raw.shape}")
    enc = encode_labels({name: truth}, {pred_name: pred} if pred is not None else None)
    m = enc[name]
    if m.codes is not None:
        if m.n_classes < 2:
            raise ValueError(f"{name} has {m.n_classes} class ({list(m.classes)}); DBAC needs at least 2")
        y = m.codes.astype(np.intp)
    else:
        y = np.asarray(m.dense).astype(np.int64)
    if pred is None:
        return _Target(name, tuple(m.classes), y, y)
    pm = enc[pred_name]
    if pm.soft:
        raise ValueError(f"{pred_name} holds probabilities; DBAC's targets are labels (pass hard labels)")
    if pm.n_rows != m.n_rows:
        raise ValueError(f"length mismatch: {name} has {m.n_rows}, {pred_name} has {pm.n_rows} rows")
    if m.codes is not None:
        yp = pm.codes.astype(np.intp) if pm.codes is not None else pm.to_dense().argmax(axis=1).astype(np.intp)
    else:
        yp = pm.to_dense().astype(np.int64)
    return _Target(name, tuple(m.classes), y, yp)


def _per_row(y: np.ndarray, p: np.ndarray, quality: str) -> np.ndarray:
    """Per scored row: probability of the true label (vector) (``proba``), hit (``accuracy``) or log-loss."""
    n = len(y)
    if y.ndim == 1:
        pt = p[np.arange(n), y]
        if quality == "proba":
            return pt
        if quality == "accuracy":
            is_max = p == p.max(axis=1, keepdims=True)  # a tie counts 1/m (the expected random tie-break)
            return np.where(is_max[np.arange(n), y], 1.0 / is_max.sum(axis=1), 0.0)
        return -np.log(np.clip(pt, _EPS, 1 - _EPS))
    pt = np.where(y == 1, p, 1.0 - p)
    if quality == "proba":
        return pt.prod(axis=1)  # the joint probability of the image's whole label vector (the authors')
    if quality == "accuracy":
        return (np.where(p > 0.5, 1, 0) == y).mean(axis=1)
    return -np.log(np.clip(pt, _EPS, 1 - _EPS)).mean(axis=1)


def _row_freq(m: np.ndarray) -> np.ndarray:
    """Empirical frequency, among the rows of ``m``, of each row's value."""
    m = m.reshape(len(m), -1)
    _, inv, counts = np.unique(m, axis=0, return_inverse=True, return_counts=True)
    return counts[np.asarray(inv).reshape(-1)] / len(m)


def _psi(y: np.ndarray, p: np.ndarray, quality: str, other: np.ndarray | None) -> float:
    r = _per_row(y, p, quality)
    if other is not None:  # the authors' fixed priors: P(x | y) = P(y | x) P(x) / P(y), frequencies among scored rows
        r = r * _row_freq(other) / _row_freq(y)
    if quality == "inv_ce":
        return float(1.0 / max(r.mean(), _EPS))
    return float(r.mean())


def _ratio(psi_d: np.ndarray, psi_m: np.ndarray) -> np.ndarray:
    """DBAC = (Psi_M - Psi_D)/(Psi_M + Psi_D), 0 where both are 0, clipped to [-1, 1] (any shape)."""
    total = psi_d + psi_m
    return np.clip(np.where(total > 0, (psi_m - psi_d) / np.where(total > 0, total, 1.0), 0.0), -1.0, 1.0)


def _group_ids(m: np.ndarray) -> np.ndarray:
    """Each row's value (label or label vector) as an integer id ``0..U-1``."""
    _, inv = np.unique(m.reshape(len(m), -1), axis=0, return_inverse=True)
    return np.asarray(inv).reshape(-1)


def _group_totals(w: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``(b, U)`` sums of the weights ``w`` (``(b, m)``) of the rows of each id."""
    from scipy import sparse

    m = len(ids)
    onehot = sparse.csr_matrix((np.ones(m), (np.arange(m), ids)), shape=(m, int(ids.max()) + 1 if m else 0))
    return np.asarray((onehot.T @ w.T).T)


def _replicates(scored: dict, n: int, n_boot: int, seed: np.random.SeedSequence, quality: str) -> dict:
    r"""Caption-bootstrap replicates of each direction's DBAC and Psi_M - Psi_D, the attackers held fixed.

    ``scored``: per direction, per distinct iteration, its scored images, the
    per-row quality of the human and the model side, the prior groups (or
    None) and how many iterations it stands for. A replicate redraws the
    scored images with replacement (one draw for both directions); every
    iteration's :math:`\Psi_D` and :math:`\Psi_M` are recomputed over the
    drawn images (human and model captions of an image together; with the
    fixed priors, the label frequencies too), then its DBAC, then the mean
    over the iterations (an iteration none of whose scored images was drawn
    is left out).
    """
    parts = [(d, *part) for d, entries in scored.items() for part in entries]
    rows = [te for _, te, _, _, _ in parts]
    out: dict = {d: {"dbac": [], "absolute": []} for d in scored}
    for counts in _iv.scored_counts(rows, np.zeros(n, dtype=np.int64), n_boot, seed):
        per_dir: dict = {d: ([], [], [], []) for d in scored}
        for w, (d, _, per_row, groups, times) in zip(counts, parts):
            tot = w.sum(axis=1)
            ok = tot > 0
            psi = []
            for r, g in zip(per_row, groups):
                if g is None:
                    mean = w @ r
                else:  # the fixed priors: r_i P(x_i) / P(y_i), frequencies among the drawn scored images
                    go, gy = g
                    num, den = _group_totals(w, go)[:, go], _group_totals(w, gy)[:, gy]
                    mean = np.sum(w * r * np.divide(num, den, out=np.zeros_like(num), where=den > 0), axis=1)
                mean = mean / np.where(ok, tot, 1.0)
                psi.append(1.0 / np.maximum(mean, _EPS) if quality == "inv_ce" else mean)
            ratios, diffs, oks, ts = per_dir[d]
            ratios.append(_ratio(psi[0], psi[1]))
            diffs.append(psi[1] - psi[0])
            oks.append(ok)
            ts.append(times)
        for d, (ratios, diffs, oks, ts) in per_dir.items():
            out[d]["dbac"].append(_iv.mean_over_iterations(ratios, oks, ts))
            out[d]["absolute"].append(_iv.mean_over_iterations(diffs, oks, ts))
    return {d: {k: np.concatenate(v) for k, v in q.items()} for d, q in out.items()}


# --------------------------------------------------------------------------- #
# the function
# --------------------------------------------------------------------------- #
def _task_words(task_words: Any, classes: tuple) -> dict:
    if task_words is not None:
        return _text.resolve_words(task_words, "task_words")
    out = {}
    for c in classes:
        name = str(c)
        if name in _text.COCO_OBJECT_WORDS:
            out[name] = _text.COCO_OBJECT_WORDS[name]
            continue
        toks = _text.tokenize(name)
        if len(toks) != 1 or not toks[0].isalpha():
            raise ValueError(f"task_words: the task class {c!r} is not one word, so its caption words cannot be "
                             "guessed; pass task_words (a mapping class -> words, a list of words, or 'coco')")
        out[name] = (toks[0], toks[0] + "s")
    return out


def _prepare(human_tok, model_tok, masked, substitute, threshold, word_vectors, seed):
    h = _text.mask_tokens(human_tok, masked)
    m = _text.mask_tokens(model_tok, masked)
    if substitute == "none":
        return _text.join(h), _text.join(m), (0, 0)
    contextual = substitute == "contextual"
    hv, mv = _text.vocabulary(h), _text.vocabulary(m)
    kw = dict(contextual=contextual, threshold=threshold, word_vectors=word_vectors, corpora=[h, m], seed=seed)
    h2, nh = _text.substitute(h, mv, **kw)
    m2, nm = _text.substitute(m, hv, **kw)
    return _text.join(h2), _text.join(m2), (nh, nm)


def dbac(
    attr: Any,
    task: Any,
    *,
    captions: Any,
    captions_pred: Any,
    attr_pred: Any = None,
    task_pred: Any = None,
    split: Any = None,
    attr_words: Any = "gender",
    task_words: Any = None,
    directions: Any = ("A->T", "T->A"),
    quality: str = "proba",
    substitute: str = "unknown",
    similarity_threshold: float = 0.5,
    word_vectors: Any = None,
    priors: bool = False,
    attacker: Any = "auto",
    encoder: Any = None,
    n_iter: int = 10,
    random_state: Any = None,
    level: float | None = DEFAULT_LEVEL,
    n_boot: int = DEFAULT_N_BOOT,
    ci_over: str = "both",
    test_size: float = 0.2,
    n_jobs: int | None = None,
    progress: bool | None = None,
) -> DBACResult:
    r"""DBAC, directional bias amplification in captioning (Nair, Tokas & Kerner 2025), both directions.

    An attacker reads a masked caption and predicts one variable; its
    quality :math:`\Psi` on held-out images measures how much the caption
    reveals it. The human captions give :math:`\Psi_D`, the model's
    :math:`\Psi_M` (same images, split and attacker seed), and, as DPA,

    .. math::

        \mathrm{DBAC} = \frac{\Psi_M - \Psi_D}{\Psi_M + \Psi_D} \in [-1, 1].

    * **A→T**: the task words (e.g. object names) are masked; the attacker
      predicts the task labels from what remains, attribute words included:
      does the model's caption tie the objects to the attribute more than the
      human caption does?
    * **T→A**: the attribute words are masked; the attacker predicts the
      attribute from the rest of the caption, objects included.

    Parameters
    ----------
    attr : labels of shape (n,)
        The protected attribute (the T→A target of the human side).
    task : labels of shape (n,) or 0/1 matrix of shape (n, K)
        The task labels (e.g. the objects in each image; the A→T target of
        the human side). ``caption_labels(captions)`` gives the objects the
        human captions mention.
    captions : sequence of str, shape (n,) (keyword-only)
        One human caption per image.
    captions_pred : sequence of str, shape (n,) (keyword-only)
        The model's caption of each image.
    attr_pred, task_pred : labels, optional (keyword-only)
        The model-side targets of T→A and A→T (the caption analogue of
        DPA's :math:`\hat A`, :math:`\hat T`, e.g.
        ``caption_labels(captions_pred)``). Default: ``attr`` and ``task``,
        both sides predicting the same labels (the authors' code).
    split : sequence of {"train", "val"} or bool, optional
        The attacker's training images (``"train"`` / ``True``) and scored
        images; without it a split (``test_size`` scored, stratified on a
        single-label target) is drawn per iteration.
    attr_words : "gender", "race", mapping class -> words or list of words
        The attribute words masked for T→A (and kept for A→T).
    task_words : "coco", mapping class -> words, list of words, optional
        The task words masked for A→T. Default: per task class, its entry of
        ``biasamp.captioning.COCO_OBJECT_WORDS``, else the class name
        and its plural. Attribute words are never masked for A→T.
    directions : sequence of {"A->T", "T->A"}, default both
    quality : {"proba", "accuracy", "inv_ce"}, default "proba"
        :math:`\Psi`: the mean predicted probability of the true label (of
        the whole label vector for a multi-label task: the product over
        labels; the authors'), the accuracy (mean over labels for
        multi-label), or 1 / cross-entropy.
    substitute : {"unknown", "contextual", "none"}, default "unknown"
        Words one caption set never uses in the other (in both directions):
        ``"unknown"`` replaces them by an unknown token; ``"contextual"`` by
        their nearest neighbour in the other set's vocabulary when the cosine
        similarity is at least ``similarity_threshold``, else the unknown
        token (the authors' contextual substitution); ``"none"`` keeps them.
    similarity_threshold : float, default 0.5
    word_vectors : mapping or callable, optional
        Word vectors for ``"contextual"``: a mapping word -> vector or a
        callable ``list_of_words -> (n, d)`` array from a model you have
        locally. Default: vectors learnt from the two caption sets
        themselves (PPMI co-occurrence + SVD; nothing is downloaded).
    priors : bool, default False
        The authors' fixed label priors: multiply each scored image's
        probability by :math:`\hat P(x_i)/\hat P(y_i)`, the frequencies
        (among the scored images) of the image's input-side label and of its
        target label; needs ``quality="proba"``.
    attacker, encoder
        As in :func:`lic`; multi-label targets get one classifier per label.
    n_iter, random_state, level, test_size, progress
        As in :func:`lic`.
    n_boot, ci_over
        The caption bootstrap and the interval reported, as in :func:`lic`;
        a replicate redraws the images with replacement (not within
        classes) and recomputes every iteration's :math:`\Psi_D`,
        :math:`\Psi_M` (and, with ``priors``, the label frequencies) and
        DBAC over the drawn scored images.
    n_jobs : int or None, default None
        Worker processes for the attacker fits (joblib; ``-1``: all cores;
        ``1``: none). ``None``: the first fit runs here, and the others are
        spread over the idle cores when they would take more than 5 s. Each
        fit uses one thread; the result does not depend on ``n_jobs``.

    Returns
    -------
    DBACResult
        ``.a_to_t`` and ``.t_to_a``, each with ``.value``, ``.ci``,
        ``.psi_data``, ``.psi_model``, ``.iterations``.

    Raises
    ------
    ValueError
        Lengths that disagree, a missing caption, fewer than two classes,
        unknown options, task classes whose words cannot be guessed without
        ``task_words``, ``priors=True`` with another quality than ``"proba"``.
    TypeError
        Captions that are not strings, a bad ``attacker`` or ``encoder``.

    See Also
    --------
    lic : leakage in captioning (one direction, absolute).
    dpa : the same ratio on classification labels.

    Notes
    -----
    * Identical human and model captions (with the same targets) give
      DBAC = 0 exactly in both directions: both sides share the split and
      the attacker seed.
    * Unlike :func:`dpa` there is no accuracy equalisation: both attackers
      read captions, not labels with the model's errors.
    * The attacker is scored on held-out images (the authors' code scores it
      on its own training captions).
    * A built-in attacker is deterministic (an L-BFGS logistic regression):
      an iteration that fits it on the same rows as an earlier one (every
      iteration, with a fixed ``split``) reuses that fit. Its iterations are
      then identical and the interval over them has width 0: the caption
      bootstrap measures the uncertainty.

    References
    ----------
    .. [1] R. Nair, B. Tokas, H. Kerner. "A Woman with a Knife or A Knife
       with a Woman? Measuring Directional Bias Amplification in Image
       Captions". arXiv:2503.07878, 2025.
    .. [2] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure
       bias amplification in classification datasets". NeurIPS 2025.

    Examples
    --------
    A model that mentions the knife for men and the cup for women, when the
    human captions mention either at random:

    >>> import numpy as np
    >>> from biasamp import dbac
    >>> rng = np.random.default_rng(0)
    >>> g = rng.integers(0, 2, 200)
    >>> obj = rng.integers(0, 2, 200)
    >>> who, what = np.array(["woman", "man"]), np.array(["cup", "knife"])
    >>> human = [f"a {w} with a {o}" for w, o in zip(who[g], what[obj])]
    >>> model = [f"a {w} with a {o}" for w, o in zip(who[g], what[g])]
    >>> res = dbac(g, what[obj], captions=human, captions_pred=model, task_pred=what[g],
    ...            n_iter=3, random_state=0, progress=False)
    >>> res.a_to_t.value > 0.2
    True
    """
    human = _text.check_captions(captions, "captions")
    model = _text.check_captions(captions_pred, "captions_pred")
    a = _encode_target(attr, attr_pred, "attr", "attr_pred")
    if a.multilabel:
        raise ValueError("attr must be 1-D class labels (one per image)")
    t = _encode_target(task, task_pred, "task", "task_pred")
    n = len(a.y)
    check_n(attr=n, task=len(t.y), captions=len(human), captions_pred=len(model))
    if n < 4:
        raise ValueError(f"attr: need at least 4 images to split into attacker training and scored images, got {n}")
    if isinstance(directions, str):
        directions = (directions,)
    directions = tuple(directions)
    if not directions or any(d not in _DIRECTIONS for d in directions):
        raise ValueError(f"directions must hold 'A->T' and/or 'T->A', got {directions!r}")
    if quality not in _QUALITIES:
        raise ValueError(f"quality must be one of {_QUALITIES}, got {quality!r}")
    if substitute not in _SUBSTITUTE:
        raise ValueError(f"substitute must be one of {_SUBSTITUTE}, got {substitute!r}")
    if isinstance(similarity_threshold, bool) or not isinstance(similarity_threshold, numbers.Real) \
            or not -1 <= similarity_threshold <= 1:
        raise ValueError(f"similarity_threshold must be a cosine similarity in [-1, 1], got {similarity_threshold!r}")
    if word_vectors is not None and substitute != "contextual":
        raise ValueError("word_vectors given, but only substitute='contextual' uses them")
    priors = check_bool(priors, "priors")
    n_boot = check_n_boot(n_boot)
    ci_over = _iv.check_ci_over(ci_over)
    n_jobs = check_n_jobs(n_jobs)
    if priors and quality != "proba":
        raise ValueError(f"priors=True reweights probabilities; it needs quality='proba', got {quality!r}")
    is_train = check_split(split, n)
    n_iter = check_n_iter(n_iter, level)
    test_size = check_test_size(test_size)
    chosen = check_text_attacker(attacker, encoder)
    aw = _text.word_set(_text.resolve_words(attr_words, "attr_words"))
    tw = _text.word_set(_task_words(task_words, t.classes)) - aw if "A->T" in directions else frozenset()

    human_tok, model_tok = _text.tokenize_all(human), _text.tokenize_all(model)
    _text.require_words(human_tok, "captions")
    _text.require_words(model_tok, "captions_pred")
    states, boot_seed = seeds(random_state, n_iter)
    sub_seed = int(states[0][1])
    jobs = []  # (direction, target, other, inputs (human, model), n_substituted)
    for d in _DIRECTIONS:
        if d not in directions:
            continue
        tgt, other = (t, a) if d == "A->T" else (a, t)
        masked = tw if d == "A->T" else aw
        h, m, nsub = _prepare(human_tok, model_tok, masked, substitute, float(similarity_threshold), word_vectors,
                              sub_seed)
        if encoder is not None:
            h, m = encode_texts(encoder, h), encode_texts(encoder, m)
        jobs.append((d, tgt, other, (h, m), nsub))

    # the fits: two per iteration and direction (human, model captions); a deterministic attacker (the built-in
    # ones) fitted on the same rows as an earlier iteration is not fitted again: with a fixed split every
    # iteration is the first one
    plans = []  # (direction index, training rows, scored rows, fit index per side)
    tasks: list[tuple] = []
    done: dict = {}
    same = deterministic(chosen)
    for split_seed, att_seed in states:
        for j, (_d, tgt, _other, inputs, _) in enumerate(jobs):
            rng = np.random.default_rng(int(split_seed))
            if is_train is None:
                tr, te = random_split(None if tgt.multilabel else tgt.y, n, test_size, rng)
            else:
                tr, te = np.flatnonzero(is_train), np.flatnonzero(~is_train)
            fits = []
            for side, (x, y) in enumerate(zip(inputs, (tgt.y, tgt.y_pred))):
                key = (j, side, tr.tobytes(), te.tobytes()) if same else len(tasks)
                if key not in done:
                    done[key] = len(tasks)
                    tasks.append((chosen, x, y, tr, te, len(tgt.classes), int(att_seed)))
                fits.append(done[key])
            plans.append((j, tr, te, fits))
    bar = progress_bar(total=len(tasks), desc="DBAC", progress=progress, unit="fits")
    bar.set_postfix_str(attacker_name(chosen))
    with bar:
        probas = run_fits(tasks, n_jobs, bar)

    runs: dict[str, list] = {d: [] for d, *_ in jobs}
    # per direction and distinct iteration (the same fits): scored rows, per-row quality, prior groups, times seen
    scored: dict[str, dict] = {d: {} for d, *_ in jobs}
    for j, tr, te, fits in plans:
        d, tgt, other, _, _ = jobs[j]
        key = tuple(fits)
        if key in scored[d]:
            runs[d].append(scored[d][key][4])
            scored[d][key][3] += 1
            continue
        psis, per_row, groups = [], [], []
        for side, (y, o) in enumerate(((tgt.y, other.y), (tgt.y_pred, other.y_pred))):
            p = probas[fits[side]]
            psis.append(_psi(y[te], p, quality, o[te] if priors else None))
            per_row.append(_per_row(y[te], p, quality))
            groups.append((_group_ids(o[te]), _group_ids(y[te])) if priors else None)
        runs[d].append((psis[0], psis[1], len(tr), len(te)))
        scored[d][key] = [te, per_row, groups, 1, runs[d][-1]]
    if level is not None:
        reps = _replicates({d: [e[:4] for e in v.values()] for d, v in scored.items()}, n, n_boot, boot_seed,
                           quality)
    out = {}
    for d, _tgt, _other, _, nsub in jobs:
        r = np.array(runs[d], dtype=np.float64)
        psi_d, psi_m = r[:, 0], r[:, 1]
        ratio = _ratio(psi_d, psi_m)
        absolute = psi_m - psi_d
        table = pd.DataFrame({"iteration": np.arange(n_iter), "psi_data": psi_d, "psi_model": psi_m, "dbac": ratio,
                              "absolute": absolute, "n_train": r[:, 2].astype(np.int64),
                              "n_test": r[:, 3].astype(np.int64)})
        frame = ci = absolute_ci = None
        if level is not None:
            frame = _iv.table([_iv.intervals("dbac", float(ratio.mean()), ratio, reps[d]["dbac"], level, (-1.0, 1.0)),
                               _iv.intervals("absolute", float(absolute.mean()), absolute, reps[d]["absolute"], level,
                                             None)])
            ci, absolute_ci = _iv.headline(frame, "dbac", ci_over), _iv.headline(frame, "absolute", ci_over)
        out[d] = DBACDirectionResult(
            direction=d, value=float(ratio.mean()), std=std(ratio), ci=ci,
            psi_data=float(psi_d.mean()), psi_model=float(psi_m.mean()), absolute=float(absolute.mean()),
            absolute_ci=absolute_ci, iterations=table, level=level,
            n_substituted=(int(nsub[0]), int(nsub[1])), intervals=frame, ci_over=ci_over,
            n_boot=n_boot if level is not None else 0,
        )
    return DBACResult(a_to_t=out.get("A->T"), t_to_a=out.get("T->A"), attacker=attacker_name(chosen),
                      quality=quality, substitute=substitute, priors=priors, n_iter=n_iter)
