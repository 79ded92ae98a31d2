"""The declared constraints of options (biasamp._core.validation) and the checkers built on them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from biasamp._core.validation import (
    BOOL,
    NONE,
    Checked,
    Interval,
    OneOf,
    Validated,
    check,
    option,
)

BOUNDS = st.one_of(st.none(), st.integers(-5, 5))
CLOSED = st.sampled_from(["both", "left", "right", "neither"])


@given(st.one_of(st.integers(-10, 10), st.floats(allow_nan=True, allow_infinity=True)), BOUNDS, BOUNDS, CLOSED)
def test_interval_is_the_set_it_describes(x, left, right, closed):
    c = Interval(Real, left, right, closed)
    inside = not (isinstance(x, float) and math.isnan(x))
    if inside and left is not None:
        inside = x > left or (x == left and closed in ("both", "left"))
    if inside and right is not None:
        inside = x < right or (x == right and closed in ("both", "right"))
    assert c.is_satisfied_by(x) is inside
    if inside:
        assert check("x", x, (c,)) is x
    else:
        with pytest.raises(ValueError, match=r"^x must be (a|a non-negative) number"):
            check("x", x, (c,))


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: not float(v).is_integer()))
def test_an_integer_interval_refuses_other_numbers_by_type(x):
    with pytest.raises(TypeError, match=r"^n must be an integer >= 2, got"):
        check("n", x, (Interval(Integral, 2, None),))


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_a_bool_is_never_a_number(value):
    for kind in (Integral, Real):
        assert not Interval(kind, None, None).is_satisfied_by(value)
    with pytest.raises(TypeError, match="threshold must be a number in"):
        check("threshold", value, (Interval(Real, 0, 1, "left"),))


@pytest.mark.parametrize("interval, words", [
    (Interval(Integral, 0, None), "a non-negative integer"),
    (Interval(Integral, 2, None), "an integer >= 2"),
    (Interval(Real, 0, 1, "left"), "a number in [0, 1)"),
    (Interval(Real, 0, 1, "neither"), "a number in (0, 1)"),
    (Interval(Real, 0, None, "neither"), "a number > 0"),
    (Interval(Integral, None, 10), "an integer <= 10"),
    (Interval(Real, 0.5, 2.5), "a number in [0.5, 2.5]"),
])
def test_interval_words(interval, words):
    assert interval.describe() == words


def test_one_of_compares_type_and_value():
    c = OneOf("a", 1)
    assert c.is_satisfied_by("a") and c.is_satisfied_by(1)
    assert not c.is_satisfied_by(True) and not c.is_satisfied_by("1") and not c.is_satisfied_by(np.array([1, 1]))
    with pytest.raises(ValueError, match=r"^k must be one of \('a', 1\), got True$"):
        check("k", True, (c,))


def test_several_constraints_any_one_is_enough_and_the_error_type_follows_the_types():
    cons = (NONE, Interval(Integral, 1, None))
    assert check("max_size", None, cons) is None and check("max_size", 3, cons) == 3
    with pytest.raises(ValueError, match=r"^max_size must be None or an integer >= 1, got 0$"):
        check("max_size", 0, cons)
    with pytest.raises(TypeError, match=r"^max_size must be None or an integer >= 1, got 'x'$"):
        check("max_size", "x", cons)


def test_a_checked_constraint_reuses_the_checker_and_its_error():
    calls = []

    def checker(v):
        calls.append(v)
        if v < 0:
            raise ValueError(f"seed must be >= 0 (own words), got {v}")

    cons = (NONE, Checked(checker, "a seed"))
    assert check("seed", None, cons) is None and calls == []  # a declared constraint met: no checker call
    assert check("seed", 3, cons) == 3 and calls == [3]
    with pytest.raises(ValueError, match="own words"):
        check("seed", -1, cons)


@dataclass(frozen=True)
class _Opts(Validated):
    size: int = option(3, Interval(Integral, 1, None))
    flag: bool = option(False, BOOL)
    free: Any = option(None)


def test_validated_dataclass_checks_on_creation_and_replace():
    o = _Opts()
    assert o.option_names() == ("size", "flag", "free") and o.to_dict() == {"size": 3, "flag": False, "free": None}
    assert o.replace(size=5).size == 5 and o.size == 3
    with pytest.raises(ValueError, match="size must be an integer >= 1, got 0"):
        _Opts(size=0)
    with pytest.raises(TypeError, match="flag must be True or False, got 1"):
        o.replace(flag=1)
    with pytest.raises(TypeError, match=r"_Opts has no option 'sise'"):
        o.replace(sise=2)
    assert _Opts.pick({"flag": True, "other": 1, "size": 2}) == {"size": 2, "flag": True}
    assert list(_Opts.pick({"flag": True, "size": 2})) == ["size", "flag"]  # the declaration's order


def test_the_bootstrap_and_policy_checkers_speak_through_the_declarations():
    from biasamp._core.policy import check_include_small_groups, check_min_group_size, check_soft, check_threshold
    from biasamp._engine.options import BootstrapOptions, check_ci_method, check_p_adjust

    assert check_threshold(0) == 0.0 and isinstance(check_threshold(np.float32(0.25)), float)
    assert check_min_group_size(np.int64(4)) == 4 and check_include_small_groups(np.bool_(False)) is False
    assert check_soft("expected") == "expected" and check_ci_method("bca") == "bca" and check_p_adjust("bh") == "bh"
    for call, kind, words in [
        (lambda: check_threshold(1.0), ValueError, r"threshold must be a number in \[0, 1\), got 1.0"),
        (lambda: check_threshold("0.5"), TypeError, "threshold must be a number"),
        (lambda: check_soft("mean"), ValueError, r"soft must be one of \('threshold', 'expected'\)"),
        (lambda: check_min_group_size(-1), ValueError, "min_group_size must be a non-negative integer, got -1"),
        (lambda: check_min_group_size(2.0), TypeError, "min_group_size must be a non-negative integer"),
        (lambda: check_include_small_groups("yes"), TypeError, "include_small_groups must be True or False"),
        (lambda: check_ci_method("wald"), ValueError, "ci_method must be one of"),
        (lambda: check_p_adjust(None), ValueError, "p_adjust must be one of"),
        (lambda: BootstrapOptions(n_boot=1), ValueError, "n_boot must be an integer >= 2, got 1"),
        (lambda: BootstrapOptions(n_boot=10**7), ValueError, "n_boot must be at most"),
        (lambda: BootstrapOptions(level=1), ValueError, r"level must be a number in \(0, 1\), got 1"),
        (lambda: BootstrapOptions(random_state=1.5), TypeError, "random_state"),
    ]:
        with pytest.raises(kind, match=words):
            call()
    b = BootstrapOptions(np.int64(50), np.float32(0.9))
    assert type(b.n_boot) is int and type(b.level) is float and b.replace(ci_method="band").ci_method == "band"
