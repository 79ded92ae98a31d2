"""The row set a cross-fitted stream keeps (``biasamp._engine.rowset``), on its own.

Properties derived from its definition (the multiset of the rows counted):
any cut into batches, merged in any order, gives the row set of all the rows;
the multiplicities add up to the rows; the rows it gives back reproduce every
row's content and weight; its size is what it reports.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp._core.labels import encode_labels
from biasamp._engine.rowset import RowSet, _take, deal_units, merge_rowsets


def _roles(attr: np.ndarray, task: np.ndarray) -> dict:
    a = encode_labels({"attr": attr}, classes=(0, 1, 2))
    t = encode_labels({"task": task}, classes=(0, 1, 2, 3))
    return {**a, **t}


def _rows_of(rs: RowSet) -> list[tuple]:
    """Every row (content and weight) as many times as the row set counts it, sorted."""
    out = []
    codes = rs.roles["attr"].codes
    dense = rs.roles["task"]._dense()
    for i, c in enumerate(rs.counts.astype(int)):
        out += [(int(codes[i]), tuple(int(v) for v in dense[i]), float(rs.unit[i]))] * c
    return sorted(out)


def _same(a: RowSet, b: RowSet) -> bool:
    return (np.array_equal(a.counts, b.counts) and np.array_equal(a.unit, b.unit)
            and np.array_equal(a.roles["attr"].codes, b.roles["attr"].codes)
            and np.array_equal(a.roles["task"]._dense(), b.roles["task"]._dense()))


@st.composite
def _data(draw):
    n = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 3, n)
    task = (rng.random((n, 4)) < 0.3).astype(int)
    kind = draw(st.sampled_from(["none", "integer", "fractional"]))
    w = None if kind == "none" else rng.integers(1, 4, n).astype(float)
    if kind == "fractional":
        w[rng.random(n) < 0.3] = 0.25
    cuts = sorted(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=5, unique=True))) if n > 1 else []
    order = draw(st.permutations(range(len(cuts) + 1)))
    return attr, task, w, cuts, order


@settings(max_examples=60, deadline=None)
@given(_data())
def test_any_batching_merged_in_any_order_is_the_row_set_of_every_row(data):
    attr, task, w, cuts, order = data
    whole = RowSet.of(_roles(attr, task), w)
    parts = [RowSet.of(_roles(attr[rows], task[rows]), None if w is None else w[rows])
             for rows in np.split(np.arange(len(attr)), cuts)]
    merged = None
    for i in order:
        merged = merge_rowsets(merged, parts[i])
    assert merged is not None and _same(merged, whole)
    # the multiset: every row once per occurrence, with its weight
    unit = np.ones(len(attr)) if w is None else w
    expected = sorted((int(a), tuple(int(v) for v in t), float(u)) for a, t, u in zip(attr, task, unit))
    assert _rows_of(whole) == expected
    assert whole.counts.sum() == len(attr) and whole.n_distinct == len(set(expected))
    assert whole.nbytes == (whole.counts.nbytes + whole.unit.nbytes + whole.roles["attr"].codes.nbytes
                            + whole.roles["task"]._dense().nbytes)


@settings(max_examples=40, deadline=None)
@given(_data())
def test_the_rows_given_back_carry_every_unit(data):
    """``rows()``: unweighted rows come back once per distinct row with their multiplicity (units), weighted ones
    once per occurrence (a weighted row is one observation); either way the total weight and each content's weight
    are the rows'."""
    attr, task, w, _, _ = data
    rs = RowSet.of(_roles(attr, task), w)
    roles, weights = rs.rows()
    unit = np.ones(len(attr)) if w is None else w
    assert np.isclose(weights.sum(), unit.sum(), rtol=0, atol=1e-9)
    assert rs.in_units == bool(np.all(unit == 1.0))
    assert len(weights) == (rs.n_distinct if rs.in_units else len(attr))

    def by_content(codes, dense, wts):
        out: dict = {}
        for c, t, x in zip(codes, dense, wts):
            key = (int(c), tuple(int(v) for v in t))
            out[key] = out.get(key, 0.0) + float(x)
        return {k: round(v, 9) for k, v in out.items()}

    assert by_content(roles["attr"].codes, roles["task"]._dense(), weights) == by_content(attr, task, unit)


def test_a_stream_of_many_batches_sorts_each_row_a_logarithmic_number_of_times(monkeypatch):
    """Merging is amortised (levels merged like a binary counter's carries): 256 batches of 40 distinct rows
    put each row through about log2(256) = 8 canonical sorts, where merging every batch into the whole would
    sort the earlier rows again at every batch (256 / 2 = 128 times each on average)."""
    import biasamp._engine.rowset as rowset_module

    sorted_rows = []
    real = rowset_module.canonical_ids

    def counting(cols):
        sorted_rows.append(len(cols[0]))
        return real(cols)

    rng = np.random.default_rng(0)
    n_batches, size = 256, 40
    attr = rng.integers(0, 3, n_batches * size)
    task = np.arange(n_batches * size)[:, None] >> np.arange(14) & 1  # every row distinct (14 bits)
    roles = {**encode_labels({"attr": attr}, classes=(0, 1, 2)),
             **encode_labels({"task": task}, classes=tuple(range(14)))}
    monkeypatch.setattr(rowset_module, "canonical_ids", counting)
    merged = None
    for b in range(n_batches):
        idx = np.arange(b * size, (b + 1) * size)
        merged = merge_rowsets(merged, RowSet.of({r: _take(m, idx) for r, m in roles.items()}, None))
    assert merged is not None and merged.n_distinct == n_batches * size  # read: the levels merged into one
    per_row = sum(sorted_rows) / (n_batches * size)
    assert per_row <= np.log2(n_batches) + 2, per_row
    monkeypatch.setattr(rowset_module, "canonical_ids", real)
    assert _same(merged, RowSet.of(roles, None))


def test_merging_rows_of_other_roles_is_refused():
    a = RowSet.of(_roles(np.array([0, 1]), np.array([[1, 0, 0, 1], [0, 1, 1, 0]])), None)
    b = RowSet.of(encode_labels({"attr": np.array([0, 2])}, classes=(0, 1, 2)), None)
    with pytest.raises(ValueError, match="every batch must give the same label arguments"):
        a + b


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=30), st.integers(1, 50), st.integers(0, 2**16))
def test_dealt_units_each_land_in_one_group(units, n_groups, seed):
    """Every unit of every entry is dealt to exactly one group: the counts per entry add up to its units."""
    units = np.array(units, dtype=float)
    entry, group, k = deal_units(units, n_groups, np.random.default_rng(seed))
    assert ((group >= 0) & (group < n_groups)).all() and (k >= 1).all()
    np.testing.assert_array_equal(np.bincount(entry, weights=k, minlength=len(units)), units)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.booleans()), min_size=1, max_size=12), st.integers(2, 9),
       st.integers(0, 2**31))
def test_rows_of_sample_weights_go_to_a_group_whole(rows, n_groups, seed):
    """A row of a sample weight (an integer one too) is one observation: the streamed bootstrap deals it to one
    group whole with its weight (``whole``), where units (numbers of identical rows) are dealt one by one; the
    groups add up to every row's weight, fold by fold."""
    from scipy import sparse

    from biasamp._engine.rowset import dealt_group_tables

    weights = np.array([w for w, _ in rows], dtype=float)
    n = len(rows)
    shares = [np.where([f for _, f in rows], weights, 0.0), None]  # a split's fold 0: whole rows; a split not drawn
    left = sparse.csr_matrix(np.eye(n))  # one column per row: the table tells the rows apart
    right = sparse.csr_matrix(np.ones((n, 1)))
    tables = dealt_group_tables(left, right, weights, shares, (4 * n, 1), n_groups, seed, whole=True)
    fold0, fold1 = tables[:, :n, 0], tables[:, n:2 * n, 0]
    assert np.array_equal((fold0 + fold1).sum(axis=0), weights)
    assert np.array_equal(fold0.sum(axis=0), shares[0])
    # each row in one group, whole: its weight there and 0 elsewhere
    assert np.array_equal(np.sort(fold0 + fold1, axis=0)[-1], weights) and np.all(((fold0 + fold1) > 0).sum(axis=0) == 1)
    # units are dealt one by one: with many units some row lands in several groups
    many = dealt_group_tables(left, right, weights * 50, [s * 50 if s is not None else None for s in shares],
                              (4 * n, 1), n_groups, seed)
    assert np.array_equal((many[:, :n, 0] + many[:, n:2 * n, 0]).sum(axis=0), weights * 50)
