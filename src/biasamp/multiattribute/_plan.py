"""Bootstrap plan for the multi-attribute family (Multi_MALS, Multi→ G→M and M→G).

The training side fixes the combinations M, the signs y_gm, the training bias
scores and the indicators. The test rows are resampled: a row's left vector is
``[1 | g | ĝ]`` (group one-hot, true and predicted) and its right vector
``[1 | 1[m ⊆ S] | 1[m ⊆ Ŝ]]`` over the kept combinations, so the table
``Lᵀ diag(c) R`` over the distinct rows holds every test count of
:class:`~biasamp.MultiAttributeCounts` (#g, #(g, m ⊆ S), #ĝ, #(g, m ⊆ Ŝ),
#(ĝ, m ⊆ S), #(ĝ, m ⊆ Ŝ)).

Statistics: the headline "abs" values (``"Multi_MALS"``, ``"G->M"``,
``"M->G"``: means of |Δ|, non-regular, intervals from a simultaneous band on
the per-(group, combination) Δ) and the signed "raw" values (``"... raw"``,
smooth). A metric undefined on the full data gets no statistic (a note says
why). Sample weights are part of the cells' keys and scale their left
vectors, so replicates resample rows with their weights.
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
from biasamp._engine.intervals import Parts, Plan, Statistic, abs_range
from biasamp._engine.resample import Cells, augmented, cells_of, label_rows
from biasamp.multiattribute import _metrics as _m
from biasamp.multiattribute._options import MultiOptions

_CHUNK = 8 << 20  # bytes of one dense containment chunk


def _containment(rows: sparse.csr_matrix, member: sparse.csr_matrix, sizes: np.ndarray) -> sparse.csr_matrix:
    """``1[m ⊆ S]`` for every row (label set S) and combination m: ``rows @ member == |m|``."""
    n, n_comb = rows.shape[0], member.shape[1]
    chunk = max(1, _CHUNK // (8 * max(n_comb, 1)))
    parts = []
    for a in range(0, n, chunk):
        hits = np.asarray((rows[a:a + chunk] @ member).todense())
        parts.append(sparse.csr_matrix((hits == sizes[None, :]).astype(np.float64)))
    return sparse.vstack(parts, format="csr") if parts else sparse.csr_matrix((0, n_comb))


def combination_members(task_classes: tuple, combinations: tuple) -> sparse.csr_matrix:
    """``(K_T, |M|)`` 0/1 matrix: task label j belongs to combination m."""
    position = {name: j for j, name in enumerate(task_classes)}
    sizes = np.array([len(m) for m in combinations], dtype=np.int64)
    rows = np.fromiter((position[name] for m in combinations for name in m), dtype=np.int64, count=int(sizes.sum()))
    cols = np.repeat(np.arange(len(combinations)), sizes)
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(task_classes), len(combinations)))


def containment_rows(rows: sparse.csr_matrix, task_classes: tuple, combinations: tuple) -> sparse.csr_matrix:
    """``1[m ⊆ S]`` for label rows ``rows`` (sparse 0/1, one column per task class) and every combination.

    Computed once per distinct label set and gathered to the rows: label sets
    repeat a lot, and the containment of one set costs ``O(|M|)``.
    """
    sizes = np.array([len(m) for m in combinations], dtype=np.float64)
    member = combination_members(task_classes, combinations)
    n = rows.shape[0]
    if n == 0:
        return sparse.csr_matrix((0, len(combinations)))
    packed = np.packbits(rows.toarray().astype(bool), axis=1)
    keys = np.ascontiguousarray(packed).view(f"V{packed.shape[1]}").ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return _containment(rows[first], member, sizes)[inverse.ravel()]


def _index(counts: Any) -> pd.DataFrame:
    ng, nm = len(counts.attr_classes), len(counts.combinations)
    combos = np.empty(nm, dtype=object)
    combos[:] = list(counts.combinations)
    return pd.DataFrame({"attr": np.repeat(np.array(counts.attr_classes, dtype=object), nm),
                         "combination": np.tile(combos, ng)})


def _mean_defined(x: np.ndarray) -> float:
    ok = np.isfinite(x)
    return float(x[ok].mean()) if ok.any() else float("nan")


def multi_resample(counted: _m._Counted, opts: MultiOptions, point: Any) -> Plan:
    """The resampling plan of a counted call (the family's ``resample`` hook): its cells, the metrics on tables.

    The test rows' cells (one per distinct row: its left vector ``[1 | g |
    ĝ]``, one block per fold of each cross-fitted metric's split, and right
    vector ``[1 | 1[m ⊆ S] | 1[m ⊆ Ŝ]]``) and :func:`multi_evaluator` of the
    estimate ``point``. Refuses ``attr_pred_rule="argmax"`` rows in no or
    several predicted groups (the resampled tables count one group per row).
    """
    prep, counts = counted.prep, counted.counts
    if prep is None:
        raise ValueError("a stream's counts keep tables, not rows: no resampling cells")
    cols = prep.attr_pred_columns
    if cols is not None and not np.array_equal(cols, np.eye(cols.shape[1], dtype=bool)[prep.codes["attr_pred"]]):
        # the replicates count Multi_MALS and M->G from one predicted group per row; the authors' M->G counts
        # every thresholded column of a row, so rows in no or several groups cannot share those tables
        raise ValueError(
            "attr_pred: bootstrap of multi_bias_amp with attr_pred_rule='argmax' needs rows with exactly one "
            "predicted group after thresholding (some rows have none or several; the authors' M->G counts them "
            "in every column, which the resampled tables do not hold): compute the point estimate with "
            "multi_bias_amp, or pass one-hot attr_pred")
    splits = None if counted.folds is None else {key: of_rows for key, (of_rows, _, _) in counted.folds.items()}
    codes = {name: c for name, c in prep.codes.items() if name != "attr_train"}
    task_mats = [prep.a[r] for r in ("task", "task_pred") if r in prep.a]
    extra = [codes[r] for r in ("attr", "attr_pred") if r in codes]
    if splits is not None:  # one canonical deal of each metric's split among the rows it cannot tell apart
        def reads(key: str) -> np.ndarray:
            roles = ("attr", "task", *_m._METRIC_ROLES[key])
            return content_ids([prep.a[r] for r in ("task", "task_pred") if r in roles],
                               tuple(codes[r] for r in ("attr", "attr_pred") if r in roles), prep.weights)

        splits = dict(zip(splits, align_splits(list(splits.values()), [reads(k) for k in splits],
                                               content_ids(task_mats, tuple(extra), prep.weights))))
        extra += list(splits.values())
    rep, cell_counts = cells_of(task_mats, extra=extra, weights=prep.weights)
    n_attr = len(counts.attr_classes)
    left = augmented([sparse.csr_matrix((np.ones(len(rep)), (np.arange(len(rep)), codes[r][rep])),
                                        shape=(len(rep), n_attr)) for r in ("attr", "attr_pred") if r in codes],
                     len(rep))
    width = left.shape[1]
    cell_weights = None if prep.weights is None else prep.weights[rep]
    if splits is not None:  # each cell's left vector in the block of its fold, one pair of blocks per metric's split
        left, cell_weights = fold_layout(left, [split[rep] for split in splits.values()], cell_weights)
    right = augmented([containment_rows(label_rows(m, rep), counts.task_classes, counts.combinations)
                       for m in task_mats], len(rep))
    cells = Cells(left, right, cell_counts, weights=cell_weights)
    plan = multi_evaluator(point, folds=None if splits is None else (width, list(splits)),
                           group_options={"min_group_size": opts.min_group_size,
                                          "include_small_groups": opts.include_small_groups})
    plan.cells = cells
    return plan


def multi_evaluator(point: Any, *, folds: tuple | None = None, group_options: dict | None = None) -> Plan:
    """Multi_MALS and Multi→ (abs and raw) on tables ``[1|G|Ĝ]ᵀ[1|M(S)|M(Ŝ)]`` (no cells).

    The training side of ``point.counts`` (signs, training bias scores and
    indicators, the combinations) stays fixed. ``folds`` = ``(width,
    metrics)``, the width of one fold's ``[1|G|Ĝ]`` and the metrics whose
    splits the tables hold, in order: the signs and Multi_MALS's indicator
    are cross-fitted, the tables hold each metric's two folds' tables side by
    side (see :func:`biasamp._engine.crossfit_tables.fold_tables`), and every replicate
    holds the estimate's fold signs and indicators fixed: Multi→'s raw values
    and Multi_MALS (abs and raw) are cross-fitted, Multi→'s abs values use Δ
    on every row. The groups each way of the cross-fitted Multi_MALS counts
    (:func:`biasamp._engine.pair_terms.fold_keep` of its folds' group
    sizes, with ``group_options``) are read from the estimate's fold tables
    too, and held fixed.
    """
    counts = point.counts
    n_attr, n_comb = len(counts.attr_classes), len(counts.combinations)
    g_rows, gh_rows = slice(1, 1 + n_attr), slice(1 + n_attr, 1 + 2 * n_attr)
    m_cols, mh_cols = slice(1, 1 + n_comb), slice(1 + n_comb, 1 + 2 * n_comb)
    y = _m._train_sign(counts)
    train_joint = _t._as_count(counts.train_joint)
    use = {key: r is not None and not r.undefined
           for key, r in (("Multi_MALS", point.mals), ("G->M", point.g_to_m), ("M->G", point.m_to_g))}
    # small groups' pairs: in the tables, out of every headline (as in the estimate): NaN, like undefined pairs
    left_out = left_out_mask(counts.attr_classes, point.small_groups)[None, :, None]
    names = [n for key in ("Multi_MALS", "G->M", "M->G") if use[key] for n in (key, key + " raw")]

    def change(tables: np.ndarray, direction: str, signs: Any = 1):
        both = tables[:, g_rows, m_cols]
        if direction == "G->M":
            support = np.broadcast_to(tables[:, g_rows, 0:1], both.shape)
            predicted = tables[:, g_rows, mh_cols]
        else:
            support = np.broadcast_to(both.sum(axis=1, keepdims=True), both.shape)
            predicted = tables[:, gh_rows, m_cols]
        _, _, d, contribution, undefined = _t._direction_arrays(signs, both, support, predicted)
        return d, contribution, undefined

    def deltas(tables: np.ndarray) -> dict:
        """Per-(group, combination) Δ of each metric, (B, G, M) with NaN where undefined, and y·Δ."""
        if folds is not None:
            return crossfit_deltas(tables)
        out = {}
        if use["Multi_MALS"]:
            *_, contribution, _, _ = _t._mals_arrays(train_joint, tables[:, gh_rows, mh_cols])
            contribution = np.where(left_out, np.nan, contribution)
            out["Multi_MALS"] = (contribution, contribution)
        for key in ("G->M", "M->G"):
            if use[key]:
                d, contribution, undefined = change(tables, key, y)
                undefined = undefined | left_out
                out[key] = (np.where(undefined, np.nan, d), np.where(undefined, np.nan, contribution))
        return out

    fixed: dict = {}  # the estimate's fold signs and indicators, held fixed in every replicate

    def crossfit_deltas(tables: np.ndarray) -> dict:
        assert folds is not None
        width, splits = folds
        t0, t1, _ = fold_tables(tables, width)
        full = t0 + t1
        if not fixed:  # the first call is on the estimate's table
            for key in splits:
                f0, f1, _ = fold_tables(tables[:1], width, split=splits.index(key))
                fixed[key] = [_t.sign_of(t[:, 0, 0], t[:, g_rows, m_cols], t[:, g_rows, 0],
                                         t[:, g_rows, m_cols].sum(axis=1)) for t in (f0, f1)] \
                    if key != "Multi_MALS" else (f0[:, g_rows, m_cols], f1[:, g_rows, m_cols])
                if key == "Multi_MALS":  # the groups each way counts: their sizes in its fold
                    fixed["keep"] = _t.fold_keep([f0[0, g_rows, 0], f1[0, g_rows, 0]], **(group_options or {}))
        out = {}
        if use["Multi_MALS"]:
            t0, t1, _ = fold_tables(tables, width, split=splits.index("Multi_MALS"))
            keep = fixed["keep"]
            *_, contribution, _, _ = _t.mals_crossfit_arrays(t0[:, g_rows, m_cols], t1[:, g_rows, m_cols],
                                                             t0[:, gh_rows, mh_cols], t1[:, gh_rows, mh_cols],
                                                             indicators=fixed["Multi_MALS"],
                                                             keep=(keep[0][:, None], keep[1][:, None]))
            contribution = np.where((~keep[0] & ~keep[1])[None, :, None], np.nan, contribution)
            out["Multi_MALS"] = (contribution, contribution)
        for key in ("G->M", "M->G"):
            if use[key]:
                t0, t1, _ = fold_tables(tables, width, split=splits.index(key))
                signs = fixed[key]
                d, _, undefined = change(full, key)
                d0, _, u0 = change(t0, key)
                d1, _, u1 = change(t1, key)
                contribution, _ = _t.crossfit_mean(signs[0] * d1, signs[1] * d0, u1, u0)
                undefined = undefined | left_out
                out[key] = (np.where(undefined, np.nan, d), np.where(undefined, np.nan, contribution))
        return out

    def values(tables: np.ndarray) -> dict:
        out = {}
        for name, (d, signed) in deltas(tables).items():
            flat_d, flat_s = d.reshape(len(tables), -1), signed.reshape(len(tables), -1)
            ok = np.isfinite(flat_d)
            cnt = ok.sum(axis=1)
            if name == "Multi_MALS":
                out[name] = np.where(ok, np.abs(flat_d), 0.0).sum(axis=1) / n_comb
                out[name + " raw"] = np.where(ok, flat_s, 0.0).sum(axis=1) / n_comb
            else:
                with np.errstate(invalid="ignore", divide="ignore"):
                    denom = np.where(cnt > 0, cnt, 1)
                    out[name] = np.where(cnt > 0, np.where(ok, np.abs(flat_d), 0.0).sum(axis=1) / denom, np.nan)
                    out[name + " raw"] = np.where(cnt > 0, np.where(ok, flat_s, 0.0).sum(axis=1) / denom, np.nan)
        return out

    def parts(tables: np.ndarray) -> dict:
        out = {}
        for name, (d, signed) in deltas(tables).items():
            flat = d.reshape(len(tables), -1)
            out[name] = flat
            # cross-fitted Multi->: the raw value's parts are its own (cross-fitted y * Delta)
            out[name + " raw"] = signed.reshape(len(tables), -1) if folds is not None and name != "Multi_MALS" \
                else flat
        return out

    def statistics(full: np.ndarray) -> list:
        est = parts(full)
        val = values(full)
        index = _index(counts)
        out = []
        for name in names:
            base = name.replace(" raw", "")
            d = est[name][0]
            defined = np.isfinite(est[base][0])
            if base == "Multi_MALS":
                def agg(v, _ok=defined):
                    return float(np.sum(v[_ok]) / n_comb)
            else:
                def agg(v, _ok=defined):
                    return float(np.mean(v[_ok])) if _ok.any() else float("nan")
            raw = name.endswith(" raw")
            p = Parts(estimate=d, replicates=None, units=index, unit_estimate=d,
                      to_units=(lambda lo, hi: (lo, hi)) if raw else abs_range, aggregate=agg,
                      unit_name="contribution" if raw and folds is not None and base != "Multi_MALS" else "delta")
            rng = (-1.0, 1.0) if raw else (0.0, 1.0)  # the declared ranges: intervals are clipped to them
            out.append(Statistic(name, float(val[name][0]), None, regular=raw, range=rng, parts=p))
        return out

    notes = [f"{key} undefined, no interval: {r.reason}"
             for key, r in (("Multi_MALS", point.mals), ("G->M", point.g_to_m), ("M->G", point.m_to_g))
             if r is not None and r.undefined]
    if folds is not None:
        notes.append("no training set: the combinations come from the test ground truth and stay fixed; the signs "
                     "y_gm and Multi_MALS's indicator are cross-fitted over two folds of the test rows (from one "
                     "fold, applied to Delta on the other, both ways), held fixed in every replicate")
    elif point.train_source != "train":
        notes.append("no training set: the combinations, signs and training bias scores come from the test ground "
                     "truth and stay fixed")
    if getattr(point, "weighted", False):
        notes.append("weighted rows: every replicate resamples rows together with their sample weights")
    return Plan(None, values, parts, statistics, None, notes)
