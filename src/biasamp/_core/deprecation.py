"""Old argument spellings, accepted for one release with a ``FutureWarning``.

biasamp 0.2.0 renamed arguments to one vocabulary (``attr``/``task`` with
``_pred``/``_train`` suffixes) and made predictions keyword-only. The two
decorators below keep 0.1 calls working until 0.3.0, each with a warning that
names the new spelling. They wrap the function with :func:`functools.wraps`,
so ``inspect.signature`` and the documentation show the new signature.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["keyword_only_since", "normalize_call", "old_positional_order", "renamed_arguments"]

REMOVED_IN = "0.3.0"


def _qualname(func: Callable) -> str:
    return func.__qualname__.replace(".<locals>", "")


def keyword_only_since(version: str, *names: str) -> Callable:
    """Accept the keyword-only ``names`` positionally, in that order, with a ``FutureWarning``.

    ``version`` is the release that made them keyword-only. A call that
    passes one of them both ways raises ``TypeError`` as Python would.
    """

    def decorate(func: Callable) -> Callable:
        params = inspect.signature(func).parameters.values()
        n_positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        kwonly = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
        missing = [n for n in names if n not in kwonly]
        if missing:  # pragma: no cover - a programming error caught at import
            raise TypeError(f"{_qualname(func)} has no keyword-only argument(s) {missing}")

        def translate(args: tuple, kwargs: dict, stacklevel: int) -> tuple[tuple, dict]:
            extra = len(args) - n_positional
            if 0 < extra <= len(names):
                moved = names[:extra]
                twice = [n for n in moved if n in kwargs]
                if twice:
                    raise TypeError(f"{_qualname(func)}() got multiple values for argument {twice[0]!r}")
                warnings.warn(
                    f"{_qualname(func)}(): pass {', '.join(moved)} by keyword ({moved[0]}=...); "
                    f"positional predictions are deprecated since {version} and will raise a "
                    f"TypeError in {REMOVED_IN}",
                    FutureWarning,
                    stacklevel=stacklevel + 1,
                )
                kwargs = {**kwargs, **dict(zip(moved, args[n_positional:]))}
                args = args[:n_positional]
            return args, kwargs

        return _shim(func, translate)

    return decorate


def old_positional_order(version: str, removed_in: str, old: tuple[str, ...], *, fill: tuple = ()) -> Callable:
    """Read a call with exactly ``len(old)`` positional arguments in the old order ``old``, with a ``FutureWarning``.

    ``version`` is the release that changed the order, ``removed_in`` the one
    where the old order raises. The positional arguments are passed by the
    keywords ``old``; ``fill`` are the new positional arguments of such a call
    (e.g. ``(None, None)`` for ground truths the old order did not take).
    """

    def decorate(func: Callable) -> Callable:
        params = inspect.signature(func).parameters
        unknown = [n for n in old if n not in params]
        if unknown:  # pragma: no cover - a programming error caught at import
            raise TypeError(f"{_qualname(func)} has no argument(s) {unknown}")

        def translate(args: tuple, kwargs: dict, stacklevel: int) -> tuple[tuple, dict]:
            if len(args) != len(old):
                return args, kwargs
            twice = [n for n in old if n in kwargs]
            if twice:
                raise TypeError(f"{_qualname(func)}() got multiple values for argument {twice[0]!r}")
            new = ", ".join(n for n, p in params.items() if p.kind == p.POSITIONAL_OR_KEYWORD)
            warnings.warn(
                f"{_qualname(func)}({', '.join(old)}): this positional order is deprecated since {version} and "
                f"will raise a TypeError in {removed_in}; call {_qualname(func)}({new}, *, ...) and pass "
                + ", ".join(f"{n}=..." for n in old) + " by keyword",
                FutureWarning,
                stacklevel=stacklevel + 1,
            )
            return tuple(fill), {**kwargs, **dict(zip(old, args))}

        return _shim(func, translate)

    return decorate


def renamed_arguments(version: str, renames: Mapping[str, str]) -> Callable:
    """Accept the 0.1 keyword names ``renames`` (old -> new) with a ``FutureWarning``.

    An old name that is also a new name (``attr_classes`` meant the tasks in
    0.1 and means the protected attribute in 0.2) is translated only when the
    call also uses an unambiguous old name, so that a 0.2 call is never
    reinterpreted. Passing an argument under both spellings raises
    ``TypeError``.
    """

    def decorate(func: Callable) -> Callable:
        params = set(inspect.signature(func).parameters)
        unknown = [new for new in renames.values() if new not in params]
        if unknown:  # pragma: no cover - a programming error caught at import
            raise TypeError(f"{_qualname(func)} has no argument(s) {unknown}")
        triggers = {old for old in renames if old not in params}

        def translate(args: tuple, kwargs: dict, stacklevel: int) -> tuple[tuple, dict]:
            if triggers.isdisjoint(kwargs):
                return args, kwargs
            kwargs = dict(kwargs)
            old_names = [k for k in kwargs if k in renames]
            values = {k: kwargs.pop(k) for k in old_names}
            for old in old_names:
                new = renames[old]
                if new in kwargs:
                    raise TypeError(
                        f"{_qualname(func)}() got {old!r} (the 0.1 name) and {new!r} (its new name); pass {new!r} only"
                    )
                kwargs[new] = values[old]
            warnings.warn(
                f"{_qualname(func)}(): the argument names "
                + ", ".join(f"{old} -> {renames[old]}" for old in old_names)
                + f" changed in {version} (one vocabulary: attr is the protected attribute, task the task "
                f"labels); the old names will raise a TypeError in {REMOVED_IN}",
                FutureWarning,
                stacklevel=stacklevel + 1,
            )
            return args, kwargs

        return _shim(func, translate)

    return decorate


def _shim(func: Callable, translate: Callable[[tuple, dict, int], tuple[tuple, dict]]) -> Callable:
    """Wrap ``func`` so that a call is first translated to the new spelling.

    The wrapper keeps the chain of translations (``_biasamp_translate``) so that
    :func:`normalize_call` can translate a call without making it: the layers
    that take a metric function and its arguments (``bootstrap``, the curves)
    accept exactly the spellings the function accepts.
    """
    inner = getattr(func, "_biasamp_translate", None)

    def chain(args: tuple, kwargs: dict, stacklevel: int) -> tuple[tuple, dict]:
        args, kwargs = translate(args, kwargs, stacklevel + 1)
        return inner(args, kwargs, stacklevel + 1) if inner is not None else (args, kwargs)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = translate(args, kwargs, 2)
        return func(*args, **kwargs)

    wrapper._biasamp_translate = chain  # type: ignore[attr-defined]
    return wrapper


def normalize_call(func: Callable, args: tuple, kwargs: dict, stacklevel: int = 2) -> tuple[tuple, dict]:
    """``(args, kwargs)`` of a call of ``func`` in the current spelling (0.1 spellings warn, as ``func`` does).

    ``stacklevel`` counts from the caller of ``normalize_call`` (2: its caller's caller, the user).
    """
    translate = getattr(func, "_biasamp_translate", None)
    if translate is None:
        return args, kwargs
    return translate(tuple(args), dict(kwargs), stacklevel + 1)
