"""``biasamp audit --stream`` takes ``--pos-label`` and ``--intersect`` as the in-memory audit does.

The same Parquet file (row groups of 97 rows), streamed in batches of 97 rows, must give the report of
``--no-stream``: every summary value and ``n`` equal (hard labels: exactly), the same attribute names (an
intersection named ``"a x b"``, its components recorded), and the same usage error for a ``--pos-label`` that is
not a class of the task.
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

N = 600
MISSING_B = 37  # rows whose attribute "b" is missing in the file with gaps
FAST = ["--n-boot", "30", "--n-iter", "3", "--attacker", "tabular", "--no-progress"]


def _frame(seed: int, gaps: bool = False) -> pd.DataFrame:
    """Attributes ``a`` (3 groups) and ``b`` (2 groups) with hard predictions, a "yes"/"no" task and predictions."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r"], N)
    b = rng.choice(["F", "M"], N, p=[0.4, 0.6])
    yes = rng.random(N) < 0.25 + 0.2 * (b == "M") + 0.15 * (a == "r")
    pred = np.where(rng.random(N) < 0.8, yes, ~yes)
    frame = pd.DataFrame({
        "a": a, "b": b.astype(object),
        "a_pred": np.where(rng.random(N) < 0.85, a, "p"),
        "b_pred": np.where(rng.random(N) < 0.8, b, "F"),
        "label": np.where(yes, "yes", "no"), "label_pred": np.where(pred, "yes", "no"),
    })
    if gaps:
        frame.loc[rng.choice(N, MISSING_B, replace=False), "b"] = None
    return frame


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("options")
    out = {}
    for name, gaps in (("full", False), ("gaps", True)):
        path = root / f"{name}.parquet"
        pq.write_table(pa.Table.from_pandas(_frame(11, gaps), preserve_index=False), path, row_group_size=97)
        out[name] = path
    return out


def _audit(path, flag: str, *options: str, out=None) -> tuple:
    """``(exit code, output, JSON report or None)`` of ``biasamp audit PATH FLAG OPTIONS``."""
    args = ["audit", str(path), "--task", "label", "--task-pred", "label_pred", flag, "--batch-size", "97", *FAST,
            *options]
    if out is not None:
        args += ["--json", str(out)]
    res = CliRunner().invoke(main, args)
    report = json.loads(out.read_text(encoding="utf-8")) if out is not None and out.exists() else None
    return res.exit_code, res.output, report


def _compare(path, tmp_path, *options: str, code: int = 0) -> dict:
    """The JSON report of ``--stream`` and ``--no-stream``, checked equal in every summary value, n and name;
    ``code``: the exit code of both (1: a report with failed sections)."""
    reports = {}
    for flag in ("--stream", "--no-stream"):
        got, output, reports[flag] = _audit(path, flag, *options, out=tmp_path / f"{flag}.json")
        assert got == code, output
    streamed, memory = reports["--stream"], reports["--no-stream"]

    def rows(report):
        summary = pd.DataFrame(report["summary"]["rows"], columns=report["summary"]["columns"])
        return summary[["section", "metric", "direction", "n", "value"]].values.tolist()

    assert rows(streamed) == rows(memory)
    for key in ("attribute", "attribute_classes", "task_classes", "n_test"):
        assert streamed["inputs"].get(key) == memory["inputs"].get(key), key
    attrs = memory["inputs"].get("attributes") or {}
    assert list(streamed["inputs"].get("attributes") or {}) == list(attrs)
    for name, own in attrs.items():
        theirs = streamed["inputs"]["attributes"][name]
        for key in ("attribute_classes", "intersection_of", "sections", "n_test", "rows_test"):
            assert theirs.get(key) == own.get(key), (name, key)
    assert streamed["options"].get("attributes") == memory["options"].get("attributes")  # per attribute: pos_label
    return memory


def _value(report, section: str, metric: str) -> float:
    summary = pd.DataFrame(report["summary"]["rows"], columns=report["summary"]["columns"])
    return summary.loc[(summary["section"] == section) & (summary["metric"] == metric), "value"].iloc[0]


def test_pos_label_streamed_equals_in_memory(files, tmp_path):
    """``--pos-label no``: the fairness rates of class "no", streamed as in memory (and not those of "yes")."""
    memory = _compare(files["full"], tmp_path, "--attr", "b", "--pos-label", "no", "--exclude", "dpa",
                      "--exclude", "leakage")
    frame = _frame(11)
    rates = (frame["label_pred"] == "no").groupby(frame["b"]).mean()  # predicted "no" by group
    others = (frame["label_pred"] == "yes").groupby(frame["b"]).mean()
    assert _value(memory, "fairness", "DI") == pytest.approx(1 - rates.min() / rates.max(), abs=1e-12)
    assert abs((1 - others.min() / others.max()) - (1 - rates.min() / rates.max())) > 0.01  # "yes" would differ


@pytest.mark.parametrize("flag", ["--stream", "--no-stream"])
def test_bad_pos_label_is_the_same_usage_error(files, flag):
    code, output, _ = _audit(files["full"], flag, "--attr", "b", "--pos-label", "maybe")
    assert code == 2, output
    assert "--pos-label 'maybe' is not a class of the task column(s) label; classes: no, yes" in output


@pytest.mark.parametrize("missing", ["raise", "drop", "group"])
def test_intersection_streamed_equals_in_memory(files, tmp_path, missing):
    """``--intersect a,b``: one more attribute ``a x b`` (with the combined predictions), streamed as in memory;
    with ``--missing drop`` its audit leaves out the rows missing ``b``, with ``group`` they are a group."""
    path = files["full" if missing == "raise" else "gaps"]
    memory = _compare(path, tmp_path, "--attr", "a", "--intersect", "a,b", "--missing", missing, "--exclude",
                      "leakage", "--exclude", "differential")  # (differential fairness: needs --pos-label, below)
    attrs = memory["inputs"]["attributes"]
    assert list(attrs) == ["a", "b", "a x b"] and attrs["a x b"]["intersection_of"] == ["a", "b"]
    classes = attrs["a x b"]["attribute_classes"]
    assert len(classes) == (6 if missing != "group" else 9) and "a=p, b=F" in classes
    summary = pd.DataFrame(memory["summary"]["rows"], columns=memory["summary"]["columns"])
    n = dict(zip(summary["section"], summary["n"]))
    assert n["fairness[a]"] == N
    assert n["fairness[a x b]"] == (N - MISSING_B if missing == "drop" else N)
    assert "dpa[a x b]" in n  # the intersection has attribute predictions (both components' are classes)


def test_intersection_with_pos_label(files, tmp_path):
    _compare(files["full"], tmp_path, "--intersect", "a,b", "--pos-label", "no", "--exclude", "dpa", "--exclude",
             "leakage")


def test_intersection_with_training_set_on_two_workers(files, tmp_path):
    """The training rows' intersection is derived from their components too (BiasAmp_MALS, BiasAmp-> count them);
    two worker processes, each deriving the labels of its parts, give the report of one pass and of memory."""
    train = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pandas(_frame(12)[["a", "b", "label"]], preserve_index=False), train,
                   row_group_size=97)
    memory = _compare(files["full"], tmp_path, "--train", str(train), "--intersect", "a,b", "--pos-label", "yes",
                      "--exclude", "dpa", "--exclude", "leakage", "--jobs", "2")
    assert memory["inputs"]["n_train"] == N and "mals[a x b]" in {r[0] for r in memory["summary"]["rows"]}


def test_intersection_of_scores_has_no_predictions(tmp_path):
    """Attribute scores (``b_score``) have no combination: the intersection is audited without attribute
    predictions in both modes (no T->A row), its components with theirs."""
    frame = _frame(13)
    rng = np.random.default_rng(0)
    frame = frame.drop(columns=["b_pred"]).assign(b=(frame["b"] == "M").astype(int),
                                                  b_score=rng.random(N).round(3))  # P(b = 1)
    path = tmp_path / "preds.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=97)
    memory = _compare(path, tmp_path, "--attr", "b", "--intersect", "a,b", "--exclude", "leakage", "--exclude",
                      "differential")
    directions = {(r[0], r[2]) for r in memory["summary"]["rows"]}
    assert ("dpa[b]", "T->A") in directions and ("dpa[a x b]", "A->T") in directions
    assert ("dpa[a x b]", "T->A") not in directions and ("directional[a x b]", "T->A") not in directions


def test_intersection_with_weights_scan_and_reference_group(tmp_path):
    """Every other streamed option on an intersection: sample weights (some 0), the subgroup scan's feature, a
    reference group of the intersection (``ATTR=GROUP``), ``--missing drop`` and ``--pos-label``."""
    frame = _frame(11, gaps=True)
    rng = np.random.default_rng(3)
    frame = frame.assign(w=rng.integers(0, 3, N).astype(float), age=rng.integers(18, 70, N))
    path = tmp_path / "weighted.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=97)
    memory = _compare(path, tmp_path, "--intersect", "a,b", "--missing", "drop", "--pos-label", "yes", "--weight",
                      "w", "--features", "age", "--reference-group", "a x b=a=q, b=M", "--exclude", "leakage")
    sections = {r[0] for r in memory["summary"]["rows"]}
    assert {"scan[a x b]", "dpa[a x b]", "fairness[a x b]", "mals[a x b]"} <= sections
    assert memory["options"]["attributes"]["a x b"]["fairness"]["reference_group"] == "a=q, b=M"
