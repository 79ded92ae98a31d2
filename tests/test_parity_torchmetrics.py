"""Parity with torchmetrics' group fairness (``BinaryFairness``), the cases of its own tests in our terms.

torchmetrics' group-fairness tests run ``BinaryFairness(num_groups, task=...)``
over thresholds, with ``ignore_index`` masking, on probabilities and on
logits (a sigmoid is applied to predictions outside [0, 1]), batch by batch.
Its ``demographic_parity`` is :math:`\\min_g PPR_g / \\max_g PPR_g` (our
``disparate_impact_ratio``, 1 − DI) and its ``equal_opportunity``
:math:`\\min_g TPR_g / \\max_g TPR_g` (our ``group_view.ratio()["tpr"]``), keyed
``DP_{argmin}_{argmax}``. Each case runs against the installed torchmetrics
(skipped where it is absent). The documented differences (docs/fairness.md,
"Differences from the peers") have one test each.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchmetrics")

from torchmetrics.classification import BinaryFairness

from biasamp import fairness_metrics
from biasamp.torchmetrics import GroupFairness


def _ours(y, p, g, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fairness_metrics(np.asarray(y), np.asarray(p), sensitive_features=np.asarray(g), min_group_size=0,
                                **kw)


def _theirs(preds, target, groups, num_groups, **kw):
    out = BinaryFairness(num_groups, task="all", **kw)(torch.as_tensor(preds), torch.as_tensor(target),
                                                      torch.as_tensor(groups))
    (dp_key, dp), (eo_key, eo) = sorted(out.items())  # "DP_i_j", "EO_i_j"
    return dp_key, float(dp), eo_key, float(eo)


def _data(seed: int, n: int = 300, n_groups: int = 3):
    gen = torch.Generator().manual_seed(seed)
    preds = torch.rand(n, generator=gen)
    target = torch.randint(0, 2, (n,), generator=gen)
    groups = torch.randint(0, n_groups, (n,), generator=gen)
    return preds, target, groups


def _argmin_argmax(values):
    values = np.asarray(values, dtype=float)
    return int(np.argmin(values)), int(np.argmax(values))


@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.5, 0.7, 0.9])
@pytest.mark.parametrize("seed", [0, 1])
def test_demographic_parity_and_equal_opportunity_over_thresholds(threshold, seed):
    preds, target, groups = _data(seed)
    dp_key, dp, eo_key, eo = _theirs(preds, target, groups, 3, threshold=threshold)
    res = _ours(target.numpy(), preds.numpy().astype(np.float64), groups.numpy(), threshold=threshold)
    assert res.settings.predictions == f"probabilities of 1 thresholded at {threshold:g}"
    view = res.group_view.by_group
    assert res.disparate_impact_ratio == pytest.approx(dp, abs=1e-6)
    assert res.group_view.ratio()["tpr"] == pytest.approx(eo, abs=1e-6)
    # the keys name the groups of the smallest and the largest rate
    lo, hi = _argmin_argmax(view["selection_rate"])
    assert dp_key == f"DP_{lo}_{hi}"
    lo, hi = _argmin_argmax(view["tpr"])
    assert eo_key == f"EO_{lo}_{hi}"


def test_ignore_index_is_dropping_those_rows():
    preds, target, groups = _data(4)
    masked = target.clone()
    masked[::7] = -1
    _, dp, _, eo = _theirs(preds, masked, groups, 3, ignore_index=-1)
    # our spelling: a missing ground truth dropped (missing="drop"), counted in settings.rows
    y = masked.numpy().astype(float)
    y[y == -1] = np.nan
    res = _ours(y, preds.numpy().astype(np.float64), groups.numpy(), missing="drop")
    assert res.settings.rows.n_dropped == int((masked == -1).sum())
    assert res.disparate_impact_ratio == pytest.approx(dp, abs=1e-6)
    assert res.group_view.ratio()["tpr"] == pytest.approx(eo, abs=1e-6)


def test_batches_accumulate_like_torchmetrics():
    preds, target, groups = _data(5, n=400)
    theirs = BinaryFairness(3, task="all")
    ours = GroupFairness(2, 3, metrics=("DP", "DI"), min_group_size=0)
    for sl in (slice(0, 150), slice(150, 260), slice(260, 400)):
        theirs.update(preds[sl], target[sl], groups[sl])
        ours.update(target[sl], preds[sl].double(), sensitive_features=groups[sl])
    dp_ratio = float(sorted(theirs.compute().items())[0][1])
    res = ours.result()
    assert res.disparate_impact_ratio == pytest.approx(dp_ratio, abs=1e-6)
    # DP itself is max - min of the same selection rates
    rates = res.group_view.by_group["selection_rate"].to_numpy(float)
    assert float(ours.compute()["DP"]) == pytest.approx(rates.max() - rates.min(), abs=1e-12)


# --------------------------------------------------------------------------- #
# documented differences, one test each
# --------------------------------------------------------------------------- #
def test_difference_logits_need_an_explicit_sigmoid():
    preds, target, groups = _data(6)
    logits = torch.logit(preds.double().clamp(1e-6, 1 - 1e-6)) * 3
    _, dp, _, eo = _theirs(logits.float(), target, groups, 3)  # torchmetrics applies the sigmoid itself
    # we read scores outside [0, 1] as an error, never as logits guessed: the sigmoid is the caller's
    with pytest.raises(ValueError, match="y_pred"):
        _ours(target.numpy(), logits.numpy(), groups.numpy())
    # exactly that difference: with the sigmoid applied, the same numbers
    res = _ours(target.numpy(), torch.sigmoid(logits).numpy(), groups.numpy())
    assert res.disparate_impact_ratio == pytest.approx(dp, abs=1e-6)
    assert res.group_view.ratio()["tpr"] == pytest.approx(eo, abs=1e-6)


def test_difference_ratios_versus_differences():
    # torchmetrics reports min/max ratios; our DP and EOTP are max - min differences of the same rates
    preds, target, groups = _data(7)
    _, dp_ratio, _, eo_ratio = _theirs(preds, target, groups, 3)
    res = _ours(target.numpy(), preds.numpy().astype(np.float64), groups.numpy())
    view = res.group_view.by_group
    sel, tpr = view["selection_rate"].to_numpy(float), view["tpr"].to_numpy(float)
    assert dp_ratio == pytest.approx(sel.min() / sel.max(), abs=1e-6)
    assert res.overall["DP"] == pytest.approx(sel.max() - sel.min(), abs=1e-12)
    assert res.overall["DI"] == pytest.approx(1 - dp_ratio, abs=1e-6)
    assert eo_ratio == pytest.approx(tpr.min() / tpr.max(), abs=1e-6)
    assert res.overall["EOTP"] == pytest.approx(tpr.max() - tpr.min(), abs=1e-12)
