"""GradCAM with hooks and the mask/heatmap scores for PyTorch models.

torch is imported lazily, inside the functions: importing this module (and
``biasamp``) works without torch; calling anything here without torch raises an
``ImportError`` that names the extra to install.

How the attention map is computed (Selvaraju et al.; Serianni et al. §3.1):
a forward hook on the chosen layer captures its output ``A`` (shape
``(B, C, h, w)``); the model's output gives one scalar per image (``|logit_k|``
for models trained with binary cross-entropy, the logit of the predicted or a
chosen class for softmax models); ``torch.autograd.grad`` gives ``∂score/∂A``;
the channel weights are its spatial mean, the map is
``ReLU(Σ_c weight_c · A_c)``, min-max normalised per image.

Why ``autograd.grad`` on a *detached* copy of the activation instead of a
tensor backward hook plus ``.backward()``: the hook replaces the layer output by
``A' = A.detach().requires_grad_()`` (and hands the rest of the network a
clone of it, so in-place operations downstream are harmless); the gradient is
then taken with respect to ``A'`` only, so (a) no parameter's ``.grad`` is
touched (no gradient leaks into a training loop), (b) the part of the network
before the layer is run without building a graph (cheaper), and (c) models
whose parameters are frozen work too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["GradCAM", "gradcam", "heatmap_score", "mask_score"]

_INSTALL_HINT = (
    'install PyTorch (https://pytorch.org/get-started; on a machine without CUDA, its CPU build) '
    'or pip install "biasamp[torch]"'
)
_KINDS = ("bce", "softmax")


def _torch():
    """Import torch or raise an ImportError that says how to install it."""
    try:
        import torch
    except ImportError:  # pragma: no cover - exercised by the no-torch test via monkeypatch
        raise ImportError(f"this biasamp feature needs PyTorch: {_INSTALL_HINT}") from None
    return torch


def _check_kind(kind: str) -> str:
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    return kind


def _min_max(cam: Any) -> Any:
    """Min-max normalise each map of a ``(B, ...)`` tensor; constant maps become all zero."""
    flat = cam.reshape(cam.shape[0], -1)
    lo = flat.amin(dim=1, keepdim=True)
    span = flat.amax(dim=1, keepdim=True) - lo
    safe = span.masked_fill(span == 0, 1.0)
    return ((flat - lo) / safe).masked_fill(span == 0, 0.0).reshape(cam.shape)


class GradCAM:
    """GradCAM attention maps of one layer of a PyTorch model, as a context manager.

    The forward hook is registered on ``__enter__`` and always removed on
    ``__exit__`` (also when an exception is raised); outside a call the hook
    does nothing, so the model can be used normally inside the ``with`` block.
    The model is put in eval mode inside the block (BatchNorm/Dropout must
    not change the maps or the running statistics) and its mode restored on
    exit.

    .. math::

        \\alpha_c = \\frac{1}{hw}\\sum_{u,v} \\frac{\\partial s}{\\partial A_{c,u,v}},\\qquad
        M = \\operatorname{minmax}\\bigl(\\operatorname{ReLU}(\\textstyle\\sum_c \\alpha_c A_c)\\bigr),

    with the score :math:`s` = ``|logit_k|`` for ``kind="bce"`` (Serianni et
    al. App. A: features for either prediction are attended) and the logit of
    the predicted class (or a given class) for ``kind="softmax"``.

    Parameters
    ----------
    model : torch.nn.Module
        Any module whose forward returns a logits tensor of shape ``(B, K)``
        or ``(B,)``.
    layer : torch.nn.Module
        A submodule of ``model`` (usually the last convolutional block) whose
        output is a tensor ``(B, C, *spatial)``; it must run once per forward.
    kind : {"bce", "softmax"}, default "bce"
        How the model was trained (see above).
    relu : bool, default True
        Apply the ReLU of GradCAM.
    normalize : bool, default True
        Min-max normalise each map to ``[0, 1]``. A constant map (e.g. all
        zero after the ReLU) becomes all zero: its Attention-IoU is undefined.
    eval_mode : bool, default True
        Switch the model to eval mode inside the block.

    Notes
    -----
    Equal to captum's ``LayerGradCam`` followed by the ReLU and min-max
    normalisation (tested). Hooks are never left on the model, so a training
    loop is unaffected (:ref:`def-attention`).

    References
    ----------
    .. [1] R. R. Selvaraju et al. "Grad-CAM: Visual Explanations from Deep
       Networks via Gradient-based Localization". ICCV 2017.
    .. [2] A. Serianni et al. "Attention IoU". CVPR 2025, §3.1 and App. A.

    Examples
    --------
    >>> import pytest
    >>> torch = pytest.importorskip("torch")  # the [torch] extra
    >>> _ = torch.manual_seed(0)
    >>> model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
    ...                             torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))
    >>> images = torch.rand(4, 3, 8, 8)
    >>> labels = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])  # columns: target 0, protected 1
    >>> from biasamp import GradCAM
    >>> with GradCAM(model, model[0]) as cam:
    ...     maps = cam(images, target=0)               # |logit_0| maps, (B, h, w)
    ...     t_maps, a_maps = cam.maps(images, [0, 1])  # two targets, one forward pass
    >>> tuple(maps.shape), float(maps.max()), bool(torch.equal(maps, t_maps))
    ((4, 8, 8), 1.0, True)
    """

    def __init__(
        self,
        model: Any,
        layer: Any,
        *,
        kind: str = "bce",
        relu: bool = True,
        normalize: bool = True,
        eval_mode: bool = True,
    ) -> None:
        torch = _torch()
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if not isinstance(layer, torch.nn.Module):
            raise TypeError(f"layer must be a torch.nn.Module (a submodule of model), got {type(layer).__name__}")
        if not any(m is layer for m in model.modules()):
            raise ValueError("layer is not a submodule of model")
        self.model, self.layer = model, layer
        self.kind = _check_kind(kind)
        self.relu, self.normalize, self.eval_mode = bool(relu), bool(normalize), bool(eval_mode)
        self._handle = None
        self._active = False
        self._acts: list = []
        self._was_training: bool | None = None

    # -- hook management ---------------------------------------------------- #
    def __enter__(self) -> GradCAM:
        if self._handle is not None:
            raise RuntimeError("this GradCAM is already active (nested 'with')")
        self._handle = self.layer.register_forward_hook(self._hook)
        if self.eval_mode:
            self._was_training = self.model.training
            self.model.eval()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the hook and restore the model's mode (idempotent)."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        if self._was_training is not None:
            self.model.train(self._was_training)
            self._was_training = None
        self._active, self._acts = False, []

    def _hook(self, module: Any, inputs: Any, output: Any) -> Any:
        if not self._active:
            return None
        torch = _torch()
        if not torch.is_tensor(output):
            raise TypeError(
                f"the output of the GradCAM layer must be a tensor, got {type(output).__name__}; "
                "choose a layer that returns one tensor"
            )
        act = output.detach().requires_grad_(True)
        self._acts.append(act)
        return act.clone()  # the network continues on a copy: in-place ops cannot touch `act`

    # -- maps --------------------------------------------------------------- #
    def _forward(self, images: Any) -> tuple[Any, Any]:
        torch = _torch()
        if self._handle is None:
            raise RuntimeError("use GradCAM as a context manager: 'with GradCAM(model, layer) as cam: ...'")
        if not torch.is_tensor(images):
            raise TypeError(f"images must be a torch.Tensor, got {type(images).__name__}")
        if images.is_complex():
            raise TypeError(f"images must hold real numbers, got dtype {images.dtype}")
        if images.ndim < 2 or images.shape[0] == 0:
            raise ValueError(f"images must be a non-empty batch (B, C, H, W), got shape {tuple(images.shape)}")
        if images.is_floating_point() and not bool(torch.isfinite(images).all()):
            raise ValueError("images contains NaN or inf values")
        self._acts = []
        self._active = True
        try:
            with torch.enable_grad():
                out = self.model(images)
        except RuntimeError as exc:  # shapes or dtypes the model cannot take: say which input
            raise ValueError(f"the model cannot run on images of shape {tuple(images.shape)} and dtype "
                             f"{images.dtype} (expected a batch (B, C, H, W) it accepts): {exc}") from exc
        finally:
            self._active = False
        acts, self._acts = self._acts, []
        if len(acts) != 1:
            raise ValueError(
                f"the GradCAM layer ran {len(acts)} times in one forward pass; choose a layer that runs once"
            )
        if not torch.is_tensor(out):
            raise TypeError(
                f"model must return a logits tensor, got {type(out).__name__}; wrap it so that "
                "forward returns the (B, K) logits"
            )
        if out.ndim == 1:
            out = out[:, None]
        if out.ndim != 2 or out.shape[0] != images.shape[0]:
            raise ValueError(f"model output must have shape (B, K) or (B,), got {tuple(out.shape)}")
        if acts[0].ndim < 3:
            raise ValueError(
                f"the GradCAM layer output must be (B, C, *spatial), got shape {tuple(acts[0].shape)}"
            )
        return out, acts[0]

    def _target_index(self, target: Any, out: Any, name: str = "target") -> Any:
        torch = _torch()
        b, k = out.shape
        if target is None:
            if self.kind == "softmax":
                return out.detach().argmax(dim=1)
            if k != 1:
                raise ValueError(f"{name} is required for a model with {k} outputs (kind='bce')")
            return torch.zeros(b, dtype=torch.long, device=out.device)
        target = _scalar_index(target)
        if isinstance(target, (bool, np.bool_)):
            raise TypeError(f"{name} must be an output index (int) or one index per image, got a bool")
        if isinstance(target, (int, np.integer)):
            idx = torch.full((b,), int(target), dtype=torch.long, device=out.device)
        else:
            try:
                idx = torch.as_tensor(np.asarray(target.cpu() if torch.is_tensor(target) else target))
            except (TypeError, ValueError, RuntimeError):
                raise TypeError(f"{name} must be an int or {b} integer indices (one per image), got "
                                f"{type(target).__name__}") from None
            if idx.ndim != 1 or idx.shape[0] != b or idx.dtype.is_floating_point or idx.dtype == torch.bool:
                raise ValueError(f"{name} must be an int or {b} integer indices (one per image)")
            idx = idx.to(device=out.device, dtype=torch.long)
        if bool(((idx < 0) | (idx >= k)).any()):
            raise ValueError(f"{name} index out of range for a model with {k} outputs")
        return idx

    def maps(self, images: Any, targets: Sequence[Any]) -> list:
        """GradCAM maps for several targets from one forward pass.

        Parameters
        ----------
        images : torch.Tensor of shape (B, ...)
            A batch on the model's device.
        targets : sequence
            Each entry as the ``target`` of a call ``cam(images, target)``.

        Returns
        -------
        list of torch.Tensor
            One detached ``(B, *spatial)`` map per target.
        """
        if isinstance(targets, (str, bytes)) or not isinstance(targets, Iterable):
            raise TypeError(f"targets must be a sequence of targets, got {type(targets).__name__}")
        targets = list(targets)
        return self._maps(images, targets, [f"targets[{j}]" for j in range(len(targets))])

    def _maps(self, images: Any, targets: list, names: Sequence[str]) -> list:
        """:meth:`maps`, naming each target in errors (``names``: the caller's argument names)."""
        torch = _torch()
        if not targets:
            raise ValueError("targets is empty")
        out, act = self._forward(images)
        spatial = tuple(range(2, act.ndim))
        result = []
        for j, target in enumerate(targets):
            idx = self._target_index(target, out, names[j])
            score = out.gather(1, idx[:, None])[:, 0]
            if self.kind == "bce":
                score = score.abs()
            (grad,) = torch.autograd.grad(
                score.sum(), act, retain_graph=j < len(targets) - 1, allow_unused=True
            )
            if grad is None:
                raise ValueError("the model output does not depend on the chosen layer")
            with torch.no_grad():
                weights = grad.mean(dim=spatial, keepdim=True)
                cam = (weights * act).sum(dim=1)
                if self.relu:
                    cam = cam.clamp_min(0)
                if self.normalize:
                    cam = _min_max(cam)
            result.append(cam.detach())
        return result

    def __call__(self, images: Any, target: Any = None) -> Any:
        """GradCAM maps ``(B, *spatial)`` of one target.

        Parameters
        ----------
        images : torch.Tensor of shape (B, ...)
        target : int, sequence of int, tensor, or None
            ``kind="bce"``: the output column ``k`` (the score is
            ``|logit_k|``), one for all images or one per image; may be None for
            a single-output model. ``kind="softmax"``: None (default) uses the
            predicted class of each image; an index uses that class's logit.
        """
        return self._maps(images, [target], ["target"])[0]


def gradcam(
    model: Any,
    images: Any,
    layer: Any,
    target: Any = None,
    *,
    kind: str = "bce",
    relu: bool = True,
    normalize: bool = True,
) -> Any:
    r"""GradCAM maps of one batch (hooks registered and removed inside the call).

    See :class:`GradCAM` for the definition and the parameters.

    Parameters
    ----------
    model : torch.nn.Module
        Returns ``(B, K)`` (or ``(B,)``) logits.
    images : torch.Tensor of shape (B, C, H, W)
        One batch.
    layer : torch.nn.Module
        The layer GradCAM reads (usually the last convolutional block).
    target : int, tensor of shape (B,), or None
        The output explained, per image or for all (``None`` with
        ``kind="softmax"``: each image's predicted class).
    kind : {"bce", "softmax"}, default "bce"
    relu, normalize : bool, default True
        As in :class:`GradCAM`.

    Returns
    -------
    torch.Tensor of shape (B, h, w)
        Detached maps (the layer's spatial size), min-max normalised per
        image when ``normalize``.

    Raises
    ------
    ValueError
        An unknown ``kind``, or a ``layer`` that is not run once per forward.
    ImportError
        PyTorch is not installed.

    Notes
    -----
    .. math::

        M = \operatorname{minmax}\Bigl(\operatorname{ReLU}\bigl(\textstyle\sum_c \alpha_c A_c\bigr)\Bigr),
        \qquad \alpha_c = \frac{1}{hw}\sum_{u,v}\frac{\partial s}{\partial A_{c,u,v}}

    with :math:`s = |\text{logit}_k|` for ``kind="bce"`` (:ref:`def-attention`).

    References
    ----------
    .. [1] R. R. Selvaraju et al. "Grad-CAM: Visual Explanations from Deep
       Networks via Gradient-based Localization". ICCV 2017 / IJCV 2020.
    .. [2] A. Serianni et al. "Attention IoU". CVPR 2025, §3.1 and App. A.

    Examples
    --------
    >>> import pytest
    >>> torch = pytest.importorskip("torch")  # the [torch] extra
    >>> _ = torch.manual_seed(0)
    >>> model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
    ...                             torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))
    >>> images = torch.rand(4, 3, 8, 8)
    >>> labels = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])  # columns: target 0, protected 1
    >>> from biasamp import gradcam
    >>> maps = gradcam(model, images, model[0], target=0)
    >>> tuple(maps.shape), float(maps.min()), float(maps.max())
    ((4, 8, 8), 0.0, 1.0)
    """
    with GradCAM(model, layer, kind=kind, relu=relu, normalize=normalize) as cam:
        return cam(images, target)


# --------------------------------------------------------------------------- #
# mask and heatmap scores over a data loader
# --------------------------------------------------------------------------- #
def _model_device(model: Any, device: Any) -> Any:
    torch = _torch()
    if device is not None:
        return torch.device(device)
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def _unpack(batch: Any, need_masks: bool) -> tuple[Any, Any, Any]:
    if not isinstance(batch, (tuple, list)) or len(batch) not in (2, 3):
        raise TypeError(
            "each batch of loader must be a tuple (images, labels) or (images, labels, masks), "
            f"got {type(batch).__name__}" + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else "")
        )
    images, labels = batch[0], batch[1]
    masks = batch[2] if len(batch) == 3 else None
    if need_masks and masks is None:
        raise ValueError("masks selects channels of the batch masks, but the loader yields (images, labels) only")
    return images, labels, masks


def _labels_2d(labels: Any, batch: int) -> np.ndarray:
    torch = _torch()
    arr = labels.detach().cpu().numpy() if torch.is_tensor(labels) else np.asarray(labels)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != batch:
        raise ValueError(f"labels of a batch must have shape (B, K) or (B,) with B = {batch}, got {arr.shape}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        rows = np.flatnonzero(~np.isfinite(arr).all(axis=1))[:5].tolist()
        raise ValueError(f"labels of a batch contain NaN or inf values (rows {rows} of the batch)")
    return arr


def _scalar_index(value: Any) -> Any:
    """A 0-d integer tensor or array (``torch.tensor(3)``, ``np.array(3)``) as a Python int; anything else as is."""
    torch = _torch()
    if (torch.is_tensor(value) and value.ndim == 0 and not value.is_floating_point() and not value.is_complex()
            and value.dtype != torch.bool):
        return int(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value)
    return value


def _column(labels: np.ndarray, index: Any, name: str) -> np.ndarray | None:
    """Column ``index`` of a batch's labels; None when no column is asked for (a map without labels)."""
    if index is None:
        return None
    if not 0 <= index < labels.shape[1]:
        raise ValueError(f"{name}={index} is out of range for labels with {labels.shape[1]} columns")
    return labels[:, index]


def _check_index(value: Any, name: str, allow_none: bool = False) -> Any:
    if value is None and allow_none:
        return None
    value = _scalar_index(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a non-negative int (an output/label column), got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative int (an output/label column), got {value!r}")
    return int(value)


def _select_masks(masks_arg: Any, images: Any, labels: Any, batch_masks: Any) -> Any:
    torch = _torch()
    if callable(masks_arg):
        m = masks_arg(images, labels)
    elif masks_arg is None:
        m = batch_masks
        if m is None:
            raise ValueError("masks=None needs a loader that yields (images, labels, masks)")
    else:
        chans = [masks_arg] if isinstance(masks_arg, (int, np.integer)) else list(masks_arg)
        if batch_masks is None:
            raise ValueError(
                f"masks={masks_arg!r} selects channels of the batch masks, but the loader yields (images, labels) "
                "without masks; yield (images, labels, masks) or pass masks as a callable"
            )
        if not torch.is_tensor(batch_masks):
            batch_masks = torch.as_tensor(np.asarray(batch_masks))
        if batch_masks.ndim != 4:
            raise ValueError(
                f"masks={masks_arg!r} selects channels, so the batch masks must be (B, M, H, W), "
                f"got shape {tuple(batch_masks.shape)}"
            )
        m = batch_masks[:, chans].amax(dim=1)  # several channels: their union
    if m is None:
        raise ValueError("masks: the masks callable returned None; it must return (B, H, W) masks")
    if not torch.is_tensor(m):
        m = torch.as_tensor(np.asarray(m))
    if m.ndim == 4 and m.shape[1] == 1:
        m = m[:, 0]
    if m.ndim != 3 or m.shape[0] != images.shape[0]:
        raise ValueError(f"masks must be (B, H, W) (or (B, 1, H, W)) for a batch of B = {images.shape[0]}, "
                         f"got shape {tuple(m.shape)}")
    return m


def _resize(x: Any, size: tuple, antialias: bool) -> Any:
    torch = _torch()
    if tuple(x.shape[-2:]) == tuple(size):
        return x
    down = x.shape[-2] > size[0] or x.shape[-1] > size[1]
    return torch.nn.functional.interpolate(
        x[:, None], size=size, mode="bilinear", align_corners=False, antialias=bool(antialias and down)
    )[:, 0]


def _at_image_resolution(maps: Any, size: tuple) -> Any:
    """Maps ``(B, h, w)`` upsampled (bilinear) to ``size`` and min-max normalised again (Serianni et al.'s code).

    Bilinear upsampling blends neighbouring cells, so an interior minimum or
    maximum of the map is no longer reached; the second min-max stretches the
    upsampled map back to [0, 1].
    """
    return _min_max(_resize(maps.float(), tuple(size), antialias=False))


def _progress(loader: Any, progress: bool, desc: str) -> Iterable:
    from tqdm.auto import tqdm

    total = len(loader) if hasattr(loader, "__len__") else None
    return tqdm(loader, total=total, desc=desc, disable=not progress, leave=False, unit="batch")


def _score_loop(model, loader, layer, kind, targets_for_cam, per_batch, target, protected, device, progress, desc,
                cam_names=("target", "protected")):
    from biasamp.attention._iou import _iou_torch

    torch = _torch()
    if isinstance(loader, (str, bytes, Mapping)) or not isinstance(loader, Iterable):
        raise TypeError(f"loader must be an iterable of (images, labels[, masks]) batches, got {type(loader).__name__}")
    device = _model_device(model, device)
    scores, t_labels, a_labels = [], [], []
    with GradCAM(model, layer, kind=kind) as cam:
        for batch in _progress(loader, progress, desc):
            images, labels, batch_masks = _unpack(batch, need_masks=False)
            if not torch.is_tensor(images):
                raise TypeError(f"images of a batch must be a torch.Tensor, got {type(images).__name__}")
            images = images.to(device)
            lab = _labels_2d(labels, images.shape[0])
            maps = cam._maps(images, list(targets_for_cam), cam_names)
            x, y = per_batch(maps, images, labels, batch_masks)
            b = x.shape[0]
            s = _iou_torch(x.reshape(b, -1).double(), y.reshape(b, -1).double())
            scores.append(s.cpu().numpy())
            t_labels.append(_column(lab, target, "target"))
            a_labels.append(_column(lab, protected, "protected"))
    if not scores:
        raise ValueError("loader yielded no batch")
    t_all = np.concatenate(t_labels) if target is not None else None
    a_all = np.concatenate(a_labels) if protected is not None else None
    return np.concatenate(scores), t_all, a_all


def heatmap_score(
    model: Any,
    loader: Iterable,
    target: int,
    protected: int,
    layer: Any,
    *,
    kind: str = "bce",
    device: Any = None,
    progress: bool = True,
    resolution: str = "map",
):
    r"""Heatmap score: Attention-IoU of the target's and the protected attribute's maps.

    For each image :math:`i`, :math:`\mathrm{AttnIoU}(M^i_{\text{target}},
    M^i_{\text{protected}})` where :math:`M^i_k` is the GradCAM map of
    ``|logit_k|`` at ``layer`` (both maps from one forward pass); then the
    nanmean over images, overall and per (target label, protected label)
    subgroup (:ref:`def-attention`). A high score means the model looks at the same image
    regions for the target as for the protected attribute.

    Parameters
    ----------
    model : torch.nn.Module
        A multi-label model trained with binary cross-entropy, returning
        ``(B, K)`` logits, one per attribute.
    loader : iterable of batches
        E.g. a ``torch.utils.data.DataLoader``. Each batch is a tuple
        ``(images, labels)`` or ``(images, labels, masks)``: ``images`` a
        ``(B, C, H, W)`` float tensor, ``labels`` a ``(B, K)`` tensor/array of
        0/1 attribute labels whose columns are the model's outputs (a
        ``(B,)`` label is one column); masks are ignored here.
    target, protected : int
        Output columns (= label columns) of the target and the protected
        attribute.
    layer : torch.nn.Module
        The layer GradCAM reads (usually the last convolutional block).
    kind : {"bce"}, default "bce"
        Only multi-label BCE models have a map per attribute; ``"softmax"``
        raises.
    device : torch.device or str, optional
        Where to run; default: the device of the model's parameters (CPU or
        CUDA). Batches are moved there.
    progress : bool, default True
        Show a tqdm progress bar over batches.
    resolution : {"map", "image"}, default "map"
        ``"map"``: the two maps are compared at the layer's resolution, as
        GradCAM computes them. ``"image"`` (the authors' code): both maps are
        first upsampled to the image's size (bilinear, ``align_corners=False``)
        and min-max normalised again.

    Returns
    -------
    AttentionScoreResult
        ``kind="heatmap"``; ``.value``, ``.scores`` (per image, NaN where a
        map was all zero), ``.subgroups``, ``.n_undefined``.

    Raises
    ------
    ValueError
        Batches that are not ``(images, labels[, masks])``, indices outside the
        labels, a softmax model (one map per image), an unknown
        ``resolution``, or every score undefined.
    ImportError
        PyTorch is not installed.

    Notes
    -----
    ``resolution``: Attention-IoU is invariant to nearest-neighbour
    upsampling of both maps, but not to bilinear upsampling followed by a new
    min-max normalisation, which shifts mass towards the cells' borders and
    raises the floor of a map whose minimum is interior: the two choices
    differ by up to about 0.1 on trained models. biasamp compares the maps
    as computed (no interpolation choice enters the score); ``"image"``
    reproduces the published numbers' pipeline (:doc:`/protocol_heatmap_resolution`).

    Per image i, :math:`\mathrm{AttnIoU}(M^i_\text{target}, M^i_\text{protected})` with

    .. math::

        \mathrm{AttnIoU}(X, Y) = \frac{\langle \tilde X, \tilde Y\rangle_F}{\lVert (\tilde X + \tilde Y)/2\rVert_F^2},
        \quad \tilde X = X / \textstyle\sum X,

    and the score is the mean over the images whose score is defined
    (:ref:`def-attention`).

    References
    ----------
    .. [1] A. Serianni et al. "Attention IoU". CVPR 2025, §3.3 (Eq. for the
       heatmap score) and §5.

    Examples
    --------
    >>> import pytest
    >>> torch = pytest.importorskip("torch")  # the [torch] extra
    >>> _ = torch.manual_seed(0)
    >>> model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
    ...                             torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))
    >>> images = torch.rand(4, 3, 8, 8)
    >>> labels = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])  # columns: target 0, protected 1
    >>> from biasamp import heatmap_score
    >>> res = heatmap_score(model, [(images, labels)], target=0, protected=1, layer=model[0], progress=False)
    >>> res.n_images, 0.0 <= res.value <= 1.0, list(res.by_group())[:2]
    (4, True, ['all', 'T=1,A=1'])
    """
    from biasamp.attention._iou import summarize_attention_scores

    target = _check_index(target, "target")
    protected = _check_index(protected, "protected")
    if _check_kind(kind) != "bce":
        raise ValueError(
            "heatmap_score compares the maps of two outputs of a multi-label model trained with binary "
            "cross-entropy (kind='bce'); a softmax model has one predicted-class map per image"
        )

    if resolution not in ("map", "image"):
        raise ValueError(f"resolution must be 'map' or 'image', got {resolution!r}")

    def per_batch(maps, images, labels, batch_masks):
        if resolution == "image":
            size = tuple(images.shape[-2:])
            return _at_image_resolution(maps[0], size), _at_image_resolution(maps[1], size)
        return maps[0], maps[1]

    scores, t, a = _score_loop(
        model, loader, layer, kind, [target, protected], per_batch, target, protected, device, progress,
        "heatmap score",
    )
    return summarize_attention_scores(
        scores, task=t, attr=a, kind="heatmap", target=target, protected=protected
    )


def mask_score(
    model: Any,
    loader: Iterable,
    target: int,
    masks: int | Sequence[int] | Callable | None,
    layer: Any,
    *,
    protected: int | None = None,
    kind: str = "bce",
    resize: str = "mask",
    antialias: bool = True,
    device: Any = None,
    progress: bool = True,
):
    r"""Mask score: Attention-IoU of the target's attention map and a feature mask.

    For each image :math:`i`, :math:`\mathrm{AttnIoU}(M^i_{\text{target}},
    \operatorname{resize}(F^i))` with the GradCAM map :math:`M^i` at
    ``layer`` and the feature mask :math:`F^i` bilinearly resized to the
    map's size; then the nanmean over images, overall and per (target label,
    protected label) subgroup (:ref:`def-attention`). A high score means the model looks at
    the masked region.

    Parameters
    ----------
    model : torch.nn.Module
        Returns ``(B, K)`` (or ``(B,)``) logits.
    loader : iterable of batches
        Each batch a tuple ``(images, labels)`` or ``(images, labels, masks)``:
        ``images`` ``(B, C, H, W)``; ``labels`` ``(B, K)`` (or ``(B,)``) whose
        column ``target`` (and ``protected``) holds the per-image labels used
        for the subgroup split; ``masks`` ``(B, H', W')``, ``(B, 1, H', W')`` or
        ``(B, M, H', W')`` non-negative feature masks (any scale, e.g. 0/1 or
        0/255).
    target : int
        ``kind="bce"``: the output column whose ``|logit|`` GradCAM explains,
        and the label column of the split. ``kind="softmax"``: the map is that
        of each image's predicted class (:ref:`def-attention`); ``target`` is the label
        column of the split only.
    masks : None, int, sequence of int, or callable
        ``None``: the batch's masks are one mask per image. An int (or several):
        channel(s) of ``(B, M, H', W')`` batch masks (several are united by an
        element-wise maximum). A callable ``masks(images, labels) -> (B, H',
        W')`` computes them.
    layer : torch.nn.Module
        The layer GradCAM reads.
    protected : int, optional
        Label column of the protected attribute for the four-subgroup split;
        without it the split is by the target label only.
    kind : {"bce", "softmax"}, default "bce"
    resize : {"mask", "attention"}, default "mask"
        ``"mask"``: masks are resized to the attention map (the paper);
        ``"attention"``: attention maps are upsampled to the mask size instead
        and min-max normalised again (Serianni et al.'s code: bilinear
        upsampling no longer reaches an isolated minimum, so the second
        min-max moves the floor back to 0). Both bilinear
        (``align_corners=False``).
    antialias : bool, default True
        Anti-aliased bilinear *down*-sampling of masks (what torchvision's
        ``resize`` does, used in the paper's code); a large mask reduced to a
        7x7 map then keeps its area instead of 4 sampled pixels per cell.
    device : torch.device or str, optional
        Default: the device of the model's parameters.
    progress : bool, default True
        Show a tqdm progress bar over batches.

    Returns
    -------
    AttentionScoreResult
        ``kind="mask"``.

    Raises
    ------
    ValueError
        Batches that are not ``(images, labels[, masks])``, indices outside the
        labels, negative or non-finite masks, batches without masks when
        ``masks`` selects channels, or every score undefined.
    ImportError
        PyTorch is not installed.

    Notes
    -----
    Per image i, :math:`\mathrm{AttnIoU}(M^i_\text{target}, \operatorname{resize}(F^i))` with

    .. math::

        \mathrm{AttnIoU}(X, Y) = \frac{\langle \tilde X, \tilde Y\rangle_F}{\lVert (\tilde X + \tilde Y)/2\rVert_F^2},
        \quad \tilde X = X / \textstyle\sum X,

    and the score is the mean over the images whose score is defined
    (:ref:`def-attention`).

    References
    ----------
    .. [1] A. Serianni et al. "Attention IoU". CVPR 2025, §3.3 (mask score),
       §4 (Waterbirds validation).

    Examples
    --------
    >>> import pytest
    >>> torch = pytest.importorskip("torch")  # the [torch] extra
    >>> _ = torch.manual_seed(0)
    >>> model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
    ...                             torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))
    >>> images = torch.rand(4, 3, 8, 8)
    >>> labels = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])  # columns: target 0, protected 1
    >>> masks = torch.zeros(4, 1, 8, 8)
    >>> masks[:, :, :4, :4] = 1                                  # the feature: the top-left quarter
    >>> from biasamp import mask_score
    >>> res = mask_score(model, [(images, labels, masks)], target=0, masks=0, layer=model[0], progress=False)
    >>> res.kind, res.n_images, 0.0 <= res.value <= 1.0
    ('mask', 4, True)
    """
    from biasamp.attention._iou import summarize_attention_scores

    target = _check_index(target, "target")
    protected = _check_index(protected, "protected", allow_none=True)
    _check_kind(kind)
    if resize not in ("mask", "attention"):
        raise ValueError(f"resize must be 'mask' or 'attention', got {resize!r}")
    if not (masks is None or callable(masks) or isinstance(masks, (int, np.integer))
            or (isinstance(masks, Sequence) and masks and all(isinstance(c, (int, np.integer)) for c in masks))):
        raise TypeError(f"masks must be None, a channel index, a sequence of indices or a callable, got {masks!r}")
    torch = _torch()

    def per_batch(maps, images, labels, batch_masks):
        attn = maps[0]
        m = _select_masks(masks, images, labels, batch_masks).to(device=attn.device, dtype=torch.float32)
        if bool((m < 0).any()) or not bool(torch.isfinite(m).all()):
            raise ValueError("masks of a batch must be finite and >= 0")
        if resize == "mask":
            m = _resize(m, tuple(attn.shape[-2:]), antialias)
        else:  # the authors' pipeline: upsampled to the mask, then min-max normalised again
            attn = _min_max(_resize(attn.float(), tuple(m.shape[-2:]), antialias))
        return attn, m

    cam_target = target if kind == "bce" else None
    scores, t, a = _score_loop(
        model, loader, layer, kind, [cam_target], per_batch, target, protected, device, progress, "mask score"
    )
    return summarize_attention_scores(
        scores, task=t, attr=a, kind="mask", target=target, protected=protected
    )
