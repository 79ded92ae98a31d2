"""Cross-fitted signs without a training set (issue 21 item 1): the split, the pure functions, the bias it removes."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp import UndefinedPairWarning, bias_amp_directional, bias_amp_mals, bootstrap, multi_bias_amp
from biasamp._core.crossfit import crossfit_folds, crossfit_splits, split_seed
from biasamp._core.labels import encode_labels
from biasamp.cooccurrence._metrics import directional_from_folds, mals_from_folds
from biasamp.exceptions import SmallGroupWarning


def _noise(seed: int, n: int = 6000, levels: int = 200):
    """Issue 21's reproducer: an attribute of 200 random levels, independent of the task; noisy predictions."""
    rng = np.random.default_rng(seed)
    g, y = rng.integers(0, levels, n), (rng.random(n) < 0.45).astype(int)
    p = y ^ (rng.random(n) < 0.3)
    gp = np.where(rng.random(n) < 0.2, rng.integers(0, levels, n), g)
    return g, y, p, gp


def _encoded(attr, task, task_pred, attr_pred=None):
    a = encode_labels({"attr": attr}, {"attr_pred": attr_pred})
    t = encode_labels({"task": task}, {"task_pred": task_pred})
    return a, t


def _fold_rows(share, *columns) -> list[Counter]:
    """Per fold, the multiset of rows (tuples of the columns' values), from every row's share of fold 0 (0 or 1)."""
    rows = list(zip(*(np.asarray(c).reshape(len(share), -1).tolist() for c in columns)))
    rows = [tuple(tuple(x) for x in r) for r in rows]
    return [Counter(r for r, f in zip(rows, share) if f == k) for k in (1, 0)]


def _rows(*columns) -> list[tuple]:
    """The rows (tuples of the columns' values), in order."""
    return _fold_rows(np.ones(len(columns[0]), dtype=int), *columns)[0].elements()


# --------------------------------------------------------------------------- #
# the split
# --------------------------------------------------------------------------- #
@st.composite
def labelled(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n, ka, kt = draw(st.integers(6, 60)), draw(st.integers(2, 4)), draw(st.integers(1, 3))
    attr = rng.integers(0, ka, n)
    attr[:ka] = np.arange(ka)
    task = (rng.random((n, kt)) < 0.4).astype(int)
    task_pred = np.where(rng.random((n, kt)) < 0.3, 1 - task, task)
    attr_pred = np.where(rng.random(n) < 0.3, rng.integers(0, ka, n), attr)
    return attr, task, task_pred, attr_pred, seed


@settings(max_examples=60, deadline=None)
@given(labelled())
def test_every_attribute_class_is_halved(data):
    attr, task, task_pred, attr_pred, _ = data
    a, t = _encoded(attr, task, task_pred, attr_pred)
    share = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], attr_pred=a["attr_pred"])
    assert set(np.unique(share)) <= {0, 1}  # without weights: a row is in fold 0 (1) or in fold 1 (0)
    sizes = np.bincount(attr)
    in_fold0 = np.bincount(attr[share == 1], minlength=len(sizes))
    np.testing.assert_array_equal(in_fold0, (sizes + 1) // 2)  # ceil(n_c / 2) in fold 0, floor in fold 1


@settings(max_examples=60, deadline=None)
@given(labelled(), st.integers(0, 2**32 - 1))
def test_the_folds_hold_the_same_rows_whatever_the_order_and_the_names(data, seed):
    attr, task, task_pred, attr_pred, _ = data
    a, t = _encoded(attr, task, task_pred, attr_pred)
    folds = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], attr_pred=a["attr_pred"])
    expected = _fold_rows(folds, attr, task, task_pred, attr_pred)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(attr))
    a2, t2 = _encoded(attr[perm], task[perm], task_pred[perm], attr_pred[perm])
    folds2 = crossfit_folds(a2["attr"], [t2["task"], t2["task_pred"]], attr_pred=a2["attr_pred"])
    assert _fold_rows(folds2, attr[perm], task[perm], task_pred[perm], attr_pred[perm]) == expected
    # renamed attribute classes (a new sort order) and reordered task columns: the same rows in each fold
    names = np.array([f"c{i}" for i in rng.permutation(attr.max() + 1)], dtype=object)
    cols = rng.permutation(task.shape[1])
    a3, t3 = _encoded(names[attr], task[:, cols], task_pred[:, cols], names[attr_pred])
    folds3 = crossfit_folds(a3["attr"], [t3["task"], t3["task_pred"]], attr_pred=a3["attr_pred"])
    back = np.argsort(cols)
    renamed = _fold_rows(folds3, attr, task[:, cols][:, back], task_pred[:, cols][:, back], attr_pred)
    code = np.argsort(np.argsort(names))  # the class each name is encoded as (the names' sort order)
    if Counter(_rows(code[attr], task[:, cols], task_pred[:, cols], code[attr_pred])) == \
            Counter(_rows(attr, task, task_pred, attr_pred)):
        # the renaming maps the data onto itself (e.g. two classes whose rows mirror each other): no function of
        # the rows can tell the two namings apart, so the encoded folds are the same, not the renamed rows'
        assert _fold_rows(folds3, code[attr], task[:, cols], task_pred[:, cols], code[attr_pred]) == expected
    else:
        assert renamed == expected


def test_the_seed_of_the_split():
    g, y, p, _ = _noise(0, n=2000, levels=20)
    a, t = _encoded(g, y, p)
    default = crossfit_folds(a["attr"], [t["task"], t["task_pred"]])
    assert split_seed(None) == 0
    np.testing.assert_array_equal(default, crossfit_folds(a["attr"], [t["task"], t["task_pred"]], random_state=0))
    one = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], random_state=1)
    np.testing.assert_array_equal(one, crossfit_folds(a["attr"], [t["task"], t["task_pred"]], random_state=1))
    assert 0.3 < (one != default).mean() < 0.7  # another split, and a valid one: every class halved again
    np.testing.assert_array_equal(np.bincount(g[one == 1], minlength=20), (np.bincount(g) + 1) // 2)
    with pytest.raises(ValueError, match="cross_fit_random_state"):
        split_seed(-1)
    with pytest.raises(TypeError, match="cross_fit_random_state"):
        split_seed("seed")


def test_weighted_rows_go_to_one_fold_whole_and_units_split_as_repeated_rows():
    g, y, p, _ = _noise(1, n=600, levels=6)
    a, t = _encoded(g, y, p)
    # a sample weight, integer or not, is one observation's: the row goes to one fold whole
    w = np.random.default_rng(2).integers(1, 4, 600)
    share = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], weights=w.astype(float))
    assert ((share == 0) | (share == w)).all()
    # units (a stream's numbers of identical rows) are numbers of rows: the split of the repeated rows, unit for unit
    rows = np.repeat(np.arange(600), w)
    share = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], units=w)
    assert ((share >= 0) & (share <= w)).all() and ((share > 0) & (share < w)).any()  # some rows shared
    a2, t2 = _encoded(g[rows], y[rows], p[rows])
    repeated = crossfit_folds(a2["attr"], [t2["task"], t2["task_pred"]])
    by_content = {}
    for f, (key, s) in enumerate(((np.c_[g, y, p], share), (np.c_[g[rows], y[rows], p[rows]], repeated))):
        for k, v in zip(map(tuple, key), s):
            by_content.setdefault(k, [0, 0])[f] += v
    assert all(x == r for x, r in by_content.values())
    # other weights: a row goes to one fold whole, its weight part of its content
    w = np.random.default_rng(2).choice([0.5, 1.0, 3.5], size=600)
    share = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], weights=w)
    assert ((share == 0) | (share == w)).all()
    perm = np.random.default_rng(3).permutation(600)
    a2, t2 = _encoded(g[perm], y[perm], p[perm])
    share2 = crossfit_folds(a2["attr"], [t2["task"], t2["task_pred"]], weights=w[perm])
    assert _fold_rows(share2 > 0, g[perm], y[perm], p[perm], w[perm]) == _fold_rows(share > 0, g, y, p, w)
    # weights of one split as no weights
    ones = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], weights=np.ones(600))
    np.testing.assert_array_equal(ones, crossfit_folds(a["attr"], [t["task"], t["task_pred"]]))


def test_each_statistic_has_its_own_split_drawn_from_the_roles_it_reads():
    g, y, p, gp = _noise(4, n=3000, levels=10)
    a, t = _encoded(g, y, p, gp)
    roles = {"attr": a["attr"], "attr_pred": a["attr_pred"], "task": t["task"], "task_pred": t["task_pred"]}
    at, ta = crossfit_splits(roles, [("attr", "task", "task_pred"), ("task", "attr", "attr_pred")])
    # the order the roles are listed in does not matter, nor the other roles given
    np.testing.assert_array_equal(at, crossfit_splits(roles, [("task_pred", "attr", "task")])[0])
    np.testing.assert_array_equal(ta, crossfit_folds(a["attr"], [t["task"]], attr_pred=a["attr_pred"]))
    assert (at != ta).any()
    # so A->T does not change when T->A's predictions are given too
    with_both = bias_amp_directional(g, y, task_pred=p, attr_pred=gp, min_group_size=0)
    alone = bias_amp_directional(g, y, task_pred=p, min_group_size=0)
    assert with_both.a_to_t.value == alone.a_to_t.value


# --------------------------------------------------------------------------- #
# the pure functions of two folds' counts, against an independent computation
# --------------------------------------------------------------------------- #
def _by_hand_directional(attr, task, task_pred, folds):
    """Cross-fitted A->T with a loop over pairs: signs of one fold, Delta of the other, mean of the ways."""
    classes, tasks = np.unique(attr), np.unique(task)
    values = []
    for a in classes:
        for t in tasks:
            ways = []
            for f in (0, 1):
                s, d = folds == f, folds == 1 - f
                n, n_a, n_t = s.sum(), (attr[s] == a).sum(), (task[s] == t).sum()
                y = np.sign(n * ((attr[s] == a) & (task[s] == t)).sum() - n_a * n_t)
                members = d & (attr == a)
                if members.any():
                    ways.append(y * ((task_pred[members] == t).mean() - (task[members] == t).mean()))
            if ways:
                values.append(np.mean(ways))
    return float(np.mean(values))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_cross_fitted_a_to_t_equals_a_loop_over_pairs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    attr, task = rng.integers(0, 3, n), rng.integers(0, 3, n)
    task_pred = np.where(rng.random(n) < 0.3, rng.integers(0, 3, n), task)
    a, t = _encoded(attr, task, task_pred)
    folds = 1 - crossfit_folds(a["attr"], [t["task"], t["task_pred"]])  # the fold of every row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = bias_amp_directional(attr, task, task_pred=task_pred, min_group_size=0)
    assert res.a_to_t.value == pytest.approx(_by_hand_directional(attr, task, task_pred, folds), abs=1e-12)
    assert res.cross_fit and res.train_source == "test"


def test_the_pure_functions_of_the_folds_equal_the_label_functions():
    g, y, p, gp = _noise(5, n=3000, levels=8)
    a, t = _encoded(g, y, p, gp)
    folds = 1 - crossfit_folds(a["attr"], [t["task"], t["task_pred"]])
    counts = [biasamp.CooccurrenceCounts.from_labels(g[folds == f], y[folds == f], task_pred=p[folds == f],
                                                     attr_classes=a["attr"].classes, task_classes=t["task"].classes, binary_task="both")
              for f in (0, 1)]
    res = directional_from_folds({"A->T": tuple(counts)})
    assert res.a_to_t.value == bias_amp_directional(g, y, task_pred=p, binary_task="both").a_to_t.value
    assert res.t_to_a is None and res.cross_fit
    # the same folds for both directions are accepted (a layer that splits once)
    both = [biasamp.CooccurrenceCounts.from_labels(g[folds == f], y[folds == f], task_pred=p[folds == f],
                                                   attr_pred=gp[folds == f], attr_classes=a["attr"].classes,
                                                   task_classes=t["task"].classes, binary_task="both") for f in (0, 1)]
    assert directional_from_folds({"A->T": tuple(both), "T->A": tuple(both)}).a_to_t.value == res.a_to_t.value
    with pytest.raises(ValueError, match="folds must map"):
        directional_from_folds({"X": tuple(counts)})
    # MALS: the indicator of one fold, bias_pred - bias_train of the other, by hand
    mf = 1 - crossfit_folds(a["attr"], [t["task"], t["task_pred"]], attr_pred=a["attr_pred"],
                            stratified=False)
    tables = [biasamp.CooccurrenceCounts.from_labels(g[mf == f], y[mf == f], attr_pred=gp[mf == f],
                                                     task_pred=p[mf == f], attr_classes=a["attr"].classes,
                                                     task_classes=t["task"].classes, binary_task="both") for f in (0, 1)]
    got = mals_from_folds(*tables, min_group_size=0)
    ways = []
    for f in (0, 1):
        at = tables[f].cross("attr", "task")
        other = tables[1 - f]
        b_train = other.cross("attr", "task") / other.cross("attr", "task").sum(axis=0)
        b_pred = other.cross("attr_pred", "task_pred") / other.cross("attr_pred", "task_pred").sum(axis=0)
        ways.append(np.where(8 * at > at.sum(axis=0), b_pred - b_train, 0.0))
    assert got.value == pytest.approx(float((ways[0] + ways[1]).sum() / 2 / 2), abs=1e-12)
    assert got.value == bias_amp_mals(g, y, attr_pred=gp, task_pred=p, cross_fit=True, min_group_size=0,
                                      binary_task="both").value


def test_multi_raw_equals_the_single_label_metrics_when_m_holds_the_single_labels():
    g, y, p, gp = _noise(6, n=3000, levels=5)
    task, task_pred = np.eye(3, dtype=int)[y + (g % 2)], np.eye(3, dtype=int)[p + (gp % 2)]
    multi = multi_bias_amp(g, task, attr_pred=gp, task_pred=task_pred, max_size=1)
    direct = bias_amp_directional(g, task, attr_pred=gp, task_pred=task_pred)
    mals = bias_amp_mals(g, task, attr_pred=gp, task_pred=task_pred, cross_fit=True)
    assert multi.cross_fit and multi.g_to_m.raw == pytest.approx(direct.a_to_t.value, abs=1e-15)
    assert multi.m_to_g.raw == pytest.approx(direct.t_to_a.value, abs=1e-15)
    assert multi.mals.raw == pytest.approx(mals.value, abs=1e-15)
    # value and variance of Multi-> use no sign: the same as the plug-in's
    plug = multi_bias_amp(g, task, attr_pred=gp, task_pred=task_pred, max_size=1, cross_fit=False)
    assert multi.g_to_m.value == plug.g_to_m.value and multi.g_to_m.variance == plug.g_to_m.variance
    assert "signs cross-fitted (2 folds)" in repr(multi) and "signs from the test rows" in repr(plug)


# --------------------------------------------------------------------------- #
# the bias it removes, and its interval (issue 21's reproducer)
# --------------------------------------------------------------------------- #
def test_the_noise_attribute_reads_no_amplification():
    """20 samples of an attribute that is pure noise: the cross-fitted interval covers 0 (the plug-in's does not)."""
    covered, covered_plug_in, estimates = 0, 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallGroupWarning)
        for seed in range(20):
            g, y, p, _ = _noise(100 + seed)
            # both classes of the binary task, the protocol of issue 21 (one column: 52/60 covered on 60 samples,
            # as an N x 1 indicator was before the rule for a binary task)
            boot = bootstrap(bias_amp_directional, g, y, task_pred=p, n_boot=200, random_state=seed,
                             binary_task="both")
            plug = bootstrap(bias_amp_directional, g, y, task_pred=p, n_boot=200, random_state=seed, cross_fit=False,
                             binary_task="both")
            lo, hi = boot.ci["A->T"]
            covered += lo <= 0 <= hi
            lo, hi = plug.ci["A->T"]
            covered_plug_in += lo <= 0 <= hi
            estimates.append(boot.estimate["A->T"])
            assert boot.estimate["A->T"] == bias_amp_directional(g, y, task_pred=p, binary_task="both").a_to_t.value
    assert covered >= 18  # >= 90%
    assert covered_plug_in <= 2  # the plug-in reads "reduced" (A->T about -0.04): the test can fail
    est = np.array(estimates)
    assert abs(est.mean()) < 3 * est.std(ddof=1) / np.sqrt(len(est))  # within noise of 0
    assert "cross-fitted" in " ".join(boot.notes)


def test_the_share_statistics_cover_0_on_the_noise_attribute():
    """BiasAmp_MALS and Multi_MALS raw on 12 noise samples: unstratified folds and the per-way small-group rule
    remove the bias the stratified split had (MALS about -0.006, Multi_MALS raw about -0.01: the indicator's
    fold and the change's fold shared each group's size in the sample)."""
    covered = {"MALS": 0, "Multi_MALS raw": 0}
    estimates: dict = {"MALS": [], "Multi_MALS raw": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(12):
            g, y, p, gp = _noise(200 + seed)
            # both classes of the binary task (the protocol of this test; one column, as an N x 1 indicator was
            # before the rule for a binary task: MALS 10/12, Multi_MALS raw 9/12 covered)
            for boot in (bootstrap(biasamp.bias_amp_mals, g, y, attr_pred=gp, task_pred=p, cross_fit=True,
                                   n_boot=150, random_state=seed, binary_task="both"),
                         bootstrap(biasamp.multi_bias_amp, g, y, attr_pred=gp, task_pred=p, n_boot=150,
                                   random_state=seed, binary_task="both")):
                for name in set(covered) & set(boot.ci):
                    lo, hi = boot.ci[name]
                    covered[name] += lo <= 0 <= hi
                    estimates[name].append(boot.estimate[name])
    for name, est in estimates.items():
        est = np.array(est)
        assert covered[name] >= 10, (name, covered[name])  # >= 83% of 12 (the benchmark measures 0.9+)
        assert abs(est.mean()) < 3 * est.std(ddof=1) / np.sqrt(len(est)), name  # within noise of 0


def test_the_small_group_rule_of_a_cross_fitted_share_statistic_is_read_per_way():
    """A group small in fold 0 (10 predicted rows) but not in fold 1 (20): way 0 leaves it out, way 1 counts it
    (twice 20 >= 30); by hand, from two hand-made folds."""
    rng = np.random.default_rng(3)

    def fold(sizes):
        g = np.repeat(np.arange(len(sizes)), sizes)
        y = (rng.random(len(g)) < 0.5).astype(int)
        y[::7] = 1
        p = np.where(rng.random(len(g)) < 0.3, 1 - y, y)
        return g, y, p

    folds = [fold([10, 40, 40]), fold([20, 40, 40])]
    tables = [biasamp.CooccurrenceCounts.from_labels(g, y, attr_pred=g, task_pred=p, attr_classes=[0, 1, 2],
                                                     task_classes=[0, 1], binary_task="both") for g, y, p in folds]
    got = mals_from_folds(*tables, min_group_size=30)
    ways = []
    for f, keep in ((0, [False, True, True]), (1, [True, True, True])):
        at = tables[f].cross("attr", "task")
        other = tables[1 - f]
        b_train = other.cross("attr", "task") / other.cross("attr", "task").sum(axis=0)
        b_pred = other.cross("attr_pred", "task_pred") / other.cross("attr_pred", "task_pred").sum(axis=0)
        ways.append(np.where((3 * at > at.sum(axis=0)) & np.array(keep)[:, None], b_pred - b_train, 0.0))
    assert got.value == pytest.approx(float((ways[0] + ways[1]).sum() / 2 / 2), abs=1e-12)
    assert got.small_groups == ()  # counted by one way: in the headline
    assert got.pairs["small_fold0"].tolist() == [True, True, False, False, False, False]
    assert not got.pairs["small_fold1"].any()
    # small in both folds: out of the headline (and named)
    tables = [biasamp.CooccurrenceCounts.from_labels(g, y, attr_pred=g, task_pred=p, attr_classes=[0, 1, 2],
                                                     task_classes=[0, 1], binary_task="both") for g, y, p in (fold([10, 40, 40]),
                                                                                        fold([12, 40, 40]))]
    with pytest.warns(SmallGroupWarning):
        assert mals_from_folds(*tables, min_group_size=30).small_groups == (0,)


@settings(max_examples=40, deadline=None)
@given(labelled(), st.integers(0, 2**32 - 1))
def test_unstratified_folds_halve_the_rows_whatever_the_order_and_the_names(data, seed):
    attr, task, task_pred, attr_pred, _ = data
    a, t = _encoded(attr, task, task_pred, attr_pred)
    folds = crossfit_folds(a["attr"], [t["task"], t["task_pred"]], attr_pred=a["attr_pred"], stratified=False)
    assert int(folds.sum()) == (len(attr) + 1) // 2  # ceil(n / 2) rows in fold 0
    expected = _fold_rows(folds, attr, task, task_pred, attr_pred)
    perm = np.random.default_rng(seed).permutation(len(attr))
    a2, t2 = _encoded(attr[perm], task[perm], task_pred[perm], attr_pred[perm])
    folds2 = crossfit_folds(a2["attr"], [t2["task"], t2["task_pred"]], attr_pred=a2["attr_pred"], stratified=False)
    assert _fold_rows(folds2, attr[perm], task[perm], task_pred[perm], attr_pred[perm]) == expected
    with pytest.raises(ValueError, match="stratified: one flag per statistic"):
        crossfit_splits({"attr": a["attr"], "task": t["task"]}, [("attr", "task")], stratified=[True, False])


def test_the_audit_reads_the_noise_attribute_as_neither_amplified_nor_reduced():
    g, y, p, _ = _noise(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = biasamp.audit(g, y, task_pred=p, sections=["directional"], n_boot=300, progress=False)
    rows = report.table[report.table["section"] == "directional"]
    assert set(rows["reading"]) & {"amplified", "reduced"} == set(), rows[["direction", "value", "reading"]]
    assert any("cross-fitted" in n for n in report.section("directional").notes)
    # the per-pair chart draws the cross-fitted terms without error bars, and its caption says so
    (fig,) = [f for f in report.section("directional").figures if f.key == "pairs"]
    assert "cross-fitted terms (no per-pair interval" in fig.caption and "with simultaneous" not in fig.caption
    assert "low" not in fig.data.columns or fig.data["low"].isna().all()


def test_a_test_set_balanced_by_design_needs_its_design_as_the_training_set():
    """The known limit: every sign is 0 on all rows, but the folds' chance imbalance gives signs."""
    attr = np.repeat([0, 1], 200)
    task = np.tile(np.repeat([0, 1], 100), 2)  # exactly independent of attr
    task_pred = np.where(np.random.default_rng(0).random(400) < 0.2, 1 - task, task)
    plug_in = bias_amp_directional(attr, task, task_pred=task_pred, cross_fit=False)
    design = bias_amp_directional(attr, task, task_pred=task_pred, attr_train=attr, task_train=task)
    assert (plug_in.a_to_t.pairs["y"] == 0).all() and plug_in.a_to_t.value == 0.0 and design.a_to_t.value == 0.0
    crossfit = bias_amp_directional(attr, task, task_pred=task_pred)
    assert (crossfit.a_to_t.pairs["y"] == 0).all()  # the sign on every row, for reading, is 0 ...
    assert (crossfit.a_to_t.pairs[["y_fold0", "y_fold1"]] != 0).any().any()  # ... the folds' signs are not
    assert crossfit.a_to_t.value != 0.0


# --------------------------------------------------------------------------- #
# options
# --------------------------------------------------------------------------- #
def test_cross_fit_options_raise_named_errors():
    g, y, p, gp = _noise(7, n=400, levels=4)
    with pytest.raises(ValueError, match="cross_fit=True needs the signs to come from the test rows"):
        bias_amp_directional(g, y, task_pred=p, attr_train=g, task_train=y, cross_fit=True)
    with pytest.raises(ValueError, match="cross_fit=True"):
        multi_bias_amp(g, y, task_pred=p, attr_train=g, task_train=y, cross_fit=True)
    with pytest.raises(TypeError, match="cross_fit must be None, True or False"):
        bias_amp_directional(g, y, task_pred=p, cross_fit="yes")
    with pytest.raises(ValueError, match="cross_fit_random_state"):
        bias_amp_directional(g, y, task_pred=p, cross_fit_random_state=-2)
    with pytest.raises(ValueError, match="the training rows must be the prediction rows"):
        bias_amp_mals(g[:300], y[:300], attr_pred=gp, task_pred=p, cross_fit=True)
    with pytest.raises(ValueError, match="train_sample_weight"):
        bias_amp_mals(g, y, attr_pred=gp, task_pred=p, cross_fit=True, sample_weight=np.ones(400),
                      train_sample_weight=np.full(400, 2.0))
    # with a training set nothing changes: None means the training set's signs
    a = bias_amp_directional(g, y, task_pred=p, attr_train=g, task_train=y)
    assert not a.cross_fit and a.a_to_t.value == bias_amp_directional(g, y, task_pred=p, cross_fit=False).a_to_t.value
    # bias_amp_mals cannot tell that its training rows are the test rows: None is the plug-in
    assert not bias_amp_mals(attr_pred=gp, task_pred=p, attr_train=g, task_train=y).cross_fit


def test_the_bootstrap_of_the_cross_fitted_statistics():
    g, y, p, gp = _noise(8, n=3000, levels=6)
    for metric, args, kwargs, names in (
        (bias_amp_directional, (g, y), {"task_pred": p, "attr_pred": gp}, ("A->T", "T->A")),
        (bias_amp_mals, (g, y), {"task_pred": p, "attr_pred": gp, "cross_fit": True}, ("MALS",)),
        (multi_bias_amp, (g, y), {"task_pred": p, "attr_pred": gp}, ("G->M raw", "M->G raw", "Multi_MALS raw")),
    ):
        point = metric(*args, **kwargs)
        boot = bootstrap(metric, *args, n_boot=200, random_state=1, **kwargs)
        again = bootstrap(metric, *args, n_boot=200, random_state=1, **kwargs)
        assert boot.ci == again.ci
        assert boot.result.cross_fit
        for name in names:
            lo, hi = boot.ci[name]
            assert lo <= boot.estimate[name] <= hi
        other = bootstrap(metric, *args, n_boot=200, random_state=1, cross_fit_random_state=5, **kwargs)
        assert other.estimate != boot.estimate  # another split
        assert bootstrap(metric, *args, n_boot=50, random_state=1, cross_fit_random_state=5,
                         **kwargs).estimate == other.estimate
        del point


def test_weighted_rows_of_a_noise_attribute_are_not_read_as_reduced():
    """Weights independent of the labels leave the cross-fitted A->T of a noise attribute centred on its truth, 0:
    a weighted row is one observation and goes to one fold whole. (Split as units, a row of weight 3 sat in both
    folds and the selection bias came back: a mean of -0.023 over these samples, standard error 0.0015.)"""
    values = []
    for seed in range(12):
        g, y, p, _ = _noise(seed)
        w = np.random.default_rng(100 + seed).integers(1, 4, len(g)).astype(float)
        values.append(bias_amp_directional(g, y, task_pred=p, sample_weight=w, include_small_groups=True).a_to_t.value)
    se = np.std(values, ddof=1) / np.sqrt(len(values))
    assert abs(np.mean(values)) < 3 * se + 0.002, (np.mean(values), se)


@pytest.mark.parametrize("k", [10, 17, 24])
def test_fortran_ordered_label_matrices_split_as_c_ordered_ones(k):
    """A DataFrame's 0/1 values come in Fortran order: the split reads every row's bytes as 16-bit words, so they are
    made contiguous (a weighted multi-label call raised 'the last axis must be contiguous')."""
    rng = np.random.default_rng(k)
    n = 500
    attr = rng.integers(0, 3, n)
    task = (rng.random((n, k)) < 0.2).astype(np.int8)
    pred = (task ^ (rng.random((n, k)) < 0.1)).astype(np.int8)
    for weights in (None, rng.integers(1, 4, n).astype(float), rng.random(n) + 0.5):
        c = bias_amp_directional(attr, task, task_pred=pred, sample_weight=weights)
        f = bias_amp_directional(attr, np.asfortranarray(task), task_pred=np.asfortranarray(pred),
                                 sample_weight=weights)
        assert (f.a_to_t.value, f.t_to_a) == (c.a_to_t.value, c.t_to_a)
