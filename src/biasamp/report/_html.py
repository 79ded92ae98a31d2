"""HTML rendering of :class:`biasamp.report.Report`: one self-contained file.

No external resource (style, script, font or image) is referenced: the style
sheet is inline and plots are inline SVG (:mod:`biasamp.report._plots`, when
matplotlib is installed). Every piece of text goes through :func:`escape`:
:func:`biasamp._core.escape.plain` (no control character, NUL byte or bidi
override; one line), then :func:`html.escape`.
"""

from __future__ import annotations

import math
import re
from html import escape as _html_escape
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core.escape import plain
from biasamp._core.results import EXACT_ZERO, signed
from biasamp._engine.options import DEFAULT_LEVEL
from biasamp.report._inputs import rows_used
from biasamp.report._overview import overview_html

__all__ = ["render_html"]

def escape(text: Any, quote: bool = True) -> str:
    """Text for HTML: printable (:func:`biasamp._core.escape.plain`) and ``& < > " '`` escaped."""
    return _html_escape(plain(text), quote)


_MAX_ROWS = 200  # detail tables longer than this are cut (the JSON report has them whole)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#1b1f23;
background:#fff;line-height:1.45}
main{max-width:1100px;margin:0 auto;padding:24px 32px 64px}
h1{font-size:1.7em;margin:0 0 4px}h2{font-size:1.3em;margin:40px 0 6px;border-bottom:2px solid #e1e4e8;
padding-bottom:4px}h3{font-size:1.05em;margin:18px 0 6px}
.meta{color:#586069;font-size:.92em}.cite{color:#586069;font-size:.88em;font-style:italic}
.read{background:#f6f8fa;border-left:4px solid #2e86c1;padding:8px 12px;margin:8px 0;font-size:.93em}
table{border-collapse:collapse;margin:8px 0 12px;font-size:.86em}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f3f6}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.amplified{color:#b03a2e;font-weight:600}.reduced{color:#1f618d;font-weight:600}.skipped,.error{color:#586069}
.error{color:#b03a2e}figure{margin:12px 0}figcaption{color:#586069;font-size:.85em}
details{margin:6px 0}summary{cursor:pointer;color:#0366d6}
nav ul{columns:2;font-size:.92em}.notes li{color:#6a737d;font-size:.88em}
table.summary td:last-child{min-width:12em}td.method{min-width:11em}
.small-effect{font-weight:400;opacity:.75}.na{color:#6a737d}
.size{display:block;color:#586069;font-size:.85em;font-weight:400}
.overview{background:#fffbea;border:1px solid #e8d9a0;border-radius:4px;padding:4px 16px 8px;margin-top:16px}
.overview h2{margin-top:8px}.overview .disagree{color:#b03a2e}.overview .why{font-size:.95em}
"""



def _anchor(key: str) -> str:
    """An HTML id for a section key: ``fairness[race x sex]`` -> ``fairness-race-x-sex``."""
    return re.sub(r"[^0-9A-Za-z_-]+", "-", key).strip("-") or "section"

def _min_effect_text(report: Any) -> str:
    """The report's ``min_effect`` in words (default 0.01; per metric when a mapping)."""
    from biasamp.report._sections import SMALL_EFFECT

    given = report.options.get("min_effect", SMALL_EFFECT)
    if isinstance(given, dict):
        return ", ".join(f"{escape(str(k))} {v:g}" for k, v in given.items())
    return f"{SMALL_EFFECT if given is None else float(given):g}"


def _cell(v: Any) -> tuple[str, bool]:
    """(text, numeric) of a table cell."""
    if v is None:
        return "", False
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v)), False
    if isinstance(v, (int, np.integer)):
        return str(int(v)), True
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            return "", True
        if abs(v) < EXACT_ZERO:  # the rounding error of an exact 0 prints as 0, never as -0.0000
            v = 0.0
        return (f"{v:.4f}" if abs(v) < 1e4 else f"{v:.4g}"), True
    if isinstance(v, tuple):
        return " + ".join(str(x) for x in v), False
    return str(v), False


def _table(frame: pd.DataFrame, *, max_rows: int = _MAX_ROWS, css_class: str = "") -> str:
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    cut = len(frame) > max_rows
    shown = frame.head(max_rows) if cut else frame
    head = "".join(f"<th>{escape(str(c))}</th>" for c in shown.columns)
    body = []
    for row in shown.itertuples(index=False, name=None):
        cells = []
        for v in row:
            text, num = _cell(v)
            cells.append(f'<td class="num">{escape(text)}</td>' if num else f"<td>{escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cls = f' class="{css_class}"' if css_class else ""
    out = f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    if cut:
        out += f'<p class="meta">first {max_rows} of {len(frame)} rows (the JSON report has all of them)</p>'
    return out


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    return signed(v)


def _fmt_p(p: Any) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


_NO_TEST = "no p-value for this interval: the interval gives the reading"


def _reading_cell(reading: str, value: Any, min_effect: Any = None) -> str:
    """The reading, and next to it the effect's size when the interval excludes 0 for a small effect
    (smaller than the report's ``min_effect`` for the metric, the threshold given as a number)."""
    from biasamp.report._sections import SMALL_EFFECT

    threshold = SMALL_EFFECT if min_effect is None else float(min_effect)
    cls = escape(reading).replace(" ", "-")
    if reading in ("amplified", "reduced", "disparity", "distorted") and isinstance(value, (int, float)) \
            and math.isfinite(value) and abs(value) < threshold:
        return (f'<td class="{cls} small-effect">{escape(reading)}<span class="size">small effect '
                f"(|{escape(_fmt(value))}| &lt; {threshold:g})</span></td>")
    return f'<td class="{cls}">{escape(reading)}</td>'


def _fmt_mde(v: Any) -> str:
    return _fmt(v).lstrip("+")


def _p_cell(p: Any, value: Any) -> str:
    text = _fmt_p(p)
    if text or value is None or (isinstance(value, float) and not math.isfinite(value)):
        return f'<td class="num">{escape(text)}</td>'
    return f'<td class="num na" title="{escape(_NO_TEST)}">n/a</td>'


def _summary_table(summary: pd.DataFrame, level: float, with_section: bool = False, min_effect: Any = None) -> str:
    from biasamp.report._sections import effect_threshold

    cols = (["section"] if with_section else []) + ["metric", "direction", "value", f"{round(100 * level)}% CI",
                                                     "MDE", "CI method", "p", "n", "reading", "note"]
    head = "".join(f"<th>{escape(c)}</th>" for c in cols)
    rows = []
    no_ci = summary["ci_low"].isna().to_numpy()
    for r, ci_missing in zip(summary.itertuples(index=False), no_ci):
        ci = "" if ci_missing else f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]"
        n = "" if r.n is None or (isinstance(r.n, float) and math.isnan(r.n)) else str(r.n)
        cells = ([f'<td><a href="#{escape(str(r.section))}">{escape(str(r.section))}</a></td>']
                 if with_section else [])
        cells += [
            f'<td class="metric">{escape(str(r.metric))}</td>', f"<td>{escape(str(r.direction))}</td>",
            f'<td class="num">{escape(_fmt(r.value))}</td>', f'<td class="num">{escape(ci)}</td>',
            f'<td class="num">{escape(_fmt_mde(getattr(r, "min_detectable", None)))}</td>',
            f'<td class="method">{escape(str(r.ci_method))}</td>', _p_cell(r.p_value, r.value),
            f'<td class="num">{escape(n)}</td>',
            _reading_cell(str(r.reading), r.value, effect_threshold(min_effect, str(r.metric))),
            f"<td>{escape(str(r.note))}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="summary"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _figure(spec: Any, plots: bool) -> str:
    if not plots:
        return ""
    from biasamp.report._plots import figure_notes, figure_svg

    try:
        svg = figure_svg(spec)
    except Exception as exc:  # noqa: BLE001 - a plot failure must not lose the report
        return (f'<p class="error">plot "{escape(spec.title)}" failed: '
                f'{escape(type(exc).__name__)}: {escape(str(exc))}</p>')
    if svg is None:
        return ""
    text = " ".join(t for t in [spec.caption, *figure_notes(spec)] if t)  # what a many-class chart leaves out
    cap = f"<figcaption>{escape(text)}</figcaption>" if text else ""
    return f'<figure id="fig-{escape(spec.key)}"><h3>{escape(spec.title)}</h3>{svg}{cap}</figure>'


def _section(s: Any, level: float, plots: bool, min_effect: Any = None) -> str:
    parts = [f'<section id="{_anchor(s.key)}" data-status="{escape(s.status)}">', f"<h2>{escape(s.title)}</h2>",
             f'<p class="cite">{escape(s.citation)}</p>']
    if s.status != "ok":
        parts.append(f'<p class="{escape(s.status)}">{escape(s.message)}</p></section>')
        return "".join(parts)
    parts.append(f'<div class="read"><strong>How to read this.</strong> {escape(s.how_to_read)}</div>')
    if len(s.summary):
        parts.append(_summary_table(s.summary, level, min_effect=min_effect))
    for spec in s.figures:
        parts.append(_figure(spec, plots))
    for name, t in s.tables.items():
        rows = f"{len(t)} row{'' if len(t) == 1 else 's'}"
        parts.append(f"<details><summary>{escape(name)} ({rows})</summary>{_table(t)}</details>")
    if s.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{escape(str(n))}</li>" for n in s.notes) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def render_html(report: Any, *, plots: bool = True, standalone: bool = True) -> str:
    """The report as an HTML page (``standalone``) or a fragment (for notebooks)."""
    from biasamp.report._plots import available

    plots = plots and available()
    level = float(report.options.get("level", DEFAULT_LEVEL))
    inp = report.inputs
    meta = [
        f"{inp.get('n_test')} test instances",
        f"{inp.get('n_train')} training instances" if inp.get("n_train") else
        "no training set (training statistics from the test ground truth)",
        f"attribute <b>{escape(str(inp.get('attribute')))}</b>: "
        + escape(", ".join(map(str, list(inp.get("attribute_classes", []))[:30])))
        + (f" ... ({len(inp.get('attribute_classes', [])):,} in all)" if len(inp.get("attribute_classes", [])) > 30
           else ""),
        f"task <b>{escape(str(inp.get('task')))}</b> ({escape(str(inp.get('task_kind')))}): "
        + escape(", ".join(list(map(str, inp.get("task_classes", [])))[:30]))
        + (" ..." if len(inp.get("task_classes", [])) > 30 else ""),
    ]
    used = rows_used(inp)
    if used:  # the weights and the rows dropped or grouped, as the terminal's header says them
        meta.append(escape(used))
    meta += [f'<span class="error">warning: {escape(w)}</span>' for w in inp.get("warnings", [])]
    if inp.get("calibrated"):
        meta.append("thresholds calibrated for: " + escape(", ".join(inp["calibrated"])))
    toc = "".join(f'<li><a href="#{_anchor(s.key)}">{escape(s.title)}</a>'
                  + ("" if s.status == "ok" else f' <span class="meta">({escape(s.status)})</span>') + "</li>"
                  for s in sorted(report.sections, key=lambda s: s.status == "skipped"))
    body = [
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="meta">biasamp {escape(report.version)}'
        + (f" &middot; data: {escape(report.source)}" if report.source else "") + "</p>",
        "<p>" + " &middot; ".join(meta) + "</p>",
        # first what the readings say together, then how to read the table
        overview_html(report.overview(), escape) if len(report.table) else "",
        '<p class="meta">Values are fractions (not percentages). Intervals: '
        f"{round(100 * level)}% confidence (bootstrap over the test instances; the CI method column names "
        "the method). A signed amplification metric reads <i>amplified</i> when its interval lies above 0 "
        "and <i>reduced</i> when it lies below 0; a fairness metric reads <i>disparity</i>, a multi-attribute "
        "mean |&Delta;| <i>distorted</i>, when its interval lies above 0; otherwise <i>no evidence</i>. "
        "<i>too small to tell</i>: the interval holds 0, but the minimum detectable effect (MDE) is above the "
        f"smallest effect that matters (min_effect, {_min_effect_text(report)}): the sample could not have seen "
        "it. <i>mixed</i> (a note): the interval holds 0 but some pairs differ (they offset each other); "
        "<i>not measurable</i>: every "
        "correlation sign is 0 (balanced data), so BiasAmp-&gt; is 0 by construction. <i>small effect</i>: the "
        "interval excludes 0 but the value is below min_effect: significant is not the same as large. "
        "p: the interval's own p-value (its inversion, from the same resampling: p &lt; 1 - level exactly when "
        "the interval excludes 0); the per-pair and per-class tests (Holm-adjusted) are in the sections' tables; "
        "<i>n/a</i>: no p-value, the interval gives the reading. MDE: the smallest |effect| this sample detects "
        "at this level with 80% power. BCa: bias-corrected and accelerated bootstrap interval; max-t "
        "band: an interval from a simultaneous band on the parts of a max/min/absolute-value metric, valid when "
        "the true value is 0. BA is Qian et al.'s bias amplification, a fairness gap, not BiasAmp. Psi_D / Psi_M "
        "(DPA) and lambda_D / lambda_M (LA): the attacker's quality on the data and on the model's predictions; "
        "inv_ce: 1 / cross-entropy."
        + ("" if plots else " Plots are not included (install matplotlib, the <code>[plot]</code> extra).")
        + "</p>",
        '<h2 id="summary">Summary</h2>',
        _summary_table(report.table, level, with_section=True, min_effect=report.options.get("min_effect")),
        f"<nav><ul>{toc}</ul></nav>",
        # skipped sections last: what was computed comes first
        *(_section(s, level, plots, report.options.get("min_effect"))
          for s in sorted(report.sections, key=lambda s: s.status == "skipped")),
    ]
    content = f"<main>{''.join(body)}</main>"
    if not standalone:
        return f"<div class=\"biasamp-report\">{content}</div>"  # no global style inside a notebook
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta name=\"generator\" content=\"biasamp {escape(report.version)}\">"
        f"<title>{escape(report.title)}</title><style>{_CSS}</style></head>"
        f"<body>{content}</body></html>\n"
    )
