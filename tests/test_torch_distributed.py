"""Accumulator.sync(): 2 torch.distributed processes (gloo, loopback) give the one-shot results."""

from __future__ import annotations

import os
import pickle
import socket

import numpy as np
import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available():  # pragma: no cover - torch built without distributed
    pytest.skip("torch.distributed is not available", allow_module_level=True)

import biasamp
from biasamp.accumulators import (
    CooccurrenceAccumulator,
    FairnessAccumulator,
    MultiAttributeAccumulator,
)

from .test_accumulators import assert_same, cooc_data, fair_data, multi_data

WORLD = 2


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _batches(n: int, rank: int, size: int = 700):
    """This rank's rows (an uneven, interleaved share), in batches of tensors."""
    rows = np.arange(n)[(np.arange(n) // 350) % WORLD == rank]
    return [rows[i: i + size] for i in range(0, len(rows), size)]


def _t(x):
    return torch.as_tensor(np.asarray(x))


def _worker(rank: int, port: int, outdir: str) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    out = {}
    try:
        # co-occurrence: tensors in an "eval loop"; soft predictions on rank 1 only
        d = cooc_data(n=4000, soft=False)
        acc = CooccurrenceAccumulator(3, 6)
        for r in _batches(4000, rank):
            acc.update(_t(d["attr"][r]), _t(d["task"][r]), attr_pred=_t(d["attr_pred"][r]),
                       task_pred=_t(d["task_pred"][r]))
        for r in _batches(2000, rank):
            acc.update_train(_t(d["attr_train"][r]), _t(d["task_train"][r]))
        synced = acc.sync()
        out["directional"] = synced.compute()
        out["directional_twice"] = acc.sync().compute()  # sync() leaves acc unchanged: no double count
        out["n_local"] = acc.n

        # fairness, soft predictions
        y_true, y_pred, sex, _ = fair_data(n=3000, soft=True)
        fair = FairnessAccumulator(4, ["f", "m"])
        for r in _batches(3000, rank):
            fair.update(_t(y_true[r]), _t(y_pred[r]), sensitive_features=sex[r])
        out["fairness"] = fair.sync().compute()

        # multi-attribute, two passes: collect -> sync -> freeze -> count -> sync
        m = multi_data(n=3000)
        multi = MultiAttributeAccumulator(2, 5, combinations="all", max_size=3, min_support=30)
        for r in _batches(3000, rank):
            multi.collect(_t(m["task_train"][r]))
        multi = multi.sync()
        multi.freeze()
        for r in _batches(3000, rank):
            multi.update(_t(m["attr"][r]), _t(m["task"][r]), attr_pred=_t(m["attr_pred"][r]),
                         task_pred=_t(m["task_pred"][r]))
            multi.update_train(_t(m["attr_train"][r]), _t(m["task_train"][r]))
        out["multi"] = multi.sync().compute()

        # a rank that counted other arguments: every rank raises the same error, none hangs
        bad = CooccurrenceAccumulator(3, 6)
        kw = dict(attr_pred=d["attr_pred"][:10]) if rank == 0 else {}
        bad.update(d["attr"][:10], d["task"][:10], task_pred=d["task_pred"][:10], **kw)
        try:
            bad.sync()
        except ValueError as exc:
            out["error"] = str(exc)
        # an empty rank is fine (it contributes zeros)
        empty = FairnessAccumulator(4, ["f", "m"])
        if rank == 0:
            empty.update(y_true, y_pred, sensitive_features=sex)
        out["fairness_one_rank"] = empty.sync().compute()
    finally:
        dist.destroy_process_group()
    with open(os.path.join(outdir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(out, f)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("torch_dist")
    torch.multiprocessing.spawn(_worker, args=(_free_port(), str(outdir)), nprocs=WORLD, join=True)
    out = []
    for rank in range(WORLD):
        with open(outdir / f"rank{rank}.pkl", "rb") as f:
            out.append(pickle.load(f))
    return out


def test_directional_two_ranks_equal_one_shot(results):
    d = cooc_data(n=4000)
    ref = biasamp.bias_amp_directional(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"],
                                       attr_train=d["attr_train"], task_train=d["task_train"])
    for out in results:
        assert_same(out["directional"], ref)
        assert_same(out["directional_twice"], ref)
    assert results[0]["n_local"] + results[1]["n_local"] == 4000
    assert results[0]["n_local"] != results[1]["n_local"]


def test_fairness_soft_two_ranks(results):
    y_true, y_pred, sex, _ = fair_data(n=3000, soft=True)
    ref = biasamp.fairness_metrics(y_true, y_pred, sensitive_features=sex)
    for out in results:
        assert_same(out["fairness"], ref, rtol=1e-12, atol=1e-12)
        assert_same(out["fairness_one_rank"], ref, rtol=1e-12, atol=1e-12)
    assert_same(results[0]["fairness"], results[1]["fairness"])  # every rank gets the same bits


def test_multi_two_pass_two_ranks(results):
    m = multi_data(n=3000)
    ref = biasamp.multi_bias_amp(m["attr"], m["task"], attr_pred=m["attr_pred"], task_pred=m["task_pred"],
                                 attr_train=m["attr_train"], task_train=m["task_train"],
                                 combinations="all", max_size=3, min_support=30)
    for out in results:
        assert out["multi"].selection == ref.selection
        assert_same(out["multi"], ref)


def test_inconsistent_ranks_raise_everywhere(results):
    for out in results:
        assert "different roles" in out["error"]
