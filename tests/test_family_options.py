"""Every registered family declares its options (``Family.options``), and the declaration agrees with the function.

Parametrised from the registry, like tests/test_common.py: a new family is
checked by being declared. The function builds its options object at entry
(``Options.from_call(locals())``), so a constraint lives in one place: the
tests below check that the function refuses a bad value with the very error
of the declaration, and that it obeys a declaration changed under it.
"""

from __future__ import annotations

import dataclasses
import inspect
import types

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from biasamp._core.validation import Checked, OneOf, Validated
from biasamp._families import REGISTRY

FAMILIES = list(REGISTRY)
#: keyword parameters of a function that are not options: label roles and weights
NOT_OPTIONS = {"attr_pred", "task_pred", "attr_train", "task_train", "sample_weight", "train_sample_weight",
               "sensitive_features"}
#: options a function takes that its family deliberately does not declare, and why
UNDECLARED = {"multi": {"soft"}}  # only "threshold" is defined (the function refuses "expected")
#: bad values the function accepts today although its declaration refuses them (to fix in the function; the test
#: fails when one is fixed, so that the entry is removed)
KNOWN_GAPS: set[tuple[str, str]] = set()

#: a value each option refuses, with the error type
BAD = {
    "threshold": (1.5, ValueError), "soft": ("mean", ValueError), "min_group_size": (-1, ValueError),
    "include_small_groups": ("yes", TypeError), "missing": ("never", ValueError),
    "drop_empty_train_rows": ("no", TypeError), "combinations": ("some", ValueError), "min_size": (0, ValueError),
    "max_size": (0, ValueError), "min_support": (0, ValueError), "max_combinations": (0, ValueError),
    "support": ("both", ValueError), "attr_pred_rule": ("first", ValueError), "average": ("weighted", ValueError),
    "tolerance": (2.0, ValueError), "concentration": (0.0, ValueError), "metrics": (["XY"], ValueError),
    "group_metrics": ("DP", TypeError), "cross_fit": ("yes", TypeError), "cross_fit_random_state": (-1, ValueError),
    "binary_task": ("one-hot", ValueError),
}


def _example(family):
    rng = np.random.default_rng(0)
    n = 80
    attr = rng.integers(0, 2, n)
    if family.task_labels == "multilabel":
        task = rng.integers(0, 2, (n, 3))
    else:
        task = rng.integers(0, 3 if family.task_labels == "single" else 2, n)
    roles = {"attr": attr, "task": task}
    if "attr_pred" in family.roles:
        roles["attr_pred"] = np.where(rng.random(n) < 0.2, 1 - attr, attr)
    if "task_pred" in family.roles:
        roles["task_pred"] = np.where(rng.random(task.shape) < 0.2, (task + 1) % (task.max() + 1), task)
    return roles


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_options_are_the_functions_keyword_options_with_its_defaults(family):
    opts = family.options
    assert opts is not None and issubclass(opts, Validated) and dataclasses.is_dataclass(opts)
    assert opts.__dataclass_params__.frozen
    params = inspect.signature(family.function).parameters
    keywords = {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY} - NOT_OPTIONS
    assert set(opts.option_names()) == keywords - UNDECLARED.get(family.key, set())
    default = opts()
    for name in opts.option_names():
        assert getattr(default, name) == params[name].default, name


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_the_functions_docstring_states_every_options_declared_default(family):
    """The public functions keep their own, family-specific option descriptions, but not their own defaults: the
    "Parameters" entry of every option (``name : type, default D``) states the declared default."""
    import re

    doc = inspect.getdoc(family.function)
    for name in family.options.option_names():
        entry = re.search(rf"^(?:[a-z_]+, )*{name}(?:, [a-z_]+)* : (.*)$", doc, re.MULTILINE)
        assert entry is not None, name
        default = family.options.field(name).default
        words = {f"default {default!r}", f"default {default!r}".replace("'", '"')}
        if default is None:
            words |= {"optional", "default None"}
        if isinstance(default, tuple):
            words.add("default all")  # "default all seven" (the metrics)
        if name == "max_size":  # "min_size, max_size : int, default 1 and None (no limit)"
            words.add("and None")
        assert any(w in entry.group(1) for w in words), (name, entry.group(1))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_what_the_declaration_refuses_the_function_refuses(family):
    roles = _example(family)
    args, kwargs = family.call(roles, {})
    family.function(*args, **kwargs)  # the example itself is fine
    tried = 0
    for name in family.options.option_names():
        if name not in BAD:
            continue
        value, kind = BAD[name]
        with pytest.raises(kind, match=name):
            family.options(**{name: value})
        args, kwargs = family.call(roles, {name: value})
        if (family.key, name) in KNOWN_GAPS:
            family.function(*args, **kwargs)
            continue
        with pytest.raises((TypeError, ValueError), match=name):
            family.function(*args, **kwargs)
        tried += 1
    assert tried >= 4


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_the_shared_option_groups_are_declared_once(family):
    from biasamp._core.policy_options import GroupOptions, PolicyOptions

    names = family.options.option_names()
    assert set(GroupOptions.option_names()) <= set(names) and "threshold" in names
    for group in (GroupOptions, PolicyOptions):
        for name in group.option_names():
            if name in names:  # the same declaration (default and constraints), not a copy
                assert family.options.field(name).metadata["constraints"] == group.field(name).metadata["constraints"]
                assert family.options.field(name).default == group.field(name).default


def _declared_error(family, name, value):
    with pytest.raises((TypeError, ValueError)) as direct:
        family.options(**{name: value})
    return direct


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_the_function_refuses_a_bad_option_with_the_declarations_own_error(family):
    roles = _example(family)
    constrained = [n for n in family.options.option_names() if family.options.field(n).metadata["constraints"]]
    assert set(constrained) <= set(BAD), "give BAD a value that each declared constraint refuses"
    for name in constrained:
        value, kind = BAD[name]
        direct = _declared_error(family, name, value)
        assert direct.type is kind and name in str(direct.value)
        args, kwargs = family.call(roles, {name: value})
        with pytest.raises(kind) as called:
            family.function(*args, **kwargs)
        assert str(called.value) == str(direct.value), name  # one constraint, one message


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_the_function_obeys_its_declaration_for_every_option(family, monkeypatch):
    """Make each declared option refuse every value: the function (called with its defaults) now refuses it.

    Nothing but the options object checks through the dataclass field, so
    this fails for an option the function does not pass through that object.
    """
    roles = _example(family)
    args, kwargs = family.call(roles, {})
    for name in family.options.option_names():
        field = family.options.field(name)

        def refuse(value, name=name):
            raise ValueError(f"{name}: refused by the patched declaration")

        with monkeypatch.context() as m:
            m.setattr(field, "metadata", types.MappingProxyType({**field.metadata, "constraints": (Checked(refuse),)}))
            with pytest.raises(ValueError, match=f"^{name}: refused by the patched declaration$"):
                family.function(*args, **kwargs)
    family.function(*args, **kwargs)  # the declaration restored: the call is fine again


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.cross_fit], ids=lambda f: f.key)
def test_checking_a_generator_seed_does_not_draw_from_it(family):
    """``cross_fit_random_state=Generator`` draws the split's seed once: the options check must not draw first."""
    rng = np.random.default_rng(11)
    before = rng.bit_generator.state
    family.options(cross_fit_random_state=rng)
    assert rng.bit_generator.state == before
    seed = int(np.random.default_rng(11).integers(0, 2**63))  # the seed split_seed draws from that generator
    roles = _example(family)
    args, kwargs = family.call(roles, {"cross_fit": True, "cross_fit_random_state": np.random.default_rng(11)})
    by_generator = family.function(*args, **kwargs)
    args, kwargs = family.call(roles, {"cross_fit": True, "cross_fit_random_state": seed})
    by_seed = family.function(*args, **kwargs)
    for stat in family.statistics_of(family.function):
        if all(r in roles for r in stat.needs):
            assert stat.read(by_generator) == stat.read(by_seed), stat.name


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_a_numpy_string_is_a_string_for_the_choices(family):
    roles = _example(family)
    args, kwargs = family.call(roles, {"missing": np.str_("drop")})
    as_numpy = family.function(*args, **kwargs)
    args, kwargs = family.call(roles, {"missing": "drop"})
    as_str = family.function(*args, **kwargs)
    for stat in family.statistics_of(family.function):
        if all(r in roles for r in stat.needs):
            assert stat.read(as_numpy) == stat.read(as_str), stat.name


@given(st.text(max_size=8), st.sampled_from([("raise", "drop", "group"), ("auto", "binary", "macro", None)]))
def test_one_of_reads_a_numpy_string_as_its_str(text, choices):
    c = OneOf(*choices)
    assert c.is_satisfied_by(np.str_(text)) == c.is_satisfied_by(text) == (text in choices)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_from_call_is_the_options_of_the_call(family):
    opts = family.options
    call = {"attr": object(), "sample_weight": None, **{n: opts.field(n).default for n in opts.option_names()}}
    assert opts.from_call(call) == opts()  # label roles and weights are not options: ignored
    first = opts.option_names()[0]
    with pytest.raises(TypeError, match=f"from_call: the call has no argument '{first}'"):
        opts.from_call({k: v for k, v in call.items() if k != first})


@pytest.mark.parametrize(
    "options, match",
    [
        ({"min_size": 3, "max_size": 2}, r"^max_size \(2\) must be >= min_size \(3\)$"),
        ({"support": "exact", "combinations": "all"}, r"^support='exact' counts the training instances"),
    ],
)
def test_the_multi_attribute_options_check_their_joint_rules(options, match):
    family = REGISTRY["multi"]
    with pytest.raises(ValueError, match=match):
        family.options(**options)
    args, kwargs = family.call(_example(family), options)
    with pytest.raises(ValueError, match=match):
        family.function(*args, **kwargs)
    assert family.options(min_size=np.int64(2), max_size=np.int64(2)).sizes() == (2, 2, 1, 200_000)
    assert all(type(v) is int for v in family.options(min_size=np.int64(2), max_size=np.int64(3)).sizes())


#: the options of cross-fitting, which threshold_curve takes for a family that cross-fits
CROSS_FIT = ("cross_fit", "cross_fit_random_state")


def _error(call, *args, **kwargs) -> tuple[type, str]:
    """The type and message of the error ``call(*args, **kwargs)`` raises (it must raise one)."""
    with pytest.raises((TypeError, ValueError)) as caught:
        call(*args, **kwargs)
    return caught.type, str(caught.value)


def _bad_calls(family) -> list[tuple[str, dict]]:
    """``(option, options of a call)``: a bad value of every declared option of BAD, and a bad seed left unused."""
    cases = [(name, {name: BAD[name][0]}) for name in family.options.option_names() if name in BAD]
    if family.cross_fit:  # refused although the call does not cross-fit (the function checks every option it takes)
        cases.append(("cross_fit_random_state", {"cross_fit": False, "cross_fit_random_state": "seed"}))
    return cases


def _accumulator_takes(family, name: str, classes: dict) -> bool:
    """Whether the family's accumulator takes option ``name`` (with its default value)."""
    from biasamp.accumulators import Accumulator

    try:
        Accumulator(family.key, classes, **{name: family.options.field(name).default})
    except TypeError as e:
        if "unexpected" not in str(e):  # the only error a default value may raise: not an option of the accumulator
            raise
        return False
    return True


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.key)
def test_every_path_refuses_a_bad_option_with_the_functions_error(family):
    """``bootstrap`` (of the function and its aliases), the accumulator, ``threshold_curve`` build the options alike.

    Each path builds the family's options object from the call's keywords with
    the same declaration, so each refuses exactly what the function refuses,
    with the same exception type and message.
    """
    import warnings

    from biasamp import bootstrap, threshold_curve
    from biasamp.accumulators import Accumulator

    from .test_common import _classes

    roles = _example(family)
    classes = _classes(family, roles)
    checked = {"bootstrap": 0, "accumulator": 0, "curve": 0}
    for name, options in _bad_calls(family):
        args, kwargs = family.call(roles, options)
        expected = _error(family.function, *args, **kwargs)
        assert expected[0] is BAD[name][1] or name == "cross_fit_random_state", (name, expected)
        assert name in expected[1], (name, expected)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for function in family.functions:
                if function is not family.function and name == "metrics":
                    continue  # an alias fixes its metric
                assert _error(function, *args, **kwargs) == expected, (function.__name__, name)
                assert _error(bootstrap, function, *args, n_boot=5, random_state=0, **kwargs) == expected, \
                    (function.__name__, name, options)
                checked["bootstrap"] += 1
        if family.stream is not None and name not in family.stream.widens and _accumulator_takes(family, name,
                                                                                                 classes):
            assert _error(Accumulator, family.key, classes, **options) == expected, (name, options)
            checked["accumulator"] += 1
        swept = () if family.sweep is None else (*family.sweep.options, *(CROSS_FIT if family.cross_fit else ()))
        if set(options) <= set(swept):
            scores = np.random.default_rng(1).random(np.shape(roles["task"]))
            assert _error(threshold_curve, family.function, roles["attr"], roles["task"], task_scores=scores,
                          thresholds=[0.5], **options) == expected, (name, options)
            checked["curve"] += 1
    assert checked["bootstrap"] >= 4 and (family.stream is None or checked["accumulator"] >= 4), checked
    assert family.sweep is None or checked["curve"] >= 1, checked


@pytest.mark.parametrize("cross_fit", [None, True, False])
def test_mals_decides_where_it_counts_b_train_once(cross_fit):
    """Without a training set, ``train_sample_weight`` is refused by the function, its bootstrap and Dask alike."""
    da = pytest.importorskip("dask.array")
    import biasamp.dask
    from biasamp import bias_amp_mals, bootstrap

    roles = _example(REGISTRY["mals"])
    a, t = roles["attr"], roles["task"]
    w = np.ones(len(a))
    kwargs = {"attr_pred": a, "task_pred": t, "train_sample_weight": w, "cross_fit": cross_fit}
    expected = _error(bias_amp_mals, a, t, **kwargs)
    assert expected[0] is ValueError and "train_sample_weight weights the training rows" in expected[1]
    assert _error(bootstrap, bias_amp_mals, a, t, n_boot=5, **kwargs) == expected
    lazy = {k: (da.from_array(v, chunks=40) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    assert _error(biasamp.dask.bias_amp_mals, da.from_array(a, chunks=40), da.from_array(t, chunks=40),
                  **lazy) == expected
