"""Charts of the HTML report at few and at many classes (issue 14 item 8): biasamp.report._plots, biasamp.report._html.

Every figure kind renders at 5 and at 211 categories; a chart with many classes shows the top ones by effect and
says what it leaves out; error bars, group sizes and small groups are drawn; legends sit outside the axes; and the
page, screenshot in headless Chromium, is not blank and carries the labels.
"""

from __future__ import annotations

import os
import re
import subprocess
from html import unescape

import numpy as np
import pandas as pd
import pytest

from biasamp.report import FigureSpec, _plots, audit

from .test_report import _browser, _pixels

pytest.importorskip("matplotlib")

SIZES = (5, 211)
GROUPS = (("female", 0.55), ("male", 0.447), ("nonbinary", 0.003))  # nonbinary: about 18 of 6,000, a small group


def _names(k: int) -> list[str]:
    return ["cat", "dog", "car", "tree", "person"] if k == 5 else [f"class_{i:03d}" for i in range(k)]


def _audit(k: int):
    """A single-label task of ``k`` classes, three groups (one small); the model over-predicts 2 classes for women."""
    rng = np.random.default_rng(0)
    n = 6000
    names = np.array(_names(k))
    groups = rng.choice([g for g, _ in GROUPS], size=n, p=[p for _, p in GROUPS])
    task = rng.integers(0, k, size=n)
    pred = np.where(rng.random(n) < 0.3, rng.integers(0, k, size=n), task)
    biased = (groups == "female") & (rng.random(n) < 0.1)
    pred[biased] = rng.integers(0, 2, size=biased.sum())
    attr_pred = np.where(rng.random(n) < 0.1, rng.choice([g for g, _ in GROUPS], size=n), groups)
    return audit(pd.Series(groups), pd.Series(names[task]), task_pred=pd.Series(names[pred]),
                 attr_pred=pd.Series(attr_pred), n_boot=30, progress=False, sections=["directional", "fairness"],
                 names={"attr": "gender", "task": "object"})


@pytest.fixture(scope="module", params=SIZES, ids=lambda k: f"{k}classes")
def report(request):
    return request.param, _audit(request.param)


def _specs(k: int) -> list[FigureSpec]:
    """One figure of every kind with ``k`` categories, with every optional column."""
    rng = np.random.default_rng(k)
    names = [f"a long class name, number {i}" if i % 7 == 0 else f"c{i}" for i in range(k)]
    rates = []
    for facet in ("PPR", "TPR"):
        for group, n, small in (("female", 1204, False), ("male", 980, False), ("other", 7, True)):
            v = rng.uniform(0.05, 0.6, k)
            rates.append(pd.DataFrame({"facet": facet, "x": names, "hue": group, "value": v, "low": v - 0.05,
                                       "high": v + 0.05, "n": n, "small": small}))
    pairs = pd.concat([pd.DataFrame({"facet": d, "label": [f"g{i % 3} / {x}" for i, x in enumerate(names)],
                                     "value": (v := rng.normal(0, s, k)), "low": v - s / 2, "high": v + s / 2})
                       for d, s in (("A->T", 0.01), ("T->A", 1.0))], ignore_index=True)
    strip = pd.DataFrame({"label": np.repeat(names, 3), "value": rng.normal(0, 0.1, 3 * k)})
    line = pd.concat([pd.DataFrame({"facet": "BiasAmp", "label": x, "x": np.linspace(0, 1, 5), "x_label": "threshold",
                                    "value": (v := rng.normal(0, 0.1) + np.linspace(0, 0.1, 5)), "low": v - 0.02,
                                    "high": v + 0.02}) for x in names], ignore_index=True)
    return [FigureSpec("rates", "Rates", "grouped_bar", pd.concat(rates, ignore_index=True)),
            FigureSpec("pairs", "Pairs", "hbar", pairs), FigureSpec("iterations", "Iterations", "strip", strip),
            FigureSpec("curve", "Curve", "line", line)]


def _texts(svg: str) -> list[str]:
    return [unescape(t).strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def _draw(spec: FigureSpec):
    """The figure drawn on an Agg canvas (for geometry: extents of legends and axes)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = _plots._plan(spec.kind, spec.data)
    fig = Figure(figsize=_plots._size(spec.kind, panels), layout="constrained")
    FigureCanvasAgg(fig)
    _plots._KINDS[spec.kind](fig, panels)
    fig.canvas.draw()
    return fig


# --------------------------------------------------------------------------- #
# the renderer, kind by kind
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("k", SIZES)
def test_every_kind_renders(k):
    caps = {"grouped_bar": _plots._MAX_CATEGORIES, "hbar": _plots._MAX_HBAR, "strip": _plots._MAX_STRIP,
            "line": _plots._MAX_LINES}
    for spec in _specs(k):
        svg = _plots.figure_svg(spec)
        assert svg is not None and svg.startswith("<svg"), spec.kind
        notes = _plots.figure_notes(spec)
        texts = " | ".join(_texts(svg))
        if k == 5:  # everything shown, nothing said about the rest
            assert notes == [] and "more" not in texts, spec.kind
            for name in ("c1", "c4"):
                assert name in texts, (spec.kind, name)
        else:
            assert notes and all(f"of {k}" in n for n in notes), (spec.kind, notes)
            assert f"top {caps[spec.kind]} of {k}" in texts and f"and {k - caps[spec.kind]} more" in texts, spec.kind
        height = float(re.search(r'height="([\d.]+)pt"', svg).group(1)) / 72
        assert 1.0 < height < 16.0, (spec.kind, height)  # sizes scale with what is drawn, not with k
        assert float(re.search(r'width="([\d.]+)pt"', svg).group(1)) / 72 <= _plots._MAX_WIDTH + 0.01


def test_grouped_bar_group_sizes_small_groups_and_error_bars():
    from matplotlib.container import ErrorbarContainer

    spec = _specs(211)[0]
    svg = _plots.figure_svg(spec)
    texts = _texts(svg)
    assert "female (n=1,204)" in texts and "male (n=980)" in texts and "other (n=7, small)" in texts
    fig = _draw(spec)
    axes = fig.axes
    assert len(axes) == 2
    for ax in axes:
        assert any(isinstance(c, ErrorbarContainer) for c in ax.containers)  # an interval on every facet
        assert len(ax.get_yticklabels()) == _plots._MAX_CATEGORIES
        hatched = [p for p in ax.patches if p.get_hatch()]
        assert hatched and len(hatched) <= _plots._MAX_CATEGORIES  # the small group's bars, and only those
    legends = fig.legends or [ax.get_legend() for ax in axes if ax.get_legend() is not None]
    assert len(legends) == 1
    box = legends[0].get_window_extent()
    for ax in axes:  # the legend never covers a bar
        assert not box.overlaps(ax.get_window_extent()), (box, ax.get_window_extent())


def test_grouped_bar_top_k_by_effect_then_by_gap():
    k = 40
    names = [f"k{i}" for i in range(k)]
    rows = []
    for group, small in (("a", False), ("b", False), ("tiny", True)):
        value = np.full(k, 0.5)
        if group == "b":
            value[7] = 0.9  # the largest gap between the groups that are not small
            value[3] = 0.8
        if group == "tiny":
            value[:] = 0.0  # a huge, noisy gap of a small group ranks nothing
        rows.append(pd.DataFrame({"facet": "PPR", "x": names, "hue": group, "value": value, "small": small}))
    data = pd.concat(rows, ignore_index=True)
    (panel,) = _plots._plan("grouped_bar", data)
    assert panel.cut and panel.total == k and panel.order[:2] == ["k7", "k3"]
    assert len(panel.order) == _plots._MAX_CATEGORIES and panel.rest == 0.0
    (note,) = _plots.figure_notes(FigureSpec("rates", "Rates", "grouped_bar", data))
    assert "12 of 40 classes" in note and "small groups left out" in note and "at most 0" in note
    effect = data.assign(effect=data["x"].map({"k20": -0.7, "k21": 0.3}).fillna(0.01))
    (panel,) = _plots._plan("grouped_bar", effect)
    assert panel.order[:2] == ["k20", "k21"] and panel.by == "|effect|"  # |effect| when the data has it
    assert _plots._plan("grouped_bar", data[data["x"].isin(names[:5])])[0].order == names[:5]  # all, in data order


def test_many_groups_show_fewer_classes():
    hues = [f"g{i}" for i in range(10)]
    data = pd.DataFrame([(x, h, 0.1 * (i % 7)) for x in range(30) for i, h in enumerate(hues)],
                        columns=["x", "hue", "value"])
    (panel,) = _plots._plan("grouped_bar", data)
    assert len(panel.order) * len(hues) <= _plots._MAX_GROUP_BARS


def test_hbar_one_axis_per_direction_and_readable_labels():
    spec = _specs(211)[1]
    fig = _draw(spec)
    small, large = (ax.get_xlim()[1] for ax in fig.axes)
    assert large > 20 * small  # T->A does not squash A->T
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert len(labels) == _plots._MAX_HBAR and max(map(len, labels)) <= _plots._LABEL_CHARS
        values = [abs(p.get_width()) for p in ax.patches]
        assert values[0] == max(values)  # the largest |value| first (at the top)
    sized = spec.data.assign(n=3, small=True)
    texts = _texts(_plots.figure_svg(FigureSpec("pairs", "Pairs", "hbar", sized)))
    assert any(t.endswith("(n=3, small)") for t in texts)


def test_hbar_panel_without_negative_values_starts_at_zero():
    # a leakage panel (values and intervals in [0, 1]) is drawn from 0; a signed panel keeps a symmetric axis
    data = pd.DataFrame({"label": ["LIC_M", "LIC_D", "LIC", "DBAC A->T"], "value": [0.62, 0.55, 0.07, -0.1],
                         "low": [0.58, 0.5, 0.01, -0.2], "high": [0.66, 0.6, 0.13, 0.02],
                         "facet": ["leakage", "leakage", "amplification", "amplification"]})
    leak, amp = _draw(FigureSpec("captioning", "LIC", "hbar", data)).axes
    lo, hi = leak.get_xlim()
    assert -0.05 * hi <= lo < 0 and hi == pytest.approx(0.66 * 1.15)
    assert amp.get_xlim() == pytest.approx((-0.2 * 1.15, 0.2 * 1.15))


def test_labels_are_plain_text():
    data = pd.DataFrame({"label": ["$x$ costs $5", "y" * 80], "value": [0.2, -0.1]})
    texts = _texts(_plots.figure_svg(FigureSpec("pairs", "P", "hbar", data)))
    assert "$x$ costs $5" in texts  # no mathtext
    assert any(t.startswith("yyy") and t.endswith("\u2026") and len(t) == _plots._LABEL_CHARS for t in texts)


# --------------------------------------------------------------------------- #
# the page in headless Chromium
# --------------------------------------------------------------------------- #
def _count(px: np.ndarray, color: str, tol: int = 14) -> int:
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(px.astype(np.int32) - rgb).max(axis=2) <= tol).sum())


def _figure_html(page: str, key: str) -> str:
    start = page.index(f'<figure id="fig-{key}">')
    return page[start:page.index("</figure>", start)]


def test_report_page_in_headless_chromium(report, tmp_path):
    k, rep = report
    browser = _browser()
    if browser is None:
        pytest.skip("no chromium/chrome binary on PATH")
    page_path = rep.to_html(tmp_path / f"report{k}.html")
    page = page_path.read_text(encoding="utf-8")

    # the labels, from the page's text
    fairness = rep.section("fairness")
    rates = _figure_html(page, "rates")
    texts = _texts(rates)
    by_group = fairness.tables["by group"]
    sizes = by_group.drop_duplicates("group").set_index("group")["n"]
    assert f"female (n={int(sizes['female']):,})" in texts and f"male (n={int(sizes['male']):,})" in texts
    assert f"nonbinary (n={int(sizes['nonbinary']):,}, small)" in texts
    assert {"PPR", "TPR", "FPR"} <= set(texts)
    big = by_group[~by_group["small"].astype(bool)]
    gap = (big.groupby("class")["ppr"].max() - big.groupby("class")["ppr"].min()).sort_values(kind="stable")
    assert str(gap.index[-1]) in texts  # the class with the largest PPR gap is drawn
    if k == 5:
        assert all(name in texts for name in _names(5)) and "more" not in rates
    else:
        assert str(gap.index[0]) not in texts  # one with no gap is not
        assert sum(t in _names(k) for t in texts) <= 3 * _plots._MAX_CATEGORIES
        assert f"and {k - _plots._MAX_CATEGORIES} more" in " ".join(texts)
        assert f"Each panel shows the {_plots._MAX_CATEGORIES} of {k} classes" in rates  # the caption says it too
    pairs = _texts(_figure_html(page, "pairs"))
    assert {"A->T", "T->A"} <= set(pairs) and len([t for t in pairs if " / " in t]) <= 2 * _plots._MAX_HBAR

    # the screenshot
    png = tmp_path / f"report{k}.png"
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"]
    shot = subprocess.run([*flags, f"--screenshot={png}", "--window-size=1400,6000", page_path.as_uri()],
                          check=False, capture_output=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert png.is_file(), shot.stderr.decode(errors="replace")[-2000:]
    if os.environ.get("BIASAMP_KEEP_SCREENSHOTS"):  # to look at them: a folder to copy them to
        import shutil

        shutil.copy(png, os.path.join(os.environ["BIASAMP_KEEP_SCREENSHOTS"], png.name))
    px = _pixels(png)
    assert px.shape[:2] == (6000, 1400)
    assert px.std() > 10 and (px < 128).mean() > 0.005  # not blank: dark text and bars on a light page
    assert _count(px, "#2e86c1") > 2000  # blue bars (women; weakened pairs)
    assert _count(px, "#e67e22") > 500  # orange bars: men in the rates chart
    if k == 5:
        assert _count(px, _plots._PALETTE[2]) > 50  # the small group's hatched bars
