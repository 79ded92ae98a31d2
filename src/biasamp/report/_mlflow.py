"""MLflow logging of an audit report (the ``[mlflow]`` extra: ``pip install mlflow-skinny``).

:func:`log_report` (also :meth:`biasamp.report.Report.log_to_mlflow`) logs
every headline number of a :class:`~biasamp.report.Report` as MLflow metrics —
its value, the bounds of its confidence interval and its p-value — and the
report itself as artifacts (JSON, self-contained HTML, Markdown), to the active
run, a given run, or a new run. MLflow is imported only when called.

Metric names are ``<prefix><key>`` with the keys of
:func:`biasamp.report._export.metric_key` (``->`` spelled ``_to_``, which MLflow's
names cannot hold): e.g. ``biasamp.BiasAmp_directional.A_to_T``,
``biasamp.BiasAmp_directional.A_to_T.ci_low``, ``biasamp.DP.p_value``.
"""

from __future__ import annotations

import time
from typing import Any

from biasamp.report._export import _finite, headline_rows

__all__ = ["log_report"]


def _import_mlflow() -> Any:
    try:
        import mlflow
    except ImportError as exc:
        raise ImportError(
            "Report.log_to_mlflow needs MLflow: pip install mlflow-skinny (or pip install \"biasamp[mlflow]\")"
        ) from exc
    return mlflow


def report_metrics(report: Any, *, prefix: str = "biasamp.") -> dict[str, float]:
    """The metrics :func:`log_report` logs: name -> value (undefined values and missing intervals left out)."""
    out: dict[str, float] = {}
    for r in headline_rows(report):
        base = prefix + r["key"]
        for suffix, column in (("", "value"), (".ci_low", "ci_low"), (".ci_high", "ci_high"),
                               (".p_value", "p_value")):
            if _finite(r[column]):
                out[base + suffix] = float(r[column])
    return out


def log_report(
    report: Any,
    *,
    run_id: str | None = None,
    prefix: str = "biasamp.",
    step: int = 0,
    artifact_path: str = "biasamp",
    artifacts: bool = True,
    plots: bool = True,
) -> str:
    """Log a report to MLflow: headline values and intervals as metrics, the report as artifacts.

    Parameters
    ----------
    report : Report
        An audit report (:func:`biasamp.audit`).
    run_id : str, optional
        The run to log to. Default: the active run (``mlflow.start_run()``),
        else a new run in the current experiment, ended afterwards.
    prefix : str, default "biasamp."
        Prefix of every metric name (and tag).
    step : int, default 0
        MLflow step of the metrics (e.g. the epoch, to log an audit per epoch).
    artifact_path : str, default "biasamp"
        Folder of the artifacts in the run.
    artifacts : bool, default True
        Log ``report.json``, ``report.html`` and ``report.md``.
    plots : bool, default True
        Plots in the HTML (when matplotlib is installed).

    Returns
    -------
    str
        The run id.

    Raises
    ------
    ImportError
        MLflow is not installed.
    TypeError
        A bad ``prefix``, ``step`` or ``run_id``.

    Notes
    -----
    Logged per headline number with key ``k`` (see the module docstring):
    ``<prefix>k`` (the value), ``<prefix>k.ci_low`` and ``<prefix>k.ci_high``
    (when it has an interval), ``<prefix>k.p_value`` (when it has a test).
    Tags: ``<prefix>version``, ``<prefix>title``, ``<prefix>level`` and
    ``<prefix>ci_method``.
    """
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
    if not isinstance(step, int) or isinstance(step, bool):
        raise TypeError(f"step must be an int, got {type(step).__name__}")
    if run_id is not None and not isinstance(run_id, str):
        raise TypeError(f"run_id must be a str, got {type(run_id).__name__}")
    mlflow = _import_mlflow()
    from mlflow.entities import Metric, RunTag

    metrics = report_metrics(report, prefix=prefix)
    tags = {f"{prefix}version": report.version, f"{prefix}title": report.title,
            f"{prefix}level": str(report.options.get("level", "")),
            f"{prefix}ci_method": str(report.options.get("ci_method", ""))}

    def log(client: Any, rid: str) -> str:
        now = int(time.time() * 1000)
        items = [Metric(key, value, now, step) for key, value in metrics.items()]
        for start in range(0, len(items), 1000):  # MLflow's batch limit
            client.log_batch(rid, metrics=items[start:start + 1000],
                             tags=[RunTag(k, v) for k, v in tags.items()] if start == 0 else [])
        if artifacts:
            client.log_text(rid, report.to_json(), f"{artifact_path}/report.json")
            client.log_text(rid, report.to_html(plots=plots), f"{artifact_path}/report.html")
            client.log_text(rid, report.to_markdown(), f"{artifact_path}/report.md")
        return rid

    client = mlflow.MlflowClient()
    if run_id is None:
        active = mlflow.active_run()
        if active is None:
            with mlflow.start_run() as run:
                return log(client, run.info.run_id)
        run_id = active.info.run_id
    return log(client, run_id)
