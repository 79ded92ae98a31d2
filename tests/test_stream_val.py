"""Threshold calibration in the streamed audit (``biasamp audit --stream --val``, ``stream_audit(*_val_scores=)``).

The validation scores are held in memory; the ground truth's positive rate of each label is counted over the
streamed rows (the training rows, else the test rows, after the row selection of ``missing=`` and of the weights);
every batch's scores are thresholded before the families count them. The streamed report must equal
``--no-stream`` value for value (hard labels: exactly), its calibration section included, and the thresholds must
be those that a hand computation gives.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from biasamp.cli import main
from biasamp.report import audit
from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

FAST = ["--n-boot", "30", "--n-iter", "3", "--attacker", "tabular", "--no-progress", "--quiet"]
TASKS = ("x", "y", "z")
#: the columns of a summary row or detail table that the stream's (Poisson, grouped) bootstrap gives differently
INTERVAL = {"ci_low", "ci_high", "ci_method", "p_value", "min_detectable", "reading", "note", "sign"}


def _write(frame: pd.DataFrame, folder, n_files: int = 3, row_group: int = 61) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), n_files)):
        pq.write_table(pa.Table.from_pandas(frame.iloc[rows], preserve_index=False),
                       folder / f"part-{i}.parquet", row_group_size=row_group)


def _labels(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """A 0/1 attribute, a 3-class group, three 0/1 task labels and one 0/1 label that lean on the attribute."""
    attr = rng.integers(0, 2, n)
    out = pd.DataFrame({"attr": attr, "group": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])})
    for i, t in enumerate(TASKS):
        out[f"task_{t}"] = (rng.random(n) < 0.2 + 0.15 * i + 0.25 * attr).astype(np.int64)
    out["label"] = (rng.random(n) < 0.3 + 0.3 * attr).astype(np.int64)
    return out


def _scores(rng: np.random.Generator, frame: pd.DataFrame) -> pd.DataFrame:
    """Continuous scores (no ties) of the attribute and of every label."""
    out = pd.DataFrame(index=frame.index)
    for c in ("attr", *(f"task_{t}" for t in TASKS), "label"):
        out[f"{c}_score"] = np.clip(0.45 * frame[c] + 0.55 * rng.random(len(frame)), 0, 1)
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """test/ (3 files; weights with zeros; a copy with missing values), train/ (2 files), val.csv (scores)."""
    rng = np.random.default_rng(11)
    root = tmp_path_factory.mktemp("streamval")
    test = _labels(rng, 640)
    test = pd.concat([test, _scores(rng, test)], axis=1)
    test["weight"] = rng.choice([0.0, 0.5, 1.0, 2.0], len(test), p=[0.15, 0.25, 0.35, 0.25])
    train = _labels(rng, 900)
    val = _scores(rng, _labels(rng, 420))
    _write(test, root / "test")
    _write(train, root / "train", 2)
    val.to_csv(root / "val.csv", index=False)
    gappy, gappy_train = test.copy(), train.copy()
    gappy.loc[rng.random(len(gappy)) < 0.06, "group"] = None
    gappy.loc[rng.random(len(gappy)) < 0.05, "label_score"] = np.nan
    # (missing more often where the label is 1: the rate of the rows kept is not that of every row)
    gappy_train.loc[(rng.random(len(gappy_train)) < 0.25) & (gappy_train["label"] == 1), "group"] = None
    _write(gappy, root / "gappy")
    _write(gappy_train, root / "gappy_train", 2)
    return {"root": root, "test": test, "train": train, "val": val, "gappy": gappy, "gappy_train": gappy_train}


def _run(args: list[str], out) -> dict:
    res = CliRunner().invoke(main, ["audit", *args, *FAST, "--json", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text(encoding="utf-8"))


def _differences(streamed: dict, memory: dict) -> tuple[list, int]:
    """Every inputs entry (but the stream's own), section status and message, and every value of every summary
    row and detail table but the interval columns, that differ; and how many values were compared."""
    diffs, compared = [], 0
    for key in set(streamed["inputs"]) | set(memory["inputs"]):
        a, b = streamed["inputs"].get(key), memory["inputs"].get(key)
        if key == "attributes":
            a = {name: {k: v for k, v in entry.items() if k != "streamed"} for name, entry in a.items()}
        if key != "streamed" and a != b:
            diffs.append((f"inputs {key}", a, b))
    assert [s["key"] for s in streamed["sections"]] == [s["key"] for s in memory["sections"]]
    tables = [("summary", streamed["summary"], memory["summary"])]
    for a, b in zip(streamed["sections"], memory["sections"]):
        diffs += [(f"{a['key']} {f}", a[f], b[f]) for f in ("status", "message") if a[f] != b[f]]
        tables.append((f"{a['key']} summary", a["summary"], b["summary"]))
        tables += [(f"{a['key']} {name}", a["tables"][name], table) for name, table in b["tables"].items()
                   if name in a["tables"]]  # the in-memory audit adds its bootstrap's tables
    for where, a, b in tables:
        if len(a["rows"]) != len(b["rows"]):
            diffs.append((where, len(a["rows"]), len(b["rows"])))
            continue
        for i, (row_a, row_b) in enumerate(zip(a["rows"], b["rows"])):
            row_a, row_b = dict(zip(a["columns"], row_a)), dict(zip(b["columns"], row_b))
            for column, value in row_b.items():
                if column in INTERVAL:
                    continue
                compared += 1
                if row_a.get(column) != value and not (value != value and row_a.get(column) != row_a.get(column)):
                    diffs.append((f"{where}[{i}] {column}", row_a.get(column), value))
    return diffs, compared


def _threshold(val_scores: np.ndarray, truth: np.ndarray) -> float:
    """The threshold by hand: the (k+1)-th highest validation score, k = round(n_val x the truth's positive rate)
    (no ties in the scores, so exactly k of them exceed it)."""
    k = int(np.rint(len(val_scores) * np.mean(truth)))
    return float(np.sort(val_scores)[::-1][k])


CASES = {
    # one 0/1 task label, the training truth's rate
    "binary, train": ["test", "--train", "train", "--task", "label", "--attr", "group"],
    # three labels and the 0/1 attribute both calibrated on the test truth of the rows of positive weight
    "multi-label + attribute, weights": ["test", "--task", "task_x,task_y,task_z", "--attr", "attr", "--weight",
                                         "weight"],
    # rows with a missing group or score dropped (test and training rows): the training truth after the selection
    "missing drop, train": ["gappy", "--train", "gappy_train", "--task", "label", "--attr", "group", "--attr",
                            "attr", "--missing", "drop"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_streamed_report_equals_in_memory(data, tmp_path, case):
    root = data["root"]
    args = [str(root / a) if a in ("test", "train", "gappy", "gappy_train") else a for a in CASES[case]]
    args += ["--val", str(root / "val.csv")]
    streamed = _run([*args, "--stream", "--batch-size", "97"], tmp_path / "s.json")
    memory = _run([*args, "--no-stream"], tmp_path / "m.json")
    diffs, compared = _differences(streamed, memory)
    assert not diffs, diffs[:10]
    assert compared > 300
    sections = {s["key"]: s for s in streamed["sections"]}
    calibration = [s for k, s in sections.items() if k.startswith("calibration")]
    assert calibration and all(s["status"] == "ok" for s in calibration)
    assert streamed["inputs"]["task_pred"] == "hard"  # every batch thresholded before it was counted


def test_thresholds_are_the_hand_computed_ones(data, tmp_path):
    """The thresholds come from the rates of the rows the in-memory audit calibrates to: the training truth, else
    the test truth of the rows of positive weight; with missing="drop", the rows kept."""
    root, val, test, train = data["root"], data["val"], data["test"], data["train"]
    base = ["--val", str(root / "val.csv"), "--stream", "--batch-size", "97", "--exclude", "dpa", "--exclude",
            "leakage"]

    def thresholds(args):
        rep = _run([*args, *base], tmp_path / "r.json")
        return {name: [row[1] for row in table["rows"]] for s in rep["sections"] if s["key"].startswith("calibration")
                for name, table in s["tables"].items()}

    got = thresholds([str(root / "test"), "--train", str(root / "train"), "--task", "label", "--attr", "group"])
    assert got == {"thresholds task": [_threshold(val["label_score"].to_numpy(), train["label"].to_numpy())]}
    positive = test["weight"].to_numpy() > 0
    got = thresholds([str(root / "test"), "--task", "task_x,task_y,task_z", "--attr", "attr", "--weight", "weight"])
    assert got["thresholds task"] == [_threshold(val[f"task_{t}_score"].to_numpy(), test[f"task_{t}"][positive])
                                      for t in TASKS]
    assert got["thresholds attr"] == [_threshold(val["attr_score"].to_numpy(), test["attr"][positive])]
    # the weights matter: the rate of every test row gives another threshold
    assert got["thresholds attr"] != [_threshold(val["attr_score"].to_numpy(), test["attr"])]
    gappy_train = data["gappy_train"]
    got = thresholds([str(root / "gappy"), "--train", str(root / "gappy_train"), "--task", "label", "--attr", "group",
                      "--missing", "drop"])
    kept = gappy_train["group"].notna()
    assert got == {"thresholds task": [_threshold(val["label_score"].to_numpy(), gappy_train["label"][kept])]}
    assert got != {"thresholds task": [_threshold(val["label_score"].to_numpy(), gappy_train["label"])]}


def test_parts_in_workers_give_the_same_thresholds(data):
    """n_jobs=2: each part counts its rows' positives, merged in the parent (a part never starts from the counts
    of the parts before it), so the report is that of one process."""
    root, val = data["root"], data["val"]
    columns = StreamColumns("attr", tuple(f"task_{t}" for t in TASKS), TASKS, "attr_score",
                            tuple(f"task_{t}_score" for t in TASKS), weight="weight")
    scores = val[[f"task_{t}_score" for t in TASKS]].set_axis(list(TASKS), axis=1)
    reports = [stream_audit(ParquetDataset.open(root / "test"), columns, train=ParquetDataset.open(root / "train"),
                            task_val_scores=scores, attr_val_scores=val["attr_score"], batch_size=53, n_jobs=jobs,
                            n_boot=20, sections=["calibration", "directional", "fairness"], progress=False)
               for jobs in (1, 2)]
    tables = [r.section("calibration").tables for r in reports]
    for name in ("thresholds task", "thresholds attr"):
        pd.testing.assert_frame_equal(tables[0][name], tables[1][name])
    assert reports[0].table["value"].tolist() == reports[1].table["value"].tolist()
    train = data["train"]
    assert tables[0]["thresholds task"]["threshold"].tolist() == [
        _threshold(val[f"task_{t}_score"].to_numpy(), train[f"task_{t}"].to_numpy()) for t in TASKS]


def test_larger_than_max_memory_streams_with_val(data, tmp_path):
    """Data larger than --max-memory is streamed with --val too (it was a usage error)."""
    root = data["root"]
    res = CliRunner().invoke(main, ["audit", str(root / "test"), "--task", "label", "--attr", "group", "--val",
                                    str(root / "val.csv"), "--max-memory", "1K", "--exclude", "dpa", "--exclude",
                                    "leakage", *FAST, "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    assert "streaming" in res.stderr
    rep = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert "streamed" in rep["inputs"] and rep["inputs"]["calibrated"] == ["task"]
    assert rep["sections"][0]["key"] == "calibration" and rep["sections"][0]["status"] == "ok"


def test_cli_errors(data, tmp_path):
    root = data["root"]
    runner = CliRunner()
    # no score column to calibrate: the in-memory usage error
    val = tmp_path / "val.csv"
    pd.DataFrame({"other": [0.1, 0.2]}).to_csv(val, index=False)
    for how in ("--stream", "--no-stream"):
        res = runner.invoke(main, ["audit", str(root / "test"), "--task", "label", "--attr", "group", "--val",
                                   str(val), how, *FAST])
        assert res.exit_code == 2 and "--val needs <column>_score columns" in res.output, res.output
        assert "available columns in" in res.output and "other" in res.output
    # a validation score missing: the in-memory error, naming the argument
    bad = data["val"].copy()
    bad.loc[5, "label_score"] = np.nan
    bad.to_csv(val, index=False)
    outputs = []
    for how in ("--stream", "--no-stream"):
        res = runner.invoke(main, ["audit", str(root / "test"), "--task", "label", "--attr", "group", "--val",
                                   str(val), how, *FAST])
        assert res.exit_code == 1, res.output
        outputs.append(res.output)
    assert outputs[0] == outputs[1] and "task_val_scores contains NaN" in outputs[0]
    # a 1-D task label that is not 0/1
    three = data["test"].assign(label=np.arange(len(data["test"])) % 3)
    _write(three, tmp_path / "three")
    res = runner.invoke(main, ["audit", str(tmp_path / "three"), "--task", "label", "--attr", "group", "--val",
                               str(root / "val.csv"), "--stream", *FAST])
    assert res.exit_code == 1
    assert "task: threshold calibration needs a binary 0/1 or a multi-label task" in res.output


@pytest.mark.parametrize("given, message", [
    # task scores but no task prediction column to threshold
    ({"columns": {"attr_pred": "attr_score"}, "task_val_scores": "label_score"},
     "task_val_scores was given but not task_pred"),
    # a 1-D label with 2-D validation scores
    ({"columns": {"task_pred": ("label_score",)}, "task_val_scores": ["label_score", "attr_score"]},
     "task: a 1-D label needs 1-D scores"),
    # a 1-D attribute that is not 0/1 (the group) with attribute scores
    ({"columns": {"attr_pred": "attr_score"}, "attr_val_scores": "attr_score", "attr": "group"},
     "attr: threshold calibration needs a binary 0/1 or a multi-label attr"),
])
def test_api_errors_are_the_in_memory_ones(data, given, message):
    """stream_audit raises the ValueError of audit, word for word."""
    root, val, test = data["root"], data["val"], data["test"]
    attr = given.get("attr", "attr")
    columns = StreamColumns(attr, ("label",), ("label",), **given["columns"])
    kw = {k: val[v] for k, v in given.items() if k.endswith("_val_scores")}
    with pytest.raises(ValueError, match=re.escape(message)) as streamed:
        stream_audit(ParquetDataset.open(root / "test"), columns, progress=False, **kw)
    preds = {role: (test[c] if isinstance(c, str) else test[list(c)]) for role, c in given["columns"].items()}
    preds = {role: p.iloc[:, 0] if isinstance(p, pd.DataFrame) and p.shape[1] == 1 else p for role, p in preds.items()}
    with pytest.raises(ValueError, match=re.escape(message)) as memory:
        audit(test[attr], test["label"], **preds, progress=False, **kw)
    assert str(streamed.value).split(" (in ")[0] == str(memory.value)


def test_multilabel_width_mismatch(data):
    root, val = data["root"], data["val"]
    columns = StreamColumns("attr", tuple(f"task_{t}" for t in TASKS), TASKS, None,
                            tuple(f"task_{t}_score" for t in TASKS))
    with pytest.raises(ValueError, match=r"task_val_scores has 2 column\(s\) but task has 3 labels"):
        stream_audit(ParquetDataset.open(root / "test"), columns, progress=False,
                     task_val_scores=val[["task_x_score", "task_y_score"]])


def test_batches_of_weight_zero_count_nothing(tmp_path):
    """A batch whose rows all have weight 0 (left out, as in memory) adds no row and no positive to the rates of
    a multi-label test truth: the thresholds of audit() on the same rows."""
    rng = np.random.default_rng(3)
    test = _labels(rng, 120)
    test = pd.concat([test, _scores(rng, test)], axis=1).assign(weight=np.where(np.arange(120) < 20, 0.0, 1.0))
    _write(test, tmp_path / "test", 1, row_group=10)
    val = _scores(rng, _labels(rng, 90))
    tasks = [f"task_{t}" for t in TASKS]
    scores = val[[f"{t}_score" for t in tasks]].set_axis(list(TASKS), axis=1)
    columns = StreamColumns("attr", tuple(tasks), TASKS, None, tuple(f"{t}_score" for t in tasks), weight="weight")
    rep = stream_audit(ParquetDataset.open(tmp_path / "test"), columns, task_val_scores=scores, batch_size=10,
                       n_boot=0, sections=["calibration", "fairness"], progress=False)
    mem = audit(test["attr"], test[tasks].set_axis(list(TASKS), axis=1),
                task_pred=test[[f"{t}_score" for t in tasks]].set_axis(list(TASKS), axis=1), task_val_scores=scores,
                sample_weight=test["weight"], n_boot=0, sections=["calibration", "fairness"], progress=False)
    pd.testing.assert_frame_equal(rep.section("calibration").tables["thresholds task"],
                                  mem.section("calibration").tables["thresholds task"])
    assert rep.section("calibration").tables["thresholds task"]["threshold"].tolist() == [
        _threshold(val[f"{t}_score"].to_numpy(), test[t][20:]) for t in tasks]
    assert rep.table["value"].tolist() == mem.table["value"].tolist()
    # without calibration too (a batch of no row made the fairness family fail: "y_true is empty")
    rep = stream_audit(ParquetDataset.open(tmp_path / "test"), columns, batch_size=10, n_boot=0,
                       sections=["fairness"], progress=False)
    mem = audit(test["attr"], test[tasks].set_axis(list(TASKS), axis=1),
                task_pred=test[[f"{t}_score" for t in tasks]].set_axis(list(TASKS), axis=1),
                sample_weight=test["weight"], n_boot=0, sections=["fairness"], progress=False)
    assert rep.section("fairness").status == "ok", rep.section("fairness").message
    np.testing.assert_allclose(rep.table["value"], mem.table["value"], rtol=0, atol=1e-12)
