"""Tests of biasamp.report: audit(), Report (summary, JSON, HTML), the section registry, plots."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import warnings
import zlib
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasamp import (
    bias_amp_directional,
    bias_amp_mals,
    calibrate_thresholds,
    fairness_metrics,
)
from biasamp._core.atomic import _write_atomic
from biasamp.datasets import make_amplification_demo
from biasamp.report import (
    REPORT_JSON_SCHEMA,
    SUMMARY_COLUMNS,
    Report,
    SectionData,
    audit,
    register_section,
    section_builders,
)

FAST = {"n_boot": 100, "n_boot_multi": 10, "n_iter": 3, "attacker": "tabular", "progress": False}
METRIC_NAMES = ["BiasAmp->", "BiasAmp_MALS", "Multi_MALS", "Multi->", "DP", "DI", "SPSF", "FPSF", "EOFP", "EOTP",
                "BA", "DPA", "LA"]


@pytest.fixture(scope="module")
def demo():
    return make_amplification_demo(n_train=2000, n_test=1000)


def _full(d, **kw):
    return audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train,
                 task_train=d.task_train, **{**FAST, **kw})


@pytest.fixture(scope="module")
def report(demo):
    return _full(demo)


def _has_predictability() -> bool:
    try:
        from biasamp import predictability
    except ImportError:
        return False
    return hasattr(predictability, "dpa")


# --------------------------------------------------------------------------- #
# audit()
# --------------------------------------------------------------------------- #
def test_sections_and_statuses(report):
    status = {s.key: s.status for s in report.sections}
    # every section but those left out when their optional input is absent (the captioning section: captions=)
    assert [s.key for s in report.sections] == [b.key for b in section_builders() if not b.omit_when_skipped]
    for key in ("directional", "mals", "multi", "fairness"):
        assert status[key] == "ok", report.section(key).message
    assert status["calibration"] == "skipped"
    assert "validation scores" in report.section("calibration").message
    if _has_predictability():
        assert status["dpa"] == "ok" and status["leakage"] == "ok"


def test_values_are_those_of_the_metric_functions(demo, report):
    t = report.table
    assert list(t.columns) == ["section", *SUMMARY_COLUMNS]
    direct = bias_amp_directional(demo.attr, demo.task, attr_pred=demo.attr_pred, task_pred=demo.task_pred,
                                  attr_train=demo.attr_train, task_train=demo.task_train)
    row = t[(t.metric == "BiasAmp->") & (t.direction == "A->T")].iloc[0]
    assert row.value == direct.a_to_t.value
    assert row.ci_low <= row.value <= row.ci_high
    assert row.n == 1000 and row.ci_method == "BCa bootstrap (100)"
    assert t[(t.metric == "BiasAmp->") & (t.direction == "T->A")].iloc[0].value == direct.t_to_a.value
    mals = bias_amp_mals(attr_pred=demo.attr_pred, task_pred=demo.task_pred, attr_train=demo.attr_train, task_train=demo.task_train)
    assert t[t.metric == "BiasAmp_MALS"].iloc[0].value == mals.value
    fair = fairness_metrics(demo.task, demo.task_pred, sensitive_features=demo.attr)
    for name, value in fair.overall.items():
        assert t[(t.section == "fairness") & (t.metric == name)].iloc[0].value == value
    pairs = report.section("directional").tables["pairs A->T"]
    pd.testing.assert_frame_equal(pairs[list(direct.a_to_t.pairs.columns)], direct.a_to_t.pairs)
    # the bootstrap adds each pair's simultaneous interval (of delta) and its McNemar p-values, labelled as such
    # (they are not the headline's p, which is the interval's own)
    raw, holm = "McNemar p (per pair)", "McNemar p (per pair, Holm)"
    assert {"ci_low", "ci_high", raw, holm} <= set(pairs.columns) and "p_value" not in pairs.columns
    assert ((pairs.ci_low <= pairs.delta) & (pairs.delta <= pairs.ci_high)).all()
    assert (pairs[holm] >= pairs[raw]).all()


def test_demo_amplifies_one_direction_and_not_the_other(demo, report):
    t = report.table.set_index(["metric", "direction"])
    assert t.loc[("BiasAmp->", "A->T"), "reading"] == "amplified"
    assert t.loc[("BiasAmp->", "T->A"), "reading"] != "amplified"
    if _has_predictability():
        # DPA's interval carries the test rows too (a row bootstrap): 3 iterations are too few to tell, 20 tell
        t = _full(demo, sections=["dpa"], n_iter=20).table.set_index(["metric", "direction"])
        assert t.loc[("DPA", "A->T"), "reading"] == "amplified"
        assert t.loc[("DPA", "T->A"), "reading"] != "amplified"


def test_deterministic_and_sections_independent(demo, report):
    again = _full(demo)
    assert again.to_json() == report.to_json()
    only = _full(demo, sections=["directional"])
    assert [s.key for s in only.sections] == ["directional"]
    pd.testing.assert_frame_equal(only.section("directional").summary, report.section("directional").summary)
    other = _full(demo, sections=["directional"], random_state=1)
    assert not other.section("directional").summary.equals(report.section("directional").summary)


def test_missing_predictions_skip_what_needs_them(demo):
    rep = audit(demo.attr, demo.task, task_pred=demo.task_pred, **FAST, exclude=["dpa", "leakage"])
    assert rep.section("mals").status == "skipped"
    assert "attr_pred" in rep.section("mals").message
    directions = rep.section("directional").summary.direction.tolist()
    assert directions == ["A->T"]
    assert any("test ground truth" in n for n in rep.section("directional").notes)
    # the sections of optional inputs (captions, features) are left out, not listed as skipped
    assert {s.key for s in rep.sections} == {b.key for b in section_builders() if not b.omit_when_skipped} - {
        "dpa", "leakage"}
    assert {b.key for b in section_builders() if b.omit_when_skipped} == {"captioning", "scan"}


def test_single_label_task_skips_multi(demo):
    rep = audit(demo.attr, demo.task["kitchen"], attr_pred=demo.attr_pred, task_pred=demo.task_pred["kitchen"],
                **FAST, exclude=["dpa", "leakage"])
    assert rep.section("multi").status == "skipped"
    assert rep.section("directional").status == "ok"


def test_without_predictability_module(demo, monkeypatch):
    import biasamp.report._sections as sections_mod

    monkeypatch.setattr(sections_mod, "_predictability", lambda: None)
    rep = _full(demo, sections=["dpa", "leakage", "directional"])
    assert rep.section("dpa").status == "skipped" and rep.section("leakage").status == "skipped"
    assert rep.section("directional").status == "ok"


def test_bad_input(demo):
    with pytest.raises(ValueError, match="rows"):
        audit(demo.attr, demo.task.iloc[:10], task_pred=demo.task_pred, **FAST)
    with pytest.raises(ValueError, match="both attr_train and task_train"):
        audit(demo.attr, demo.task, task_pred=demo.task_pred, attr_train=demo.attr_train, **FAST)
    with pytest.raises(ValueError, match="unknown section"):
        audit(demo.attr, demo.task, task_pred=demo.task_pred, sections=["nope"], **FAST)
    with pytest.raises(ValueError, match="needs the test ground truth"):
        audit(None, demo.task, task_pred=demo.task_pred, **FAST)


def test_calibration(demo):
    rng = np.random.default_rng(0)
    val_labels = demo.task_train.iloc[:1000].reset_index(drop=True)
    val_scores = (val_labels + rng.normal(0, 0.4, val_labels.shape)).clip(0, 1)
    test_scores = (demo.task + rng.normal(0, 0.4, demo.task.shape)).clip(0, 1)
    rep = audit(demo.attr, demo.task, attr_pred=demo.attr_pred, task_pred=test_scores,
                attr_train=demo.attr_train, task_train=demo.task_train, task_val_scores=val_scores,
                **FAST, sections=["calibration", "directional"])
    th = calibrate_thresholds(val_scores, val_labels=demo.task_train)
    table = rep.section("calibration").tables["thresholds task"]
    np.testing.assert_array_equal(table["threshold"].to_numpy(), th.thresholds.to_numpy())
    hard = pd.DataFrame(th.apply(test_scores), columns=demo.task.columns)
    expected = bias_amp_directional(demo.attr, demo.task, task_pred=hard, attr_pred=demo.attr_pred,
                                    attr_train=demo.attr_train, task_train=demo.task_train)
    row = rep.table.query("direction == 'A->T'").iloc[0]
    assert row.value == expected.a_to_t.value
    assert rep.inputs["calibrated"] == ["task"] and rep.inputs["task_pred"] == "hard"
    with pytest.raises(ValueError, match="task_pred"):
        audit(demo.attr, demo.task, attr_pred=demo.attr_pred, task_val_scores=val_scores, **FAST)


def test_soft_predictions(demo):
    rng = np.random.default_rng(1)
    soft = (0.8 * demo.task_pred + 0.1 + rng.uniform(-0.05, 0.05, demo.task.shape)).clip(0, 1)
    rep = audit(demo.attr, demo.task, task_pred=soft, **FAST, sections=["directional", "fairness"])
    assert rep.inputs["task_pred"] == "soft"
    assert rep.section("directional").status == "ok" and rep.section("fairness").status == "ok"


def test_auto_attacker_is_recorded():
    """The DPA/LA sections say which attacker "auto" ran and why (6 tags over 5,000 rows: well-filled cells)."""
    d = make_amplification_demo()
    rep = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred,
                **{**FAST, "attacker": "auto"}, sections=["dpa", "leakage"])
    dpa_notes = " ".join(rep.section("dpa").notes)
    assert "DPA A->T attacker tabular" in dpa_notes and "DPA T->A attacker tabular" in dpa_notes
    assert "Bayes-optimal" in dpa_notes
    assert any(n.startswith("LA attacker tabular") for n in rep.section("leakage").notes)
    assert set(rep.section("dpa").summary["note"].str.split().str[0]) == {"tabular"}


# --------------------------------------------------------------------------- #
# the registry: a new metric family needs one builder, no renderer change
# --------------------------------------------------------------------------- #
def test_registering_a_section_extends_every_rendering(demo, monkeypatch):
    import biasamp.report._registry as registry_mod

    monkeypatch.setattr(registry_mod, "_BUILDERS", dict(registry_mod._BUILDERS))

    @register_section("toy", title="Toy metric", citation="Doe 2030", how_to_read="Bigger is toyer.",
                      needs="task_pred", applicable=lambda inp: inp.task_pred is not None, order=1)
    def _toy(inp, opt):
        return SectionData(
            summary=[{"metric": "ToyAmp", "direction": "A->T", "value": 0.25, "ci_low": 0.2, "ci_high": 0.3,
                      "ci_method": "exact", "n": inp.n, "reading": "amplified", "note": "toy"}],
            tables={"toy table": pd.DataFrame({"a": [1, 2]})},
        )

    @register_section("broken", title="Broken metric", citation="-", how_to_read="-", needs="-",
                      applicable=lambda inp: True, order=2)
    def _broken(inp, opt):
        raise RuntimeError("boom")

    rep = audit(demo.attr, demo.task, task_pred=demo.task_pred, **FAST, sections=["toy", "broken", "fairness"])
    assert [s.key for s in rep.sections] == ["toy", "broken", "fairness"]
    assert rep.section("broken").status == "error" and "boom" in rep.section("broken").message
    assert rep.section("fairness").status == "ok"
    assert "ToyAmp" in rep.summary() and "boom" in rep.summary()
    assert rep.table.iloc[0].metric == "ToyAmp"
    assert "ToyAmp" in rep.to_html(plots=False) and "Doe 2030" in rep.to_html(plots=False)
    assert Report.from_json(rep.to_json()).section("toy").tables["toy table"].a.tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="boom"):
        audit(demo.attr, demo.task, task_pred=demo.task_pred, **FAST, sections=["broken"], errors="raise")


def test_warnings_become_notes(monkeypatch, demo):
    import biasamp.report._registry as registry_mod

    monkeypatch.setattr(registry_mod, "_BUILDERS", dict(registry_mod._BUILDERS))

    @register_section("warn", title="W", citation="-", how_to_read="-", needs="-", applicable=lambda i: True)
    def _warn(inp, opt):
        warnings.warn("something is undefined", UserWarning, stacklevel=2)
        return SectionData()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = audit(demo.attr, demo.task, task_pred=demo.task_pred, **FAST, sections=["warn"])
    assert rep.section("warn").notes == ["UserWarning: something is undefined"]


def test_a_resource_collected_while_a_section_computes_is_not_its_note(monkeypatch, demo):
    """What the garbage collector emits while a section computes (an earlier object's unclosed file, a worker
    pool's pipe: a ``ResourceWarning``, or a warning from joblib's own code) says nothing about the section: it is
    not a note (it made a streamed report's notes depend on when the collector ran, e.g. --jobs 1 against 2)."""
    import biasamp.report._registry as registry_mod

    monkeypatch.setattr(registry_mod, "_BUILDERS", dict(registry_mod._BUILDERS))

    @register_section("gc", title="G", citation="-", how_to_read="-", needs="-", applicable=lambda i: True)
    def _gc(inp, opt):
        warnings.warn("unclosed file <_io.BufferedReader name=3>", ResourceWarning, stacklevel=2)
        warnings.warn_explicit("a worker stopped", UserWarning, "/venv/lib/python3.11/site-packages/joblib/"
                               "externals/loky/process_executor.py", 1)
        warnings.warn("a real one", UserWarning, stacklevel=2)
        return SectionData()

    rep = audit(demo.attr, demo.task, task_pred=demo.task_pred, **FAST, sections=["gc"])
    assert rep.section("gc").notes == ["UserWarning: a real one"]


# --------------------------------------------------------------------------- #
# renderings
# --------------------------------------------------------------------------- #
def test_summary_text(report):
    text = report.summary()
    for name in ("BiasAmp->", "BiasAmp_MALS", "DP", "EOTP", "amplified", "95% CI", "fractions"):
        assert name in text
    assert text.isascii()
    brief = repr(report)  # the header and the table, one line per row; the notes and legend are in summary()
    assert brief.splitlines()[:2] == text.splitlines()[:2] and "print(report.summary())" in brief
    # the overview's verdict alone (summary() opens with the whole overview), then the same table
    verdict = text.splitlines()[2].split(" (docs/report.md")[0]
    assert brief.splitlines()[2] == f"{verdict} (print(report.overview()) says why)"
    assert "\nmetric " in brief
    rows = [line for line in brief.splitlines() if line.startswith("BiasAmp->")]
    assert len(rows) == 2 and all("  amplified" in r or "  reduced" in r or "  no evidence" in r
                                  or "  too small to tell" in r for r in rows)  # the reading whole, on its line
    assert "\nnotes:" not in brief and "\nterms:" not in brief and "\nnotes:" in text and "\nterms:" in text


def test_json_round_trip_and_schema(report, tmp_path):
    text = report.to_json()
    obj = json.loads(text)
    assert obj["schema"] == "biasamp.report/1"
    back = Report.from_json(text)
    assert back.to_json() == text
    pd.testing.assert_frame_equal(back.table, report.table, check_dtype=False)
    assert back.summary() == report.summary()
    assert "NaN" not in text
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(obj, REPORT_JSON_SCHEMA)
    path = tmp_path / "r.json"
    assert report.to_json(path) == path.read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="not a biasamp report"):
        Report.from_dict({"schema": "other"})


def test_html_tables_only_without_matplotlib(report, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    from biasamp.report import _plots
    assert not _plots.available()
    page = report.to_html()
    assert "<svg" not in page and "install matplotlib" in page
    for name in METRIC_NAMES[:-2] + (["DPA", "LA"] if _has_predictability() else []):
        assert f">{escape(name)}<" in page


def test_html_self_contained_with_plots(report, tmp_path):
    pytest.importorskip("matplotlib")
    written = report.to_html(tmp_path / "r.html")
    assert written == (tmp_path / "r.html").resolve()  # the path, not a page that would flood a notebook
    page = written.read_text(encoding="utf-8")
    assert page.count("<svg") >= 4
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", page)
    assert "<script" not in page and "<link" not in page
    for s in report.sections:
        assert f'id="{s.key}"' in page and s.citation.split('"')[0].strip() in page
    assert page.count("How to read this.") == sum(s.status == "ok" for s in report.sections)


def test_html_escapes_names(demo):
    evil = demo.attr.map({"man": "<script>alert(1)</script>", "woman": "w&m"})
    rep = audit(evil, demo.task, task_pred=demo.task_pred, **FAST, sections=["fairness", "directional"])
    page = rep.to_html(plots=False)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_atomic_write(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_text("old", encoding="utf-8")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        _write_atomic(path, "new")
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]  # no temporary file left
    _write_atomic(path, "new")
    assert path.read_text(encoding="utf-8") == "new"
    with pytest.raises(ValueError, match="refusing to overwrite"):
        _write_atomic(path, "x", protect=[path])
    with pytest.raises(FileNotFoundError):
        _write_atomic(tmp_path / "missing" / "x.json", "x")


# --------------------------------------------------------------------------- #
# the HTML page in a real browser (headless Chromium)
# --------------------------------------------------------------------------- #
def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit RGB/RGBA PNG (no interlace) with zlib and numpy only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prev = np.zeros(width * bpp, dtype=np.int32)
    for y in range(height):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 0xFF
        else:  # Sub, Average, Paeth: sequential within the row
            cur = np.zeros_like(line)
            for x in range(len(line)):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) >> 1
                else:
                    c = prev[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + pred) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)[:, :, :3]


def _pixels(png: Path) -> np.ndarray:
    try:
        from PIL import Image
    except ImportError:
        return _png_pixels(png.read_bytes())
    with Image.open(png) as im:
        return np.asarray(im.convert("RGB"))


def test_html_in_headless_chromium(report, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("no chromium/chrome binary on PATH")
    page = tmp_path / "report.html"
    report.to_html(page)
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"]
    url = page.resolve().as_uri()
    png = tmp_path / "shot.png"
    env = {**os.environ, "HOME": str(tmp_path)}
    shot = subprocess.run([*flags, f"--screenshot={png}", "--window-size=1000,1400", url],
                          check=False, capture_output=True, timeout=120, env=env)
    assert png.is_file(), shot.stderr.decode(errors="replace")[-2000:]
    px = _pixels(png)
    np.testing.assert_array_equal(_png_pixels(png.read_bytes()), px)  # the fallback decoder agrees
    assert px.shape[:2] == (1400, 1000)
    assert px.std() > 10  # not blank
    assert (px < 128).mean() > 0.005  # dark text/bars on a light page
    dom = subprocess.run([*flags, "--dump-dom", url], check=False, capture_output=True, timeout=120, env=env)
    text = dom.stdout.decode("utf-8", errors="replace")
    assert "</html>" in text, dom.stderr.decode(errors="replace")[-2000:]
    names = [n for n in METRIC_NAMES if n not in ("DPA", "LA") or _has_predictability()]
    for name in names:
        assert f">{name}<" in text.replace("&gt;", ">"), name
    assert "How to read this." in text


# --------------------------------------------------------------------------- #
# reliability (issue 13)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("text, words", [
    ("not json", "not valid JSON"), (b"\xff\xfe\x00", "not valid JSON"), ("[1, 2]", "expected a JSON object"),
    ("{}", "schema"), ('{"schema": "biasamp.report/1"}', "missing key"),
])
def test_from_json_rejects_anything_else_with_one_message(text, words):
    with pytest.raises(ValueError, match=f"not a biasamp report: .*{words}"):
        Report.from_json(text)


def test_from_json_rejects_wrong_shapes_inside(report):
    good = report.to_dict()
    bad_sections = json.loads(json.dumps(good))
    bad_sections["sections"][0]["summary"]["rows"] = [[1]]   # a row of the wrong width
    del bad_sections["sections"][1]["notes"]
    for obj, words in ((bad_sections, r"sections\[1\]: missing key|rows\[0\]"),
                       ({**good, "sections": {"a": 1}}, "sections: expected a JSON array")):
        with pytest.raises(ValueError, match=f"not a biasamp report: .*({words})"):
            Report.from_json(json.dumps(obj))
    assert Report.from_json(report.to_json().encode("utf-8")).to_json() == report.to_json()  # bytes are fine
    with pytest.raises(TypeError, match="text must be"):
        Report.from_json(good)


def test_unknown_section_is_a_value_error(report):
    with pytest.raises(ValueError, match="no section 'nope'") as info:
        report.section("nope")
    assert isinstance(info.value, KeyError)


def test_audit_validates_label_arguments_up_front():
    attr, task, pred = [0, 0, 1, 1, 0, 1], [0, 1, 1, 0, 0, 1], [0, 1, 1, 1, 1, 0]
    for kwargs, kind, words in [
        (dict(task="abc"), TypeError, "task must be array-like"),
        (dict(task_pred=[0, 1, np.nan, 1, 1, 0]), ValueError, "task_pred contains NaN"),
        (dict(attr=np.zeros((6, 1, 1))), ValueError, "attr must be 1-D .* 3-D"),
        (dict(attr=[]), ValueError, "attr is empty"),
        (dict(n_iter=1), ValueError, "n_iter"),
        (dict(top_k=0), ValueError, "top_k"),
        (dict(combinations="some"), ValueError, "combinations"),
        (dict(attacker="best"), ValueError, "attacker"),
        (dict(random_state=1.5), TypeError, "random_state"),
    ]:
        args = {"attr": attr, "task": task, "task_pred": pred, **kwargs}
        with pytest.raises(kind, match=words):
            audit(args.pop("attr"), args.pop("task"), **args, progress=False)
