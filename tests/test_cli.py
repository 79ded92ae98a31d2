"""Tests of the ``biasamp`` command line (click's CliRunner and a real subprocess)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from biasamp import __version__
from biasamp.cli import main
from biasamp.datasets import make_amplification_demo
from biasamp.report import Report, audit

FAST = ["--n-boot", "50", "--n-iter", "3", "--no-progress"]


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture(scope="module")
def small():
    return make_amplification_demo(n_train=1500, n_test=800, random_state=3)


@pytest.fixture
def files(tmp_path, small):
    """The small demo in the CLI column convention: test.csv and train.csv."""
    d = small
    test = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_"),
                      d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    train = pd.concat([d.attr_train.rename("attr"), d.task_train.add_prefix("task_")], axis=1)
    test.to_csv(tmp_path / "test.csv", index=False)
    train.to_csv(tmp_path / "train.csv", index=False)
    return tmp_path / "test.csv", tmp_path / "train.csv"


def _run_subprocess(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "biasamp.cli", *args], check=False, capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_version(runner):
    res = runner.invoke(main, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"biasamp {__version__}"
    proc = _run_subprocess("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"biasamp {__version__}"


def test_help_documents_the_conventions(runner):
    res = runner.invoke(main, ["audit", "--help"])
    assert res.exit_code == 0
    for word in ("task_*", "<column>_pred", "<column>_score", "--json", "--html", "--train", "--val"):
        assert word in res.output


def test_demo(runner, tmp_path):
    res = runner.invoke(main, ["demo", *FAST, "--json", str(tmp_path / "d.json"), "--html", str(tmp_path / "d.html"),
                               "--no-plots", "--save-data", str(tmp_path / "data")])
    assert res.exit_code == 0, res.output
    out = res.output
    for text in ("Built-in demo", "BiasAmp->", "A->T", "T->A", "amplified", "BiasAmp_MALS", "EOTP"):
        assert text in out
    a_to_t = next(line for line in out.splitlines() if line.startswith("BiasAmp->") and "A->T" in line)
    t_to_a = next(line for line in out.splitlines() if line.startswith("BiasAmp->") and "T->A" in line)
    assert "amplified" in a_to_t and "amplified" not in t_to_a
    rep = Report.from_json((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert rep.section("directional").status == "ok"
    assert "<svg" not in (tmp_path / "d.html").read_text(encoding="utf-8")
    assert {p.name for p in (tmp_path / "data").iterdir()} == {"test.csv", "train.csv"}


def test_demo_subprocess(tmp_path):
    proc = _run_subprocess("demo", *FAST, "--exclude", "dpa", "--exclude", "leakage", "-q", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # -q: nothing on stdout
    assert "wrote r.json" in proc.stderr
    obj = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert {s["key"] for s in obj["sections"]} >= {"directional", "mals", "fairness"}
    assert not any(s["key"] in ("dpa", "leakage") for s in obj["sections"])


def test_options_are_named_like_the_api_and_old_spellings_stay_hidden(runner):
    for command in ("audit", "demo"):
        text = runner.invoke(main, [command, "--help"]).output
        assert "--exclude" in text and "--random-state" in text
        assert "--skip" not in text and "--seed" not in text  # hidden aliases of 0.1


def _demo_table(runner, tmp_path, name, *options):
    path = tmp_path / f"{name}.json"
    res = runner.invoke(main, ["demo", *FAST, "-q", "--json", str(path), "--exclude", "dpa", *options])
    assert res.exit_code == 0, res.output
    return res, Report.from_json(path.read_text(encoding="utf-8"))


def test_hidden_aliases_skip_and_seed_still_work(runner, tmp_path):
    res_new, new = _demo_table(runner, tmp_path, "new", "--exclude", "leakage", "--random-state", "7")
    res_old, old = _demo_table(runner, tmp_path, "old", "--skip", "leakage", "--seed", "7")
    assert "deprecated" not in res_new.output
    assert "--skip is deprecated" in res_old.output and "use --exclude" in res_old.output
    assert "--seed is deprecated" in res_old.output and "use --random-state" in res_old.output
    keys = {s.key for s in new.sections}
    assert "leakage" not in keys and "dpa" not in keys and keys == {s.key for s in old.sections}
    cols = ["section", "metric", "direction", "value", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(new.table[cols], old.table[cols])
    # the seed matters, so equal intervals above mean --seed 7 reached random_state=7
    _, other = _demo_table(runner, tmp_path, "other", "--exclude", "leakage", "--random-state", "8")
    assert not new.table["ci_low"].equals(other.table["ci_low"])


def test_seed_alias_contradicting_random_state_is_a_usage_error(runner):
    res = runner.invoke(main, ["demo", *FAST, "-q", "--random-state", "1", "--seed", "2"])
    assert res.exit_code == 2 and "--random-state" in res.output


def test_audit_matches_the_api(runner, files, small, tmp_path):
    test, train = files
    out = tmp_path / "r.json"
    res = runner.invoke(main, ["audit", str(test), "--train", str(train), *FAST, "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "BiasAmp->" in res.output and "wrote" in res.output
    cli = Report.from_json(out.read_text(encoding="utf-8"))
    api = audit(small.attr, small.task, attr_pred=small.attr_pred, task_pred=small.task_pred,
                attr_train=small.attr_train, task_train=small.task_train, n_boot=50, n_iter=3, progress=False)
    cols = ["section", "metric", "direction", "value", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(cli.table[cols], api.table[cols], check_dtype=False)
    assert cli.inputs["task_classes"] == list(small.task.columns)  # task_ prefix dropped
    assert cli.inputs["n_train"] == len(small.attr_train)


def test_explicit_columns_and_single_label_task(runner, tmp_path, small):
    frame = pd.DataFrame({"race": small.attr, "race_hat": small.attr_pred, "recid": small.task["kitchen"],
                          "recid_hat": small.task_pred["kitchen"], "other": 1})
    frame.to_csv(tmp_path / "d.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "d.csv"), "--attr", "race", "--task", "recid",
                               "--attr-pred", "race_hat", "--task-pred", "recid_hat", *FAST, "--attacker", "tabular",
                               "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    rep = Report.from_json((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert rep.inputs["task_kind"] == "single-label"
    assert rep.section("multi").status == "skipped"


def test_missing_column_exits_2_listing_columns(runner, files):
    test, _ = files
    res = runner.invoke(main, ["audit", str(test), "--attr", "sex", *FAST])
    assert res.exit_code == 2
    assert "'sex' not found" in res.output and "available columns: attr, attr_pred, task_kitchen" in res.output
    res = runner.invoke(main, ["audit", str(test), "--task", "task_kitchen,task_cat", *FAST])
    assert res.exit_code == 2 and "'task_cat' not found" in res.output


def test_no_convention_columns_exits_2(runner, tmp_path):
    pd.DataFrame({"a": [0, 1], "b": [1, 0]}).to_csv(tmp_path / "x.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and "no attribute column" in res.output and "available columns: a, b" in res.output
    pd.DataFrame({"attr": [0, 1], "task_x": [1, 0]}).to_csv(tmp_path / "y.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "y.csv")])
    assert res.exit_code == 2 and "no prediction column" in res.output


def test_missing_column_subprocess(files):
    test, _ = files
    proc = _run_subprocess("audit", str(test), "--attr", "sex")
    assert proc.returncode == 2
    assert "available columns: attr, attr_pred" in proc.stderr


def test_unreadable_files(runner, tmp_path):
    (tmp_path / "empty.csv").write_text("")
    res = runner.invoke(main, ["audit", str(tmp_path / "empty.csv")])
    assert res.exit_code == 1 and "cannot read" in res.output and "empty" in res.output
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00\x81garbage\x00\xff" * 50)
    res = runner.invoke(main, ["audit", str(tmp_path / "bin.csv")])
    assert res.exit_code in (1, 2) and ("cannot read" in res.output or "available columns" in res.output)
    assert "Traceback" not in res.output
    res = runner.invoke(main, ["audit", str(tmp_path / "nope.csv")])
    assert res.exit_code == 2 and "does not exist" in res.output
    res = runner.invoke(main, ["audit", str(tmp_path)])
    assert res.exit_code == 2 and "directory" in res.output


def test_parquet(runner, files, tmp_path, monkeypatch):
    test, _ = files
    pq = tmp_path / "test.parquet"
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pq.write_bytes(b"PAR1 not really")
        res = runner.invoke(main, ["audit", str(pq)])
        assert res.exit_code == 1 and "needs pyarrow" in res.output
        return
    pd.read_csv(test).to_parquet(pq)
    reports = {}
    for source in (pq, test):  # the same data as Parquet and as CSV give the same numbers
        out = tmp_path / f"{source.suffix[1:]}.json"
        res = runner.invoke(main, ["audit", str(source), *FAST, "--exclude", "dpa", "--exclude", "leakage",
                                   "--json", str(out)])
        assert res.exit_code == 0, res.output
        reports[source.suffix] = Report.from_json(out.read_text(encoding="utf-8")).table
    cols = ["section", "metric", "direction", "value", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(reports[".parquet"][cols], reports[".csv"][cols])

    def no_engine(*a, **k):
        raise ImportError("Unable to find a usable engine")

    monkeypatch.setattr(pd, "read_parquet", no_engine)
    res = runner.invoke(main, ["audit", str(pq)])
    assert res.exit_code == 1 and "needs pyarrow" in res.output


def test_never_overwrites_an_input(runner, files, tmp_path):
    test, train = files
    before = test.read_bytes()
    for option in ("--json", "--html"):
        for target in (test, train):
            res = runner.invoke(main, ["audit", str(test), "--train", str(train), option, str(target), *FAST])
            assert res.exit_code == 2 and "input file" in res.output
    assert test.read_bytes() == before
    res = runner.invoke(main, ["audit", str(test), "--json", str(tmp_path / "x"), "--html", str(tmp_path / "x")])
    assert res.exit_code == 2 and "same file" in res.output
    res = runner.invoke(main, ["audit", str(test), "--json", str(tmp_path / "no" / "r.json")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_failed_audit_leaves_existing_output_untouched(runner, tmp_path, small):
    frame = pd.DataFrame({"attr": small.attr, "task_a": small.task["kitchen"], "task_b": small.task["tie"],
                          "task_a_pred": small.task_pred["kitchen"], "task_b_pred": 7})  # 7: not a 0/1 label
    frame.to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "r.json"
    out.write_text("previous report")
    res = runner.invoke(main, ["audit", str(tmp_path / "d.csv"), *FAST, "--json", str(out)])
    assert res.exit_code == 1 and "no metric could be computed" in res.output and "outside [0, 1]" in res.output
    assert out.read_text() == "previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "r.json"]  # no temporary file left


def test_partial_failure_writes_the_report_and_exits_1(runner, files, tmp_path, monkeypatch):
    import biasamp.report as report_mod

    def boom(inp, opt):
        raise RuntimeError("boom")

    monkeypatch.setitem(report_mod._BUILDERS, "mals", dataclasses.replace(report_mod._BUILDERS["mals"], compute=boom))
    test, _ = files
    res = runner.invoke(main, ["audit", str(test), *FAST, "--exclude", "dpa", "--exclude", "leakage",
                               "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 1 and "could not be computed: mals" in res.output
    rep = Report.from_json((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert rep.section("mals").status == "error" and rep.section("directional").status == "ok"


def test_csv_cells_are_data(runner, tmp_path, small):
    marker = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    attr = small.attr.map({"man": payload, "woman": "=1+1"})
    frame = pd.DataFrame({"attr": attr, "attr_pred": attr, "task_a": small.task["kitchen"],
                          "task_b": small.task["tie"], "task_a_pred": small.task_pred["kitchen"],
                          "task_b_pred": small.task_pred["tie"]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "d.csv"), *FAST, "--json", str(tmp_path / "r.json"),
                               "--exclude", "dpa", "--exclude", "leakage"])
    assert res.exit_code == 0, res.output
    assert not marker.exists()
    rep = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert sorted(rep["inputs"]["attribute_classes"]) == sorted([payload, "=1+1"])


def test_calibration_with_val_scores(runner, tmp_path, small):
    rng = np.random.default_rng(0)

    def scores(truth):
        return (truth + rng.normal(0, 0.45, truth.shape)).clip(0, 1).round(4)

    test = pd.concat([small.attr.rename("attr"), small.attr_pred.rename("attr_pred"), small.task.add_prefix("task_"),
                      scores(small.task).add_prefix("task_").add_suffix("_score")], axis=1)
    val_truth = small.task_train.iloc[:600].reset_index(drop=True)
    val = scores(val_truth).add_prefix("task_").add_suffix("_score")
    train = pd.concat([small.attr_train.rename("attr"), small.task_train.add_prefix("task_")], axis=1)
    for name, frame in (("test", test), ("val", val), ("train", train)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "test.csv"), "--train", str(tmp_path / "train.csv"),
                               "--val", str(tmp_path / "val.csv"), *FAST, "--json", str(tmp_path / "r.json"),
                               "--exclude", "dpa", "--exclude", "leakage", "--exclude", "multi"])
    assert res.exit_code == 0, res.output
    rep = Report.from_json((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert rep.section("calibration").status == "ok"
    assert len(rep.section("calibration").tables["thresholds task"]) == small.task.shape[1]
    assert rep.inputs["calibrated"] == ["task"]
    res = runner.invoke(main, ["audit", str(tmp_path / "test.csv"), "--val", str(tmp_path / "train.csv")])
    assert res.exit_code == 2 and "_score" in res.output
