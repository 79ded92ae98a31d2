"""The audit's label arguments validated once into a Batch (biasamp._core.batch), and AuditInputs built on it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp._core.batch import Batch
from biasamp.report._inputs import AuditInputs, _prepare


def test_one_named_error_per_bad_argument():
    a, t = [0, 1, 0, 1], [1, 1, 0, 0]
    for labels, kind, words in [
        ({"attr": a, "task": t, "task_pred": [0, 1, 1]}, ValueError, "task_pred has 3 rows but attr has 4"),
        ({"attr": a, "task": t, "attr_pred": [0, 1, np.nan, 1]}, ValueError, "attr_pred contains NaN"),
        ({"attr": a, "task": "abcd"}, TypeError, "task must be array-like"),
        ({"attr": a, "task": t, "attr_train": [0, 1], "task_train": [0, 1, 1]}, ValueError,
         "task_train has 3 rows but attr_train has 2"),
    ]:
        with pytest.raises(kind, match=words):
            Batch.validated(labels)
    with pytest.raises(ValueError, match="task_val_scores contains NaN"):  # checked, not held
        Batch.validated({"attr": a, "task": t}, checked={"task_val_scores": [0.1, np.nan, 0.3, 0.2]})


def test_roles_on_the_host_with_names_kept():
    attr = pd.Series(["f", "m", "f"], name="sex", index=[10, 11, 12])
    b = Batch.validated({"attr": attr, "task": [[1, 0], [0, 1], [1, 1]], "captions": ["a", "b", "c"]})
    assert b.n == 3 and b.n_train is None and b.rows == (None, None)
    assert b.get("attr") is attr and isinstance(b.get("task"), np.ndarray) and b.get("captions").tolist() == list("abc")
    assert b.roles(["attr", "task_pred", "attr"]) == {"attr": attr, "task_pred": None}
    big_endian = np.array([0, 1, 1], dtype=">i8")
    assert Batch.validated({"attr": big_endian, "task": [0, 1, 0]}).get("attr").dtype.isnative


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from([0, 1]),
                          st.sampled_from([0.0, 1.0, 2.5])), min_size=3, max_size=30),
       st.lists(st.sampled_from(["a", "b", None]), min_size=1, max_size=10))
def test_the_row_selection_is_one_mask_for_every_test_role(rows, train_attr):
    attr = [r[0] for r in rows]
    task = np.array([r[1] for r in rows])
    weight = np.array([r[2] for r in rows])
    keep = np.array([a is not None for a in attr]) & (weight > 0)
    if keep.sum() == 0 or not any(a is not None for a in train_attr):
        return
    b = Batch.validated({"attr": pd.Series(attr, dtype=object), "task": task, "task_pred": 1 - task,
                         "attr_train": pd.Series(train_attr, dtype=object),
                         "task_train": np.arange(len(train_attr)) % 2},
                        sample_weight=weight, missing="drop")
    assert b.n == keep.sum() and b.n_train == sum(a is not None for a in train_attr)
    np.testing.assert_array_equal(np.asarray(b.get("task")), task[keep])
    np.testing.assert_array_equal(np.asarray(b.get("task_pred")), 1 - task[keep])  # the same rows in every role
    np.testing.assert_array_equal(b.get("sample_weight"), weight[keep])
    assert b.rows[0].n_rows == len(rows) and b.rows[1].n_rows == len(train_attr)


def test_audit_inputs_are_the_batch_of_the_audit():
    attr = pd.Series(["f", "m", None, "m"], name="sex")
    inp = _prepare(attr, [1, 0, 1, 1], None, [1, 1, 0, 1], None, None, None, None, missing="group")
    assert isinstance(inp, AuditInputs) and isinstance(inp, Batch)
    assert inp.attr.tolist() == ["f", "m", "missing", "m"] and inp.task_pred.tolist() == [1, 1, 0, 1]
    assert inp.n == inp.n_rows == 4 and inp.weight is None and not inp.has_train
    from biasamp._families import REGISTRY

    roles = inp.family_roles(REGISTRY["fairness"])
    assert set(roles) == {"attr", "task", "task_pred", "sample_weight"}  # no attr_pred: fairness does not read it
    args, kwargs = REGISTRY["fairness"].call(roles, {})
    assert args[1] is inp.task_pred and kwargs["sensitive_features"] is inp.attr
    mals = inp.family_roles(REGISTRY["mals"])
    assert mals["attr"] is inp.attr and mals["attr_train"] is None  # MALS falls back on the test ground truth
