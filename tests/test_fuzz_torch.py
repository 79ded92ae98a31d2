"""The fuzz of ``tests/test_fuzz.py`` with torch: tensor inputs everywhere, and the GradCAM family.

* every case of ``tests/_fuzz_cases.py`` given torch tensors (int64, uint8,
  bool, float16, bfloat16, float32 with ``requires_grad``, non-contiguous,
  transposed) gives exactly its plain numpy result;
* ``gradcam``, ``GradCAM``, ``mask_score``, ``heatmap_score`` and
  ``attention_iou`` on torch tensors, with a tiny hand-set model: valid inputs
  in unusual forms give the plain result, invalid ones (bad images, batches,
  loaders, masks, label columns, layers, targets) raise a ``ValueError`` /
  ``TypeError`` naming the argument, and no score is an unflagged NaN.

Skipped cleanly where torch is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import biasamp

from . import _fuzz as fz
from . import test_fuzz as base
from ._fuzz_cases import CASES, IND, L
from .test_fuzz import _assert_named_error, _known, _nasty_result, _plain, fuzz_settings

# --------------------------------------------------------------------------- #
# every case with tensors
# --------------------------------------------------------------------------- #
TENSOR_CASES = [c for c in CASES if fz.nasty_kinds(c.arrays(fz.fixed_data()), fz.TORCH_NASTY)]


@pytest.mark.parametrize("case", TENSOR_CASES, ids=repr)
def test_tensor_inputs_give_the_plain_result(case: fz.Case) -> None:
    @fuzz_settings(max(2, case.examples // 2))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        d = data.draw(case.data())
        arrays, status, plain = _plain(case, d)
        kinds = [(a, k) for a, k in fz.nasty_kinds(arrays, fz.TORCH_NASTY) if not _known(case, "nasty", a, k)]
        if not kinds:
            return
        arg, kind = data.draw(st.sampled_from(kinds), label="argument, kind")
        everywhere = data.draw(st.booleans(), label="every argument of that kind")
        table = fz.TORCH_NASTY
        names = [n for n, a in arrays.items() if a.kind == arrays[arg].kind and a.kind != "custom"
                 and kind in table.get(a.kind, {}) and table[a.kind][kind][0](np.asarray(a.value))
                 and not _known(case, "nasty", n, kind)]
        names = names if everywhere and names else [arg]
        values = fz.plain_values(case, arrays)
        for name in names:
            values[name] = fz.make_nasty(arrays[name], kind, 0, table)
        result = _nasty_result(case, values, status, f"{kind} for {names}")
        if status == "raised":
            return
        # a tensor in gives a tensor out (attention_iou), computed in float32 at best
        rtol = 1e-5 if isinstance(result, torch.Tensor) else 1e-9
        assert fz.same_numbers(fz.fingerprint(plain), fz.fingerprint(result), rtol=rtol), (
            f"{case.name}: {kind} for {names}: result differs from the plain input's")

    check()


# --------------------------------------------------------------------------- #
# the GradCAM family, on a tiny hand-set model
# --------------------------------------------------------------------------- #
def _model():
    """conv 1x1 identity on 2 channels -> global mean -> 3 logits (fg, bg, -fg): analytic GradCAM maps."""
    nn = torch.nn
    conv = nn.Conv2d(2, 2, 1, bias=False)
    fc = nn.Linear(2, 3, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.eye(2).reshape(2, 2, 1, 1))
        fc.weight.copy_(torch.tensor([[1.0, 0.2], [0.1, 1.0], [-2.0, 0.3]]))
    return nn.Sequential(conv, nn.AdaptiveAvgPool2d(1), nn.Flatten(), fc)


_MODEL = _model()
_LAYER = _MODEL[0]
_FOREIGN = torch.nn.Conv2d(2, 2, 1)


def _images(d: fz.Data) -> torch.Tensor:
    g = torch.Generator().manual_seed(d.seed % 2**31)
    return torch.rand(4, 2, 4, 4, generator=g)


def _labels(d: fz.Data) -> torch.Tensor:
    return torch.as_tensor(np.column_stack([d.task_multi[:4], d.attr[:4] % 2])[:, :3])


def _masks(d: fz.Data) -> torch.Tensor:
    m = (d.scores[:4, :1].repeat(16, 1).reshape(4, 4, 4) > 0.5).astype(np.float32)
    m[:, 0, 0] = 1  # never all zero (an all-zero mask makes the image's score undefined)
    return torch.as_tensor(m)


def _with_nan(x: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    x.view(-1)[0] = float("nan")
    return x


def _images_arg(imgs) -> fz.Arg:
    return fz.Arg(imgs, "custom", rows=None, custom_nasty={
        "requires_grad": imgs.clone().requires_grad_(True),
        "channels_last": imgs.contiguous(memory_format=torch.channels_last),
        "non-contiguous": imgs.transpose(2, 3).contiguous().transpose(2, 3),
    }, custom_invalid={
        "None": None, "str": "abc", "3-D": imgs[0], "empty": imgs[:0], "nan": _with_nan(imgs),
        "wrong-channels": imgs[:, :1], "complex": imgs.to(torch.complex64), "list": imgs.tolist(),
    })


def _target_arg(valid=0) -> fz.Arg:
    return fz.Arg(valid, "custom", rows=None, custom_nasty={"numpy": np.int64(valid), "tensor": torch.tensor(valid)},
                  custom_invalid={"out-of-range": 7, "negative": -5, "str": "a", "fraction": 1.5,
                                  "wrong-length": [0, 1, 2, 0, 1, 2]})


def _layer_arg() -> fz.Arg:
    return fz.Arg(_LAYER, "custom", rows=None, custom_invalid={"foreign": _FOREIGN, "str": "0", "None": None})


def _gradcam_arrays(d: fz.Data) -> dict:
    return {"images": _images_arg(_images(d)), "target": _target_arg(), "layer": _layer_arg()}


def _loader_arg(d: fz.Data, with_masks: bool) -> fz.Arg:
    imgs, labels, masks = _images(d), _labels(d), _masks(d)
    batch = (imgs, labels, masks) if with_masks else (imgs, labels)
    half = [tuple(t[:2] for t in batch), tuple(t[2:] for t in batch)]
    nasty = {"two-batches": half, "list-batches": [list(batch)], "generator": (b for b in [batch]),
             "numpy-labels": [(imgs, labels.numpy(), *batch[2:])], "float-labels": [(imgs, labels.float(),
                                                                                       *batch[2:])]}
    invalid = {"None": None, "empty": [], "str": "abc", "not-a-tuple": [imgs], "images-only": [(imgs,)],
               "labels-short": [(imgs, labels[:3], *batch[2:])], "labels-nan": [(imgs, labels.float().masked_fill(
                   labels == 1, float("nan")), *batch[2:])], "labels-3-D": [(imgs, labels[:, :, None], *batch[2:])]}
    if with_masks:
        nasty.update({"masks-0-255": [(imgs, labels, masks * 255)], "masks-uint8": [(imgs, labels, masks.to(
            torch.uint8))], "masks-numpy": [(imgs, labels, masks.numpy())], "masks-channel": [(imgs, labels, masks[:,
                                                                                                              None])]})
        invalid.update({"no-masks": [(imgs, labels)], "masks-nan": [(imgs, labels, _with_nan(masks))],
                        "masks-negative": [(imgs, labels, masks - 1)], "masks-short": [(imgs, labels, masks[:3])],
                        "masks-2-D": [(imgs, labels, masks[0])]})
    return fz.Arg(half, "custom", rows=None, custom_nasty=nasty, custom_invalid=invalid)


def _mask_score_arrays(d: fz.Data) -> dict:
    return {"loader": _loader_arg(d, True), "target": _target_arg(0), "layer": _layer_arg(),
            "protected": fz.Arg(2, "custom", rows=None, custom_nasty={"numpy": np.int64(2)},
                                custom_invalid={"out-of-range": 9, "str": "a", "fraction": 0.5}),
            "masks": fz.Arg(None, "custom", rows=None, custom_invalid={"channel-of-2-D-masks": 3, "str": "a"})}


def _heatmap_arrays(d: fz.Data) -> dict:
    return {"loader": _loader_arg(d, False), "target": _target_arg(0), "layer": _layer_arg(),
            "protected": fz.Arg(1, "custom", rows=None, custom_nasty={"numpy": np.int64(1)},
                                custom_invalid={"out-of-range": 9, "str": "a", "fraction": 0.5, "None": None})}


def _iou_arrays(d: fz.Data) -> dict:
    x, y = torch.as_tensor(d.scores[:4].reshape(2, 2, -1)), torch.as_tensor(d.scores[4:8].reshape(2, 2, -1))
    return {"x": fz.Arg(x, "custom", rows=None, custom_nasty={
        "requires_grad": x.clone().requires_grad_(True), "float32": x.float(), "numpy": x.numpy(),
        "non-contiguous": x.transpose(1, 2).contiguous().transpose(1, 2)}, custom_invalid={
        "nan": _with_nan(x), "negative": x - 2, "short": x[:1], "None": None, "complex": x.to(torch.complex64),
        "empty": x[:0]}), "y": fz.Arg(y, "custom", rows=None)}


def _iou_allow_nan(result, values) -> bool:
    x, y = (np.asarray(torch.as_tensor(values[k]).detach().double()).reshape(2, -1) for k in ("x", "y"))
    undefined = (x.sum(axis=1) == 0) | (y.sum(axis=1) == 0)
    r = torch.as_tensor(result).detach().double().numpy()
    return bool(np.array_equal(np.isnan(r), undefined) and np.isfinite(r[~undefined]).all())


def _gradcam_context(images, target, layer):
    with biasamp.GradCAM(_MODEL, layer) as cam:
        return cam(images, target)


def _gradcam_maps(images, target, layer):
    with biasamp.GradCAM(_MODEL, layer) as cam:
        return cam.maps(images, [target, 1])


_BATCH = {"loader": ("batch",)}  # errors about one batch's images, labels or masks say "... of a batch"

GRADCAM_CASES = [
    fz.Case("gradcam", ("gradcam",), _gradcam_arrays,
            lambda images, target, layer: biasamp.gradcam(_MODEL, images, layer, target), order=False, examples=6),
    fz.Case("GradCAM.__call__", ("GradCAM",), _gradcam_arrays, _gradcam_context, order=False, examples=4),
    fz.Case("GradCAM.maps", ("GradCAM",), _gradcam_arrays, _gradcam_maps, order=False, examples=4),
    fz.Case("mask_score", ("mask_score",), _mask_score_arrays,
            lambda loader, target, masks, layer, protected: biasamp.mask_score(
                _MODEL, loader, target, masks, layer, protected=protected, progress=False), order=False,
            examples=8, names=_BATCH),
    fz.Case("heatmap_score", ("heatmap_score",), _heatmap_arrays,
            lambda loader, target, protected, layer: biasamp.heatmap_score(
                _MODEL, loader, target, protected, layer, progress=False), order=False, examples=8,
            names=_BATCH),
    fz.Case("attention_iou[torch]", ("attention_iou",), _iou_arrays, lambda x, y: biasamp.attention_iou(x, y),
            order=False, allow_nonfinite=_iou_allow_nan, examples=6),
]


@pytest.mark.parametrize("case", GRADCAM_CASES, ids=repr)
def test_gradcam_family_valid_forms_give_the_plain_result(case: fz.Case) -> None:
    @fuzz_settings(case.examples)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        d = data.draw(case.data())
        arrays, status, plain = _plain(case, d)
        assert status == "ok", f"{case.name}: the plain input raised {plain}"
        kinds = [(a, k) for a, k in fz.nasty_kinds(arrays) if not _known(case, "nasty", a, k)]
        kinds += [(n, k) for n, a in arrays.items() if a.kind == "custom" for k in a.custom_nasty
                  if k.startswith("torch") and not _known(case, "nasty", n, k)]
        if not kinds:
            return
        arg, kind = data.draw(st.sampled_from(kinds), label="argument, kind")
        values = fz.plain_values(case, arrays)
        values[arg] = fz.make_nasty(arrays[arg], kind, 0)
        result = _nasty_result(case, values, status, f"{arg} {kind}")
        assert fz.same_numbers(fz.fingerprint(plain), fz.fingerprint(result), rtol=1e-5), (
            f"{case.name}: {arg} {kind}: result differs from the plain input's")

    check()


@pytest.mark.parametrize("case", GRADCAM_CASES, ids=repr)
def test_gradcam_family_invalid_inputs_raise_named_errors(case: fz.Case) -> None:
    @fuzz_settings(case.examples + 6)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        d = data.draw(case.data())
        arrays = case.arrays(d)
        kinds = [(a, k) for a, k in fz.invalid_kinds(case, arrays) if not _known(case, "invalid", a, k)]
        arg, kind = data.draw(st.sampled_from(kinds), label="argument, kind")
        values = fz.plain_values(case, arrays)
        values[arg] = fz.make_invalid(arrays[arg], kind, 0)
        _assert_named_error(case, values, arg, f"{arg} {kind}")

    check()


@pytest.mark.parametrize("case", GRADCAM_CASES, ids=repr)
def test_gradcam_family_every_input_kind_on_typical_data(case: fz.Case) -> None:
    """Each valid form and each invalid input, for each argument, once."""
    d = fz.fixed_data()
    arrays, status, plain = _plain(case, d)
    assert status == "ok", plain
    for arg, a in arrays.items():
        for kind in a.custom_nasty:
            values = fz.plain_values(case, arrays)
            values[arg] = fz.make_nasty(a, kind, 0)
            result = _nasty_result(case, values, status, f"{arg} {kind}")
            assert fz.same_numbers(fz.fingerprint(plain), fz.fingerprint(result), rtol=1e-5), (
                f"{case.name}: {arg} {kind}: result differs from the plain input's")
    for arg, kind in fz.invalid_kinds(case, arrays):
        if not _known(case, "invalid", arg, kind):
            values = fz.plain_values(case, arrays)
            values[arg] = fz.make_invalid(arrays[arg], kind, 0)
            _assert_named_error(case, values, arg, f"{arg} {kind}")


# --------------------------------------------------------------------------- #
# biasamp.torchmetrics: update() of every metric class, with every input kind
# --------------------------------------------------------------------------- #
def _tm():
    return pytest.importorskip("biasamp.torchmetrics", exc_type=ImportError)


def _tm_directional(attr, task, attr_pred, task_pred, ka, kt):
    m = _tm().BiasAmpDirectional(list(range(ka)), list(range(kt)))
    m.update(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    return m.result()


def _tm_mals(attr_train, task_train, attr_pred, task_pred, ka, kt):
    m = _tm().BiasAmpMALS(list(range(ka)), list(range(kt)))
    m.update_train(attr_train, task_train)
    m.update(attr_pred=attr_pred, task_pred=task_pred)
    return m.result()


def _tm_multi(attr, task, attr_pred, task_pred, ka, kt):
    m = _tm().MultiBiasAmp(list(range(ka)), list(range(kt)), combinations=[(j,) for j in range(kt)],
                           binary_task="both")  # indicator columns: every one counted
    m.update(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    return m.result()


def _tm_fairness(y_true, y_pred, sensitive_features, ka, kt):
    m = _tm().GroupFairness(list(range(kt)), list(range(ka)))
    m.update(y_true, y_pred, sensitive_features=sensitive_features)
    return m.result()


def _consts(d: fz.Data) -> dict:
    return {"ka": fz.Arg(d.ka, "custom", rows=None), "kt": fz.Arg(d.kt, "custom", rows=None)}


_TRAIN = {"attr_train": ("attr",), "task_train": ("task",)}  # update_train(attr, task)

TORCHMETRICS_CASES = [
    fz.Case("torchmetrics.BiasAmpDirectional.update", ("torchmetrics.BiasAmpDirectional",), lambda d: {
        "attr": L(d.attr), "task": L(d.task), "attr_pred": L(d.attr_pred, pred=True, required=False),
        "task_pred": L(d.task_pred, pred=True, required=False), **_consts(d)}, _tm_directional, examples=6),
    fz.Case("torchmetrics.BiasAmpMALS.update", ("torchmetrics.BiasAmpMALS",), lambda d: {
        "attr_train": L(d.attr_train, rows="train"), "task_train": L(d.task_train, rows="train"),
        "attr_pred": L(d.attr_pred, pred=True), "task_pred": L(d.task_pred, pred=True), **_consts(d)}, _tm_mals,
        examples=6, names=_TRAIN),
    fz.Case("torchmetrics.MultiBiasAmp.update", ("torchmetrics.MultiBiasAmp",), lambda d: {
        "attr": L(d.attr), "task": IND(d.task_multi), "attr_pred": L(d.attr_pred, pred=True, required=False),
        "task_pred": IND(d.task_multi_pred, pred=True, required=False), **_consts(d)}, _tm_multi, examples=6),
    fz.Case("torchmetrics.GroupFairness.update", ("torchmetrics.GroupFairness",), lambda d: {
        "y_true": L(d.task), "y_pred": L(d.task_pred, pred=True),
        "sensitive_features": L(d.attr, invalid=tuple(k for k in fz.INVALID["labels"] if k != "dict")),
        **_consts(d)}, _tm_fairness, examples=6),
]


@pytest.mark.parametrize("case", TORCHMETRICS_CASES, ids=repr)
def test_torchmetrics_every_input_kind(case: fz.Case) -> None:
    _tm()
    base.test_every_input_kind_on_typical_data(case)
    test_tensor_inputs_give_the_plain_result(case)


@pytest.mark.parametrize("case", TORCHMETRICS_CASES, ids=repr)
def test_torchmetrics_fuzz(case: fz.Case) -> None:
    _tm()
    base.test_nasty_inputs_give_the_plain_result(case)
    base.test_invalid_inputs_raise_named_errors(case)
    base.test_invariances(case)
