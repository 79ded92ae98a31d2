"""Built-in, deterministic datasets for demos, docs and tests."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["COMPAS_FEATURES", "CompasData", "DemoData", "load_compas", "make_amplification_demo"]

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
    gender predictions err at random (no T→A amplification beyond noise).
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
