"""Data sets and dataset utilities.

* Built-in, deterministic data for demos, docs and tests
  (:func:`make_amplification_demo`), the COMPAS loader (:func:`load_compas`)
  and the loader of Qian et al.'s released per-run bias values
  (:func:`load_fairness_variance_runs`).
* Sub-datasets of the papers' protocols, returned as row indices
  (:ref:`def-datasets`): :func:`balanced_subset` (DPA Eq. 7),
  :func:`ratio_bounded_subset` (DPA Eq. 8; Wang et al.'s α-balanced sets) and
  :func:`oversample_balanced` (the multi-attribute paper's greedy
  oversampling, §5).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "COMPAS_FEATURES",
    "CompasData",
    "DemoData",
    "FairnessVarianceRuns",
    "balanced_subset",
    "load_compas",
    "load_fairness_variance_runs",
    "make_amplification_demo",
    "oversample_balanced",
    "ratio_bounded_subset",
]

_GROUPS = ("man", "woman")
_TASKS = ("kitchen", "skateboard", "laptop", "umbrella", "dog", "tie")
# P(task | group): kitchen and umbrella lean "woman", skateboard and tie lean "man",
# laptop and dog are independent of the group.
_RATES = np.array([
    [0.10, 0.20, 0.30, 0.10, 0.15, 0.20],  # man
    [0.25, 0.05, 0.30, 0.20, 0.15, 0.04],  # woman
])


@dataclass(frozen=True, eq=False)
class DemoData:
    """A biased image-tagging dataset and a model's predictions on its test split.

    ``attr*`` are 1-D group names (``"man"``/``"woman"``); ``task*`` are
    ``N x 6`` 0/1 DataFrames of object tags. The simulated model amplifies
    the group→object association (it over-tags objects in the group they lean
    to and under-tags them in the other: positive BiasAmp A→T) while its
    gender predictions err at random, which weakens the object→gender
    association (BiasAmp T→A not amplified: reduced).
    """

    attr_train: pd.Series
    task_train: pd.DataFrame
    attr: pd.Series
    task: pd.DataFrame
    attr_pred: pd.Series
    task_pred: pd.DataFrame


def _sample(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    attr = (rng.random(n) < 0.35).astype(int)  # 35% "woman"
    task = rng.random((n, len(_TASKS))) < _RATES[attr]
    return attr, task


def make_amplification_demo(n_train: int = 20_000, n_test: int = 5_000, *, random_state: int = 0) -> DemoData:
    """Generate the demo dataset (deterministic for a given ``random_state``).

    Parameters
    ----------
    n_train, n_test : int
        Sizes of the training and test splits.
    random_state : int, default 0
        Seed of the generator.

    Returns
    -------
    DemoData

    Examples
    --------
    >>> from biasamp.datasets import make_amplification_demo
    >>> d = make_amplification_demo(n_train=1000, n_test=500)
    >>> d.task.shape, sorted(d.attr.unique())
    ((500, 6), ['man', 'woman'])
    """
    rng = np.random.default_rng(random_state)
    attr_train, task_train = _sample(rng, n_train)
    attr, task = _sample(rng, n_test)
    # the model: 5% random tag errors, plus amplification of each object's
    # leaning: extra positives in the group it leans to, misses in the other.
    lean = np.sign(_RATES[1] - _RATES[0])  # +1: leans woman, -1: leans man
    toward = lean[None, :] * np.where(attr[:, None] == 1, 1, -1) > 0
    away = lean[None, :] * np.where(attr[:, None] == 1, 1, -1) < 0
    u = rng.random(task.shape)
    task_pred = np.where(u < 0.05, ~task, task)
    task_pred = np.where(toward & ~task & (rng.random(task.shape) < 0.15), True, task_pred)
    task_pred = np.where(away & task & (rng.random(task.shape) < 0.40), False, task_pred)
    attr_pred = np.where(rng.random(n_test) < 0.08, 1 - attr, attr)
    names = np.array(_GROUPS, dtype=object)

    def frame(x: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(x.astype(np.int8), columns=list(_TASKS))

    return DemoData(
        attr_train=pd.Series(names[attr_train], name="gender"),
        task_train=frame(task_train),
        attr=pd.Series(names[attr], name="gender"),
        task=frame(task),
        attr_pred=pd.Series(names[attr_pred], name="gender"),
        task_pred=frame(task_pred),
    )


# --------------------------------------------------------------------------- #
# COMPAS (ProPublica), docs/definitions.md#def-datasets
# --------------------------------------------------------------------------- #
COMPAS_FEATURES = ("age", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count")


@dataclass(frozen=True, eq=False)
class CompasData:
    """ProPublica's COMPAS two-year data after the standard filters.

    Attributes
    ----------
    features : pandas.DataFrame
        The five features of the DPA paper (App. E): ``age, juv_fel_count,
        juv_misd_count, juv_other_count, priors_count``.
    attr : pandas.Series
        ``race`` (the protected attribute).
    task : pandas.Series
        The task label (``is_recid`` by default), 0/1.
    frame : pandas.DataFrame
        Every column of the kept rows (index reset).
    """

    features: pd.DataFrame
    attr: pd.Series
    task: pd.Series
    frame: pd.DataFrame


def load_compas(
    path,
    *,
    races: tuple | None = ("African-American", "Caucasian"),
    task: str = "is_recid",
) -> CompasData:
    """Load ProPublica's ``compas-scores-two-years.csv`` with the standard filters (:ref:`def-datasets`).

    Keeps the rows with ``-30 <= days_b_screening_arrest <= 30``,
    ``is_recid != -1``, ``c_charge_degree != "O"`` and ``score_text != "N/A"``
    (6,172 rows), then the given races (5,278 rows for African-American and
    Caucasian). With ``task="is_recid"`` (the DPA paper's label) the
    (race, task) counts are exactly those of DPA Table 6(a):
    Caucasian 1229 / 874, African-American 1402 / 1773 (T = 0 / 1);
    ``"two_year_recid"`` (ProPublica's and Wang & Russakovsky's label) does not
    reproduce them.

    The package ships no data: download the file from
    ``github.com/propublica/compas-analysis``.

    Parameters
    ----------
    path : str or path-like
        Location of ``compas-scores-two-years.csv``.
    races : tuple of str or None, default ("African-American", "Caucasian")
        Races to keep; ``None`` keeps all.
    task : {"is_recid", "two_year_recid"} or str, default "is_recid"
        Column used as the task label.

    Returns
    -------
    CompasData

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        The file lacks a needed column, or no row is left.

    References
    ----------
    .. [1] J. Angwin, J. Larson, S. Mattu, L. Kirchner. "Machine Bias".
       ProPublica, 2016.
    .. [2] B. Tokas, R. Nair, H. Kerner. "DPA". NeurIPS 2025, App. E.
    """
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"COMPAS file not found: {path}")
    df = pd.read_csv(path)
    needed = {"days_b_screening_arrest", "is_recid", "c_charge_degree", "score_text", "race", task, *COMPAS_FEATURES}
    missing = sorted(needed - set(df.columns))
    if missing:
        raise ValueError(f"{path.name} lacks the column(s) {missing}; expected ProPublica's two-year file")
    keep = (
        df["days_b_screening_arrest"].between(-30, 30)
        & (df["is_recid"] != -1)
        & (df["c_charge_degree"] != "O")
        & (df["score_text"] != "N/A")
        & df["score_text"].notna()
    )
    if races is not None:
        if isinstance(races, str):
            races = (races,)
        keep &= df["race"].isin(list(races))
    df = df[keep].reset_index(drop=True)
    if len(df) == 0:
        raise ValueError(f"no row left after the filters (races={races!r})")
    return CompasData(
        features=df[list(COMPAS_FEATURES)].copy(),
        attr=df["race"].rename("race"),
        task=df[task].astype(int).rename(task),
        frame=df,
    )


# --------------------------------------------------------------------------- #
# Qian et al. (2021): the released per-run bias values (lin-tan/fairness-variance)
# --------------------------------------------------------------------------- #
#: the released files' metric names -> biasamp's ("DI bar" is the normalized disparate impact, biasamp's DI)
_FV_METRICS = {"DI bar": "DI"}


def _read_values_yaml(path) -> dict[str, list[float]]:
    """A released YAML file: ``metric:`` lines, each followed by ``- number`` lines (the only YAML used there).

    Parsed without a YAML library: any other line raises ``ValueError`` naming the file and line.
    """
    out: dict[str, list[float]] = {}
    key = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        if line.startswith("- ") and key is not None:
            try:
                out[key].append(float(line[2:]))
            except ValueError:
                raise ValueError(f"{path}, line {number}: {line[2:]!r} is not a number") from None
        elif line.endswith(":") and not line.startswith((" ", "-")):
            key = line[:-1].strip().strip("'\"")
            key = _FV_METRICS.get(key, key)
            if key in out:
                raise ValueError(f"{path}, line {number}: metric {key!r} appears twice")
            out[key] = []
        else:
            raise ValueError(f"{path}, line {number}: expected 'metric:' or '- number', got {line!r} (the released "
                             "files hold one list of numbers per metric)")
    if not out:
        raise ValueError(f"{path} holds no metric")
    return out


@dataclass(frozen=True, eq=False)
class _Run:
    """One training run as :func:`~biasamp.stats.run_summary` reads a result: ``overall`` and ``by_class``."""

    overall: dict
    by_class: pd.DataFrame


@dataclass(frozen=True, eq=False)
class FairnessVarianceRuns:
    """The per-run bias values Qian et al. (2021) released for their 27 techniques (16 runs each).

    Attributes
    ----------
    overall : pandas.DataFrame
        One row per (``technique``, ``run``), one column per metric
        (``DP, DI, SPSF, FPSF, EOFP, EOTP, BA``; the released "DI bar" is
        biasamp's DI, the normalized disparate impact); fractions.
    per_class : pandas.DataFrame
        One row per (``technique``, ``run``, ``class``), the same columns: the
        per-class values (2 to 211 classes, by technique).
    techniques : tuple of str
        The techniques, in the order of the paper's tables (``S-Base`` ...
        ``N-Flow``) where they are known, then the others sorted.
    """

    overall: pd.DataFrame
    per_class: pd.DataFrame
    techniques: tuple

    def runs(self, technique: str) -> list:
        """The runs of ``technique`` as :func:`~biasamp.stats.run_summary` takes them (overall and per class).

        ``run_summary(data.runs("S-Base"))`` gives the overall and per-class
        Mean, Max, Min, MaxDiff and STDEV of the paper's tables.
        """
        if technique not in self.techniques:
            raise ValueError(f"technique must be one of {list(self.techniques)}, got {technique!r}")
        overall, per_class = self.overall.loc[technique], self.per_class.loc[technique]
        return [_Run(overall.loc[r].to_dict(), per_class.loc[r]) for r in overall.index]


#: the techniques in the order of Qian et al.'s tables (App. D.1, Table 4)
_FV_ORDER = ("S-Base", "S-RS", "S-UC", "S-GR", "S-DD1", "S-DD2", "S-DD3", "S-DD4", "S-DI1", "S-DI2", "C-Base", "C-R1",
             "C-R2", "C-R3", "C-A4", "C-A5", "I-Base", "I-R1", "I-R2", "I-R3", "I-A4", "I-A5", "A-Base", "A-L2",
             "A-ALM", "N-Base", "N-Flow")


def load_fairness_variance_runs(path: Any) -> FairnessVarianceRuns:
    r"""Load the per-run bias values released with Qian et al. (2021) (``lin-tan/fairness-variance``).

    The authors' repository holds, for each of their 27 techniques, the
    seven bias metrics of 16 fixed-seed training runs:
    ``raw_bias_numbers/overall/<technique>.yaml`` (metric -> the 16 runs'
    values) and ``raw_bias_numbers/per_class/<technique>/run_<i>.yaml``
    (metric -> one value per class). The package ships none of it: clone
    ``github.com/lin-tan/fairness-variance`` and pass the clone's folder (or
    its ``raw_bias_numbers`` folder). The files are read without a YAML
    library (they use one list of numbers per metric; anything else raises).

    Parameters
    ----------
    path : str or path-like
        The clone's folder, or its ``raw_bias_numbers`` folder.

    Returns
    -------
    FairnessVarianceRuns
        ``.overall`` and ``.per_class`` tables, ``.runs(technique)`` for
        :func:`~biasamp.stats.run_summary`.

    Raises
    ------
    FileNotFoundError
        No ``overall`` folder of YAML files under ``path``.
    ValueError
        A file outside the simple format, or a technique whose per-class runs
        do not match its overall runs (number of runs, metrics).

    Notes
    -----
    ``run_summary(data.runs(t))`` with the population STDEV (``ddof=0``,
    the default) and the per-class columns of the class with the largest
    MaxDiff reproduces the released table ``raw_data.csv`` and the paper's
    App. D.1, Table 4 (:math:`\overline{DI}`) to the printed rounding; see
    ``examples/fairness_variance_table4.py`` and docs/fairness.md.

    References
    ----------
    .. [1] S. Qian, H. V. Pham, T. Lutellier, Z. Hu, J. Kim, L. Tan, Y. Yu,
       J. Chen, S. Shah. "Are My Deep Learning Systems Fair? An Empirical
       Study of Fixed-Seed Training". NeurIPS 2021.
    """
    from pathlib import Path

    root = Path(path)
    if (root / "raw_bias_numbers").is_dir():
        root = root / "raw_bias_numbers"
    files = sorted((root / "overall").glob("*.yaml"))
    if not files:
        raise FileNotFoundError(f"no raw_bias_numbers/overall/*.yaml under {Path(path)}: pass a clone of "
                                "github.com/lin-tan/fairness-variance (or its raw_bias_numbers folder)")
    known = [t for t in _FV_ORDER if (root / "overall" / f"{t}.yaml").is_file()]
    techniques = tuple(known + sorted(f.stem for f in files if f.stem not in known))
    overall, per_class = [], []
    for tech in techniques:
        values = _read_values_yaml(root / "overall" / f"{tech}.yaml")
        frame = pd.DataFrame(values)
        runs = sorted((root / "per_class" / tech).glob("run_*.yaml"))
        if len(runs) != len(frame):
            raise ValueError(f"{tech}: {len(frame)} runs in overall/{tech}.yaml but {len(runs)} per-class files")
        for i, run in enumerate(runs):
            by_class = pd.DataFrame(_read_values_yaml(run))
            if list(by_class.columns) != list(frame.columns):
                raise ValueError(f"{run}: metrics {list(by_class.columns)} differ from overall/{tech}.yaml's "
                                 f"{list(frame.columns)}")
            by_class.index = pd.RangeIndex(len(by_class), name="class")
            per_class.append(by_class.assign(technique=tech, run=i))
        overall.append(frame.assign(technique=tech, run=np.arange(len(frame))))
    return FairnessVarianceRuns(
        overall=pd.concat(overall, ignore_index=True).set_index(["technique", "run"]),
        per_class=pd.concat(per_class).reset_index().set_index(["technique", "run", "class"]),
        techniques=techniques,
    )


# --------------------------------------------------------------------------- #
# sub-datasets of the papers' protocols (docs/definitions.md#def-datasets)
# --------------------------------------------------------------------------- #
def _cells(attr: Any, task: Any) -> tuple[np.ndarray, int, np.ndarray, int]:
    """``(group code, number of groups, task-set id, number of task sets)`` of every row.

    ``attr`` must hold one class per row (its classes are the groups); the
    task side of a row is its exact set of task labels (the class of a
    single-label task, the label set of a multi-label one).
    """
    from biasamp._core.labels import check_consistent_length, encode_labels
    from biasamp.multiattribute._metrics import _group_codes
    from biasamp.predictability._attackers import _row_ids

    a = encode_labels({"attr": attr})["attr"]
    t = encode_labels({"task": task})["task"]
    check_consistent_length(attr=a, task=t)
    codes = _group_codes(a)
    if t.codes is not None:
        sets, n_sets = t.codes, t.n_classes
    else:
        rows, sets = _row_ids(np.asarray(t.dense) != 0)
        n_sets = len(rows)
    return codes, a.n_classes, np.asarray(sets, dtype=np.intp), int(n_sets)


def _select(cell: np.ndarray, quota: np.ndarray, random_state: Any) -> np.ndarray:
    """Sorted indices of ``quota[c]`` rows drawn uniformly without replacement from each cell ``c``."""
    rng = np.random.default_rng(random_state)
    n = len(cell)
    perm = rng.permutation(n)
    order = perm[np.argsort(cell[perm], kind="stable")]  # rows grouped by cell, random order within
    sizes = np.bincount(cell, minlength=len(quota))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rank = np.arange(n) - starts[cell[order]]
    return np.sort(order[rank < quota[cell[order]]])


def _check_seed(random_state: Any) -> None:
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        return
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and int(random_state) >= 0:
        return
    raise TypeError(f"random_state must be None, a non-negative int or a numpy Generator, got {random_state!r}")


def balanced_subset(attr: Any, task: Any, *, equal_cells: bool = False, random_state: Any = None) -> np.ndarray:
    r"""Row indices of a sub-dataset where every task occurs equally often with every attribute class (DPA Eq. 7).

    .. math::

        \forall t:\ \#(a, t) = \#(a', t) \quad \text{for all attribute classes } a, a'

    Within each cell (attribute class :math:`a`, task set :math:`s`), the
    smallest count over the attribute classes, :math:`\min_{a'} \#(a', s)`,
    rows are drawn uniformly without replacement.

    Parameters
    ----------
    attr : labels of shape (n,) or (n, K_A)
        The protected attribute, one class per row (class ids/names or a
        one-hot matrix; any input kind of :ref:`def-inputs`).
    task : labels of shape (n,) or (n, K_T)
        The task: class ids/names (single-label) or an indicator matrix
        (multi-label).
    equal_cells : bool, default False
        Also make every task the same size: every (attribute, task) cell gets
        the size of the smallest non-empty one. The DPA paper's balanced
        COMPAS set is built this way (874 rows in each of the 4 cells).
    random_state : None, int or numpy Generator
        Seed of the draw; the same seed gives the same rows.

    Returns
    -------
    ndarray of int
        Sorted row indices into ``attr`` and ``task``.

    Raises
    ------
    ValueError
        Bad labels, an ``attr`` row without exactly one class, or a length
        mismatch.
    TypeError
        A bad ``random_state``.

    See Also
    --------
    ratio_bounded_subset : the relaxed constraint (DPA Eq. 8).
    oversample_balanced : balancing by oversampling instead.

    Notes
    -----
    For a multi-label task the cells are the exact *task sets* (the distinct
    label rows), so that :math:`\#(a, s)` equal across :math:`a` for every
    set :math:`s` makes :math:`\#(a, t) = \sum_{s \ni t} \#(a, s)` equal for
    every single task :math:`t`: Eq. 7 holds exactly, at the price of
    dropping the rows of rare label sets (the DPA paper restricts COCO to 12
    objects for this reason; select the task columns first). Rows without
    any task form their own cell. Each attribute class then has the same
    number of rows. Wang et al.'s α = 1 imSitu subset has exactly these
    per-verb counts (:ref:`def-datasets`).

    References
    ----------
    .. [1] B. Tokas, R. Nair, H. Kerner. "DPA: A one-stop metric to measure
       bias amplification in classification datasets". NeurIPS 2025, Eq. 7
       and App. E.
    .. [2] T. Wang et al. "Balanced Datasets Are Not Enough". ICCV 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp.datasets import balanced_subset
    >>> attr = np.array([0, 0, 0, 1, 1, 0, 1, 1, 1])
    >>> task = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    >>> rows = balanced_subset(attr, task, random_state=0)
    >>> len(rows), np.bincount(attr[rows] * 2 + task[rows]).tolist()   # #(a, t), cells (0,0) (0,1) (1,0) (1,1)
    (4, [1, 1, 1, 1])
    """
    _check_seed(random_state)
    codes, n_groups, sets, n_sets = _cells(attr, task)
    counts = np.bincount(sets * n_groups + codes, minlength=n_sets * n_groups).reshape(n_sets, n_groups)
    per_set = counts.min(axis=1)
    if equal_cells:
        present = per_set[per_set > 0]
        per_set = np.where(per_set > 0, present.min() if present.size else 0, 0)
    quota = np.repeat(per_set, n_groups)
    return _select(sets * n_groups + codes, quota, random_state)


def ratio_bounded_subset(
    attr: Any, task: Any, *, ratio: float = 3, strict: bool = True, random_state: Any = None
) -> np.ndarray:
    r"""Row indices of a sub-dataset whose (attribute, task) counts differ by less than a factor ``ratio`` (DPA Eq. 8).

    .. math::

        \forall t:\ \frac{1}{r} < \frac{\#(a, t)}{\#(a', t)} < r

    Every attribute class keeps all its rows of a task except where it has
    ``ratio`` times as many as the rarest class or more: it is then cut
    (uniformly at random) to the largest count allowed.

    Parameters
    ----------
    attr : labels of shape (n,) or (n, K_A)
        The protected attribute, one class per row.
    task : labels of shape (n,) or (n, K_T)
        The task (single-label classes or a multi-label indicator matrix).
    ratio : float, default 3
        The bound :math:`r` (the DPA paper's value is 3), at least 1.
    strict : bool, default True
        ``True``: the strict inequality of Eq. 8 (a class keeps at most
        :math:`\lceil r\,m \rceil - 1` rows, with :math:`m` the rarest
        class's count). ``False``: ``<=`` (at most :math:`\lfloor r\,m
        \rfloor`), the construction of Wang et al.'s α-balanced sets.
    random_state : None, int or numpy Generator
        Seed of the draw.

    Returns
    -------
    ndarray of int
        Sorted row indices.

    Raises
    ------
    ValueError
        ``ratio`` below 1 (or equal to 1 with ``strict``), bad labels, an
        ``attr`` row without exactly one class, or a length mismatch.
    TypeError
        A non-numeric ``ratio`` or a bad ``random_state``.

    See Also
    --------
    balanced_subset : the equality constraint (Eq. 7), ``ratio=1, strict=False``.

    Notes
    -----
    The cells are the exact task sets, as in :func:`balanced_subset`; the
    bound on every set implies it on every single task. A task missing from
    an attribute class (:math:`m = 0`) loses all its rows. The bound is
    computed in exact rational arithmetic (``ratio`` is read as the decimal
    it prints as). With ``strict=False``, ``ratio=2`` and ``3`` reproduce the
    per-verb counts of Wang et al.'s imSitu α = 2 and α = 3 training subsets
    (:ref:`def-datasets`).

    References
    ----------
    .. [1] B. Tokas, R. Nair, H. Kerner. "DPA". NeurIPS 2025, Eq. 8.
    .. [2] T. Wang et al. "Balanced Datasets Are Not Enough". ICCV 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from biasamp.datasets import ratio_bounded_subset
    >>> attr = np.repeat([0, 1, 0, 1], [2, 9, 3, 3])
    >>> task = np.repeat([0, 0, 1, 1], [2, 9, 3, 3])
    >>> rows = ratio_bounded_subset(attr, task, ratio=3, random_state=0)
    >>> np.bincount(attr[rows] * 2 + task[rows]).tolist()   # 9 cut to 5 (< 3 x 2); task 1 untouched
    [2, 3, 5, 3]
    >>> rows = ratio_bounded_subset(attr, task, ratio=3, strict=False, random_state=0)
    >>> np.bincount(attr[rows] * 2 + task[rows]).tolist()   # 9 cut to 6 (<= 3 x 2)
    [2, 3, 6, 3]
    """
    _check_seed(random_state)
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) or not np.isfinite(float(ratio)):
        raise TypeError(f"ratio must be a finite number, got {ratio!r}")
    r = Fraction(str(float(ratio))) if not isinstance(ratio, numbers.Rational) else Fraction(ratio)
    if r < 1 or (strict and r == 1):
        raise ValueError(
            f"ratio must be {'> 1' if strict else '>= 1'} (the bound on #(a, t) / #(a', t)), got {ratio!r}"
        )
    codes, n_groups, sets, n_sets = _cells(attr, task)
    counts = np.bincount(sets * n_groups + codes, minlength=n_sets * n_groups).reshape(n_sets, n_groups)
    rarest = counts.min(axis=1).astype(np.int64)
    num, den = r.numerator, r.denominator
    scaled = rarest.astype(object) * num if num * int(rarest.max(initial=0)) > 2**62 else rarest * num
    cap = (scaled - 1) // den if strict else scaled // den  # largest c with c < r m  (or c <= r m)
    cap = np.asarray(np.maximum(np.asarray(cap, dtype=np.int64), 0))
    quota = np.minimum(counts, cap[:, None]).ravel()
    return _select(sets * n_groups + codes, quota, random_state)


def oversample_balanced(
    attr: Any, task: Any, *, epsilon: float = 0.025, max_rounds: int = 10, random_state: Any = None
) -> np.ndarray:
    r"""Row indices (with repetitions) that balance every task across the attribute classes by greedy oversampling.

    The procedure of the multi-attribute paper (§5, App. C): repeat, task by
    task, until every bias score lies within :math:`1/|G| \pm \epsilon`,

    .. math::

        \Big|\,\frac{\#(a, t)}{\sum_{a'} \#(a', t)} - \frac{1}{|G|}\Big| \le \epsilon
        \quad \forall (a, t),

    where, for a task outside the band, each attribute class with fewer rows
    of the task than the largest gets the difference in copies of its rows
    holding the task, drawn uniformly with replacement from the current
    (already oversampled) data. Copies carry their other task labels along,
    so one round can unbalance a task balanced earlier: rounds repeat up to
    ``max_rounds``.

    Parameters
    ----------
    attr : labels of shape (n,) or (n, K_A)
        The protected attribute (the paper's group), one class per row.
    task : labels of shape (n,) or (n, K_T)
        The task labels (the paper's attributes).
    epsilon : float, default 0.025
        Tolerance around :math:`1/|G|` (the paper: 0.025 for COCO and imSitu,
        0.07 for CelebA).
    max_rounds : int, default 10
        Passes over the tasks at most.
    random_state : None, int or numpy Generator
        Seed of the draws.

    Returns
    -------
    ndarray of int
        Row indices in ascending order, every original row once plus its
        added copies.

    Raises
    ------
    ValueError
        ``epsilon`` outside ``[0, 1)``, ``max_rounds < 1``, bad labels, an
        ``attr`` row without exactly one class, or a length mismatch.
    TypeError
        A bad ``random_state``.

    Warns
    -----
    UserWarning
        When a task cannot be balanced (an attribute class has none of its
        rows: it is left as it is) or the band is not reached within
        ``max_rounds``; the message counts the (attribute, task) pairs left
        outside.

    See Also
    --------
    balanced_subset : exact balance by undersampling.

    Notes
    -----
    Tasks are visited in column order and the draws come from one generator,
    so the result is deterministic for a given ``random_state``. For a
    single-label task one round balances every task exactly. The authors'
    code also first oversamples the smaller group as a whole; the paper's
    definition (and this function) balances per task only.

    References
    ----------
    .. [1] D. Zhao, J. T. A. Andrews, A. Xiang. "Men Also Do Laundry:
       Multi-Attribute Bias Amplification". ICML 2023, §5 and App. C.

    Examples
    --------
    Task a is 2:1 in favour of class 0: one copy of row 2, the only row of
    class 1 with a, is added; that copy makes task b 1:2, so one copy of
    row 3 follows.

    >>> import numpy as np
    >>> from biasamp.datasets import oversample_balanced
    >>> attr = [0, 0, 1, 0]
    >>> task = np.array([[1, 0], [1, 0], [1, 1], [0, 1]])   # columns a, b
    >>> oversample_balanced(attr, task, random_state=0).tolist()
    [0, 1, 2, 2, 3, 3]
    """
    _check_seed(random_state)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0 <= epsilon < 1:
        raise ValueError(f"epsilon must be a number in [0, 1), got {epsilon!r}")
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, numbers.Integral) or max_rounds < 1:
        raise ValueError(f"max_rounds must be a positive integer, got {max_rounds!r}")
    from biasamp._core.labels import check_consistent_length, encode_labels
    from biasamp.multiattribute._metrics import _group_codes

    a = encode_labels({"attr": attr})["attr"]
    t = encode_labels({"task": task})["task"]
    check_consistent_length(attr=a, task=t)
    codes, n_groups = _group_codes(a), a.n_classes
    labels = t.to_dense(np.int8) != 0
    n, k = labels.shape
    rng = np.random.default_rng(random_state)
    mult = np.ones(n, dtype=np.int64)  # copies of every row in the current data

    def per_group(col: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=mult * col, minlength=n_groups)

    def outside(counts: np.ndarray) -> np.ndarray:
        total = counts.sum()
        return np.abs(counts / total - 1.0 / n_groups) > epsilon + 1e-12 if total > 0 else np.zeros(n_groups, bool)

    stuck: set = set()
    for _ in range(int(max_rounds)):
        changed = False
        for j in range(k):
            counts = per_group(labels[:, j])
            if not outside(counts).any():
                continue
            if (counts == 0).any():  # a class without the task: no row to copy
                stuck.add(j)
                continue
            target = counts.max()
            for g in np.flatnonzero(counts < target):
                pool = np.flatnonzero(labels[:, j] & (codes == g))
                need = int(round(target - counts[g]))
                drawn = rng.choice(pool, size=need, replace=True, p=mult[pool] / mult[pool].sum())
                mult += np.bincount(drawn, minlength=n)
                changed = True
        if not changed:
            break
    left = sum(int(outside(per_group(labels[:, j])).sum()) for j in range(k) if j not in stuck)
    if stuck:
        names = [t.classes[j] for j in sorted(stuck)]
        warnings.warn(
            f"oversample_balanced: {len(stuck)} task(s) {names[:10]!r} have no row in some attribute class and "
            "were left unbalanced", UserWarning, stacklevel=2)
    if left:
        warnings.warn(
            f"oversample_balanced: after max_rounds={max_rounds}, {left} (attribute, task) pairs are still "
            f"outside 1/{n_groups} +/- {epsilon}; raise max_rounds", UserWarning, stacklevel=2)
    return np.repeat(np.arange(n), mult)
