"""The counts core: one Gram matrix of augmented label matrices, additive."""

from __future__ import annotations

import numpy as np
import pytest

import biasamp.cooccurrence._counts as counts_mod
from biasamp import CooccurrenceCounts

from .reference import one_hot


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 3, n)
    task = rng.random((n, 5)) < 0.2
    task_pred = rng.random((n, 5)) < 0.2
    attr_pred = rng.integers(0, 3, n)
    return attr, task, attr_pred, task_pred


def test_gram_equals_dense_products():
    attr, task, attr_pred, task_pred = _data()
    c = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    A, Ah = one_hot(attr, 3), one_hot(attr_pred, 3)
    T, Th = task.astype(float), task_pred.astype(float)
    assert c.n == 3000
    np.testing.assert_array_equal(c.total("attr"), A.sum(0))
    np.testing.assert_array_equal(c.total("task_pred"), Th.sum(0))
    np.testing.assert_array_equal(c.cross("attr", "task"), A.T @ T)
    np.testing.assert_array_equal(c.cross("attr", "task_pred"), A.T @ Th)
    np.testing.assert_array_equal(c.cross("attr_pred", "task"), Ah.T @ T)
    np.testing.assert_array_equal(c.cross("attr_pred", "task_pred"), Ah.T @ Th)


def test_many_row_blocks_give_the_same_counts(monkeypatch):
    attr, task, attr_pred, task_pred = _data(n=5000)
    one_block = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    monkeypatch.setattr(counts_mod, "_BLOCK_BYTES", 1)  # forces 1024-row blocks, the last one partial
    blocked = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    np.testing.assert_array_equal(one_block.gram, blocked.gram)


def test_soft_counts_are_expected_counts_in_float64():
    rng = np.random.default_rng(1)
    task = rng.random((50, 2)) < 0.5
    p = rng.random((50, 2))
    attr = rng.integers(0, 2, 50)
    c = CooccurrenceCounts.from_labels(attr, task, task_pred=p)
    np.testing.assert_allclose(c.cross("attr", "task_pred"), one_hot(attr, 2).T @ p, rtol=0, atol=1e-12)
    assert c.soft_roles == {"task_pred"}


def test_restrict_reads_a_sub_table_without_recounting():
    attr, task, attr_pred, task_pred = _data(n=200)
    full = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    sub = full.restrict(["attr"], ["task"])
    direct = CooccurrenceCounts.from_labels(attr, task)
    np.testing.assert_array_equal(sub.gram, direct.gram)
    assert not sub.has("task_pred") and sub.has("attr", "task")


def test_addition_checks_compatibility():
    a = CooccurrenceCounts.from_labels([0, 1], [[1], [0]])
    b = CooccurrenceCounts.from_labels([0, 2], [[1], [0]])
    with pytest.raises(ValueError, match="different attr_classes"):
        a + b
    c = CooccurrenceCounts.from_labels([0, 1], [[1], [0]], task_pred=[[1], [1]])
    with pytest.raises(ValueError, match="different task_roles"):
        a + c
    assert (sum([a, a, a]).gram == 3 * a.gram).all()


def test_update_uses_the_fixed_classes():
    acc = CooccurrenceCounts.from_labels(["x", "y"], [[1], [0]], attr_classes=["x", "y", "z"])
    acc = acc.update(attr=["z"], task=[[1]])
    assert acc.n == 3 and acc.total("attr").tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="not present"):
        acc.update(attr=["w"], task=[[1]])


def test_cross_and_roles_errors():
    c = CooccurrenceCounts.from_labels([0, 1], [[1], [0]])
    with pytest.raises(KeyError, match="was not counted"):
        c.cross("attr", "task_pred")
    with pytest.raises(KeyError, match="attribute-side role then a task-side"):
        c.cross("task", "attr")
    with pytest.raises(ValueError, match="neither task nor task_pred"):
        CooccurrenceCounts.from_labels([0, 1], None)
    assert "n=2" in repr(c)


def test_uncounted_pairs_cannot_be_read_and_survive_update_and_add():
    attr, task, attr_pred, task_pred = _data(n=300)
    pairs = {("attr", "task"), ("attr_pred", "task"), ("attr", "task_pred")}
    c = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred, pairs=pairs)
    full = CooccurrenceCounts.from_labels(attr, task, attr_pred=attr_pred, task_pred=task_pred)
    assert c.uncounted == {("attr_pred", "task_pred")}
    with pytest.raises(KeyError, match="was not counted"):
        c.cross("attr_pred", "task_pred")
    for a, t in pairs:
        np.testing.assert_array_equal(c.cross(a, t), full.cross(a, t))
    for role in ("attr", "attr_pred", "task", "task_pred"):
        np.testing.assert_array_equal(c.total(role), full.total(role))
    grown = c.update(attr=attr, task=task, attr_pred=attr_pred, task_pred=task_pred)
    assert grown.uncounted == c.uncounted
    np.testing.assert_array_equal(grown.cross("attr", "task_pred"), 2 * full.cross("attr", "task_pred"))
    with pytest.raises(ValueError, match="different uncounted"):
        c + full
    assert c.restrict(["attr"], ["task"]).uncounted == frozenset()


def test_roles_must_come_in_order():
    from biasamp.labels import encode_labels

    enc = encode_labels({"attr": [0, 1]}, {"attr_pred": [1, 1]})
    t = encode_labels({"task": [[1], [0]]})
    with pytest.raises(ValueError, match="ordered subset"):
        CooccurrenceCounts.from_encoded([enc["attr_pred"], enc["attr"]], [t["task"]])


def test_unknown_roles_raise_a_value_error_that_is_also_a_key_error():
    c = CooccurrenceCounts.from_labels([0, 1, 0, 1], [0, 1, 1, 0], task_pred=[0, 1, 1, 1])
    for call in (lambda: c.cross("nope", "task"), lambda: c.total("nope"), lambda: c.cross("task", "attr")):
        with pytest.raises(ValueError, match="nope|task-side") as info:
            call()
        assert isinstance(info.value, KeyError)           # code catching KeyError keeps working
        assert "nope" in str(info.value) or "task-side" in str(info.value)
        assert not str(info.value).startswith("'")        # printed as it is, not quoted like a KeyError


def test_weights_and_missing_in_the_counts_type():
    """``sample_weight`` scales the left factor; ``missing`` goes through the shared row layer; both recorded."""
    attr = np.array([0, 1, np.nan, 1])
    task = np.array([[1, 0], [1, 1], [0, 1], [0, 1]])
    w = np.array([2.0, 1.0, 1.0, 0.5])
    dropped = CooccurrenceCounts.from_labels(attr, task, sample_weight=w, missing="drop")
    assert dropped.weighted and dropped.n == 3.5 and dropped.attr_classes == (0.0, 1.0)
    np.testing.assert_array_equal(dropped.cross("attr", "task"), [[2.0, 0.0], [1.0, 1.5]])
    assert dropped.rows.n_dropped == 1 and "1 rows with a missing value dropped" in repr(dropped)
    grouped = CooccurrenceCounts.from_labels(attr, task, missing="group")
    assert grouped.attr_classes == (0, 1, "missing") and grouped.rows.n_grouped == 1
    np.testing.assert_array_equal(grouped.total("attr"), [1, 2, 1])
    assert not grouped.weighted
    hand = CooccurrenceCounts(grouped.attr_classes, grouped.task_classes, grouped.attr_roles, grouped.task_roles,
                              grouped.gram)
    assert hand.rows is None and (hand + grouped).rows is None  # a hand-built table has no row record
    assert (grouped + grouped).rows.n_rows == 8


# --------------------------------------------------------------------------- #
# the table knows how its predictions were counted, and the metrics of the counts say so
# --------------------------------------------------------------------------- #
def _scores(n=400, seed=2):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 2, n)
    task = (rng.random((n, 3)) < 0.4).astype(int)
    return attr, task, rng.random((n, 3))


def test_counts_of_probabilities_report_expected_rates():
    from biasamp import directional_from_counts, mals_from_counts

    attr, task, p = _scores()
    soft = CooccurrenceCounts.from_labels(attr, task, task_pred=p, attr_pred=attr)
    assert soft.predictions == "task_pred: expected rates (probabilities, soft='expected')"
    res = directional_from_counts(soft.restrict(["attr"], ["task"]), soft, train_source="test")
    assert res.predictions == soft.predictions and "expected rates" in repr(res)
    # expected counts: #(a, t̂) is the sum of the probabilities of the members of a (by hand)
    assert res.a_to_t.pairs["p_pred"].to_numpy() == pytest.approx(
        (one_hot(attr, 2).T @ p / one_hot(attr, 2).sum(0)[:, None]).ravel())
    train = CooccurrenceCounts.from_labels(attr, task)
    pred = CooccurrenceCounts.from_labels(attr_pred=attr, task_pred=p, attr_classes=train.attr_classes,
                                          task_classes=train.task_classes)
    mals = mals_from_counts(train, pred)
    assert mals.predictions == "task_pred: expected rates (probabilities, soft='expected')"
    assert "expected rates" in repr(mals)
    # hard labels stay "hard"; a sum of a hard and a soft batch says it counted probabilities
    hard = CooccurrenceCounts.from_labels(attr, task, task_pred=task, attr_pred=attr)
    assert hard.predictions == "hard"
    assert directional_from_counts(hard.restrict(["attr"], ["task"]), hard, train_source="test").predictions == "hard"
    assert (hard + soft).predictions == soft.predictions
    assert soft.restrict(["attr"], ["task"]).predictions == "hard"


def test_counts_thresholded_on_request_say_so_and_agree_with_the_label_functions():
    import warnings

    from biasamp import bias_amp_directional, bias_amp_mals, directional_from_counts, mals_from_counts

    attr, task, p = _scores()
    thr = CooccurrenceCounts.from_labels(attr, task, task_pred=p, attr_pred=attr, soft="threshold", threshold=0.3)
    assert thr.predictions == "task_pred: thresholded at 0.3 (per label)" and not thr.soft_roles
    np.testing.assert_array_equal(thr.cross("attr", "task_pred"), one_hot(attr, 2).T @ (p > 0.3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = directional_from_counts(thr.restrict(["attr"], ["task"]), thr, train_source="test")
        ref = bias_amp_directional(attr, task, task_pred=p, attr_pred=attr, threshold=0.3, cross_fit=False)
        assert res.predictions == ref.predictions == thr.predictions
        assert res.a_to_t.value == ref.a_to_t.value
        pred = CooccurrenceCounts.from_labels(attr_pred=attr, task_pred=p, attr_classes=(0, 1),
                                              task_classes=(0, 1, 2), soft="threshold", threshold=0.3)
        mals = mals_from_counts(CooccurrenceCounts.from_labels(attr, task), pred)
        ref = bias_amp_mals(attr_train=attr, task_train=task, attr_pred=attr, task_pred=p, threshold=0.3)
        assert mals.predictions == ref.predictions == "task_pred: thresholded at 0.3 (per label)"
        assert mals.value == ref.value
    with pytest.raises(ValueError, match="soft"):
        CooccurrenceCounts.from_labels(attr, task, task_pred=p, soft="hard")
