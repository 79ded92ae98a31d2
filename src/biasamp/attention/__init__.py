"""Attention-IoU (Serianni et al.): the numpy core (`_iou`, never imports torch code) and the
PyTorch layer (`_gradcam`: GradCAM maps, heatmap and mask scores)."""

from ._gradcam import GradCAM, gradcam, heatmap_score, mask_score
from ._iou import *  # noqa: F403
from ._iou import __all__ as _iou_all

__all__ = [*_iou_all, "GradCAM", "gradcam", "heatmap_score", "mask_score"]
