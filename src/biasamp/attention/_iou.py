"""Attention-IoU: bias inside vision models, measured on their attention maps.

Serianni et al. compare a model's attention map (GradCAM) for a target
attribute either with a ground-truth feature mask (the **mask score**) or with
the attention map of a protected attribute on the same image (the **heatmap
score**), using a generalised, scale- and size-invariant intersection over
union of the two maps (:ref:`def-attention`):

.. math::

    \\tilde X = X / \\textstyle\\sum X, \\quad \\tilde Y = Y / \\sum Y, \\qquad
    \\mathrm{AttnIoU}(X, Y)
      = \\frac{\\langle \\tilde X, \\tilde Y\\rangle_F}{\\lVert (\\tilde X + \\tilde Y)/2\\rVert_F^2}
      = \\frac{4\\langle \\tilde X, \\tilde Y\\rangle}
             {\\lVert\\tilde X\\rVert^2 + \\lVert\\tilde Y\\rVert^2 + 2\\langle \\tilde X, \\tilde Y\\rangle}
      \\in [0, 1].

This module holds everything that needs only numpy/scipy:

* :func:`attention_iou` (numpy arrays *or* torch tensors, one pair or a batch);
* :func:`summarize_attention_scores` (per-image scores -> per-model nanmean,
  split into the (task label, attr label) subgroups) and
  :func:`attention_score_summary` (mean and standard deviation across models);
* :func:`matthews_corrcoef` and :func:`subsample_to_mcc` (the paper's
  training-set subsampling to a chosen label correlation, App. C).

The PyTorch features -- :class:`GradCAM`, :func:`gradcam`,
:func:`heatmap_score`, :func:`mask_score` -- live in :mod:`biasamp.attention._gradcam`,
which imports torch only when one of them is called; without torch they raise
an ``ImportError`` that says ``pip install "biasamp[torch]"``.

References
----------
.. [1] A. Serianni, T. Zhu, O. Russakovsky, V. V. Ramaswamy. "Attention IoU:
   Examining Biases in CelebA using Attention Maps". CVPR 2025,
   §3, App. A-C.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.deprecation import renamed_arguments
from biasamp._core.labels import (
    _check_finite,
    _is_torch_tensor,
    encode_labels,
    to_numpy,
)
from biasamp._core.results import ResultMixin, fmt
from biasamp._engine.resample import check_random_state, generator
from biasamp.exceptions import UndefinedPairWarning, warn_outside

__all__ = [
    "AttentionScoreResult",
    "SubsampleResult",
    "attention_iou",
    "attention_score_summary",
    "matthews_corrcoef",
    "subsample_to_mcc",
    "summarize_attention_scores",
]


# --------------------------------------------------------------------------- #
# Attention-IoU
# --------------------------------------------------------------------------- #
def _check_map_array(arr: np.ndarray, name: str) -> None:
    if arr.dtype == object or not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")


def _check_shapes(xs: tuple, ys: tuple) -> None:
    if len(xs) < 2:
        raise ValueError(
            f"x must be a 2-D map or a batch of maps (leading dimension), got shape {xs}"
        )
    if xs != ys:
        raise ValueError(f"x and y must have the same shape, got {xs} and {ys}")
    if math.prod(xs) == 0:
        raise ValueError(f"x and y must not be empty (maps with at least one pixel), got shape {xs}")


def _iou_numpy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Attention-IoU of the rows of two ``(B, P)`` float64 arrays (NaN where undefined).

    Each map is divided by its maximum before the L1 normalisation, which
    changes nothing mathematically (scale invariance) but keeps huge or tiny
    values from overflowing or underflowing.
    """
    mx, my = x.max(axis=1), y.max(axis=1)
    undefined = (mx == 0) | (my == 0)  # maps are >= 0: max 0 <=> all zero
    one = np.float64(1.0)
    xn = x / np.where(undefined, one, mx)[:, None]
    yn = y / np.where(undefined, one, my)[:, None]
    sx, sy = xn.sum(axis=1), yn.sum(axis=1)
    xn /= np.where(undefined, one, sx)[:, None]
    yn /= np.where(undefined, one, sy)[:, None]
    xy = np.einsum("ij,ij->i", xn, yn)
    xx = np.einsum("ij,ij->i", xn, xn)
    yy = np.einsum("ij,ij->i", yn, yn)
    den = xx + yy + 2.0 * xy
    score = 4.0 * xy / np.where(undefined, one, den)
    np.clip(score, 0.0, 1.0, out=score)
    score[undefined] = np.nan
    return score


def _iou_torch(x: Any, y: Any) -> Any:
    """Torch twin of :func:`_iou_numpy` on ``(B, P)`` floating tensors (differentiable)."""
    import torch

    mx, my = x.amax(dim=1), y.amax(dim=1)
    undefined = (mx == 0) | (my == 0)
    one = torch.ones_like(mx)
    xn = x / torch.where(undefined, one, mx)[:, None]
    yn = y / torch.where(undefined, one, my)[:, None]
    xn = xn / torch.where(undefined, one, xn.sum(dim=1))[:, None]
    yn = yn / torch.where(undefined, one, yn.sum(dim=1))[:, None]
    xy = (xn * yn).sum(dim=1)
    den = (xn * xn).sum(dim=1) + (yn * yn).sum(dim=1) + 2.0 * xy
    score = (4.0 * xy / torch.where(undefined, one, den)).clamp(0.0, 1.0)
    return torch.where(undefined, torch.full_like(score, float("nan")), score)


def _warn_undefined_maps(n_undefined: int, total: int, what: str) -> None:
    if n_undefined:
        warn_outside(
            f"{what}: {n_undefined} of {total} map pairs have an all-zero map; their "
            "Attention-IoU is undefined and returned as NaN (aggregates skip them)",
            UndefinedPairWarning,
        )


def attention_iou(x: Any, y: Any) -> Any:
    r"""Attention-IoU of two non-negative maps, or of two batches of maps.

    .. math::

        \mathrm{AttnIoU}(X, Y)
        = \frac{\langle \tilde X, \tilde Y\rangle_F}{\lVert(\tilde X + \tilde Y)/2\rVert_F^2}
        = \frac{4\langle\tilde X,\tilde Y\rangle}
               {\lVert\tilde X\rVert^2 + \lVert\tilde Y\rVert^2 + 2\langle\tilde X,\tilde Y\rangle},
        \qquad \tilde X = \frac{X}{\sum X},\ \tilde Y = \frac{Y}{\sum Y}.

    The score lies in ``[0, 1]``: identical maps (up to scale) give 1, maps
    with disjoint supports give 0. It is invariant to scaling either map and
    to integer nearest-neighbour upsampling of both (:ref:`def-attention`).

    Parameters
    ----------
    x, y : array-like or torch.Tensor
        Maps of equal shape with entries ``>= 0`` (attention maps after ReLU,
        feature masks). A **2-D** input is one map (``H x W``); an input with
        **3 or more** dimensions is a batch: the leading dimension indexes the
        pairs and *all* trailing dimensions form the map (so ``(B, H, W)`` and
        ``(B, 1, H, W)`` both work; pass ``x[None]`` to score one 3-D map).
        numpy inputs are computed in float64; if either input is a torch
        tensor, the computation runs in torch on that tensor's device (float32
        for integer, boolean and half-precision inputs) and stays
        differentiable.

    Returns
    -------
    float, numpy.ndarray of shape (B,) or torch.Tensor
        A float for one numpy pair, a ``(B,)`` float64 array for a numpy batch;
        a 0-d or ``(B,)`` tensor for torch input.

    Raises
    ------
    ValueError
        Shapes differ, fewer than 2 dimensions, an empty map, a negative or
        non-finite entry.
    TypeError
        Non-numeric input.

    Warns
    -----
    UndefinedPairWarning
        When a pair contains an all-zero map: its score is undefined and is
        returned as NaN (:ref:`def-undefined`); the warning says how many pairs. The
        aggregates (:func:`summarize_attention_scores`, :func:`heatmap_score`,
        :func:`mask_score`) skip such pairs and report their number.

    See Also
    --------
    summarize_attention_scores : per-model mean and subgroup split of scores.
    mask_score, heatmap_score : the paper's two scores for a PyTorch model.

    Notes
    -----
    Mathematically a map is only divided by its sum; the implementation first
    divides by the maximum, which leaves the score unchanged and keeps very
    large or very small maps from overflowing. Symmetric in ``x`` and ``y``
    (bit for bit).

    References
    ----------
    .. [1] A. Serianni, T. Zhu, O. Russakovsky, V. V. Ramaswamy. "Attention
       IoU: Examining Biases in CelebA using Attention Maps". CVPR 2025, §3.2
       and App. B (invariance proofs).

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp.attention import attention_iou
    >>> a = np.array([[1.0, 1.0], [0.0, 0.0]])
    >>> b = np.array([[0.0, 1.0], [0.0, 1.0]])
    >>> attention_iou(a, a), attention_iou(a, 5 * a), round(attention_iou(a, b), 4)
    (1.0, 1.0, 0.6667)
    >>> attention_iou(np.stack([a, a]), np.stack([b, np.flipud(a)])).round(4)   # a batch of 2 pairs
    array([0.6667, 0.    ])
    """
    if _is_torch_tensor(x) or _is_torch_tensor(y):
        return _attention_iou_torch(x, y)
    xa, ya = to_numpy(x, "x"), to_numpy(y, "y")
    for arr, name in ((xa, "x"), (ya, "y")):
        _check_map_array(arr, name)
    _check_shapes(xa.shape, ya.shape)
    single = xa.ndim == 2
    batch = xa.shape[0] if not single else 1
    xf = xa.reshape(batch, -1).astype(np.float64)
    yf = ya.reshape(batch, -1).astype(np.float64)
    for arr, name in ((xf, "x"), (yf, "y")):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or inf values")
        if (arr < 0).any():
            raise ValueError(f"{name} has negative entries (min {arr.min():g}); maps must be >= 0")
    scores = _iou_numpy(xf, yf)
    _warn_undefined_maps(int(np.isnan(scores).sum()), batch, "attention_iou")
    return float(scores[0]) if single else scores


def _attention_iou_torch(x: Any, y: Any) -> Any:
    import torch  # the input is a tensor, so PyTorch is installed

    ref = x if _is_torch_tensor(x) else y
    tensors = []
    for value, name in ((x, "x"), (y, "y")):
        if not _is_torch_tensor(value):
            arr = to_numpy(value, name)
            _check_map_array(arr, name)
            value = torch.as_tensor(arr, device=ref.device)
        if value.is_complex():
            raise TypeError(f"{name} must hold real numbers, got dtype {value.dtype}")
        tensors.append(value)
    xt, yt = tensors
    if xt.device != yt.device:
        raise ValueError(f"x and y are on different devices ({xt.device} and {yt.device})")
    _check_shapes(tuple(xt.shape), tuple(yt.shape))
    dtype = torch.promote_types(xt.dtype, yt.dtype)
    if not dtype.is_floating_point or dtype in (torch.float16, torch.bfloat16):
        dtype = torch.float32
    single = xt.ndim == 2
    batch = 1 if single else xt.shape[0]
    xf, yf = xt.reshape(batch, -1).to(dtype), yt.reshape(batch, -1).to(dtype)
    for t, name in ((xf, "x"), (yf, "y")):
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{name} contains NaN or inf values")
        if bool((t < 0).any()):
            raise ValueError(f"{name} has negative entries (min {float(t.min()):g}); maps must be >= 0")
    scores = _iou_torch(xf, yf)
    _warn_undefined_maps(int(torch.isnan(scores).sum()), batch, "attention_iou")
    return scores[0] if single else scores


# --------------------------------------------------------------------------- #
# per-model aggregation and subgroups
# --------------------------------------------------------------------------- #
def _as_1d(values: Any, name: str, n: int | None = None, labels: bool = False) -> np.ndarray:
    """One value per image; ``labels``: subgroup labels, which may not be missing (NaN/None/inf)."""
    arr = to_numpy(values, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per image), got shape {arr.shape}")
    if n is not None and len(arr) != n:
        raise ValueError(f"{name} has {len(arr)} entries but there are {n} scores")
    if labels:
        _check_finite(arr, name)
    return arr


def _label_str(value: Any) -> str:
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _group_row(group: str, t: Any, a: Any, s: np.ndarray) -> dict:
    defined = s[~np.isnan(s)]
    k = len(defined)
    mean = float(defined.mean()) if k else math.nan
    std = float(defined.std(ddof=1)) if k >= 2 else math.nan
    return {
        "group": group,
        "task_label": t,
        "attr_label": a,
        "n": len(s),
        "n_undefined": int(len(s) - k),
        "mean": mean,
        "std": std,
        "undefined": k == 0,
    }


def _subgroup_table(scores: np.ndarray, t: np.ndarray | None, a: np.ndarray | None) -> pd.DataFrame:
    rows = [_group_row("all", None, None, scores)]
    if t is not None or a is not None:
        tt = t if t is not None else np.full(len(scores), None, dtype=object)
        aa = a if a is not None else np.full(len(scores), None, dtype=object)
        keys = pd.MultiIndex.from_arrays([pd.Index(tt, dtype=object), pd.Index(aa, dtype=object)])
        uniq = keys.unique()
        try:  # positives first: (1, 1), (1, 0), (0, 1), (0, 0) for binary labels
            uniq = sorted(uniq, key=lambda k: (k[0] is None, k[0], k[1] is None, k[1]), reverse=True)
        except TypeError:
            uniq = list(uniq)
        for tv, av in uniq:
            sel = np.ones(len(scores), dtype=bool)
            parts = []
            if t is not None:
                sel &= tt == tv
                parts.append(f"T={_label_str(tv)}")
            if a is not None:
                sel &= aa == av
                parts.append(f"A={_label_str(av)}")
            rows.append(_group_row(",".join(parts), _plain(tv), _plain(av), scores[sel]))
    table = pd.DataFrame(rows)
    for col in ("task_label", "attr_label"):  # keep label values (and None for "all") as given
        table[col] = pd.Series([r[col] for r in rows], dtype=object)
    return table


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True, eq=False, repr=False)
class AttentionScoreResult(ResultMixin):
    r"""Mask or heatmap score of one model (:func:`mask_score`, :func:`heatmap_score`).

    Attributes
    ----------
    kind : {"mask", "heatmap", "scores"}
        Which score (``"scores"`` for :func:`summarize_attention_scores` on
        user-computed scores).
    value : float
        The per-model score: mean over images with a defined score (nanmean).
    scores : numpy.ndarray of shape (N,)
        Per-image Attention-IoU; NaN where an all-zero map made it undefined.
    subgroups : pandas.DataFrame
        One row for ``"all"`` and one per (task label T, attr label A)
        subgroup (``"T=1,A=1"``, ``"T=1,A=0"``, ``"T=0,A=1"``, ``"T=0,A=0"`` for
        binary labels): ``group, task_label, attr_label, n,
        n_undefined, mean, std`` (sample SD over images, ddof=1) and
        ``undefined`` (no defined score in the group).
    n_images : int
    n_undefined : int
        Images skipped because their score was undefined.
    task_labels, attr_labels : numpy.ndarray or None
        The per-image labels used for the split: the target attribute's
        (the task T) and the protected attribute's (A).
    target, protected : int or None
        The model output / label column indices the score was computed for
        (the target attribute and the protected attribute).

    Notes
    -----
    .. math::

        \text{value} = \frac{1}{|I_d|}\sum_{i \in I_d} \mathrm{AttnIoU}_i

    over the images :math:`I_d` whose score is defined (:ref:`def-attention`);
    each subgroup row of ``subgroups`` is the same mean over its images.
    ``to_frame()`` is ``subgroups``.

    References
    ----------
    .. [1] A. Serianni, T. Zhu, O. Russakovsky, V. V. Ramaswamy. "Attention IoU:
       Examining Biases in CelebA using Attention Maps". CVPR 2025, §3.3 and §5.

    Examples
    --------
    >>> from biasamp import summarize_attention_scores
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:  # one undefined score: skipped, counted, warned
    ...     warnings.simplefilter("always")
    ...     res = summarize_attention_scores([0.9, 0.7, 0.2, float("nan")], task=[1, 1, 0, 0], attr=[1, 0, 1, 0])
    >>> round(res.value, 4), res.n_undefined, [w.category.__name__ for w in caught]
    (0.6, 1, ['UndefinedPairWarning'])
    >>> table = res.to_frame()[["group", "n", "mean"]].round(4)
    >>> table["group"].tolist()
    ['all', 'T=1,A=1', 'T=1,A=0', 'T=0,A=1', 'T=0,A=0']
    >>> table["n"].tolist(), table["mean"].tolist()
    ([4, 1, 1, 1, 1], [0.6, 0.9, 0.7, 0.2, nan])
    """

    kind: str
    value: float
    scores: np.ndarray
    subgroups: pd.DataFrame
    n_images: int
    n_undefined: int
    task_labels: np.ndarray | None = None
    attr_labels: np.ndarray | None = None
    target: Any = None
    protected: Any = None

    def by_group(self) -> dict[str, float]:
        """Mapping of group name -> mean score (``"all"`` first); feeds :func:`run_summary`."""
        return dict(zip(self.subgroups["group"], self.subgroups["mean"].astype(float)))

    def __repr__(self) -> str:
        name = {"mask": "Mask score", "heatmap": "Heatmap score"}.get(self.kind, "Attention-IoU")
        extra = f", {self.n_undefined} undefined skipped" if self.n_undefined else ""
        groups = ", ".join(
            f"{g} {m:.4f}" for g, m in zip(self.subgroups["group"][1:], self.subgroups["mean"][1:])
        )
        tail = f"\n  by subgroup: {groups}" if groups else ""
        return f"{name} = {self.value:.4f} ({self.n_images} images{extra}){tail}"


@renamed_arguments("0.2.0", {"target_labels": "task", "protected_labels": "attr"})
def summarize_attention_scores(
    scores: Any,
    *,
    task: Any = None,
    attr: Any = None,
    kind: str = "scores",
    target: Any = None,
    protected: Any = None,
) -> AttentionScoreResult:
    r"""Per-model Attention-IoU score: nanmean over images, split by subgroup.

    .. math:: \text{score} = \frac{1}{|\mathcal I_d|}\sum_{i \in \mathcal I_d} \mathrm{AttnIoU}_i,

    where :math:`\mathcal I_d` are the images whose score is defined (no
    all-zero map). The same mean is reported for every (task label,
    attr label) subgroup, plus ``"all"`` (:ref:`def-attention`).

    Parameters
    ----------
    scores : array-like of shape (N,)
        Per-image Attention-IoU (e.g. from :func:`attention_iou`); NaN marks an
        undefined score.
    task, attr : array-like of shape (N,), optional
        Per-image labels for the subgroup split: ``task`` of the target
        attribute (the paper's target, T), ``attr`` of the protected
        attribute (A). With only one of them, the split is by that label
        alone.
    kind : str, default "scores"
        Recorded in the result (``"mask"``, ``"heatmap"``, ``"scores"``).
    target, protected : optional
        Recorded in the result.

    Returns
    -------
    AttentionScoreResult

    Raises
    ------
    ValueError
        Empty or non-1-D scores, scores outside ``[0, 1]``, label lengths that
        differ from the scores, or *every* score undefined (:ref:`def-undefined`).

    Warns
    -----
    UndefinedPairWarning
        When some (not all) scores are undefined; they are skipped and counted.

    Notes
    -----
    Undefined scores (NaN, from an all-zero map) are skipped and counted,
    never averaged in (:ref:`def-undefined`); a subgroup whose every score is
    undefined is flagged ``undefined``. The standard deviation of a subgroup is
    the sample one (ddof=1).

    References
    ----------
    .. [1] A. Serianni et al. "Attention IoU". CVPR 2025, §3.2 and §5.

    Examples
    --------
    >>> from biasamp.attention import summarize_attention_scores
    >>> res = summarize_attention_scores([0.9, 0.7, 0.2, 0.4],
    ...                                  task=[1, 1, 0, 0], attr=[1, 0, 1, 0])
    >>> round(res.value, 4)
    0.55
    >>> res.by_group()
    {'all': 0.55, 'T=1,A=1': 0.9, 'T=1,A=0': 0.7, 'T=0,A=1': 0.2, 'T=0,A=0': 0.4}
    """
    s = _as_1d(scores, "scores")
    if s.dtype == object:  # numbers, with None / pd.NA for an undefined score (like NaN)
        if not all(v is None or v is pd.NA or (isinstance(v, numbers.Real) and not isinstance(v, bool)) for v in s):
            raise TypeError("scores must hold numbers (NaN or None for an undefined score)")
        s = np.array([np.nan if v is None or v is pd.NA else float(v) for v in s], dtype=np.float64)
    if s.dtype.kind not in "biuf":
        raise TypeError(f"scores must hold numbers, got dtype {s.dtype}")
    s = s.astype(np.float64)
    if len(s) == 0:
        raise ValueError("scores is empty")
    finite = s[~np.isnan(s)]
    if np.isinf(finite).any() or (finite < 0).any() or (finite > 1).any():
        raise ValueError("scores must lie in [0, 1] (NaN marks an undefined score)")
    t = None if task is None else _as_1d(task, "task", len(s), labels=True)
    a = None if attr is None else _as_1d(attr, "attr", len(s), labels=True)
    n_undefined = int(len(s) - len(finite))
    if n_undefined == len(s):
        raise ValueError(f"every one of the {len(s)} scores is undefined (all-zero maps); no score to report")
    if n_undefined:
        warn_outside(
            f"{n_undefined} of {len(s)} images have an undefined Attention-IoU (an all-zero map) "
            "and were skipped; see n_undefined and the subgroups table",
            UndefinedPairWarning,
        )
    table = _subgroup_table(s, t, a)
    return AttentionScoreResult(
        kind=kind,
        value=float(finite.mean()),
        scores=s,
        subgroups=table,
        n_images=len(s),
        n_undefined=n_undefined,
        task_labels=t,
        attr_labels=a,
        target=target,
        protected=protected,
    )


def attention_score_summary(results: Sequence[AttentionScoreResult]) -> pd.DataFrame:
    r"""Mean and standard deviation of a score across models (:ref:`def-attention`).

    Parameters
    ----------
    results : sequence of AttentionScoreResult
        One result per trained model (e.g. different seeds), with the same
        subgroups.

    Returns
    -------
    pandas.DataFrame
        Indexed by group (``"all"`` first, then the subgroups): ``mean``,
        ``std`` (sample SD across models, ddof=1; NaN for one model) and
        ``n_models`` (models where the group's score is defined).

    Raises
    ------
    ValueError
        No results.
    TypeError
        An entry that is not an :class:`AttentionScoreResult`.

    Notes
    -----
    Per group, over the models j where the group's score :math:`x_j` is
    defined: :math:`\bar x = \frac{1}{J}\sum_j x_j` and
    :math:`s = \sqrt{\frac{1}{J-1}\sum_j (x_j - \bar x)^2}`
    (:ref:`def-attention`).

    References
    ----------
    .. [1] A. Serianni et al. "Attention IoU". CVPR 2025, §5.

    Examples
    --------
    >>> from biasamp.attention import attention_score_summary, summarize_attention_scores
    >>> runs = [summarize_attention_scores(s) for s in ([0.5, 0.7], [0.7, 0.9])]
    >>> attention_score_summary(runs).round(4)
         mean     std  n_models
    all   0.7  0.1414         2
    """
    if isinstance(results, (str, bytes, Mapping, AttentionScoreResult)) or not isinstance(results, Iterable):
        raise TypeError(f"results must be a sequence of AttentionScoreResult (one per model), got "
                        f"{type(results).__name__}")
    results = list(results)
    if not results:
        raise ValueError("results is empty: pass one AttentionScoreResult per model")
    for i, r in enumerate(results):
        if not isinstance(r, AttentionScoreResult):
            raise TypeError(f"results[{i}] is a {type(r).__name__}, expected an AttentionScoreResult")
    frame = pd.DataFrame([r.by_group() for r in results])
    out = pd.DataFrame({
        "mean": frame.mean(axis=0, skipna=True),
        "std": frame.std(axis=0, ddof=1, skipna=True),
        "n_models": frame.notna().sum(axis=0).astype(int),
    })
    return out


# --------------------------------------------------------------------------- #
# Matthews correlation and subsampling to a target correlation
# --------------------------------------------------------------------------- #
def _binary_label(x: Any, name: str) -> tuple[np.ndarray, tuple]:
    """Encode one binary label; returns (positive mask, (negative class, positive class))."""
    m = encode_labels({name: x})[name]
    if m.codes is not None:
        if m.n_classes > 2:
            raise ValueError(f"{name} must be binary, got {m.n_classes} classes {list(m.classes)[:10]!r}")
        if m.n_classes < 2:
            raise ValueError(
                f"{name} is constant (only class {m.classes[0]!r}); the Matthews correlation is undefined"
            )
        return m.codes == 1, m.classes
    if m.n_classes != 1:
        raise ValueError(
            f"{name} must be one binary label (1-D, or an N x 1 indicator), got an N x {m.n_classes} matrix"
        )
    dense = m.dense
    assert dense is not None  # an encoded label without codes holds its indicator matrix
    positive = dense[:, 0] == 1
    if positive.all() or not positive.any():
        raise ValueError(
            f"{name} is constant (every row {int(positive[0])}); the Matthews correlation is undefined"
        )
    return positive, (0, 1)


def _counts4(t: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Subgroup sizes in the order (T=1,A=1), (T=1,A=0), (T=0,A=1), (T=0,A=0)."""
    return np.array([(t & a).sum(), (t & ~a).sum(), (~t & a).sum(), (~t & ~a).sum()], dtype=np.float64)


def _mcc_of(s: np.ndarray) -> float:
    n11, n10, n01, n00 = (float(v) for v in s)
    den = (n11 + n10) * (n11 + n01) * (n00 + n10) * (n00 + n01)
    return (n11 * n00 - n10 * n01) / math.sqrt(den) if den > 0 else math.nan


@renamed_arguments("0.2.0", {"target": "task", "protected": "attr"})
def matthews_corrcoef(task: Any, attr: Any) -> float:
    r"""Matthews correlation coefficient (the phi coefficient) of two binary labels.

    With the subgroup sizes :math:`n_{ta}` of (task, attr) labels,

    .. math::

        \mathrm{MCC} = \frac{n_{11} n_{00} - n_{10} n_{01}}
        {\sqrt{n_{1\cdot}\, n_{0\cdot}\, n_{\cdot 1}\, n_{\cdot 0}}} \in [-1, 1].

    Symmetric in its two arguments.

    Parameters
    ----------
    task, attr : array-like of shape (N,)
        Binary labels of the target attribute (the task T) and of the
        protected attribute A (any input kind of :ref:`def-inputs`: 1-D with two classes, or an
        ``N x 1`` 0/1 indicator). The *positive* class is the second of the two
        sorted classes (``1`` for 0/1 labels, ``True`` for booleans).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A label that is not binary, is constant (the MCC is then undefined;
        never a silent NaN: :ref:`def-undefined`), or lengths that differ.

    Notes
    -----
    The MCC depends only on the four subgroup sizes, which is what lets
    :func:`subsample_to_mcc` reach a chosen MCC by choosing them. For binary
    labels it equals scikit-learn's ``matthews_corrcoef`` (tested), but a
    constant label raises instead of returning 0 (:ref:`def-undefined`).

    References
    ----------
    .. [1] B. W. Matthews. "Comparison of the predicted and observed secondary
       structure of T4 phage lysozyme". Biochim. Biophys. Acta 405, 1975.
    .. [2] A. Serianni et al. "Attention IoU". CVPR 2025, §5.2 and App. C.

    Examples
    --------
    >>> from biasamp.attention import matthews_corrcoef
    >>> matthews_corrcoef([1, 1, 0, 0], [1, 1, 0, 0])
    1.0
    >>> round(matthews_corrcoef([1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1]), 4)
    0.3333
    """
    t, _ = _binary_label(task, "task")
    a, _ = _binary_label(attr, "attr")
    if len(t) != len(a):
        raise ValueError(f"length mismatch: task has {len(t)} rows, attr has {len(a)}")
    return float(_mcc_of(_counts4(t, a)))


def _mcc_and_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
    a, b, c, d = x
    m1, m2, m3, m4 = a + b, a + c, d + b, d + c
    prod = max(m1 * m2 * m3 * m4, 1e-300)
    den = math.sqrt(prod)
    mcc = (a * d - b * c) / den
    inv = [1.0 / max(v, 1e-150) for v in (m1, m2, m3, m4)]
    grad = np.array([
        d / den - 0.5 * mcc * (inv[0] + inv[1]),
        -c / den - 0.5 * mcc * (inv[0] + inv[2]),
        -b / den - 0.5 * mcc * (inv[1] + inv[3]),
        a / den - 0.5 * mcc * (inv[2] + inv[3]),
    ])
    return mcc, grad


def _solve_sizes(
    available: np.ndarray, mcc: float, size: int | None, x0: np.ndarray, min_margin: float = 0.1
) -> np.ndarray:
    """Continuous subgroup sizes (as fractions of N) closest to ``available`` with the target MCC.

    The bounds ``0 <= x_g <= p_g`` are built into the variables,
    ``x_g = p_g * sigmoid(z_g)``, so that trust-constr never evaluates the MCC
    outside its domain (with explicit ``Bounds`` its iterates leave the box or,
    with ``keep_feasible``, stall at the barrier). The problem is not convex:
    it is solved from the warm start ``x0`` and from three uniform starts, and
    the feasible solution with the smallest distance wins.
    """
    from scipy.optimize import BFGS, NonlinearConstraint, minimize
    from scipy.special import expit, logit

    total = available.sum()
    p = available / total
    live = p > 0
    pl = p[live]

    def x_of(z: np.ndarray) -> np.ndarray:
        x = np.zeros(4)
        x[live] = pl * expit(z)
        return x

    def dx(z: np.ndarray) -> np.ndarray:
        e = expit(z)
        return pl * e * (1.0 - e)

    def cost(z: np.ndarray) -> float:
        return float(((x_of(z) - p) ** 2).sum())

    def cost_grad(z: np.ndarray) -> np.ndarray:
        return 2.0 * (x_of(z) - p)[live] * dx(z)

    constraints = [
        NonlinearConstraint(
            lambda z: _mcc_and_grad(x_of(z))[0], mcc, mcc,
            jac=lambda z: (_mcc_and_grad(x_of(z))[1][live] * dx(z))[None, :], hess=BFGS(),
        )
    ]
    # each label keeps >= min_margin of its original positives and negatives (the margins): the distance
    # objective otherwise drives a margin to 0, where the MCC is 0/0 (a degenerate "solution")
    margins = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1]], dtype=float)
    constraints.append(NonlinearConstraint(
        lambda z: margins @ x_of(z), min_margin * (margins @ p), np.inf,
        jac=lambda z: margins[:, live] * dx(z)[None, :], hess=BFGS(),
    ))
    if size is not None:
        constraints.append(NonlinearConstraint(
            lambda z: float(x_of(z).sum()), size / total, size / total, jac=lambda z: dx(z)[None, :], hess=BFGS()
        ))
    warm = np.clip(np.asarray(x0, dtype=float)[live] / pl, 1e-3, 1 - 1e-3)
    fracs = (0.99, 0.9, 0.5) if size is None else (min(max(size / total, 1e-3), 1 - 1e-3), 0.5)
    starts = [warm] + [np.full(int(live.sum()), f) for f in fracs]
    best, best_cost = None, math.inf
    for start in starts:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # scipy's notes about BFGS updates and maxiter
            try:
                res = minimize(cost, logit(start), jac=cost_grad, hess=BFGS(), method="trust-constr",
                               constraints=constraints, options={"maxiter": 400})
            except ValueError:  # a start that ran into a singular point
                continue
        x = x_of(res.x)
        ok = abs(_mcc_and_grad(x)[0] - mcc) < 1e-5 and (size is None or abs(x.sum() * total - size) < 0.5)
        c = cost(res.x)
        if ok and c < best_cost - 1e-12:
            best, best_cost = x, c
    if best is None:  # nothing feasible: report via the caller's tolerance check
        best = x_of(logit(warm))
    return np.clip(best, 0.0, p)


def _round_sizes(x: np.ndarray, available: np.ndarray, size: int | None) -> np.ndarray:
    raw = x * available.sum()
    sizes = np.clip(np.rint(raw), 0, available).astype(np.int64)
    if size is not None:  # hit the exact total: move the largest rounding residuals
        diff = int(size - sizes.sum())
        order: np.ndarray | list[int] = np.argsort(-(raw - sizes) * np.sign(diff)) if diff else []
        for g in order:
            if diff == 0:
                break
            step = 1 if diff > 0 else -1
            if 0 <= sizes[g] + step <= available[g]:
                sizes[g] += step
                diff -= step
    return sizes


@dataclass(frozen=True, eq=False, repr=False)
class SubsampleResult(ResultMixin):
    r"""Result of :func:`subsample_to_mcc`.

    Attributes
    ----------
    target_mcc : float
        The MCC asked for.
    mcc : float
        The MCC of the chosen subsample (within ``tol`` of ``target_mcc``).
    original_mcc : float
        The MCC of the full set.
    sizes : pandas.DataFrame
        One row per subgroup ``(T=1,A=1), (T=1,A=0), (T=0,A=1), (T=0,A=0)``:
        ``group, task, attr`` (class names), ``available``, ``selected``.
    indices : numpy.ndarray
        Sorted row positions of the subsample in the input.
    n : int
        Subsample size (``len(indices)``).

    Notes
    -----
    There is no single ``value``: the result is a selection of rows, not a
    metric; ``mcc`` is the correlation it achieves,
    :math:`\mathrm{MCC} = (s_{11}s_{00} - s_{10}s_{01}) /
    \sqrt{s_{1\cdot}\,s_{0\cdot}\,s_{\cdot 1}\,s_{\cdot 0}}` for the selected
    subgroup sizes :math:`s` (:ref:`def-attention`). ``to_frame()`` is
    ``sizes``.

    References
    ----------
    .. [1] A. Serianni et al. "Attention IoU". CVPR 2025, §5.2 and App. C.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp import subsample_to_mcc
    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 4000)
    >>> task = np.where(rng.random(4000) < 0.8, attr, 1 - attr)
    >>> res = subsample_to_mcc(task, attr, 0.2, random_state=0)
    >>> abs(res.mcc - 0.2) < 0.01, int(res.to_frame()["selected"].sum()) == res.n
    (True, True)
    """

    target_mcc: float
    mcc: float
    original_mcc: float
    sizes: pd.DataFrame
    indices: np.ndarray
    n: int

    def __repr__(self) -> str:
        sel = "/".join(str(int(v)) for v in self.sizes["selected"])
        avail = "/".join(str(int(v)) for v in self.sizes["available"])
        return (
            f"SubsampleResult(MCC {fmt(self.mcc)} for target {fmt(self.target_mcc)}, original "
            f"{fmt(self.original_mcc)}; n = {self.n}; sizes (T,A)=11/10/01/00: {sel} of {avail})"
        )


@renamed_arguments("0.2.0", {"target": "task", "protected": "attr"})
def subsample_to_mcc(
    task: Any,
    attr: Any,
    mcc: float | Sequence[float],
    *,
    size: int | None = None,
    equal_size: bool = True,
    tol: float = 0.01,
    min_margin: float = 0.1,
    random_state: Any = None,
) -> SubsampleResult | list[SubsampleResult]:
    r"""Subsample a training set so that two binary labels have a chosen MCC.

    The MCC depends only on the four subgroup sizes
    :math:`s = (s_{11}, s_{10}, s_{01}, s_{00})` of (task, attr). Following
    Serianni et al. (App. C), the sizes solve

    .. math::

        \min_s \lVert s - n\rVert_2^2 \quad\text{s.t.}\quad
        \mathrm{MCC}(s) = m,\ \ 0 \le s \le n,\ \ \text{margins}(s) \ge
        \mu\,\text{margins}(n)\ \ [\text{and } \textstyle\sum s = \text{size}],

    with ``scipy.optimize.minimize(method="trust-constr")`` (analytic
    gradients, in units of the data-set size), where :math:`n` are the
    available subgroup sizes; the solution is rounded to whole rows, which are
    then drawn uniformly without replacement from each subgroup.

    Parameters
    ----------
    task, attr : array-like of shape (N,)
        Binary labels of the target attribute (T) and of the protected
        attribute (A) (see :func:`matthews_corrcoef` for the positive class).
    mcc : float or sequence of float
        Target MCC(s) in ``[-1, 1]``. For a sequence the targets are solved in
        order of their distance to the original MCC, each started from the
        adjacent solution (the paper's warm start).
    size : int, optional
        Fix the subsample size (the paper keeps it constant across MCCs).
    equal_size : bool, default True
        For a sequence of targets without ``size``: after solving each one,
        solve all again with ``size`` set to the smallest subsample found, so
        that every subsample has the same size (App. C).
    tol : float, default 0.01
        Largest accepted ``|MCC(subsample) - mcc|`` after rounding.
    min_margin : float, default 0.1
        :math:`\mu`: each label keeps at least this fraction of its original
        number of positives and of negatives (the four margins of the 2x2
        table). Without it the distance objective can drive a margin to
        zero, where the MCC is 0/0 (e.g. "MCC 0" by deleting almost all
        protected-positive rows). The paper does not say; set 0 to disable.
    random_state : None, int or numpy Generator
        Seed of the row draw within each subgroup.

    Returns
    -------
    SubsampleResult or list of SubsampleResult
        One per target MCC, in the order given.

    Raises
    ------
    ValueError
        Non-binary or constant labels, a target outside ``[-1, 1]``, a
        ``size`` larger than the data, or a target the available subgroups
        cannot reach within ``tol``.

    Notes
    -----
    ``min_margin`` is biasamp's addition (the paper does not say): without
    it the distance objective can empty a margin of the 2x2 table, where the
    MCC is 0/0 (:ref:`def-attention`). Rows are drawn uniformly without
    replacement within each subgroup, reproducibly for a ``random_state``.

    References
    ----------
    .. [1] A. Serianni et al. "Attention IoU". CVPR 2025, §5.2 and App. C.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp.attention import matthews_corrcoef, subsample_to_mcc
    >>> rng = np.random.default_rng(0)
    >>> attr = rng.integers(0, 2, 4000)
    >>> task = np.where(rng.random(4000) < 0.8, attr, 1 - attr)   # MCC about 0.6
    >>> res = subsample_to_mcc(task, attr, 0.2, random_state=0)
    >>> abs(res.mcc - 0.2) < 0.01, abs(matthews_corrcoef(task[res.indices], attr[res.indices]) - 0.2) < 0.01
    (True, True)
    """
    check_random_state(random_state)
    t, t_classes = _binary_label(task, "task")
    a, a_classes = _binary_label(attr, "attr")
    if len(t) != len(a):
        raise ValueError(f"length mismatch: task has {len(t)} rows, attr has {len(a)}")
    scalar = np.ndim(mcc) == 0
    given: list[object] = [mcc] if scalar or not isinstance(mcc, Iterable) else list(mcc)
    if not given:
        raise ValueError("mcc is empty")
    targets: list[float] = []
    for m in given:
        if isinstance(m, bool) or not isinstance(m, (int, float, np.integer, np.floating)) or not -1 <= m <= 1:
            raise ValueError(f"mcc must be a number in [-1, 1] (or a sequence of them), got {m!r}")
        targets.append(float(m))
    if not (isinstance(tol, (int, float, np.floating)) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if not (isinstance(min_margin, (int, float, np.floating)) and 0 <= min_margin < 1):
        raise ValueError(f"min_margin must be a number in [0, 1), got {min_margin!r}")
    available = _counts4(t, a)
    n_total = int(available.sum())
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 0 < size <= n_total:
            raise ValueError(f"size must be an integer in [1, {n_total}], got {size!r}")
        size = int(size)
    original = _mcc_of(available)
    p = available / n_total

    def solve_all(fixed: int | None, previous: dict[int, np.ndarray] | None = None) -> dict[int, np.ndarray]:
        order = sorted(range(len(targets)), key=lambda i: abs(float(targets[i]) - original))
        sizes: dict[int, np.ndarray] = {}
        for i in order:
            m = float(targets[i])
            if previous is not None:  # second pass: this target's first solution, shrunk to the size
                start = previous[i] * (fixed / previous[i].sum()) / n_total
            else:
                near = min(sizes, key=lambda j: abs(float(targets[j]) - m), default=None)
                start = (p if fixed is None else p * (fixed / n_total)) if near is None else sizes[near] / n_total
            x = _solve_sizes(available, m, fixed, start, min_margin)
            sizes[i] = _round_sizes(x, available, fixed)
        return sizes

    solved = solve_all(size)
    if not scalar and size is None and equal_size and len(targets) > 1:
        smallest = int(min(s.sum() for s in solved.values()))
        solved = solve_all(smallest, solved)

    rng = generator(random_state)
    members = [np.flatnonzero(t & a), np.flatnonzero(t & ~a), np.flatnonzero(~t & a), np.flatnonzero(~t & ~a)]
    names = ["T=1,A=1", "T=1,A=0", "T=0,A=1", "T=0,A=0"]
    out = []
    for i, m in enumerate(targets):
        sizes = solved[i]
        got = _mcc_of(sizes)
        if not math.isfinite(got) or abs(got - float(m)) > tol:
            raise ValueError(
                f"cannot reach MCC {float(m):+.4f} within tol={tol} from the available subgroup sizes "
                f"{available.astype(int).tolist()} (T,A = 11/10/01/00)"
                + (f" with size={size}" if size is not None else "")
                + f" keeping min_margin={min_margin} of each label's positives and negatives"
                + (f"; closest found {got:+.4f} with sizes {sizes.tolist()}" if math.isfinite(got) else "")
            )
        idx = np.sort(np.concatenate([
            rng.choice(rows, size=int(k), replace=False) for rows, k in zip(members, sizes)
        ]))
        table = pd.DataFrame({
            "group": names,
            "task": [t_classes[1], t_classes[1], t_classes[0], t_classes[0]],
            "attr": [a_classes[1], a_classes[0], a_classes[1], a_classes[0]],
            "available": available.astype(np.int64),
            "selected": sizes.astype(np.int64),
        })
        out.append(SubsampleResult(float(m), float(got), float(original), table, idx, len(idx)))
    return out[0] if scalar else out
