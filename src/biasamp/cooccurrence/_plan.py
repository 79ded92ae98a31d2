"""Bootstrap plans and tests of no effect for BiasAmp→ and BiasAmp_MALS.

The cells are the distinct rows of the test labels (BiasAmp→: A, Â, T, T̂;
BiasAmp_MALS: Â, T̂), with left vector ``[1 | A | Â]`` and right vector
``[1 | T | T̂]``: the layout of :class:`~biasamp.CooccurrenceCounts`. The
training side (signs y, bias_train, indicators) is counted once and fixed.

Tests of no effect per BiasAmp→ pair (exact McNemar on paired indicators):

* A→T, pair (a, t): among the members of a, T̂_t vs T_t; discordant counts
  #(a, t=1, t̂=0) and #(a, t=0, t̂=1);
* T→A, pair (a, t): among the positives of t, Â_a vs A_a; discordant counts
  #(a=1, â=0, t) and #(a=0, â=1, t).

Both need the three-way counts #(a, t∧t̂) and #(a∧â, t), read from the same
cells (no second pass over the rows).

Sample weights: a row's weight is part of its cell's key and scales the
cell's contribution, so a replicate resamples rows *with* their weights. The
McNemar tests need integer counts: with weights that are not integers they
are not computed (a note says so). A statistic undefined on the full data
(every pair undefined) gets no interval: it is left out, with a note.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from biasamp._core.policy import left_out_mask
from biasamp._engine.intervals import (
    Parts,
    Plan,
    Statistic,
    UnitTests,
    mean_of,
)
from biasamp._engine.resample import Cells, augmented_rows, cells_of
from biasamp.cooccurrence import _metrics as _c


def _pairs_index(attr_classes: tuple, task_classes: tuple) -> pd.DataFrame:
    ka, kt = len(attr_classes), len(task_classes)
    return pd.DataFrame({
        "attr": np.repeat(np.array(attr_classes, dtype=object), kt),
        "task": np.tile(np.array(task_classes, dtype=object), ka),
    })


def _identity(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return lo, hi


def _label_cells(left: list, right: list, weights: np.ndarray | None = None) -> tuple[Cells, dict]:
    """The cells of the test labels and the three-way counts of the McNemar tests (from the same cells)."""
    rep, counts = cells_of([*left, *right], weights=weights)
    cell_weights = None if weights is None else weights[rep]
    cells = Cells(augmented_rows(left, rep), augmented_rows(right, rep), counts, weights=cell_weights)
    del rep
    # the three-way counts: unweighted cell rows, each cell counted (rows x weight) times
    lrows = cells.left if cell_weights is None else cells.unweighted_left()
    w = cells.counts if cell_weights is None else cells.counts * cell_weights
    ka, kt = left[0].n_classes, right[0].n_classes
    a_roles, t_roles = [m.name for m in left], [m.name for m in right]

    def block(matrix, roles, role, k):
        j = roles.index(role)
        return matrix[:, 1 + j * k:1 + (j + 1) * k]

    agree = {}
    if "attr" not in a_roles or "task" not in t_roles:
        return cells, agree
    step = 1 << 16  # chunks of cells: column slices of a whole side would copy every non-zero
    for a in range(0, cells.n_cells, step):
        lc, rc, wc = lrows[a:a + step], cells.right[a:a + step], w[a:a + step, None]
        attr_rows = sparse.csr_matrix(block(lc, a_roles, "attr", ka).multiply(wc))
        task_rows = block(rc, t_roles, "task", kt)
        parts = {}
        if "task_pred" in t_roles:
            parts["A->T"] = attr_rows.T @ task_rows.multiply(block(rc, t_roles, "task_pred", kt))
        if "attr_pred" in a_roles:
            parts["T->A"] = sparse.csr_matrix(attr_rows.multiply(block(lc, a_roles, "attr_pred", ka))).T @ task_rows
        for key, value in parts.items():
            agree[key] = agree.get(key, 0.0) + np.asarray(value.todense(), dtype=np.float64)
    return cells, agree


def directional_evaluator(point: Any, classes: tuple, y: np.ndarray, full: np.ndarray, roles: tuple,
                          agree: dict | None, soft: bool) -> Plan:
    """Statistics, parts and McNemar tests of BiasAmp→ on Gram tables of layout ``roles`` (no cells).

    ``full`` is the test table ``[1|A|Â]ᵀ[1|T|T̂]`` (roles present),
    ``classes`` = (attr classes, task classes), ``agree`` the three-way counts
    ``{"A->T": #(a, t∧t̂), "T->A": #(a∧â, t)}`` (None: no tests). A
    direction undefined in ``point`` gets no statistic (a note says why).
    """
    ka, kt = len(classes[0]), len(classes[1])
    given = [d for d in (point.a_to_t, point.t_to_a) if d is not None]
    directions = [d for d in given if not d.undefined]
    # the pairs of small attribute classes: in the per-pair tables, out of the means (as in the estimate)
    left_out = np.broadcast_to(left_out_mask(classes[0], point.small_groups)[:, None], (ka, kt))
    integral = agree is not None and all(np.array_equal(x, np.rint(x)) for x in (full, *agree.values()))

    def arrays(tables: np.ndarray, direction: str):
        return _c._direction_arrays(y, *_c._direction_inputs(direction, tables, ka, kt, roles))

    def values(tables: np.ndarray) -> dict:
        out = {}
        for d in directions:
            _, _, _, contribution, undefined = arrays(tables, d.direction)
            out[d.direction] = _c._mean_defined(contribution, undefined | left_out)
        return out

    def parts(tables: np.ndarray) -> dict:
        out = {}
        for d in directions:
            _, _, delta, _, undefined = arrays(tables, d.direction)
            out[d.direction] = np.where(undefined, np.nan, delta).reshape(len(tables), -1)
        return out

    def statistics(full_tables: np.ndarray) -> list:
        est = parts(full_tables)
        out = []
        for d in directions:
            delta = est[d.direction][0]
            defined = np.isfinite(delta)
            p = Parts(
                estimate=delta, replicates=None, units=_pairs_index(*classes),
                unit_estimate=delta, to_units=_identity, aggregate=mean_of(defined & ~left_out.ravel()),
                unit_name="delta",
            )
            out.append(Statistic(d.direction, d.value, None, regular=True, range=(-1.0, 1.0), parts=p))
        return out

    def tests(random_state: Any) -> dict:
        from biasamp._engine.pvalues import mcnemar_exact

        if soft or agree is None or not integral:
            return {}
        out = {}
        for d in directions:
            if d.direction not in agree:
                continue
            both, _, predicted = _c._direction_inputs(d.direction, full[None], ka, kt, roles)
            b = both[0] - agree[d.direction]
            c = predicted[0] - agree[d.direction]
            p = np.asarray(mcnemar_exact(np.rint(b).astype(np.int64), np.rint(c).astype(np.int64)).p_value,
                           dtype=np.float64)
            p = np.where(d.pairs["undefined"].to_numpy().reshape(ka, kt), np.nan, p)
            out[d.direction] = UnitTests(p.ravel(), "exact McNemar test per pair (paired indicators)")
        return out

    notes = [f"{d.direction} undefined, no interval: {d.reason}" for d in given if d.undefined]
    if point.train_source == "test":
        notes.append("no training set: the signs y_at come from the test ground truth and stay fixed")
    if soft:
        notes.append("soft predictions: the McNemar tests need hard predictions, none computed")
    elif agree is not None and not integral:
        notes.append("non-integer sample weights: the exact McNemar tests need integer counts, none computed")
    if getattr(point, "weighted", False):
        notes.append("weighted rows: every replicate resamples rows together with their sample weights")
    return Plan(None, values, parts, statistics, tests, notes)


def _directional_plan(attr: Any = None, task: Any = None, *args: Any, attr_pred: Any = None,
                      task_pred: Any = None, attr_train: Any = None, task_train: Any = None,
                      drop_empty_train_rows: bool = False, sample_weight: Any = None,
                      train_sample_weight: Any = None, missing: str = "raise", threshold: float = 0.5,
                      soft: str = "threshold", min_group_size: int = 30, include_small_groups: bool = False) -> Plan:
    if args:
        raise TypeError(f"bias_amp_directional takes attr and task positionally, got {2 + len(args)} arguments")
    if attr is None or task is None:
        raise TypeError("bias_amp_directional needs attr and task")
    train, test, (left, right, weights), source, predictions = _c._count_directional(
        attr, task, attr_pred, task_pred, attr_train, task_train, drop_empty_train_rows, sample_weight,
        train_sample_weight, missing, threshold, soft)
    point = dataclasses.replace(_c.directional_from_counts(train, test, train_source=source,
                                                           min_group_size=min_group_size,
                                                           include_small_groups=include_small_groups),
                                predictions=predictions)
    cells, agree = _label_cells(left, right, weights)
    roles = (tuple(m.name for m in left), tuple(m.name for m in right))
    expected_rates = any(m.soft for m in (*left, *right))  # probabilities left soft (soft="expected")
    plan = directional_evaluator(point, (test.attr_classes, test.task_classes), _c.correlation_sign(train),
                                 cells.table(), roles, agree, expected_rates)
    plan.cells = cells
    plan.result = point
    return plan


def mals_evaluator(point: Any, classes: tuple, at: np.ndarray) -> Plan:
    """BiasAmp_MALS on tables ``[1|Â]ᵀ[1|T̂]`` with the training counts ``at`` fixed (no cells).

    ``at`` holds exact integers unless non-integer training weights were given.
    """

    # the pairs of small attribute classes: in the per-pair tables, out of the sum (as in the estimate)
    left_out = np.broadcast_to(left_out_mask(classes[0], point.small_groups)[:, None],
                               (len(classes[0]), len(classes[1])))

    def terms(tables: np.ndarray):
        return _c._mals_arrays(at, tables[..., 1:, 1:])

    def values(tables: np.ndarray) -> dict:
        *_, contribution, _, n_tasks = terms(tables)
        return {"MALS": _c._mals_value(np.where(left_out, np.nan, contribution), n_tasks)}

    def parts(tables: np.ndarray) -> dict:
        *_, contribution, _, _ = terms(tables)
        return {"MALS": contribution.reshape(len(tables), -1)}

    def statistics(full: np.ndarray) -> list:
        *_, n_tasks = terms(full)
        est = parts(full)["MALS"][0]
        p = Parts(
            estimate=est, replicates=None, units=_pairs_index(*classes), unit_estimate=est, to_units=_identity,
            aggregate=lambda v: float(np.nansum(np.where(left_out.ravel(), np.nan, v)) / n_tasks),
            unit_name="contribution",
        )
        return [Statistic("MALS", point.value, None, regular=True, range=(-1.0, 1.0), parts=p)]

    notes = ["weighted rows: every replicate resamples rows together with their sample weights"] \
        if getattr(point, "weighted", False) else []
    return Plan(None, values, parts, statistics, None, notes)


def _mals_plan(attr_train: Any = None, task_train: Any = None, *args: Any, attr_pred: Any = None,
               task_pred: Any = None, sample_weight: Any = None, train_sample_weight: Any = None,
               missing: str = "raise", threshold: float = 0.5, soft: str = "threshold", min_group_size: int = 30,
               include_small_groups: bool = False) -> Plan:
    if args or any(x is None for x in (attr_train, task_train, attr_pred, task_pred)):
        raise TypeError("bias_amp_mals takes attr_train, task_train and the keyword arguments attr_pred, task_pred")
    train, pred, (left, right, weights), predictions = _c._count_mals(
        attr_train, task_train, attr_pred, task_pred, sample_weight, train_sample_weight, missing, threshold, soft)
    point = dataclasses.replace(_c.mals_from_counts(train, pred, min_group_size=min_group_size,
                                                    include_small_groups=include_small_groups),
                                predictions=predictions)
    cells, _ = _label_cells(left, right, weights)
    plan = mals_evaluator(point, (train.attr_classes, train.task_classes), _c._as_count(train.cross("attr", "task")))
    plan.cells = cells
    plan.result = point
    return plan


