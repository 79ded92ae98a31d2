"""Doctest collection of modules that need an optional package: skipped where it is absent.

``pytest`` imports every module of ``src/biasamp`` to collect its doctests;
:mod:`biasamp.torchmetrics` subclasses ``torchmetrics.Metric`` at import time,
so it is left out of the collection where torchmetrics (or torch) is not
installed (its tests in ``tests/test_torchmetrics.py`` skip there too).
"""

from __future__ import annotations

import importlib.util

import pytest

collect_ignore = [
    path
    for path, needs in (("src/biasamp/torchmetrics.py", ("torch", "torchmetrics")),)
    if any(importlib.util.find_spec(name) is None for name in needs)
]


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own (tryfirst) hook reads -n
def pytest_cmdline_main(config):
    """``pytest`` runs its tests on every core (pytest-xdist, ``-n auto``) where pytest-xdist is installed.

    Not in ``addopts``: there ``-n`` would be an error without pytest-xdist (the
    no-extras and minimum-versions CI steps, a user without the ``dev`` extra).
    An explicit ``-n N`` (``-n 0``: one process) or ``-p no:xdist`` wins; so does
    a debugger (``--pdb``), which xdist cannot drive. The tests are safe to
    distribute: none uses a fixed port (torch.distributed binds a free one, the
    Dask cluster has no dashboard), writes outside ``tmp_path`` or depends on
    another test's state. ``--dist worksteal`` balances the uneven test durations.
    """
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    opt = config.option
    if getattr(opt, "numprocesses", None) is None and not getattr(opt, "usepdb", False):
        opt.numprocesses = "auto"
        if getattr(opt, "dist", "no") == "no":
            opt.dist = "worksteal"
