"""``torch.distributed`` reduction of accumulators (imported only by ``Accumulator.sync``).

An accumulator's state is metadata (class lists, which roles were counted,
soft flags; for a multi-attribute accumulator in pass 1, its distinct
attribute sets) plus fixed-shape count tables. :func:`sync_accumulator`
gathers the metadata of every rank (``all_gather_object``: small), checks and
combines it exactly as :meth:`merge` does, then all-reduces (sums) every table
as a tensor. Every rank sees the same gathered metadata, so an inconsistency
raises the same ``ValueError`` on every rank before any table is reduced (no
rank is left waiting in a collective).

Tables are reduced as int64 (exact integer counts) or float64 tensors, on
CPU for gloo/mpi and on the current CUDA device for NCCL.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_distributed", "sync_accumulator"]


def is_distributed() -> bool:
    """Whether ``torch.distributed`` is available and a default process group is initialised."""
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover - torch absent
        return False
    return bool(dist.is_available() and dist.is_initialized())


def _device(dist: Any, group: Any):
    import torch

    backend = str(dist.get_backend(group)).lower()
    if "nccl" in backend:
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def sync_accumulator(acc: Any, group: Any = None) -> Any:
    """Return a copy of ``acc`` holding the sum over the ranks of ``group`` (see ``Accumulator.sync``)."""
    if not is_distributed():
        return acc.copy()
    import torch
    import torch.distributed as dist

    world = dist.get_world_size(group)
    shells: list = [None] * world
    dist.all_gather_object(shells, acc._shell(), group=group)
    combined = shells[0]
    for other in shells[1:]:
        combined._merge_meta(other)  # raises ValueError on every rank alike
    device = _device(dist, group)
    reduced = {}
    for name, table in acc._tables().items():
        local = np.asarray(table)
        flat = np.ascontiguousarray(local).reshape(-1)
        tensor = torch.from_numpy(flat.copy()).to(device)
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=group)
        reduced[name] = tensor.cpu().numpy().astype(local.dtype, copy=False).reshape(local.shape)
    combined._set_tables(reduced)  # the gathered metadata with the summed tables
    return combined
