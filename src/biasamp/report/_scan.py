"""The audit's subgroup scan section: where the statistic lives (:func:`biasamp.scan`).

Registered here (importing this module registers it; :mod:`biasamp.report`
does). It runs when :func:`~biasamp.audit` is given ``features=`` (``biasamp
audit --features col,col``) and is left out otherwise. The statistic scanned
is ``AuditConfig.scan_statistic``, by default BiasAmp→ A→T when task
predictions are given, else T→A when attribute predictions are
(:func:`scan_statistic`; docs/scan.md).
"""

from __future__ import annotations

import warnings

import pandas as pd

from biasamp.exceptions import BiasampWarning
from biasamp.report._inputs import AuditInputs, AuditOptions
from biasamp.report._registry import FigureSpec, SectionData, register_section
from biasamp.report._sections import _reading
from biasamp.subgroups import scan
from biasamp.subgroups._accumulator import statistic_of

__all__ = ["scan_n_boot", "scan_statistic", "statistic_given"]

#: the statistics the audit scans by default, in order of preference, with the prediction each needs
_DEFAULTS = ("A->T", "T->A")
#: rows of the section's subgroup table
_TABLE_ROWS = 20

HOW_TO_READ = (
    "Every subgroup defined by one or two conditions on the features (numeric features cut at their quartiles, "
    "missing values a level of their own) with enough rows gets the statistic and an interval adjusted for the "
    "selection: with 95% probability (the audit's level) every subgroup's interval holds its value at once, so "
    "the first rows, those with the most evidence, are not an artefact of having looked at many subgroups. "
    "'flagged' marks an adjusted interval that excludes 0; the unadjusted interval is each subgroup alone "
    "(narrower: do not read the top subgroups by it). A subgroup's value keeps what the whole population fixes "
    "(signs from the training set, or cross-fitted over the whole test set).")


def scan_statistic(inp: AuditInputs, opt: AuditOptions) -> str | None:
    """The statistic the audit scans: ``scan_statistic``, else A→T with task predictions, else T→A, else None."""
    return statistic_given(opt, attr_pred=inp.attr_pred is not None, task_pred=inp.task_pred is not None)


def statistic_given(opt: AuditOptions, *, attr_pred: bool, task_pred: bool) -> str | None:
    """:func:`scan_statistic` from which predictions are given (a streamed audit knows its columns, not its rows)."""
    if opt.scan_statistic is not None:
        return opt.scan_statistic
    given = {"task_pred": task_pred, "attr_pred": attr_pred}
    for name in _DEFAULTS:
        _, spec = statistic_of(name)
        if all(given.get(r, False) for r in spec.needs):
            return name
    return None


def scan_n_boot(opt: AuditOptions) -> int:
    """The scan's replicates in an audit: its ``n_boot``, at least 100."""
    return max(opt.n_boot, 100)


def _renamed(options: dict) -> dict:
    """The family's options as :func:`biasamp.scan` takes them (its small-group rule is ``min_class_size``)."""
    out = dict(options)
    if "min_group_size" in out:
        out["min_class_size"] = out.pop("min_group_size")
    return out


def _applicable(inp: AuditInputs) -> bool:
    return getattr(inp, "features", None) is not None or "scan" in inp.results


@register_section("scan", title="Where it lives: subgroup scan", citation=(
    "J. Cherian, E. Candès. \"Statistical inference for fairness auditing\". 2023 (simultaneous bounds); "
    "max-t band from one grouped bootstrap of every subgroup (docs/scan.md)"),
    how_to_read=HOW_TO_READ, needs="features (audit(features=...), biasamp audit --features col,col)",
    applicable=_applicable, order=65, omit_when_skipped=True)
def _scan_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    streamed = inp.results.get("scan")  # a streamed audit counted the scan (biasamp.report._stream): its result
    if streamed is not None:
        res = streamed()
        name = res.statistic
        fam, spec = statistic_of(name)
    else:
        name = scan_statistic(inp, opt)
        if name is None:
            raise ValueError("the subgroup scan needs a statistic: give task or attribute predictions, or choose "
                             "one with scan_statistic")
        fam, spec = statistic_of(name)
        roles = {r: v for r, v in inp.roles(("attr_pred", "task_pred", "attr_train", "task_train")).items()
                 if r in (*fam.roles, "attr_train", "task_train")}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BiasampWarning)
            res = scan(inp.attr, inp.task, features=inp.features, **roles, statistic=name,
                       max_order=opt.scan_max_order, min_group_size=opt.scan_min_group_size, level=opt.level,
                       n_boot=scan_n_boot(opt), random_state=opt.seed("scan"), sample_weight=inp.weight,
                       **_renamed(opt.family_options(fam.key)))
    sub = res.subgroups
    label = f"{spec.label or spec.name}{' ' + spec.direction if spec.direction else ''}"
    summary = []
    if len(sub) and sub["scanned"].iloc[0]:
        top = sub.iloc[0]
        ci = (float(top.ci_low), float(top.ci_high))
        summary.append({"metric": f"{spec.label or spec.name} (top subgroup)", "direction": spec.direction,
                        "value": float(top.estimate),
                        "ci_low": ci[0], "ci_high": ci[1], "ci_method": f"max-t band over {res.n_scanned} subgroups",
                        "p_value": float(top.p_value), "n": int(round(float(top.n))),
                        "reading": _reading(ci, spec.reading_kind),
                        "note": f"top subgroup: {top.rule}; {res.n_flagged} of {res.n_scanned} subgroups flagged "
                                "(adjusted interval excludes 0)"})
    cols = ["rule", "n", "estimate", "ci_low", "ci_high", "p_value", "flagged", "ci_low_unadjusted",
            "ci_high_unadjusted", "p_value_unadjusted", "reason"]
    table = sub.head(_TABLE_ROWS)[cols].copy()
    table["n"] = table["n"].round().astype(int)
    shown = sub[sub["scanned"]].head(opt.top_k)
    figure = FigureSpec("scan", f"{label}: the {len(shown)} subgroups with the most evidence", "hbar",
                        pd.DataFrame({"label": shown["rule"], "value": shown["estimate"], "low": shown["ci_low"],
                                      "high": shown["ci_high"], "n": shown["n"].round().astype(int)}),
                        caption=f"estimates with their simultaneous {res.level:.0%} intervals (adjusted for the "
                                f"{res.n_scanned} subgroups scanned)")
    notes = [f"scanned {name} on {res.n_scanned} subgroups of at least {res.min_group_size:,.0f} rows "
             f"({len(sub)} candidates of up to {res.max_order} conditions, {res.n_candidates - len(sub)} smaller left "
             f"out); critical value c = {res.critical_value:.3g} from {res.n_boot} grouped bootstrap replicates; "
             f"{name} on every row: {res.overall:+.4f}"]
    unscanned = int((~sub["scanned"]).sum())
    if unscanned:
        notes.append(f"{unscanned} subgroups are out of the band (undefined there, or constant over the "
                     "replicates): their reason is in the table")
    notes += [n for n in res.notes if n not in notes]
    return SectionData(summary=summary, tables={"subgroups": table}, figures=[figure] if len(shown) else [],
                       notes=notes)
