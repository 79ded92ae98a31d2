"""The audit's cross-fitting options: AuditConfig(cross_fit=..., cross_fit_random_state=...) and --no-cross-fit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import biasamp
from biasamp._families import REGISTRY
from biasamp.report import AuditConfig


def _noise(seed: int = 3, n: int = 3000, levels: int = 100):
    rng = np.random.default_rng(seed)
    g, y = rng.integers(0, levels, n), (rng.random(n) < 0.45).astype(int)
    return g, y, y ^ (rng.random(n) < 0.3)


def _audit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return biasamp.audit(*args, sections=["directional"], n_boot=0, progress=False, **kw)


def test_the_audit_forwards_cross_fit_to_the_families_that_declare_it():
    g, y, p = _noise()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crossfit = biasamp.bias_amp_directional(g, y, task_pred=p).a_to_t.value
        plug_in = biasamp.bias_amp_directional(g, y, task_pred=p, cross_fit=False).a_to_t.value
        other = biasamp.bias_amp_directional(g, y, task_pred=p, cross_fit_random_state=7).a_to_t.value
    assert plug_in < crossfit  # the plug-in's selection reads "reduced": the two differ (the test can fail)
    value = lambda rep: float(rep.table.loc[rep.table["direction"] == "A->T", "value"].iloc[0])
    assert value(_audit(g, y, task_pred=p)) == crossfit
    assert value(_audit(g, y, task_pred=p, cross_fit=False)) == plug_in
    assert value(_audit(g, y, task_pred=p, cross_fit_random_state=7)) == other
    assert AuditConfig(cross_fit=False).family_options("directional")["cross_fit"] is False
    assert "cross_fit" not in AuditConfig().family_options("directional")  # None: the family's default
    assert "cross_fit" not in AuditConfig(cross_fit=False).family_options("fairness")  # not declared there
    with pytest.raises(TypeError, match="cross_fit"):
        AuditConfig(cross_fit="yes")
    with pytest.raises(ValueError, match="cross_fit_random_state"):
        AuditConfig(cross_fit_random_state=-1)


def test_the_cli_flag_no_cross_fit(tmp_path):
    from click.testing import CliRunner

    from biasamp.cli import main

    g, y, p = _noise(n=1500, levels=20)
    path = tmp_path / "noise.csv"
    pd.DataFrame({"g": g, "y": y, "y_pred": p}).to_csv(path, index=False)
    values = {}
    for flag in ("--cross-fit", "--no-cross-fit"):
        out = tmp_path / f"{flag}.json"
        res = CliRunner().invoke(main, ["audit", str(path), "--attr", "g", "--task", "y", *sum((["--exclude", k] for k in
                                              ("mals", "multi", "fairness", "differential", "dpa", "leakage")), []),
                                        "--n-boot", "2", "--no-progress", "-q", flag, "--json", str(out)])
        assert res.exit_code == 0, res.output
        rep = biasamp.Report.from_json(out.read_text())
        values[flag] = float(rep.table.loc[rep.table["direction"] == "A->T", "value"].iloc[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert values["--no-cross-fit"] == biasamp.bias_amp_directional(g, y, task_pred=p, cross_fit=False).a_to_t.value
        assert values["--cross-fit"] == biasamp.bias_amp_directional(g, y, task_pred=p).a_to_t.value


# --------------------------------------------------------------------------- #
# with a training set, cross_fit has no effect (the training set fixes the signs)
# --------------------------------------------------------------------------- #
#: the sections of the count-based families (their declarations)
_COUNTED = [f.section for f in REGISTRY if f.section is not None]


def _same_reports(reports: dict) -> None:
    base = reports[None]
    assert {s.key for s in base.sections if s.status == "ok"} >= {"directional", "mals", "multi", "fairness"}
    for cf, rep in reports.items():
        assert [(s.key, s.status) for s in rep.sections] == [(s.key, s.status) for s in base.sections], cf
        pd.testing.assert_frame_equal(rep.table, base.table, check_exact=True)
        for s in base.sections:
            for name, table in s.tables.items():
                pd.testing.assert_frame_equal(rep.section(s.key).tables[name], table, check_exact=True)


def test_with_a_training_set_cross_fit_changes_nothing_in_memory():
    # the training set has as many rows as the test set: the MALS section used to read the training rows as the
    # test rows' ground truth, row by row (cross-fitting them), and report another value as ok
    from biasamp.datasets import make_amplification_demo

    d = make_amplification_demo(n_train=1000, n_test=1000, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mals = biasamp.bias_amp_mals(attr_train=d.attr_train, task_train=d.task_train, attr_pred=d.attr_pred,
                                     task_pred=d.task_pred).value
        reports = {cf: biasamp.audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred,
                                     attr_train=d.attr_train, task_train=d.task_train, sections=_COUNTED, n_boot=0,
                                     progress=False, cross_fit=cf, **({} if cf is None else
                                                                      {"cross_fit_random_state": 7}))
                   for cf in (None, True, False)}
    _same_reports(reports)
    table = reports[True].table
    assert float(table.loc[table["section"] == "mals", "value"].iloc[0]) == mals


def test_with_a_training_set_cross_fit_changes_nothing_streamed(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from biasamp.datasets import make_amplification_demo
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    d = make_amplification_demo(n_train=800, n_test=600, random_state=5)
    tasks = list(d.task.columns)
    test = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_"),
                      d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    train = pd.concat([d.attr_train.rename("attr"), d.task_train.add_prefix("task_")], axis=1)
    for name, frame in (("test", test), ("train", train)):
        (tmp_path / name).mkdir()
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / name / "p.parquet",
                       row_group_size=97)
    cols = StreamColumns("attr", tuple(f"task_{t}" for t in tasks), tuple(tasks), "attr_pred",
                         tuple(f"task_{t}_pred" for t in tasks))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports = {cf: stream_audit(ParquetDataset.open(tmp_path / "test"), cols,
                                    train=ParquetDataset.open(tmp_path / "train"), batch_size=100, n_boot=0,
                                    progress=False, cross_fit=cf, sections=["directional", "mals", "multi", "fairness"])
                   for cf in (None, True, False)}
    _same_reports(reports)


def test_the_mals_family_call_refuses_cross_fit_with_a_training_set():
    from biasamp._families import REGISTRY

    g, y, p = _noise(n=200, levels=3)
    roles = {"attr": g, "task": y, "attr_pred": g, "task_pred": p, "attr_train": g[::-1], "task_train": y[::-1]}
    family = REGISTRY["mals"]
    args, kwargs = family.call(roles, {"cross_fit": True})
    with pytest.raises(ValueError, match="cross_fit=True"):
        family.function(*args, **kwargs)
    args, kwargs = family.call(roles, {"cross_fit": False})
    assert kwargs["attr_train"] is roles["attr_train"] and kwargs["cross_fit"] is False
    family.function(*args, **kwargs)  # the training set's indicator, no cross-fitting
