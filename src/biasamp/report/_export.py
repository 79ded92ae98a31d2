"""Text exports of a :class:`~biasamp.report.Report`: Markdown, LaTeX (booktabs) and a Hugging Face model card.

Pure renderers that only walk the report's sections and summary rows; they
need no optional package. :func:`headline_rows` (one record per headline number
with a stable, tracker-safe key) is shared with :mod:`biasamp.mlflow`.

* :func:`render_markdown`: GitHub-flavoured Markdown (summary table, then
  per family how to read it, notes and reference);
* :func:`render_latex`: a ``booktabs`` table (``\\toprule``/``\\midrule``/
  ``\\bottomrule``) of every headline number with its confidence interval,
  grouped by family, the interval methods as table notes;
* :func:`render_model_card`: a Hugging Face model card, YAML front matter with
  the ``model-index`` (one metric per headline number, its interval in the
  metric's name) and the Markdown section.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from biasamp._core import escape as _escape
from biasamp._engine.options import DEFAULT_LEVEL
from biasamp.report._inputs import rows_used
from biasamp.report._overview import overview_latex, overview_markdown

__all__ = ["headline_rows", "metric_key", "render_latex", "render_markdown", "render_model_card"]


# --------------------------------------------------------------------------- #
# shared
# --------------------------------------------------------------------------- #
def _slug(text: str) -> str:
    text = re.sub(r"->\s*$", "_directional", text.strip())  # "BiasAmp->" is the directional metric
    text = text.replace("->", "_to_").replace("→", "_to_")
    return re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_")


def metric_key(metric: str, direction: str = "") -> str:
    """A stable key of a headline number, safe for trackers and YAML: ``BiasAmp_directional.A_to_T``.

    ``->`` becomes ``_to_`` (a trailing one, as in ``BiasAmp->``, ``_directional``),
    other characters outside ``[0-9A-Za-z_]`` become ``_``; the direction
    follows a dot.

    >>> metric_key("BiasAmp->", "A->T"), metric_key("Multi->", "G->M raw"), metric_key("DP")
    ('BiasAmp_directional.A_to_T', 'Multi_directional.G_to_M_raw', 'DP')
    """
    key = _slug(metric)
    return f"{key}.{_slug(direction)}" if direction and _slug(direction) else key


def _finite(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and not math.isfinite(v)) and not pd.isna(v)


def headline_rows(report: Any) -> list[dict]:
    """One record per headline number of the sections computed: the summary row plus ``title`` and ``key``.

    Keys are unique in the report: a key two families share is prefixed with
    the section key; where two section keys still read alike (attributes
    ``sex 1`` and ``sex_1`` both give ``fairness_sex_1``), each gets the
    first 8 hex digits of the SHA-1 of its section key
    (``fairness_sex_1_1a2b3c4d.DP``), so that no metric overwrites another.
    """
    titles = {s.key: s.title for s in report.sections}
    rows = []
    for r in report.table.to_dict(orient="records"):
        r = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
        r["title"] = titles.get(r["section"], r["section"])
        r["key"] = metric_key(r["metric"], r["direction"])
        rows.append(r)
    counts = pd.Series([r["key"] for r in rows]).value_counts() if rows else pd.Series(dtype=int)
    for r in rows:
        if counts[r["key"]] > 1:
            r["key"] = f"{_slug(r['section'])}.{r['key']}"
    counts = pd.Series([r["key"] for r in rows]).value_counts() if rows else pd.Series(dtype=int)
    for r in rows:  # sections whose keys slug alike ("fairness[sex 1]", "fairness[sex_1]"): a digest apart
        if counts[r["key"]] > 1:
            digest = hashlib.sha1(str(r["section"]).encode("utf-8", "backslashreplace")).hexdigest()[:8]
            section, _, rest = r["key"].partition(".")
            r["key"] = f"{section}_{digest}.{rest}"
    return rows


def _num(v: Any, digits: int) -> str:
    return f"{(0.0 if abs(v) < 1e-12 else v):+.{digits}f}" if _finite(v) else "–"  # a rounded exact 0 is 0


def _mde(v: Any, digits: int) -> str:
    """A minimum detectable effect (a size, never signed); blank when there is none."""
    return f"{v:.{digits}f}" if _finite(v) else ""


def _p(v: Any) -> str:
    if not _finite(v):
        return ""
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _alpha(report: Any) -> str:
    return f"{1 - float(report.options.get('level', DEFAULT_LEVEL)):g}"


def _level(report: Any) -> str:
    lvl = float(report.options.get("level", DEFAULT_LEVEL))
    return f"{100 * lvl:g}%"


def _attribute_of(report: Any) -> dict:
    """Section key -> its protected attribute, for a report of several attributes (``{}`` for one)."""
    attrs = report.inputs.get("attributes")
    if not isinstance(attrs, dict):
        return {}
    out = {}
    for name, own in attrs.items():
        keys = (own or {}).get("sections") or [s.key for s in report.sections if s.key.endswith(f"[{name}]")]
        out.update(dict.fromkeys(keys, name))
    return out


def _inputs_line(report: Any) -> str:
    inp = report.inputs
    n_train = inp.get("n_train")
    classes = inp.get("attribute_classes")
    return (f"{inp.get('n_test')} test instances, "
            + (f"{n_train} training instances" if n_train else "no training set (test ground truth used)")
            + f"; protected attribute {inp.get('attribute')} ({', '.join(map(str, list(classes or [])[:30]))}"
            + (f", ... {len(classes):,} in all" if len(classes or []) > 30 else "") + "); "
            + f"{len(inp.get('task_classes', []))} task classes ({inp.get('task_kind')})"
            + (f"; {used}" if (used := rows_used(inp)) else ""))


# --------------------------------------------------------------------------- #
# Markdown
# --------------------------------------------------------------------------- #
def _md(text: Any, cell: bool = True) -> str:
    """Text for Markdown (:func:`biasamp._core.escape.markdown`); a table cell (``cell``) also has ``|`` escaped."""
    return _escape.markdown(text, cell=cell)


def _md_table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    sep = {"l": "---", "r": "---:", "c": ":---:"}
    out = ["| " + " | ".join(_md(h) for h in header) + " |", "|" + "|".join(sep[a] for a in align) + "|"]
    out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return out


def _md_detail(frame: pd.DataFrame, digits: int, max_rows: int) -> list[str]:
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    shown = frame.head(max_rows)

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.{digits}f}" if math.isfinite(v) else ""
        if isinstance(v, tuple):
            return " + ".join(map(str, v))
        return "" if v is None else str(v)

    rows = [[cell(v) for v in row] for row in shown.itertuples(index=False, name=None)]
    align = "".join("r" if pd.api.types.is_numeric_dtype(shown[c]) and not pd.api.types.is_bool_dtype(shown[c])
                    else "l" for c in shown.columns)
    out = _md_table([str(c) for c in shown.columns], rows, align)
    if len(frame) > max_rows:
        out.append(f"\n({len(frame) - max_rows} more rows in the JSON report)")
    return out


def render_markdown(report: Any, *, heading_level: int = 1, details: bool = False, digits: int = 4,
                    max_rows: int = 20) -> str:
    """The report as Markdown; see :meth:`biasamp.report.Report.to_markdown`."""
    if not isinstance(heading_level, int) or not 1 <= heading_level <= 5:
        raise ValueError(f"heading_level must be an int in 1..5, got {heading_level!r}")
    if not isinstance(digits, int) or not 1 <= digits <= 12:
        raise ValueError(f"digits must be an int in 1..12, got {digits!r}")
    h = "#" * heading_level
    level = _level(report)
    lines = [f"{h} {_md(report.title, False)}", ""]
    if report.source:
        lines += [f"Data: {_md(report.source, False)}.", ""]
    lines += [_md(_inputs_line(report), False) + ".",
              f"Values are fractions (not percentages); CI: {level} confidence interval"
              + (f" (biasamp {report.version})." if report.version else "."), ""]
    rows = headline_rows(report)
    if rows:  # first: what the readings say together, and why they disagree
        lines += overview_markdown(report.overview(), f"{h}#", lambda text: _md(text, False))
    if rows:
        attribute = _attribute_of(report)  # several attributes: a column says whose row it is
        body = [([attribute.get(r["section"], "")] if attribute else [])
                + [r["metric"], r["direction"], _num(r["value"], digits),
                   f"[{_num(r['ci_low'], digits)}, {_num(r['ci_high'], digits)}]" if _finite(r["ci_low"]) else "",
                   _mde(r.get("min_detectable"), digits),
                   _p(r["p_value"]) or ("n/a" if _finite(r["value"]) else ""), r["reading"], r["note"]]
                for r in rows]
        lines += _md_table((["attribute"] if attribute else [])
                           + ["metric", "direction", "value", f"{level} CI", "MDE", "p", "reading", "note"], body,
                           ("l" if attribute else "") + "llrlrrll")
        lines.append("")
        lines += [f"p: the interval's own p-value (p < {_alpha(report)} exactly when the interval excludes 0); the "
                  "per-pair and per-class tests are in the sections' tables. MDE: minimum detectable effect, the "
                  "smallest |effect| this sample detects at this level with 80% power; *too small to tell*: the "
                  "interval holds 0 and the MDE is above the smallest effect that matters (min_effect).", ""]
        if any(_finite(r["value"]) and not _finite(r["p_value"]) for r in rows):
            lines += ["p n/a: the statistic has no p-value (its interval gives the reading).", ""]
    for s in report.sections:
        if s.status != "ok":
            continue
        lines += [f"{h}# {_md(s.title, False)}", "", _md(s.how_to_read, False), ""]
        methods = sorted({m for m in s.summary["ci_method"] if m})
        if methods:
            lines += [f"Intervals: {_md('; '.join(methods), False)}.", ""]
        if s.notes:
            lines += [f"- {_md(n, False)}" for n in s.notes] + [""]
        for name, table in s.tables.items():  # the per-group tables always (as the HTML), the others on request
            if details or "group" in name:
                lines += [f"**{_md(name, False)}**", ""] + _md_detail(table, digits, max_rows) + [""]
        lines += [f"*Reference:* {_md(s.citation, False)}", ""]
    other = [s for s in report.sections if s.status != "ok"]
    if other:
        lines += [f"{h}# Not computed", ""] + [f"- {_md(f'{s.title}: {s.status}, {s.message}', False)}"
                                                for s in other] + [""]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- #
# LaTeX
# --------------------------------------------------------------------------- #
def _tex(text: Any) -> str:
    """Plain text for LaTeX (:func:`biasamp._core.escape.tex`), ``->`` / ``→`` as an arrow."""
    parts = re.split(r"(->|→)", _escape.plain(text))
    out = []
    for part in parts:
        if part in ("->", "→"):
            out.append(r"$\rightarrow$")
        else:
            out.append(_escape.tex(part))
    return "".join(out)


def _tex_metric(metric: str) -> str:
    """A metric name with its subscript: ``BiasAmp->`` as BiasAmp with an arrow, ``Multi_MALS`` as Multi_{MALS}."""
    m = re.fullmatch(r"([A-Za-z]+)->", metric)
    if m:
        return rf"{m.group(1)}$_{{\rightarrow}}$"
    m = re.fullmatch(r"([A-Za-z]+)_([A-Za-z]+)", metric)
    if m:
        return rf"{m.group(1)}$_{{\mathrm{{{m.group(2)}}}}}$"
    return _tex(metric)


def _tex_title(title: str) -> str:
    """A section title for LaTeX, the metric names in it written as by :func:`_tex_metric`."""
    return " ".join(_tex_metric(w) if re.fullmatch(r"[A-Za-z]+(->|_[A-Za-z]+)", w) else _tex(w)
                    for w in _escape.plain(title).split(" "))


def _tex_num(v: Any, digits: int) -> str:
    return f"${v:+.{digits}f}$" if _finite(v) else "--"


def render_latex(report: Any, *, caption: str | None = None, label: str | None = "tab:biasamp", digits: int = 3,
                 table_env: bool = True) -> str:
    """The report as a booktabs table; see :meth:`biasamp.report.Report.to_latex`."""
    if not isinstance(digits, int) or not 1 <= digits <= 12:
        raise ValueError(f"digits must be an int in 1..12, got {digits!r}")
    rows = headline_rows(report)
    if not rows:
        raise ValueError("the report has no headline number to tabulate (no section was computed)")
    level = _level(report)
    methods: dict[str, str] = {}
    for r in rows:
        if r["ci_method"] and _finite(r["ci_low"]):
            methods.setdefault(r["ci_method"], "abcdefghijklmnopqrstuvwxyz"[len(methods) % 26])
    body = []
    last = None
    for r in rows:
        if r["section"] != last:
            if last is not None:
                body.append(r"\addlinespace")
            body.append(rf"\multicolumn{{7}}{{l}}{{\emph{{{_tex_title(r['title'])}}}}} \\")
            last = r["section"]
        ci = ""
        if _finite(r["ci_low"]):
            ci = rf"$[{r['ci_low']:+.{digits}f}, {r['ci_high']:+.{digits}f}]$"
            if r["ci_method"]:
                ci += rf"\textsuperscript{{{methods[r['ci_method']]}}}"
        p = _p(r["p_value"])
        p = f"${p}$" if p else ""
        mde = _mde(r.get("min_detectable"), digits)
        body.append(" & ".join([_tex_metric(r["metric"]), _tex(r["direction"]), _tex_num(r["value"], digits), ci,
                                f"${mde}$" if mde else "", p, _tex(r["reading"])]) + r" \\")
    n = report.inputs.get("n_test")
    if caption is None:
        used = rows_used(report.inputs)
        caption = (f"{report.title}: bias and bias amplification on {n} test instances, with {level} confidence "
                   "intervals. Values are fractions." + (f" {used[0].upper()}{used[1:]}." if used else ""))
        caption = _tex(caption)
    notes = "; ".join(rf"\textsuperscript{{{k}}}{_tex(m)}" for m, k in methods.items())
    tabular = [
        r"\begin{tabular}{llrlrrl}",
        r"\toprule",
        rf"Metric & Direction & Value & {_tex(level)} CI & MDE & $p$ & Reading \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ]
    head = [f"% {_tex(report.title)} -- biasamp {report.version or ''}; needs \\usepackage{{booktabs}}"]
    if not table_env:
        return "\n".join(head + tabular) + "\n"
    out = head + [r"\begin{table}[htbp]", r"\centering", rf"\caption{{{caption}}}"]
    if label:
        out.append(rf"\label{{{label}}}")
    out += tabular
    out.append(r"\par\smallskip")
    if notes:
        out.append(rf"{{\footnotesize Intervals: {notes}.\par}}")
    out.append(r"{\footnotesize " + _tex(f"p: the interval's own p-value (p < {_alpha(report)} exactly when the "
                                         "interval excludes 0); MDE: minimum detectable effect (80% power).")
               + r"\par}")
    out += overview_latex(report.overview(), _tex)
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- #
# Hugging Face model card
# --------------------------------------------------------------------------- #
def _yaml_str(s: Any) -> str:
    """A YAML double-quoted scalar (:func:`biasamp._core.escape.yaml_str`)."""
    return _escape.yaml_str(s)


def _yaml_float(v: float) -> str:
    """A float YAML 1.1 loaders (PyYAML) read as a float: the mantissa always has a dot."""
    text = repr(float(v))
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """Block-style YAML of nested dicts / lists of strings, numbers and bools."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                lines.append(f"{pad}{k}:")
                lines += _yaml(v, indent + 2)
            else:
                lines.append(f"{pad}{k}: {_yaml_scalar(v)}")
    elif isinstance(value, list):
        for item in value:
            sub = _yaml(item, indent + 2) if isinstance(item, (dict, list)) else [f"{pad}  {_yaml_scalar(item)}"]
            lines.append(f"{pad}- {sub[0].lstrip()}")
            lines += sub[1:]
    return lines


def _yaml_scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _yaml_float(v)
    return _yaml_str(v)


def model_index(report: Any, *, model_name: str, task_type: str, task_name: str | None, dataset_name: str,
                dataset_type: str, dataset_split: str | None, dataset_config: str | None) -> list[dict]:
    """The ``model-index`` metadata: one result (task, dataset) with a metric per finite headline number."""
    level = _level(report)
    metrics = []
    attribute = _attribute_of(report)
    for r in headline_rows(report):
        if not _finite(r["value"]):
            continue
        text = f"{r['metric']} {r['direction']}".strip()
        if r["section"] in attribute:  # several attributes: the metric's name says whose it is
            text += f" [{attribute[r['section']]}]"
        if _finite(r["ci_low"]):
            text += f" ({level} CI [{_num(r['ci_low'], 4)}, {_num(r['ci_high'], 4)}], {r['ci_method']}"
            text += f"; MDE {_mde(r.get('min_detectable'), 4)})" if _finite(r.get("min_detectable")) else ")"
        if r["reading"]:
            text += f": {r['reading']}"
        metrics.append({"type": f"biasamp/{r['key']}", "name": text, "value": float(r["value"]), "verified": False})
    if not metrics:
        raise ValueError("the report has no finite headline number for the model card (no section was computed)")
    task = {"type": task_type}
    if task_name:
        task["name"] = task_name
    dataset = {"type": dataset_type, "name": dataset_name}
    if dataset_config:
        dataset["config"] = dataset_config
    if dataset_split:
        dataset["split"] = dataset_split
    return [{"name": model_name, "results": [{"task": task, "dataset": dataset, "metrics": metrics}]}]


def render_model_card(report: Any, *, model_name: str | None = None, task_type: str = "classification",
                      task_name: str | None = None, dataset_name: str | None = None,
                      dataset_type: str | None = None, dataset_split: str | None = "test",
                      dataset_config: str | None = None, tags: Sequence[str] = ()) -> str:
    """A Hugging Face model card; see :meth:`biasamp.report.Report.to_model_card`."""
    for name, value in (("model_name", model_name), ("task_type", task_type), ("task_name", task_name),
                        ("dataset_name", dataset_name), ("dataset_type", dataset_type),
                        ("dataset_split", dataset_split), ("dataset_config", dataset_config)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    if isinstance(tags, str) or not all(isinstance(t, str) and t for t in tags):
        raise TypeError(f"tags must be a list of non-empty strings, got {tags!r}")
    model_name = model_name or report.title
    dataset_name = dataset_name or report.source or "evaluation set"
    dataset_type = dataset_type or (_slug(dataset_name).lower()[:64] or "custom")
    meta = {
        "tags": list(dict.fromkeys(["biasamp", "bias-amplification", "fairness", *tags])),
        "model-index": model_index(report, model_name=model_name, task_type=task_type, task_name=task_name,
                                   dataset_name=dataset_name, dataset_type=dataset_type,
                                   dataset_split=dataset_split, dataset_config=dataset_config),
    }
    body = render_markdown(report, heading_level=3)
    intro = ("## Bias and bias amplification\n\nMeasured with biasamp"
             + (f" {_md(report.version, False)}" if report.version else "")
             + f" on {_md(dataset_name, False)} ({_md(dataset_split or 'evaluation', False)} split). Every number "
             "is a fraction; "
             "the model-index metadata above holds the same headline values, each with its interval in its name.\n")
    return "\n".join(["---", *_yaml(meta), "---", "", f"# {_md(model_name, False)}", "", intro, body])
