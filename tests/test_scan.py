"""The subgroup scan (``biasamp.scan``): every registered count statistic, the planted subgroup, the band.

Values checked independently: the population's value against the family's
own function, a subgroup's value (with a training set, or a family without
signs) against the function on the subgroup's rows, the quartile bins
against ``np.quantile``, the streamed and Dask scans against the one-shot
scan, the band's algebra (p ≤ 1 − level exactly when the interval excludes 0).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import biasamp
from biasamp._families import REGISTRY
from biasamp.exceptions import BiasampWarning
from biasamp.subgroups import ScanAccumulator, feature_levels, scan

STATISTICS = [(fam, s) for fam in REGISTRY if fam.stream is not None for s in fam.statistics]
IDS = [s.name for _, s in STATISTICS]


def _population(seed: int = 0, n: int = 2400) -> dict:
    rng = np.random.default_rng(seed)
    feats = pd.DataFrame({"region": rng.choice(["n", "s", "e"], n), "x": rng.normal(size=n),
                          "flag": rng.random(n) < 0.5})
    attr = rng.integers(0, 2, n)
    attr_pred = np.where(rng.random(n) < 0.85, attr, 1 - attr)
    task = (rng.random(n) < np.where(attr == 1, 0.6, 0.35)).astype(int)
    task_pred = np.where(rng.random(n) < 0.8, task, 1 - task)
    multi = (rng.random((n, 3)) < np.where(attr[:, None] == 1, 0.6, 0.3)).astype(int)
    multi_pred = np.where(rng.random((n, 3)) < 0.85, multi, 1 - multi)
    return {"features": feats, "attr": attr, "attr_pred": attr_pred, "task": task, "task_pred": task_pred,
            "multi": multi, "multi_pred": multi_pred}


def _roles(fam, data: dict) -> dict:
    multi = fam.task_kinds == ("multilabel",)
    return {"attr": data["attr"], "task": data["multi"] if multi else data["task"],
            "attr_pred": data["attr_pred"], "task_pred": data["multi_pred"] if multi else data["task_pred"]}


def _function_value(fam, spec, roles: dict, **options) -> float:
    args, kwargs = fam.call({r: v for r, v in roles.items() if r in (*fam.roles, "attr", "task")}, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BiasampWarning)
        return spec.read(fam.function(*args, **kwargs))[0]


@pytest.mark.parametrize(("fam", "spec"), STATISTICS, ids=IDS)
def test_every_statistic_scans(fam, spec):
    data = _population()
    roles = _roles(fam, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BiasampWarning)
        res = scan(**roles, features=data["features"], statistic=spec.name, n_boot=200, random_state=1)
    # the population's value is the family's function on every row (cross-fitted where it cross-fits)
    assert res.overall == pytest.approx(_function_value(fam, spec, roles), abs=1e-12)
    sub = res.subgroups
    # 3 + 4 + 2 order-1 levels, and every pair of them, each kept when it has >= 100 rows
    assert len(sub) == res.n_candidates - int((sub["n"] < 100).sum())
    assert (sub["n"] >= 100).all() and res.n_candidates == 9 + (3 * 4 + 3 * 2 + 4 * 2)
    ok = sub[sub["scanned"]]
    assert len(ok) > 0
    # every interval holds its estimate and lies in the statistic's range
    assert ((ok.ci_low <= ok.estimate + 1e-12) & (ok.estimate <= ok.ci_high + 1e-12)).all()
    assert ((ok.ci_low >= spec.range[0]) & (ok.ci_high <= spec.range[1])).all()
    # the adjusted interval holds the unadjusted one, and its p-value is at least the unadjusted one
    assert (ok.ci_low <= ok.ci_low_unadjusted + 1e-12).all() and (ok.ci_high >= ok.ci_high_unadjusted - 1e-12).all()
    assert (ok.p_value >= ok.p_value_unadjusted).all()
    # sorted by adjusted evidence
    assert ok.p_value.is_monotonic_increasing


def test_planted_order_two_subgroup_is_found_first():
    rng = np.random.default_rng(3)
    n = 6000
    feats = pd.DataFrame({"region": rng.choice(["n", "s", "e"], n), "age": rng.choice(["young", "old"], n),
                          "income": rng.lognormal(10, 1, n)})
    a = rng.integers(0, 2, n)
    t = (rng.random(n) < np.where(a == 1, 0.6, 0.4)).astype(int)
    t_hat = np.where(rng.random(n) < 0.9, t, (rng.random(n) < np.where(a == 1, 0.6, 0.4)).astype(int))
    planted = ((feats.region == "s") & (feats.age == "old")).to_numpy()
    # in the planted subgroup the model over-predicts the task for a=1 and under-predicts it for a=0: amplifies
    t_hat[planted & (a == 1) & (rng.random(n) < 0.4)] = 1
    t_hat[planted & (a == 0) & (rng.random(n) < 0.4)] = 0
    res = scan(a, t, task_pred=t_hat, features=feats, n_boot=400, random_state=0)
    top = res.top(1).iloc[0]
    assert top.rule == "region = s & age = old" and top.order == 2
    assert top.flagged and top.ci_low > 0 and top.p_value <= 0.05
    # the planted subgroup's amplification, by hand: 2 x 0.4 x the rate of the other class, around 0.2
    assert 0.12 < top.estimate < 0.3


def test_subgroup_value_is_the_function_on_its_rows_with_a_training_set():
    data = _population(5, n=3000)
    rng = np.random.default_rng(9)
    a_train = rng.integers(0, 2, 2000)
    t_train = (rng.random(2000) < np.where(a_train == 1, 0.7, 0.3)).astype(int)
    res = scan(data["attr"], data["task"], task_pred=data["task_pred"], attr_pred=data["attr_pred"],
               attr_train=a_train, task_train=t_train, features=data["features"], n_boot=50, random_state=0,
               statistic="T->A")
    feats = data["features"]
    for rule, rows in (("region = s", feats.region == "s"),
                       ("region = e & flag = True", (feats.region == "e") & feats.flag)):
        rows = rows.to_numpy()
        want = biasamp.bias_amp_directional(data["attr"][rows], data["task"][rows],
                                            attr_pred=data["attr_pred"][rows], attr_train=a_train,
                                            task_train=t_train).t_to_a.value
        got = res.subgroups.set_index("rule").loc[rule, "estimate"]
        assert got == pytest.approx(want, abs=1e-12)


def test_fairness_subgroup_value_is_the_function_on_its_rows():
    data = _population(6)
    res = scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"],
               statistic="DP", n_boot=50, random_state=0)
    feats = data["features"]
    rows = ((feats.region == "n") & ~feats.flag).to_numpy()
    want = biasamp.demographic_parity(data["task"][rows], data["task_pred"][rows],
                                      sensitive_features=data["attr"][rows])
    got = res.subgroups.set_index("rule").loc["region = n & flag = False", "estimate"]
    assert got == pytest.approx(want, abs=1e-12)


def test_p_value_and_interval_agree():
    data = _population(7)
    res = scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], n_boot=400,
               random_state=2, level=0.9)
    ok = res.subgroups[res.subgroups.scanned]
    excludes = (ok.ci_low > 0) | (ok.ci_high < 0)
    # level x n_boot = 360 is whole: p <= 1 - level exactly when the adjusted interval excludes 0
    assert ((ok.p_value <= 0.1 + 1e-12) == excludes).all()
    assert excludes.any() and (~excludes).any()
    # unadjusted likewise, with each subgroup's own critical value
    ex_u = (ok.ci_low_unadjusted > 0) | (ok.ci_high_unadjusted < 0)
    assert ((ok.p_value_unadjusted <= 0.1 + 1e-12) == ex_u).all()


def test_feature_levels_rule():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    x[:7] = np.nan
    frame = pd.DataFrame({"x": x, "k": rng.integers(0, 4, 400), "b": rng.random(400) < 0.3,
                          "s": rng.choice(["a", None], 400)})
    lx, lk, lb, ls = feature_levels(frame)
    q = np.quantile(x[~np.isnan(x)], [0, 0.25, 0.5, 0.75, 1])
    assert np.allclose(lx.edges, q) and lx.missing and lx.n_levels == 5
    assert lx.condition(0) == f"x in [{q[0]:.4g}, {q[1]:.4g})" and lx.condition(3).endswith("]")
    assert lx.condition(4) == "x is missing"
    assert lk.values == (0, 1, 2, 3) and lk.edges is None and not lk.missing
    assert lb.values == (False, True) and lb.condition(1) == "b = True"
    assert ls.values == ("a",) and ls.missing
    from biasamp.subgroups._levels import encode

    codes = encode(frame, (lx, lk, lb, ls))
    # binned as the edges say: [e_j, e_j+1), the top edge in the last bin
    finite = ~np.isnan(x)
    assert np.array_equal(codes[finite, 0], np.clip(np.searchsorted(q, x[finite], side="right") - 1, 0, 3))
    assert (codes[~finite, 0] == 4).all()


def test_undefined_subgroup_is_flagged_with_a_reason():
    data = _population(8)
    feats = data["features"].copy()
    attr = data["attr"].copy()
    attr[(feats.region == "e").to_numpy()] = 1  # in region e, every row has a = 1: P(T | a=0) undefined there
    res = scan(attr, data["task"], task_pred=data["task_pred"], features=feats, n_boot=50, random_state=0,
               cross_fit=False)
    row = res.subgroups.set_index("rule").loc["region = e"]
    # BiasAmp-> A->T still averages over the defined pairs (a=1): defined; DP compares groups: undefined
    dp = scan(attr, data["task"], task_pred=data["task_pred"], features=feats, n_boot=50, random_state=0,
              statistic="DP")
    drow = dp.subgroups.set_index("rule").loc["region = e"]
    assert np.isnan(drow.estimate) and not drow.scanned and "undefined" in drow.reason
    assert np.isnan(drow.p_value) and not drow.flagged
    assert np.isfinite(row.estimate)


def test_reproducible_and_estimates_free_of_row_order():
    data = _population(10)
    kw = {"task_pred": data["task_pred"], "n_boot": 100, "random_state": 4}
    a = scan(data["attr"], data["task"], features=data["features"], cross_fit=False, **kw)
    b = scan(data["attr"], data["task"], features=data["features"], cross_fit=False, **kw)
    pd.testing.assert_frame_equal(a.subgroups, b.subgroups)
    perm = np.random.default_rng(0).permutation(len(data["attr"]))
    c = scan(data["attr"][perm], data["task"][perm], features=data["features"].iloc[perm], cross_fit=False,
             **{**kw, "task_pred": data["task_pred"][perm]})
    est = a.subgroups.set_index("rule")["estimate"]
    assert np.allclose(c.subgroups.set_index("rule")["estimate"].loc[est.index], est, equal_nan=True)


def _stream(data, batches, a_train, t_train, **kw):
    levels = feature_levels(data["features"])
    classes = {"attr": [0, 1], "task": [0, 1]}
    acc = ScanAccumulator("A->T", classes, levels, train=True, **kw)
    if a_train is not None:
        acc.update_train({"attr_train": a_train, "task_train": t_train})
    for rows in batches:
        acc.update(data["features"].iloc[rows], {"attr": data["attr"][rows], "task": data["task"][rows],
                                                 "task_pred": data["task_pred"][rows]})
    return acc


def test_streamed_and_merged_equal_one_shot():
    data = _population(11, n=1500)
    rng = np.random.default_rng(1)
    a_train = rng.integers(0, 2, 500)
    t_train = (rng.random(500) < 0.5).astype(int)
    one = scan(data["attr"], data["task"], task_pred=data["task_pred"], attr_train=a_train, task_train=t_train,
               features=data["features"], n_boot=100, random_state=3)
    n = len(data["attr"])
    cuts = np.array_split(np.arange(n), 4)
    streamed = _stream(data, cuts, a_train, t_train, n_boot=100, random_state=3).result()
    pd.testing.assert_frame_equal(one.subgroups, streamed.subgroups, check_exact=False, rtol=1e-9)
    # partitions counted apart (row ids: their global positions) and merged in another order
    parts = []
    for rows in cuts:
        acc = _stream(data, [], None, None, n_boot=100, random_state=3)
        acc.update(data["features"].iloc[rows], {"attr": data["attr"][rows], "task": data["task"][rows],
                                                 "task_pred": data["task_pred"][rows]}, row_ids=rows)
        parts.append(acc)
    train = _stream(data, [], a_train, t_train, n_boot=100, random_state=3)
    merged = parts[3] + parts[1] + train + parts[0] + parts[2]
    pd.testing.assert_frame_equal(one.subgroups, merged.result().subgroups, check_exact=False, rtol=1e-9)


@pytest.mark.parametrize("statistic", ["A->T", "MALS", "G->M"])
def test_cross_fitted_scan_of_any_batching_is_the_one_shot_scan(statistic):
    """Without a training set (cross-fitted, the default) the scan's tables are dealt at the end from the distinct
    rows with their features: k uneven batches, and partitions merged in another order, give the one-shot scan."""
    from biasamp.subgroups._accumulator import statistic_of

    data = _population(13, n=1500)
    fam, _ = statistic_of(statistic)
    roles = _roles(fam, data)
    one = scan(roles["attr"], roles["task"], attr_pred=roles["attr_pred"], task_pred=roles["task_pred"],
               features=data["features"], statistic=statistic, n_boot=100, random_state=3)
    levels = feature_levels(data["features"])
    classes = {"attr": [0, 1], "task": [0, 1, 2] if fam.task_kinds == ("multilabel",) else [0, 1]}

    def counted(batches):
        acc = ScanAccumulator(statistic, classes, levels, n_boot=100, random_state=3)
        if acc.phase == "collect":
            acc.prepass({r: roles[r] for r in ("attr", "task", "attr_pred", "task_pred")}).end_prepass()
        for rows in batches:
            acc.update(data["features"].iloc[rows], {r: v[rows] for r, v in roles.items()})
        return acc

    cuts = np.split(np.arange(1500), [100, 700, 720, 1300])
    streamed = counted(cuts)
    assert streamed.boot is None  # nothing dealt batch by batch
    pd.testing.assert_frame_equal(one.subgroups, streamed.result().subgroups, check_exact=False, rtol=1e-12)
    parts = [counted([rows]) for rows in cuts]
    merged = parts[3] + parts[1] + parts[4] + parts[0] + parts[2]
    pd.testing.assert_frame_equal(one.subgroups, merged.result().subgroups, check_exact=False, rtol=1e-12)
    assert one.critical_value == merged.result().critical_value


def test_dask_equals_in_memory():
    dd = pytest.importorskip("dask.dataframe")
    import biasamp.dask as bdask

    data = _population(12, n=1200)
    rng = np.random.default_rng(2)
    a_train = rng.integers(0, 2, 400)
    t_train = (rng.random(400) < 0.5).astype(int)
    frame = data["features"].assign(attr=data["attr"], task=data["task"], task_pred=data["task_pred"])
    ddf = dd.from_pandas(frame, npartitions=3)
    got = bdask.scan(ddf["attr"], ddf["task"], task_pred=ddf["task_pred"], features=ddf[["region", "x", "flag"]],
                     attr_train=dd.from_pandas(pd.Series(a_train), npartitions=2),
                     task_train=dd.from_pandas(pd.Series(t_train), npartitions=2), n_boot=100, random_state=5)
    want = scan(data["attr"], data["task"], task_pred=data["task_pred"], attr_train=a_train, task_train=t_train,
                features=data["features"], n_boot=100, random_state=5)
    pd.testing.assert_frame_equal(want.subgroups, got.subgroups, check_exact=False, rtol=1e-9)


def test_bad_input():
    data = _population(13, n=300)
    with pytest.raises(ValueError, match="statistic must be one of"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], statistic="AUC")
    with pytest.raises(ValueError, match="needs attr_pred"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], statistic="T->A")
    with pytest.raises(ValueError, match="features has 299"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"].iloc[1:])
    with pytest.raises(TypeError, match="features must be a DataFrame"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features="region")
    with pytest.raises(ValueError, match="max_order"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], max_order=0)
    with pytest.raises(ValueError, match="min_group_size"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], min_group_size=0)
    with pytest.raises(ValueError, match="level"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], level=1.5)
    with pytest.raises(ValueError, match="threshold"):
        scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], threshold=2)


def test_fixed_inputs_the_fuzz_found():
    """tests/test_fuzz.py's scan cases: each of these once gave a wrong result or an unnamed error."""
    data = _population(13, n=300)
    a, t, tp, feats = data["attr"], data["task"], data["task_pred"], data["features"]
    kw = {"task_pred": tp, "n_boot": 20, "random_state": 0}
    pl = pytest.importorskip("polars")
    plain = scan(a, t, features=feats, **kw).subgroups
    as_polars = scan(a, t, features=pl.DataFrame({c: feats[c].to_numpy() for c in feats}), **kw).subgroups
    pd.testing.assert_frame_equal(as_polars, plain)  # the column names were lost (pd.DataFrame of a polars frame)
    with_inf = feats.assign(x=np.where(np.arange(300) == 5, np.inf, feats["x"]))
    with pytest.raises(ValueError, match="features column 'x' holds an infinite value"):
        scan(a, t, features=with_inf, **kw)  # a bin edge was NaN ('x in [0.67, nan]')
    with pytest.raises(ValueError, match="features column 'x' holds an infinite value"):
        ScanAccumulator("A->T", {"attr": [0, 1], "task": [0, 1]}, feature_levels(feats), n_boot=20).update(
            with_inf, {"attr": a, "task": t, "task_pred": tp})  # given levels: the last bin took it silently
    with pytest.raises(TypeError, match="features column 'x' is complex"):
        scan(a, t, features=feats.assign(x=feats["x"] + 0j), **kw)  # the imaginary part was dropped
    with pytest.raises(TypeError, match="attr must be array-like"):
        scan(3, t, features=feats, **kw)  # "object of type 'int' has no len()"
    with pytest.raises(ValueError, match="attr must hold one label"):
        scan([[0], [0, 1], *a[2:].tolist()], t, features=feats, **kw)  # numpy's inhomogeneous-shape message
    with pytest.raises(TypeError, match="attr_train must be array-like"):
        scan(a, t, features=feats, attr_train={"a": a.tolist()}, task_train=t, **kw)  # "unhashable type: 'dict'"


def test_critical_value_that_is_not_a_number_is_explained():
    rng = np.random.default_rng(0)
    n = 16  # a handful of rows per subgroup: replicates whose subgroup moved with a jackknife SE of 0
    feats = pd.DataFrame({"site": rng.choice(["n", "s"], n), "k": rng.integers(-16, 17, n), "flag": rng.random(n) < .5})
    a, t, tp = rng.integers(0, 2, n), rng.integers(0, 3, n), rng.integers(0, 3, n)
    res = scan(a, t, task_pred=tp, features=feats, n_boot=20, random_state=0, min_group_size=1)
    assert np.isinf(res.critical_value)
    assert any(n.startswith("critical value infinite") for n in res.notes)
    assert (res.subgroups.loc[res.subgroups.scanned, ["ci_low", "ci_high"]].abs() == 1).all().all()


def test_result_conversions_and_plot():
    data = _population(14, n=1200)
    res = scan(data["attr"], data["task"], task_pred=data["task_pred"], features=data["features"], n_boot=100,
               random_state=0, max_order=1)
    assert (res.subgroups.order == 1).all() and len(res.subgroups) == 9
    d = res.to_dict()
    json.dumps(d)
    assert d["statistic"] == "A->T" and len(d["subgroups"]) == 9 and d["subgroups"][0]["rule"] == res.top(1).rule[0]
    assert res.to_frame().attrs["level"] == 0.95
    text = repr(res)
    assert "A->T" in text and res.top(1).rule[0] in text
    pytest.importorskip("matplotlib")
    ax = res.plot(k=5)
    assert len(ax.get_yticklabels()) == min(5, res.n_scanned)


def test_audit_section_and_cli(tmp_path):
    from click.testing import CliRunner

    from biasamp.cli import main

    rng = np.random.default_rng(21)
    n = 3000
    a = rng.choice(["f", "m"], n)
    t = (rng.random(n) < np.where(a == "f", 0.6, 0.4)).astype(int)
    tp = np.where(rng.random(n) < 0.9, t, 1 - t)
    region = rng.choice(["north", "south"], n)
    planted = region == "south"
    tp[planted & (a == "f") & (rng.random(n) < 0.5)] = 1
    tp[planted & (a == "m") & (rng.random(n) < 0.5)] = 0
    feats = pd.DataFrame({"region": region, "age": rng.integers(18, 80, n)})
    rep = biasamp.audit(a, t, task_pred=tp, features=feats, sections=["scan"], n_boot=200, progress=False)
    row = rep.table.iloc[0]
    assert row.section == "scan" and row.direction == "A->T" and row.reading == "amplified"
    assert "top subgroup: region = south" in row.note
    sec = next(s for s in rep.sections if s.key == "scan")
    assert sec.tables["subgroups"].rule.iloc[0].startswith("region = south")
    for text in (rep.to_html(), rep.to_markdown(), json.dumps(rep.to_dict()), rep.summary()):
        assert "subgroup scan" in text
    # without features the section is left out, not listed as skipped
    plain = biasamp.audit(a, t, task_pred=tp, sections=["scan"], n_boot=50, progress=False)
    assert all(s.key != "scan" for s in plain.sections) and "subgroup scan" not in plain.summary()
    # the statistic is an option; a bad one is named
    dp = biasamp.audit(a, t, task_pred=tp, features=feats, sections=["scan"], n_boot=50, progress=False,
                       scan_statistic="DP")
    assert dp.table.iloc[0].metric.startswith("DP")
    with pytest.raises(ValueError, match="scan_statistic must be one of"):
        biasamp.audit(a, t, task_pred=tp, features=feats, scan_statistic="nope")
    path = tmp_path / "d.csv"
    pd.DataFrame({"attr": a, "label": t, "label_pred": tp, "region": region}).to_csv(path, index=False)
    out = CliRunner().invoke(main, ["audit", str(path), "--task", "label", "--features", "region", "--n-boot", "100",
                                    "--json", str(tmp_path / "r.json")])
    assert out.exit_code == 0, out.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert "scan" in json.dumps(report) and "region = south" in json.dumps(report)
    bad = CliRunner().invoke(main, ["audit", str(path), "--task", "label", "--features", "nowhere"])
    assert bad.exit_code != 0 and "nowhere" in bad.output


def _scan_parquet(tmp_path, n=2400, seed=31):
    """A test set with features in 3 Parquet files, a training set in 1, and the in-memory arguments."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(seed)
    a = rng.choice(["f", "m"], n)
    t = (rng.random(n) < np.where(a == "f", 0.6, 0.4)).astype(int)
    tp = np.where(rng.random(n) < 0.9, t, 1 - t)
    region = rng.choice(["north", "south", "east"], n)
    tp[(region == "south") & (a == "f") & (rng.random(n) < 0.5)] = 1
    age = rng.integers(18, 80, n).astype(float)
    age[rng.random(n) < 0.05] = np.nan
    test = pd.DataFrame({"attr": a, "label": t, "label_pred": tp, "region": region, "age": age})
    a_tr = rng.choice(["f", "m"], 1500)
    train = pd.DataFrame({"attr": a_tr, "label": (rng.random(1500) < np.where(a_tr == "f", 0.65, 0.35)).astype(int)})
    (tmp_path / "test").mkdir()
    for i, rows in enumerate(np.array_split(np.arange(n), 3)):
        pq.write_table(pa.Table.from_pandas(test.iloc[rows], preserve_index=False),
                       tmp_path / "test" / f"part-{i}.parquet", row_group_size=300)
    pq.write_table(pa.Table.from_pandas(train, preserve_index=False), tmp_path / "train.parquet")
    return test, train


@pytest.mark.parametrize(("train", "options"), [(True, {}), (False, {"cross_fit": False}), (False, {}),
                                                (True, {"scan_statistic": "DP", "n_jobs": 2})])
def test_streamed_audit_scan_equals_in_memory(tmp_path, train, options):
    from biasamp.report import audit
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    test, train_frame = _scan_parquet(tmp_path)
    fast = {"n_boot": 100, "progress": False, "sections": ["scan"], "random_state": 7}
    cols = StreamColumns("attr", ("label",), ("label",), None, ("label_pred",), features=("region", "age"))
    streamed = stream_audit(ParquetDataset.open(tmp_path / "test"), cols, batch_size=256,
                            train=ParquetDataset.open(tmp_path / "train.parquet") if train else None,
                            names={"attr": "attr", "task": "label"}, **fast, **options)
    memory = audit(test["attr"], test["label"], task_pred=test["label_pred"], features=test[["region", "age"]],
                   names={"attr": "attr", "task": "label"}, **fast, **{k: v for k, v in options.items()
                                                                         if k != "n_jobs"},
                   **({"attr_train": train_frame["attr"], "task_train": train_frame["label"]} if train else {}))
    s, m = streamed.section("scan"), memory.section("scan")
    assert s.status == m.status == "ok"
    pd.testing.assert_frame_equal(s.tables["subgroups"], m.tables["subgroups"], check_exact=False, rtol=1e-9)
    pd.testing.assert_frame_equal(streamed.table, memory.table, check_exact=False, rtol=1e-9)
    assert s.notes == m.notes and any("age: more than 10 distinct values" in n for n in s.notes)


def test_streamed_audit_scan_has_no_batch_split(tmp_path):
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    _scan_parquet(tmp_path)
    cols = StreamColumns("attr", ("label",), ("label",), None, ("label_pred",), features=("region",))
    rep = stream_audit(ParquetDataset.open(tmp_path / "test"), cols, batch_size=256, n_boot=100, progress=False,
                       sections=["scan"], random_state=7)
    # without a training set the family keeps its distinct rows and splits them once, as in memory: no note of a
    # per-batch split (there was one before the row set)
    from biasamp._core.crossfit import STREAM_SPLIT_NOTE

    assert rep.section("scan").status == "ok"
    assert not any(n == STREAM_SPLIT_NOTE or "each batch" in n for n in rep.section("scan").notes)
    # the command line: --stream with --features runs the section (it used to refuse them)
    from click.testing import CliRunner

    from biasamp.cli import main

    out = CliRunner().invoke(main, ["audit", str(tmp_path / "test"), "--stream", "--task", "label", "--features",
                                    "region,age", "--n-boot", "100", "--json", str(tmp_path / "r.json"), "-q"])
    assert out.exit_code == 0, out.output
    report = json.loads((tmp_path / "r.json").read_text())
    scan_section = next(s for s in report["sections"] if s["key"] == "scan")
    assert scan_section["status"] == "ok" and "streamed" in report["inputs"]


def test_streamed_scan_rows_are_bounded_by_max_memory(tmp_path):
    """The rows a cross-fitted scan keeps (with their features) count against max_memory, as a section's do."""
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    _scan_parquet(tmp_path)
    cols = StreamColumns("attr", ("label",), ("label",), None, ("label_pred",), features=("region", "age"))
    rep = stream_audit(ParquetDataset.open(tmp_path / "test"), cols, batch_size=256, n_boot=100, progress=False,
                       sections=["scan"], random_state=7, max_memory=1024)
    section = rep.section("scan")
    assert section.status == "error" and "distinct test rows" in section.message
    assert "more than max_memory (--max-memory) 1.0 KiB" in section.message


def test_standard_error_is_the_group_jackknife_by_hand():
    # a subgroup's se is the delete-one-group jackknife over the bootstrap groups, computed here by calling
    # bias_amp_directional on the subgroup's rows with each group left out (the training set fixes the signs)
    from biasamp._engine.resample import seed_int, stream_groups
    from biasamp.subgroups._accumulator import SCAN_GROUPS

    data = _population(15, n=1500)
    rng = np.random.default_rng(4)
    a_train = rng.integers(0, 2, 800)
    t_train = (rng.random(800) < np.where(a_train == 1, 0.7, 0.3)).astype(int)
    res = scan(data["attr"], data["task"], task_pred=data["task_pred"], attr_train=a_train, task_train=t_train,
               features=data["features"], n_boot=50, random_state=6, max_order=1)
    group = stream_groups(np.arange(1500), SCAN_GROUPS, seed_int(6))
    n_groups = len(np.unique(group))  # the groups holding a row
    rows = (data["features"].region == "e").to_numpy()

    def value(keep):
        return biasamp.bias_amp_directional(data["attr"][keep], data["task"][keep], task_pred=data["task_pred"][keep],
                                            attr_train=a_train, task_train=t_train).a_to_t.value

    theta = value(rows)
    dev = np.array([value(rows & (group != g)) - theta for g in np.unique(group[rows])])
    dev = np.concatenate([dev, np.zeros(n_groups - len(dev))])  # a group without a row of it changes nothing
    want = np.sqrt((n_groups - 1) / n_groups * ((dev - dev.mean()) ** 2).sum())
    got = res.subgroups.set_index("rule").loc["region = e"]
    assert got.estimate == pytest.approx(theta, abs=1e-12)
    assert got.se == pytest.approx(want, rel=1e-9)


def test_replicate_standard_error_rule():
    # the studentising rule of the band: with every group drawn once it is the sample's jackknife standard error;
    # for a mean of the rows it is the replicate's own jackknife standard error (its rows and its number of rows)
    from biasamp.subgroups._band import replicate_se

    rng = np.random.default_rng(0)
    g = 400
    n_g = rng.poisson(1.0, g).astype(float)  # the subgroup's rows in each group
    x_g = rng.binomial(n_g.astype(int), 0.3).astype(float)  # their sum of a 0/1 outcome

    def jack_se(w):  # exact delete-one-group jackknife of the mean sum(x)/sum(n) over groups drawn w times
        idx = np.repeat(np.arange(g), w.astype(int))
        xs, ns = x_g[idx], n_g[idx]
        loo = (xs.sum() - xs) / (ns.sum() - ns)
        return np.sqrt((len(idx) - 1) / len(idx) * ((loo - loo.mean()) ** 2).sum()), xs.sum() / ns.sum()

    se, theta = jack_se(np.ones(g))
    dev = ((x_g.sum() - x_g) / (n_g.sum() - n_g) - theta)[:, None]
    ones = replicate_se(np.ones((1, g)), dev, n_g[:, None], np.array([0]))
    assert ones[0, 0] == pytest.approx(se, rel=1e-12)
    counts = np.stack([np.bincount(rng.integers(0, g, g), minlength=g) for _ in range(200)]).astype(float)
    lin = replicate_se(counts, dev, n_g[:, None], np.array([0]))[:, 0]
    exact = np.array([jack_se(c)[0] for c in counts])
    # the linearised standard error follows the replicate's own: within 3% each, and their spreads agree
    assert np.abs(lin / exact - 1).max() < 0.03
    assert np.std(lin) == pytest.approx(np.std(exact), rel=0.1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.integers(300, 1000), rows=st.integers(80, 150), rate=st.floats(0.2, 0.8),
       seed=st.integers(0, 2**32 - 1))
def test_replicate_standard_error_of_a_small_subgroup_is_its_own_jackknife(groups, rows, rate, seed):
    # a subgroup of 80-150 rows spread over 300-1000 bootstrap groups (the scan of 1,000 rows): in every replicate
    # the linearised standard error is the replicate's own delete-one-group jackknife of the rate within 2%.
    # Centring the drawn deviations at their mean over all groups (the first studentised band) let it grow with
    # |theta* - theta| (up to 10-20% too large on the replicates far out: the band's tail too short)
    from biasamp.subgroups._band import replicate_se

    rng = np.random.default_rng(seed)
    n_g = rng.multinomial(rows, np.full(groups, 1 / groups)).astype(float)
    x_g = rng.binomial(n_g.astype(int), rate).astype(float)
    assume(0 < x_g.sum() < rows)

    def jack_se(w):
        idx = np.repeat(np.arange(groups), w.astype(int))
        xs, ns = x_g[idx], n_g[idx]
        loo = (xs.sum() - xs) / (ns.sum() - ns)
        return np.sqrt((len(idx) - 1) / len(idx) * ((loo - loo.mean()) ** 2).sum())

    theta = x_g.sum() / rows
    dev = ((x_g.sum() - x_g) / (rows - n_g) - theta)[:, None]
    counts = np.stack([np.bincount(rng.integers(0, groups, groups), minlength=groups) for _ in range(100)])
    lin = replicate_se(counts.astype(float), dev, n_g[:, None], np.array([0]))[:, 0]
    exact = np.array([jack_se(c) for c in counts])
    ok = exact > 0
    assert np.abs(lin[ok] / exact[ok] - 1).max() < 0.02


def test_the_audits_scan_takes_the_rows_the_weights_and_missing_keep():
    """Features come one row per test row given: rows of weight 0 (and, with missing='drop', rows with a missing
    attribute) leave the scan with the labels' rows, so the section is the audit's of those rows alone (it
    refused the features before)."""
    rng = np.random.default_rng(22)
    n = 1200
    a = rng.choice(["f", "m"], n).astype(object)
    t = (rng.random(n) < np.where(a == "f", 0.6, 0.4)).astype(int)
    tp = np.where(rng.random(n) < 0.85, t, 1 - t)
    feats = pd.DataFrame({"region": rng.choice(["north", "south", "east"], n)})
    w = rng.integers(0, 3, n).astype(float)
    a[::41] = None
    kw = {"sections": ["scan"], "n_boot": 60, "progress": False, "random_state": 3}
    rep = biasamp.audit(a, t, task_pred=tp, features=feats, sample_weight=w, missing="drop", **kw)
    keep = (w > 0) & np.array([x is not None for x in a])
    ref = biasamp.audit(a[keep], t[keep], task_pred=tp[keep], features=feats[keep].reset_index(drop=True),
                        sample_weight=w[keep], **kw)
    got, want = (next(s for s in r.sections if s.key == "scan").tables["subgroups"] for r in (rep, ref))
    pd.testing.assert_frame_equal(got, want)
