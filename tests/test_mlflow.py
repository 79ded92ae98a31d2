"""Report.log_to_mlflow against a local file-store tracking URI: metrics read back equal the report's table."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from biasamp.datasets import make_amplification_demo
from biasamp.report import Report, audit
from biasamp.report._mlflow import report_metrics

mlflow = pytest.importorskip("mlflow")


@pytest.fixture(scope="module")
def report() -> Report:
    d = make_amplification_demo(n_train=1500, n_test=800, random_state=4)
    return audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train,
                 task_train=d.task_train, n_boot=100, n_iter=3, exclude=["multi"], progress=False)


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    """A fresh local file store (MLflow >= 3.x asks for MLFLOW_ALLOW_FILE_STORE to use one)."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    mlflow.set_experiment("biasamp-tests")
    yield mlflow.MlflowClient()
    while mlflow.active_run() is not None:
        mlflow.end_run()


def _expected(report: Report) -> dict:
    """name -> value from report.table, written independently of biasamp.mlflow."""
    out = {}
    key = {("BiasAmp->", "A->T"): "BiasAmp_directional.A_to_T", ("BiasAmp->", "T->A"): "BiasAmp_directional.T_to_A",
           ("BiasAmp_MALS", ""): "BiasAmp_MALS", ("DPA", "A->T"): "DPA.A_to_T", ("DPA", "T->A"): "DPA.T_to_A",
           ("LA", ""): "LA"}
    for r in report.table.itertuples(index=False):
        name = "biasamp." + key.get((r.metric, r.direction), r.metric)
        out[name] = r.value
        for suffix in ("ci_low", "ci_high", "p_value"):
            v = getattr(r, suffix)
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                out[f"{name}.{suffix}"] = v
    return out


def test_new_run_holds_every_value_interval_and_the_artifacts(report, tracking, tmp_path):
    expected = _expected(report)
    assert report_metrics(report) == expected
    run_id = report.log_to_mlflow()
    run = tracking.get_run(run_id)
    assert run.info.status == "FINISHED"  # a run it started, it ended
    assert mlflow.active_run() is None
    assert run.data.metrics == expected  # floats read back exactly
    assert {"biasamp.BiasAmp_directional.A_to_T.ci_low", "biasamp.DP.p_value"} <= set(run.data.metrics)
    assert run.data.tags["biasamp.version"] == report.version
    assert run.data.tags["biasamp.level"] == "0.95"
    paths = {a.path for a in tracking.list_artifacts(run_id, "biasamp")}
    assert paths == {"biasamp/report.json", "biasamp/report.html", "biasamp/report.md"}
    local = tracking.download_artifacts(run_id, "biasamp", str(tmp_path))
    back = Report.from_json(Path(local, "report.json").read_text(encoding="utf-8"))
    assert back.to_dict() == Report.from_json(report.to_json()).to_dict()
    assert Path(local, "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_active_run_given_run_and_steps(report, tracking):
    with mlflow.start_run() as run:
        assert report.log_to_mlflow(step=1, artifacts=False) == run.info.run_id
        assert report.log_to_mlflow(step=2, artifacts=False, prefix="val/") == run.info.run_id
    history = tracking.get_metric_history(run.info.run_id, "biasamp.BiasAmp_directional.A_to_T")
    assert [(m.step, m.value) for m in history] == [(1, report.table["value"][0])]
    assert "val/DP" in tracking.get_run(run.info.run_id).data.metrics
    assert tracking.list_artifacts(run.info.run_id) == []
    # an explicit run id, the run not active
    report.log_to_mlflow(run_id=run.info.run_id, step=5, artifacts=False)
    steps = [m.step for m in tracking.get_metric_history(run.info.run_id, "biasamp.LA")]
    assert steps == [1, 5]
    with pytest.raises(TypeError, match="step"):
        report.log_to_mlflow(step="1")


def test_docs_mlflow_block_runs(tracking):
    from .test_export import run_guide

    ns = run_guide("MLflow")
    assert ns["metrics"]["accuracy"] == 0.91
    assert "biasamp.DP" in ns["metrics"]


def test_docs_mlflow_block_runs_as_written_without_configuration(tmp_path):
    """The snippet works as a user runs it: a fresh process, no MLFLOW_* variable set, an empty folder.

    A fresh process because MLflow keeps the active experiment of earlier tests in module state.
    """
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "src"), env.get("PYTHONPATH", "")])
    code = ("from tests.test_export import run_guide\n"
            "ns = run_guide('MLflow')\n"
            "print(sorted(k for k in ns['metrics'] if k.startswith('biasamp.BiasAmp_directional')))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "biasamp.BiasAmp_directional.A_to_T" in proc.stdout
    assert (tmp_path / "mlruns").is_dir()


def test_a_report_of_several_attributes_logs_one_metric_per_attribute(tracking):
    import numpy as np

    rng = np.random.default_rng(0)
    n = 600
    race, sex = rng.choice(["a", "b", "c"], n), rng.choice(["f", "m"], n)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    rep = audit({"race": race, "sex": sex}, y, task_pred=p, sections=["fairness"], n_boot=50, progress=False)
    metrics = report_metrics(rep)
    # the same metric of two attributes: two keys, each a valid MLflow name naming its section
    dp = sorted(k for k in metrics if k.endswith(".DP"))
    assert dp == ["biasamp.fairness_race.DP", "biasamp.fairness_sex.DP"]
    run = tracking.get_run(rep.log_to_mlflow())
    assert set(dp) <= set(run.data.metrics)
    assert run.data.metrics["biasamp.fairness_sex.DP"] == \
        rep.section("fairness[sex]").summary.set_index("metric").loc["DP", "value"]
