"""The streamed audit derives every count family from the registry (issue 20).

* which families a streamed audit counts, their class lists and options, from their declarations
  (``Family.task_kinds``, ``counted_roles``, ``audit_options``, ``complete_classes``, ``n_boot_option``),
  checked against a table written by hand from the metrics' definitions;
* ``ci_method="bca"`` reaches the accumulators (their delete-one-group jackknife);
* no layer that serves "every count-based metric" names a family by its key outside an allow-list
  (a scan of the source for the keys as string literals, comments and docstrings excepted).
"""

from __future__ import annotations

import ast
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasamp._families import REGISTRY
from biasamp.report import AuditConfig
from biasamp.report._sections import family_n_boot

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "biasamp"
KEYS = frozenset(REGISTRY.keys)


# --------------------------------------------------------------------------- #
# which families apply, with which classes and options (hand-written table)
# --------------------------------------------------------------------------- #
def _setup(columns, *, has_train=False, uniques=None, attr_classes=None, task_classes=None, **config):
    """What ``stream_audit`` builds for each family on data with these columns: ``(classes, options)`` or None."""
    from functools import partial

    from biasamp.report._stream import _counts_train, _family_classes, _family_setup, _test_roles

    class_list = partial(_family_classes, columns=columns, given={"attr": attr_classes, "task": task_classes},
                         uniques=uniques or {})
    cfg = AuditConfig(**config)
    present = dict.fromkeys(_test_roles(columns), True)
    return {f.key: _family_setup(f, cfg, columns, class_list, present, _counts_train(f, has_train))
            for f in REGISTRY if f.stream is not None}


def _cols(*, multilabel: bool, attr_pred: bool = True, task_pred: bool = True):
    from biasamp.report._stream import StreamColumns

    task = ("t_a", "t_b", "t_c") if multilabel else ("label",)
    names = ("a", "b", "c") if multilabel else ("label",)
    return StreamColumns("g", task, names, "g_pred" if attr_pred else None,
                         tuple(f"{t}_pred" for t in task) if task_pred else None)


#: the distinct values of the attribute column "g" in the test and the training rows (first-seen order)
SEEN = {("test", "g"): np.array(["y", "x"], dtype=object), ("train", "g"): np.array(["z", "x", "y"], dtype=object)}


@pytest.mark.parametrize(("multilabel", "task", "attr_pred", "task_pred", "expected"), [
    # a multi-label task: everything but differential fairness (a binary outcome)
    (True, None, True, True, {"directional", "mals", "multi", "fairness"}),
    # no task predictions: BiasAmp-> T->A and Multi-> M->G only (MALS needs both, fairness the task's)
    (True, None, True, False, {"directional", "multi"}),
    # no attribute predictions: BiasAmp-> A->T, Multi-> G->M, the fairness metrics
    (True, None, False, True, {"directional", "multi", "fairness"}),
    # a single-label task of three classes: no multi-attribute metrics, no differential fairness
    (False, [0, 1, 2], True, True, {"directional", "mals", "fairness"}),
    # a binary task: differential fairness too
    (False, [0, 1], True, True, {"directional", "mals", "fairness", "differential"}),
    (False, [0, 1], True, False, {"directional"}),
])
def test_families_counted_follow_their_declarations(multilabel, task, attr_pred, task_pred, expected):
    got = _setup(_cols(multilabel=multilabel, attr_pred=attr_pred, task_pred=task_pred), uniques=SEEN,
                 task_classes=task)
    assert {k for k, v in got.items() if v is not None} == expected


@pytest.mark.parametrize("has_train", [False, True])
def test_class_lists_are_those_of_the_roles_each_family_reads(has_train):
    """BiasAmp-> and Multi: test and training truth; MALS: the training truth, else the test truth standing in for
    it; the fairness families: the test rows (the classes the in-memory functions infer: sorted)."""
    seen = {**SEEN, ("test", "label"): np.array([2, 0, 1]), ("train", "label"): np.array([3, 1, 0, 2])}
    if not has_train:
        seen = {k: v for k, v in seen.items() if k[0] == "test"}
    got = _setup(_cols(multilabel=False), has_train=has_train, uniques=seen)
    both = (["x", "y", "z"], [0, 1, 2, 3]) if has_train else (["x", "y"], [0, 1, 2])
    train_only = (["x", "y", "z"], [0, 1, 2, 3]) if has_train else (["x", "y"], [0, 1, 2])
    assert got["directional"][0] == {"attr": both[0], "task": both[1]}
    assert got["mals"][0] == {"attr": train_only[0], "task": train_only[1]}
    assert got["fairness"][0] == {"task": [0, 1, 2], "attr": ["x", "y"]}
    assert got["differential"] is None  # three outcome classes in the test rows
    ml = _setup(_cols(multilabel=True), has_train=has_train, uniques=seen)
    assert ml["multi"][0] == {"attr": both[0], "task": ["a", "b", "c"]}  # the columns' names
    # the training rows' classes only: MALS with a training set reads them (the test rows show fewer)
    if has_train:
        fewer = {**seen, ("train", "label"): np.array([1, 0])}
        assert _setup(_cols(multilabel=False), has_train=True, uniques=fewer)["mals"][0]["task"] == [0, 1]


def test_fairness_options_and_one_class_completion_come_from_its_declaration():
    # a task showing the class 1 only is the binary task {0, 1} (fairness_metrics' completion) ...
    got = _setup(_cols(multilabel=False), uniques=SEEN, task_classes=[1])
    assert got["fairness"][0]["task"] == [0, 1]
    assert got["differential"] is None  # ... but differential fairness is counted on the classes shown only
    # two classes holding neither 1 nor True: the audit reads the mean over both (the function would raise)
    got = _setup(_cols(multilabel=False), uniques=SEEN, task_classes=["no", "yes"], min_group_size=7)
    assert got["fairness"][1]["average"] == "macro" and got["fairness"][1]["min_group_size"] == 7
    assert "average" not in got["differential"][1] and got["differential"][1]["min_group_size"] == 7
    got = _setup(_cols(multilabel=False), uniques=SEEN, task_classes=["no", "yes"], pos_label="yes")
    assert got["fairness"][1]["average"] == "auto" and got["fairness"][1]["pos_label"] == "yes"


def test_mals_stream_roles_mirror_its_call():
    """Without a training set the test ground truth stands in for it, in a call and in a stream alike."""
    mals = REGISTRY["mals"]
    rng = np.random.default_rng(0)
    roles = {"attr": rng.integers(0, 2, 8), "task": rng.integers(0, 2, (8, 3)), "attr_pred": rng.integers(0, 2, 8),
             "task_pred": rng.integers(0, 2, (8, 3)), "sample_weight": None, "row_ids": np.arange(8)}
    (attr_train, task_train), _ = mals.call(roles, {})
    fed = mals.counted_roles(roles, train=False)
    assert fed["attr"] is attr_train and fed["task"] is task_train
    assert fed["attr_pred"] is roles["attr_pred"] and fed["row_ids"] is roles["row_ids"]
    with_train = mals.counted_roles(roles, train=True)  # the training batches give the training rows
    assert with_train.get("attr") is None and with_train.get("task") is None
    # a family without a hook counts the test roles it reads (fairness: no attribute predictions)
    assert set(REGISTRY["fairness"].counted_roles(roles, train=False)) == {"attr", "task", "task_pred",
                                                                           "sample_weight", "row_ids"}


def test_n_boot_option_is_declared():
    cfg = AuditConfig(n_boot=40, n_boot_multi=6)
    assert {f.key: family_n_boot(cfg, f) for f in REGISTRY} == {
        "directional": 40, "mals": 40, "multi": 6, "fairness": 40, "differential": 40}
    assert family_n_boot(AuditConfig(n_boot=40), REGISTRY["multi"]) == 40  # not set: n_boot
    assert family_n_boot(AuditConfig(n_boot=40, n_boot_multi=0), REGISTRY["multi"]) == 0
    for f in REGISTRY:  # every declared option is a field of AuditConfig
        assert f.n_boot_option is None or hasattr(cfg, f.n_boot_option)


# --------------------------------------------------------------------------- #
# the streamed audit: n_boot per family, ci_method="bca"
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """The demo as Parquet: test/ (two files) and train/ (one)."""
    pytest.importorskip("pyarrow")
    from biasamp.datasets import make_amplification_demo

    d = make_amplification_demo(n_train=600, n_test=500, random_state=11)
    root = tmp_path_factory.mktemp("streamreg")
    test = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_"),
                      d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    train = pd.concat([d.attr_train.rename("attr"), d.task_train.add_prefix("task_")], axis=1)
    for folder in ("test", "train"):
        (root / folder).mkdir()
    test.iloc[:250].to_parquet(root / "test" / "part-0.parquet")
    test.iloc[250:].to_parquet(root / "test" / "part-1.parquet")
    train.to_parquet(root / "train" / "part-0.parquet")
    return root, d


def _stream(root, d, **kw):
    from biasamp.report._stream import ParquetDataset, StreamColumns, stream_audit

    tasks = tuple(d.task.columns)
    columns = StreamColumns("attr", tuple(f"task_{t}" for t in tasks), tasks, "attr_pred",
                            tuple(f"task_{t}_pred" for t in tasks))
    return stream_audit(ParquetDataset.open(root / "test"), columns, train=ParquetDataset.open(root / "train"),
                        progress=False, dpa_rows=0, **kw)


def test_streamed_n_boot_per_family(split):
    root, d = split
    rep = _stream(root, d, sections=["directional", "multi"], n_boot=24, n_boot_multi=6, random_state=1)
    methods = rep.table.groupby("section")["ci_method"].agg(set)
    assert all(m.endswith("bootstrap (24)") for m in methods["directional"])
    assert all(m.endswith("bootstrap (6)") for m in methods["multi"])


def test_streamed_bca_reaches_the_accumulator(split):
    """The streamed BCa interval is the accumulator's (hashed-group jackknife), built here from the same rows."""
    from biasamp.accumulators import CooccurrenceAccumulator

    root, d = split
    cfg = AuditConfig(n_boot=40, ci_method="bca", random_state=5)
    rep = _stream(root, d, sections=["directional"], n_boot=40, ci_method="bca", random_state=5, batch_size=128)
    acc = CooccurrenceAccumulator(sorted(set(d.attr) | set(d.attr_train)), list(d.task.columns), n_boot=40,
                                  random_state=cfg.seed("directional"))
    n = len(d.attr)
    acc.update(d.attr.to_numpy(), d.task.to_numpy(), attr_pred=d.attr_pred.to_numpy(),
               task_pred=d.task_pred.to_numpy(), row_ids=np.arange(n))  # groups hashed from the row positions
    acc.update_train(d.attr_train.to_numpy(), d.task_train.to_numpy())
    boot = acc.bootstrap(level=cfg.level, ci_method="bca")
    rows = rep.table.set_index("direction")
    for direction in ("A->T", "T->A"):
        assert rows.loc[direction, "ci_method"] == "BCa bootstrap (40)"
        assert (rows.loc[direction, "ci_low"], rows.loc[direction, "ci_high"]) == pytest.approx(
            boot.ci[direction], abs=1e-12)
    notes = rep.section("directional").notes
    assert any("BCa intervals" in n and "delete-one-group jackknife" in n for n in notes)
    percentile = _stream(root, d, sections=["directional"], n_boot=40, random_state=5, batch_size=128)
    assert percentile.table["ci_method"].tolist() == ["percentile bootstrap (40)"] * 2
    assert percentile.table["ci_low"].tolist() != rep.table["ci_low"].tolist()


# --------------------------------------------------------------------------- #
# no family key as a string literal in the layers that serve every family
# --------------------------------------------------------------------------- #
SCANNED = ["report", "accumulators.py", "dask.py", "torchmetrics.py", "curves.py", "sklearn.py", "stats.py"]

#: (file, enclosing definition) -> the family keys it may name, and why
ALLOWED: dict[tuple[str, str], tuple[frozenset, str]] = {}


def _allow(reason: str, entries: dict[tuple[str, str], set[str]]) -> None:
    for where, keys in entries.items():
        ALLOWED[where] = (frozenset(keys), reason)


_allow("a built-in section renders one family's result (its tables, figures and notes): it is registered under "
       "its section key and reads its own family by that key, as a family package names itself", {
           ("report/_sections.py", "_directional_section"): {"directional"},
           ("report/_sections.py", "_mals_section"): {"mals"},
           ("report/_sections.py", "_multi_section"): {"multi"},
           ("report/_sections.py", "_fairness_section"): {"fairness"},
           ("report/_sections.py", "_differential_section"): {"differential"},
           # whether the differential section applies: its own family counted by a streamed audit
           ("report/_sections.py", "_binary_task"): {"differential"},
       })
_allow("not a family key: the MultiBiasAmpResult attribute `mals` (Multi_MALS) the multi-attribute section reads", {
    ("report/_sections.py", "<module>"): {"mals"},
})
_allow("the audit option `fairness` (the former spelling of the group fairness options, a public AuditConfig "
       "property recorded in the report's options) is that family's options by its public name", {
           ("report/_config.py", "<module>"): {"fairness"},
           ("report/_config.py", "AuditConfig.fairness"): {"fairness"},
           ("report/_config.py", "AuditConfig.report_options"): {"fairness"},
       })
_allow("user-facing text: a Hugging Face model-card tag", {
    ("report/_export.py", "render_model_card"): {"fairness"},
})
_allow("the default value of CooccurrenceAccumulator's public keyword `metric=` (which of the two families it counts, "
       "a value users write); the named forms otherwise find their families in the declarations (`Family.named`)", {
           ("accumulators.py", "CooccurrenceAccumulator.__init__"): {"directional"},
       })


class _Literals(ast.NodeVisitor):
    """The string constants equal to a family key, by enclosing definition, docstrings excepted (comments are not
    in the syntax tree)."""

    def __init__(self) -> None:
        self.scope: list[str] = []
        self.docstrings: set[int] = set()
        self.hits: list[tuple[str, str, int]] = []

    def _docstring(self, node: ast.AST) -> None:
        body = getattr(node, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            self.docstrings.add(id(body[0].value))

    def visit_Module(self, node: ast.Module) -> None:
        self._docstring(node)
        self.generic_visit(node)

    def _scoped(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._docstring(node)
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_ClassDef = visit_FunctionDef = visit_AsyncFunctionDef = _scoped

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value in KEYS and id(node) not in self.docstrings:
            self.hits.append((".".join(self.scope) or "<module>", node.value, node.lineno))


def family_literals(source: str) -> list[tuple[str, str, int]]:
    """``(enclosing definition, key, line)`` of every family key written as a string literal in ``source``."""
    finder = _Literals()
    finder.visit(ast.parse(source))
    return finder.hits


def _scanned_files() -> list[pathlib.Path]:
    out: list[pathlib.Path] = []
    for name in SCANNED:
        path = SRC / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def test_no_family_key_outside_the_allow_list():
    found, used = [], set()
    for path in _scanned_files():
        rel = path.relative_to(SRC).as_posix()
        for where, key, line in family_literals(path.read_text(encoding="utf-8")):
            allowed = ALLOWED.get((rel, where))
            if allowed is not None and key in allowed[0]:
                used.add((rel, where, key))
            else:
                found.append(f"{rel}:{line} ({where}): {key!r}")
    assert not found, ("family keys written in a layer that serves every family (read the registry instead, or "
                       "allow-list the place with the reason):\n" + "\n".join(found))
    # the allow-list holds nothing that is not there any more (remove it when the literal goes)
    stale = [(rel, where, key) for (rel, where), (keys, _) in ALLOWED.items() for key in keys
             if (rel, where, key) not in used]
    assert not stale, f"allow-listed but no longer written there: {stale}"


def test_the_streamed_audit_names_no_family():
    assert family_literals((SRC / "report" / "_stream.py").read_text(encoding="utf-8")) == []


_KEY = st.sampled_from(sorted(KEYS))


@settings(max_examples=60, deadline=None)
@given(key=_KEY, place=st.sampled_from(["code", "docstring", "comment", "fdoc"]),
       other=st.one_of(_KEY, st.text(alphabet="acdefilmnorstu_", min_size=1, max_size=12)))
def test_the_scan_finds_code_literals_only(key, place, other):
    """A key in code is found (in its definition); in a docstring or a comment it is not; other words never."""
    sources = {
        "code": f"def f():\n    return {key!r}\n",
        "docstring": f'"""{key}"""\nx = 1\n',
        "comment": f"x = 1  # {key!r}\n",
        "fdoc": f'class C:\n    def m(self):\n        """{key!r}"""\n        return {other!r}\n',
    }
    hits = family_literals(sources[place])
    if place == "code":
        assert hits == [("f", key, 2)]
    elif place == "fdoc":  # the method's docstring names the key, its code returns another word
        assert hits == ([("C.m", other, 4)] if other in KEYS else [])
    else:
        assert hits == []


# --------------------------------------------------------------------------- #
# the named streaming forms take their option docs from the declarations
# --------------------------------------------------------------------------- #
def _named_forms():
    import biasamp.dask as bdask
    from biasamp.accumulators import accumulator_for

    forms = []
    for family in REGISTRY:
        if family.named is None:
            continue
        forms.append((family, accumulator_for(family.key)))
        if family.named.dask:
            forms.append((family, bdask.function_for(family.key)))
        if family.named.metric:
            torchmetrics = pytest.importorskip("biasamp.torchmetrics")
            forms.append((family, torchmetrics.metric_for(family.key)))
    return forms


def test_every_named_form_documents_its_options_from_their_declarations():
    """An option's description is written once, in ``option(doc=...)``: every named form (generated or written by
    hand) that takes it shows that description, and its declared default."""
    import inspect

    checked = 0
    for family, form in _named_forms():
        own = getattr(form, "own_options", ())
        doc = inspect.getdoc(form).lower()
        for name, param in inspect.signature(form).parameters.items():
            if name in own or name in family.named.skips or name not in family.options.option_names():
                continue
            declared = family.options.field(name)
            assert f"{name} : " in doc, (form.__name__, name)
            assert declared.metadata["doc"].lower() in doc, (form.__name__, name)
            assert f"default {declared.default!r}".lower() in doc, (form.__name__, name)
            assert param.default == declared.default, (form.__name__, name)  # the signature's default too
            checked += 1
    assert checked >= 40


def test_every_named_form_takes_every_option_of_its_family():
    """Issue 31: the named forms (generated or written by hand) take the family function's options, each by
    keyword with its declared default, less only what the declaration says they skip (``Named.skips``) and what
    a form writes itself. (The hand-written torchmetrics classes took 4 of the 9 co-occurrence options, the Dask
    functions 5: ``threshold``, ``soft``, ``min_group_size`` and ``include_small_groups`` were refused.)"""
    import inspect

    checked = 0
    for family, form in _named_forms():
        params = inspect.signature(form).parameters
        own = getattr(form, "own_options", ())
        for name in family.options.option_names():
            if name in family.named.skips or name in own:  # (fairness' skipped ``classes`` is its class list)
                continue
            assert name in params, (form.__name__, name)
            assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, (form.__name__, name)
            assert params[name].default == family.options.field(name).default, (form.__name__, name)
            checked += 1
    assert checked >= 90


def _call_form(form, kind, **options):
    """Build (a class) or call (a Dask function) a named form of the co-occurrence, multi-attribute or fairness
    family with ``options``, on two rows."""
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        x = da.from_array(np.array([0, 1]), chunks=1)
        if form.__name__ == "fairness_metrics":
            return form(x, x, sensitive_features=x, **options)
        if form.__name__ == "bias_amp_mals":
            return form(x, x, attr_pred=x, task_pred=x, **options)
        return form(x, x, attr_pred=x, task_pred=x, **options)
    if form.__name__ == "MultiBiasAmp":
        return form(2, ["a", "b", "c"], combinations=[("a",)], **options)
    return form(2, 2, **options)


def _hand_written_forms():
    import biasamp.dask as bdask
    from biasamp.accumulators import CooccurrenceAccumulator, FairnessAccumulator, MultiAttributeAccumulator

    forms = [(f, "accumulator") for f in (CooccurrenceAccumulator, FairnessAccumulator, MultiAttributeAccumulator)]
    forms += [(f, "dask") for f in (bdask.bias_amp_directional, bdask.bias_amp_mals, bdask.multi_bias_amp,
                                    bdask.fairness_metrics)]
    try:
        import biasamp.torchmetrics as tm
    except ImportError:
        return forms
    return forms + [(f, "metric") for f in (tm.BiasAmpDirectional, tm.BiasAmpMALS, tm.MultiBiasAmp, tm.GroupFairness)]


@pytest.mark.parametrize(("form", "kind"), _hand_written_forms(), ids=lambda x: getattr(x, "__name__", x))
def test_hand_written_forms_refuse_what_the_function_refuses(form, kind):
    """A bad option value raises the declaration's own error (the function's, word for word), before any row is
    read; an unknown keyword is a ``TypeError`` naming it."""
    from biasamp import bias_amp_directional

    with pytest.raises(ValueError, match="min_group_size") as expected:
        bias_amp_directional([0, 1], [0, 1], task_pred=[0, 1], min_group_size=-1)
    with pytest.raises(ValueError, match="min_group_size") as got:
        _call_form(form, kind, min_group_size=-1)
    assert str(got.value) == str(expected.value)
    # (torchmetrics' own ValueError for a keyword no one takes)
    with pytest.raises(ValueError if kind == "metric" else TypeError, match="nonsense"):
        _call_form(form, kind, nonsense=1)


@pytest.mark.parametrize("key", [f.key for f in REGISTRY if f.stream is not None])
def test_every_accumulator_refuses_an_option_its_family_does_not_take(key):
    """One check for every family, in the accumulator (the settings that take ``**options`` used to check them
    each on its own): an unknown option, or one the streamed forms skip, is a ``TypeError`` naming it."""
    from biasamp.accumulators import Accumulator

    family = REGISTRY[key]
    classes = dict.fromkeys(family.stream.classes, 2)
    with pytest.raises(TypeError, match=r"got unexpected options \['nonsense'\]"):
        Accumulator(key, classes, nonsense=1)
    lists = {c.name for c in family.stream.classes.values()}  # (fairness skips ``classes``: its class list)
    for skipped in set(family.named.skips if family.named is not None else ()) - lists:
        with pytest.raises(TypeError, match=rf"got unexpected options \[{skipped!r}\]"):
            Accumulator(key, classes, **{skipped: family.options.field(skipped).default})


def test_options_the_hand_written_forms_gained_give_the_functions_value():
    """``threshold`` and ``min_group_size`` on the torchmetrics class and the Dask function (which refused them)
    change the value as they change the function's, batch after batch."""
    from biasamp import bias_amp_directional

    rng = np.random.default_rng(3)
    attr = np.repeat([0, 1, 2], [200, 150, 40])
    task = (rng.random(len(attr)) < 0.3 + 0.2 * (attr == 1)).astype(int)
    probs = np.clip(task * 0.35 + rng.random(len(attr)) * 0.6, 0, 1)
    options = {"threshold": 0.3, "min_group_size": 45, "cross_fit": False}
    expected = bias_amp_directional(attr, task, task_pred=probs, **options).a_to_t.value
    assert expected != bias_amp_directional(attr, task, task_pred=probs, cross_fit=False).a_to_t.value
    da = pytest.importorskip("dask.array")
    import biasamp.dask

    got = biasamp.dask.bias_amp_directional(da.from_array(attr, chunks=100), da.from_array(task, chunks=100),
                                            task_pred=da.from_array(probs, chunks=100), **options)
    assert got.a_to_t.value == expected
    tm = pytest.importorskip("biasamp.torchmetrics")
    metric = tm.BiasAmpDirectional([0, 1, 2], [0, 1], **options)
    for rows in np.array_split(np.arange(len(attr)), 3):
        metric.update(attr[rows], task[rows], task_pred=probs[rows])
    assert float(metric.compute()) == expected


@pytest.mark.parametrize(("key", "classes", "option", "values"), [
    ("directional", {"attr": 2, "task": 3}, "min_group_size", (30, 5)),
    ("mals", {"attr": 2, "task": 3}, "soft", ("threshold", "expected")),
    ("multi", {"attr": 2, "task": ["a", "b"]}, "min_support", (1, 3)),
])
def test_streamed_settings_hold_the_options_object_not_copies(key, classes, option, values):
    """The co-occurrence and multi-attribute settings hold the options object and read the options from it (no
    field copies one, to be checked twice); a merge of two accumulators that differ in one option names it, and
    options read through a derived setting (the binary task's reading) merge when what they derive agrees."""
    import dataclasses

    from biasamp.accumulators import Accumulator

    def make(**options):
        return Accumulator(key, classes, **options)

    settings = make().settings
    copied = {f.name for f in dataclasses.fields(settings)} & set(REGISTRY[key].options.option_names())
    assert copied == set()
    assert getattr(settings.options, option) == REGISTRY[key].options.field(option).default
    with pytest.raises(ValueError, match=f"cannot merge accumulators with different {option}: "):
        make(**{option: values[0]}).merge(make(**{option: values[1]}))
    # pos_label=None and pos_label=1 read a 0/1 task alike: the same reading, mergeable
    binary = {"attr": 2, "task": [0, 1]}
    Accumulator(key, binary, pos_label=None).merge(Accumulator(key, binary, pos_label=1))


def test_streamed_settings_take_each_option_default_from_the_declaration():
    """One default per option: a streamed family's settings name no default of their own for a declared option
    (the accumulator fills the declared one), and an accumulator built without options has the settings of one
    given every declared default."""
    import dataclasses
    import inspect

    checked = 0
    for fam in REGISTRY:
        if fam.stream is None or fam.options is None:
            continue
        names = set(fam.options.option_names())
        for name, p in inspect.signature(fam.stream.settings).parameters.items():
            if p.kind is inspect.Parameter.KEYWORD_ONLY and name in names:
                assert p.default is inspect.Parameter.empty, (fam.key, name)
                checked += 1
    assert checked >= 20
    from biasamp.accumulators import CooccurrenceAccumulator, MultiAttributeAccumulator

    defaults = {f.name: f.default for f in dataclasses.fields(REGISTRY["multi"].options)
                if f.name in inspect.signature(REGISTRY["multi"].stream.settings).parameters}
    plain = MultiAttributeAccumulator([0, 1], ["a", "b"], combinations=[("a",), ("a", "b")])
    spelled = MultiAttributeAccumulator([0, 1], ["a", "b"], **{**defaults, "combinations": [("a",), ("a", "b")]})
    assert repr(plain.settings) == repr(spelled.settings)
    assert plain.settings.group_options == {"min_group_size": 30, "include_small_groups": False}
    spelled = CooccurrenceAccumulator(2, 3, min_group_size=30, threshold=0.5, cross_fit=None, binary_task="positive")
    assert repr(CooccurrenceAccumulator(2, 3).settings) == repr(spelled.settings)


@pytest.mark.parametrize(("key", "module", "hook"), [
    ("directional", "biasamp.cooccurrence._stream", "directional_compute"),
    ("mals", "biasamp.cooccurrence._stream", "mals_compute"),
    ("multi", "biasamp.multiattribute._stream", "multi_compute"),
])
@pytest.mark.parametrize("train", [False, True])
def test_the_streamed_compute_is_the_family_compute_hook(monkeypatch, key, module, hook, train):
    """No family writes the sequence twice (issue 31): an accumulator's compute() is the family's compute hook
    on the counted call its state holds, with the options object the function builds from the same keywords."""
    import importlib

    from biasamp.accumulators import accumulator_for

    rng = np.random.default_rng(4)
    n = 600
    attr = rng.integers(0, 3, n)
    task = (rng.random((n, 4)) < 0.25 + 0.15 * attr[:, None]).astype(int)
    roles = {"attr": attr, "task": task, "attr_pred": np.where(rng.random(n) < 0.2, (attr + 1) % 3, attr),
             "task_pred": np.where(rng.random(task.shape) < 0.2, 1 - task, task)}
    train_roles = {"attr_train": rng.integers(0, 3, n), "task_train": (rng.random((n, 4)) < 0.3).astype(int)}
    seen = []
    stream = importlib.import_module(module)
    real = getattr(stream, hook)

    def spy(counted, opts):
        seen.append(opts)
        out = real(counted, opts)
        seen.append(out)
        return out

    monkeypatch.setattr(stream, hook, spy)
    acc = accumulator_for(key).for_family(key, {"attr": [0, 1, 2], "task": [0, 1, 2, 3]}, min_group_size=5)
    batches = [roles, train_roles] if train else [roles]
    for b in batches:
        acc.prepass(b)
    acc.end_prepass()
    for b in batches:
        acc.update_roles(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = acc.compute()
    opts, out = seen
    assert res is out
    assert opts == REGISTRY[key].options_of({"min_group_size": 5})[0]
    assert res.cross_fit is not train
