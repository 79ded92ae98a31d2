"""biasamp.sklearn.make_scorer: scorers for model selection, the protected attribute routed as metadata.

Expected values are computed independently: the same folds are replayed by
hand (fit on the training fold, the functional metric on the test fold), and
the fairness scorer is checked against fairlearn's ``demographic_parity_difference``.
"""

from __future__ import annotations

import pickle
import runpy
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.tree import DecisionTreeClassifier

import biasamp
from biasamp.sklearn import SCORER_NAMES, make_scorer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _data(n=1200, seed=0):
    """Binary task whose label leans on a binary attribute; feature 1 is the attribute itself."""
    rng = np.random.default_rng(seed)
    attr = rng.integers(0, 2, n)
    x0 = rng.normal(size=n)
    y = (0.5 * x0 + attr + rng.normal(size=n) > 1).astype(int)
    X = np.column_stack([x0, attr, rng.normal(size=n)])
    return X, y, attr


def test_names_resolve_with_arrows_case_and_spacing(routing):
    for name in SCORER_NAMES:
        assert repr(make_scorer(name))  # every listed name makes a scorer
    same = ["BiasAmp A->T", "biasamp a→t", "BiasAmp-> A->T", "BiasAmp→ A→T", "BIASAMP_A->T"]
    funcs = {make_scorer(n)._score_func for n in same}
    assert funcs == {biasamp.sklearn.statistic_score}
    assert {make_scorer(n)._kwargs["statistic"] for n in same} == {"BiasAmp A->T"}
    assert make_scorer("demographic_parity")._kwargs == {"statistic": "DP"}
    assert make_scorer(biasamp.equalized_odds_true_positive)._kwargs == {"statistic": "EOTP"}
    assert make_scorer(biasamp.bias_amp_directional)._kwargs == {"statistic": "BiasAmp A->T"}
    with pytest.raises(ValueError, match="unknown metric 'BiasAmp'.*'BiasAmp A->T'"):
        make_scorer("BiasAmp")
    with pytest.raises(TypeError, match="greater_is_better"):
        make_scorer(lambda y_true, y_pred: 0.0)
    with pytest.raises(TypeError, match="greater_is_better must be a bool"):
        make_scorer("DP", greater_is_better="no")
    with pytest.raises(TypeError, match="metric name or a callable"):
        make_scorer(3)


def test_direct_call_is_the_negated_metric(routing):
    X, y, attr = _data()
    est = LogisticRegression().fit(X, y)
    pred = est.predict(X)
    dp = make_scorer("DP")
    assert dp(est, X, y, sensitive_features=attr) == -biasamp.demographic_parity(y, pred, sensitive_features=attr)
    ba = make_scorer("BiasAmp A->T")
    value = biasamp.bias_amp_directional(attr, y, task_pred=pred).a_to_t.value
    assert value > 0  # the model leans on the attribute: it amplifies
    assert ba(est, X, y, attr=attr) == -value
    plus = make_scorer("BiasAmp A->T", greater_is_better=True)
    assert plus(est, X, y, attr=attr) == value
    # fixed training statistics are passed through to the metric
    train = make_scorer("BiasAmp A->T", attr_train=attr[:600], task_train=y[:600])
    ref = biasamp.bias_amp_directional(attr, y, task_pred=pred, attr_train=attr[:600], task_train=y[:600])
    assert train(est, X, y, attr=attr) == -ref.a_to_t.value
    # the scorer pickles (joblib workers, saved searches)
    assert pickle.loads(pickle.dumps(ba))(est, X, y, attr=attr) == -value


def test_t_to_a_and_multi_scorers(routing):
    """T->A: the estimator predicts the attribute, the task labels are the metadata; Multi G->M: multi-label y."""
    rng = np.random.default_rng(3)
    n = 1500
    attr = rng.integers(0, 2, n)
    task = (rng.random((n, 3)) < 0.3 + 0.3 * attr[:, None] * (np.arange(3) < 2)).astype(int)
    X = np.column_stack([task, rng.normal(size=(n, 2))])
    clf = LogisticRegression().fit(X, attr)
    t_to_a = make_scorer("BiasAmp T->A")
    ref = biasamp.bias_amp_directional(attr, task, attr_pred=clf.predict(X)).t_to_a.value
    assert t_to_a(clf, X, attr, task=task) == -ref
    from sklearn.multioutput import MultiOutputClassifier

    Xg = np.column_stack([attr, rng.normal(size=(n, 2))])
    multi = MultiOutputClassifier(LogisticRegression()).fit(Xg, task)
    g_to_m = make_scorer("Multi G->M", max_size=2)
    ref = biasamp.multi_bias_amp(attr, task, task_pred=multi.predict(Xg), max_size=2).g_to_m
    assert g_to_m(multi, Xg, task, attr=attr) == -ref.value
    raw = make_scorer("Multi G->M", max_size=2, raw=True)
    assert raw(multi, Xg, task, attr=attr) == -ref.raw


def test_grid_search_ranks_candidates_by_the_biasamp_scorer(routing):
    X, y, attr = _data(n=1500, seed=1)
    cv = KFold(4, shuffle=True, random_state=0)
    grid = {"max_depth": [1, 2, 4, 8]}
    scoring = {"acc": "accuracy", "biasamp": make_scorer("BiasAmp A->T"), "dp": make_scorer("DP")}
    search = GridSearchCV(DecisionTreeClassifier(random_state=0), grid, scoring=scoring, refit="biasamp", cv=cv)
    search.fit(X, y, attr=attr, sensitive_features=attr)
    # replay every fold by hand: fit on the training fold, the functional metric on the test fold
    expected = []
    for depth in grid["max_depth"]:
        folds = []
        for train, test in cv.split(X):
            pred = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X[train], y[train]).predict(X[test])
            folds.append(biasamp.bias_amp_directional(attr[test], y[test], task_pred=pred).a_to_t.value)
        expected.append(np.mean(folds))
    np.testing.assert_allclose(search.cv_results_["mean_test_biasamp"], -np.array(expected), rtol=0, atol=1e-15)
    ranks = search.cv_results_["rank_test_biasamp"]
    assert list(ranks) == list(np.argsort(np.argsort(expected, kind="stable"), kind="stable") + 1)
    assert search.best_index_ == int(np.argmin(expected))  # refit="biasamp": the least amplifying depth
    assert len(set(np.round(expected, 12))) == len(expected)  # a ranking, not a tie
    assert np.all(search.cv_results_["mean_test_dp"] <= 0)


def test_cross_validate_and_alias_one_column_for_every_scorer(routing):
    """One `sensitive_features` column feeds fairness and amplification scorers (alias attr -> sensitive_features)."""
    fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
    X, y, attr = _data(seed=2)
    dp = make_scorer("DP")
    ba = make_scorer("BiasAmp A->T").set_score_request(attr="sensitive_features")
    theirs = make_scorer(fairlearn_metrics.demographic_parity_difference, greater_is_better=False)
    cv = KFold(5, shuffle=True, random_state=0)
    res = cross_validate(LogisticRegression(), X, y, cv=cv, scoring={"dp": dp, "ba": ba, "fairlearn": theirs},
                         params={"sensitive_features": attr}, return_estimator=True)
    # biasamp's DP of a binary label equals fairlearn's demographic parity difference
    np.testing.assert_allclose(res["test_dp"], res["test_fairlearn"], rtol=0, atol=1e-12)
    for est, (_, test), score in zip(res["estimator"], cv.split(X), res["test_ba"]):
        ref = biasamp.bias_amp_directional(attr[test], y[test], task_pred=est.predict(X[test])).a_to_t.value
        assert score == -ref


def test_requests_follow_the_routing_setting():
    with sklearn.config_context(enable_metadata_routing=True):
        requests = make_scorer("EOTP").get_metadata_routing().score.requests
        assert requests == {"sensitive_features": True}
        assert make_scorer("BiasAmp T->A").get_metadata_routing().score.requests == {"task": True}
    late = make_scorer("EOTP")  # made without routing: the user requests it once routing is on
    X, y, attr = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(Exception, match="sensitive_features"):
            cross_validate(LogisticRegression(), X, y, scoring=late, params={"sensitive_features": attr})
        late.set_score_request(sensitive_features=True)
        res = cross_validate(LogisticRegression(), X, y, scoring=late, params={"sensitive_features": attr})
    assert np.all(res["test_score"] <= 0)


def test_example_selects_the_least_amplifying_model_at_equal_accuracy():
    ns = runpy.run_path(str(ROOT / "examples" / "select_least_amplifying_model.py"))
    search, table = ns["search"]()
    by_accuracy = int(table["accuracy"].idxmax())
    chosen = search.best_index_
    assert table["BiasAmp A->T"][by_accuracy] > 0  # accuracy alone picks an amplifying model
    assert table["BiasAmp A->T"][chosen] == table["BiasAmp A->T"].min()
    assert table["accuracy"][by_accuracy] - table["accuracy"][chosen] < 0.005
    assert search.best_params_["columns__gender"] == "drop"


def test_scorer_options_reach_the_metric_and_string_targets_score(routing):
    """make_scorer("DP", min_group_size=0, pos_label=...) forwards every option (0.2 dropped them: NaN folds)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_validate

    X, y, attr = _data(n=600)
    labels = np.where(y == 1, "yes", "no")
    scorer = make_scorer("DP", pos_label="yes", min_group_size=0, threshold=0.5)
    est = LogisticRegression().fit(X, labels)
    got = -scorer(est, X, labels, sensitive_features=attr)
    want = biasamp.fairness_metrics(labels, est.predict(X), sensitive_features=attr, pos_label="yes",
                                    min_group_size=0).overall["DP"]
    assert got == pytest.approx(want, abs=1e-15) and got > 0
    cv = cross_validate(LogisticRegression(), X, labels, scoring={"dp": scorer}, params={"sensitive_features": attr},
                        cv=3)
    assert np.isfinite(cv["test_dp"]).all()  # no fold scores NaN
    with pytest.raises(TypeError, match="no_such_option"):
        make_scorer("DP", no_such_option=1)(est, X, labels, sensitive_features=attr)
