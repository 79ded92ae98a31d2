"""Hostile and careless data (docs/safety.md): no output destroyed, injected or replaced; bounded costs.

Every special file here (FIFO, device node) is made in a temporary folder, never a system path.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from biasamp import audit, fairness_metrics
from biasamp.cli import main
from biasamp.report import Report

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["--n-boot", "20", "--no-progress", "-q", "--exclude", "dpa", "--exclude", "leakage", "--exclude", "multi"]

PAYLOADS = {
    "html": "<img src=x onerror=alert(1)>",
    "link": "[click](javascript:alert(1))",
    "autolink": "<javascript:alert(1)>",
    "heading": "a\n# Injected heading",
    "ansi": "\x1b[2J\x1b[31mred",
    "nul": "nul\x00byte",
    "bidi": "abc\u202edcba",
    "c1": "x\x85y\x9bz\x7f",
    "tex": "\\input{/etc/passwd}",
    "blank": "p\n\nq",
}


@pytest.fixture
def runner():
    return CliRunner()


def _frame(n=240, seed=0, groups=("a", "b")):
    rng = np.random.default_rng(seed)
    g = rng.choice(list(groups), n)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    return pd.DataFrame({"group": g, "label": y, "label_pred": p})


def _report(groups, title="t", source="s"):
    df = _frame(groups=groups)
    return audit(df["group"].rename("attr"), df["label"], task_pred=df["label_pred"], sections=["fairness"],
                 n_boot=20, progress=False, min_group_size=0, title=title, names={"source": source})


@pytest.fixture(scope="module")
def hostile():
    """A report whose groups, title and source hold every payload."""
    names = list(PAYLOADS.values())
    return _report(names, title="T " + " ".join(names), source="S " + " ".join(names))


def _write_csv(path: Path, df: pd.DataFrame) -> Path:
    df.to_csv(path, index=False)
    return path


# --------------------------------------------------------------------------- #
# 9. data loss
# --------------------------------------------------------------------------- #
def test_output_over_a_file_inside_a_parquet_directory_input_is_refused(runner, tmp_path):
    pytest.importorskip("pyarrow")
    data = tmp_path / "data"
    data.mkdir()
    df = _frame()
    df.iloc[:120].to_parquet(data / "part-0.parquet")
    df.iloc[120:].to_parquet(data / "part-1.parquet")
    before = (data / "part-1.parquet").read_bytes()
    res = runner.invoke(main, ["audit", str(data), "--attr", "group", "--task", "label", *QUICK,
                               "--json", str(data / "part-1.parquet")])
    assert res.exit_code == 2 and "refusing to overwrite" in res.output
    assert (data / "part-1.parquet").read_bytes() == before
    # a partition reached through a symbolic link to a file outside the folder is an input too
    outside = tmp_path / "elsewhere.parquet"
    (data / "part-1.parquet").rename(outside)
    (data / "part-1.parquet").symlink_to(outside)
    res = runner.invoke(main, ["audit", str(data), "--attr", "group", "--task", "label", *QUICK,
                               "--json", str(outside)])
    assert res.exit_code == 2 and "refusing to overwrite" in res.output
    assert outside.read_bytes() == before
    # the library's writer refuses it too
    rep = _report(["a", "b"])
    from biasamp._core.atomic import _write_atomic

    with pytest.raises(ValueError, match="refusing to overwrite the input"):
        _write_atomic(data / "new.json", rep.to_json(), protect=[data])


def test_demo_save_data_never_replaces_existing_files(runner, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "test.csv").write_text("my own data\n")
    res = runner.invoke(main, ["demo", "--save-data", str(folder), *QUICK])
    assert res.exit_code == 2 and "refusing to overwrite" in res.output
    assert (folder / "test.csv").read_text() == "my own data\n" and not (folder / "train.csv").exists()


def test_metric_keys_of_attributes_that_slug_alike_stay_apart():
    from biasamp.report._export import headline_rows
    from biasamp.report._mlflow import report_metrics

    df = _frame()
    rng = np.random.default_rng(1)
    other = pd.Series(rng.choice(["u", "v"], len(df)))
    rep = audit({"sex 1": df["group"], "sex_1": other}, df["label"], task_pred=df["label_pred"],
                sections=["fairness"], n_boot=20, progress=False, min_group_size=0)
    rows = headline_rows(rep)
    keys = [r["key"] for r in rows]
    assert len(keys) == len(rep.table) and len(set(keys)) == len(keys)
    metrics = report_metrics(rep)
    # every headline value is logged under its own name: none overwrites the other attribute's
    finite = rep.table["value"].notna().sum()
    assert sum(1 for k in metrics if not k.endswith((".ci_low", ".ci_high", ".p_value"))) == finite
    dp = {k: v for k, v in metrics.items() if k.endswith(".DP")}
    expected = sorted(rep.table.query("metric == 'DP'")["value"])
    assert sorted(dp.values()) == pytest.approx(expected) and len(dp) == 2


def test_symlinked_partitions_are_read_and_dangling_ones_refused(tmp_path):
    pytest.importorskip("pyarrow")
    from biasamp.report._stream import ParquetDataset

    data, elsewhere = tmp_path / "data", tmp_path / "elsewhere"
    data.mkdir()
    (elsewhere / "year=2024").mkdir(parents=True)
    df = _frame(n=500)
    for i in range(4):
        df.iloc[100 * i:100 * (i + 1)].to_parquet(data / f"part-{i}.parquet")
    df.iloc[400:].to_parquet(elsewhere / "year=2024" / "part-4.parquet")
    (data / "year=2024").symlink_to(elsewhere / "year=2024", target_is_directory=True)
    ds = ParquetDataset.open(data)
    assert ds.num_rows == 500 and len(ds.files) == 5
    from biasamp.cli._data import read_table

    assert len(read_table(data)) == 500
    (data / "part-9.parquet").symlink_to(tmp_path / "gone.parquet")
    with pytest.raises(ValueError, match="dangling symbolic link"):
        ParquetDataset.open(data)
    (data / "part-9.parquet").unlink()
    (data / "part-5.parquet").symlink_to(data / "part-0.parquet")  # the same rows twice
    with pytest.raises(ValueError, match="counted twice"):
        ParquetDataset.open(data)


def test_intersection_labels_of_distinct_pairs_never_merge():
    from biasamp.report._attributes import intersection_labels

    race = ["x, sex=y", "x", "x", "a=b"]
    sex = ["z", "y, sex=z", "y", "c"]
    labels = intersection_labels({"race": race, "sex": sex}).tolist()
    assert len(set(labels)) == 4
    # each label reads back as its own pair (JSON-quoted values)
    assert labels[0] == 'race="x, sex=y", sex=z' and labels[1] == 'race=x, sex="y, sex=z"'
    assert labels[2] == "race=x, sex=y" and labels[3] == 'race="a=b", sex=c'
    # through the audit: four groups, not three
    df = pd.DataFrame({"race": race * 30, "sex": sex * 30})
    y = np.tile([0, 1, 1, 0, 1, 0, 0, 1], 15)
    rep = audit({"race": df["race"], "sex": df["sex"]}, y, task_pred=y[::-1].copy(), intersect=[("race", "sex")],
                sections=["fairness"], n_boot=20, progress=False, min_group_size=0)
    groups = rep.inputs["attributes"]["race x sex"]["attribute_classes"]
    assert len(groups) == 4


def test_missing_group_never_merges_into_a_real_group_named_missing():
    from biasamp.report._attributes import intersection_labels

    y = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    groups = np.array(["missing", None, "a", "missing", "a", None, "a", "missing"], dtype=object)
    with pytest.raises(ValueError, match="real group 'missing'"):
        fairness_metrics(y, y, sensitive_features=groups, missing="group", min_group_size=0)
    # without a real group of that name, missing="group" still works
    ok = fairness_metrics(y, y, sensitive_features=np.where(groups == "missing", "b", groups), missing="group",
                          min_group_size=0)
    assert ok is not None
    labels = intersection_labels({"race": groups, "sex": ["f"] * 8}, missing="group").tolist()
    assert labels[0] == 'race="missing", sex=f' and labels[1] == "race=missing, sex=f"


# --------------------------------------------------------------------------- #
# 10. injection
# --------------------------------------------------------------------------- #
_BAD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def test_markdown_holds_no_html_link_heading_or_control(hostile):
    text = hostile.to_markdown(details=True)
    assert "<img" not in text and "<javascript" not in text
    assert not re.search(r"(?<!\\)\]\(javascript", text) and "\\](javascript" in text  # the link escaped
    assert not any(line.startswith("# Injected") for line in text.splitlines())
    assert not _BAD_CHARS.search(text)
    assert "&lt;img src=x onerror=alert(1)>" in text  # shown, not interpreted
    assert "\\x1b[2J" in text and "\\u202e" in text and "\\x00" in text  # visible escapes


def test_markdown_table_headers_are_escaped_too():
    from biasamp.report._export import _md_table

    lines = _md_table(["<b>x</b>|y\nz"], [["<i>v</i>"]], "l")
    assert "<b>" not in lines[0] and "<i>" not in lines[2] and lines[0].count(" | ") == 0 and len(lines) == 3


def test_markdown_renders_names_as_text(hostile):
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(hostile.to_markdown(details=True))
    assert "<img" not in html and 'href="javascript' not in html and "<h1>Injected" not in html


def test_model_card_yaml_loads_and_holds_the_exact_names(hostile):
    yaml = pytest.importorskip("yaml")
    card = hostile.to_model_card(model_name="M " + " ".join(PAYLOADS.values()))
    front = card.split("---\n")[1]
    meta = yaml.safe_load(front)
    assert meta["model-index"][0]["name"] == "M " + " ".join(PAYLOADS.values())
    assert meta["model-index"][0]["results"][0]["dataset"]["name"] == hostile.source
    body = card.split("---\n", 2)[2]
    assert "<img" not in body and not _BAD_CHARS.search(body)
    assert not any(line.startswith("# Injected") for line in body.splitlines())


def test_model_card_loads_with_huggingface_hub(hostile, tmp_path):
    hub = pytest.importorskip("huggingface_hub.repocard")
    path = tmp_path / "README.md"
    hostile.to_model_card(path)
    meta = hub.metadata_load(path)
    assert meta["model-index"][0]["name"] == hostile.title


def test_latex_title_and_section_names_cannot_end_a_comment_or_break_a_cell(hostile):
    df = _frame()
    rep = audit({"p\n\nq": df["group"]}, df["label"], task_pred=df["label_pred"], sections=["fairness"],
                n_boot=20, progress=False, min_group_size=0, title="x\n\\input{/etc/passwd}\n\nend")
    for r in (rep, hostile):
        text = r.to_latex()
        lines = text.splitlines()
        assert "" not in lines[:-1]  # no paragraph break anywhere (caption, \multicolumn)
        assert not any(line.lstrip().startswith("\\input") for line in lines)
        assert "\\input{" not in text.replace("\\textbackslash{}input", "")
        assert not _BAD_CHARS.search(text)
    assert lines[0].startswith("% ")


def test_terminal_summary_and_cli_errors_hold_no_escape_sequence(hostile, runner, tmp_path):
    assert "\x1b" not in hostile.summary() and not _BAD_CHARS.search(hostile.summary())
    assert "\\x1b[2J" in hostile.summary()
    df = _frame().rename(columns={"group": "g\x1b[2J"})
    path = _write_csv(tmp_path / "t.csv", df)
    res = runner.invoke(main, ["audit", str(path), "--attr", "nope\x1b[31m", "--task", "label", *QUICK])
    assert res.exit_code == 2 and "\x1b" not in res.output and "\\x1b" in res.output


def test_html_has_no_nul_or_bidi_override(hostile):
    html = hostile.to_html(plots=False)
    assert "\x00" not in html and "\u202e" not in html and "<img src=x" not in html
    assert "\\u202e" in html


def test_plot_labels_never_reach_tex_raw():
    matplotlib = pytest.importorskip("matplotlib")
    from biasamp.report._plots import _txt

    with matplotlib.rc_context({"text.usetex": True}):
        label = _txt("\\input{/etc/passwd} $x$ 50%", None)
    assert "\\input{" not in label and "\\textbackslash{}input\\{/etc/passwd\\}" in label
    assert "\\%" in label and "\\$x\\$" in label
    assert _txt("$\\frac{1}{0}$", None) == "\\$\\frac{1}{0}\\$"  # no mathtext without usetex
    assert _txt("_hidden", None) != "_hidden"  # a legend would drop a label starting with "_"


def test_report_figures_never_use_tex(hostile):
    matplotlib = pytest.importorskip("matplotlib")
    from biasamp.report._plots import figure_svg

    spec = next(f for s in hostile.sections for f in s.figures)
    with matplotlib.rc_context({"text.usetex": True}):  # no latex binary needed: TeX is never called
        svg = figure_svg(spec)
    assert svg is not None and "\x00" not in svg and "\u202e" not in svg


# --------------------------------------------------------------------------- #
# 11. files
# --------------------------------------------------------------------------- #
def test_symlink_output_is_followed_and_dangling_link_refused(runner, tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    rep = _report(["a", "b"])
    rep.to_json(link)
    assert link.is_symlink() and json.loads(target.read_text())["title"] == "t"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the existing file keeps its mode
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "sub" / "elsewhere.json")
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match="dangling symbolic link"):
        rep.to_json(dangling)
    assert not (tmp_path / "sub" / "elsewhere.json").exists()
    path = _write_csv(tmp_path / "t.csv", _frame())
    res = runner.invoke(main, ["audit", str(path), "--attr", "group", "--task", "label", *QUICK,
                               "--json", str(dangling)])
    assert res.exit_code == 2 and "dangling" in res.output
    assert not (tmp_path / "sub" / "elsewhere.json").exists()


def test_new_outputs_respect_the_umask(tmp_path):
    rep = _report(["a", "b"])
    old = os.umask(0o077)
    try:
        rep.to_json(tmp_path / "private.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600
    old = os.umask(0o022)
    try:
        rep.to_markdown(tmp_path / "public.md")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "public.md").stat().st_mode) == 0o644


def _reader(path: Path, out: list) -> threading.Thread:
    def read():
        with open(path, "rb") as fh:
            out.append(fh.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def test_fifo_output_is_written_into_not_replaced(runner, tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    got: list = []
    t = _reader(fifo, got)
    path = _write_csv(tmp_path / "t.csv", _frame())
    res = runner.invoke(main, ["audit", str(path), "--attr", "group", "--task", "label", *QUICK, "--json", str(fifo)])
    t.join(30)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the FIFO
    assert json.loads(got[0])["schema"] == "biasamp.report/1"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _mknod(path: Path, major: int, minor: int) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(major, minor))
        with open(path, "rb+"):
            pass
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make or open a device node here: {exc}")


def test_character_device_output_is_never_replaced(tmp_path):
    node = tmp_path / "null"  # a private twin of /dev/null (1, 3), in the temporary folder
    _mknod(node, 1, 3)
    rep = _report(["a", "b"])
    rep.to_json(node)
    rep.to_html(node, plots=False)
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3


def test_sigterm_leaves_no_temporary_file(tmp_path):
    script = (
        "import os, signal, sys\n"
        "import biasamp._core.atomic as a\n"
        "real = os.fsync\n"
        "def fsync(fd):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    real(fd)\n"
        "a.os.fsync = fsync\n"
        "from biasamp.cli import main\n"
        "sys.argv = ['biasamp', 'demo', '-q', '--n-boot', '20', '--exclude', 'dpa', '--exclude', 'leakage',"
        " '--exclude', 'multi', '--json', 'r.json']\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 143, proc.stderr
    assert "terminated" in proc.stderr and "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []  # neither the report nor its temporary file


def test_fifo_input_is_read_once_as_csv(runner, tmp_path):
    df = _frame()
    plain = _write_csv(tmp_path / "t.csv", df)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as fh:
            fh.write(plain.read_bytes())

    t = threading.Thread(target=write, daemon=True)
    t.start()
    res = runner.invoke(main, ["audit", str(fifo), "--attr", "group", "--task", "label", *QUICK,
                               "--json", str(tmp_path / "a.json")])
    t.join(30)
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["audit", str(plain), "--attr", "group", "--task", "label", *QUICK,
                               "--json", str(tmp_path / "b.json")])
    a = Report.from_json((tmp_path / "a.json").read_text()).table
    b = Report.from_json((tmp_path / "b.json").read_text()).table
    pd.testing.assert_frame_equal(a[["metric", "value"]], b[["metric", "value"]])


def test_device_input_is_refused_without_reading(runner, tmp_path):
    zero = tmp_path / "zero"  # a private twin of /dev/zero (1, 5): reading it never ends
    _mknod(zero, 1, 5)
    start = time.monotonic()
    res = runner.invoke(main, ["audit", str(zero), *QUICK])
    assert res.exit_code == 2 and "character device" in res.output
    assert time.monotonic() - start < 30


def test_pipe_input_named_parquet_is_refused(runner, tmp_path):
    fifo = tmp_path / "data.parquet"
    os.mkfifo(fifo)
    res = runner.invoke(main, ["audit", str(fifo), *QUICK])
    assert res.exit_code == 2 and "is a pipe" in res.output


def test_non_utf8_file_names(tmp_path):
    df = _frame()
    data = os.path.join(os.fsencode(tmp_path), b"d\xfe.csv")
    with open(data, "wb") as fh:
        fh.write(df.to_csv(index=False).encode())
    out = os.path.join(os.fsencode(tmp_path), b"r\xff.json")
    proc = subprocess.run([sys.executable, "-m", "biasamp", "audit", data, "--attr", "group", "--task", "label",
                           *QUICK, "--json", out, "--markdown", out + b".md"], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rep = Report.from_json(Path(os.fsdecode(out)).read_bytes())  # valid UTF-8 JSON
    assert "d\\udcfe.csv" in rep.source or "d\udcfe.csv" in rep.source
    assert os.path.exists(out + b".md")


# --------------------------------------------------------------------------- #
# 12. resources and numbers
# --------------------------------------------------------------------------- #
def test_exact_test_cost_is_bounded_for_huge_weighted_tables():
    from biasamp._engine.pvalues import independence_test

    n1, a, n2, k = 3266, 298, 1_000_000_001_733, 962  # one row of weight 1e12 in an audit
    table = np.array([[n1 - a, a], [n2 - (k - a), k - a]], dtype=float)
    start = time.monotonic()
    res = independence_test(table)
    assert time.monotonic() - start < 5
    assert res.method == "g-test" and 0 <= res.p_value <= 1
    small = independence_test(np.array([[3, 1], [1, 3]]))  # small tables stay exact
    assert small.method == "fisher-exact" and small.p_value == pytest.approx(0.4857, abs=1e-4)


@pytest.mark.parametrize("weight", [1e308, 1e18])
def test_overflowing_weights_are_refused(weight):
    y = np.array([0, 1, 1, 0, 1, 0, 1, 1])
    g = np.array(["a", "a", "b", "b", "a", "b", "a", "b"])
    with pytest.raises(ValueError, match="sample_weight sums to .*2\\*\\*53"):
        fairness_metrics(y, y, sensitive_features=g, sample_weight=np.full(8, weight), min_group_size=0)
    # the same data with ordinary weights is fine, and scaling leaves rates unchanged
    a = fairness_metrics(y, y[::-1], sensitive_features=g, sample_weight=np.full(8, 1e12), min_group_size=0)
    b = fairness_metrics(y, y[::-1], sensitive_features=g, min_group_size=0)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_parquet_memory_estimate_sees_through_tiny_encodings(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from biasamp.report._stream import ParquetDataset

    n = 200_000
    pq.write_table(pa.table({"a": np.zeros(n, dtype=np.int64), "s": pa.array(["x" * 1000] * n)}),
                   tmp_path / "bomb.parquet")
    assert os.path.getsize(tmp_path / "bomb.parquet") < 200_000  # a small file ...
    assert ParquetDataset.open(tmp_path / "bomb.parquet").nbytes >= n * (8 + 1000)  # ... of > 200 MB decoded


def test_too_many_task_columns_is_an_early_refusal(runner, tmp_path):
    cols = {f"task_{i}": np.zeros(3, dtype=int) for i in range(10_001)}
    cols.update({f"task_{i}_pred": np.zeros(3, dtype=int) for i in range(10_001)})
    df = pd.DataFrame({"attr": ["a", "b", "a"], **cols})
    path = _write_csv(tmp_path / "wide.csv", df)
    start = time.monotonic()
    res = runner.invoke(main, ["audit", str(path), *QUICK])
    assert res.exit_code == 2 and "10,001 task columns" in res.output
    assert time.monotonic() - start < 60


def test_combinations_all_guard_fires_before_allocation():
    import tracemalloc

    from biasamp.multiattribute._metrics import _join_level

    level = np.arange(20_000)[:, None]  # 20k frequent attributes: 2e8 candidate pairs
    tracemalloc.start()
    with pytest.raises(ValueError, match="more than 1,000 candidate combinations of size 2"):
        _join_level(level, limit=1000, what="more than {} candidate combinations of size 2")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2**20
    assert _join_level(np.arange(4)[:, None], limit=6).tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]


def test_api_n_boot_is_bounded():
    from biasamp import bias_amp_directional
    from biasamp.stats import MAX_N_BOOT, bootstrap

    a = np.array([0, 1, 0, 1, 1, 0])
    t = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]])
    with pytest.raises(ValueError, match="n_boot must be at most"):
        bootstrap(bias_amp_directional, a, t, task_pred=t, n_boot=MAX_N_BOOT + 1)
    with pytest.raises(ValueError, match="n_boot must be at most"):
        audit(a, t, task_pred=t, n_boot=10**9, progress=False)


def test_crafted_csv_header_is_sniffed_in_bounded_time(tmp_path):
    from biasamp.cli._data import _sniff_csv

    path = tmp_path / "crafted.csv"
    path.write_text(',"' * 32_000 + "\n1,2\n")  # csv.Sniffer alone: over a minute
    start = time.monotonic()
    assert _sniff_csv(path)["sep"] == ","
    assert time.monotonic() - start < 5
    wide = tmp_path / "wide.csv"  # a genuinely wide ;-separated header goes past the sniffer
    wide.write_text(";".join(f"column_{i}" for i in range(500)) + "\n" + ";".join("1" * 500) + "\n")
    assert _sniff_csv(wide)["sep"] == ";"


def test_from_json_refuses_what_its_renderers_cannot_render():
    rep = _report(["a", "b"])
    good = rep.to_dict()

    def mutated(fn):
        d = json.loads(json.dumps(good))
        fn(d)
        return json.dumps(d)

    deep: list = []
    node = deep
    for _ in range(200):
        node.append([])
        node = node[0]
    cases = {
        "nested": lambda d: d["inputs"].__setitem__("x", deep),
        "digits": lambda d: d["sections"][0]["summary"]["rows"][0].__setitem__(2, 10**400),
        "cell": lambda d: d["sections"][0]["summary"]["rows"][0].__setitem__(2, [[1]]),
        "type": lambda d: d["sections"][0]["summary"]["rows"][0].__setitem__(2, "abc"),
    }
    for fn in cases.values():
        with pytest.raises(ValueError, match="not a biasamp report"):
            Report.from_json(mutated(fn))
    back = Report.from_json(json.dumps(good))  # the real report still loads and renders
    back.to_markdown(), back.to_latex(), back.to_model_card(), back.to_html(plots=False), back.summary()


# --------------------------------------------------------------------------- #
# 13. dependency floors
# --------------------------------------------------------------------------- #
def test_pyarrow_floors_exclude_the_vulnerable_versions():
    from packaging.requirements import Requirement
    from packaging.version import Version

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lists = [*meta["project"]["optional-dependencies"].values(), *meta.get("dependency-groups", {}).values()]
    specs = [s for reqs in lists for s in reqs if isinstance(s, str) and re.match(r"pyarrow\b", s)]
    assert specs
    for spec in specs:
        req = Requirement(spec)
        assert not req.specifier.contains(Version("14.0.0")), spec  # CVE-2023-47248, fixed in 14.0.1
        assert req.specifier.contains(Version("14.0.1")), spec


# --------------------------------------------------------------------------- #
# 14. captions
# --------------------------------------------------------------------------- #
def _peak_bytes(func):
    import tracemalloc

    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _caption_data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    attr = np.where(rng.random(n) < 0.5, "male", "female")
    task = np.where(rng.random(n) < 0.5, "dog", "cat")
    caps = np.array([f"a {'man' if a == 'male' else 'woman'} with a {t}" for a, t in zip(attr, task)], dtype=object)
    return attr, task, caps


def test_one_long_caption_does_not_widen_every_caption():
    from biasamp.captioning import caption_labels

    caps = ["a man with a dog"] * 2_000
    caps[0] = "x" * 20_000  # a fixed-width string array: 2,000 x 20,000 x 4 bytes = 160 MB
    out = caption_labels(caps)
    assert out["dog"].sum() == 1_999
    assert _peak_bytes(lambda: caption_labels(caps)) < 30 * 2**20


def test_contextual_substitution_is_linear_in_a_captions_words():
    from biasamp.captioning import _text

    long = [f"w{i}" for i in range(2_000)]  # one caption of 2,000 distinct words
    corpus = [long, ["a", "w1", "dog"], ["a", "cat"]]
    peak = _peak_bytes(lambda: _text.corpus_vectors([corpus]))
    assert peak < 60 * 2**20  # the caption's 4e6 pairs had made ~600 MB
    # the definition: a long caption counts as its consecutive passages of PASSAGE tokens
    p = _text.PASSAGE
    cut = [long[i:i + p] for i in range(0, len(long), p)]
    words_a, vec_a = _text.corpus_vectors([[["x", "y"], ["a", "b", "c"] * 30]])  # short: one passage
    words_b, vec_b = _text.corpus_vectors([[["x", "y"], ["a", "b", "c"] * 30]])
    assert words_a == words_b and np.array_equal(vec_a, vec_b)
    w1, v1 = _text.corpus_vectors([[long, ["a", "w1"]]])
    w2, v2 = _text.corpus_vectors([[*cut, ["a", "w1"]]])
    assert w1 == w2 and np.allclose(np.abs(v1), np.abs(v2))


def test_captions_without_a_word_are_a_named_error():
    from biasamp.captioning import dbac, lic

    attr, task, caps = _caption_data()
    empty = np.array(["...", "", " ?! "] * (len(caps) // 3) + ["."] * (len(caps) % 3), dtype=object)
    with pytest.raises(ValueError, match=r"captions_pred: no caption holds a word .* \(rows 0, 1, 2, 3, 4, \.\.\.\)"):
        lic(attr, captions_pred=empty, captions=caps, n_iter=2, progress=False)
    with pytest.raises(ValueError, match="captions: no caption holds a word"):
        lic(attr, captions_pred=caps, captions=empty, n_iter=2, progress=False)
    with pytest.raises(ValueError, match="captions: no caption holds a word"):
        dbac(attr, task, captions=empty, captions_pred=caps, n_iter=2, progress=False)


def test_attacker_on_training_captions_without_words_predicts_the_prior():
    from biasamp.captioning._attackers import fit_proba

    x = ["", "", "", "", "a man", "a woman"]  # masked texts: an empty caption is ""
    y = np.array([0, 1, 1, 1, 0, 1])
    p = fit_proba("tfidf", x, y, np.arange(4), np.arange(4, 6), 2, 0)  # sklearn: "empty vocabulary"
    assert p.tolist() == [[0.25, 0.75], [0.25, 0.75]]
    m = fit_proba("bow", x, np.array([[1, 0], [0, 1], [0, 1], [1, 1], [0, 0], [1, 1]]), np.arange(4),
                  np.arange(4, 6), 2, 0)
    assert m.tolist() == [[0.5, 0.75], [0.5, 0.75]]


def test_capitalised_gender_classes_keep_the_captioning_section():
    from biasamp.captioning import caption_gender_stats

    attr, task, caps = _caption_data()
    lower = caption_gender_stats(attr, captions_pred=caps, level=None)
    upper = caption_gender_stats(np.char.capitalize(attr.astype(str)), captions_pred=caps, level=None)
    assert (upper.error, upper.neutral_rate, upper.ratio) == (lower.error, lower.neutral_rate, lower.ratio)
    assert list(upper.by_class.index) == ["Male", "Female"]
    with pytest.raises(ValueError, match="'Male' and 'male' both read the word list of 'male'"):
        caption_gender_stats(np.r_[attr, ["Male"]], captions_pred=np.r_[caps, ["a man"]], level=None)
    rep = audit(np.char.capitalize(attr.astype(str)), (task == "dog").astype(int), captions=pd.DataFrame(
        {"caption_pred": caps, "caption": caps}), n_boot=20, n_iter=2, progress=False, sections=["captioning"])
    section = next(s for s in rep.sections if s.key == "captioning")
    assert section.status == "ok" and "gender error" in set(section.summary["metric"])


def test_streamed_audit_says_why_the_captions_are_absent(tmp_path):
    pytest.importorskip("pyarrow")
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    attr, task, caps = _caption_data()
    y = (task == "dog").astype(int)
    pd.DataFrame({"attr": attr, "task": y, "task_pred": y[::-1], "caption_pred": caps}).to_parquet(
        tmp_path / "d.parquet")
    rep = stream_audit(ParquetDataset.open(tmp_path / "d.parquet"), StreamColumns("attr", ("task",), ("task",),
                       task_pred=("task_pred",)), n_boot=0, dpa_rows=0, sections=["fairness", "captioning"],
                       progress=False)
    section = next(s for s in rep.sections if s.key == "captioning")
    assert section.status == "skipped" and "holds no sample of test rows" in section.message


def test_iterations_and_replicates_have_one_cap_everywhere():
    from biasamp import dpa, leakage_amplification
    from biasamp._engine.runs import MAX_N_BOOT, MAX_N_ITER
    from biasamp.captioning import caption_gender_stats, dbac, lic
    from biasamp.report import AuditConfig

    attr, task, caps = _caption_data()
    y = (task == "dog").astype(int)
    too_many = MAX_N_ITER + 1
    calls = {
        "lic": lambda: lic(attr, captions_pred=caps, n_iter=too_many, progress=False),
        "dbac": lambda: dbac(attr, task, captions=caps, captions_pred=caps, n_iter=too_many, progress=False),
        "dpa": lambda: dpa(attr, y, task_pred=y, n_iter=too_many, progress=False),
        "leakage": lambda: leakage_amplification(attr, y, task_pred=y, n_iter=too_many, progress=False),
        "config": lambda: AuditConfig(n_iter=too_many),
    }
    for name, call in calls.items():
        start = time.monotonic()
        with pytest.raises(ValueError, match=f"n_iter must be .*{MAX_N_ITER:,}|n_iter must be an integer in"):
            call()
        assert time.monotonic() - start < 5, name
    boots = {
        "lic": lambda: lic(attr, captions_pred=caps, n_iter=2, n_boot=10**8, progress=False),
        "dbac": lambda: dbac(attr, task, captions=caps, captions_pred=caps, n_iter=2, n_boot=10**8, progress=False),
        "stats": lambda: caption_gender_stats(attr, captions_pred=caps, n_boot=10**8),  # had allocated 4.5 GB
    }
    for call in boots.values():
        with pytest.raises(ValueError, match=f"n_boot must be at most {MAX_N_BOOT:,}"):
            call()


# --------------------------------------------------------------------------- #
# 15. differential fairness
# --------------------------------------------------------------------------- #
def test_subnormal_concentration_is_refused():
    import warnings

    from biasamp import df_bias_amplification
    from biasamp.differential._metrics import MIN_CONCENTRATION

    s = np.array(["a"] * 10 + ["b"] * 10)
    y = np.r_[np.zeros(10), np.ones(10)].astype(int)  # group a never positive: ε rests on the smoothing
    for c in (5e-324, 1e-310, MIN_CONCENTRATION / 2):
        with pytest.raises(ValueError, match="concentration must be at least 1e-100"):
            df_bias_amplification(y, y, sensitive_features=s, concentration=c, min_group_size=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no log(0)
        res = df_bias_amplification(y, y, sensitive_features=s, concentration=MIN_CONCENTRATION, min_group_size=0)
    # log((10 + c/2) / (10 + c)) - log((c/2) / (10 + c)) = log(20 / c) in float64
    assert res.epsilon_true == pytest.approx(np.log(20 / MIN_CONCENTRATION)) and res.value == 0.0


def test_weights_far_from_one_per_row_warn_that_smoothing_depends_on_their_scale():
    import warnings

    from biasamp import BiasampWarning, bootstrap, df_bias_amplification

    rng = np.random.default_rng(0)
    n = 200
    s = rng.choice(["a", "b", "c"], n)
    y = (rng.random(n) < 0.3 + 0.2 * (s == "b")).astype(int)
    p = (rng.random(n) < 0.2 + 0.4 * (s == "b")).astype(int)
    w = rng.random(n) + 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", BiasampWarning)
        base = df_bias_amplification(y, p, sensitive_features=s, sample_weight=w, min_group_size=0)
    with pytest.warns(BiasampWarning, match=r"sample_weight averages 0\.005 per row.*weighs as 200 rows"):
        scaled = df_bias_amplification(y, p, sensitive_features=s, sample_weight=w / w.sum(), min_group_size=0)
    assert scaled.value != pytest.approx(base.value)  # the documented dependence, now said
    with pytest.warns(BiasampWarning, match="sample_weight averages"):
        bootstrap(df_bias_amplification, y, p, sensitive_features=s, sample_weight=w * 1000, n_boot=20,
                  min_group_size=0, random_state=0)
    # frequency weights: a row of weight 2 is two rows (the smoothing is on counts)
    twice = df_bias_amplification(np.r_[y, y], np.r_[p, p], sensitive_features=np.r_[s, s], min_group_size=0)
    assert df_bias_amplification(y, p, sensitive_features=s, sample_weight=np.full(n, 2.0),
                                 min_group_size=0).value == pytest.approx(twice.value, abs=1e-12)


def test_sensitive_features_without_a_column_is_a_named_error():
    from biasamp import df_bias_amplification, fairness_metrics

    y = np.array([0, 1, 1, 0])
    for f in (lambda g: df_bias_amplification(y, y, sensitive_features=g),
              lambda g: fairness_metrics(y, y, sensitive_features=g)):
        with pytest.raises(ValueError, match=r"sensitive_features has no column \(shape \(4, 0\)\)"):
            f(np.empty((4, 0)))


def test_bootstrap_replicates_are_bounded_before_they_are_drawn():
    from biasamp import bootstrap, df_bias_amplification
    from biasamp._engine.bootstrap import MAX_REPLICATE_CELLS

    rng = np.random.default_rng(0)
    n = 20_000
    s, y, p = rng.integers(0, 2_500, n), rng.integers(0, 2, n), rng.integers(0, 2, n)  # 2,500 groups occur
    start = time.monotonic()
    # 8 parts per group (log rates of 2 outcomes, labels and predictions, twice): 100,000 x 20,003 values
    with pytest.raises(ValueError, match=r"n_boot=100,000: .* n_boot x 20,003 values .* = 2,000,300,000 float64"):
        bootstrap(df_bias_amplification, y, p, sensitive_features=s, n_boot=100_000, min_group_size=0)
    assert time.monotonic() - start < 10
    assert 100_000 * 20_003 > MAX_REPLICATE_CELLS > 1_000 * 20_003


def test_accumulator_class_counts_and_tables_are_bounded():
    from biasamp.accumulators import MAX_CLASSES, DifferentialAccumulator, FairnessAccumulator

    with pytest.raises(ValueError, match="groups must be at most 1,000,000 classes"):
        DifferentialAccumulator(2, groups=10**9)  # had been an empty MemoryError
    with pytest.raises(ValueError, match=r"1,000,000 x 7 cells, with the bootstrap's 256 group tables"):
        FairnessAccumulator(2, groups=MAX_CLASSES, n_boot=100)
    acc = DifferentialAccumulator(2, groups=MAX_CLASSES)  # 7e6 cells without a bootstrap: fine
    assert acc.state.n.shape == (MAX_CLASSES,)


# --------------------------------------------------------------------------- #
# 16. the total weight over batches, partitions and files; Dask's rows
# --------------------------------------------------------------------------- #
def test_total_weight_bound_holds_over_batches_and_merges():
    from biasamp.accumulators import CooccurrenceAccumulator, FairnessAccumulator

    y = np.array([0, 1, 1, 0])
    g = np.array(["a", "a", "b", "b"])
    half = np.full(4, 2e15)  # 8e15 a batch, under 2**53 (9.0e15); two batches 1.6e16
    acc = FairnessAccumulator([0, 1], ["a", "b"]).update(y, y, sensitive_features=g, sample_weight=half)
    with pytest.raises(ValueError, match=r"sample_weight sums to 1.6e\+16 over the batches counted, more than 2\*\*53"):
        acc.update(y, y, sensitive_features=g, sample_weight=half)
    assert acc.weight_total == {"sample_weight": 8e15}  # the refused batch left it as it was
    other = FairnessAccumulator([0, 1], ["a", "b"]).update(y, y, sensitive_features=g, sample_weight=half)
    with pytest.raises(ValueError, match="over the accumulators merged"):
        acc.merge(other)
    with pytest.raises(ValueError, match="over the accumulators merged"):
        acc + other
    # training weights have their own total
    co = CooccurrenceAccumulator(2, 2, metric="directional", binary_task="both")  # an indicator of both classes
    co.update(g == "a", np.eye(2)[y], task_pred=np.eye(2)[y], sample_weight=half)
    co.update_train(g == "a", np.eye(2)[y], sample_weight=half)
    with pytest.raises(ValueError, match="train_sample_weight sums to 1.6e"):
        co.update_train(g == "a", np.eye(2)[y], sample_weight=half)
    small = FairnessAccumulator([0, 1], ["a", "b"]).update(y, y, sensitive_features=g, sample_weight=np.ones(4))
    assert small.weight_total == {"sample_weight": 4.0}
    assert small.reset().weight_total == {}


def test_dask_total_weight_and_errors_name_the_global_row():
    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    import biasamp.dask as bd

    y = np.array([0, 1] * 20)
    g = np.array(["a", "b", "c", "d"] * 10, dtype=object)
    w = np.full(40, 3e14)  # 3e15 a partition of 10 rows, 1.2e16 in all
    arr = lambda x: da.from_array(x, chunks=10)
    with pytest.raises(ValueError, match="sample_weight sums to 1.2e\\+16 over the accumulators merged"):
        bd.fairness_metrics(arr(y), arr(y), sensitive_features=arr(g), sample_weight=arr(w), min_group_size=0)
    g_missing = g.copy()
    g_missing[27] = None  # partition 2, its row 7
    frame = dd.from_pandas(pd.DataFrame({"y": y, "p": y[::-1], "g": g_missing}), npartitions=4)
    with pytest.raises(ValueError, match=r"column 'g' contains NaN/inf/missing values \(rows 27\)"):
        bd.fairness_metrics(frame.y, frame.p, sensitive_features=frame.g, min_group_size=0)
    bad = np.ones(40)
    bad[[33, 35]] = np.nan  # partition 3, its rows 3 and 5
    with pytest.raises(ValueError, match=r"sample_weight contains NaN or inf weights \(rows 33, 35\)"):
        bd.fairness_metrics(arr(y), arr(y), sensitive_features=arr(g), sample_weight=arr(bad), min_group_size=0)


# --------------------------------------------------------------------------- #
# 17. the streamed and parallel audit
# --------------------------------------------------------------------------- #
def _stream_frame(n=800, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y"], n)
    t = (rng.random(n) < np.where(a == "x", 0.3, 0.6)).astype(int)
    p = np.where(rng.random(n) < 0.2, 1 - t, t)
    return pd.DataFrame({"attr": a, "task": t, "task_pred": p})


def test_small_files_are_read_in_full_batches(tmp_path):
    pytest.importorskip("pyarrow")
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    frame = _stream_frame()
    (tmp_path / "many").mkdir()
    for i in range(200):  # 200 files of 4 rows
        frame.iloc[4 * i: 4 * i + 4].to_parquet(tmp_path / "many" / f"part-{i:03d}.parquet")
    frame.to_parquet(tmp_path / "one.parquet")
    many = ParquetDataset.open(tmp_path / "many")
    sizes = [b.num_rows for b, _ in many.batches(["attr"], 64)]
    assert sizes == [64] * 12 + [32]  # had been 200 batches of 4 rows
    (_, where), *_ = many.batches(["attr"], 64)
    assert where == "16 files from part-000.parquet, row 0 to part-015.parquet, row 3"
    cols = StreamColumns("attr", ("task",), ("task",), task_pred=("task_pred",))
    kw = dict(n_boot=50, random_state=0, sections=["fairness", "directional"], progress=False, batch_size=64,
              cross_fit=False)
    a = stream_audit(many, cols, **kw).table
    b = stream_audit(ParquetDataset.open(tmp_path / "one.parquet"), cols, **kw).table
    pd.testing.assert_frame_equal(a, b)
    assert [r.num_rows for r in many.ranges(10**9, 64)] == sizes  # never more parts than batches, no loop over n


def test_a_file_that_changes_between_passes_is_an_error(tmp_path):
    pytest.importorskip("pyarrow")
    from biasamp.report._stream import ParquetDataset, StreamReadError

    frame = _stream_frame(40)
    frame.to_parquet(tmp_path / "a.parquet")
    ds = ParquetDataset.open(tmp_path / "a.parquet")
    assert sum(b.num_rows for b, _ in ds.batches(["attr"], 16)) == 40
    pd.concat([frame, frame]).to_parquet(tmp_path / "a.parquet")  # it grew after the first pass
    with pytest.raises(StreamReadError, match=r"a.parquet changed while it was read \(rows 40 -> 80"):
        list(ds.batches(["attr"], 16))


def test_stream_options_are_checked_where_they_enter(runner, tmp_path):
    pytest.importorskip("pyarrow")
    from biasamp.report import AuditConfig

    path = tmp_path / "d.parquet"
    _stream_frame(40).to_parquet(path)
    start = time.monotonic()
    res = runner.invoke(main, ["audit", str(path), "--stream", "--jobs", "1000000000", *QUICK])
    assert res.exit_code == 2 and "at most 1,024" in res.output
    res = runner.invoke(main, ["audit", str(path), "--max-memory", "9" * 400, *QUICK])
    assert res.exit_code == 2 and "more than any memory" in res.output and "Traceback" not in res.output
    assert time.monotonic() - start < 30
    with pytest.raises(TypeError, match=r"names\['attr'\] must be a string"):
        AuditConfig(names={"attr": 1})
    with pytest.raises(ValueError, match="names has the key"):
        AuditConfig(names={"atr": "gender"})
    with pytest.raises(ValueError, match="n_jobs must be"):
        AuditConfig(n_jobs=10**9)


def test_audit_api_has_the_task_column_guard():
    start = time.monotonic()
    with pytest.raises(ValueError, match="100,000 task columns in task: an audit takes at most 10,000"):
        audit(np.array(["a", "b"] * 30), np.zeros((60, 100_000), dtype=np.int8), progress=False)
    assert time.monotonic() - start < 2
