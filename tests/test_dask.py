"""biasamp.dask: Dask arrays/DataFrames give the in-memory results, locally and on a 2-worker LocalCluster."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import biasamp
import biasamp.dask as bdask

from .test_accumulators import assert_same, cooc_data, fair_data, multi_data


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes, one thread each, loopback only, no dashboard."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, host="127.0.0.1")
    yield cl
    cl.close()


@pytest.fixture(params=["threads", "cluster"])
def scheduler(request):
    """Run the test body on the local threaded scheduler, then on the LocalCluster."""
    if request.param == "threads":
        with dask.config.set(scheduler="threads"):
            yield None
    else:
        cl = request.getfixturevalue("cluster")
        with distributed.Client(cl) as client:
            yield client


def arr(x, chunks):
    return da.from_array(np.asarray(x), chunks=(chunks,) + ((-1,) if np.ndim(x) == 2 else ()))


# --------------------------------------------------------------------------- #
# co-occurrence
# --------------------------------------------------------------------------- #
def test_directional_dask_arrays(scheduler):
    d = cooc_data(n=3000)
    ref = biasamp.bias_amp_directional(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"],
                                       attr_train=d["attr_train"], task_train=d["task_train"])
    res = bdask.bias_amp_directional(
        arr(d["attr"], 700), da.from_array(d["task"], chunks=(700, 2)),  # column chunks are merged
        attr_pred=arr(d["attr_pred"], 1000), task_pred=arr(d["task_pred"], 700),  # other row chunks: rechunked
        attr_train=arr(d["attr_train"], 400), task_train=arr(d["task_train"], 400), split_every=2,
    )
    assert_same(res, ref)
    if scheduler is not None:  # the work really ran on the two worker processes
        assert len(scheduler.scheduler_info()["workers"]) == 2


def test_directional_soft_and_mals(scheduler):
    d = cooc_data(n=2000, soft=True)
    # the plug-in: the counts of the partitions add (cross-fitted, every partition is split on its own)
    ref = biasamp.bias_amp_directional(d["attr"], d["task"], task_pred=d["task_pred"], cross_fit=False)
    res = bdask.bias_amp_directional(arr(d["attr"], 300), arr(d["task"], 300), task_pred=arr(d["task_pred"], 300),
                                     cross_fit=False)
    assert_same(res, ref, rtol=1e-12, atol=1e-12)
    d = cooc_data(n=2000)
    ref = biasamp.bias_amp_mals(attr_pred=d["attr_pred"], task_pred=d["task_pred"], attr_train=d["attr_train"], task_train=d["task_train"])
    res = bdask.bias_amp_mals(attr_pred=arr(d["attr_pred"], 512), task_pred=arr(d["task_pred"], 512), attr_train=arr(d["attr_train"], 256), task_train=arr(d["task_train"], 256))
    assert_same(res, ref)


def test_directional_dask_dataframes_with_names(scheduler):
    d = cooc_data(n=2500)
    names = np.array(["man", "woman", "other"])
    tasks = [f"t{j}" for j in range(6)]
    attr = pd.Series(names[d["attr"]], name="gender")
    task = pd.DataFrame(d["task"], columns=tasks)
    task_pred = pd.DataFrame(d["task_pred"].astype(int), columns=tasks)
    ref = biasamp.bias_amp_directional(attr, task, task_pred=task_pred, cross_fit=False)
    res = bdask.bias_amp_directional(dd.from_pandas(attr, npartitions=4), dd.from_pandas(task, npartitions=4),
                                     task_pred=dd.from_pandas(task_pred, npartitions=4), cross_fit=False)
    assert res.a_to_t.pairs["task"].tolist()[:6] == tasks
    assert_same(res, ref)


# --------------------------------------------------------------------------- #
# fairness and multi-attribute
# --------------------------------------------------------------------------- #
def test_fairness_dask_dataframe_intersectional(scheduler):
    y_true, y_pred, sex, race = fair_data(n=3000)
    frame = pd.DataFrame({"y": y_true, "p": y_pred, "sex": sex, "race": race})
    ref = biasamp.fairness_metrics(frame["y"], frame["p"], sensitive_features=frame[["sex", "race"]])
    ddf = dd.from_pandas(frame, npartitions=5)
    res = bdask.fairness_metrics(ddf["y"], ddf["p"], sensitive_features=ddf[["sex", "race"]], split_every=3)
    assert res.groups == ref.groups
    assert_same(res, ref)
    ref1 = biasamp.fairness_metrics(y_true, y_pred, sensitive_features=sex)
    assert_same(bdask.fairness_metrics(arr(y_true, 999), arr(y_pred, 999), sensitive_features=arr(sex, 999)), ref1)


@pytest.mark.parametrize("mode", ["observed", "all"])
def test_multi_two_passes_on_dask(scheduler, mode):
    d = multi_data(n=2400)
    extra = dict(max_size=3, min_support=25) if mode == "all" else {}
    ref = biasamp.multi_bias_amp(d["attr"], d["task"], attr_pred=d["attr_pred"], task_pred=d["task_pred"],
                                 attr_train=d["attr_train"], task_train=d["task_train"],
                                 combinations=mode, **extra)
    res = bdask.multi_bias_amp(arr(d["attr"], 500), arr(d["task"], 500), attr_pred=arr(d["attr_pred"], 500),
                               task_pred=arr(d["task_pred"], 500), attr_train=arr(d["attr_train"], 800),
                               task_train=arr(d["task_train"], 800), combinations=mode, **extra)
    assert res.selection == ref.selection
    assert_same(res, ref)


def test_multi_fixed_combinations_one_pass():
    d = multi_data(n=1200)
    combos = [(0,), (1,), (0, 1), (3, 4)]
    ref = biasamp.multi_bias_amp(d["attr"], d["task"], task_pred=d["task_pred"], max_size=2, cross_fit=False)
    res = bdask.multi_bias_amp(arr(d["attr"], 300), arr(d["task"], 300), task_pred=arr(d["task_pred"], 300),
                               combinations=combos, cross_fit=False)
    assert res.combinations == tuple(combos)
    table = ref.g_to_m.table.set_index(["attr", "combination"])
    mine = res.g_to_m.table.set_index(["attr", "combination"])
    pd.testing.assert_frame_equal(mine, table.loc[mine.index])


# --------------------------------------------------------------------------- #
# DPA / LA on the cluster through joblib's dask backend
# --------------------------------------------------------------------------- #
def test_dpa_and_leakage_on_cluster_equal_local_run(cluster):
    from biasamp.datasets import make_amplification_demo

    demo = make_amplification_demo()
    kw = dict(attr_pred=demo.attr_pred, task_pred=demo.task_pred, attacker="tabular", n_iter=4,
              random_state=7, progress=False)
    local = biasamp.dpa(demo.attr, demo.task, **kw)
    with pytest.raises(ValueError, match="needs a dask.distributed Client"):
        bdask.dpa(demo.attr, demo.task, **kw)
    with distributed.Client(cluster):
        on_dask = bdask.dpa(demo.attr, demo.task, **kw)
        la_dask = bdask.leakage_amplification(demo.attr, demo.task, task_pred=demo.task_pred, attacker="tabular",
                                              n_iter=3, random_state=3, progress=False)
    assert_same(on_dask, local)
    la_local = biasamp.leakage_amplification(demo.attr, demo.task, task_pred=demo.task_pred, attacker="tabular",
                                             n_iter=3, random_state=3, progress=False)
    assert_same(la_dask, la_local)


# --------------------------------------------------------------------------- #
# input errors; the optional dependency stays optional
# --------------------------------------------------------------------------- #
def test_input_errors():
    d = cooc_data(n=300)
    with pytest.raises(TypeError, match="task must be a dask array"):
        bdask.bias_amp_directional(arr(d["attr"], 100), d["task"], task_pred=arr(d["task_pred"], 100))
    attr = dd.from_pandas(pd.Series(d["attr"]), npartitions=3)
    task = dd.from_pandas(pd.DataFrame(d["task"]), npartitions=2)
    with pytest.raises(ValueError, match="same row partitions"):
        bdask.bias_amp_directional(attr, task, task_pred=task)
    with pytest.raises(ValueError, match="split_every"):
        bdask.bias_amp_directional(arr(d["attr"], 100), arr(d["task"], 100), task_pred=arr(d["task_pred"], 100),
                                   split_every=1)
    with pytest.raises(ValueError, match="attr contains labels"):
        bdask.bias_amp_directional(arr(d["attr"], 100), arr(d["task"], 100), task_pred=arr(d["task_pred"], 100),
                                   attr_classes=[0, 1])


def test_import_biasamp_does_not_import_dask_or_torch():
    code = "import sys, biasamp, biasamp.accumulators; assert not {'dask', 'distributed', 'torch'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # inside dask's parquet reader (pandas 3.1)
def test_parquet_columns_of_one_dataset(tmp_path, scheduler):
    """Narrow column selections of one read_parquet stay aligned (the optimizer may fuse partitions)."""
    pytest.importorskip("pyarrow")
    d = cooc_data(n=4000)
    tasks = [f"t{j}" for j in range(6)]
    frame = pd.DataFrame({"g": d["attr"], "gp": d["attr_pred"]})
    for j, name in enumerate(tasks):
        frame[name] = d["task"][:, j]
        frame[f"p{j}"] = d["task_pred"][:, j]
    for i, rows in enumerate(np.array_split(np.arange(4000), 4)):
        frame.iloc[rows].to_parquet(tmp_path / f"part{i}.parquet", index=False)
    ddf = dd.read_parquet(str(tmp_path))
    preds = ddf[[f"p{j}" for j in range(6)]].rename(columns={f"p{j}": t for j, t in enumerate(tasks)})
    res = bdask.bias_amp_directional(ddf["g"], ddf[tasks], attr_pred=ddf["gp"], task_pred=preds, cross_fit=False)
    ref = biasamp.bias_amp_directional(d["attr"], pd.DataFrame(d["task"], columns=tasks), attr_pred=d["attr_pred"],
                                       task_pred=pd.DataFrame(d["task_pred"], columns=tasks), cross_fit=False)
    assert_same(res, ref)
