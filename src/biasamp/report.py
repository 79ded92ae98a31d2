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

This module belongs to the presentation layer: the metric modules never
import it.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._progress import progress_bar, progress_mode
from ._results import to_builtin, top_rows
from .exceptions import UndefinedPairWarning, UnknownKeyError
from .labels import _as_array, _check_finite, _from_tensor

__all__ = [
    "SUMMARY_COLUMNS",
    "AuditInputs",
    "AuditOptions",
    "FigureSpec",
    "Report",
    "Section",
    "SectionBuilder",
    "SectionData",
    "SectionResult",
    "audit",
    "register_section",
    "section_builders",
]

SCHEMA_ID = "biasamp.report/1"
SUMMARY_COLUMNS = ("metric", "direction", "value", "ci_low", "ci_high", "ci_method", "p_value", "n", "reading",
                   "note")
"""Columns of every section's summary table (and of :attr:`Report.table`, which adds ``section``)."""


# --------------------------------------------------------------------------- #
# data model
# --------------------------------------------------------------------------- #
@dataclass(eq=False)
class FigureSpec:
    """A plot, described by its data (rendered to SVG only by the HTML layer).

    Attributes
    ----------
    key : str
        Identifier, unique within its section.
    title : str
    kind : {"hbar", "grouped_bar", "strip", "line"}
        ``"hbar"``: horizontal bars of ``value`` per ``label``, one panel per
        ``facet``, sorted by ``|value|``; ``"grouped_bar"``: bars of ``value``
        per ``x``, one bar per ``hue``, one panel per ``facet``; ``"strip"``:
        the distribution of ``value`` per ``label`` (points and their mean);
        ``"line"``: ``value`` against ``x``, one line per ``label``, with a
        ``low``/``high`` band where given (curves, :mod:`biasamp.curves`).
    data : pandas.DataFrame
        Long-format data with the columns the kind needs. Optional columns,
        used where present:

        * ``facet``: one panel per value, each with its own value axis (so
          A->T and T->A are each readable whatever their scale);
        * ``low``, ``high``: an interval of ``value`` (error bars on
          ``"hbar"`` and ``"grouped_bar"``, a band on ``"line"``);
        * ``n``: a size: the group size of a ``"grouped_bar"`` hue, shown in
          the legend (``"female (n=1,204)"``, a range where it varies), or
          the support of an ``"hbar"`` bar, shown after its label;
        * ``small`` (bool): a group (or pair) below the minimum size: drawn
          pale and hatched, and marked "small" in the legend or label;
        * ``effect``: ``"grouped_bar"`` only: how much the ``x`` category
          matters (e.g. its metric gap), which ranks the categories.

        Charts stay readable at hundreds of categories: a ``"grouped_bar"``
        panel shows at most 12 ``x`` (fewer with many hues), those of largest
        ``|effect|``, or without ``effect`` of largest gap (max - min of
        ``value`` over the hues not flagged ``small``); ``"hbar"`` shows the
        25 largest ``|value|`` per panel, ``"strip"`` the 20 largest
        ``|mean|``, ``"line"`` the 8 largest ``max |value|``. What is left
        out (how many, the largest effect among them) is written on the
        figure and appended to the caption in the HTML.
    caption : str
    """

    key: str
    title: str
    kind: str
    data: pd.DataFrame
    caption: str = ""


@dataclass(eq=False)
class SectionData:
    """What a builder's ``compute`` returns; :func:`audit` adds the builder's metadata.

    Attributes
    ----------
    summary : list of dict
        One dict per headline number, with keys among :data:`SUMMARY_COLUMNS`.
    tables : dict of str -> pandas.DataFrame
        Detail tables (per pair, per class, per iteration, ...).
    figures : list of FigureSpec
    notes : list of str
    """

    summary: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)


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
        accumulators' Poisson bootstrap); None: no interval.
    notes : list of str
        Caveats for the section's notes (e.g. why there is no interval).
    """

    compute: Callable[[], Any]
    ci: Any = None
    ci_method: str = ""
    notes: list = field(default_factory=list)
    bootstrap: Any = None


@dataclass(eq=False)
class AuditInputs:
    """The validated inputs every section builder sees.

    Label attributes hold what the user passed (numpy arrays, pandas objects)
    with predictions possibly replaced by calibrated hard predictions;
    ``thresholds`` holds the calibration tables (label -> threshold) by role.

    A streamed audit holds only a uniform random sample of the test rows in
    the label attributes (``n_rows`` of the ``n`` rows counted; no training
    rows): the count-based families come as :class:`SectionResult` objects
    in ``results`` (by section key), and ``description`` holds the entries
    of :attr:`Report.inputs` found while streaming (class lists, soft
    predictions, sizes), which the held rows alone would not give.
    """

    attr: Any
    task: Any
    attr_pred: Any = None
    task_pred: Any = None
    attr_train: Any = None
    task_train: Any = None
    n: int = 0
    n_train: int | None = None
    thresholds: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    description: dict = field(default_factory=dict)
    weight: Any = None
    rows: Any = None

    @property
    def has_train(self) -> bool:
        """Whether training labels were given (held, or counted by a streamed audit: ``n_train``)."""
        return (self.attr_train is not None and self.task_train is not None) or self.n_train is not None

    @property
    def n_rows(self) -> int:
        """Number of test rows held in the label attributes (``n``, except in a streamed audit)."""
        return _length(self.attr)

    @property
    def task_is_multilabel(self) -> bool:
        """True for a 2-D task with at least two label columns."""
        return np.ndim(self.task) == 2 and np.shape(self.task)[1] >= 2

    def is_soft(self, role: str) -> bool:
        """Whether the prediction ``role`` ("attr_pred" / "task_pred") holds probabilities."""
        x = getattr(self, role)
        if x is None:
            return False
        arr = _numeric(x)
        return arr is not None and bool(np.any((arr != 0) & (arr != 1)))


@dataclass(eq=False)
class AuditOptions:
    """Options of :func:`audit` passed to every section builder (see :func:`audit`)."""

    n_boot: int = 1000
    n_boot_multi: int | None = None
    level: float = 0.95
    ci_method: str = "auto"
    random_state: int | None = 0
    attacker: Any = "auto"
    dpa_quality: str = "inv_ce"
    leakage_quality: str = "accuracy"
    n_iter: int = 10
    combinations: str = "observed"
    min_size: int = 1
    max_size: int | None = None
    min_support: int = 1
    top_k: int = 10
    progress: bool = False
    fairness: dict = field(default_factory=dict)
    missing: str = "raise"

    def seed(self, key: str) -> int | None:
        """A seed for section ``key``, derived from ``random_state`` (None stays None)."""
        if self.random_state is None:
            return None
        ss = np.random.SeedSequence([int(self.random_state), zlib.crc32(key.encode())])
        return int(ss.generate_state(1)[0])

    def to_dict(self) -> dict:
        out = {k: to_builtin(v) for k, v in self.__dict__.items() if k != "progress"}
        if not isinstance(out["attacker"], (str, type(None))):
            out["attacker"] = type(self.attacker).__name__
        return out


@dataclass(frozen=True, eq=False)
class SectionBuilder:
    """A metric family of the report.

    Attributes
    ----------
    key : str
        Stable identifier (JSON key, HTML anchor).
    title : str
    citation : str
        The paper the metric comes from.
    how_to_read : str
        A few sentences for the reader of the report.
    needs : str
        What the inputs must contain (shown when the section is skipped).
    applicable : callable
        ``applicable(inputs: AuditInputs) -> bool``.
    compute : callable
        ``compute(inputs: AuditInputs, options: AuditOptions) -> SectionData``.
    order : float
        Position in the report (ascending).
    """

    key: str
    title: str
    citation: str
    how_to_read: str
    needs: str
    applicable: Callable[[AuditInputs], bool]
    compute: Callable[[AuditInputs, AuditOptions], SectionData]
    order: float = 100.0


_BUILDERS: dict[str, SectionBuilder] = {}


def register_section(
    key: str,
    *,
    title: str,
    citation: str,
    how_to_read: str,
    needs: str,
    applicable: Callable[[AuditInputs], bool],
    order: float = 100.0,
) -> Callable:
    """Decorator registering ``compute(inputs, options) -> SectionData`` as a report section.

    Registering a builder is all it takes to add a metric family to
    :func:`~biasamp.audit` and to every rendering of :class:`~biasamp.Report`; re-registering a
    key replaces the builder.

    Parameters
    ----------
    key, title, citation, how_to_read, needs, applicable, order
        The section's key, its title, citation, "how to read" text and what it
        needs, a predicate ``applicable(inputs)``, and its place in the
        report (sections are sorted by ``order``); see
        ``biasamp.report.SectionBuilder``.

    Returns
    -------
    callable
        The decorator; it returns ``compute`` unchanged.

    Examples
    --------
    >>> from biasamp.report import SectionData, register_section, section_builders
    >>> @register_section("example", title="Example", citation="-", how_to_read="-",
    ...                   needs="nothing", applicable=lambda inputs: False, order=999)
    ... def _example(inputs, options):
    ...     return SectionData()
    >>> "example" in [b.key for b in section_builders()]
    True
    >>> from biasamp.report import _BUILDERS; del _BUILDERS["example"]  # clean up
    """

    def deco(compute: Callable[[AuditInputs, AuditOptions], SectionData]) -> Callable:
        _BUILDERS[key] = SectionBuilder(key, title, citation, how_to_read, needs, applicable, compute, order)
        return compute

    return deco


def section_builders() -> list[SectionBuilder]:
    """The registered section builders, in report order."""
    return sorted(_BUILDERS.values(), key=lambda b: (b.order, b.key))


# --------------------------------------------------------------------------- #
# helpers for builders
# --------------------------------------------------------------------------- #
def _summary_frame(rows: Sequence[dict]) -> pd.DataFrame:
    frame = pd.DataFrame([{c: r.get(c) for c in SUMMARY_COLUMNS} for r in rows], columns=list(SUMMARY_COLUMNS))
    for c in ("value", "ci_low", "ci_high"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(np.float64)
    for c in ("metric", "direction", "ci_method", "reading", "note"):
        frame[c] = frame[c].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
        frame[c] = frame[c].astype(object)
    frame["n"] = frame["n"].astype(object)
    return frame


_READINGS = {
    # kind -> (reading when the interval lies above 0, below 0)
    "amp": ("amplified", "reduced"),
    "disparity": ("disparity", None),
    "distortion": ("distorted", None),
}


def _reading(ci: tuple | None, kind: str = "amp") -> str:
    """Reading of a headline number from its interval (``kind``: amp, disparity, distortion)."""
    if ci is None or ci[0] is None or ci[1] is None or not np.isfinite(ci[0]) or not np.isfinite(ci[1]):
        return ""
    above, below = _READINGS[kind]
    if ci[0] > 0:
        return above
    if below is not None and ci[1] < 0:
        return below
    return "no evidence"


def _amp_reading(ci: tuple | None) -> str:
    """Reading of a signed amplification metric from its interval."""
    return _reading(ci, "amp")


def _row(metric, direction, value, ci, ci_method, n, note="", reading=None, p_value=None, kind="amp") -> dict:
    low, high = (None, None) if ci is None else (float(ci[0]), float(ci[1]))
    if reading is None:
        reading = _reading(ci, kind)
        if reading == "no evidence" and kind == "amp" and p_value is not None and np.isfinite(p_value) \
                and p_value < 0.05:
            # the mean's interval holds 0, yet the per-pair test finds pairs that differ: they offset each other
            reading = "mixed"
            mixed = ("mixed: the mean's interval includes 0, but some pairs differ significantly (per-pair test, "
                     "p < 0.05): amplification in some pairs offsets reduction in others; see the per-pair table")
            note = f"{note}; {mixed}" if note else mixed
    if low is not None and low == high:
        zero = ("interval of width 0: every bootstrap replicate gives the same value (e.g. the predictions "
                "equal the ground truth on every pair, or the predicted attribute is a function of the "
                "predicted task)")
        note = f"{note}; {zero}" if note else zero
    return {
        "metric": metric, "direction": direction, "value": None if value is None else float(value),
        "ci_low": low, "ci_high": high, "ci_method": ci_method if ci is not None else "",
        "p_value": None if p_value is None or not np.isfinite(p_value) else float(p_value),
        "n": None if n is None else int(n), "reading": reading, "note": note,
    }


def _boot_row(boot: Any, name: str, metric: str, direction: str, value: float, n: int, note: str = "",
              kind: str = "amp") -> dict:
    """A summary row whose interval, method and p-value come from a :class:`~biasamp.BootstrapResult`."""
    if boot is None or name not in boot.ci:
        return _row(metric, direction, value, None, "", n, note, kind=kind)
    method = f"{boot.methods.get(name, boot.ci_method)} bootstrap ({boot.n_boot})"
    return _row(metric, direction, value, boot.ci[name], method, n, note, p_value=boot.p_value.get(name), kind=kind)


def _with_intervals(table: pd.DataFrame, boot: Any, name: str, keys: list) -> pd.DataFrame:
    """``table`` with the bootstrap's per-unit simultaneous interval and p-values merged in."""
    if boot is None or name not in boot.tables:
        return table
    extra = boot.tables[name]
    cols = [c for c in ("ci_low", "ci_high", "p_value", "p_adjusted") if c in extra.columns]
    merged = table.merge(extra[keys + cols], on=keys, how="left")
    merged.attrs.update(extra.attrs)
    return merged


def _numeric(x: Any) -> np.ndarray | None:
    """``x`` as a float array, or None when it holds non-numbers (class names)."""
    try:
        arr = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x)
    except Exception:  # noqa: BLE001 - exotic containers: treat as non-numeric
        return None
    if arr.dtype.kind not in "biuf":
        return None
    return arr.astype(np.float64, copy=False)


def _take(x: Any, idx: np.ndarray) -> Any:
    if x is None:
        return None
    if isinstance(x, (pd.Series, pd.DataFrame)):
        return x.iloc[idx].reset_index(drop=True)
    return np.asarray(x)[idx]


def _length(x: Any) -> int:
    return len(x) if hasattr(x, "__len__") else int(np.shape(x)[0])


def _to_host(x: Any) -> Any:
    """Lists become arrays and torch tensors numpy arrays; pandas and numpy pass unchanged."""
    if x is None or isinstance(x, (pd.Series, pd.DataFrame, np.ndarray)):
        return x
    return np.asarray(_from_tensor(x))


def _combo_label(c: Any) -> str:
    if isinstance(c, (tuple, list)):
        return " + ".join(str(v) for v in c)
    return str(c)


def _ci_note(level: float) -> str:
    return f"{round(100 * level)}%"


def _computed(inp: AuditInputs, key: str, compute: Callable[[], Any],
              boot: Callable[[], Any]) -> tuple[Any, Any, list]:
    """``(result, bootstrap result or None, notes)`` of a count-based family.

    From the rows held: ``compute()``, then ``boot()`` (a
    :class:`~biasamp.BootstrapResult`; a ``ValueError`` there becomes a note);
    or, when the family was computed elsewhere (``inp.results[key]``, a
    streamed audit), from that :class:`SectionResult`.
    """
    given = inp.results.get(key)
    if given is not None:
        return given.compute(), given.bootstrap, list(given.notes)
    res = compute()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedPairWarning)
            return res, boot(), []
    except ValueError as exc:
        return res, None, [f"no bootstrap interval: {exc}"]


def _boot_kwargs(opt: AuditOptions, key: str, n_boot: int | None = None) -> dict:
    return {"n_boot": opt.n_boot if n_boot is None else n_boot, "level": opt.level, "ci_method": opt.ci_method,
            "random_state": opt.seed(key)}


# --------------------------------------------------------------------------- #
# the section builders
# --------------------------------------------------------------------------- #
_CITE_WANG = ('A. Wang, O. Russakovsky. "Directional Bias Amplification". ICML 2021, Eq. 2.')
_CITE_ZHAO = ('J. Zhao, T. Wang, M. Yatskar, V. Ordonez, K.-W. Chang. "Men Also Like Shopping: Reducing '
              'Gender Bias Amplification using Corpus-level Constraints". EMNLP 2017.')
_CITE_MULTI = ('D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry: Multi-Attribute Bias '
               'Amplification". ICML 2023, Eq. 1-3.')
_CITE_QIAN = ('S. Qian et al. "Are My Deep Learning Systems Fair? An Empirical Study of Fixed-Seed '
              'Training". NeurIPS 2021, App. A.')
_CITE_DPA = ('B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure bias amplification in '
             'classification datasets". NeurIPS 2025, Eq. 1-6.')
_CITE_LA = ('T. Wang, J. Zhao, M. Yatskar, K.-W. Chang, V. Ordonez. "Balanced Datasets Are Not Enough: '
            'Estimating and Mitigating Gender Bias in Deep Image Representations". ICCV 2019.')
_CITE_CAL = _CITE_WANG.replace("Eq. 2.", "§3.2.")


def _has_pred(inp: AuditInputs) -> bool:
    return inp.attr_pred is not None or inp.task_pred is not None


@register_section(
    "calibration",
    title="Decision thresholds",
    citation=_CITE_CAL,
    how_to_read=(
        "Soft predictions were turned into hard ones with one threshold per label, chosen on the "
        "validation scores so that the predicted positive rate equals the training positive rate. "
        "Bias amplification is sensitive to the threshold; calibrated thresholds keep a model from "
        "looking biased merely because it predicts a label too often or too rarely."
    ),
    needs="validation scores (attr_val_scores / task_val_scores)",
    applicable=lambda inp: bool(inp.thresholds),
    order=5,
)
def _calibration_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    tables = {}
    for role, th in inp.thresholds.items():
        tables[f"thresholds {role}"] = pd.DataFrame({"label": [str(k) for k in th.index],
                                                    "threshold": th.to_numpy(dtype=np.float64)})
    return SectionData(tables=tables)


@register_section(
    "directional",
    title="Directional bias amplification BiasAmp->",
    citation=_CITE_WANG,
    how_to_read=(
        "A->T: does the protected attribute drive the task predictions more than it drives the "
        "ground truth? T->A: does the task drive the attribute predictions more? Each is the mean "
        "over (attribute, task) pairs of y_at * (P_pred - P_true), with y_at = +1 for pairs "
        "positively correlated in training and -1 for negatively correlated ones. Positive: the "
        "model amplifies the training correlations; 0: it reproduces them; negative: it weakens "
        "them. Averages can hide opposite-signed pairs: read the per-pair chart."
    ),
    needs="attr, task and attr_pred and/or task_pred",
    applicable=_has_pred,
    order=10,
)
def _directional_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    from .cooccurrence import bias_amp_directional
    from .stats import bootstrap

    kw = {"attr_pred": inp.attr_pred, "task_pred": inp.task_pred, "attr_train": inp.attr_train,
          "task_train": inp.task_train, **_weight_kwargs(inp)}
    res, boot, notes = _computed(
        inp, "directional", lambda: bias_amp_directional(inp.attr, inp.task, **kw),
        lambda: bootstrap(bias_amp_directional, inp.attr, inp.task, **kw, **_boot_kwargs(opt, "directional")))
    out = SectionData(notes=notes)
    if res.train_source == "test":
        out.notes.append("no training labels were given: the correlation signs y_at come from the test ground truth")
    bars = []
    for d in (res.a_to_t, res.t_to_a):
        if d is None:
            continue
        if getattr(d, "undefined", False):
            out.summary.append(_row("BiasAmp->", d.direction, None, None, None, inp.n,
                                    f"undefined: {d.reason}", reading="undefined"))
            continue
        extra = f", {d.n_undefined} undefined" if d.n_undefined else ""
        out.summary.append(_boot_row(boot, d.direction, "BiasAmp->", d.direction, d.value, inp.n,
                                     f"{d.n_pairs} pairs{extra}"))
        pairs = _with_intervals(d.pairs, boot, d.direction, ["attr", "task"])
        out.tables[f"pairs {d.direction}"] = pairs
        top = top_rows(pairs, "contribution", opt.top_k)
        # the instances the pair's conditional rate rests on: members of a (A->T) or positives of t (T->A)
        n_cond = top["n_attr" if d.direction == "A->T" else "n_task"].to_numpy(dtype=np.float64) \
            if {"n_attr", "n_task"} <= set(top.columns) else np.full(len(top), np.nan)
        small_n = int(opt.fairness.get("min_group_size", 30))
        bar = pd.DataFrame({
            "facet": d.direction,
            "label": [f"{a} / {t}" for a, t in zip(top["attr"], top["task"])],
            "value": top["contribution"].to_numpy(dtype=np.float64),
            "n": n_cond,
            "small": np.nan_to_num(n_cond, nan=np.inf) < small_n,
        })
        if "ci_low" in top.columns:  # y * delta: the interval of delta, flipped where y = -1
            y = top["y"].to_numpy(dtype=np.float64)
            lo, hi = top["ci_low"].to_numpy(dtype=np.float64), top["ci_high"].to_numpy(dtype=np.float64)
            bar["low"] = np.where(y < 0, -hi, y * lo)
            bar["high"] = np.where(y < 0, -lo, y * hi)
        bars.append(bar)
    if boot is not None and any(d in boot.p_value and boot.p_value[d] is not None for d in ("A->T", "T->A")):
        out.notes.append(
            f"p-values: {boot.test_methods.get('A->T') or boot.test_methods.get('T->A')}; the headline p is the "
            f"smallest {boot.p_adjust.upper() if boot.p_adjust == 'bh' else 'Holm'}-adjusted per-pair p-value "
            "(global null: no pair differs); per-pair intervals are simultaneous")
    if bars:
        out.figures.append(FigureSpec(
            "pairs", "Per-pair amplification y_at * delta, sorted by magnitude", "hbar",
            pd.concat(bars, ignore_index=True),
            f"The {opt.top_k} (attribute / task) pairs contributing most in each direction, with simultaneous "
            f"{_ci_note(opt.level)} intervals; bars right of 0 amplify the training correlation, bars left of 0 "
            "weaken it. Each direction has its own axis. n: the test instances the pair's rate rests on (members "
            "of the group for A->T, positives of the task for T->A); hatched when fewer than "
            f"{int(opt.fairness.get('min_group_size', 30))}."))
    return out


@register_section(
    "mals",
    title="BiasAmp_MALS",
    citation=_CITE_ZHAO,
    how_to_read=(
        "For each task leaning towards a group in training (bias_train > 1/|A|), how much more "
        "often the model predicts that group together with the task than the training data does "
        "(bias_pred - bias_train), averaged over tasks. Positive: amplification. It mixes both "
        "directions and ignores negatively correlated pairs; prefer BiasAmp-> for a diagnosis."
    ),
    needs="attr, task, attr_pred and task_pred",
    applicable=lambda inp: inp.attr_pred is not None and inp.task_pred is not None,
    order=20,
)
def _mals_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    from .cooccurrence import bias_amp_mals
    from .stats import bootstrap

    out = SectionData()
    attr_train, task_train = (inp.attr_train, inp.task_train) if inp.has_train else (inp.attr, inp.task)
    if not inp.has_train:
        out.notes.append("no training labels were given: bias_train comes from the test ground truth")
    wk = _weight_kwargs(inp)
    if wk and not inp.has_train:  # the test rows stand in for the training rows, with their weights
        wk["train_sample_weight"] = inp.weight
    res, boot, notes = _computed(
        inp, "mals", lambda: bias_amp_mals(attr_train, task_train, attr_pred=inp.attr_pred, task_pred=inp.task_pred,
                                           **wk),
        lambda: bootstrap(bias_amp_mals, attr_train, task_train, attr_pred=inp.attr_pred, task_pred=inp.task_pred,
                          **wk, **_boot_kwargs(opt, "mals")))
    out.notes.extend(notes)
    extra = f", {res.n_undefined} undefined pairs" if res.n_undefined else ""
    out.summary.append(_boot_row(boot, "MALS", "BiasAmp_MALS", "", res.value, inp.n, f"{res.n_tasks} tasks{extra}"))
    out.tables["pairs"] = _with_intervals(res.pairs, boot, "MALS", ["attr", "task"])
    top = res.top(opt.top_k)
    top = top[top["contribution"] != 0]
    if len(top):
        out.figures.append(FigureSpec(
            "pairs", "Per-pair bias_pred - bias_train (pairs with bias_train > 1/|A|)", "hbar",
            pd.DataFrame({"facet": "MALS", "label": [f"{a} / {t}" for a, t in zip(top["attr"], top["task"])],
                          "value": top["contribution"].to_numpy(dtype=np.float64)})))
    return out


def _multi_kwargs(inp: AuditInputs, opt: AuditOptions) -> dict:
    return dict(
        attr_pred=inp.attr_pred, task_pred=inp.task_pred,
        attr_train=inp.attr_train if inp.has_train else None,
        task_train=inp.task_train if inp.has_train else None,
        combinations=opt.combinations, min_size=opt.min_size, max_size=opt.max_size, min_support=opt.min_support,
        **_weight_kwargs(inp),
    )


def _weight_kwargs(inp: AuditInputs) -> dict:
    """``sample_weight`` for the count-based sections when the audit is weighted (the test rows' weights)."""
    return {} if inp.weight is None else {"sample_weight": inp.weight}


_MULTI_PARTS = (("mals", "Multi_MALS", "", "Multi_MALS"), ("g_to_m", "Multi->", "G->M", "G->M"),
                ("m_to_g", "Multi->", "M->G", "M->G"))


def _multi_parts(res: Any) -> list:
    return [(attr, metric, direction, stat, getattr(res, attr)) for attr, metric, direction, stat in _MULTI_PARTS
            if getattr(res, attr) is not None]


@register_section(
    "multi",
    title="Multi-attribute bias amplification",
    citation=_CITE_MULTI,
    how_to_read=(
        "Bias can hide in combinations of tasks (e.g. 'kitchen + dog'). Multi_MALS and Multi-> "
        "(G->M: the attribute drives predicted task combinations; M->G: task combinations drive the "
        "predicted attribute) average |Delta| over (attr, combination) pairs, so they are >= 0 and measure how much "
        "the model distorts the training associations in either sense; 'raw' keeps the sign "
        "(positive = amplification) and the variance shows how uneven the distortion is. "
        "The table lists the combinations contributing most."
    ),
    needs="a multi-label task (two or more task columns) and predictions",
    applicable=lambda inp: inp.task_is_multilabel and _has_pred(inp),
    order=30,
)
def _multi_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    from .multiattribute import multi_bias_amp
    from .stats import bootstrap

    kw = _multi_kwargs(inp, opt)
    res, boot, notes = _computed(
        inp, "multi", lambda: multi_bias_amp(inp.attr, inp.task, **kw),
        lambda: bootstrap(multi_bias_amp, inp.attr, inp.task, **kw,
                          **_boot_kwargs(opt, "multi", opt.n_boot_multi)))
    out = SectionData(notes=notes)
    tops = []
    for _, metric, direction, stat, m in _multi_parts(res):
        note = f"mean |Delta|; var {m.variance:.3g}, {len(res.combinations)} combinations"
        out.summary.append(_boot_row(boot, stat, metric, direction, m.value, inp.n, note, kind="distortion"))
        raw_dir = f"{direction} raw".strip()
        out.summary.append(_boot_row(boot, f"{stat} raw", metric, raw_dir, m.raw, inp.n,
                                     "mean y*Delta (signed)" if direction else "signed mean Delta"))
        name = f"{metric} {direction}".strip()
        col = "contribution" if m.metric == "Multi_MALS" else "delta"
        table = m.table
        if boot is not None and stat in boot.tables:
            extra = boot.tables[stat][["ci_low", "ci_high"]]
            table = table.assign(ci_low=extra["ci_low"].to_numpy(), ci_high=extra["ci_high"].to_numpy())
        top = top_rows(table, col, opt.top_k)
        out.tables[f"top {name}"] = top
        support = next((c for c in ("n_comb", "n_train_comb") if c in top.columns), None)
        n_comb = top[support].to_numpy(dtype=np.float64) if support else np.full(len(top), np.nan)
        bar = pd.DataFrame({
            "facet": name,
            "label": [f"{g}: {_combo_label(c)}" for g, c in zip(top["attr"], top["combination"])],
            "value": top[col].to_numpy(dtype=np.float64),
            "n": n_comb,
            "small": np.nan_to_num(n_comb, nan=np.inf) < int(opt.fairness.get("min_group_size", 30)),
        })
        if "ci_low" in top.columns:
            bar["low"], bar["high"] = top["ci_low"].to_numpy(np.float64), top["ci_high"].to_numpy(np.float64)
        tops.append(bar)
    if tops:
        out.figures.append(FigureSpec("combinations", "Top (attr, combination) pairs by |Delta|", "hbar",
                                      pd.concat(tops, ignore_index=True),
                                      f"With simultaneous {_ci_note(opt.level)} intervals; each metric has its "
                                      "own axis. n: test instances (training instances for Multi_MALS) with the "
                                      "combination; hatched when fewer than "
                                      f"{int(opt.fairness.get('min_group_size', 30))} (raise min_support to "
                                      "leave rare combinations out)."))
    if getattr(res, "train_source", "train") == "test":
        out.notes.append("no training labels were given: training statistics come from the test ground truth")
    out.notes.append("intervals of the |Delta| means come from a simultaneous band on the per-(attr, combination) "
                     "Delta, so they are valid when nothing is distorted (0); the raw rows read amplified/reduced")
    return out


_FAIR_READ = {
    "DP": "max - min PPR over groups",
    "DI": "1 - min/max PPR over groups",
    "SPSF": "group-weighted |PPR - PPR_g|",
    "FPSF": "group-weighted |FPR - FPR_g|",
    "EOFP": "max - min FPR over groups",
    "EOTP": "max - min TPR over groups",
    "BA": "prediction vs positive share, largest group",
}


def _has_class(labels: Any, value: Any) -> bool:
    """Whether ``value`` (1 or True) is among the classes of 1-D labels (1, 1.0 and True alike)."""
    u = pd.unique(np.asarray(labels).ravel())
    return any(not isinstance(c, str) and c == value for c in u)


@register_section(
    "fairness",
    title="Group fairness",
    citation=_CITE_QIAN,
    how_to_read=(
        "Gaps between protected groups in the model's task predictions, per class (one-vs-rest): for the "
        "positive class of a binary task, averaged over classes otherwise (the notes say which). All are "
        ">= 0; 0 means the groups are treated alike. DP/DI/SPSF compare "
        "positive prediction rates, EOFP/FPSF false-positive rates, EOTP true-positive rates, BA the "
        "share of predictions going to the majority group versus its share of positives. Unlike the "
        "amplification metrics they do not compare with the training data: a gap can be inherited "
        "from the data rather than amplified."
    ),
    needs="attr, task and task_pred",
    applicable=lambda inp: inp.task_pred is not None,
    order=40,
)
def _fairness_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    from .fairness import fairness_metrics
    from .stats import bootstrap

    fopt = dict(opt.fairness)
    fopt["tolerance"] = tuple(fopt.get("tolerance", (0.8, 1.25)))
    first = []
    if "pos_label" not in fopt and fopt.get("average", "auto") == "auto" and inp.task_pred is not None \
            and np.ndim(inp.task) == 1 and len(pd.unique(np.asarray(_to_host(inp.task)).ravel())) == 2 \
            and not _has_class(inp.task, 1):
        fopt["average"] = "macro"
        first.append("The task's two classes include neither 1 nor True: the headline is the mean over both "
                     "classes; pass pos_label (--pos-label) to report one class")
    if inp.weight is not None:
        fopt["sample_weight"] = inp.weight
    res, boot, notes = _computed(
        inp, "fairness", lambda: fairness_metrics(inp.task, inp.task_pred, sensitive_features=inp.attr, **fopt),
        lambda: bootstrap(fairness_metrics, inp.task, inp.task_pred, sensitive_features=inp.attr, **fopt,
                          **_boot_kwargs(opt, "fairness")))
    notes = first + notes
    out = SectionData(notes=notes)
    if res.settings is not None:
        out.notes[:0] = [line[0].upper() + line[1:] for line in res.settings.describe()]
    which = (f", class {res.settings.pos_label!r}" if res.settings is not None and res.settings.average == "binary"
             else ", mean over classes")
    for name, value in res.overall.items():
        if name in res.undefined_reasons:
            out.summary.append(_row(name, "", None, None, None, inp.n,
                                    f"undefined: {res.undefined_reasons[name]}", reading="undefined"))
            continue
        extra = f"; {res.n_undefined[name]} classes undefined" if res.n_undefined.get(name) else ""
        out.summary.append(_boot_row(boot, name, name, "", value, inp.n,
                                     _FAIR_READ.get(name, "") + which + extra, kind="disparity"))
    if boot is not None and boot.test_methods:
        out.notes.append(
            "p-values: per class, a test that the prediction is independent of the group (G-test; Fisher's "
            "exact test or a Monte-Carlo test with fixed margins when an expected count is below 5); the "
            "headline p is the smallest Holm-adjusted class p-value. BA has no test. Intervals of these "
            "max/min/absolute-value metrics come from a simultaneous band on the signed group differences, "
            "so they are valid when there is no disparity (0)")
        for name, table in boot.tables.items():
            out.tables[f"{name} by class"] = table
    if "DI" in res.overall and not isinstance(res.overall["DI"], pd.Series) and "DI" not in res.undefined_reasons:
        ratio = res.disparate_impact_ratio
        out.notes.append(
            f"Disparate-impact ratio min/max PPR = {ratio:.3f}: "
            + ("meets" if ratio >= 0.8 else "fails") + " the four-fifths rule (>= 0.8); DI above is 1 - this ratio")
    if res.disparities is not None:
        d = res.disparities
        off = d[d["reading"].isin(["below tolerance", "above tolerance"])]
        tol = res.settings.tolerance
        out.notes.append(
            f"Disparities against the reference group {res.settings.reference_group!r}: {len(off)} of "
            f"{int((d['reading'] != 'reference').sum())} group rates outside the tolerance "
            f"[{tol[0]:g}, {tol[1]:g}]" + (": " + ", ".join(
                f"{r.rate} of {r.group!s} ({r.ratio:.2f}{', small group' if r.small else ''})"
                for r in off.head(8).itertuples()) if len(off) else ""))
        out.tables["disparities"] = d
    if res.group_view is not None:
        out.tables["rates by group"] = res.group_view.by_group
    out.tables["by class"] = res.by_class
    out.tables["by group"] = res.by_group
    fig = _rates_figure(res, opt.level)
    if fig is not None:
        out.figures.append(fig)
    return out


_RATE_PARTS = {"ppr": ("predicted_positive", "n"), "tpr": ("true_positives", "positives"),
               "fpr": ("false_positives", "negatives")}


def _rates_figure(res: Any, level: float) -> FigureSpec | None:
    """Each headline class's PPR/TPR/FPR per group, with Wilson intervals, group sizes and small-group flags.

    ``effect`` is the class's gap (max - min over the headline groups) of that rate, which the chart
    ranks classes by when there are many.
    """
    from scipy.stats import norm

    bg = res.by_group
    if res.settings is not None:
        bg = bg[bg["class"].isin(list(res.settings.headline_classes))]
    z = float(norm.ppf(0.5 + level / 2))
    parts = []
    for rate, (num_col, den_col) in _RATE_PARTS.items():
        if rate not in bg.columns:
            continue
        num, den = bg[num_col].to_numpy(dtype=np.float64), bg[den_col].to_numpy(dtype=np.float64)
        low, high = _wilson(num, den, z)
        value = bg[rate].to_numpy(dtype=np.float64)
        frame = pd.DataFrame({"facet": rate.upper(), "x": bg["class"].astype(str).to_numpy(),
                              "hue": bg["group"].astype(str).to_numpy(), "value": value, "low": low, "high": high,
                              "n": bg["n"].to_numpy(), "small": bg["small"].to_numpy(dtype=bool)})
        kept = frame[bg["in_headline"].to_numpy(dtype=bool)]
        gap = kept.groupby("x")["value"].agg(lambda v: float(np.nanmax(v) - np.nanmin(v)) if v.notna().any() else 0.0)
        frame["effect"] = frame["x"].map(gap).fillna(0.0).to_numpy(dtype=np.float64)
        parts.append(frame)
    if not parts:
        return None
    return FigureSpec("rates", "Rates per class and group", "grouped_bar", pd.concat(parts, ignore_index=True),
                      f"PPR: positive prediction rate; TPR: true-positive rate; FPR: false-positive rate; bars: "
                      f"{level:.0%} Wilson intervals of each rate; n: group size; small groups (fewer than "
                      f"{res.settings.min_group_size if res.settings is not None else 30} members) are flagged and "
                      "left out of the headline.")


def _wilson(num: np.ndarray, den: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of num/den (NaN where den is 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = num / den
        centre = (p + z * z / (2 * den)) / (1 + z * z / den)
        half = z * np.sqrt(p * (1 - p) / den + z * z / (4 * den * den)) / (1 + z * z / den)
    ok = den > 0
    return np.where(ok, np.clip(centre - half, 0, 1), np.nan), np.where(ok, np.clip(centre + half, 0, 1), np.nan)


def _predictability():
    try:
        from . import predictability
    except ImportError:
        return None
    return predictability


@register_section(
    "dpa",
    title="Directional predictability amplification DPA",
    citation=_CITE_DPA,
    how_to_read=(
        "An attacker learns to predict the task from the attribute (A->T) or the attribute from the "
        "task (T->A), once on the ground truth (Psi_D, with labels randomly flipped down to the "
        "model's accuracy) and once on the model's predictions (Psi_M). DPA = (Psi_M - Psi_D) / "
        "(Psi_M + Psi_D) lies in [-1, 1]: positive means the predictions are more predictable "
        "from (more entangled with) the other variable than the data is. The interval is over "
        "the repeated iterations (random flips, splits and attacker seeds)."
    ),
    needs="attr, task, attr_pred and/or task_pred, and the biasamp.predictability module",
    applicable=lambda inp: _has_pred(inp) and hasattr(_predictability(), "dpa"),
    order=50,
)
def _dpa_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    pred = _predictability()
    attacker = opt.attacker  # "auto" is resolved per direction by dpa, which records which attacker ran and why
    res = pred.dpa(inp.attr, inp.task, attr_pred=inp.attr_pred, task_pred=inp.task_pred, attacker=attacker,
                   quality=opt.dpa_quality, n_iter=opt.n_iter, random_state=opt.seed("dpa"),
                   **_optional_kwargs(pred.dpa, level=opt.level, progress=opt.progress))
    out = SectionData()
    if inp.weight is not None:
        out.notes.append("sample weights are not used here: the attackers are fitted and scored on unweighted rows")
    strips = []
    for d in (getattr(res, "a_to_t", None), getattr(res, "t_to_a", None)):
        if d is None:
            continue
        ci = getattr(d, "ci", None)
        note = f"{getattr(d, 'attacker', '') or attacker} attacker, {getattr(res, 'quality', opt.dpa_quality)}"
        if getattr(d, "attacker_reason", ""):
            out.notes.append(f"DPA {d.direction} attacker {d.attacker}: {d.attacker_reason}")
        if hasattr(d, "psi_data"):
            note += f"; Psi_D {d.psi_data:.4g}, Psi_M {d.psi_model:.4g}"
        out.summary.append(_row("DPA", d.direction, d.value, ci, f"t over {opt.n_iter} iterations", inp.n_rows,
                                note))
        it = d.iterations
        out.tables[f"iterations {d.direction}"] = it
        col = "dpa" if "dpa" in it.columns else it.columns[-1]
        strips.append(pd.DataFrame({"label": d.direction, "value": it[col].to_numpy(dtype=np.float64)}))
    if strips:
        out.figures.append(FigureSpec("iterations", "DPA per iteration", "strip", pd.concat(strips, ignore_index=True),
                                      "One point per iteration; the bar is the mean."))
    return out


@register_section(
    "leakage",
    title="Leakage amplification LA",
    citation=_CITE_LA,
    how_to_read=(
        "An attacker predicts the protected attribute from the task labels: lambda_D from the "
        "ground truth (flipped down to the model's accuracy), lambda_M from the model's predictions. "
        "LA = lambda_M - lambda_D (accuracy by default): positive means the predictions leak more "
        "about the attribute than the data does. It is an absolute, non-directional change; DPA is "
        "its bounded, directional successor."
    ),
    needs="attr, task and task_pred, and the biasamp.predictability module",
    applicable=lambda inp: inp.task_pred is not None and hasattr(_predictability(), "leakage_amplification"),
    order=60,
)
def _leakage_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    pred = _predictability()
    attacker = opt.attacker  # "auto" is resolved by leakage_amplification, which records its choice
    res = pred.leakage_amplification(
        inp.attr, inp.task, task_pred=inp.task_pred, attacker=attacker, quality=opt.leakage_quality, n_iter=opt.n_iter,
        random_state=opt.seed("leakage"),
        **_optional_kwargs(pred.leakage_amplification, level=opt.level, progress=opt.progress))
    note = f"{getattr(res, 'attacker', attacker)} attacker, {getattr(res, 'quality', opt.leakage_quality)}"
    if hasattr(res, "lambda_data"):
        note += f"; lambda_D {res.lambda_data:.4g}, lambda_M {res.lambda_model:.4g}"
    out = SectionData()
    if inp.weight is not None:
        out.notes.append("sample weights are not used here: the attackers are fitted and scored on unweighted rows")
    if getattr(res, "attacker_reason", ""):
        out.notes.append(f"LA attacker {res.attacker}: {res.attacker_reason}")
    out.summary.append(_row("LA", "", res.value, getattr(res, "ci", None), f"t over {opt.n_iter} iterations",
                            inp.n_rows, note))
    out.tables["iterations"] = res.iterations
    col = "leakage" if "leakage" in res.iterations.columns else res.iterations.columns[-1]
    out.figures.append(FigureSpec("iterations", "LA per iteration", "strip",
                                  pd.DataFrame({"label": "LA", "value": res.iterations[col].to_numpy(np.float64)})))
    return out


def _optional_kwargs(func: Callable, **kwargs: Any) -> dict:
    """The keyword arguments ``func`` accepts (the predictability API may not have them all)."""
    import inspect

    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in kwargs.items() if k in params}


# --------------------------------------------------------------------------- #
# input preparation
# --------------------------------------------------------------------------- #
def _calibrate(role: str, val_scores: Any, test_scores: Any, labels: Any) -> tuple[Any, pd.Series]:
    """Hard test predictions from scores, thresholds calibrated on validation scores (:ref:`def-calibration`)."""
    from .calibration import calibrate_thresholds

    if test_scores is None:
        raise ValueError(f"{role}_val_scores was given but not {role}_pred (the test scores to threshold)")
    val_scores, test_scores, labels = _to_host(val_scores), _to_host(test_scores), _to_host(labels)
    if np.ndim(labels) == 1:
        if np.ndim(val_scores) != 1 or np.ndim(test_scores) != 1:
            raise ValueError(f"{role}: a 1-D label needs 1-D scores (the probability of class 1) to calibrate")
        values = set(pd.unique(np.asarray(labels)).tolist())
        if not values <= {0, 1}:
            raise ValueError(f"{role}: threshold calibration needs a binary 0/1 or a multi-label {role}")
        lab = np.asarray(labels, dtype=np.float64)
        th = calibrate_thresholds(np.asarray(val_scores, dtype=np.float64), rates=[lab.mean()])
        hard = th.apply(np.asarray(test_scores, dtype=np.float64).reshape(-1, 1)).reshape(-1)
        if isinstance(test_scores, pd.Series):
            hard = pd.Series(hard, name=test_scores.name)
        return hard, th.thresholds
    th = calibrate_thresholds(val_scores, val_labels=labels)
    hard = th.apply(test_scores)
    if isinstance(labels, pd.DataFrame):
        hard = pd.DataFrame(np.asarray(hard), columns=labels.columns)
    return hard, th.thresholds


def _prepare(attr, task, attr_pred, task_pred, attr_train, task_train, attr_val_scores, task_val_scores, *,
             sample_weight=None, missing="raise"):
    from ._rows import select_rows

    if attr is None or task is None:
        raise ValueError("audit needs the test ground truth of both the attribute (attr) and the task (task)")
    if (attr_train is None) != (task_train is None):
        raise ValueError("give both attr_train and task_train, or neither")
    labels = {"attr": attr, "task": task, "attr_pred": attr_pred, "task_pred": task_pred,
              "attr_train": attr_train, "task_train": task_train}
    # every label argument through the input layer before any section runs: a bad argument is one
    # named error, not a failure inside each section (missing values are checked after the row selection)
    for name, x in (*labels.items(), ("attr_val_scores", attr_val_scores), ("task_val_scores", task_val_scores)):
        if x is not None:
            arr = _as_array(x, name)[0]
            if missing == "raise" or name.endswith("val_scores"):
                _check_finite(arr, name)
    labels = {k: _to_host(v) for k, v in labels.items()}
    n = _length(labels["attr"])
    for name in ("task", "attr_pred", "task_pred"):
        x = labels[name]
        if x is not None and _length(x) != n:
            raise ValueError(f"{name} has {_length(x)} rows but attr has {n}: every test argument needs one row "
                             "per test instance")
    # rows: missing values and zero weights, test and training rows each on their own
    rows = (None, None)
    if missing != "raise" or sample_weight is not None:
        test, weight, test_rows = select_rows({k: labels[k] for k in ("attr", "task", "attr_pred", "task_pred")},
                                              missing=missing, group_args=("attr",), sample_weight=sample_weight)
        labels.update(test)
        train_rows = None
        if labels["attr_train"] is not None:
            train, _, train_rows = select_rows({k: labels[k] for k in ("attr_train", "task_train")},
                                               missing=missing, group_args=("attr_train",))
            labels.update(train)
        rows = (test_rows, train_rows)
        for name, x in labels.items():
            if x is not None:
                _check_finite(_as_array(x, name)[0], name)
    else:
        weight = None
    attr, task, attr_pred, task_pred, attr_train, task_train = labels.values()
    n = _length(attr)
    n_train = None
    if attr_train is not None:
        n_train = _length(attr_train)
        if _length(task_train) != n_train:
            raise ValueError(f"task_train has {_length(task_train)} rows but attr_train has {n_train}")
    thresholds = {}
    if task_val_scores is not None:
        task_pred, thresholds["task"] = _calibrate("task", task_val_scores, task_pred,
                                                   task_train if task_train is not None else task)
    if attr_val_scores is not None:
        attr_pred, thresholds["attr"] = _calibrate("attr", attr_val_scores, attr_pred,
                                                   attr_train if attr_train is not None else attr)
    return AuditInputs(attr, task, attr_pred, task_pred, attr_train, task_train, n, n_train, thresholds,
                       weight=weight, rows=rows)


def _classes(x: Any) -> list:
    if isinstance(x, pd.DataFrame):
        return [str(c) for c in x.columns]
    if np.ndim(x) == 2:
        return [str(i) for i in range(np.shape(x)[1])]
    return [str(c) for c in sorted(pd.unique(np.asarray(x)).tolist(), key=str)]


def _describe(inp: AuditInputs, names: dict) -> dict:
    """The :attr:`Report.inputs` entries (a streamed audit gives them in ``inp.description``)."""
    if inp.description:
        return dict(inp.description)
    return {
        "n_test": inp.n,
        "n_train": inp.n_train,
        "train_source": "train" if inp.has_train else "test",
        "attribute": names.get("attr") or (getattr(inp.attr, "name", None) or "attr"),
        "attribute_classes": _classes(inp.attr),
        "task": names.get("task") or (getattr(inp.task, "name", None) or "task"),
        "task_classes": _classes(inp.task),
        "task_kind": "multi-label" if np.ndim(inp.task) == 2 else "single-label",
        "attr_pred": None if inp.attr_pred is None else ("soft" if inp.is_soft("attr_pred") else "hard"),
        "task_pred": None if inp.task_pred is None else ("soft" if inp.is_soft("task_pred") else "hard"),
        "calibrated": sorted(inp.thresholds),
        **_rows_entries(inp),
    }


def _rows_entries(inp: AuditInputs) -> dict:
    """Rows dropped or regrouped before the audit (missing values, zero weights), for :attr:`Report.inputs`."""
    out = {"weighted": True} if inp.weight is not None else {}
    if inp.rows is None:
        return out
    for side, rows in zip(("test", "train"), inp.rows):
        if rows is not None and (rows.n_dropped or rows.n_grouped or rows.n_zero_weight):
            out[f"rows_{side}"] = rows.to_dict()
    return out


def _rows_notes(inp: AuditInputs) -> list[str]:
    """The same in words, for every section's notes."""
    out = []
    for side, rows in zip(("test", "training"), inp.rows or ()):
        if rows is not None and (rows.n_dropped or rows.n_grouped or rows.n_zero_weight):
            out.append(f"{side} rows: {rows.describe()} (of {rows.n_rows:,})")
    return out


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
    sections: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    n_boot: int = 1000,
    n_boot_multi: int | None = None,
    level: float = 0.95,
    ci_method: str = "auto",
    random_state: int | None = 0,
    attacker: Any = "auto",
    n_iter: int = 10,
    combinations: str = "observed",
    max_size: int | None = None,
    min_support: int = 1,
    top_k: int = 10,
    title: str = "biasamp audit",
    names: dict | None = None,
    progress: bool | None = None,
    errors: str = "report",
    average: Any = "auto",
    pos_label: Any = None,
    threshold: float = 0.5,
    soft: str = "threshold",
    min_group_size: int = 30,
    include_small_groups: bool = False,
    reference_group: Any = "largest",
    tolerance: Any = (0.8, 1.25),
    sample_weight: Any = None,
    missing: str = "raise",
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
    sections : iterable of str, optional
        Keys of the sections to compute (default: all); see
        ``biasamp.report.section_builders()``.
    exclude : iterable of str
        Keys of sections not to compute (e.g. ``["dpa", "leakage"]``).
    n_boot : int, default 1000
        Bootstrap replicates for the count-based metrics (multinomial
        resampling of the count tables, :func:`~biasamp.bootstrap`).
    n_boot_multi : int, optional
        Replicates for the multi-attribute section (default: ``n_boot``).
    level : float, default 0.95
        Confidence level of every interval.
    ci_method : {"auto", "percentile", "basic", "bca", "band"}, default "auto"
        Interval method of the count-based sections (see
        :func:`~biasamp.bootstrap`): ``"auto"`` takes a simultaneous band for
        the statistics built from maxima/minima/absolute values (valid at 0)
        and BCa for the smooth ones.
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
        (:func:`~biasamp.multi_bias_amp`).
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
    sample_weight : array-like of shape (n,), optional
        Non-negative weight of every test row: every count of the count-based
        sections becomes a weighted count and the bootstrap resamples rows
        with their weights (:ref:`def-weights`); DPA and LA ignore weights
        and say so.
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value (:ref:`def-missing`): raise naming the
        argument and rows, drop them (training and test rows separately), or
        (``"group"``) make a missing protected attribute its own group
        ``"missing"`` (other missing values are then dropped). The number of
        rows affected is in the report's ``inputs`` and every section's notes.

    Returns
    -------
    Report

    Raises
    ------
    ValueError
        Missing test ground truth, arguments of different lengths, only one
        of ``attr_train``/``task_train``, an unknown section key, or bad
        calibration input.

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
    minima or absolute values, valid at 0), t intervals over iterations for
    DPA and LA; p-values of the tests of no effect (fairness per class,
    BiasAmp→ per pair; Holm). A signed amplification metric is read as
    "amplified" when its interval lies above 0, "reduced" below 0; a fairness
    metric "disparity" and a multi-attribute mean :math:`|\Delta|`
    "distorted" when it lies above 0; "no evidence" otherwise.

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
    if isinstance(attr, Mapping) or intersect is not None:  # several attributes: one audit each, merged
        arguments = dict(locals())
        from ._audit_attributes import audit_attributes

        return audit_attributes(**arguments)
    from .stats import _check_level, _check_n_boot
    from ._inference import CI_METHODS
    from ._resample import check_random_state, seed_sequence
    from .multiattribute import _MODES, _check_int

    # every option before any work: a bad value is one named error, not a report of failed sections
    chosen = _chosen_builders(sections, exclude, errors)
    n_boot = _check_n_boot(n_boot)
    if n_boot_multi is not None:
        n_boot_multi = _check_n_boot(n_boot_multi)
    level = _check_level(level)
    if ci_method not in CI_METHODS:
        raise ValueError(f"ci_method must be one of {CI_METHODS}, got {ci_method!r}")
    if not isinstance(check_random_state(random_state), (int, type(None))):  # a Generator etc.: one int seed
        random_state = int(seed_sequence(random_state).generate_state(1)[0])
    n_iter = _check_int(n_iter, "n_iter", 2)  # DPA and LA report an interval over the iterations
    top_k = _check_int(top_k, "top_k", 1)
    min_support = _check_int(min_support, "min_support", 1)
    max_size = _check_int(max_size, "max_size", 1, allow_none=True)
    if combinations not in _MODES:
        raise ValueError(f"combinations must be one of {_MODES}, got {combinations!r}")
    if isinstance(attacker, str) or attacker is None:
        from ._attackers import _ATTACKERS

        if attacker not in _ATTACKERS:
            raise ValueError(f"attacker must be one of {_ATTACKERS} or an estimator instance, got {attacker!r}")
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    if names is not None and not isinstance(names, dict):
        raise TypeError(f"names must be a dict such as {{'attr': 'gender'}}, got {type(names).__name__}")
    fairness = _fairness_options(average=average, pos_label=pos_label, threshold=threshold, soft=soft,
                                 min_group_size=min_group_size, include_small_groups=include_small_groups,
                                 reference_group=reference_group, tolerance=tolerance)
    inp = _prepare(attr, task, attr_pred, task_pred, attr_train, task_train, attr_val_scores, task_val_scores,
                   sample_weight=sample_weight, missing=missing)
    opt = AuditOptions(n_boot=n_boot, n_boot_multi=n_boot_multi, level=level, ci_method=ci_method,
                       random_state=random_state,
                       attacker=attacker, n_iter=n_iter, combinations=combinations, max_size=max_size,
                       min_support=min_support, top_k=top_k, progress=progress_mode(progress),
                       fairness=fairness, missing=missing)
    return _build_report(inp, opt, chosen, title=title, names=names, errors=errors)


def _fairness_options(**options: Any) -> dict:
    """The fairness section's options, checked now (one named error before any work)."""
    from ._fairness_groups import check_tolerance
    from .fairness import AVERAGES, SOFT_CHOICES, _check_min_group_size, _check_threshold

    if options["average"] not in AVERAGES or options["average"] is None:
        raise ValueError(f"average must be 'auto', 'binary' or 'macro' in an audit, got {options['average']!r}")
    if options["soft"] not in SOFT_CHOICES:
        raise ValueError(f"soft must be one of {SOFT_CHOICES}, got {options['soft']!r}")
    _check_threshold(options["threshold"])
    _check_min_group_size(options["min_group_size"])
    check_tolerance(options["tolerance"])
    if not isinstance(options["include_small_groups"], (bool, np.bool_)):
        raise TypeError(f"include_small_groups must be True or False, got {options['include_small_groups']!r}")
    if options["pos_label"] is None:
        del options["pos_label"]
    if isinstance(options["tolerance"], tuple):
        options["tolerance"] = list(options["tolerance"])
    return options


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


def _build_report(inp: AuditInputs, opt: AuditOptions, chosen: Sequence[SectionBuilder], *, title: str,
                  names: dict | None, errors: str) -> Report:
    """Run the ``chosen`` builders on ``inp`` and assemble the :class:`Report` (the core of :func:`audit`).

    A streamed audit calls it with precomputed results in ``inp.results``.
    A section computed from the held rows although they are only a sample of
    the test rows (``inp.n_rows < inp.n``: DPA and LA in a streamed audit)
    says so in a note.
    """
    out = []
    bar = progress_bar(chosen, desc="audit", progress=opt.progress, unit="sections")
    for b in bar:
        bar.set_postfix_str(b.key)
        section = Section(b.key, b.title, b.citation, b.how_to_read)
        if not b.applicable(inp):
            section.status, section.message = "skipped", f"not computed: needs {b.needs}"
            out.append(section)
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                data = b.compute(inp, opt)
            except Exception as exc:
                if errors == "raise":
                    raise
                section.status, section.message = "error", f"{type(exc).__name__}: {exc}"
                out.append(section)
                continue
        section.summary = _summary_frame(data.summary)
        section.tables = dict(data.tables)
        section.figures = list(data.figures)
        notes = _rows_notes(inp) + list(data.notes)
        if b.key not in inp.results and inp.n_rows < inp.n:
            notes.append(f"computed on a uniform random sample of {inp.n_rows:,} of the {inp.n:,} test rows "
                         "(a streamed audit holds only this sample in memory)")
        for w in caught:
            msg = f"{w.category.__name__}: {w.message}"
            if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)) or msg in notes:
                continue
            notes.append(msg)
        section.notes = notes
        out.append(section)
    from . import __version__

    return Report(out, _describe(inp, names or {}), opt.to_dict(), title=title, version=__version__,
                  source=(names or {}).get("source", ""))


# --------------------------------------------------------------------------- #
# the report
# --------------------------------------------------------------------------- #
def _fmt_value(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:+.{digits}f}"


def _table_to_json(frame: pd.DataFrame) -> dict:
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    return {
        "columns": [str(c) for c in frame.columns],
        "rows": [[to_builtin(v) for v in row] for row in frame.itertuples(index=False, name=None)],
    }


def _table_from_json(obj: dict) -> pd.DataFrame:
    rows = [[tuple(v) if isinstance(v, list) else v for v in row] for row in obj["rows"]]
    return pd.DataFrame(rows, columns=obj["columns"])


def _write_atomic(path: str | os.PathLike, text: str, *, protect: Iterable[str | os.PathLike] = ()) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    Never leaves a partial file at ``path``; refuses to write over any of the
    ``protect`` paths (the inputs).
    """
    path = Path(path)
    target = path.resolve()
    for p in protect:
        p = Path(p)
        if p.exists() and (target == p.resolve() or (path.exists() and os.path.samefile(path, p))):
            raise ValueError(f"refusing to overwrite the input file {p} with the report")
    if target.is_dir():
        raise IsADirectoryError(f"{path} is a directory")
    folder = target.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


REPORT_JSON_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "biasamp report",
    "type": "object",
    "required": ["schema", "biasamp_version", "title", "inputs", "options", "summary", "sections"],
    "properties": {
        "schema": {"const": SCHEMA_ID},
        "biasamp_version": {"type": "string"},
        "title": {"type": "string"},
        "source": {"type": "string"},
        "inputs": {"type": "object"},
        "options": {"type": "object"},
        "summary": {"$ref": "#/$defs/table"},
        "sections": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "title", "citation", "how_to_read", "status", "message", "summary",
                             "tables", "figures", "notes"],
                "properties": {
                    "key": {"type": "string"},
                    "title": {"type": "string"},
                    "citation": {"type": "string"},
                    "how_to_read": {"type": "string"},
                    "status": {"enum": ["ok", "error", "skipped"]},
                    "message": {"type": "string"},
                    "summary": {"$ref": "#/$defs/table"},
                    "tables": {"type": "object", "additionalProperties": {"$ref": "#/$defs/table"}},
                    "figures": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["key", "title", "kind", "data", "caption"],
                            "properties": {
                                "key": {"type": "string"},
                                "title": {"type": "string"},
                                "kind": {"enum": ["hbar", "grouped_bar", "strip", "line"]},
                                "data": {"$ref": "#/$defs/table"},
                                "caption": {"type": "string"},
                            },
                        },
                    },
                    "notes": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
    "$defs": {
        "table": {
            "type": "object",
            "required": ["columns", "rows"],
            "properties": {
                "columns": {"type": "array", "items": {"type": "string"}},
                "rows": {"type": "array", "items": {"type": "array"}},
            },
        },
    },
}
"""JSON Schema (draft 2020-12) of :meth:`Report.to_json`."""

_JSON_TYPES = {"object": dict, "array": list, "string": str}


def _check_report_json(obj: Any) -> None:
    """Check ``obj`` against :data:`REPORT_JSON_SCHEMA` (the subset it uses); ``ValueError`` naming the path."""

    def fail(path: str, what: str) -> None:
        raise ValueError(f"not a biasamp report: {path or 'the top level'}: {what}")

    def walk(value: Any, schema: dict, path: str) -> None:
        if "$ref" in schema:
            schema = REPORT_JSON_SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        if "const" in schema and value != schema["const"]:
            fail(path, f"expected {schema['const']!r}, got {value!r}"[:200])
        if "enum" in schema and value not in schema["enum"]:
            fail(path, f"expected one of {schema['enum']}, got {value!r}"[:200])
        kind = schema.get("type")
        if kind is not None and not isinstance(value, _JSON_TYPES[kind]):
            fail(path, f"expected a JSON {kind}, got {type(value).__name__}")
        if kind == "object":
            missing = [k for k in schema.get("required", ()) if k not in value]
            if missing:
                fail(path, f"missing key(s) {missing}")
            for k, sub in schema.get("properties", {}).items():
                if k in value:
                    walk(value[k], sub, f"{path}.{k}" if path else k)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                for k, v in value.items():
                    if k not in schema.get("properties", {}):
                        walk(v, extra, f"{path}[{k!r}]")
        elif kind == "array" and "items" in schema:
            for i, v in enumerate(value):
                walk(v, schema["items"], f"{path}[{i}]")
        if schema is REPORT_JSON_SCHEMA["$defs"]["table"]:
            width = len(value["columns"])
            for i, row in enumerate(value["rows"]):
                if len(row) != width:
                    fail(f"{path}.rows[{i}]", f"{len(row)} cells for {width} columns")

    if not isinstance(obj, dict):
        fail("", f"expected a JSON object, got {type(obj).__name__}")
    if obj.get("schema") != SCHEMA_ID:
        fail("schema", f"{obj.get('schema')!r}, expected {SCHEMA_ID!r}"[:200])
    walk(obj, REPORT_JSON_SCHEMA, "")


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
    >>> [(s.key, s.status) for s in rep.sections]
    [('calibration', 'skipped'), ('directional', 'ok'), ('mals', 'ok'), ('fairness', 'ok')]
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

    # ---- text ------------------------------------------------------------- #
    def summary(self, *, width: int = 100) -> str:
        """The report as a plain-text (ASCII) table for a terminal (one block per attribute when several)."""
        inp = self.inputs
        if "attributes" in inp:  # an audit of several protected attributes: label every block
            from ._audit_attributes import summary_by_attribute

            return summary_by_attribute(self, width=width)
        lines = [self.title]
        if self.source:
            lines.append(f"data: {self.source}")
        n_train = inp.get("n_train")
        lines.append(
            f"{inp.get('n_test')} test instances"
            + (f", {n_train} training instances" if n_train else ", no training set (test ground truth used)")
            + f"; attribute {inp.get('attribute')} {inp.get('attribute_classes')}; "
            + f"{len(inp.get('task_classes', []))} task classes ({inp.get('task_kind')})"
        )
        rows_used = []
        if inp.get("weighted"):
            rows_used.append("counts weighted by sample_weight")
        for side in ("test", "train"):
            r = inp.get(f"rows_{side}")
            if r:
                what = [f"{r['n_dropped']} dropped (missing values)" if r.get("n_dropped") else "",
                        f"{r['n_grouped']} with a missing attribute in the group 'missing'" if r.get("n_grouped")
                        else "", f"{r['n_zero_weight']} of weight 0 dropped" if r.get("n_zero_weight") else ""]
                rows_used.append(f"{side} rows: " + ", ".join(w for w in what if w))
        if rows_used:
            lines.append("; ".join(rows_used))
        lvl = self.options.get("level", 0.95)
        lines.append(f"values are fractions (not percentages); CI = {_ci_note(lvl)} confidence interval")
        methods = [m for m in dict.fromkeys(self.table["ci_method"]) if isinstance(m, str) and m]
        if methods:
            lines.append("CI methods: " + "; ".join(methods) + " (docs/inference.md); p = test of no effect, "
                         "Holm-adjusted over classes/pairs")
        lines.append("")
        head = ("metric", "dir", "value", f"{_ci_note(lvl)} CI", "p", "reading", "note")
        rows = []
        for r in self.table.itertuples(index=False):
            ci = "" if pd.isna(r.ci_low) else f"[{_fmt_value(r.ci_low)}, {_fmt_value(r.ci_high)}]"
            p = "" if r.p_value is None or pd.isna(r.p_value) else (
                "<0.001" if r.p_value < 0.001 else f"{r.p_value:.3f}")
            rows.append((r.metric, r.direction, _fmt_value(r.value), ci, p, r.reading, r.note))
        widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
        used = sum(widths[:-1]) + 2 * (len(head) - 1)
        widths[-1] = max(10, min(widths[-1], width - used))

        def line(cells):
            cells = list(cells)
            note = cells[-1] if len(cells[-1]) <= widths[-1] else cells[-1][: widths[-1] - 3] + "..."
            return "  ".join([c.ljust(w) for c, w in zip(cells[:-1], widths[:-1])] + [note]).rstrip()

        lines.append(line(head))
        lines.append("  ".join("-" * w for w in widths))
        last = None
        for sec_key, row in zip(self.table["section"], rows):
            if last is not None and sec_key != last:
                lines.append("")
            last = sec_key
            lines.append(line(row))
        other = [s for s in self.sections if s.status != "ok"]
        if other:
            lines.append("")
            for s in other:
                lines.append(f"{s.title}: {s.status} - {s.message}")
        notes = [(s.title, n) for s in self.sections if s.status == "ok" for n in s.notes]
        if notes:
            lines.append("")
            lines.append("notes:")
            for t, n in notes:
                lines.append(f"  {t}: {n}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

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
        from ._html import render_html

        text = render_html(self, plots=plots)
        if path is not None:
            return _write_atomic(path, text)
        return text

    def _repr_html_(self) -> str:  # Jupyter
        from ._html import render_html

        return render_html(self, plots=False, standalone=False)

    # ---- Markdown, LaTeX, model card, MLflow (biasamp._export, biasamp.mlflow) ---- #
    def to_markdown(self, path: str | os.PathLike | None = None, *, heading_level: int = 1, details: bool = False,
                    digits: int = 4, max_rows: int = 20) -> str:
        """The report as GitHub-flavoured Markdown; written atomically to ``path`` when given.

        A table of every headline number (value, interval, p-value, reading,
        note), then per family how to read it, the interval methods, notes and
        reference; ``details=True`` adds the detail tables (at most
        ``max_rows`` rows each). ``heading_level`` sets the level of the title
        (2 to embed it in a larger document).
        """
        from ._export import render_markdown

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
        from ._export import render_latex

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
        from ._export import render_model_card

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
        from .mlflow import log_report

        return log_report(self, **kwargs)
