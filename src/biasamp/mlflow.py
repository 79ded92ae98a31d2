"""Logging a :class:`~biasamp.Report` to MLflow.

The implementation lives in ``biasamp.report._mlflow``; this public path re-exports it.
"""

from biasamp.report._mlflow import *  # noqa: F403
from biasamp.report._mlflow import __all__  # noqa: F401
