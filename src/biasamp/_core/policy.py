"""One policy for probabilities given as predictions, in every count-based family.

Scores in [0, 1] given where predictions are expected are turned into hard
predictions — thresholded at ``threshold`` (strictly above: ``score >
threshold``) per label for multi-label and binary tasks, the argmax of the
class probabilities for a multi-class task — unless the caller asks for
``soft="expected"``, in which case every count becomes an expected count
(Wang & Russakovsky use expected rates for sentence completion). BiasAmp→,
BiasAmp_MALS, the multi-attribute metrics, the group fairness metrics and
differential fairness all apply this module, so one report never mixes the two
readings, and every result says which one was used (docs/definitions.md,
"Probabilities").
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from biasamp._core.labels import LabelMatrix, class_index
from biasamp._core.validation import BOOL, Interval, OneOf, check

__all__ = ["EXPECTED_RATES", "INCLUDE_SMALL_GROUPS", "MIN_GROUP_SIZE", "SOFT", "SOFT_CHOICES", "THRESHOLD",
           "check_include_small_groups", "check_min_group_size", "check_soft", "check_threshold", "class_index",
           "harden", "harden_maybe", "harden_roles", "joined", "left_out_mask", "small_groups", "warn_small_groups"]

SOFT_CHOICES = ("threshold", "expected")
#: what the policy says of probabilities counted as expected rates (``soft="expected"``)
EXPECTED_RATES = "expected rates (probabilities, soft='expected')"

# the declared constraints of the policy's options (biasamp._core.validation): the checkers below and the
# families' options dataclasses both read them
#: ``threshold``: a probability strictly above it counts as a positive prediction
THRESHOLD = (Interval(Real, 0, 1, closed="left"),)
#: ``soft``: threshold probabilities, or count them as expected rates
SOFT = (OneOf(*SOFT_CHOICES),)
#: ``min_group_size``: groups with fewer (weighted) test members are small
MIN_GROUP_SIZE = (Interval(Integral, 0, None),)
#: ``include_small_groups``: keep small groups in the headline
INCLUDE_SMALL_GROUPS = (BOOL,)


def check_threshold(threshold: Any) -> float:
    """``threshold`` as a float in [0, 1), else a named error."""
    return float(check("threshold", threshold, THRESHOLD))


def check_soft(soft: Any) -> str:
    """``soft`` if it is one of :data:`SOFT_CHOICES`, else ``ValueError``."""
    return check("soft", soft, SOFT)


def harden(yt: LabelMatrix, yp: LabelMatrix, threshold: float, pos_label: Any = 1) -> tuple[LabelMatrix, str]:
    """Probabilities as hard predictions: thresholded (binary, multi-label) or argmax (multi-class).

    ``yt`` (the ground truth of the same role) says whether the labels are
    multi-label (thresholded per label), binary (the probability of
    ``pos_label``, or of the second class when ``pos_label`` is not a class,
    thresholded) or multi-class (argmax). Returns the hard matrix and a
    description of what was done.
    """
    p = np.asarray(yp.dense, dtype=np.float64)  # probabilities are always held dense
    if yt.codes is None:
        return LabelMatrix(yp.name, yp.classes, dense=(p > threshold).astype(np.int8)), \
            f"thresholded at {threshold:g} (per label)"
    if yt.n_classes == 2:
        pos_index = class_index(yt.classes, pos_label)
        pos = 1 if pos_index is None else pos_index
        codes = np.where(p[:, pos] > threshold, pos, 1 - pos).astype(np.intp)
        return LabelMatrix(yp.name, yp.classes, codes=codes), \
            f"probabilities of {yp.classes[pos]!r} thresholded at {threshold:g}"
    return LabelMatrix(yp.name, yp.classes, codes=np.argmax(p, axis=1).astype(np.intp)), \
        "argmax of the class probabilities"


def harden_maybe(yt: LabelMatrix, yp: LabelMatrix, soft: str, threshold: float,
                 pos_label: Any = 1) -> tuple[LabelMatrix, LabelMatrix, str]:
    """``(yt, yp, description)``: ``yp`` hardened unless it is hard already or ``soft="expected"``."""
    if yp.soft and soft == "threshold":
        return (yt, *harden(yt, yp, threshold, pos_label))
    return yt, yp, (EXPECTED_RATES if yp.soft else "hard")


def joined(*descriptions: str) -> str:
    """One description of what the policy did over several roles or batches (each part once; "hard" if none)."""
    said: list[str] = []
    for d in descriptions:
        for part in d.split("; "):
            if part != "hard" and part not in said:
                said.append(part)
    return "; ".join(said) or "hard"


def harden_roles(encoded: dict, pairs: tuple, soft: str, threshold: float) -> tuple[dict, str]:
    """Apply the policy to the prediction roles of ``encoded`` (``pairs``: (truth role, prediction role)).

    The ground truth of the same role says how the predictions are hardened;
    without it (a batch of predictions alone) an attribute's probabilities are
    read as one class per row and a task's as independent labels. Returns the
    matrices with hardened predictions and one description of the predictions
    (``"hard"`` when none was a probability).
    """
    out, said = type(encoded)(encoded), []  # an EncodedLabels keeps naming a missing argument
    for truth, pred in pairs:
        if pred in out:
            like = out.get(truth)
            if like is None:  # the kind of labels, from the role: one class per row (attr) or several (task)
                n = out[pred].n_rows
                like = LabelMatrix(truth, out[pred].classes, codes=np.zeros(n, dtype=np.intp)) \
                    if truth.startswith("attr") else \
                    LabelMatrix(truth, out[pred].classes, dense=np.zeros((n, out[pred].n_classes), dtype=np.int8))
            _, out[pred], what = harden_maybe(like, out[pred], soft, threshold)
            if what != "hard":
                said.append(f"{pred}: {what}")
    return out, joined(*said)


# --------------------------------------------------------------------------- #
# small groups: one rule in every family
# --------------------------------------------------------------------------- #
def check_min_group_size(min_group_size: Any) -> int:
    """``min_group_size`` as a non-negative int, else a named ``TypeError``/``ValueError``."""
    return int(check("min_group_size", min_group_size, MIN_GROUP_SIZE))


def check_include_small_groups(include_small_groups: Any) -> bool:
    """``include_small_groups`` as a bool, else ``TypeError``."""
    return bool(check("include_small_groups", include_small_groups, INCLUDE_SMALL_GROUPS))


def small_groups(n: np.ndarray, min_group_size: int, include_small_groups: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(small, excluded)`` masks over the groups of the protected attribute.

    A group with fewer than ``min_group_size`` (weighted) test members is
    small. Small groups are left out of a headline unless asked
    (``include_small_groups``), or unless fewer than two larger groups would
    remain (nothing could be compared without them). Their pairs or rates stay
    in the tables, flagged (docs/definitions.md, "Small groups").
    """
    n = np.asarray(n, dtype=np.float64)
    small = (n > 0) & (n < min_group_size)
    big = (n >= min_group_size) & (n > 0)
    if include_small_groups or big.sum() < 2:
        return small, np.zeros_like(small)
    return small, small


def warn_small_groups(small: np.ndarray, excluded: np.ndarray, groups: tuple, n: np.ndarray, min_group_size: int,
                      include_small_groups: bool, what: str) -> None:
    """The one ``SmallGroupWarning`` of every family: which groups are small, and whether they left the headline.

    Emitted once per call, whenever a group is ``small`` (flagged in the
    tables), at the first caller outside biasamp (the user's line, whatever
    the path: the function, :func:`~biasamp.bootstrap`, an accumulator). The
    message has one shape in every family: ``"<what>: k group(s) with fewer
    than m test members, <fate>: 'g' (n=5), ..."``, where ``<fate>`` says
    whether they were left out of the headline (``excluded``) or kept, and why.
    """
    from biasamp.exceptions import SmallGroupWarning, warn_outside

    small, excluded = np.asarray(small, dtype=bool), np.asarray(excluded, dtype=bool)
    if not small.any():
        return
    listed = [f"{g!r} (n={m:g})" for g, m, s in zip(groups, n, small) if s]
    names = ", ".join(listed[:8]) + (f", ... ({len(listed)} in all)" if len(listed) > 8 else "")
    if excluded.any():
        fate = ("left out of the headline (they stay in the tables, flagged 'small')" if (excluded == small).all()
                else f"{int(excluded.sum())} of them left out of the headline (small in every fold that decides; "
                     "all stay in the tables, flagged 'small')")
    elif include_small_groups:
        fate = "kept in the headline (include_small_groups=True)"
    else:
        fate = ("kept in the headline (fewer than two groups have at least min_group_size members, so none is "
                "left out)")
    warn_outside(f"{what}: {len(listed)} group(s) with fewer than {min_group_size} test members, {fate}: {names}",
                 SmallGroupWarning)


def left_out_mask(groups: tuple, small: tuple) -> np.ndarray:
    """Over ``groups``: the ones a result left out of its headline as small (its ``small_groups``).

    The resampling plans apply the estimate's exclusion to every replicate with it.
    """
    out = set(small)
    return np.array([g in out for g in groups], dtype=bool)
