"""The streamed audit on several worker processes (``stream_audit(..., n_jobs=k)``, ``biasamp audit --jobs``).

Each pass is split into contiguous ranges of rows, cut where a batch of the whole pass starts; every range is
counted in a worker from its global row offset (its rows' Poisson bootstrap weights and sample keys are those of
one pass) and the parts are merged in order. So the report must be *the same* whatever the number of workers:
the JSON compared byte for byte (hard labels, and weights whose sums are exact), to 1e-12 where float sums
are reordered (general weights, probabilities).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import biasamp.report._stream as stream_mod
from biasamp.cli import main
from biasamp.datasets import make_amplification_demo
from biasamp.report import AuditConfig, Report
from biasamp.report._stream import ParquetDataset, StreamColumns, StreamReadError, _Reservoir, stream_audit

FAST = {"n_boot": 30, "n_boot_multi": 5, "n_iter": 3, "attacker": "tabular", "progress": False}
CLI_FAST = ["--n-boot", "30", "--n-iter", "3", "--attacker", "tabular", "--no-progress", "-q"]
TASKS = ["kitchen", "skateboard", "laptop", "umbrella", "dog", "tie"]


# --------------------------------------------------------------------------- #
# data: uneven files, small row groups, so that ranges start inside files and row groups
# --------------------------------------------------------------------------- #
def _write(frame: pd.DataFrame, folder, sizes, row_group: int = 97) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    bounds = np.cumsum([0, *sizes])
    assert bounds[-1] == len(frame)
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        pq.write_table(pa.Table.from_pandas(frame.iloc[lo:hi], preserve_index=False),
                       folder / f"part-{i:02d}.parquet", row_group_size=row_group)


@pytest.fixture(scope="module")
def demo():
    return make_amplification_demo(n_train=1500, n_test=1000, random_state=5)


def _test_frame(d) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    frame = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_"),
                       d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    frame["w"] = rng.integers(0, 8, len(frame)) * 0.25  # exact sums in any order; zero weights too
    frame["wf"] = rng.gamma(2.0, 0.5, len(frame))  # general weights: sums agree to rounding
    return frame


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, demo):
    root = tmp_path_factory.mktemp("parallel")
    _write(_test_frame(demo), root / "test", [300, 450, 0, 250])  # an empty file too
    train = pd.concat([demo.attr_train.rename("attr"), demo.task_train.add_prefix("task_")], axis=1)
    _write(train, root / "train", [700, 800], row_group=128)
    return root


def _columns(weight=None, tasks=TASKS) -> StreamColumns:
    return StreamColumns("attr", tuple(f"task_{t}" for t in tasks), tuple(tasks), "attr_pred",
                         tuple(f"task_{t}_pred" for t in tasks), weight=weight)


def _run(folder, columns, n_jobs, train=None, **kw):
    return stream_audit(ParquetDataset.open(folder), columns, train=None if train is None else ParquetDataset.open(train),
                        n_jobs=n_jobs, **{**FAST, **kw})


@pytest.fixture
def parts(monkeypatch):
    """The number of parts of every pass (records that the work was split)."""
    seen = []
    real = stream_mod._run_parts

    def spy(func, jobs, rows, workers, bar):
        seen.append((func.__name__, len(jobs), workers))
        return real(func, jobs, rows, workers, bar)

    monkeypatch.setattr(stream_mod, "_run_parts", spy)
    return seen


# --------------------------------------------------------------------------- #
# the same report whatever the number of workers
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("batch_size", [64, 1000])
def test_two_workers_give_the_report_of_one(dataset, parts, batch_size):
    """Every section: the classes pass, the multi-attribute pre-pass, the Poisson bootstrap and the DPA/LA sample."""
    kw = {"batch_size": batch_size, "dpa_rows": 400}
    one = _run(dataset / "test", _columns(), 1, dataset / "train", **kw)
    assert [p[1] for p in parts] == [1, 1, 1]
    parts.clear()
    two = _run(dataset / "test", _columns(), 2, dataset / "train", **kw)
    # a few parts per worker (stream_mod.PARTS_PER_WORKER: progress moves as each ends), cut at batch starts
    assert [name for name, _, _ in parts] == ["_classes_part", "_collect_part", "_count_part"]
    assert all(2 <= n <= 2 * stream_mod.PARTS_PER_WORKER and workers == 2 for _, n, workers in parts)
    if batch_size == 64:  # batches small enough to cut 8 parts
        assert [n for _, n, _ in parts] == [2 * stream_mod.PARTS_PER_WORKER] * 3
    assert two.to_json() == one.to_json()
    statuses = {s.key: s.status for s in one.sections}
    assert all(statuses[k] == "ok" for k in ("directional", "mals", "multi", "fairness", "dpa", "leakage"))
    assert one.inputs["streamed"]["rows_sampled"] == 400 and one.inputs["n_test"] == 1000
    assert bool(one.table.loc[one.table["section"] == "multi", "ci_low"].notna().all())
    three = _run(dataset / "test", _columns(), 3, dataset / "train", **kw)  # more workers than cores here
    assert three.to_json() == one.to_json()


def test_weighted_without_training_set(dataset):
    """Sample weights (with zeros), the multi-attribute pre-pass on the weighted test rows: identical."""
    one = _run(dataset / "test", _columns("w"), 1, batch_size=100, dpa_rows=300)
    two = _run(dataset / "test", _columns("w"), 2, batch_size=100, dpa_rows=300)
    assert two.to_json() == one.to_json()
    assert one.inputs["weighted"] and one.section("multi").status == "ok"
    # general weights: the sums of two ranges are added in another order, so equal to rounding
    one, two = (_run(dataset / "test", _columns("wf"), k, batch_size=100, dpa_rows=300) for k in (1, 2))
    _assert_close(two, one)


def test_weighted_with_classes_given(dataset, parts):
    """No classes pass: the workers' offsets among the rows of positive weight come from a pass over the weights."""
    kw = {"batch_size": 100, "dpa_rows": 0, "attr_classes": ["man", "woman"]}
    one = _run(dataset / "test", _columns("w"), 1, **kw)
    parts.clear()
    two = _run(dataset / "test", _columns("w"), 2, **kw)
    assert [name for name, *_ in parts] == ["_classes_part", "_collect_part", "_count_part"]
    assert two.to_json() == one.to_json()


def test_rows_of_weight_zero_change_nothing(tmp_path, demo):
    """Rows of weight 0 inserted anywhere leave every count-based value and interval as they were, on 1 or 2
    workers: the Poisson weights are keyed by a row's position among the rows of positive weight."""
    frame = _test_frame(demo)
    frame["w"] = frame["w"].where(frame["w"] > 0, 0.5)  # no zero weight
    padded = pd.concat([frame.iloc[:1], frame.iloc[[3, 9, 400]].assign(w=0.0), frame.iloc[1:700],
                        frame.iloc[[5]].assign(w=0.0), frame.iloc[700:]], ignore_index=True)
    _write(frame, tmp_path / "plain", [500, 500])
    _write(padded, tmp_path / "padded", [300, 704])
    cols = ["section", "metric", "direction", "value", "ci_low", "ci_high", "p_value"]
    # a training set fixes the signs: without one they are cross-fitted within each batch, and the batches of the
    # padded files are cut elsewhere (the batch is the unit of the split)
    kw = {"batch_size": 64, "dpa_rows": 0, "sections": ["directional", "mals", "multi", "fairness"],
          "train": tmp_path / "plain"}
    ref = _run(tmp_path / "plain", _columns("w"), 1, **kw).table[cols]
    for k in (1, 2):
        pd.testing.assert_frame_equal(_run(tmp_path / "padded", _columns("w"), k, **kw).table[cols], ref)


def _assert_close(a: Report, b: Report) -> None:
    cols = ["section", "metric", "direction", "n", "note", "reading"]
    pd.testing.assert_frame_equal(a.table[cols], b.table[cols])
    for c in ("value", "ci_low", "ci_high", "p_value"):
        np.testing.assert_allclose(a.table[c].astype(float), b.table[c].astype(float), rtol=1e-12, atol=1e-12)


def test_probabilities(tmp_path, demo):
    rng = np.random.default_rng(3)
    frame = _test_frame(demo)
    for t in TASKS:
        frame[f"task_{t}_pred"] = np.clip(0.8 * frame[f"task_{t}_pred"] + 0.2 * rng.random(len(frame)), 0, 1)
    _write(frame, tmp_path / "soft", [600, 400])
    one, two = (_run(tmp_path / "soft", _columns(), k, batch_size=128) for k in (1, 2))
    assert one.inputs["task_pred"] == "soft"
    _assert_close(two, one)


def test_single_label_task(tmp_path, demo):
    """One task column: pass 1 finds its classes in both ranges; the differential-fairness section is counted."""
    frame = pd.DataFrame({"attr": demo.attr, "attr_pred": demo.attr_pred, "y": demo.task["dog"],
                          "y_pred": demo.task_pred["dog"]})
    _write(frame, tmp_path / "one", [500, 500])
    columns = StreamColumns("attr", ("y",), ("dog",), "attr_pred", ("y_pred",))
    one, two = (_run(tmp_path / "one", columns, k, batch_size=50) for k in (1, 2))
    assert two.to_json() == one.to_json()
    assert one.section("differential").status == "ok" and one.inputs["task_classes"] == ["0", "1"]


# --------------------------------------------------------------------------- #
# errors: the error one pass would meet first, with the same type, message and location
# --------------------------------------------------------------------------- #
def test_section_errors_are_those_of_one_pass(tmp_path, demo):
    frame = _test_frame(demo)
    frame["attr_pred"] = frame["attr_pred"].astype(object)
    frame.loc[620, "attr_pred"] = "nobody"  # in the second range of two (file part-01, rows 500-999)
    frame.loc[905, "attr_pred"] = "no one"  # and later
    _write(frame, tmp_path / "d", [500, 500])
    one, two = (_run(tmp_path / "d", _columns(), k, batch_size=64, dpa_rows=0) for k in (1, 2))
    assert two.to_json() == one.to_json()
    message = one.section("directional").message
    assert "['nobody']" in message and message.endswith("(in part-01.parquet, rows 64-127)")
    assert one.section("fairness").status == "ok"
    frame.loc[10, "attr_pred"] = "first"  # now also in the first range: that one is reported
    _write(frame, tmp_path / "e", [500, 500])
    two = _run(tmp_path / "e", _columns(), 2, batch_size=64, dpa_rows=0)
    assert two.section("directional").message.endswith("(in part-00.parquet, rows 0-63)")
    # errors="raise": the same exception, raised in the parent
    raised = []
    for k in (1, 2):
        with pytest.raises(ValueError, match="nobody") as info:
            _run(tmp_path / "d", _columns(), k, batch_size=64, dpa_rows=0, errors="raise")
        raised.append(str(info.value))
    assert raised[0] == raised[1] and "['nobody']" in raised[0]


def test_unreadable_row_group_in_a_worker(tmp_path, demo):
    folder = tmp_path / "bad"
    _write(_test_frame(demo), folder, [500, 500], row_group=250)
    path = folder / "part-01.parquet"
    meta = pq.read_metadata(path)
    offset = meta.row_group(1).column(0).data_page_offset  # the second row group's first page header
    raw = bytearray(path.read_bytes())
    raw[offset:offset + 40] = b"\xff" * 40
    path.write_bytes(bytes(raw))
    messages = []
    for k in (1, 2):
        with pytest.raises(StreamReadError) as info:
            _run(folder, _columns(), k, batch_size=64)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and messages[0].startswith(f"cannot read {path}")


def test_n_jobs_is_checked():
    for bad in (0, -2, 1.5, True):
        with pytest.raises((ValueError, TypeError), match="n_jobs"):
            AuditConfig(n_jobs=bad)
    assert AuditConfig(n_jobs=-1).n_jobs == -1 and AuditConfig().n_jobs == 1
    assert "n_jobs" not in AuditConfig(n_jobs=4).report_options()  # the report does not depend on it


# --------------------------------------------------------------------------- #
# the pieces: ranges cut at batch starts, reservoirs merged in order
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def uneven(tmp_path_factory):
    """Files of 130, 0, 1, 257 and 64 rows in row groups of 50 (the last of each file shorter)."""
    folder = tmp_path_factory.mktemp("uneven")
    start = 0
    for i, n in enumerate([130, 0, 1, 257, 64]):
        pq.write_table(pa.table({"i": np.arange(start, start + n)}), folder / f"f{i}.parquet", row_group_size=50)
        start += n
    return ParquetDataset.open(folder)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 7), batch_size=st.integers(1, 300))
def test_ranges_are_the_batches_of_one_pass(uneven, n, batch_size):
    whole = [(b.column(0).to_pylist(), where) for b, where in uneven.batches(["i"], batch_size)]
    ranges = uneven.ranges(n, batch_size)
    assert 1 <= len(ranges) <= n and [r.index for r in ranges] == list(range(len(ranges)))
    assert [r.offset for r in ranges] == list(np.cumsum([0] + [r.num_rows for r in ranges])[:-1])
    assert sum(r.num_rows for r in ranges) == uneven.num_rows == 452
    for r in ranges:
        for f, lo, hi in r.pieces:  # cut at the start of a batch of the file, or at its end
            assert lo % batch_size == 0 and (hi % batch_size == 0 or hi == uneven.file_rows[f]) and lo < hi
    parts = [(b.column(0).to_pylist(), where) for r in ranges for b, where in uneven.batches(["i"], batch_size, rows=r)]
    assert parts == whole
    assert [v for rows, _ in whole for v in rows] == list(range(452))
    files = [where.split(",")[0] for _, where in whole]
    for (rows, _), file, following in zip(whole, files, [*files[1:], None]):  # a file's last batch may be shorter
        assert len(rows) == batch_size or file != following


def test_ranges_of_equal_size(uneven):
    sizes = [r.num_rows for r in uneven.ranges(4, 1)]
    assert sizes == [113, 113, 113, 113]
    # files smaller than a batch are joined into one batch (never a range per file)
    assert [r.num_rows for r in uneven.ranges(5, 1000)] == [452]
    # batches of 100: f0 100 | f0's 30 + f2's 1 | f3 100, 100 | f3's 57 | f4's 64 (57 + 64 > 100)
    assert uneven.batch_starts(100).tolist() == [0, 100, 131, 231, 331, 388]
    assert [r.num_rows for r in uneven.ranges(5, 100)] == [100, 31, 100, 157, 64]


def _stream(n: int) -> list:
    return pa.table({"i": np.arange(n)}).to_batches(max_chunksize=37)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 1500), size=st.integers(0, 300), cuts=st.lists(st.integers(0, 1500), max_size=4),
       seed=st.integers(0, 2**32 - 1))
def test_reservoirs_of_ranges_merge_to_the_reservoir_of_all(n, size, cuts, seed):
    table = pa.table({"i": np.arange(n)})
    whole = _Reservoir(size, seed)
    for b in table.to_batches(max_chunksize=37):
        whole.add(b)
    bounds = sorted({0, n, *(c for c in cuts if c < n)})
    merged = None
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        part = _Reservoir(size, seed, offset=lo)
        for b in table.slice(lo, hi - lo).to_batches(max_chunksize=29):
            part.add(b)
        merged = part if merged is None else merged.merge(part)
    if merged is None:
        return
    assert np.array_equal(merged.sample()["i"].to_numpy(), whole.sample()["i"].to_numpy())
    assert len(merged.sample()) == min(n, size) and merged.seen == whole.seen == n


# --------------------------------------------------------------------------- #
# progress, the command line, dask.distributed
# --------------------------------------------------------------------------- #
def test_progress_bars_count_every_test_row(dataset, monkeypatch):
    bars = []

    class Recorder:
        def __init__(self, *, total, desc, disable, **kw):
            self.total, self.desc, self.n = total, desc, 0
            bars.append(self)

        def update(self, n):
            self.n += n

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(stream_mod, "tqdm", Recorder)
    _run(dataset / "test", _columns(), 2, dataset / "train", batch_size=64, sections=["directional", "multi"],
         progress=True)
    # the test rows (1,000; the training rows, 1,500, are read but not counted), except the pre-pass that reads
    # only training rows, which says so
    assert [(b.desc, b.total, b.n) for b in bars] == [("classes", 1000, 1000),
                                                      ("combinations (training rows)", 1500, 1500),
                                                      ("counting", 1000, 1000)]


def test_cli_jobs(dataset, tmp_path):
    runner = CliRunner()
    out = {}
    for jobs in ("1", "2"):
        path = tmp_path / f"{jobs}.json"
        res = runner.invoke(main, ["audit", str(dataset / "test"), "--train", str(dataset / "train"), "--stream",
                                   "--batch-size", "100", "--dpa-rows", "500", "--jobs", jobs, *CLI_FAST,
                                   "--json", str(path)])
        assert res.exit_code == 0, res.output
        out[jobs] = path.read_bytes()
    assert out["1"] == out["2"]
    assert json.loads(out["1"])["inputs"]["streamed"]["rows_sampled"] == 500
    for bad in ("0", "-3"):
        res = runner.invoke(main, ["audit", str(dataset / "test"), "--stream", "--jobs", bad])
        assert res.exit_code == 2 and "--jobs" in res.output


def test_dask_distributed_cluster(dataset):
    """joblib's dask backend: the ranges run on the workers of a LocalCluster (same machine, same paths)."""
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    one = _run(dataset / "test", _columns(), 1, dataset / "train", batch_size=64, dpa_rows=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, host="127.0.0.1")
    with cluster, distributed.Client(cluster), parallel_config(backend="dask"):
        on_dask = _run(dataset / "test", _columns(), -1, dataset / "train", batch_size=64, dpa_rows=400)
    assert on_dask.to_json() == one.to_json()
