"""Streamed audit of Parquet data larger than memory (``biasamp audit --stream``).

:func:`stream_audit` computes the report of :func:`biasamp.report.audit` from
a Parquet file or a directory of Parquet files (a "dataset") without loading
it: the rows are read in record batches and counted by the streaming
accumulators of :mod:`biasamp.accumulators`, whose results the report's
section builders render (:class:`biasamp.report.SectionResult`). Terminal,
JSON and HTML renderings are those of the in-memory report.

Reading. One file at a time, with
``pyarrow.parquet.ParquetFile(f).iter_batches(batch_size, columns=...)``,
only the columns the audit needs, in batches of ``batch_size`` rows counted
from the start of each file (a file's last batch shorter). (``pyarrow.dataset`` scanners read ahead
across files, which was measured to grow memory by about one file per file
not yet read.) A directory is searched recursively for ``*.parquet`` /
``*.pq`` files, in sorted path order, skipping names that start with ``.``
or ``_`` (``_SUCCESS``, ``_metadata``, as ``pyarrow.dataset`` does); Hive
partition keys in folder names are not read, so every column must be in the
files. Sizes and row counts come from the file footers (no data read).

Passes over the data:

1. *classes*: the attribute column and, for a single-label task, the task
   column of the test and training data, for their distinct values (skipped
   when the class lists are given). Multi-label task columns are 0/1
   columns: their classes are the column names. With validation scores it
   also counts the positives of the ground truth the thresholds are
   calibrated to (threshold calibration, below).
2. *pre-passes* (a family whose declared ``Prepass`` its settings need: the
   multi-attribute section with ``combinations="observed"`` or ``"all"``):
   the roles it reads of the training rows (the test rows without a
   training set; bar ``"combinations"``) through
   :meth:`~biasamp.accumulators.Accumulator.prepass`, then
   :meth:`~biasamp.accumulators.Accumulator.end_prepass` (the combinations
   M frozen).
3. *counting*: every needed test column, then the training ground truth.
   Each batch updates one accumulator per counted family, by label role
   (:meth:`~biasamp.accumulators.Accumulator.update_roles`).

Everything per family comes from the registry (:mod:`biasamp._families`),
with no table of family keys here: the families counted are those with
streamed counting whose section is chosen, whose counted roles
(``Family.counted_roles``: BiasAmp_MALS's test ground truth stands in for
a missing training set) give one of their statistics and whose
``task_kinds`` take the task (differential fairness: a binary outcome; the
multi-attribute metrics: a multi-label task). Their class lists are the
classes of the roles they read (:class:`~biasamp._family.ClassList`:
BiasAmp→ and the multi-attribute metrics: test and training ground truth
together; BiasAmp_MALS: the training ground truth, else the test one;
fairness: the test data), as the in-memory functions infer them
(``complete_classes``: fairness' one-class task), so the values equal those
of :func:`biasamp.report.audit` on the same rows: exactly for hard labels,
to about 1e-15 for probabilities. Their options are the audit's that they
declare (``AuditConfig.family_options``, ``Family.audit_options``), their
replicates ``n_boot`` or the option their ``n_boot_option`` names.

Decisions (also in ``docs/report.md`` and ``docs/scale.md``):

* **Hashed-group bootstrap intervals for the count-based metrics.** The
  in-memory audit bootstraps the table of distinct rows, which has up to
  one entry per row for multi-label tasks, so it is not bounded. A stream
  instead puts every row in one of 1,000 groups (a hash of its position
  among the rows counted and the seed; rows of sample weight 0, which every
  family drops, are not counted, so they change nothing), sums the group
  tables batch by batch, and draws ``n_boot`` replicates (1,000 by default
  as in memory) by resampling the groups: the grouped form of the Poisson
  bootstrap (docs/inference.md). Smooth statistics get percentile intervals
  (``ci_method="bca"``: BCa, the acceleration from the delete-one-group
  jackknife); the max/min/absolute-value ones the same simultaneous band as
  in memory; the
  tests of no effect, from the counts, are those of the in-memory audit.
  The rows carry intervals and readings like the in-memory report's; with
  ``n_boot=0`` there is no interval and the section notes say so.
* **DPA and LA on a sample.** Their attackers are fitted on rows, so they
  run on a uniform random sample of at most ``dpa_rows`` test rows, drawn
  in one pass (bottom-k of a uniform key per row: deterministic for a
  seed, independent of the batch size, kept in row order). When the data
  has at most ``dpa_rows`` rows the sample is every row, and DPA/LA equal
  the in-memory audit's, intervals included. ``dpa_rows=0`` leaves the two
  sections out.
* **Memory** is bounded by one record batch (and the row group it comes
  from) of the needed columns, the sample, and the count tables:
  ``O(|A|·|T|)`` for BiasAmp→, ``O(|G|·|M|)`` for the multi-attribute
  metrics, whose pass 1 also keeps one row per distinct training attribute
  set.
* **Several workers** (``n_jobs``). Each pass is split into contiguous
  ranges of rows (:meth:`ParquetDataset.ranges`, from the footers' row
  counts; :data:`PARTS_PER_WORKER` per worker, so that progress moves as
  parts end), cut only where a batch of the whole pass starts, so a range's
  batches, and the ``where`` of its errors, are those of one pass. Part
  ``i`` reads test range ``i`` and training range ``i`` (joblib: loky
  processes by default, or whatever backend is active, e.g. a
  ``dask.distributed`` cluster under ``joblib.parallel_config(backend=
  "dask")``), with one BLAS/OpenMP thread and no pyarrow decoding threads.
  It counts from its range's row offset: the rows' bootstrap groups are
  keyed by their positions among the rows counted (passed as ``row_ids``;
  with sample weights, the classes pass also counts each range's rows of
  positive weight, the offsets of the ranges after it) and the sample's
  generator is advanced to the range's first row, so the parts, merged in
  row order (the class
  lists' first-seen order, the pre-pass' distinct sets, the accumulators,
  the bottom-k samples, the error met first), give the report of one
  process: identical for hard labels and for weights whose sums are exact,
  to rounding (1e-15) where floating-point sums are reordered. Every worker
  returns its count tables (the replicate tables included), so the parent
  holds about one set per worker; the progress bars count test rows and
  advance as each part is merged.
* **Missing values** (``missing=``, :ref:`def-missing`) are selected batch by
  batch as the in-memory audit selects them over all rows: ``"drop"`` leaves
  out every test row with a missing value in one of its label columns
  (attribute, task, predictions; training rows: attribute and task) in
  every pass, so the class lists, the pre-passes, the counts, the sample
  and the scan see the rows kept, whose positions among the rows kept key
  their bootstrap groups and sample keys; ``"group"`` makes a missing
  attribute value the class ``"missing"`` (test and training rows each,
  the attribute of every batch then read as in memory the whole column:
  integral floats as integers) and any other missing value is the
  in-memory audit's ``ValueError``. The report says what was dropped or
  grouped (``Report.inputs["rows_test"]``, the sections' notes).
* **Intersections** (``biasamp audit --stream --intersect A,B``): an
  attribute may be a derived column (``StreamColumns.derived``), the
  intersection labels of component columns
  (:func:`~biasamp.report._attributes.intersection_labels`, with the audit's
  ``missing``), computed batch by batch as the batch is read: every pass
  reads the components, the selection of ``missing=`` and the sample see the
  derived column as a column of the file.
* **Positive class as text**: a ``pos_label`` given as a string is matched
  to a task class of the classes pass as ``biasamp audit --pos-label`` does
  (``"1"`` for the class 1), :class:`UnknownPosLabel` when none matches.
* **Threshold calibration** (``attr_val_scores`` / ``task_val_scores``,
  ``biasamp audit --stream --val``): the validation scores are held in
  memory (validation data), the ground truth's positive rate of each label
  is counted by the classes pass (the training rows, else the test rows,
  kept by the row selection of ``missing=`` and, test rows, of positive
  weight, unweighted: the rates of the in-memory audit), the thresholds are
  those of :func:`~biasamp.calibrate_thresholds` on them, and
  every counted batch's score columns become the hard 0/1 predictions of
  its thresholds before the families, the sample and the scan see it
  (``_Reading.calibrated``): the report, its calibration section included,
  is that of the in-memory audit.
* **Captions on the sample.** LIC and DBAC fit attackers on captions, so
  the caption columns (``StreamColumns.captions_pred`` / ``captions``, by
  default those of the in-memory convention the data holds, with a
  ``split`` column: :func:`~biasamp.captioning.section.caption_columns`)
  are read into the sample of DPA and LA, and the captioning section runs
  on it as :func:`biasamp.report.audit` runs it on every row (the same
  options and seed): with at most ``dpa_rows`` rows it equals the
  in-memory section, intervals included; otherwise its notes say it is a
  sample. ``dpa_rows=0``, or rows left out (``missing="drop"``, zero
  weights: the in-memory audit refuses captions then), list it as skipped,
  with the reason.

pyarrow is imported only when data is read.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from biasamp._core.crossfit import STREAM_SPLIT_NOTE
from biasamp._core.labels import _as_array, _check_finite
from biasamp._core.progress import format_size, progress_bar
from biasamp._core.rows import RowFilter, _grouped, _missing_rows
from biasamp._families import REGISTRY
from biasamp._family import TRAIN_ROLES, ClassList, Family
from biasamp.captioning.section import KEY as CAPTION_KEY
from biasamp.captioning.section import NO_SAMPLE, caption_columns, caption_frame
from biasamp.report._config import AuditConfig
from biasamp.report._inputs import _caption_inputs, _rows_entries
from biasamp.report._model import (
    AuditInputs,
    Report,
    SectionResult,
    _build_report,
    _chosen_builders,
)
from biasamp.report._scan import scan_n_boot, statistic_given
from biasamp.report._sections import NO_INTERVAL, family_n_boot
from biasamp.subgroups import ScanAccumulator
from biasamp.subgroups._levels import LevelCount

__all__ = ["ParquetDataset", "RowRange", "StreamColumns", "StreamReadError", "UnknownPosLabel", "parquet_files",
           "stream_audit"]

PARQUET_SUFFIXES = (".parquet", ".pq")
STREAM_INTERVAL = ("intervals: Poisson bootstrap over the streamed rows, grouped (each row in one of 1,000 "
                   "groups whose tables are summed; a replicate draws the groups with replacement, so each row's "
                   "weight is about Poisson(1)); smooth statistics get percentile intervals (in memory the default "
                   "is BCa over the cells; on a stream BCa takes its acceleration from the delete-one-group "
                   "jackknife, --ci-method bca, and measured no better in coverage)")
#: how STREAM_INTERVAL's last words read for another ``ci_method`` than "auto"/"percentile"
_STREAM_METHODS = {"bca": "BCa intervals (the acceleration from the delete-one-group jackknife)",
                   "basic": "basic intervals", "band": "simultaneous-band intervals where the statistic has parts"}
_NO_ROWS = ("calibration",)  # its thresholds are found before counting: it needs no row


def _counted_sections() -> tuple[str, ...]:
    """The sections the accumulators compute: those of the registered families that declare streamed counting."""
    return tuple(f.section for f in REGISTRY if f.stream is not None and f.section is not None)


def _interval_note(ci_method: str) -> str:
    """The note of a streamed section's intervals (:data:`STREAM_INTERVAL`, its method named)."""
    how = _STREAM_METHODS.get(ci_method)
    if how is None:
        return STREAM_INTERVAL
    return STREAM_INTERVAL[:STREAM_INTERVAL.index("smooth statistics")] + f"smooth statistics get {how}"


class StreamReadError(OSError):
    """A Parquet file of the dataset could not be read."""


class UnknownPosLabel(ValueError):
    """``pos_label``, written as text, names no class of the task column.

    Attributes
    ----------
    value : str
        The ``pos_label`` given.
    task : tuple of str
        The task column(s).
    classes : list
        The classes of the task column in the test rows.
    """

    def __init__(self, value: str, task: Sequence[str], classes: Sequence) -> None:
        self.value, self.task, self.classes = value, tuple(task), list(classes)
        super().__init__(f"pos_label {value!r} is not a class of the task column(s) {', '.join(self.task)}; "
                         f"classes: {', '.join(sorted(map(str, self.classes))[:20])}")


def _pq():
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError("reading Parquet needs pyarrow (pip install 'biasamp[parquet]')") from exc
    return pq


def parquet_files(path: str | os.PathLike) -> list[Path]:
    """The Parquet files of a directory, recursively, in sorted order.

    Files named ``*.parquet`` / ``*.pq`` (any case); names starting with
    ``.`` or ``_`` (files or folders) are skipped. Symbolic links to files and
    to folders are followed (a folder reached twice, as through a loop of
    links, is read once); a dangling link with a Parquet name is an error
    (``ValueError``), not a partition silently left out.
    """
    root = Path(path)
    out, seen = [], set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        here = Path(folder)
        st = os.stat(here)
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for name in files:
            p = here / name
            if name.startswith((".", "_")) or p.suffix.lower() not in PARQUET_SUFFIXES:
                continue
            if not p.exists():
                raise ValueError(f"{p} is a dangling symbolic link (to {os.readlink(p)}) in the Parquet dataset "
                                 f"{root}; remove it or restore its target")
            if p.is_file():
                out.append(p)
    out = sorted(out, key=lambda p: p.relative_to(root).as_posix())
    inodes: dict = {}
    for p in out:
        fs = os.stat(p)
        first = inodes.setdefault((fs.st_dev, fs.st_ino), p)
        if first is not p:
            raise ValueError(f"{first} and {p} are the same file (through a symbolic link) in the Parquet dataset "
                             f"{root}: its rows would be counted twice")
    return out


_WIDTHS = {"BOOLEAN": 1, "INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12}
_OBJECT_BYTES = 64  # a string in a pandas object column: the pointer and a small Python str


def _memory_estimate(meta: Any) -> int:
    """Bytes the data of one file takes in memory, from its footer: the larger of its uncompressed size and,
    column chunk by column chunk, rows x the width of a decoded value (8 for INT64/DOUBLE; for a string, 64
    bytes of a pandas object plus the length of its longest min/max statistic), so that a file of tiny
    encoded pages (dictionary/RLE: a "footer bomb") is not taken for a small one."""
    encoded = decoded = 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        encoded += int(group.total_byte_size)
        for j in range(group.num_columns):
            chunk = group.column(j)
            width = _WIDTHS.get(chunk.physical_type)
            if width is None:  # BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY: a string, as long as its longest statistic
                width = _OBJECT_BYTES
                stats = chunk.statistics
                if stats is not None and stats.has_min_max:
                    width += max(len(str(stats.min)), len(str(stats.max)))
            decoded += int(group.num_rows) * width
    return max(encoded, decoded)


@dataclass(frozen=True, eq=False)
class ParquetDataset:
    """A Parquet file, or a directory of Parquet files, described from the file footers only.

    Attributes
    ----------
    path : Path
    files : tuple of Path
        In reading order.
    columns : tuple of str
        Column names of the first file.
    file_columns : tuple of tuple of str
        Column names of every file.
    file_rows : tuple of int
        Rows of every file.
    nbytes : int
        Size of all the data (every column) in memory, estimated from the
        footers: per file, the larger of the uncompressed size and rows x
        the decoded width of every column (see ``_memory_estimate``).
    file_stats : tuple of (int, int)
        Size and modification time (ns) of every file when it was opened:
        a file that changes between two passes (grows, is rewritten) is an
        error (:class:`StreamReadError`), never data read in part.
    """

    path: Path
    files: tuple
    columns: tuple
    file_columns: tuple
    file_rows: tuple
    nbytes: int
    file_stats: tuple = ()

    @classmethod
    def open(cls, path: str | os.PathLike) -> ParquetDataset:
        """Read the footers of ``path`` (a file, or a directory of files).

        Raises
        ------
        ValueError
            A directory holding no Parquet file.
        StreamReadError
            A file whose footer cannot be read.
        ImportError
            pyarrow is missing.
        """
        path = Path(path)
        if path.is_dir():
            files = parquet_files(path)
            if not files:
                raise ValueError(f"{path} is a directory with no Parquet files (*.parquet, *.pq)")
        else:
            files = [path]
        pq = _pq()
        columns, rows, nbytes, stats = [], [], 0, []
        for f in files:
            try:
                stats.append(_stat(f))
                meta = pq.read_metadata(f)
                columns.append(tuple(meta.schema.to_arrow_schema().names))
            except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
                raise StreamReadError(f"cannot read {f}: {type(exc).__name__}: {exc}") from None
            rows.append(int(meta.num_rows))
            nbytes += _memory_estimate(meta)
        return cls(path, tuple(files), columns[0], tuple(columns), tuple(rows), nbytes, tuple(stats))

    @property
    def num_rows(self) -> int:
        """Rows in all the files (from the footers)."""
        return sum(self.file_rows)

    def missing(self, columns: Iterable[str]) -> tuple[Path, list, tuple] | None:
        """The first file lacking some of ``columns``: ``(file, missing, its columns)``; None if none."""
        columns = list(columns)
        for f, cols in zip(self.files, self.file_columns):
            lacking = [c for c in columns if c not in cols]
            if lacking:
                return f, lacking, cols
        return None

    def batch_starts(self, batch_size: int) -> np.ndarray:
        """The dataset rows (0-based, over the files in reading order) where the batches of a pass start.

        A file's rows are cut into batches of ``batch_size`` counted from its
        start; the shorter pieces (a file smaller than a batch, a file's last
        rows) are joined, in order, with the pieces that follow them while
        they fit in ``batch_size`` rows, so that many small files make full
        batches, not one batch each (2,000 files of 4 rows had been 2,000
        batches). :meth:`batches` reads these batches.
        """
        rows = np.asarray(self.file_rows, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)[:-1]
        full, short = rows // batch_size, rows % batch_size
        first = np.repeat(starts, full)  # the full batches: batch_size rows from a file's start on
        full_starts = first + batch_size * (np.arange(len(first)) - np.repeat(np.cumsum(full) - full, full))
        joined: list[int] = []
        end = filled = -1
        for lo, n in zip((starts + full * batch_size)[short > 0].tolist(), short[short > 0].tolist()):
            if lo == end and filled + n <= batch_size:  # follows the previous short piece, and fits with it
                filled += n
            else:
                joined.append(lo)
                filled = n
            end = lo + n
        return np.sort(np.concatenate([full_starts, np.asarray(joined, dtype=np.int64)]))

    def ranges(self, n: int, batch_size: int) -> list[RowRange]:
        """The rows split into at most ``n`` contiguous ranges of about equal size, in order.

        A range is cut only where a batch of the whole run starts
        (:meth:`batch_starts`), so the batches of the ranges are the batches
        of one pass over all the rows; there are never more ranges than
        batches. Always at least one range (with no rows when the dataset has
        none).
        """
        rows = np.asarray(self.file_rows, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
        total = int(starts[-1])
        batch = np.append(self.batch_starts(batch_size), total)
        n = max(1, min(int(n), len(batch) - 1))
        targets = total * np.arange(1, n, dtype=np.int64) // n  # the nearest batch start to each (n: workers)
        up = np.minimum(np.searchsorted(batch, targets, side="left"), len(batch) - 1)
        down = np.maximum(up - 1, 0)
        nearest = np.where(targets - batch[down] <= batch[up] - targets, batch[down], batch[up])
        bounds = sorted({0, total, *nearest.tolist()})
        out: list[RowRange] = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            first, last = np.maximum(starts[:-1], lo), np.minimum(starts[1:], hi)
            files = np.flatnonzero(first < last)
            pieces = tuple((int(f), int(first[f] - starts[f]), int(last[f] - starts[f])) for f in files)
            out.append(RowRange(len(out), lo, pieces))
        return out or [RowRange(0, 0, ())]

    def batches(self, columns: Sequence[str], batch_size: int, bar: Any = None, rows: RowRange | None = None,
                threads: bool = True) -> Iterator[tuple[Any, str]]:
        """``(pyarrow.RecordBatch, where)`` of ``columns``: the batches of :meth:`batch_starts`; ``where`` names
        the file(s) and rows.

        A file's rows come in batches of ``batch_size`` counted from its
        start, its shorter pieces joined with those of the files that follow
        while they fit, whichever ``rows`` are read: the batches of a
        :class:`RowRange` are those of a pass over every row. ``rows``: the
        range to read (default: every row); ``bar`` (a tqdm bar) is advanced
        by the rows of each batch; ``threads``: pyarrow's decoding threads
        (off in worker processes). A file that changed since :meth:`open`
        (its size, time or rows) raises :class:`StreamReadError`.
        """
        for batch, where in _coalesced(self._file_batches(columns, batch_size, rows, threads), batch_size):
            yield batch, where
            if bar is not None:
                bar.update(batch.num_rows)

    def _file_batches(self, columns: Sequence[str], batch_size: int, rows: RowRange | None,
                      threads: bool) -> Iterator[tuple[Any, Path, int]]:
        """``(batch, file, first row)``: each file's rows of ``rows``, in batches of ``batch_size`` from its start."""
        pq = _pq()
        part = rows if rows is not None else self.ranges(1, batch_size)[0]
        for index, lo, hi in part.pieces:
            f = self.files[index]
            try:
                now = _stat(f)
                handle = pq.ParquetFile(f)
            except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
                raise StreamReadError(f"cannot read {f}: {type(exc).__name__}: {exc}") from None
            rows_now = int(handle.metadata.num_rows)
            if (self.file_stats and now != self.file_stats[index]) or rows_now != self.file_rows[index]:
                handle.close()
                raise StreamReadError(
                    f"{f} changed while it was read (rows {self.file_rows[index]:,} -> {rows_now:,}, size "
                    f"{self.file_stats[index][0] if self.file_stats else '?'} -> {now[0]} bytes): the passes over "
                    "the data would read different rows; audit it once it is complete")
            try:
                groups, skip = _row_groups(handle.metadata, lo, hi)
                start, reader = lo, None
                while True:
                    try:
                        if reader is None:
                            reader = _rechunk(handle.iter_batches(batch_size=batch_size, row_groups=groups,
                                                                  columns=list(columns), use_threads=threads),
                                              skip, hi - lo, batch_size)
                        batch = next(reader)
                    except StopIteration:
                        break
                    except Exception as exc:  # noqa: BLE001 - e.g. a corrupt row group
                        raise StreamReadError(f"cannot read {f}: {type(exc).__name__}: {exc}") from None
                    yield batch, f, start
                    start += batch.num_rows
            finally:
                handle.close()


@dataclass(frozen=True)
class RowRange:
    """Contiguous rows of a :class:`ParquetDataset`, the part of a pass one worker reads.

    Attributes
    ----------
    index : int
        Its place among the ranges of the dataset.
    offset : int
        The dataset row (0-based, over the files in reading order) of its
        first row: the position from which the rows' bootstrap groups
        (unweighted data) and sample keys continue.
    pieces : tuple of (int, int, int)
        ``(file index, first row, stop row)`` of each file it covers, rows
        counted from the file's start.
    """

    index: int
    offset: int
    pieces: tuple

    @property
    def num_rows(self) -> int:
        """Rows in the range."""
        return sum(hi - lo for _, lo, hi in self.pieces)


def _row_groups(meta: Any, lo: int, hi: int) -> tuple[list[int] | None, int]:
    """The row groups holding rows ``[lo, hi)`` of a file (None: all of them) and the rows before ``lo`` in them."""
    sizes = np.array([meta.row_group(i).num_rows for i in range(meta.num_row_groups)], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    if lo == 0 and hi == starts[-1]:
        return None, 0
    first = int(np.searchsorted(starts, lo, side="right")) - 1
    stop = int(np.searchsorted(starts, hi, side="left"))
    return list(range(first, stop)), lo - int(starts[first])


def _rechunk(batches: Iterator[Any], skip: int, count: int, size: int) -> Iterator[Any]:
    """Batches of ``size`` rows (the last fewer) of the ``count`` rows after the first ``skip`` of ``batches``.

    A batch already of ``size`` rows passes unchanged (no copy); smaller
    pieces are joined.
    """
    pending: list = []
    held = 0
    for batch in batches:
        if skip:
            if batch.num_rows <= skip:
                skip -= batch.num_rows
                continue
            batch, skip = batch.slice(skip), 0
        if batch.num_rows > count:
            batch = batch.slice(0, count)
        count -= batch.num_rows
        while batch.num_rows:
            k = min(size - held, batch.num_rows)
            pending.append(batch if k == batch.num_rows else batch.slice(0, k))
            held += k
            batch = batch.slice(k)
            if held == size:
                yield _joined(pending)
                pending, held = [], 0
        if not count:
            break
    if held:
        yield _joined(pending)


def _stat(path: Path) -> tuple[int, int]:
    """A file's size and modification time (ns): what says that it changed."""
    st = os.stat(path)
    return int(st.st_size), int(st.st_mtime_ns)


def _coalesced(pieces: Iterator[tuple[Any, Path, int]], size: int) -> Iterator[tuple[Any, str]]:
    """``(batch, where)`` of the files' batches: a full one (``size`` rows) as it is, shorter ones joined while
    they fit in ``size`` rows (:meth:`ParquetDataset.batch_starts`)."""
    pending: list = []
    held = 0

    def flush() -> Iterator[tuple[Any, str]]:
        (_, f0, a), (last, f1, b) = pending[0], pending[-1]
        stop = b + last.num_rows - 1
        where = (f"{f0.name}, rows {a:,}-{stop:,}" if len(pending) == 1 else
                 f"{len(pending):,} files from {f0.name}, row {a:,} to {f1.name}, row {stop:,}")
        yield _joined_pieces([p[0] for p in pending]), where

    for batch, f, start in pieces:
        if pending and (batch.num_rows == size or held + batch.num_rows > size):
            yield from flush()
            pending, held = [], 0
        if batch.num_rows == size:
            yield batch, f"{f.name}, rows {start:,}-{start + size - 1:,}"
            continue
        pending.append((batch, f, start))
        held += batch.num_rows
    if pending:
        yield from flush()


def _joined_pieces(batches: list) -> Any:
    """One record batch of the pieces of several files (their columns' types unified where they differ)."""
    if len(batches) == 1 or all(b.schema == batches[0].schema for b in batches):
        return _joined(batches)
    import pyarrow as pa

    table = pa.concat_tables([pa.Table.from_batches([b]) for b in batches], promote_options="permissive")
    return table.combine_chunks().to_batches()[0]


def _joined(batches: list) -> Any:
    """One record batch of consecutive batches (the batch itself when there is one)."""
    if len(batches) == 1:
        return batches[0]
    import pyarrow as pa

    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


@dataclass(frozen=True)
class StreamColumns:
    """Which columns hold what (see the column conventions of ``biasamp audit``).

    Attributes
    ----------
    attr : str
        Protected attribute (1-D class labels).
    task : tuple of str
        One column: a single-label task; several: a multi-label 0/1 task.
    task_names : tuple of str
        Names of the task classes (multi-label) or of the task (one column).
    attr_pred : str, optional
    task_pred : tuple of str, optional
        One per task column.
    weight : str, optional
        Non-negative sample weight of every test row (the count-based
        sections count weighted rows; DPA and LA do not use it).
    features : tuple of str
        The subgroup scan's feature columns (its section runs when there
        are some: ``biasamp audit --stream --features``).
    derived : tuple of (str, tuple of (str, str))
        Columns computed batch by batch, not read: ``(name, ((component,
        column), ...))``, an intersection of attributes
        (:func:`~biasamp.report._attributes.intersection_labels` of the ``column`` values
        named ``component``, with the audit's ``missing``), e.g.
        ``("race x sex", (("race", "race"), ("sex", "sex")))``. ``attr`` and
        ``attr_pred`` may name one; every pass reads its component columns.
    captions_pred : str, optional
        The model's caption of each test row: the captioning section (LIC,
        DBAC) runs on the sample of test rows (``dpa_rows``). By default
        ``caption_pred`` when the data has that column.
    captions : tuple of str
        Human caption columns, read with ``captions_pred``; by default
        ``caption``, else ``caption_1``, ``caption_2``, ... when the data
        has them.
    caption_split : str, optional
        The attackers' ``train`` / ``val`` column read with the captions:
        :func:`stream_audit` sets it to ``split`` when the data has that
        column, as the in-memory audit reads it
        (:func:`~biasamp.captioning.section.caption_columns`).
    """

    attr: str
    task: tuple
    task_names: tuple
    attr_pred: str | None = None
    task_pred: tuple | None = None
    weight: str | None = None
    features: tuple = ()
    derived: tuple = ()
    captions_pred: str | None = None
    captions: tuple = ()
    caption_split: str | None = None

    def __post_init__(self):
        if len(self.task_names) != len(self.task):
            raise ValueError(f"{len(self.task)} task columns but {len(self.task_names)} task names")
        if self.task_pred is not None and len(self.task_pred) != len(self.task):
            raise ValueError(f"{len(self.task)} task columns but {len(self.task_pred)} prediction columns")
        if self.attr_pred is None and self.task_pred is None:
            raise ValueError("no prediction column: give attr_pred and/or task_pred")

    @property
    def multilabel(self) -> bool:
        return len(self.task) >= 2

    def label_columns(self) -> list:
        cols = [self.attr, *self.task, *([self.attr_pred] if self.attr_pred else []), *(self.task_pred or ()),
                *([self.weight] if self.weight else [])]
        return list(dict.fromkeys(cols))

    def test_columns(self) -> list:
        return list(dict.fromkeys([*self.label_columns(), *self.features, *self.caption_columns()]))

    def caption_columns(self) -> list:
        """The caption columns held with the sampled test rows (none without ``captions_pred``)."""
        if self.captions_pred is None:
            return []
        return list(dict.fromkeys([self.captions_pred, *self.captions,
                                   *([self.caption_split] if self.caption_split else [])]))

    def truth_columns(self) -> list:
        return list(dict.fromkeys([self.attr, *self.task]))

    def stored(self, names: Iterable[str]) -> list:
        """The columns of the files that ``names`` are read from (a derived column: its components')."""
        derived = dict(self.derived)
        return list(dict.fromkeys(c for n in names for c in ([c for _, c in derived[n]] if n in derived else [n])))


def _with_derived(batch: Any, names: Sequence[str], columns: StreamColumns, missing: str) -> Any:
    """``batch`` with the derived columns among ``names`` appended (an intersection's labels, as in memory:
    :func:`~biasamp.report._attributes.intersection_labels` of the component columns read as pandas reads them)."""
    import pyarrow as pa

    from biasamp.report._attributes import intersection_labels

    derived = dict(columns.derived)
    wanted = [n for n in dict.fromkeys(names) if n in derived]
    if not wanted:
        return batch
    arrays, fields = list(batch.columns), list(batch.schema.names)
    for name in wanted:
        labels = intersection_labels({part: batch.column(col).to_pandas() for part, col in derived[name]},
                                     missing=missing)
        arrays.append(pa.array(labels.to_numpy(dtype=object), type=pa.string(), from_pandas=True))
        fields.append(name)
    return pa.RecordBatch.from_arrays(arrays, names=fields)


# --------------------------------------------------------------------------- #
# a batch as label arrays
# --------------------------------------------------------------------------- #
def _arrays(batch: Any, names: Iterable[str]) -> dict[str, np.ndarray]:
    return {name: batch.column(name).to_numpy(zero_copy_only=False) for name in dict.fromkeys(names)}


def _task(arrays: dict, cols: Sequence[str]) -> np.ndarray:
    """One column: 1-D labels; several: the (n, K) indicator matrix."""
    if len(cols) == 1:
        return arrays[cols[0]]
    return np.column_stack([arrays[c] for c in cols])


def _role_columns(columns: StreamColumns, role: str) -> list[str]:
    """The columns holding label role ``role`` (a training role: those columns of the training data); [] if none."""
    base = role.removesuffix("_train")
    held = {"attr": [columns.attr], "task": list(columns.task),
            "attr_pred": [columns.attr_pred] if columns.attr_pred else [], "task_pred": list(columns.task_pred or ()),
            "sample_weight": [columns.weight] if columns.weight else []}
    return held.get(base, []) if role != "train_sample_weight" else []  # the training data carries no weights


def _test_roles(columns: StreamColumns) -> tuple[str, ...]:
    """The roles of a batch of test rows: those the columns hold, and ``row_ids``."""
    given = ("attr", "task", "attr_pred", "task_pred", "sample_weight")
    return (*(r for r in given if _role_columns(columns, r)), "row_ids")


def _role_values(arrays: dict, columns: StreamColumns, role: str) -> Any:
    """The labels of ``role`` in a batch's ``arrays`` (a task: 1-D, or the indicator matrix of several columns)."""
    cols = _role_columns(columns, role)
    if not cols:
        return None
    return _task(arrays, cols) if role.removesuffix("_train") in ("task", "task_pred") else arrays[cols[0]]


def _soft(x: np.ndarray) -> bool:
    """Whether predictions hold probabilities (numbers other than 0/1), as ``AuditInputs.is_soft`` decides."""
    return x.dtype.kind in "biuf" and bool(np.any((x != 0) & (x != 1)))


def _uniques(seen: np.ndarray | None, values: np.ndarray) -> np.ndarray:
    u = pd.unique(values)
    return u if seen is None else pd.unique(np.concatenate([seen, u]))


def _class_list(*uniques: np.ndarray | None) -> list:
    """The classes :func:`biasamp.labels.encode_labels` infers from 1-D ground truths with these values."""
    # biasamp.dask imports Dask only inside its functions; this helper needs none
    from biasamp.dask import _classes_from_uniques

    return _classes_from_uniques([u for u in uniques if u is not None])


def _display(classes: Sequence) -> list:
    """Class names as the report lists them (``report._classes``)."""
    return [str(c) for c in sorted(classes, key=str)]


#: the label roles of a batch of test / training rows that the row selection of ``missing=`` reads
_SELECTED = {"test": ("attr", "task", "attr_pred", "task_pred"), "train": TRAIN_ROLES}


@dataclass(frozen=True)
class _Selection:
    """The row selection of ``missing=`` (:ref:`def-missing`), batch by batch, as the in-memory audit makes it
    over all the rows (``Batch.validated``).

    ``"drop"``: a row with a missing value in one of the label roles of its
    source (:data:`_SELECTED`) is left out; ``"group"``: a missing attribute
    value is the class ``"missing"``, another missing value the in-memory
    audit's ``ValueError``. ``grouped``: the sources (``"test"``,
    ``"train"``) whose attribute column holds a missing value (found by the
    classes pass): their attribute is grouped in every batch, as in memory
    the whole column is.
    """

    missing: str = "raise"
    grouped: frozenset = frozenset()

    def columns(self, columns: StreamColumns, source: str) -> list[str]:
        """The columns the selection reads from a batch of ``source`` rows (none with ``missing="raise"``)."""
        if self.missing == "raise":
            return []
        return list(dict.fromkeys(c for r in _SELECTED[source] for c in _role_columns(columns, r)))

    def rows(self, batch: Any, columns: StreamColumns, source: str, where: str) -> tuple[Any, int, int]:
        """``(batch, dropped, grouped)``: the rows of ``batch`` kept, and how many were dropped / will be grouped."""
        if self.missing == "raise":
            return batch, 0, 0
        arrays = _arrays(batch, self.columns(columns, source))
        keep = np.ones(batch.num_rows, dtype=bool)
        grouped = 0
        for role in _SELECTED[source]:
            x = _role_values(arrays, columns, role)
            gap = _missing_rows(x) if x is not None else keep[:0]
            if not gap.any():
                continue
            if self.missing == "drop":
                keep &= ~gap
            elif role.removesuffix("_train") == "attr":
                grouped += int(gap.sum())
            else:  # as in memory: only the attribute is grouped
                try:
                    _check_finite(_as_array(x, role)[0], role)
                except ValueError as exc:
                    raise _located(exc, where) from None
        if keep.all():
            return batch, 0, grouped
        import pyarrow as pa

        return batch.filter(pa.array(keep)), int(np.count_nonzero(~keep)), grouped

    def arrays(self, batch: Any, names: Iterable[str], columns: StreamColumns, source: str) -> dict:
        """:func:`_arrays` of ``batch``, its attribute column grouped where the ``source`` has missing values."""
        out = _arrays(batch, names)
        if source in self.grouped and columns.attr in out:
            x = out[columns.attr]
            out[columns.attr] = _grouped(x, _missing_rows(x), "attr" if source == "test" else "attr_train", False)
        return out

    def sample(self, frame: pd.DataFrame, columns: StreamColumns) -> pd.DataFrame:
        """The sampled test rows with their attribute grouped as the counted rows are."""
        if "test" not in self.grouped:
            return frame
        x = frame[columns.attr]
        return frame.assign(**{columns.attr: _grouped(x, _missing_rows(x), "attr", False)})

    def classes(self, uniques: dict, columns: StreamColumns) -> _Selection:
        """This selection with the sources whose attribute has a missing value (``"group"``), whose distinct
        values in ``uniques`` (by ``(source, column)``) then become the grouped ones (a ``ValueError`` where a
        real class is called ``"missing"``, as in memory)."""
        if self.missing != "group":
            return self
        grouped = set()
        for source, name in (("test", "attr"), ("train", "attr_train")):
            u = uniques.get((source, columns.attr))
            if u is not None and _missing_rows(np.asarray(u)).any():
                uniques[source, columns.attr] = _grouped(np.asarray(u), _missing_rows(np.asarray(u)), name, False)
                grouped.add(source)
        return _Selection(self.missing, frozenset(grouped))


# --------------------------------------------------------------------------- #
# the sample of rows (DPA / LA)
# --------------------------------------------------------------------------- #
class _Reservoir:
    """A uniform random sample of at most ``size`` rows of a stream of record batches.

    Every row gets a uniform key from one seeded generator, drawn in row
    order, and the ``size`` rows with the smallest keys are kept (bottom-k
    sampling): the sample depends on the seed and the row order only, not on
    the batch size. A reservoir of the rows from ``offset`` on starts the
    generator ``offset`` draws in (one 64-bit draw per key), so its keys are
    those of one reservoir over every row, and the sample of ranges merged in
    order (:meth:`merge`) is the sample of the whole stream.
    """

    def __init__(self, size: int, seed: Any, offset: int = 0) -> None:
        self.size = int(size)
        bits = np.random.PCG64(seed)  # numpy.random.default_rng(seed)'s generator
        if offset:
            bits.advance(int(offset))  # random() takes one 64-bit draw per float64
        self.rng = np.random.Generator(bits)
        self.keys = np.empty(0)
        self.rows = np.empty(0, dtype=np.int64)
        self.table: Any = None
        self.seen = int(offset)

    def add(self, batch: Any) -> None:
        import pyarrow as pa

        n = batch.num_rows
        rows = np.arange(self.seen, self.seen + n, dtype=np.int64)
        self.seen += n
        if self.table is None:
            self.table = pa.Table.from_batches([batch.slice(0, 0)])
        if not self.size or not n:
            return
        keys = self.rng.random(n)
        take = np.flatnonzero(keys < self.keys.max()) if len(self.keys) >= self.size else np.arange(n)
        if not len(take):
            return
        part = batch if len(take) == n else batch.take(pa.array(take))
        self._append(pa.Table.from_batches([part]), keys[take], rows[take])

    def _append(self, table: Any, keys: np.ndarray, rows: np.ndarray) -> None:
        """Add rows that follow those held, then keep the ``size`` of smallest keys (in row order)."""
        import pyarrow as pa

        self.table = table if self.table is None else pa.concat_tables([self.table, table],
                                                                        promote_options="permissive")
        self.keys = np.concatenate([self.keys, keys])
        self.rows = np.concatenate([self.rows, rows])
        if len(self.keys) > self.size:
            keep = np.sort(np.argpartition(self.keys, self.size - 1)[: self.size])
            self.table = self.table.take(pa.array(keep))
            self.keys, self.rows = self.keys[keep], self.rows[keep]

    def merge(self, other: _Reservoir) -> _Reservoir:
        """Add the sample of the rows that follow (``other``: a reservoir of the next range); returns ``self``."""
        if other.table is not None:
            self._append(other.table, other.keys, other.rows)
        self.seen = max(self.seen, other.seen)
        return self

    def sample(self) -> pd.DataFrame:
        """The sampled rows, in stream order, as pandas (the dtypes ``pandas.read_parquet`` gives)."""
        import pyarrow as pa

        if self.table is None:
            raise ValueError("no rows were added to the sample")
        order = np.argsort(self.rows, kind="stable")
        return self.table.take(pa.array(order)).to_pandas()


def _sample_inputs(frame: pd.DataFrame, columns: StreamColumns) -> dict:
    """The sample as the label arguments the in-memory ``biasamp audit`` passes (same names and shapes)."""
    frame = frame.reset_index(drop=True)

    def task_like(cols):
        if len(cols) == 1:
            return frame[cols[0]].rename(columns.task_names[0])
        out = frame[list(cols)].copy()
        out.columns = list(columns.task_names)
        return out

    return {
        "attr": frame[columns.attr],
        "task": task_like(columns.task),
        "attr_pred": frame[columns.attr_pred].rename(columns.attr) if columns.attr_pred else None,
        "task_pred": task_like(columns.task_pred) if columns.task_pred else None,
    }


# --------------------------------------------------------------------------- #
# one accumulator per metric family
# --------------------------------------------------------------------------- #
class _Family:
    """The accumulator of registered family ``key``, fed batch by batch; the first exception stops it and becomes
    the section's error.

    ``stage`` orders the parts of a pass that workers count separately
    (``(0, i)``: test range ``i``, ``(1, i)``: training range ``i``); an
    error remembers the stage it happened in, so that merged families keep
    the error a single pass over every row would have met first.
    """

    def __init__(self, key: str, make: Any, errors: str, family: str | None = None,
                 max_memory: int | None = None) -> None:
        self.key = key
        self.max_memory = max_memory  # the most bytes the accumulator's kept distinct rows may hold
        self.family = key if family is None else family  # the registered family it counts (the scan: its statistic's)
        self.errors = errors
        self.acc: Any = None
        self.error: Exception | None = None
        self.stage: tuple = ()
        self.error_stage: tuple = ()
        self.rebuild = False
        try:
            self.acc = make()
        except Exception as exc:
            if errors == "raise":
                raise
            self.error = exc

    def feed(self, where: str, method: str, *args: Any, **kwargs: Any) -> None:
        """Call the accumulator's ``method`` unless the family already failed; ``where``: the rows, for errors."""
        if self.acc is not None:
            acc = self.acc
            self._guarded(lambda: getattr(acc, method)(*args, **kwargs), lambda exc: _located(exc, where),
                          self.stage)

    def _guarded(self, step: Callable[[], Any], error: Callable[[Exception], Exception], stage: tuple) -> None:
        """Run ``step`` and check the memory held; on an error (unless ``errors="raise"``) the family stops
        counting and keeps ``error(exc)``, met at ``stage``."""
        try:
            step()
            self._check_held()
        except Exception as exc:
            if self.errors == "raise":
                raise
            self.acc, self.error, self.error_stage = None, error(exc), stage

    def _check_held(self) -> None:
        """``ValueError`` when the distinct rows a cross-fitted accumulator keeps (to split every row at the end)
        hold more than ``max_memory`` bytes: what bounds a streamed audit's memory without a training set."""
        counting = getattr(self.acc, "family", self.acc)  # the subgroup scan counts with its family's accumulator
        held = getattr(getattr(counting, "state", None), "rowset", None)
        if self.max_memory is None or held is None or held.nbytes <= self.max_memory:
            return
        raise ValueError(
            f"the {held.n_distinct:,} distinct test rows kept to split every row in two folds at the end "
            f"(cross-fitting without a training set) hold {format_size(held.nbytes)}, more than max_memory "
            f"(--max-memory) {format_size(self.max_memory)}: give a training set (--train), turn cross-fitting "
            "off (cross_fit=False, --no-cross-fit), or allow more memory")

    def shipped(self) -> _Family:
        """A copy to count other rows with (in a worker): its accumulator, which has counted nothing yet, travels
        without its zero tables (the replicate tables are ``n_boot`` x the cells), rebuilt by :meth:`unpacked`."""
        out = copy.copy(self)
        if isinstance(self.acc, ScanAccumulator):  # allocates its tables with its first batch
            out.acc = self.acc.copy()
        elif self.acc is not None and self.acc.phase == "count":
            acc = copy.copy(self.acc)
            acc.state, acc.boot = acc.state.shell(), None
            out.acc, out.rebuild = acc, True
        return out

    def unpacked(self) -> _Family:
        """This family ready to count: the zero tables of a :meth:`shipped` accumulator rebuilt; returns ``self``."""
        if self.rebuild:
            self.acc.reset()
            self.rebuild = False
        return self

    def merge(self, other: _Family) -> _Family:
        """Add the counts of ``other`` (the same family over other rows); keep the error met first."""
        if other.error is not None and (self.error is None or other.error_stage < self.error_stage):
            self.acc, self.error, self.error_stage = None, other.error, other.error_stage
        elif self.acc is not None and other.acc is not None:
            acc, theirs = self.acc, other.acc
            self._guarded(lambda: acc.merge(theirs), lambda exc: exc, max(self.stage, other.stage))
        return self

    def result(self, opt: AuditConfig) -> SectionResult:
        error, acc = self.error, self.acc

        def compute():
            if error is not None:
                raise error
            return acc.compute()

        if error is not None or acc is None or not acc.n_boot:
            return SectionResult(compute, notes=[NO_INTERVAL] if acc is not None and not acc.n_boot else [])
        try:
            boot = acc.bootstrap(level=opt.level, ci_method=opt.ci_method)
        except ValueError as exc:
            return SectionResult(compute, notes=[f"no bootstrap interval: {exc}"])
        # the one note a stream adds to the section's own: where its folds came from (when it cross-fitted)
        folds = [n for n in boot.notes if n == STREAM_SPLIT_NOTE]
        return SectionResult(compute, notes=[_interval_note(opt.ci_method), *folds], bootstrap=boot)


def _located(exc: Exception, where: str) -> Exception:
    """``exc`` with where it happened appended to its message (same type when possible)."""
    if not where:
        return exc
    try:
        out = type(exc)(f"{exc} (in {where})")
    except Exception:  # noqa: BLE001 - an exception type with another signature
        return exc
    return out.with_traceback(exc.__traceback__)


# --------------------------------------------------------------------------- #
# the driver
# --------------------------------------------------------------------------- #
def _bar(total: int | None, desc: str, progress: Any) -> Any:
    return progress_bar(total=total, desc=desc, progress=progress, unit="rows", unit_scale=True, tqdm_class=tqdm)


@dataclass(frozen=True)
class _Reading:
    """What every part of a pass reads: the datasets, the columns, the batch size and the rows' selection."""

    data: ParquetDataset
    train: ParquetDataset | None
    columns: StreamColumns
    batch_size: int
    threads: bool = True  # pyarrow's decoding threads: off in worker processes (one core each)
    selection: _Selection = _Selection()  # missing=: set after the classes pass (the attribute's missing values)
    thresholds: tuple = ()  # (role, Thresholds) of the calibrated predictions: set after the classes pass

    def calibrated(self, batch: Any, where: str) -> Any:
        """``batch`` with the score columns of each calibrated prediction role replaced by the hard 0/1 (int8)
        predictions of its thresholds, as the in-memory audit replaces the test scores (:ref:`def-calibration`)."""
        if not self.thresholds:
            return batch
        import pyarrow as pa

        arrays, names = list(batch.columns), list(batch.schema.names)
        for role, th in self.thresholds:
            cols = _role_columns(self.columns, f"{role}_pred")
            scores = _role_values(_arrays(batch, cols), self.columns, f"{role}_pred")
            hard = np.zeros((0, len(cols)), dtype=np.int8)  # a batch of no row (all of weight 0, dropped)
            try:  # a missing score: the in-memory audit's error, naming the argument
                if len(scores):
                    _check_finite(_as_array(scores, f"{role}_pred")[0], f"{role}_pred")
                    hard = th.apply(np.asarray(scores, dtype=np.float64).reshape(len(scores), len(cols)))
            except ValueError as exc:
                raise _located(exc, where) from None
            for j, name in enumerate(cols):
                arrays[names.index(name)] = pa.array(np.ascontiguousarray(hard[:, j]))
        return pa.RecordBatch.from_arrays(arrays, names=names)

    def batches(self, source: str, names: Sequence[str], bar: Any, rows: RowRange | None) -> Iterator[tuple[Any, str]]:
        """:meth:`ParquetDataset.batches` of the ``source`` rows (``"test"``/``"train"``), the columns ``names``
        (the derived ones computed from their components, :attr:`StreamColumns.derived`)."""
        ds = self.data if source == "test" else self.train
        assert ds is not None
        for batch, where in ds.batches(self.columns.stored(names), self.batch_size, bar, rows, self.threads):
            yield _with_derived(batch, names, self.columns, self.selection.missing), where


#: parts of a pass per worker process: the progress bars advance as each part ends, so with one part per worker
#: they would stay at 0 until the workers all end together; a few parts each let them move (merged in row order,
#: the report is that of one process whatever the number of parts)
PARTS_PER_WORKER = 4


def _workers(n_jobs: int) -> int:
    """Worker processes for ``n_jobs`` under the active joblib backend (1: none, the passes run here)."""
    if n_jobs == 1:
        return 1
    from joblib import effective_n_jobs

    return max(1, int(effective_n_jobs(n_jobs)))


def _in_worker(func: Callable[..., Any], job: tuple) -> tuple[bool, Any]:
    """``func(*job)`` in a worker process, BLAS/OpenMP on one thread: ``(False, result)`` or ``(True, exception)``.

    An exception is returned, not raised, so that the parent raises the one
    of the first part in row order, whichever worker ends first.
    """
    from threadpoolctl import threadpool_limits

    try:
        with threadpool_limits(limits=1):
            return False, func(*job)
    except Exception as exc:  # noqa: BLE001 - re-raised by the parent, in order
        return True, exc


def _run_parts(func: Callable[..., Any], jobs: list[tuple], rows: list[int], workers: int, bar: Any) -> Iterator[Any]:
    """``func(*job)`` for every job, results in order.

    One job: here, ``bar`` advanced batch by batch. Several: in ``workers``
    processes of the active joblib backend (loky by default, or a
    ``dask.distributed`` cluster under ``joblib.parallel_config(backend="dask")``),
    ``bar`` advanced by each job's ``rows`` as its result arrives, in order
    (the driver cuts every pass into :data:`PARTS_PER_WORKER` parts per
    worker, so the bar moves while the workers run); the first failed job, in
    order, raises its exception here.
    """
    if len(jobs) == 1:
        yield func(*jobs[0], bar=bar)
        return
    from joblib import Parallel, delayed

    calls = [delayed(_in_worker)(func, job) for job in jobs]
    # one job per batch: joblib's automatic batching pickles the jobs of a batch together, so jobs sharing an
    # object (the families a pre-pass fills in place) would share it in the worker and count each other's rows
    options = {"n_jobs": min(workers, len(jobs)), "batch_size": 1}
    try:
        results = Parallel(**options, return_as="generator")(calls)
    except TypeError:  # joblib < 1.3: no generator output
        results = Parallel(**options)(calls)
    for n, (failed, value) in zip(rows, results):
        if failed:
            raise value
        bar.update(n)
        yield value


def _jobs(test: list[RowRange], train: list[RowRange]) -> list[tuple[RowRange | None, RowRange | None]]:
    """Range ``i`` of the test rows with range ``i`` of the training rows, one worker's part of a pass."""
    return [(test[i] if i < len(test) else None, train[i] if i < len(train) else None)
            for i in range(max(len(test), len(train)))]


def _part_rows(*ranges: RowRange | None) -> int:
    return sum(r.num_rows for r in ranges if r is not None)


def _positive_weight(batch: Any, weight: str | None) -> tuple[Any, int]:
    """``(batch, zero)``: the rows of ``batch`` of positive weight (all of them without a weight column), and how
    many of weight 0 were left out (a negative or missing weight is the families' error, raised as they count)."""
    if weight is None:
        return batch, 0
    w = batch.column(weight).to_numpy(zero_copy_only=False)
    zero = np.asarray(w == 0)
    if not zero.any():
        return batch, 0
    import pyarrow as pa

    return batch.filter(pa.array(~zero)), int(np.count_nonzero(zero))


# ---- pass 1: the classes ------------------------------------------------------ #
def _classes_part(reading: _Reading, find: list[str], weights: bool, features: tuple, truth: _Positives,
                  test: RowRange | None, train: RowRange | None, bar: Any = None) -> tuple[dict, int, dict, dict,
                                                                                            _Positives]:
    """The distinct values of the columns ``find`` in ``test`` and ``train`` rows, by ``(source, column)``,
    with ``weights`` the number of ``test`` rows of positive weight, what the levels of the scan's
    ``features`` need from the ``test`` rows (:class:`~biasamp.subgroups._levels.LevelCount` by column), the
    rows the selection of ``missing=`` keeps by source, and the positives of the ground truth that threshold
    calibration reads (``truth``, an empty count to fill): all of it from the rows it keeps."""
    truth = copy.deepcopy(truth)  # this part's own count, which the caller adds to ``truth``
    uniques: dict = {}
    weight = reading.columns.weight if weights else None
    positive = 0
    levels = {name: LevelCount(name) for name in features}
    kept = {"test": 0, "train": 0}
    for source, ds, rows in (("test", reading.data, test), ("train", reading.train, train)):
        if ds is None or rows is None:
            continue
        test_rows = source == "test"
        values = list(dict.fromkeys([*find, *([weight] if weight and test_rows else [])]))
        counted = truth.columns(reading.columns) if source == truth.source else []
        read = list(dict.fromkeys([*values, *counted, *(features if test_rows else ()),
                                   *reading.selection.columns(reading.columns, source)]))
        if not read:
            continue
        position = rows.offset
        # the bar counts the test rows (the training rows are read too, unannounced)
        for batch, where in reading.batches(source, read, bar if test_rows else None, rows):
            raw = batch.num_rows
            batch, _, _ = reading.selection.rows(batch, reading.columns, source, where)
            kept[source] += batch.num_rows
            if weight and test_rows:  # rows of weight 0 are left out, as in memory: classes and levels of the others
                batch, _ = _positive_weight(batch, weight)
            arrays = _arrays(batch, values)
            if counted:
                truth.add(_arrays(batch, counted), reading.columns, reading.selection.missing, where)
            for name in find:
                uniques[source, name] = _uniques(uniques.get((source, name)), arrays[name])
            if weight and test_rows:
                positive += int(np.count_nonzero(np.asarray(arrays[weight]) > 0))
            if test_rows and features:
                ids = np.arange(position, position + batch.num_rows, dtype=np.int64)
                for name in features:  # pandas, as the in-memory audit reads the column
                    try:
                        levels[name].add(batch.column(name).to_pandas(), ids)
                    except ValueError as exc:
                        raise _located(exc, where) from None
            position += raw
    return uniques, positive, levels, kept, truth


@dataclass
class _Positives:
    """The ground truth's positives per label of each calibrated role (``"attr"``, ``"task"``), counted over the
    rows kept of ``source`` (``"train"``, else ``"test"``), as the in-memory audit calibrates on the training
    truth, else the test truth, after its row selection
    (:func:`~biasamp.report._inputs.truth_positives`)."""

    source: str
    roles: tuple
    n: int = 0
    positives: dict = field(default_factory=dict)

    def columns(self, columns: StreamColumns) -> list[str]:
        """The columns it counts."""
        return list(dict.fromkeys(c for r in self.roles for c in _role_columns(columns, r)))

    def add(self, arrays: dict, columns: StreamColumns, missing: str, where: str) -> None:
        """Count a batch's rows (already selected) and positives; the in-memory error, located, for labels that
        cannot be calibrated (a missing attribute value grouped by ``missing="group"`` is the class "missing")."""
        from biasamp.report._inputs import truth_positives

        rows = len(next(iter(arrays.values())))
        if not rows:  # every row of the batch dropped (missing values, weight 0)
            return
        for role in self.roles:
            x = _role_values(arrays, columns, role)
            gap = _missing_rows(x)
            name = role if self.source == "test" else f"{role}_train"
            try:
                if gap.any() and missing == "raise":  # the in-memory audit's error, naming the argument
                    _check_finite(_as_array(x, name)[0], name)
                elif gap.any() and role == "attr":  # missing="group": the class "missing"
                    x = _grouped(x, gap, name, False)
                count = truth_positives(role, x)
            except ValueError as exc:
                raise _located(exc, where) from None
            self.positives[role] = self.positives.get(role, 0) + count
        self.n += rows

    def merge(self, other: _Positives) -> _Positives:
        """Add the counts of other rows; returns ``self``."""
        for role, count in other.positives.items():
            self.positives[role] = self.positives.get(role, 0) + count
        self.n += other.n
        return self


# ---- pass 2: the pre-passes (the multi-attribute combinations) --------------------- #
def _prepass_source(family: Family, has_train: bool) -> str:
    """The rows a family's pre-pass reads: the training rows when the stream counts them for it and the pre-pass
    reads training roles, else the test rows (which then stand in for them, as in its declared ``Prepass``)."""
    decl = family.stream
    assert decl is not None and decl.prepass is not None
    trains = has_train and decl.count_train is not None and any(r in TRAIN_ROLES for r in decl.prepass.reads)
    return "train" if trains else "test"


def _prepass_roles(family: Family, source: str, columns: StreamColumns) -> tuple[str, ...]:
    """The roles a family's pre-pass reads from a batch of ``source`` rows (and the test rows' weights)."""
    decl = family.stream
    assert decl is not None and decl.prepass is not None
    train = source == "train"
    roles = [r for r in decl.prepass.reads if (r in TRAIN_ROLES) == train and _role_columns(columns, r)]
    weight = "train_sample_weight" if train else "sample_weight"
    return (*roles, *([weight] if _role_columns(columns, weight) else []))


def _collect_part(reading: _Reading, families: dict[str, _Family], source: str, roles: tuple[str, ...],
                  rows: RowRange, bar: Any = None) -> dict[str, _Family]:
    """The pre-pass of ``families`` over ``rows`` of the ``source`` data (``"train"``/``"test"``): every batch's
    ``roles`` through :meth:`~biasamp.accumulators.Accumulator.prepass`."""
    columns = reading.columns
    ds = reading.train if source == "train" else reading.data
    assert ds is not None
    cols = list(dict.fromkeys(c for r in roles for c in _role_columns(columns, r)))
    selection = reading.selection
    for family in families.values():
        family.stage = (0, rows.index)
    read = list(dict.fromkeys([*cols, *selection.columns(columns, source)]))
    for batch, where in reading.batches(source, read, bar, rows):
        batch, _, _ = selection.rows(batch, columns, source, where)
        arrays = selection.arrays(batch, cols, columns, source)
        values = {r: _role_values(arrays, columns, r) for r in roles}
        for family in families.values():
            family.feed(where, "prepass", values)
        if all(family.acc is None for family in families.values()):
            break
    return families


# ---- pass 3: counting ------------------------------------------------------------ #
@dataclass
class _Counted:
    """What the counting pass over some rows found: the families' counts, the sample, the rows."""

    families: dict[str, _Family]
    sample: _Reservoir
    soft: dict[str, bool]
    n_test: int
    n_train: int
    rows: tuple[RowFilter, RowFilter]  # what the selection of missing= did to the test and the training rows

    def merge(self, other: _Counted) -> _Counted:
        """Add the counts of the rows that follow (``other``); returns ``self``."""
        for key, family in self.families.items():
            family.merge(other.families[key])
        self.sample.merge(other.sample)
        self.soft = {role: self.soft[role] or other.soft[role] for role in self.soft}
        self.n_test += other.n_test
        self.n_train += other.n_train
        self.rows = (self.rows[0] + other.rows[0], self.rows[1] + other.rows[1])
        return self


def _count_part(reading: _Reading, fam: dict[str, _Family], sample: tuple[int, Any], test: RowRange | None,
                train: RowRange | None, kept: int = 0, selected: int | None = None, bar: Any = None) -> _Counted:
    """Count ``test`` rows, then ``train`` rows: every family's accumulator, and the sample of test rows.

    A batch of test rows is given to every family by label role, as its
    declaration says it counts them (``Family.counted_roles``), a batch of
    training rows (``attr_train``, ``task_train``) to every family that counts
    training rows, each on the rows the selection of ``missing=`` keeps.
    Every test row's bootstrap group is fixed by its ``row_ids``: its
    position among the test rows the families count (those kept of positive
    weight, which are all of those kept without weights; ``kept``: how many
    come before ``test``), and its sample key and the scan's row id by its
    position among the rows kept (``selected``: how many come before
    ``test``; None: every row is kept), the generator advanced to it, so
    ranges counted apart add up to one pass over all rows.
    """
    columns, has_train = reading.columns, reading.train is not None
    selection, missing = reading.selection, reading.selection.missing
    test_rows, train_rows = RowFilter(missing, 0), RowFilter(missing, 0)
    if selected is None:
        selected = test.offset if test is not None else 0
    fam = {key: family.unpacked() for key, family in fam.items()}
    declared = {key: REGISTRY[family.family] for key, family in fam.items()}
    trains = {key: _counts_train(family, has_train) for key, family in declared.items()}
    scan = fam.get("scan")
    if scan is not None:  # the subgroup scan counts training rows where its accumulator says so
        trains["scan"] = scan.acc is not None and scan.acc.train
    # rows of weight 0 are left out as in memory (Batch.validated): the rows' positions, the scan's row ids and the
    # sample's keys count the rows kept of positive weight (``kept`` of them before ``test``)
    if columns.weight is not None:
        selected = kept
    reservoir = _Reservoir(*sample, offset=selected)
    soft = {"attr_pred": False, "task_pred": False}
    n_test = n_train = 0
    if test is not None:
        for family in fam.values():
            family.stage = (0, test.index)
        position = selected
        raw = selected  # the rows' positions among the test rows kept: the scan's row ids, as in memory
        for batch, where in reading.batches("test", columns.test_columns(), bar, test):
            given = batch.num_rows
            batch, dropped, grouped = selection.rows(batch, columns, "test", where)
            batch, zero = _positive_weight(batch, columns.weight)
            batch = reading.calibrated(batch, where)
            test_rows += RowFilter(missing, given, dropped, grouped, zero)
            if not batch.num_rows:  # every row dropped or of weight 0: nothing to count (a family refuses no row)
                reservoir.add(batch)
                continue
            arrays = selection.arrays(batch, columns.label_columns(), columns, "test")
            attr, task = arrays[columns.attr], _task(arrays, columns.task)
            attr_pred = arrays[columns.attr_pred] if columns.attr_pred is not None else None
            task_pred = _task(arrays, columns.task_pred) if columns.task_pred is not None else None
            w = arrays[columns.weight] if columns.weight else None
            # the rows' bootstrap groups: keyed by their position among the rows counted
            ids = np.arange(position, position + batch.num_rows, dtype=np.int64)
            position += batch.num_rows
            n_test += batch.num_rows
            for role, x in (("attr_pred", attr_pred), ("task_pred", task_pred)):
                if x is not None and not soft[role]:
                    soft[role] = _soft(x)
            # the attribute named by its column, as in memory (the fairness tables name their feature by it)
            roles = {"attr": pd.Series(attr, name=columns.attr), "task": task, "attr_pred": attr_pred,
                     "task_pred": task_pred, "sample_weight": w, "row_ids": ids}
            for key, family in fam.items():
                if key == "scan":
                    frame = pd.DataFrame({c: batch.column(c).to_pandas() for c in columns.features})
                    family.feed(where, "update", frame, {r: v for r, v in roles.items() if r != "row_ids"},
                                row_ids=np.arange(raw, raw + batch.num_rows, dtype=np.int64))
                else:
                    family.feed(where, "update_roles", declared[key].counted_roles(roles, trains[key]))
            raw += batch.num_rows
            reservoir.add(batch)
    if train is not None and reading.train is not None:
        for family in fam.values():
            family.stage = (1, train.index)
        for batch, where in reading.batches("train", columns.truth_columns(), None, train):  # the bar: test rows
            given = batch.num_rows
            batch, dropped, grouped = selection.rows(batch, columns, "train", where)
            train_rows += RowFilter(missing, given, dropped, grouped)
            if not batch.num_rows:  # every row dropped
                continue
            arrays = selection.arrays(batch, columns.truth_columns(), columns, "train")
            attr, task = arrays[columns.attr], _task(arrays, columns.task)
            n_train += batch.num_rows
            for key, family in fam.items():
                if trains[key]:
                    family.feed(where, "update_train" if key == "scan" else "update_roles",
                                {"attr_train": attr, "task_train": task})
    return _Counted(fam, reservoir, soft, n_test, n_train, (test_rows, train_rows))


def _val_scores(columns: StreamColumns, attr_val_scores: Any, task_val_scores: Any) -> dict:
    """The validation scores by role (``"task"``, ``"attr"``, as the in-memory audit calibrates them), checked as it
    checks them before reading any row: finite numbers, a prediction column to threshold, the shapes."""
    from biasamp.report._inputs import check_calibration

    out = {}
    for role, scores in (("task", task_val_scores), ("attr", attr_val_scores)):
        if scores is None:
            continue
        _check_finite(_as_array(scores, f"{role}_val_scores")[0], f"{role}_val_scores")
        preds = _role_columns(columns, f"{role}_pred")
        truth = _role_columns(columns, role)
        check_calibration(role, scores, (1 if len(preds) == 1 else 2) if preds else None,
                          (0,) if len(truth) == 1 else (0, len(truth)))
        out[role] = scores
    return out


def _pos_label(value: str, columns: StreamColumns, given: Sequence | None, uniques: Mapping) -> Any:
    """The task class written ``value`` (``biasamp audit --pos-label``: ``1`` for "1" in a numeric column), among
    the classes ``given``, else the test rows' (``uniques``); :class:`UnknownPosLabel` when there is none."""
    from biasamp.report._attributes import _match

    classes = list(given) if given is not None else list(uniques.get(("test", columns.task[0]), ()))
    found = _match(value, classes)
    if found is None:
        raise UnknownPosLabel(value, columns.task, classes)
    return found


def _counts_train(family: Family, has_train: bool) -> bool:
    """Whether the family counts the stream's training rows (there are some, and it declares ``count_train``)."""
    return has_train and family.stream is not None and family.stream.count_train is not None


def _family_classes(wanted: ClassList, read: set, *, columns: StreamColumns, given: Mapping[str, Sequence | None],
                    uniques: Mapping[tuple[str, str], np.ndarray]) -> list:
    """A family's class list ``wanted``: the classes of the roles it reads of ``wanted.roles`` (``read``), as the
    in-memory function infers them from those labels; ``given``: the lists given (by ``"attr"``/``"task"``), else
    ``uniques``: the distinct values of a column by ``(source, column)`` (source ``"test"``/``"train"``). A
    multi-label task's classes are its columns' names."""
    roles = [r for r in wanted.roles if r in read] or list(wanted.roles)
    task = roles[0].removesuffix("_train") == "task"
    if task and columns.multilabel:
        return list(columns.task_names)
    shown = given.get("task" if task else "attr")
    if shown is not None:
        return list(shown)
    column = columns.task[0] if task else columns.attr
    return _class_list(*(uniques.get(("train" if r in TRAIN_ROLES else "test", column)) for r in roles))


def _family_setup(family: Family, config: AuditConfig, columns: StreamColumns,
                  class_list: Callable[[ClassList, set], list], present: Mapping[str, Any],
                  train: bool) -> tuple[dict, dict] | None:
    """``(classes, options)`` of the accumulator a streamed audit counts ``family`` with; None where it does not apply.

    All from its declaration: the test roles it counts (``Family.counted_roles``
    of the roles ``present``, and the training roles when it counts the
    stream's training rows, ``train``) must give one of its statistics (the
    predictions its ``needs`` name); its class lists are those of the roles
    it reads (:class:`~biasamp._family.ClassList`), as the in-memory function
    infers them; the task they show must be of a kind it takes
    (``task_kinds``); its options are the audit's that it declares
    (:meth:`AuditConfig.family_options`), as an audit applies them
    (``audit_options``), and its class lists completed as its function
    completes them (``complete_classes``).
    """
    decl = family.stream
    assert decl is not None
    read = {r for r, v in family.counted_roles(present, train).items() if v is not None}
    if not family.computes(read):
        return None
    read |= set(TRAIN_ROLES) if train else set()
    classes = {key: class_list(wanted, read) for key, wanted in decl.classes.items()}
    task = classes.get("task", ())
    kind = "multilabel" if columns.multilabel else "binary" if len(task) == 2 else "single"
    if kind not in family.task_kinds:
        return None
    options = config.family_options(family.key, train=train)
    if family.audit_options is not None:
        options, _ = family.audit_options(options, task, columns.multilabel)
    if family.complete_classes is not None:
        classes = family.complete_classes(classes, options)
    return classes, options


def _scan_family(config: AuditConfig, columns: StreamColumns, class_list: Callable[[ClassList, set], list],
                 levels: Mapping[str, LevelCount], has_train: bool) -> _Family | None:
    """The subgroup scan's accumulator, set up as the in-memory audit's section calls :func:`biasamp.scan`.

    The statistic (``scan_statistic``, else A→T with task predictions, else
    T→A), its family's class lists from the roles given (test and training
    ground truth together, as :func:`biasamp.scan` finds them), the family's
    options, the audit's seed, level and replicates, and the features'
    levels found in the first pass. None when no statistic applies.
    """
    name = statistic_given(config, attr_pred=columns.attr_pred is not None, task_pred=columns.task_pred is not None)
    if name is None:
        return None
    family, _ = REGISTRY.statistic(name)
    decl = family.stream
    assert decl is not None
    read = {r for r in _test_roles(columns) if r != "row_ids"} | (set(TRAIN_ROLES) if has_train else set())
    train = has_train and decl.count_train is not None

    def make() -> ScanAccumulator:
        found = [levels[c].levels() for c in columns.features]
        classes = {key: class_list(wanted, read) for key, wanted in decl.classes.items()}
        return ScanAccumulator(name, classes, found, max_order=config.scan_max_order, n_boot=scan_n_boot(config),
                               random_state=config.seed("scan"), train=train,
                               **config.family_options(family.key))

    return _Family("scan", make, config.errors, family=family.key, max_memory=config.max_memory)


def _scan_result(family: _Family, config: AuditConfig) -> Callable[[], Any]:
    """The scan section's result, computed when the report asks for it (the counting pass' error raised then)."""
    error, acc = family.error, family.acc

    def result() -> Any:
        if error is not None:
            raise error
        return acc.result(level=config.level, min_group_size=config.scan_min_group_size)

    return result


def _accumulator(key: str, classes: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
    """The accumulator of family ``key`` (:meth:`~biasamp.accumulators.Accumulator.for_family`)."""
    from biasamp.accumulators import Accumulator

    return Accumulator.for_family(key, classes, **options)


def stream_audit(
    data: ParquetDataset,
    columns: StreamColumns,
    *,
    train: ParquetDataset | None = None,
    attr_classes: Sequence | None = None,
    task_classes: Sequence | None = None,
    attr_val_scores: Any = None,
    task_val_scores: Any = None,
    config: AuditConfig | None = None,
    fairness: Mapping[str, Any] | None = None,
    **keywords: Any,
) -> Report:
    """The report of :func:`biasamp.report.audit`, computed from Parquet data read batch by batch.

    Parameters
    ----------
    data : ParquetDataset
        The test rows: ground truth and predictions.
    columns : StreamColumns
        Which columns are the attribute, the task and the predictions.
    train : ParquetDataset, optional
        Training ground truth (the attribute and task columns).
    attr_classes, task_classes : sequence, optional
        Class lists of the attribute and of a single-label task: skip the
        pass that finds them. Every family then uses them (the in-memory
        audit infers, per family, the classes of the test and/or training
        data).
    attr_val_scores, task_val_scores : array-like, optional
        Validation scores, held in memory, as in
        :func:`biasamp.report.audit`: the attribute or task prediction
        columns then hold scores, turned into hard predictions batch by
        batch with per-label thresholds that give the validation scores
        the ground truth's positive rates (the training rows', else the
        test rows'; :ref:`def-calibration`). ``task_val_scores``: 1-D for
        one 0/1 task column, one column per label of a multi-label task.
    config : AuditConfig, optional
        The options, as in :func:`biasamp.report.audit` (the same
        :class:`~biasamp.report.AuditConfig` and defaults); keywords replace
        options of ``config``. Streaming reads ``batch_size`` (rows per
        record batch) and ``dpa_rows`` (size of the uniform random sample of
        test rows on which DPA, leakage amplification and the captioning
        section run, all rows when there are fewer, and any other section
        that needs rows; 0 leaves those sections out, the captioning one
        skipped with the reason). ``n_boot`` / ``n_boot_multi`` are the
        replicates of the hashed-group bootstrap of the count-based sections
        (every row hashed into one of 1,000 groups whose tables are summed
        batch by batch; a replicate resamples the groups; 0: no interval).
        ``ci_method`` reaches the accumulators' bootstrap as it is
        (``"bca"``: the acceleration from the delete-one-group jackknife).
        ``progress``:
        one bar per pass over the data on stderr, its total the test rows
        (from the file footers; a pre-pass over the training rows only
        counts those, and says so), advanced batch by batch in one process
        and part by part under ``n_jobs``.
    fairness : dict, optional
        The former spelling of the group fairness options (``average``,
        ``pos_label``, ``threshold``, ...): the same as passing them as
        keywords.
    **keywords
        Options of :class:`~biasamp.report.AuditConfig`, by name.

    Returns
    -------
    Report
        With the sections and summary rows of the in-memory audit of the
        same rows; ``report.inputs["streamed"]`` describes the streaming.

    Raises
    ------
    StreamReadError
        A file could not be read.
    UnknownPosLabel
        ``pos_label``, a string, matches no class of a single-label task.
    ValueError
        Bad options (as :func:`biasamp.report.audit`), a file lacking a
        column, or a dataset without rows.

    See Also
    --------
    biasamp.report.audit : the in-memory audit.
    biasamp.accumulators : the accumulators that count the batches.

    Examples
    --------
    The demo data in two Parquet files, streamed in batches of 128 rows:

    >>> import tempfile, pandas as pd, pytest
    >>> _ = pytest.importorskip("pyarrow")
    >>> from biasamp.datasets import make_amplification_demo
    >>> from biasamp.report import audit
    >>> d = make_amplification_demo(n_train=500, n_test=400)
    >>> frame = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_"),
    ...                    d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    >>> tmp = tempfile.TemporaryDirectory()
    >>> for i in range(2):
    ...     frame.iloc[200 * i: 200 * (i + 1)].to_parquet(f"{tmp.name}/part-{i}.parquet")
    >>> tasks = tuple(d.task.columns)
    >>> columns = StreamColumns("attr", tuple(f"task_{t}" for t in tasks), tasks, "attr_pred",
    ...                         tuple(f"task_{t}_pred" for t in tasks))
    >>> rep = stream_audit(ParquetDataset.open(tmp.name), columns, batch_size=128, sections=["directional"],
    ...                    progress=False, cross_fit=False)
    >>> ref = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, sections=["directional"],
    ...             progress=False, cross_fit=False)  # the plug-in signs of every row, in both
    >>> rep.table["value"].tolist() == ref.table["value"].tolist(), bool(rep.table["ci_low"].notna().all())
    (True, True)

    Without a training set both cross-fit the signs over all 400 rows at once
    (the stream splits the distinct rows it kept, at the end): the same values.
    >>> tmp.cleanup()
    """
    if fairness is not None:  # the former spelling of the fairness options: keywords like the others
        twice = sorted(set(fairness) & set(keywords))
        if twice:
            raise TypeError(f"{', '.join(twice)} given both in fairness= and as keyword(s); pass them as keywords")
        keywords = {**fairness, **keywords}
    config = AuditConfig.of(config, keywords, "stream_audit")
    opt = config
    chosen = _chosen_builders(config.sections, config.exclude, config.errors)
    batch_size, dpa_rows = config.batch_size, config.dpa_rows
    counted_sections = _counted_sections()
    # the caption columns of the data, as the in-memory audit finds them: held with the sampled test rows
    captioned = None
    if CAPTION_KEY in {b.key for b in chosen}:
        captioned = caption_columns(data.columns, columns.captions_pred, columns.captions)
    read = captioned if dpa_rows else None  # none without a sample
    columns = replace(columns, captions_pred=read["captions_pred"] if read else None,
                      captions=tuple(read["captions"]) if read else (), caption_split=read["split"] if read else None)
    if dpa_rows == 0:  # the sections that need rows are left out (the captioning section: skipped, with the reason)
        chosen = [b for b in chosen if b.key in (*counted_sections, *_NO_ROWS, CAPTION_KEY)]
    for ds, cols, what in ((data, columns.test_columns(), "test"), (train, columns.truth_columns(), "training")):
        gap = ds.missing(columns.stored(cols)) if ds is not None else None
        if gap is not None:
            f, lacking, available = gap
            raise ValueError(f"{what} file {f} lacks the column(s) {lacking}; its columns: {', '.join(available)}")
    if data.num_rows == 0:
        raise ValueError(f"{data.path} holds no rows")
    val_scores = _val_scores(columns, attr_val_scores, task_val_scores)
    truth = counted_truth = _Positives("train" if train is not None else "test", tuple(val_scores))
    keys = {b.key for b in chosen}
    # the parts of every pass: range i of the test rows and range i of the training rows, a few per worker
    workers = _workers(config.n_jobs)
    reading = _Reading(data, train, columns, batch_size, threads=workers == 1, selection=_Selection(config.missing))
    parts = 1 if workers == 1 else workers * PARTS_PER_WORKER
    test_ranges = data.ranges(parts, batch_size)
    train_ranges = train.ranges(parts, batch_size) if train is not None else []
    jobs = _jobs(test_ranges, train_ranges)
    job_rows = [_part_rows(test) for test, _ in jobs]  # the progress bars count test rows

    # ---- pass 1: the classes of the 1-D ground truths --------------------- #
    # (and, with sample weights and several parts, each part's test rows of positive weight: the rows the
    # families count, whose positions key their bootstrap groups)
    # (and, with missing values selected, each part's rows kept and whether the attribute has a missing value)
    uniques: dict = {}
    # with missing="group": the attribute's values say whether it has a missing value (to be grouped)
    find = [columns.attr] if attr_classes is None or config.missing == "group" else []
    if task_classes is None and not columns.multilabel:
        find.append(columns.task[0])
    positives = [0] * len(jobs)
    selected: list = [None] * len(jobs)  # rows kept before each part (None: every row)
    # the weights: rows of weight 0 are left out of the classes and the scan's levels, as in memory, and the rows
    # of positive weight before each part key its rows
    count_weights = columns.weight is not None
    features = tuple(columns.features) if "scan" in keys else ()  # the scan's levels: the features' values
    levels: dict = {name: LevelCount(name) for name in features}
    if find or count_weights or features or config.missing != "raise" or val_scores:
        what = "classes" if find else "feature levels" if features else "weights" if count_weights else "rows"
        rows_kept = {"test": 0, "train": 0}
        with _bar(data.num_rows, what, opt.progress) as bar:
            found = _run_parts(_classes_part, [(reading, find, count_weights, features, truth, *job)
                                               for job in jobs], job_rows, workers, bar)
            for i, (part, positive, counted_levels, part_kept, part_truth) in enumerate(found):
                # into the parts' own counts: ``truth`` travels to the parts not yet started, empty
                counted_truth = part_truth if i == 0 else counted_truth.merge(part_truth)
                positives[i] = positive
                for key, values in part.items():  # in row order: the first-seen order of one pass
                    uniques[key] = _uniques(uniques.get(key), values)
                for name, level in counted_levels.items():
                    levels[name].merge(level)
                selected[i] = rows_kept["test"]
                rows_kept = {side: rows_kept[side] + part_kept[side] for side in rows_kept}
        for side, ds in (("test", data), ("training", train)):
            if config.missing == "drop" and ds is not None and not rows_kept["test" if side == "test" else "train"]:
                raise ValueError(f"no {side} row left to count: missing='drop' dropped every one of the "
                                 f"{ds.num_rows:,} rows of {ds.path} (each has a missing value in a label column)")
        reading = replace(reading, selection=reading.selection.classes(uniques, columns))
    if val_scores:  # the thresholds, from the validation scores and the ground truth's positive rates
        from biasamp.report._inputs import calibration_thresholds

        ndim = {"attr": 1, "task": 2 if columns.multilabel else 1}
        reading = replace(reading, thresholds=tuple(
            (role, calibration_thresholds(scores, ndim[role], counted_truth.positives[role], counted_truth.n))
            for role, scores in val_scores.items()))
    if isinstance(config.pos_label, str) and not columns.multilabel:  # as written: matched to a task class
        config = opt = config.replace(pos_label=_pos_label(config.pos_label, columns, task_classes, uniques))
    kept = np.concatenate([[0], np.cumsum(positives)[:-1]]).astype(int).tolist()

    has_train = train is not None
    class_list = partial(_family_classes, columns=columns, given={"attr": attr_classes, "task": task_classes},
                         uniques=uniques)

    # ---- the accumulators: one per registered family the chosen sections count -------------------- #
    fam: dict[str, _Family] = {}
    present = dict.fromkeys(_test_roles(columns), True)
    for family in REGISTRY:
        if family.stream is None or family.section not in keys:
            continue
        setup = _family_setup(family, config, columns, class_list, present, _counts_train(family, has_train))
        if setup is None:
            continue
        classes, options = setup
        boot = {"n_boot": family_n_boot(opt, family), "random_state": opt.seed(family.key)}
        fam[family.key] = _Family(family.key, partial(_accumulator, family.key, classes, {**options, **boot}),
                                  config.errors, max_memory=opt.max_memory)
    if features:  # the subgroup scan: its own accumulator, counted with the families
        scanned = _scan_family(config, columns, class_list, levels, has_train)
        if scanned is not None:
            fam["scan"] = scanned

    # ---- pass 2: the families' pre-passes (the multi-attribute combinations) ------------------- #
    collecting = {key: f for key, f in fam.items() if f.acc is not None and f.acc.phase == "collect"}
    for source, ds, ranges in (("train", train, train_ranges), ("test", data, test_ranges)):
        group = {key: f for key, f in collecting.items() if _prepass_source(REGISTRY[f.family], has_train) == source}
        if not group or ds is None:
            continue
        roles = tuple(dict.fromkeys(r for f in group.values() for r in _prepass_roles(REGISTRY[f.family], source,
                                                                                       columns)))
        name = " / ".join(dict.fromkeys(REGISTRY[f.family].stream.prepass.name  # type: ignore[union-attr]
                                        for f in group.values()))
        # a pre-pass over the training rows counts them (it reads no test row): its name says so
        with _bar(ds.num_rows, name + (" (training rows)" if source == "train" else ""), opt.progress) as bar:
            collecting_parts = _run_parts(_collect_part, [(reading, group, source, roles, r) for r in ranges],
                                          [r.num_rows for r in ranges], workers, bar)
            collected = next(collecting_parts)
            for part in collecting_parts:
                for key, family in collected.items():
                    family.merge(part[key])
        for key, family in collected.items():
            family.feed("", "end_prepass")
            fam[key] = family

    # ---- pass 3: counting --------------------------------------------------- #
    needs_rows = bool(keys - set(counted_sections + _NO_ROWS))  # DPA, LA, any registered section
    sample = (dpa_rows if needs_rows else 0, opt.seed("stream sample"))
    with _bar(data.num_rows, "counting", opt.progress) as bar:
        shipped = {key: family.shipped() for key, family in fam.items()}
        del fam  # the empty tables: each part rebuilds its own
        counts = _run_parts(_count_part, [(reading, shipped, sample, *job, before, rows_before)
                                          for job, before, rows_before in zip(jobs, kept, selected)],
                            job_rows, workers, bar)
        counted = next(counts)
        for part in counts:
            counted.merge(part)
    fam, soft = counted.families, counted.soft
    n_test, n_train = counted.n_test, (counted.n_train if has_train else None)

    # ---- the report --------------------------------------------------------- #
    attr_test = class_list(ClassList("attr_classes", ("attr",)), {"attr"})  # the classes the test rows show
    task_test = class_list(ClassList("task_classes", ("task",)), {"task"})
    has_ap, has_tp = columns.attr_pred is not None, columns.task_pred is not None
    held_frame = reading.selection.sample(counted.sample.sample(), columns)
    held = _sample_inputs(held_frame, columns)
    names = dict(config.names or {})
    description = {
        "n_test": n_test,
        "n_train": n_train,
        "train_source": "train" if has_train else "test",
        "attribute": names.get("attr") or columns.attr,
        "attribute_classes": _display(attr_test),
        "task": names.get("task") or (columns.task_names[0] if not columns.multilabel else "task"),
        "task_classes": list(columns.task_names) if columns.multilabel else _display(task_test),
        "task_kind": "multi-label" if columns.multilabel else "single-label",
        "attr_pred": None if not has_ap else ("soft" if soft["attr_pred"] else "hard"),
        "task_pred": None if not has_tp else ("soft" if soft["task_pred"] else "hard"),
        "calibrated": sorted(val_scores),
        "streamed": {
            "files": len(data.files),
            "train_files": len(train.files) if train is not None else 0,
            "batch_size": batch_size,
            "dpa_rows": int(dpa_rows),
            "rows_sampled": len(held["attr"]),
        },
    }
    weight = None
    if columns.weight:
        description["weighted"] = True
        weight = held_frame[columns.weight].reset_index(drop=True).to_numpy(dtype=np.float64)
    results = {k: (_scan_result(f, config) if k == "scan" else f.result(config)) for k, f in fam.items()}
    rows = (counted.rows[0], counted.rows[1] if has_train else None)
    inp = AuditInputs({**held, "sample_weight": weight}, n=n_test, n_train=n_train, rows=rows, results=results,
                      description=description, thresholds={role: th.thresholds for role, th in reading.thresholds})
    description.update({k: v for k, v in _rows_entries(inp).items() if k.startswith("rows_")})
    # the captions of the sampled rows: the captioning section runs on them as in memory on every row
    unread = {CAPTION_KEY: NO_SAMPLE} if captioned is not None else {}
    if columns.captions_pred is not None:
        try:
            inp.captions = _caption_inputs(caption_frame(held_frame, columns.captions_pred, columns.captions), inp)
        except ValueError as exc:  # rows left out (missing="drop", zero weights): the in-memory audit's refusal
            unread[CAPTION_KEY] = f"not computed: {exc}"
        else:
            unread = {}
    return _build_report(inp, config, chosen, unread)
