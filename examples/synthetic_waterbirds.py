"""Synthetic Waterbirds: the mask score falls as the training set's bias rises.

A CPU-sized re-run of the validation of Serianni et al. (CVPR 2025, §4, Fig. 4).
Each 32x32 image shows a foreground shape -- the "bird", a filled square
(class 0) or a plus sign (class 1) -- on a background texture -- the "place",
horizontal (0) or vertical (1) stripes. In the training set the place agrees
with the bird class for a fraction ``bias`` of the images (50% = no
correlation, 100% = the background alone predicts the label); the test set is
balanced. A tiny CNN is trained with cross-entropy at each bias level, then

* worst-group accuracy over the four (bird, place) groups of the test set, and
* the mask score of the foreground: Attention-IoU between the GradCAM map of
  the predicted class (last conv layer, 8x8) and the bird mask,

are printed. As the bias rises, the model relies on the background: the
worst-group accuracy and the foreground mask score fall together.

Run: ``python examples/synthetic_waterbirds.py`` (needs torch; about a minute
on 2 CPU cores).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from biasamp.attention import mask_score

SIZE = 32
N_TRAIN, N_TEST = 4000, 1000
EPOCHS = 6
BIASES = (0.5, 0.7, 0.9, 0.97, 1.0)


def make_images(bird: np.ndarray, place: np.ndarray, rng: np.random.Generator):
    """Images (N, 3, 32, 32), bird masks (N, 32, 32)."""
    n = len(bird)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    images = np.empty((n, 3, SIZE, SIZE), dtype=np.float32)
    masks = np.zeros((n, SIZE, SIZE), dtype=np.float32)
    for i in range(n):
        period = rng.integers(3, 6)
        phase = rng.integers(0, period)
        coord = yy if place[i] == 0 else xx
        stripes = ((coord + phase) % period < period / 2).astype(np.float32)
        bg_colour = rng.uniform(0.3, 0.7, size=3).astype(np.float32)
        img = 0.35 * stripes[None] * bg_colour[:, None, None] + 0.1
        half = rng.integers(5, 8)
        cy, cx = rng.integers(half + 1, SIZE - half - 1, size=2)
        inside = (abs(yy - cy) <= half) & (abs(xx - cx) <= half)
        if bird[i] == 1:  # plus sign: the square minus its four corners
            arm = max(1, half // 2)
            inside &= (abs(yy - cy) <= arm) | (abs(xx - cx) <= arm)
        fg_colour = rng.uniform(0.6, 1.0, size=3).astype(np.float32)
        img = np.where(inside[None], fg_colour[:, None, None], img)
        images[i] = img + rng.normal(0, 0.03, size=img.shape).astype(np.float32)
        masks[i] = inside
    return torch.from_numpy(images), torch.from_numpy(masks)


def make_split(n: int, bias: float, rng: np.random.Generator):
    bird = rng.integers(0, 2, n)
    place = np.where(rng.random(n) < bias, bird, 1 - bird)
    images, masks = make_images(bird, place, rng)
    labels = torch.from_numpy(np.stack([bird, place], axis=1))
    return images, labels, masks


class TinyCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16x16
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 8x8
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),                   # 8x8: the GradCAM layer
        )
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def train(images: torch.Tensor, labels: torch.Tensor, seed: int) -> TinyCNN:
    torch.manual_seed(seed)
    model = TinyCNN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    n = len(images)
    for _ in range(EPOCHS):
        order = torch.randperm(n)
        for start in range(0, n, 64):
            idx = order[start : start + 64]
            opt.zero_grad()
            loss_fn(model(images[idx]), labels[idx, 0]).backward()
            opt.step()
    return model.eval()


def worst_group_accuracy(model: TinyCNN, images: torch.Tensor, labels: torch.Tensor) -> float:
    with torch.no_grad():
        pred = model(images).argmax(1)
    correct = pred == labels[:, 0]
    return min(
        float(correct[(labels[:, 0] == b) & (labels[:, 1] == p)].float().mean()) for b in (0, 1) for p in (0, 1)
    )


def main() -> None:
    torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    test_images, test_labels, test_masks = make_split(N_TEST, 0.5, rng)
    loader = [
        (test_images[i : i + 200], test_labels[i : i + 200], test_masks[i : i + 200])
        for i in range(0, N_TEST, 200)
    ]
    t0 = time.perf_counter()
    print(f"{'bias':>5}  {'WGA':>6}  {'mask score (bird)':>17}  {'mask score (background)':>23}")
    for k, bias in enumerate(BIASES):
        images, labels, _ = make_split(N_TRAIN, bias, rng)
        model = train(images, labels, seed=k)
        wga = worst_group_accuracy(model, test_images, test_labels)
        layer = model.features[-1]  # the ReLU after the last conv: GradCAM's usual layer
        bird = mask_score(model, loader, 0, None, layer, protected=1, kind="softmax", progress=False)
        background = mask_score(
            model, [(x, y, 1 - m) for x, y, m in loader], 0, None, layer, protected=1, kind="softmax",
            progress=False,
        )
        print(f"{bias:5.0%}  {wga:6.3f}  {bird.value:17.3f}  {background.value:23.3f}")
    print(f"({time.perf_counter() - t0:.0f} s on {torch.get_num_threads()} CPU threads)")


if __name__ == "__main__":
    main()
