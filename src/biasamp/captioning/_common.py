"""Shared pieces of LIC and DBAC: argument checks, splits, class balance, seeds, intervals."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._deps import _as_array, check_n_iter_bound, confidence_interval, encode_labels, seed_sequence

_TRAIN = frozenset({"train", "training"})
_TEST = frozenset({"val", "valid", "validation", "test"})


def encode_single(values: Any, name: str) -> tuple[np.ndarray, tuple]:
    """1-D class labels -> ``(codes, classes)``; at least two classes."""
    raw, _ = _as_array(values, name)
    if raw.ndim != 1:
        raise ValueError(f"{name} must be 1-D class labels (one per image), got shape {raw.shape}")
    m = encode_labels({name: values})[name]
    if m.codes is None:
        raise ValueError(f"{name} must be class labels (one per image), not a 0/1 indicator matrix")
    if m.n_classes < 2:
        raise ValueError(f"{name} has {m.n_classes} class ({list(m.classes)}); leakage needs at least 2")
    return m.codes.astype(np.intp), tuple(m.classes)


def check_n(**lengths: int) -> None:
    """All lengths equal (one row per image), else a ``ValueError`` naming every argument and its length."""
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"length mismatch: {desc} rows (one per image)")


def check_split(split: Any, n: int) -> np.ndarray | None:
    """``split`` -> boolean mask of the attacker's training images (``None`` stays ``None``).

    Values ``"train"`` / ``"val"`` (also ``"test"``, ``"validation"``), or
    booleans (``True`` = training image).
    """
    if split is None:
        return None
    plain = split.to_numpy() if hasattr(split, "to_numpy") else np.asarray(split)
    raw, _ = _as_array(split, "split")
    if raw.ndim != 1 or len(raw) != n:
        raise ValueError(f"split must hold one value per image ({n}), got shape {raw.shape}")
    if plain.dtype.kind == "b" or (raw.dtype.kind in "iu" and set(np.unique(raw).tolist()) <= {0, 1}):
        mask = raw.astype(bool)
    else:
        values = np.array([str(v).lower() if isinstance(v, str) else v for v in raw.tolist()], dtype=object)
        is_tr = np.isin(values, list(_TRAIN))
        is_te = np.isin(values, list(_TEST))
        if not (is_tr | is_te).all():
            bad = values[~(is_tr | is_te)][:5].tolist()
            raise ValueError(f"split values must be 'train' or 'val'/'test' (or booleans, True = train), got {bad}")
        mask = is_tr
    if mask.all() or not mask.any():
        raise ValueError(f"split puts every image on one side ({int(mask.sum())} training, {int((~mask).sum())} "
                         "scored); the attacker needs both")
    return mask


def check_n_iter(n_iter: Any, level: Any) -> int:
    n_iter = check_n_iter_bound(n_iter)
    if level is not None:
        if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < float(level) < 1:
            raise ValueError(f"level must be in (0, 1) or None (no confidence interval), got {level!r}")
        if int(n_iter) < 2:
            raise ValueError(f"n_iter={n_iter}: a confidence interval needs n_iter >= 2; pass level=None to skip it")
    return int(n_iter)


def check_test_size(test_size: Any) -> float:
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real) or not 0 < float(test_size) < 1:
        raise ValueError(f"test_size must be a fraction in (0, 1), got {test_size!r}")
    return float(test_size)


def check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def seeds(random_state: Any, n_iter: int) -> tuple[list[np.ndarray], np.random.SeedSequence]:
    """Two 32-bit seeds per iteration (split/subsample, attacker), and the caption bootstrap's seed.

    All fixed before anything runs, from one root: the iterations' seeds are
    its first ``n_iter`` children, the bootstrap's the next one.
    """
    root = seed_sequence(random_state)
    states = [child.generate_state(2, dtype=np.uint32) for child in root.spawn(n_iter)]
    return states, root.spawn(1)[0]


def random_split(strata: np.ndarray | None, n: int, test_size: float, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Train/test rows: ``ceil(test_size * n_c)`` test rows per stratum (at least one row on each side)."""
    perm = rng.permutation(n)
    if strata is None:
        n_test = min(max(int(np.ceil(test_size * n)), 1), n - 1)
        test = np.zeros(n, dtype=bool)
        test[perm[:n_test]] = True
    else:
        s = strata[perm]
        order = np.argsort(s, kind="stable")
        counts = np.bincount(s)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n) - starts[s[order]]
        per_class = np.ceil(test_size * counts).astype(np.int64)
        per_class = np.where(counts >= 2, np.clip(per_class, 1, counts - 1), 0)
        test = np.zeros(n, dtype=bool)
        test[perm] = rank < per_class[s]
        if not test.any():  # every class a singleton: an unstratified split
            return random_split(None, n, test_size, rng)
    return np.flatnonzero(~test), np.flatnonzero(test)


def balance(rows: np.ndarray, codes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A class-balanced subsample of ``rows``: every class cut to the smallest class's count (sorted rows)."""
    c = codes[rows]
    counts = np.bincount(c, minlength=k)
    present = counts > 0
    m = counts[present].min() if present.any() else 0
    perm = rng.permutation(len(rows))
    cp = c[perm]
    order = np.argsort(cp, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(len(rows), dtype=np.int64)
    rank[order] = np.arange(len(rows)) - starts[cp[order]]
    return np.sort(rows[perm[rank < m]])


def interval(values: np.ndarray, level: float | None, bounds: tuple[float, float] | None):
    if level is None:
        return None
    low, high = confidence_interval(values, level=level, method="t", bounds=bounds)
    return (float(low), float(high))


def std(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else 0.0


def fmt_ci(ci: tuple[float, float] | None, level: float | None) -> str:
    from ._deps import fmt

    if ci is None or level is None:
        return ""
    return f" [{round(100 * level):d}% CI {fmt(ci[0])}, {fmt(ci[1])}]"
