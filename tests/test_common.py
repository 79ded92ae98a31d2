"""Common tests over the family registry (scikit-learn's ``test_common`` idea).

Every family declared in :mod:`biasamp._families` is checked here, parametrised
from the registry, so a new family is covered by adding its declaration: the
function is invariant to row order and to renaming the attribute's classes;
integer sample weights equal repeated rows; ``bootstrap`` holds its estimate
and agrees with the function; the scorers forward every option to the
function; a checkpoint curve of one checkpoint equals the function; the
registry's own indexes are consistent.
"""

from __future__ import annotations

import importlib.util
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp._families import REGISTRY
from biasamp.exceptions import UndefinedPairWarning
from tests.test_toy_family import FAMILIES_UNDER_TEST

#: the registry's families and the family declared in tests/test_toy_family.py (registered for its tests)
FAMILIES = FAMILIES_UNDER_TEST
IDS = [f.key for f in FAMILIES]


def _in_registry(family):
    """A ``with`` block in which ``family`` is registered (the toy family is registered for it)."""
    from contextlib import nullcontext

    return nullcontext(family) if family.key in REGISTRY.keys else REGISTRY.registered(family)


@pytest.fixture(autouse=True)
def _registered(request):
    """A family of :data:`FAMILIES` that is not in the registry is registered for the test (the toy family)."""
    family = getattr(request.node, "callspec", None) and request.node.callspec.params.get("family")
    if family is None:
        yield
        return
    with _in_registry(family):
        yield


def _example(family, seed: int = 0, n: int = 600) -> dict:
    """Labels by role for ``family``: a 3-class attribute that shifts the task, and noisy predictions."""
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 3, n)
    flip = rng.random(n) < 0.15
    attr_pred = np.where(flip, rng.integers(0, 3, n), attr)
    if family.task_labels == "multilabel":
        task = (rng.random((n, 4)) < 0.25 + 0.15 * attr[:, None] * np.array([1, 0, -0.5, 0.3])).astype(int)
        noise = rng.random(task.shape) < 0.2
        task_pred = np.where(noise, 1 - task, task)
    else:
        k = 2 if family.task_labels == "binary" else 3
        task = (rng.random(n) < 0.3 + 0.15 * attr).astype(int) if k == 2 else rng.integers(0, k, n)
        noise = rng.random(n) < 0.2
        task_pred = np.where(noise, rng.integers(0, k, n), task)
    roles = {"attr": attr, "task": task, "task_pred": task_pred}
    if "attr_pred" in family.roles:
        roles["attr_pred"] = attr_pred
    return roles


def _values(family, roles: dict, **options) -> dict:
    args, kwargs = family.call(roles, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = family.function(*args, **kwargs)
    return {s.name: s.read(res)[0] for s in family.statistics}


def _take(roles: dict, rows: np.ndarray) -> dict:
    return {k: (v[rows] if v is not None else None) for k, v in roles.items()}


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_row_order_changes_nothing(family):
    roles = _example(family, seed=1)
    perm = np.random.default_rng(2).permutation(len(roles["attr"]))
    assert _values(family, _take(roles, perm)) == _values(family, roles)  # exact: counts are integers


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_renaming_the_attribute_classes_changes_nothing(family):
    roles = _example(family, seed=3)
    names = np.array(["zeta", "alpha", "mid"])
    renamed = {**roles, "attr": names[roles["attr"]]}
    if "attr_pred" in roles:
        renamed["attr_pred"] = names[roles["attr_pred"]]
    assert _values(family, renamed) == pytest.approx(_values(family, roles), abs=1e-12)


def _plug_in(family) -> dict:
    """The option that makes a family read its signs from every test row (the plug-in)."""
    return {"cross_fit": False} if family.cross_fit else {}


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_integer_weights_equal_repeated_rows(family):
    roles = _example(family, seed=4, n=300)
    w = np.random.default_rng(5).integers(0, 4, 300)
    # cross-fitting splits rows, not weights (a row of weight 3 goes to one fold whole, three rows are split): the
    # property holds for the counts, so for the plug-in; the cross-fitted split of weighted rows is tested below
    weighted = _values(family, {**roles, "sample_weight": w.astype(float)}, **_plug_in(family))
    repeated = _values(family, _take(roles, np.repeat(np.arange(300), w)), **_plug_in(family))
    assert weighted == pytest.approx(repeated, abs=1e-12)


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_bootstrap_holds_its_estimate_and_agrees_with_the_function(family):
    roles = _example(family, seed=6)
    args, kwargs = family.call(roles, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        boot = biasamp.bootstrap(family.function, *args, n_boot=200, random_state=0, **kwargs)
    point = _values(family, roles)
    assert set(boot.estimate) == {s.name for s in family.statistics}
    for name, est in boot.estimate.items():
        assert est == pytest.approx(point[name], abs=1e-12), name
        lo, hi = boot.ci[name]
        assert lo <= est <= hi, (name, lo, est, hi)
        spec = family.statistic(name)
        assert spec.range[0] <= lo and hi <= spec.range[1], name


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_bootstrap_is_reproducible_and_order_free(family):
    roles = _example(family, seed=7, n=400)
    perm = np.random.default_rng(8).permutation(400)

    def ci(r):
        args, kwargs = family.call(r, {})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedPairWarning)
            return biasamp.bootstrap(family.function, *args, n_boot=100, random_state=3, **kwargs).ci

    assert ci(roles) == ci(_take(roles, perm))


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_checkpoint_curve_of_one_checkpoint_equals_the_function(family):
    roles = _example(family, seed=9)
    preds = {k: [roles[k]] for k in ("task_pred", "attr_pred") if k in roles}
    kwargs = {"task_preds": preds["task_pred"]}
    if "attr_pred" in preds:
        kwargs["attr_preds"] = preds["attr_pred"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        curve = biasamp.checkpoint_curve(family.function, roles["attr"], roles["task"], **kwargs)
    point = _values(family, roles)  # a checkpoint curve calls the function: cross-fitted alike
    for s in family.statistics:
        if s.headline:
            assert curve.values[s.column].iloc[0] == pytest.approx(point[s.name], abs=1e-12), s.name


@pytest.mark.parametrize("family", [f for f in FAMILIES if any(s.scorer for s in f.statistics)],
                         ids=[f.key for f in FAMILIES if any(s.scorer for s in f.statistics)])
def test_scorers_equal_the_function_and_forward_every_option(family):
    from biasamp.sklearn import statistic_score

    roles = _example(family, seed=10)
    point = _values(family, roles)
    for spec in family.statistics:
        if spec.scorer is None:
            continue
        sc = spec.scorer
        y_true, y_pred = roles[sc.target], roles[f"{sc.target}_pred"]
        got = statistic_score(y_true, y_pred, statistic=sc.name, **{sc.request: roles[sc.metadata]})
        assert got == pytest.approx(point[spec.name], abs=1e-12), sc.name
        # an option reaches the function: weights change the value exactly as the function's own
        w = np.random.default_rng(11).integers(0, 3, len(y_true)).astype(float)
        weighted = statistic_score(y_true, y_pred, statistic=sc.name, sample_weight=w,
                                   **{sc.request: roles[sc.metadata]})
        assert weighted == pytest.approx(_values(family, {**roles, "sample_weight": w})[spec.name], abs=1e-12)
        # and an option the function does not take is not dropped silently
        with pytest.raises(TypeError, match="no_such_option"):
            statistic_score(y_true, y_pred, statistic=sc.name, no_such_option=1, **{sc.request: roles[sc.metadata]})


CROSS_FIT = [f for f in FAMILIES if f.cross_fit]


@pytest.mark.parametrize("family", CROSS_FIT, ids=[f.key for f in CROSS_FIT])
def test_signs_from_the_test_rows_are_cross_fitted_by_default(family):
    """Without a training set the function and ``bootstrap`` cross-fit (issue 21 item 1), reproducibly."""
    roles = _example(family, seed=19)
    args, kwargs = family.call(roles, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = family.function(*args, **kwargs)
        boot = biasamp.bootstrap(family.function, *args, n_boot=50, random_state=0, **kwargs)
    assert res.cross_fit
    default = _values(family, roles)
    assert default == _values(family, roles, cross_fit=True)
    assert default != _values(family, roles, cross_fit=False)  # the plug-in, a different estimate
    assert boot.estimate == {s.name: default[s.name] for s in family.statistics}
    assert any("cross-fitted" in note for note in boot.notes)
    # another seed draws another split (a valid one: the same statistics, in range), the same seed the same one
    other = _values(family, roles, cross_fit_random_state=7)
    assert other == _values(family, roles, cross_fit_random_state=7) and other != default
    for spec in family.statistics:
        assert spec.range[0] <= other[spec.name] <= spec.range[1]
    # row order and the names of the attribute's classes change nothing, for any seed
    perm = np.random.default_rng(20).permutation(len(roles["attr"]))
    assert _values(family, _take(roles, perm), cross_fit_random_state=7) == other
    names = np.array(["zeta", "alpha", "mid"])
    renamed = {**roles, "attr": names[roles["attr"]]}
    if "attr_pred" in roles:
        renamed["attr_pred"] = names[roles["attr_pred"]]
    assert _values(family, renamed, cross_fit_random_state=7) == pytest.approx(other, abs=1e-12)


@pytest.mark.parametrize("family", CROSS_FIT, ids=[f.key for f in CROSS_FIT])
def test_with_a_training_set_the_signs_are_the_training_sets(family):
    roles = _example(family, seed=21)
    train = _example(family, seed=22, n=500)
    with_train = {**roles, "attr_train": train["attr"], "task_train": train["task"]}
    args, kwargs = family.call(with_train, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = family.function(*args, **kwargs)
        assert not res.cross_fit
        with pytest.raises(ValueError, match="cross_fit=True"):  # nothing to cross-fit: the training set's signs
            family.function(*args, **{**kwargs, "cross_fit": True})


def test_registry_indexes_are_consistent():
    names = set()
    for fam in REGISTRY:
        for f in fam.functions:
            assert REGISTRY.get(f) is fam
            assert getattr(biasamp, f.__name__) is f  # every registered function is public
        for s in fam.statistics:
            assert s.column.isidentifier()
            assert set(s.needs) <= set(fam.roles)
            assert REGISTRY.statistic(s.name)[0] is fam
            names.add(s.name)
    assert len(names) == sum(len(f.statistics) for f in REGISTRY)  # statistic names are unique
    with pytest.raises(TypeError, match="bootstrap supports the count-based metrics"):
        REGISTRY.of(len, "bootstrap")


def _classes(family, roles: dict) -> dict:
    """The class lists the function discovers, for the accumulator constructors."""
    def uniq(*xs):
        return sorted(set(np.concatenate([np.asarray(x).ravel() for x in xs if x is not None]).tolist()))

    task = roles["task"]
    tasks = list(range(task.shape[1])) if np.ndim(task) == 2 else uniq(task, roles.get("task_pred"))
    return {"attr": uniq(roles["attr"], roles.get("attr_pred")), "task": tasks}


def _accumulated(family, roles: dict, n_batches: int, classes: dict | None = None, **options):
    from biasamp.accumulators import accumulator_for

    acc = accumulator_for(family.key).for_family(family.key, classes or _classes(family, roles), **options)
    bounds = np.linspace(0, len(roles["attr"]), n_batches + 1).astype(int)
    batches = [_take(roles, np.arange(a, b)) for a, b in zip(bounds, bounds[1:])]
    for b in batches:
        acc.prepass(b)
    acc.end_prepass()
    return acc, batches


def _stats(family, res) -> dict:
    return {s.name: s.read(res)[0] for s in family.statistics if all(r is not None for r in s.needs)}


def _batchwise(family, roles: dict, batches: list) -> dict:
    """What an accumulator fed ``batches`` must compute: the function of every row, whatever the batching (one
    dataset, one number; a cross-fitted family keeps its distinct rows and splits them at the end)."""
    assert sum(len(next(iter(b.values()))) for b in batches) == len(next(iter(roles.values())))
    return _values(family, roles)


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_accumulator_batches_equal_one_shot_and_merge_equals_concatenation(family):
    roles = _example(family, seed=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        acc, batches = _accumulated(family, roles, 3)
        for b in batches:
            acc.update_roles(b)
        point = _batchwise(family, roles, batches)
        assert _stats(family, acc.compute()) == point  # bit-identical: the counts are integers
        left, _ = _accumulated(family, roles, 3)
        right = left.copy()
        left.update_roles(batches[0])
        for b in batches[1:]:
            right.update_roles(b)
        assert _stats(family, (left + right).compute()) == point
        if family.cross_fit:  # the plug-in (cross_fit=False): k batches are the function of every row
            plug = accumulator_for_options(family, roles, cross_fit=False)
            for b in batches:
                plug.update_roles(b)
            assert _stats(family, plug.compute()) == _values(family, roles, cross_fit=False)


def _reading(res) -> dict:
    """What a result says beside its tables: its scalar fields, and its nested dataclasses (settings, ...) as
    they print."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(res):
        v = getattr(res, f.name)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            out[f.name] = str(v)
        elif v is None or isinstance(v, (str, bool, int, float, tuple)):
            out[f.name] = v
    return out


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_a_weighted_stream_says_what_the_function_says(family):
    """Integer weights, some zero, in 3 batches: the streamed result says what the function's says (its values,
    the rows dropped for a zero weight, that the counts are weighted), not only the same statistics."""
    roles = _example(family, seed=12)
    weights = np.random.default_rng(1).integers(0, 4, len(roles["attr"])).astype(float)
    roles = {**roles, "sample_weight": weights}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc, batches = _accumulated(family, roles, 3)
        for b in batches:
            acc.update_roles(b)
        args, kwargs = family.call(roles, {})
        expected = _reading(family.function(*args, **kwargs))
        assert _reading(acc.compute()) == expected
        if importlib.util.find_spec("dask") is not None:  # Dask partitions: the same reading
            import dask.array as da

            import biasamp.dask as bdask

            args, kwargs = family.call({k: da.from_array(v, chunks=(250,) + np.shape(v)[1:])
                                        for k, v in roles.items()}, {})
            assert _reading(bdask.function_for(family.key)(*args, **kwargs)) == expected


#: the families whose function takes ``missing`` (rows with a missing attribute value dropped or grouped)
MISSING = [f for f in FAMILIES if f.options is not None and "missing" in f.options.option_names()]


@pytest.mark.parametrize("missing", ["drop", "group"])
@pytest.mark.parametrize("family", MISSING, ids=[f.key for f in MISSING])
def test_missing_attribute_values_stream_as_the_function_reads_them(family, missing):
    """``missing`` is an option of every streamed form of a family whose function takes it: 3 batches of an
    accumulator, its torchmetrics class and the Dask function (classes found in a pass) give the function's
    result, the rows dropped or grouped included."""
    roles = _example(family, seed=15)
    # the groups named (Dask DataFrames turn object columns into strings)
    roles = {k: np.char.add("g", np.asarray(v).astype(str)).astype(object) if k in ("attr", "attr_pred") else v
             for k, v in roles.items()}
    found = _classes(family, roles)  # every class keeps rows with a value
    classes = {**found, "attr": found["attr"] + (["missing"] if missing == "group" else [])}
    attr = np.asarray(roles["attr"]).astype(object)
    attr[::37] = None
    roles = {**roles, "attr": attr}
    args, kwargs = family.call(roles, {"missing": missing})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = family.function(*args, **kwargs)
        acc, batches = _accumulated(family, roles, 3, classes, missing=missing)
        for b in batches:
            acc.update_roles(b)
        assert _reading(acc.compute()) == _reading(expected)
        if importlib.util.find_spec("torchmetrics") is not None:
            from biasamp.torchmetrics import metric_for

            fresh, _ = _accumulated(family, roles, 3, classes, missing=missing)
            metric = metric_for(family.key).from_accumulator(fresh)
            for b in batches:
                metric._count("update_roles", b)
            assert _reading(metric.result()) == _reading(expected)
        if importlib.util.find_spec("dask") is not None:
            import dask.array as da
            import dask.dataframe as dd
            import pandas as pd

            import biasamp.dask as bdask

            def frame(v):
                return dd.from_pandas(pd.DataFrame(v) if np.ndim(v) == 2 else pd.Series(v), npartitions=3)

            for kind in (lambda v: da.from_array(v, chunks=(250,) + np.shape(v)[1:]), frame):  # arrays, DataFrames
                args, kwargs = family.call({k: kind(v) for k, v in roles.items()}, {"missing": missing})
                assert _reading(bdask.function_for(family.key)(*args, **kwargs)) == _reading(expected)


def accumulator_for_options(family, roles: dict, **options):
    """The family's accumulator with ``options``, its pre-pass (if any) run over every row."""
    from biasamp.accumulators import accumulator_for

    acc = accumulator_for(family.key).for_family(family.key, _classes(family, roles), **options)
    acc.prepass(roles)
    return acc.end_prepass()


@pytest.mark.parametrize("family", CROSS_FIT, ids=[f.key for f in CROSS_FIT])
def test_one_batch_equals_the_cross_fitted_function(family):
    """Without a training set an accumulator cross-fits: one batch is the function's split, bit for bit."""
    roles = _example(family, seed=27)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        acc = accumulator_for_options(family, roles).update_roles(roles)
        res = acc.compute()
        assert res.cross_fit
        assert _stats(family, res) == _values(family, roles)
        seeded = accumulator_for_options(family, roles, cross_fit_random_state=7).update_roles(roles)
        assert _stats(family, seeded.compute()) == _values(family, roles, cross_fit_random_state=7)
        # k batches: another valid split (every group halved within each batch), reproducible whatever the order
        bounds = np.linspace(0, len(roles["attr"]), 4).astype(int)
        batches = [_take(roles, np.arange(a, b)) for a, b in zip(bounds, bounds[1:])]
        once, again = accumulator_for_options(family, roles), accumulator_for_options(family, roles)
        for b in batches:
            once.update_roles(b)
        for b in batches[::-1]:
            again.update_roles(_take(b, np.random.default_rng(28).permutation(len(b["attr"]))))
        assert _stats(family, once.compute()) == _stats(family, again.compute())
        for spec in family.statistics:
            lo, hi = spec.range
            assert lo <= _stats(family, once.compute())[spec.name] <= hi
        # the plug-in is one option away, and keeps no rows to split
        plug = accumulator_for_options(family, roles, cross_fit=False).update_roles(roles)
        assert not plug.compute().cross_fit and _stats(family, plug.compute()) == _values(family, roles, cross_fit=False)
        assert plug.state.rowset is None and once.state.rowset is not None
        # a training set gives the signs (the fold tables are left unread); cross_fit=True refuses one
        train = _example(family, seed=29, n=500)
        trained = accumulator_for_options(family, roles).update_roles(roles)
        trained.update_roles({"attr_train": train["attr"], "task_train": train["task"]})
        assert not trained.compute().cross_fit
        strict = accumulator_for_options(family, roles, cross_fit=True)
        with pytest.raises(ValueError, match="cross_fit=True"):
            strict.update_roles({"attr_train": train["attr"], "task_train": train["task"]})
        with pytest.raises(ValueError, match="cannot merge accumulators with different cross_fit_random_state"):
            acc.merge(seeded)


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_torchmetrics_class_equals_the_function(family):
    pytest.importorskip("torchmetrics")
    from biasamp.torchmetrics import metric_for

    roles = _example(family, seed=13)
    acc, batches = _accumulated(family, roles, 2)
    metric = metric_for(family.key).from_accumulator(acc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        for b in batches:
            metric._count("update_roles", b)
        assert _stats(family, metric.result()) == pytest.approx(_batchwise(family, roles, batches), abs=1e-12)


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_dask_function_equals_the_function(family):
    da = pytest.importorskip("dask.array")
    import biasamp.dask as bdask

    roles = _example(family, seed=14, n=400)
    chunked = {k: da.from_array(v, chunks=(150,) + np.shape(v)[1:]) for k, v in roles.items()}
    args, kwargs = family.call(chunked, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        res = bdask.function_for(family.key)(*args, **kwargs)
    # every partition is a batch (of the split too, for the families that cross-fit)
    partitions = [_take(roles, np.arange(a, min(a + 150, 400))) for a in range(0, 400, 150)]
    assert _stats(family, res) == pytest.approx(_batchwise(family, roles, partitions), abs=1e-12)
    if family.cross_fit:
        assert res.cross_fit
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedPairWarning)
            plug = bdask.function_for(family.key)(*args, **{**kwargs, "cross_fit": False})
        assert _stats(family, plug) == pytest.approx(_values(family, roles, cross_fit=False), abs=1e-12)


def _as_scores(labels: np.ndarray, kind: str, k: int) -> np.ndarray:
    """Hard predictions as probabilities that the library's policy turns back into them."""
    if kind == "multilabel":
        return labels * 0.6 + 0.2  # 0.8 where predicted, 0.2 elsewhere
    if kind == "binary":
        return np.where(labels == 1, 0.8, 0.2)  # P(class 1)
    return np.eye(k)[labels] * 0.7 + 0.1  # class probabilities: the argmax is the prediction


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_probabilities_are_thresholded_by_default_in_every_layer(family):
    roles = _example(family, seed=15)
    kind = family.task_labels if family.task_labels != "single" else "multiclass"
    scored = {**roles, "task_pred": _as_scores(roles["task_pred"], kind, 3)}
    if "attr_pred" in roles:
        scored["attr_pred"] = _as_scores(roles["attr_pred"], "multiclass", 3)
    hard = _values(family, roles)
    assert _values(family, scored) == hard  # the function
    args, kwargs = family.call(scored, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        boot = biasamp.bootstrap(family.function, *args, n_boot=50, random_state=0, **kwargs)
        assert boot.estimate == {s.name: hard[s.name] for s in family.statistics}  # the bootstrap
        acc, batches = _accumulated(family, scored, 2, classes=_classes(family, roles))
        for b in batches:
            acc.update_roles(b)
        # the accumulator: as if fed the hard labels (the split is drawn from the thresholded predictions)
        hard_batches = [_take(roles, np.arange(a, b)) for a, b in ((0, 300), (300, 600))]
        assert _stats(family, acc.compute()) == _batchwise(family, roles, hard_batches)
    # expected rates are one option away, where the family defines them
    if "soft" not in family.options.option_names():  # a family that defines no expected rates refuses them
        with pytest.raises(ValueError, match="soft='expected' is not defined"):
            _values(family, scored, soft="expected")
    else:
        assert _values(family, scored, soft="expected") != hard


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_small_groups_are_left_out_of_every_family_by_default(family):
    from biasamp.exceptions import SmallGroupWarning

    roles = _example(family, seed=16)
    rows = np.flatnonzero(roles["attr"] == 2)[:8]  # group 2 keeps 8 of its rows: a small group (< 30)
    keep = np.concatenate([np.flatnonzero(roles["attr"] != 2), rows])
    small = _take(roles, keep)
    if "attr_pred" in small:  # predicted groups of the same sizes (BiasAmp_MALS sizes groups by their predictions)
        small["attr_pred"] = small["attr"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        with pytest.warns(SmallGroupWarning, match=r"2 \(n=8\)"):
            default = _values(family, small)
        with pytest.warns(SmallGroupWarning, match=r"kept in the headline \(include_small_groups=True\): 2 \(n=8\)"):
            every = _values(family, small, include_small_groups=True)  # kept on request: still flagged, and said
        with warnings.catch_warnings():
            warnings.simplefilter("error", SmallGroupWarning)  # not small at all: no warning
            low = _values(family, small, min_group_size=5)
    assert every == low  # kept on request = not small
    if family.key != "mals":  # (MALS: a group this small has bias_train < 1/|A| here, so its pairs add 0 anyway)
        assert default != every  # the option reaches the function, and the small group mattered


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_small_groups_warn_once_with_one_message_at_the_callers_line(family):
    """40 rows, 3 groups of about 13: every group small, all kept (nothing left to compare): still one warning."""
    from biasamp.exceptions import SmallGroupWarning

    roles = _example(family, seed=19, n=40)
    args, kwargs = family.call(roles, {})
    shape = (r"^[\w>_ -]+: 3 group\(s\) with fewer than 30 test members, kept in the headline \(fewer than two "
             r"groups have at least min_group_size members, so none is left out\): 0 \(n=\d+\), 1 \(n=\d+\), "
             r"2 \(n=\d+\)$")
    for call in (lambda: family.function(*args, **kwargs),
                 lambda: biasamp.bootstrap(family.function, *args, n_boot=50, random_state=0, **kwargs)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        said = [w for w in caught if issubclass(w.category, SmallGroupWarning)]
        assert len(said) == 1, [str(w.message) for w in said]  # once per call, not once per replicate
        assert said[0].filename == __file__  # the caller's line, whatever the path through the package
        assert re.match(shape, str(said[0].message)), str(said[0].message)


def test_the_0_1_spellings_work_through_bootstrap_with_a_warning():
    """CHANGELOG promise: the 0.1 spellings work, with a FutureWarning, until 0.3.0 — also through bootstrap."""
    roles = _example(REGISTRY["mals"], seed=17)
    a, t, ap, tp = roles["attr"], roles["task"], roles["attr_pred"], roles["task_pred"]
    new = biasamp.bootstrap(biasamp.bias_amp_mals, a, t, attr_pred=ap, task_pred=tp, n_boot=50, random_state=0,
                            attr_train=a, task_train=t)
    # 0.2's order of bias_amp_mals (training set, then predictions) warns until 0.4, through bootstrap too
    with pytest.warns(FutureWarning, match="this positional order is deprecated"):
        old = biasamp.bootstrap(biasamp.bias_amp_mals, a, t, ap, tp, n_boot=50, random_state=0)
    assert old.estimate == new.estimate and old.ci == new.ci
    multi = _example(REGISTRY["multi"], seed=18)
    new = biasamp.bootstrap(biasamp.multi_bias_amp, multi["attr"], multi["task"], task_pred=multi["task_pred"],
                            n_boot=50, random_state=0)
    with pytest.warns(FutureWarning, match="group -> attr"):
        old = biasamp.bootstrap(biasamp.multi_bias_amp, group=multi["attr"], attrs=multi["task"],
                                attrs_pred=multi["task_pred"], n_boot=50, random_state=0)
    assert old.estimate == new.estimate
    with pytest.warns(FutureWarning, match="pass task_pred by keyword"):
        la = biasamp.leakage_amplification(a, t[:, 0], tp[:, 0], attacker="tabular", n_iter=2, random_state=0,
                                           progress=False)
    assert la.value == biasamp.leakage_amplification(a, t[:, 0], task_pred=tp[:, 0], attacker="tabular", n_iter=2,
                                                     random_state=0, progress=False).value


# --------------------------------------------------------------------------- #
# the generic accumulator, built from each family's declaration of streamed counting
# --------------------------------------------------------------------------- #
STREAMED = [f for f in FAMILIES if f.stream is not None]
STREAMED_IDS = [f.key for f in STREAMED]


def _generic(family, roles: dict, n_batches: int, classes: dict | None = None, **options):
    """``Accumulator(family.key, ...)`` with its pre-pass (if declared) run over the batches; and the batches."""
    from biasamp.accumulators import Accumulator

    acc = Accumulator(family.key, classes or _classes(family, roles), **options)
    bounds = np.linspace(0, len(roles["attr"]), n_batches + 1).astype(int)
    batches = [_take(roles, np.arange(a, b)) for a, b in zip(bounds, bounds[1:])]
    for b in batches:
        acc.prepass(b)
    acc.end_prepass()
    return acc, batches


def _table_values(acc) -> dict:
    return {k: np.asarray(v).copy() for k, v in acc._tables().items()}


def test_every_count_based_family_declares_its_streamed_counting():
    from biasamp._family import ROLES
    from biasamp.accumulators import Accumulator, accumulator_for

    assert STREAMED == FAMILIES  # a new family without the hooks fails here
    for fam in STREAMED:
        with _in_registry(fam):
            cls = accumulator_for(fam.key)
        assert issubclass(cls, Accumulator)
        assert set(fam.stream.classes) == {"attr", "task"}
        assert all(set(c.roles) <= set(ROLES) for c in fam.stream.classes.values())  # the roles' vocabulary
    with pytest.raises(KeyError, match="no accumulator declares"):
        accumulator_for("no such family")


@pytest.mark.parametrize("family", STREAMED, ids=STREAMED_IDS)
def test_generic_accumulator_equals_the_function_and_the_named_class(family):
    roles = _example(family, seed=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        generic, batches = _generic(family, roles, 4)
        named, _ = _accumulated(family, roles, 4)
        for b in batches:
            generic.update_roles(b)
            named.update_roles(b)
        point = _batchwise(family, roles, batches)
        assert _stats(family, generic.compute()) == point  # bit-identical: the counts are integers
    assert type(generic).__name__ == "Accumulator" and generic.key == family.key
    mine, theirs = _table_values(generic), _table_values(named)
    assert mine.keys() == theirs.keys() == set(type(generic.state).table_names())
    for name in mine:
        np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)


@pytest.mark.parametrize("family", STREAMED, ids=STREAMED_IDS)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), cuts=st.lists(st.integers(1, 299), min_size=2, max_size=2, unique=True))
def test_generic_accumulator_merge_is_associative_with_an_identity(family, seed, cuts):
    """Property: any three batches merged in any order give the one-shot tables; an empty accumulator adds nothing."""
    roles = _example(family, seed=seed, n=300)
    classes = _classes(family, _example(family, seed=seed, n=300))
    lo, hi = sorted(cuts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        whole, _ = _generic(family, roles, 1, classes)
        empty = whole.copy()
        whole.update_roles(roles)
        parts, in_a_row = [], empty.copy()
        for rows in (np.arange(0, lo), np.arange(lo, hi), np.arange(hi, 300)):
            part = empty.copy()
            parts.append(part.update_roles(_take(roles, rows)))
            in_a_row.update_roles(_take(roles, rows))
    a, b, c = parts
    for merged in ((a + b) + c, a + (b + c), c + (b + a), sum([b, c, a]), empty.copy().merge(a + b + c)):
        for name, table in _table_values(whole).items():
            np.testing.assert_array_equal(_table_values(merged)[name], table, err_msg=name)
        assert _stats(family, merged.compute()) == _stats(family, in_a_row.compute())
    for name, table in _table_values(a.copy().merge(empty)).items():  # the empty accumulator is the identity
        np.testing.assert_array_equal(table, _table_values(a)[name], err_msg=name)


@pytest.mark.parametrize("family", STREAMED, ids=STREAMED_IDS)
def test_generic_accumulator_pickles_copies_resets_and_syncs(family):
    import pickle

    roles = _example(family, seed=21)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        acc, batches = _generic(family, roles, 3)
        empty = acc.copy()
        acc.update_roles(batches[0])
        clone = pickle.loads(pickle.dumps(acc))  # mid-stream
        for b in batches[1:]:
            clone.update_roles(b)
        assert _stats(family, clone.compute()) == _batchwise(family, roles, batches)
        synced = clone.sync()  # no process group: a copy
        assert synced is not clone and _stats(family, synced.compute()) == _stats(family, clone.compute())
    clone.reset()
    for name, table in _table_values(clone).items():
        np.testing.assert_array_equal(table, _table_values(empty)[name], err_msg=name)
    with pytest.raises(ValueError, match="no (test )?batch"):
        clone.compute()


@pytest.mark.parametrize("family", STREAMED, ids=STREAMED_IDS)
def test_generic_accumulator_fixes_its_class_lists_up_front(family):
    from biasamp.accumulators import Accumulator

    roles = _example(family, seed=22)
    classes = _classes(family, roles)
    name = family.stream.classes["attr"].name
    with pytest.raises(TypeError, match=f"{name} is required"):
        Accumulator(family.key, {"task": classes["task"]})
    acc, _ = _generic(family, roles, 1, {**classes, "attr": classes["attr"][:2]})
    before = _table_values(acc)
    with pytest.raises(ValueError, match="attr|sensitive_features"):  # the label outside the list, by argument
        acc.update_roles(roles)
    for key, table in _table_values(acc).items():
        np.testing.assert_array_equal(table, before[key], err_msg=key)  # the failed batch left nothing behind


@pytest.mark.parametrize("family", [f for f in STREAMED if "attr_pred" in f.roles
                                    and any("attr_pred" not in s.needs for s in f.statistics)],
                         ids=[f.key for f in STREAMED if "attr_pred" in f.roles
                              and any("attr_pred" not in s.needs for s in f.statistics)])
def test_every_batch_carries_the_same_arguments(family):
    roles = _example(family, seed=23)
    acc, batches = _generic(family, roles, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        acc.update_roles(batches[0])
        before = _table_values(acc)
        with pytest.raises(ValueError, match="same arguments"):
            acc.update_roles({k: v for k, v in batches[1].items() if k != "attr_pred"})
        for name, table in _table_values(acc).items():
            np.testing.assert_array_equal(table, before[name], err_msg=name)
        other, _ = _generic(family, roles, 2)
        other.update_roles({k: v for k, v in batches[1].items() if k != "attr_pred"})
        with pytest.raises(ValueError, match="different"):
            acc.merge(other)


@pytest.mark.parametrize("family", [f for f in STREAMED if f.stream.prepass is not None],
                         ids=[f.key for f in STREAMED if f.stream.prepass is not None])
def test_a_declared_prepass_comes_before_counting(family):
    from biasamp.accumulators import Accumulator

    roles = _example(family, seed=24)
    acc = Accumulator(family.key, _classes(family, roles))
    assert acc.phase == "collect" and acc._tables() == {}
    with pytest.raises(ValueError, match="not fixed yet|pre-pass"):
        acc.update_roles(roles)
    halves = [acc.copy().prepass(_take(roles, r)) for r in np.array_split(np.arange(len(roles["attr"])), 2)]
    merged = (halves[0] + halves[1]).end_prepass()  # pre-pass states merge, as the counts do
    whole = acc.copy().prepass(roles).end_prepass()
    assert merged.phase == whole.phase == "count"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        assert _stats(family, merged.update_roles(roles).compute()) == _stats(family, whole.update_roles(roles).compute())


@pytest.mark.parametrize("family", STREAMED, ids=STREAMED_IDS)
def test_generic_streamed_bootstrap_holds_its_estimate(family):
    roles = _example(family, seed=25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        one, _ = _generic(family, roles, 1, n_boot=60, random_state=0)
        one.update_roles(roles)
        acc, batches = _generic(family, roles, 3, n_boot=60, random_state=0)
        for b in batches:
            acc.update_roles(b)
        boot, boot_one = acc.bootstrap(), one.bootstrap()
        point = _batchwise(family, roles, batches)
    if acc.boot is None:  # dealt from the distinct rows at the end (a family that keeps them): no batching shows
        assert acc._declared.late_replicates(acc.settings) and one.boot is None
        assert boot.ci == boot_one.ci and boot.estimate == boot_one.estimate
    else:  # the replicate tables add like the counts
        np.testing.assert_allclose(acc.boot, one.boot, rtol=1e-12)
    for result, expected in ((boot, point), (boot_one, _values(family, roles))):
        for name, est in result.estimate.items():
            assert est == pytest.approx(expected[name], abs=1e-12), name
            lo, hi = result.ci[name]
            spec = family.statistic(name)
            assert spec.range[0] <= lo <= est <= hi <= spec.range[1], (name, lo, est, hi)
    if family.cross_fit:
        assert any("cross-fitted" in note for note in boot.notes)


@pytest.mark.parametrize("family", STREAMED, ids=STREAMED_IDS)
def test_a_small_group_left_out_of_the_headline_is_left_out_of_every_streamed_replicate(family):
    """A group of 8 rows whose predictions are all wrong is small, out of the headline: the streamed bootstrap's
    replicates leave it out as the in-memory ones do, so both intervals have about the same width (the group's
    extreme rates had widened the streamed fairness intervals about threefold)."""
    import biasamp

    roles = _example(family, seed=16)
    keep = np.concatenate([np.flatnonzero(roles["attr"] != 2), np.flatnonzero(roles["attr"] == 2)[:8]])
    small = _take(roles, keep)
    if "attr_pred" in small:
        small["attr_pred"] = small["attr"]
    wrong = small["attr"] == 2
    task = small["task"]
    other = 1 - task if np.ndim(task) == 2 else (task + 1) % (int(np.max(task)) + 1)  # a wrong class
    small["task_pred"] = np.where(wrong[:, None] if np.ndim(task) == 2 else wrong, other, small["task_pred"])
    args, kwargs = family.call(small, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = biasamp.bootstrap(family.function, *args, **kwargs, n_boot=300, random_state=0)
        acc, batches = _generic(family, small, 3, n_boot=300, random_state=0)
        for b in batches:
            acc.update_roles(b)
        streamed = acc.bootstrap()
    for name, (lo, hi) in memory.ci.items():
        slo, shi = streamed.ci[name]
        assert 0.6 * (hi - lo) - 1e-9 <= shi - slo <= 1.6 * (hi - lo) + 1e-9, (name, (lo, hi), (slo, shi))


@pytest.mark.parametrize("family", STREAMED, ids=STREAMED_IDS)
def test_generic_torchmetrics_class_equals_the_function(family):
    pytest.importorskip("torchmetrics")
    from biasamp.torchmetrics import AccumulatorMetric, _AccumulatorMetric, metric_for

    roles = _example(family, seed=26)
    acc, batches = _generic(family, roles, 2)
    assert issubclass(metric_for(family.key), _AccumulatorMetric)  # the named class (or the generic one)
    metric = AccumulatorMetric(acc)
    point = _batchwise(family, roles, batches)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPairWarning)
        for b in batches:
            metric.update(**b)
        values = metric.compute()
    headline = [s.name for s in family.statistics if s.headline]
    values = values if isinstance(values, dict) else {headline[0]: values}
    assert set(values) == set(headline)
    for name, value in values.items():
        assert float(value) == pytest.approx(point[name], abs=1e-12), name


# --------------------------------------------------------------------------- #
# the audit, in memory and streamed: each family's section holds its statistics
# --------------------------------------------------------------------------- #
AUDITED = [f for f in FAMILIES if f.section is not None]
AUDIT_FAST = {"n_boot": 30, "n_boot_multi": 5, "progress": False}


def _section_values(report, family) -> dict:
    """The family's statistics in its section's summary rows, by statistic name."""
    rows = report.table[report.table["section"] == family.section]
    out = {}
    for s in family.statistics:
        hit = rows[(rows["metric"] == (s.label or s.name)) & (rows["direction"] == s.direction)]
        if len(hit):
            out[s.name] = float(hit["value"].iloc[0])
    return out


def _audit_options(family) -> dict:
    """The options the audit gives the family's function (its configuration's, e.g. the audit's ``combinations``)."""
    from biasamp.report import AuditConfig

    return AuditConfig(**AUDIT_FAST).family_options(family.key)


def _audit_task(family, roles: dict):
    """The task as the audit reads it: a multi-label task as a DataFrame of named 0/1 columns."""
    task = roles["task"]
    if np.ndim(task) == 2:
        import pandas as pd

        return pd.DataFrame(task, columns=[f"t{j}" for j in range(task.shape[1])]), \
            pd.DataFrame(roles["task_pred"], columns=[f"t{j}" for j in range(task.shape[1])])
    return task, roles["task_pred"]


@pytest.mark.parametrize("family", AUDITED, ids=[f.key for f in AUDITED])
def test_the_audit_section_holds_the_functions_statistics(family):
    from biasamp.report import audit

    roles = _example(family, seed=27)
    task, task_pred = _audit_task(family, roles)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = audit(roles["attr"], task, attr_pred=roles.get("attr_pred"), task_pred=task_pred,
                    sections=[family.section], random_state=0, **AUDIT_FAST)
    assert rep.section(family.section).status == "ok"
    got, point = _section_values(rep, family), _values(family, roles, **_audit_options(family))
    assert got and set(got) <= set(point)
    assert got == pytest.approx({k: point[k] for k in got}, abs=1e-12)


@pytest.mark.parametrize("family", [f for f in AUDITED if f.stream is not None],
                         ids=[f.key for f in AUDITED if f.stream is not None])
def test_the_streamed_audit_section_holds_the_functions_statistics(family, tmp_path):
    """One batch (the batch is the unit of a cross-fitted split): the streamed audit's values are the function's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    roles = _example(family, seed=28)
    task, task_pred = roles["task"], roles["task_pred"]
    names = [f"t{j}" for j in range(task.shape[1])] if np.ndim(task) == 2 else ["label"]
    columns = {"attr": roles["attr"]}
    columns.update({f"task_{n}": (task[:, j] if np.ndim(task) == 2 else task) for j, n in enumerate(names)})
    columns.update({f"task_{n}_pred": (task_pred[:, j] if np.ndim(task) == 2 else task_pred)
                    for j, n in enumerate(names)})
    if "attr_pred" in roles:
        columns["attr_pred"] = roles["attr_pred"]
    (tmp_path / "test").mkdir()
    pq.write_table(pa.table(columns), tmp_path / "test" / "part-0.parquet")
    cols = StreamColumns("attr", tuple(f"task_{n}" for n in names), tuple(names),
                         "attr_pred" if "attr_pred" in roles else None, tuple(f"task_{n}_pred" for n in names))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = stream_audit(ParquetDataset.open(tmp_path / "test"), cols, batch_size=len(roles["attr"]),
                           sections=[family.section], random_state=0, **AUDIT_FAST)
    assert rep.section(family.section).status == "ok"
    got, point = _section_values(rep, family), _values(family, roles, **_audit_options(family))
    assert got and set(got) <= set(point)
    assert got == pytest.approx({k: point[k] for k in got}, abs=1e-12)
