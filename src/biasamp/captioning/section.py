"""The data of a captioning section of the audit report, built from results (wiring: see docs/captioning.md).

:func:`caption_section` returns plain data in the shape of the report's
section builders (``summary`` rows with the report's summary columns,
``tables``, ``notes``) plus the section's metadata (``key``, ``title``,
``citation``, ``how_to_read``, ``needs``). It imports nothing from the report,
so the report can call it from a registered builder.
"""

from __future__ import annotations

from typing import Any

from .dbac import DBACResult
from .lic import LICResult
from .stats import CaptionGenderStats

__all__ = ["CAPTION_COLUMNS", "caption_section"]

#: The column names ``audit`` / ``biasamp audit`` read captions from: the model's caption is required,
#: the human caption(s) optional (several: ``caption``, ``caption_1``, ... ).
CAPTION_COLUMNS = {"captions_pred": "caption_pred", "captions": "caption", "split": "split"}

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
NEEDS = "a model caption column (caption_pred) and the attribute; human captions (caption) for LIC and DBAC"


def _row(metric: str, direction: str, value: Any, ci: Any, n: Any, note: str = "", kind: str = "amp") -> dict:
    low: float | None = None
    high: float | None = None
    reading = ""
    if ci is not None:
        low, high = float(ci[0]), float(ci[1])
        if kind == "amp":
            reading = "amplified" if low > 0 else "reduced" if high < 0 else "no evidence"
        elif kind == "level":
            reading = "leaks" if low > 0.25 else "no evidence"
    return {"metric": metric, "direction": direction, "value": None if value is None else float(value),
            "ci_low": low, "ci_high": high, "ci_method": "t" if ci is not None else "", "p_value": None,
            "n": None if n is None else int(n), "reading": reading, "note": note}


def caption_section(lic: LICResult | None = None, dbac: DBACResult | None = None,
                    stats: CaptionGenderStats | None = None) -> dict:
    """Report-section data for the captioning results given (any of them).

    Returns ``{"key", "title", "citation", "how_to_read", "needs", "summary",
    "tables", "notes"}``; ``summary`` holds one row per headline number with
    the report's summary columns (``metric, direction, value, ci_low,
    ci_high, ci_method, p_value, n, reading, note``).
    """
    summary, tables, notes = [], {}, []
    if lic is not None:
        n_test = int(lic.iterations["n_test"].iloc[0]) if len(lic.iterations) else None
        if lic.value is None:
            summary.append(_row("LIC", "A", None, None, n_test, note=f"undefined: {lic.reason}"))
        else:
            summary.append(_row("LIC", "A", lic.value, lic.ci, n_test))
        summary.append(_row("LIC_M", "A", lic.lic_m, lic.ci_m, n_test, note=f"{lic.attacker} attacker, masked "
                            f"{lic.masked}; an attacker that learns nothing scores about 0.25 (two balanced classes)",
                            kind="level"))
        if lic.lic_d is not None:
            summary.append(_row("LIC_D", "A", lic.lic_d, lic.ci_d, n_test, kind="level"))
        tables["lic_iterations"] = lic.iterations
        tables["lic_by_class"] = lic.by_class.reset_index()
    if dbac is not None:
        for d in (dbac.a_to_t, dbac.t_to_a):
            if d is not None:
                summary.append(_row("DBAC", d.direction, d.value, d.ci, int(d.iterations["n_test"].iloc[0]),
                                    note=f"Psi_D {d.psi_data:.4g}, Psi_M {d.psi_model:.4g}; {dbac.quality}"))
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
    return {"key": "captioning", "title": TITLE, "citation": CITATION, "how_to_read": HOW_TO_READ, "needs": NEEDS,
            "summary": summary, "tables": tables, "notes": notes}
