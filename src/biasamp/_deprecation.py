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

__all__ = ["keyword_only_since", "renamed_arguments"]

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

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
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
                    stacklevel=2,
                )
                kwargs.update(zip(moved, args[n_positional:]))
                args = args[:n_positional]
            return func(*args, **kwargs)

        return wrapper

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

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if triggers.isdisjoint(kwargs):
                return func(*args, **kwargs)
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
                stacklevel=2,
            )
            return func(*args, **kwargs)

        return wrapper

    return decorate
