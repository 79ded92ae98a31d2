"""The ``biasamp`` command line: ``biasamp audit``, ``biasamp demo``, ``biasamp --version``.

Built on click. Column conventions of ``biasamp audit`` (each overridable by an
option):

* attribute: ``--attr`` (repeatable or comma-separated: several attributes,
  audited one by one into one report; ``--intersect race,sex`` adds their
  intersection), else the first of the columns ``attr``, ``attribute``,
  ``group``, ``protected``;
* task: ``--task`` (repeatable, or comma-separated), else every column named
  ``task_*`` (not ending in ``_pred`` or ``_score``), else a column ``task``,
  ``label`` or ``y``. One task column is a single-label task (class ids or
  names; a 0/1 column is two classes); several are a multi-label 0/1
  indicator matrix (the ``task_`` prefix is dropped from their names);
* predictions: ``--attr-pred`` / ``--task-pred``, else ``<column>_pred`` for
  each attribute/task column; where ``<column>_pred`` is absent,
  ``<column>_score`` (probabilities) is used;
* calibration: with ``--val FILE``, the ``<column>_score`` columns of the
  validation file set per-label thresholds that are applied to the
  ``<column>_score`` columns of the test file;
* training labels: ``--train FILE`` with the same attribute and task columns.

Files are CSV (``.csv``, ``.tsv``, ``.tab``, ``.txt``, ``.dat``, ``.data``,
optionally ``.gz``/``.bz2``/``.zip``/``.xz``; the delimiter ``,`` ``;`` tab
or ``|`` is detected) or Parquet (``.parquet``, ``.pq``, or a directory of
such files; needs pyarrow), read as data only. A True/False column is read as
1/0 where another column of the same label is 0/1. Errors in the data name
the column and the row (1-based, after the header). Reports are written
atomically (temporary file, then rename) and never over an input file. Exit
codes: 0 success; 1 a file could not be read or written, a bad value in the
data, or a metric family failed (the report, still written when at least one
family succeeded, records the error); 2 usage error (including a missing
column, listed with the available ones, and an unsupported file format); 130
interrupted (Ctrl-C).

Streaming (``--stream``; by default when the Parquet input is larger than
``--max-memory``, estimated from the file footers): the Parquet data is read
in record batches, one file at a time, and counted by the streaming
accumulators in bounded memory (:mod:`biasamp._stream`). The report has the
same sections and values, without the bootstrap intervals of the
count-based metrics; DPA and LA run on a uniform random sample of
``--dpa-rows`` test rows.
"""

from __future__ import annotations

import csv
import functools
import math
import os
import re
import shutil
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
from click.core import ParameterSource

from .report import _write_atomic, audit, section_builders

__all__ = ["main"]

ATTR_NAMES = ("attr", "attribute", "group", "protected")
TASK_NAMES = ("task", "label", "y")
TASK_PREFIX = "task_"
PRED_SUFFIX = "_pred"
SCORE_SUFFIX = "_score"

_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".tsv", ".tab", ".txt", ".dat", ".data")
_SNIFF_BYTES = 64 * 1024
_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _version() -> str:
    from . import __version__

    return __version__


# --------------------------------------------------------------------------- #
# reading
# --------------------------------------------------------------------------- #
class _DataError(click.ClickException):
    """A one-line error (no usage text) with exit code 2: an input the command cannot take."""

    exit_code = 2


def _table_kind(path: str | os.PathLike) -> str:
    """``"dir"``, ``"parquet"`` or ``"csv"``; ``_DataError`` (exit 2) for any other extension."""
    path = Path(path)
    if path.is_dir():
        return "dir"
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    kind = suffixes[-1] if suffixes else ""
    if kind in _PARQUET:
        return "parquet"
    if kind in _CSV or not kind:
        return "csv"
    raise _DataError(f"unsupported format: {kind} (biasamp reads CSV or Parquet): {path}")


def _open_text(path: Path) -> Any:
    """``path`` opened as text, decompressed by its extension; None for a format not sniffed (zip, zst)."""
    opener = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}.get(path.suffix.lower())
    if path.suffix.lower() in (".zip", ".zst"):
        return None
    if opener is None:
        return open(path, encoding="utf-8", errors="replace", newline="")
    import importlib

    return importlib.import_module(opener).open(path, "rt", encoding="utf-8", errors="replace", newline="")


def _sniff_csv(path: str | os.PathLike, default: str = ",") -> dict:
    """``read_csv`` options of a text table: ``sep`` (``,``, ``;``, tab or ``|``) and ``decimal``.

    :class:`csv.Sniffer` on the first :data:`_SNIFF_BYTES` characters (whole
    lines); ``default`` when it cannot tell. A ``;``-separated file whose
    numbers are written ``0,5`` gets ``decimal=","``.
    """
    path = Path(path)
    try:
        fh = _open_text(path)
        if fh is None:
            return {"sep": default}
        with fh:
            sample = fh.read(_SNIFF_BYTES)
    except (OSError, EOFError, ValueError):
        return {"sep": default}  # read_csv reports the problem
    if len(sample) == _SNIFF_BYTES and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    try:
        sep = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return {"sep": default}
    out = {"sep": sep}
    if sep == ";" and re.search(r"(^|;)\s*-?\d+,\d+\s*(;|$)", sample, flags=re.MULTILINE):
        out["decimal"] = ","
    return out


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file, or a directory of Parquet files, as data (never pickle, never evaluated).

    A directory is read as the Parquet files it holds, in the order of
    :func:`biasamp._stream.parquet_files`. The delimiter of a CSV file is
    detected (:func:`_sniff_csv`). Raises ``_DataError`` (exit code 2) for an
    unsupported extension and ``click.ClickException`` (exit code 1) with a
    readable message when the data cannot be read.
    """
    path = Path(path)
    kind = _table_kind(path)
    try:
        if kind == "dir":
            from ._stream import parquet_files

            files = parquet_files(path)
            if not files:
                raise click.ClickException(f"cannot read {path}: a directory with no Parquet files (*.parquet, *.pq)")
            frame = _read_parquet(files)
        elif kind == "parquet":
            frame = _read_parquet([path])
        else:
            default = "\t" if any(s.lower() in (".tsv", ".tab") for s in path.suffixes) else ","
            options = _sniff_csv(path, default)
            if options["sep"] != default:
                shown = {"\t": "tab"}.get(options["sep"], repr(options["sep"]))
                click.echo(f"reading {path.name} as {shown}-separated" + (" with decimal commas" if
                           options.get("decimal") == "," else "") + " (detected)", err=True)
            frame = pd.read_csv(path, engine="c", **options)
    except click.ClickException:
        raise
    except pd.errors.EmptyDataError:
        raise click.ClickException(f"cannot read {path}: the file is empty") from None
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"cannot read {path}: not a UTF-8 text table ({exc.reason})") from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise click.ClickException(f"cannot read {path}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - e.g. pyarrow errors on a corrupt Parquet file
        raise click.ClickException(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    if frame.shape[1] == 0 or len(frame) == 0:
        raise click.ClickException(f"cannot read {path}: no data rows")
    return frame


def _read_parquet(files: list) -> pd.DataFrame:
    try:
        frames = [pd.read_parquet(f) for f in files]
    except ImportError as exc:
        raise click.ClickException(
            f"cannot read {files[0]}: reading Parquet needs pyarrow (pip install pyarrow): "
            + str(exc).splitlines()[0]
        ) from None
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _split(values: tuple[str, ...]) -> list[str]:
    out = []
    for v in values:
        out.extend(c.strip() for c in v.split(",") if c.strip())
    return out


def _available(frame: pd.DataFrame) -> str:
    return ", ".join(map(str, frame.columns))


def _require(frame: pd.DataFrame, columns: list[str], file: str, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise click.UsageError(
            f"{what} column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} not found in {file}; "
            f"available columns: {_available(frame)}"
        )


def _resolve_columns(frame: pd.DataFrame, file: str, attr: list[str], task: list[str],
                     attr_pred: list[str], task_pred: list[str], intersect: list[list[str]] | None = None) -> dict:
    """Apply the column conventions; UsageError (exit 2) listing the columns when something is missing.

    ``attrs``: the attribute columns (``--attr``, then the columns of
    ``--intersect`` not already there); ``attr_preds``: attribute column ->
    its prediction column or None; ``attr``/``attr_pred``/``attr_pred_kind``:
    those of the first attribute (one attribute: the report of 0.1).
    """
    attrs = list(dict.fromkeys([*attr, *(c for combo in (intersect or []) for c in combo)]))
    if not attrs:
        found = next((c for c in ATTR_NAMES if c in frame.columns), None)
        if found is None:
            raise click.UsageError(
                f"no attribute column in {file}: pass --attr or name it one of {', '.join(ATTR_NAMES)}; "
                f"available columns: {_available(frame)}")
        attrs = [found]
    _require(frame, attrs, file, "attribute")
    if not task:
        task = [c for c in frame.columns if str(c).startswith(TASK_PREFIX)
                and not str(c).endswith((PRED_SUFFIX, SCORE_SUFFIX))]
        if not task:
            task = [next((c for c in TASK_NAMES if c in frame.columns), None)]
            if task[0] is None:
                raise click.UsageError(
                    f"no task column in {file}: pass --task or name the columns {TASK_PREFIX}* "
                    f"(or one column {', '.join(TASK_NAMES)}); available columns: {_available(frame)}")
    _require(frame, task, file, "task")
    clash = [c for c in task if c in attrs]
    if clash:
        raise click.UsageError(f"column{'s' if len(clash) > 1 else ''} {', '.join(map(repr, clash))} is both an "
                               "attribute and a task column")

    def predictions(given: list[str], truth: list[str], option: str) -> tuple[list[str] | None, str | None]:
        if given:
            if len(given) != len(truth):
                raise click.UsageError(f"{option} names {len(given)} column(s) for {len(truth)} column(s) {truth}")
            _require(frame, given, file, "prediction")
            return given, "pred"
        for suffix, kind in ((PRED_SUFFIX, "pred"), (SCORE_SUFFIX, "score")):
            cols = [f"{c}{suffix}" for c in truth]
            present = [c for c in cols if c in frame.columns]
            if len(present) == len(cols):
                return cols, kind
            if present:
                raise click.UsageError(
                    f"only some prediction columns found in {file}: {present}; missing "
                    f"{[c for c in cols if c not in frame.columns]}; available columns: {_available(frame)}")
        return None, None

    if attr_pred and len(attr_pred) != len(attr):
        raise click.UsageError(f"--attr-pred names {len(attr_pred)} column(s) for {len(attr)} --attr column(s) "
                               f"{list(attr)}: give one prediction column per attribute, in the same order")
    attr_preds, attr_kinds = {}, {}
    for i, a in enumerate(attrs):
        ap, kind = predictions([attr_pred[i]] if attr_pred and i < len(attr_pred) else [], [a], "--attr-pred")
        attr_preds[a], attr_kinds[a] = (ap[0] if ap else None), kind
    tp, tp_kind = predictions(task_pred, task, "--task-pred")
    if all(v is None for v in attr_preds.values()) and tp is None:
        raise click.UsageError(
            f"no prediction column in {file}: pass --attr-pred/--task-pred or name them <column>{PRED_SUFFIX} "
            f"(e.g. {attrs[0]}{PRED_SUFFIX}, {task[0]}{PRED_SUFFIX}); available columns: {_available(frame)}")
    first = attr_preds[attrs[0]]
    return {"attr": attrs[0], "attrs": attrs, "attr_preds": attr_preds, "attr_kinds": attr_kinds,
            "attr_pred": [first] if first else None, "attr_pred_kind": attr_kinds[attrs[0]],
            "task": task, "task_pred": tp, "task_pred_kind": tp_kind}


def _task_frame(frame: pd.DataFrame, cols: list[str], names: list[str]) -> Any:
    if len(cols) == 1:
        return frame[cols[0]].rename(names[0]).reset_index(drop=True)
    out = frame[cols].copy()
    out.columns = names
    return out.reset_index(drop=True)


def _display_names(cols: dict, source: str) -> dict:
    """The report's ``names``: attribute and task columns, and where the data came from."""
    task = ", ".join(cols["task"]) if len(cols["task"]) <= 3 else f"{len(cols['task'])} task columns"
    return {"attr": ", ".join(cols.get("attrs") or [cols["attr"]]), "task": task, "source": source}


def _task_names(cols: list[str]) -> list[str]:
    if len(cols) > 1 and all(c.startswith(TASK_PREFIX) for c in cols):
        stripped = [c[len(TASK_PREFIX):] for c in cols]
        if all(stripped) and len(set(stripped)) == len(stripped):
            return stripped
    return list(cols)


def _check_outputs(outputs: dict, inputs: list[str]) -> None:
    seen = {}
    for option, path in outputs.items():
        if path is None:
            continue
        target = Path(path).resolve()
        for inp in inputs:
            if inp is not None and (target == Path(inp).resolve()
                                    or (Path(path).exists() and os.path.samefile(path, inp))):
                raise click.UsageError(f"{option} {path} is an input file; refusing to overwrite it")
        if target in seen:
            raise click.UsageError(f"{option} and {seen[target]} name the same file {path}")
        if target.is_dir():
            raise click.UsageError(f"{option} {path} is a directory")
        if not target.parent.is_dir():
            raise click.UsageError(f"{option} {path}: the folder {target.parent} does not exist")
        seen[target] = option


def _write_outputs(report, json_path, html_path, plots: bool, protect: list[str], markdown_path=None, latex_path=None,
                   model_card_path=None) -> None:
    for path, render in ((json_path, lambda: report.to_json()), (html_path, lambda: report.to_html(plots=plots)),
                         (markdown_path, lambda: report.to_markdown()), (latex_path, lambda: report.to_latex()),
                         (model_card_path, lambda: report.to_model_card())):
        if path is None:
            continue
        try:
            _write_atomic(path, render(), protect=[p for p in protect if p])
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"cannot write {path}: {exc}") from None
        click.echo(f"wrote {path}", err=True)
        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            ctx.find_root().meta.setdefault("biasamp_written", []).append(path)


# --------------------------------------------------------------------------- #
# streaming
# --------------------------------------------------------------------------- #
def _parse_size(ctx: Any, param: Any, value: Any) -> int | None:
    """A size such as ``500M``, ``2G``, ``1.5GB`` or ``1024`` (bytes); K, M, G, T are powers of 1024."""
    if value is None or isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgtKMGT]?)(?:i?[bB])?\s*", str(value))
    if not m:
        raise click.BadParameter(f"{value!r} is not a size such as 500M, 2G or 1.5GB (K, M, G, T: powers of 1024)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()])


def _fmt_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _is_parquet(path: str | os.PathLike) -> bool:
    path = Path(path)
    return path.is_dir() or path.suffix.lower() in _PARQUET


def _open_dataset(path: str | os.PathLike) -> Any:
    """The footers of a Parquet file or directory; UsageError (exit 2) for a directory without Parquet files."""
    from ._stream import ParquetDataset, StreamReadError

    try:
        return ParquetDataset.open(path)
    except ValueError as exc:
        raise click.UsageError(f"{exc}: DATA and --train are CSV or Parquet files, or directories of Parquet "
                               "files") from None
    except ImportError as exc:
        raise click.ClickException(f"cannot read {path}: {exc}") from None
    except StreamReadError as exc:
        raise click.ClickException(str(exc)) from None


def _decide_streaming(stream: bool | None, data: str, train_path: str | None, val_path: str | None,
                      max_memory: int) -> tuple[bool, dict]:
    """Whether to stream, and the Parquet inputs' footers (path -> ParquetDataset).

    ``--stream`` streams (Parquet inputs only); ``--no-stream`` loads; by
    default the data is streamed when every input is Parquet and their
    uncompressed size (from the footers) exceeds ``--max-memory``.
    """
    inputs = [(p, what) for p, what in ((data, "DATA"), (train_path, "--train")) if p]
    datasets = {p: _open_dataset(p) for p, _ in inputs if _is_parquet(p)}
    if stream is False:
        return False, datasets
    if stream is None:
        size = sum(ds.nbytes for ds in datasets.values())
        if len(datasets) < len(inputs) or size <= max_memory:
            return False, datasets
        what = " and ".join(str(p) for p, _ in inputs)
        if val_path:
            raise click.UsageError(
                f"{what}: about {_fmt_size(size)} uncompressed, more than --max-memory {_fmt_size(max_memory)}, "
                "so it would be streamed, but --val (threshold calibration) is not supported when streaming; "
                "pass --no-stream to load it in memory, or a larger --max-memory")
        click.echo(f"streaming {what}: about {_fmt_size(size)} uncompressed, more than --max-memory "
                   f"{_fmt_size(max_memory)} (--no-stream loads it in memory)", err=True)
        return True, datasets
    for p, what in inputs:
        if p not in datasets:
            raise click.UsageError(f"--stream reads Parquet: {what} {p} is not a Parquet file (.parquet, .pq) "
                                   "or a directory of Parquet files")
    if val_path:
        raise click.UsageError("--val (threshold calibration) is not supported with --stream; "
                               "pass --no-stream to load the data in memory")
    return True, datasets


def _stream_columns(datasets: dict, data: str, train_path: str | None, attr, task, attr_pred,
                    task_pred) -> tuple[dict, dict]:
    """``({attribute: StreamColumns}, columns)``: the conventions applied to the Parquet schemas (no data read).

    UsageError (exit 2) listing the available columns when one is missing,
    from the first file or from any later file of a directory.
    """
    from ._stream import StreamColumns

    test = datasets[data]
    cols = _resolve_columns(pd.DataFrame(columns=list(test.columns)), data, attr, task, attr_pred, task_pred)
    predictions = [*(p for p in cols["attr_preds"].values() if p), *(cols["task_pred"] or [])]
    checks = [(test, data, "test", [*cols["attrs"], *cols["task"], *predictions])]
    if train_path:
        checks.append((datasets[train_path], train_path, "training", [*cols["attrs"], *cols["task"]]))
    for ds, path, what, needed in checks:
        gap = ds.missing(needed)
        if gap is not None:
            f, lacking, available = gap
            raise click.UsageError(
                f"{what} column{'s' if len(lacking) > 1 else ''} {', '.join(map(repr, lacking))} not found in {f}"
                + (f" (of {path})" if str(f) != str(path) else "") + f"; available columns: {', '.join(available)}")
    per_attr = {a: StreamColumns(a, tuple(cols["task"]), tuple(_task_names(cols["task"])), cols["attr_preds"][a],
                                 tuple(cols["task_pred"]) if cols["task_pred"] else None) for a in cols["attrs"]}
    return per_attr, cols


# --------------------------------------------------------------------------- #
# commands
# --------------------------------------------------------------------------- #
_SECTIONS = [b.key for b in section_builders()]
_MAX_N_BOOT = 100_000  # beyond this the intervals do not change, and the replicates take minutes and GBs
_USUAL_N_BOOT = 10_000  # more rarely moves an interval endpoint by more than its Monte Carlo error
_FAIRNESS_OPTIONS = ("average", "pos_label", "threshold", "soft", "min_group_size", "include_small_groups",
                     "reference_group", "tolerance")
"""The options of the group fairness metrics (``fairness=`` of a streamed audit)."""


def _common_options(func):
    opts = [
        click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the report as JSON here."),
        click.option("--html", "html_path", type=click.Path(dir_okay=False),
                     help="Write the report as a self-contained HTML page here."),
        click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False),
                     help="Write the report as Markdown here."),
        click.option("--latex", "latex_path", type=click.Path(dir_okay=False),
                     help="Write the headline numbers as a LaTeX booktabs table here."),
        click.option("--model-card", "model_card_path", type=click.Path(dir_okay=False),
                     help="Write a Hugging Face model card (model-index metadata + Markdown) here."),
        click.option("--no-plots", is_flag=True, help="HTML without plots (tables only)."),
        click.option("--n-boot", type=click.IntRange(2, _MAX_N_BOOT), default=None,
                     help="Bootstrap replicates of the count-based metrics, 2 to 100,000 [default: 1000; 200 with "
                          "--stream, where each replicate costs a weight per row]."),
        click.option("--ci-method", type=click.Choice(["auto", "percentile", "basic", "bca", "band"]),
                     default="auto", show_default=True, expose_value=False, callback=_remember,
                     help="Interval method: auto = BCa for smooth metrics, a simultaneous band (valid at 0) for "
                          "max/min/absolute-value metrics; see docs/inference.md."),
        click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
                     show_default=True, expose_value=False, callback=_remember,
                     help="Confidence level of every interval."),
        click.option("--n-iter", type=click.IntRange(2), default=10, show_default=True,
                     help="Iterations of DPA and leakage amplification."),
        click.option("--attacker", type=click.Choice(["auto", "tabular", "mlp_es", "mlp", "logistic"]),
                     default="auto", show_default=True,
                     help="Attacker of DPA/LA; auto = tabular for discrete inputs with well-filled cells, else mlp_es."),
        # group fairness (audit(average=..., ...)); passed only when given, so the audit's defaults apply
        click.option("--average", type=click.Choice(["auto", "binary", "macro"]), default="auto",
                     show_default=True, expose_value=False, callback=_remember_given,
                     help="Group fairness over classes: binary = the positive class (--pos-label) only, macro = "
                          "the mean over classes (Qian et al.); auto = binary for a two-class task, else macro."),
        click.option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
                     expose_value=False, callback=_remember_given,
                     help="Probabilities given as task predictions (<column>_score) are thresholded here."),
        click.option("--soft", type=click.Choice(["threshold", "expected"]), default="threshold", show_default=True,
                     expose_value=False, callback=_remember_given,
                     help="Probabilities as task predictions: threshold them (--threshold), or use them as "
                          "expected rates."),
        click.option("--min-group-size", type=click.IntRange(0), default=30, show_default=True, expose_value=False,
                     callback=_remember_given,
                     help="Groups with fewer rows are flagged and left out of the headline fairness numbers."),
        click.option("--include-small-groups", is_flag=True, expose_value=False, callback=_remember_given,
                     help="Keep groups below --min-group-size in the headline fairness numbers (still flagged)."),
        click.option("--reference-group", multiple=True, metavar="GROUP", expose_value=False,
                     callback=_remember_given,
                     help="Reference of the disparity ratios: largest, best, a group name, or ATTR=GROUP for one "
                          "attribute (repeatable) [default: largest]."),
        click.option("--tolerance", metavar="LOW,HIGH", default="0.8,1.25", show_default=True, expose_value=False,
                     callback=_tolerance,
                     help="Disparity ratios inside [LOW, HIGH] pass (one number r: [r, 1/r]); 0.8,1.25 is the "
                          "four-fifths rule."),
        # multi-attribute metrics
        click.option("--combinations", type=click.Choice(["observed", "all"]), default="observed",
                     show_default=True, expose_value=False, callback=_remember_given,
                     help="Multi-attribute metrics: the task combinations seen in the data, or all of them."),
        click.option("--max-size", type=click.IntRange(1), default=None, expose_value=False,
                     callback=_remember_given,
                     help="Multi-attribute metrics: largest combination of task labels [default: no limit]."),
        click.option("--min-support", type=click.IntRange(1), default=1, show_default=True, expose_value=False,
                     callback=_remember_given,
                     help="Multi-attribute metrics: leave out combinations seen in fewer test rows."),
        click.option("--exclude", multiple=True, type=click.Choice(_SECTIONS),
                     help="Do not compute this section (repeatable); audit(exclude=...)."),
        click.option("--random-state", type=int, default=0, show_default=True,
                     help="Seed of every random draw; audit(random_state=...)."),
        # the 0.1 spellings, hidden: accepted until 0.3.0 with a warning on stderr
        click.option("--skip", "skip_alias", multiple=True, type=click.Choice(_SECTIONS), hidden=True,
                     callback=_deprecated_alias("--exclude")),
        click.option("--seed", "seed_alias", type=int, default=None, hidden=True,
                     callback=_deprecated_alias("--random-state")),
        click.option("--progress/--no-progress", default=None,
                     help="Progress on stderr [default: a bar on a terminal, else a line every 10 s; off with -q]."),
        click.option("-q", "--quiet", is_flag=True, help="Print neither the summary table nor progress."),
    ]

    @functools.wraps(func)
    def merged(*args: Any, skip_alias: tuple = (), seed_alias: int | None = None, **kwargs: Any) -> Any:
        kwargs["exclude"] = tuple(kwargs.get("exclude", ())) + tuple(skip_alias)
        if seed_alias is not None:
            ctx = click.get_current_context()
            if (ctx.get_parameter_source("random_state") is not ParameterSource.DEFAULT
                    and kwargs["random_state"] != seed_alias):
                raise click.UsageError(f"--seed {seed_alias} (the old name of --random-state) contradicts "
                                       f"--random-state {kwargs['random_state']}; pass --random-state only")
            kwargs["random_state"] = seed_alias
        return func(*args, **kwargs)

    for opt in reversed(opts):
        merged = opt(merged)
    return merged


def _deprecated_alias(new: str):
    """Click callback of a hidden 0.1 option: a warning on stderr naming the new option, the value unchanged."""

    def callback(ctx: Any, param: Any, value: Any) -> Any:
        if value not in (None, ()):
            click.echo(f"warning: {param.opts[0]} is deprecated and will be removed in 0.3.0; use {new}", err=True)
        return value

    return callback


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep an option that every command passes to the audit unchanged (not a command argument)."""
    ctx.meta.setdefault("biasamp_audit_options", {})[param.name] = value
    return value


def _remember_given(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Like :func:`_remember`, for an option given on the command line only (else the audit's default applies)."""
    if ctx.get_parameter_source(param.name) not in (None, ParameterSource.DEFAULT):
        ctx.meta.setdefault("biasamp_audit_options", {})[param.name] = value
    return value


def _tolerance(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``LOW,HIGH`` (or one ratio r: ``[r, 1/r]``) with 0 < LOW <= 1 <= HIGH."""
    try:
        parts = [float(v) for v in str(value).split(",")]
    except ValueError:
        parts = []
    if len(parts) == 1 and 0 < parts[0] <= 1:
        parts = [parts[0], 1 / parts[0]]
    elif len(parts) == 1 and parts[0] > 1:
        parts = [1 / parts[0], parts[0]]
    if len(parts) != 2 or not (0 < parts[0] <= 1 <= parts[1] < math.inf):
        raise click.BadParameter(f"{value!r} is not LOW,HIGH with 0 < LOW <= 1 <= HIGH (e.g. 0.8,1.25), nor one "
                                 "ratio such as 0.8")
    return _remember_given(ctx, param, (parts[0], parts[1]))


def _match(value: str, labels: Any) -> Any:
    """The label among ``labels`` written ``value`` (``1`` for "1" in a numeric column), else None."""
    from ._audit_attributes import _fmt_label

    for u in pd.unique(pd.Series(labels).dropna()):
        if _fmt_label(u) == value or str(u) == value:
            return u.item() if isinstance(u, np.generic) else u
    if value.lower() in ("true", "false"):  # a boolean column read as 0/1
        return _match(str(int(value.lower() == "true")), labels)
    return None


def _reference_groups(values: tuple, attrs: dict) -> Any:
    """The audit's ``reference_group``: one value (one attribute), else a dict attribute -> value.

    Each value is ``largest``, ``best``, a group of one of the attributes, or
    ``ATTR=GROUP``. ``attrs``: attribute name -> its test labels (None when
    not held, as when streaming: the names are passed as written).
    """
    common, per = None, {}
    for v in values:
        if v in ("largest", "best"):
            owners = []
        else:
            owners = [a for a, labels in attrs.items() if labels is not None and _match(v, labels) is not None]
        prefix = next((a for a in sorted(attrs, key=len, reverse=True) if v.startswith(f"{a}=")), None)
        if owners:
            per.update(dict.fromkeys(owners, v))
        elif prefix is not None:
            per[prefix] = v[len(prefix) + 1:]
        elif common is None:
            common = v
        else:
            raise click.UsageError(f"--reference-group {common!r} and {v!r}: give one group per attribute "
                                   "(ATTR=GROUP)")

    def resolve(name: str, v: str) -> Any:
        if v in ("largest", "best") or attrs.get(name) is None:
            return v
        found = _match(v, attrs[name])
        if found is None:
            groups = ", ".join(sorted(map(str, pd.unique(pd.Series(attrs[name]).dropna())))[:20])
            raise click.UsageError(f"--reference-group {v!r} is not a group of attribute {name!r}; groups: {groups}")
        return found

    out = {a: resolve(a, per.get(a, common or "largest")) for a in attrs}
    return next(iter(out.values())) if len(out) == 1 else out




def _warn_n_boot(n_boot: int | None, rows: int | None) -> None:
    """A warning on stderr for a --n-boot that buys nothing but time (above 10,000, or above the resamples)."""
    if n_boot is None:
        return
    why = []
    if n_boot > _USUAL_N_BOOT:
        why.append(f"beyond {_USUAL_N_BOOT:,} replicates an interval endpoint rarely moves by more than its Monte "
                   "Carlo error, and every replicate costs time and memory (1,000 to 10,000 is usual)")
    if rows is not None and 0 < rows <= 12 and n_boot > math.comb(2 * rows - 1, rows):
        why.append(f"{rows} rows have only {math.comb(2 * rows - 1, rows):,} distinct bootstrap resamples")
    if why:
        click.echo(f"warning: --n-boot {n_boot:,}: " + "; ".join(why), err=True)


_ARGUMENTS = ("attr_val_scores", "task_val_scores", "sensitive_features", "sample_weight", "attr_train",
              "task_train", "attr_pred", "task_pred", "y_true", "y_pred", "attr", "task")
_ARG_RE = re.compile(r"(?<![\w'\"\[.])(" + "|".join(_ARGUMENTS) + r")(?![\w'\"\]])")
_VERBS = (" has ", " have ", " contains ", " is ", " must ", " holds ", " could ", " and ", " or ", ":")


def _name_columns(message: str, columns: dict) -> str:
    """A library error with the argument names (``attr``, ``y_true``) replaced by the CSV columns.

    ``columns``: argument -> how to name it (``"column 'sex'"``); for several
    attributes, ``columns["attribute <name>"]`` holds that attribute's. Row
    numbers the library gives (0-based positions) become 1-based data rows.
    """
    m = re.match(r"attribute '(.+?)': ", message)
    if m and f"attribute {m.group(1)}" in columns:
        columns = dict(columns, **columns[f"attribute {m.group(1)}"])
        message = message[m.end():]
    replaced = False

    def sub(match: re.Match) -> str:
        nonlocal replaced
        name, rest = match.group(1), message[match.end():]
        if name not in columns or (name in ("attr", "task") and match.start() > 0
                                   and not rest.startswith(_VERBS)):
            return name
        replaced = True
        return columns[name]

    out = _ARG_RE.sub(sub, message)
    if replaced:
        out = re.sub(r"\(rows? ([\d, ]+)", lambda r: "(row" + ("s " if "," in r.group(1) else " ") + ", ".join(
            str(int(i) + 1) for i in r.group(1).replace(" ", "").split(",") if i) , out)
    return out


def _terminal(report: Any) -> str:
    from ._audit_attributes import summary_by_attribute

    return summary_by_attribute(report, width=max(100, shutil.get_terminal_size((120, 24)).columns))


def _run(report_kwargs: dict, *, json_path, html_path, no_plots, n_boot, n_iter, attacker, exclude, random_state,
         progress, quiet, protect, auditor=audit, markdown_path=None, latex_path=None, model_card_path=None,
         columns: dict | None = None, attrs: dict | None = None) -> None:
    options = dict(click.get_current_context().meta.get("biasamp_audit_options", {}))
    attr = report_kwargs.get("attr")
    if attrs is None:  # attribute name -> its labels, to match --reference-group names
        attrs = dict(attr) if isinstance(attr, dict) else {str(getattr(attr, "name", None) or "attr"): attr}
    if "reference_group" in options:
        options["reference_group"] = _reference_groups(options["reference_group"], attrs)
    if n_boot is not None:
        options["n_boot"] = n_boot
        _warn_n_boot(n_boot, None if attr is None else len(next(iter(attr.values())) if isinstance(attr, dict)
                                                              else attr))
    if quiet and progress is None:  # --quiet silences progress too, unless --progress asks for it
        progress = False
    columns = columns or {}
    try:
        with warnings.catch_warnings(record=True) as caught:  # those not in a section's notes: one line each
            warnings.simplefilter("default")
            report = auditor(**report_kwargs, **options, n_iter=n_iter, attacker=attacker, exclude=exclude,
                             random_state=random_state, progress=progress)
    except (ValueError, TypeError, OSError, ImportError) as exc:  # OSError: a file unreadable while streaming
        raise click.ClickException(_name_columns(str(exc), columns)) from None
    for message in dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught
                                 if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))):
        click.echo(f"warning: {message}", err=True)
    failed = [s for s in report.sections if s.status == "error"]
    for s in failed:  # the report of a CSV names its columns, not the audit's arguments
        name = re.search(r"\[(.+)\]$", s.key)
        own = columns.get(f"attribute {name.group(1)}", {}) if name else {}
        s.message = _name_columns(s.message, dict(columns, **own))
    if not quiet and any(s.status == "ok" for s in report.sections):
        click.echo(_terminal(report))
    if failed and not any(s.status == "ok" for s in report.sections):
        raise click.ClickException(
            "no metric could be computed (nothing written):\n" + "\n".join(f"  {s.title}: {s.message}" for s in failed))
    _write_outputs(report, json_path, html_path, not no_plots, protect, markdown_path, latex_path, model_card_path)
    if failed:  # the report is complete and says what failed; the exit code says it too
        click.echo(f"error: {len(failed)} section(s) could not be computed: "
                   + ", ".join(s.key for s in failed), err=True)
        sys.exit(1)


class _Main(click.Group):
    """The ``biasamp`` group: Ctrl-C (SIGINT) exits with 130, the shell's convention, leaving no partial file."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            written = ctx.find_root().meta.get("biasamp_written", [])
            click.echo("\ninterrupted" + (f"; already written: {', '.join(map(str, written))}" if written
                                          else ": nothing written"), err=True)
            raise click.exceptions.Exit(130) from None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=_version(), prog_name="biasamp", message="%(prog)s %(version)s")
def main() -> None:
    """biasamp: bias and bias amplification audit of a classifier's predictions.

    Start with `biasamp demo`, then `biasamp audit predictions.csv --html report.html`.
    """


# --------------------------------------------------------------------------- #
# the data of `biasamp audit`: booleans, missing values, numbers
# --------------------------------------------------------------------------- #
_TRUE_FALSE = {"true": 1, "false": 0}


def _bool_like(s: pd.Series) -> bool:
    """A bool column, or one of True/False (bools or the strings True/true/False/false) with gaps."""
    if s.dtype == bool:
        return True
    if pd.api.types.is_numeric_dtype(s):
        return False
    v = s.dropna()
    return len(v) > 0 and all(isinstance(x, bool) or (isinstance(x, str) and x.strip().lower() in _TRUE_FALSE)
                              for x in v)


def _zero_one_like(s: pd.Series) -> bool:
    """A numeric column with values in [0, 1] (0/1 labels or probabilities)."""
    if s.dtype == bool or not pd.api.types.is_numeric_dtype(s):
        return False
    v = s.dropna()
    return len(v) > 0 and bool(((v >= 0) & (v <= 1)).all())


def _as_zero_one(s: pd.Series) -> pd.Series:
    if s.dtype == bool:
        return s.astype(np.int64)
    out = s.map(lambda x: x if pd.isna(x) else int(x if isinstance(x, bool) else _TRUE_FALSE[x.strip().lower()]))
    return out.astype(np.int64) if not out.isna().any() else out.astype(np.float64)


def _normalise_bools(groups: list[list[tuple[pd.DataFrame, str]]]) -> None:
    """True/False columns as 0/1 where a column of the same label (truth, prediction, training) is 0/1.

    ``groups``: per label, its columns as ``(frame, column)``; changed in place.
    """
    for group in groups:
        cols = [(f, c) for f, c in group if c is not None and c in f.columns]
        flags = [_bool_like(f[c]) for f, c in cols]
        if any(flags) and not all(flags) and all(b or _zero_one_like(f[c]) for b, (f, c) in zip(flags, cols)):
            for b, (f, c) in zip(flags, cols):
                if b:
                    f[c] = _as_zero_one(f[c])


def _where(column: str, file: str | None) -> str:
    return f"column {column!r}" + (f" of {file}" if file else "")


def _rows(positions: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(str(int(i) + 1) for i in positions[:limit])
    return shown + (f", ... ({len(positions)} rows in all)" if len(positions) > limit else "")


def _check_missing(frame: pd.DataFrame, columns: list[str], file: str | None, attrs: list[str]) -> None:
    """ClickException naming the first column with a missing value and its 1-based rows (``--missing raise``)."""
    for c in dict.fromkeys(columns):
        gaps = np.flatnonzero(frame[c].isna().to_numpy())
        if len(gaps):
            more = f" (also row{'s' if len(gaps) > 2 else ''} {_rows(gaps[1:])})" if len(gaps) > 1 else ""
            raise click.ClickException(
                f"{_where(c, file)}, row {gaps[0] + 1}: missing value{more}; pass --missing drop to leave such rows "
                "out" + (", or --missing group to make the missing values a group" if c in attrs else ""))


def _check_numbers(frame: pd.DataFrame, columns: list[str], file: str | None, what: str,
                   strict: bool = True) -> None:
    """ClickException naming the column and 1-based row of a value that is not a finite number.

    ``strict=False`` (prediction columns, which may hold class names): only a
    column whose values are mostly numbers is checked.
    """
    for c in dict.fromkeys(columns):
        s = frame[c]
        if s.dtype == bool:
            continue
        num = pd.to_numeric(s, errors="coerce")
        given = s.notna()
        if not strict and (not given.any() or (not pd.api.types.is_numeric_dtype(s)
                                               and num[given].notna().mean() < 0.5)):
            continue
        bad = np.flatnonzero((num.isna() & given).to_numpy())
        if len(bad):
            raise click.ClickException(f"{_where(c, file)}, row {bad[0] + 1}: {s.iloc[bad[0]]!r} is not a number "
                                       f"({what})")
        inf = np.flatnonzero(np.isinf(num.to_numpy(dtype=np.float64, na_value=0.0)))
        if len(inf):
            raise click.ClickException(f"{_where(c, file)}, row {inf[0] + 1}: {num.iloc[inf[0]]} is not finite "
                                       f"({what})")
        if what == "weights":
            neg = np.flatnonzero((num < 0).to_numpy())
            if len(neg):
                raise click.ClickException(f"{_where(c, file)}, row {neg[0] + 1}: weight {num.iloc[neg[0]]:g} is "
                                           "negative (weights are >= 0)")
        frame[c] = num


def _check_predictions(pairs: list[tuple]) -> None:
    """ClickException naming the column and 1-based row of a prediction that is no class of its ground truth.

    ``pairs``: ``(truth, prediction, training truth or None, truth column,
    prediction column)``. Against a 0/1 truth, a number in [0, 1] is a
    probability; anything else must be a class of the truth (test or train).
    """
    from ._audit_attributes import _fmt_label

    for truth, pred, train, tcol, pcol in pairs:
        known = set(map(_fmt_label, pd.unique(truth.dropna())))
        if train is not None:
            known |= set(map(_fmt_label, pd.unique(train.dropna())))
        shown = ", ".join(sorted(known)[:10]) + (", ..." if len(known) > 10 else "")
        if known <= {"0", "1"} and pd.api.types.is_numeric_dtype(pred) and pred.dtype != bool:
            bad = np.flatnonzero((pred.notna() & ~pred.between(0, 1)).to_numpy())
            if len(bad):
                v = pred.iloc[bad[0]]
                raise click.ClickException(
                    f"column {pcol!r}, row {bad[0] + 1}: {_fmt_label(v)} is neither a class of column {tcol!r} "
                    f"({shown}) nor a probability in [0, 1]; give hard predictions or probabilities (a score on "
                    f"another scale: make a 0/1 column first, e.g. {pcol} >= a cut-off)")
            continue
        labels = pred.map(_fmt_label, na_action="ignore")
        bad = np.flatnonzero((labels.notna() & ~labels.isin(known)).to_numpy())
        if len(bad):
            v = pred.iloc[bad[0]]
            hint = ""
            if pd.api.types.is_float_dtype(pred) and pred.between(0, 1).all():
                hint = f"; probabilities need a 0/1 column {tcol!r}"
            raise click.ClickException(f"column {pcol!r}, row {bad[0] + 1}: "
                                       f"{_fmt_label(v) if isinstance(v, (int, float, np.number)) else repr(v)} "
                                       f"is not a class of column {tcol!r} ({shown}){hint}")


def _intersections(values: tuple[str, ...]) -> list[list[str]]:
    out = []
    for v in values:
        combo = [c.strip() for c in v.split(",") if c.strip()]
        if len(combo) < 2 or len(set(combo)) != len(combo):
            raise click.UsageError(f"--intersect {v!r}: name two or more different attribute columns, e.g. "
                                   "--intersect race,sex")
        out.append(combo)
    return out


def _stream_auditor(stream_audit: Any, dataset: Any, per_attr: dict, **fixed: Any) -> Callable:
    """The auditor of a streamed audit: one :func:`stream_audit` per attribute, merged; fairness options as a dict."""

    def auditor(**kwargs: Any) -> Any:
        fairness = {k: kwargs.pop(k) for k in _FAIRNESS_OPTIONS if k in kwargs}
        reports = {}
        for name, columns in per_attr.items():
            opts = dict(kwargs, names=dict(kwargs.get("names") or {}, attr=name))
            fair = dict(fairness)
            if isinstance(fair.get("reference_group"), dict):
                fair["reference_group"] = fair["reference_group"].get(name, "largest")
            reports[name] = stream_audit(dataset, columns, **fixed, **opts, **({"fairness": fair} if fair else {}))
        if len(reports) == 1:
            return next(iter(reports.values()))
        from ._audit_attributes import merge_reports

        return merge_reports(reports, title=kwargs.get("title"))

    return auditor


@main.command("audit", context_settings={"max_content_width": 100})
@click.argument("data", type=click.Path(exists=True))
@click.option("--train", "train_path", type=click.Path(exists=True),
              help="Training labels (same attribute and task columns).")
@click.option("--val", "val_path", type=click.Path(exists=True, dir_okay=False),
              help="Validation scores (<column>_score) for threshold calibration.")
@click.option("--attr", multiple=True,
              help="Protected attribute column(s), repeatable or comma-separated: one report section set per "
                   "attribute [default: attr, attribute, group or protected].")
@click.option("--intersect", multiple=True, metavar="COL,COL",
              help="Also audit the intersection of these attribute columns (groups such as 'race=Black, "
                   "sex=Male'); repeatable.")
@click.option("--task", multiple=True, help="Task column(s), repeatable or comma-separated [default: task_*, or task/label/y].")
@click.option("--attr-pred", multiple=True,
              help="Predicted attribute column(s), one per --attr [default: <attr>_pred, else <attr>_score].")
@click.option("--task-pred", multiple=True, help="Predicted task column(s) [default: <task>_pred, else <task>_score].")
@click.option("--pos-label", default=None, metavar="LABEL",
              help="Positive class of a two-class task, as written in the task column [default: 1 or True].")
@click.option("--weight", default=None, metavar="COLUMN", help="Column of per-row sample weights (>= 0).")
@click.option("--missing", type=click.Choice(["raise", "drop", "group"]), default="raise", show_default=True,
              help="A missing value: stop naming its column and row; drop its row (per attribute); or, in an "
                   "attribute column, make it a group 'missing'.")
@click.option("--title", default=None, help="Report title.")
@click.option("--stream/--no-stream", default=None,
              help="Read Parquet in batches, in bounded memory [default: when larger than --max-memory].")
@click.option("--max-memory", default="1G", show_default=True, callback=_parse_size, metavar="SIZE",
              help="Stream Parquet input larger than this uncompressed (from the file footers), e.g. 500M, 4G.")
@click.option("--batch-size", type=click.IntRange(1), default=65_536, show_default=True,
              help="Rows per batch when streaming.")
@click.option("--dpa-rows", type=click.IntRange(0), default=200_000, show_default=True,
              help="When streaming: DPA and LA run on a random sample of this many test rows (0: skip them).")
@_common_options
def audit_command(data, train_path, val_path, attr, intersect, task, attr_pred, task_pred, pos_label, weight, missing,
                  title, stream, max_memory, batch_size, dpa_rows, json_path, html_path, markdown_path, latex_path,
                  model_card_path, no_plots, n_boot, n_iter, attacker, exclude, random_state, progress, quiet):
    """Audit the predictions in DATA (CSV, Parquet, or a folder of Parquet files; one row per test instance).

    \b
    Column conventions (override with the options):
      attribute    attr | attribute | group | protected
      task         task_* columns (multi-label 0/1), or one column task | label | y
      predictions  <column>_pred (hard), else <column>_score (probabilities)
      calibration  with --val: thresholds from the validation <column>_score
                   columns, applied to the test <column>_score columns

    \b
    CSV files may be separated by , ; tab or | (detected). True/False columns
    are read as 1/0 where the other column of the same label is 0/1. Errors in
    the data name the column and the row (1 = the first row after the header).

    \b
    Streaming (--stream, or Parquet larger than --max-memory): the data is read
    in batches, one file at a time, in bounded memory. Same metrics and values;
    no bootstrap intervals for the count-based metrics; DPA and LA run on a
    random sample of --dpa-rows test rows.

    \b
    Examples:
      biasamp audit test.csv --train train.csv --html report.html --json report.json
      biasamp audit preds.csv --task label --task-pred prediction --attr sex --attr race
      biasamp audit preds.csv --task label --task-pred score --intersect race,sex --pos-label 1
      biasamp audit predictions/ --train train/ --stream --json report.json
    """
    outputs = {"markdown_path": markdown_path, "latex_path": latex_path, "model_card_path": model_card_path}
    for path in (data, train_path, val_path):
        if path is not None:
            _table_kind(path)
    _check_outputs({"--json": json_path, "--html": html_path, "--markdown": markdown_path, "--latex": latex_path,
                    "--model-card": model_card_path}, [data, train_path, val_path])
    combos = _intersections(intersect)
    attr, attr_pred = _split(attr), _split(attr_pred)
    streaming, datasets = _decide_streaming(stream, data, train_path, val_path, max_memory)
    if streaming:
        from ._stream import stream_audit

        unsupported = [o for o, given in (("--intersect", combos), ("--weight", weight),
                                          ("--missing", missing != "raise"), ("--pos-label", pos_label)) if given]
        if unsupported:
            raise click.UsageError(f"{', '.join(unsupported)}: not supported when streaming; pass --no-stream to "
                                   "load the data in memory")
        per_attr, cols = _stream_columns(datasets, data, train_path, attr, _split(task), attr_pred, _split(task_pred))
        auditor = _stream_auditor(stream_audit, datasets[data], per_attr, train=datasets.get(train_path),
                                  batch_size=batch_size, dpa_rows=dpa_rows)
        sources = ", ".join(p for p in (f"test {data}", train_path and f"train {train_path}") if p)
        _run({"title": title or f"biasamp audit of {Path(data).name}",
              "names": _display_names(cols, f"{sources} (streamed in batches of {batch_size:,} rows)")},
             json_path=json_path, html_path=html_path, no_plots=no_plots, n_boot=n_boot, n_iter=n_iter,
             attacker=attacker, exclude=exclude, random_state=random_state, progress=progress, quiet=quiet,
             protect=[data, train_path], auditor=auditor, attrs=dict.fromkeys(per_attr), **outputs)
        return
    frame = read_table(data)
    cols = _resolve_columns(frame, data, attr, _split(task), attr_pred, _split(task_pred), combos)
    attrs, names = cols["attrs"], _task_names(cols["task"])
    if weight is not None:
        _require(frame, [weight], data, "weight")
    train = read_table(train_path) if train_path else None
    if train is not None:
        _require(train, [*attrs, *cols["task"]], train_path, "training")
    # the same label in different columns and files: True/False read as 1/0 where another of them is 0/1
    frame = frame.copy()
    groups = [[(frame, a), (frame, cols["attr_preds"][a])] + ([(train, a)] if train is not None else [])
              for a in attrs]
    for i, t in enumerate(cols["task"]):
        groups.append([(frame, t)] + ([(frame, cols["task_pred"][i])] if cols["task_pred"] else [])
                      + ([(train, t)] if train is not None else []))
    _normalise_bools(groups)
    used = [*attrs, *cols["task"], *(p for p in cols["attr_preds"].values() if p), *(cols["task_pred"] or []),
            *([weight] if weight else [])]
    if missing == "raise":
        _check_missing(frame, used, None, attrs)
        if train is not None:
            _check_missing(train, [*attrs, *cols["task"]], train_path, attrs)
    _check_numbers(frame, [*(cols["task_pred"] or []), *(p for p in cols["attr_preds"].values() if p)], None,
                   "a prediction", strict=False)
    if weight is not None:
        _check_numbers(frame, [weight], None, "weights")
    pairs = [(frame[a], frame[p], None if train is None else train[a], a, p)
             for a, p in cols["attr_preds"].items() if p]
    pairs += [(frame[t], frame[p], None if train is None else train[t], t, p)
              for t, p in zip(cols["task"], cols["task_pred"] or [])]
    _check_predictions(pairs)
    several = len(attrs) > 1 or bool(combos)
    kwargs: dict = {"task": _task_frame(frame, cols["task"], names)}
    preds = {a: frame[p].rename(a).reset_index(drop=True) for a, p in cols["attr_preds"].items() if p}
    if several:
        kwargs["attr"] = {a: frame[a].reset_index(drop=True) for a in attrs}
        if preds:
            kwargs["attr_pred"] = preds
        if combos:
            kwargs["intersect"] = [tuple(c) for c in combos]
    else:
        kwargs["attr"] = frame[attrs[0]].reset_index(drop=True)
        if preds:
            kwargs["attr_pred"] = preds[attrs[0]]
    if cols["task_pred"]:
        kwargs["task_pred"] = _task_frame(frame, cols["task_pred"], names)
    if train is not None:
        train_attr = {a: train[a].reset_index(drop=True) for a in attrs}
        kwargs["attr_train"] = train_attr if several else train_attr[attrs[0]]
        kwargs["task_train"] = _task_frame(train, cols["task"], names)
    if weight is not None:
        kwargs["sample_weight"] = frame[weight].reset_index(drop=True)
    if missing != "raise":
        kwargs["missing"] = missing
    if pos_label is not None:
        classes = pd.concat([frame[c] for c in [*cols["task"], *(cols["task_pred"] or [])]], ignore_index=True)
        found = _match(pos_label, classes)
        if found is None:
            raise click.UsageError(f"--pos-label {pos_label!r} is not a class of the task column(s) "
                                   f"{', '.join(cols['task'])}; classes: "
                                   + ", ".join(sorted(map(str, pd.unique(frame[cols['task'][0]].dropna())))[:20]))
        kwargs["pos_label"] = found
    if val_path:
        val = read_table(val_path)
        calibrated = False
        task_scores = [f"{c}{SCORE_SUFFIX}" for c in cols["task"]]
        if cols["task_pred_kind"] == "score" and all(c in val.columns for c in task_scores):
            kwargs["task_val_scores"] = _task_frame(val, task_scores, names)
            calibrated = True
        attr_scores = {a: val[f"{a}{SCORE_SUFFIX}"].reset_index(drop=True) for a in attrs
                       if cols["attr_kinds"][a] == "score" and f"{a}{SCORE_SUFFIX}" in val.columns}
        if attr_scores:
            kwargs["attr_val_scores"] = attr_scores if several else attr_scores[attrs[0]]
            calibrated = True
        if not calibrated:
            raise click.UsageError(
                f"--val needs <column>{SCORE_SUFFIX} columns in both {data} and {val_path} (e.g. "
                f"{cols['task'][0]}{SCORE_SUFFIX}), and no <column>{PRED_SUFFIX} column for them in {data}; "
                f"available columns in {val_path}: {_available(val)}")
    sources = ", ".join(p for p in (f"test {data}", train_path and f"train {train_path}",
                                     val_path and f"validation {val_path}") if p)
    _run(dict(kwargs, title=title or f"biasamp audit of {Path(data).name}", names=_display_names(cols, sources)),
         json_path=json_path, html_path=html_path, no_plots=no_plots, n_boot=n_boot, n_iter=n_iter,
         attacker=attacker, exclude=exclude, random_state=random_state, progress=progress, quiet=quiet,
         protect=[data, train_path, val_path], columns=_argument_columns(cols, weight, train_path, combos),
         attrs=_attribute_labels(kwargs["attr"], combos, missing), **outputs)


def _columns_text(columns: list[str]) -> str:
    return (f"column {columns[0]!r}" if len(columns) == 1
            else "columns " + ", ".join(map(repr, columns[:4])) + (", ..." if len(columns) > 4 else ""))


def _argument_columns(cols: dict, weight: str | None, train_path: str | None, combos: list) -> dict:
    """How an error names each argument of the audit: ``{"attr": "column 'sex'", ...}``."""
    task = _columns_text(cols["task"])
    out = {"task": task, "y_true": task, "sample_weight": _columns_text([weight]) if weight else "sample_weight"}
    if cols["task_pred"]:
        out["task_pred"] = out["y_pred"] = _columns_text(cols["task_pred"])
    if train_path:
        out["task_train"] = f"{task} of {train_path}"
    for name in [*cols["attrs"], *(" x ".join(c) for c in combos)]:
        own = {"attr": f"column {name!r}" if name in cols["attrs"] else f"intersection {name!r}"}
        own["sensitive_features"] = own["attr"]
        if cols["attr_preds"].get(name):
            own["attr_pred"] = f"column {cols['attr_preds'][name]!r}"
        if train_path:
            own["attr_train"] = f"{own['attr']} of {train_path}"
        out[f"attribute {name}"] = own
    if len(cols["attrs"]) == 1 and not combos:
        out.update(out[f"attribute {cols['attrs'][0]}"])
    return out


def _attribute_labels(attr: Any, combos: list, missing: str) -> dict:
    """Attribute name -> test labels (intersections included), to match --reference-group names."""
    if not isinstance(attr, dict):
        return {str(attr.name): attr}
    from ._audit_attributes import INTERSECTION_SEP, intersection_labels

    out = dict(attr)
    for combo in combos:
        out[INTERSECTION_SEP.join(combo)] = intersection_labels({c: attr[c] for c in combo}, missing=missing)
    return out


DEMO_STORY = (
    "Built-in demo: a synthetic image-tagging dataset (gender x 6 object tags) in which kitchen and umbrella\n"
    "lean 'woman' and skateboard and tie lean 'man', and a model that over-tags each object in the group it\n"
    "leans to (it amplifies gender -> objects, A->T) while its gender predictions err at random (no\n"
    "objects -> gender amplification, T->A)."
)


@main.command("demo", context_settings={"max_content_width": 100})
@click.option("--save-data", type=click.Path(file_okay=False),
              help="Also write the demo data as train.csv and test.csv in this folder (for `biasamp audit`).")
@_common_options
def demo_command(save_data, json_path, html_path, markdown_path, latex_path, model_card_path, no_plots, n_boot, n_iter,
                 attacker, exclude, random_state, progress, quiet):
    """Audit a built-in, deterministic synthetic dataset and model (the first command to try)."""
    from .datasets import make_amplification_demo

    _check_outputs({"--json": json_path, "--html": html_path, "--markdown": markdown_path, "--latex": latex_path,
                    "--model-card": model_card_path}, [])
    d = make_amplification_demo()
    if save_data:
        _save_demo(d, Path(save_data))
    if not quiet:
        click.echo(DEMO_STORY + "\n")
    _run({"attr": d.attr, "task": d.task, "attr_pred": d.attr_pred, "task_pred": d.task_pred,
          "attr_train": d.attr_train, "task_train": d.task_train, "title": "biasamp demo audit",
          "names": {"attr": "gender", "task": "objects",
                    "source": "built-in synthetic demo (biasamp.datasets.make_amplification_demo)"}},
         json_path=json_path, html_path=html_path, no_plots=no_plots, n_boot=n_boot, n_iter=n_iter,
         attacker=attacker, exclude=exclude, random_state=random_state, progress=progress, quiet=quiet,
         protect=[], markdown_path=markdown_path, latex_path=latex_path, model_card_path=model_card_path)


def _save_demo(d: Any, folder: Path) -> None:
    """The demo data in the ``biasamp audit`` column convention."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(f"cannot create {folder}: {exc}") from None
    test = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"),
                      d.task.add_prefix(TASK_PREFIX), d.task_pred.add_prefix(TASK_PREFIX).add_suffix(PRED_SUFFIX)],
                     axis=1)
    train = pd.concat([d.attr_train.rename("attr"), d.task_train.add_prefix(TASK_PREFIX)], axis=1)
    for name, frame in (("test.csv", test), ("train.csv", train)):
        try:
            _write_atomic(folder / name, frame.to_csv(index=False))
        except OSError as exc:
            raise click.ClickException(f"cannot write {folder / name}: {exc}") from None
        click.echo(f"wrote {folder / name}", err=True)


if __name__ == "__main__":  # python -m biasamp.cli
    main()
