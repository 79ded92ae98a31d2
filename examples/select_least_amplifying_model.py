"""Model selection with a bias-amplification scorer: the least BiasAmp→ at equal accuracy.

A synthetic hiring dataset: ``hired`` depends on a skill and, a little, on
gender (the historical data is biased); the features are a noisy skill test
score, gender itself and a hobby that is a proxy for gender. A grid search
over which columns the logistic regression may see (gender, the proxy) and
its regularisation scores every candidate twice in 5-fold cross-validation:

* accuracy, and
* BiasAmp→ A→T (Wang & Russakovsky 2021) of gender -> hired, with
  ``biasamp.sklearn.make_scorer("BiasAmp A->T")``; gender reaches the scorer
  through scikit-learn's metadata routing (``search.fit(X, y, attr=gender)``),
  split along the same folds.

Accuracy alone picks a model that uses gender and amplifies the gender gap of
the training labels (BiasAmp→ > 0). The refit rule below keeps the candidates
within one standard error of the best accuracy (equal accuracy, as far as
5 folds can tell) and picks the least amplifying among them.

Run: ``python examples/select_least_amplifying_model.py`` (a few seconds).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline

from biasamp.sklearn import make_scorer


def make_data(n: int = 6000, random_state: int = 0) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Features ``X``, the label ``hired`` and the protected attribute ``gender`` (0/1)."""
    rng = np.random.default_rng(random_state)
    gender = rng.integers(0, 2, n)
    skill = rng.normal(size=n)
    hired = (skill + 0.25 * gender + rng.normal(scale=0.8, size=n) > 0.9).astype(int)
    X = pd.DataFrame({
        "test_score": skill + rng.normal(scale=0.6, size=n),
        "gender": gender,
        "hobby": 0.8 * gender + rng.normal(size=n),  # a proxy for gender
    })
    return X, hired, gender


def least_amplifying_at_equal_accuracy(cv_results: dict) -> int:
    """Refit rule: within one standard error of the best accuracy, the least BiasAmp→ (highest negated score)."""
    acc = np.asarray(cv_results["mean_test_accuracy"])
    best = int(np.argmax(acc))
    n_folds = sum(key.startswith("split") and key.endswith("_test_accuracy") for key in cv_results)
    tolerance = cv_results["std_test_accuracy"][best] / np.sqrt(n_folds)
    candidates = np.flatnonzero(acc >= acc[best] - tolerance)
    scores = np.asarray(cv_results["mean_test_biasamp"])  # -BiasAmp->: higher is less amplification
    return int(candidates[np.argmax(scores[candidates])])


def search(random_state: int = 0) -> tuple[GridSearchCV, pd.DataFrame]:
    """Run the grid search; returns it and a readable table of the candidates."""
    X, hired, gender = make_data(random_state=random_state)
    model = Pipeline([
        ("columns", ColumnTransformer([("gender", "passthrough", ["gender"]), ("proxy", "passthrough", ["hobby"])],
                                      remainder="passthrough")),
        ("clf", LogisticRegression()),
    ])
    grid = {"columns__gender": ["passthrough", "drop"], "columns__proxy": ["passthrough", "drop"],
            "clf__C": [0.01, 1.0]}
    with sklearn.config_context(enable_metadata_routing=True):
        scoring = {"accuracy": "accuracy", "biasamp": make_scorer("BiasAmp A->T")}  # requests `attr`
        grid_search = GridSearchCV(model, grid, scoring=scoring, refit=least_amplifying_at_equal_accuracy,
                                   cv=StratifiedKFold(5, shuffle=True, random_state=random_state))
        grid_search.fit(X, hired, attr=gender)
    res = grid_search.cv_results_
    table = pd.DataFrame({
        "gender": res["param_columns__gender"], "proxy": res["param_columns__proxy"], "C": res["param_clf__C"],
        "accuracy": res["mean_test_accuracy"], "BiasAmp A->T": -res["mean_test_biasamp"],  # undo the negation
        "rank (least BiasAmp)": res["rank_test_biasamp"],
    })
    return grid_search, table


def main() -> None:
    grid_search, table = search()
    print(table.to_string(formatters={"C": "{:g}".format, "accuracy": "{:.4f}".format,
                                      "BiasAmp A->T": "{:+.4f}".format}))
    by_accuracy = int(table["accuracy"].idxmax())
    print(f"\naccuracy alone picks #{by_accuracy}: BiasAmp A->T = {table['BiasAmp A->T'][by_accuracy]:+.4f}")
    print(f"least BiasAmp A->T at equal accuracy: #{grid_search.best_index_} {grid_search.best_params_}, "
          f"BiasAmp A->T = {table['BiasAmp A->T'][grid_search.best_index_]:+.4f}, "
          f"accuracy {table['accuracy'][grid_search.best_index_]:.4f}")


if __name__ == "__main__":
    main()
