"""Every result class offers the same things: value, to_frame, to_dict, repr, _repr_html_.

One instance of each public result class is built from a small demo; each
check is derived independently of the code under test: the headline ``value``
is recomputed from the rows of ``to_frame()``, ``to_dict()`` must survive
``json.dumps``, the HTML must escape the repr and hold the table.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import biasamp
from biasamp._core.results import ResultMixin
from biasamp.datasets import make_amplification_demo


@pytest.fixture(scope="module")
def demo():
    return make_amplification_demo(n_train=800, n_test=500, random_state=1)


def _results(d) -> dict:
    """One instance of every public result class, keyed by class name."""
    fast = dict(attacker="tabular", n_iter=3, random_state=0, progress=False)
    directional = biasamp.bias_amp_directional(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred,
                                               attr_train=d.attr_train, task_train=d.task_train)
    multi = biasamp.multi_bias_amp(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred,
                                   attr_train=d.attr_train, task_train=d.task_train, max_size=2)
    dpa = biasamp.dpa(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, **fast)
    rng = np.random.default_rng(0)
    runs = pd.DataFrame({"DP": rng.random(5), "EOTP": rng.random(5)})
    task_bin = rng.integers(0, 2, 600)
    attr_bin = np.where(rng.random(600) < 0.8, task_bin, 1 - task_bin)
    scores = rng.random((50, 3))
    caps = [f"a {w} with a {o}" for w, o in zip(np.array(["man", "woman", "person"])[rng.integers(0, 3, 60)],
                                               np.array(["cup", "knife"])[rng.integers(0, 2, 60)])]
    caps_pred = [c.replace("cup", "knife") if i % 3 else c for i, c in enumerate(caps)]
    gender = np.array(["male", "female"] * 30)
    lic = biasamp.lic(gender, captions_pred=caps_pred, captions=caps, n_iter=3, random_state=0, progress=False)
    dbac = biasamp.dbac(gender, biasamp.caption_labels(caps, "coco")[["cup", "knife"]], captions=caps,
                        captions_pred=caps_pred, n_iter=3, random_state=0, progress=False)
    df = biasamp.df_bias_amplification(np.asarray(d.task)[:, 0], np.asarray(d.task_pred)[:, 0],
                                       sensitive_features=d.attr)
    return {
        "DFBiasAmpResult": df,
        "LICResult": lic,
        "DBACResult": dbac,
        "DBACDirectionResult": dbac.a_to_t,
        "DirectionalBiasAmpResult": directional,
        "DirectionResult": directional.a_to_t,
        "MALSResult": biasamp.bias_amp_mals(attr_pred=d.attr_pred,
                                            task_pred=d.task_pred, attr_train=d.attr_train, task_train=d.task_train),
        "MultiBiasAmpResult": multi,
        "MultiMetricResult": multi.g_to_m,
        "DPAResult": dpa,
        "DPADirectionResult": dpa.a_to_t,
        "LeakageResult": biasamp.leakage_amplification(d.attr, d.task, task_pred=d.task_pred, **fast),
        "FairnessResult": biasamp.fairness_metrics(d.task, d.task_pred, sensitive_features=d.attr),
        "BootstrapResult": biasamp.bootstrap(biasamp.bias_amp_directional, d.attr, d.task,
                                             task_pred=d.task_pred, attr_pred=d.attr_pred,
                                             n_boot=30, random_state=0),
        "CompareRunsResult": biasamp.compare_runs(rng.random(6), rng.random(6) + 0.3),
        "RunSummary": biasamp.run_summary(runs),
        "AttentionScoreResult": biasamp.summarize_attention_scores([0.9, 0.7, 0.2, 0.4], task=[1, 1, 0, 0],
                                                                   attr=[1, 0, 1, 0]),
        "SubsampleResult": biasamp.subsample_to_mcc(task_bin, attr_bin, 0.3, random_state=0),
        "Thresholds": biasamp.calibrate_thresholds(scores, rates=[0.2, 0.5, 0.1]),
        "CurveResult": biasamp.threshold_curve(biasamp.bias_amp_directional, d.attr, d.task,
                                               task_scores=d.task_pred * 0.6 + 0.2, thresholds=[0.1, 0.5, 0.9]),
        "ScanResult": biasamp.scan(d.attr, d.task, task_pred=d.task_pred, n_boot=30, random_state=0,
                                   features=pd.DataFrame({"site": np.arange(len(d.attr)) % 3})),
        "Report": biasamp.audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred,
                                attr_train=d.attr_train, task_train=d.task_train, n_boot=20, n_boot_multi=5,
                                n_iter=2, attacker="tabular", progress=False, exclude=["dpa", "leakage"]),
    }


@pytest.fixture(scope="module")
def results(demo):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _results(demo)


# Results that hold several headline numbers instead of one ``value``: the
# attributes holding them (each None or with a ``.value``, or a mapping).
SEVERAL = {
    "DirectionalBiasAmpResult": ("a_to_t", "t_to_a"),
    "MultiBiasAmpResult": ("mals", "g_to_m", "m_to_g"),
    "DPAResult": ("a_to_t", "t_to_a"),
    "DBACResult": ("a_to_t", "t_to_a"),
    "FairnessResult": ("overall",),
    "CompareRunsResult": ("u_pvalue", "cohens_d", "levene_pvalue"),
    "RunSummary": ("overall",),
    "SubsampleResult": ("mcc",),
    "Thresholds": ("thresholds",),
    "Report": ("table",),
    "BootstrapResult": ("estimate",),
    "CurveResult": ("values",),
    "ScanResult": ("overall", "subgroups"),
}

# Allow-list, to be emptied by their owners (their modules are being rewritten
# in parallel branches): BootstrapResult (biasamp.stats, the lead) raises
# ValueError from ``.value`` when it holds several statistics, and documents
# neither; DPAResult (biasamp.predictability) does not yet say in its docstring
# why it has two values.
UNDOCUMENTED_SEVERAL: set = set()
PROPERTY_RAISES: set = set()


def test_every_public_result_class_is_covered(results):
    public = {name for name in biasamp.__all__ if inspect.isclass(getattr(biasamp, name))
              and (name.endswith(("Result", "Summary")) or name in ("Thresholds", "Report"))}
    assert public == set(results)


@pytest.mark.parametrize("name", sorted(SEVERAL) + ["DirectionResult", "MALSResult", "MultiMetricResult",
                                                    "DPADirectionResult", "LeakageResult",
                                                    "AttentionScoreResult", "LICResult", "DFBiasAmpResult",
                                                    "DBACDirectionResult"])
def test_value_or_a_documented_reason_for_several(results, name):
    r = results[name]
    if name not in SEVERAL:
        assert isinstance(r.value, float)
        return
    doc = " ".join(inspect.getdoc(type(r)).split())  # whitespace-normalised
    if name not in UNDOCUMENTED_SEVERAL:
        assert "There is no single ``value``" in doc, name
        assert not hasattr(r, "value")
    for part in SEVERAL[name]:
        assert part in doc  # the docstring names where the numbers are
        held = getattr(r, part)
        if isinstance(held, ResultMixin):  # a component result (a direction, a metric) has its own value
            assert isinstance(held.value, float)


def test_no_property_raises_anything_but_attribute_error(results):
    for name, r in results.items():
        for attr in dir(r):
            if attr.startswith("_") or (name, attr) in PROPERTY_RAISES:
                continue
            with contextlib.suppress(AttributeError):
                getattr(r, attr)


def test_to_frame_to_dict_repr_html(results):
    for name, r in results.items():
        frame = r.to_frame()
        assert isinstance(frame, pd.DataFrame) and len(frame) > 0, name
        json.dumps(r.to_dict())  # JSON-friendly builtins only
        text = repr(r)
        assert text and not text.startswith(f"{name}(sections=") and len(text.splitlines()) <= 40, name
        page = r._repr_html_()
        assert "<table" in page, name


def test_html_escapes_the_repr_and_shows_the_table(results):
    page = results["DirectionalBiasAmpResult"]._repr_html_()
    assert "BiasAmp A-&gt;T" in page and "A->T" not in page  # escaped headline
    pairs = results["DirectionalBiasAmpResult"].to_frame()
    assert f"<td>{pairs['task'].iloc[0]}</td>" in page
    long = results["Report"]  # own renderer; a long table is elided, not dumped
    assert "biasamp" in long._repr_html_()


def test_to_frame_rows_give_the_headline(results):
    d = results["DirectionResult"].to_frame()
    assert results["DirectionResult"].value == pytest.approx(d.loc[~d["undefined"], "contribution"].mean())
    m = results["MALSResult"]
    assert m.value == pytest.approx(m.to_frame()["contribution"].sum() / m.n_tasks)
    g = results["MultiMetricResult"].to_frame()
    assert results["MultiMetricResult"].value == pytest.approx(g.loc[~g["undefined"], "delta"].abs().mean())
    stacked = results["MultiBiasAmpResult"].to_frame()
    assert set(stacked["metric"]) == {"Multi_MALS", "Multi_G->M", "Multi_M->G"}
    assert {"attr", "combination"} <= set(stacked.columns)
    fair = results["FairnessResult"]
    assert fair.to_frame().mean().to_dict() == pytest.approx(fair.overall)
    la = results["LeakageResult"]
    assert la.value == pytest.approx(la.to_frame()["leakage"].mean())
    dpa = results["DPADirectionResult"]
    assert dpa.value == pytest.approx(dpa.to_frame()["dpa"].mean())
    lic = results["LICResult"]
    assert lic.value == pytest.approx(lic.to_frame()["lic"].mean())
    assert lic.lic_m == pytest.approx(lic.to_frame()["lic_m"].mean())
    dbac = results["DBACDirectionResult"]
    assert dbac.value == pytest.approx(dbac.to_frame()["dbac"].mean())
    assert set(results["DBACResult"].to_frame()["direction"]) == {"A->T", "T->A"}
    runs = results["RunSummary"].to_frame()
    assert list(runs.index) == ["DP", "EOTP"]
    th = results["Thresholds"]
    assert th.to_frame()["threshold"].tolist() == th.thresholds.tolist()
    sub = results["SubsampleResult"]
    assert sub.to_frame()["selected"].sum() == sub.n
    cmp = results["CompareRunsResult"].to_frame()
    assert len(cmp) == 1 and cmp["cohens_d"].iloc[0] == results["CompareRunsResult"].cohens_d
    rep = results["Report"]
    pd.testing.assert_frame_equal(rep.to_frame(), rep.table)
    curve = results["CurveResult"]
    frame = curve.to_frame()
    assert frame["threshold"].tolist() == [0.1, 0.5, 0.9]
    pd.testing.assert_series_equal(frame["a_to_t"], curve.values["a_to_t"])


def test_signed_never_prints_a_nonzero_bound_as_zero():
    from biasamp._core.results import signed

    assert signed(0.12345) == "+0.1235" and signed(-0.5) == "-0.5000" and signed(0.0) == "+0.0000"
    assert signed(3.2e-6) == "+3.2e-06" and signed(-4e-5) == "-4.0e-05"  # would read +0.0000 / -0.0000
    assert signed(5e-5) == "+0.0001"  # rounds to a nonzero digit: fixed notation is enough
    assert signed(-2.2e-20) == "+0.0000" and signed(3e-13) == "+0.0000"  # rounding error of an exact 0


def test_every_biasamp_warning_derives_from_biasamp_warning():
    import inspect

    import biasamp.exceptions as exc

    warning_classes = [c for _, c in inspect.getmembers(exc, inspect.isclass)
                       if issubclass(c, Warning) and c.__module__ == exc.__name__]
    assert {c.__name__ for c in warning_classes} >= {"BiasampWarning", "UndefinedPairWarning", "SmallGroupWarning"}
    assert all(issubclass(c, exc.BiasampWarning) and issubclass(c, UserWarning) for c in warning_classes)
    assert "BiasampWarning" in exc.__all__
