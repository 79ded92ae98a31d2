"""The audit report: :func:`audit`, :class:`Report` and its renderers (terminal, JSON, HTML,
Markdown, LaTeX, model card, MLflow), and the registry of report sections."""

from . import _captioning, _scan  # noqa: F401 - register the captioning and the subgroup scan sections
from ._json import REPORT_JSON_SCHEMA  # noqa: F401 - documented as biasamp.report.REPORT_JSON_SCHEMA
from ._model import *  # noqa: F403
from ._model import __all__  # noqa: F401
from ._registry import _BUILDERS  # noqa: F401 - the registry of sections (tests patch its entries)
