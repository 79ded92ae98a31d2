"""The streamed audit selects rows with missing values (``missing="drop"``/``"group"``) as the in-memory audit does.

The same Parquet file, read in batches of 97 rows (and in parts on several workers), must give the report of
:func:`biasamp.audit` on the whole file: every summary value equal (hard labels: exactly, the cross-fitted ones
too), the same rows counted, the same class lists ("missing" where the in-memory audit puts it) and the same notes
saying what was dropped or grouped; a missing task value with ``missing="group"`` is the in-memory audit's error.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from biasamp.cli import main
from biasamp.report import audit
from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

FAST = {"n_boot": 30, "n_boot_multi": 5, "n_iter": 3, "attacker": "tabular", "progress": False}
NAMES = {"attr": "sex", "task": "label"}
MISSING_SEX = 40  # rows whose attribute "sex" is missing (of N)
N = 1200


def _frame(seed: int, n: int, missing_task: bool = False) -> pd.DataFrame:
    """Two attributes (``sex``: 0/1 with missing values, ``race``: complete), a binary task and its prediction."""
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    label = (rng.random(n) < 0.3 + 0.2 * sex).astype(int)
    frame = pd.DataFrame({
        "sex": pd.array(sex, dtype="Int64"),  # an integer column with nulls: read back as floats beside NaN
        "race": rng.choice(["a", "b", "c"], n),
        "label": pd.array(label, dtype="Int64"),
        "label_pred": np.where(rng.random(n) < 0.8, label, 1 - label),
        "sex_pred": np.where(rng.random(n) < 0.85, sex, 1 - sex),
        "age": rng.integers(18, 80, n),
    })
    frame.loc[rng.choice(n, MISSING_SEX, replace=False), "sex"] = pd.NA
    if missing_task:
        frame.loc[[5, 700], "label"] = pd.NA
    return frame


def _write(frame: pd.DataFrame, path) -> pd.DataFrame:
    """``frame`` as a Parquet file of small row groups; returns it as ``pandas.read_parquet`` reads it back."""
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=97)
    return pd.read_parquet(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("missing")
    return {"test": (root / "test.parquet", _write(_frame(3, N), root / "test.parquet")),
            "train": (root / "train.parquet", _write(_frame(4, 900), root / "train.parquet")),
            "task": (root / "task.parquet", _write(_frame(5, N, missing_task=True), root / "task.parquet"))}


def _streamed(path, train=None, **kw):
    columns = StreamColumns("sex", ("label",), ("label",), "sex_pred", ("label_pred",), features=("age",))
    return stream_audit(ParquetDataset.open(path), columns, train=None if train is None else ParquetDataset.open(train),
                        batch_size=97, names=NAMES, **{**FAST, **kw})


def _in_memory(frame, train=None, **kw):
    extra = {} if train is None else {"attr_train": train["sex"], "task_train": train["label"]}
    return audit(frame["sex"], frame["label"], attr_pred=frame["sex_pred"].rename("sex"), task_pred=frame["label_pred"],
                 features=frame[["age"]], names=NAMES, **extra, **{**FAST, **kw})


def _rows_notes(report) -> dict:
    return {s.key: [n for n in s.notes if n.startswith(("test rows:", "training rows:"))] for s in report.sections}


def assert_same(streamed, memory) -> None:
    """Same sections, summary values (exactly), rows and notes on the rows dropped or grouped."""
    assert [(s.key, s.status) for s in streamed.sections] == [(s.key, s.status) for s in memory.sections]
    cols = ["section", "metric", "direction", "n", "value"]
    pd.testing.assert_frame_equal(streamed.table[cols], memory.table[cols], check_exact=True)
    inputs = dict(streamed.inputs)
    inputs.pop("streamed")
    assert inputs == memory.inputs
    assert _rows_notes(streamed) == _rows_notes(memory)


@pytest.mark.parametrize("with_train", [False, True], ids=["cross-fitted", "train"])
@pytest.mark.parametrize("missing", ["drop", "group"])
def test_streamed_missing_equals_in_memory(files, missing, with_train):
    (path, frame), (train_path, train) = files["test"], files["train"]
    streamed = _streamed(path, train_path if with_train else None, missing=missing)
    memory = _in_memory(frame, train if with_train else None, missing=missing)
    assert {s.key for s in memory.sections if s.status == "ok"} >= {"directional", "mals", "fairness", "dpa", "scan"}
    assert_same(streamed, memory)
    rows = streamed.inputs["rows_test"]
    if missing == "drop":
        assert (rows["n_dropped"], rows["n_grouped"], streamed.inputs["n_test"]) == (MISSING_SEX, 0, N - MISSING_SEX)
        assert streamed.inputs["attribute_classes"] == ["0", "1"]
    else:  # the missing values are a class, after the integers, as in memory; every row counted
        assert (rows["n_dropped"], rows["n_grouped"], streamed.inputs["n_test"]) == (0, MISSING_SEX, N)
        assert streamed.inputs["attribute_classes"] == ["0", "1", "missing"]
        assert "missing" in streamed.section("fairness").tables["rates by group"].index.astype(str).tolist()
    assert f"{MISSING_SEX} rows with a missing" in " ".join(streamed.section("fairness").notes)
    if with_train:
        assert streamed.inputs["rows_train"]["n_rows"] == 900
        assert streamed.inputs["rows_train"]["n_dropped" if missing == "drop" else "n_grouped"] > 0


@pytest.mark.parametrize("missing", ["drop", "group"])
def test_parts_on_several_workers_give_the_same_report(files, missing):
    """The rows kept before each part key the bootstrap groups, the sample and the scan's rows: one pass's report."""
    path, frame = files["test"]
    one = _streamed(path, missing=missing)
    parts = _streamed(path, missing=missing, n_jobs=2)  # 8 parts of the 13 batches, on 2 loky processes
    pd.testing.assert_frame_equal(parts.table, one.table, check_exact=True)  # the intervals too
    assert parts.inputs == one.inputs
    assert_same(parts, _in_memory(frame, missing=missing))


def test_missing_task_value(files):
    """``drop``: the rows with a missing task value are left out; ``group`` groups only the attribute: an error."""
    path, frame = files["task"]
    streamed, memory = _streamed(path, missing="drop"), _in_memory(frame, missing="drop")
    assert_same(streamed, memory)
    assert streamed.inputs["rows_test"]["n_dropped"] == MISSING_SEX + 2 - int(frame.loc[[5, 700], "sex"].isna().sum())
    for run in (lambda: _in_memory(frame, missing="group"), lambda: _streamed(path, missing="group")):
        with pytest.raises(ValueError, match=r"task contains NaN/inf/missing values \(rows 5"):
            run()


def test_every_row_dropped_is_an_error(tmp_path):
    frame = _frame(6, 200)
    frame["sex"] = pd.NA
    path = tmp_path / "empty.parquet"
    _write(frame.astype({"sex": "Int64"}), path)
    with pytest.raises(ValueError, match="no test row left to count: missing='drop' dropped every one of the 200"):
        _streamed(path, missing="drop")


def test_cli_stream_missing_drop_equals_no_stream(files, tmp_path):
    """Two attributes, the missing values in one: each attribute's audit drops its own rows, streamed as in memory."""
    path, _ = files["test"]
    values = {}
    for flag in ("--stream", "--no-stream"):
        out = tmp_path / f"{flag}.json"
        res = CliRunner().invoke(main, ["audit", str(path), "--attr", "sex", "--attr", "race", "--task", "label",
                                        "--task-pred", "label_pred", "--missing", "drop", flag, "--batch-size", "97",
                                        "--exclude", "dpa", "--exclude", "leakage", "--n-boot", "30", "--no-progress",
                                        "--json", str(out)])
        assert res.exit_code == 0, res.output
        report = json.loads(out.read_text(encoding="utf-8"))
        summary = pd.DataFrame(report["summary"]["rows"], columns=report["summary"]["columns"])
        values[flag] = summary[["section", "metric", "direction", "n", "value"]].values.tolist()
    assert values["--stream"] == values["--no-stream"]
    assert {s for s, *_ in values["--stream"]} >= {"fairness[sex]", "fairness[race]"}
    n = {s: k for s, _, _, k, _ in values["--stream"]}
    assert n["fairness[sex]"] == N - MISSING_SEX and n["fairness[race]"] == N  # per attribute


@pytest.mark.parametrize("missing", ["drop", "group"])
def test_multilabel_with_training_set_and_prepass(tmp_path, missing):
    """A multi-label task, a training set with missing attributes too, the multi-attribute pre-pass (combinations
    "observed"): the training rows are selected on their own, every pass on the rows kept."""
    from biasamp.datasets import make_amplification_demo

    d = make_amplification_demo(n_train=800, n_test=900, random_state=5)
    tasks = list(d.task.columns)
    test = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_").astype(float),
                      d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    train = pd.concat([d.attr_train.rename("attr").astype(object), d.task_train.add_prefix("task_")], axis=1)
    rng = np.random.default_rng(1)
    test.loc[rng.choice(900, 30, replace=False), "attr"] = None
    train.loc[rng.choice(800, 20, replace=False), "attr"] = None
    if missing == "drop":  # a missing task entry drops its row (with "group" it is an error, tested above)
        test.loc[rng.choice(900, 10, replace=False), f"task_{tasks[0]}"] = np.nan
    test, train = _write(test, tmp_path / "test.parquet"), _write(train, tmp_path / "train.parquet")
    options = {**FAST, "combinations": "observed", "missing": missing, "names": {"attr": "attr", "task": "task"}}
    columns = StreamColumns("attr", tuple(f"task_{t}" for t in tasks), tuple(tasks), "attr_pred",
                            tuple(f"task_{t}_pred" for t in tasks))
    streamed = stream_audit(ParquetDataset.open(tmp_path / "test.parquet"), columns, batch_size=97,
                            train=ParquetDataset.open(tmp_path / "train.parquet"), **options)

    def task(frame, suffix=""):
        out = frame[[f"task_{t}{suffix}" for t in tasks]]
        return out.set_axis(tasks, axis=1)

    memory = audit(test["attr"], task(test), attr_pred=test["attr_pred"].rename("attr"), task_pred=task(test, "_pred"),
                   attr_train=train["attr"], task_train=task(train), **options)
    assert memory.section("multi").status == "ok"
    assert_same(streamed, memory)
    assert streamed.inputs["rows_train"]["n_dropped" if missing == "drop" else "n_grouped"] == 20


@pytest.mark.parametrize("missing", ["raise", "drop"])
def test_rows_of_weight_zero_are_left_out_as_in_memory(tmp_path, missing):
    """Rows of weight 0 are left out of the streamed audit as of the in-memory one: the same rows counted (n), the
    same note ("zero-weight rows dropped"), the same DPA/LA sample and scan rows; on one worker and on two."""
    frame = _frame(6, N)
    if missing == "raise":
        frame["sex"] = frame["sex"].fillna(0)
    frame["w"] = np.random.default_rng(7).integers(0, 3, N).astype(float)
    path = tmp_path / "w.parquet"
    frame = _write(frame, path)
    columns = StreamColumns("sex", ("label",), ("label",), "sex_pred", ("label_pred",), weight="w", features=("age",))
    streamed = stream_audit(ParquetDataset.open(path), columns, batch_size=97, names=NAMES, missing=missing, **FAST)
    memory = audit(frame["sex"], frame["label"], attr_pred=frame["sex_pred"].rename("sex"),
                   task_pred=frame["label_pred"], features=frame[["age"]], sample_weight=frame["w"], names=NAMES,
                   missing=missing, **FAST)
    assert_same(streamed, memory)
    zero = int(((frame["w"] == 0) & (frame["sex"].notna() if missing == "drop" else True)).sum())  # of rows kept
    assert streamed.inputs["rows_test"]["n_zero_weight"] == zero > 0
    assert streamed.inputs["n_test"] == memory.inputs["n_test"] < N - zero + 1
    cols = ["section", "metric", "direction", "value", "ci_low", "ci_high"]
    for section in ("dpa", "scan"):  # the sample and the scan rows are the in-memory ones: their intervals too
        pd.testing.assert_frame_equal(streamed.table[streamed.table.section == section][cols].reset_index(drop=True),
                                      memory.table[memory.table.section == section][cols].reset_index(drop=True))
    parts = stream_audit(ParquetDataset.open(path), columns, batch_size=97, names=NAMES, missing=missing, n_jobs=2,
                         **FAST)
    pd.testing.assert_frame_equal(parts.table, streamed.table, check_exact=True)
