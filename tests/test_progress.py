"""Progress: a bar on a terminal, a plain line every ~10 s elsewhere (pipes, CI, logs), silence on request."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

import biasamp._core.progress as progress_mod
from biasamp._core.progress import LineProgress, progress_bar, progress_mode
from biasamp.cli import main
from biasamp.predictability import dpa
from biasamp.report import audit

LINE = re.compile(r"^biasamp: (?P<stage>.+?): (?P<done>\d+)/(?P<total>\d+) (?P<unit>\w+) \(\d+%\), "
                  r"\d+:\d\d elapsed(, ~\d+:\d\d left|, estimating time left)?$")


class SlowAttacker(ClassifierMixin, BaseEstimator):
    """A logistic regression whose fit takes ``delay`` seconds: a long-running attacker."""

    def __init__(self, delay: float = 0.05):
        self.delay = delay

    def fit(self, X, y):
        time.sleep(self.delay)
        self.model_ = LogisticRegression().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


def data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 2, n)
    task = np.where(rng.random(n) < 0.7, attr, 1 - attr)
    return attr, task


@pytest.fixture
def fast_lines(monkeypatch):
    monkeypatch.setattr(progress_mod, "LINE_INTERVAL", 0.02)


def test_modes(monkeypatch):
    assert progress_mode(False) == "off" and progress_mode(True) == "bar"
    assert progress_mode("lines") == "lines"
    monkeypatch.setattr(progress_mod, "_stderr_is_tty", lambda: True)
    assert progress_mode(None) == "bar"
    monkeypatch.setattr(progress_mod, "_stderr_is_tty", lambda: False)
    assert progress_mode(None) == "lines"
    with pytest.raises(ValueError, match="progress"):
        progress_mode("verbose")


@pytest.mark.parametrize("value, off", [("1", True), ("True", True), ("yes", True), ("0", False), ("", False),
                                        ("false", False)])
def test_tqdm_disable_silences_the_automatic_mode(monkeypatch, value, off):
    monkeypatch.setenv("TQDM_DISABLE", value)
    for tty in (True, False):
        monkeypatch.setattr(progress_mod, "_stderr_is_tty", lambda tty=tty: tty)
        assert progress_mode(None) == ("off" if off else "bar" if tty else "lines")
    assert progress_mode(True) == "bar" and progress_mode("lines") == "lines"  # explicit requests win


def test_tqdm_disable_silences_a_long_call(capsys, fast_lines, monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    attr, task = data()
    # the call of test_dpa_prints_plain_lines_when_stderr_is_not_a_terminal, which prints there
    dpa(attr, task, task_pred=task, attacker=SlowAttacker(), n_iter=4, random_state=0)
    assert capsys.readouterr().err == ""


def test_status_line_estimates_the_time_left(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: clock[0])
    p = LineProgress(total=12, desc="DPA", unit="iterations", interval=3600)
    try:
        assert p.status() == "DPA: 0/12 iterations (0%), 0:00 elapsed, estimating time left"
        clock[0] += 30
        p.update(3)
        p.set_postfix_str("T->A mlp_es")
        # 3 done in 30 s: 9 left take about 90 s
        assert p.status() == "DPA [T->A mlp_es]: 3/12 iterations (25%), 0:30 elapsed, ~1:30 left"
        clock[0] += 3570
        p.update(9)
        assert p.status() == "DPA [T->A mlp_es]: 12/12 iterations (100%), 1:00:00 elapsed"
    finally:
        p.close()
    rows = LineProgress(total=2_500_000, desc="counting", unit="rows", unit_scale=True, interval=3600)
    rows.update(1_250_000)
    assert rows.status().startswith("counting: 1.25M/2.50M rows (50%)")
    rows.close()


def test_dpa_prints_plain_lines_when_stderr_is_not_a_terminal(capsys, fast_lines):
    attr, task = data()
    dpa(attr, task, task_pred=task, attacker=SlowAttacker(), n_iter=4, random_state=0)  # progress=None
    err = capsys.readouterr().err.splitlines()
    ticks = [m for m in map(LINE.match, err) if m]
    assert len(ticks) >= 3, err
    # 4 iterations and, for the interval over the rows (ci_over="both"), 4 row-bootstrap replicates
    assert all(m["stage"] == "DPA [A->T SlowAttacker]" and m["total"] == "8" for m in ticks)
    done = [int(m["done"]) for m in ticks]
    assert done == sorted(done)  # monotone
    assert re.fullmatch(r"biasamp: DPA: done, 8/8 iterations in \d+:\d\d", err[-1])
    assert "\r" not in "".join(err)  # no bar redraws in a log


def test_short_calls_and_progress_false_are_silent(capsys, fast_lines):
    attr, task = data()
    dpa(attr, task, task_pred=task, attacker=SlowAttacker(), n_iter=4, random_state=0, progress=False)
    assert capsys.readouterr().err == ""
    progress_mod.LINE_INTERVAL = 60.0  # (restored by the fixture)
    dpa(attr, task, task_pred=task, attacker="tabular", n_iter=4, random_state=0)  # shorter than the interval
    assert capsys.readouterr().err == ""


def test_nested_stages_share_one_line(capsys, fast_lines):
    attr, task = data()
    audit(attr, task, task_pred=task, sections=["dpa"], attacker=SlowAttacker(), n_iter=4)
    err = capsys.readouterr().err.splitlines()
    nested = [line for line in err if " | DPA [A->T SlowAttacker]: " in line]
    assert nested and all(line.startswith("biasamp: audit [dpa]: 0/1 sections") for line in nested)
    assert err[-1].startswith("biasamp: audit: done, 1/1 sections in ")


def test_bar_mode_is_tqdm(capsys):
    from tqdm import tqdm

    bar = progress_bar(total=3, desc="DPA", progress=True, unit="iterations")
    assert isinstance(bar, tqdm) and not bar.disable
    bar.update(3)
    bar.close()
    assert "DPA" in capsys.readouterr().err
    assert progress_bar(total=3, desc="DPA", progress=False).disable


def test_cli_quiet_silences_progress(tmp_path, fast_lines):
    runner = CliRunner()
    args = ["demo", "--n-boot", "30", "--n-iter", "2", "--attacker", "tabular",
            *(f"--skip={key}" for key in ("multi", "mals", "directional"))]
    loud = runner.invoke(main, args)
    assert loud.exit_code == 0, loud.output
    assert "biasamp: audit" in loud.stderr  # not a terminal: plain lines
    quiet = runner.invoke(main, [*args, "-q"])
    assert quiet.exit_code == 0, quiet.output
    assert "biasamp:" not in quiet.stderr and quiet.stdout == ""
    forced = runner.invoke(main, [*args, "-q", "--progress"])  # an explicit --progress wins
    assert forced.exit_code == 0 and "audit" in forced.stderr


def test_streamed_audit_with_two_jobs_counts_test_rows_and_moves_while_the_workers_run(tmp_path, monkeypatch):
    """``biasamp audit --stream --jobs 2``: every bar counts the test rows (not the training rows as well), and
    advances in several steps, not once when both workers end (with one part per worker it stayed at 0%)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import pandas as pd

    import biasamp.report._stream as stream_mod
    from biasamp.datasets import make_amplification_demo

    d = make_amplification_demo(n_train=900, n_test=1200, random_state=3)
    test = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_"),
                      d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    train = pd.concat([d.attr_train.rename("attr"), d.task_train.add_prefix("task_")], axis=1)
    pq.write_table(pa.Table.from_pandas(test, preserve_index=False), tmp_path / "test.parquet", row_group_size=100)
    pq.write_table(pa.Table.from_pandas(train, preserve_index=False), tmp_path / "train.parquet", row_group_size=100)
    bars = []

    class Recorder:
        def __init__(self, *, total, desc, disable, **kw):
            self.total, self.desc, self.steps = total, desc, []
            bars.append(self)

        def update(self, n):
            self.steps.append(n)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(stream_mod, "tqdm", Recorder)
    res = CliRunner().invoke(main, ["audit", str(tmp_path / "test.parquet"), "--train", str(tmp_path / "train.parquet"),
                                    "--stream", "--jobs", "2", "--batch-size", "100", "--progress", "-q",
                                    "--n-boot", "20", "--exclude", "dpa", "--exclude", "leakage", "--exclude", "multi",
                                    "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    assert [b.desc for b in bars] == ["classes", "counting"]
    for b in bars:
        assert b.total == 1200 and sum(b.steps) == 1200, (b.desc, b.total, b.steps)  # test rows only
        assert len(b.steps) >= 4 and max(b.steps) < b.total, (b.desc, b.steps)  # it moves while the workers run
