"""The ``biasamp`` command line: ``biasamp audit``, ``biasamp demo``, ``biasamp --version``.

Built on click; this module holds the commands and their options, and
:mod:`biasamp.cli._data` reads and checks their input files. Column
conventions of ``biasamp audit`` (each overridable by an option):

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
  ``<column>_score`` columns of the test file (the validation file is read
  in memory, also when the test data is streamed);
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
accumulators in bounded memory (:mod:`biasamp.report._stream`). The report has the
same sections, values and options (one :class:`~biasamp.report.AuditConfig`
is built from the command's options for either path), with hashed-group
bootstrap intervals for the count-based metrics (every row hashed into one of
1,000 groups whose tables add batch by batch; a replicate resamples the
groups, docs/inference.md); DPA, LA and the captioning section run on a
uniform random sample of ``--dpa-rows`` test rows. ``--jobs N`` splits every pass into N
contiguous ranges of rows counted in worker processes (joblib) and merged in
order: the same report as one process. ``--val`` streams too: the validation
scores are held in memory (not counted in ``--max-memory``), the ground
truth's positive rates are counted in the classes pass and every batch's
scores are thresholded before they are counted, with the in-memory audit's
thresholds and values.
"""

from __future__ import annotations

import dataclasses
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
import pandas as pd
from click.core import ParameterSource

from biasamp._core.escape import terminal
from biasamp._core.progress import format_size
from biasamp._engine.runs import MAX_N_ITER
from biasamp.captioning.section import caption_columns, caption_frame
from biasamp.cli._data import (
    PRED_SUFFIX,
    SCORE_SUFFIX,
    TASK_PREFIX,
    _argument_columns,
    _available,
    _check_missing,
    _check_numbers,
    _check_predictions,
    _is_parquet,
    _name_columns,
    _normalise_bools,
    _not_found,
    _require,
    _resolve_columns,
    _table_kind,
    _task_frame,
    _task_names,
    read_table,
)
from biasamp.report._attributes import INTERSECTION_SEP, _match
from biasamp.report._config import MAX_JOBS, AuditConfig
from biasamp.report._inputs import check_task_count
from biasamp.report._model import NothingComputedError, _write_atomic, audit, section_builders

__all__ = ["main"]

_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _version() -> str:
    from biasamp._core.version import __version__

    return __version__


# --------------------------------------------------------------------------- #
# arguments and outputs
# --------------------------------------------------------------------------- #
def _split(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out.extend(c.strip() for c in v.split(",") if c.strip())
    return out


def _display_names(cols: dict, source: str) -> dict:
    """The report's ``names``: attribute and task columns, and where the data came from."""
    task = ", ".join(cols["task"]) if len(cols["task"]) <= 3 else f"{len(cols['task'])} task columns"
    return {"attr": ", ".join(cols.get("attrs") or [cols["attr"]]), "task": task, "source": source}


_OUTPUT_OPTIONS = {"json_path": "--json", "html_path": "--html", "markdown_path": "--markdown",
                   "latex_path": "--latex", "model_card_path": "--model-card"}
"""The output file options of every command: argument -> option."""


def _check_outputs(common: dict, inputs: list[str | None]) -> None:
    """UsageError (exit 2) for an output that is an input (or inside an input folder), another output, a
    directory, a dangling symbolic link, a block device or socket, or in no folder (docs/safety.md).

    ``common``: the values of :func:`_common_options` (the output paths among
    them); ``inputs``: the input files (None for one not given).
    """
    from biasamp._core.atomic import _check_target, _input_clash

    seen: dict[Path, str] = {}
    for name, option in _OUTPUT_OPTIONS.items():
        path = common[name]
        if path is None:
            continue
        clash = _input_clash(path, inputs)
        if clash is not None:
            what = "is an input file" if Path(clash).resolve() == Path(path).resolve() or not Path(clash).is_dir() \
                else f"is inside the input folder {clash}"
            raise click.UsageError(f"{option} {path} {what}; refusing to overwrite it")
        try:
            target, _ = _check_target(path)
        except (OSError, ValueError) as exc:
            raise click.UsageError(f"{option} {path}: {exc}") from None
        if target in seen:
            raise click.UsageError(f"{option} and {seen[target]} name the same file {path}")
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
        click.echo(f"wrote {terminal(path)}", err=True)
        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            ctx.find_root().meta.setdefault("biasamp_written", []).append(path)


# --------------------------------------------------------------------------- #
# streaming
# --------------------------------------------------------------------------- #
_MAX_SIZE = float(2**60)
"""The largest size ``--max-memory`` takes (1 EiB)."""


def _parse_size(ctx: Any, param: Any, value: Any) -> int | None:
    """A size such as ``500M``, ``2G``, ``1.5GB`` or ``1024`` (bytes); K, M, G, T are powers of 1024."""
    if value is None or isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgtKMGT]?)(?:i?[bB])?\s*", str(value))
    if not m:
        raise click.BadParameter(f"{value!r} is not a size such as 500M, 2G or 1.5GB (K, M, G, T: powers of 1024)")
    size = float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()]
    if not size <= _MAX_SIZE:  # also inf: thousands of digits
        raise click.BadParameter(f"{terminal(str(value))[:40]!r} is more than any memory (at most 1 EiB, 2**60 bytes)")
    return int(size)


def _check_jobs(ctx: Any, param: Any, value: int) -> int:
    """``--jobs``: -1 (one worker per core) or a positive number of workers."""
    if value == 0 or value < -1:
        raise click.BadParameter(f"{value} is not a number of workers: give -1 (one per core) or N >= 1")
    if value > MAX_JOBS:
        raise click.BadParameter(f"{value:,} workers: at most {MAX_JOBS:,} (or -1: one per core)")
    return value


def _open_dataset(path: str | os.PathLike) -> Any:
    """The footers of a Parquet file or directory; UsageError (exit 2) for a directory without Parquet files."""
    from biasamp.report._stream import ParquetDataset, StreamReadError

    try:
        return ParquetDataset.open(path)
    except ValueError as exc:
        raise click.UsageError(f"{exc}: DATA and --train are CSV or Parquet files, or directories of Parquet "
                               "files") from None
    except ImportError as exc:
        raise click.ClickException(f"cannot read {path}: {exc}") from None
    except StreamReadError as exc:
        raise click.ClickException(str(exc)) from None


def _decide_streaming(stream: bool | None, data: str, train_path: str | None,
                      max_memory: int) -> tuple[bool, dict]:
    """Whether to stream, and the Parquet inputs' footers (path -> ParquetDataset).

    ``--stream`` streams (Parquet inputs only); ``--no-stream`` loads; by
    default the data is streamed when every input is Parquet and their
    uncompressed size (from the footers) exceeds ``--max-memory``. The
    validation file of ``--val`` is read in memory either way: its size does
    not count.
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
        click.echo(f"streaming {terminal(what)}: about {format_size(size)} uncompressed, more than --max-memory "
                   f"{format_size(max_memory)} (--no-stream loads it in memory)", err=True)
        return True, datasets
    for p, what in inputs:
        if p not in datasets:
            raise click.UsageError(f"--stream reads Parquet: {what} {p} is not a Parquet file (.parquet, .pq) "
                                   "or a directory of Parquet files")
    return True, datasets


def _stream_columns(datasets: dict, data: str, train_path: str | None, attr, task, attr_pred,
                    task_pred, weight: str | None = None, features: tuple = (),
                    combos: list | None = None, captions: tuple = (None, ())) -> tuple[dict, dict]:
    """``({attribute: StreamColumns}, columns)``: the conventions applied to the Parquet schemas (no data read).

    An intersection (``combos``) is one more attribute, named as in memory
    (``"race x sex"``), whose labels (and predictions, when every component
    has ``<attr>_pred`` class predictions) are derived from its components
    batch by batch. ``captions``: ``(--captions-pred, --captions)``, the
    caption columns found as in memory (``caption_columns``), held with the
    sampled test rows.

    UsageError (exit 2) listing the available columns when one is missing,
    from the first file or from any later file of a directory.
    """
    from biasamp.report._stream import StreamColumns

    test = datasets[data]
    cols = _resolve_columns(pd.DataFrame(columns=list(test.columns)), data, attr, task, attr_pred, task_pred, combos)
    predictions = [*(p for p in cols["attr_preds"].values() if p), *(cols["task_pred"] or [])]
    try:  # the caption columns (biasamp.captioning.CAPTION_COLUMNS): the captioning section, on the sample
        found = caption_columns(test.columns, *captions)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    named = {"captions_pred": found["captions_pred"], "captions": tuple(found["captions"])} if found else {}
    checks = [(test, data, "test", [*cols["attrs"], *cols["task"], *predictions, *([weight] if weight else []),
                                    *features, *([found["captions_pred"], *found["captions"]] if found else [])])]
    if train_path:
        checks.append((datasets[train_path], train_path, "training", [*cols["attrs"], *cols["task"]]))
    for ds, path, what, needed in checks:
        gap = ds.missing(needed)
        if gap is not None:
            f, lacking, available = gap
            where = f"{f}" + (f" (of {path})" if str(f) != str(path) else "")
            raise click.UsageError(_not_found(what, lacking, where, ", ".join(available)))
    per_attr = {a: StreamColumns(a, tuple(cols["task"]), tuple(_task_names(cols["task"])), cols["attr_preds"][a],
                                 tuple(cols["task_pred"]) if cols["task_pred"] else None, weight, tuple(features),
                                 **named)
                for a in cols["attrs"]}
    for combo in combos or []:
        name = INTERSECTION_SEP.join(combo)
        derived = [(name, tuple((c, c) for c in combo))]
        pred = None
        if all(cols["attr_kinds"][c] == "pred" for c in combo):  # scores have no combination (as in memory)
            pred = f"{name}{PRED_SUFFIX}"
            derived.append((pred, tuple((c, cols["attr_preds"][c]) for c in combo)))
        per_attr[name] = dataclasses.replace(per_attr[combo[0]], attr=name, attr_pred=pred, derived=tuple(derived))
    return per_attr, cols


# --------------------------------------------------------------------------- #
# commands
# --------------------------------------------------------------------------- #
_SECTIONS = [b.key for b in section_builders()]
_DEFAULT = AuditConfig()
"""The audit's defaults: the options' defaults below are read from it (one set of defaults)."""
_MAX_N_BOOT = 100_000  # beyond this the intervals do not change, and the replicates take minutes and GBs
_USUAL_N_BOOT = 10_000  # more rarely moves an interval endpoint by more than its Monte Carlo error
_COMMON_VALUES = ("json_path", "html_path", "markdown_path", "latex_path", "model_card_path", "no_plots", "n_boot",
                  "n_iter", "attacker", "exclude", "random_state", "progress", "quiet")
"""The values of :func:`_common_options`: one dict ``common`` of the command, the keywords of :func:`_run`."""


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
                     help=f"Bootstrap replicates of the count-based metrics, 2 to 100,000 [default: "
                          f"{_DEFAULT.n_boot}; with --stream a replicate resamples 1,000 hashed groups of rows]."),
        click.option("--ci-method", type=click.Choice(["auto", "percentile", "basic", "bca", "band"]),
                     default=_DEFAULT.ci_method, show_default=True, expose_value=False, callback=_remember,
                     help="Interval method: auto = BCa for smooth metrics, a simultaneous band (valid at 0) for "
                          "max/min/absolute-value metrics; see docs/inference.md."),
        click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=_DEFAULT.level,
                     show_default=True, expose_value=False, callback=_remember,
                     help="Confidence level of every interval."),
        click.option("--min-effect", multiple=True, metavar="[METRIC=]VALUE", expose_value=False,
                     callback=_min_effect,
                     help="The smallest effect that matters (the metrics' units): an interval holding 0 whose "
                          "minimum detectable effect (MDE) is above it reads 'too small to tell'; METRIC=VALUE "
                          f"for one metric, e.g. DPA=0.05 (repeatable) [default: {_DEFAULT.min_effect:g}]."),
        click.option("--n-iter", type=click.IntRange(2, MAX_N_ITER), default=_DEFAULT.n_iter, show_default=True,
                     help="Iterations of DPA and leakage amplification."),
        click.option("--attacker", type=click.Choice(["auto", "tabular", "mlp_es", "mlp", "logistic"]),
                     default=_DEFAULT.attacker, show_default=True,
                     help="Attacker of DPA/LA; auto = tabular for discrete inputs with well-filled cells, "
                          "else mlp_es."),
        # group fairness (audit(average=..., ...)); passed only when given, so the audit's defaults apply
        click.option("--average", type=click.Choice(["auto", "binary", "macro"]), default=_DEFAULT.average,
                     show_default=True, expose_value=False, callback=_remember_given,
                     help="Group fairness over classes: binary = the positive class (--pos-label) only, macro = "
                          "the mean over classes (Qian et al.); auto = binary for a two-class task, else macro."),
        click.option("--binary-task", type=click.Choice(["positive", "both"]), default=_DEFAULT.binary_task,
                     show_default=True, expose_value=False, callback=_remember_given,
                     help="A binary task (classes 0/1, or two classes with --pos-label), in every family: its "
                          "positive class alone, or both classes (the one-hot reading of some papers; for group "
                          "fairness the mean over both, --average macro)."),
        click.option("--threshold", type=click.FloatRange(0, 1), default=_DEFAULT.threshold, show_default=True,
                     expose_value=False, callback=_remember_given,
                     help="Probabilities given as task predictions (<column>_score) are thresholded here."),
        click.option("--soft", type=click.Choice(["threshold", "expected"]), default=_DEFAULT.soft, show_default=True,
                     expose_value=False, callback=_remember_given,
                     help="Probabilities as task predictions: threshold them (--threshold), or use them as "
                          "expected rates."),
        click.option("--min-group-size", type=click.IntRange(0), default=_DEFAULT.min_group_size, show_default=True,
                     expose_value=False,
                     callback=_remember_given,
                     help="Groups with fewer rows are flagged and left out of every headline."),
        click.option("--include-small-groups", is_flag=True, expose_value=False, callback=_remember_given,
                     help="Keep groups below --min-group-size in every headline (still flagged)."),
        click.option("--cross-fit/--no-cross-fit", "cross_fit", default=None, expose_value=False,
                     callback=_remember_given,
                     help="Without --train: the signs of BiasAmp->, MALS and Multi are cross-fitted over two folds "
                          "of the test rows (the default), or --no-cross-fit reads them from every test row (the "
                          "plug-in; for a test set balanced by design)."),
        click.option("--reference-group", multiple=True, metavar="GROUP", expose_value=False,
                     callback=_remember_given,
                     help="Reference of the disparity ratios: largest, best, a group name, or ATTR=GROUP for one "
                          "attribute (repeatable) [default: largest]."),
        click.option("--tolerance", metavar="LOW,HIGH", default=",".join(map(str, _DEFAULT.tolerance)),
                     show_default=True, expose_value=False, callback=_tolerance,
                     help="Disparity ratios inside [LOW, HIGH] pass (one number r: [r, 1/r]); 0.8,1.25 is the "
                          "four-fifths rule."),
        # multi-attribute metrics
        click.option("--combinations", type=click.Choice(["observed", "all"]), default=_DEFAULT.combinations,
                     show_default=True, expose_value=False, callback=_remember_given,
                     help="Multi-attribute metrics: the task combinations seen in the data, or all of them."),
        click.option("--max-size", type=click.IntRange(1), default=None, expose_value=False,
                     callback=_remember_given,
                     help="Multi-attribute metrics: largest combination of task labels [default: no limit]."),
        click.option("--min-support", type=click.IntRange(1), default=_DEFAULT.min_support, show_default=True,
                     expose_value=False,
                     callback=_remember_given,
                     help="Multi-attribute metrics: leave out task combinations contained in fewer rows of the "
                          "training set (--train), or of the test set without one; 1 keeps every combination."),
        click.option("--exclude", multiple=True, type=click.Choice(_SECTIONS),
                     help="Do not compute this section (repeatable); audit(exclude=...)."),
        click.option("--random-state", type=int, default=_DEFAULT.random_state, show_default=True,
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
        kwargs["common"] = {name: kwargs.pop(name) for name in _COMMON_VALUES}
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
        return _remember(ctx, param, value)
    return value


def _min_effect(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``--min-effect VALUE`` (every metric) and ``--min-effect METRIC=VALUE`` (one metric; repeatable)."""
    if not value:
        return value
    given: dict = {}
    for item in value:
        metric, _, number = str(item).rpartition("=")
        try:
            given[metric.strip() or "*"] = float(number)
        except ValueError:
            raise click.BadParameter(f"{item!r} is neither a number nor METRIC=NUMBER", ctx, param) from None
    try:
        AuditConfig(min_effect=given)
    except (TypeError, ValueError) as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    return _remember(ctx, param, given["*"] if list(given) == ["*"] else given)


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


def _labels_text(labels: Any) -> str:
    """For an error message: the distinct ``labels`` as text, sorted, comma-separated (the first 20)."""
    return ", ".join(sorted(map(str, pd.unique(pd.Series(labels).dropna())))[:20])


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
            raise click.UsageError(f"--reference-group {v!r} is not a group of attribute {name!r}; groups: "
                                   f"{_labels_text(attrs[name])}")
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


def _terminal(report: Any) -> str:
    from biasamp.report._attributes import summary_by_attribute

    return summary_by_attribute(report, width=max(100, shutil.get_terminal_size((120, 24)).columns))


#: what a command passes to :func:`_run` besides the labels: options of the audit's configuration
_CONFIG_ARGUMENTS = ("title", "names", "missing", "pos_label", "batch_size", "dpa_rows", "n_jobs", "max_memory")


def _run(report_kwargs: dict, *, json_path, html_path, no_plots, n_boot, n_iter, attacker, exclude, random_state,
         progress, quiet, protect, auditor=audit, markdown_path=None, latex_path=None, model_card_path=None,
         columns: dict | None = None, attrs: dict | None = None) -> None:
    """Build one :class:`AuditConfig` from the command's options, run ``auditor(**labels, config=...)``, write."""
    options = dict(click.get_current_context().meta.get("biasamp_audit_options", {}))
    report_kwargs = dict(report_kwargs)
    options.update({k: report_kwargs.pop(k) for k in _CONFIG_ARGUMENTS if k in report_kwargs})
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
    try:  # one configuration for the in-memory and the streamed audit: every option checked before any work
        config = AuditConfig(**options, n_iter=n_iter, attacker=attacker, exclude=exclude,
                             random_state=random_state, progress=progress)
    except (ValueError, TypeError) as exc:
        raise click.ClickException(_name_columns(str(exc), columns)) from None
    said = set()
    if not quiet:  # before the audit runs (minutes, perhaps): an attribute with few rows per level
        from biasamp.report._inputs import level_size_warning

        for name, labels in attrs.items():
            few = level_size_warning(labels, name, config.min_group_size)
            if few is not None:
                said.add(f"SmallGroupWarning: {few}")
                click.echo(f"warning: {terminal(few)}", err=True)
    try:
        with warnings.catch_warnings(record=True) as caught:  # those not in a section's notes: one line each
            warnings.simplefilter("default")
            try:
                report = auditor(**report_kwargs, config=config)
            except NothingComputedError as exc:  # its sections' errors are said below, named by the columns
                report = exc.report
    except (ValueError, TypeError, OSError, ImportError) as exc:  # OSError: a file unreadable while streaming
        raise click.ClickException(_name_columns(str(exc), columns)) from None
    for message in dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught
                                 if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))):
        if message in said:
            continue
        click.echo(f"warning: {terminal(message)}", err=True)
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
                   + terminal(", ".join(s.key for s in failed)), err=True)
        sys.exit(1)


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` (temporary files) runs."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


class _Main(click.Group):
    """The ``biasamp`` group: Ctrl-C (SIGINT) exits with 130 and SIGTERM with 143, the shell's conventions,
    leaving no partial or temporary file; messages reach the terminal without escape sequences."""

    def invoke(self, ctx: click.Context) -> Any:
        import signal
        import threading

        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, _Terminated) as exc:
            written = ctx.find_root().meta.get("biasamp_written", [])
            what = "interrupted" if isinstance(exc, KeyboardInterrupt) else "terminated"
            click.echo(f"\n{what}" + (f"; already written: {', '.join(map(terminal, written))}" if written
                                       else ": nothing written"), err=True)
            raise click.exceptions.Exit(130 if isinstance(exc, KeyboardInterrupt) else 143) from None
        except click.ClickException as exc:  # names from the data: no escape sequence reaches the terminal
            # click declares ``message`` Final (set in __init__, read by format_message); every command's messages
            # are made safe here, once, so the instance's attribute is replaced where it is stored
            vars(exc)["message"] = terminal(exc.message, newlines=True)
            raise
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=_version(), prog_name="biasamp", message="%(prog)s %(version)s")
def main() -> None:
    """biasamp: bias and bias amplification audit of a classifier's predictions.

    Start with `biasamp demo`, then `biasamp audit predictions.csv --html report.html`.
    """


def _intersections(values: tuple[str, ...]) -> list[list[str]]:
    out = []
    for v in values:
        combo = _split((v,))
        if len(combo) < 2 or len(set(combo)) != len(combo):
            raise click.UsageError(f"--intersect {v!r}: name two or more different attribute columns, e.g. "
                                   "--intersect race,sex")
        out.append(combo)
    return out


def _stream_auditor(stream_audit: Any, dataset: Any, per_attr: dict, intersections: dict | None = None,
                    attr_val_scores: dict | None = None, **fixed: Any) -> Callable:
    """The auditor of a streamed audit: one :func:`stream_audit` per attribute, merged (one configuration);
    ``intersections``: name -> components of the attributes that are intersections; ``attr_val_scores``:
    attribute -> its validation scores (``--val``)."""
    from biasamp.report._stream import UnknownPosLabel

    def auditor(*, config: AuditConfig) -> Any:
        reports = {}
        for name, columns in per_attr.items():
            ref = config.reference_group
            one = config.replace(names=dict(config.names or {}, attr=name),
                                 reference_group=ref.get(name, "largest") if isinstance(ref, dict) else ref)
            try:
                reports[name] = stream_audit(dataset, columns, **fixed, config=one,
                                             attr_val_scores=(attr_val_scores or {}).get(name))
            except UnknownPosLabel as exc:  # the in-memory audit's usage error
                raise _unknown_pos_label(exc.value, exc.task, exc.classes) from None
        if len(reports) == 1:
            return next(iter(reports.values()))
        from biasamp.report._attributes import merge_reports

        return merge_reports(reports, title=config.title, intersections=intersections)

    return auditor


@main.command("audit", context_settings={"max_content_width": 100})
@click.argument("data", type=click.Path(exists=True))
@click.option("--train", "train_path", type=click.Path(exists=True),
              help="Training labels (same attribute and task columns).")
@click.option("--val", "val_path", type=click.Path(exists=True, dir_okay=False),
              help="Validation scores (<column>_score) for threshold calibration (read in memory, also when "
                   "streaming).")
@click.option("--attr", multiple=True,
              help="Protected attribute column(s), repeatable or comma-separated: one report section set per "
                   "attribute [default: attr, attribute, group or protected].")
@click.option("--intersect", multiple=True, metavar="COL,COL",
              help="Also audit the intersection of these attribute columns (groups such as 'race=Black, "
                   "sex=Male'); repeatable.")
@click.option("--task", multiple=True,
              help="Task column(s), repeatable or comma-separated [default: task_*, or task/label/y].")
@click.option("--attr-pred", multiple=True,
              help="Predicted attribute column(s), one per --attr [default: <attr>_pred, else <attr>_score].")
@click.option("--task-pred", multiple=True, help="Predicted task column(s) [default: <task>_pred, else <task>_score].")
@click.option("--pos-label", default=None, metavar="LABEL",
              help="Positive class of a two-class task, as written in the task column [default: 1 or True].")
@click.option("--weight", default=None, metavar="COLUMN", help="Column of per-row sample weights (>= 0).")
@click.option("--missing", type=click.Choice(["raise", "drop", "group"]), default=_DEFAULT.missing, show_default=True,
              help="A missing value: stop naming its column and row; drop its row (per attribute); or, in an "
                   "attribute column, make it a group 'missing'.")
@click.option("--title", default=None, help="Report title.")
@click.option("--stream/--no-stream", default=None,
              help="Read Parquet in batches, in bounded memory [default: when larger than --max-memory].")
@click.option("--max-memory", default="1G", show_default=True, callback=_parse_size, metavar="SIZE",
              help="Stream Parquet input larger than this uncompressed (from the file footers), e.g. 500M, 4G; when "
                   "streaming without --train, also the most the distinct test rows a cross-fitted section keeps may "
                   "hold.")
@click.option("--batch-size", type=click.IntRange(1), default=_DEFAULT.batch_size, show_default=True,
              help="Rows per batch when streaming.")
@click.option("--dpa-rows", type=click.IntRange(0), default=_DEFAULT.dpa_rows, show_default=True,
              help="When streaming: DPA, LA and the captioning section run on a random sample of this many test "
                   "rows (0: skip them).")
@click.option("--jobs", "n_jobs", type=int, default=_DEFAULT.n_jobs, show_default=True, callback=_check_jobs,
              metavar="N", help="When streaming: worker processes counting the rows (-1: one per core); the "
                                "report is the same for any N.")
@click.option("--captions-pred", default=None, metavar="COLUMN",
              help="The model's image captions: adds the captioning section (LIC, DBAC) [default: caption_pred].")
@click.option("--captions", multiple=True, metavar="COLUMN",
              help="Human caption column(s), repeatable [default: caption, or caption_1, caption_2, ...].")
@click.option("--features", multiple=True, metavar="COL,COL",
              help="Feature columns of the subgroup scan (where the model amplifies; docs/scan.md), repeatable or "
                   "comma-separated: adds its section.")
@click.option("--scan-statistic", default=None, metavar="NAME",
              help="Statistic of the subgroup scan, e.g. 'T->A', 'DP', 'MALS' [default: A->T with task "
                   "predictions, else T->A].")
@_common_options
def audit_command(data, train_path, val_path, attr, intersect, task, attr_pred, task_pred, pos_label, weight, missing,
                  title, stream, max_memory, batch_size, dpa_rows, n_jobs, captions_pred, captions, features,
                  scan_statistic, common):
    """Audit the predictions in DATA (CSV, Parquet, or a folder of Parquet files; one row per test instance).

    \b
    Column conventions (override with the options):
      attribute    attr | attribute | group | protected
      task         task_* columns (multi-label 0/1), or one column task | label | y
      predictions  <column>_pred (hard), else <column>_score (probabilities)
      calibration  with --val: thresholds from the validation <column>_score
                   columns, applied to the test <column>_score columns
      captions     caption_pred (the model's), caption or caption_1, ... (human),
                   split (train/val of the attackers): the captioning section

    \b
    CSV files may be separated by , ; tab or | (detected). True/False columns
    are read as 1/0 where the other column of the same label is 0/1. Errors in
    the data name the column and the row (1 = the first row after the header).

    \b
    Streaming (--stream, or Parquet larger than --max-memory): the data is read
    in batches, one file at a time, in bounded memory. Same metrics, values and
    options; bootstrap intervals for the count-based metrics from rows hashed
    into 1,000 groups whose tables add batch by batch; DPA, LA and the
    captioning section run on a random sample of --dpa-rows test rows. --jobs N counts N ranges of the
    rows in N worker processes (the same report as --jobs 1). With --val the
    validation file is read in memory and every batch's scores are thresholded
    (the same thresholds and values as --no-stream).

    \b
    Examples:
      biasamp audit test.csv --train train.csv --html report.html --json report.json
      biasamp audit preds.csv --task label --task-pred prediction --attr sex --attr race
      biasamp audit preds.csv --task label --task-pred score --intersect race,sex --pos-label 1
      biasamp audit predictions/ --train train/ --stream --json report.json
    """
    for path in (data, train_path, val_path):
        if path is not None:
            _table_kind(path)
    _check_outputs(common, [data, train_path, val_path])
    title = title or f"biasamp audit of {Path(data).name}"
    combos = _intersections(intersect)
    attr, attr_pred = _split(attr), _split(attr_pred)
    streaming, datasets = _decide_streaming(stream, data, train_path, max_memory)
    if streaming:
        from biasamp.report._stream import stream_audit

        per_attr, cols = _stream_columns(datasets, data, train_path, attr, _split(task), attr_pred, _split(task_pred),
                                         weight, tuple(_split(features)), combos, (captions_pred, _split(captions)))
        _check_task_count(cols["task"])
        task_val, attr_val = _val_scores(val_path, data, cols) if val_path else (None, {})
        auditor = _stream_auditor(stream_audit, datasets[data], per_attr, train=datasets.get(train_path),
                                  intersections={INTERSECTION_SEP.join(c): list(c) for c in combos},
                                  attr_val_scores=attr_val, task_val_scores=task_val)
        sources = f"{_sources(data, train_path, val_path)} (streamed in batches of {batch_size:,} rows)"
        _run({"title": title, "names": _display_names(cols, sources), "batch_size": batch_size, "dpa_rows": dpa_rows,
              "n_jobs": n_jobs, "max_memory": max_memory, "missing": missing,
              **({"pos_label": pos_label} if pos_label is not None else {}),
              **({"scan_statistic": scan_statistic} if scan_statistic is not None else {})},
             **common, protect=[data, train_path, val_path],
             auditor=auditor, attrs=dict.fromkeys(per_attr))
        return
    frame = read_table(data)
    cols = _resolve_columns(frame, data, attr, _split(task), attr_pred, _split(task_pred), combos)
    _check_task_count(cols["task"])
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
    try:  # the caption columns (biasamp.captioning.CAPTION_COLUMNS): the captioning section
        kwargs["captions"] = caption_frame(frame, captions_pred, _split(captions))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if features:  # the subgroup scan's columns
        _require(frame, _split(features), data, "feature")
        kwargs["features"] = frame[_split(features)].reset_index(drop=True)
    if scan_statistic is not None:
        kwargs["scan_statistic"] = scan_statistic
    if missing != "raise":
        kwargs["missing"] = missing
    if pos_label is not None:
        classes = pd.concat([frame[c] for c in [*cols["task"], *(cols["task_pred"] or [])]], ignore_index=True)
        found = _match(pos_label, classes)
        if found is None:
            raise _unknown_pos_label(pos_label, cols["task"], frame[cols["task"][0]])
        kwargs["pos_label"] = found
    if val_path:
        task_val, attr_val = _val_scores(val_path, data, cols)
        if task_val is not None:
            kwargs["task_val_scores"] = task_val
        if attr_val:
            kwargs["attr_val_scores"] = attr_val if several else attr_val[attrs[0]]
    _run(dict(kwargs, title=title, names=_display_names(cols, _sources(data, train_path, val_path))), **common,
         protect=[data, train_path, val_path], columns=_argument_columns(cols, weight, train_path, combos),
         attrs=_attribute_labels(kwargs["attr"], combos, missing))


def _val_scores(val_path: str, data: str, cols: dict) -> tuple[Any, dict]:
    """``(task_val_scores, {attribute: attr_val_scores})`` of the ``--val`` file, read in memory (streamed or not):
    the ``<column>_score`` columns of the labels whose test predictions are scores. UsageError (exit 2) when there
    are none."""
    val = read_table(val_path)
    task_val = None
    task_scores = [f"{c}{SCORE_SUFFIX}" for c in cols["task"]]
    if cols["task_pred_kind"] == "score" and all(c in val.columns for c in task_scores):
        task_val = _task_frame(val, task_scores, _task_names(cols["task"]))
    attr_val = {a: val[f"{a}{SCORE_SUFFIX}"].reset_index(drop=True) for a in cols["attrs"]
                if cols["attr_kinds"][a] == "score" and f"{a}{SCORE_SUFFIX}" in val.columns}
    if task_val is None and not attr_val:
        raise click.UsageError(
            f"--val needs <column>{SCORE_SUFFIX} columns in both {data} and {val_path} (e.g. "
            f"{cols['task'][0]}{SCORE_SUFFIX}), and no <column>{PRED_SUFFIX} column for them in {data}; "
            f"available columns in {val_path}: {_available(val)}")
    return task_val, attr_val


def _unknown_pos_label(pos_label: str, task: Any, labels: Any) -> click.UsageError:
    """The usage error of a --pos-label that is no class of the task column(s) (``labels``: the test classes)."""
    return click.UsageError(f"--pos-label {pos_label!r} is not a class of the task column(s) {', '.join(task)}; "
                            f"classes: {_labels_text(labels)}")


def _check_task_count(task: list) -> None:
    """UsageError (exit 2), before any metric, for more task columns than an audit takes (``check_task_count``)."""
    try:
        check_task_count(len(task), task)
    except ValueError as exc:
        raise click.UsageError(f"{exc} with --task") from None


def _sources(data: str, train_path: str | None, val_path: str | None = None) -> str:
    """Where the audited data came from, for the report: ``test DATA, train TRAIN, validation VAL``."""
    return ", ".join(p for p in (f"test {data}", train_path and f"train {train_path}",
                                 val_path and f"validation {val_path}") if p)


def _attribute_labels(attr: Any, combos: list, missing: str) -> dict:
    """Attribute name -> test labels (intersections included), to match --reference-group names."""
    if not isinstance(attr, dict):
        return {str(attr.name): attr}
    from biasamp.report._attributes import INTERSECTION_SEP, intersection_labels

    out = dict(attr)
    for combo in combos:
        out[INTERSECTION_SEP.join(combo)] = intersection_labels({c: attr[c] for c in combo}, missing=missing)
    return out


DEMO_STORY = (
    "Built-in demo: a synthetic image-tagging dataset (gender x 6 object tags) in which kitchen and umbrella\n"
    "lean 'woman' and skateboard and tie lean 'man', and a model that over-tags each object in the group it\n"
    "leans to (it amplifies gender -> objects, A->T) while its gender predictions err at random, which\n"
    "weakens the objects -> gender association (T->A: not amplified; reduced).\n"
    "BiasAmp_MALS reads 'reduced' although the model amplifies: it scores the predicted gender and the\n"
    "predicted objects in one number, and the random gender errors pull each object's predicted gender\n"
    "share towards 50/50 (MALS is -0.035 with the predicted gender and the true objects, about 0 with the\n"
    "true gender and the predicted objects) more than the over-tagging moves it. BiasAmp-> keeps the two\n"
    "directions apart: read it (and its per-pair table) for a diagnosis.\n"
    "The terms the table uses are explained under it."
)


@main.command("demo", context_settings={"max_content_width": 100})
@click.option("--save-data", type=click.Path(file_okay=False),
              help="Also write the demo data as train.csv and test.csv in this folder (for `biasamp audit`).")
@_common_options
def demo_command(save_data, common):
    """Audit a built-in, deterministic synthetic dataset and model (the first command to try)."""
    from biasamp.datasets import make_amplification_demo

    _check_outputs(common, [])
    d = make_amplification_demo()
    if save_data:
        _save_demo(d, Path(save_data))
    if not common["quiet"]:
        click.echo(DEMO_STORY + "\n")
    _run({"attr": d.attr, "task": d.task, "attr_pred": d.attr_pred, "task_pred": d.task_pred,
          "attr_train": d.attr_train, "task_train": d.task_train, "title": "biasamp demo audit",
          "names": {"attr": "gender", "task": "objects",
                    "source": "built-in synthetic demo (biasamp.datasets.make_amplification_demo)"}},
         **common, protect=[])


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
    existing = [str(folder / name) for name in ("test.csv", "train.csv") if os.path.lexists(folder / name)]
    if existing:  # the user's own files, perhaps: never replaced without being asked
        raise click.UsageError(f"--save-data {folder}: {' and '.join(existing)} already exist(s); refusing to "
                               "overwrite; remove them or choose another folder")
    for name, frame in (("test.csv", test), ("train.csv", train)):
        try:
            _write_atomic(folder / name, frame.to_csv(index=False))
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"cannot write {folder / name}: {exc}") from None
        click.echo(f"wrote {terminal(folder / name)}", err=True)


if __name__ == "__main__":  # python -m biasamp.cli
    main()
