"""COMPAS loader (docs/definitions.md#def-datasets): the ProPublica filters and the DPA paper's Table 6 counts."""

from __future__ import annotations

import pandas as pd
import pytest

from biasamp.datasets import COMPAS_FEATURES, load_compas


def test_compas_counts_match_dpa_table6(shared_data):
    d = load_compas(shared_data / "compas" / "compas-scores-two-years.csv")
    assert len(d.frame) == 5278 and list(d.features.columns) == list(COMPAS_FEATURES)
    counts = pd.crosstab(d.attr, d.task)
    assert counts.loc["Caucasian"].tolist() == [1229, 874]
    assert counts.loc["African-American"].tolist() == [1402, 1773]
    assert len(load_compas(shared_data / "compas" / "compas-scores-two-years.csv", races=None).frame) == 6172


def test_compas_two_year_recid_differs(shared_data):
    d = load_compas(shared_data / "compas" / "compas-scores-two-years.csv", task="two_year_recid")
    counts = pd.crosstab(d.attr, d.task)
    assert counts.loc["Caucasian"].tolist() == [1281, 822]
    assert counts.loc["African-American"].tolist() == [1514, 1661]


def test_compas_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_compas(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("race,age\nCaucasian,30\n")
    with pytest.raises(ValueError, match="lacks the column"):
        load_compas(bad)
    cols = ["days_b_screening_arrest", "is_recid", "c_charge_degree", "score_text", "race", *COMPAS_FEATURES]
    tiny = tmp_path / "tiny.csv"
    pd.DataFrame([[0, 1, "F", "Low", "Caucasian", 30, 0, 0, 0, 1],
                  [99, 1, "F", "Low", "Caucasian", 30, 0, 0, 0, 1],     # screening too late
                  [0, -1, "F", "Low", "Caucasian", 30, 0, 0, 0, 1],     # unknown recidivism
                  [0, 0, "O", "Low", "Caucasian", 30, 0, 0, 0, 1],      # ordinance charge
                  [0, 0, "F", "Low", "Hispanic", 30, 0, 0, 0, 1]],      # other race
                 columns=cols).to_csv(tiny, index=False)
    d = load_compas(tiny)
    assert len(d.frame) == 1 and d.task.tolist() == [1]
    with pytest.raises(ValueError, match="no row left"):
        load_compas(tiny, races=("Asian",))


# --------------------------------------------------------------------------- #
# sub-datasets: balanced_subset, ratio_bounded_subset, oversample_balanced
# --------------------------------------------------------------------------- #
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp.datasets import balanced_subset, oversample_balanced, ratio_bounded_subset


def _cell_counts(attr, task, rows):
    return pd.crosstab(pd.Series(np.asarray(attr)[rows], name="A"), pd.Series(np.asarray(task)[rows], name="T"))


def test_balanced_compas_reproduces_dpa_table6b(shared_data):
    """DPA App. E, Table 6(b): the balanced COMPAS set has 874 rows in each (race, is_recid) cell."""
    d = load_compas(shared_data / "compas" / "compas-scores-two-years.csv")
    rows = balanced_subset(d.attr, d.task, equal_cells=True, random_state=0)
    assert len(rows) == 3496
    assert _cell_counts(d.attr, d.task, rows).to_numpy().tolist() == [[874, 874], [874, 874]]
    # Eq. 7 alone keeps, per task, the smaller race's count: 1229 (no recidivism), 874 (recidivism)
    rows = balanced_subset(d.attr, d.task, random_state=0)
    assert _cell_counts(d.attr, d.task, rows).to_numpy().tolist() == [[1229, 874], [1229, 874]]
    # the 874 of a cell that is not cut are exactly that cell's rows
    cauc_recid = np.flatnonzero((d.attr == "Caucasian") & (d.task == 1))
    assert np.isin(cauc_recid, rows).all()


def _imsitu(shared_data):
    folder = shared_data / "wang2019_balanced" / "imsitu"
    train = pd.read_csv(folder / "train.csv")
    ids = np.load(folder / "balanced_subset_ids.npz")
    return train, ids


@pytest.mark.parametrize("alpha", [1, 2, 3])
def test_imsitu_alpha_subsets_match_wang_et_al(shared_data, alpha):
    """Wang et al.'s released α-balanced imSitu training sets have exactly our per-(verb, gender) counts."""
    train, ids = _imsitu(shared_data)
    if alpha == 1:
        rows = balanced_subset(train["gender"], train["verb_id"], random_state=0)
    else:
        rows = ratio_bounded_subset(train["gender"], train["verb_id"], ratio=alpha, strict=False, random_state=0)
    ref = train.set_index("row").loc[ids[f"train_ratio_{alpha}"]]
    theirs = pd.crosstab(ref["verb_id"], ref["gender"])
    ours = pd.crosstab(train["verb_id"].iloc[rows], train["gender"].iloc[rows]).reindex_like(theirs)
    assert len(rows) == len(ids[f"train_ratio_{alpha}"]) == {1: 14684, 2: 19149, 3: 21143}[alpha]
    pd.testing.assert_frame_equal(ours.fillna(0).astype(int), theirs, check_names=False)


def test_coco_subsets_satisfy_the_constraints(shared_data):
    v = np.load(shared_data / "wang2019_balanced" / "coco" / "val.npz")
    gender, objects = v["gender_onehot"], v["objects"]
    g = gender.argmax(axis=1)
    # Eq. 7 on a multi-label task: #(a, t) equal for every object
    rows = balanced_subset(gender, objects, random_state=1)
    per = np.array([objects[rows][g[rows] == k].sum(axis=0) for k in (0, 1)])
    assert len(rows) > 1000 and (per[0] == per[1]).all()
    # Eq. 8 (strict, r = 3) for every object present in both groups
    rows = ratio_bounded_subset(gender, objects, random_state=1)
    per = np.array([objects[rows][g[rows] == k].sum(axis=0) for k in (0, 1)])
    both = (per > 0).all(axis=0)
    assert (per[:, both].max(axis=0) < 3 * per[:, both].min(axis=0)).all() and len(rows) > 2000
    # greedy oversampling: every object seen in both groups ends within 1/2 +/- 0.025
    with pytest.warns(UserWarning, match="no row in some attribute class"):
        rows = oversample_balanced(gender, objects, random_state=0)
    assert np.isin(np.arange(len(g)), rows).all()  # every original row kept
    per = np.array([objects[rows][g[rows] == k].sum(axis=0) for k in (0, 1)]).astype(float)
    seen = (np.array([objects[g == k].sum(axis=0) for k in (0, 1)]) > 0).all(axis=0)
    assert np.abs(per[0, seen] / per[:, seen].sum(axis=0) - 0.5).max() <= 0.025


def _as_kind(kind, attr, task):
    names = np.array(["f", "m"], dtype=object)
    if kind == "list":
        return list(names[attr]), list(task)
    if kind == "series":
        return pd.Series(names[attr], name="gender"), pd.Series(task, name="verb")
    if kind == "onehot":
        return (pd.DataFrame(np.eye(2, dtype=int)[attr], columns=["f", "m"]),
                pd.DataFrame(np.eye(3, dtype=int)[task], columns=["x", "y", "z"]))
    if kind == "torch":
        torch = pytest.importorskip("torch")
        return torch.tensor(attr), torch.tensor(task)
    return attr, task


@pytest.mark.parametrize("kind", ["numpy", "list", "series", "onehot", "torch"])
@pytest.mark.parametrize("fn", [balanced_subset, ratio_bounded_subset, oversample_balanced])
def test_same_rows_for_every_input_kind(kind, fn):
    rng = np.random.default_rng(3)
    attr, task = rng.integers(0, 2, 300), rng.integers(0, 3, 300)
    expected = fn(attr, task, random_state=5)
    np.testing.assert_array_equal(fn(*_as_kind(kind, attr, task), random_state=5), expected)


def test_deterministic_under_random_state():
    rng = np.random.default_rng(0)
    attr, task = (rng.random(500) < 0.85).astype(int), rng.integers(0, 4, 500)  # every task over 3:1
    for fn in (balanced_subset, ratio_bounded_subset, oversample_balanced):
        a, b = fn(attr, task, random_state=7), fn(attr, task, random_state=7)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, fn(attr, task, random_state=8))
        np.testing.assert_array_equal(fn(attr, task, random_state=np.random.default_rng(7)), a)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=80),
       st.integers(0, 2**16), st.sampled_from([1.5, 2, 3]))
def test_subset_constraints_hold_and_are_tight(cells, seed, ratio):
    attr = np.array([c[0] for c in cells])
    task = np.array([c[1] for c in cells])
    k_attr = 3
    counts = np.zeros((4, k_attr), dtype=int)
    np.add.at(counts, (task, attr), 1)
    rows = balanced_subset(attr, task, random_state=seed)
    got = np.zeros_like(counts)
    np.add.at(got, (task[rows], attr[rows]), 1)
    # Eq. 7 with the largest possible count per task: the rarest class's
    present = sorted(set(attr.tolist()))
    assert (got[:, present] == counts[:, present].min(axis=1, keepdims=True)).all()
    rows = ratio_bounded_subset(attr, task, ratio=ratio, random_state=seed)
    got = np.zeros_like(counts)
    np.add.at(got, (task[rows], attr[rows]), 1)
    for t in range(4):
        m = counts[t, present].min()
        allowed = int(np.ceil(ratio * m)) - 1 if m else 0  # the largest count < ratio * m
        assert (got[t, present] == np.minimum(counts[t, present], allowed)).all()


def test_single_label_oversampling_balances_in_one_round():
    attr = np.repeat([0, 1, 0, 1, 1], [5, 1, 2, 6, 3])
    task = np.repeat([0, 0, 1, 1, 2], [5, 1, 2, 6, 3])
    with pytest.warns(UserWarning, match=r"\[2\] have no row"):  # task 2 exists only for class 1
        rows = oversample_balanced(attr, task, random_state=0)
    got = pd.crosstab(attr[rows], task[rows]).to_numpy()
    assert got.tolist() == [[5, 6, 0], [5, 6, 3]]  # tasks 0 and 1 equal, task 2 left as it was


def test_subset_errors():
    with pytest.raises(ValueError, match="one-hot"):
        balanced_subset(np.array([[1, 1], [0, 1]]), [0, 1])
    with pytest.raises(ValueError, match="length mismatch"):
        balanced_subset([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="ratio must be > 1"):
        ratio_bounded_subset([0, 1], [0, 1], ratio=1)
    with pytest.raises(ValueError, match="ratio must be >= 1"):
        ratio_bounded_subset([0, 1], [0, 1], ratio=0.5, strict=False)
    with pytest.raises(TypeError, match="ratio"):
        ratio_bounded_subset([0, 1], [0, 1], ratio="3")
    with pytest.raises(ValueError, match="epsilon"):
        oversample_balanced([0, 1], [0, 1], epsilon=1.5)
    with pytest.raises(ValueError, match="max_rounds"):
        oversample_balanced([0, 1], [0, 1], max_rounds=0)
    with pytest.raises(TypeError, match="random_state"):
        balanced_subset([0, 1], [0, 1], random_state=-1)
    # ratio=1 without strictness is the balanced set
    rng = np.random.default_rng(1)
    attr, task = rng.integers(0, 2, 200), rng.integers(0, 3, 200)
    np.testing.assert_array_equal(ratio_bounded_subset(attr, task, ratio=1, strict=False, random_state=2),
                                  balanced_subset(attr, task, random_state=2))


# --------------------------------------------------------------------------- #
# Qian et al.'s released per-run values (lin-tan/fairness-variance): the loader, on files written here
# --------------------------------------------------------------------------- #
def _write_fairness_variance(root, per_run=((0.1, 0.3), (0.2, 0.2), (0.3, 0.4))):
    """One technique, "S-Base", of 3 runs and 2 classes, metrics DP and DI bar, in the released layout."""
    from pathlib import Path

    base = Path(root) / "raw_bias_numbers"
    (base / "overall").mkdir(parents=True)
    (base / "per_class" / "S-Base").mkdir(parents=True)
    overall = {"DP": [0.02, 0.03, 0.025], "DI bar": [0.2, 0.25, 0.3]}
    (base / "overall" / "S-Base.yaml").write_text(
        "".join(f"{k}:\n" + "".join(f"- {v}\n" for v in vals) for k, vals in overall.items()))
    for i, (c0, c1) in enumerate(per_run):
        (base / "per_class" / "S-Base" / f"run_{i:02d}.yaml").write_text(
            f"DP:\n- {c0 / 10}\n- {c1 / 10}\nDI bar:\n- {c0}\n- {c1}\n")
    return base


def test_load_fairness_variance_runs_reads_the_released_layout(tmp_path):
    from biasamp.datasets import load_fairness_variance_runs
    from biasamp.stats import run_summary

    _write_fairness_variance(tmp_path)
    data = load_fairness_variance_runs(tmp_path)  # the clone's folder (its raw_bias_numbers works too)
    assert data.techniques == ("S-Base",)
    assert list(data.overall.columns) == ["DP", "DI"]  # "DI bar" is biasamp's DI
    assert data.overall.loc[("S-Base", 1), "DI"] == 0.25 and data.overall.shape == (3, 2)
    assert data.per_class.loc[("S-Base", 2, 1), "DI"] == 0.4 and data.per_class.shape == (6, 2)
    s = run_summary(data.runs("S-Base"))
    # DI per class: class 0 runs 0.1, 0.2, 0.3 (MaxDiff 0.2), class 1 0.3, 0.2, 0.4 (MaxDiff 0.2): a tie, class 0
    assert s.per_class_max.loc["DI", "class"] == 0
    assert s.per_class_max.loc["DI", "std"] == pytest.approx(np.sqrt(0.02 / 3))  # population SD of 0.1, 0.2, 0.3
    assert s.overall.loc["DP", "maxdiff"] == pytest.approx(0.01)
    assert load_fairness_variance_runs(tmp_path / "raw_bias_numbers").overall.equals(data.overall)
    with pytest.raises(ValueError, match="technique must be one of"):
        data.runs("S-XX")


def test_load_fairness_variance_runs_refuses_what_it_cannot_read(tmp_path):
    from biasamp.datasets import load_fairness_variance_runs

    with pytest.raises(FileNotFoundError, match="lin-tan/fairness-variance"):
        load_fairness_variance_runs(tmp_path)
    base = _write_fairness_variance(tmp_path / "a")
    (base / "per_class" / "S-Base" / "run_00.yaml").write_text("DP: [0.1, 0.2]\n")  # flow style: not the subset
    with pytest.raises(ValueError, match=r"run_00.yaml, line 1: expected 'metric:' or '- number'"):
        load_fairness_variance_runs(tmp_path / "a")
    base = _write_fairness_variance(tmp_path / "b")
    (base / "per_class" / "S-Base" / "run_00.yaml").write_text("DP:\n- x\n")
    with pytest.raises(ValueError, match="line 2: 'x' is not a number"):
        load_fairness_variance_runs(tmp_path / "b")
    base = _write_fairness_variance(tmp_path / "c")
    (base / "per_class" / "S-Base" / "run_02.yaml").unlink()
    with pytest.raises(ValueError, match="3 runs in overall/S-Base.yaml but 2 per-class files"):
        load_fairness_variance_runs(tmp_path / "c")
