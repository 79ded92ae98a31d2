"""Tests of biasamp.attention: Attention-IoU, GradCAM, mask/heatmap scores, MCC subsampling.

The torch tests skip cleanly where torch (or captum, for the one comparison
against captum's ``LayerGradCam``) is not installed.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from biasamp.attention import (
    AttentionScoreResult,
    SubsampleResult,
    attention_iou,
    attention_score_summary,
    matthews_corrcoef,
    subsample_to_mcc,
    summarize_attention_scores,
)
from biasamp.exceptions import UndefinedPairWarning


def reference_iou(x: np.ndarray, y: np.ndarray) -> float:
    """The first form of docs/definitions.md#def-attention, written independently: <X~,Y~> / ||(X~+Y~)/2||^2."""
    xt = np.asarray(x, dtype=float) / np.sum(x)
    yt = np.asarray(y, dtype=float) / np.sum(y)
    return float(np.sum(xt * yt) / np.sum(((xt + yt) / 2) ** 2))


maps = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
    elements=st.floats(0, 100, allow_nan=False, allow_subnormal=False),
)


def pair():
    return st.integers(1, 6).flatmap(
        lambda h: st.integers(1, 6).flatmap(
            lambda w: st.tuples(
                hnp.arrays(np.float64, (h, w), elements=st.floats(0, 100, allow_subnormal=False)),
                hnp.arrays(np.float64, (h, w), elements=st.floats(0, 100, allow_subnormal=False)),
            )
        )
    )


# --------------------------------------------------------------------------- #
# attention_iou: values and invariances (docs/definitions.md#def-attention)
# --------------------------------------------------------------------------- #
def test_known_values():
    a = np.array([[1.0, 1.0], [0.0, 0.0]])
    b = np.array([[0.0, 1.0], [0.0, 1.0]])
    assert attention_iou(a, a) == 1.0
    assert attention_iou(a, b) == pytest.approx(2 / 3, abs=1e-15)
    assert attention_iou(a, np.flipud(a)) == 0.0
    # a binary mask inside a uniform map: 4(1/4)/((1/4)+(1/16)+2(1/4)) ... computed by hand
    uniform, mask = np.ones((4, 4)), np.zeros((4, 4))
    mask[:2, :2] = 1
    # X~ = 1/16 everywhere, Y~ = 1/4 on 4 cells: <> = 1/16, |X~|^2 = 1/16, |Y~|^2 = 1/4
    assert attention_iou(uniform, mask) == pytest.approx(4 * (1 / 16) / (1 / 16 + 1 / 4 + 2 / 16), abs=1e-15)


@settings(max_examples=150, deadline=None)
@given(pair())
def test_matches_reference_bounds_and_symmetry(xy):
    x, y = xy
    assume(x.sum() > 0 and y.sum() > 0)
    s = attention_iou(x, y)
    assert 0.0 <= s <= 1.0
    assert s == attention_iou(y, x)  # bit-for-bit symmetric
    assert s == pytest.approx(reference_iou(x, y), rel=1e-12, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(pair(), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3))
def test_scale_invariance(xy, cx, cy):
    x, y = xy
    assume(x.sum() > 0 and y.sum() > 0)
    assert attention_iou(cx * x, cy * y) == pytest.approx(attention_iou(x, y), rel=1e-12, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(pair(), st.integers(1, 4))
def test_nearest_neighbour_upsampling_invariance(xy, k):
    x, y = xy
    assume(x.sum() > 0 and y.sum() > 0)
    up = np.ones((k, k))
    assert attention_iou(np.kron(x, up), np.kron(y, up)) == pytest.approx(attention_iou(x, y), rel=1e-12, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(maps, st.floats(1e-3, 1e3))
def test_identical_maps_give_one(x, c):
    assume(x.sum() > 0)
    assert attention_iou(x, x) == 1.0
    assert attention_iou(x, c * x) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(pair(), st.data())
def test_disjoint_supports_give_zero(xy, data):
    x, y = xy
    region = data.draw(hnp.arrays(bool, x.shape))
    x, y = np.where(region, x, 0.0), np.where(region, 0.0, y)
    assume(x.sum() > 0 and y.sum() > 0)
    assert attention_iou(x, y) == 0.0


def test_extreme_magnitudes_do_not_overflow():
    x = np.array([[1e300, 1e300], [0.0, 1e300]])
    y = np.array([[1e-300, 0.0], [0.0, 1e-300]])
    assert attention_iou(x, y) == pytest.approx(reference_iou(x / 1e300, y / 1e-300), rel=1e-12)


def test_batched_equals_loop_and_all_trailing_dims_are_the_map():
    rng = np.random.default_rng(0)
    x, y = rng.random((5, 3, 4)), rng.random((5, 3, 4))
    batch = attention_iou(x, y)
    assert batch.shape == (5,)
    np.testing.assert_allclose(batch, [attention_iou(a, b) for a, b in zip(x, y)], rtol=1e-14)
    # (B, 1, H, W) and (B, C, H, W): the trailing dims form one map
    np.testing.assert_allclose(attention_iou(x[:, None], y[:, None]), batch, rtol=1e-14)
    x4, y4 = rng.random((2, 3, 4, 4)), rng.random((2, 3, 4, 4))
    np.testing.assert_allclose(attention_iou(x4, y4), [reference_iou(a, b) for a, b in zip(x4, y4)], rtol=1e-12)


def test_all_zero_map_is_nan_counted_and_warned():
    x = np.ones((3, 2, 2))
    y = np.ones((3, 2, 2))
    x[1] = 0
    with pytest.warns(UndefinedPairWarning, match="1 of 3"):
        s = attention_iou(x, y)
    assert np.isnan(s[1]) and s[0] == s[2] == 1.0
    with pytest.warns(UndefinedPairWarning):
        assert np.isnan(attention_iou(np.zeros((2, 2)), np.ones((2, 2))))


def test_input_validation():
    with pytest.raises(ValueError, match="negative"):
        attention_iou(np.array([[1.0, -1.0]]), np.ones((1, 2)))
    with pytest.raises(ValueError, match="same shape"):
        attention_iou(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="2-D map or a batch"):
        attention_iou(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        attention_iou(np.array([[np.nan, 1.0]]), np.ones((1, 2)))
    with pytest.raises(TypeError, match="x must hold numbers"):
        attention_iou(np.array([["a", "b"]]), np.ones((1, 2)))
    with pytest.raises(ValueError, match="empty"):
        attention_iou(np.ones((3, 0, 2)), np.ones((3, 0, 2)))
    # integer and boolean masks are fine
    assert attention_iou(np.array([[1, 0]]), np.array([[True, False]])) == 1.0


# --------------------------------------------------------------------------- #
# summaries
# --------------------------------------------------------------------------- #
def test_summary_subgroups_skip_undefined():
    scores = [0.9, np.nan, 0.7, 0.2, 0.4, 0.6]
    t = [1, 1, 1, 0, 0, 0]
    a = [1, 1, 0, 1, 0, 0]
    with pytest.warns(UndefinedPairWarning, match="1 of 6"):
        res = summarize_attention_scores(scores, task=t, attr=a, kind="mask")
    assert isinstance(res, AttentionScoreResult)
    assert res.value == pytest.approx(np.nanmean(scores))
    assert res.n_undefined == 1 and res.n_images == 6
    table = res.subgroups.set_index("group")
    assert list(table.index) == ["all", "T=1,A=1", "T=1,A=0", "T=0,A=1", "T=0,A=0"]
    assert table.loc["T=1,A=1", "mean"] == 0.9 and table.loc["T=1,A=1", "n_undefined"] == 1
    assert table.loc["T=0,A=0", "mean"] == pytest.approx(0.5)
    assert table.loc["T=0,A=0", "std"] == pytest.approx(np.std([0.4, 0.6], ddof=1))
    assert "Mask score = 0.5600" in repr(res) and "1 undefined" in repr(res)
    d = res.to_dict()
    assert d["scores"][1] is None and d["subgroups"][0]["group"] == "all"


def test_summary_all_undefined_raises_and_bad_scores():
    with pytest.raises(ValueError, match="every one"):
        summarize_attention_scores([np.nan, np.nan])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        summarize_attention_scores([0.5, 1.5])
    with pytest.raises(ValueError, match="task has 1"):
        summarize_attention_scores([0.5, 0.5], task=[1])


def test_summary_across_models():
    runs = [
        summarize_attention_scores([0.5, 0.7], task=[1, 0], attr=[1, 1]),
        summarize_attention_scores([0.7, 0.9], task=[1, 0], attr=[1, 1]),
    ]
    out = attention_score_summary(runs)
    assert out.loc["all", "mean"] == pytest.approx(0.7)
    assert out.loc["all", "std"] == pytest.approx(np.std([0.6, 0.8], ddof=1))
    assert out.loc["T=1,A=1", "mean"] == pytest.approx(0.6) and out.loc["T=1,A=1", "n_models"] == 2
    with pytest.raises(TypeError, match=r"results\[0\]"):
        attention_score_summary([0.5])


# --------------------------------------------------------------------------- #
# Matthews correlation and subsampling
# --------------------------------------------------------------------------- #
def test_mcc_matches_sklearn_and_input_kinds():
    from sklearn.metrics import matthews_corrcoef as sk_mcc

    rng = np.random.default_rng(1)
    t, a = rng.integers(0, 2, 500), rng.integers(0, 2, 500)
    assert matthews_corrcoef(t, a) == pytest.approx(sk_mcc(t, a), abs=1e-14)
    assert matthews_corrcoef(a, t) == pytest.approx(matthews_corrcoef(t, a), abs=1e-15)
    assert matthews_corrcoef(pd.Series(t == 1), list(a)) == pytest.approx(sk_mcc(t, a), abs=1e-14)
    assert matthews_corrcoef(t[:, None], a[:, None]) == pytest.approx(sk_mcc(t, a), abs=1e-14)
    assert matthews_corrcoef(t, 1 - a) == pytest.approx(-sk_mcc(t, a), abs=1e-14)
    with pytest.raises(ValueError, match="constant"):
        matthews_corrcoef(np.ones(4), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="binary"):
        matthews_corrcoef([0, 1, 2], [0, 1, 1])
    with pytest.raises(ValueError, match="length"):
        matthews_corrcoef([0, 1, 1], [0, 1])


def _labels(sizes):
    t = np.repeat([1, 1, 0, 0], sizes)
    a = np.repeat([1, 0, 1, 0], sizes)
    return t, a


@pytest.mark.parametrize("target_mcc", [-0.3, 0.0, 0.3, 0.9])
def test_subsample_hits_target_mcc(target_mcc):
    t, a = _labels([2000, 500, 500, 2000])  # MCC 0.6
    res = subsample_to_mcc(t, a, target_mcc, random_state=0)
    assert isinstance(res, SubsampleResult)
    assert abs(res.mcc - target_mcc) <= 0.01
    assert abs(matthews_corrcoef(t[res.indices], a[res.indices]) - target_mcc) <= 0.01
    assert (res.sizes["selected"] <= res.sizes["available"]).all()
    assert len(np.unique(res.indices)) == res.n == res.sizes["selected"].sum()
    assert res.original_mcc == pytest.approx(0.6)
    assert "SubsampleResult(MCC" in repr(res)


def test_subsample_fixed_and_equal_size():
    t, a = _labels([2000, 500, 500, 2000])
    res = subsample_to_mcc(t, a, 0.2, size=2500, random_state=0)
    assert res.n == 2500 and abs(res.mcc - 0.2) <= 0.01
    runs = subsample_to_mcc(t, a, [0.2, 0.4], random_state=0)
    assert len({r.n for r in runs}) == 1
    assert all(abs(r.mcc - m) <= 0.01 for r, m in zip(runs, [0.2, 0.4]))
    # closest to the original sizes: the target already holds, nothing is dropped
    same = subsample_to_mcc(t, a, 0.6)
    assert same.n == 5000


def test_subsample_unreachable_and_bad_arguments():
    t, a = _labels([1000, 0, 0, 1000])  # MCC 1: no off-diagonal rows to add back
    with pytest.raises(ValueError, match="cannot reach MCC"):
        subsample_to_mcc(t, a, 0.5)
    t, a = _labels([100, 100, 100, 100])
    with pytest.raises(ValueError, match=r"mcc must be a number in \[-1, 1\]"):
        subsample_to_mcc(t, a, 1.5)
    with pytest.raises(ValueError, match="size must be"):
        subsample_to_mcc(t, a, 0.1, size=10_000)


# --------------------------------------------------------------------------- #
# without torch
# --------------------------------------------------------------------------- #
def test_import_without_torch_and_error_message():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('No module named torch (blocked)')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import biasamp, biasamp.attention as A, numpy as np\n"
        "assert A.attention_iou(np.ones((2, 2)), np.ones((2, 2))) == 1.0\n"
        "try:\n"
        "    A.gradcam(object(), None, None)\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert 'pip install "biasamp[torch]"' in out and "install PyTorch" in out
    assert "torch==" not in out  # the build environment's pin is no advice for a user
    assert "torch" not in subprocess.run(
        [sys.executable, "-c", "import biasamp, biasamp.attention, sys; print(sorted(sys.modules))"],
        capture_output=True, text=True, check=True,
    ).stdout.replace("'biasamp", "")  # importing biasamp never imports torch


# --------------------------------------------------------------------------- #
# torch: attention_iou on tensors
# --------------------------------------------------------------------------- #
def _torch():
    try:
        import torch
    except ImportError:  # not installed: the torch features are optional
        pytest.skip("torch is not installed")
    return torch


def test_torch_matches_numpy_and_keeps_type():
    torch = _torch()
    rng = np.random.default_rng(3)
    x, y = rng.random((6, 5, 5)), rng.random((6, 5, 5))
    x[2] = 0
    with pytest.warns(UndefinedPairWarning):
        ref = attention_iou(x, y)
    with pytest.warns(UndefinedPairWarning):
        out = attention_iou(torch.tensor(x), torch.tensor(y))
    assert torch.is_tensor(out) and out.dtype == torch.float64
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-13, equal_nan=True)
    single = attention_iou(torch.tensor(x[0], dtype=torch.float32), y[0])  # mixed input -> torch
    assert single.ndim == 0 and float(single) == pytest.approx(ref[0], rel=1e-6)
    with pytest.raises(ValueError, match="negative"):
        attention_iou(-torch.ones(2, 2), torch.ones(2, 2))


def test_torch_attention_iou_is_differentiable():
    torch = _torch()
    x = torch.rand(3, 4, 4, dtype=torch.float64, requires_grad=True)
    y = torch.rand(3, 4, 4, dtype=torch.float64)
    attention_iou(x, y).sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


# --------------------------------------------------------------------------- #
# torch: GradCAM
# --------------------------------------------------------------------------- #
def _small_cnn(torch, inplace=True, seed=0):
    nn = torch.nn
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
        nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(inplace=inplace),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3),
    )


def _min_max_ref(cam):
    f = cam.reshape(cam.shape[0], -1)
    lo, hi = f.min(1, keepdim=True)[0], f.max(1, keepdim=True)[0]
    return ((f - lo) / (hi - lo)).reshape(cam.shape)


def test_gradcam_equals_captum_layergradcam():
    torch = _torch()
    try:
        import captum.attr as captum_attr  # test-only dependency
    except ImportError:
        pytest.skip("captum is not installed")
    model = _small_cnn(torch).eval()
    x = torch.randn(6, 3, 8, 8)
    layer = model[3]
    from biasamp.attention import gradcam

    # BCE: |logit_k|, one target for all images and one per image
    for target in (1, torch.tensor([0, 1, 2, 2, 1, 0])):
        ours = gradcam(model, x, layer, target)
        ref = captum_attr.LayerGradCam(lambda z: model(z).abs(), layer).attribute(
            x, target=target if isinstance(target, int) else target.tolist(), relu_attributions=True
        )[:, 0]
        torch.testing.assert_close(ours, _min_max_ref(ref), rtol=1e-5, atol=1e-6)
    # softmax: the predicted class's logit
    ours = gradcam(model, x, layer, kind="softmax")
    pred = model(x).argmax(1)
    ref = captum_attr.LayerGradCam(model, layer).attribute(x, target=pred.tolist(), relu_attributions=True)[:, 0]
    torch.testing.assert_close(ours, _min_max_ref(ref), rtol=1e-5, atol=1e-6)


def test_gradcam_hooks_removed_no_gradient_leak_mode_restored_batched():
    torch = _torch()
    from biasamp.attention import GradCAM, gradcam

    model = _small_cnn(torch).train()
    layer = model[3]
    x = torch.randn(5, 3, 8, 8)
    bn_mean = model[1].running_mean.clone()
    maps = gradcam(model, x, layer, 2)
    assert maps.shape == (5, 8, 8) and not maps.requires_grad
    assert float(maps.amin()) >= 0 and float(maps.amax()) <= 1
    assert all(p.grad is None for p in model.parameters())
    assert not layer._forward_hooks and model.training
    torch.testing.assert_close(model[1].running_mean, bn_mean)  # eval mode inside: no BN update
    # batched == one image at a time
    per_image = torch.cat([gradcam(model, x[i : i + 1], layer, 2) for i in range(5)])
    torch.testing.assert_close(maps, per_image, rtol=1e-5, atol=1e-6)
    # hooks removed after an exception; the model is usable normally inside the block
    def use_then_fail() -> None:
        with GradCAM(model, layer) as cam:
            model(x).sum().backward()  # the hook is inactive outside a cam call
            assert all(p.grad is not None for p in model.parameters())
            cam(x, 7)

    with pytest.raises(ValueError, match="out of range"):
        use_then_fail()
    assert not layer._forward_hooks and model.training
    # two targets from one forward pass == two separate calls
    with GradCAM(model, layer) as cam:
        a, b = cam.maps(x, [0, 1])
        torch.testing.assert_close(a, cam(x, 0))
        torch.testing.assert_close(b, cam(x, 1))


def test_gradcam_argument_errors():
    torch = _torch()
    from biasamp.attention import GradCAM, gradcam

    model = _small_cnn(torch)
    x = torch.randn(2, 3, 8, 8)
    with pytest.raises(ValueError, match="target is required"):
        gradcam(model, x, model[3])
    with pytest.raises(ValueError, match="not a submodule"):
        gradcam(model, x, torch.nn.Conv2d(1, 1, 1), 0)
    with pytest.raises(ValueError, match="kind"):
        gradcam(model, x, model[3], 0, kind="sigmoid")
    with pytest.raises(RuntimeError, match="context manager"):
        GradCAM(model, model[3])(x, 0)
    with pytest.raises(ValueError, match="one per image"):
        gradcam(model, x, model[3], [0, 1, 2])


class _TwoRegionNet:
    """Hand-set weights: channel 0 marks a 'foreground', channel 1 a 'background' region.

    conv: identity 1x1 on the two input channels (the GradCAM layer), then
    global average pooling and ``logit = w_fg * mean(A_0) + w_bg * mean(A_1)``.
    ∂|logit|/∂A_c = sign(logit) w_c / 64, so the GradCAM map is
    ``ReLU(sign(logit) (w_fg A_0 + w_bg A_1))`` -- analytic.
    """

    @staticmethod
    def build(torch, w_fg, w_bg):
        nn = torch.nn
        conv = nn.Conv2d(2, 2, 1, bias=False)
        fc = nn.Linear(2, 1, bias=False)
        with torch.no_grad():
            conv.weight.copy_(torch.eye(2).reshape(2, 2, 1, 1))
            fc.weight.copy_(torch.tensor([[w_fg, w_bg]]))
        return nn.Sequential(conv, nn.AdaptiveAvgPool2d(1), nn.Flatten(), fc)

    @staticmethod
    def data(torch, n=4):
        fg = torch.zeros(8, 8)
        fg[1:3, 1:3] = 1  # 4 cells
        bg = torch.zeros(8, 8)
        bg[5:7, 1:7] = 1  # 12 cells; the rest is 0 in both channels
        images = torch.stack([fg, bg]).expand(n, 2, 8, 8).clone()
        return images, fg, bg


def _analytic(w_fg, w_bg, n_fg=4, n_bg=12):
    """Mask score of the map (w_fg on fg, w_bg on bg) against the fg mask, by hand."""
    s = w_fg * n_fg + w_bg * n_bg
    xy, xx, yy = w_fg / s, (w_fg**2 * n_fg + w_bg**2 * n_bg) / s**2, 1 / n_fg
    return 4 * xy / (xx + yy + 2 * xy)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_mask_score_analytic_tiny_cnn(sign):
    torch = _torch()
    from biasamp.attention import gradcam, mask_score

    images, fg, bg = _TwoRegionNet.data(torch)
    model = _TwoRegionNet.build(torch, sign * 2.0, sign * 1.0)
    # |logit| makes the map the same for positive and negative logits (App. A): fg 1, bg 0.5
    maps = gradcam(model, images, model[0], 0)
    torch.testing.assert_close(maps[0], fg + 0.5 * bg)
    labels = torch.tensor([[1, 1], [1, 0], [0, 1], [0, 0]])
    masks = torch.stack([fg, bg]).expand(4, 2, 8, 8)  # (B, M, H, W): channel 0 fg, 1 bg
    loader = [(images, labels, masks)]
    res = mask_score(model, loader, 0, 0, model[0], protected=1, progress=False)
    assert res.value == pytest.approx(_analytic(1.0, 0.5), rel=1e-6)  # 0.4 / 0.52
    assert res.value == pytest.approx(0.4 / 0.52, rel=1e-6)
    assert list(res.subgroups["group"]) == ["all", "T=1,A=1", "T=1,A=0", "T=0,A=1", "T=0,A=0"]
    # a model that looks only at the foreground: 1 on the fg mask, 0 on the background mask
    fg_only = _TwoRegionNet.build(torch, sign * 2.0, 0.0)
    assert mask_score(fg_only, loader, 0, 0, fg_only[0], progress=False).value == pytest.approx(1.0, abs=1e-6)
    assert mask_score(fg_only, loader, 0, 1, fg_only[0], progress=False).value == pytest.approx(0.0, abs=1e-6)
    # the union of both masks (channels [0, 1]) and a callable mask
    both = mask_score(fg_only, loader, 0, [0, 1], fg_only[0], progress=False).value
    assert both == pytest.approx(4 * (1 / 16) / (1 / 4 + 1 / 16 + 2 / 16), rel=1e-6)
    called = mask_score(fg_only, [(images, labels)], 0, lambda im, lab: im[:, 0], fg_only[0], progress=False)
    assert called.value == pytest.approx(1.0, abs=1e-6)


def test_mask_score_resizing_options():
    torch = _torch()
    from biasamp.attention import mask_score

    images, fg, _ = _TwoRegionNet.data(torch)
    model = _TwoRegionNet.build(torch, 2.0, 0.0)
    big = fg.repeat_interleave(4, 0).repeat_interleave(4, 1)  # 32x32 mask of the same region
    loader = [(images, torch.zeros(4, 1), big.expand(4, 32, 32))]
    down = mask_score(model, loader, 0, None, model[0], progress=False).value
    up = mask_score(model, loader, 0, None, model[0], resize="attention", progress=False).value
    assert 0.75 < down < 1.0 and 0.75 < up < 1.0  # bilinear blur at the region's edge only
    plain = mask_score(model, loader, 0, None, model[0], antialias=False, progress=False).value
    assert plain == pytest.approx(1.0, abs=1e-6)  # 4x down with align_corners=False samples cell centres


def test_mask_score_resize_attention_applies_the_second_min_max():
    """resize="attention" is the authors' pipeline: upsample the map, min-max it again, then score."""
    torch = _torch()
    from biasamp.attention import mask_score

    # channel 0 is 1 everywhere but the cell (2, 2): the GradCAM map (w_fg = 2) is that image, min 0, max 1
    a0 = torch.ones(8, 8)
    a0[2, 2] = 0
    images = torch.stack([a0, torch.zeros(8, 8)]).expand(4, 2, 8, 8).clone()
    model = _TwoRegionNet.build(torch, 2.0, 0.0)
    mask = torch.zeros(16, 16)
    mask[:8, :8] = 1  # the upper-left quadrant, holding the upsampled cell (2, 2)
    loader = [(images, torch.zeros(4, 1), mask.expand(4, 16, 16))]
    got = mask_score(model, loader, 0, None, model[0], resize="attention", progress=False).value
    # by hand: 8 -> 16 bilinear (align_corners=False) spreads the cell over output pixels 3..6 with weights
    # 1/4, 3/4, 3/4, 1/4 per axis, so the upsampled map is 1 - outer(u, u) with minimum 1 - 9/16 > 0; the
    # second min-max gives 1 - outer(u, u) / (9/16)
    u = np.zeros(16)
    u[3:7] = [0.25, 0.75, 0.75, 0.25]
    once = 1 - np.outer(u, u)
    twice = (once - once.min()) / (once.max() - once.min())
    assert once.min() == pytest.approx(7 / 16) and twice.min() == 0.0

    def attn_iou(x, y):
        x, y = x / x.sum(), y / y.sum()
        return float((x * y).sum() / (((x + y) / 2) ** 2).sum())

    m = mask.numpy().astype(float)
    assert got == pytest.approx(attn_iou(twice, m), rel=1e-6)
    assert abs(attn_iou(once, m) - attn_iou(twice, m)) > 1e-3  # the second min-max matters here


def test_all_zero_attention_is_undefined_and_counted():
    torch = _torch()
    from biasamp.attention import mask_score

    images, fg, _ = _TwoRegionNet.data(torch)
    model = _TwoRegionNet.build(torch, 2.0, 0.0)
    images[1] = 0  # no activation at all: GradCAM map all zero
    loader = [(images, torch.tensor([1, 1, 0, 0]), fg.expand(4, 8, 8))]
    with pytest.warns(UndefinedPairWarning, match="1 of 4"):
        res = mask_score(model, loader, 0, None, model[0], progress=False)
    assert res.n_undefined == 1 and np.isnan(res.scores[1]) and res.value == pytest.approx(1.0, abs=1e-6)


def test_heatmap_score_two_outputs():
    torch = _torch()
    from biasamp.attention import heatmap_score

    images, _, _ = _TwoRegionNet.data(torch)
    nn = torch.nn
    conv = nn.Conv2d(2, 2, 1, bias=False)
    fc = nn.Linear(2, 3, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.eye(2).reshape(2, 2, 1, 1))
        # output 0 looks at fg, output 1 at fg too (negative logit), output 2 at bg
        fc.weight.copy_(torch.tensor([[1.0, 0.0], [-3.0, 0.0], [0.0, 1.0]]))
    model = nn.Sequential(conv, nn.AdaptiveAvgPool2d(1), nn.Flatten(), fc)
    labels = torch.tensor([[1, 1, 0], [1, 0, 0], [0, 1, 1], [0, 0, 1]])
    loader = [(images[:2], labels[:2]), (images[2:], labels[2:])]  # two batches
    same = heatmap_score(model, loader, 0, 1, conv, progress=False)
    assert same.value == pytest.approx(1.0, abs=1e-6) and same.kind == "heatmap"
    assert len(same.scores) == 4 and (same.subgroups["n"][1:] == 1).all()
    apart = heatmap_score(model, loader, 0, 2, conv, progress=False)
    assert apart.value == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="binary"):
        heatmap_score(model, loader, 0, 1, conv, kind="softmax", progress=False)
    with pytest.raises(TypeError, match="tuple"):
        heatmap_score(model, [images], 0, 1, conv, progress=False)


def test_softmax_mask_score_uses_predicted_class():
    torch = _torch()
    from biasamp.attention import mask_score

    images, fg, bg = _TwoRegionNet.data(torch)
    nn = torch.nn
    conv = nn.Conv2d(2, 2, 1, bias=False)
    fc = nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.eye(2).reshape(2, 2, 1, 1))
        fc.weight.copy_(torch.tensor([[5.0, 0.0], [0.0, 1.0]]))  # class 0 wins, from the fg
    model = nn.Sequential(conv, nn.AdaptiveAvgPool2d(1), nn.Flatten(), fc)
    loader = [(images, torch.tensor([[0, 1]] * 4), torch.stack([fg, bg]).expand(4, 2, 8, 8))]
    res = mask_score(model, loader, 0, 0, conv, protected=1, kind="softmax", progress=False)
    assert res.value == pytest.approx(1.0, abs=1e-6)
    assert list(res.subgroups["group"]) == ["all", "T=0,A=1"]


def test_no_warnings_on_clean_run():
    torch = _torch()
    from biasamp.attention import mask_score

    images, fg, _ = _TwoRegionNet.data(torch)
    model = _TwoRegionNet.build(torch, 1.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mask_score(model, [(images, torch.ones(4), fg.expand(4, 8, 8))], 0, None, model[0], progress=False)


# --------------------------------------------------------------------------- #
# option (c): the heatmap score at the image's resolution (the authors' code)
# --------------------------------------------------------------------------- #
def test_heatmap_score_at_image_resolution_by_hand():
    """A 2x2 GradCAM layer on 8x8 images: fg map [[1,0],[0,0]], bg map [[0,0],[1,1]].

    At the layer's resolution the maps are disjoint (score 0). Upsampled x4 with bilinear
    interpolation (align_corners=False) a row/column of cells becomes the weights
    u = (1, 1, 7/8, 5/8, 3/8, 1/8, 0, 0) on cell 0 and v = 1 - u on cell 1 (pixel centres
    (i + 1/2)/4 - 1/2, clamped to [0, 1]); fg = u u^T, bg = v 1^T, both already spanning [0, 1].
    """
    torch = _torch()
    from biasamp.attention import attention_iou, heatmap_score

    nn = torch.nn
    conv = nn.Conv2d(2, 2, 1, bias=False)
    fc = nn.Linear(2, 3, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.eye(2).reshape(2, 2, 1, 1))
        fc.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [-2.0, 0.0]]))  # fg, bg, fg (negative logit)
    model = nn.Sequential(nn.AvgPool2d(4), conv, nn.AdaptiveAvgPool2d(1), nn.Flatten(), fc)
    images, _, _ = _TwoRegionNet.data(torch)  # fg in the top-left 4x4 block, bg in the bottom half
    labels = torch.tensor([[1, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 0]])
    loader = [(images, labels)]
    at_map = heatmap_score(model, loader, 0, 1, conv, progress=False)
    assert at_map.value == pytest.approx(0.0, abs=1e-7)
    u = np.array([1, 1, 7 / 8, 5 / 8, 3 / 8, 1 / 8, 0, 0])
    v = 1 - u
    expected = attention_iou(np.outer(u, u), np.outer(v, np.ones(8)))
    # by hand: sums 16 and 32, <X, Y> = (u.v)(u.1) = 0.6875 * 4, |X|^2 = (u.u)^2, |Y|^2 = 8 (v.v)
    xy, xx, yy = 0.6875 * 4 / (16 * 32), 3.3125**2 / 16**2, 8 * 3.3125 / 32**2
    assert expected == pytest.approx(4 * xy / (xx + yy + 2 * xy), rel=1e-12)
    at_image = heatmap_score(model, loader, 0, 1, conv, progress=False, resolution="image")
    assert at_image.value == pytest.approx(expected, rel=1e-6)
    assert at_image.value == pytest.approx(0.2703, abs=1e-4)
    # the same map twice stays 1 at either resolution
    same = heatmap_score(model, loader, 0, 2, conv, progress=False, resolution="image")
    assert same.value == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="resolution"):
        heatmap_score(model, loader, 0, 1, conv, progress=False, resolution="pixels")


def test_image_resolution_renormalises_an_interior_minimum():
    """Upsampling raises an interior minimum; the second min-max brings it back to 0 (by hand)."""
    torch = _torch()
    from biasamp.attention._gradcam import _at_image_resolution

    m = torch.ones(1, 3, 3)
    m[0, 1, 1] = 0.0  # zero only in the middle cell
    up = _at_image_resolution(m, (6, 6))
    # x2 bilinear: the middle cell reaches pixels 1..4 with weights .25, .75, .75, .25 per axis, so the
    # upsampled minimum is 1 - .75 * .75 = 0.4375; renormalised: (x - 0.4375) / 0.5625
    w = np.array([0, 0.25, 0.75, 0.75, 0.25, 0])
    raw = 1 - np.outer(w, w)
    np.testing.assert_allclose(up[0].numpy(), (raw - 0.4375) / 0.5625, atol=1e-6)


# reliability (issue 13)
# --------------------------------------------------------------------------- #
def test_mask_score_without_batch_masks_names_masks():
    torch = _torch()
    from biasamp import mask_score

    model = _small_cnn(torch).eval()
    loader = [(torch.randn(2, 3, 8, 8), torch.tensor([[1, 0], [0, 1]]))]  # no masks in the batches
    with pytest.raises(ValueError, match="masks=0 selects channels .* without masks"):
        mask_score(model, loader, 0, 0, layer=model[0], progress=False)


def test_attention_inputs_name_their_argument():
    with pytest.raises(ValueError, match="x and y must not be empty"):
        attention_iou(np.zeros((0, 0)), np.zeros((0, 0)))
    with pytest.raises(ValueError, match="x could not be converted"):
        attention_iou([[1.0, 2.0], [3.0]], [[1.0, 2.0], [3.0, 4.0]])
    # subgroup labels may not be missing: no "T=nan" subgroup
    with pytest.raises(ValueError, match="task contains NaN"):
        summarize_attention_scores([0.5, 0.7], task=[np.nan, 1])
    with pytest.raises(TypeError, match="scores must hold numbers"):
        summarize_attention_scores(["a", "b"])


def test_constant_indicator_column_has_no_mcc():
    # the 1-D form raised for a constant label; the N x 1 indicator form returned NaN
    with pytest.raises(ValueError, match="task is constant"):
        matthews_corrcoef(np.array([[1], [1], [1]]), np.array([[0], [1], [0]]))
    assert matthews_corrcoef(np.array([[1], [0], [1], [0]]), [1, 0, 1, 0]) == pytest.approx(1.0)


def test_mcc_of_mixed_type_labels_does_not_depend_on_row_order():
    # classes (1, "a"): "a" is the positive class whatever the order of the rows
    a = matthews_corrcoef(np.array(["a", 1, "a", 1], dtype=object), [1, 0, 1, 0])
    b = matthews_corrcoef(np.array([1, "a", 1, "a"], dtype=object), [0, 1, 0, 1])
    assert a == b == pytest.approx(1.0)


@pytest.mark.parametrize("seed, kind", [(1.5, TypeError), (-1, ValueError), ("seed", TypeError)])
def test_subsample_seed_is_checked_before_any_work(seed, kind):
    t = np.array([0, 1, 0, 1, 1, 0] * 20)
    a = np.array([0, 1, 1, 1, 0, 0] * 20)
    with pytest.raises(kind, match="random_state"):
        subsample_to_mcc(t, a, 0.1, random_state=seed)
