"""biasamp.torchmetrics: the Metric classes give the functional API's numbers, in one process and on 2 ranks.

The expected values come from the functional API (``bias_amp_directional``,
``bias_amp_mals``, ``multi_bias_amp``, ``fairness_metrics``) on all the rows at
once; the metrics see the rows in batches, as tensors, on one or two
``torch.distributed`` processes (gloo, loopback). For hard labels every count is
an exact integer, so the comparison is exact (``assert_same`` compares every
field of the results, and the headline tensors bit for bit).
"""

from __future__ import annotations

import copy
import datetime
import os
import pickle
import socket
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("torchmetrics")

from torchmetrics import MetricCollection

import biasamp
from biasamp import CooccurrenceCounts
from biasamp.accumulators import (
    CooccurrenceAccumulator,
    FairnessAccumulator,
    MultiAttributeAccumulator,
)
from biasamp.torchmetrics import BiasAmpDirectional, BiasAmpMALS, DifferentialFairness, GroupFairness, MultiBiasAmp

from .test_accumulators import assert_same, cooc_data, fair_data, multi_data, splits

ROOT = Path(__file__).resolve().parents[1]


def _multi_ref(m):
    """The functional Multi_MALS / Multi-> ("observed" combinations up to size 2); its M is given to the metrics."""
    return biasamp.multi_bias_amp(m["attr"], m["task"], attr_pred=m["attr_pred"], task_pred=m["task_pred"],
                                  attr_train=m["attr_train"], task_train=m["task_train"], max_size=2)


def _same_parts(res, ref):
    """Multi results equal in every metric (the selection record differs: M given vs chosen)."""
    assert res.combinations == ref.combinations
    for name in ("mals", "g_to_m", "m_to_g"):
        assert_same(getattr(res, name), getattr(ref, name))


def _t(x):
    return torch.as_tensor(np.asarray(x))


def _directional_ref(d, train=True):
    kw = dict(attr_train=d["attr_train"], task_train=d["task_train"]) if train else {}
    return biasamp.bias_amp_directional(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"],
                                        **{"cross_fit": False, **kw})


def _exactly(tensor, value):
    """A 0-d float64 tensor holding exactly ``value``."""
    assert isinstance(tensor, torch.Tensor) and tensor.dtype == torch.float64 and tensor.shape == ()
    assert tensor.item() == value, (tensor.item(), value)


# --------------------------------------------------------------------------- #
# one process
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("k", [1, 3, 8])
def test_directional_batches_equal_functional(k):
    d = cooc_data()
    ref = _directional_ref(d)
    a_to_t, t_to_a = BiasAmpDirectional(3, 6), BiasAmpDirectional(3, 6, direction="T->A")
    rng = np.random.default_rng(k)
    for rows in splits(4000, k, rng):
        for m in (a_to_t, t_to_a):
            m.update(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                     task_pred=_t(d["task_pred"][rows]))
    for rows in splits(2000, k, rng):
        for m in (a_to_t, t_to_a):
            m.update_train(_t(d["attr_train"][rows]), _t(d["task_train"][rows]))
    _exactly(a_to_t.compute(), ref.a_to_t.value)
    _exactly(t_to_a.compute(), ref.t_to_a.value)
    assert_same(a_to_t.result(), ref)
    assert_same(t_to_a.result(), ref)
    # the states are the accumulator's tables, as float64 tensors
    acc = CooccurrenceAccumulator(3, 6)
    acc.update(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"])
    assert a_to_t.directional_gram.dtype == torch.float64
    np.testing.assert_array_equal(a_to_t.directional_gram.numpy(), acc.gram)
    # and the value that keeps a metric holding its distinct rows (cross_fit not False; the folds are drawn from
    # them at compute) out of torchmetrics' compute groups
    assert set(a_to_t.metric_state) == {"directional_gram", "directional_train_gram", "directional_agree",
                                        "directional_own_rows"}
    assert float(a_to_t.directional_own_rows) != float(t_to_a.directional_own_rows)
    np.testing.assert_array_equal(a_to_t.directional_agree.numpy(), acc.agree)  # the McNemar three-way counts


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(20, 200), k=st.integers(1, 6), cross_fit=st.sampled_from([False, None]))
def test_any_batching_is_bit_identical(seed, n, k, cross_fit):
    """Property: however the rows are split, compute() is the functional value (exact integer counts), with the
    plug-in and with the default (cross-fitted: the distinct rows are split at the end, as the function splits)."""
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 2, n)
    task = rng.random((n, 3)) < 0.4 + 0.2 * attr[:, None]
    task_pred = rng.random((n, 3)) < 0.3 + 0.4 * attr[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", biasamp.UndefinedPairWarning)
        try:
            ref = biasamp.bias_amp_directional(attr, task, task_pred=task_pred, cross_fit=cross_fit)
        except ValueError:  # every pair undefined: the metric must say so too
            ref = None
        metric = BiasAmpDirectional(2, 3, cross_fit=cross_fit)
        for rows in splits(n, min(k, n - 1) if n > 1 else 1, rng):
            metric.update(_t(attr[rows]), _t(task[rows]), task_pred=_t(task_pred[rows]))
        if ref is None:
            with pytest.raises(ValueError):  # noqa: PT011 - the functional's error, whatever its wording
                metric.compute()
        else:
            _exactly(metric.compute(), ref.a_to_t.value)


def test_mals_streamed_train_and_fixed_train():
    d = cooc_data()
    ref = biasamp.bias_amp_mals(attr_pred=d["attr_pred"], task_pred=d["task_pred"], attr_train=d["attr_train"], task_train=d["task_train"])
    streamed = BiasAmpMALS(3, 6)
    for rows in np.array_split(np.arange(2000), 3):
        streamed.update_train(_t(d["attr_train"][rows]), _t(d["task_train"][rows]))
    for rows in np.array_split(np.arange(4000), 5):
        streamed.update(attr_pred=_t(d["attr_pred"][rows]), task_pred=_t(d["task_pred"][rows]))
    _exactly(streamed.compute(), ref.value)
    assert_same(streamed.result(), ref)
    train = CooccurrenceCounts.from_labels(d["attr_train"], d["task_train"], attr_classes=[0, 1, 2],
                                           task_classes=range(6))
    fixed = BiasAmpMALS(3, 6, train=train)
    fixed.update(attr_pred=d["attr_pred"], task_pred=d["task_pred"])
    _exactly(fixed.compute(), ref.value)
    with pytest.raises(ValueError, match="fixed train"):
        fixed.update_train(d["attr_train"], d["task_train"])


def test_multi_given_combinations_and_two_pass_accumulator():
    d = multi_data()
    ref = _multi_ref(d)
    combos = list(ref.combinations)
    metrics = {name: MultiBiasAmp(2, 5, combinations=combos, metric=name)
               for name in ("Multi_MALS", "Multi_G->M", "Multi_M->G")}
    raw = MultiBiasAmp(2, 5, combinations=combos, metric="Multi_G->M", raw=True)
    for rows in np.array_split(np.arange(3000), 4):
        for m in (*metrics.values(), raw):
            m.update(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                     task_pred=_t(d["task_pred"][rows]))
            m.update_train(_t(d["attr_train"][rows]), _t(d["task_train"][rows]))
    _exactly(metrics["Multi_MALS"].compute(), ref.mals.value)
    _exactly(metrics["Multi_G->M"].compute(), ref.g_to_m.value)
    _exactly(metrics["Multi_M->G"].compute(), ref.m_to_g.value)
    _exactly(raw.compute(), ref.g_to_m.raw)
    _same_parts(metrics["Multi_MALS"].result(), ref)
    assert metrics["Multi_MALS"].result().selection["mode"] == "given"

    # two passes: M chosen from the training set by the accumulator, then wrapped
    ref2 = biasamp.multi_bias_amp(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"],
                                  attr_train=d["attr_train"], task_train=d["task_train"],
                                  combinations="all", max_size=3, min_support=30)
    acc = MultiAttributeAccumulator(2, 5, combinations="all", max_size=3, min_support=30)
    with pytest.raises(ValueError, match="freeze"):
        MultiBiasAmp.from_accumulator(acc)
    for rows in np.array_split(np.arange(3000), 3):
        acc.collect(d["task_train"][rows])
    acc.freeze()
    metric = MultiBiasAmp.from_accumulator(acc, metric="Multi_G->M", compute_with_cache=False)
    assert metric.metric == "Multi_G->M" and not metric.compute_with_cache
    for rows in np.array_split(np.arange(3000), 3):
        metric.update(_t(d["attr"][rows]), _t(d["task"][rows]), task_pred=_t(d["task_pred"][rows]))
        metric.update_train(_t(d["attr_train"][rows]), _t(d["task_train"][rows]))
    _exactly(metric.compute(), ref2.g_to_m.value)
    assert metric.result().selection == ref2.selection
    assert_same(metric.result().g_to_m, ref2.g_to_m)
    only_g_to_m = MultiBiasAmp.from_accumulator(acc, metric="Multi_M->G")
    only_g_to_m.update(d["attr"], d["task"], task_pred=d["task_pred"])
    with pytest.raises(ValueError, match="needs attr_pred"):
        only_g_to_m.compute()
    with pytest.raises(ValueError, match="first pass"):
        MultiBiasAmp(2, 5, combinations="observed")


@pytest.mark.parametrize("soft", [False, True])
def test_group_fairness_one_and_all_metrics(soft):
    y_true, y_pred, sex, race = fair_data(soft=soft)
    groups = sorted({(s, r) for s, r in zip(sex, race)})
    feats = np.column_stack([sex, race])
    ref = biasamp.fairness_metrics(y_true, y_pred, sensitive_features=feats)
    every = GroupFairness(4, groups)
    eotp = GroupFairness(4, groups, metrics="EOTP")
    acc = FairnessAccumulator(4, groups)
    for rows in np.array_split(np.arange(3000), 6):
        every.update(_t(y_true[rows]), _t(y_pred[rows]), sensitive_features=feats[rows])
        eotp.update(_t(y_true[rows]), _t(y_pred[rows]), sensitive_features=feats[rows])
        acc.update(y_true[rows], y_pred[rows], sensitive_features=feats[rows])
    values = every.compute()
    assert set(values) == set(biasamp.METRICS)
    # the same batches through the accumulator: bit-identical, soft or not
    for name, v in acc.compute().overall.items():
        _exactly(values[name], v)
    _exactly(eotp.compute(), acc.compute().overall["EOTP"])
    tol = dict(rtol=1e-12, atol=1e-12) if soft else {}
    assert_same(every.result(), ref, **tol)
    if not soft:
        for name, v in ref.overall.items():
            _exactly(values[name], v)
    assert GroupFairness.higher_is_better is False


@pytest.mark.parametrize("cross_fit", [False, None])
def test_forward_returns_the_batch_value_and_accumulates(cross_fit):
    """forward() gives the function on the batch, compute() the function on every row: with the plug-in and with
    the default (cross-fitted over every row at once, whatever the batches)."""
    d = cooc_data()
    metric = BiasAmpDirectional(3, 6, cross_fit=cross_fit)
    parts = np.array_split(np.arange(4000), 4)
    for rows in parts:
        batch = metric(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                       task_pred=_t(d["task_pred"][rows]))
        one = biasamp.bias_amp_directional(d["attr"][rows], d["task"][rows], attr_pred=d["attr_pred"][rows],
                                           task_pred=d["task_pred"][rows], cross_fit=cross_fit)
        _exactly(batch, one.a_to_t.value)
    assert metric.update_count == 4
    whole = biasamp.bias_amp_directional(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"],
                                         cross_fit=cross_fit)
    _exactly(metric.compute(), whole.a_to_t.value)
    # torchmetrics' own forward (dist_sync_on_step): the same values, the roles of earlier batches kept
    synced = BiasAmpDirectional(3, 6, dist_sync_on_step=True, cross_fit=cross_fit)
    for rows in parts:
        synced(d["attr"][rows], d["task"][rows], attr_pred=d["attr_pred"][rows], task_pred=d["task_pred"][rows])
    _exactly(synced.compute(), whole.a_to_t.value)
    with pytest.raises(ValueError, match="same arguments"):
        synced(d["attr"][:50], d["task"][:50], task_pred=d["task_pred"][:50])


def test_reset_forgets_counts_and_roles():
    d, e = cooc_data(seed=0), cooc_data(seed=5)
    metric = BiasAmpDirectional(3, 6)
    metric.update(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"])
    first = metric.compute()
    metric.reset()
    assert float(metric.directional_gram.abs().sum()) == 0.0
    # a new epoch may carry other arguments (here: no attr_pred), and sees only its own rows
    metric.update(e["attr"], e["task"], task_pred=e["task_pred"])
    ref = biasamp.bias_amp_directional(e["attr"], e["task"], task_pred=e["task_pred"])  # one batch: cross-fitted
    _exactly(metric.compute(), ref.a_to_t.value)
    assert metric.result().t_to_a is None
    assert metric.compute().item() != first.item()
    t_to_a = BiasAmpDirectional(3, 6, direction="T->A")
    t_to_a.update(e["attr"], e["task"], task_pred=e["task_pred"])
    with pytest.raises(ValueError, match="needs attr_pred"):
        t_to_a.compute()


def test_errors_are_clear():
    d = cooc_data(n=200)
    metric = BiasAmpDirectional(3, 6)
    metric.update(d["attr"], d["task"], task_pred=d["task_pred"])
    with pytest.raises(ValueError, match="same arguments"):
        metric.update(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"])
    # the failed batch left nothing behind: still the first batch's value
    first = biasamp.bias_amp_directional(d["attr"], d["task"], task_pred=d["task_pred"])  # one batch: cross-fitted
    _exactly(metric.compute(), first.a_to_t.value)
    with pytest.raises(ValueError, match="not present"):
        BiasAmpDirectional(2, 6).update(d["attr"], d["task"], task_pred=d["task_pred"])
    with pytest.raises(ValueError, match="direction must be one of"):
        BiasAmpDirectional(3, 6, direction="A to T")
    with pytest.raises(ValueError, match="metric must be one of"):
        MultiBiasAmp(2, 5, combinations=[(0,)], metric="G->M")
    with pytest.raises(ValueError, match="Unexpected keyword"):
        BiasAmpDirectional(3, 6, n_bins=3)
    with pytest.raises(TypeError, match="wraps a CooccurrenceAccumulator"):
        BiasAmpDirectional.from_accumulator(FairnessAccumulator(2, 2))
    with pytest.raises(ValueError, match="metric='mals'"):
        BiasAmpMALS.from_accumulator(CooccurrenceAccumulator(3, 6))
    counted = CooccurrenceAccumulator(3, 6).update(d["attr"], d["task"], task_pred=d["task_pred"])
    with pytest.raises(ValueError, match="already counted"):
        BiasAmpDirectional.from_accumulator(counted)
    empty = GroupFairness(2, ["a", "b"])
    with pytest.warns(UserWarning, match="before the ``update``"), pytest.raises(ValueError, match="no batch"):
        empty.compute()


def test_merge_state_clone_pickle():
    d = cooc_data()
    ref = _directional_ref(d, train=False)
    a, b = BiasAmpDirectional(3, 6, cross_fit=False), BiasAmpDirectional(3, 6, cross_fit=False)
    a.update(d["attr"][:1500], d["task"][:1500], attr_pred=d["attr_pred"][:1500], task_pred=d["task_pred"][:1500])
    b.update(d["attr"][1500:], d["task"][1500:], attr_pred=d["attr_pred"][1500:], task_pred=d["task_pred"][1500:])
    c = pickle.loads(pickle.dumps(a))
    a.merge_state(b)
    _exactly(a.compute(), ref.a_to_t.value)
    c.merge_state(b.clone())
    assert_same(c.result(), ref)
    # a state dict adds the counts (the roles are this metric's own)
    e = copy.deepcopy(b)
    e.merge_state({k: v.clone() for k, v in BiasAmpDirectional(3, 6, cross_fit=False).metric_state.items()})
    assert_same(e.result(), b.result())
    other = BiasAmpDirectional(3, 6, cross_fit=False)
    other.update(d["attr"], d["task"], task_pred=d["task_pred"])
    with pytest.raises(ValueError, match="roles"):
        a.merge_state(other)
    with pytest.raises(ValueError, match="instance of"):
        a.merge_state(BiasAmpMALS(3, 6))


@pytest.mark.parametrize("make", [
    lambda: BiasAmpDirectional(3, 6),
    lambda: BiasAmpMALS(3, 6),
    lambda: MultiBiasAmp(3, 6, combinations=[(0,), (1, 2)]),
    lambda: GroupFairness(2, 2, metrics="DP"),
    lambda: GroupFairness([0, 1], ["x", "y"], metrics=("DP", "EOTP")),
    lambda: DifferentialFairness([0, 1], ["x", "y"]),  # generated from its declaration
], ids=["directional", "mals", "multi", "fairness_one", "fairness_several", "differential"])
def test_torch_jit_script_like_torchmetrics_own(make):
    """Every class scripts as torchmetrics' BinaryFairness does (its forward override is @torch.jit.unused)."""
    from torchmetrics.classification import BinaryFairness

    assert isinstance(torch.jit.script(BinaryFairness(2)), torch.jit.ScriptModule)  # the peer's own promise
    metric = make()
    scripted = torch.jit.script(metric)
    assert isinstance(scripted, torch.jit.ScriptModule)
    # the scripted module carries the count states (torch.jit keeps tensor attributes)
    for name in metric._defaults:
        assert torch.equal(getattr(scripted, name), getattr(metric, name))
    # scripting left the eager metric working: it still counts and computes
    if isinstance(metric, GroupFairness):
        groups = torch.tensor([0, 0, 1, 1]) if metric._single else np.array(["x", "x", "y", "y"])
        metric.update(torch.tensor([0, 1, 1, 0]), torch.tensor([0, 1, 0, 0]), sensitive_features=groups)
        expected = abs(1 / 2 - 0 / 2)  # selection rate of the class 1: group 0 1/2, group 1 0/2
        value = metric.compute()
        assert float(value if isinstance(value, torch.Tensor) else value["DP"]) == expected


def test_metric_collection_compute_groups():
    d = cooc_data()
    ref = _directional_ref(d)
    mals_ref = biasamp.bias_amp_mals(attr_pred=d["attr_pred"],
                                     task_pred=d["task_pred"], attr_train=d["attr_train"], task_train=d["task_train"])
    train = CooccurrenceCounts.from_labels(d["attr_train"], d["task_train"], attr_classes=[0, 1, 2],
                                           task_classes=range(6))
    coll = MetricCollection({
        "a_to_t": BiasAmpDirectional(3, 6, train=train),
        "t_to_a": BiasAmpDirectional(3, 6, direction="T->A", train=train),
        "mals": BiasAmpMALS(3, 6, train=train),
    })
    for rows in np.array_split(np.arange(4000), 5):
        coll.update(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                    task_pred=_t(d["task_pred"][rows]))
    # the two directions count the same tables: one compute group; MALS counts others
    assert sorted(map(sorted, coll.compute_groups.values())) == [["a_to_t", "t_to_a"], ["mals"]]
    out = coll.compute()
    _exactly(out["a_to_t"], ref.a_to_t.value)
    _exactly(out["t_to_a"], ref.t_to_a.value)
    _exactly(out["mals"], mals_ref.value)
    coll.reset()
    assert all(float(s.abs().sum()) == 0 for m in coll.values() for s in m.metric_state.values())
    # without a training set (the default: cross-fitted over every row) each metric keeps its distinct rows, so
    # each is a compute group of its own (a group updates its first member only)
    coll = MetricCollection({"a_to_t": BiasAmpDirectional(3, 6), "t_to_a": BiasAmpDirectional(3, 6, direction="T->A")})
    for rows in np.array_split(np.arange(4000), 3):
        coll.update(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                    task_pred=_t(d["task_pred"][rows]))
    assert sorted(map(sorted, coll.compute_groups.values())) == [["a_to_t"], ["t_to_a"]]
    out = coll.compute()
    cross_fitted = biasamp.bias_amp_directional(d["attr"], d["task"], attr_pred=d["attr_pred"],
                                                task_pred=d["task_pred"])
    _exactly(out["a_to_t"], cross_fitted.a_to_t.value)
    _exactly(out["t_to_a"], cross_fitted.t_to_a.value)
    fair = MetricCollection({"all": GroupFairness(4, ["f", "m"]), "DP": GroupFairness(4, ["f", "m"], metrics="DP")})
    y_true, y_pred, sex, _ = fair_data()
    fair.update(y_true, y_pred, sensitive_features=sex)
    out = fair.compute()
    ref_f = biasamp.fairness_metrics(y_true, y_pred, sensitive_features=sex)
    assert list(fair.compute_groups.values()) == [["DP", "all"]]  # same tables: counted once
    _exactly(out["DP"], ref_f.overall["DP"])
    for name in biasamp.METRICS:  # a dict-valued metric is flattened into the collection's keys
        _exactly(out[f"all_{name}"], ref_f.overall[name])


def test_docs_torchmetrics_blocks_run():
    """The guide's torchmetrics blocks (```py: the README test, which needs no extra, skips them)."""
    from .test_export import run_guide

    ns = run_guide("PyTorch and torchmetrics")
    assert ns["values"]["biasamp_a_to_t"].item() == ns["ref"].a_to_t.value


# --------------------------------------------------------------------------- #
# two ranks (gloo, loopback)
# --------------------------------------------------------------------------- #
WORLD = 2


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _shard(n: int, rank: int, size: int = 300):
    """This rank's rows (an uneven, interleaved share), in batches."""
    rows = np.arange(n)[(np.arange(n) // 350) % WORLD == rank]
    return [rows[i: i + size] for i in range(0, len(rows), size)]


def _features(attr, task, seed):
    """Features that leak the attribute: a model trained on them can amplify A->T."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=(len(attr), 4))
    onehot = np.eye(3)[attr]
    return np.hstack([onehot, task * 0.5 + rng.normal(scale=1.0, size=task.shape), noise]).astype(np.float32)


def _training_loop(rank: int) -> dict:
    """A plain-PyTorch DDP loop (Lightning-style): train, then log BiasAmp-> per epoch from the metric."""
    d = cooc_data(n=4000)
    x = torch.from_numpy(_features(d["attr"], d["task"], seed=7))
    y = torch.from_numpy(d["task"].astype(np.float32))
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(x.shape[1], 6))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    metric = BiasAmpDirectional(3, 6, cross_fit=False)  # the plug-in: the function's value on both ranks' rows
    logged, predictions = [], []
    for _epoch in range(2):
        model.train()
        # DDP needs the same number of steps on every rank: an even share for training
        for rows in np.array_split(np.arange(rank, 4000, WORLD), 8):
            opt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x[rows]), y[rows])
            loss.backward()
            opt.step()
        model.eval()
        seen = []
        with torch.no_grad():
            for rows in _shard(4000, rank, size=250):
                task_pred = model(x[rows]) > 0
                metric.update(_t(d["attr"][rows]), y[rows].bool(), task_pred=task_pred)
                seen.append((rows, task_pred.numpy()))
        logged.append(metric.compute())  # what self.log(name, metric) reads at the end of an epoch
        metric.reset()
        predictions.append(seen)
    return {"logged": logged, "predictions": predictions}


def _worker(rank: int, port: int, outdir: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=120))  # a hang fails instead of stalling
    out: dict = {}
    try:
        d = cooc_data(n=4000)
        m = multi_data(n=3000)
        y_true, y_pred, sex, _ = fair_data(n=3000, soft=True)
        a_to_t = BiasAmpDirectional(3, 6)
        t_to_a = BiasAmpDirectional(3, 6, direction="T->A")
        mals = BiasAmpMALS(3, 6)
        multi = MultiBiasAmp(2, 5, combinations=list(_multi_ref(m).combinations), metric="Multi_G->M")
        fair = GroupFairness(4, ["f", "m"])
        for rows in _shard(4000, rank):
            for metric in (a_to_t, t_to_a):
                metric.update(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                              task_pred=_t(d["task_pred"][rows]))
            mals.update(attr_pred=_t(d["attr_pred"][rows]), task_pred=_t(d["task_pred"][rows]))
        for rows in _shard(2000, rank):
            for metric in (a_to_t, t_to_a, mals):
                metric.update_train(_t(d["attr_train"][rows]), _t(d["task_train"][rows]))
        for rows in _shard(3000, rank):
            multi.update(_t(m["attr"][rows]), _t(m["task"][rows]), attr_pred=_t(m["attr_pred"][rows]),
                         task_pred=_t(m["task_pred"][rows]))
            multi.update_train(_t(m["attr_train"][rows]), _t(m["task_train"][rows]))
            fair.update(_t(y_true[rows]), _t(y_pred[rows]), sensitive_features=sex[rows])
        out["a_to_t"], out["t_to_a"] = a_to_t.compute(), t_to_a.compute()
        out["directional"] = a_to_t.result()
        out["mals"], out["mals_result"] = mals.compute(), mals.result()
        out["multi"], out["multi_result"] = multi.compute(), multi.result()
        out["fair"], out["fair_result"] = fair.compute(), fair.result()
        out["local_n"] = float(a_to_t.directional_gram[0, 0])  # compute() unsynced the states again
        # a collection, synchronised as a whole (the plug-in: the counts of both ranks' batches add)
        coll = MetricCollection({"a_to_t": BiasAmpDirectional(3, 6, cross_fit=False),
                                 "t_to_a": BiasAmpDirectional(3, 6, direction="T->A", cross_fit=False)})
        for rows in _shard(4000, rank):
            coll.update(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                        task_pred=_t(d["task_pred"][rows]))
        out["collection"] = coll.compute()
        # the default (cross-fitted over every row of every rank: each rank's distinct rows gathered at compute);
        # each metric keeps its rows, so each is its own compute group
        coll = MetricCollection({"a_to_t": BiasAmpDirectional(3, 6), "t_to_a": BiasAmpDirectional(3, 6, direction="T->A")})
        for rows in _shard(4000, rank):
            coll.update(_t(d["attr"][rows]), _t(d["task"][rows]), attr_pred=_t(d["attr_pred"][rows]),
                        task_pred=_t(d["task_pred"][rows]))
        out["collection_cross_fitted"] = coll.compute()
        # a rank that counted other arguments: every rank raises the same error, none hangs
        bad = BiasAmpDirectional(3, 6)
        kw = dict(attr_pred=d["attr_pred"][:50]) if rank == 0 else {}
        bad.update(d["attr"][:50], d["task"][:50], task_pred=d["task_pred"][:50], **kw)
        try:
            bad.compute()
        except ValueError as exc:
            out["error"] = str(exc)
        # a rank without a single batch contributes zeros
        lonely = GroupFairness(4, ["f", "m"], metrics="DP")
        if rank == 1:
            lonely.update(y_true, y_pred, sensitive_features=sex)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torchmetrics: compute before update on rank 0
            out["lonely"] = lonely.compute()
        out["training"] = _training_loop(rank)
    finally:
        dist.destroy_process_group()
    with open(os.path.join(outdir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(out, f)


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("torchmetrics_dist")
    torch.multiprocessing.spawn(_worker, args=(_free_port(), str(outdir)), nprocs=WORLD, join=True)
    out = []
    for rank in range(WORLD):
        with open(outdir / f"rank{rank}.pkl", "rb") as f:
            out.append(pickle.load(f))
    return out


def test_two_ranks_cooccurrence_bit_identical(ranks):
    d = cooc_data(n=4000)
    ref = _directional_ref(d)
    no_train = _directional_ref(d, train=False)
    cross_fitted = biasamp.bias_amp_directional(d["attr"], d["task"], attr_pred=d["attr_pred"],
                                                task_pred=d["task_pred"])
    mals_ref = biasamp.bias_amp_mals(attr_pred=d["attr_pred"],
                                     task_pred=d["task_pred"], attr_train=d["attr_train"], task_train=d["task_train"])
    for out in ranks:
        _exactly(out["a_to_t"], ref.a_to_t.value)
        _exactly(out["t_to_a"], ref.t_to_a.value)
        assert_same(out["directional"], ref)
        _exactly(out["mals"], mals_ref.value)
        assert_same(out["mals_result"], mals_ref)
        _exactly(out["collection"]["a_to_t"], no_train.a_to_t.value)
        _exactly(out["collection"]["t_to_a"], no_train.t_to_a.value)
        _exactly(out["collection_cross_fitted"]["a_to_t"], cross_fitted.a_to_t.value)
        _exactly(out["collection_cross_fitted"]["t_to_a"], cross_fitted.t_to_a.value)
    # each rank counted its own uneven share, and compute() left its local state in place
    assert ranks[0]["local_n"] + ranks[1]["local_n"] == 4000
    assert ranks[0]["local_n"] != ranks[1]["local_n"]


def test_two_ranks_multi_and_soft_fairness(ranks):
    ref = _multi_ref(multi_data(n=3000))
    y_true, y_pred, sex, _ = fair_data(n=3000, soft=True)
    fair_ref = biasamp.fairness_metrics(y_true, y_pred, sensitive_features=sex)
    for out in ranks:
        _exactly(out["multi"], ref.g_to_m.value)
        _same_parts(out["multi_result"], ref)
        assert_same(out["fair_result"], fair_ref, rtol=1e-12, atol=1e-12)
        _exactly(out["lonely"], biasamp.fairness_metrics(y_true, y_pred, sensitive_features=sex,
                                                         metrics=["DP"]).overall["DP"])
    for name in biasamp.METRICS:  # every rank gets the same bits
        assert ranks[0]["fair"][name].item() == ranks[1]["fair"][name].item()


def test_two_ranks_inconsistent_arguments_raise_everywhere(ranks):
    for out in ranks:
        assert "different roles" in out["error"]


def test_training_loop_logs_the_functional_value_on_both_ranks(ranks):
    d = cooc_data(n=4000)
    logged = [out["training"]["logged"] for out in ranks]
    for epoch in range(2):
        task_pred = np.zeros(d["task"].shape, dtype=bool)
        covered = np.zeros(len(task_pred), dtype=bool)
        for out in ranks:
            for rows, pred in out["training"]["predictions"][epoch]:
                task_pred[rows] = pred
                covered[rows] = True
        assert covered.all()  # the two ranks' shards cover the test set exactly once
        assert 0 < task_pred.mean() < 1  # the model predicts both labels
        ref = biasamp.bias_amp_directional(d["attr"], d["task"], task_pred=task_pred, cross_fit=False)
        for values in logged:
            _exactly(values[epoch], ref.a_to_t.value)
    # the model changed between the epochs, and so did the value logged
    assert logged[0][0].item() != logged[0][1].item()


@pytest.mark.parametrize("cross_fit", [False, None])
def test_poisson_bootstrap_through_the_metric(cross_fit):
    """A metric built on an accumulator with n_boot carries the replicate tables as states, or, cross-fitted
    (the default), the distinct rows its bootstrap deals to the groups at the end: the same interval as the
    accumulator's, and (cross-fitted) as one batch's."""
    from biasamp.torchmetrics import BiasAmpDirectional

    rng = np.random.default_rng(0)
    attr = rng.integers(0, 2, 600)
    task = (rng.random((600, 3)) < 0.3 + 0.2 * attr[:, None]).astype(int)
    task_pred = np.where(rng.random((600, 3)) < 0.1, 1 - task, task)
    options = {"n_boot": 100, "random_state": 0, "cross_fit": cross_fit}
    metric = BiasAmpDirectional.from_accumulator(CooccurrenceAccumulator(2, 3, **options))
    acc = CooccurrenceAccumulator(2, 3, **options)
    for rows in np.array_split(np.arange(600), 3):
        metric.update(torch.as_tensor(attr[rows]), torch.as_tensor(task[rows]),
                      task_pred=torch.as_tensor(task_pred[rows]))
        acc.update(attr[rows], task[rows], task_pred=task_pred[rows])
    assert ("directional_boot" in metric.metric_state) is (cross_fit is False)
    ci = metric.bootstrap().ci
    assert ci == acc.bootstrap().ci
    if cross_fit is None:
        whole = CooccurrenceAccumulator(2, 3, **options).update(attr, task, task_pred=task_pred)
        assert ci == whole.bootstrap().ci
