"""Benchmark: Attention-IoU throughput and the cost of GradCAM.

1. ``attention_iou`` on N (default 100,000) pairs of 7x7 maps, numpy (float64)
   and, when torch is installed, torch (float32, CPU; CUDA too if available).
2. GradCAM of one batch relative to one forward+backward pass of the same
   batch (a small ResNet-like CNN, 64 images of 3x64x64). GradCAM only runs
   the network after the chosen layer backwards, so it should cost about one
   forward+backward pass or less; two targets from one forward pass
   (``GradCAM.maps``, the heatmap score) add one partial backward.

Run: ``python benchmarks/bench_attention.py [--maps N] [--repeat R] [--batch B]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from biasamp.attention import attention_iou


def best_of(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def bench_iou(n: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random((n, 7, 7)), rng.random((n, 7, 7))
    t, _ = best_of(lambda: attention_iou(x, y), repeat)
    print(f"attention_iou numpy : {n:,} pairs of 7x7 in {t * 1e3:7.1f} ms  ({n / t / 1e6:5.1f} M pairs/s)")
    try:
        import torch
    except ImportError:
        print("torch not installed: skipping the torch timings")
        return
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devices:
        xt = torch.tensor(x, dtype=torch.float32, device=dev)
        yt = torch.tensor(y, dtype=torch.float32, device=dev)

        def run(xt=xt, yt=yt, dev=dev):
            out = attention_iou(xt, yt)
            if dev == "cuda":
                torch.cuda.synchronize()
            return out

        run()
        t, out = best_of(run, repeat)
        print(f"attention_iou torch {dev:4s}: {n:,} pairs of 7x7 in {t * 1e3:7.1f} ms  ({n / t / 1e6:5.1f} M pairs/s)")
        ref = attention_iou(x, y)
        assert np.allclose(out.cpu().numpy(), ref, atol=1e-5)


def bench_gradcam(batch: int, repeat: int) -> None:
    try:
        import torch
        from torch import nn
    except ImportError:
        return
    from biasamp.attention import GradCAM

    torch.manual_seed(0)

    def block(cin, cout):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
        )

    model = nn.Sequential(
        block(3, 32), block(32, 64), block(64, 128), block(128, 256),  # 64 -> 4x4
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 40),
    ).eval()
    layer = model[3]
    images = torch.randn(batch, 3, 64, 64)

    def fwd_bwd():
        model.zero_grad(set_to_none=True)
        model(images).abs()[:, 5].sum().backward()

    fwd_bwd()
    t_ref, _ = best_of(fwd_bwd, repeat)
    model.zero_grad(set_to_none=True)
    with GradCAM(model, layer) as cam:
        cam(images, 5)
        t_cam, _ = best_of(lambda: cam(images, 5), repeat)
        t_two, _ = best_of(lambda: cam.maps(images, [5, 20]), repeat)
    with torch.no_grad():
        t_fwd, _ = best_of(lambda: model(images), repeat)
    print(f"GradCAM ({batch} images 3x64x64, map 4x4, {torch.get_num_threads()} threads):")
    print(f"  forward only (no grad)      : {t_fwd * 1e3:7.1f} ms")
    print(f"  forward + backward          : {t_ref * 1e3:7.1f} ms  (1.00x)")
    print(f"  GradCAM, one target         : {t_cam * 1e3:7.1f} ms  ({t_cam / t_ref:.2f}x)")
    print(f"  GradCAM, two targets (maps) : {t_two * 1e3:7.1f} ms  ({t_two / t_ref:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    bench_iou(args.maps, args.repeat)
    bench_gradcam(args.batch, args.repeat)


if __name__ == "__main__":
    main()
