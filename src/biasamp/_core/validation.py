"""Declared constraints of options, checked in one place (scikit-learn's ``validate_params`` idea).

An option is declared with the constraints its value may meet — any one of
them is enough — and :func:`check` raises one named error when it meets none:
a ``TypeError`` when the value has a type no constraint accepts, a
``ValueError`` when its type is right but its value is not (out of range, not
one of the choices). The message names the option and says what it must be,
in the words of the constraints: ``"threshold must be a number in [0, 1), got
1.5"``, ``"soft must be one of ('threshold', 'expected'), got 'x'"``.

Constraints
-----------
:class:`Interval`
    A number of a kind (``Integral`` or ``Real``; never a bool) within
    bounds: ``Interval(Integral, 2, None)`` is "an integer >= 2".
:class:`OneOf`
    One of a few values (scikit-learn's ``StrOptions``); any other value is
    a ``ValueError``.
:class:`InstanceOf`
    An instance of some types (``BOOL``: True or False; ``NONE``: None).
:class:`Checked`
    A rule no declaration states (a seed, a pair of tolerances), checked by an
    existing checker that raises its own named error: the checker is reused,
    not rewritten.

Options objects are frozen dataclasses deriving from :class:`Validated` whose
fields are declared with :func:`option` (default and constraints): they are
checked when the object is made or :meth:`~Validated.replace`\\ d, and
:meth:`~Validated.option_names` lists them for the layers that forward options
by name (docs/architecture.md). A function whose keywords are the options of
such a class builds it once at entry, ``opts = TheOptions.from_call(locals())``,
and reads its options from it (docs/architecture.md, "Options").
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, TypeVar

import numpy as np

__all__ = ["BOOL", "NONE", "Checked", "Constraint", "InstanceOf", "Interval", "OneOf", "Validated", "check",
           "constraints_of", "option"]


class Constraint:
    """One way an option's value may be valid."""

    def is_satisfied_by(self, value: Any) -> bool:  # pragma: no cover - abstract
        """Whether ``value`` meets the constraint."""
        raise NotImplementedError

    def accepts_type(self, value: Any) -> bool:
        """Whether ``value`` has a type the constraint accepts (decides TypeError vs ValueError)."""
        return True

    def describe(self) -> str:  # pragma: no cover - abstract
        """What a valid value is, in words (``"an integer >= 2"``)."""
        raise NotImplementedError


def _is_number(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, (bool, np.bool_))


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Interval(Constraint):
    """A number of ``kind`` (``numbers.Integral`` or ``numbers.Real``) between ``left`` and ``right``.

    ``None`` bounds are open-ended; ``closed`` says which bounds belong to
    the interval (``"both"``, ``"left"``, ``"right"``, ``"neither"``). NaN is
    never inside.
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"

    def __post_init__(self) -> None:
        if self.kind not in (Integral, Real):
            raise TypeError(f"Interval kind must be numbers.Integral or numbers.Real, got {self.kind!r}")
        if self.closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {self.closed!r}")

    def accepts_type(self, value: Any) -> bool:
        return _is_number(value, self.kind)

    def is_satisfied_by(self, value: Any) -> bool:
        if not self.accepts_type(value):
            return False
        x = float(value)
        if math.isnan(x):
            return False
        below = self.left is not None and (x < self.left or (x == self.left and self.closed in ("right", "neither")))
        above = self.right is not None and (x > self.right or (x == self.right and self.closed in ("left", "neither")))
        return not (below or above)

    def describe(self) -> str:
        noun = "an integer" if self.kind is Integral else "a number"
        left_in = self.closed in ("both", "left")
        right_in = self.closed in ("both", "right")
        if self.right is None and self.left is not None:
            if self.left == 0 and left_in:
                return f"a non-negative {noun.split()[-1]}"
            return f"{noun} {'>=' if left_in else '>'} {_fmt(self.left)}"
        if self.left is None and self.right is not None:
            return f"{noun} {'<=' if right_in else '<'} {_fmt(self.right)}"
        if self.left is None:
            return noun
        assert self.right is not None
        return f"{noun} in {'[' if left_in else '('}{_fmt(self.left)}, {_fmt(self.right)}{']' if right_in else ')'}"


def _same_kind(value: Any, choice: Any) -> bool:
    """Same type, except that any string (``numpy.str_`` included) is a string."""
    return type(value) is type(choice) or (isinstance(value, str) and isinstance(choice, str))


@dataclass(frozen=True, init=False)
class OneOf(Constraint):
    """One of ``values`` (compared by type and value: ``1`` is not ``True``, ``"1"`` is not ``1``).

    Any ``str`` subclass (``numpy.str_``) counts as a string.
    """

    values: tuple

    def __init__(self, *values: Any) -> None:
        object.__setattr__(self, "values", tuple(values))

    def is_satisfied_by(self, value: Any) -> bool:
        try:
            return any(_same_kind(value, v) and bool(value == v) for v in self.values)
        except (TypeError, ValueError):  # an array compared element-wise
            return False

    def describe(self) -> str:
        return f"one of {self.values}"


@dataclass(frozen=True, init=False)
class InstanceOf(Constraint):
    """An instance of one of ``types``; ``description`` names them (``"True or False"``)."""

    types: tuple
    description: str

    def __init__(self, *types: type, description: str | None = None) -> None:
        object.__setattr__(self, "types", tuple(types))
        object.__setattr__(self, "description",
                           description or " or ".join(f"a {t.__name__}" for t in types))

    def accepts_type(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def describe(self) -> str:
        return self.description


#: True or False (numpy booleans included)
BOOL = InstanceOf(bool, np.bool_, description="True or False")
#: None (an option whose None means "not given" or "no limit")
NONE = InstanceOf(type(None), description="None")


@dataclass(frozen=True)
class Checked(Constraint):
    """A rule checked by an existing checker ``check(value)`` that raises its own named error.

    Used for rules no declaration states (a seed: an int, a Generator or
    None; a pair of tolerances), so that each rule keeps one checker.
    ``description`` says what the checker accepts.
    """

    checker: Callable[[Any], Any]
    description: str = "valid"

    def is_satisfied_by(self, value: Any) -> bool:  # only through check(), which calls the checker
        return False

    def describe(self) -> str:
        return self.description


def check(name: str, value: Any, constraints: tuple[Constraint, ...] | list[Constraint]) -> Any:
    """``value`` when it meets one of ``constraints``, else a ``TypeError``/``ValueError`` naming ``name``.

    A :class:`Checked` constraint runs its checker after the declared ones
    failed (the checker raises its own error, or accepts the value).
    """
    if not constraints:
        return value
    for c in constraints:
        if not isinstance(c, Checked) and c.is_satisfied_by(value):
            return value
    for c in constraints:
        if isinstance(c, Checked):
            c.checker(value)
            return value
    words = " or ".join(c.describe() for c in constraints)
    kind = ValueError if any(c.accepts_type(value) for c in constraints) else TypeError
    raise kind(f"{name} must be {words}, got {value!r}")


def option(default: Any, *constraints: Constraint, doc: str = "", **metadata: Any) -> Any:
    """A dataclass field with its ``default``, the ``constraints`` its value meets and a one-line ``doc``.

    ``metadata`` adds what a layer needs to know about the option (e.g. the
    audit's ``forward=True``: the families that declare it receive it).
    """
    return dataclasses.field(default=default, metadata={"constraints": tuple(constraints), "doc": doc, **metadata})


def constraints_of(field: dataclasses.Field) -> tuple[Constraint, ...]:
    """The constraints declared for a dataclass ``field`` (``()`` when none)."""
    return tuple(field.metadata.get("constraints", ()))


_V = TypeVar("_V", bound="Validated")


class Validated:
    """Base of a frozen options dataclass whose fields are declared with :func:`option`.

    Every field is checked against its constraints when the object is made
    (``__post_init__``) and when it is :meth:`replace`\\ d; a subclass that
    normalises values (a list to a tuple) does so in ``_normalise``.
    """

    def __post_init__(self) -> None:
        self._normalise()
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            check(f.name, getattr(self, f.name), constraints_of(f))
        self._check_jointly()

    def _normalise(self) -> None:
        """Hook: turn accepted spellings into the stored form before the checks (default: none)."""

    def _check_jointly(self) -> None:
        """Hook: rules between options (``max_size >= min_size``), after each option's own (default: none)."""

    @classmethod
    def from_call(cls: type[_V], arguments: Mapping[str, Any]) -> _V:
        """The options of a call, from its arguments by name (``locals()`` at a function's entry), checked.

        ``arguments`` must hold every option of ``cls`` (a function whose
        keyword options are this class's; other arguments are ignored). An
        option whose value meets none of its constraints raises the declared
        ``TypeError``/``ValueError`` naming it, so a function that starts with
        ``opts = TheOptions.from_call(locals())`` checks its options exactly as
        ``TheOptions(**options)`` does.
        """
        absent = [k for k in cls.option_names() if k not in arguments]
        if absent:
            raise TypeError(f"{cls.__name__}.from_call: the call has no argument {', '.join(map(repr, absent))}")
        return cls(**cls.pick(arguments))

    @classmethod
    def call_of(cls: type[_V], arguments: Mapping[str, Any]) -> tuple[_V, dict]:
        """A call split in two: its options (:meth:`from_call`, checked) and its other arguments by name.

        ``opts, labels = TheOptions.call_of(locals())`` at a public function's
        entry, and the bootstrap's generic driver on the same call's bound
        arguments (:meth:`biasamp._family.Family.plan_of`): the one place a
        call becomes what a family's ``count`` hook reads.
        """
        names = set(cls.option_names())
        return cls.from_call(arguments), {k: v for k, v in arguments.items() if k not in names}

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    @classmethod
    def field(cls, name: str) -> dataclasses.Field:
        """The declaration of option ``name``."""
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name == name:
                return f
        raise KeyError(f"{cls.__name__} has no option {name!r}")

    @classmethod
    def pick(cls, options: Mapping[str, Any]) -> dict:
        """The entries of ``options`` that are options of ``cls``, in ``cls``'s order."""
        return {k: options[k] for k in cls.option_names() if k in options}

    def replace(self: _V, **changes: Any) -> _V:
        """A copy with ``changes`` applied and checked; an unknown option is a ``TypeError`` naming it."""
        unknown = [k for k in changes if k not in self.option_names()]
        if unknown:
            raise TypeError(f"{type(self).__name__} has no option {', '.join(map(repr, unknown))}; its options: "
                            f"{', '.join(self.option_names())}")
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def to_dict(self) -> dict:
        """Every option by name."""
        return {k: getattr(self, k) for k in self.option_names()}

    @classmethod
    def parameters(cls, skip: tuple[str, ...] = ()) -> list[inspect.Parameter]:
        """The options as keyword-only :class:`inspect.Parameter` s with their declared defaults (a signature's)."""
        return [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                  annotation=_annotation(f)) for f in dataclasses.fields(cls)  # type: ignore[arg-type]
                if f.name not in skip]

    @classmethod
    def parameter_docs(cls, skip: tuple[str, ...] = (), only: tuple[str, ...] | None = None) -> str:
        """The numpydoc "Parameters" entries of the options, from their declarations (``option(doc=...)``).

        One entry per option (less ``skip``; only those in ``only`` when given): ``name : type, default
        value`` and its ``doc``, so that a parameter's description is written once, where the option is
        declared.
        """
        out = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name in skip or (only is not None and f.name not in only):
                continue
            choices = [c for c in constraints_of(f) if isinstance(c, OneOf)]
            kind = ("{" + ", ".join(map(repr, choices[0].values)) + "}") if choices else _annotation(f)
            doc = f.metadata.get("doc") or "See the function"
            doc = doc[0].upper() + doc[1:] + ("" if doc.endswith(".") else ".")
            out.append(f"{f.name} : {'object' if kind in ('Any', 'object') else kind}, default {f.default!r}\n"
                       f"    {doc}")
        return "\n".join(out)


def _annotation(f: dataclasses.Field) -> str:
    """A field's annotation as written (``from __future__ import annotations``: a string)."""
    return f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
