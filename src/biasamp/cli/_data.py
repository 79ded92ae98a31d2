"""The data side of the ``biasamp`` command line: reading and checking the tables it audits.

:mod:`biasamp.cli` holds the click commands and their options; this module
holds what they do with the input files, so that the rules live in one place:

* file kinds and reading (:func:`read_table`): CSV (``.csv``, ``.tsv``,
  ``.tab``, ``.txt``, ``.dat``, ``.data``, optionally compressed) with its
  delimiter and decimal comma detected (:func:`_sniff_csv`), Parquet (a file,
  or a directory of files), read as data only;
* the column conventions (:func:`_resolve_columns`): which columns hold the
  attributes, the tasks and their predictions (``<column>_pred``, else
  ``<column>_score``);
* booleans (:func:`_normalise_bools`): a True/False column read as 1/0 where
  another column of the same label is 0/1;
* the checks of the values (:func:`_check_missing`, :func:`_check_numbers`,
  :func:`_check_predictions`), whose errors name the column and the 1-based
  row (1 = the first row after the header);
* library errors renamed to columns (:func:`_name_columns`): an error of the
  audit that names an argument (``attr``, ``y_true``) names the CSV column.

Part of the CLI layer: the errors are click exceptions carrying the exit code
(1 for unreadable files and bad values, 2 for a usage error or an unsupported
format), so the metric layer never imports this module.
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import click
import numpy as np
import pandas as pd

from biasamp._core.escape import terminal

ATTR_NAMES = ("attr", "attribute", "group", "protected")
TASK_NAMES = ("task", "label", "y")
TASK_PREFIX = "task_"
PRED_SUFFIX = "_pred"
SCORE_SUFFIX = "_score"

_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".tsv", ".tab", ".txt", ".dat", ".data")
_SNIFF_BYTES = 64 * 1024
_SNIFFER_CHARS = 8 * 1024  # csv.Sniffer is quadratic in a line: 64 KiB of crafted header took 8 s to minutes
_SNIFFER_LINE = 1024
_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")


class _DataError(click.ClickException):
    """A one-line error (no usage text) with exit code 2: an input the command cannot take."""

    exit_code = 2


# --------------------------------------------------------------------------- #
# file kinds and reading
# --------------------------------------------------------------------------- #
def _table_kind(path: str | os.PathLike) -> str:
    """``"dir"``, ``"parquet"`` or ``"csv"``; ``_DataError`` (exit 2) for any other extension.

    A compression suffix is looked through; no extension reads as CSV.

    >>> _table_kind("scores.tsv.gz"), _table_kind("part.PQ"), _table_kind("README")
    ('csv', 'parquet', 'csv')
    """
    path = Path(path)
    if path.is_dir():
        return "dir"
    _check_input_file(path)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    kind = suffixes[-1] if suffixes else ""
    if kind in _PARQUET:
        return "parquet"
    if kind in _CSV or not kind:
        return "csv"
    raise _DataError(f"unsupported format: {kind} (biasamp reads CSV or Parquet): {path}")


_MAX_PIPE_BYTES = 1 << 30
"""The most a pipe given as input (a FIFO, ``<(command)``, ``/dev/stdin``) may hold: it is read into memory."""


def _is_pipe(path: str | os.PathLike) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _check_input_file(path: Path) -> None:
    """``_DataError`` (exit 2) for an input that is neither a regular file, a folder nor a pipe (docs/safety.md).

    A character or block device (``/dev/zero``, a terminal) or a socket
    never ends or cannot be read as a table; a pipe (a FIFO, a process
    substitution ``<(command)``, ``/dev/stdin`` from a pipe) is read once, as
    CSV, into memory (at most :data:`_MAX_PIPE_BYTES`); Parquet needs a file
    it can seek in.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # read_table reports it
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    if stat.S_ISFIFO(mode):
        if any(s.lower() in _PARQUET for s in path.suffixes):
            raise _DataError(f"{path} is a pipe: Parquet is read from a file (it is read from its end); save it to "
                             "a file first")
        return
    kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise _DataError(f"{path} is {kind}, not a data file (biasamp reads CSV or Parquet files, folders of Parquet "
                     "files, or CSV from a pipe)")


def _read_pipe(path: Path) -> bytes:
    """All of a pipe (at most :data:`_MAX_PIPE_BYTES`); ``ClickException`` beyond."""
    with open(path, "rb") as fh:
        data = fh.read(_MAX_PIPE_BYTES + 1)
    if len(data) > _MAX_PIPE_BYTES:
        raise click.ClickException(f"cannot read {path}: a pipe holding more than {_MAX_PIPE_BYTES >> 20} MiB; "
                                   "save the data to a file (read from a file, a large input can be streamed)")
    return data


def _is_parquet(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a directory (of Parquet files) or has a Parquet extension (``.parquet``, ``.pq``)."""
    path = Path(path)
    return path.is_dir() or path.suffix.lower() in _PARQUET


def _open_text(path: Path | bytes) -> TextIO | None:
    """``path`` opened as text, decompressed by its extension; None for a format not sniffed (zip, zst).

    ``bytes``: the content of a pipe, read as it is."""
    if isinstance(path, bytes):
        return io.TextIOWrapper(io.BytesIO(path), encoding="utf-8", errors="replace", newline="")
    opener = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}.get(path.suffix.lower())
    if path.suffix.lower() in (".zip", ".zst"):
        return None
    if opener is None:
        return open(path, encoding="utf-8", errors="replace", newline="")
    import importlib

    return importlib.import_module(opener).open(path, "rt", encoding="utf-8", errors="replace", newline="")


def _sniff_csv(path: str | os.PathLike | bytes, default: str = ",") -> dict[str, str]:
    """``read_csv`` options of a text table: ``sep`` (``,``, ``;``, tab or ``|``) and ``decimal``.

    :class:`csv.Sniffer` on the first :data:`_SNIFF_BYTES` characters (whole
    lines); ``default`` when it cannot tell. A ``;``-separated file whose
    numbers are written ``0,5`` gets ``decimal=","``. The sniffer's cost
    grows with the square of a line's length, so it sees at most
    :data:`_SNIFFER_CHARS` characters (whole lines) of lines of at most
    :data:`_SNIFFER_LINE` characters; a longer line (a wide header) is
    split by counting (:func:`_count_delimiter`, linear time).
    ``path`` may be the bytes of a pipe.
    """
    try:
        fh = _open_text(path if isinstance(path, bytes) else Path(path))
        if fh is None:
            return {"sep": default}
        with fh:
            sample = fh.read(_SNIFF_BYTES)
    except (OSError, EOFError, ValueError):
        return {"sep": default}  # read_csv reports the problem
    if len(sample) == _SNIFF_BYTES and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    if len(sample) > _SNIFFER_CHARS:
        cut = sample.rfind("\n", 0, _SNIFFER_CHARS)
        sample = sample[:cut] if cut > 0 else sample
    lines = sample.splitlines()
    if len(sample) > _SNIFFER_CHARS or any(len(line) > _SNIFFER_LINE for line in lines):
        sep = _count_delimiter(lines[:20], default)  # the sniffer would take seconds (a crafted header: minutes)
    else:
        try:
            sep = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
        except csv.Error:
            return {"sep": default}
    out = {"sep": sep}
    if sep == ";" and re.search(r"(^|;)\s*-?\d+,\d+\s*(;|$)", sample, flags=re.MULTILINE):
        out["decimal"] = ","
    return out


def _count_delimiter(lines: list[str], default: str) -> str:
    """The candidate found the same number of times on every line, the most often (linear time); else the one
    the header holds most of; ``default`` on a tie or when none is found."""
    counts = {d: [line.count(d) for line in lines] or [0] for d in ",;\t|"}
    steady = [d for d, c in counts.items() if c[0] and len(set(c)) == 1]
    pool = steady or list(counts)
    best = max(pool, key=lambda d: (counts[d][0], d == default))
    return best if counts[best][0] else default


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file, or a directory of Parquet files, as data (never pickle, never evaluated).

    A directory is read as the Parquet files it holds, in the order of
    :func:`biasamp.report._stream.parquet_files`. The delimiter of a CSV file is
    detected (:func:`_sniff_csv`). Raises ``_DataError`` (exit code 2) for an
    unsupported extension and ``click.ClickException`` (exit code 1) with a
    readable message when the data cannot be read.
    """
    path = Path(path)
    kind = _table_kind(path)
    try:
        if kind == "dir":
            from biasamp.report._stream import parquet_files

            files = parquet_files(path)
            if not files:
                raise click.ClickException(f"cannot read {path}: a directory with no Parquet files (*.parquet, *.pq)")
            frame = _read_parquet(files)
        elif kind == "parquet":
            frame = _read_parquet([path])
        else:
            default = "\t" if any(s.lower() in (".tsv", ".tab") for s in path.suffixes) else ","
            source = _read_pipe(path) if _is_pipe(path) else None  # read once: it cannot be read again
            options = _sniff_csv(path if source is None else source, default)
            if options["sep"] != default:
                shown = {"\t": "tab"}.get(options["sep"], repr(options["sep"]))
                click.echo(f"reading {terminal(path.name)} as {shown}-separated" + (" with decimal commas" if
                           options.get("decimal") == "," else "") + " (detected)", err=True)
            frame = pd.read_csv(path if source is None else io.BytesIO(source), engine="c", sep=options["sep"],
                                decimal=options.get("decimal", "."))
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


def _read_parquet(files: Sequence[str | os.PathLike]) -> pd.DataFrame:
    """The Parquet ``files`` as one frame, in order; ClickException (exit 1) naming pyarrow when it is missing."""
    try:
        frames = [pd.read_parquet(f) for f in files]
    except ImportError as exc:
        raise click.ClickException(
            f"cannot read {files[0]}: reading Parquet needs pyarrow (pip install pyarrow): "
            + str(exc).splitlines()[0]
        ) from None
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- #
# column conventions
# --------------------------------------------------------------------------- #
def _available(frame: pd.DataFrame) -> str:
    """The columns of ``frame``, comma-separated, for "available columns: ..." in an error."""
    return ", ".join(map(str, frame.columns))


def _columns_text(columns: Sequence[str], limit: int | None = None) -> str:
    """``column 'a'`` or ``columns 'a', 'b'``; past ``limit`` names, ``...``.

    >>> _columns_text(["sex"]), _columns_text(["a", "b", "c"], limit=2)
    ("column 'sex'", "columns 'a', 'b', ...")
    """
    if len(columns) == 1:
        return f"column {columns[0]!r}"
    shown = columns if limit is None else columns[:limit]
    return "columns " + ", ".join(map(repr, shown)) + (", ..." if len(columns) > len(shown) else "")


def _not_found(what: str, columns: Sequence[str], where: str, available: str) -> str:
    """The message of columns missing from a file, with the columns it has.

    >>> _not_found("task", ["y"], "a.csv", "x, z")
    "task column 'y' not found in a.csv; available columns: x, z"
    """
    return f"{what} {_columns_text(columns)} not found in {where}; available columns: {available}"


def _require(frame: pd.DataFrame, columns: list[str], file: str, what: str) -> None:
    """UsageError (exit 2) naming the ``columns`` that ``frame`` (read from ``file``) lacks, and those it has."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise click.UsageError(_not_found(what, missing, file, _available(frame)))


def _resolve_columns(frame: pd.DataFrame, file: str, attr: list[str], task: list[str],
                     attr_pred: list[str], task_pred: list[str],
                     intersect: list[list[str]] | None = None) -> dict[str, Any]:
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
            single = next((c for c in TASK_NAMES if c in frame.columns), None)
            if single is None:
                raise click.UsageError(
                    f"no task column in {file}: pass --task or name the columns {TASK_PREFIX}* "
                    f"(or one column {', '.join(TASK_NAMES)}); available columns: {_available(frame)}")
            task = [single]
    _require(frame, task, file, "task")
    clash = [c for c in task if c in attrs]
    if clash:
        raise click.UsageError(f"{_columns_text(clash)} is both an attribute and a task column")

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


def _task_names(cols: list[str]) -> list[str]:
    """The report's task names: several ``task_*`` columns lose the prefix (when the rest stays distinct).

    >>> _task_names(["task_cat", "task_dog"]), _task_names(["task_cat"]), _task_names(["task_", "task_dog"])
    (['cat', 'dog'], ['task_cat'], ['task_', 'task_dog'])
    """
    if len(cols) > 1 and all(c.startswith(TASK_PREFIX) for c in cols):
        stripped = [c[len(TASK_PREFIX):] for c in cols]
        if all(stripped) and len(set(stripped)) == len(stripped):
            return stripped
    return list(cols)


def _task_frame(frame: pd.DataFrame, cols: list[str], names: list[str]) -> pd.Series | pd.DataFrame:
    """The task argument of the audit: one column as a Series named ``names[0]``, several as a DataFrame."""
    if len(cols) == 1:
        return frame[cols[0]].rename(names[0]).reset_index(drop=True)
    out = frame[cols].copy()
    out.columns = names
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- #
# booleans
# --------------------------------------------------------------------------- #
_TRUE_FALSE = {"true": 1, "false": 0}


def _bool_like(s: pd.Series) -> bool:
    """A bool column, or one of True/False (bools or the strings True/true/False/false) with gaps.

    >>> _bool_like(pd.Series(["True", None, "false"])), _bool_like(pd.Series([1, 0]))
    (True, False)
    """
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
    """A :func:`_bool_like` column as 1/0: int64, or float64 where it has gaps.

    >>> _as_zero_one(pd.Series(["True", " false"])).tolist(), _as_zero_one(pd.Series([True, None])).tolist()
    ([1, 0], [1.0, nan])
    """
    if s.dtype == bool:
        return s.astype(np.int64)
    out = s.map(lambda x: x if pd.isna(x) else int(x if isinstance(x, bool) else _TRUE_FALSE[x.strip().lower()]))
    return out.astype(np.int64) if not out.isna().any() else out.astype(np.float64)


def _normalise_bools(groups: list[list[tuple[pd.DataFrame, str | None]]]) -> None:
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


# --------------------------------------------------------------------------- #
# checks of the values: errors name the column and the 1-based row
# --------------------------------------------------------------------------- #
def _where(column: str, file: str | None) -> str:
    """``column 'x'``, followed by ``of FILE`` for a file other than the test data.

    >>> _where("y", None), _where("y", "train.csv")
    ("column 'y'", "column 'y' of train.csv")
    """
    return f"column {column!r}" + (f" of {file}" if file else "")


def _cell(column: str, file: str | None, position: int) -> str:
    """Where a value stands: :func:`_where`, then its 1-based row from its 0-based ``position``.

    >>> _cell("y", None, 0)
    "column 'y', row 1"
    """
    return f"{_where(column, file)}, row {position + 1}"


def _rows(positions: np.ndarray, limit: int = 5) -> str:
    """The 1-based rows of 0-based ``positions``, the first ``limit`` of them, then how many in all.

    >>> _rows(np.arange(3)), _rows(np.arange(7))
    ('1, 2, 3', '1, 2, 3, 4, 5, ... (7 rows in all)')
    """
    shown = ", ".join(str(int(i) + 1) for i in positions[:limit])
    return shown + (f", ... ({len(positions)} rows in all)" if len(positions) > limit else "")


def _check_missing(frame: pd.DataFrame, columns: list[str], file: str | None, attrs: list[str]) -> None:
    """ClickException naming the first column with a missing value and its 1-based rows (``--missing raise``)."""
    for c in dict.fromkeys(columns):
        gaps = np.flatnonzero(frame[c].isna().to_numpy())
        if len(gaps):
            more = f" (also row{'s' if len(gaps) > 2 else ''} {_rows(gaps[1:])})" if len(gaps) > 1 else ""
            raise click.ClickException(
                f"{_cell(c, file, gaps[0])}: missing value{more}; pass --missing drop to leave such rows "
                "out" + (", or --missing group to make the missing values a group" if c in attrs else ""))


def _check_numbers(frame: pd.DataFrame, columns: list[str], file: str | None, what: str,
                   strict: bool = True) -> None:
    """ClickException naming the column and 1-based row of a value that is not a finite number.

    The columns checked are converted to numbers in ``frame`` (in place).
    ``what`` names them in the message; ``"weights"`` also refuses negative
    values. ``strict=False`` (prediction columns, which may hold class
    names): only a column whose values are mostly numbers is checked.
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
            raise click.ClickException(f"{_cell(c, file, bad[0])}: {s.iloc[bad[0]]!r} is not a number ({what})")
        inf = np.flatnonzero(np.isinf(num.to_numpy(dtype=np.float64, na_value=0.0)))
        if len(inf):
            raise click.ClickException(f"{_cell(c, file, inf[0])}: {num.iloc[inf[0]]} is not finite ({what})")
        if what == "weights":
            neg = np.flatnonzero((num < 0).to_numpy())
            if len(neg):
                raise click.ClickException(f"{_cell(c, file, neg[0])}: weight {num.iloc[neg[0]]:g} is "
                                           "negative (weights are >= 0)")
        frame[c] = num


def _check_predictions(pairs: Sequence[tuple[pd.Series, pd.Series, pd.Series | None, str, str]]) -> None:
    """ClickException naming the column and 1-based row of a prediction that is no class of its ground truth.

    ``pairs``: ``(truth, prediction, training truth or None, truth column,
    prediction column)``. Against a 0/1 truth, a number in [0, 1] is a
    probability; anything else must be a class of the truth (test or train).
    """
    from biasamp.report._attributes import _fmt_label

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
                    f"{_cell(pcol, None, bad[0])}: {_fmt_label(v)} is neither a class of column {tcol!r} "
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
            raise click.ClickException(f"{_cell(pcol, None, bad[0])}: "
                                       f"{_fmt_label(v) if isinstance(v, (int, float, np.number)) else repr(v)} "
                                       f"is not a class of column {tcol!r} ({shown}){hint}")


# --------------------------------------------------------------------------- #
# library errors renamed to columns
# --------------------------------------------------------------------------- #
_ARGUMENTS = ("attr_val_scores", "task_val_scores", "sensitive_features", "sample_weight", "attr_train",
              "task_train", "attr_pred", "task_pred", "y_true", "y_pred", "attr", "task")
_ARG_RE = re.compile(r"(?<![\w'\"\[.])(" + "|".join(_ARGUMENTS) + r")(?![\w'\"\]])")
_VERBS = (" has ", " have ", " contains ", " is ", " must ", " holds ", " could ", " and ", " or ", ":")


def _name_columns(message: str, columns: dict[str, Any]) -> str:
    """A library error with the argument names (``attr``, ``y_true``) replaced by the CSV columns.

    ``columns``: argument -> how to name it (``"column 'sex'"``); for several
    attributes, ``columns["attribute <name>"]`` holds that attribute's. Row
    numbers the library gives (0-based positions) become 1-based data rows.

    >>> _name_columns("attr has missing values (rows 0, 4)", {"attr": "column 'sex'"})
    "column 'sex' has missing values (rows 1, 5)"
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


def _argument_columns(cols: dict[str, Any], weight: str | None, train_path: str | None,
                      combos: list[list[str]]) -> dict[str, Any]:
    """How an error names each argument of the audit: ``{"attr": "column 'sex'", ...}``.

    ``cols``: the columns of :func:`_resolve_columns`; the result is the
    ``columns`` of :func:`_name_columns`.
    """
    task = _columns_text(cols["task"], limit=4)
    out: dict[str, Any] = {"task": task, "y_true": task,
                           "sample_weight": _columns_text([weight]) if weight else "sample_weight"}
    if cols["task_pred"]:
        out["task_pred"] = out["y_pred"] = _columns_text(cols["task_pred"], limit=4)
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
