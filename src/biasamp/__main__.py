"""``python -m biasamp``: the co-occurrence metrics on the built-in demo dataset."""

from __future__ import annotations

import pandas as pd

from .cooccurrence import bias_amp_directional, bias_amp_mals
from .datasets import make_amplification_demo


def main() -> None:
    d = make_amplification_demo()
    print(f"biasamp demo: {len(d.attr_train)} training and {len(d.attr)} test instances, "
          f"protected attribute = gender {sorted(d.attr.unique())}, tasks = {list(d.task.columns)}\n")
    directional = bias_amp_directional(
        d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred,
        attr_train=d.attr_train, task_train=d.task_train,
    )
    print(directional)
    print(bias_amp_mals(d.attr_train, d.task_train, d.attr_pred, d.task_pred))
    with pd.option_context("display.width", 120, "display.precision", 4):
        cols = ["attr", "task", "y", "p_true", "p_pred", "delta", "contribution"]
        print("\nA->T pairs contributing most:")
        print(directional.a_to_t.top(5)[cols].to_string(index=False))


if __name__ == "__main__":
    main()
