"""Report exports: Markdown, LaTeX (booktabs) and the Hugging Face model card; the CLI options that write them.

Every export is read back and compared with ``report.table``: the Markdown and
LaTeX tables are parsed cell by cell, the model card by PyYAML and by
huggingface_hub's own parsers (``ModelCard``, ``metadata_load``) where they are
installed, and the LaTeX table is compiled by pdflatex where it is installed.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp.cli import main
from biasamp.datasets import make_amplification_demo
from biasamp.report import Report, audit
from biasamp.report._export import _yaml_float, headline_rows, metric_key

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def report() -> Report:
    d = make_amplification_demo(n_train=1500, n_test=800, random_state=3)
    return audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train,
                 task_train=d.task_train, n_boot=100, n_boot_multi=20, n_iter=3, progress=False,
                 names={"attr": "gender", "task": "objects", "source": "demo | synthetic"})


def _summary_rows(markdown: str) -> list[list[str]]:
    """The cells of the first Markdown table (escaped pipes kept inside their cell)."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| metric |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line)[1:-1]
        rows.append([c.strip().replace("\\|", "|") for c in cells])
    return rows


def _close(text: str, value: float, digits: int) -> bool:
    return abs(float(text) - value) <= 0.5 * 10 ** -digits + 1e-12


# --------------------------------------------------------------------------- #
# keys
# --------------------------------------------------------------------------- #
def test_metric_keys_are_unique_and_tracker_safe(report):
    rows = headline_rows(report)
    keys = [r["key"] for r in rows]
    assert len(keys) == len(report.table) and len(set(keys)) == len(keys)
    assert all(re.fullmatch(r"[A-Za-z0-9_.]+", k) for k in keys)
    assert metric_key("BiasAmp->", "A->T") == "BiasAmp_directional.A_to_T"
    assert metric_key("BiasAmp_MALS", "") == "BiasAmp_MALS"
    assert metric_key("Multi->", "M->G raw") == "Multi_directional.M_to_G_raw"


# --------------------------------------------------------------------------- #
# Markdown
# --------------------------------------------------------------------------- #
def test_markdown_summary_table_holds_every_headline(report):
    text = report.to_markdown()
    assert text.startswith(f"# {report.title}\n")
    rows = _summary_rows(text)
    table = report.table
    assert len(rows) == len(table)
    for cells, r in zip(rows, table.itertuples(index=False)):
        metric, direction, value, ci, mde, p, reading, note = cells
        assert (metric, direction, reading, note) == (r.metric, r.direction, r.reading, r.note)
        assert _close(value, r.value, 4)
        if math.isnan(r.ci_low):
            assert ci == ""
        else:
            low, high = ci.strip("[]").split(", ")
            assert _close(low, r.ci_low, 4) and _close(high, r.ci_high, 4)
            assert _close(mde, r.min_detectable, 4)  # the minimum detectable effect beside the interval
        if r.p_value is None or (isinstance(r.p_value, float) and math.isnan(r.p_value)):
            assert p == ("n/a" if math.isfinite(r.value) else "")  # no test: a reason, not a blank
        elif r.p_value < 0.001:
            assert p == "<0.001"
        else:
            assert _close(p, r.p_value, 3)
    # a note holding "|" stays in its cell (the fairness notes do)
    assert any("|" in cells[-1] for cells in rows)
    assert "Data: demo | synthetic." in text


def test_markdown_sections_details_and_skipped(report):
    text = report.to_markdown(heading_level=2, details=True, max_rows=3)
    for s in report.sections:
        if s.status == "ok":
            assert f"### {s.title}\n\n{s.how_to_read}" in text
            assert f"*Reference:* {s.citation}" in text
            for name in s.tables:
                assert f"**{name}**" in text
        else:  # calibration: no validation scores
            assert f"- {s.title}: {s.status}, {s.message}" in text
    assert "more rows in the JSON report" in text
    assert "**pairs A->T**" not in report.to_markdown()  # details only on request
    with pytest.raises(ValueError, match="heading_level"):
        report.to_markdown(heading_level=0)


# --------------------------------------------------------------------------- #
# LaTeX
# --------------------------------------------------------------------------- #
def test_latex_booktabs_rows_and_intervals(report):
    text = report.to_latex(digits=3)
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert text.count(rule) == 1
    assert r"\begin{table}" in text and r"\label{tab:biasamp}" in text and "booktabs" in text.splitlines()[0]
    body = text.split(r"\midrule")[1].split(r"\bottomrule")[0]
    data = [line for line in body.splitlines() if line.endswith(r"\\") and not line.startswith(r"\multicolumn")]
    assert len(data) == len(report.table)
    footnote = text.split("Intervals: ", 1)[1].split(".\\par}", 1)[0]
    notes = dict(re.fullmatch(r"\\textsuperscript\{([a-z])\}(.*)", n).groups() for n in footnote.split("; "))
    for line, r in zip(data, report.table.itertuples(index=False)):
        cells = [c.strip() for c in line[:-2].split(" & ")]
        assert len(cells) == 7
        assert _close(cells[2].strip("$"), r.value, 3)
        if not math.isnan(r.ci_low):
            low, high, mark = re.fullmatch(r"\$\[(\S+), (\S+)\]\$\\textsuperscript\{([a-z])\}", cells[3]).groups()
            assert _close(low, r.ci_low, 3) and _close(high, r.ci_high, 3)
            assert _close(cells[4].strip("$"), r.min_detectable, 3)
            assert notes[mark].strip() == r.ci_method  # the table note names the interval method
    assert text.count(r"\multicolumn{7}") == sum(s.status == "ok" and len(s.summary) > 0 for s in report.sections)
    bare = report.to_latex(table_env=False)
    assert bare.splitlines()[1] == r"\begin{tabular}{llrlrrl}" and r"\caption" not in bare


def test_latex_escapes_special_characters(report):
    odd = Report.from_dict(report.to_dict())
    odd.title = "Model #3 & 50% of_data {x} ~y ^z $"
    text = odd.to_latex()
    assert r"Model \#3 \& 50\% of\_data \{x\} \textasciitilde{}y \textasciicircum{}z \$" in text
    _compile_if_possible(text)


def _compile_if_possible(table: str) -> None:
    if shutil.which("pdflatex") is None:
        return
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        doc = Path(d) / "doc.tex"
        doc.write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                       + table + "\\end{document}\n", encoding="utf-8")
        proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=d,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert (Path(d) / "doc.pdf").stat().st_size > 0


def test_latex_compiles_with_pdflatex(report):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    _compile_if_possible(report.to_latex())


# --------------------------------------------------------------------------- #
# model card
# --------------------------------------------------------------------------- #
def _front_matter(card: str) -> str:
    assert card.startswith("---\n")
    return card.split("---\n", 2)[1]


def test_model_card_yaml_holds_every_finite_headline(report):
    yaml = pytest.importorskip("yaml")
    card = report.to_model_card(model_name="org/demo-tagger", task_type="image-classification",
                                dataset_name="Demo tags", dataset_type="demo_tags", tags=["vision"])
    meta = yaml.safe_load(_front_matter(card))
    assert meta["tags"] == ["biasamp", "bias-amplification", "fairness", "vision"]
    (entry,) = meta["model-index"]
    assert entry["name"] == "org/demo-tagger"
    (result,) = entry["results"]
    assert result["task"] == {"type": "image-classification"}
    assert result["dataset"] == {"type": "demo_tags", "name": "Demo tags", "split": "test"}
    rows = [r for r in headline_rows(report) if r["value"] is not None]
    assert len(result["metrics"]) == len(rows)
    for m, r in zip(result["metrics"], rows):
        assert m["type"] == f"biasamp/{r['key']}"
        assert m["value"] == r["value"]  # the float round-trips exactly
        assert m["verified"] is False
        if r["ci_low"] is not None:  # the interval is in the text
            assert f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]" in m["name"] and r["ci_method"] in m["name"]
    body = card.split("---\n", 2)[2]
    assert "# org/demo-tagger" in body and "## Bias and bias amplification" in body
    assert "### Directional bias amplification BiasAmp->" in body
    with pytest.raises(ValueError, match="model_name"):
        report.to_model_card(model_name="")
    with pytest.raises(TypeError, match="tags"):
        report.to_model_card(tags="vision")


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_yaml_floats_read_back_exactly(x):
    """PyYAML (YAML 1.1) reads '1e-05' as a string: every float is written with a dotted mantissa."""
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(f"v: {_yaml_float(x)}")["v"] == x


def test_model_card_parsed_by_huggingface_hub(report, tmp_path):
    hub = pytest.importorskip("huggingface_hub")
    path = tmp_path / "README.md"
    text = report.to_model_card(path, model_name="demo-tagger", dataset_name="Demo tags")
    assert path.read_text(encoding="utf-8") == text
    card = hub.ModelCard(text)
    assert card.data.model_name == "demo-tagger"
    results = card.data.eval_results
    rows = [r for r in headline_rows(report) if r["value"] is not None]
    assert [e.metric_type for e in results] == [f"biasamp/{r['key']}" for r in rows]
    assert [e.metric_value for e in results] == [r["value"] for r in rows]
    assert {e.dataset_name for e in results} == {"Demo tags"} and {e.dataset_split for e in results} == {"test"}
    assert "## Bias and bias amplification" in card.text
    meta = hub.metadata_load(path)
    assert meta["model-index"][0]["results"][0]["metrics"][0]["value"] == rows[0]["value"]
    assert hub.ModelCard.load(path).data.eval_results[0].metric_name == results[0].metric_name


def run_guide(section: str) -> dict:
    """Run docs/integrations.md as a reader of ``section`` would: its ```python blocks and that section's ```py blocks.

    ```python blocks need only the core (tests/test_readme.py runs them too);
    ```py blocks need an integration's package, so the integration's tests
    run them where it is installed.
    """
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end
    namespace: dict = {}
    ran = 0
    for m in re.finditer(r"```(python|py)\n(.*?)```", text, flags=re.S):
        if m.group(1) == "python" or start < m.start() < end:
            ran += m.group(1) == "py"
            exec(compile(m.group(2), "docs/integrations.md", "exec"), namespace)
    assert ran, f"no ```py block in the section {section!r}"
    return namespace


def test_docs_model_card_blocks_run():
    pytest.importorskip("huggingface_hub")
    ns = run_guide("Papers, READMEs and model cards")
    assert ns["first"].metric_type == "biasamp/BiasAmp_directional.A_to_T"


# --------------------------------------------------------------------------- #
# command line
# --------------------------------------------------------------------------- #
def test_cli_writes_markdown_latex_and_model_card(tmp_path):
    runner = CliRunner()
    out = {k: tmp_path / name for k, name in (("json", "r.json"), ("markdown", "r.md"), ("latex", "r.tex"),
                                               ("model-card", "README.md"))}
    args = ["demo", "--n-boot", "50", "--n-iter", "2", "--no-progress", "-q", "--exclude", "multi"]
    for option, path in out.items():
        args += [f"--{option}", str(path)]
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    for path in out.values():
        assert f"wrote {path}" in res.output
    rep = Report.from_json(out["json"].read_text(encoding="utf-8"))
    # the files are the renderings of the report the JSON holds
    assert out["markdown"].read_text(encoding="utf-8") == rep.to_markdown()
    assert out["latex"].read_text(encoding="utf-8") == rep.to_latex()
    assert out["model-card"].read_text(encoding="utf-8") == rep.to_model_card()
    help_text = runner.invoke(main, ["audit", "--help"]).output
    assert "--markdown" in help_text and "--latex" in help_text and "--model-card" in help_text
    # the same file twice is refused before any work
    res = runner.invoke(main, ["demo", "-q", "--markdown", str(out["latex"]), "--latex", str(out["latex"])])
    assert res.exit_code == 2 and "name the same file" in res.output


def test_exports_of_a_report_with_nothing_computed():
    d = make_amplification_demo(n_train=300, n_test=200, random_state=1)
    rep = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, sections=["calibration"],
                progress=False)
    text = rep.to_markdown()
    assert "| metric |" not in text and "## Not computed" in text
    with pytest.raises(ValueError, match="no headline number"):
        rep.to_latex()
    with pytest.raises(ValueError, match="no finite headline"):
        rep.to_model_card()


def test_every_format_says_the_rows_weighted_and_dropped_in_its_header():
    """The terminal's header line on weights and dropped rows is in the HTML, Markdown and LaTeX headers too (a
    published report said nothing of 40 rows of weight 0 at its top)."""
    import numpy as np

    import biasamp

    rng = np.random.default_rng(0)
    n = 400
    attr = rng.integers(0, 2, n)
    task = (rng.random(n) < 0.3 + 0.2 * attr).astype(int)
    pred = np.where(rng.random(n) < 0.8, task, 1 - task)
    w = np.ones(n)
    w[:40] = 0
    rep = biasamp.audit(attr, task, task_pred=pred, sample_weight=w, sections=["fairness"], n_boot=30,
                        progress=False)
    line = "counts weighted by sample_weight; test rows: 40 zero-weight rows dropped"
    assert line in rep.summary()
    for text in (rep.to_html(), rep.to_markdown()):
        assert line in text
    assert "Counts weighted by sample\\_weight; test rows: 40 zero-weight rows dropped." in rep.to_latex()
