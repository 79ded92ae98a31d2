"""LIC, leakage in image captioning (Hirota, Nakashima & Garcia 2022)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT

from . import _intervals as _iv
from . import _text
from ._attackers import attacker_name, check_text_attacker, deterministic, encode_texts, fit_proba
from ._common import (
    balance,
    check_bool,
    check_n,
    check_n_iter,
    check_split,
    check_test_size,
    encode_single,
    fmt_ci,
    random_split,
    seeds,
    std,
)
from ._deps import ResultMixin, check_n_boot, fmt, progress_bar, single_threaded

__all__ = ["LICResult", "lic"]


@dataclass(frozen=True, eq=False, repr=False)
class LICResult(ResultMixin):
    r"""Result of :func:`lic`: leakage of the protected attribute from masked captions.

    Attributes
    ----------
    value : float or None
        Mean :math:`\mathrm{LIC} = \mathrm{LIC}_M - \mathrm{LIC}_D` over the
        iterations; ``None`` when no human captions were given (``reason``
        says so).
    lic_m : float
        Mean model leakage :math:`\mathrm{LIC}_M` (a fraction in [0, 1]; the
        paper prints it x100).
    lic_d : float or None
        Mean dataset leakage :math:`\mathrm{LIC}_D` on the human captions
        (``None`` without them).
    ci, ci_m, ci_d : (float, float) or None
        Intervals of ``value`` (clipped to [-1, 1]), ``lic_m`` and ``lic_d``
        (clipped to [0, 1]) over what ``ci_over`` says (default: the
        captions and the iterations together); ``None`` when ``level=None``
        or the quantity is undefined. All three kinds are in ``intervals``.
    std : float or None
        Sample standard deviation (ddof=1) of the per-iteration LIC.
    iterations : pandas.DataFrame
        One row per iteration: ``iteration, lic_m, accuracy_m`` and, with
        human captions, ``lic_d, accuracy_d, lic``; ``n_train, n_test`` (the
        images the attacker was fitted and scored on).
    by_class : pandas.DataFrame
        Per class of the attribute (index): the mean over iterations of the
        score of that class's scored images (``lic_m``, ``lic_d``) and their
        mean number ``n_test``.
    level : float or None
    attacker : str
        The attacker that ran (``"auto"`` resolved).
    masked : str
        What was masked (``"gender"``, ``"race"``, or ``"N custom words"``).
    align_vocab : bool
        Whether the human captions' vocabulary was aligned with the model's.
    n_unknown : int
        Words of the human captions replaced by the unknown token (alignment).
    balanced : bool
        Whether the training and scored images were class-balanced per
        iteration.
    reason : str
        Why ``value`` is undefined ("" when it is defined).
    intervals : pandas.DataFrame or None
        Per quantity (index ``lic``, ``lic_m``, ``lic_d``): ``estimate``,
        the standard errors ``se_iterations`` (:math:`s_{it}/\sqrt J`) and
        ``se_captions`` (of the caption bootstrap), and the intervals
        ``iterations_low/high`` (t over the iterations, the captions held
        fixed), ``captions_low/high`` (the bootstrap of the images, the
        attackers held fixed) and ``both_low/high`` (the two variances
        added); ``None`` when ``level=None``.
    ci_over : {"both", "captions", "iterations"}
        Which of them ``ci``, ``ci_m``, ``ci_d`` are.
    n_boot : int
        Caption-bootstrap replicates (0 when ``level=None``).

    Notes
    -----
    Per iteration, on each scored image :math:`i` with attribute
    :math:`a_i` and the attacker's class probabilities :math:`p_i`,

    .. math::

        s_i = p_i(a_i)\,\mathbb{1}[\arg\max_a p_i(a) = a_i],\qquad
        \mathrm{LIC} = \frac{1}{|\mathcal{D}_{test}|}\sum_i s_i ;

    :math:`\mathrm{LIC}_M` uses the model's captions, :math:`\mathrm{LIC}_D`
    the human captions (the mean over the caption columns when there are
    several per image), with the same images, split and attacker seed.

    References
    ----------
    .. [1] Y. Hirota, Y. Nakashima, N. Garcia. "Quantifying Societal Bias
       Amplification in Image Captioning". CVPR 2022, Eq. 1-3.

    Examples
    --------
    >>> from biasamp import lic
    >>> caps = ["a woman with a purse", "a man with a beard"] * 20
    >>> attr = ["female", "male"] * 20
    >>> res = lic(attr, captions_pred=caps, captions=caps, n_iter=2, random_state=0, progress=False)
    >>> res.value, res.lic_m > 0.5
    (0.0, True)
    """

    value: float | None
    lic_m: float
    lic_d: float | None
    ci: tuple[float, float] | None
    ci_m: tuple[float, float] | None
    ci_d: tuple[float, float] | None
    std: float | None
    iterations: pd.DataFrame
    by_class: pd.DataFrame
    level: float | None
    attacker: str
    masked: str
    align_vocab: bool
    n_unknown: int
    balanced: bool
    reason: str = ""
    intervals: pd.DataFrame | None = None
    ci_over: str = "both"
    n_boot: int = 0

    def to_frame(self) -> pd.DataFrame:
        """The per-iteration table."""
        return self.iterations.copy()

    def __repr__(self) -> str:
        m = f"LIC_M {fmt(self.lic_m)}{fmt_ci(self.ci_m, self.level)}"
        tail = f"{self.attacker} attacker, masked {self.masked}, {len(self.iterations)} iterations"
        if self.value is None:
            return f"LICResult(LIC undefined: {self.reason}; {m}; {tail})"
        return (f"LICResult(LIC = {fmt(self.value)}{fmt_ci(self.ci, self.level)} (sd {self.std:.4f}; {m}, "
                f"LIC_D {fmt(self.lic_d)}{fmt_ci(self.ci_d, self.level)}); {tail})")


def _mask_words(mask: Any) -> tuple[frozenset, str]:
    if mask is None:
        return frozenset(), "nothing"
    words = _text.resolve_words(mask, "mask")
    label = mask if isinstance(mask, str) else f"{len(_text.word_set(words))} custom words"
    return _text.word_set(words), label


def _hits(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Whether the attacker is right per row: 1 when the true class is the only arg-max, 1/m when it ties m ways.

    A tie (e.g. 0.5 / 0.5 from captions that say nothing) counts as the
    expected value of a random tie-break, so no class is favoured.
    """
    top = p.max(axis=1, keepdims=True)
    is_max = p == top
    return np.where(is_max[np.arange(len(y)), y], 1.0 / is_max.sum(axis=1), 0.0)


def _scores(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """LIC score per row: the probability of the true class when the attacker is right, else 0."""
    return _hits(p, y) * p[np.arange(len(y)), y]


def lic(
    attr: Any,
    *,
    captions_pred: Any,
    captions: Any = None,
    split: Any = None,
    mask: Any = "gender",
    attacker: Any = "auto",
    encoder: Any = None,
    n_iter: int = 10,
    random_state: Any = None,
    level: float | None = DEFAULT_LEVEL,
    n_boot: int = DEFAULT_N_BOOT,
    ci_over: str = "both",
    test_size: float = 0.2,
    balanced: bool = True,
    align_vocab: bool = True,
    progress: bool | None = None,
) -> LICResult:
    r"""LIC, leakage in image captioning (Hirota et al. 2022): how well masked captions reveal the attribute.

    The attribute-revealing words (``mask``) of every caption are replaced by
    one mask token; an attacker is fitted on the masked captions of the
    training images to predict the attribute, and every scored image earns
    the attacker's probability of its true class when the attacker is right,
    0 when it is wrong:

    .. math::

        \mathrm{LIC} = \frac{1}{|\mathcal{D}_{test}|}\sum_{i}
        p_f(a_i \mid \tilde c_i)\,\mathbb{1}\big[\hat a_f(\tilde c_i) = a_i\big],
        \qquad \mathrm{LIC}_{amp} = \mathrm{LIC}_M - \mathrm{LIC}_D

    with :math:`\tilde c_i` the masked caption: the model's for
    :math:`\mathrm{LIC}_M`, the human one for :math:`\mathrm{LIC}_D`.

    Parameters
    ----------
    attr : labels of shape (n,)
        The protected attribute of the person in each image (e.g. gender).
    captions_pred : sequence of str, shape (n,) (keyword-only)
        The captioning model's caption of each image.
    captions : sequence of str, shape (n,) or (n, k), optional
        Human caption(s) of each image (``k`` columns: several per image,
        e.g. COCO's five; :math:`\mathrm{LIC}_D` is the mean over the
        columns, one attacker per column). Without them ``value`` is
        undefined (with a reason) and ``lic_m`` is still reported.
    split : sequence of {"train", "val"} or bool, shape (n,), optional
        Which images train the attacker (``"train"`` / ``True``) and which
        are scored (``"val"``, ``"test"`` / ``False``); the same for every
        iteration. Without it a stratified split (``test_size`` scored) is
        drawn per iteration.
    mask : "gender", "race", mapping class -> words, list of words or None
        The words replaced by the mask token: the built-in
        ``biasamp.captioning.GENDER_WORDS`` or
        ``biasamp.captioning.RACE_WORDS``, your own, or ``None``
        (nothing masked).
    attacker : "auto", "tfidf", "bow", "logistic" or estimator
        ``"auto"``: ``"tfidf"`` (TF-IDF word uni+bigrams and a logistic
        regression), or ``"logistic"`` on the encoder's vectors when
        ``encoder`` is given. Any scikit-learn estimator (a pipeline taking
        a list of strings, or a classifier of the encoder's vectors) is
        cloned per fit.
    encoder : callable, optional
        ``encoder(list_of_texts) -> array (n_texts, d)``: sentence vectors
        from a model you have locally (never downloaded here); called once
        per distinct masked caption.
    n_iter : int, default 10
        Iterations (attacker seeds, splits and subsamples).
    random_state : None, int or numpy Generator
        Seed; results are identical for the same seed whatever the thread
        settings.
    level : float or None, default 0.95
        Level of the intervals; ``None`` for none.
    n_boot : int, default 1000
        Replicates of the caption bootstrap: the images are redrawn with
        replacement within each attribute class, model and human captions of
        an image together, and every iteration's per-image scores are
        re-averaged over the drawn images (the attackers are not refitted).
    ci_over : {"both", "captions", "iterations"}, default "both"
        What ``ci`` / ``ci_m`` / ``ci_d`` cover: the sampling of the
        captions (the bootstrap), the iterations' randomness (split,
        subsample, attacker seed; a t-interval, the captions held fixed), or
        both (their variances added, Welch-Satterthwaite degrees of
        freedom). ``intervals`` holds all three.
    test_size : float, default 0.2
        Fraction of images scored when ``split`` is not given.
    balanced : bool, default True
        Per iteration, subsample the training and the scored images to equal
        class counts (the paper's protocol).
    align_vocab : bool, default True
        Replace the human captions' words that the model's captions never
        use by an unknown token (the paper's vocabulary alignment).
    progress : bool or None
        Progress bar (``None``: on a terminal).

    Returns
    -------
    LICResult
        ``.value``, ``.lic_m``, ``.lic_d``, ``.ci``, ``.iterations``,
        ``.by_class``.

    Raises
    ------
    ValueError
        Lengths that disagree, fewer than two attribute classes, a missing
        caption, bad ``split`` values, an unknown ``mask`` or ``attacker``,
        bad ``n_iter`` / ``level`` / ``n_boot`` / ``ci_over`` /
        ``test_size``.
    TypeError
        Captions that are not strings, an ``attacker`` that is not an
        estimator instance, a non-callable ``encoder``.

    See Also
    --------
    dbac : directional amplification in captions.
    caption_gender_stats : gender error and ratio, no attacker.

    Notes
    -----
    * Identical human and model captions give LIC = 0 exactly: both sides
      share the images, the split, the subsample and the attacker seed; and
      every interval of LIC is [0, 0].
    * The caption interval covers the sampling of the scored captions, not
      how the attacker would differ had it been trained on other captions;
      with a fixed ``split``, ``balanced=False`` and a deterministic
      attacker (the built-in ones) every iteration is the same, so the
      interval over the iterations has width 0 and only the captions'
      interval measures uncertainty. Coverage: docs/captioning.md.
    * LIC is an absolute difference of two leakages, so it depends on the
      attacker's capacity; compare models under one attacker.
    * Chance level: with ``balanced=True`` and two classes an attacker that
      learns nothing scores about 0.25 (right half the time with
      probability about 0.5), not 0.

    References
    ----------
    .. [1] Y. Hirota, Y. Nakashima, N. Garcia. "Quantifying Societal Bias
       Amplification in Image Captioning". CVPR 2022.

    Examples
    --------
    >>> from biasamp import lic
    >>> attr = ["female", "male"] * 30
    >>> model = ["a woman holding her purse", "a man with his beard"] * 30
    >>> human = ["a woman standing outside", "a man standing outside"] * 30
    >>> res = lic(attr, captions_pred=model, captions=human, n_iter=3, random_state=0, progress=False)
    >>> res.value > 0.3, res.lic_d < 0.35
    (True, True)
    """
    codes, classes = encode_single(attr, "attr")
    n, k = len(codes), len(classes)
    pred = _text.check_captions(captions_pred, "captions_pred")
    human = None if captions is None else _text.check_captions(captions, "captions", allow_2d=True)
    check_n(attr=n, captions_pred=len(pred), **({} if human is None else {"captions": len(human)}))
    if n < 4:
        raise ValueError(f"attr: need at least 4 images to split into attacker training and scored images, got {n}")
    is_train = check_split(split, n)
    n_iter = check_n_iter(n_iter, level)
    n_boot = check_n_boot(n_boot)
    ci_over = _iv.check_ci_over(ci_over)
    test_size = check_test_size(test_size)
    balanced = check_bool(balanced, "balanced")
    align_vocab = check_bool(align_vocab, "align_vocab")
    chosen = check_text_attacker(attacker, encoder)
    masked, mask_label = _mask_words(mask)
    if is_train is not None:
        for side, on_side in (("training", is_train), ("scored", ~is_train)):
            present = np.bincount(codes[on_side], minlength=k) > 0
            if balanced and not present.all():
                missing = [classes[i] for i in np.flatnonzero(~present)]
                raise ValueError(f"split: the {side} images have no image of class {missing}; balanced=True needs "
                                 "every class on both sides (or pass balanced=False)")

    # masked texts: the model's, then each human caption column
    pred_tok = _text.tokenize_all(pred)
    _text.require_words(pred_tok, "captions_pred")
    pred_tok = _text.mask_tokens(pred_tok, masked)
    sides = [_text.join(pred_tok)]
    n_unknown = 0
    if human is not None:
        cols = human.reshape(n, -1)
        vocab = _text.vocabulary(pred_tok)
        for j in range(cols.shape[1]):
            tok = _text.tokenize_all(cols[:, j])
            _text.require_words(tok, "captions" if cols.shape[1] == 1 else f"captions (column {j})")
            tok = _text.mask_tokens(tok, masked)
            if align_vocab:
                tok, replaced = _text.align_unknown(tok, vocab)
                n_unknown += replaced
            sides.append(_text.join(tok))
    inputs = sides if encoder is None else [encode_texts(encoder, s) for s in sides]

    states, boot_seed = seeds(random_state, n_iter)
    rows = []
    per_class = np.zeros((n_iter, len(inputs), k))
    n_class = np.zeros((n_iter, k))
    scored: list[list] = []  # per distinct iteration: scored images, scores (model; human mean), times seen
    seen: dict = {}  # a deterministic attacker on the same rows as an earlier iteration: that iteration's fit
    same = deterministic(chosen)
    scored_key: Any = None
    bar = progress_bar(total=n_iter, desc="LIC", progress=progress, unit="iterations")
    bar.set_postfix_str(attacker_name(chosen))
    with bar, single_threaded():
        for it, (split_seed, att_seed) in enumerate(states):
            rng = np.random.default_rng(int(split_seed))
            if is_train is None:
                tr, te = random_split(codes, n, test_size, rng)
            else:
                tr, te = np.flatnonzero(is_train), np.flatnonzero(~is_train)
            if balanced:
                tr, te = balance(tr, codes, k, rng), balance(te, codes, k, rng)
            y_te = codes[te]
            counts = np.bincount(y_te, minlength=k)
            n_class[it] = counts
            lic_vals, acc_vals, side_scores = [], [], []
            key = (tr.tobytes(), te.tobytes()) if same else it
            fitted = seen.get(key)
            if fitted is None:
                fitted = seen[key] = [fit_proba(chosen, x, codes, tr, te, k, int(att_seed)) for x in inputs]
            for s, p in enumerate(fitted):
                sc = _scores(p, y_te)
                side_scores.append(sc)
                lic_vals.append(float(sc.mean()))
                acc_vals.append(float(np.mean(_hits(p, y_te))))
                per_class[it, s] = np.bincount(y_te, weights=sc, minlength=k) / np.maximum(counts, 1)
            if it > 0 and key == scored_key:
                scored[-1][2] += 1
            else:
                per_image = np.stack([side_scores[0], np.mean(side_scores[1:], axis=0)] if human is not None
                                     else side_scores[:1])
                scored.append([te, per_image, 1])
            scored_key = key
            row = {"iteration": it, "lic_m": lic_vals[0], "accuracy_m": acc_vals[0]}
            if human is not None:
                row.update(lic_d=float(np.mean(lic_vals[1:])), accuracy_d=float(np.mean(acc_vals[1:])))
                row["lic"] = row["lic_m"] - row["lic_d"]
            row.update(n_train=len(tr), n_test=len(te))
            rows.append(row)
            bar.update()
    table = pd.DataFrame(rows)
    by_class = pd.DataFrame({"lic_m": per_class[:, 0].mean(axis=0)}, index=pd.Index(list(classes), name="class"))
    if human is not None:
        by_class["lic_d"] = per_class[:, 1:].mean(axis=(0, 1))
        by_class["lic"] = by_class["lic_m"] - by_class["lic_d"]
    by_class["n_test"] = n_class.mean(axis=0)
    lm = table["lic_m"].to_numpy()
    quantities = [("lic_m", lm, (0.0, 1.0))]
    if human is None:
        value = lic_d = sd = None
        reason = "no human captions given (captions=None): LIC_D, hence LIC = LIC_M - LIC_D, needs them"
    else:
        ld, la = table["lic_d"].to_numpy(), table["lic"].to_numpy()
        value, lic_d, sd = float(la.mean()), float(ld.mean()), std(la)
        quantities += [("lic_d", ld, (0.0, 1.0)), ("lic", la, (-1.0, 1.0))]
        reason = ""
    frame = None
    ci = ci_m = ci_d = None
    if level is not None:
        reps = _replicates(scored, codes, n_boot, boot_seed, human is not None)
        frame = _iv.table([_iv.intervals(q, float(v.mean()), v, reps[q], level, b) for q, v, b in quantities])
        ci_m = _iv.headline(frame, "lic_m", ci_over)
        if human is not None:
            ci, ci_d = _iv.headline(frame, "lic", ci_over), _iv.headline(frame, "lic_d", ci_over)
    return LICResult(
        value=value, lic_m=float(lm.mean()), lic_d=lic_d, ci=ci, ci_m=ci_m, ci_d=ci_d,
        std=sd, iterations=table, by_class=by_class, level=level, attacker=attacker_name(chosen),
        masked=mask_label, align_vocab=align_vocab and human is not None, n_unknown=int(n_unknown),
        balanced=balanced, reason=reason, intervals=frame, ci_over=ci_over, n_boot=n_boot if level is not None else 0,
    )


def _replicates(scored: list, codes: np.ndarray, n_boot: int, seed: np.random.SeedSequence,
                paired: bool) -> dict[str, np.ndarray]:
    """Caption-bootstrap replicates of LIC_M (and LIC_D, LIC): the scored images redrawn within each class.

    ``scored``: per distinct iteration, its scored images, their scores
    (model; human) and how many iterations it stands for. Every iteration's
    per-image scores are re-averaged with the replicate's image counts
    (model and human scores of an image together), then averaged over the
    iterations; an iteration none of whose scored images was drawn is left
    out of that replicate's mean.
    """
    blocks = []
    for counts in _iv.scored_counts([te for te, _, _ in scored], codes, n_boot, seed):
        values, ok = [], []
        for w, (_, per_image, _) in zip(counts, scored):
            tot = w.sum(axis=1)
            ok.append(tot > 0)
            values.append((w @ per_image.T) / np.where(tot > 0, tot, 1.0)[:, None])
        times = [t for _, _, t in scored]
        blocks.append(np.stack([_iv.mean_over_iterations([v[:, c] for v in values], ok, times)
                                for c in range(values[0].shape[1])], axis=1))
    reps = np.concatenate(blocks)
    out = {"lic_m": reps[:, 0]}
    if paired:
        out.update(lic_d=reps[:, 1], lic=reps[:, 0] - reps[:, 1])
    return out
