"""One-stop audit: every applicable metric of biasamp, with confidence intervals, in one report.

:func:`audit` takes a model's test labels and predictions (and, optionally,
the training labels and validation scores for threshold calibration),
computes every metric family that applies to them and returns a
:class:`Report`: a list of :class:`Section` objects, one per metric family,
rendered as a terminal table (:meth:`Report.summary`), JSON
(:meth:`Report.to_json`, round-trips through :meth:`Report.from_json`) or a
self-contained HTML page (:meth:`Report.to_html`, with plots when matplotlib
is installed).

The report grows with the library without being rewritten: a metric family is
a :class:`SectionBuilder` (title, citation, "how to read", an
``applicable(inputs)`` test and a ``compute(inputs, options)`` function)
registered with ``register_section``. :func:`audit` runs the registered
builders in order and the renderers only walk the resulting sections.

This module is the public face of the report: :func:`audit`, :class:`Report`
and its sections, the registry (``biasamp.report._registry``) and the input types
(``biasamp.report._inputs``) it re-exports. The built-in builders live in
``biasamp.report._sections`` (imported here, which registers them), the JSON schema
in ``biasamp.report._json`` and atomic writing in ``biasamp._core.atomic``. It
belongs to the presentation layer: the metric modules never import it.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.atomic import _write_atomic
from biasamp._core.escape import terminal
from biasamp._core.progress import progress_bar
from biasamp._core.results import signed, to_builtin
from biasamp._engine.options import DEFAULT_LEVEL
from biasamp.exceptions import UnknownKeyError
from biasamp.report._attributes import audit_attributes, summary_by_attribute
from biasamp.report._config import AuditConfig, AuditOptions
from biasamp.report._errors import NothingComputedError
from biasamp.report._inputs import (
    AuditInputs,
    _caption_inputs,
    _describe,
    _feature_inputs,
    _prepare,
    _rows_notes,
    check_task_count,
    level_size_warning,
    rows_used,
)
from biasamp.report._json import (
    REPORT_JSON_SCHEMA,  # noqa: F401 - documented as biasamp.report.REPORT_JSON_SCHEMA
    SCHEMA_ID,
    _check_report_json,
    _table_from_json,
    _table_to_json,
)
from biasamp.report._overview import AttributeOverview, Overview, _wrapped
from biasamp.report._registry import (
    _BUILDERS,  # noqa: F401 - the registry, importable from here (tests patch it)
    FigureSpec,
    SectionBuilder,
    SectionData,
    register_section,
    section_builders,
)
from biasamp.report._sections import (
    _ci_note,  # importing the module registers the built-in sections
    finish_summary,
)

__all__ = [
    "SUMMARY_COLUMNS",
    "AttributeOverview",
    "AuditConfig",
    "AuditInputs",
    "AuditOptions",
    "FigureSpec",
    "Overview",
    "Report",
    "Section",
    "SectionBuilder",
    "SectionData",
    "SectionResult",
    "audit",
    "register_section",
    "section_builders",
]

SUMMARY_COLUMNS = ("metric", "direction", "value", "ci_low", "ci_high", "ci_method", "p_value", "n", "reading",
                   "note", "min_detectable")
"""Columns of every section's summary table (and of :attr:`Report.table`, which adds ``section``).

``p_value`` is the interval's own p-value (``p < 1 - level`` exactly when the interval excludes 0);
``min_detectable`` the minimum detectable effect (80% power at the report's level; None without interval)."""


# --------------------------------------------------------------------------- #
# data model
# --------------------------------------------------------------------------- #
@dataclass(eq=False)
class Section:
    """One metric family in a :class:`Report`.

    Attributes
    ----------
    key, title, citation, how_to_read : str
        From the :class:`SectionBuilder`.
    status : {"ok", "error", "skipped"}
        ``"skipped"``: the inputs lack what the family needs (``message``
        says what); ``"error"``: computing it raised (``message`` holds the
        error); the other sections are unaffected.
    message : str
    summary : pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`, one row per headline number.
    tables : dict of str -> pandas.DataFrame
    figures : list of FigureSpec
    notes : list of str
        Caveats, including the warnings the metric emitted.
    """

    key: str
    title: str
    citation: str
    how_to_read: str
    status: str = "ok"
    message: str = ""
    summary: pd.DataFrame = field(default_factory=lambda: _summary_frame([]))
    tables: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)


@dataclass(eq=False)
class SectionResult:
    """A metric family's result computed outside :func:`audit`, for its section to render.

    A streamed audit (``biasamp audit --stream``) counts the rows batch by
    batch with the accumulators of :mod:`biasamp.accumulators` and never
    holds them all; it passes their results to the report through
    :attr:`AuditInputs.results`, and the section builders render them exactly
    as they render a result computed from the rows.

    Attributes
    ----------
    compute : callable
        ``compute() -> result``, the result type of the family's function
        (e.g. an accumulator's bound ``compute`` method). Called while the
        section is built, so that the warnings it emits become the section's
        notes and an exception it raises the section's error.
    ci : optional
        Unused (kept for compatibility); see ``bootstrap``.
    ci_method : str
        Unused (kept for compatibility).
    bootstrap : BootstrapResult, optional
        Intervals and tests of the family's statistics (e.g. from the
        accumulators' hashed-group bootstrap); None: no interval.
    notes : list of str
        Caveats for the section's notes (e.g. why there is no interval).
    """

    compute: Callable[[], Any]
    ci: Any = None
    ci_method: str = ""
    notes: list = field(default_factory=list)
    bootstrap: Any = None


def _summary_frame(rows: Sequence[dict]) -> pd.DataFrame:
    frame = pd.DataFrame([{c: r.get(c) for c in SUMMARY_COLUMNS} for r in rows], columns=list(SUMMARY_COLUMNS))
    for c in ("value", "ci_low", "ci_high", "min_detectable"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(np.float64)
    for c in ("metric", "direction", "ci_method", "reading", "note"):
        frame[c] = frame[c].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
        frame[c] = frame[c].astype(object)
    frame["n"] = frame["n"].astype(object)
    return frame


# --------------------------------------------------------------------------- #
# audit()
# --------------------------------------------------------------------------- #
def audit(
    attr: Any,
    task: Any,
    *,
    attr_pred: Any = None,
    task_pred: Any = None,
    attr_train: Any = None,
    task_train: Any = None,
    attr_val_scores: Any = None,
    task_val_scores: Any = None,
    intersect: Any = None,
    sample_weight: Any = None,
    captions: Any = None,
    features: Any = None,
    config: AuditConfig | None = None,
    **keywords: Any,
) -> Report:
    r"""Compute every applicable bias and bias-amplification metric, with confidence intervals.

    The metric families are the registered report sections
    (``biasamp.report.section_builders()``), in order: decision thresholds (when
    validation scores are given), BiasAmp→ A→T / T→A, BiasAmp_MALS,
    Multi_MALS / Multi→ (multi-label tasks), the seven group fairness metrics,
    DPA and leakage amplification (when ``biasamp.predictability`` is
    available). A family runs when its inputs are present; the others are
    listed as skipped with what they need.

    Parameters
    ----------
    attr : labels of shape (n,) or (n, K_A), or mapping of str -> labels of shape (n,)
        Test ground truth of the protected attribute A (any input kind of
        :ref:`def-inputs`). A mapping ``{"race": race, "sex": sex}`` audits
        each attribute with the same task, predictions and options, in one
        report whose section keys and titles carry the attribute
        (``"fairness[race]"``, "Group fairness — race"); ``attr_pred``,
        ``attr_train`` and ``attr_val_scores`` are then mappings with (some
        of) the same keys, or None.
    task : labels of shape (n,) or (n, K_T)
        Test ground truth of the task T.
    attr_pred, task_pred : labels, optional
        The model's predictions on the test set: hard 0/1 (or class names), or
        probabilities. With ``*_val_scores`` they are scores to threshold.
    attr_train, task_train : labels, optional
        Training ground truth (both or neither). Without them the test ground
        truth supplies the training statistics, and the report says so.
    attr_val_scores, task_val_scores : array-like, optional
        Validation scores: the test scores ``*_pred`` are turned into hard
        predictions with per-label thresholds that make the validation
        positive rate equal the training positive rate
        (:func:`~biasamp.calibrate_thresholds`, Wang & Russakovsky 2021 §3.2).
        Needs a multi-label (2-D) or binary 0/1 label.
    intersect : list of tuples of str, optional
        Intersectional groups, with ``attr`` a mapping: ``[("race", "sex")]``
        adds the attribute ``"race x sex"`` whose groups are the observed
        combinations (``"race=Black, sex=Male"``), audited like the others.
    sample_weight : array-like of shape (n,), optional
        Non-negative weight of every test row: every count of the count-based
        sections becomes a weighted count and the bootstrap resamples rows
        with their weights (:ref:`def-weights`); DPA and LA ignore weights
        and say so.
    config : AuditConfig, optional
        Every option below in one object (:class:`~biasamp.report.AuditConfig`,
        its defaults when None); options given as keywords replace those of
        ``config``.
    **keywords
        The options of :class:`~biasamp.report.AuditConfig`, by name
        (checked before any work; an unknown name is a ``TypeError``):
    sections : iterable of str, optional
        Keys of the sections to compute (default: all); see
        ``biasamp.report.section_builders()``.
    exclude : iterable of str
        Keys of sections not to compute (e.g. ``["dpa", "leakage"]``).
    n_boot : int, default 1000
        Bootstrap replicates for the count-based metrics (multinomial
        resampling of the count tables, :func:`~biasamp.bootstrap`); 0: no
        interval.
    n_boot_multi : int, optional
        Replicates for the multi-attribute section (default: ``n_boot``).
    level : float, default 0.95
        Confidence level of every interval.
    ci_method : {"auto", "percentile", "basic", "bca", "band"}, default "auto"
        Interval method of the count-based sections (see
        :func:`~biasamp.bootstrap`): ``"auto"`` takes a simultaneous band for
        the statistics built from maxima/minima/absolute values (valid at 0)
        and BCa for the smooth ones.
    min_effect : float or dict, default 0.01
        The smallest effect that matters (the metrics' units; a mapping
        metric -> number, ``"*"`` for the others): an interval holding 0 whose
        minimum detectable effect is above it reads *too small to tell*.
    random_state : int or None, default 0
        Seed; each section derives its own seed from it, so a section's
        numbers do not depend on which other sections run.
    attacker : "auto", "tabular", "mlp_es", "mlp", "logistic" or estimator, default "auto"
        Attacker of DPA and LA (:func:`~biasamp.dpa`). ``"auto"``: per
        direction, the tabular (Bayes-optimal) attacker when the attacker's
        input is discrete with well-filled cells, else the two-layer MLP with
        early stopping; the section notes say which ran and why.
    n_iter : int, default 10
        Iterations of DPA and LA.
    combinations, max_size, min_support
        Candidate combinations of the multi-attribute metrics
        (:func:`~biasamp.multi_bias_amp`). ``min_support`` (default 10, where
        :func:`~biasamp.multi_bias_amp` takes 1) counts the training rows that
        contain a combination (the test rows when no training set is given): a
        combination seen once or twice has bias scores that move in steps of
        1/2, so it would fill the top-combination charts with noise.
    top_k : int, default 10
        Rows of the "top contributors" tables and charts.
    title : str
        Report title.
    names : dict, optional
        Display names of the inputs, e.g. ``{"attr": "gender", "task":
        "objects"}``, and ``"source"`` (where the data came from).
    progress : bool or None
        ``None``: progress bars on stderr when it is a terminal, otherwise a
        plain progress line every 10 s; ``True``: bars; ``False``: nothing.
    errors : {"report", "raise"}, default "report"
        ``"report"``: a section whose computation fails is kept with
        ``status="error"`` and the error message; ``"raise"``: re-raise.
    average, threshold, soft, min_group_size, include_small_groups, reference_group, tolerance
        Options of the group fairness section, as in
        :func:`~biasamp.fairness_metrics`: the positive class of a binary task
        or the mean over classes, how probabilities are counted, the small
        groups (flagged, left out of the headline), the reference group and
        the tolerance of the disparity ratios (four-fifths rule).
    pos_label : object, optional
        The positive class of a binary task. ``None``: 1/``True`` when it is a
        class; otherwise the fairness section averages over both classes and
        says so (pass ``pos_label`` to report one class).
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value (:ref:`def-missing`): raise naming the
        argument and rows, drop them (training and test rows separately), or
        (``"group"``) make a missing protected attribute its own group
        ``"missing"`` (a missing value elsewhere is then an error naming its
        argument, as with ``"raise"``). The number of
        rows affected is in the report's ``inputs`` and every section's notes.
    captions : DataFrame or mapping of str -> sequence of str, optional
        Image captions, one row per test row, in the columns of
        ``biasamp.captioning.CAPTION_COLUMNS``: ``caption_pred`` (the
        model's caption), ``caption`` or ``caption_1``, ``caption_2``, ...
        (human captions, optional) and ``split`` (``train`` / ``val``: the
        attackers' training and scored images, optional). Adds the
        captioning section (LIC, DBAC, caption gender statistics;
        docs/captioning.md); without it the section is left out.
    features : DataFrame, optional
        One row per test row: the columns on which the subgroup scan
        (:func:`biasamp.scan`, docs/scan.md) looks for where the statistic
        lives (``scan_statistic``, by default BiasAmp→ A→T when task
        predictions are given, else T→A); without it the section is left out.

    Returns
    -------
    Report

    Raises
    ------
    ValueError
        Missing test ground truth, arguments of different lengths, only one
        of ``attr_train``/``task_train``, an unknown section key, bad
        calibration input, predictions that share no class with their
        ground truth (string labels ``"yes"``/``"no"`` and integer
        predictions 0/1: both class sets are named), or every section that
        ran failed (each section's error is listed; the exception's
        ``report`` attribute holds the report of the failed sections).

    See Also
    --------
    Report : rendering as text, JSON and HTML.
    biasamp.report.register_section : add a metric family to the report.

    Notes
    -----
    Intervals: :func:`~biasamp.bootstrap` over the test instances for the
    count-based metrics (BiasAmp→, BiasAmp_MALS, Multi_MALS/Multi→, fairness:
    the table of distinct rows is resampled; ``ci_method="auto"``: BCa for the
    smooth metrics, a simultaneous max-t band for those built from maxima,
    minima or absolute values, valid at 0), t intervals over the iterations
    and a bootstrap of the rows for DPA and LA, each with its own p-value and minimum detectable effect; the
    tests of no effect (fairness per class, BiasAmp→ per pair; Holm) in the
    sections' tables. A signed amplification metric is read as
    "amplified" when its interval lies above 0, "reduced" below 0; a fairness
    metric "disparity" and a multi-attribute mean :math:`|\Delta|`
    "distorted" when it lies above 0; "no evidence" otherwise, or "too small
    to tell" when the minimum detectable effect (``min_detectable``) is above
    ``min_effect`` (:ref:`def-readings`). The p-value beside an interval is
    the interval's own (``p < 1 - level`` exactly when it excludes 0); the
    per-pair and per-class tests are in the sections' tables (a note says
    "mixed" when an amplification interval holds 0 while single pairs differ).

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021.
    .. [2] J. Zhao, T. Wang, M. Yatskar, V. Ordonez, K.-W. Chang. "Men Also Like
       Shopping". EMNLP 2017.
    .. [3] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023.
    .. [4] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical Study
       of Fixed-Seed Training". NeurIPS 2021.
    .. [5] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure bias
       amplification in classification datasets". NeurIPS 2025.
    .. [6] T. Wang et al. "Balanced Datasets Are Not Enough". ICCV 2019.

    Examples
    --------
    >>> from biasamp.datasets import make_amplification_demo
    >>> from biasamp.report import audit
    >>> d = make_amplification_demo(n_train=2000, n_test=1000)
    >>> rep = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred,
    ...             attr_train=d.attr_train, task_train=d.task_train,
    ...             n_boot=200, n_boot_multi=20, n_iter=3, progress=False)
    >>> row = rep.table.query("metric == 'BiasAmp->' and direction == 'A->T'").iloc[0]
    >>> bool(row.ci_low > 0), row.reading
    (True, 'amplified')
    """
    # every option before any work: a bad value is one named error, not a report of failed sections
    config = AuditConfig.of(config, keywords, "audit")
    try:
        shape: tuple[int, ...] = tuple(np.shape(task)) if task is not None else ()
    except (ValueError, TypeError):  # ragged: the label layer names the problem
        shape = ()
    if len(shape) == 2:  # the guard of the command line: an absurd task width is refused before any work
        check_task_count(shape[1], getattr(task, "columns", ()))
    if isinstance(attr, Mapping) or intersect is not None:  # several attributes: one audit each, merged
        return _computed(audit_attributes(
            attr, task, intersect=intersect, attr_pred=attr_pred, task_pred=task_pred, attr_train=attr_train,
            task_train=task_train, attr_val_scores=attr_val_scores, task_val_scores=task_val_scores,
            sample_weight=sample_weight, captions=captions, features=features, config=config, audit=audit))
    chosen = _chosen_builders(config.sections, config.exclude, config.errors)
    inp = _prepare(attr, task, attr_pred, task_pred, attr_train, task_train, attr_val_scores, task_val_scores,
                   sample_weight=sample_weight, missing=config.missing)
    inp.captions = _caption_inputs(captions, inp)
    inp.features = _feature_inputs(features, inp)
    # before any work: an attribute with few rows per level (an identifier?) is said up front, not after minutes
    names = config.names or {}
    few = level_size_warning(inp.attr, names.get("attr") or getattr(inp.attr, "name", None) or "attr",
                             config.min_group_size)
    if few is not None:
        from biasamp.exceptions import SmallGroupWarning

        warnings.warn(few, SmallGroupWarning, stacklevel=2)
    report = _build_report(inp, config, chosen)
    if few is not None:
        report.inputs["warnings"] = [few]
    return _computed(report)


def _computed(report: Report) -> Report:
    """``report`` when a section was computed (or none ran); :class:`NothingComputedError` listing each error."""
    failed = [s for s in report.sections if s.status == "error"]
    if failed and not any(s.status == "ok" for s in report.sections):
        raise NothingComputedError("audit: no metric could be computed, every section failed:\n"
                                   + "\n".join(f"  {s.title}: {s.message}" for s in failed), report)
    return report


def _chosen_builders(sections: Iterable[str] | None, exclude: Iterable[str], errors: str) -> list[SectionBuilder]:
    """The builders :func:`audit` runs, in report order (ValueError for unknown keys or ``errors``)."""
    if errors not in ("report", "raise"):
        raise ValueError(f"errors must be 'report' or 'raise', got {errors!r}")
    builders = section_builders()
    known = [b.key for b in builders]
    wanted = set(known if sections is None else sections)
    unknown = (wanted | set(exclude)) - set(known)
    if unknown:
        raise ValueError(f"unknown section(s) {sorted(unknown)}; available: {known}")
    wanted -= set(exclude)
    return [b for b in builders if b.key in wanted]


def _build_report(inp: AuditInputs, opt: AuditConfig, chosen: Sequence[SectionBuilder],
                  unread: Mapping[str, str] | None = None) -> Report:
    """Run the ``chosen`` builders on ``inp`` and assemble the :class:`Report` (the core of :func:`audit`).

    A streamed audit calls it with precomputed results in ``inp.results``,
    and with ``unread``: the sections whose inputs the data holds but the
    stream does not read, by key, with the message saying so (such a
    section is listed as skipped, never silently left out).
    A section computed from the held rows although they are only a sample of
    the test rows (``inp.n_rows < inp.n``: DPA and LA in a streamed audit)
    says so in a note.
    """
    out = []
    names, errors = opt.names or {}, opt.errors
    bar = progress_bar(chosen, desc="audit", progress=opt.progress, unit="sections")
    for b in bar:
        bar.set_postfix_str(b.key)
        section = Section(b.key, b.title, b.citation, b.how_to_read)
        if not b.applicable(inp):
            reason = (unread or {}).get(b.key)
            if b.omit_when_skipped and reason is None:
                continue
            section.status, section.message = "skipped", reason or f"not computed: needs {b.needs}"
            out.append(section)
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                data = b.compute(inp, opt)
                summary = finish_summary(data.summary, opt)  # readings that need the options (min_effect, level)
            except Exception as exc:
                if errors == "raise":
                    raise
                section.status, section.message = "error", f"{type(exc).__name__}: {exc}"
                out.append(section)
                continue
        section.summary = _summary_frame(summary)
        section.tables = dict(data.tables)
        section.figures = list(data.figures)
        notes = _rows_notes(inp) + list(data.notes)
        if b.key not in inp.results and inp.n_rows < inp.n:
            notes.append(f"computed on a uniform random sample of {inp.n_rows:,} of the {inp.n:,} test rows "
                         "(a streamed audit holds only this sample in memory)")
        for w in caught:
            msg = f"{w.category.__name__}: {w.message}"
            if _not_the_sections(w) or msg in notes:
                continue
            notes.append(msg)
        section.notes = notes
        out.append(section)
    from biasamp._core.version import __version__

    return Report(out, _describe(inp, names), opt.report_options(), title=opt.title, version=__version__,
                  source=names.get("source", ""))


def _not_the_sections(w: warnings.WarningMessage) -> bool:
    """Whether a warning caught while a section computed says nothing about its computation: a deprecation, or
    what the interpreter and the worker pools emit when they collect an earlier object's resources (an unclosed
    file, a worker process's pipe), at whatever moment the garbage collector runs."""
    if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, ResourceWarning)):
        return True
    return "joblib" in pathlib.PurePath(str(w.filename)).parts


# --------------------------------------------------------------------------- #
# the report
# --------------------------------------------------------------------------- #
#: the terms the terminal table may use, explained under it when they appear (the HTML page has the same words)
LEGEND = (
    # (term, what in the table calls for it: a word in a cell, or a reading, "p" for an "n/a" p cell), text
    ("BCa", "BCa", "bias-corrected and accelerated bootstrap interval (for smooth metrics)"),
    ("max-t band", "max-t band", "interval from a simultaneous band on the parts of a max/min/absolute-value "
                                 "metric; valid when the true value is 0"),
    ("Holm", "Holm", "the per-pair / per-class p-values in the sections' tables, adjusted for testing many "
                     "classes or pairs"),
    ("p", "p:", "the interval's own p-value (its inversion: p < 1 - level exactly when the interval excludes 0); "
                "the per-pair / per-class tests are in the sections' tables"),
    ("p n/a", "p", "this statistic has no p-value (its interval is not of a kind that inverts to one, or there "
                   "is no interval): its interval gives the reading"),
    ("MDE", "MDE", "minimum detectable effect: the smallest |effect| this sample detects at this level with 80% "
                   "power (from the interval's standard error)"),
    ("too small to tell", "reading:too small to tell", "the interval holds 0, but the MDE is above the smallest "
                                                       "effect that matters (min_effect, default 0.01): the sample "
                                                       "could not have seen it"),
    ("distorted", "reading:distorted", "a mean |Delta| whose interval lies above 0: the model changes the "
                                       "training associations, in one direction or the other (the raw row gives "
                                       "the sign)"),
    ("mixed", "mixed:", "(a note) the interval holds 0 but single pairs differ in the per-pair test: "
                        "amplifying and reducing pairs cancel"),
    ("not measurable", "reading:not measurable", "every correlation sign is 0 (balanced data): BiasAmp-> is 0 "
                                                 "by construction"),
    ("small effect", "small effect", "the interval excludes 0 but the effect is below min_effect (default "
                                     "0.01): significant, not necessarily large"),
    ("BA", "metric:BA", "Qian et al.'s 'bias amplification', a fairness gap (the largest group's share of "
                        "predictions minus its share of positives), unrelated to BiasAmp->"),
    ("Psi_D, Psi_M", "Psi_D", "DPA's attacker quality on the data and on the model's predictions"),
    ("inv_ce", "inv_ce", "DPA's default attacker quality, 1 / cross-entropy of the attacker's predictions "
                         "(higher = more predictable)"),
    ("lambda_D, lambda_M", "lambda_D", "LA's attacker accuracy on the data and on the model's predictions"),
)


def _legend(rows: list, methods: list) -> list:
    """The LEGEND entries the table's ``rows`` (metric, dir, value, CI, MDE, p, reading, note) and ``methods`` use."""
    text = " ".join(" ".join(r) for r in rows) + " " + " ".join(methods) + " Holm"
    out = []
    for term, cue, what in LEGEND:
        kind, _, word = cue.partition(":")
        if cue == "p":
            used = any(r[5] == "n/a" for r in rows)
        elif cue == "p:":
            used = any(r[5] not in ("", "n/a") for r in rows)
        elif cue == "MDE":
            used = any(r[4] for r in rows)
        elif kind == "reading" and word:
            used = any(r[6] == word for r in rows)
        elif kind == "metric" and word:
            used = any(r[0] == word for r in rows)
        else:
            used = cue in text
        if used:
            out.append((term, what))
    return out


#: longest list of class names a header line shows
_MAX_LISTED = 200


def _listed(values: Any, limit: int = _MAX_LISTED) -> str:
    """``['a', 'b', ...]`` cut to about ``limit`` characters, saying how many there are when cut."""
    values = list(values or [])
    shown: list[str] = []
    used = 0
    for v in values:
        text = repr(v) if isinstance(v, str) else str(v)
        if shown and used + len(text) + 2 > limit:
            break
        shown.append(text)
        used += len(text) + 2
    if len(shown) == len(values):
        return "[" + ", ".join(shown) + "]"
    return "[" + ", ".join(shown) + f", ... ({len(values):,} in all)]"


def _cell_lines(text: str, width: int) -> list:
    """A table cell narrower than :func:`_wrapped`'s 20 characters, wrapped between words."""
    import textwrap

    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def _fmt_value(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return signed(v, digits)


def _fmt_mde(v: Any, digits: int = 4) -> str:
    """A minimum detectable effect (a size, >= 0): ``0.0123``; blank when there is none."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    return signed(v, digits).lstrip("+")


@dataclass(eq=False)
class Report:
    """The result of :func:`audit`: a list of sections, one per metric family.

    Attributes
    ----------
    sections : list of Section
    inputs : dict
        Description of the inputs (sizes, classes, whether predictions were
        soft, where the training statistics came from, calibration).
    options : dict
        The options the metrics were computed with.
    title : str
    version : str
        biasamp version that produced the report.
    source : str
        Where the data came from (e.g. the file names), for the reader.

    Notes
    -----
    There is no single ``value``: a report holds every metric family that
    applied to the inputs. ``to_frame()`` (the same as :attr:`table`) has
    one row per headline number.

    References
    ----------
    .. [1] A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021.
    .. [2] J. Zhao, T. Wang, M. Yatskar, V. Ordonez, K.-W. Chang. "Men Also Like
       Shopping". EMNLP 2017.
    .. [3] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023.
    .. [4] S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical Study
       of Fixed-Seed Training". NeurIPS 2021.
    .. [5] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure bias
       amplification in classification datasets". NeurIPS 2025.
    .. [6] T. Wang et al. "Balanced Datasets Are Not Enough". ICCV 2019.

    Examples
    --------
    >>> from biasamp import audit
    >>> from biasamp.datasets import make_amplification_demo
    >>> d = make_amplification_demo(n_train=2000, n_test=1000)
    >>> rep = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train,
    ...             task_train=d.task_train, exclude=["dpa", "leakage", "multi"], n_boot=50, progress=False)
    >>> [(s.key, s.status) for s in rep.sections]  # differential fairness needs a binary task
    [('calibration', 'skipped'), ('directional', 'ok'), ('mals', 'ok'), ('fairness', 'ok'), ('differential', 'skipped')]
    >>> rep.to_frame().query("section == 'directional'")[["metric", "direction"]].values.tolist()
    [['BiasAmp->', 'A->T'], ['BiasAmp->', 'T->A']]
    """

    sections: list
    inputs: dict
    options: dict
    title: str = "biasamp audit"
    version: str = ""
    source: str = ""

    # ---- access ----------------------------------------------------------- #
    def section(self, key: str) -> Section:
        """The section with this key (``ValueError``, also a ``KeyError``, when there is none)."""
        for s in self.sections:
            if s.key == key:
                return s
        raise UnknownKeyError(f"no section {key!r}; sections: {[s.key for s in self.sections]}")

    @property
    def table(self) -> pd.DataFrame:
        """Every headline number: one row per (section, metric, direction), columns ``section`` + SUMMARY_COLUMNS."""
        parts = [s.summary.assign(section=s.key) for s in self.sections if s.status == "ok" and len(s.summary)]
        if not parts:
            return _summary_frame([]).assign(section=pd.Series(dtype=object))[["section", *SUMMARY_COLUMNS]]
        return pd.concat(parts, ignore_index=True)[["section", *SUMMARY_COLUMNS]]

    def to_frame(self) -> pd.DataFrame:
        """Every headline number, one row per (section, metric, direction): :attr:`table`."""
        return self.table

    @property
    def tables(self) -> dict:
        """Every detail table, keyed ``"<section>/<table>"``."""
        return {f"{s.key}/{name}": t for s in self.sections for name, t in s.tables.items()}

    def overview(self) -> Overview:
        """Each family's headline reading side by side, per attribute, and why they disagree.

        Read from the report's summary rows and the tables its sections keep
        (nothing is recomputed, so a report read back with :meth:`from_json`
        and a streamed audit give the same overview). ``disagree``: one
        headline reads *amplified* and another *reduced* (no other reading
        is a direction); ``explanation``: sentences computed from the data
        (the base-rate shift between labels and predictions, the difference
        against the ratio of the groups' rates, predictability, which
        predictions each measure reads); ``pairs``: the pairs that
        contribute most, with their intervals (docs/report.md, "Overview").

        Returns
        -------
        Overview
            Prints as text; ``to_frame()`` and ``to_dict()``.
        """
        from biasamp.report._overview import report_overview

        return report_overview(self)

    # ---- text ------------------------------------------------------------- #
    def summary(self, *, width: int = 100) -> str:
        """The report as a plain-text (ASCII) table for a terminal (one block per attribute when several)."""
        inp = self.inputs
        if "attributes" in inp:  # an audit of several protected attributes: label every block
            return summary_by_attribute(self, width=width)
        lines = [self.title]
        if self.source:
            lines.append(f"data: {self.source}")
        if len(self.table):  # first: what the readings say together, and why they disagree
            from biasamp.report._overview import overview_lines

            lines += ["", *overview_lines(self.overview(), width=width, brief=self._brief), ""]
        n_train = inp.get("n_train")
        classes = list(inp.get("attribute_classes") or [])
        lines.append(
            f"{inp.get('n_test')} test instances"
            + (f", {n_train} training instances" if n_train else ", no training set (test ground truth used)")
            + f"; attribute {inp.get('attribute')} {_listed(classes)}; "
            + f"{len(inp.get('task_classes', []))} task classes ({inp.get('task_kind')})"
        )
        rows_line = rows_used(inp)
        if rows_line:
            lines.append(rows_line)
        lines += [f"warning: {w}" for w in inp.get("warnings", [])]
        lvl = self.options.get("level", DEFAULT_LEVEL)
        lines.append(f"values are fractions (not percentages); CI = {_ci_note(lvl)} confidence interval")
        methods = [m for m in dict.fromkeys(self.table["ci_method"]) if isinstance(m, str) and m]
        if methods:
            lines += _wrapped("CI methods: " + "; ".join(methods) + " (docs/inference.md); p = the interval's own "
                              "p-value; MDE = minimum detectable effect (80% power)", width, rest="  ")
        lines = [w for text in lines for w in (_wrapped(text, width, rest="  ") if len(text) > width else [text])]
        lines.append("")
        head = ("metric", "dir", "value", f"{_ci_note(lvl)} CI", "MDE", "p", "reading", "note")
        rows = []
        table = self.table
        per_row = zip(table.itertuples(index=False), table["ci_low"].isna().to_numpy(),
                      table["value"].notna().to_numpy(), table["p_value"].to_numpy(dtype=np.float64, na_value=np.nan),
                      table["min_detectable"].to_numpy(dtype=np.float64, na_value=np.nan))
        for r, ci_missing, has_value, p_value, mde in per_row:
            ci = "" if ci_missing else f"[{_fmt_value(r.ci_low)}, {_fmt_value(r.ci_high)}]"
            # a blank p would read as missing: "n/a" says the statistic has no test (explained under the table)
            p = ("n/a" if has_value else "") \
                if np.isnan(p_value) else ("<0.001" if p_value < 0.001 else f"{p_value:.3f}")
            rows.append(tuple(terminal(c) for c in (r.metric, r.direction, _fmt_value(r.value), ci, _fmt_mde(mde), p,
                                                    r.reading, r.note)))
        widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
        widths = [min(w, 40) for w in widths[:-1]] + widths[-1:]  # a long name from the data cannot widen the table
        used = sum(widths[:-1]) + 2 * (len(head) - 1)
        # too wide for a note of 20: wrap the reading, then the metric; a repr (one line per row) keeps the
        # reading whole and cuts the note shorter instead
        note_least = 12 if self._brief else 20
        for col, least in ((6, 9), (0, 12)) if not self._brief else ((0, 12),):
            if used + note_least > width and widths[col] > least:
                cut = min(widths[col] - least, used + note_least - width)
                widths[col] -= cut
                used -= cut
        widths[-1] = max(note_least, min(widths[-1], width - used))

        def table_lines(cells):
            # every cell wrapped to its column (between words: a number is never cut), continuation lines below
            cols = [(_wrapped(c, w, rest="") if w >= 20 else _cell_lines(c, w))
                    if len(c) > w else [c] for c, w in zip(cells, widths)]
            if self._brief and len(cols[-1]) > 1:  # one line per row: the note cut between words, never in a number
                cols[-1] = [_wrapped(cells[-1], widths[-1] - 4, rest="")[0] + " ..."]
            return ["  ".join((col[i] if i < len(col) else "").ljust(w) for col, w in zip(cols, widths)).rstrip()
                    for i in range(max(map(len, cols)))]

        lines += table_lines(head)
        lines.append("  ".join("-" * w for w in widths))
        last = None
        for sec_key, row in zip(self.table["section"], rows):
            if last is not None and sec_key != last:
                lines.append("")
            last = sec_key
            lines += table_lines(row)
        if rows and not self._brief:
            legend = _legend(rows, methods)
            if legend:
                lines.append("")
                lines.append("terms:")
                for term, text in legend:
                    lines += _wrapped(f"{term}: {text}", width, indent="  ", rest="    ")
        other = [s for s in self.sections if s.status != "ok"]
        if other:
            lines.append("")
            for s in other:
                lines += _wrapped(f"{s.title}: {s.status} - {s.message}", width, rest="  ")
        notes = [(s.title, n) for s in self.sections if s.status == "ok" for n in s.notes]
        if notes and self._brief:
            lines += ["", f"({len(notes)} notes and the legend of the terms: print(report.summary()))"]
        elif notes:
            lines.append("")
            lines.append("notes:")
            for t, n in notes:
                lines += _wrapped(f"{t}: {n}", width, indent="  ", rest="    ")
        return "\n".join(terminal(line) for line in lines)  # names from the data: no escape sequence

    _brief = False  # __repr__: the table without its legend and notes (a glance in a REPL)

    def __repr__(self) -> str:
        import copy

        brief = copy.copy(self)
        brief._brief = True
        return brief.summary()

    # ---- JSON ------------------------------------------------------------- #
    def to_dict(self) -> dict:
        """A JSON-ready dict following ``biasamp.report.REPORT_JSON_SCHEMA``."""
        return {
            "schema": SCHEMA_ID,
            "biasamp_version": self.version,
            "title": self.title,
            "source": self.source,
            "inputs": to_builtin(self.inputs),
            "options": to_builtin(self.options),
            "overview": self.overview().to_dict(),
            "summary": _table_to_json(self.table),
            "sections": [
                {
                    "key": s.key, "title": s.title, "citation": s.citation, "how_to_read": s.how_to_read,
                    "status": s.status, "message": s.message, "summary": _table_to_json(s.summary),
                    "tables": {name: _table_to_json(t) for name, t in s.tables.items()},
                    "figures": [{"key": f.key, "title": f.title, "kind": f.kind, "data": _table_to_json(f.data),
                                 "caption": f.caption} for f in s.figures],
                    "notes": [str(n) for n in s.notes],
                }
                for s in self.sections
            ],
        }

    def to_json(self, path: str | os.PathLike | None = None, *, indent: int | None = 2) -> str:
        """The report as JSON (NaN written as null); written atomically to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
        if path is not None:
            _write_atomic(path, text)
        return text

    @classmethod
    def from_dict(cls, obj: dict) -> Report:
        """Rebuild a report from :meth:`to_dict` output.

        Raises ``ValueError("not a biasamp report: ...")`` naming the first
        entry that does not follow ``REPORT_JSON_SCHEMA``.
        """
        _check_report_json(obj)
        try:
            return cls._from_checked(obj)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:  # e.g. ragged table rows
            raise ValueError(f"not a biasamp report: {type(exc).__name__}: {exc}") from None

    @classmethod
    def _from_checked(cls, obj: dict) -> Report:
        sections = []
        for s in obj["sections"]:
            summary = _table_from_json(s["summary"])
            sections.append(Section(
                s["key"], s["title"], s["citation"], s["how_to_read"], s["status"], s["message"],
                _summary_frame(summary.to_dict(orient="records")),
                {name: _table_from_json(t) for name, t in s["tables"].items()},
                [FigureSpec(f["key"], f["title"], f["kind"], _table_from_json(f["data"]), f.get("caption", ""))
                 for f in s["figures"]],
                list(s["notes"]),
            ))
        return cls(sections, dict(obj["inputs"]), dict(obj["options"]), title=obj["title"],
                   version=obj["biasamp_version"], source=obj.get("source", ""))

    @classmethod
    def from_json(cls, text: str | bytes) -> Report:
        """Rebuild a report from :meth:`to_json` output (a ``str``, or ``bytes`` in UTF-8/16/32).

        Raises ``ValueError("not a biasamp report: ...")`` for anything else:
        text that is not JSON, JSON of another shape, missing keys; a
        ``TypeError`` when ``text`` is neither ``str`` nor ``bytes``.
        """
        if not isinstance(text, (str, bytes, bytearray)):
            raise TypeError(f"text must be the report's JSON as str or bytes, got {type(text).__name__} "
                            "(Report.from_dict takes a dict)")
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"not a biasamp report: not valid JSON ({exc})") from None
        except RecursionError:
            raise ValueError("not a biasamp report: JSON nested too deeply") from None
        return cls.from_dict(obj)

    # ---- HTML ------------------------------------------------------------- #
    def to_html(self, path: str | os.PathLike | None = None, *, plots: bool = True) -> str | Path:
        """A self-contained HTML page: returned as text, or written atomically to ``path``.

        With ``path``, the page (45 KB to 1 MB: too much for a notebook cell)
        is not returned: the resolved :class:`~pathlib.Path` of the written
        file is. Plots are embedded as inline SVG when matplotlib is installed (the
        ``[plot]`` extra) and ``plots`` is True; otherwise the page holds the
        tables only.
        """
        from biasamp.report._html import render_html

        text = render_html(self, plots=plots)
        if path is not None:
            return _write_atomic(path, text)
        return text

    def _repr_html_(self) -> str:  # Jupyter
        from biasamp.report._html import render_html

        return render_html(self, plots=False, standalone=False)

    # ---- Markdown, LaTeX, model card, MLflow (biasamp.report._export, biasamp.mlflow) ---- #
    def to_markdown(self, path: str | os.PathLike | None = None, *, heading_level: int = 1, details: bool = False,
                    digits: int = 4, max_rows: int = 20) -> str:
        """The report as GitHub-flavoured Markdown; written atomically to ``path`` when given.

        A table of every headline number (value, interval, p-value, reading,
        note), then per family how to read it, the interval methods, notes,
        its per-group tables (those whose name says "group": the group
        fairness rates and counts by group, with base rate, accuracy,
        precision and FNR; differential fairness's groups) and reference;
        ``details=True`` adds the other detail tables. Tables show at most
        ``max_rows`` rows each. ``heading_level`` sets the level of the title
        (2 to embed it in a larger document).
        """
        from biasamp.report._export import render_markdown

        text = render_markdown(self, heading_level=heading_level, details=details, digits=digits,
                               max_rows=max_rows)
        if path is not None:
            _write_atomic(path, text)
        return text

    def to_latex(self, path: str | os.PathLike | None = None, *, caption: str | None = None,
                 label: str | None = "tab:biasamp", digits: int = 3, table_env: bool = True) -> str:
        r"""The headline numbers as a LaTeX ``booktabs`` table, with their confidence intervals.

        One row per headline number (value, interval, p-value, reading),
        grouped by family; the interval methods are table notes. Needs
        ``\usepackage{booktabs}``. ``table_env=False`` returns the bare
        ``tabular``; ``caption`` is LaTeX (the default is made from the
        title). Written atomically to ``path`` when given.
        """
        from biasamp.report._export import render_latex

        text = render_latex(self, caption=caption, label=label, digits=digits, table_env=table_env)
        if path is not None:
            _write_atomic(path, text)
        return text

    def to_model_card(self, path: str | os.PathLike | None = None, *, model_name: str | None = None,
                      task_type: str = "classification", task_name: str | None = None,
                      dataset_name: str | None = None, dataset_type: str | None = None,
                      dataset_split: str | None = "test", dataset_config: str | None = None,
                      tags: Sequence[str] = ()) -> str:
        """A Hugging Face model card (``README.md``): ``model-index`` metadata and a Markdown section.

        The YAML front matter holds the ``model-index`` of the Hub: one result
        (``task_type``, the dataset) with one metric per headline number,
        ``type: biasamp/<key>``, its value, and its interval and reading in its
        name. The body is :meth:`to_markdown` under "Bias and bias
        amplification". Defaults: the report's title as ``model_name``, its
        source as ``dataset_name``. ``huggingface_hub.ModelCard`` and
        ``metadata_load`` read it; written atomically to ``path`` when given.
        """
        from biasamp.report._export import render_model_card

        text = render_model_card(self, model_name=model_name, task_type=task_type, task_name=task_name,
                                 dataset_name=dataset_name, dataset_type=dataset_type, dataset_split=dataset_split,
                                 dataset_config=dataset_config, tags=tags)
        if path is not None:
            _write_atomic(path, text)
        return text

    def log_to_mlflow(self, **kwargs: Any) -> str:
        """Log the headline numbers and intervals as MLflow metrics, the HTML and JSON as artifacts.

        See :func:`biasamp.mlflow.log_report` for the options; returns the run id.
        """
        from biasamp.report._mlflow import log_report

        return log_report(self, **kwargs)
