"""Doctest collection of modules that need an optional package: skipped where it is absent.

``pytest`` imports every module of ``src/biasamp`` to collect its doctests;
:mod:`biasamp.torchmetrics` subclasses ``torchmetrics.Metric`` at import time,
so it is left out of the collection where torchmetrics (or torch) is not
installed (its tests in ``tests/test_torchmetrics.py`` skip there too).
"""

from __future__ import annotations

import importlib.util

collect_ignore = [
    path
    for path, needs in (("src/biasamp/torchmetrics.py", ("torch", "torchmetrics")),)
    if any(importlib.util.find_spec(name) is None for name in needs)
]
