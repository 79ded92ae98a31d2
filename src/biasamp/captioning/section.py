"""The data of a captioning section of the audit report, built from results (wiring: see docs/captioning.md).

:func:`caption_section` returns plain data in the shape of the report's
section builders (``summary`` rows with the report's summary columns,
``tables``, ``notes``) plus the section's metadata (``key``, ``title``,
``citation``, ``how_to_read``, ``needs``). It imports nothing from the report,
so the report can call it from a registered builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.results import as_read, interval_side
from biasamp._engine.inference import consistent_p_value, t_inference
from biasamp._engine.options import DEFAULT_LEVEL, DEFAULT_N_BOOT

from ._intervals import standard_error
from ._text import GENDER_WORDS
from .dbac import DBACResult
from .lic import LICResult
from .stats import CaptionGenderStats

__all__ = ["CAPTION_COLUMNS", "KEY", "audit_section", "caption_columns", "caption_frame", "caption_inputs",
           "caption_section"]

#: The column names ``audit`` / ``biasamp audit`` read captions from: the model's caption is required,
#: the human caption(s) optional (several: ``caption``, ``caption_1``, ... ).
CAPTION_COLUMNS = {"captions_pred": "caption_pred", "captions": "caption", "split": "split"}

#: The key of the report's captioning section.
KEY = "captioning"
TITLE = "Bias amplification in captions (LIC, DBAC)"
CITATION = ("Hirota, Nakashima & Garcia, CVPR 2022 (LIC); Nair, Tokas & Kerner, arXiv:2503.07878, 2025 (DBAC); "
            "Burns et al., ECCV 2018 (gender error and ratio)")
HOW_TO_READ = (
    "LIC_M is how well an attacker guesses the person's attribute from the model's captions once the attribute "
    "words are masked (0.25 is chance for two balanced classes); LIC = LIC_M - LIC_D compares it with the human "
    "captions of the same images: above 0, the model's captions carry more attribute signal than people's. DBAC "
    "splits the change by direction: A->T (the attribute steers which objects are mentioned) and T->A (the objects "
    "and context reveal the attribute), each (Psi_M - Psi_D)/(Psi_M + Psi_D) in [-1, 1]. Gender error is the "
    "fraction of captions naming the wrong gender; a ratio of 1 keeps the data's proportion of the two genders."
)
NO_SAMPLE = ("not computed: a streamed audit with dpa_rows=0 (--dpa-rows 0) holds no sample of test rows, and LIC "
             "and DBAC fit their attackers on the sampled rows' captions")
NEEDS = "a model caption column (caption_pred) and the attribute; human captions (caption) for LIC and DBAC"


def _row(metric: str, direction: str, value: Any, ci: Any, n: Any, note: str = "", kind: str = "amp",
         method: str = "", chance: float = 0.25, result: Any = None, quantity: str = "") -> dict:
    """A summary row; for an amplification (``kind="amp"``) with its ``result``, the interval's own p-value
    and MDE (the t test of the interval's standard error, :func:`_inference`). Bounds within 1e-12 of 0 (of
    ``chance`` for a leakage level) read as 0."""
    low: float | None = None
    high: float | None = None
    reading = ""
    extra: dict = {}
    if ci is not None:
        low, high = float(ci[0]), float(ci[1])
        if kind == "amp":
            side = interval_side(low, high)
            reading = "amplified" if side > 0 else "reduced" if side < 0 else "no evidence"
            if result is not None and value is not None:
                extra = _inference(result, quantity, float(value), (low, high))
        elif kind == "level":
            reading = "leaks" if as_read(low - chance) > 0 else "no evidence"
    return {"metric": metric, "direction": direction, "value": None if value is None else float(value),
            "ci_low": low, "ci_high": high, "ci_method": method if ci is not None else "",
            "p_value": extra.get("p_value"), "min_detectable": extra.get("min_detectable"),
            "n": None if n is None else int(n), "reading": reading, "note": note}


def _inference(res: Any, quantity: str, value: float, ci: tuple[float, float]) -> dict:
    """``p_value`` and ``min_detectable`` of a LIC or DBAC interval: its standard error and degrees of freedom
    (``ci_over``: iterations, captions or both, :func:`biasamp.captioning._intervals.standard_error`), the t
    test whose inversion the interval is, and its MDE."""
    frame, level = getattr(res, "intervals", None), getattr(res, "level", None)
    if frame is None or level is None or quantity not in frame.index:
        return {}
    n_iter = len(res.iterations)
    se, df = standard_error(float(frame.loc[quantity, "se_iterations"]), float(frame.loc[quantity, "se_captions"]),
                            n_iter, getattr(res, "ci_over", "iterations"))
    if not df > 0:
        return {}
    inf = t_inference(value, se, df, level)
    return {"p_value": consistent_p_value(inf.p_value, ci[0], ci[1], level), "min_detectable": inf.min_detectable}


def _method(res: Any, n_iter: int) -> str:
    """The report's words for the interval of a LIC or DBAC result (``ci_method`` of its rows)."""
    over = getattr(res, "ci_over", "iterations")
    boot = f"caption bootstrap ({res.n_boot})"
    it = f"t over {n_iter} iterations"
    return {"both": f"{boot} + {it}", "captions": boot, "iterations": it}[over]


def caption_section(lic: LICResult | None = None, dbac: DBACResult | None = None,
                    stats: CaptionGenderStats | None = None) -> dict:
    """Report-section data for the captioning results given (any of them).

    Returns ``{"key", "title", "citation", "how_to_read", "needs", "summary",
    "tables", "notes", "figures"}``; ``summary`` holds one row per headline
    number with the report's summary columns (``metric, direction, value,
    ci_low, ci_high, ci_method, p_value, n, reading, note, min_detectable``; LIC and DBAC with the
    interval's own p-value and minimum detectable effect); ``figures``
    the data of the report's plots (dicts with the fields of
    ``biasamp.report.FigureSpec``).
    """
    summary, tables, notes, bars = [], {}, [], []
    if lic is not None:
        n_test = int(lic.iterations["n_test"].iloc[0]) if len(lic.iterations) else None
        method = _method(lic, len(lic.iterations))
        k = len(lic.by_class)
        chance = 1.0 / k ** 2 if lic.balanced else 0.25
        if lic.value is None:
            summary.append(_row("LIC", "A", None, None, n_test, note=f"undefined: {lic.reason}"))
        else:
            summary.append(_row("LIC", "A", lic.value, lic.ci, n_test, method=method, result=lic, quantity="lic"))
        summary.append(_row("LIC_M", "A", lic.lic_m, lic.ci_m, n_test, note=f"{lic.attacker} attacker, masked "
                            f"{lic.masked}; an attacker that learns nothing scores about {chance:.2g} ({k} "
                            f"{'balanced ' if lic.balanced else ''}classes)", kind="level", method=method,
                            chance=chance))
        if lic.lic_d is not None:
            summary.append(_row("LIC_D", "A", lic.lic_d, lic.ci_d, n_test, kind="level", method=method, chance=chance))
        tables["lic_iterations"] = lic.iterations
        tables["lic_by_class"] = lic.by_class.reset_index()
        if lic.intervals is not None:
            tables["lic_intervals"] = lic.intervals.reset_index()
        for metric, value, ci, facet in (("LIC_M", lic.lic_m, lic.ci_m, "leakage"),
                                         ("LIC_D", lic.lic_d, lic.ci_d, "leakage"),
                                         ("LIC", lic.value, lic.ci, "amplification")):
            if value is not None:
                bars.append((metric, value, ci, facet))
    if dbac is not None:
        for d in (dbac.a_to_t, dbac.t_to_a):
            if d is not None:
                summary.append(_row("DBAC", d.direction, d.value, d.ci, int(d.iterations["n_test"].iloc[0]),
                                    note=f"Psi_D {d.psi_data:.4g}, Psi_M {d.psi_model:.4g}; {dbac.quality}",
                                    method=_method(d, dbac.n_iter), result=d, quantity="dbac"))
                if d.intervals is not None:
                    tables[f"dbac_intervals {d.direction}"] = d.intervals.reset_index()
                bars.append((f"DBAC {d.direction}", d.value, d.ci, "amplification"))
        tables["dbac_iterations"] = dbac.to_frame()
    if stats is not None:
        n = int(stats.by_class["n"].sum())
        summary.append(_row("gender error", "", stats.error, stats.ci.get("error"), n, kind="none"))
        summary.append(_row("gender-neutral rate", "", stats.neutral_rate, stats.ci.get("neutral_rate"), n,
                            kind="none"))
        summary.append(_row("gender ratio", "", stats.ratio, stats.ci.get("ratio"), n, kind="none",
                            note=stats.reason and f"undefined: {stats.reason}"))
        for r in summary[-3:]:
            r["ci_method"] = "bootstrap" if r["ci_low"] is not None else ""
        tables["caption_gender_by_class"] = stats.by_class.reset_index()
        tables["caption_gender_confusion"] = stats.confusion.reset_index()
    if not summary:
        notes.append("no captioning result given")
    figures = []
    if bars:
        data = pd.DataFrame({"label": [b[0] for b in bars], "value": [float(b[1]) for b in bars],
                             "low": [np.nan if b[2] is None else float(b[2][0]) for b in bars],
                             "high": [np.nan if b[2] is None else float(b[2][1]) for b in bars],
                             "facet": [b[3] for b in bars]})
        figures.append({"key": "captioning", "title": "LIC and DBAC", "kind": "hbar", "data": data,
                        "caption": "Leakage of the masked captions (LIC_M: the model's, LIC_D: the human ones) and "
                                   "its amplification (LIC = LIC_M - LIC_D; DBAC per direction), with their "
                                   "intervals (over the captions and the iterations)."})
    return {"key": KEY, "title": TITLE, "citation": CITATION, "how_to_read": HOW_TO_READ, "needs": NEEDS,
            "summary": summary, "tables": tables, "notes": notes, "figures": figures}


# --------------------------------------------------------------------------- #
# the audit's caption inputs and section
# --------------------------------------------------------------------------- #
def _human_columns(columns: Any) -> list[str]:
    """The human caption columns by the convention: ``caption``, else ``caption_1``, ``caption_2``, ..."""
    base = CAPTION_COLUMNS["captions"]
    cols = [str(c) for c in columns]
    if base in cols:
        return [base]
    numbered = [c for c in cols if c.startswith(base + "_") and c[len(base) + 1:].isdigit()]
    return sorted(numbered, key=lambda c: int(c[len(base) + 1:]))


def caption_inputs(captions: Any, n: int) -> dict | None:
    """The ``captions=`` argument of :func:`~biasamp.audit`, checked: ``{"captions_pred", "captions", "split"}``.

    ``captions`` is a DataFrame (or a mapping column name -> values) with the
    columns of :data:`CAPTION_COLUMNS`: ``caption_pred`` (the model's
    caption of each test row, required), ``caption`` or ``caption_1``,
    ``caption_2``, ... (human captions, optional), ``split`` (``train`` /
    ``val``: the attackers' training and scored images, optional); one row
    per test row. ``None`` stays ``None``.
    """
    if captions is None:
        return None
    if isinstance(captions, Mapping) and not isinstance(captions, pd.DataFrame):
        try:
            captions = pd.DataFrame(dict(captions))
        except ValueError as exc:
            raise ValueError(f"captions: its columns must have one value per test row ({exc})") from None
    if not isinstance(captions, pd.DataFrame):
        raise TypeError("captions must be a DataFrame (or a mapping column -> values) with a 'caption_pred' column "
                        f"(the model's caption of each test row), got {type(captions).__name__}")
    pred_col = CAPTION_COLUMNS["captions_pred"]
    if pred_col not in captions.columns:
        raise ValueError(f"captions has no {pred_col!r} column (the model's caption of each test row); its columns: "
                         f"{[str(c) for c in captions.columns]}")
    if len(captions) != n:
        raise ValueError(f"captions has {len(captions)} rows but attr has {n}: one caption row per test row")
    human = _human_columns(captions.columns)
    split_col = CAPTION_COLUMNS["split"]
    return {"captions_pred": captions[pred_col].to_numpy(dtype=object),
            "captions": (None if not human else captions[human[0]].to_numpy(dtype=object) if len(human) == 1
                         else captions[human].to_numpy(dtype=object)),
            "split": captions[split_col].to_numpy() if split_col in captions.columns else None,
            "human_columns": human}


def caption_columns(columns: Any, captions_pred: str | None = None, captions: Any = ()) -> dict | None:
    """The columns of a table that :func:`caption_frame` reads, by :data:`CAPTION_COLUMNS` key; None when absent.

    Returns ``{"captions_pred": str, "captions": list of str, "split": str
    or None}`` from the table's column names ``columns``, by the rules of
    :func:`caption_frame` (a streamed audit reads these columns into its
    sample of test rows). ``ValueError`` for a named column the table lacks.
    """
    cols = [str(c) for c in columns]
    captions = [c for c in captions if c]
    for c in [captions_pred, *captions]:
        if c is not None and c not in cols:
            raise ValueError(f"caption column {c!r} not found; columns: {cols}")
    pred = captions_pred or (CAPTION_COLUMNS["captions_pred"] if CAPTION_COLUMNS["captions_pred"] in cols else None)
    if pred is None:
        if captions:
            raise ValueError("human caption columns given without the model's captions: name the model's caption "
                             f"column (--captions-pred) or call it {CAPTION_COLUMNS['captions_pred']!r}")
        return None
    return {"captions_pred": pred, "captions": list(captions) or _human_columns(cols),
            "split": CAPTION_COLUMNS["split"] if CAPTION_COLUMNS["split"] in cols else None}


def caption_frame(frame: pd.DataFrame, captions_pred: str | None = None, captions: Any = ()) -> pd.DataFrame | None:
    """The caption columns of a table (``biasamp audit``), renamed to :data:`CAPTION_COLUMNS`; None when absent.

    ``captions_pred`` / ``captions`` name the model's and the human caption
    columns; by default ``caption_pred`` and ``caption`` (or ``caption_1``,
    ``caption_2``, ...) when the table has them. A ``split`` column goes
    with them. ``ValueError`` for a named column the table lacks.
    """
    found = caption_columns(frame.columns, captions_pred, captions)
    if found is None:
        return None
    human = found["captions"]
    out = pd.DataFrame({CAPTION_COLUMNS["captions_pred"]: frame[found["captions_pred"]].to_numpy(dtype=object)})
    base = CAPTION_COLUMNS["captions"]
    for i, c in enumerate(human, start=1):
        out[base if len(human) == 1 else f"{base}_{i}"] = frame[c].to_numpy(dtype=object)
    if found["split"] is not None:
        out[CAPTION_COLUMNS["split"]] = frame[found["split"]].to_numpy()
    return out


def _is_gender(attr: Any) -> bool:
    values = {str(v).lower() for v in pd.unique(np.asarray(attr, dtype=object).reshape(-1))}
    return values <= set(GENDER_WORDS)


def audit_section(attr: Any, task: Any, inputs: dict, *, task_pred: Any = None, n_iter: int = 10,
                  n_boot: int = DEFAULT_N_BOOT, level: float = DEFAULT_LEVEL, random_state: Any = None,
                  progress: Any = None) -> dict:
    """The audit's captioning section: LIC, DBAC (with human captions) and caption gender statistics.

    ``inputs`` is :func:`caption_inputs`' result. The words masked are the
    gender words when the attribute's classes are ``male`` / ``female``, the
    race words otherwise. DBAC reads the first human caption column and
    predicts ``task`` from the human captions and ``task_pred`` (hard
    labels, e.g. ``caption_labels(captions_pred)``: the objects the model
    mentions), else ``task`` too, from the model's; the task's class names
    give the masked task words, and DBAC is left out, with a note, when they
    cannot be derived. Returns :func:`caption_section`'s data, with notes on
    these choices.
    """
    from .dbac import dbac
    from .lic import lic
    from .stats import caption_gender_stats

    gender = _is_gender(attr)
    mask = "gender" if gender else "race"
    pred, human, split = inputs["captions_pred"], inputs["captions"], inputs["split"]
    kw: dict[str, Any] = dict(n_iter=n_iter, random_state=random_state, level=level, n_boot=n_boot, progress=progress)
    res_l = lic(attr, captions_pred=pred, captions=human, split=split, mask=mask, **kw)
    notes = [f"masked: the {mask} words (biasamp.captioning.{mask.upper()}_WORDS)"
             + ("" if gender else ", because the attribute's classes are not male/female; call lic(mask=...) "
                "for other words")]
    res_d = None
    if human is not None:
        first = human if human.ndim == 1 else human[:, 0]
        try:
            res_d = dbac(attr, task, captions=first, captions_pred=pred, task_pred=task_pred, split=split,
                         attr_words=mask, **kw)
        except ValueError as exc:
            if "task_words" not in str(exc):
                raise
            notes.append(f"DBAC not computed: {exc}")
        else:
            notes.append("DBAC A->T: the model side predicts " + ("task_pred" if task_pred is not None else
                         "the task labels (pass task_pred, e.g. caption_labels(captions_pred), for the objects the "
                         "model mentions)"))
            if human.ndim == 2:
                notes.append(f"DBAC reads the first human caption column ({inputs['human_columns'][0]}); LIC_D "
                             "averages over all of them")
    else:
        notes.append("no human caption column (caption): LIC = LIC_M - LIC_D and DBAC need one; LIC_M is reported")
    res_s = caption_gender_stats(attr, captions_pred=pred, random_state=random_state, level=level, n_boot=n_boot) \
        if gender else None
    out = caption_section(res_l, res_d, res_s)
    if level is not None:
        notes.append("Intervals of LIC and DBAC: a bootstrap of the scored images (model and human captions of an "
                     "image together, the attackers held fixed) combined with the t-interval over the iterations; "
                     "they do not cover how the attackers vary with their training captions (docs/captioning.md)")
    out["notes"] = notes + out["notes"]
    return out
