"""The fast cross-fitting split equals the rule it implements (issue 24): a per-row reference, on random inputs.

:func:`biasamp._core.crossfit.crossfit_splits` computes every hash once per
distinct row content and sorts packed integer words. ``_reference_splits``
below is the straightforward implementation it replaced (every row hashed,
arg-sorts), kept as the definition of the split: the strata, a key per row from
the class signatures, the occurrence of a row among the rows of its stratum and
key, ``H(seed, key, occurrence)``, then dealing each stratum alternately. Its
sorts are stable, so that rows with the same content are taken in row order:
the one choice the replaced code left to the sort (rows of the same content
are interchangeable, so the fold tables never depended on it).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp._core import crossfit as cf
from biasamp._core.crossfit import align_splits, crossfit_folds, crossfit_splits
from biasamp._core.labels import LabelMatrix


# --------------------------------------------------------------------------- #
# the reference: the rule, one row at a time
# --------------------------------------------------------------------------- #
def _sort_by(key, strata, tie=None):
    """The rows by stratum, then key, then tie, then position (stable sorts)."""
    order = np.argsort(key, kind="stable") if tie is None else np.lexsort((tie, key))
    return order[np.argsort(strata[order], kind="stable")]


def _reference_deal(key, strata, tie, seed):
    n = len(key)
    with np.errstate(over="ignore"):
        order = _sort_by(key, strata, tie)
        ks, ss = key[order], strata[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (ks[1:] != ks[:-1]) | (ss[1:] != ss[:-1])
        starts = np.flatnonzero(new)
        occurrence = np.empty(n, dtype=np.uint64)
        occurrence[order] = (np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))).astype(np.uint64)
        u = cf._combine(cf._mix(seed), cf._combine(key, occurrence ^ cf._SALT_OCCURRENCE))
    order = _sort_by(u, strata)
    ss = strata[order]
    new = np.ones(n, dtype=bool)
    new[1:] = ss[1:] != ss[:-1]
    starts = np.flatnonzero(new)
    position = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    folds = np.empty(n, dtype=np.int8)
    folds[order] = position & 1
    return folds


def _reference_splits(roles, reads, weights=None, random_state=None, stratified=True, units=None):
    seed = np.array([cf.split_seed(random_state)], dtype=np.uint64)
    attr = roles["attr"]
    n = attr.n_rows
    if attr.codes is not None:
        by_class = np.asarray(attr.codes, dtype=np.int64)
    else:  # an indicator matrix: its exact set of groups
        h = cf._positional(attr, np.arange(attr.n_classes, dtype=np.uint64), cf._SALT_ATTR)
        by_class = np.unique(h, return_inverse=True)[1].astype(np.int64).ravel()
    flags = [stratified] * len(reads) if isinstance(stratified, bool) else list(stratified)
    # units (numbers of identical rows) are dealt like that many rows; a sample weight keeps its row whole, its
    # weight part of the row's content (weights all 1: no weights)
    if units is not None:
        weights, units = np.asarray(units, dtype=np.float64), np.asarray(units, dtype=np.int64)
    elif weights is not None and np.all(np.asarray(weights) == 1):
        weights = None
    wbits = None if weights is None or units is not None else \
        np.where(np.asarray(weights) == 1, np.uint64(0), cf._mix(cf._float_bits(weights) ^ cf._SALT_WEIGHT))
    out = []
    with np.errstate(over="ignore"):
        for read, flag in zip(reads, flags):
            strata = by_class if flag else np.zeros(n, dtype=np.int64)
            used = {r: roles[r] for r in cf._canonical([r for r in read if roles.get(r) is not None])}
            sides = (tuple(r for r in used if r in cf._ATTR_ROLES), tuple(r for r in used if r not in cf._ATTR_ROLES))
            sizes = (attr.n_classes, next((used[r].n_classes for r in sides[1]), 0))
            stats = cf._stats(used, sides, units)
            sigs = cf._class_signatures(stats, sides, sizes)
            empty = [np.all([stats.count[r] == 0 for r in side], axis=0) if side else np.ones(k, dtype=bool)
                     for side, k in zip(sides, sizes)]
            tied = any(cf._tied(x, e) for x, e in zip(sigs, empty))
            if tied:
                sigs = cf._refine(used, sides, sigs, wbits, units)
                tied = any(cf._tied(x, e) for x, e in zip(sigs, empty))
            key = np.zeros(n, dtype=np.uint64) if wbits is None else wbits
            for r in used:
                key = cf._combine(key, cf._positional(used[r], sigs[0] if r in cf._ATTR_ROLES else sigs[1],
                                                      cf._role_salt(r)))
            tie = None
            if tied:
                tie = np.zeros(n, dtype=np.uint64) if wbits is None else wbits
                for r in used:
                    tie = cf._combine(tie, cf._positional(used[r], np.arange(used[r].n_classes, dtype=np.uint64),
                                                          cf._role_salt(r)))
            if units is None:
                out.append(_reference_deal(key, strata, tie, seed))
                continue
            row_of = np.repeat(np.arange(n), units)
            in_fold0 = _reference_deal(key[row_of], strata[row_of], None if tie is None else tie[row_of], seed) == 0
            out.append(np.bincount(row_of[in_fold0], minlength=n).astype(np.float64))
    if weights is not None and units is None:
        out = [np.where(f == 0, np.asarray(weights, dtype=np.float64), 0.0) for f in out]
    elif weights is None:
        out = [(f == 0).astype(np.int8) for f in out]
    return out


# --------------------------------------------------------------------------- #
# random inputs: codes or 0/1 matrices, soft predictions, many groups, duplicate rows, tied classes, weights
# --------------------------------------------------------------------------- #
def _matrix(rng, name, n, k, kind, alphabet=3):
    if kind == "codes":
        codes = rng.integers(0, k, n)
        codes[:min(k, n)] = np.arange(min(k, n))
        return LabelMatrix(name, tuple(range(k)), codes=codes)
    if kind == "soft":  # a few distinct probabilities: duplicate rows
        return LabelMatrix(name, tuple(range(k)), dense=rng.integers(0, alphabet, (n, k)) / (alphabet - 1) * 0.5,
                           soft=True)
    return LabelMatrix(name, tuple(range(k)), dense=(rng.random((n, k)) < 0.35).astype(np.int8))


def _mirrored(m, n):
    """The rows twice, the second time with classes 0 and 1 swapped (two classes identical up to their names)."""
    if m.codes is not None:
        swap = np.arange(m.n_classes)
        swap[[0, 1]] = [1, 0]
        return LabelMatrix(m.name, m.classes, codes=np.concatenate([m.codes, swap[m.codes]]))
    dense = m._dense()
    other = dense.copy()
    other[:, [0, 1]] = dense[:, [1, 0]]
    return LabelMatrix(m.name, m.classes, dense=np.concatenate([dense, other]), soft=m.soft)


def _same_rows(m, n):
    """The rows twice, unchanged (the other roles of a mirrored data set)."""
    if m.codes is not None:
        return LabelMatrix(m.name, m.classes, codes=np.concatenate([m.codes, m.codes]))
    return LabelMatrix(m.name, m.classes, dense=np.concatenate([m._dense(), m._dense()]), soft=m.soft)


READS = (
    [("attr", "task", "task_pred"), ("attr", "attr_pred", "task")],  # BiasAmp->
    [("attr", "task", "attr_pred", "task_pred")],  # Multi_MALS
    [("task", "task_pred")],  # the attribute not read: still the strata
    [("attr",)],
    [("attr_pred", "task")],  # unstratified, neither the attribute nor its classes in the content
)


@st.composite
def split_inputs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 90))
    attr_kind = draw(st.sampled_from(["codes", "codes", "dense"]))
    ka = draw(st.integers(2, 12)) if attr_kind == "codes" else draw(st.integers(2, 4))
    task_kind = draw(st.sampled_from(["codes", "dense", "wide"]))
    # wide: more columns than a word holds beside a position, or about as many
    kt = {"codes": draw(st.integers(2, 6)), "dense": draw(st.integers(1, 12)),
          "wide": draw(st.sampled_from([54, 55, 56, 57, 70]))}[task_kind]
    task_kind = "codes" if task_kind == "codes" else "dense"
    pred_kind = draw(st.sampled_from([task_kind, "soft"])) if task_kind == "dense" else task_kind
    roles = {"attr": _matrix(rng, "attr", n, ka, attr_kind),
             "attr_pred": _matrix(rng, "attr_pred", n, ka, attr_kind),
             "task": _matrix(rng, "task", n, kt, task_kind),
             "task_pred": _matrix(rng, "task_pred", n, kt, pred_kind)}
    if draw(st.booleans()):  # classes 0 and 1 of the attribute identical up to their names
        roles = {r: (_mirrored(m, n) if r in ("attr", "attr_pred") else _same_rows(m, n)) for r, m in roles.items()}
        n *= 2
    kind = draw(st.sampled_from(["none", "ones", "integer", "real", "units"]))
    weights = {"none": None, "ones": np.ones(n), "integer": rng.integers(1, 4, n).astype(float),
               "real": rng.choice([0.5, 1.0, 2.25], n), "units": rng.integers(1, 4, n).astype(float)}[kind]
    if weights is not None and draw(st.booleans()):  # a few rows of weight 0
        weights[rng.random(n) < 0.1] = 0.0
    if kind == "units":  # a stream's distinct rows and their multiplicities (numbers of identical rows)
        weights = {"units": weights}
    reads = draw(st.sampled_from(READS))
    seed = draw(st.one_of(st.none(), st.integers(0, 2**64 - 1)))
    stratified = draw(st.one_of(st.booleans(), st.lists(st.booleans(), min_size=len(reads), max_size=len(reads))))
    return roles, reads, weights, seed, stratified


def _check(roles, reads, weights, seed, stratified=True):
    given = dict(weights) if isinstance(weights, dict) else {"weights": weights}  # {"units": ...}: units
    got = crossfit_splits(roles, reads, random_state=seed, stratified=stratified, **given)
    expected = _reference_splits(roles, reads, random_state=seed, stratified=stratified, **given)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("few", [None, 0, 10**9], ids=["default", "per-content", "per-row"])
@settings(max_examples=150, deadline=None)
@given(split_inputs())
def test_the_split_equals_the_rule_row_by_row(few, data):
    """Hashing one row of each distinct content, or every row (then taken at each content), gives the rule's split."""
    with pytest.MonkeyPatch.context() as mp:
        if few is not None:
            mp.setattr(cf, "_FEW_CONTENTS", few)
        _check(*data)


@settings(max_examples=40, deadline=None)
@given(split_inputs())
def test_many_strata_sorted_at_once_give_the_same_split(data):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cf, "_MAX_SLICES", 0)  # the path for more strata than it sorts one by one
        _check(*data)


@pytest.mark.parametrize("levels", [2, 40, 3000])
def test_larger_inputs_single_label_and_multi_label(levels):
    """Thousands of rows (positions of 14+ bits), duplicate rows by the thousand, up to 3000 groups."""
    rng = np.random.default_rng(levels)
    n = 12000
    g = rng.integers(0, levels, n)
    y = rng.integers(0, 5, n)
    p = np.where(rng.random(n) < 0.3, rng.integers(0, 5, n), y)
    T = (rng.random((n, 9)) < 0.3).astype(np.int8)
    TP = T ^ (rng.random((n, 9)) < 0.05).astype(np.int8)
    classes = tuple(range(levels))
    for task, pred in ((y, p), (T, TP)):
        def m(name, x):
            if x.ndim == 1:
                return LabelMatrix(name, tuple(range(5)) if name.startswith("task") else classes, codes=x)
            return LabelMatrix(name, tuple(range(x.shape[1])), dense=x)
        roles = {"attr": m("attr", g), "attr_pred": m("attr_pred", np.where(rng.random(n) < 0.1, 0, g)),
                 "task": m("task", task), "task_pred": m("task_pred", pred)}
        for weights in (None, rng.integers(1, 3, n).astype(float)):
            _check(roles, READS[0], weights, 3)


# --------------------------------------------------------------------------- #
# the pieces
# --------------------------------------------------------------------------- #
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.sampled_from([1, 3, 8, 12, 16, 17, 40, 60, 64]))
def test_group_orders_by_value_then_position(seed, n, bits):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**min(bits, 6), n, dtype=np.uint64) << np.uint64(max(bits - 6, 0))  # many equal
    positions = np.arange(n, dtype=np.uint64)
    order, starts = cf._group(values, bits, positions)
    np.testing.assert_array_equal(order, np.argsort(values, kind="stable"))
    ordered = values[order]
    np.testing.assert_array_equal(starts, np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]))
    renumbered, new_bits = cf._compress(values, bits, positions)
    np.testing.assert_array_equal(renumbered, np.unique(values, return_inverse=True)[1].ravel())
    assert int(renumbered.max()) < 2**new_bits


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3000), st.integers(1, 5))
def test_alternate_deals_by_key_then_position_even_when_top_bits_tie(seed, n, n_strata):
    """Keys that differ only in their low bits (the bits a packed word drops) are still ordered by the whole key."""
    rng = np.random.default_rng(seed)
    u = rng.integers(0, 4, n, dtype=np.uint64) << np.uint64(62)  # top bits: four values
    u |= rng.integers(0, 3, n, dtype=np.uint64)  # low bits: three values (equal keys too)
    counts = np.bincount(rng.integers(0, n_strata, n), minlength=n_strata)
    bounds = np.append(0, np.cumsum(counts))
    strata = np.repeat(np.arange(n_strata), counts)
    alternating = (np.arange(n) % 2).astype(np.int8)
    got = cf._alternate(u, bounds, np.arange(n, dtype=np.uint64), alternating, np.empty(n, dtype=np.uint64))
    order = np.lexsort((np.arange(n), u, strata))
    expected = np.empty(n, dtype=np.int8)
    expected[order] = (np.arange(n) - bounds[strata[order]]) % 2
    np.testing.assert_array_equal(got, expected)


def test_rows_of_the_same_content_are_dealt_in_row_order():
    """The choice the rule leaves open, fixed: of identical rows, the earlier ones take the earlier occurrences."""
    attr = LabelMatrix("attr", (0, 1), codes=np.zeros(9, dtype=np.int64))
    task = LabelMatrix("task", (0, 1), codes=np.zeros(9, dtype=np.int64))
    share = crossfit_folds(attr, [task])
    assert share.sum() == 5  # ceil(9 / 2) in fold 0
    # nine identical rows: occurrence j is row j, and H(seed, key, j) orders them
    with np.errstate(over="ignore"):
        key = np.zeros(9, dtype=np.uint64)
        for r, m in (("attr", attr), ("task", task)):
            stats = cf._stats({"attr": attr, "task": task}, (("attr",), ("task",)))
            sigs = cf._class_signatures(stats, (("attr",), ("task",)), (2, 2))
            key = cf._combine(key, cf._positional(m, sigs[0] if r == "attr" else sigs[1], cf._role_salt(r)))
        u = cf._combine(cf._mix(np.array([0], dtype=np.uint64)),
                        cf._combine(key, np.arange(9, dtype=np.uint64) ^ cf._SALT_OCCURRENCE))
    rank = np.argsort(np.argsort(u))
    np.testing.assert_array_equal(share, (rank % 2 == 0).astype(np.int8))


def test_empty_and_single_rows():
    for n in (0, 1):
        attr = LabelMatrix("attr", (0, 1), codes=np.zeros(n, dtype=np.int64))
        task = LabelMatrix("task", (0, 1, 2), dense=np.zeros((n, 3), dtype=np.int8))
        roles = {"attr": attr, "task": task}
        _check(roles, [("attr", "task")], None, 0)
        assert crossfit_splits(roles, [("attr", "task")])[0].tolist() == [1] * n
        _check(roles, [("attr", "task")], np.full(n, 2.0), 0)
        _check(roles, [("attr", "task")], np.full(n, 0.5), 0)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.sampled_from(["int8", "int64", "bool", "float", "negative"]))
def test_order_by_is_a_lexicographic_sort(seed, n, kind):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 1 + n // 10, n) * (1 if rng.random() < 0.5 else 2**40)  # ids, some wide
    then = {"int8": lambda: rng.integers(0, 2, n).astype(np.int8), "int64": lambda: rng.integers(0, 50, n),
            "bool": lambda: rng.random(n) < 0.5, "float": lambda: rng.choice([0.0, -0.0, 0.5, 1.0, 2.5, np.inf], n),
            "negative": lambda: rng.choice([-1.0, 0.0, 1.0], n)}[kind]()
    np.testing.assert_array_equal(cf._order_by(first, then), np.lexsort((then, first)))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.booleans())
def test_align_splits_redeals_each_group_in_content_order(seed, n, weighted):
    rng = np.random.default_rng(seed)
    content = rng.integers(0, 12, n)
    group = content // 3  # the split's roles see less than the whole content
    split = (rng.random(n) < 0.5).astype(np.int8) if not weighted else rng.integers(0, 3, n) * 0.5
    (dealt,) = align_splits([split], [group], content)
    expected = np.empty_like(split)
    expected[np.lexsort((content, group))] = split[np.lexsort((split, group))]
    np.testing.assert_array_equal(dealt, expected)
    for g in np.unique(group):  # each group keeps its folds, dealt in content order
        at = group == g
        np.testing.assert_array_equal(np.sort(dealt[at]), np.sort(split[at]))
        assert (np.diff(dealt[at][np.argsort(content[at], kind="stable")]) >= 0).all()


# --------------------------------------------------------------------------- #
# the fast path of wide rows (issue 31): dealt row by row, counts from byte histograms, folds counted in one pass
# --------------------------------------------------------------------------- #
def _count_row_path(mp):
    """Wrap the row-by-row dealer: the list records, per call, whether it dealt the rows (else: by content)."""
    calls = []
    inner = cf._deal_rows

    def spy(*args, **kwargs):
        out = inner(*args, **kwargs)
        calls.append(out is not None)
        return out

    mp.setattr(cf, "_deal_rows", spy)
    return calls


@settings(max_examples=150, deadline=None)
@given(split_inputs())
def test_rows_dealt_one_by_one_give_the_rule_s_split(data):
    """Every input whose rows are codes or 0/1 bytes dealt row by row (not grouped by content): the rule's split.

    The inputs hold duplicate rows (same key: occurrences in row order),
    classes identical up to their names (same key, other labels: the rows go
    back to the grouping by content) and weights of every kind.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cf, "_WORD_BITS", 0)  # every content "too wide for a word"
        _check(*data)


@pytest.mark.parametrize("density", [0.05, 0.5])
def test_wide_multi_label_rows_with_many_repeats_are_dealt_row_by_row(density):
    """80 tasks, thousands of repeated rows (empty ones above all): the row path is taken, and gives the rule's split."""
    rng = np.random.default_rng(int(density * 100))
    n, k = 6000, 80
    attr = rng.integers(0, 3, n)
    task = rng.random((n, k)) < density
    task[:1500] = task[:1500] & (rng.random((1500, 1)) < 0.02)  # mostly empty rows: repeated contents
    pred = task ^ (rng.random((n, k)) < 0.01)
    roles = {"attr": LabelMatrix("attr", (0, 1, 2), codes=attr),
             "attr_pred": LabelMatrix("attr_pred", (0, 1, 2), codes=np.where(rng.random(n) < 0.1, 0, attr)),
             "task": LabelMatrix("task", tuple(range(k)), dense=task),
             "task_pred": LabelMatrix("task_pred", tuple(range(k)), dense=pred)}
    with pytest.MonkeyPatch.context() as mp:
        calls = _count_row_path(mp)
        _check(roles, READS[0], None, 11)
        _check(roles, READS[0], rng.choice([0.5, 1.0, 3.25], n), 11, [True, False])
    assert calls == [True] * 4


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 200), st.integers(1, 2), st.integers(1, 12),
       st.integers(0, 2), st.integers(1, 70), st.booleans(), st.booleans())
def test_counts_from_byte_histograms_equal_the_products(seed, n, n_attr, ka, n_task, kt, units, small_bins):
    """:func:`_byte_stats` gives exactly the counts of :func:`_stats` (per role, same-side pairs, cross pairs)."""
    rng = np.random.default_rng(seed)
    roles = {}
    for r in ("attr", "attr_pred")[:n_attr]:
        roles[r] = LabelMatrix(r, tuple(range(ka)), codes=rng.integers(0, ka, n))
    for r in ("task", "task_pred")[:n_task]:
        dtype = rng.choice([np.bool_, np.int8, np.uint8, np.int64, np.float64])
        roles[r] = LabelMatrix(r, tuple(range(kt)), dense=(rng.random((n, kt)) < rng.random()).astype(dtype))
    sides = (tuple(r for r in roles if r in cf._ATTR_ROLES), tuple(r for r in roles if r not in cf._ATTR_ROLES))
    octets = {r: cf._row_bytes(m._dense()) for r, m in roles.items() if m.codes is None}
    for r, x in octets.items():  # the bytes of every row, whatever the dtype
        np.testing.assert_array_equal(x, np.packbits(roles[r]._dense() != 0, axis=1, bitorder="little"))
    weights = rng.integers(1, 5, n) if units else None
    with pytest.MonkeyPatch.context() as mp:
        if small_bins:  # one histogram per task-side role, not both together
            mp.setattr(cf, "_TOGETHER_BINS", 0)
        got = cf._byte_stats(roles, sides, octets, weights)
    expected = cf._stats(roles, sides, weights)
    assert got is not None
    for part in ("count", "diag", "cross"):
        g, e = getattr(got, part), getattr(expected, part)
        assert list(g) == list(e)  # the same keys in the same order (the signatures hash them in order)
        for key in e:
            assert g[key].dtype == e[key].dtype
            np.testing.assert_array_equal(g[key], e[key])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.sampled_from(["codes", "dense"]), st.integers(1, 20))
def test_both_folds_of_both_splits_counted_in_one_pass(seed, n, attr_kind, kt):
    """:meth:`CooccurrenceCounts._from_encoded_splits` equals :meth:`from_encoded` on each fold's rows, bit for bit."""
    from biasamp.cooccurrence._counts import CooccurrenceCounts

    rng = np.random.default_rng(seed)
    left = [_matrix(rng, r, n, 3, attr_kind) for r in ("attr", "attr_pred")]
    right = [LabelMatrix(r, tuple(range(kt)), dense=rng.random((n, kt)) < 0.3) for r in ("task", "task_pred")]
    splits = [(rng.integers(0, 2, n).astype(np.int8), ["attr"], ["task", "task_pred"]),
              (rng.integers(0, 2, n).astype(np.int8), ["attr", "attr_pred"], ["task"])]
    got = CooccurrenceCounts._from_encoded_splits(left, right, splits)
    for (in_fold0, lroles, rroles), tables in zip(splits, got):
        for fold, table in zip((1, 0), tables):
            idx = np.flatnonzero(in_fold0 == fold)
            take = [LabelMatrix(m.name, m.classes, codes=None if m.codes is None else m.codes[idx],
                                dense=None if m.codes is not None else m._dense()[idx]) for m in (*left, *right)]
            by_name = {m.name: m for m in take}
            expected = CooccurrenceCounts.from_encoded([by_name[r] for r in lroles], [by_name[r] for r in rroles])
            np.testing.assert_array_equal(table.gram, expected.gram)
            assert (table.attr_roles, table.task_roles, table.uncounted) == \
                (expected.attr_roles, expected.task_roles, expected.uncounted)
    with pytest.raises(ValueError, match="prefixes"):
        CooccurrenceCounts._from_encoded_splits(left, right, [(splits[0][0], ["attr_pred"], ["task"])])
    with pytest.raises(ValueError, match="fold 0"):
        CooccurrenceCounts._from_encoded_splits(left, right, [(np.full(n, 2), ["attr"], ["task"])])
