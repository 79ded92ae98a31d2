"""Caption statistics without an attacker: gender error, neutral rate and ratio (Burns et al. 2018); word labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT

from . import _text
from ._common import check_n, encode_single, fmt_ci
from ._deps import ResultMixin, check_n_boot, check_random_state, seed_sequence

__all__ = ["CaptionGenderStats", "caption_gender_stats", "caption_labels"]

NEUTRAL = "neutral"


def caption_labels(captions: Any, words: Any = "coco") -> pd.DataFrame:
    r"""Which classes' words each caption uses, as a 0/1 label matrix (one column per class).

    .. math::

        L_{ik} = \mathbb{1}\big[\exists\, w \in \mathrm{tokens}(c_i) :
        w \in W_k\big]

    with the caption's lower-cased tokens and the word list :math:`W_k` of
    class :math:`k`. The matrix is a label input of every co-occurrence
    metric: objects found in the model's captions are a ``task_pred`` for
    :func:`~biasamp.bias_amp_directional`, :func:`~biasamp.bias_amp_mals` or
    :func:`~biasamp.multi_bias_amp`, those of the human captions a ``task``.

    Parameters
    ----------
    captions : sequence of str, shape (n,)
        One caption per image.
    words : "coco", "gender", "race", mapping class -> words, or list of words
        The classes and their words (default: the 80 COCO object classes,
        ``biasamp.captioning.COCO_OBJECT_WORDS``). A list of words is
        one class, ``"words"``.

    Returns
    -------
    pandas.DataFrame
        ``(n, K)`` of 0/1 (int), columns the classes.

    Raises
    ------
    TypeError
        Captions that are not strings; words that are not strings.
    ValueError
        A missing caption, an unknown named word list, a word that is not one
        token.

    Notes
    -----
    Words are matched as whole tokens after the library's tokenisation
    (lower case, letters and digits; ``"knives."`` matches ``knives``).
    Multi-word names (``"hot dog"``) match only through their single-word
    synonyms in the list.

    References
    ----------
    .. [1] K. Burns, L. A. Hendricks, K. Saenko, T. Darrell, A. Rohrbach.
       "Women also Snowboard: Overcoming Bias in Captioning Models". ECCV 2018.

    Examples
    --------
    >>> from biasamp import caption_labels
    >>> caption_labels(["A man with a knife.", "two dogs on a couch"], {"knife": ["knife"], "dog": ["dog", "dogs"]})
       knife  dog
    0      1    0
    1      0    1
    """
    caps = _text.check_captions(captions, "captions")
    wl = _text.resolve_words(words, "words")
    return pd.DataFrame(_text.found(_text.tokenize_all(caps), wl), columns=list(wl))


@dataclass(frozen=True, eq=False, repr=False)
class CaptionGenderStats(ResultMixin):
    r"""Result of :func:`caption_gender_stats`.

    Attributes
    ----------
    error : float
        Fraction of captions that name another class than the image's.
    neutral_rate : float
        Fraction of captions that name no class, or several (gender-neutral).
    ratio : float or None
        :math:`r_{pred} / r_{true}` for two classes (the second class's count
        over the first's, in the captions that name one class, over the same
        ratio of the true labels); 1 = the captions keep the data's gender
        ratio. ``None`` with a reason when a count is 0 or there are more
        than two classes.
    ratio_captions, ratio_truth : float or None
    ci : dict
        Percentile bootstrap intervals (resampling images) of ``error``,
        ``neutral_rate`` and ``ratio``; empty when ``level=None``.
    by_class : pandas.DataFrame
        Per true class (index): ``n``, ``correct``, ``error``, ``neutral``
        (rates within the class).
    confusion : pandas.DataFrame
        Counts: true class (rows) x class named by the caption (columns,
        plus ``"neutral"``).
    level : float or None
    reason : str
        Why ``ratio`` is undefined ("" when defined).

    Notes
    -----
    A caption names class :math:`k` when it holds a word of :math:`k` and of
    no other class. :math:`\mathrm{error} = \#\{\text{names } k \ne a_i\}/n`.

    References
    ----------
    .. [1] K. Burns, L. A. Hendricks, K. Saenko, T. Darrell, A. Rohrbach.
       "Women also Snowboard: Overcoming Bias in Captioning Models". ECCV 2018.

    Examples
    --------
    >>> from biasamp import caption_gender_stats
    >>> s = caption_gender_stats(["male", "female"], captions_pred=["a man", "a man"], level=None)
    >>> s.error, s.neutral_rate
    (0.5, 0.0)
    """

    error: float
    neutral_rate: float
    ratio: float | None
    ratio_captions: float | None
    ratio_truth: float | None
    ci: dict
    by_class: pd.DataFrame
    confusion: pd.DataFrame
    level: float | None
    reason: str = ""

    def to_frame(self) -> pd.DataFrame:
        """The per-class table."""
        return self.by_class.copy()

    def __repr__(self) -> str:
        def part(name: str, v: float | None) -> str:
            if v is None:
                return f"{name} undefined ({self.reason})"
            return f"{name} {v:.4f}{fmt_ci(self.ci.get(name), self.level)}"

        return (f"CaptionGenderStats({part('error', self.error)}, {part('neutral_rate', self.neutral_rate)}, "
                f"{part('ratio', self.ratio)}; n={int(self.by_class['n'].sum())})")


def _named(tokens: list[list[str]], words: dict) -> np.ndarray:
    """Class index named by each caption; ``K`` (neutral) when it names none or several."""
    hits = _text.found(tokens, words)
    one = hits.sum(axis=1) == 1
    return np.where(one, hits.argmax(axis=1), hits.shape[1])


def _from_counts(conf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(error, neutral, ratio)`` from (B, K, K+1) confusion counts (ratio NaN where undefined; K = 2 only)."""
    n = conf.sum(axis=(1, 2))
    k = conf.shape[1]
    diag = np.trace(conf[:, :, :k], axis1=1, axis2=2)
    neutral = conf[:, :, k].sum(axis=1)
    error = (n - diag - neutral) / n
    if k != 2:
        return error, neutral / n, np.full(len(n), np.nan)
    named = conf[:, :, :k].sum(axis=1)  # per class named
    true = conf.sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (named[:, 1] / named[:, 0]) / (true[:, 1] / true[:, 0])
    return error, neutral / n, np.where(np.isfinite(ratio), ratio, np.nan)


def caption_gender_stats(
    attr: Any,
    *,
    captions_pred: Any,
    words: Any = "gender",
    level: float | None = DEFAULT_LEVEL,
    n_boot: int = DEFAULT_N_BOOT,
    random_state: Any = None,
) -> CaptionGenderStats:
    r"""Gender error, gender-neutral rate and gender ratio of captions (Burns et al. 2018), no attacker.

    A caption *names* class :math:`k` when it holds a word of :math:`k` and
    none of another class; otherwise it is neutral. Over :math:`n` images
    with attribute :math:`a_i`:

    .. math::

        \mathrm{error} = \frac{\#\{i : \text{names } k \ne a_i\}}{n},\quad
        \mathrm{neutral} = \frac{\#\{i : \text{neutral}\}}{n},\quad
        \mathrm{ratio} = \frac{N^{named}_{2} / N^{named}_{1}}{N^{true}_{2} / N^{true}_{1}}

    (two classes, in the order of ``words``: for gender, female over male
    among the captions that name one, over the same ratio of the images).

    Parameters
    ----------
    attr : labels of shape (n,)
        The person's attribute; its values must be the classes of ``words``
        (``"male"`` / ``"female"`` for the built-in gender words), in any
        case (``"Female"`` reads the words of ``"female"``).
    captions_pred : sequence of str, shape (n,) (keyword-only)
        The captions (a model's, or human ones).
    words : "gender", mapping class -> words
        The words naming each class (default
        ``biasamp.captioning.GENDER_WORDS``).
    level : float or None, default 0.95
        Level of the bootstrap intervals (``None``: none).
    n_boot : int, default 1000
        Bootstrap resamples (multinomial resampling of the images'
        confusion counts).
    random_state : None, int or numpy Generator

    Returns
    -------
    CaptionGenderStats
        ``.error``, ``.neutral_rate``, ``.ratio``, ``.ci``, ``.by_class``,
        ``.confusion``.

    Raises
    ------
    ValueError
        A class of ``attr`` without words, lengths that disagree, a missing
        caption, bad ``level`` / ``n_boot``.
    TypeError
        Captions that are not strings, a bad ``random_state``.

    Notes
    -----
    Burns et al. report the error on images whose gender is annotated, with
    neutral captions counted apart (the "gender-neutral" rate); a ratio of 1
    means the captions keep the data's proportion of women to men. The
    ratio is undefined (``None``, with ``reason``) for more than two classes
    or when a count is 0.

    References
    ----------
    .. [1] K. Burns, L. A. Hendricks, K. Saenko, T. Darrell, A. Rohrbach.
       "Women also Snowboard: Overcoming Bias in Captioning Models". ECCV 2018.

    Examples
    --------
    >>> from biasamp import caption_gender_stats
    >>> attr = ["male", "female", "female", "male"]
    >>> caps = ["a man surfing", "a man skiing", "a person cooking", "a boy and his dog"]
    >>> s = caption_gender_stats(attr, captions_pred=caps, level=None)
    >>> s.error, s.neutral_rate, s.ratio
    (0.25, 0.25, 0.0)
    """
    codes, classes = encode_single(attr, "attr")
    caps = _text.check_captions(captions_pred, "captions_pred")
    check_n(attr=len(codes), captions_pred=len(caps))
    wl = _text.resolve_words(words, "words")
    key_of: dict = {}
    for c in classes:  # the word list of each class: its key equals the class (1 == 1.0), or its spelling does,
        # or its spelling in another case ("Female" reads the list of "female")
        key = next((kk for kk in wl if kk == c or str(kk) == str(c)), None)
        if key is None:
            key = next((kk for kk in wl if str(kk).casefold() == str(c).casefold()), None)
        if key is None:
            raise ValueError(f"words has no word list for the attr class {c!r}; its classes are {list(wl)}")
        twin = next((other for other, kk in key_of.items() if kk == key), None)
        if twin is not None:
            raise ValueError(f"attr classes {twin!r} and {c!r} both read the word list of {key!r}; give one "
                             "spelling per class")
        key_of[c] = key
    keys = [kk for kk in wl if kk in key_of.values()]  # the classes in the order of ``words`` (the ratio's order)
    by_key = {key_of[c]: i for i, c in enumerate(classes)}
    codes = np.array([keys.index(key_of[c]) for c in classes], dtype=np.intp)[codes]
    classes = tuple(classes[by_key[kk]] for kk in keys)
    names, wl = [str(c) for c in classes], {str(kk): wl[kk] for kk in keys}
    if level is not None and (isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1):
        raise ValueError(f"level must be in (0, 1) or None, got {level!r}")
    n_boot = check_n_boot(n_boot)
    check_random_state(random_state)
    k = len(names)
    named = _named(_text.tokenize_all(caps), wl)
    conf = np.bincount(codes * (k + 1) + named, minlength=k * (k + 1)).reshape(k, k + 1)
    err, neu, rat = (float(v[0]) for v in _from_counts(conf[None].astype(np.float64)))
    true = conf.sum(axis=1)
    named_counts = conf[:, :k].sum(axis=0)
    reason = ""
    ratio_captions = ratio_truth = None
    if k != 2:
        reason = f"the ratio compares two classes, attr has {k}"
    elif 0 in (named_counts[0], true[0], true[1]):
        reason = "a class is never named in the captions (or absent from attr): the ratio divides by 0"
    else:
        ratio_captions, ratio_truth = float(named_counts[1] / named_counts[0]), float(true[1] / true[0])
    ratio = None if reason else rat
    ci: dict = {}
    if level is not None:
        rng = np.random.default_rng(seed_sequence(random_state))
        n = int(conf.sum())
        boot = rng.multinomial(n, (conf / n).reshape(-1), size=int(n_boot)).reshape(-1, k, k + 1).astype(float)
        be, bn, br = _from_counts(boot)
        q = [(1 - level) / 2, (1 + level) / 2]
        ci["error"] = tuple(float(x) for x in np.quantile(be, q))
        ci["neutral_rate"] = tuple(float(x) for x in np.quantile(bn, q))
        if ratio is not None and np.isfinite(br).all():
            ci["ratio"] = tuple(float(x) for x in np.quantile(br, q))
    diag = conf[np.arange(k), np.arange(k)]
    by_class = pd.DataFrame({
        "n": true, "correct": diag / np.maximum(true, 1), "error": (true - diag - conf[:, k]) / np.maximum(true, 1),
        "neutral": conf[:, k] / np.maximum(true, 1),
    }, index=pd.Index(list(classes), name="class"))
    confusion = pd.DataFrame(conf, index=pd.Index(list(classes), name="attr"), columns=[*names, NEUTRAL])
    return CaptionGenderStats(error=err, neutral_rate=neu, ratio=ratio, ratio_captions=ratio_captions,
                              ratio_truth=ratio_truth, ci=ci, by_class=by_class, confusion=confusion, level=level,
                              reason=reason)
