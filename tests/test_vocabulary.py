"""One vocabulary across the API (attr / task with _pred / _train), predictions keyword-only,
and the 0.1 spellings still accepted, with a FutureWarning, until 0.3.0."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import biasamp
from biasamp.accumulators import MultiAttributeAccumulator

# 0.1 names of the protected attribute and the task that must not come back
OLD_NAMES = {"group", "attrs", "group_pred", "attrs_pred", "group_train", "attrs_train", "group_classes",
             "target_labels", "protected_labels", "protected_attribute"}
# the group-fairness family keeps fairlearn's convention
FAIRLEARN = {"y_true", "y_pred", "sensitive_features"}


def _public_callables():
    import biasamp.dask

    seen = []
    for module, names in ((biasamp, biasamp.__all__), (biasamp.dask, biasamp.dask.__all__)):
        for name in names:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                seen.append((f"{name}.__init__", obj.__init__))
                seen += [(f"{name}.{m}", f) for m, f in vars(obj).items()
                         if not m.startswith("_") and inspect.isfunction(f)]
                seen += [(f"{name}.{m}", f.__func__) for m, f in vars(obj).items()
                         if isinstance(f, classmethod) and not m.startswith("_")]
            elif callable(obj):
                seen.append((f"{module.__name__}.{name}", obj))
    return seen


def test_no_public_signature_uses_an_old_name():
    for name, func in _public_callables():
        params = set(inspect.signature(func).parameters)
        assert not params & OLD_NAMES, (name, params & OLD_NAMES)


def test_predictions_are_keyword_only():
    checked = 0
    for name, func in _public_callables():
        for p in inspect.signature(func).parameters.values():
            if p.name.endswith("_pred") and p.name not in FAIRLEARN:
                checked += 1
                assert p.kind is p.KEYWORD_ONLY, (name, p.name)
    assert checked >= 20  # audit, dpa, multi_bias_amp, the accumulators, biasamp.dask, ...


def test_fairness_family_keeps_fairlearn_names():
    params = inspect.signature(biasamp.fairness_metrics).parameters
    assert list(params)[:3] == ["y_true", "y_pred", "sensitive_features"]
    assert params["sensitive_features"].kind is inspect.Parameter.KEYWORD_ONLY


# --------------------------------------------------------------------------- #
# the 0.1 spellings, for one release
# --------------------------------------------------------------------------- #
ATTR = np.array([0, 0, 0, 0, 1, 1, 1, 1])
TASK = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])
TASK_PRED = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])


def test_multi_bias_amp_old_keywords_warn_and_agree():
    new = biasamp.multi_bias_amp(ATTR, TASK, attr_pred=ATTR, task_pred=TASK_PRED, attr_train=ATTR, task_train=TASK)
    with pytest.warns(FutureWarning, match=r"group_pred -> attr_pred.*0\.3\.0"):
        old = biasamp.multi_bias_amp(group=ATTR, attrs=TASK, group_pred=ATTR, attrs_pred=TASK_PRED,
                                     group_train=ATTR, attrs_train=TASK)
    pd.testing.assert_frame_equal(old.to_frame(), new.to_frame())
    # by hand (the docstring example): Multi_MALS = |1 - 2/3| / |M| with M = {a}, {b}, {c}, {a, b}
    assert new.mals.value == pytest.approx((1 - 2 / 3) / 4)
    with pytest.raises(TypeError, match="'attr_pred' only"):
        biasamp.multi_bias_amp(ATTR, TASK, attr_pred=ATTR, group_pred=ATTR)


def test_positional_predictions_warn_and_agree():
    new = biasamp.bias_amp_mals(attr_pred=ATTR, task_pred=TASK_PRED, attr_train=ATTR, task_train=TASK)
    # 0.3 reads the test ground truth first: the 0.2 order (training set, then predictions) warns until 0.4
    with pytest.warns(FutureWarning, match=r"bias_amp_mals\(attr_train, task_train, attr_pred, task_pred\): this "
                                           "positional order is deprecated"):
        old = biasamp.bias_amp_mals(ATTR, TASK, ATTR, TASK_PRED)
    assert old.value == new.value == pytest.approx(0.0)  # a and b balanced, c never changes
    with pytest.raises(TypeError, match="multiple values for argument 'attr_pred'"):
        biasamp.bias_amp_mals(ATTR, TASK, ATTR, TASK_PRED, attr_pred=ATTR)
    with pytest.raises(TypeError):  # more positional arguments than there ever were
        biasamp.bias_amp_mals(ATTR, TASK, ATTR, TASK_PRED, TASK_PRED)


def test_accumulator_old_names_are_translated_together():
    # 0.1: MultiAttributeAccumulator(group_classes, attr_classes) with attr_classes the *tasks*
    with pytest.warns(FutureWarning, match="attr_classes -> task_classes"):
        old = MultiAttributeAccumulator(group_classes=[0, 1], attr_classes=["a", "b", "c"])
    assert old.attr_classes == (0, 1) and old.task_classes == ("a", "b", "c")
    new = MultiAttributeAccumulator(attr_classes=[0, 1], task_classes=["a", "b", "c"])  # 0.2 call: no warning
    assert new.attr_classes == (0, 1)
    for acc in (old, new):
        acc.collect(TASK)
        acc.freeze()
    with pytest.warns(FutureWarning):
        old.update(group=ATTR, attrs=TASK, group_pred=ATTR, attrs_pred=TASK_PRED)
    new.update(ATTR, TASK, attr_pred=ATTR, task_pred=TASK_PRED)
    assert old.compute().mals.value == new.compute().mals.value


def test_attention_old_names():
    with pytest.warns(FutureWarning, match="target_labels -> task"):
        old = biasamp.summarize_attention_scores([0.9, 0.7, 0.2, 0.4], target_labels=[1, 1, 0, 0],
                                                 protected_labels=[1, 0, 1, 0])
    assert old.by_group()["T=1,A=0"] == 0.7 and list(old.attr_labels) == [1, 0, 1, 0]
    with pytest.warns(FutureWarning):
        mcc = biasamp.matthews_corrcoef(target=[1, 1, 1, 0, 0, 0], protected=[1, 1, 0, 0, 0, 1])
    assert mcc == pytest.approx(1 / 3)  # (2*2 - 1*1) / sqrt(3*3*3*3)


def test_dask_wrappers_take_predictions_by_keyword():
    da = pytest.importorskip("dask.array")
    import biasamp.dask as bdask

    attr, task, pred = (da.from_array(x, chunks=3) for x in (ATTR, TASK, TASK_PRED))
    with pytest.warns(FutureWarning):
        old = bdask.bias_amp_mals(attr, task, attr, pred)
    assert old.value == bdask.bias_amp_mals(attr_pred=attr, task_pred=pred, attr_train=attr, task_train=task).value
    with pytest.warns(FutureWarning):
        res = bdask.multi_bias_amp(attr, task, attrs_pred=pred, attr_classes=["a", "b", "c"])
    assert res.counts.task_classes == ("a", "b", "c")  # 0.1's attr_classes were the tasks
    assert inspect.signature(bdask.leakage_amplification).parameters["task_pred"].kind is \
        inspect.Parameter.KEYWORD_ONLY
