"""Plots of the HTML report, as inline SVG (needs matplotlib: the ``[plot]`` extra).

Only the object-oriented API is used (``matplotlib.figure.Figure`` with the
SVG canvas): no pyplot, no global backend switch, no state left behind in the
user's session. :func:`figure_svg` returns ``None`` when matplotlib is missing,
and the report then renders its tables only.

Charts stay readable with hundreds of classes: each panel (``facet``) shows at
most a fixed number of categories, those with the largest effect, and says
how many were left out and the largest effect among them (on the figure and
in :func:`figure_notes`, which the HTML caption repeats). Each panel has its
own value axis, legends sit outside the axes, bars get error bars where the
data has ``low``/``high``, and group sizes ``n`` and small groups are shown.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from biasamp._core import escape as _escape

__all__ = ["available", "draw_lines", "figure_notes", "figure_svg"]

_POS, _NEG = "#c0392b", "#2e86c1"  # amplify / weaken
_PALETTE = ("#2e86c1", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d4ac0d")

_MAX_CATEGORIES = 12  # grouped_bar: classes per panel at most ...
_MAX_GROUP_BARS = 60  # ... and bars per panel at most (fewer classes when there are many groups)
_MAX_HBAR = 25  # hbar: bars per panel
_MAX_STRIP = 20  # strip: rows
_MAX_LINES = 8  # line: lines per panel
_LABEL_CHARS = 44  # longer tick labels are cut with an ellipsis (the tables have them whole)
_MAX_WIDTH = 10.5  # inches: the page's column is about 10.8 in, so SVGs at most this wide are not scaled down


def _matplotlib():
    try:
        import matplotlib
        from matplotlib.backends.backend_svg import FigureCanvasSVG
        from matplotlib.figure import Figure
    except ImportError:
        return None
    return matplotlib, Figure, FigureCanvasSVG


def available() -> bool:
    """Whether matplotlib can be imported."""
    return _matplotlib() is not None


# --------------------------------------------------------------------------- #
# planning: which categories each panel shows (pure pandas, no matplotlib)
# --------------------------------------------------------------------------- #
@dataclass
class _Panel:
    facet: Any
    data: pd.DataFrame  # the rows of the facet
    order: list  # the categories drawn, top first
    total: int  # categories in the facet
    by: str  # what ranks the categories ("" when all are drawn in data order)
    rest: float  # largest effect among those left out (nan when none or undefined)
    noun: str  # what a category is ("classes", "pairs", ...)

    @property
    def cut(self) -> bool:
        return len(self.order) < self.total

    def _rest(self) -> str:
        return ("undefined (none of them has a defined value)" if not math.isfinite(self.rest)
                else f"{self.rest:.3g}")

    def lines(self) -> list[str]:
        """The note on the figure: what is shown, what is left out."""
        if not self.cut:
            return []
        more = self.total - len(self.order)
        return [f"top {len(self.order)} of {self.total} {self.noun} by {self.short}",
                f"\u2026 and {more} more; largest remaining {self.short} {self._rest()}"]

    @property
    def short(self) -> str:
        return self.by.split(" (")[0]

    def sentence(self) -> str:
        """The same note as one sentence, for the caption."""
        if not self.cut:
            return ""
        head = f"{self.facet}: t" if self.facet is not None else "T"
        more = self.total - len(self.order)
        return (f"{head}he {len(self.order)} of {self.total} {self.noun} with the largest {self.by} are shown; "
                f"the others ({more}) have {self.short} at most {self._rest()}.")


def _facets(data: pd.DataFrame) -> list:
    return list(dict.fromkeys(data["facet"])) if "facet" in data.columns else [None]


def _facet_rows(data: pd.DataFrame, facet: Any) -> pd.DataFrame:
    return data if facet is None else data[data["facet"] == facet]


def _num(values: Any) -> np.ndarray:
    return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=np.float64)


def _top(score: pd.Series, k: int) -> tuple[list, float]:
    """The ``k`` categories of largest ``score`` (NaN last, ties in data order) and the largest score left out."""
    ranked = score.iloc[np.argsort(-np.nan_to_num(score.to_numpy(dtype=np.float64), nan=-np.inf), kind="stable")]
    rest = ranked.iloc[k:].to_numpy(dtype=np.float64)
    rest = rest[np.isfinite(rest)]
    return list(ranked.index[:k]), float(rest.max()) if rest.size else float("nan")


def _small(part: pd.DataFrame) -> np.ndarray:
    if "small" not in part.columns:
        return np.zeros(len(part), dtype=bool)
    return np.array([False if pd.isna(v) else bool(v) for v in part["small"]], dtype=bool)


def _grouped_plan(data: pd.DataFrame) -> list[_Panel]:
    hues = list(dict.fromkeys(data["hue"]))
    k = max(3, min(_MAX_CATEGORIES, _MAX_GROUP_BARS // max(1, len(hues))))
    panels = []
    for facet in _facets(data):
        part = _facet_rows(data, facet)
        xs = list(dict.fromkeys(part["x"]))
        if len(xs) <= k:
            panels.append(_Panel(facet, part, xs, len(xs), "", float("nan"), "classes"))
            continue
        if "effect" in part.columns:
            score = pd.Series(np.abs(_num(part["effect"])), index=part.index).groupby(part["x"], sort=False).max()
            by = "|effect|"
        else:  # the spread across groups; groups flagged small (noisy) do not rank the classes
            small = _small(part)
            ranked = part[~small] if small.any() and part.loc[~small, "hue"].nunique() >= 2 else part
            vals = pd.Series(_num(ranked["value"]), index=ranked.index).groupby(ranked["x"], sort=False)
            score = (vals.max() - vals.min()).reindex(xs)
            by = "gap (max \u2212 min over groups" + (", small groups left out)" if ranked is not part else ")")
        order, rest = _top(score.reindex(xs), k)
        panels.append(_Panel(facet, part, order, len(xs), by, rest, "classes"))
    return panels


def _label_plan(data: pd.DataFrame, k: int, noun: str, by: str, score_of) -> list[_Panel]:
    panels = []
    for facet in _facets(data):
        part = _facet_rows(data, facet)
        labels = list(dict.fromkeys(part["label"]))
        score = score_of(part).reindex(labels)
        if len(labels) <= k:
            panels.append(_Panel(facet, part, list(score.index), len(labels), "", float("nan"), noun))
        else:
            order, rest = _top(score, k)
            panels.append(_Panel(facet, part, order, len(labels), by, rest, noun))
    return panels


def _abs_by_label(part: pd.DataFrame, how: str) -> pd.Series:
    return pd.Series(np.abs(_num(part["value"])), index=part.index).groupby(part["label"], sort=False).agg(how)


def _plan(kind: str, data: pd.DataFrame) -> list[_Panel]:
    if kind == "grouped_bar":
        return _grouped_plan(data)
    if kind == "hbar":  # the largest |value| first
        panels = _label_plan(data, _MAX_HBAR, "bars", "|value|", lambda p: _abs_by_label(p, "max"))
        for p in panels:
            if not p.cut:
                p.order, _ = _top(_abs_by_label(p.data, "max").reindex(p.order), len(p.order))
        return panels
    if kind == "strip":  # the distribution of each label; the largest |mean| kept when there are many
        data = data.drop(columns="facet", errors="ignore")
        return _label_plan(data, _MAX_STRIP, "rows", "|mean|", lambda p: pd.Series(
            _num(p["value"]), index=p.index).groupby(p["label"], sort=False).mean().abs())
    if kind == "line":
        return _label_plan(data, _MAX_LINES, "lines", "max |value|", lambda p: _abs_by_label(p, "max"))
    return []


def figure_notes(spec: Any) -> list[str]:
    """What a chart leaves out, one sentence per panel that does not show every category.

    For example ``"PPR: the 12 of 211 classes with the largest gap (max − min
    over groups) are shown; the others (199) have gap at most 0.031."``. Empty when the
    figure shows all its data (or has none). Needs no matplotlib.
    """
    if spec.data is None or len(spec.data) == 0:
        return []
    try:
        cut = [p for p in _plan(spec.kind, spec.data) if p.cut]
    except (KeyError, ValueError, TypeError):  # malformed data: the renderer reports it
        return []
    if len(cut) > 1 and len({(len(p.order), p.total, p.by, p.noun) for p in cut}) == 1:  # one sentence
        p = cut[0]
        rests = ", ".join(f"{q._rest()} ({q.facet})" for q in cut)
        return [f"Each panel shows the {len(p.order)} of {p.total} {p.noun} with the largest {p.by}; the other "
                f"{p.total - len(p.order)} have {p.short} at most {rests}."]
    return [p.sentence() for p in cut]


# --------------------------------------------------------------------------- #
# drawing
# --------------------------------------------------------------------------- #
def _txt(value: Any, limit: int | None = _LABEL_CHARS) -> str:
    """Plain text for matplotlib (:func:`biasamp._core.escape.plot`), cut to ``limit`` characters.

    No mathtext (``$`` escaped); when the axes are drawn with ``text.usetex``
    (a user's own figure, :func:`draw_lines`), TeX's special characters are
    escaped, so that a name never reaches TeX as a command. The report's own
    figures never use TeX (:func:`figure_svg`).
    """
    import matplotlib

    text = _escape.plain(value)
    if limit is not None and len(text) > limit:
        text = text[:limit - 1] + "\u2026"
    label = _escape.plot(text, usetex=bool(matplotlib.rcParams.get("text.usetex")))
    return "\u200b" + label if label.startswith("_") else label  # a legend skips labels that start with "_"


def _grid(fig, n: int, ncols: int):
    ncols = max(1, min(n, ncols))
    nrows = -(-n // ncols)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.remove()
    return list(axes[:n])


def _note(ax, panel: _Panel) -> None:
    lines = panel.lines()
    if lines:
        ax.set_xlabel("\n".join(_txt(s, None) for s in lines), fontsize=7.5, color="#444444")


def _interval(part: pd.DataFrame, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(ok, [below; above]) error lengths where ``low``/``high`` are finite, else None."""
    if "low" not in part.columns or "high" not in part.columns:
        return None
    lo, hi = _num(part["low"]), _num(part["high"])
    ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(vals)
    if not ok.any():
        return None
    return ok, np.vstack([np.clip(vals - lo, 0, None), np.clip(hi - vals, 0, None)])


def _n_suffix(row: pd.Series) -> str:
    """`` (n=12)`` / `` (n=12, small)`` from a row's optional ``n`` and ``small``."""
    parts = []
    n = _num([row.get("n", np.nan)])[0]
    if math.isfinite(n):
        parts.append(f"n={n:,.0f}" if n == round(n) else f"n={n:,.1f}")
    small = row.get("small", False)
    if not pd.isna(small) and bool(small):
        parts.append("small")
    return f" ({', '.join(parts)})" if parts else ""


def _hbar(fig, panels: list[_Panel]) -> None:
    for ax, panel in zip(_grid(fig, len(panels), 2), panels):
        part = panel.data.drop_duplicates("label").set_index("label").loc[panel.order]
        vals = _num(part["value"])
        y = np.arange(len(part))
        colors = np.array([_POS if v > 0 else _NEG for v in np.nan_to_num(vals)])
        small = _small(part)
        if (~small).any():
            ax.barh(y[~small], np.nan_to_num(vals[~small]), color=list(colors[~small]))
        for yy, v, c in zip(y[small], vals[small], colors[small]):  # flagged small (rare pair, small group)
            ax.barh([yy], [np.nan_to_num(v)], **_small_style(c))
        shown = vals[np.isfinite(vals)]
        err = _interval(part, vals)
        if err is not None:  # simultaneous interval of each bar
            ok, e = err
            ax.errorbar(vals[ok], y[ok], xerr=e[:, ok], fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
            shown = np.concatenate([shown, _num(part["low"])[ok], _num(part["high"])[ok]])
        extent = np.abs(shown)
        lim = float(extent.max()) if extent.size else 1.0  # one x-axis per facet (direction)
        lim = lim * 1.15 if lim > 0 else 1.0
        # a panel with nothing below 0 (a leakage, a rate) starts at 0 instead of leaving its left half empty
        left = -0.04 * lim if shown.size and float(shown.min()) >= 0 else -lim
        ax.set_yticks(y)
        ax.set_yticklabels([_txt(v) + _n_suffix(part.iloc[r]) for r, v in enumerate(part.index)], fontsize=8)
        ax.set_ylim(len(part) - 0.4, -0.6)  # the largest at the top
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlim(left, lim)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
        if panel.facet is not None:
            ax.set_title(_txt(panel.facet), fontsize=10)
        _note(ax, panel)


def _small_style(color: str) -> dict:
    """A group flagged small: a pale, hatched bar."""
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.float64) / 255
    pale = tuple(0.35 * rgb + 0.65)
    return {"facecolor": pale, "edgecolor": color, "hatch": "////", "linewidth": 0.6}


def _hue_legend(data: pd.DataFrame, hues: list, colors: dict) -> list:
    from matplotlib.patches import Patch

    handles = []
    for h in hues:
        rows = data[data["hue"] == h]
        label = _txt(h, 30)
        if "n" in rows.columns:
            n = _num(rows["n"])
            n = n[np.isfinite(n)]
            if n.size:
                lo, hi = n.min(), n.max()
                fmt = (lambda v: f"{v:,.0f}") if np.all(n == np.round(n)) else (lambda v: f"{v:,.1f}")
                label += f" (n={fmt(lo)}" + ("" if lo == hi else f"\u2013{fmt(hi)}")
                label += ", small)" if _small(rows).any() else ")"
            elif _small(rows).any():
                label += " (small)"
        elif _small(rows).any():
            label += " (small)"
        if _small(rows).any():
            handles.append(Patch(label=label, **_small_style(colors[h])))
        else:
            handles.append(Patch(facecolor=colors[h], label=label))
    return handles


def _legend_outside(fig, axes: list, handles: list) -> None:
    """Above the panels (matplotlib >= 3.7), else right of the last panel: never over a bar."""
    ncol = min(len(handles), 4)
    try:
        fig.legend(handles=handles, loc="outside upper center", ncol=ncol, fontsize=8, frameon=False)
    except ValueError:  # matplotlib < 3.7 has no "outside" placement
        axes[-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                        fontsize=8, frameon=False)


def _grouped_bar(fig, panels: list[_Panel]) -> None:
    from matplotlib.ticker import MaxNLocator

    data = pd.concat([p.data for p in panels])
    hues = list(dict.fromkeys(data["hue"]))
    colors = {h: _PALETTE[j % len(_PALETTE)] for j, h in enumerate(hues)}
    shared = all(not p.cut and p.order == panels[0].order for p in panels)  # one class list: labels once
    axes = _grid(fig, len(panels), 3)
    height = 0.8 / max(1, len(hues))
    values = [_num(p.data["value"]) for p in panels]
    for p in panels:
        if "low" in p.data.columns and "high" in p.data.columns:
            values += [_num(p.data["low"]), _num(p.data["high"])]
    finite = np.concatenate(values)
    finite = finite[np.isfinite(finite)]
    rates = finite.size == 0 or (finite.min() >= 0 and finite.max() <= 1)
    for i, (ax, panel) in enumerate(zip(axes, panels)):
        pos = {x: r for r, x in enumerate(panel.order)}
        part = panel.data[panel.data["x"].isin(pos)]
        top = 0.0
        for j, h in enumerate(hues):
            sub = part[part["hue"] == h]
            if not len(sub):
                continue
            y = np.array([pos[x] for x in sub["x"]], dtype=np.float64) + (j - (len(hues) - 1) / 2) * height
            vals = _num(sub["value"])
            small = _small(sub)
            ok = np.isfinite(vals)
            for mask, style in ((ok & ~small, {"color": colors[h]}), (ok & small, _small_style(colors[h]))):
                if mask.any():
                    ax.barh(y[mask], vals[mask], height, **style)
            for yy in y[~ok]:  # an undefined rate (e.g. a TPR without positives) is not a zero
                ax.text(0, yy, "  n/a", fontsize=6.5, color="#777777", va="center", ha="left")
            err = _interval(sub, vals)
            if err is not None:
                m, e = err
                ax.errorbar(vals[m], y[m], xerr=e[:, m], fmt="none", ecolor="#222222", elinewidth=0.7,
                            capsize=1.5)
                top = max(top, float(np.nanmax(_num(sub["high"])[m])))
            if ok.any():
                top = max(top, float(vals[ok].max()))
        ax.set_yticks(np.arange(len(panel.order)))
        ax.set_yticklabels([_txt(x) for x in panel.order] if (i == 0 or not shared) else [], fontsize=8)
        ax.set_ylim(len(panel.order) - 0.5, -0.5)  # first (or largest gap) at the top
        if rates:  # one axis per panel, zoomed to its bars so that small rates stay visible
            ax.set_xlim(0, min(1.0, top * 1.12) if top > 0 else 1.0)
        else:
            ax.axvline(0, color="black", linewidth=0.8)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
        for r in range(1, len(panel.order)):  # separate the classes
            ax.axhline(r - 0.5, color="#eeeeee", linewidth=0.6)
        if panel.facet is not None:
            ax.set_title(_txt(panel.facet), fontsize=10)
        _note(ax, panel)
    _legend_outside(fig, axes, _hue_legend(data, hues, colors))


def _strip(fig, panels: list[_Panel]) -> None:
    ax = fig.subplots()
    panel = panels[0]
    rng = np.random.default_rng(0)  # jitter only; deterministic output
    for i, lab in enumerate(panel.order):
        vals = _num(panel.data.loc[panel.data["label"] == lab, "value"])
        vals = vals[np.isfinite(vals)]
        ax.scatter(vals, i + rng.uniform(-0.15, 0.15, len(vals)), s=18, alpha=0.7,
                   color=_PALETTE[i % len(_PALETTE)])
        if len(vals):
            ax.plot([vals.mean()] * 2, [i - 0.3, i + 0.3], color="black", linewidth=2)
    ax.axvline(0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yticks(np.arange(len(panel.order)))
    ax.set_yticklabels([_txt(v) for v in panel.order])
    ax.set_ylim(len(panel.order) - 0.4, -0.6)
    ax.tick_params(labelsize=8)
    _note(ax, panel)


def draw_lines(ax, data: pd.DataFrame, x_label: str = "", legend: str = "best") -> None:
    """One line per ``label`` of ``value`` against ``x``, with a ``low``/``high`` band where given.

    ``x`` may be numbers (a numeric axis) or labels such as checkpoint names
    (evenly spaced, in the order given). ``legend``: a matplotlib location,
    ``"outside"`` (right of the axes) or ``"none"``.
    """
    xs = list(dict.fromkeys(data["x"]))
    numeric = all(isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) for x in xs)
    pos = {x: (float(x) if numeric else i) for i, x in enumerate(xs)}
    has_ci = "low" in data.columns and "high" in data.columns
    for i, lab in enumerate(dict.fromkeys(data["label"])):
        part = data[data["label"] == lab]
        x = np.array([pos[v] for v in part["x"]], dtype=np.float64)
        order = np.argsort(x, kind="stable")
        color = _PALETTE[i % len(_PALETTE)]
        ax.plot(x[order], part["value"].to_numpy(dtype=np.float64)[order], marker="o", markersize=3,
                linewidth=1.4, color=color, label=_txt(lab))
        if has_ci:
            lo, hi = part["low"].to_numpy(dtype=np.float64)[order], part["high"].to_numpy(dtype=np.float64)[order]
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax.fill_between(x[order][ok], lo[ok], hi[ok], color=color, alpha=0.18, linewidth=0)
    ax.axhline(0, color="grey", linewidth=0.8, linestyle="--")
    if not numeric:
        ax.set_xticks(np.arange(len(xs)))
        ax.set_xticklabels([_txt(x) for x in xs], rotation=45 if len(xs) > 8 else 0, fontsize=8,
                           ha="right" if len(xs) > 8 else "center")
    ax.tick_params(labelsize=8)
    if x_label:
        ax.set_xlabel(_txt(x_label, None), fontsize=9)
    if legend == "outside":
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    elif legend != "none":
        ax.legend(fontsize=8, loc=legend)


def _line(fig, panels: list[_Panel]) -> None:
    for ax, panel in zip(_grid(fig, len(panels), 2), panels):
        part = panel.data[panel.data["label"].isin(panel.order)]
        draw_lines(ax, part, str(part["x_label"].iloc[0]) if "x_label" in part.columns else "",
                   legend="outside" if len(panel.order) > 3 else "best")
        if panel.facet is not None:
            ax.set_title(_txt(panel.facet), fontsize=10)
        lines = panel.lines()
        if lines:  # below the axis label
            ax.annotate("\n".join(_txt(s, None) for s in lines), xy=(0.0, 0.0), xycoords="axes fraction",
                        xytext=(0, -34), textcoords="offset points", fontsize=7.5, color="#444444", va="top")


_KINDS = {"hbar": _hbar, "grouped_bar": _grouped_bar, "strip": _strip, "line": _line}


def _label_width(labels: list) -> float:
    """Inches taken by the longest tick label at 8 pt."""
    return 0.3 + 0.066 * max((min(len(str(v)), _LABEL_CHARS) for v in labels), default=4)


def _size(kind: str, panels: list[_Panel]) -> tuple[float, float]:
    n = len(panels)
    noted = 0.35 if any(p.cut for p in panels) else 0.0
    if kind == "hbar":
        ncols = min(n, 2)
        rows = [max(len(p.order) for p in panels[r:r + ncols]) for r in range(0, n, ncols)]
        label = max(_label_width(p.order) for p in panels)
        width = min(ncols * (3.0 + label), _MAX_WIDTH)
        return (width, sum(0.95 + noted + 0.26 * max(k, 2) for k in rows))
    if kind == "grouped_bar":
        ncols = min(n, 3)
        hues = pd.concat([p.data for p in panels])["hue"].nunique()
        shared = all(not p.cut and p.order == panels[0].order for p in panels)
        label = max(_label_width(p.order) for p in panels)
        width = min(ncols * 3.2 + label * (1 if shared else ncols), _MAX_WIDTH)
        per_class = 0.12 * hues + 0.12
        rows = [max(len(p.order) for p in panels[r:r + ncols]) for r in range(0, n, ncols)]
        legend = 0.3 * -(-hues // 4)
        return (width, legend + sum(0.9 + noted + per_class * max(k, 1) for k in rows))
    if kind == "line":
        ncols = min(n, 2)
        return (min(6.4 * ncols, _MAX_WIDTH), (3.6 + 2 * noted) * -(-n // ncols))
    n_rows = len(panels[0].order) if panels else 1
    return (7.0, 1.2 + noted + (0.6 if n_rows <= 5 else 0.36) * n_rows)


def figure_svg(spec: Any) -> str | None:
    """Render a :class:`~biasamp.report.FigureSpec` as an inline ``<svg>`` element.

    Returns ``None`` when matplotlib is not installed or the figure has no data.
    """
    mpl = _matplotlib()
    if mpl is None or spec.kind not in _KINDS or spec.data is None or len(spec.data) == 0:
        return None
    matplotlib, Figure, FigureCanvasSVG = mpl
    panels = _plan(spec.kind, spec.data)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "biasamp", "font.size": 9,
                                "hatch.linewidth": 0.8, "text.usetex": False}):
        fig = Figure(figsize=_size(spec.kind, panels), layout="constrained")
        FigureCanvasSVG(fig)
        _KINDS[spec.kind](fig, panels)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype for inline use
    return svg.replace("<svg ", '<svg role="img" style="max-width:100%;height:auto" ', 1)
