"""Plots of the HTML report, as inline SVG (needs matplotlib: the ``[plot]`` extra).

Only the object-oriented API is used (``matplotlib.figure.Figure`` with the
SVG canvas): no pyplot, no global backend switch, no state left behind in the
user's session. :func:`figure_svg` returns ``None`` when matplotlib is missing,
and the report then renders its tables only.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["available", "draw_lines", "figure_svg"]

_POS, _NEG = "#c0392b", "#2e86c1"  # amplify / weaken
_PALETTE = ("#2e86c1", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d4ac0d")


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


def _facets(data: pd.DataFrame) -> list:
    return list(dict.fromkeys(data["facet"])) if "facet" in data.columns else [None]


def _hbar(fig, data: pd.DataFrame) -> None:
    facets = _facets(data)
    axes = fig.subplots(1, len(facets), squeeze=False)[0]
    has_ci = "low" in data.columns and "high" in data.columns
    for ax, facet in zip(axes, facets):
        part = data if facet is None else data[data["facet"] == facet]
        part = part.iloc[np.argsort(-np.abs(part["value"].to_numpy(dtype=np.float64)), kind="stable")][::-1]
        vals = part["value"].to_numpy(dtype=np.float64)
        y = np.arange(len(part))
        ax.barh(y, vals, color=[_POS if v > 0 else _NEG for v in vals])
        extent = np.abs(vals)
        if has_ci:  # simultaneous interval of each bar
            lo, hi = part["low"].to_numpy(dtype=np.float64), part["high"].to_numpy(dtype=np.float64)
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                err = np.vstack([np.clip(vals - lo, 0, None), np.clip(hi - vals, 0, None)])
                ax.errorbar(vals[ok], y[ok], xerr=err[:, ok], fmt="none", ecolor="black", elinewidth=0.8,
                            capsize=2)
                extent = np.concatenate([extent, np.abs(lo[ok]), np.abs(hi[ok])])
        lim = float(np.nanmax(extent)) if extent.size else 1.0  # one x-axis per facet (direction)
        lim = lim * 1.15 if lim > 0 else 1.0
        ax.set_yticks(y)
        ax.set_yticklabels([str(v) for v in part["label"]], fontsize=8)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlim(-lim, lim)
        ax.tick_params(axis="x", labelsize=8)
        if facet is not None:
            ax.set_title(str(facet), fontsize=10)


def _grouped_bar(fig, data: pd.DataFrame) -> None:
    facets = _facets(data)
    axes = fig.subplots(1, len(facets), squeeze=False)[0]
    for ax, facet in zip(axes, facets):
        part = data if facet is None else data[data["facet"] == facet]
        xs = list(dict.fromkeys(part["x"]))
        hues = list(dict.fromkeys(part["hue"]))
        width = 0.8 / max(1, len(hues))
        for j, h in enumerate(hues):
            sub = part[part["hue"] == h].set_index("x")["value"]
            vals = [float(sub.get(x, np.nan)) for x in xs]
            ax.bar(np.arange(len(xs)) + (j - (len(hues) - 1) / 2) * width, vals, width,
                   label=str(h), color=_PALETTE[j % len(_PALETTE)])
        ax.set_xticks(np.arange(len(xs)))
        ax.set_xticklabels([str(x) for x in xs], rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.tick_params(axis="y", labelsize=8)
        if facet is not None:
            ax.set_title(str(facet), fontsize=10)
    axes[-1].legend(fontsize=8, title=None, loc="upper right")


def _strip(fig, data: pd.DataFrame) -> None:
    ax = fig.subplots()
    labels = list(dict.fromkeys(data["label"]))
    rng = np.random.default_rng(0)  # jitter only; deterministic output
    for i, lab in enumerate(labels):
        vals = data.loc[data["label"] == lab, "value"].to_numpy(dtype=np.float64)
        ax.scatter(vals, i + rng.uniform(-0.15, 0.15, len(vals)), s=18, alpha=0.7,
                   color=_PALETTE[i % len(_PALETTE)])
        if len(vals):
            ax.plot([vals.mean()] * 2, [i - 0.3, i + 0.3], color="black", linewidth=2)
    ax.axvline(0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yticks(np.arange(len(labels)))
    ax.set_yticklabels([str(v) for v in labels])
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.tick_params(labelsize=8)


def draw_lines(ax, data: pd.DataFrame, x_label: str = "") -> None:
    """One line per ``label`` of ``value`` against ``x``, with a ``low``/``high`` band where given.

    ``x`` may be numbers (a numeric axis) or labels such as checkpoint names
    (evenly spaced, in the order given).
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
                linewidth=1.4, color=color, label=str(lab))
        if has_ci:
            lo, hi = part["low"].to_numpy(dtype=np.float64)[order], part["high"].to_numpy(dtype=np.float64)[order]
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax.fill_between(x[order][ok], lo[ok], hi[ok], color=color, alpha=0.18, linewidth=0)
    ax.axhline(0, color="grey", linewidth=0.8, linestyle="--")
    if not numeric:
        ax.set_xticks(np.arange(len(xs)))
        ax.set_xticklabels([str(x) for x in xs], rotation=45 if len(xs) > 8 else 0, fontsize=8)
    ax.tick_params(labelsize=8)
    if x_label:
        ax.set_xlabel(x_label, fontsize=9)
    ax.legend(fontsize=8, loc="best")


def _line(fig, data: pd.DataFrame) -> None:
    facets = _facets(data)
    axes = fig.subplots(1, len(facets), squeeze=False)[0]
    for ax, facet in zip(axes, facets):
        part = data if facet is None else data[data["facet"] == facet]
        draw_lines(ax, part, str(part["x_label"].iloc[0]) if "x_label" in part.columns else "")
        if facet is not None:
            ax.set_title(str(facet), fontsize=10)


_KINDS = {"hbar": _hbar, "grouped_bar": _grouped_bar, "strip": _strip, "line": _line}


def _size(kind: str, data: pd.DataFrame) -> tuple[float, float]:
    n_facets = len(_facets(data)) if "facet" in data.columns else 1
    if kind == "hbar":
        per = max((data["facet"] == f).sum() for f in _facets(data)) if "facet" in data.columns else len(data)
        return (min(4.2 * n_facets, 12.0), 1.0 + 0.28 * max(per, 2))
    if kind == "grouped_bar":
        return (min(4.0 * n_facets, 12.0), 3.4)
    if kind == "line":
        return (min(6.4 * n_facets, 12.0), 3.6)
    return (7.0, 1.2 + 0.6 * data["label"].nunique())


def figure_svg(spec: Any) -> str | None:
    """Render a :class:`~biasamp.report.FigureSpec` as an inline ``<svg>`` element.

    Returns ``None`` when matplotlib is not installed or the figure has no data.
    """
    mpl = _matplotlib()
    if mpl is None or spec.kind not in _KINDS or spec.data is None or len(spec.data) == 0:
        return None
    matplotlib, Figure, FigureCanvasSVG = mpl
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "biasamp", "font.size": 9}):
        fig = Figure(figsize=_size(spec.kind, spec.data), layout="constrained")
        FigureCanvasSVG(fig)
        _KINDS[spec.kind](fig, spec.data)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype for inline use
    return svg.replace("<svg ", '<svg role="img" style="max-width:100%;height:auto" ', 1)
