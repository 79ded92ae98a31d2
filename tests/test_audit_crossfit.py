"""The audit's cross-fitting options: AuditConfig(cross_fit=..., cross_fit_random_state=...) and --no-cross-fit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import biasamp
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
