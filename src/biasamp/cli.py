"""The ``biasamp`` command line: ``biasamp audit``, ``biasamp demo``, ``biasamp --version``.

Built on click. Column conventions of ``biasamp audit`` (each overridable by an
option):

* attribute: ``--attr``, else the first of the columns ``attr``, ``attribute``,
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

Files are CSV (``.csv``, ``.tsv``, ``.txt``, optionally ``.gz``/``.bz2``/
``.zip``/``.xz``) or Parquet (``.parquet``, ``.pq``, or a directory of such
files; needs pyarrow), read as data only. Reports are written atomically
(temporary file, then rename) and never over an input file. Exit codes: 0
success; 1 a file could not be read or written, or a metric family failed
(the report, still written when at least one family succeeded, records the
error); 2 usage error (including a missing column, listed with the available
ones).

Streaming (``--stream``; by default when the Parquet input is larger than
``--max-memory``, estimated from the file footers): the Parquet data is read
in record batches, one file at a time, and counted by the streaming
accumulators in bounded memory (:mod:`biasamp._stream`). The report has the
same sections and values, without the bootstrap intervals of the
count-based metrics; DPA and LA run on a uniform random sample of
``--dpa-rows`` test rows.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
from functools import partial
from pathlib import Path
from typing import Any

import click
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
_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _version() -> str:
    from . import __version__

    return __version__


# --------------------------------------------------------------------------- #
# reading
# --------------------------------------------------------------------------- #
def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file, or a directory of Parquet files, as data (never pickle, never evaluated).

    A directory is read as the Parquet files it holds, in the order of
    :func:`biasamp._stream.parquet_files`. Raises ``click.ClickException``
    (exit code 1) with a readable message when the data cannot be read.
    """
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    kind = suffixes[-1] if suffixes else ""
    try:
        if path.is_dir():
            from ._stream import parquet_files

            files = parquet_files(path)
            if not files:
                raise click.ClickException(f"cannot read {path}: a directory with no Parquet files (*.parquet, *.pq)")
            frame = _read_parquet(files)
        elif kind in _PARQUET:
            frame = _read_parquet([path])
        else:
            sep = "\t" if kind == ".tsv" else ","
            frame = pd.read_csv(path, sep=sep, engine="c")
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


def _resolve_columns(frame: pd.DataFrame, file: str, attr: str | None, task: list[str],
                     attr_pred: str | None, task_pred: list[str]) -> dict:
    """Apply the column conventions; UsageError (exit 2) listing the columns when something is missing."""
    if attr is None:
        attr = next((c for c in ATTR_NAMES if c in frame.columns), None)
        if attr is None:
            raise click.UsageError(
                f"no attribute column in {file}: pass --attr or name it one of {', '.join(ATTR_NAMES)}; "
                f"available columns: {_available(frame)}")
    _require(frame, [attr], file, "attribute")
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

    ap, ap_kind = predictions([attr_pred] if attr_pred else [], [attr], "--attr-pred")
    tp, tp_kind = predictions(task_pred, task, "--task-pred")
    if ap is None and tp is None:
        raise click.UsageError(
            f"no prediction column in {file}: pass --attr-pred/--task-pred or name them <column>{PRED_SUFFIX} "
            f"(e.g. {attr}{PRED_SUFFIX}, {task[0]}{PRED_SUFFIX}); available columns: {_available(frame)}")
    return {"attr": attr, "task": task, "attr_pred": ap, "attr_pred_kind": ap_kind,
            "task_pred": tp, "task_pred_kind": tp_kind}


def _task_frame(frame: pd.DataFrame, cols: list[str], names: list[str]) -> Any:
    if len(cols) == 1:
        return frame[cols[0]].rename(names[0]).reset_index(drop=True)
    out = frame[cols].copy()
    out.columns = names
    return out.reset_index(drop=True)


def _display_names(cols: dict, source: str) -> dict:
    """The report's ``names``: attribute and task columns, and where the data came from."""
    task = ", ".join(cols["task"]) if len(cols["task"]) <= 3 else f"{len(cols['task'])} task columns"
    return {"attr": cols["attr"], "task": task, "source": source}


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
                    task_pred) -> tuple[Any, dict]:
    """``(StreamColumns, columns)``: the conventions applied to the Parquet schemas (no data read).

    UsageError (exit 2) listing the available columns when one is missing,
    from the first file or from any later file of a directory.
    """
    from ._stream import StreamColumns

    test = datasets[data]
    cols = _resolve_columns(pd.DataFrame(columns=list(test.columns)), data, attr, task, attr_pred, task_pred)
    predictions = [*(cols["attr_pred"] or []), *(cols["task_pred"] or [])]
    checks = [(test, data, "test", [cols["attr"], *cols["task"], *predictions])]
    if train_path:
        checks.append((datasets[train_path], train_path, "training", [cols["attr"], *cols["task"]]))
    for ds, path, what, needed in checks:
        gap = ds.missing(needed)
        if gap is not None:
            f, lacking, available = gap
            raise click.UsageError(
                f"{what} column{'s' if len(lacking) > 1 else ''} {', '.join(map(repr, lacking))} not found in {f}"
                + (f" (of {path})" if str(f) != str(path) else "") + f"; available columns: {', '.join(available)}")
    return StreamColumns(cols["attr"], tuple(cols["task"]), tuple(_task_names(cols["task"])),
                         cols["attr_pred"][0] if cols["attr_pred"] else None,
                         tuple(cols["task_pred"]) if cols["task_pred"] else None), cols


# --------------------------------------------------------------------------- #
# commands
# --------------------------------------------------------------------------- #
_SECTIONS = [b.key for b in section_builders()]
_MAX_N_BOOT = 100_000  # beyond this the intervals do not change, and the replicates take minutes and GBs


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


def _run(report_kwargs: dict, *, json_path, html_path, no_plots, n_boot, n_iter, attacker, exclude, random_state,
         progress, quiet, protect, auditor=audit, markdown_path=None, latex_path=None, model_card_path=None) -> None:
    options = dict(click.get_current_context().meta.get("biasamp_audit_options", {}))
    if n_boot is not None:
        options["n_boot"] = n_boot
    if quiet and progress is None:  # --quiet silences progress too, unless --progress asks for it
        progress = False
    try:
        report = auditor(**report_kwargs, **options, n_iter=n_iter, attacker=attacker, exclude=exclude,
                         random_state=random_state, progress=progress)
    except (ValueError, TypeError, OSError, ImportError) as exc:  # OSError: a file unreadable while streaming
        raise click.ClickException(str(exc)) from None
    if not quiet:
        click.echo(report.summary(width=max(100, shutil.get_terminal_size((120, 24)).columns)))
    failed = [s for s in report.sections if s.status == "error"]
    if failed and not any(s.status == "ok" for s in report.sections):
        raise click.ClickException(
            "no metric could be computed (nothing written):\n" + "\n".join(f"  {s.title}: {s.message}" for s in failed))
    _write_outputs(report, json_path, html_path, not no_plots, protect, markdown_path, latex_path, model_card_path)
    if failed:  # the report is complete and says what failed; the exit code says it too
        click.echo(f"error: {len(failed)} section(s) could not be computed: "
                   + ", ".join(s.key for s in failed), err=True)
        sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=_version(), prog_name="biasamp", message="%(prog)s %(version)s")
def main() -> None:
    """biasamp: bias and bias amplification audit of a classifier's predictions.

    Start with `biasamp demo`, then `biasamp audit predictions.csv --html report.html`.
    """


@main.command("audit", context_settings={"max_content_width": 100})
@click.argument("data", type=click.Path(exists=True))
@click.option("--train", "train_path", type=click.Path(exists=True),
              help="Training labels (same attribute and task columns).")
@click.option("--val", "val_path", type=click.Path(exists=True, dir_okay=False),
              help="Validation scores (<column>_score) for threshold calibration.")
@click.option("--attr", help="Attribute column [default: attr, attribute, group or protected].")
@click.option("--task", multiple=True, help="Task column(s), repeatable or comma-separated [default: task_*, or task/label/y].")
@click.option("--attr-pred", help="Predicted attribute column [default: <attr>_pred, else <attr>_score].")
@click.option("--task-pred", multiple=True, help="Predicted task column(s) [default: <task>_pred, else <task>_score].")
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
def audit_command(data, train_path, val_path, attr, task, attr_pred, task_pred, title, stream, max_memory,
                  batch_size, dpa_rows, json_path, html_path, markdown_path, latex_path, model_card_path, no_plots,
                  n_boot, n_iter, attacker, exclude, random_state, progress, quiet):
    """Audit the predictions in DATA (CSV, Parquet, or a folder of Parquet files; one row per test instance).

    \b
    Column conventions (override with the options):
      attribute    attr | attribute | group | protected
      task         task_* columns (multi-label 0/1), or one column task | label | y
      predictions  <column>_pred (hard), else <column>_score (probabilities)
      calibration  with --val: thresholds from the validation <column>_score
                   columns, applied to the test <column>_score columns

    \b
    Streaming (--stream, or Parquet larger than --max-memory): the data is read
    in batches, one file at a time, in bounded memory. Same metrics and values;
    no bootstrap intervals for the count-based metrics; DPA and LA run on a
    random sample of --dpa-rows test rows.

    \b
    Example:
      biasamp audit test.csv --train train.csv --html report.html --json report.json
      biasamp audit predictions/ --train train/ --stream --json report.json
    """
    outputs = {"markdown_path": markdown_path, "latex_path": latex_path, "model_card_path": model_card_path}
    _check_outputs({"--json": json_path, "--html": html_path, "--markdown": markdown_path, "--latex": latex_path,
                    "--model-card": model_card_path}, [data, train_path, val_path])
    streaming, datasets = _decide_streaming(stream, data, train_path, val_path, max_memory)
    if streaming:
        from ._stream import stream_audit

        columns, cols = _stream_columns(datasets, data, train_path, attr, _split(task), attr_pred, _split(task_pred))
        auditor = partial(stream_audit, datasets[data], columns, train=datasets.get(train_path),
                          batch_size=batch_size, dpa_rows=dpa_rows)
        sources = ", ".join(p for p in (f"test {data}", train_path and f"train {train_path}") if p)
        _run({"title": title or f"biasamp audit of {Path(data).name}",
              "names": _display_names(cols, f"{sources} (streamed in batches of {batch_size:,} rows)")},
             json_path=json_path, html_path=html_path, no_plots=no_plots, n_boot=n_boot, n_iter=n_iter,
             attacker=attacker, exclude=exclude, random_state=random_state, progress=progress, quiet=quiet,
             protect=[data, train_path], auditor=auditor, **outputs)
        return
    frame = read_table(data)
    cols = _resolve_columns(frame, data, attr, _split(task), attr_pred, _split(task_pred))
    names = _task_names(cols["task"])
    kwargs: dict = {
        "attr": frame[cols["attr"]].reset_index(drop=True),
        "task": _task_frame(frame, cols["task"], names),
    }
    if cols["attr_pred"]:
        kwargs["attr_pred"] = frame[cols["attr_pred"][0]].rename(cols["attr"]).reset_index(drop=True)
    if cols["task_pred"]:
        kwargs["task_pred"] = _task_frame(frame, cols["task_pred"], names)
    if train_path:
        train = read_table(train_path)
        _require(train, [cols["attr"], *cols["task"]], train_path, "training")
        kwargs["attr_train"] = train[cols["attr"]].reset_index(drop=True)
        kwargs["task_train"] = _task_frame(train, cols["task"], names)
    if val_path:
        val = read_table(val_path)
        calibrated = False
        for role, kind_key in (("task", "task_pred_kind"), ("attr", "attr_pred_kind")):
            truth = cols["task"] if role == "task" else [cols["attr"]]
            score_cols = [f"{c}{SCORE_SUFFIX}" for c in truth]
            if cols[kind_key] == "score" and all(c in val.columns for c in score_cols):
                kwargs[f"{role}_val_scores"] = _task_frame(val, score_cols, names if role == "task" else truth)
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
         protect=[data, train_path, val_path], **outputs)


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
