"""The input layer: encoding and validation of every label argument kind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasamp.labels import check_consistent_length, encode_labels


def test_one_d_classes_come_from_train_and_test_together():
    enc = encode_labels({"attr": ["b", "a"], "attr_train": ["c", "a", "a"]})
    assert enc["attr"].classes == ("a", "b", "c")
    np.testing.assert_array_equal(enc["attr"].to_dense(), [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(enc["attr_train"].codes, [2, 0, 0])


def test_binary_one_d_label_becomes_two_classes():
    enc = encode_labels({"task": np.array([0, 1, 1])})["task"]
    assert enc.classes == (0, 1)
    np.testing.assert_array_equal(enc.to_dense(), [[1, 0], [0, 1], [0, 1]])


def test_two_d_keeps_dataframe_names_and_numpy_gets_indices():
    df = pd.DataFrame({"cat": [1, 0], "dog": [1, 1]})
    assert encode_labels({"t": df})["t"].classes == ("cat", "dog")
    assert encode_labels({"t": df.to_numpy()})["t"].classes == (0, 1)


def test_prediction_dataframe_is_aligned_by_column_name():
    truth = pd.DataFrame({"cat": [1, 0], "dog": [0, 1]})
    pred = pd.DataFrame({"dog": [0.2, 0.9], "cat": [0.7, 0.1]})
    enc = encode_labels({"t": truth}, {"t_pred": pred}, allow_soft=True)
    np.testing.assert_allclose(enc["t_pred"].to_dense(), [[0.7, 0.2], [0.1, 0.9]])
    assert enc["t_pred"].soft


def test_series_and_categorical_and_bool():
    s = pd.Series(pd.Categorical(["x", "y", "x"]))
    assert encode_labels({"a": s})["a"].classes == ("x", "y")
    enc = encode_labels({"a": np.array([True, False])})["a"]
    assert enc.n_classes == 2


def test_fixed_classes_reject_unknown_labels():
    with pytest.raises(ValueError, match="attr contains labels \\['z'\\] not present"):
        encode_labels({"attr": ["a", "z"]}, classes=["a", "b"])


def test_predictions_only_need_the_class_list():
    enc = encode_labels({}, {"p": [1, 0]}, classes=[0, 1])
    assert enc["p"].classes == (0, 1)
    with pytest.raises(ValueError, match="pass the ground truth or the class list"):
        encode_labels({}, {"p": [1, 0]})


def test_soft_predictions_need_permission():
    with pytest.raises(ValueError, match="needs hard 0/1 predictions"):
        encode_labels({"t": [[1, 0]]}, {"t_pred": [[0.5, 0.5]]})
    with pytest.raises(ValueError, match="needs hard 0/1 predictions"):
        encode_labels({"t": [0, 1]}, {"t_pred": [0.5, 0.2]})


def test_nan_rows_are_named():
    with pytest.raises(ValueError, match="rows 1"):
        encode_labels({"a": [0, None, 1]})
    with pytest.raises(ValueError, match="rows 2"):
        encode_labels({"a": np.array([[0, 1], [1, 0], [np.nan, 0]])})
    with pytest.raises(ValueError, match="inf"):
        encode_labels({"a": [0.0, float("inf")]})


def test_check_consistent_length():
    enc = encode_labels({"a": [0, 1, 1], "b": [1, 0]})
    with pytest.raises(ValueError, match="length mismatch: a has 3, b has 2 rows"):
        check_consistent_length(a=enc["a"], b=enc["b"])
    assert check_consistent_length(a=enc["a"], b=None) == 3


def test_zero_columns_and_ragged():
    with pytest.raises(ValueError, match="0 columns"):
        encode_labels({"t": np.zeros((3, 0))})
    with pytest.raises(ValueError, match="could not be converted"):
        encode_labels({"t": [[0, 1], [1]]})


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, -2, 3, 7]),  # negative and non-contiguous ids: lookup table
        np.array([10**12, 5, 10**12]),  # sparse ids: sorted-unique path
        np.array([2, 0, 1, 2], dtype=np.uint8),
    ],
)
def test_integer_fast_paths_agree_with_generic_encoding(values):
    fast = encode_labels({"a": values})["a"]
    generic = encode_labels({"a": values.astype(object)})["a"]
    assert fast.classes == generic.classes == tuple(sorted(set(values.tolist())))
    np.testing.assert_array_equal(fast.codes, generic.codes)


def test_integer_predictions_outside_the_classes_are_named():
    with pytest.raises(ValueError, match="predicted classes \\[9\\]"):
        encode_labels({"a": np.array([0, 1, 2])}, {"a_pred": np.array([0, 9, 1])})
    with pytest.raises(ValueError, match="predicted classes \\[-1\\]"):
        encode_labels({"a": np.array([0, 1])}, {"a_pred": np.array([-1, 1])})
    with pytest.raises(ValueError, match="predicted classes \\[1\\]"):  # inside the range, not a class
        encode_labels({"a": np.array([0, 2])}, {"a_pred": np.array([1, 2])})


# --------------------------------------------------------------------------- #
# reliability (issue 13): every input kind through one validation path
# --------------------------------------------------------------------------- #
def test_float16_labels_are_widened_not_rejected():
    # numpy float16 and torch half labels encode exactly like their float64 values
    enc = encode_labels({"a": np.array([0.0, 1.0, 1.0], dtype=np.float16)}, {"a_pred": [1, 1, 0]})
    assert enc["a"].classes == (0.0, 1.0)
    np.testing.assert_array_equal(enc["a"].codes, [0, 1, 1])
    np.testing.assert_array_equal(enc["a_pred"].codes, [1, 1, 0])
    torch = pytest.importorskip("torch")
    for dtype in (torch.float16, torch.bfloat16):
        t = torch.tensor([0.0, 1.0, 1.0], dtype=dtype, requires_grad=True)
        np.testing.assert_array_equal(encode_labels({"a": t})["a"].codes, [0, 1, 1])


def test_duplicate_column_names_are_rejected_by_name():
    dup = pd.DataFrame([[1, 0], [0, 1], [1, 1]], columns=["c", "c"])
    with pytest.raises(ValueError, match=r"task has duplicate column names \['c'\]"):
        encode_labels({"task": dup})
    truth = pd.DataFrame([[1, 0], [0, 1], [1, 1]], columns=["c", "d"])
    with pytest.raises(ValueError, match=r"task_pred has duplicate column names"):
        encode_labels({"task": truth}, {"task_pred": dup})
    with pytest.raises(ValueError, match="class list .* duplicates"):
        encode_labels({"a": [0, 1]}, classes=[0, 0, 1])


def test_mixed_type_labels_have_an_order_independent_of_the_rows():
    # "a" and 1 do not compare: the classes are ordered by type name, then value, whatever the row order
    forward = encode_labels({"a": np.array(["a", 1, "a", 1], dtype=object)})["a"]
    backward = encode_labels({"a": np.array([1, "a", 1, "a"], dtype=object)})["a"]
    assert forward.classes == backward.classes == (1, "a")
    np.testing.assert_array_equal(forward.codes, [1, 0, 1, 0])


@pytest.mark.parametrize("bad, kind, words", [
    ([[0, 1], [1]], ValueError, "ragged"),
    ({"x": [0, 1]}, TypeError, "array-like"),
    ("abc", TypeError, "array-like"),
    (np.zeros((2, 2, 2)), ValueError, "3-D"),
    (np.array([1 + 2j, 0j]), TypeError, "real numbers"),
    (pd.Series([1, None], dtype="Int64"), ValueError, "NaN"),
    (pd.DataFrame({"x": pd.array([1, None], dtype="Int64"), "y": pd.array([0, 1], dtype="Int64")}),
     ValueError, "missing"),
])
def test_bad_inputs_name_the_argument(bad, kind, words):
    with pytest.raises(kind, match=f"attr.*{words}|{words}.*attr"):
        encode_labels({"attr": bad})


def test_nullable_and_categorical_dtypes_encode_like_plain_ones():
    plain = encode_labels({"a": np.array([0, 1, 1])})["a"]
    for s in (pd.Series([0, 1, 1], dtype="Int64"), pd.Series([0, 1, 1], dtype="category"),
              pd.Series([False, True, True], dtype="boolean").astype(int)):
        enc = encode_labels({"a": s})["a"]
        np.testing.assert_array_equal(enc.codes, plain.codes)


# --------------------------------------------------------------------------- #
# dataframe libraries: pandas, polars, pyarrow keep their names
# --------------------------------------------------------------------------- #
def _frame(lib: str, data: dict):
    """``data`` (column name -> values) as a table of ``lib``; skips where the library is absent."""
    if lib == "pandas":
        return pd.DataFrame(data)
    if lib == "polars":
        pl = pytest.importorskip("polars")
        return pl.DataFrame(data)
    pa = pytest.importorskip("pyarrow")
    return pa.table(data)


def _column(lib: str, name: str, values):
    """One named column of ``lib`` (pyarrow columns carry no name: a ChunkedArray)."""
    if lib == "pandas":
        return pd.Series(values, name=name)
    if lib == "polars":
        pl = pytest.importorskip("polars")
        return pl.Series(name, values)
    pa = pytest.importorskip("pyarrow")
    return pa.chunked_array([pa.array(values[:2]), pa.array(values[2:])])


FRAME_LIBS = ["pandas", "polars", "pyarrow"]


@pytest.mark.parametrize("lib", FRAME_LIBS)
def test_frame_columns_are_class_names_in_every_library(lib):
    truth = _frame(lib, {"cat": [1, 0, 1], "dog": [0, 1, 1]})
    # predictions in another column order: aligned by name, as for pandas
    pred = _frame(lib, {"dog": [0.2, 0.9, 0.6], "cat": [0.7, 0.1, 0.8]})
    enc = encode_labels({"t": truth}, {"t_pred": pred}, allow_soft=True)
    assert enc["t"].classes == ("cat", "dog")
    np.testing.assert_array_equal(enc["t"].to_dense(), [[1, 0], [0, 1], [1, 1]])
    np.testing.assert_allclose(enc["t_pred"].to_dense(), [[0.7, 0.2], [0.1, 0.9], [0.8, 0.6]])


@pytest.mark.parametrize("lib", FRAME_LIBS)
def test_frame_columns_name_the_tasks_of_a_metric(lib):
    from biasamp import bias_amp_directional

    attr = ["w", "m", "w", "m", "w", "m"]
    task = {"kitchen": [1, 0, 1, 0, 0, 1], "tie": [0, 1, 0, 1, 1, 0]}
    res = bias_amp_directional(_column(lib, "gender", attr), _frame(lib, task),
                               attr_pred=_column(lib, "gender", attr), task_pred=_frame(lib, task))
    ref = bias_amp_directional(np.array(attr), pd.DataFrame(task), attr_pred=np.array(attr),
                               task_pred=pd.DataFrame(task))
    assert sorted(set(res.to_frame()["task"])) == ["kitchen", "tie"]
    pd.testing.assert_frame_equal(res.to_frame(), ref.to_frame())


@pytest.mark.parametrize("lib", FRAME_LIBS)
@pytest.mark.filterwarnings("ignore::biasamp.exceptions.UndefinedPairWarning")  # tiny groups: some rates undefined
def test_frame_columns_name_the_sensitive_features(lib):
    from biasamp import fairness_metrics

    y = [0, 1, 1, 0, 1, 0, 1, 0] * 2
    p = [0, 1, 0, 0, 1, 1, 1, 0] * 2
    sf = {"sex": ["f", "m", "f", "m", "f", "m", "f", "m"] * 2, "age": ["y", "y", "o", "o", "o", "o", "y", "y"] * 2}
    res = fairness_metrics(_frame(lib, {"y": y})["y"] if lib != "pyarrow" else np.array(y), np.array(p),
                           sensitive_features=_frame(lib, sf), min_group_size=1)
    ref = fairness_metrics(np.array(y), np.array(p), sensitive_features=pd.DataFrame(sf), min_group_size=1)
    assert res.counts.feature_names == ref.counts.feature_names == ("sex", "age")
    pd.testing.assert_frame_equal(res.by_group, ref.by_group)


@pytest.mark.parametrize("lib", ["polars", "pyarrow"])
def test_frame_nulls_are_missing_values_named_by_argument(lib):
    # as the pandas frame with the same values (None in an integer column: NaN)
    truth = _frame(lib, {"cat": [1, None, 1], "dog": [0, 1, 1]})
    with pytest.raises(ValueError, match=r"^t contains NaN.*\(rows 1\)"):
        encode_labels({"t": truth})
    attr = _column(lib, "a", ["x", None, "y", "x"])
    with pytest.raises(ValueError, match=r"^a .*(missing|NaN|None).*1"):
        encode_labels({"a": attr})


def test_arrow_duplicate_column_names_are_rejected_by_name():
    pa = pytest.importorskip("pyarrow")  # polars refuses duplicate names itself
    table = pa.Table.from_arrays([pa.array([1, 0]), pa.array([0, 1])], names=["a", "a"])
    with pytest.raises(ValueError, match=r"t has duplicate column names \['a'\]"):
        encode_labels({"t": table})


def test_polars_series_keeps_its_name_and_lazyframe_is_named():
    pl = pytest.importorskip("polars")
    from biasamp._core.labels import _as_pandas

    s = _as_pandas(pl.Series("gender", ["w", "m"]))
    assert isinstance(s, pd.Series) and s.name == "gender" and s.tolist() == ["w", "m"]
    assert _as_pandas(pl.Series(["w", "m"])).name is None  # polars' "" (no name) is no name
    with pytest.raises(TypeError, match=r"t: a polars LazyFrame holds no rows yet"):
        encode_labels({"t": pl.DataFrame({"a": [1, 0]}).lazy()})


@pytest.mark.parametrize("lib", FRAME_LIBS)
def test_audit_report_names_come_from_the_frames(lib):
    from biasamp import audit

    rng = np.random.default_rng(0)
    n = 120
    attr = np.where(rng.random(n) < 0.5, "w", "m").tolist()
    task = {"kitchen": (rng.random(n) < 0.4).astype(int).tolist(), "tie": (rng.random(n) < 0.3).astype(int).tolist()}
    rep = audit(_column(lib, "gender", attr), _frame(lib, task), attr_pred=_column(lib, "gender", attr),
                task_pred=_frame(lib, task), sections=["directional"], n_boot=20, random_state=0)
    assert rep.inputs["task_classes"] == ["kitchen", "tie"]
    assert rep.inputs["attribute_classes"] == ["m", "w"]
    assert rep.inputs["attribute"] == ("attr" if lib == "pyarrow" else "gender")  # an arrow column has no name
    assert "kitchen" in rep.to_html()
