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

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from biasamp._core.crossfit import align_splits
from biasamp._core.policy import left_out_mask
from biasamp._engine import pair_terms as _t
from biasamp._engine.crossfit_tables import content_ids, fold_layout, fold_tables
from biasamp._engine.intervals import (
    Parts,
    Plan,
    Statistic,
    UnitTests,
    mean_of,
)
from biasamp._engine.resample import Cells, augmented_rows, cells_of
from biasamp.cooccurrence import _metrics as _c
from biasamp.cooccurrence._options import DirectionalOptions, MALSOptions


def _pairs_index(attr_classes: tuple, task_classes: tuple) -> pd.DataFrame:
    ka, kt = len(attr_classes), len(task_classes)
    return pd.DataFrame({
        "attr": np.repeat(np.array(attr_classes, dtype=object), kt),
        "task": np.tile(np.array(task_classes, dtype=object), ka),
    })


def _identity(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return lo, hi


def _label_cells(left: list, right: list, weights: np.ndarray | None = None,
                 folds: list | None = None, empty: np.ndarray | None = None) -> tuple[Cells, dict]:
    """The cells of the test labels and the three-way counts of the McNemar tests (from the same cells).

    With ``folds`` (cross-fitted signs: a list of splits, each the fold of
    every row) a cell is (content, folds) and its left vector is laid out per
    split and fold, ``[l·1[split 0 fold 0] | l·1[split 0 fold 1] | l·1[split 1
    fold 0] | ...]`` (``l = [1 | A | Â]``, with a last column ``1[empty row]``
    when ``empty`` is given), so every table holds every fold's table side by
    side (:func:`fold_tables`); the three-way counts are over every row.
    """
    rep, counts = cells_of([*left, *right], extra=() if folds is None else tuple(folds), weights=weights)
    cell_weights = None if weights is None else weights[rep]
    lrows = augmented_rows(left, rep)
    right_rows = augmented_rows(right, rep)
    if folds is None:
        cells = Cells(lrows, right_rows, counts, weights=cell_weights)
    else:
        blocks = [lrows] if empty is None else [lrows, sparse.csr_matrix(empty[rep].astype(np.float64)[:, None])]
        laid_out, cell_weights = fold_layout(sparse.hstack(blocks, format="csr"), [s[rep] for s in folds],
                                             cell_weights)
        cells = Cells(laid_out, right_rows, counts, weights=cell_weights)
    # the three-way counts: unweighted cell rows, each cell counted (rows x weight) times
    w = cells.counts if weights is None else cells.counts * weights[rep]
    del rep
    return cells, _agree(lrows, right_rows, w, left, right)


def _agree(lrows: sparse.csr_matrix, rrows: sparse.csr_matrix, w: np.ndarray, left: list, right: list) -> dict:
    """``{"A->T": #(a, t∧t̂), "T->A": #(a∧â, t)}`` from the cells' (unweighted) rows counted ``w`` times."""
    ka, kt = left[0].n_classes, right[0].n_classes
    a_roles, t_roles = [m.name for m in left], [m.name for m in right]

    def block(matrix, roles, role, k):
        j = roles.index(role)
        return matrix[:, 1 + j * k:1 + (j + 1) * k]

    agree: dict = {}
    if "attr" not in a_roles or "task" not in t_roles:
        return agree
    step = 1 << 16  # chunks of cells: column slices of a whole side would copy every non-zero
    for a in range(0, lrows.shape[0], step):
        lc, rc, wc = lrows[a:a + step], rrows[a:a + step], w[a:a + step, None]
        attr_rows = sparse.csr_matrix(block(lc, a_roles, "attr", ka).multiply(wc))
        task_rows = block(rc, t_roles, "task", kt)
        parts = {}
        if "task_pred" in t_roles:
            parts["A->T"] = attr_rows.T @ task_rows.multiply(block(rc, t_roles, "task_pred", kt))
        if "attr_pred" in a_roles:
            parts["T->A"] = sparse.csr_matrix(attr_rows.multiply(block(lc, a_roles, "attr_pred", ka))).T @ task_rows
        for key, value in parts.items():
            agree[key] = agree.get(key, 0.0) + np.asarray(value.todense(), dtype=np.float64)
    return agree


def directional_evaluator(point: Any, classes: tuple, y: np.ndarray | None, full: np.ndarray, roles: tuple,
                          agree: dict | None, soft: bool, *, folds: tuple | None = None) -> Plan:
    """Statistics, parts and McNemar tests of BiasAmp→ on Gram tables of layout ``roles`` (no cells).

    ``full`` is the test table ``[1|A|Â]ᵀ[1|T|T̂]`` (roles present),
    ``classes`` = (attr classes, task classes), ``agree`` the three-way counts
    ``{"A->T": #(a, t∧t̂), "T->A": #(a∧â, t)}`` (None: no tests). A
    direction undefined in ``point`` gets no statistic (a note says why).

    ``folds`` = ``(width, empty, directions)``: cross-fitted signs. The
    tables (``full`` included) then hold the folds' tables side by side, one
    split per direction in the order of ``directions`` (see
    :func:`fold_tables`); the folds' signs are those of the estimate, held
    fixed, and every replicate recomputes each fold's Δ and the cross-fitted
    value, while the parts (Δ per pair), the per-pair tables and the McNemar
    tests are on every row (``y`` is not used).
    """
    ka, kt = len(classes[0]), len(classes[1])
    if folds is not None:
        width, with_empty, splits = folds

        def merged(tables: np.ndarray) -> np.ndarray:
            t0, t1, _ = fold_tables(tables, width, with_empty)
            return t0 + t1

        def fold_signs(tables: np.ndarray, split: int) -> list:
            t0, t1, empty = fold_tables(tables, width, with_empty, split)
            return [_t.sign_of(t[..., 0, 0] - e, t[..., 1:1 + ka, 1:1 + kt], t[..., 1:1 + ka, 0], t[..., 0, 1:1 + kt])
                    for t, e in ((t0, empty[0]), (t1, empty[1]))]

        # the estimate's fold signs, held fixed in every replicate (as a training set's would be)
        signs = {d: fold_signs(full, splits.index(d)) for d in splits}
        full = merged(full)
    given = [d for d in (point.a_to_t, point.t_to_a) if d is not None]
    directions = [d for d in given if not d.undefined]
    # the pairs of small attribute classes: in the per-pair tables, out of the means (as in the estimate)
    left_out = np.broadcast_to(left_out_mask(classes[0], point.small_groups)[:, None], (ka, kt))
    integral = agree is not None and all(np.array_equal(x, np.rint(x)) for x in (full, *agree.values()))

    def arrays(tables: np.ndarray, direction: str):
        return _t._direction_arrays(1 if y is None else y, *_c._direction_inputs(direction, tables, ka, kt, roles))

    def values(tables: np.ndarray) -> dict:
        out = {}
        if folds is not None:  # the cross-fitted value: the folds' fixed signs, each fold's Delta resampled
            for d in directions:
                t0, t1, _ = fold_tables(tables, width, with_empty, splits.index(d.direction))
                y0, y1 = signs[d.direction]
                *_, contribution, undefined = _c.crossfit_direction(d.direction, y0, y1, t0, t1, ka, kt, roles)
                out[d.direction] = _c._mean_defined(contribution, undefined | left_out)
            return out
        for d in directions:
            _, _, _, contribution, undefined = arrays(tables, d.direction)
            out[d.direction] = _c._mean_defined(contribution, undefined | left_out)
        return out

    def parts(tables: np.ndarray) -> dict:
        out = {}
        if folds is not None:
            tables = merged(tables)
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
    if folds is not None:
        notes.append("no training set: the signs y_at are cross-fitted over two folds of the test rows (signs from "
                     "one fold, Delta from the other, both ways); every replicate resamples the rows with their fold, "
                     "the folds' signs held fixed; the per-pair intervals and tests are of Delta on every row")
    elif point.train_source == "test":
        notes.append("no training set: the signs y_at come from the test ground truth and stay fixed")
    if soft:
        notes.append("soft predictions: the McNemar tests need hard predictions, none computed")
    elif agree is not None and not integral:
        notes.append("non-integer sample weights: the exact McNemar tests need integer counts, none computed")
    if getattr(point, "weighted", False):
        notes.append("weighted rows: every replicate resamples rows together with their sample weights")
    return Plan(None, values, parts, statistics, tests, notes)


def directional_resample(counted: _c.Counted, opts: DirectionalOptions, point: Any) -> Plan:
    """The resampling plan of a counted BiasAmp→ call (the family's ``resample`` hook): cells and evaluator.

    The cells are the distinct rows of the test labels
    (:func:`_label_cells`); with a training set (or the plug-in) the signs
    y_at of the training counts are fixed, cross-fitted every cell carries
    its fold in each direction's split and the folds' signs are those of the
    estimate ``point`` (:func:`directional_evaluator`).
    """
    left, right, weights = counted.encoded()
    roles = (tuple(m.name for m in left), tuple(m.name for m in right))
    expected_rates = any(m.soft for m in (*left, *right))  # probabilities left soft (soft="expected")
    classes = (counted.test.attr_classes, counted.test.task_classes)
    if counted.cross_fit:
        train = counted.train
        empty = next(iter(train.values())).empty
        by_role = {m.name: m for m in (*left, *right)}
        reads = {"A->T": ("attr", "task", "task_pred"), "T->A": ("attr", "attr_pred", "task")}
        splits = align_splits([f.of_rows for f in train.values()],
                              [content_ids([by_role[r] for r in reads[d]], weights=weights) for d in train],
                              content_ids([*left, *right], weights=weights))
        cells, agree = _label_cells(left, right, weights, folds=splits, empty=empty)
        width = 1 + sum(m.n_classes for m in left)
        plan = directional_evaluator(point, classes, None, cells.table(), roles, agree, expected_rates,
                                     folds=(width, empty is not None, list(train)))
    else:
        cells, agree = _label_cells(left, right, weights)
        plan = directional_evaluator(point, classes, _c.correlation_sign(counted.train), cells.table(), roles, agree,
                                     expected_rates)
    plan.cells = cells
    return plan


def mals_evaluator(point: Any, classes: tuple, at: np.ndarray | None, *, folds: int | None = None,
                   group_options: dict | None = None) -> Plan:
    """BiasAmp_MALS on tables ``[1|Â]ᵀ[1|T̂]`` with the training counts ``at`` fixed (no cells).

    ``at`` holds exact integers unless non-integer training weights were given.
    ``folds`` = the width of one fold's ``[1|A|Â]``: the indicator is
    cross-fitted, the tables hold both folds' ``[1|A|Â]ᵀ[1|T|T̂]`` side by
    side (:func:`fold_tables`); the estimate's fold indicators and ``|T|``
    (set by ``statistics``) are held fixed, and every replicate recomputes
    each fold's change ``b_pred − b_train`` (``at`` is not used). The groups
    each way counts (:func:`biasamp._engine.pair_terms.fold_keep` of the
    folds' predicted group sizes, with ``group_options``: ``min_group_size``,
    ``include_small_groups``) are read from the estimate's fold tables as
    well, and held fixed.
    """
    ka, kt = len(classes[0]), len(classes[1])
    # the pairs of small attribute classes: in the per-pair tables, out of the sum (as in the estimate)
    left_out = np.broadcast_to(left_out_mask(classes[0], point.small_groups)[:, None], (ka, kt))

    a_true, a_pred = slice(1, 1 + ka), slice(1 + ka, 1 + 2 * ka)
    t_true, t_pred = slice(1, 1 + kt), slice(1 + kt, 1 + 2 * kt)
    fixed: tuple | None = None  # the estimate's fold indicators, |T| and kept groups, held fixed in every replicate

    def terms(tables: np.ndarray):
        if folds is None:
            assert at is not None
            *_, contribution, _, n_tasks = _t._mals_arrays(at, tables[..., 1:, 1:])
            return contribution, n_tasks
        t0, t1, _ = fold_tables(tables, folds)
        _, _, contribution, _, n_tasks = _t.mals_crossfit_arrays(
            t0[..., a_true, t_true], t1[..., a_true, t_true], t0[..., a_pred, t_pred], t1[..., a_pred, t_pred],
            indicators=None if fixed is None else fixed[0], keep=None if fixed is None else fixed[2])
        return contribution, (n_tasks if fixed is None else fixed[1])

    def values(tables: np.ndarray) -> dict:
        contribution, n_tasks = terms(tables)
        total = np.where(np.isnan(contribution) | left_out, 0.0, contribution).sum(axis=(-2, -1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return {"MALS": np.where(n_tasks > 0, total / np.maximum(n_tasks, 1), np.nan)}

    def parts(tables: np.ndarray) -> dict:
        contribution, _ = terms(tables)
        return {"MALS": contribution.reshape(len(tables), -1)}

    def statistics(full: np.ndarray) -> list:
        nonlocal fixed
        _, n_tasks = terms(full)
        n_tasks = int(np.ravel(n_tasks)[0])
        if folds is not None:
            t0, t1, _ = fold_tables(full[0], folds)
            keep = _t.fold_keep([t0[a_pred, 0], t1[a_pred, 0]], **(group_options or {}))
            fixed = ((t0[a_true, t_true], t1[a_true, t_true]), n_tasks, (keep[0][:, None], keep[1][:, None]))
        est = parts(full)["MALS"][0]
        p = Parts(
            estimate=est, replicates=None, units=_pairs_index(*classes), unit_estimate=est, to_units=_identity,
            aggregate=lambda v: float(np.nansum(np.where(left_out.ravel(), np.nan, v)) / n_tasks),
            unit_name="contribution",
        )
        return [Statistic("MALS", point.value, None, regular=True, range=(-1.0, 1.0), parts=p)]

    notes = ["weighted rows: every replicate resamples rows together with their sample weights"] \
        if getattr(point, "weighted", False) else []
    if folds is not None:
        notes.append("no training set: the indicator 1[bias_train > 1/|A|] is cross-fitted over two folds of the "
                     "rows (indicator from one fold, bias_pred - bias_train from the other, both ways); every "
                     "replicate resamples the rows with their fold, the folds' indicators held fixed")
    return Plan(None, values, parts, statistics, None, notes)


def mals_resample(counted: _c.Counted, opts: MALSOptions, point: Any) -> Plan:
    """The resampling plan of a counted BiasAmp_MALS call (the family's ``resample`` hook): cells and evaluator.

    The cells are the distinct rows of the predictions ``[Â | T̂]``
    (:func:`_label_cells`), the training counts fixed; cross-fitted, of
    ``[A | Â | T | T̂]`` with their fold, the estimate's fold indicators and
    kept groups held fixed (:func:`mals_evaluator`).
    """
    train = counted.train
    left, right, weights = counted.encoded()
    if counted.cross_fit:
        cells, _ = _label_cells(left, right, weights, folds=[train.of_rows])
        plan = mals_evaluator(point, (counted.test.attr_classes, counted.test.task_classes), None,
                              folds=1 + sum(m.n_classes for m in left),
                              group_options=_c._group_options(opts))
    else:
        cells, _ = _label_cells(left, right, weights)
        plan = mals_evaluator(point, (train.attr_classes, train.task_classes),
                              _t._as_count(train.cross("attr", "task")))
    plan.cells = cells
    return plan
