"""One configuration of the audit (AuditConfig): keywords are sugar over it, the in-memory and streamed audits and
the command line share it and its defaults, and the families receive the options their declarations take."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import biasamp
from biasamp._families import REGISTRY
from biasamp.datasets import make_amplification_demo
from biasamp.report import AuditConfig, AuditOptions, audit

FAST = {"n_boot": 20, "n_boot_multi": 5, "progress": False, "exclude": ("dpa", "leakage")}


@pytest.fixture(scope="module")
def demo():
    return make_amplification_demo(n_train=600, n_test=400, random_state=3)


def _soft(d, seed=0):
    """Probabilities as predictions: the hard predictions moved off 0/1 by noise."""
    rng = np.random.default_rng(seed)
    return (d.task_pred * 0.6 + rng.random(d.task_pred.shape) * 0.4).clip(0, 1)


def test_the_config_is_public_frozen_and_checked():
    assert biasamp.AuditConfig is AuditConfig and AuditOptions is AuditConfig  # the former name of the class
    config = AuditConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.n_boot = 5  # type: ignore[misc]
    assert config.replace(n_boot=50).n_boot == 50 and config.n_boot == 1000
    for kw, kind, words in [
        (dict(n_boot=1), ValueError, "n_boot must be an integer >= 2"),
        (dict(n_boot=10**9), ValueError, "n_boot must be at most"),
        (dict(level=0), ValueError, r"level must be a number in \(0, 1\)"),
        (dict(ci_method="wald"), ValueError, "ci_method must be one of"),
        (dict(random_state=1.5), TypeError, "random_state"),
        (dict(n_iter=1), ValueError, r"n_iter must be an integer in \[2, 10000\]"),
        (dict(threshold=1), ValueError, "threshold"),
        (dict(soft="mean"), ValueError, "soft must be one of"),
        (dict(min_group_size=-1), ValueError, "min_group_size"),
        (dict(include_small_groups="no"), TypeError, "include_small_groups"),
        (dict(average=None), ValueError, "average must be one of"),
        (dict(tolerance=(1.2, 0.8)), ValueError, "tolerance"),
        (dict(combinations="some"), ValueError, "combinations"),
        (dict(max_size=0), ValueError, "max_size must be None or an integer >= 1"),
        (dict(min_support=0), ValueError, "min_support"),
        (dict(top_k=0), ValueError, "top_k"),
        (dict(attacker="best"), ValueError, "attacker"),
        (dict(errors="ignore"), ValueError, "errors must be one of"),
        (dict(title=3), TypeError, "title must be a str"),
        (dict(names=["a"]), TypeError, "names must be None or a dict"),
        (dict(sections="mals"), TypeError, "sections must be a list of section keys"),
        (dict(missing="skip"), ValueError, "missing must be one of"),
        (dict(batch_size=0), ValueError, "batch_size must be an integer >= 1"),
        (dict(dpa_rows=-1), ValueError, "dpa_rows must be a non-negative integer"),
    ]:
        with pytest.raises(kind, match=words):
            AuditConfig(**kw)
        with pytest.raises(kind, match=words):
            config.replace(**kw)
    with pytest.raises(TypeError, match="AuditConfig has no option 'n_boots'"):
        config.replace(n_boots=5)


def test_a_generator_seed_is_drawn_once_for_an_integer_seed():
    a = AuditConfig(random_state=np.random.default_rng(4))
    b = AuditConfig(random_state=np.random.default_rng(4))
    assert isinstance(a.random_state, int) and a.random_state == b.random_state
    assert a.replace(n_boot=30).random_state == a.random_state  # replace keeps the drawn seed
    assert a.seed("fairness") == b.seed("fairness") != a.seed("directional")
    numpy_int = AuditConfig(random_state=np.int64(5))  # a numpy integer is that integer, not a drawn seed
    assert type(numpy_int.random_state) is int and numpy_int.random_state == 5


def test_keywords_are_sugar_over_the_config(demo):
    d = demo
    labels = dict(attr_pred=d.attr_pred, task_pred=d.task_pred, attr_train=d.attr_train, task_train=d.task_train)
    by_keywords = audit(d.attr, d.task, **labels, **FAST, threshold=0.4, min_support=3, level=0.9)
    config = AuditConfig(**FAST, threshold=0.4, min_support=3, level=0.9)
    by_config = audit(d.attr, d.task, **labels, config=config)
    mixed = audit(d.attr, d.task, **labels, config=config.replace(level=0.8), level=0.9)  # a keyword wins
    for rep in (by_config, mixed):
        pd.testing.assert_frame_equal(rep.table, by_keywords.table)
        assert rep.options == by_keywords.options
    assert by_keywords.options["min_support"] == 3 and by_keywords.options["fairness"]["threshold"] == 0.4
    with pytest.raises(TypeError, match=r"audit\(\) got unexpected keyword argument\(s\) 'n_boots'"):
        audit(d.attr, d.task, **labels, n_boots=5)
    with pytest.raises(TypeError, match="config must be an AuditConfig"):
        audit(d.attr, d.task, **labels, config={"n_boot": 5})


def test_the_families_receive_the_options_their_declarations_take():
    config = AuditConfig(threshold=0.3, soft="expected", min_group_size=4, include_small_groups=True,
                         pos_label="yes", max_size=2, min_support=2, average="macro", cross_fit=False,
                         cross_fit_random_state=3)
    for family in REGISTRY:
        got = config.family_options(family.key)
        declared = set(family.options.option_names())
        assert set(got) == declared & set(AuditConfig.forwarded()), family.key
        assert all(getattr(config, k) == v for k, v in got.items())
    assert "soft" not in config.family_options("multi")  # the multi-attribute family declares threshold alone
    assert "pos_label" not in AuditConfig().family_options("fairness")  # None: the family's own default
    assert set(AuditConfig.forwarded()) <= {n for f in REGISTRY for n in f.options.option_names()}


def test_forwarded_options_reach_every_count_family_in_the_audit(demo):
    """The audit's value of each count-based family equals the function called with the same options."""
    d = demo
    scores = _soft(d)
    options = dict(threshold=0.35, min_group_size=250, include_small_groups=True)
    rep = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=scores, attr_train=d.attr_train,
                task_train=d.task_train, **FAST, **options, min_support=2)
    direct = {
        "directional": biasamp.bias_amp_directional(d.attr, d.task, attr_pred=d.attr_pred, task_pred=scores,
                                                    attr_train=d.attr_train, task_train=d.task_train, **options),
        "mals": biasamp.bias_amp_mals(d.attr, d.task, attr_pred=d.attr_pred, task_pred=scores,
                                      attr_train=d.attr_train, task_train=d.task_train, **options),
        "multi": biasamp.multi_bias_amp(d.attr, d.task, attr_pred=d.attr_pred, task_pred=scores,
                                        attr_train=d.attr_train, task_train=d.task_train, min_support=2, **options),
        "fairness": biasamp.fairness_metrics(d.task, scores, sensitive_features=d.attr, **options),
    }
    default = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=scores, attr_train=d.attr_train,
                    task_train=d.task_train, **FAST)
    moved = 0
    for key, res in direct.items():
        table = rep.section(key).summary
        for spec in REGISTRY[key].statistics:
            row = table[(table["metric"] == (spec.label or spec.name)) & (table["direction"] == spec.direction)]
            assert len(row) == 1, (key, spec.name)
            assert row["value"].iloc[0] == pytest.approx(spec.read(res)[0], abs=1e-12), (key, spec.name)
            other = default.section(key).summary
            before = other[(other["metric"] == (spec.label or spec.name)) & (other["direction"] == spec.direction)]
            moved += not np.isclose(before["value"].iloc[0], row["value"].iloc[0])
    assert moved >= 4  # the options changed the numbers: the comparison above can fail


def test_no_interval_with_n_boot_0(demo):
    d = demo
    rep = audit(d.attr, d.task, task_pred=d.task_pred, attr_pred=d.attr_pred, sections=["directional", "fairness"],
                n_boot=0, progress=False)
    assert rep.table["ci_low"].isna().all() and rep.table["value"].notna().all()
    assert all("no interval: n_boot=0" in s.notes for s in rep.sections)


def test_summary_rows_follow_the_declarations(demo):
    """Metric, direction and reading kind of every row, as the report showed them before they were derived."""
    d = demo
    rep = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, **FAST)
    rows = {k: list(zip(rep.section(k).summary["metric"], rep.section(k).summary["direction"]))
            for k in ("directional", "mals", "multi", "fairness")}
    assert rows["directional"] == [("BiasAmp->", "A->T"), ("BiasAmp->", "T->A")]
    assert rows["mals"] == [("BiasAmp_MALS", "")]
    assert rows["multi"] == [("Multi_MALS", ""), ("Multi_MALS", "raw"), ("Multi->", "G->M"), ("Multi->", "G->M raw"),
                             ("Multi->", "M->G"), ("Multi->", "M->G raw")]
    assert rows["fairness"] == [(m, "") for m in biasamp.METRICS]
    readings = set(rep.section("multi").summary["reading"])
    assert readings <= {"distorted", "no evidence", "amplified", "reduced", "too small to tell"}
    only_a_to_t = audit(d.attr, d.task, task_pred=d.task_pred, sections=["directional", "multi"], **FAST)
    assert list(only_a_to_t.section("directional").summary["direction"]) == ["A->T"]  # T->A needs attr_pred
    assert list(only_a_to_t.section("multi").summary["direction"]) == ["G->M", "G->M raw"]


def test_kinds_of_reading_come_from_the_declarations():
    kinds = {s.name: s.reading_kind for f in REGISTRY for s in f.statistics}
    assert kinds["A->T"] == kinds["MALS"] == kinds["G->M raw"] == kinds["DF amplification"] == "amp"
    assert kinds["DP"] == kinds["epsilon_true"] == "disparity" and kinds["G->M"] == kinds["Multi_MALS"] == "distortion"


@pytest.fixture(scope="module")
def parquet(tmp_path_factory, demo):
    pytest.importorskip("pyarrow")
    d = demo
    root = tmp_path_factory.mktemp("config")
    frame = pd.concat([d.attr.rename("attr"), d.attr_pred.rename("attr_pred"), d.task.add_prefix("task_"),
                       d.task_pred.add_prefix("task_").add_suffix("_pred")], axis=1)
    frame.iloc[:200].to_parquet(root / "part-0.parquet")
    frame.iloc[200:].to_parquet(root / "part-1.parquet")
    return root


def _columns(demo):
    from biasamp.report._stream import StreamColumns

    tasks = tuple(demo.task.columns)
    return StreamColumns("attr", tuple(f"task_{t}" for t in tasks), tasks, "attr_pred",
                         tuple(f"task_{t}_pred" for t in tasks))


def test_the_streamed_audit_takes_the_same_config_and_defaults(demo, parquet):
    from biasamp.report._stream import ParquetDataset, stream_audit

    d = demo
    config = AuditConfig(**FAST, threshold=0.4, min_group_size=5, tolerance=(0.7, 1.3), batch_size=64)
    data = ParquetDataset.open(parquet)
    streamed = stream_audit(data, _columns(d), config=config)
    by_keywords = stream_audit(data, _columns(d), **FAST, threshold=0.4, min_group_size=5, tolerance=[0.7, 1.3],
                               batch_size=64)
    old_spelling = stream_audit(data, _columns(d), **FAST, batch_size=64,
                                fairness={"threshold": 0.4, "min_group_size": 5, "tolerance": (0.7, 1.3)})
    memory = audit(d.attr, d.task, attr_pred=d.attr_pred, task_pred=d.task_pred, config=config)
    assert streamed.options == by_keywords.options == old_spelling.options == memory.options
    for rep in (by_keywords, old_spelling):
        pd.testing.assert_frame_equal(rep.table, streamed.table)
    cols = ["section", "metric", "direction"]
    pd.testing.assert_frame_equal(streamed.table[cols], memory.table[cols])
    # no training set: the in-memory BiasAmp->/MALS/Multi cross-fit their signs, the streamed layers read the plug-in
    # signs until they cross-fit too (docs/definitions.md, "No training set"); every other value is equal
    same = ~streamed.table["section"].isin(["directional", "mals", "multi"]).to_numpy()
    assert same.sum() >= 7
    np.testing.assert_allclose(streamed.table["value"][same], memory.table["value"][same], rtol=0, atol=1e-12)
    assert streamed.inputs["streamed"]["batch_size"] == 64
    with pytest.raises(TypeError, match="threshold given both in fairness= and as keyword"):
        stream_audit(data, _columns(d), threshold=0.4, fairness={"threshold": 0.3})
    with pytest.raises(ValueError, match="min_group_size"):  # checked before any data is read
        stream_audit(data, _columns(d), fairness={"min_group_size": -1})
    none = stream_audit(data, _columns(d), config=config.replace(n_boot=0, sections=("directional",)))
    assert none.table["ci_low"].isna().all() and "no interval: n_boot=0" in none.section("directional").notes


def test_the_command_line_builds_one_config_for_both_paths(parquet, tmp_path, monkeypatch):
    from click.testing import CliRunner

    import biasamp.report._stream as stream_mod
    from biasamp.cli import _commands as commands
    from biasamp.cli import main

    seen = []
    real_audit, real_stream = commands._run.__kwdefaults__["auditor"], stream_mod.stream_audit

    def spy_audit(*args, config, **kwargs):
        seen.append(("memory", config))
        return real_audit(*args, config=config, **kwargs)

    def spy_stream(*args, config, **kwargs):
        seen.append(("stream", config))
        return real_stream(*args, config=config, **kwargs)

    # the in-memory path calls audit through _run's default argument, the streamed one imports stream_audit
    monkeypatch.setattr(commands._run, "__kwdefaults__", {**commands._run.__kwdefaults__, "auditor": spy_audit})
    monkeypatch.setattr(stream_mod, "stream_audit", spy_stream)
    flags = ["--n-boot", "20", "--exclude", "dpa", "--exclude", "leakage", "--threshold", "0.4", "--min-support", "3",
             "--level", "0.9", "--no-progress", "-q"]
    runner = CliRunner()
    for mode in ("--no-stream", "--stream"):
        out = tmp_path / f"{mode}.json"
        res = runner.invoke(main, ["audit", str(parquet), mode, *flags, "--json", str(out)])
        assert res.exit_code == 0, res.output
    assert [kind for kind, _ in seen] == ["memory", "stream"]
    memory, stream = (c for _, c in seen)
    assert memory.replace(names=None) == stream.replace(names=None)  # one configuration, whichever path runs
    assert memory.threshold == 0.4 and memory.min_support == 3 and memory.level == 0.9 and memory.n_boot == 20
    assert stream.n_boot == 20 and stream.dpa_rows == AuditConfig().dpa_rows  # the CLI's defaults are the config's
