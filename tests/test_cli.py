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
    assert res.exit_code == 1
    assert "column 'task_b_pred', row 1: 7 is neither a class of column 'task_b' (0, 1) nor a probability" in res.output
    assert out.read_text() == "previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "r.json"]  # no temporary file left


def test_no_section_computed_writes_nothing(runner, files, tmp_path, monkeypatch):
    import biasamp.report as report_mod

    def boom(inp, opt):
        raise ValueError("task_pred holds probabilities outside [0, 1] (rows 0, 4)")

    for key, builder in list(report_mod._BUILDERS.items()):
        monkeypatch.setitem(report_mod._BUILDERS, key, dataclasses.replace(builder, compute=boom))
    test, _ = files
    out = tmp_path / "r.json"
    out.write_text("previous report")
    res = runner.invoke(main, ["audit", str(test), *FAST, "--json", str(out)])
    assert res.exit_code == 1 and "no metric could be computed" in res.output
    # the library's argument names become the CSV columns, its 0-based positions 1-based rows
    assert "columns 'task_kitchen_pred', 'task_skateboard_pred'" in res.output and "(rows 1, 5)" in res.output
    assert "metric  dir" not in res.output  # no empty summary table above the error
    assert out.read_text() == "previous report"


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


# --------------------------------------------------------------------------- #
# a plain CSV: label, prediction, score, sex, race
# --------------------------------------------------------------------------- #
QUICK = ["--n-boot", "30", "--no-progress", "--exclude", "dpa", "--exclude", "leakage"]
COLS = ["section", "metric", "direction", "value", "ci_low", "ci_high"]


@pytest.fixture(scope="module")
def plain():
    """What pandas writes for a binary classifier: 0/1 label, True/False prediction, a score, two attributes."""
    rng = np.random.default_rng(5)
    n = 500
    race = rng.choice(["Black", "White", "Asian", "Native American"], n, p=[0.45, 0.45, 0.07, 0.03])
    sex = rng.choice(["Female", "Male"], n)
    label = rng.integers(0, 2, n)
    score = np.clip(0.35 * label + 0.65 * rng.random(n) + 0.1 * (race == "Black"), 0, 1).round(3)
    return pd.DataFrame({"label": label, "prediction": score >= 0.5, "score": score, "sex": sex, "race": race})


def _audit_json(runner, path, *args, out=None):
    out = out or path.with_suffix(".report.json")
    res = runner.invoke(main, ["audit", str(path), *args, *QUICK, "--json", str(out)])
    assert res.exit_code == 0, res.output
    return res, Report.from_json(out.read_text(encoding="utf-8"))


def test_plain_csv_with_two_attributes_in_one_command(runner, tmp_path, plain):
    plain.to_csv(tmp_path / "plain.csv", index=False)
    text = (tmp_path / "plain.csv").read_text()
    assert ",True," in text and ",False," in text  # pandas wrote True/False
    res, rep = _audit_json(runner, tmp_path / "plain.csv", "--task", "label", "--task-pred", "prediction",
                           "--attr", "sex", "--attr", "race")
    keys = [s.key for s in rep.sections if s.status == "ok"]
    assert {"fairness[sex]", "fairness[race]", "directional[sex]", "directional[race]"} <= set(keys)
    assert rep.section("fairness[race]").title == "Group fairness \u2014 race"
    assert list(rep.inputs["attributes"]) == ["sex", "race"]
    assert rep.inputs["attributes"]["race"]["attribute_classes"] == ["Asian", "Black", "Native American", "White"]
    # each attribute's numbers are those of an audit of that attribute alone (bool predictions read as 0/1)
    api = audit(plain["race"], plain["label"], task_pred=plain["prediction"].astype(int), n_boot=30, progress=False,
                exclude=["dpa", "leakage"])
    cli = rep.table[rep.table["section"].str.endswith("[race]")].reset_index(drop=True)
    pd.testing.assert_frame_equal(cli[COLS[1:]], api.table[COLS[1:]], check_dtype=False)
    # the terminal: one block per attribute, each headed by its name, the small group flagged
    out = res.output
    assert out.index("protected attribute sex") < out.index("protected attribute race")
    assert "attribute race ['Asian', 'Black', 'Native American', 'White']" in " ".join(out.split())  # lines wrap
    assert "Native American" in out.split("protected attribute race")[1].split("notes:")[1]


def test_intersect(runner, tmp_path, plain):
    plain.to_csv(tmp_path / "plain.csv", index=False)
    _, rep = _audit_json(runner, tmp_path / "plain.csv", "--task", "label", "--task-pred", "prediction",
                         "--intersect", "race,sex", "--min-group-size", "20")
    assert list(rep.inputs["attributes"]) == ["race", "sex", "race x sex"]
    assert rep.inputs["attributes"]["race x sex"]["intersection_of"] == ["race", "sex"]
    groups = set(rep.section("fairness[race x sex]").tables["by group"]["group"].astype(str))
    assert "race=Black, sex=Male" in groups and len(groups) == 8
    res = runner.invoke(main, ["audit", str(tmp_path / "plain.csv"), "--task", "label", "--intersect", "race"])
    assert res.exit_code == 2 and "two or more different attribute columns" in res.output
    res = runner.invoke(main, ["audit", str(tmp_path / "plain.csv"), "--task", "label", "--intersect", "race,age"])
    assert res.exit_code == 2 and "'age' not found" in res.output


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_delimiter_is_detected(runner, tmp_path, plain, sep):
    plain.to_csv(tmp_path / "comma.csv", index=False)
    # a ;-separated file from a European spreadsheet also writes decimal commas
    plain.to_csv(tmp_path / "other.csv", index=False, sep=sep, decimal="," if sep == ";" else ".")
    args = ["--task", "label", "--task-pred", "score", "--attr", "sex"]
    _, comma = _audit_json(runner, tmp_path / "comma.csv", *args)
    res, other = _audit_json(runner, tmp_path / "other.csv", *args)
    assert "-separated" in res.output and "(detected)" in res.output
    pd.testing.assert_frame_equal(comma.table[COLS], other.table[COLS])


def test_unsupported_format_is_one_line_exit_2(runner, tmp_path, plain):
    plain.to_json(tmp_path / "data.json")
    res = runner.invoke(main, ["audit", str(tmp_path / "data.json")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"Error: unsupported format: .json (biasamp reads CSV or Parquet): {tmp_path / 'data.json'}"]
    plain.to_csv(tmp_path / "train.xlsx")
    plain.to_csv(tmp_path / "test.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "test.csv"), "--train", str(tmp_path / "train.xlsx")])
    assert res.exit_code == 2 and "unsupported format: .xlsx" in res.output


@pytest.mark.parametrize("spelling", ["bool", "lower", "truth"])
def test_true_false_against_zero_one(runner, tmp_path, plain, spelling):
    frame = plain[["label", "prediction", "sex"]].copy()
    if spelling == "lower":  # written by another tool: true/false strings
        frame["prediction"] = frame["prediction"].map({True: "true", False: "false"})
    elif spelling == "truth":  # the truth is True/False, the prediction 0/1
        frame = frame.assign(label=frame["label"].astype(bool), prediction=frame["prediction"].astype(int))
    frame.to_csv(tmp_path / "b.csv", index=False)
    frame.assign(label=frame["label"].astype(int), prediction=plain["prediction"].astype(int)).to_csv(
        tmp_path / "01.csv", index=False)
    args = ["--task", "label", "--task-pred", "prediction", "--attr", "sex"]
    _, b = _audit_json(runner, tmp_path / "b.csv", *args)
    _, z = _audit_json(runner, tmp_path / "01.csv", *args)
    pd.testing.assert_frame_equal(b.table[COLS], z.table[COLS])
    assert b.inputs["task_classes"] == ["0", "1"]


def test_errors_name_the_column_and_the_row(runner, tmp_path, plain):
    frame = plain.copy()
    frame.loc[16, "sex"] = None
    frame.to_csv(tmp_path / "gap.csv", index=False)
    args = ["--task", "label", "--task-pred", "prediction", "--attr", "race", "--attr", "sex"]
    res = runner.invoke(main, ["audit", str(tmp_path / "gap.csv"), *args, *QUICK])
    assert res.exit_code == 1
    assert "Error: column 'sex', row 17: missing value" in res.output and "--missing drop" in res.output
    assert "attr" not in res.output.replace("attribute", "")  # no internal argument name
    frame = plain.astype({"score": object})
    frame.loc[9, "score"] = "n/a?"
    frame.to_csv(tmp_path / "text.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "text.csv"), "--task", "label", "--task-pred", "score",
                               "--attr", "sex"])
    assert res.exit_code == 1 and "column 'score', row 10: 'n/a?' is not a number" in res.output
    plain.assign(decile=np.arange(len(plain)) % 10 + 1).to_csv(tmp_path / "decile.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "decile.csv"), "--task", "label", "--task-pred", "decile",
                               "--attr", "sex"])
    assert res.exit_code == 1
    assert "column 'decile', row 2: 2 is neither a class of column 'label' (0, 1) nor a probability" in res.output
    res = runner.invoke(main, ["audit", str(tmp_path / "decile.csv"), "--task", "label", "--task-pred", "race",
                               "--attr", "sex"])
    assert res.exit_code == 1 and "column 'race', row 1: " in res.output and "is not a class of column 'label'" \
        in res.output
    res = runner.invoke(main, ["audit", str(tmp_path / "decile.csv"), "--task", "label", "--task-pred", "prediction",
                               "--attr", "sex", "--weight", "decile"])
    assert res.exit_code == 0, res.output  # the weights are fine; a negative one is named
    plain.assign(w=np.where(np.arange(len(plain)) == 4, -1.0, 1.0)).to_csv(tmp_path / "w.csv", index=False)
    res = runner.invoke(main, ["audit", str(tmp_path / "w.csv"), "--task", "label", "--task-pred", "prediction",
                               "--attr", "sex", "--weight", "w"])
    assert res.exit_code == 1 and "column 'w', row 5: weight -1 is negative" in res.output


def test_library_errors_are_renamed_to_columns():
    from biasamp.cli._data import _name_columns

    columns = {"task": "column 'label'", "task_pred": "column 'prediction'", "attr": "column 'sex'",
               "attribute race": {"attr": "column 'race'"}}
    assert _name_columns("attr contains NaN/None/missing values (rows 3, 7)", columns) == \
        "column 'sex' contains NaN/None/missing values (rows 4, 8)"
    assert _name_columns("task has 9 rows but attr has 10: every test argument needs one row", columns) == \
        "column 'label' has 9 rows but column 'sex' has 10: every test argument needs one row"
    assert _name_columns("attribute 'race': attr is empty (0 rows)", columns) == "column 'race' is empty (0 rows)"
    assert _name_columns("needs a multi-label task (two or more)", columns) == "needs a multi-label task (two or more)"


def test_missing_drop_and_group(runner, tmp_path, plain):
    frame = plain.copy()
    frame.loc[[3, 8], "sex"] = None
    frame.to_csv(tmp_path / "gap.csv", index=False)
    args = ["--task", "label", "--task-pred", "prediction", "--attr", "sex"]
    _, dropped = _audit_json(runner, tmp_path / "gap.csv", *args, "--missing", "drop", out=tmp_path / "d.json")
    _, grouped = _audit_json(runner, tmp_path / "gap.csv", *args, "--missing", "group", out=tmp_path / "g.json")
    assert dropped.options["missing"] == "drop" and grouped.options["missing"] == "group"
    assert "missing" in grouped.inputs["attribute_classes"]
    assert "missing" not in dropped.inputs["attribute_classes"]


def test_fairness_options_reach_the_audit(runner, tmp_path, plain):
    frame = plain.assign(label=plain["label"].map({0: "no", 1: "yes"}), w=np.arange(len(plain)) % 3 + 0.5,
                         prediction=plain["prediction"].map({False: "no", True: "yes"}),
                         sex=plain["sex"].map({"Female": 0, "Male": 1}))
    frame.to_csv(tmp_path / "o.csv", index=False)
    _, cli = _audit_json(runner, tmp_path / "o.csv", "--task", "label", "--task-pred", "prediction", "--attr", "sex",
                         "--pos-label", "yes", "--average", "binary", "--min-group-size", "5",
                         "--include-small-groups", "--reference-group", "1", "--tolerance", "0.9",
                         "--weight", "w", "--level", "0.9", "--ci-method", "percentile")
    fair = cli.options["fairness"]
    assert fair["pos_label"] == "yes" and fair["average"] == "binary" and fair["min_group_size"] == 5
    assert fair["include_small_groups"] is True and fair["reference_group"] == 1  # "1" matched to the 0/1 column
    assert fair["tolerance"] == pytest.approx([0.9, 1 / 0.9])
    assert cli.options["level"] == 0.9 and cli.options["ci_method"] == "percentile"
    api = audit(frame["sex"], frame["label"], task_pred=frame["prediction"], pos_label="yes", average="binary",
                min_group_size=5, include_small_groups=True, reference_group=1, tolerance=(0.9, 1 / 0.9),
                sample_weight=frame["w"], level=0.9, ci_method="percentile", n_boot=30, progress=False,
                exclude=["dpa", "leakage"])
    pd.testing.assert_frame_equal(cli.table[COLS], api.table[COLS])
    # scores: the threshold and the handling of probabilities
    plain.to_csv(tmp_path / "s.csv", index=False)
    _, cli = _audit_json(runner, tmp_path / "s.csv", "--task", "label", "--task-pred", "score", "--attr", "sex",
                         "--threshold", "0.6", "--soft", "expected")
    assert cli.options["fairness"]["threshold"] == 0.6 and cli.options["fairness"]["soft"] == "expected"
    # what does not fit the data is a usage error naming what does
    res = runner.invoke(main, ["audit", str(tmp_path / "o.csv"), "--task", "label", "--attr", "sex",
                               "--task-pred", "prediction", "--pos-label", "maybe"])
    assert res.exit_code == 2 and "--pos-label 'maybe' is not a class" in res.output and "no, yes" in res.output
    res = runner.invoke(main, ["audit", str(tmp_path / "o.csv"), "--task", "label", "--attr", "sex",
                               "--task-pred", "prediction", "--reference-group", "2"])
    assert res.exit_code == 2 and "not a group of attribute 'sex'; groups: 0, 1" in res.output
    res = runner.invoke(main, ["audit", str(tmp_path / "o.csv"), "--tolerance", "1.2,0.7"])
    assert res.exit_code == 2 and "LOW,HIGH" in res.output
    res = runner.invoke(main, ["audit", str(tmp_path / "o.csv"), "--task", "label", "--attr", "sex",
                               "--task-pred", "score"])
    assert res.exit_code == 1 and "probabilities need a 0/1 column 'label'" in res.output


def test_multi_attribute_options(runner, files, small):
    test, _ = files
    path = test.with_name("m.json")
    res = runner.invoke(main, ["audit", str(test), "--n-boot", "30", "--no-progress", "-q", "--exclude", "dpa",
                               "--exclude", "leakage", "--combinations", "all", "--max-size", "2",
                               "--min-support", "5", "--json", str(path)])
    assert res.exit_code == 0, res.output
    opts = Report.from_json(path.read_text(encoding="utf-8")).options
    assert (opts["combinations"], opts["max_size"], opts["min_support"]) == ("all", 2, 5)


def test_reference_group_per_attribute(runner, tmp_path, plain):
    plain.to_csv(tmp_path / "plain.csv", index=False)
    _, rep = _audit_json(runner, tmp_path / "plain.csv", "--task", "label", "--task-pred", "prediction",
                         "--attr", "race", "--attr", "sex", "--reference-group", "race=White",
                         "--reference-group", "Male")
    per = rep.options["attributes"]
    assert per["race"]["fairness"]["reference_group"] == "White"
    assert per["sex"]["fairness"]["reference_group"] == "Male"
    assert "fairness" not in rep.options  # no shared value to show at the top


def test_n_boot_warning(capsys):
    from biasamp.cli._commands import _warn_n_boot

    _warn_n_boot(1000, 500)
    assert capsys.readouterr().err == ""
    _warn_n_boot(50_000, 500)
    assert "beyond 10,000 replicates" in capsys.readouterr().err
    _warn_n_boot(500, 4)
    assert "4 rows have only 35 distinct bootstrap resamples" in capsys.readouterr().err


def test_ctrl_c_exits_130_and_writes_nothing(runner, files, tmp_path, monkeypatch):
    import biasamp.report as report_mod

    def interrupted(inp, opt):
        raise KeyboardInterrupt

    monkeypatch.setitem(report_mod._BUILDERS, "fairness",
                        dataclasses.replace(report_mod._BUILDERS["fairness"], compute=interrupted))
    test, _ = files
    res = runner.invoke(main, ["audit", str(test), *QUICK, "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 130 and "interrupted: nothing written" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (test, files[1]))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_subprocess(tmp_path, plain):
    import os
    import signal
    import time

    pd.concat([plain] * 40, ignore_index=True).to_csv(tmp_path / "big.csv", index=False)
    proc = subprocess.Popen([sys.executable, "-m", "biasamp.cli", "audit", "big.csv", "--task", "label",
                             "--task-pred", "score", "--attr", "race", "--attr", "sex", "--n-boot", "100000",
                             "--progress", "--json", "r.json", "--html", "r.html"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.set_blocking(proc.stderr.fileno(), False)
    seen, start = b"", time.monotonic()
    while b"audit" not in seen and time.monotonic() - start < 60 and proc.poll() is None:
        seen += proc.stderr.read() or b""
        time.sleep(0.05)
    time.sleep(0.3)  # inside the bootstrap
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    err = (seen + err).decode(errors="replace")
    assert proc.returncode == 130, err
    assert "interrupted: nothing written" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.csv"]  # no report, no temporary file


def test_streamed_parquet_with_two_attributes(runner, tmp_path, plain):
    pytest.importorskip("pyarrow")
    frame = plain.assign(prediction=plain["prediction"].astype(int))
    frame.to_parquet(tmp_path / "p.parquet")
    args = ["--task", "label", "--task-pred", "prediction", "--attr", "sex", "--attr", "race"]
    _, streamed = _audit_json(runner, tmp_path / "p.parquet", *args, "--stream", out=tmp_path / "s.json")
    _, loaded = _audit_json(runner, tmp_path / "p.parquet", *args, "--no-stream", out=tmp_path / "l.json")
    assert [s.key for s in streamed.sections if s.status == "ok"] == \
        [s.key for s in loaded.sections if s.status == "ok"]
    pd.testing.assert_series_equal(streamed.table["value"], loaded.table["value"])
    res = runner.invoke(main, ["audit", str(tmp_path / "p.parquet"), *args, "--stream", "--intersect", "sex,race"])
    assert res.exit_code == 0 and "sex x race" in res.output, res.output  # streamed too (test_stream_options.py)


# --------------------------------------------------------------------------- #
# the Python side: audit(attr={...}, intersect=...)
# --------------------------------------------------------------------------- #
def test_audit_with_several_attributes_and_intersection(plain):
    from biasamp.report._attributes import split_by_attribute, summary_by_attribute

    attr = {"race": plain["race"], "sex": plain["sex"].to_numpy()}
    pred = plain["prediction"].astype(int)
    rep = audit(attr, plain["label"], task_pred=pred, intersect=[("race", "sex")], n_boot=30, progress=False,
                exclude=["dpa", "leakage", "calibration"], min_group_size=10)
    assert [s.key for s in rep.sections] == [f"{k}[{a}]" for a in ("race", "sex", "race x sex")
                                             for k in ("directional", "mals", "multi", "fairness", "differential")]
    one = audit(plain["sex"], plain["label"], task_pred=pred, n_boot=30, progress=False, sections=["fairness"],
                min_group_size=10)
    pd.testing.assert_frame_equal(rep.section("fairness[sex]").summary, one.section("fairness").summary)
    groups = rep.section("fairness[race x sex]").tables["by group"]["group"].astype(str)
    assert "race=Native American, sex=Female" in set(groups)
    # JSON round trip: same sections, tables and inputs
    back = Report.from_json(rep.to_json())
    assert [(s.key, s.title) for s in back.sections] == [(s.key, s.title) for s in rep.sections]
    pd.testing.assert_frame_equal(back.table[COLS], rep.table[COLS])
    assert back.inputs == json.loads(json.dumps(rep.inputs))
    assert back.section("fairness[race x sex]").tables.keys() == rep.section("fairness[race x sex]").tables.keys()
    html = rep.to_html(plots=False)
    assert 'id="fairness-race-x-sex"' in html and "Group fairness \u2014 race x sex" in html
    assert "Group fairness \u2014 sex" in rep.to_markdown()
    parts = split_by_attribute(back)
    assert list(parts) == ["race", "sex", "race x sex"]
    assert parts["sex"].inputs["attribute_classes"] == ["Female", "Male"]
    text = summary_by_attribute(back)
    assert text.count("protected attribute") == 3
    # predictions of the attributes: per attribute, and combined for the intersection
    sex_pred = np.where(np.arange(len(plain)) % 7 == 0, "Female", plain["sex"])
    rep = audit(attr, plain["label"], attr_pred={"sex": sex_pred, "race": plain["race"]}, task_pred=pred,
                intersect=("race", "sex"), n_boot=30, progress=False, sections=["mals"])
    assert {s.key: s.status for s in rep.sections} == {"mals[race]": "ok", "mals[sex]": "ok", "mals[race x sex]": "ok"}


def test_audit_with_several_attributes_rejects_bad_input(plain):
    kw = {"task_pred": plain["prediction"], "n_boot": 30, "progress": False, "sections": ["fairness"]}
    with pytest.raises(TypeError, match="mapping of attribute name"):
        audit(plain["sex"], plain["label"], intersect=[("sex", "race")], **kw)
    with pytest.raises(ValueError, match=r"not attributes; attributes: \['sex', 'race'\]"):
        audit({"sex": plain["sex"], "race": plain["race"]}, plain["label"], intersect=[("sex", "age")], **kw)
    with pytest.raises(ValueError, match="two or more different attributes"):
        audit({"sex": plain["sex"]}, plain["label"], intersect=[("sex", "sex")], **kw)
    with pytest.raises(ValueError, match="must be 1-D"):
        audit({"both": plain[["sex", "race"]]}, plain["label"], **kw)
    with pytest.raises(TypeError, match="attr_pred must be a mapping"):
        audit({"sex": plain["sex"], "race": plain["race"]}, plain["label"], attr_pred=plain["sex"], **kw)
    with pytest.raises(ValueError, match="attribute 'race': "):
        audit({"sex": plain["sex"], "race": plain["race"].iloc[:10]}, plain["label"], **kw)


def test_streamed_weighted_audit_equals_the_in_memory_one(runner, tmp_path):
    pytest.importorskip("pyarrow")
    from biasamp.datasets import make_amplification_demo

    d = make_amplification_demo(n_train=600, n_test=700, random_state=3)
    frame = pd.DataFrame({"attr": d.attr, "attr_pred": d.attr_pred})
    for c in d.task.columns:
        frame[f"task_{c}"] = d.task[c].to_numpy()
        frame[f"task_{c}_pred"] = d.task_pred[c].to_numpy()
    frame["w"] = np.random.default_rng(1).integers(1, 4, len(frame)).astype(float)
    frame.to_parquet(tmp_path / "demo.parquet")
    args = ["--weight", "w"]
    _, streamed = _audit_json(runner, tmp_path / "demo.parquet", *args, "--stream", out=tmp_path / "s.json")
    _, loaded = _audit_json(runner, tmp_path / "demo.parquet", *args, "--no-stream", out=tmp_path / "l.json")
    ok = [s.key for s in loaded.sections if s.status == "ok"]
    assert {"directional", "mals", "multi", "fairness"} <= set(ok)
    assert [s.key for s in streamed.sections if s.status == "ok"] == ok
    pd.testing.assert_series_equal(streamed.table["value"], loaded.table["value"], rtol=1e-9)
    assert streamed.inputs["weighted"] is True and loaded.inputs["weighted"] is True
    # the weights change the numbers: the unweighted audit differs
    _, plain = _audit_json(runner, tmp_path / "demo.parquet", "--no-stream", out=tmp_path / "u.json")
    assert not np.allclose(plain.table["value"].to_numpy(float), loaded.table["value"].to_numpy(float))
