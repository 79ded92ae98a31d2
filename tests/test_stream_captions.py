"""The captioning section (LIC, DBAC, caption gender statistics) of the streamed audit.

The stream holds a uniform random sample of at most ``dpa_rows`` test rows
(the rows DPA and LA run on) with their caption columns, and runs the
captioning section on it as the in-memory audit runs it on every row: with
at most ``dpa_rows`` rows the sample is every row and the section equals
the in-memory one (values, n, intervals); with more rows it is the in-memory
section of the sampled rows, and says it is a sample.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from biasamp.cli import main
from biasamp.report import audit
from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

FAST = {"n_boot": 40, "n_boot_multi": 5, "n_iter": 2, "progress": False}
CLI_FAST = ["--n-boot", "40", "--n-iter", "2", "--no-progress", "-q"]
PLACES = np.array(["kitchen", "street", "beach", "office"])
OBJECTS = np.array(["cup", "knife"])


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """Test rows with captions: gender, an object (task) the model's caption names, the captions, the split.

    The model's captions tie the place and the object more to the gender than the human ones (and name the
    gender, right or wrong), so LIC, DBAC and the gender statistics are all defined and not 0.
    """
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    gender = np.where(g == 0, "female", "male")

    def captions(strength: float, wrong: float) -> np.ndarray:
        place = np.where(rng.random(n) < 0.5 + strength * (g - 0.5), rng.integers(0, 2, n), rng.integers(2, 4, n))
        obj = np.where(rng.random(n) < 0.5 + strength * (g - 0.5), 0, 1)
        said = np.where(rng.random(n) < wrong, 1 - g, g)
        who = np.where(said == 0, "a woman", "a man")
        return np.char.add(np.char.add(np.char.add(who, " with a "), OBJECTS[obj]),
                           np.char.add(" in a ", PLACES[place])).astype(object), OBJECTS[obj]

    human, task = captions(0.3, 0.05)
    model, task_pred = captions(0.8, 0.15)
    return pd.DataFrame({"attr": gender, "task": task, "task_pred": task_pred, "caption_pred": model,
                         "caption": human, "split": np.where(np.arange(n) % 4 == 0, "val", "train")})


def _write(frame: pd.DataFrame, path, n_files: int = 2) -> ParquetDataset:
    """``frame`` as ``n_files`` Parquet files (small row groups: many batches) in folder ``path``."""
    path.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), n_files)):
        pq.write_table(pa.Table.from_pandas(frame.iloc[rows], preserve_index=False), path / f"part-{i}.parquet",
                       row_group_size=37)
    return ParquetDataset.open(path)


COLUMNS = StreamColumns("attr", ("task",), ("task",), task_pred=("task_pred",))


def _in_memory(frame: pd.DataFrame, **kw):
    """The in-memory audit of ``frame``'s rows, as ``biasamp audit --no-stream`` calls it."""
    frame = frame.reset_index(drop=True)
    caps = frame[[c for c in ("caption_pred", "caption", "split") if c in frame]]
    return audit(frame["attr"], frame["task"], task_pred=frame["task_pred"], captions=caps, **kw)


def _section(rep, key="captioning"):
    return next(s for s in rep.sections if s.key == key)


def test_all_rows_held_equal_the_in_memory_section(tmp_path):
    frame = _table(300)
    data = _write(frame, tmp_path / "d")
    kw = {**FAST, "sections": ["captioning", "dpa"]}
    rep = stream_audit(data, COLUMNS, batch_size=50, **kw)
    ref = _in_memory(frame, **kw)
    sec, want = _section(rep), _section(ref)
    assert sec.status == want.status == "ok", sec.message
    assert {("LIC", "A"), ("LIC_D", "A"), ("DBAC", "A->T"), ("DBAC", "T->A"), ("gender error", "")} <= set(
        zip(sec.summary["metric"], sec.summary["direction"]))
    # the same rows and seeds: values, n and intervals identical, tables and notes too (no sample note)
    pd.testing.assert_frame_equal(sec.summary, want.summary)
    assert sec.notes == want.notes
    assert sorted(sec.tables) == sorted(want.tables)
    for name, table in want.tables.items():
        pd.testing.assert_frame_equal(sec.tables[name], table)
    assert (sec.summary.loc[sec.summary["metric"] == "gender error", "n"] == 300).all()
    assert rep.inputs["streamed"]["rows_sampled"] == 300


def test_more_rows_than_dpa_rows_is_the_section_of_the_sample(tmp_path):
    frame = _table(400, seed=1)
    data = _write(frame, tmp_path / "d", n_files=3)
    kw = {**FAST, "sections": ["captioning"]}
    rep = stream_audit(data, COLUMNS, batch_size=64, dpa_rows=250, **kw)
    sec = _section(rep)
    assert sec.status == "ok", sec.message
    assert ("computed on a uniform random sample of 250 of the 400 test rows (a streamed audit holds only this "
            "sample in memory)") in sec.notes
    assert (sec.summary.loc[sec.summary["metric"] == "gender error", "n"] == 250).all()
    # the sample is DPA's (the same seed, whatever the batch size and workers): the in-memory section of its rows
    for again in (stream_audit(data, COLUMNS, batch_size=29, dpa_rows=250, **kw),
                  stream_audit(data, COLUMNS, batch_size=64, dpa_rows=250, n_jobs=2, **kw)):
        pd.testing.assert_frame_equal(_section(again).summary, sec.summary)
    rows = _sampled_rows(data, 250, rep.options["random_state"])
    want = _section(_in_memory(frame.iloc[rows], **kw))
    pd.testing.assert_frame_equal(sec.summary, want.summary)


def _sampled_rows(data: ParquetDataset, size: int, seed) -> np.ndarray:
    """The rows of the stream's sample: bottom-``size`` of one uniform key per row (``AuditConfig.seed``)."""
    from biasamp.report import AuditConfig

    keys = np.random.default_rng(AuditConfig(random_state=seed).seed("stream sample")).random(data.num_rows)
    return np.sort(np.argsort(keys, kind="stable")[:size])


def test_no_sample_skips_the_section_with_the_reason(tmp_path):
    data = _write(_table(120, seed=2), tmp_path / "d")
    rep = stream_audit(data, COLUMNS, dpa_rows=0, sections=["captioning", "fairness"], **FAST)
    sec = _section(rep)
    assert sec.status == "skipped" and "dpa_rows=0" in sec.message and "holds no sample" in sec.message
    # data without captions: no captioning section at all, as in memory
    bare = _write(_table(120, seed=2).drop(columns=["caption_pred", "caption"]), tmp_path / "e")
    rep = stream_audit(bare, COLUMNS, sections=["captioning", "fairness"], **FAST)
    assert [s.key for s in rep.sections] == ["fairness"]


def test_rows_left_out_are_refused_as_in_memory(tmp_path):
    frame = _table(120, seed=3)
    frame.loc[[3, 50], "task"] = None
    data = _write(frame, tmp_path / "d")
    with pytest.raises(ValueError, match="captions: .*needs every test row"):
        _in_memory(frame, missing="drop", **FAST)
    rep = stream_audit(data, COLUMNS, missing="drop", sections=["captioning", "fairness"], **FAST)
    sec = _section(rep)
    assert sec.status == "skipped" and "needs every test row" in sec.message
    assert _section(rep, "fairness").status == "ok"


def test_named_caption_columns(tmp_path):
    frame = _table(200, seed=4)
    renamed = frame.rename(columns={"caption_pred": "model", "caption": "human"}).drop(columns="split")
    data = _write(renamed, tmp_path / "d")
    columns = StreamColumns("attr", ("task",), ("task",), task_pred=("task_pred",), captions_pred="model",
                            captions=("human",))
    kw = {**FAST, "sections": ["captioning"]}
    sec = _section(stream_audit(data, columns, **kw))
    want = _section(_in_memory(frame.drop(columns="split"), **kw))
    pd.testing.assert_frame_equal(sec.summary, want.summary)
    with pytest.raises(ValueError, match="caption column 'nope' not found"):
        stream_audit(data, StreamColumns("attr", ("task",), ("task",), task_pred=("task_pred",),
                                         captions_pred="nope"), **kw)


def _cli_section(path, *args) -> tuple[int, str, dict | None]:
    out = path.parent / "report.json"
    res = CliRunner().invoke(main, ["audit", str(path), "--json", str(out), *CLI_FAST, *args])
    if res.exit_code not in (0, 1):
        return res.exit_code, res.output, None
    report = json.loads(out.read_text())
    return res.exit_code, res.output, next(s for s in report["sections"] if s["key"] == "captioning")


def test_cli_streamed_captions_equal_no_stream(tmp_path):
    frame = _table(240, seed=5).rename(columns={"caption_pred": "model", "caption": "human"})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    named = ["--captions-pred", "model", "--captions", "human", "--exclude", "differential"]
    code, output, streamed = _cli_section(path, "--stream", "--batch-size", "50", *named)
    assert code == 0, output
    code, output, memory = _cli_section(path, "--no-stream", *named)
    assert code == 0, output
    assert streamed["status"] == "ok" and streamed["summary"] == memory["summary"]
    code, output, _ = _cli_section(path, "--stream", "--captions-pred", "nope")
    assert code == 2 and "caption column 'nope' not found" in output
