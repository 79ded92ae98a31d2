"""One configuration of an audit, in memory or streamed: :class:`AuditConfig`.

Every option of :func:`biasamp.report.audit` and of the streamed audit
(``biasamp audit --stream``) is a field of one frozen dataclass, with one
default and its declared constraints (:mod:`biasamp._core.validation`); the
keywords of both functions are sugar over it, and the command line builds one
from its options. The options a metric family takes are not re-listed here:
the fields marked ``forward`` (the probability policy, the small-group rule,
the fairness and multi-attribute options) reach every family whose options
dataclass (``Family.options``) declares them, with the family's own
constraints (:meth:`AuditConfig.family_options`).

Section builders receive the configuration as their ``options`` argument
(``AuditOptions`` is its former name): they read ``n_boot``, ``level``,
``seed(key)``, :meth:`~AuditConfig.family_options` and the other fields.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from biasamp._core.policy import INCLUDE_SMALL_GROUPS, MIN_GROUP_SIZE, SOFT, THRESHOLD
from biasamp._core.policy_options import (
    BINARY_TASK,
    CROSS_FIT,
    DEFAULT_MIN_GROUP_SIZE,
    DEFAULT_THRESHOLD,
    MISSING,
    SPLIT_SEED,
    CrossFitOptions,
)
from biasamp._core.progress import progress_mode
from biasamp._core.results import to_builtin
from biasamp._core.validation import NONE, Checked, InstanceOf, Interval, OneOf, Validated, constraints_of, option
from biasamp._engine.options import CI_METHOD, DEFAULT_LEVEL, DEFAULT_N_BOOT, LEVEL, RANDOM_STATE
from biasamp._engine.runs import MAX_N_ITER, _check_n_boot
from biasamp.fairness._options import TOLERANCE
from biasamp.multiattribute._options import MultiOptions

__all__ = ["AuditConfig", "AuditOptions"]


def _check_audit_n_boot(n_boot: Any) -> int:
    """0 (no interval) or the bootstrap's own rule (an integer >= 2, bounded)."""
    if isinstance(n_boot, (int, np.integer)) and not isinstance(n_boot, bool) and n_boot == 0:
        return 0
    return _check_n_boot(n_boot)


def _check_attacker(attacker: Any) -> Any:
    if isinstance(attacker, str) or attacker is None:
        from biasamp.predictability._attackers import _ATTACKERS

        if attacker not in _ATTACKERS:
            raise ValueError(f"attacker must be one of {_ATTACKERS} or an estimator instance, got {attacker!r}")
    return attacker


def _check_quality(name: str) -> Checked:
    def checker(quality: Any) -> Any:
        from biasamp.predictability._metrics import _QUALITIES

        if not callable(quality) and quality not in _QUALITIES:
            raise ValueError(f"{name} must be one of {_QUALITIES} or a callable, got {quality!r}")
        return quality

    return Checked(checker, "a quality name or a callable")


def _check_keys(name: str) -> Checked:
    def checker(keys: Any) -> Any:
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise TypeError(f"{name} must be a list of section keys (str), got {keys!r}")
        return keys

    return Checked(checker, "a list of section keys")


def _check_scan_statistic(name: Any) -> Any:
    from biasamp.subgroups._accumulator import statistic_of

    statistic_of(name, "scan_statistic")  # ValueError listing the registered statistics
    return name


def _check_min_effect(min_effect: Any) -> Any:
    """A number >= 0, or a mapping metric name -> number >= 0 (``"*"``: every other metric)."""
    def number(name: str, v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v) \
                or v < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        return float(v)

    if isinstance(min_effect, Mapping):
        bad = [k for k in min_effect if not isinstance(k, str)]
        if bad:
            raise TypeError(f"min_effect's keys must be metric names (str, '*' for every other metric), got {bad[0]!r}")
        return {k: number(f"min_effect[{k!r}]", v) for k, v in min_effect.items()}
    return number("min_effect", min_effect)


#: The most workers of a streamed audit (``n_jobs``; a pass is also never split into more parts than batches).
MAX_JOBS = 1024

#: the display names a report reads from ``names``
NAME_KEYS = ("attr", "task", "source")


def _check_names(names: Any) -> dict:
    """``names``: a dict of :data:`NAME_KEYS` to strings (a name in every output), else a named error."""
    if not isinstance(names, dict):
        raise TypeError(f"names must be None or a dict such as {{'attr': 'gender'}}, got {type(names).__name__}")
    unknown = [k for k in names if k not in NAME_KEYS]
    if unknown:
        raise ValueError(f"names has the key(s) {unknown!r}; its keys are {NAME_KEYS}")
    for key, value in names.items():
        if not isinstance(value, str):
            raise TypeError(f"names[{key!r}] must be a string (a display name), got {type(value).__name__} {value!r}")
    return names


def _check_progress(progress: Any) -> Any:
    progress_mode(progress)  # ValueError naming progress for an unknown mode
    return progress


#: the keys of :attr:`Report.options <biasamp.Report.options>` (its JSON schema), in order; "fairness" holds the
#: options the group fairness family declares
_REPORTED = ("n_boot", "n_boot_multi", "level", "ci_method", "random_state", "attacker", "dpa_quality",
             "leakage_quality", "n_iter", "combinations", "min_size", "max_size", "min_support", "top_k", "fairness",
             "missing", "min_effect")


def _multi(name: str) -> tuple:
    """The constraints the multi-attribute family declares for option ``name``."""
    return constraints_of(MultiOptions.field(name))


def _forward(default: Any, *constraints: Any, doc: str = "") -> Any:
    """An option the audit forwards to every family that declares it (``Family.options``)."""
    return option(default, *constraints, doc=doc, forward=True)


@dataclass(frozen=True)
class AuditConfig(Validated):
    """Every option of an audit (:func:`~biasamp.audit` and the streamed audit), with one set of defaults.

    Options are checked when the configuration is made (or
    :meth:`replace`\\ d): a bad value is one ``ValueError``/``TypeError``
    naming the option, before any work. The keywords of
    :func:`~biasamp.audit` are sugar over it: ``audit(attr, task, ...,
    n_boot=200)`` is ``audit(attr, task, ..., config=AuditConfig(n_boot=200))``,
    and a keyword given with ``config`` replaces that option of ``config``.

    Attributes
    ----------
    sections : tuple of str, optional
        Keys of the sections to compute (default: every registered section).
    exclude : tuple of str
        Keys of sections not to compute.
    errors : {"report", "raise"}, default "report"
        A section whose computation fails: kept with its error, or re-raised.
    n_boot : int, default 1000
        Bootstrap replicates of the count-based sections (multinomial in
        memory, hashed groups of rows when streamed); 0: no interval.
    n_boot_multi : int, optional
        Replicates of the multi-attribute section (default: ``n_boot``; the
        option its declaration names, ``Family.n_boot_option``).
    level : float, default 0.95
        Confidence level of every interval.
    ci_method : {"auto", "percentile", "basic", "bca", "band"}, default "auto"
        Interval method of the count-based sections (a streamed audit has no
        BCa: ``"bca"`` falls back to ``"auto"``).
    min_effect : float or dict, default 0.01
        The smallest effect that matters, in the metrics' units (fractions; DPA
        in [-1, 1]): a headline whose interval holds 0 while its minimum
        detectable effect (``Report.table["min_detectable"]``) is above it
        reads *too small to tell* instead of *no evidence*, and one whose
        interval excludes 0 for a smaller value carries *small effect* in its
        note. A mapping gives it per metric (the table's ``metric`` column,
        e.g. ``{"DPA": 0.05, "*": 0.01}``; ``"*"``: every other metric).
    random_state : None, int or numpy Generator, default 0
        Seed; each section derives its own seed from it (a Generator is drawn
        once, when the configuration is made, for an integer seed).
    attacker : str or estimator, default "auto"
        Attacker of DPA and LA.
    n_iter : int, default 10
        Iterations of DPA and LA (at least 2: their interval is over them).
    dpa_quality, leakage_quality : str or callable
        Attacker quality of DPA (default ``"inv_ce"``) and of LA (default
        ``"accuracy"``).
    average, pos_label, threshold, soft, min_group_size, include_small_groups, reference_group, tolerance
        Options of the count-based families that declare them (the group
        fairness metrics take all of them; the probability policy
        ``threshold``/``soft`` and the small-group rule reach every family):
        as in :func:`~biasamp.fairness_metrics`. ``pos_label=None``: 1/True
        when it is a class, otherwise the mean over both classes (the note
        says so). ``reference_group`` may be a mapping attribute -> group
        when several attributes are audited.
    binary_task : {"positive", "both"}, default "positive"
        How a binary task is read, in every family (:ref:`def-binary-task`):
        its positive class alone (``pos_label``; a 1-D column and an
        ``N x 1`` indicator give the same numbers), or both classes (the
        one-hot reading some papers use; group fairness then averages both,
        ``average="macro"``). The report says which (a note).
    combinations, min_size, max_size, min_support
        Candidate combinations of the multi-attribute metrics. The audit's
        ``min_support`` defaults to 10 (:func:`~biasamp.multi_bias_amp`: 1).
    cross_fit, cross_fit_random_state
        Without a training set, the signs of BiasAmp→, BiasAmp_MALS and the
        multi-attribute metrics: ``None`` (default) cross-fits them over two
        folds of the test rows, ``False`` reads them from every test row
        (the plug-in, the papers' reading of a test set balanced by design);
        ``cross_fit_random_state`` seeds the split (None: a fixed split).
        With a training set they have no effect (the training set gives the
        signs); docs/definitions.md, "No training set".
    scan_statistic : str, optional
        The statistic of the subgroup scan section (run when ``features`` are
        given): any registered count statistic; default BiasAmp→ A→T when
        task predictions are given, else T→A (docs/scan.md).
    scan_max_order : int, default 2
        Conditions per subgroup at most.
    scan_min_group_size : float, default 100
        Rows (weighted) a subgroup needs to be scanned.
    top_k : int, default 10
        Rows of the "top contributors" tables and charts.
    title : str, default "biasamp audit"
    names : dict, optional
        Display names of the inputs (``{"attr": "gender", "task":
        "objects", "source": ...}``): strings, under those three keys.
    progress : bool or None
        ``None``: bars on a terminal, otherwise a line every 10 s.
    missing : {"raise", "drop", "group"}, default "raise"
        Rows with a missing value, in memory and streamed alike: raise
        naming the argument, drop the rows, or make a missing attribute
        value its own group ``"missing"``.
    batch_size : int, default 65536
        Rows per record batch of a streamed audit.
    dpa_rows : int, default 200000
        A streamed audit runs DPA and LA on a uniform sample of this many
        test rows (0 leaves them out).
    max_memory : int, default 2**30
        A streamed audit without a training set keeps, for each cross-fitted
        family (BiasAmp→, BiasAmp_MALS, multi-attribute), the distinct test
        rows it has read, to split them in two folds at the end as the
        in-memory audit splits all rows; a family whose distinct rows would
        hold more bytes than this fails with an error that says so (the
        other sections go on). Rows of one attribute and one task with hard
        labels repeat, so they rarely come near it; wide multi-label or soft
        rows can.
    n_jobs : int, default 1
        Worker processes of a streamed audit, at most 1,024 (``-1``: one per core; under
        ``joblib.parallel_config(backend="dask")``, the workers of a
        ``dask.distributed`` cluster). Each pass over the data is split into
        contiguous ranges counted apart and merged in order: the report is
        the same for every ``n_jobs`` (identical for hard labels).

    Notes
    -----
    The in-memory and the streamed audit share these defaults; before 0.2 the
    streamed audit drew 200 bootstrap replicates by default (pass
    ``n_boot=200`` for its former, faster intervals). ``AuditOptions`` is
    the former name of this class, which section builders receive.

    References
    ----------
    .. [1] F. Pedregosa et al. "Scikit-learn: Machine Learning in Python".
       JMLR 12, 2011 (``validate_params``: options declared with their
       constraints).

    Examples
    --------
    >>> from biasamp.report import AuditConfig
    >>> config = AuditConfig(n_boot=200, exclude=("dpa", "leakage"))
    >>> config.replace(threshold=0.3).threshold, config.n_boot
    (0.3, 200)
    >>> config.family_options("multi")["min_support"]
    10
    >>> AuditConfig(level=1.5)
    Traceback (most recent call last):
    ...
    ValueError: level must be a number in (0, 1), got 1.5
    """

    # what runs
    sections: Any = option(None, NONE, _check_keys("sections"), doc="keys of the sections to compute")
    exclude: Any = option((), _check_keys("exclude"), doc="keys of sections not to compute")
    errors: str = option("report", OneOf("report", "raise"), doc="a failing section: 'report' it, or 'raise'")
    # intervals
    n_boot: int = option(DEFAULT_N_BOOT, Checked(_check_audit_n_boot, "0 or an integer >= 2"),
                         doc="bootstrap replicates")
    n_boot_multi: int | None = option(None, NONE, Checked(_check_audit_n_boot, "0 or an integer >= 2"),
                                      doc="replicates of the multi-attribute section")
    level: float = option(DEFAULT_LEVEL, *LEVEL, doc="confidence level")
    ci_method: str = option("auto", *CI_METHOD, doc="interval method")
    random_state: Any = option(0, *RANDOM_STATE, doc="seed")
    min_effect: Any = option(0.01, Checked(_check_min_effect, "a number >= 0 or a mapping metric -> number"),
                             doc="the smallest effect that matters (too small to tell / small effect)")
    # DPA and LA
    attacker: Any = option("auto", Checked(_check_attacker, "an attacker name or an estimator"), doc="attacker")
    n_iter: int = option(10, Interval(Integral, 2, MAX_N_ITER), doc="iterations of DPA and LA")
    dpa_quality: Any = option("inv_ce", _check_quality("dpa_quality"), doc="DPA's attacker quality")
    leakage_quality: Any = option("accuracy", _check_quality("leakage_quality"), doc="LA's attacker quality")
    # the families' options (each family receives those its options dataclass declares)
    average: Any = _forward("auto", OneOf("auto", "binary", "macro"), doc="fairness: positive class or mean")
    pos_label: Any = _forward(None, doc="positive class of a binary task (None: 1/True, else the mean)")
    binary_task: str = _forward("positive", *BINARY_TASK, doc="a binary task read as its 'positive' class, or "
                                "'both' classes (one-hot), in every family")
    threshold: float = _forward(DEFAULT_THRESHOLD, *THRESHOLD, doc="probabilities above it are positive predictions")
    soft: str = _forward("threshold", *SOFT, doc="'threshold' probabilities, or 'expected' rates")
    min_group_size: int = _forward(DEFAULT_MIN_GROUP_SIZE, *MIN_GROUP_SIZE,
                                   doc="smaller groups are flagged and left out")
    include_small_groups: bool = _forward(False, *INCLUDE_SMALL_GROUPS, doc="keep small groups in headlines")
    reference_group: Any = _forward("largest", doc="reference of the disparity ratios (or per attribute)")
    tolerance: Any = _forward((0.8, 1.25), *TOLERANCE, doc="disparity ratios inside it pass")
    combinations: str = _forward("observed", *_multi("combinations"), doc="multi-attribute combinations")
    min_size: int = _forward(1, *_multi("min_size"), doc="smallest combination")
    max_size: int | None = _forward(None, *_multi("max_size"), doc="largest combination")
    min_support: int = _forward(10, *_multi("min_support"), doc="rows a combination must be in")
    cross_fit: bool | None = _forward(None, *CROSS_FIT, doc="signs without a training set: cross-fitted (None) or "
                                      "the plug-in of the test rows (False)")
    cross_fit_random_state: Any = _forward(None, *SPLIT_SEED, doc="seed of the two-fold split (None: fixed)")
    # the subgroup scan
    scan_statistic: str | None = option(None, NONE, Checked(_check_scan_statistic, "a registered count statistic"),
                                        doc="statistic of the subgroup scan (None: A->T, else T->A)")
    scan_max_order: int = option(2, Interval(Integral, 1, None), doc="conditions per subgroup at most")
    scan_min_group_size: float = option(100, Interval(Real, 1, None), doc="rows a scanned subgroup needs")
    # the report
    top_k: int = option(10, Interval(Integral, 1, None), doc="rows of the top-contributor tables and charts")
    title: str = option("biasamp audit", InstanceOf(str), doc="report title")
    names: dict | None = option(None, NONE, Checked(_check_names, "a dict such as {'attr': 'gender'} (strings)"),
                                doc="display names of the inputs")
    progress: Any = option(None, Checked(_check_progress, "True, False or None"), doc="progress on stderr")
    # the inputs
    missing: str = option("raise", *MISSING, doc="rows with a missing value")
    # the streamed audit
    batch_size: int = option(65_536, Interval(Integral, 1, None), doc="rows per record batch when streaming")
    dpa_rows: int = option(200_000, Interval(Integral, 0, None), doc="rows of the DPA/LA sample when streaming")
    n_jobs: int = option(1, Interval(Integral, 1, MAX_JOBS), OneOf(-1), doc="worker processes of a streamed audit")
    max_memory: int = option(2**30, Interval(Integral, 1, None),
                             doc="bytes a streamed family's kept distinct rows may hold (cross-fitted)")

    def _normalise(self) -> None:
        for name in ("sections", "exclude"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (str, tuple)) and isinstance(value, Iterable):
                object.__setattr__(self, name, tuple(value))
        if isinstance(self.tolerance, list):
            object.__setattr__(self, "tolerance", tuple(self.tolerance))
        for name in ("n_boot", "n_boot_multi"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _check_audit_n_boot(value))
        from biasamp._engine.resample import check_random_state, seed_sequence

        seed = check_random_state(self.random_state)  # a numpy integer: the same int
        if not isinstance(seed, (int, type(None))):  # a Generator etc.: drawn once for an int seed
            seed = int(seed_sequence(seed).generate_state(1)[0])
        object.__setattr__(self, "random_state", seed)

    # ---- keywords as sugar ---------------------------------------------------- #
    @classmethod
    def of(cls, config: AuditConfig | None, keywords: Mapping[str, Any], where: str) -> AuditConfig:
        """``config`` (default: the defaults) with the options given as ``keywords`` to ``where``."""
        if config is not None and not isinstance(config, AuditConfig):
            raise TypeError(f"config must be an AuditConfig, got {type(config).__name__}")
        unknown = [k for k in keywords if k not in cls.option_names()]
        if unknown:
            raise TypeError(f"{where}() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
                            f"its options are those of AuditConfig: {', '.join(cls.option_names())}")
        if config is None:
            return cls(**keywords)
        return config.replace(**keywords) if keywords else config

    # ---- what the sections read ------------------------------------------------ #
    @classmethod
    def forwarded(cls) -> tuple[str, ...]:
        """The options the audit forwards to the families that declare them."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("forward"))

    def family_options(self, key: str, *, train: bool = False) -> dict:
        """The forwarded options that family ``key`` declares (``Family.options``), as the audit applies them.

        ``None`` means "the family's default" and is left out (``pos_label``,
        ``max_size``); a ``reference_group`` mapping (several attributes) is
        left to the per-attribute audits. With a training set (``train``) the
        cross-fitting options are not forwarded: the training set fixes the
        signs, so they have no effect (a family given ``cross_fit=True`` with a
        training set would refuse it, or read the training rows as the test
        rows' ground truth).
        """
        from biasamp._families import REGISTRY

        declared = REGISTRY[key].options
        names = () if declared is None else declared.option_names()
        if train:
            names = tuple(n for n in names if n not in CrossFitOptions.option_names())
        return {k: getattr(self, k) for k in self.forwarded() if k in names and getattr(self, k) is not None}

    @property
    def fairness(self) -> dict:
        """The group fairness section's options (:meth:`family_options` of ``"fairness"``)."""
        return self.family_options("fairness")

    def seed(self, key: str) -> int | None:
        """A seed for section ``key``, derived from ``random_state`` (None stays None)."""
        if self.random_state is None:
            return None
        ss = np.random.SeedSequence([int(self.random_state), zlib.crc32(key.encode())])
        return int(ss.generate_state(1)[0])

    def report_options(self) -> dict:
        """The options a :class:`~biasamp.report.Report` records (``Report.options``; its JSON schema)."""
        out = {k: to_builtin(self.fairness if k == "fairness" else getattr(self, k)) for k in _REPORTED}
        if not isinstance(self.attacker, (str, type(None))):
            out["attacker"] = type(self.attacker).__name__
        return out


#: the former name of :class:`AuditConfig` (what section builders receive as their ``options``)
AuditOptions = AuditConfig
