"""One rule for a binary task, in every family (docs/definitions.md, "A binary task").

A task whose classes are 0 and 1 (or False/True, or two classes with a
``pos_label``) is read as its positive class by default, in every count-based
family: the same numbers whether it is a 1-D column, booleans, floats, an
``N x 1`` indicator or names with ``pos_label``. ``binary_task="both"`` reads
both classes (the one-hot reading some papers use). Parametrised from the
registry: every family that declares the option is checked.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp._families import REGISTRY
from biasamp.exceptions import SmallGroupWarning, UndefinedPairWarning

#: the families whose options declare the rule (the count-based families)
BINARY = [f for f in REGISTRY if f.options is not None and "binary_task" in f.options.option_names()]
IDS = [f.key for f in BINARY]


def test_every_count_family_declares_the_rule():
    assert {"directional", "mals", "multi", "fairness", "differential"} <= set(IDS)


def _data(seed: int = 0, n: int = 500):
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 3, n)
    task = (rng.random(n) < 0.25 + 0.2 * attr).astype(int)
    attr_pred = np.where(rng.random(n) < 0.2, (attr + 1) % 3, attr)
    task_pred = np.where(rng.random(n) < 0.2, 1 - task, task)
    attr_train = rng.integers(0, 3, n)
    task_train = (rng.random(n) < 0.3 + 0.1 * attr_train).astype(int)
    return attr, task, attr_pred, task_pred, attr_train, task_train


def _values(family, task, task_pred, task_train=None, **options) -> dict:
    attr, _, attr_pred, _, attr_train, _ = _data()
    roles = {"attr": attr, "task": task, "task_pred": task_pred}
    if "attr_pred" in family.roles:
        roles["attr_pred"] = attr_pred
    if task_train is not None and "attr_train" in family.roles:
        roles["attr_train"], roles["task_train"] = attr_train, task_train
    args, kwargs = family.call(roles, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        warnings.simplefilter("ignore", SmallGroupWarning)
        res = family.function(*args, **kwargs)
    return {s.name: s.read(res)[0] for s in family.statistics}


def _kinds():
    """The same binary task in every input kind the rule reads alike: ``(name, task, task_pred, task_train, options)``."""
    _, t, _, tp, _, tt = _data()
    names = np.array(["no", "yes"], dtype=object)
    return [
        ("int", t, tp, tt, {}),
        ("bool", t.astype(bool), tp.astype(bool), tt.astype(bool), {}),
        ("float", t.astype(float), tp.astype(float), tt.astype(float), {}),
        ("indicator", t[:, None], tp[:, None], tt[:, None], {}),
        ("frame", pd.DataFrame({"yes": t}), pd.DataFrame({"yes": tp}), pd.DataFrame({"yes": tt}), {}),
        ("names", names[t], names[tp], names[tt], {"pos_label": "yes"}),
        ("pos_label 0", 1 - t, 1 - tp, 1 - tt, {"pos_label": 0}),
    ]


@pytest.mark.parametrize("train", [False, True], ids=["no train", "train"])
@pytest.mark.parametrize("family", BINARY, ids=IDS)
def test_every_input_kind_of_a_binary_task_gives_one_number(family, train):
    if family.key == "differential" and train:
        pytest.skip("differential fairness takes no training set")
    kinds = _kinds()
    ref = _values(family, kinds[0][1], kinds[0][2], kinds[0][3] if train else None)
    for name, task, task_pred, task_train, options in kinds[1:]:
        if family.key in ("fairness", "differential") and name in ("indicator", "frame"):
            options = {}  # pos_label is the indicator's column: the families' default reads it
        got = _values(family, task, task_pred, task_train if train else None, **options)
        assert got == pytest.approx(ref, abs=1e-12, nan_ok=True), name


@pytest.mark.parametrize("family", [f for f in BINARY if f.key in ("directional", "mals", "multi")],
                         ids=lambda f: f.key)
def test_both_is_the_one_hot_reading_of_the_indicator(family):
    """``binary_task="both"`` reads a 0/1 column as the N x 2 one-hot matrix, the former default."""
    _, t, _, tp, _, tt = _data()
    both = _values(family, t, tp, tt, binary_task="both")
    one_hot = _values(family, np.eye(2, dtype=int)[t], np.eye(2, dtype=int)[tp], np.eye(2, dtype=int)[tt])
    assert both == pytest.approx(one_hot, abs=1e-12)
    positive = _values(family, t, tp, tt)
    assert positive != pytest.approx(both)  # the rule changes these numbers (T->A, MALS, Multi)


def test_the_uci_adult_symptom_is_gone():
    """The symptom of the issue: one T->A for a 0/1 column and its N x 1 indicator, which "both" reproduces."""
    attr, t, attr_pred, _, attr_train, tt = _data(seed=3)
    column = biasamp.bias_amp_directional(attr, t, attr_pred=attr_pred, attr_train=attr_train, task_train=tt)
    indicator = biasamp.bias_amp_directional(attr, t[:, None], attr_pred=attr_pred, attr_train=attr_train,
                                             task_train=tt[:, None])
    assert column.t_to_a.value == indicator.t_to_a.value
    assert column.binary_task == "positive class 1" and indicator.binary_task is None  # an indicator: as it is
    # by hand: the positive class's pairs only, y from the training set
    assert list(column.t_to_a.pairs["task"]) == [1, 1, 1]
    both = biasamp.bias_amp_directional(attr, t, attr_pred=attr_pred, attr_train=attr_train, task_train=tt,
                                        binary_task="both")
    assert both.binary_task == "both classes 0, 1" and len(both.t_to_a.pairs) == 6
    assert both.t_to_a.value == pytest.approx(both.t_to_a.pairs["contribution"].mean(), abs=1e-15)
    assert indicator.t_to_a.value == pytest.approx(both.t_to_a.pairs.query("task == 1")["contribution"].mean(),
                                                   abs=1e-15)


def test_the_dpa_paper_compas_table7_with_both(shared_data):
    """DPA App. E, Table 7: BA-> A->T -0.038, T->A -0.078 one-hot encode the binary task (binary_task="both")."""
    from tests.test_cooccurrence import _compas_rows

    table = pd.read_csv(shared_data / "dpa_tokas2025" / "compas_table6_counts.csv")
    attr, task, task_pred = _compas_rows(table, "unbalanced", "A->T")
    a_to_t = biasamp.bias_amp_directional(attr, task, task_pred=task_pred, cross_fit=False, binary_task="both")
    attr, task, attr_pred = _compas_rows(table, "unbalanced", "T->A")
    t_to_a = biasamp.bias_amp_directional(attr, task, attr_pred=attr_pred, cross_fit=False, binary_task="both")
    assert round(a_to_t.a_to_t.value, 3) == -0.038 and round(t_to_a.t_to_a.value, 3) == -0.078
    # the positive reading of the same rows: A->T is the same (y and Delta flip together), T->A is not
    positive = biasamp.bias_amp_directional(attr, task, attr_pred=attr_pred, cross_fit=False)
    assert round(positive.t_to_a.value, 3) != -0.078


def test_fairness_both_is_average_macro_and_refuses_binary():
    attr, t, _, tp, _, _ = _data()
    both = biasamp.fairness_metrics(t, tp, sensitive_features=attr, binary_task="both")
    macro = biasamp.fairness_metrics(t, tp, sensitive_features=attr, average="macro")
    assert both.overall == macro.overall and both.settings.average == "macro"
    assert both.settings.binary_task == "both classes 0, 1"
    positive = biasamp.fairness_metrics(t, tp, sensitive_features=attr)
    assert positive.settings.binary_task == "positive class 1" and positive.settings.average == "binary"
    with pytest.raises(ValueError, match="binary_task='both' reads both classes"):
        biasamp.fairness_metrics(t, tp, sensitive_features=attr, binary_task="both", average="binary")
    with pytest.raises(ValueError, match="binary_task must be one of"):
        biasamp.fairness_metrics(t, tp, sensitive_features=attr, binary_task="one-hot")


def test_differential_fairness_accepts_the_option_and_changes_nothing():
    """ε is a max over both outcomes: the two readings are one number; an N x 1 indicator is its 1-D outcome."""
    attr, t, _, tp, _, _ = _data()
    ref = biasamp.df_bias_amplification(t, tp, sensitive_features=attr)
    assert biasamp.df_bias_amplification(t, tp, sensitive_features=attr, binary_task="both").value == ref.value
    assert biasamp.df_bias_amplification(t[:, None], tp[:, None], sensitive_features=attr).value == ref.value
    flipped = biasamp.df_bias_amplification(1 - t, 1 - tp, sensitive_features=attr, pos_label=0)
    assert flipped.value == ref.value
    with pytest.raises(ValueError, match="binary_task"):
        biasamp.df_bias_amplification(t, tp, sensitive_features=attr, binary_task="one")


@pytest.mark.parametrize("family", [f for f in BINARY if f.key in ("directional", "mals", "multi")],
                         ids=lambda f: f.key)
def test_bootstrap_and_accumulator_follow_the_rule(family):
    attr, t, attr_pred, tp, attr_train, tt = _data()
    kwargs = {"attr_pred": attr_pred, "task_pred": tp, "attr_train": attr_train, "task_train": tt}
    for reading in ("positive", "both"):
        point = family.function(attr, t, binary_task=reading, **kwargs)
        boot = biasamp.bootstrap(family.function, attr, t, n_boot=20, random_state=0, binary_task=reading,
                                 **kwargs)
        stats = {s.name: s.read(point)[0] for s in family.statistics}
        assert boot.estimate == pytest.approx(stats, abs=1e-12)
        assert point.binary_task == ("positive class 1" if reading == "positive" else "both classes 0, 1")


def test_counts_and_accumulators_read_the_positive_class():
    attr, t, attr_pred, tp, _, _ = _data()
    counts = biasamp.CooccurrenceCounts.from_labels(attr, t, attr_pred=attr_pred, task_pred=tp)
    assert counts.task_classes == (1,)
    assert biasamp.CooccurrenceCounts.from_labels(attr, t, binary_task="both").task_classes == (0, 1)
    from biasamp.accumulators import CooccurrenceAccumulator

    for reading in ("positive", "both"):
        acc = CooccurrenceAccumulator([0, 1, 2], [0, 1], binary_task=reading)
        for part in np.array_split(np.arange(len(t)), 3):
            acc.update(attr[part], t[part], attr_pred=attr_pred[part], task_pred=tp[part])
        res = acc.compute()
        ref = biasamp.bias_amp_directional(attr, t, attr_pred=attr_pred, task_pred=tp, binary_task=reading,
                                           cross_fit=False)
        acc_plug = CooccurrenceAccumulator([0, 1, 2], [0, 1], binary_task=reading, cross_fit=False)
        acc_plug.update(attr, t, attr_pred=attr_pred, task_pred=tp)
        assert acc_plug.compute().t_to_a.value == pytest.approx(ref.t_to_a.value, abs=1e-12)
        assert res.binary_task == ref.binary_task


def test_the_audit_and_the_cli_say_which_reading(tmp_path):
    attr, t, attr_pred, tp, _, _ = _data()
    values = {}
    for reading in ("positive", "both"):
        report = biasamp.audit(attr, t, attr_pred=attr_pred, task_pred=tp, n_boot=0, binary_task=reading,
                               sections=["directional", "mals"])
        notes = [n for s in report.sections for n in s.notes if n.startswith("Binary task")]
        word = "positive class 1" if reading == "positive" else "both classes 0, 1"
        assert notes and all(word in n for n in notes)
        assert word in json.dumps(report.to_dict(), default=str)
        values[reading] = report.to_frame()["value"].tolist()
    indicator = biasamp.audit(attr, t[:, None], attr_pred=attr_pred, task_pred=tp[:, None], n_boot=0,
                              sections=["directional", "mals"])
    assert indicator.to_frame()["value"].tolist() == values["positive"] != values["both"]
    from click.testing import CliRunner

    from biasamp.cli import main

    pd.DataFrame({"g": attr, "y": t, "g_pred": attr_pred, "y_pred": tp}).to_csv(tmp_path / "d.csv", index=False)
    for reading in ("positive", "both"):
        out = tmp_path / f"{reading}.json"
        run = CliRunner().invoke(main, ["audit", str(tmp_path / "d.csv"), "--attr", "g", "--task", "y",
                                        "--n-boot", "2", "--binary-task", reading, "--json", str(out),
                                        *[x for k in ("dpa", "leakage", "multi", "calibration")
                                          for x in ("--exclude", k)]])
        assert run.exit_code == 0, run.output
        assert ("positive class 1" if reading == "positive" else "both classes 0, 1") in out.read_text()


def test_the_old_order_of_bias_amp_mals_warns_and_agrees():
    attr, t, attr_pred, tp, attr_train, tt = _data()
    new = biasamp.bias_amp_mals(attr, t, attr_pred=attr_pred, task_pred=tp, attr_train=attr_train, task_train=tt)
    with pytest.warns(FutureWarning, match=r"bias_amp_mals\(attr_train, task_train, attr_pred, task_pred\).*0\.4"):
        old = biasamp.bias_amp_mals(attr_train, tt, attr_pred, tp)
    assert old.value == new.value
    # the README's call: test ground truth first, the training set by keyword (raised "multiple values" before)
    assert biasamp.bias_amp_mals(attr_pred=attr_pred, task_pred=tp, attr_train=attr_train,
                                 task_train=tt).value == new.value
    # no training set: the test ground truth stands in, cross-fitted (as BiasAmp-> and the audit)
    alone = biasamp.bias_amp_mals(attr, t, attr_pred=attr_pred, task_pred=tp)
    assert alone.cross_fit and alone.train_rows is not None
    plug = biasamp.bias_amp_mals(attr, t, attr_pred=attr_pred, task_pred=tp, cross_fit=False)
    assert not plug.cross_fit and plug.value == biasamp.bias_amp_mals(attr, t, attr_pred=attr_pred, task_pred=tp,
                                                                       attr_train=attr, task_train=t).value
    with pytest.raises(TypeError, match="test ground truth attr and task, or a training set"):
        biasamp.bias_amp_mals(attr_pred=attr_pred, task_pred=tp)


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(["int8", "int32", "int64", "uint8", "float32", "float64", "bool"]),
       value=st.sampled_from([0, 1]), n=st.integers(40, 120))
def test_a_one_class_float_ground_truth_is_the_binary_task(dtype, value, n):
    """Issue 33: np.zeros(n) / np.ones(n) (floats) read exactly as the same labels stored as integers."""
    rng = np.random.default_rng(n)
    groups = np.repeat([0, 1], [n // 2, n - n // 2])
    pred = rng.integers(0, 2, n)
    y = np.full(n, value).astype(dtype)
    ref = biasamp.fairness_metrics(np.full(n, value), pred, sensitive_features=groups, metrics=["DP", "DI"])
    got = biasamp.fairness_metrics(y, pred.astype(dtype), sensitive_features=groups, metrics=["DP", "DI"])
    assert got.overall == ref.overall and got.counts.classes == (0, 1) == ref.counts.classes


def test_float_tensors_read_as_integer_labels():
    torch = pytest.importorskip("torch")
    attr, t, _, tp, _, _ = _data()
    ref = biasamp.fairness_metrics(t, tp, sensitive_features=attr)
    got = biasamp.fairness_metrics(torch.tensor(t, dtype=torch.float32), torch.tensor(tp, dtype=torch.float32),
                                   sensitive_features=attr)
    assert got.overall == ref.overall
    zeros = biasamp.fairness_metrics(torch.zeros(len(t)), torch.tensor(tp, dtype=torch.float32), sensitive_features=attr,
                                     metrics=["DP"])
    assert zeros.counts.classes == (0, 1)


def test_an_accumulator_of_classes_0_1_names_the_option_for_an_indicator():
    """The class list [0, 1] cannot tell a 0/1 column from a two-column indicator: the indicator is refused by name."""
    from biasamp.accumulators import CooccurrenceAccumulator, MultiAttributeAccumulator

    attr = np.array([0, 1, 0, 1] * 10)
    task = np.eye(2, dtype=int)[[0, 1, 1, 0] * 10]
    with pytest.raises(ValueError, match="pass binary_task='both' to count every column"):
        CooccurrenceAccumulator([0, 1], [0, 1]).update(attr, task, task_pred=task)
    with pytest.raises(ValueError, match="pass binary_task='both'"):
        MultiAttributeAccumulator([0, 1], [0, 1], combinations=[(0,), (1,)])
    both = CooccurrenceAccumulator([0, 1], [0, 1], binary_task="both", cross_fit=False)
    ref = biasamp.bias_amp_directional(attr, task, task_pred=task, cross_fit=False)
    assert both.update(attr, task, task_pred=task).compute().a_to_t.value == ref.a_to_t.value
    # counts of the positive class add across batches with the class list of the counts, (1,)
    first = biasamp.CooccurrenceCounts.from_labels(attr[:20], task[:20, 1])
    second = biasamp.CooccurrenceCounts.from_labels(attr[20:], task[20:, 1], task_classes=first.task_classes,
                                                    attr_classes=first.attr_classes)
    whole = biasamp.CooccurrenceCounts.from_labels(attr, task[:, 1])
    assert np.array_equal((first + second).gram, whole.gram)
