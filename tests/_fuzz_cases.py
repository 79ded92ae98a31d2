"""The table of public callables under fuzz (see ``tests/_fuzz.py`` for the machinery).

Every callable name of ``biasamp.__all__`` (functions, classes: their
constructors, classmethods taking user input, ``update`` of the accumulators
and the methods of results that take an argument) is the target of at least
one ``Case`` here; ``test_fuzz.py::test_every_public_name_is_fuzzed`` fails
for a new public name without one. Result classes that take no user input are
covered by the cases that return them (their numbers go through the NaN/inf
check); ``RESULT_TYPES`` says which.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

import biasamp
import biasamp as b
from biasamp import datasets as bds
from biasamp import sklearn as bsk
from biasamp import subgroups as bsub

from ._fuzz import INVALID, Arg, Case, Data, datasets, pl

N_BOOT = 12
SEED = ("seed",)


def L(v, **kw) -> Arg:
    return Arg(np.asarray(v), "labels", **kw)


def IND(v, **kw) -> Arg:  # a 2-D indicator argument
    return Arg(np.asarray(v), "indicator", **kw)


def _binary(v: np.ndarray) -> np.ndarray:
    return (np.asarray(v) == 0).astype(np.int64)


# --------------------------------------------------------------------------- #
# co-occurrence
# --------------------------------------------------------------------------- #
def _mals_arrays(d: Data) -> dict:
    return {
        "attr_train": L(d.attr_train, rows="train", family="attr"),
        "task_train": L(d.task_train, rows="train", family="task"),
        "attr_pred": L(d.attr_pred, family="attr", pred=True),
        "task_pred": L(d.task_pred, family="task", pred=True),
    }


def _directional_arrays(d: Data) -> dict:
    return {
        "attr": L(d.attr, family="attr"),
        "task": L(d.task, family="task"),
        "attr_pred": L(d.attr_pred, family="attr", pred=True, required=False),
        "task_pred": L(d.task_pred, family="task", pred=True, required=False),
        "attr_train": L(d.attr_train, rows="train", family="attr", required=False),
        "task_train": L(d.task_train, rows="train", family="task", required=False),
    }


def _directional_multilabel_arrays(d: Data) -> dict:
    return {
        "attr": L(d.attr, family="attr"),
        "task": IND(d.task_multi, family="task"),
        "attr_pred": L(d.attr_pred, family="attr", pred=True, required=False),
        "task_pred": IND(d.task_multi_pred, family="task", pred=True, required=False),
    }


def _multi_arrays(d: Data) -> dict:
    return {
        "attr": L(d.attr, family="attr"),
        "task": IND(d.task_multi, family="task"),
        "attr_pred": L(d.attr_pred, family="attr", pred=True, required=False),
        "task_pred": IND(d.task_multi_pred, family="task", pred=True, required=False),
        "attr_train": L(d.attr_train, rows="train", family="attr", required=False),
        "task_train": IND(d.task_multi_train, rows="train", family="task", required=False),
    }


# a mapping is a valid sensitive_features (name -> column, intersectional groups)
_GROUPS_INVALID = tuple(k for k in INVALID["labels"] if k != "dict")


def _fair_arrays(d: Data) -> dict:
    return {
        "y_true": L(d.task, family="task"),
        "y_pred": L(d.task_pred, family="task", pred=True),
        "sensitive_features": L(d.attr, family="group", invalid=_GROUPS_INVALID),
    }


def _df_arrays(d: Data) -> dict:
    """A binary outcome (the first indicator column, both classes present) and its prediction."""
    return {
        "y_true": L(d.task_multi[:, 0], family="task"),
        "y_pred": L(d.task_multi_pred[:, 0], family="task", pred=True),
        "sensitive_features": L(d.attr, family="group", invalid=_GROUPS_INVALID),
    }


def _fair_multilabel_arrays(d: Data) -> dict:
    return {
        "y_true": IND(d.task_multi, family="task"),
        "y_pred": IND(d.task_multi_pred, family="task", pred=True),
        "sensitive_features": L(d.attr, family="group", invalid=_GROUPS_INVALID),
    }


def _fair_relabel(d: Data) -> dict:
    # groups: BA's reference group is the first of the tied argmax groups, so only an
    # order-keeping renaming leaves it alone; tasks: a binary task reports pos_label=1 only
    return {"group": "monotone", **({"task": "any"} if d.kt > 2 else {})}


# --------------------------------------------------------------------------- #
# statistics
# --------------------------------------------------------------------------- #
def _values_arrays(d: Data) -> dict:
    return {"values": Arg(d.values, "values", rows=None)}


def _runs_arrays(d: Data) -> dict:
    frame = pd.DataFrame({"DP": d.values, "EOTP": d.values_b})
    records = frame.to_dict("records")
    dup = frame.copy()
    dup.columns = ["DP", "DP"]
    with_str = frame.assign(note="x")
    nan = frame.copy()
    nan.iloc[0, 0] = np.nan
    inf = frame.copy()
    inf.iloc[0, 1] = np.inf
    return {"runs": Arg(frame, "custom", rows=None, custom_nasty={
        "records": records,
        "odd-index": frame.set_axis(np.arange(len(frame))[::-1] * 5, axis=0),
        "float32": frame.astype(np.float32) if (frame.astype(np.float32) == frame).all().all() else frame,
        "Float64": frame.astype("Float64"),
        "object": frame.astype(object),
    }, custom_invalid={
        "None": None, "str": "abc", "one-run": frame.iloc[:1], "empty": frame.iloc[:0],
        "duplicate-columns": dup, "string-column": with_str, "all-nan": nan.assign(DP=np.nan, EOTP=np.nan),
        "inf": inf,
        "mixed-kinds": [records[0], 0.5], "3-D": np.zeros((2, 2, 2)),
        "None-entry": [records[0], None], "nested": [[1.0, 2.0], [3.0]],
    })}


# --------------------------------------------------------------------------- #
# attention
# --------------------------------------------------------------------------- #
def _maps_arrays(d: Data) -> dict:
    s = d.scores
    return {"x": Arg(s[:4].reshape(2, 2, -1), "maps", rows="maps"),
            "y": Arg(s[4:8].reshape(2, 2, -1), "maps", rows="maps")}


def _iou_allow_nan(result, values) -> bool:
    """attention_iou returns NaN exactly for the pairs with an all-zero map (the documented undefined case)."""
    x, y = (np.asarray(values[k], dtype=float).reshape(2, -1) for k in ("x", "y"))
    undefined = (x.sum(axis=1) == 0) | (y.sum(axis=1) == 0)
    r = np.asarray(result, dtype=float)
    return bool(np.array_equal(np.isnan(r), undefined) and np.isfinite(r[~undefined]).all())


def _summary_arrays(d: Data) -> dict:
    return {
        "scores": Arg(d.scores[:, 0], "values", invalid=("str", "dict", "scalar", "set", "empty", "3-D", "complex",
                                                           "ragged", "inf", "-inf", "strings")),
        "task": L(_binary(d.task), family="task", required=False),
        "attr": L(_binary(d.attr), family="attr", required=False),
    }


def _mcc_arrays(d: Data) -> dict:
    return {"task": L(_binary(d.task), family="task"), "attr": L(_binary(d.attr), family="attr")}


def _score_results(d: Data) -> list:
    r = b.summarize_attention_scores(d.scores[:, 0], task=_binary(d.task), attr=_binary(d.attr))
    return [r, r]


def _summary_list_arrays(d: Data) -> dict:
    res = _score_results(d)
    return {"results": Arg(res, "custom", rows=None, custom_nasty={"tuple": tuple(res), "generator-list": list(res)},
                           custom_invalid={"None": None, "empty": [], "str": "abc", "numbers": [1.0, 2.0],
                                           "mixed": [res[0], 3]})}


# --------------------------------------------------------------------------- #
# reports
# --------------------------------------------------------------------------- #
@functools.lru_cache(maxsize=1)
def _report_json() -> str:
    rng = np.random.default_rng(0)
    attr, task = rng.integers(0, 2, 40), rng.integers(0, 3, 40)
    rep = b.audit(attr, task, attr_pred=rng.integers(0, 2, 40), task_pred=rng.integers(0, 3, 40),
                  n_boot=20, n_iter=2, attacker="tabular", progress=False)
    return rep.to_json()


def _from_json_arrays(d: Data) -> dict:
    text = _report_json()
    obj = json.loads(text)
    broken = json.loads(text)
    broken["sections"] = [{"nonsense": 1}]
    no_sections = {k: v for k, v in obj.items() if k != "sections"}
    return {"text": Arg(text, "custom", rows=None, custom_nasty={
        "bytes": text.encode(), "utf-16": text.encode("utf-16"), "bytearray": bytearray(text.encode()),
        "re-indented": json.dumps(obj, indent=None),
    }, custom_invalid={
        "None": None, "not-json": "not json", "list": "[1, 2]", "empty-object": "{}", "null": "null",
        "bad-bytes": b"\xff\xfe\xfa", "number": 12, "no-sections": json.dumps(no_sections),
        "broken-section": json.dumps(broken), "sections-not-list": json.dumps({**obj, "sections": 5}),
        "truncated": text[: len(text) // 2], "dict": obj,
    })}


def _from_dict_arrays(d: Data) -> dict:
    obj = json.loads(_report_json())
    broken = json.loads(_report_json())
    broken["sections"][0]["summary"] = "oops"
    return {"obj": Arg(obj, "custom", rows=None, custom_nasty={"copy": json.loads(_report_json())},
                       custom_invalid={"None": None, "list": [1, 2], "str": "{}", "empty": {},
                                       "no-sections": {k: v for k, v in obj.items() if k != "sections"},
                                       "broken-summary": broken,
                                       "sections-none": {**obj, "sections": None}})}


#: bad n_boot values of the audit, whose n_boot=0 means "no interval"
_AUDIT_N_BOOT = (1, -5, 2.5, "10", True, float("nan"))


def _section_arrays(d: Data) -> dict:
    key = json.loads(_report_json())["sections"][0]["key"]
    return {"key": Arg(key, "custom", rows=None, custom_nasty={"numpy-str": np.str_(key)},
                       custom_invalid={"unknown": "nope", "None": None, "int": 3, "list": [key]})}


# --------------------------------------------------------------------------- #
# curves, calibration
# --------------------------------------------------------------------------- #
def _calibrate_arrays(d: Data) -> dict:  # the labels give rates only: any number of rows
    return {"val_scores": Arg(d.scores, "scores"), "val_labels": IND(d.task_multi, rows="labels")}


def _apply_arrays(d: Data) -> dict:
    return {"val_scores": Arg(d.scores, "scores"), "val_labels": IND(d.task_multi, rows="labels"),
            "scores": Arg(d.scores[::-1].copy(), "scores", rows="apply")}


def _threshold_curve_arrays(d: Data) -> dict:
    return {"attr": L(d.attr, family="attr"), "task": L(d.task, family="task"),
            "task_scores": Arg(d.scores, "scores")}


def _checkpoint_arrays(d: Data) -> dict:
    return {"attr": L(d.attr, family="attr"), "task": L(d.task, family="task"),
            "task_pred": L(d.task_pred, family="task", pred=True)}


def _threshold_curve_mals_arrays(d: Data) -> dict:
    return {**_threshold_curve_arrays(d), "attr_pred": L(d.attr_pred, family="attr", pred=True)}


def _threshold_curve_fair_arrays(d: Data) -> dict:
    return {"sensitive_features": L(d.attr, family="group", invalid=_GROUPS_INVALID),
            "task": L(d.task, family="task"), "task_scores": Arg(d.scores, "scores")}


def _checkpoint_both_arrays(d: Data) -> dict:
    return {**_checkpoint_arrays(d), "attr_pred": L(d.attr_pred, family="attr", pred=True),
            "attr_train": L(d.attr_train, rows="train", family="attr", required=False),
            "task_train": L(d.task_train, rows="train", family="task", required=False)}


def _checkpoint_fair_arrays(d: Data) -> dict:
    return {"sensitive_features": L(d.attr, family="group", invalid=_GROUPS_INVALID),
            "task": L(d.task, family="task"), "task_pred": L(d.task_pred, family="task", pred=True)}


def _checkpoint_multi_arrays(d: Data) -> dict:
    return {"attr": L(d.attr, family="attr"), "task": IND(d.task_multi, family="task"),
            "task_pred": IND(d.task_multi_pred, family="task", pred=True)}


# --------------------------------------------------------------------------- #
# accumulators, counts, attackers
# --------------------------------------------------------------------------- #
def _from_counts(attr, task, attr_pred, task_pred, attr_train, task_train):
    """BiasAmp-> and MALS from count tables built label by label (train, test and prediction counts)."""
    train = b.CooccurrenceCounts.from_labels(attr=attr_train, task=task_train)
    cls = {"attr_classes": train.attr_classes, "task_classes": train.task_classes}
    test = b.CooccurrenceCounts.from_labels(attr=attr, task=task, attr_pred=attr_pred, task_pred=task_pred, **cls)
    pred = b.CooccurrenceCounts.from_labels(attr_pred=attr_pred, task_pred=task_pred, **cls)
    return b.directional_from_counts(train, test), b.mals_from_counts(train, pred)


def _cooc_acc(attr, task, attr_pred, task_pred, ka, kt):
    acc = b.CooccurrenceAccumulator(list(range(ka)), list(range(kt)))
    return acc.update(attr, task, attr_pred=attr_pred, task_pred=task_pred).compute()


def _attacker_arrays(d: Data) -> dict:
    return {"X": Arg(d.attr.astype(float), "values", invalid=("str", "dict", "scalar", "set", "empty", "3-D",
                                                                 "complex", "nan", "inf", "-inf", "None-element",
                                                                 "pd.NA", "strings")),
            "y": L(d.task, family="task")}


def _consts(d: Data) -> dict:
    """Non-array arguments that depend on the data (class counts)."""
    return {"ka": Arg(d.ka, "custom", rows=None), "kt": Arg(d.kt, "custom", rows=None)}


def _with_consts(f):
    return lambda d: {**f(d), **_consts(d)}


def _counts_field_arrays(d: Data) -> dict:
    counts = b.multi_bias_amp(d.attr, d.task_multi, attr_pred=d.attr_pred, task_pred=d.task_multi_pred).counts
    ta, tj = counts.test_attr, counts.test_joint
    return {
        "counts": Arg(counts, "custom", rows=None),
        "test_attr": Arg(ta, "custom", rows=None, custom_nasty={"list": ta.tolist(), "float": ta.astype(float)},
                         custom_invalid={"None": None, "negative": ta - 1000, "wrong-shape": ta[:1],
                                         "nan": np.full(ta.shape, np.nan), "str": "abc", "fraction": ta + 0.5}),
        "test_joint": Arg(tj, "custom", rows=None, custom_nasty={"list": tj.tolist()},
                          custom_invalid={"None": None, "wrong-shape": tj[:, :1], "negative": tj - 1000,
                                          "inf": np.full(tj.shape, np.inf)}),
        "n_test": Arg(counts.n_test, "custom", rows=None, custom_nasty={"numpy": np.int64(counts.n_test)},
                      custom_invalid={"zero": 0, "negative": -3, "fraction": 0.5, "str": "10", "None": None,
                                      "too-small": 1}),
    }


def _weighted(arrays, train: bool = True):
    """``arrays`` plus positive ``sample_weight`` (and ``train_sample_weight``) arguments."""
    def out(d: Data) -> dict:
        a = arrays(d)
        a["sample_weight"] = Arg(d.weights("test"), "weights", required=False)
        if train:
            a["train_sample_weight"] = Arg(d.weights("train"), "weights", rows="train", required=False)
        return a
    return out


_MISSING = {"missing": ("raise", ("nope", 3, None))}


# --------------------------------------------------------------------------- #
# the table
# --------------------------------------------------------------------------- #
def _fair_case(name: str, fn) -> Case:
    return Case(name, (name,), _fair_arrays, lambda y_true, y_pred, sensitive_features: fn(
        y_true, y_pred, sensitive_features=sensitive_features), relabel=_fair_relabel, examples=6)


_FAIR_FUNCS = ["demographic_parity", "normalized_disparate_impact", "statistical_parity_subgroup_fairness",
               "false_positive_subgroup_fairness", "equalized_odds_false_positive",
               "equalized_odds_true_positive", "group_bias_amplification"]

_ANY2 = {"attr": "any", "task": "any"}
_MONO2 = {"attr": "monotone", "task": "monotone"}


def _any_single(d: Data) -> dict:
    """A 1-D task: a binary one is read as its positive class (1), so only a task of 3+ classes renames freely."""
    return {"attr": "any", **({"task": "any"} if d.kt > 2 else {})}


def _mono_single(d: Data) -> dict:
    """As :func:`_any_single`, for renamings that keep the order of the classes."""
    return {"attr": "monotone", **({"task": "monotone"} if d.kt > 2 else {})}


def _mals(attr_train, task_train, **kw):
    return b.bias_amp_mals(attr_train=attr_train, task_train=task_train, **kw)

CASES: list[Case] = [
    # ---- co-occurrence ---------------------------------------------------- #
    Case("bias_amp_mals", ("bias_amp_mals",), _mals_arrays, _mals, relabel=_any_single),
    Case("bias_amp_directional", ("bias_amp_directional",), _directional_arrays,
         lambda **kw: b.bias_amp_directional(kw.pop("attr"), kw.pop("task"), **kw), relabel=_any_single),
    Case("bias_amp_directional[multi-label]", ("bias_amp_directional",), _directional_multilabel_arrays,
         lambda **kw: b.bias_amp_directional(kw.pop("attr"), kw.pop("task"), **kw), relabel=_ANY2),
    Case("multi_bias_amp", ("multi_bias_amp",), _multi_arrays,
         lambda **kw: b.multi_bias_amp(kw.pop("attr"), kw.pop("task"), **kw), relabel=_MONO2),
    Case("bias_amp_mals[weighted]", ("bias_amp_mals",), _weighted(_mals_arrays),
         _mals, relabel=_any_single, scalars=_MISSING, examples=8),
    Case("bias_amp_directional[weighted]", ("bias_amp_directional",), _weighted(_directional_arrays),
         lambda **kw: b.bias_amp_directional(kw.pop("attr"), kw.pop("task"), **kw), relabel=_any_single,
         scalars=_MISSING, examples=8),
    Case("multi_bias_amp[weighted]", ("multi_bias_amp",), _weighted(_multi_arrays),
         lambda **kw: b.multi_bias_amp(kw.pop("attr"), kw.pop("task"), **kw), relabel=_MONO2,
         scalars=_MISSING, examples=8),
    Case("CooccurrenceCounts.from_labels+directional_from_counts+mals_from_counts",
         ("CooccurrenceCounts", "directional_from_counts", "mals_from_counts"), _directional_arrays,
         _from_counts, relabel=_any_single, examples=8, names={"attr_train": ("attr",), "task_train": ("task",)}),
    Case("CooccurrenceAccumulator.update", ("CooccurrenceAccumulator",), _with_consts(lambda d: {
        "attr": L(d.attr), "task": L(d.task), "attr_pred": L(d.attr_pred, pred=True, required=False),
        "task_pred": L(d.task_pred, pred=True, required=False)}),
         _cooc_acc, examples=8),
    Case("MultiAttributeAccumulator.update", ("MultiAttributeAccumulator",), _with_consts(lambda d: {
        "attr_train": L(d.attr_train, rows="train"), "task_train": IND(d.task_multi_train, rows="train"),
        "attr": L(d.attr), "task": IND(d.task_multi), "attr_pred": L(d.attr_pred, pred=True, required=False),
        "task_pred": IND(d.task_multi_pred, pred=True, required=False)}),
         lambda attr_train, task_train, attr, task, attr_pred, task_pred, ka, kt: (
             lambda acc: acc.update_train(attr_train, task_train).update(
                 attr, task, attr_pred=attr_pred, task_pred=task_pred).compute())(
             b.MultiAttributeAccumulator(list(range(ka)), list(range(kt)),  # indicator columns: every one counted
                                         combinations=[[j] for j in range(kt)], binary_task="both")), examples=8,
         names={"attr_train": ("attr",), "task_train": ("task",)}),
    Case("multi_from_counts(MultiAttributeCounts)", ("multi_from_counts", "MultiAttributeCounts"),
         _counts_field_arrays, lambda counts, **fields: b.multi_from_counts(dataclasses.replace(counts, **fields)),
         examples=6),
    # ---- predictability ------------------------------------------------------ #
    Case("dpa", ("dpa",), lambda d: {
        "attr": L(d.attr, family="attr"), "task": L(d.task, family="task"),
        "attr_pred": L(d.attr_pred, family="attr", pred=True, required=False),
        "task_pred": L(d.task_pred, family="task", pred=True, required=False)},
         lambda **kw: b.dpa(kw.pop("attr"), kw.pop("task"), attacker="tabular", progress=False, **kw),
         scalars={"random_state": (0, "seed"), "n_iter": (2, "n_iter"), "level": (0.9, "level"),
                  "test_size": (0.25, "probability")}, order=False, examples=8),
    Case("leakage_amplification", ("leakage_amplification",), lambda d: {
        "attr": L(d.attr, family="attr"), "task": L(d.task, family="task"),
        "task_pred": L(d.task_pred, family="task", pred=True)},
         lambda **kw: b.leakage_amplification(kw.pop("attr"), kw.pop("task"), attacker="tabular",
                                              progress=False, **kw),
         scalars={"random_state": (0, "seed"), "n_iter": (2, "n_iter"), "level": (0.9, "level"),
                  "test_size": (0.25, "probability")}, order=False, examples=8),
    Case("TabularAttacker.fit+predict_proba", ("TabularAttacker",), _attacker_arrays,
         lambda X, y: b.TabularAttacker().fit(X, y).predict_proba(X), order=False, examples=8),
    # ---- fairness -------------------------------------------------------------- #
    Case("fairness_metrics", ("fairness_metrics",), _fair_arrays,
         lambda y_true, y_pred, sensitive_features: b.fairness_metrics(
             y_true, y_pred, sensitive_features=sensitive_features), relabel=_fair_relabel),
    Case("fairness_metrics[weighted]", ("fairness_metrics",), _weighted(_fair_arrays, train=False),
         lambda y_true, y_pred, sensitive_features, **kw: b.fairness_metrics(
             y_true, y_pred, sensitive_features=sensitive_features, **kw), relabel=_fair_relabel,
         scalars=_MISSING, examples=8),
    Case("fairness_metrics[multi-label]", ("fairness_metrics",), _fair_multilabel_arrays,
         lambda y_true, y_pred, sensitive_features: b.fairness_metrics(
             y_true, y_pred, sensitive_features=sensitive_features), relabel={"group": "monotone"}, examples=8),
    *[_fair_case(f, getattr(b, f)) for f in _FAIR_FUNCS],
    Case("ConfusionCounts.from_labels+update+fairness_from_counts",
         ("ConfusionCounts", "fairness_from_counts"), _fair_arrays,
         lambda y_true, y_pred, sensitive_features: b.fairness_from_counts(
             b.ConfusionCounts.from_labels(y_true, y_pred, sensitive_features=sensitive_features).update(
                 y_true, y_pred, sensitive_features=sensitive_features)), relabel=_fair_relabel, examples=8),
    Case("FairnessAccumulator.update", ("FairnessAccumulator",), _with_consts(lambda d: {
        "y_true": L(d.task), "y_pred": L(d.task_pred, pred=True),
        "sensitive_features": L(d.attr, invalid=_GROUPS_INVALID)}),
         lambda y_true, y_pred, sensitive_features, ka, kt: b.FairnessAccumulator(
             list(range(kt)), list(range(ka))).update(
             y_true, y_pred, sensitive_features=sensitive_features).compute(), examples=8),
    # ---- differential fairness (a binary outcome: the first indicator column) ------------ #
    # (no group relabelling here: the result names the groups that attain ε; tests/test_common.py and
    # tests/test_differential.py check that renaming them changes no value)
    Case("df_bias_amplification", ("df_bias_amplification",), _df_arrays,
         lambda y_true, y_pred, sensitive_features: b.df_bias_amplification(
             y_true, y_pred, sensitive_features=sensitive_features), relabel={}, examples=8),
    Case("DifferentialAccumulator.update+df_from_counts", ("DifferentialAccumulator", "df_from_counts"),
         _with_consts(_df_arrays),
         lambda y_true, y_pred, sensitive_features, ka, kt: b.df_from_counts(b.DifferentialAccumulator(
             [0, 1], list(range(ka))).update(y_true, y_pred, sensitive_features=sensitive_features).counts()),
         examples=8),
    Case("bootstrap(df_bias_amplification)", ("bootstrap",), _df_arrays,
         lambda y_true, y_pred, sensitive_features, **kw: b.bootstrap(
             b.df_bias_amplification, y_true, y_pred, sensitive_features=sensitive_features, **kw),
         scalars={"n_boot": (N_BOOT, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed")},
         relabel={}, examples=6),
    # ---- bootstrap -------------------------------------------------------------- #
    Case("bootstrap(bias_amp_directional)", ("bootstrap",), _directional_arrays,
         lambda **kw: b.bootstrap(b.bias_amp_directional, kw.pop("attr"), kw.pop("task"), **kw),
         scalars={"n_boot": (N_BOOT, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed")},
         relabel=_mono_single, examples=10),
    Case("bootstrap(bias_amp_mals)", ("bootstrap",), _mals_arrays,
         lambda **kw: b.bootstrap(b.bias_amp_mals, **kw),
         scalars={"n_boot": (N_BOOT, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed")},
         relabel=_mono_single, examples=8),
    Case("bootstrap(multi_bias_amp)", ("bootstrap",), _multi_arrays,
         lambda **kw: b.bootstrap(b.multi_bias_amp, kw.pop("attr"), kw.pop("task"), **kw),
         scalars={"n_boot": (N_BOOT, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed")},
         relabel=_MONO2, examples=8),
    Case("bootstrap(fairness_metrics)", ("bootstrap",), _fair_arrays,
         lambda y_true, y_pred, sensitive_features, **kw: b.bootstrap(
             b.fairness_metrics, y_true, y_pred, sensitive_features=sensitive_features, **kw),
         scalars={"n_boot": (N_BOOT, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed")},
         relabel={"group": "monotone"}, examples=10),
    # ---- statistics across runs ------------------------------------------------ #
    Case("confidence_interval", ("confidence_interval",), _values_arrays,
         lambda values, **kw: b.confidence_interval(values, **kw),
         scalars={"level": (0.9, "level"), "method": ("t", ("z", None, 3)),
                  "bounds": ((-3.0, 3.0), ((1.0, 0.0), (0.0,), "ab", (float("nan"), 1.0), 5))}),
    Case("confidence_interval[bootstrap]", ("confidence_interval",), _values_arrays,
         lambda values, **kw: b.confidence_interval(values, method="bootstrap", **kw),
         scalars={"level": (0.9, "level"), "n_boot": (50, "n_boot"), "random_state": (0, "seed")},
         order=False),
    Case("compare_runs", ("compare_runs", "CompareRunsResult"), lambda d: {
        "a": Arg(d.values, "values", rows="a"), "b": Arg(d.values_b, "values", rows="b")},
         lambda a, b, **kw: biasamp.compare_runs(a, b, **kw),
         scalars={"alternative": (None, ("sideways", 3))}),
    Case("CompareRunsResult.significant", ("CompareRunsResult",), lambda d: {
        "a": Arg(d.values, "values", rows="a"), "b": Arg(d.values_b, "values", rows="b")},
         lambda a, b, alpha: biasamp.compare_runs(a, b).significant(alpha),
         scalars={"alpha": (0.05, "probability")}, examples=4),
    Case("run_summary", ("run_summary",), _runs_arrays, lambda runs, **kw: b.run_summary(runs, **kw),
         scalars={"level": (0.9, "level"), "method": ("t", ("z", None))}),
    Case("cohens_d_label", ("cohens_d_label",), lambda d: {"d": Arg(
        float(d.values[0]), "custom", rows=None,
        custom_nasty={"numpy": np.float64(d.values[0]), "float32": np.float32(d.values[0]),
                      "int": int(d.values[0]) if d.values[0] == int(d.values[0]) else float(d.values[0])},
        custom_invalid={"str": "a", "None": None, "nan": float("nan"), "list": [0.3], "complex": 1j})},
         lambda d: b.cohens_d_label(d)),
    # ---- calibration, curves ---------------------------------------------------- #
    Case("calibrate_thresholds", ("calibrate_thresholds",), _calibrate_arrays,
         lambda val_scores, val_labels: b.calibrate_thresholds(val_scores, val_labels=val_labels)),
    Case("Thresholds.apply", ("Thresholds",), _apply_arrays,
         lambda val_scores, val_labels, scores: b.calibrate_thresholds(
             val_scores, val_labels=val_labels).apply(scores), order=False),
    Case("threshold_curve", ("threshold_curve",), _threshold_curve_arrays,
         lambda attr, task, task_scores, **kw: b.threshold_curve(
             b.bias_amp_directional, attr, task, task_scores=task_scores, thresholds=[0.25, 0.5, 0.75], **kw),
         scalars={"n_boot": (6, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed")},
         relabel={"attr": "any"}, examples=8),
    Case("checkpoint_curve", ("checkpoint_curve",), _checkpoint_arrays,
         lambda attr, task, task_pred: b.checkpoint_curve(
             b.bias_amp_directional, attr, task, task_preds=[task_pred, task_pred]), relabel=_ANY2, examples=8),
    # the curves' other grids, families and options (issue 25, item 8)
    Case("threshold_curve[rates]", ("threshold_curve",), _threshold_curve_arrays,
         lambda attr, task, task_scores: b.threshold_curve(
             b.bias_amp_directional, attr, task, task_scores=task_scores, rates=[0.2, 0.5, 0.8]),
         relabel={"attr": "any"}, examples=6),
    Case("threshold_curve[mals]", ("threshold_curve",), _threshold_curve_mals_arrays,
         lambda attr, task, task_scores, attr_pred: b.threshold_curve(
             b.bias_amp_mals, attr, task, task_scores=task_scores, attr_pred=attr_pred, thresholds=[0.3, 0.6]),
         relabel={"attr": "any"}, examples=6),
    Case("threshold_curve[fairness_metrics]", ("threshold_curve",), _threshold_curve_fair_arrays,
         lambda sensitive_features, task, task_scores: b.threshold_curve(
             b.fairness_metrics, sensitive_features, task, task_scores=task_scores, thresholds=[0.3, 0.6],
             metrics=["DP", "EOTP"], min_group_size=0, average="macro"),
         relabel={"group": "monotone"}, examples=6,
         # the curve documents its task / task_preds as the fairness metrics' y_true / y_pred
         names={"sensitive_features": ("attr",), "task": ("y_true", "labels"), "task_pred": ("y_pred", "task_preds"),
                "task_scores": ("y_pred",)}),
    Case("checkpoint_curve[attr_preds+train+bootstrap]", ("checkpoint_curve",), _checkpoint_both_arrays,
         lambda attr, task, task_pred, attr_pred, **kw: b.checkpoint_curve(
             b.bias_amp_directional, attr, task, task_preds=[task_pred, task_pred],
             attr_preds=[attr_pred, attr_pred], checkpoints=["early", "late"], **kw),
         scalars={"n_boot": (6, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed")},
         relabel=_MONO2, examples=6, names={"attr_pred": ("attr_preds",), "task_pred": ("task_preds",)}),
    Case("checkpoint_curve[fairness_metrics]", ("checkpoint_curve",), _checkpoint_fair_arrays,
         lambda sensitive_features, task, task_pred: b.checkpoint_curve(
             b.fairness_metrics, sensitive_features, task, task_preds=[task_pred, task_pred],
             metrics=["DP", "EOFP"], min_group_size=0, average="macro"),
         relabel={"group": "monotone"}, examples=6,
         # the curve documents its task / task_preds as the fairness metrics' y_true / y_pred
         names={"sensitive_features": ("attr",), "task": ("y_true", "labels"), "task_pred": ("y_pred", "task_preds"),
                "task_scores": ("y_pred",)}),
    Case("checkpoint_curve[multi_bias_amp]", ("checkpoint_curve",), _checkpoint_multi_arrays,
         lambda attr, task, task_pred: b.checkpoint_curve(
             b.multi_bias_amp, attr, task, task_preds=[task_pred, task_pred]),
         relabel=_MONO2, examples=6),
    # ---- attention ---------------------------------------------------------------- #
    Case("attention_iou", ("attention_iou",), _maps_arrays, lambda x, y: b.attention_iou(x, y),
         order=False, allow_nonfinite=_iou_allow_nan),
    Case("matthews_corrcoef", ("matthews_corrcoef",), _mcc_arrays, lambda task, attr: b.matthews_corrcoef(task, attr),
         relabel=_MONO2),
    Case("subsample_to_mcc", ("subsample_to_mcc", "SubsampleResult"), _mcc_arrays,
         lambda task, attr, **kw: b.subsample_to_mcc(task, attr, **kw),
         scalars={"mcc": (0.0, (1.5, -2.0, float("nan"), "a", None)), "random_state": (0, "seed"),
                  "tol": (0.2, (-1.0, float("nan"), "a")), "min_margin": (0.0, (-0.5, 2.0, float("nan"), "a"))},
         order=False, examples=2, data=functools.partial(datasets, min_n=12, max_n=16), sweep=False),
    Case("summarize_attention_scores", ("summarize_attention_scores", "AttentionScoreResult"), _summary_arrays,
         lambda scores, task, attr: b.summarize_attention_scores(scores, task=task, attr=attr),
         relabel=_MONO2),
    Case("attention_score_summary", ("attention_score_summary",), _summary_list_arrays,
         lambda results: b.attention_score_summary(results), order=False, examples=4),
    # ---- report ---------------------------------------------------------------------- #
    Case("audit", ("audit",), lambda d: {
        "attr": L(d.attr, family="attr"), "task": L(d.task, family="task"),
        "attr_pred": L(d.attr_pred, family="attr", pred=True, required=False),
        "task_pred": L(d.task_pred, family="task", pred=True, required=False)},
         lambda attr, task, **kw: b.audit(attr, task, n_iter=2, attacker="tabular", progress=False,
                                          errors="raise", **kw),
         # n_boot=0 is valid in an audit (no interval)
         scalars={"n_boot": (20, _AUDIT_N_BOOT), "level": (0.9, "level"), "random_state": (0, "seed")},
         order=False, examples=5, sweep=False),
    Case("AuditConfig", ("AuditConfig",), lambda d: {
        "title": Arg("t", "custom", rows=None, custom_nasty={"numpy-str": np.str_("t")},
                     custom_invalid={"int": 3, "list": ["t"], "bytes": b"t"})},
         lambda title, **kw: b.AuditConfig(title=title, **kw),
         scalars={"n_boot": (20, _AUDIT_N_BOOT), "level": (0.9, "level"), "random_state": (0, "seed"),
                  "threshold": (0.5, (1.0, -0.1, "0.5", None, float("nan"), True)),
                  "min_group_size": (30, (-1, 2.5, "30", None, True))},
         order=False, examples=4),
    Case("Report.from_json", ("Report",), _from_json_arrays, lambda text: b.Report.from_json(text),
         order=False, examples=6, names={"text": ("not a biasamp report",)}),
    Case("Report.from_dict", ("Report",), _from_dict_arrays, lambda obj: b.Report.from_dict(obj),
         order=False, examples=4, names={"obj": ("not a biasamp report",)}),
    Case("Report.section", ("Report",), _section_arrays,
         lambda key: b.Report.from_json(_report_json()).section(key), order=False, examples=4,
         names={"key": ("section",)}),
    # ---- submodules ---------------------------------------------------------------- #
    Case("datasets.balanced_subset", ("datasets.balanced_subset",), lambda d: {
        "attr": L(d.attr, family="attr"), "task": L(d.task, family="task")},
         lambda attr, task, **kw: bds.balanced_subset(attr, task, **kw),
         scalars={"random_state": (0, "seed")}, order=False, examples=8),
    Case("datasets.ratio_bounded_subset", ("datasets.ratio_bounded_subset",), lambda d: {
        "attr": L(d.attr, family="attr"), "task": L(d.task, family="task")},
         lambda attr, task, **kw: bds.ratio_bounded_subset(attr, task, **kw),
         scalars={"random_state": (0, "seed"), "ratio": (3.0, (0.5, -1.0, float("nan"), "3", None))},
         order=False, examples=8),
    Case("datasets.oversample_balanced", ("datasets.oversample_balanced",), lambda d: {
        "attr": L(d.attr, family="attr"), "task": IND(d.task_multi, family="task")},
         lambda attr, task, **kw: bds.oversample_balanced(attr, task, **kw),
         scalars={"random_state": (0, "seed"), "epsilon": (0.025, (-0.1, float("nan"), "a")),
                  "max_rounds": (3, (-1, 1.5, "a"))}, order=False, examples=8),
]

# ---- submodules: scikit-learn scorers, Dask ----------------------------------------- #
class _FixedPredictions(ClassifierMixin, BaseEstimator):
    """A fitted "estimator" whose predictions are its first feature (the scorer sees given predictions)."""

    classes_ = np.arange(3)

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


def _scorer_arrays(d: Data) -> dict:
    return {"y": L(d.task, family="task"), "sensitive_features": L(d.attr, family="group", invalid=_GROUPS_INVALID),
            # the predictions are the estimator's features: scikit-learn's input, not biasamp's
            "y_pred": Arg(d.task_pred, "labels", nasty=("list",), invalid=()),
            "metric": Arg("DP", "custom", rows=None, custom_nasty={
                "alias": "demographic_parity", "function": b.demographic_parity, "numpy-str": np.str_("DP")},
                custom_invalid={"unknown": "nope", "int": 3, "None": None, "list": ["DP"]})}


def _score(y, y_pred, sensitive_features, metric):
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        scorer = bsk.make_scorer(metric)
        return scorer(_FixedPredictions(), np.asarray(y_pred).reshape(-1, 1), y, sensitive_features=sensitive_features)


def _dask_arrays(d: Data, fairness: bool) -> dict:
    import dask.array as da

    def col(v: np.ndarray, pred: bool = False, required: bool = True) -> Arg:
        def chunked(x: np.ndarray, chunks: object = 5) -> object:
            return da.from_array(x, chunks=chunks)

        invalid = {"numpy": v, "short": chunked(v[:-1]), "str": "abc", "3-D": chunked(v.reshape(-1, 1, 1)),
                   "nan": chunked(np.where(np.arange(len(v)) == 1, np.nan, v))}
        if required:
            invalid["None"] = None
        if pred:
            invalid["unknown-class"] = chunked(np.where(np.arange(len(v)) == 1, 97, v))
        return Arg(chunked(v), "custom", rows=None, custom_nasty={
            "chunks-3": chunked(v, 3), "one-chunk": chunked(v, len(v)), "uneven-chunks": chunked(v, (len(v) - 2, 2)),
            "float16": chunked(v.astype(np.float16)),
        }, custom_invalid=invalid)

    if fairness:
        return {"y_true": col(d.task), "y_pred": col(d.task_pred, pred=True), "sensitive_features": col(d.attr)}
    return {"attr": col(d.attr), "task": col(d.task), "attr_pred": col(d.attr_pred, pred=True, required=False),
            "task_pred": col(d.task_pred, pred=True, required=False)}


def _dask_directional(attr, task, attr_pred, task_pred):
    from biasamp import dask as bdask

    # the plug-in: the chunking changes nothing (cross-fitted, every chunk is split on its own: the chunking is the split)
    return bdask.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred, cross_fit=False)


def _dask_fairness(y_true, y_pred, sensitive_features):
    from biasamp import dask as bdask

    return bdask.fairness_metrics(y_true, y_pred, sensitive_features=sensitive_features)


_HAS_DASK = importlib.util.find_spec("dask") is not None  # the [dask] extra

SUBMODULE_CASES = [
    Case("sklearn.make_scorer", ("sklearn.make_scorer",), _scorer_arrays, _score, relabel={},
         examples=6, names={"y": ("y_true",)}),
    *([Case("dask.bias_amp_directional", ("dask.bias_amp_directional",), lambda d: _dask_arrays(d, False),
            _dask_directional, order=False, examples=2),
       Case("dask.fairness_metrics", ("dask.fairness_metrics",), lambda d: _dask_arrays(d, True),
            _dask_fairness, order=False, examples=2)] if _HAS_DASK else []),
]


# ---- methods of results that take an argument ------------------------------------- #
def _top(kind):
    def call(attr, task, attr_pred, task_pred, k):
        if kind == "direction":
            return b.bias_amp_directional(attr, task, attr_pred=attr_pred, task_pred=task_pred).a_to_t.top(k)
        if kind == "mals":
            return b.bias_amp_mals(attr_pred=attr_pred, task_pred=task_pred, attr_train=attr, task_train=task).top(k)
        return b.multi_bias_amp(attr, task, attr_pred=attr_pred, task_pred=task_pred).g_to_m.top(k)
    return call


def _top_arrays(multi, attr_pred_required=False):
    def arrays(d):
        return {"attr": L(d.attr, family="attr"), "task": IND(d.task_multi) if multi else L(d.task),
                "attr_pred": L(d.attr_pred, pred=True, required=attr_pred_required),
                "task_pred": IND(d.task_multi_pred, pred=True, required=False) if multi
                else L(d.task_pred, pred=True, required=False)}
    return arrays


def _interval_arrays(d: Data) -> dict:
    return {**_fair_arrays(d), "statistic": Arg("DP", "custom", rows=None, custom_nasty={"numpy-str": np.str_("DP")},
                                                custom_invalid={"unknown": "nope", "int": 3, "list": ["DP"]})}


def _group_method_arrays(d: Data) -> dict:
    return {**_fair_arrays(d), "method": Arg("between_groups", "custom", rows=None,
                                             custom_invalid={"unknown": "nope", "int": 3, "None": None})}


def _curve_section_arrays(d: Data) -> dict:
    return {**_checkpoint_arrays(d), "key": Arg("curve", "custom", rows=None, custom_nasty={"numpy": np.str_("curve")},
                                                custom_invalid={"int": 3, "list": ["curve"], "empty": ""})}


CASES += [
    Case("DirectionResult.top", ("DirectionResult",), _top_arrays(False), _top("direction"),
         scalars={"k": (3, "k")}, order=False, examples=4),
    Case("MALSResult.top", ("MALSResult",), _top_arrays(False, True), _top("mals"),
         scalars={"k": (3, "k")}, order=False, examples=4),
    Case("MultiMetricResult.top", ("MultiMetricResult",), _top_arrays(True), _top("multi"),
         scalars={"k": (3, "k")}, order=False, examples=4),
    Case("BootstrapResult.interval", ("BootstrapResult",), _interval_arrays,
         lambda y_true, y_pred, sensitive_features, statistic: b.bootstrap(
             b.fairness_metrics, y_true, y_pred, sensitive_features=sensitive_features, n_boot=N_BOOT,
             random_state=0).interval(statistic), examples=4),
    Case("GroupMetrics.difference+ratio", ("GroupMetrics",), _group_method_arrays,
         lambda y_true, y_pred, sensitive_features, method: (lambda g: (g.difference(method), g.ratio(method)))(
             b.fairness_metrics(y_true, y_pred, sensitive_features=sensitive_features).group_view),
         examples=4),
    Case("CurveResult.to_section", ("CurveResult",), _curve_section_arrays,
         lambda attr, task, task_pred, key: b.checkpoint_curve(
             b.bias_amp_directional, attr, task, task_preds=[task_pred, task_pred]).to_section(key).summary,
         order=False, examples=4),
]

# ---- captioning ------------------------------------------------------------ #
_WHO = np.array(["man", "woman", "person"])
_OBJ = np.array(["cup", "knife", "dog"])


def _captions(d: Data, which: str) -> np.ndarray:
    """One caption per test row: the attribute's word and the task's (or the predicted task's) object."""
    task = d.task if which == "human" else d.task_pred
    return np.array([f"A {w} with a {o}." for w, o in zip(_WHO[d.attr], _OBJ[task])], dtype=object)


def CAPS(v: np.ndarray, required: bool = True, columns: bool = False, alone: bool = False) -> Arg:
    v = np.asarray(v, dtype=object)
    missing, numbers = v.copy(), v.copy()
    missing[1] = None
    numbers[1] = 3
    invalid = {"missing": missing, "int": numbers, "short": v[:-1], "one-string": "a man", "2-D": np.stack([v, v, v], 1)}
    nasty = {}
    if alone:  # no other argument to match in length
        del invalid["short"]
    if required:
        invalid["None"] = None
    if columns:  # several captions per image allowed: one column is the 1-D input
        invalid["3-D"] = invalid.pop("2-D")[:, :, None]
        nasty["one-column"] = v[:, None]
        nasty["frame"] = pd.DataFrame({"c": v})
    return Arg(v, "custom", custom_nasty={**nasty,
        "list": v.tolist(), "tuple": tuple(v.tolist()), "numpy-str": v.astype(str),
        "series-odd-index": pd.Series(v, index=np.arange(len(v))[::-1] * 3 + 7), "index": pd.Index(v),
        "numpy-str_": np.array([np.str_(x) for x in v], dtype=object)}, custom_invalid=invalid)


_CAPTION_SCALARS = {"random_state": (0, "seed"), "n_iter": (2, "n_iter"), "level": (0.9, "level"),
                    "test_size": (0.25, "probability"), "n_boot": (20, "n_boot")}

CASES += [
    Case("lic", ("lic",), lambda d: {"attr": L(d.attr, family="attr"), "captions_pred": CAPS(_captions(d, "model")),
                                    "captions": CAPS(_captions(d, "human"), required=False, columns=True)},
         lambda attr, captions_pred, captions, **kw: b.lic(attr, captions_pred=captions_pred, captions=captions,
                                                           progress=False, **kw),
         scalars=_CAPTION_SCALARS, order=False, examples=6),
    Case("dbac", ("dbac",), lambda d: {"attr": L(d.attr, family="attr"), "task": L(d.task, family="task"),
                                      "captions": CAPS(_captions(d, "human")),
                                      "captions_pred": CAPS(_captions(d, "model"))},
         lambda attr, task, captions, captions_pred, **kw: b.dbac(
             attr, task, captions=captions, captions_pred=captions_pred, task_words=list(_OBJ), progress=False, **kw),
         scalars=_CAPTION_SCALARS, order=False, examples=6),
    Case("caption_gender_stats", ("caption_gender_stats",),
         lambda d: {"attr": L(d.attr, family="attr"), "captions_pred": CAPS(_captions(d, "model"))},
         lambda attr, captions_pred, **kw: b.caption_gender_stats(
             attr, captions_pred=captions_pred, words={0: ["man"], 1: ["woman"], 2: ["person"]}, **kw),
         scalars={"random_state": (0, "seed"), "n_boot": (20, "n_boot"), "level": (0.9, "level")}, order=False,
         examples=6),
    Case("caption_labels", ("caption_labels",), lambda d: {"captions": CAPS(_captions(d, "human"), alone=True)},
         lambda captions: b.caption_labels(captions, {"cup": ["cup"], "knife": ["knife", "knives"]}), order=False,
         examples=6),
]

# ---- the subgroup scan -------------------------------------------------------- #
def _scan_features(d: Data) -> pd.DataFrame:
    """One row of features per test row: a string column, an integer one (binned past 10 distinct values), a bool."""
    return pd.DataFrame({"site": np.where(d.values_b > 0, "south", "north"), "k": (d.values * 8).astype(np.int64),
                         "flag": d.task_multi[:, -1].astype(bool)})


def _features_arg(d: Data) -> Arg:
    f = _scan_features(d)
    n = len(f)
    inf, cplx = f.assign(k=f["k"].astype(float)), f.assign(k=f["k"].astype(complex))
    inf.iloc[n // 2, 1] = np.inf
    nasty = {
        "odd-index": f.set_axis(np.arange(n)[::-1] * 3 + 7), "duplicate-index": f.set_axis(np.zeros(n, int)),
        "categorical": f.assign(site=pd.Categorical(f["site"])),
        "categorical-unused": f.assign(site=pd.Categorical(f["site"], categories=["east", "north", "south"])),
        "string-dtype": f.astype({"site": "string"}), "Int64": f.astype({"k": "Int64"}),
        "float64": f.astype({"k": np.float64}), "boolean": f.astype({"flag": "boolean"}),
        "object": f.astype(object).assign(k=f["k"]),  # object strings and bools (a numeric column stays numeric)
        "mapping": {c: f[c].to_numpy() for c in f.columns},
    }
    if pl is not None:
        nasty["polars"] = pl.DataFrame({c: f[c].to_numpy() for c in f.columns})
    return Arg(f, "custom", custom_nasty=nasty, custom_invalid={
        "None": None, "str": "site", "scalar": 3, "1-D": f["k"].to_numpy(), "3-D": np.zeros((n, 2, 2)),
        "short": f.iloc[:-1], "long": pd.concat([f, f.iloc[:1]]), "no-columns": f.iloc[:, :0],
        "duplicate-columns": f.set_axis(["site", "site", "flag"], axis=1), "inf": inf, "complex": cplx})


def _scan_arrays(d: Data) -> dict:
    return {**_directional_arrays(d), "task_pred": L(d.task_pred, family="task", pred=True),
            "features": _features_arg(d)}


def _scan_headline(res: object) -> dict:
    """What neither the row order nor the class names change: the overall value, each subgroup's size and estimate.

    (The bootstrap groups are a hash of the row's position, so the intervals and p-values follow the rows.)
    """
    frame = res.subgroups  # type: ignore[attr-defined]
    out = {"overall": res.overall}  # type: ignore[attr-defined]
    for rule, n, est in zip(frame["rule"], frame["n"], frame["estimate"]):
        out[f"n[{rule}]"], out[f"estimate[{rule}]"] = float(n), float(est)
    return out


def _scan_acc(attr, task, task_pred, features, ka, kt):
    """DP scanned by the accumulator (levels fixed up front, one batch, as the other accumulator cases), then its result."""
    acc = b.ScanAccumulator("DP", {"attr": list(range(ka)), "task": list(range(kt))},
                            bsub.feature_levels(features), n_boot=20, random_state=0)
    return acc.update(features, {"attr": attr, "task": task, "task_pred": task_pred}).result(min_group_size=1)


_SCAN_SCALARS = {"n_boot": (20, "n_boot"), "level": (0.9, "level"), "random_state": (0, "seed"),
                 "max_order": (2, (0, -1, 1.5, "2", True, None)),
                 "min_group_size": (1, (0, -1, float("nan"), "1", None, True)),
                 "statistic": ("A->T", ("nope", 3, None))}

CASES += [
    Case("scan", ("scan", "ScanResult"), _scan_arrays,
         lambda attr, task, features, **kw: b.scan(attr, task, features=features, **kw),
         scalars=_SCAN_SCALARS, relabel=_any_single, headline=_scan_headline, examples=6),
    Case("ScanAccumulator.update+result", ("ScanAccumulator",), _with_consts(lambda d: {
        "attr": L(d.attr, invalid=_GROUPS_INVALID), "task": L(d.task), "task_pred": L(d.task_pred, pred=True),
        "features": _features_arg(d)}), _scan_acc, headline=_scan_headline, examples=6,
         # DP reads its roles as the fairness metrics' arguments, and says so in its messages
         names={"attr": ("sensitive_features",), "task": ("y_true",), "task_pred": ("y_pred",)}),
]

CASES += SUBMODULE_CASES

# Names exercised by tests/test_fuzz_torch.py (torch models and tensors only).
TORCH_TARGETS = ("GradCAM", "gradcam", "mask_score", "heatmap_score", "attention_iou",
                 "torchmetrics.BiasAmpDirectional", "torchmetrics.BiasAmpMALS", "torchmetrics.MultiBiasAmp",
                 "torchmetrics.GroupFairness")

# Result classes (no user input of their own) and the cases whose results hold them.
RESULT_TYPES: dict[str, str] = {
    "AttentionScoreResult": "summarize_attention_scores",
    "SubsampleResult": "subsample_to_mcc",
    "DPADirectionResult": "dpa",
    "DPAResult": "dpa",
    "LeakageResult": "leakage_amplification",
    "MultiBiasAmpResult": "multi_bias_amp",
    "MultiMetricResult": "multi_bias_amp",
    "BootstrapResult": "bootstrap(fairness_metrics)",
    "CompareRunsResult": "compare_runs",
    "FairnessResult": "fairness_metrics",
    "FairnessSettings": "fairness_metrics",
    "GroupMetrics": "fairness_metrics",
    "RunSummary": "run_summary",
    "CurveResult": "threshold_curve",
    "DirectionResult": "bias_amp_directional",
    "DirectionalBiasAmpResult": "bias_amp_directional",
    "MALSResult": "bias_amp_mals",
    "Thresholds": "calibrate_thresholds",
    "LICResult": "lic",
    "DBACResult": "dbac",
    "DBACDirectionResult": "dbac",
    "CaptionGenderStats": "caption_gender_stats",
    "DFBiasAmpResult": "df_bias_amplification",
    "ScanResult": "scan",
}
