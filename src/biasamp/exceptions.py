"""Warnings and exceptions raised by biasamp.

Every warning class of biasamp derives from :class:`~biasamp.exceptions.BiasampWarning`, so that one
filter silences (or turns into errors) all of them. Deprecated spellings warn
with Python's own ``FutureWarning``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import FrameType

__all__ = ["BiasampWarning", "SmallGroupWarning", "UndefinedPairWarning", "UnknownKeyError", "warn_outside"]

_PACKAGE_DIR = str(Path(__file__).resolve().parent)


class BiasampWarning(UserWarning):
    """Base class of every warning biasamp emits about data or results.

    Its subclasses (:class:`~biasamp.UndefinedPairWarning`, :class:`~biasamp.SmallGroupWarning`)
    say which quantity was affected; filter this class to handle them all at once.

    Parameters
    ----------
    message : str
        What happened, and where the result records it.

    Notes
    -----
    A subclass of ``UserWarning``, raised through the ``warnings`` module.
    Deprecation warnings are Python's ``FutureWarning``, not this class.

    References
    ----------
    .. [1] Python documentation, "warnings — Warning control": warning
       categories and filters.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from biasamp import bias_amp_directional
    >>> from biasamp.exceptions import BiasampWarning
    >>> attr, task = np.array([0, 0, 1, 1]), np.array([[1, 0], [0, 0], [1, 0], [0, 0]])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", BiasampWarning)  # every biasamp warning is now an error
    ...     try:
    ...         bias_amp_directional(attr, task, attr_pred=attr, task_pred=task)
    ...     except BiasampWarning as w:
    ...         print(type(w).__name__)
    UndefinedPairWarning
    """


class UndefinedPairWarning(BiasampWarning):
    """Some (attribute, task) pairs had an undefined term and were left out.

    A term is undefined when it conditions on an empty event, for example
    ``P(T̂ = 1 | A_a = 1)`` for a group ``a`` with no test member. Such pairs are
    excluded from the aggregate, marked ``undefined`` in the per-pair table and
    counted in the result's ``n_undefined`` (:ref:`def-undefined`). biasamp never returns a
    silent NaN.

    Parameters
    ----------
    message : str
        What was left out, and where to find it (the ``undefined`` column of
        the per-pair table, ``n_undefined``).

    Notes
    -----
    A subclass of :class:`~biasamp.exceptions.BiasampWarning` (a ``UserWarning``),
    raised through the ``warnings`` module; filter it like any warning
    (``warnings.simplefilter("ignore", UndefinedPairWarning)``) or turn it into
    an error in a test suite. It is never emitted for a quantity that is
    defined, and a statistic whose every pair is undefined raises
    ``ValueError`` instead.

    References
    ----------
    .. [1] biasamp, "Definitions and decisions", section "Undefined
       quantities" (``docs/definitions.md``).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from biasamp import UndefinedPairWarning, bias_amp_directional
    >>> attr, task = np.array([0, 0, 1, 1]), np.array([[1, 0], [0, 0], [1, 0], [0, 0]])
    >>> with warnings.catch_warnings(record=True) as caught:  # task 1 is never positive: T->A undefined there
    ...     warnings.simplefilter("always")
    ...     res = bias_amp_directional(attr, task, attr_pred=attr, task_pred=task)
    >>> caught[0].category is UndefinedPairWarning, res.t_to_a.n_undefined
    (True, 2)
    """


class SmallGroupWarning(BiasampWarning):
    r"""A protected group has fewer members than ``min_group_size``.

    Its rates rest on a handful of instances, so a gap to another group may be
    noise: the group is flagged in every table and chart, and left out of the
    headline values unless ``include_small_groups=True`` (or unless fewer than
    two groups would remain).

    Parameters
    ----------
    message : str
        The small groups, their sizes, and whether they were excluded.

    Notes
    -----
    A group g is small when :math:`0 < n_g < \text{min\_group\_size}`, with
    :math:`n_g` its (weighted) number of members. A subclass of
    :class:`~biasamp.exceptions.BiasampWarning` (a ``UserWarning``); filter it like any
    warning. The threshold (30 by
    default) is the usual rule of thumb for a rate's normal approximation; set
    ``min_group_size`` to change it.

    References
    ----------
    .. [1] biasamp, "Definitions and decisions", section "Small groups"
       (``docs/definitions.md``).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from biasamp import SmallGroupWarning, fairness_metrics
    >>> y = np.tile([0, 1], 52)
    >>> race = np.repeat(["a", "b", "c"], [50, 50, 4])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     res = fairness_metrics(y, y, sensitive_features=race)
    >>> caught[0].category is SmallGroupWarning, res.settings.excluded_groups
    (True, ('c',))
    """


class UnknownKeyError(KeyError, ValueError):
    """A name that is not there: ``Report.section("nope")``, ``CooccurrenceCounts.cross("nope", ...)``.

    A ``ValueError`` (bad argument value, what biasamp raises for every bad
    input) that is also a ``KeyError``, so that code written for a plain
    lookup error keeps working. Its message is printed as it is (a plain
    ``KeyError`` would quote it).
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


#: source files outside the package that count as biasamp for :func:`warn_outside`: the modules of a family
#: registered from outside it (``Registry.registered``), whose warnings belong to their caller too
LIBRARY_FILES: set[str] = set()


def _inside(filename: str) -> bool:
    path = str(Path(filename).resolve())
    return path.startswith(_PACKAGE_DIR) or path in LIBRARY_FILES


def warn_outside(message: str, category: type[Warning]) -> None:
    """Emit a warning attributed to the first caller outside the biasamp package (and :data:`LIBRARY_FILES`)."""
    level = 2  # stacklevel 2 = the caller of warn_outside
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _inside(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
