"""The built-in sections of the audit report, one builder per metric family.

Importing this module registers them (:func:`biasamp.report.register_section`;
:mod:`biasamp.report` imports it), in report order: decision thresholds (5),
BiasAmp-> (10), BiasAmp_MALS (20), Multi_MALS / Multi-> (30), group fairness
(40), DPA (50) and leakage amplification (60). Each builder turns a metric's
result into a :class:`~biasamp.report.SectionData`: headline rows with their
intervals and readings, detail tables, figures and notes. Also here: the
helpers the builders share (summary rows and their readings, bootstrap
intervals, a family computed by a streamed audit) and the fairness rate chart.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from biasamp._core.labels import to_numpy
from biasamp._core.results import interval_side, top_rows
from biasamp._engine.bootstrap import REPLICATES_WARNING
from biasamp._engine.inference import consistent_p_value
from biasamp._engine.options import DEFAULT_LEVEL
from biasamp.exceptions import UndefinedPairWarning
from biasamp.report._config import AuditConfig
from biasamp.report._inputs import AuditInputs, family_options, resolve_fairness_options
from biasamp.report._registry import (
    _BUILDERS,
    BASE_RATES,
    DERIVED,
    FigureSpec,
    SectionBuilder,
    SectionData,
    register_section,
)

# --------------------------------------------------------------------------- #
# helpers for builders
# --------------------------------------------------------------------------- #
_P_ADJUST_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg"}
"""How the notes name a bootstrap's ``p_adjust`` (the headline p is the smallest adjusted p-value)."""

_READINGS = {
    # kind -> (reading when the interval lies above 0, below 0)
    "amp": ("amplified", "reduced"),
    "disparity": ("disparity", None),
    "distortion": ("distorted", None),
}


def _reading(ci: tuple | None, kind: str = "amp") -> str:
    """Reading of a headline number from its interval (``kind``: amp, disparity, distortion).

    The bounds are read with :func:`~biasamp._core.results.as_read` (within
    1e-12 of 0 is 0): a bound of 2.8e-17 is an exact 0, and reads "no evidence".
    """
    if ci is None or ci[0] is None or ci[1] is None or not np.isfinite(ci[0]) or not np.isfinite(ci[1]):
        return ""
    above, below = _READINGS[kind]
    side = interval_side(ci[0], ci[1])
    if side > 0:
        return above
    if below is not None and side < 0:
        return below
    return "no evidence"


def _amp_reading(ci: tuple | None) -> str:
    """Reading of a signed amplification metric from its interval."""
    return _reading(ci, "amp")


#: an effect smaller than this (in the metric's units: fractions) is called small next to its reading:
#: an interval can lie above 0 for an effect too small to matter (docs/inference.md, "Size and significance");
#: the default of the audit's ``min_effect``
SMALL_EFFECT = 0.01

#: the reading of an interval that holds 0 while the sample could not have detected an effect that matters
TOO_SMALL = "too small to tell"

#: what a zero-width interval means, by how the interval was made (the default: a bootstrap)
_ZERO_WIDTH = {
    "bootstrap": "interval of width 0: every bootstrap replicate gives the same value (e.g. the predictions "
                 "equal the ground truth on every pair, or the predicted attribute is a function of the "
                 "predicted task)",
    "iterations": "interval of width 0: every iteration gives the same value",
    "band": "interval of width 0: the statistic takes the same value wherever its parts lie in their simultaneous "
            "band (e.g. max - min = 1 when one group's rate is 0 and another's 1 in every resample, as with groups "
            "of one or two rows)",
}


def _finite_number(v: Any) -> TypeGuard[float]:
    return v is not None and isinstance(v, (int, float, np.number)) and bool(np.isfinite(v))


def _row(metric, direction, value, ci, ci_method, n, note="", reading=None, p_value=None, kind="amp",
         zero_width=None, min_detectable=None, p_global=None, p_global_label="per-pair test, Holm",
         level=DEFAULT_LEVEL) -> dict:
    """One summary row. ``p_value`` must be the interval's own p-value (its inversion at ``level``: see
    :func:`biasamp._engine.inference.bootstrap_inference` / :func:`~biasamp._engine.inference.t_inference`);
    ``min_detectable`` the interval's MDE. ``p_global`` (a test of single pairs, ``p_global_label``) never
    changes the reading or the p printed: when the interval holds 0 and it rejects, the note says that pairs
    offset each other ("mixed")."""
    low, high = (None, None) if ci is None else (float(ci[0]), float(ci[1]))
    if reading is None:
        reading = _reading(ci, kind)
        if reading == "no evidence" and kind == "amp" and _finite_number(p_global) and p_global < 1 - level:
            # the mean's interval holds 0, yet the per-pair test finds pairs that differ: they offset each other
            mixed = (f"mixed: the mean's interval includes 0, but some pairs differ ({p_global_label} p = "
                     f"{p_global:.3g}): amplification in some pairs offsets reduction in others; see the per-pair "
                     "table")
            note = f"{note}; {mixed}" if note else mixed
    if low is not None and low == high:
        how = str(ci_method)
        zero = zero_width or _ZERO_WIDTH["iterations" if how.startswith("t over") else
                                         "band" if how.startswith("max-t band") else "bootstrap"]
        note = f"{note}; {zero}" if note else zero
    return {
        "metric": metric, "direction": direction, "value": None if value is None else float(value),
        "ci_low": low, "ci_high": high, "ci_method": ci_method if ci is not None else "",
        "p_value": float(p_value) if _finite_number(p_value) else None,
        "min_detectable": float(min_detectable) if _finite_number(min_detectable) else None,
        "n": None if n is None else int(n), "reading": reading, "note": note,
    }


def _boot_row(boot: Any, name: str, metric: str, direction: str, value: float, n: int, note: str = "",
              kind: str = "amp") -> dict:
    """A summary row whose interval, method, p-value and MDE come from a :class:`~biasamp.BootstrapResult`.

    The p-value is the interval's own (``boot.p_value``, its inversion); the
    global test of the per-unit tables (``boot.p_global``) only adds the
    "mixed" note.
    """
    if boot is None or name not in boot.ci:
        return _row(metric, direction, value, None, "", n, note, kind=kind)
    method = f"{boot.methods.get(name, boot.ci_method)} bootstrap ({boot.n_boot})"
    adjust = _P_ADJUST_NAMES.get(boot.p_adjust, boot.p_adjust)
    return _row(metric, direction, value, boot.ci[name], method, n, note, p_value=boot.p_value.get(name), kind=kind,
                min_detectable=getattr(boot, "min_detectable", {}).get(name),
                p_global=getattr(boot, "p_global", {}).get(name), p_global_label=f"per-pair test, {adjust}",
                level=boot.level)


def effect_threshold(min_effect: Any, metric: str) -> float:
    """The smallest effect that matters for ``metric``: ``min_effect`` (a number, or a mapping metric -> number
    whose ``"*"`` entry is the default), else :data:`SMALL_EFFECT`."""
    if isinstance(min_effect, Mapping):
        return float(min_effect.get(metric, min_effect.get("*", SMALL_EFFECT)))
    return float(SMALL_EFFECT if min_effect is None else min_effect)


def finish_summary(rows: list, opt: AuditConfig) -> list:
    """The readings that need the audit's options, for every section's summary rows (the built-in and the
    registered ones alike):

    * the p-value printed beside an interval agrees with it: ``p < 1 - level`` exactly when the interval
      excludes 0 (a closed-form p-value within rounding of the boundary is moved to the interval's side; a
      p-value that belongs to another test, e.g. from a registered section, is not printed, and the note says
      why);
    * **too small to tell**: an interval that holds 0 ("no evidence") while the minimum detectable effect is
      above the effect that matters (``min_effect``): the sample could not have seen that effect;
    * **small effect**: an interval that excludes 0 for an effect smaller than ``min_effect``.
    """
    out = []
    for r in rows:
        r = dict(r)
        lo, hi, p = r.get("ci_low"), r.get("ci_high"), r.get("p_value")
        if _finite_number(p) and _finite_number(lo) and _finite_number(hi):
            try:
                r["p_value"] = consistent_p_value(float(p), float(lo), float(hi), opt.level)
            except ValueError:
                r["p_value"] = None
                why = (f"p-value {p:.3g} not shown: it disagrees with the interval (a test of another null); the "
                       "interval gives the reading")
                r["note"] = f"{r.get('note')}; {why}" if r.get("note") else why
        threshold = effect_threshold(opt.min_effect, str(r.get("metric", "")))
        mde, value, note = r.get("min_detectable"), r.get("value"), r.get("note") or ""
        if r.get("reading") == "no evidence" and _finite_number(mde) and mde > threshold:
            r["reading"] = TOO_SMALL
            why = f"too small to tell: MDE {mde:.3g} > min_effect {threshold:g}"
            r["note"] = f"{note}; {why}" if note else why
        elif r.get("reading") in ("amplified", "reduced", "disparity", "distorted") and _finite_number(value) \
                and abs(float(value)) < threshold and not (lo is not None and lo == hi):
            # significance is not size: say how large the effect is next to the reading
            small = f"small effect: |value| < {threshold:g}"
            r["note"] = f"{small}; {note}" if note else small
        out.append(r)
    return out


def _test_columns(boot: Any, test: str, unit: str) -> dict:
    """Names of the per-unit p-value columns of a report table, labelled with their test and adjustment
    (``"McNemar p (per pair)"``, ``"McNemar p (per pair, Holm)"``): they are not the headline's p."""
    adjust = _P_ADJUST_NAMES.get(boot.p_adjust, boot.p_adjust)
    return {"p_value": f"{test} p (per {unit})", "p_adjusted": f"{test} p (per {unit}, {adjust})"}


def _with_intervals(table: pd.DataFrame, boot: Any, name: str, keys: list, test: str = "McNemar") -> pd.DataFrame:
    """``table`` with the bootstrap's per-unit simultaneous interval and p-values merged in (the p-values
    labelled with their ``test``, per pair)."""
    if boot is None or name not in boot.tables:
        return table
    extra = boot.tables[name]
    cols = [c for c in ("ci_low", "ci_high", "p_value", "p_adjusted") if c in extra.columns]
    merged = table.merge(extra[keys + cols], on=keys, how="left").rename(columns=_test_columns(boot, test, "pair"))
    merged.attrs.update(extra.attrs)
    return merged


def _combo_label(c: Any) -> str:
    if isinstance(c, (tuple, list)):
        return " + ".join(str(v) for v in c)
    return str(c)


def _ci_note(level: float) -> str:
    return f"{round(100 * level)}%"


#: the note of a count-based section computed without interval (``n_boot=0``)
NO_INTERVAL = "no interval: n_boot=0"


def _family_result(inp: AuditInputs, opt: AuditConfig, key: str, options: dict | None = None,
                   n_boot: int | None = None) -> tuple[Any, Any, list]:
    """``(result, bootstrap result or None, notes)`` of the registered count-based family ``key``.

    From the rows held: the family's function is called as its declaration
    says (``Family.call`` on the roles it reads from the batch, with the
    audit's options it declares, or ``options``), through
    :func:`~biasamp.bootstrap`, which counts the labels once and carries the
    metric's result; the function alone when the bootstrap raises a
    ``ValueError`` (it becomes a note) or ``n_boot`` is 0. When the family was
    computed elsewhere (``inp.results[key]``, a streamed audit): from that
    :class:`~biasamp.report.SectionResult`.
    """
    from biasamp._families import REGISTRY
    from biasamp.stats import bootstrap

    given = inp.results.get(key)
    if given is not None:
        return given.compute(), given.bootstrap, list(given.notes)
    family = REGISTRY[key]
    args, kwargs = family.call(inp.family_roles(family),
                               opt.family_options(key, train=inp.has_train) if options is None else options)
    replicates = family_n_boot(opt, family) if n_boot is None else n_boot
    if replicates == 0:
        return family.function(*args, **kwargs), None, [NO_INTERVAL]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            booted = bootstrap(family.function, *args, **kwargs, **_boot_kwargs(opt, key, replicates))
    except ValueError as exc:
        return family.function(*args, **kwargs), None, [f"no bootstrap interval: {exc}"]
    # the bootstrap counted the labels and computed the metric's result on them: count once, and pass on
    # the warnings of that computation (those of the replicates are the bootstrap's own, summarised in its notes)
    for w in caught:
        if not (issubclass(w.category, UndefinedPairWarning) and str(w.message).startswith(REPLICATES_WARNING)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return (booted.result if booted.result is not None else family.function(*args, **kwargs)), booted, []


def _declared_rows(inp: AuditInputs, key: str, res: Any, boot: Any, *, note: Callable[[Any], str] = lambda s: "",
                   undefined: Callable[[Any], str | None] = lambda s: None,
                   options: dict | None = None) -> list[dict]:
    """The summary rows of a registered family: one per statistic it computed, in declaration order.

    Read from its declaration (``StatisticSpec``): the statistics whose
    prediction roles (``needs``) the inputs hold (and, for a family whose
    options select statistics, those ``options`` select); the value from
    ``read``; the metric and direction columns from ``label`` and
    ``direction``; the reading from ``reading_kind`` (amplification,
    disparity or distortion); the interval, method and p-value from the
    bootstrap. ``note(spec)`` and ``undefined(spec)`` (the reason a statistic
    is undefined, or None) are what the family's section adds.
    """
    from biasamp._families import REGISTRY

    family = REGISTRY[key]
    rows = []
    for s in family.statistics_of(family.function, options):
        if not all(inp.get(role) is not None for role in s.needs):
            continue
        label, reason = s.label or s.name, undefined(s)
        if reason is not None:
            rows.append(_row(label, s.direction, None, None, None, inp.n, f"undefined: {reason}",
                             reading="undefined"))
            continue
        rows.append(_boot_row(boot, s.name, label, s.direction, s.read(res)[0], inp.n, note(s), kind=s.reading_kind))
    return rows


def declared_section(key: str) -> Callable[[AuditInputs, AuditConfig], SectionData]:
    """The ``compute`` of the audit section of a registered family that writes nothing of its own.

    Its summary rows are those of its declaration (one per statistic: :func:`_declared_rows`), computed from
    one bootstrap (or from a streamed audit's result) with the family's audit options; its notes are the
    bootstrap's. Register it with :func:`~biasamp.report.register_section` under the family's ``section``
    key; a family that wants detail tables, figures or notes writes its own ``compute`` instead.
    """

    def compute(inp: AuditInputs, opt: AuditConfig) -> SectionData:
        res, boot, notes = _family_result(inp, opt, key)
        out = SectionData(summary=_declared_rows(inp, key, res, boot), notes=notes)
        if boot is not None:
            out.notes.extend(boot.notes)
        return out

    return compute


def _task_kind(inp: AuditInputs) -> str:
    """The kind of the audit's task labels (``Family.task_kinds``' words)."""
    if np.ndim(inp.task) == 2:
        return "multilabel"
    return "binary" if len(_uniques(inp.task)) == 2 else "single"


def declared_builder(family: Any) -> SectionBuilder:
    """The audit section of a registered family that registers none of its own, from its declaration.

    Its title and citation are the family's; it applies when a streamed audit counted the family, or when the
    inputs hold the predictions one of its statistics needs and a task of one of its ``task_kinds``; its rows
    are :func:`declared_section`'s.
    """
    needs = sorted({r for s in family.statistics for r in s.needs})

    def applicable(inp: AuditInputs) -> bool:
        if family.key in inp.results:  # a streamed audit counted it
            return True
        return family.computes(r for r in needs if inp.get(r) is not None) and _task_kind(inp) in family.task_kinds

    return SectionBuilder(
        family.section, family.title, family.citation,
        how_to_read=f"One row per statistic of {family.title}, read as the summary's reading column says.",
        needs=f"attr, a task ({' or '.join(family.task_kinds)}) and {' or '.join(needs)}",
        applicable=applicable, compute=declared_section(family.key))


def _declared_builders() -> list[SectionBuilder]:
    from biasamp._families import REGISTRY

    return [declared_builder(f) for f in REGISTRY if f.section is not None and f.section not in _BUILDERS]


DERIVED.append(_declared_builders)


def family_n_boot(opt: AuditConfig, family: Any) -> int:
    """The bootstrap replicates of a registered family's section (in memory or streamed): the audit option its
    declaration names (``Family.n_boot_option``, e.g. ``n_boot_multi``) when that is set, else ``n_boot``."""
    own = getattr(opt, family.n_boot_option) if family.n_boot_option is not None else None
    return int(opt.n_boot if own is None else own)


def _boot_kwargs(opt: AuditConfig, key: str, n_boot: int | None = None) -> dict:
    return {"n_boot": opt.n_boot if n_boot is None else n_boot, "level": opt.level, "ci_method": opt.ci_method,
            "random_state": opt.seed(key)}


def _min_group_size(opt: AuditConfig) -> int:
    """The size below which a group (or the support of a pair) is flagged small in the charts."""
    return int(opt.min_group_size)


def _sized_bars(facet: str, labels: list, values: np.ndarray, n: np.ndarray, opt: AuditConfig) -> pd.DataFrame:
    """Bars of an ``"hbar"`` figure with their support ``n`` (NaN: unknown), flagged ``small`` below the minimum."""
    return pd.DataFrame({"facet": facet, "label": labels, "value": values, "n": n,
                         "small": np.nan_to_num(n, nan=np.inf) < _min_group_size(opt)})


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
def _calibration_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
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
    scales={"BiasAmp->": "difference"},
)
def _directional_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
    res, boot, notes = _family_result(inp, opt, "directional")
    out = SectionData(notes=_predictions_note(res) + notes)
    crossfit = getattr(res, "cross_fit", False)
    if res.train_source == "test":
        out.notes.append("no training labels were given: the correlation signs y_at come from the test ground truth"
                         + (", signs cross-fitted (2 folds): the signs of one half of the test rows are applied to "
                            "Delta on the other half, both ways, so that chance correlations in the test rows do not "
                            "read as 'reduced' (docs/definitions.md, 'No training set')" if crossfit else ""))
    parts = {d.direction: d for d in (res.a_to_t, res.t_to_a) if d is not None}

    def pairs_note(s: Any) -> str:
        d = parts[s.name]
        return f"{d.n_pairs} pairs" + (f", {d.n_undefined} undefined" if d.n_undefined else "")

    out.summary = _declared_rows(inp, "directional", res, boot, note=pairs_note,
                                 undefined=lambda s: parts[s.name].reason if parts[s.name].undefined else None)
    rows = {r["direction"]: r for r in out.summary}
    bars = []
    for d in parts.values():
        if getattr(d, "undefined", False):
            continue
        if "y" in d.pairs.columns and len(d.pairs) and (d.pairs["y"].to_numpy(dtype=np.float64) == 0).all():
            # every pair has sign y_at = 0: the value is 0 by construction, whatever the model does
            row = rows[d.direction]
            row["reading"] = "not measurable"
            row["note"] = (f"{d.n_pairs} pairs, every y_at = 0: the attribute and the task are independent in the "
                           "data the signs come from (balanced), so BiasAmp-> "
                           + ("only reads the chance imbalance of the two halves the signs are cross-fitted over "
                              "(give a design balanced on purpose as the training set: every sign is then 0)"
                              if crossfit else "is 0 by construction")
                           + " and cannot measure amplification here; read DPA, which needs no correlation sign")
            out.notes.append(
                f"BiasAmp-> {d.direction}: every (attribute, task) pair has the correlation sign y_at = 0 "
                "(P(a, t) = P(a) P(t) in the data the signs come from), so every term y_at * Delta is 0 and the "
                "interval "
                "[0, 0] says nothing about the model; differences between the model and the data in single "
                "pairs (the per-pair test) are not amplification of a training correlation here. DPA "
                "(directional predictability amplification) measures amplification on balanced data")
        pairs = _with_intervals(d.pairs, boot, d.direction, ["attr", "task"])
        out.tables[f"pairs {d.direction}"] = pairs
        chart = _one_of_mirrored(pairs, "task") if d.direction == "T->A" and _binary_attr(inp) else pairs
        top = top_rows(chart, "contribution", opt.top_k)
        # the instances the pair's conditional rate rests on: members of a (A->T) or positives of t (T->A)
        n_cond = top["n_attr" if d.direction == "A->T" else "n_task"].to_numpy(dtype=np.float64) \
            if {"n_attr", "n_task"} <= set(top.columns) else np.full(len(top), np.nan)
        bar = _sized_bars(d.direction, _pair_labels(inp, opt, top),
                          top["contribution"].to_numpy(dtype=np.float64), n_cond, opt)
        if "ci_low" in top.columns and not crossfit:  # y * delta: the interval of delta, flipped where y = -1
            y = top["y"].to_numpy(dtype=np.float64)
            lo, hi = top["ci_low"].to_numpy(dtype=np.float64), top["ci_high"].to_numpy(dtype=np.float64)
            bar["low"] = np.where(y < 0, -hi, y * lo)
            bar["high"] = np.where(y < 0, -lo, y * hi)
        bars.append(bar)
    if boot is not None and any(boot.p_global.get(d) is not None for d in ("A->T", "T->A")):
        adjust = _P_ADJUST_NAMES.get(boot.p_adjust, boot.p_adjust)
        smallest = ", ".join(f"{d} {boot.p_global[d]:.3g}" for d in ("A->T", "T->A")
                             if boot.p_global.get(d) is not None)
        out.notes.append(
            "p: the headline interval's own p-value (its inversion, from the same bootstrap replicates: p < "
            f"{1 - boot.level:g} exactly when the interval excludes 0). Per pair, the tables 'pairs A->T' / 'pairs "
            f"T->A' give {boot.test_methods.get('A->T') or boot.test_methods.get('T->A')} (columns 'McNemar p "
            f"(per pair)' and 'McNemar p (per pair, {adjust})'; smallest {adjust}-adjusted: {smallest}), a test of "
            "single pairs, not of the mean; per-pair intervals are simultaneous")
    if bars:
        out.figures.append(FigureSpec(
            "pairs", "Per-pair amplification y_at * delta, sorted by magnitude", "hbar",
            pd.concat(bars, ignore_index=True),
            f"The {opt.top_k} (attribute / task) pairs contributing most in each direction, "
            + ("their cross-fitted terms (no per-pair interval: the tables' intervals are those of Delta, not of the "
               "cross-fitted term); " if crossfit else f"with simultaneous {_ci_note(opt.level)} intervals; ")
            + "bars right of 0 amplify the training correlation, bars left of 0 "
            "weaken it. Each direction has its own axis. n: the test instances the pair's rate rests on (members "
            "of the group for A->T, positives of the task for T->A); hatched when fewer than "
            f"{_min_group_size(opt)}."
            + (" With two groups, a task's T->A pairs are mirror images (the same bar for both groups): one is "
               "drawn, for the group the task leans to in training." if _binary_attr(inp) else "")))
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
    scales={"BiasAmp_MALS": "difference"},
)
def _mals_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
    out = SectionData()
    if not inp.has_train:  # the family's call takes the test rows (with their weights) as the training rows
        out.notes.append("no training labels were given: bias_train comes from the test ground truth, its indicator "
                         "cross-fitted (2 folds: the indicator of one half of the test rows applied to the other)")
    res, boot, notes = _family_result(inp, opt, "mals")
    out.notes.extend(_predictions_note(res) + notes)
    extra = f", {res.n_undefined} undefined pairs" if res.n_undefined else ""
    tasks = f"{res.n_tasks} task{'s' if res.n_tasks != 1 else ''}"
    out.summary = _declared_rows(inp, "mals", res, boot, note=lambda s: f"{tasks}{extra}")
    pairs = _with_intervals(res.pairs, boot, "MALS", ["attr", "task"])
    out.tables["pairs"] = pairs
    counted = pairs[pairs["indicator"].to_numpy(dtype=np.float64) > 0] if "indicator" in pairs.columns else pairs
    top = top_rows(counted, "contribution", opt.top_k)
    top = top[top["contribution"] != 0]
    if len(top):
        n_pred = top["n_pred"].to_numpy(dtype=np.float64) if "n_pred" in top.columns else np.full(len(top), np.nan)
        bar = _sized_bars("MALS", _pair_labels(inp, opt, top),
                          top["contribution"].to_numpy(dtype=np.float64), n_pred, opt)
        if "ci_low" in top.columns:
            bar["low"], bar["high"] = top["ci_low"].to_numpy(np.float64), top["ci_high"].to_numpy(np.float64)
        out.figures.append(FigureSpec(
            "pairs", "Per-pair bias_pred - bias_train (pairs with bias_train > 1/|A|)", "hbar", bar,
            f"The pairs (at most {opt.top_k}) contributing most, with simultaneous {_ci_note(opt.level)} intervals; "
            "bars right "
            "of 0: the model predicts the group with the task more often than the training data has them together. "
            "n: test instances predicted with the task (bias_pred rests on them); hatched when fewer than "
            f"{_min_group_size(opt)}."))
    return out


def _pair_labels(inp: AuditInputs, opt: AuditConfig, pairs: pd.DataFrame) -> list[str]:
    """How the report names (attribute, task) pairs: ``"Male / income=1"`` (a single-label task: its name and
    class), ``"Male / kitchen"`` (a multi-label task: the label is a named column of the task; an unnamed
    column k reads ``"Male / task[k]"``)."""
    name = (opt.names or {}).get("task") or getattr(inp.task, "name", None) or "task"
    if np.ndim(inp.task) != 2:
        return [f"{a} / {name}={t}" for a, t in zip(pairs["attr"], pairs["task"])]
    return [f"{a} / {t}" if isinstance(t, str) else f"{a} / {name}[{t}]" for a, t in zip(pairs["attr"], pairs["task"])]


def _binary_attr(inp: AuditInputs) -> bool:
    """A single-label attribute with exactly two groups (whose T->A and M->G pairs are mirror images)."""
    return np.ndim(inp.attr) == 1 and len(_uniques(inp.attr)) == 2


def _one_of_mirrored(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """One row per ``key`` (the group the task leans to, y = +1, first): the chart of a binary attribute."""
    if "y" not in table.columns:
        return table.drop_duplicates(key)
    order = np.argsort(-table["y"].to_numpy(dtype=np.float64), kind="stable")
    return table.iloc[order].drop_duplicates(key).sort_index()


def _predictions_note(res: Any) -> list:
    """What the probability policy did, when predictions were probabilities, and how a binary task was read (every
    family says it alike)."""
    said = getattr(res, "predictions", "hard")
    out = [] if said == "hard" else [f"Predictions: {said}"]
    reading = getattr(res, "binary_task", None)
    if reading is not None:
        how = ("binary_task='both': each class is a task, the one-hot reading" if reading.startswith("both")
               else "binary_task='positive': the same numbers as an N x 1 indicator of it")
        out.append(f"Binary task read as its {reading} ({how})")
    return out


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
    scales={"Multi_MALS": "difference", "Multi->": "difference"},
)
def _multi_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
    res, boot, notes = _family_result(inp, opt, "multi")
    out = SectionData(notes=_predictions_note(res) + notes)
    found = {stat: m for _, _, _, stat, m in _multi_parts(res)}

    def note(s: Any) -> str:
        if s.name in found:
            return f"mean |Delta|; var {found[s.name].variance:.3g}, {len(res.combinations)} combinations"
        return "signed mean Delta" if s.direction == "raw" else "mean y*Delta (signed)"

    out.summary = _declared_rows(inp, "multi", res, boot, note=note)
    tops = []
    for _, metric, direction, stat, m in _multi_parts(res):
        name = f"{metric} {direction}".strip()
        col = "contribution" if m.metric == "Multi_MALS" else "delta"
        table = m.table
        if boot is not None and stat in boot.tables:
            extra = boot.tables[stat][["ci_low", "ci_high"]]
            table = table.assign(ci_low=extra["ci_low"].to_numpy(), ci_high=extra["ci_high"].to_numpy())
        top = top_rows(table, col, opt.top_k)
        out.tables[f"top {name}"] = top
        if direction == "M->G" and _binary_attr(inp):  # mirror images: one bar per combination
            top = top_rows(_one_of_mirrored(table, "combination"), col, opt.top_k)
        support = next((c for c in ("n_comb", "n_train_comb") if c in top.columns), None)
        n_comb = top[support].to_numpy(dtype=np.float64) if support else np.full(len(top), np.nan)
        bar = _sized_bars(name, [f"{g}: {_combo_label(c)}" for g, c in zip(top["attr"], top["combination"])],
                          top[col].to_numpy(dtype=np.float64), n_comb, opt)
        if "ci_low" in top.columns:
            bar["low"], bar["high"] = top["ci_low"].to_numpy(np.float64), top["ci_high"].to_numpy(np.float64)
        tops.append(bar)
    if tops:
        out.figures.append(FigureSpec("combinations", "Top (attr, combination) pairs by |Delta|", "hbar",
                                      pd.concat(tops, ignore_index=True),
                                      f"With simultaneous {_ci_note(opt.level)} intervals; each metric has its "
                                      "own axis. n: test instances (training instances for Multi_MALS) with the "
                                      "combination; hatched when fewer than "
                                      f"{_min_group_size(opt)} (raise min_support to "
                                      "leave rare combinations out)."
                                      + (" With two groups, a combination's M->G pairs are mirror images: one is "
                                         "drawn." if _binary_attr(inp) else "")))
    if getattr(res, "train_source", "train") == "test":
        out.notes.append("no training labels were given: training statistics come from the test ground truth"
                         + ("; the signs y_gm and Multi_MALS's indicator are cross-fitted (2 folds), the raw rows "
                            "read them" if getattr(res, "cross_fit", False) else ""))
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
    "BA": "Qian et al.'s bias amplification (not BiasAmp): largest group's prediction share - positive share",
}


def _binary_task(inp: AuditInputs) -> bool:
    if "differential" in inp.results:  # a streamed audit counted it (it held a binary task)
        return True
    return inp.task_pred is not None and np.ndim(inp.task) == 1 and len(_uniques(inp.task)) == 2


@register_section(
    "differential",
    title="Differential fairness (intersectional)",
    citation=('J. R. Foulds, R. Islam, K. N. Keya, S. Pan. "An Intersectional Definition of Fairness". '
              "ICDE 2020."),
    how_to_read=(
        "epsilon is the largest log-ratio of an outcome's (smoothed) rate between two groups: 0 when every "
        "group has the same rates, log 2 = 0.69 when one group gets an outcome twice as often as another. "
        "epsilon_true is measured on the labels, epsilon_pred on the predictions; DF amplification = "
        "epsilon_pred - epsilon_true: positive when the model widens the gap the data already has, negative "
        "when it narrows it. Several attributes intersect (every combination is a group)."
    ),
    needs="attr, a binary task and task_pred",
    applicable=_binary_task,
    order=45,
    scales=dict.fromkeys(("DF amplification", "epsilon_true", "epsilon_pred"), "ratio"),
)
def _differential_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
    fopt, _ = resolve_fairness_options(opt.fairness, _uniques(inp.task), False)
    res, boot, notes = _family_result(inp, opt, "differential", options=family_options(fopt, "differential"))
    out = SectionData(summary=_declared_rows(inp, "differential", res, boot), notes=notes)
    for name, att in (("epsilon_true", res.attained_true), ("epsilon_pred", res.attained_pred)):
        y, hi, lo = att
        if hi != lo:
            out.notes.append(f"{name} is attained by outcome {y!r}: most frequent in group {hi!r}, least in {lo!r}")
    if boot is not None:
        out.notes.extend(boot.notes)
    out.tables["groups"] = res.to_frame().reset_index()
    return out


def _uniques(labels: Any) -> list:
    """The distinct values of 1-D labels (any byte order, booleans as they are)."""
    arr = np.asarray(to_numpy(labels, "task")).ravel()
    if arr.dtype.kind in "iuf" and not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return pd.unique(arr).tolist()


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
    scales={**dict.fromkeys(("DP", "SPSF", "FPSF", "EOFP", "EOTP", "BA"), "difference"), "DI": "ratio"},
)
def _fairness_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
    from biasamp.fairness._metrics import why_undefined

    multilabel = np.ndim(inp.task) != 1
    fopt, first = resolve_fairness_options(opt.fairness, () if multilabel else _uniques(inp.task), multilabel)
    res, boot, notes = _family_result(inp, opt, "fairness", options=fopt)
    notes = first + notes
    out = SectionData(notes=notes)
    if res.settings is not None:
        out.notes[:0] = [line[0].upper() + line[1:] for line in res.settings.describe()]
    which = (f", class {res.settings.pos_label!r}" if res.settings is not None and res.settings.average == "binary"
             else ", mean over classes")

    def note(s: Any) -> str:
        extra = (f"; {res.n_undefined[s.name]} classes undefined: {why_undefined(s.name)}"
                 if res.n_undefined.get(s.name) else "")
        return _FAIR_READ.get(s.name, "") + which + extra

    out.summary = _declared_rows(inp, "fairness", res, boot, note=note, undefined=lambda s: res.undefined_reasons.get(
        s.name), options=fopt)
    if boot is not None and boot.test_methods:
        adjust = _P_ADJUST_NAMES.get(boot.p_adjust, boot.p_adjust)
        out.notes.append(
            "p: the headline interval's own p-value (its inversion, from the same bootstrap replicates: p < "
            f"{1 - boot.level:g} exactly when the interval excludes 0). Per class, the tables '<metric> by class' "
            "give a test that the prediction is independent of the group (G-test; Fisher's exact test or a "
            "Monte-Carlo test with fixed margins when an expected count is below 5; columns 'independence p (per "
            f"class)' and 'independence p (per class, {adjust})'); BA has no such test. Intervals of these "
            "max/min/absolute-value metrics come from a simultaneous band on the signed group differences (on the "
            "group rates with many groups), "
            "so they are valid when there is no disparity (0)")
        for name, table in boot.tables.items():
            out.tables[f"{name} by class"] = table.rename(columns=_test_columns(boot, "independence", "class"))
    if "DI" in res.overall and not isinstance(res.overall["DI"], pd.Series) and "DI" not in res.undefined_reasons:
        ratio = res.disparate_impact_ratio
        out.notes.append(
            f"Disparate-impact ratio min/max PPR = {ratio:.3f}: "
            + ("meets" if ratio >= 0.8 else "fails") + " the four-fifths rule (>= 0.8); DI above is 1 - this ratio")
    if res.disparities is not None:
        d = res.disparities
        off = d[d["reading"].isin(["below tolerance", "above tolerance"])]
        # the most extreme first: the largest |log ratio| (a ratio of 0 is the most extreme of all)
        with np.errstate(divide="ignore"):
            off = off.iloc[np.argsort(-np.abs(np.log(off["ratio"].to_numpy(dtype=np.float64))), kind="stable")]
        compared = int(d["reading"].isin(["below tolerance", "above tolerance", "within tolerance"]).sum())
        tol = res.settings.tolerance
        at = d.columns.get_loc("class") + 1 if "class" in d.columns else None  # "class" is no tuple field name

        def where(r: Any) -> str:
            return f"{r.rate} of {r.group!s}" + (f" for class {r[at]!r}" if at is not None else "")

        shown = [f"{where(r)} ({r.ratio:.2f}{', small group' if r.small else ''})"
                 for r in off.head(8).itertuples()]
        out.notes.append(
            f"Disparities against the reference group {res.settings.reference_group!r}: {len(off)} of "
            f"{compared} group rates outside the tolerance [{tol[0]:g}, {tol[1]:g}]"
            + (" (most extreme first): " + ", ".join(shown) + (" ..." if len(off) > 8 else "") if len(off) else ""))
        out.tables["disparities"] = d
    if res.group_view is not None:
        out.tables["rates by group"] = res.group_view.by_group
    out.tables["by class"] = res.by_class
    out.tables["by group"] = res.by_group
    out.tables[BASE_RATES] = _base_rates(res)
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


def _base_rates(res: Any) -> pd.DataFrame:
    """Each group's rate of each task class in the labels and in the predictions (:data:`BASE_RATES`).

    From the (weighted) counts of the fairness result's ``by_group`` table:
    ``rate_true`` = positives / n, ``rate_pred`` = predicted positives / n
    (NaN for an empty group); ``headline``: the class is one the headline
    reads (the positive class of a binary task), ``small``: the group is
    flagged small.
    """
    bg = res.by_group
    n = bg["n"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        true = np.where(n > 0, bg["positives"].to_numpy(dtype=np.float64) / n, np.nan)
        pred = np.where(n > 0, bg["predicted_positive"].to_numpy(dtype=np.float64) / n, np.nan)
    headline = (bg["class"].isin(list(res.settings.headline_classes)).to_numpy(dtype=bool)
                if res.settings is not None else np.ones(len(bg), dtype=bool))
    return pd.DataFrame({"class": bg["class"].to_numpy(), "group": bg["group"].to_numpy(), "n": bg["n"].to_numpy(),
                         "small": bg["small"].to_numpy(dtype=bool), "headline": headline, "rate_true": true,
                         "rate_pred": pred})


def _wilson(num: np.ndarray, den: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of num/den (NaN where den is 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = num / den
        centre = (p + z * z / (2 * den)) / (1 + z * z / den)
        half = z * np.sqrt(p * (1 - p) / den + z * z / (4 * den * den)) / (1 + z * z / den)
    ok = den > 0
    return np.where(ok, np.clip(centre - half, 0, 1), np.nan), np.where(ok, np.clip(centre + half, 0, 1), np.nan)


_UNWEIGHTED_NOTE = "sample weights are not used here: the attackers are fitted and scored on unweighted rows"


def _predictability():
    try:
        from biasamp.predictability import _metrics as predictability
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
        "from (more entangled with) the other variable than the data is. The interval carries both "
        "the repeated iterations (random flips, splits and attacker seeds) and the test rows (a "
        "bootstrap of the rows, each replicate one iteration on a resample); the method column says which."
    ),
    needs="attr, task, attr_pred and/or task_pred, and the biasamp.predictability module",
    applicable=lambda inp: _has_pred(inp) and hasattr(_predictability(), "dpa"),
    order=50,
    scales={"DPA": "predictability"},
)
def _dpa_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
    pred = _predictability()
    attacker = opt.attacker  # "auto" is resolved per direction by dpa, which records which attacker ran and why
    res = pred.dpa(inp.attr, inp.task, attr_pred=inp.attr_pred, task_pred=inp.task_pred, attacker=attacker,
                   quality=opt.dpa_quality, n_iter=opt.n_iter, random_state=opt.seed("dpa"),
                   **_optional_kwargs(pred.dpa, level=opt.level, progress=opt.progress))
    out = SectionData()
    if inp.weight is not None:
        out.notes.append(_UNWEIGHTED_NOTE)
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
        out.summary.append(_row("DPA", d.direction, d.value, ci, _predictability_method(d, opt.n_iter, inp),
                                inp.n_rows, note, p_value=getattr(d, "p_value", None),
                                min_detectable=getattr(d, "min_detectable", None)))
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
    scales={"LA": "predictability"},
)
def _leakage_section(inp: AuditInputs, opt: AuditConfig) -> SectionData:
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
        out.notes.append(_UNWEIGHTED_NOTE)
    if getattr(res, "attacker_reason", ""):
        out.notes.append(f"LA attacker {res.attacker}: {res.attacker_reason}")
    out.summary.append(_row("LA", "", res.value, getattr(res, "ci", None), _predictability_method(res, opt.n_iter, inp),
                            inp.n_rows, note, p_value=getattr(res, "p_value", None),
                            min_detectable=getattr(res, "min_detectable", None),
                            zero_width=_majority_attacker(inp, res)))
    out.tables["iterations"] = res.iterations
    col = "leakage" if "leakage" in res.iterations.columns else res.iterations.columns[-1]
    out.figures.append(FigureSpec("iterations", "LA per iteration", "strip",
                                  pd.DataFrame({"label": "LA", "value": res.iterations[col].to_numpy(np.float64)})))
    return out


def _predictability_method(res: Any, n_iter: int, inp: AuditInputs) -> str:
    """The interval method of a DPA direction or LA result: what ``ci_over`` its interval carries.

    E.g. ``"t over 10 iterations x row bootstrap (10)"``; a streamed audit's
    rows are a sample of the stream (``inp.n_rows`` of ``inp.n``), which the
    row bootstrap resamples.
    """
    over = getattr(res, "ci_over", "iterations") or "iterations"
    reps = getattr(res, "replicates", None)
    boot = f"row bootstrap ({0 if reps is None else len(reps)})"
    if inp.n_rows < inp.n:
        boot += f" of a sample of {inp.n_rows:,} rows"
    return {"iterations": f"t over {n_iter} iterations", "rows": f"t over {boot}"}.get(
        over, f"t over {n_iter} iterations x {boot}")


def _majority_attacker(inp: AuditInputs, res: Any) -> str | None:
    """Why LA's interval has width 0 when its attacker only ever predicts the majority attribute class."""
    it = getattr(res, "iterations", None)
    if it is None or not {"lambda_data", "lambda_model"} <= set(it.columns) or np.ndim(inp.attr) != 1:
        return None
    lam = it[["lambda_data", "lambda_model"]].to_numpy(dtype=np.float64)
    _, counts = np.unique(np.asarray(to_numpy(inp.attr, "attr")).astype(str), return_counts=True)
    share = counts.max() / counts.sum()
    # the attacker's accuracy is the same on the data and the predictions in every iteration, and it is the
    # majority class's share (on the held-out rows, hence only close to its share of all rows)
    if lam.size and np.ptp(lam) == 0 and abs(lam[0, 0] - share) <= 0.05:
        return (f"interval of width 0: in every iteration the attacker predicts the majority attribute class "
                f"for every row (lambda_D = lambda_M = {lam[0, 0]:.4g}, the majority class's share of the held-out "
                f"rows; {share:.4g} of all rows): the task labels tell this attacker "
                "nothing about the attribute, on the data or on the predictions, so LA is 0; a stronger "
                "attacker, or DPA, may still find leakage")
    return None


def _optional_kwargs(func: Callable, **kwargs: Any) -> dict:
    """The keyword arguments ``func`` accepts (the predictability API may not have them all)."""
    import inspect

    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in kwargs.items() if k in params}
