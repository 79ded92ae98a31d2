"""A count-based family declared in this one module, and served by every layer (docs/architecture.md, "Adding a
family").

The *positive-rate gap* is small on purpose: per group g of the protected attribute, the rate of positive
predictions ``PR_g = P(task_pred = 1 | attr = g)`` and of positive labels ``R_g = P(task = 1 | attr = g)``;
the gap of the predictions ``max_g PR_g - min_g PR_g`` and its amplification, the gap of the predictions less
the gap of the labels. Everything a family declares is here: its options dataclass, its pure function of the
counts and its public function, its resampling plan, its streaming hooks, its declaration (statistics, scorer,
named streaming forms generated from it); its audit section is derived from the declaration
(``biasamp.report._sections.declared_builder``). Its counts are the per-group confusion counts below the
families (``biasamp._engine.groups`` / ``group_state``), as differential fairness's are.

``REGISTRY.registered(TOY)`` registers it for a ``with`` block; the common tests (``tests/test_common.py``) are
parametrised over :data:`FAMILIES_UNDER_TEST`, which it joins, and register it for each of its tests, so every
common test runs on it too: function, bootstrap, accumulator, Dask, torchmetrics, scorer, checkpoint curve,
audit and streamed audit. The tests below check what the common tests cannot: its value against a hand
computation, that the registry is as it was after, and that its named forms come from its declaration.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

from biasamp._core.policy import left_out_mask, small_groups, warn_small_groups
from biasamp._core.policy_options import DEFAULT_MIN_GROUP_SIZE, DEFAULT_THRESHOLD, GroupOptions, PolicyOptions
from biasamp._engine import group_state
from biasamp._engine.groups import cells as group_cells
from biasamp._engine.groups import counts_of, fairness_call, prepare, split
from biasamp._engine.intervals import Parts, Plan, Statistic
from biasamp._families import REGISTRY
from biasamp._family import ClassList, Family, Named, Scorer, StatisticSpec, Streaming

KEY = "rate_gap"
WHAT = "positive-rate gap"  # the family's name in its warnings


# --------------------------------------------------------------------------- #
# options, the function of the counts, the public function            (_options.py, _metrics.py)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class GapOptions(PolicyOptions, GroupOptions):
    """Options of :func:`rate_gap`: the probability policy and the small-group rule (declared once, shared)."""


@dataclass(frozen=True)
class RateGapResult:
    """The positive-rate gap amplification and its parts."""

    value: float
    gap_true: float
    gap_pred: float
    rates: pd.DataFrame
    small_groups: tuple


def _gaps(n: np.ndarray, positives: np.ndarray, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gaps (max - min over the last axis, the groups) of the label and prediction rates."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rt, rp = positives / n, predicted / n
    return rt.max(axis=-1) - rt.min(axis=-1), rp.max(axis=-1) - rp.min(axis=-1)


def gap_from_counts(counts: Any, *, min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                    include_small_groups: bool = False) -> RateGapResult:
    """The gaps of per-group confusion counts (the positive class is 1)."""
    k = list(counts.classes).index(1)
    n = np.asarray(counts.n, dtype=np.float64)
    small, excluded = small_groups(n, min_group_size, include_small_groups)
    warn_small_groups(small, excluded, counts.groups, n, min_group_size, include_small_groups, WHAT)
    kept = (n > 0) & ~excluded
    if kept.sum() < 2:
        raise ValueError(f"{WHAT}: fewer than two groups to compare")
    pos, pred = np.asarray(counts.positives, float)[:, k], np.asarray(counts.predicted, float)[:, k]
    gap_true, gap_pred = (float(g) for g in _gaps(n[kept], pos[kept], pred[kept]))
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = pd.DataFrame({"group": list(counts.groups), "n": n, "label_rate": pos / n, "pred_rate": pred / n,
                              "small": small})
    return RateGapResult(gap_pred - gap_true, gap_true, gap_pred, rates,
                         tuple(g for g, e in zip(counts.groups, excluded) if e))


def rate_gap(y_true: Any, y_pred: Any, *, sensitive_features: Any, sample_weight: Any = None,
             threshold: float = DEFAULT_THRESHOLD, soft: str = "threshold",
             min_group_size: int = DEFAULT_MIN_GROUP_SIZE, include_small_groups: bool = False) -> RateGapResult:
    """The positive-rate gap amplification of binary predictions (the positive class is 1)."""
    opts, labels = GapOptions.call_of(locals())
    return compute_gap(count_gap(labels, opts), opts)


def count_gap(labels: dict, opts: GapOptions) -> tuple:
    """The family's ``count`` hook: the labels prepared and counted per group, once for the function and its plan."""
    prep = prepare(labels["y_true"], labels["y_pred"], labels["sensitive_features"], average="binary",
                   threshold=opts.threshold, soft=opts.soft, sample_weight=labels["sample_weight"])
    return prep, counts_of(prep)


def compute_gap(counted: tuple, opts: GapOptions) -> RateGapResult:
    """The family's ``compute`` hook: the result of the counts."""
    return gap_from_counts(counted[1], min_group_size=opts.min_group_size,
                           include_small_groups=opts.include_small_groups)


# --------------------------------------------------------------------------- #
# the resampling plan of a counted call                                                     (_plan.py)
# --------------------------------------------------------------------------- #
def _gap_units(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The range of max - min of rates inside the box [lo, hi]."""
    return np.array([max(0.0, lo.max() - hi.min())]), np.array([hi.max() - lo.min()])


def gap_evaluator(point: RateGapResult, k: int, n_classes: int, kept: np.ndarray) -> Plan:
    """The two statistics on per-group confusion tables ``[n | P_k | (TP+FP)_k | TP_k]`` of the kept groups.

    Both are built from maxima and minima (non-regular where rates tie): their intervals come from a
    simultaneous band on the rates (the signed parts)."""
    n_kept = int(kept.sum())

    def rates(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, pos, pred, _ = split(tables, n_classes)
        with np.errstate(invalid="ignore", divide="ignore"):
            return pos[..., kept, k] / n[..., kept], pred[..., kept, k] / n[..., kept]

    def values(tables: np.ndarray) -> dict:
        n, pos, pred, _ = split(tables, n_classes)
        gt, gp = _gaps(n[..., kept], pos[..., kept, k], pred[..., kept, k])
        return {"PR gap amplification": gp - gt, "PR gap": gp}

    def parts(tables: np.ndarray) -> dict:
        rt, rp = rates(tables)
        return {"PR gap amplification": np.concatenate([rp, rt], axis=-1), "PR gap": rp}

    def amp_units(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        plo, phi = _gap_units(lo[:n_kept], hi[:n_kept])
        tlo, thi = _gap_units(lo[n_kept:], hi[n_kept:])
        return plo - thi, phi - tlo

    unit = pd.DataFrame({"unit": ["gap"]})

    def statistics(full: np.ndarray) -> list:
        est = parts(full)
        return [
            Statistic("PR gap amplification", point.value, None, regular=False, range=(-1.0, 1.0),
                      parts=Parts(est["PR gap amplification"][0], None, unit, np.array([point.value]), amp_units,
                                  lambda u: float(u[0]))),
            Statistic("PR gap", point.gap_pred, None, regular=False, range=(0.0, 1.0),
                      parts=Parts(est["PR gap"][0], None, unit, np.array([point.gap_pred]), _gap_units,
                                  lambda u: float(u[0]))),
        ]

    return Plan(None, values, parts, statistics, None, [f"{WHAT}: intervals from a simultaneous band on the rates"])


def _kept(groups: tuple, n: np.ndarray, point: RateGapResult) -> np.ndarray:
    return (np.asarray(n, dtype=np.float64) > 0) & ~left_out_mask(groups, point.small_groups)


def resample_gap(counted: tuple, opts: GapOptions, point: RateGapResult) -> Plan:
    """The family's ``resample`` hook: the plan of a counted call (its cells, the statistics on replicate tables)."""
    prep, counts = counted
    cells, classes, _, _ = group_cells(prep, prep.groups)
    plan = gap_evaluator(point, list(classes).index(1), len(classes), _kept(counts.groups, counts.n, point))
    plan.cells = cells
    return plan


# --------------------------------------------------------------------------- #
# streamed counting: the shared per-group confusion state, its settings, compute and resample  (_stream.py)
# --------------------------------------------------------------------------- #
def gap_settings(classes: Mapping[str, tuple], *, threshold: float = DEFAULT_THRESHOLD, soft: str = "threshold",
                 min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
                 include_small_groups: bool = False) -> group_state.ConfusionSettings:
    """The settings of an accumulator (the options are checked by the declaration before)."""
    return group_state.ConfusionSettings(
        classes["task"], classes["attr"],
        {"min_group_size": min_group_size, "include_small_groups": include_small_groups},
        {"threshold": threshold, "soft": soft})


def gap_compute(settings: group_state.ConfusionSettings, state: group_state.ConfusionState) -> RateGapResult:
    group_state.check_counted(state)
    return gap_from_counts(group_state.confusion(settings, state), **settings.options)


def gap_resample(settings: group_state.ConfusionSettings, state: group_state.ConfusionState, boot: Any) -> tuple:
    point = gap_compute(settings, state)
    plan = gap_evaluator(point, list(settings.classes).index(1), len(settings.classes),
                         _kept(settings.groups, state.n, point))
    return plan, group_state.table_of(state), boot


GAP_STREAM = Streaming(
    classes={"task": ClassList("classes", ("task",)), "attr": ClassList("groups", ("attr",), groups=True)},
    settings=gap_settings, start=group_state.start, count=group_state.count, compute=gap_compute,
    cells=group_state.cells, resample=gap_resample)


# --------------------------------------------------------------------------- #
# the declaration                                                                           (_family.py)
# --------------------------------------------------------------------------- #
_EXAMPLES = """
Notes
-----
The gap of the predictions, ``max_g PR_g - min_g PR_g``, less the gap of the labels.

References
----------
.. [1] A family of the test suite (tests/test_toy_family.py).

Examples
--------
>>> 1 + 1
2
"""

TOY = Family(
    key=KEY,
    title="Positive-rate gap amplification",
    function=rate_gap,
    citation="A family of the test suite (tests/test_toy_family.py).",
    roles=("attr", "task", "task_pred", "sample_weight"),
    statistics=(
        StatisticSpec("PR gap amplification", "pr_gap_amplification", ("task_pred",), lambda r: (r.value, 0),
                      (-1.0, 1.0), regular=False, signed=True,
                      scorer=Scorer("PR gap amplification", target="task", metadata="attr",
                                    request="sensitive_features")),
        StatisticSpec("PR gap", "pr_gap", ("task_pred",), lambda r: (r.gap_pred, 0), (0.0, 1.0), regular=False,
                      signed=False),
    ),
    call=fairness_call,
    count=count_gap,
    compute=compute_gap,
    resample=resample_gap,
    task_labels="binary",
    task_kinds=("binary",),
    section=KEY,
    stream=GAP_STREAM,
    options=GapOptions,
    named=Named(accumulator="RateGapAccumulator", metric="RateGap", dask=True, generated=True,
                update={"y_true": "task", "y_pred": "task_pred", "sensitive_features": "attr",
                        "sample_weight": "sample_weight"},
                sections=dict.fromkeys(("accumulator", "metric", "dask"), _EXAMPLES)),
)

#: the families the common tests run on: the registry's, and this one (registered for each of its tests)
FAMILIES_UNDER_TEST = [*REGISTRY, TOY]


@pytest.fixture
def toy():
    with REGISTRY.registered(TOY) as fam:  # the registry line, for the test
        yield fam


# --------------------------------------------------------------------------- #
# what the common tests cannot check
# --------------------------------------------------------------------------- #
def test_its_value_is_the_hand_computed_gap(toy):
    # group a: 4 rows, labels 1 1 0 0 (R = .5), predictions 1 1 1 0 (PR = .75);
    # group b: 4 rows, labels 1 0 0 0 (R = .25), predictions 0 0 0 0 (PR = 0)
    y = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    p = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    s = np.array(list("aaaabbbb"))
    res = rate_gap(y, p, sensitive_features=s, min_group_size=0)
    assert (res.gap_pred, res.gap_true) == (0.75, 0.25) and res.value == 0.5
    import biasamp
    from biasamp.accumulators import accumulator_for

    acc = accumulator_for(KEY)([0, 1], ["a", "b"], min_group_size=0)
    acc.update(y[:3], p[:3], sensitive_features=s[:3]).update(y[3:], p[3:], sensitive_features=s[3:])
    assert acc.compute().value == 0.5
    boot = biasamp.bootstrap(rate_gap, y, p, sensitive_features=s, min_group_size=0, n_boot=50, random_state=0)
    assert boot.estimate == {"PR gap amplification": 0.5, "PR gap": 0.75}


def test_the_bootstrap_drives_the_declared_hooks_counting_once():
    # one path: the bootstrap binds the call to the function's signature, counts it once with the count hook and
    # takes the function's result from the compute hook (the plan counts nothing of its own)
    import dataclasses

    import biasamp

    rng = np.random.default_rng(0)
    y, p, s = rng.integers(0, 2, 80), rng.integers(0, 2, 80), rng.choice(list("ab"), 80)
    seen: list = []

    def counting(labels: dict, opts: GapOptions) -> tuple:
        seen.append((sorted(labels), opts))
        return count_gap(labels, opts)

    with REGISTRY.registered(dataclasses.replace(TOY, count=counting)):
        boot = biasamp.bootstrap(rate_gap, y, p, sensitive_features=s, threshold=0.3, min_group_size=0, n_boot=20,
                                 random_state=0)
        # a wrong call is refused in the function's words, before anything is counted
        with pytest.raises(TypeError, match=r"^rate_gap\(\) takes 2 positional arguments but 3 were given"):
            biasamp.bootstrap(rate_gap, y, p, s, n_boot=20)
        with pytest.raises(TypeError, match=r"^rate_gap\(\) got an unexpected keyword argument 'pos_label'"):
            biasamp.bootstrap(rate_gap, y, p, sensitive_features=s, pos_label=1, n_boot=20)
    assert seen == [(["sample_weight", "sensitive_features", "y_pred", "y_true"],
                     GapOptions(threshold=0.3, min_group_size=0))]
    assert boot.estimate["PR gap amplification"] == rate_gap(y, p, sensitive_features=s, threshold=0.3,
                                                            min_group_size=0).value


def test_a_declaration_states_its_options_and_how_an_alias_is_bootstrapped():
    import dataclasses

    with pytest.raises(ValueError, match="the count hook reads an options object: declare options"):
        dataclasses.replace(TOY, options=None)
    with pytest.raises(ValueError, match="declare selects"):
        dataclasses.replace(TOY, aliases={len: ("PR gap",)})


def test_the_registry_is_as_it_was_after_the_block():
    from biasamp.exceptions import LIBRARY_FILES
    from biasamp.report import section_builders

    keys, scorers = REGISTRY.keys, REGISTRY.scorer_names
    with REGISTRY.registered(TOY):
        assert REGISTRY[KEY] is TOY and REGISTRY.get(rate_gap) is TOY
        assert KEY in [b.key for b in section_builders()]  # its audit section, derived from the declaration
        assert "PR gap amplification" in REGISTRY.scorer_names
        assert __file__ in LIBRARY_FILES  # its warnings point at its callers' lines
        with pytest.raises(ValueError, match="two families declare the key"), REGISTRY.registered(TOY):
            pass
        assert REGISTRY[KEY] is TOY  # the refused second registration left the first in place
    assert REGISTRY.keys == keys and REGISTRY.scorer_names == scorers and REGISTRY.get(rate_gap) is None
    assert KEY not in [b.key for b in section_builders()]
    assert __file__ not in LIBRARY_FILES
    with pytest.raises(KeyError):
        REGISTRY[KEY]


def test_its_named_forms_are_generated_from_its_declaration(toy):
    import biasamp.dask as bdask
    from biasamp.accumulators import accumulator_for

    acc = accumulator_for(KEY)
    assert acc.__name__ == "RateGapAccumulator" and acc.families == {KEY: {}}
    options = list(GapOptions.option_names())
    assert list(inspect.signature(acc).parameters) == ["classes", "groups", *options, "n_boot", "random_state",
                                                       "stream"]
    assert inspect.signature(acc).parameters["min_group_size"].default == DEFAULT_MIN_GROUP_SIZE
    doc = acc.__doc__
    for name in options:  # each option's description is its declaration's
        assert f"{name} : " in doc and GapOptions.field(name).metadata["doc"].lower() in doc.lower()
    assert list(inspect.signature(acc.update).parameters) == ["self", "y_true", "y_pred", "sensitive_features",
                                                              "sample_weight", "row_ids"]
    dask_form = bdask.function_for(KEY)
    assert dask_form.__name__ == "rate_gap"
    assert list(inspect.signature(dask_form).parameters) == ["y_true", "y_pred", "sensitive_features",
                                                             "sample_weight", *options, "classes", "groups",
                                                             "split_every"]
    with pytest.raises(TypeError, match="no_such_option"):
        acc([0, 1], ["a", "b"], no_such_option=1)
