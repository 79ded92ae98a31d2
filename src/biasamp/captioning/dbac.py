"""DBAC, directional bias amplification in image captioning (Nair, Tokas & Kerner 2025)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import _text
from ._attackers import attacker_name, check_text_attacker, encode_texts, fit_proba
from ._common import (
    check_bool,
    check_n,
    check_n_iter,
    check_split,
    check_test_size,
    fmt_ci,
    interval,
    random_split,
    seeds,
    std,
)
from ._deps import (
    ResultMixin,
    _as_array,
    encode_labels,
    fmt,
    progress_bar,
    single_threaded,
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
        t-interval of the mean, clipped to [-1, 1]; ``None`` when ``level=None``.
    psi_data, psi_model : float
        Means of :math:`\Psi_D` (human captions) and :math:`\Psi_M` (model captions).
    absolute : float
        Mean of :math:`\Psi_M - \Psi_D` (unbounded), for comparison with LIC.
    absolute_ci : (float, float) or None
    iterations : pandas.DataFrame
        ``iteration, psi_data, psi_model, dbac, absolute, n_train, n_test``.
    level : float or None
    n_substituted : (int, int)
        Words replaced in the human and in the model captions by the
        vocabulary substitution.

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
    level: float | None = 0.95,
    test_size: float = 0.2,
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
    if priors and quality != "proba":
        raise ValueError(f"priors=True reweights probabilities; it needs quality='proba', got {quality!r}")
    is_train = check_split(split, n)
    n_iter = check_n_iter(n_iter, level)
    test_size = check_test_size(test_size)
    chosen = check_text_attacker(attacker, encoder)
    aw = _text.word_set(_text.resolve_words(attr_words, "attr_words"))
    tw = _text.word_set(_task_words(task_words, t.classes)) - aw

    human_tok, model_tok = _text.tokenize_all(human), _text.tokenize_all(model)
    states = seeds(random_state, n_iter)
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

    runs: dict[str, list] = {d: [] for d, *_ in jobs}
    bar = progress_bar(total=n_iter * len(jobs), desc="DBAC", progress=progress, unit="iterations")
    bar.set_postfix_str(attacker_name(chosen))
    with bar, single_threaded():
        for split_seed, att_seed in states:
            for d, tgt, other, (h, m), _ in jobs:
                rng = np.random.default_rng(int(split_seed))
                if is_train is None:
                    tr, te = random_split(None if tgt.multilabel else tgt.y, n, test_size, rng)
                else:
                    tr, te = np.flatnonzero(is_train), np.flatnonzero(~is_train)
                k = len(tgt.classes)
                psis = []
                for x, y, o in ((h, tgt.y, other.y), (m, tgt.y_pred, other.y_pred)):
                    p = fit_proba(chosen, x, y, tr, te, k, int(att_seed))
                    psis.append(_psi(y[te], p, quality, o[te] if priors else None))
                runs[d].append((psis[0], psis[1], len(tr), len(te)))
                bar.update()
    out = {}
    for d, _tgt, _other, _, nsub in jobs:
        r = np.array(runs[d], dtype=np.float64)
        psi_d, psi_m = r[:, 0], r[:, 1]
        total = psi_d + psi_m
        ratio = np.clip(np.where(total > 0, (psi_m - psi_d) / np.where(total > 0, total, 1.0), 0.0), -1.0, 1.0)
        absolute = psi_m - psi_d
        table = pd.DataFrame({"iteration": np.arange(n_iter), "psi_data": psi_d, "psi_model": psi_m, "dbac": ratio,
                              "absolute": absolute, "n_train": r[:, 2].astype(np.int64),
                              "n_test": r[:, 3].astype(np.int64)})
        out[d] = DBACDirectionResult(
            direction=d, value=float(ratio.mean()), std=std(ratio), ci=interval(ratio, level, (-1.0, 1.0)),
            psi_data=float(psi_d.mean()), psi_model=float(psi_m.mean()), absolute=float(absolute.mean()),
            absolute_ci=interval(absolute, level, None), iterations=table, level=level,
            n_substituted=(int(nsub[0]), int(nsub[1])),
        )
    return DBACResult(a_to_t=out.get("A->T"), t_to_a=out.get("T->A"), attacker=attacker_name(chosen),
                      quality=quality, substitute=substitute, priors=priors, n_iter=n_iter)
