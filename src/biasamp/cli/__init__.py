"""The ``biasamp`` command line (click): ``audit``, ``demo``."""

from ._commands import main

__all__ = ["main"]
