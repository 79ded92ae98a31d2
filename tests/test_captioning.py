"""Captioning family: LIC, DBAC, caption statistics, word labels, the report-section data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import biasamp
from biasamp import (
    bias_amp_directional,
    caption_gender_stats,
    caption_labels,
    dbac,
    lic,
)
from biasamp.captioning import (
    GENDER_WORDS,
    MASK_TOKEN,
    UNK_TOKEN,
    _text,
    caption_section,
    tokenize,
)

N = 400
WHO = np.array(["woman", "man"])
CONTEXT = np.array(["riding a horse", "eating pizza", "in a park", "on a bench"])


def _gender(seed: int = 1, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, n), rng.integers(0, 4, n)


# --------------------------------------------------------------------------- #
# tokenisation, masking, word lists
# --------------------------------------------------------------------------- #
def test_tokenize_handles_case_and_punctuation():
    assert tokenize("A Woman's  T-shirt, and HER dog.") == ["a", "woman", "s", "t", "shirt", "and", "her", "dog"]


def test_mask_replaces_every_gender_word_and_nothing_else():
    toks = _text.tokenize_all(np.array(["She and her husband ride.", "A man, a MAN!"], dtype=object))
    masked = _text.mask_tokens(toks, _text.word_set(GENDER_WORDS))
    assert masked == [[MASK_TOKEN, "and", MASK_TOKEN, MASK_TOKEN, "ride"], ["a", MASK_TOKEN, "a", MASK_TOKEN]]


def test_vocabulary_alignment_marks_words_the_model_never_uses():
    out, n = _text.align_unknown([["a", "bearded", "man"], ["a", MASK_TOKEN]], {"a", "man"})
    assert out == [["a", UNK_TOKEN, "man"], ["a", MASK_TOKEN]] and n == 1


def test_contextual_substitution_uses_the_given_vectors():
    vectors = {"puppy": [1.0, 0.1], "dog": [1.0, 0.0], "cat": [0.0, 1.0], "zebra": [-1.0, 0.0]}
    out, n = _text.substitute([["a", "puppy"], ["a", "zebra"]], {"a", "dog", "cat"}, contextual=True, threshold=0.5,
                              word_vectors=vectors)
    assert out == [["a", "dog"], ["a", UNK_TOKEN]] and n == 2  # zebra: most similar is cat at cos 0 < 0.5


def test_corpus_vectors_put_words_of_the_same_contexts_together():
    corpus = [["dog", "barks", "loud"], ["puppy", "barks", "loud"], ["cat", "meows", "soft"], ["kitten", "meows"]] * 5
    words, vec = _text.corpus_vectors([corpus], dim=3)
    v = dict(zip(words, vec))
    assert v["dog"] @ v["puppy"] > v["dog"] @ v["cat"] + 0.5


def test_caption_labels_find_words_and_feed_the_cooccurrence_metrics():
    words = {"knife": ["knife", "knives"], "cup": ["cup", "cups"]}
    human = ["a man with a knife", "a woman with a cup", "a man with knives and a cup", "a Woman, a CUP, a knife."]
    lab = caption_labels(human, words)
    assert lab.to_numpy().tolist() == [[1, 0], [0, 1], [1, 1], [1, 1]]
    # the model mentions the knife for every man and the cup for every woman: BiasAmp-> A->T by hand
    attr = np.array([1, 0, 1, 0] * 10)
    task = caption_labels(human * 10, words)
    pred = caption_labels(["a man with a knife", "a woman with a cup"] * 20, words)
    res = bias_amp_directional(attr, task, task_pred=pred)
    # truth: P(knife|man) 1, P(knife|woman) 1/2, P(cup|man) 1/2, P(cup|woman) 1; P(knife) = P(cup) = 3/4, so
    # y = 1 for (man, knife) (1/2 > 3/8) and (woman, cup); predictions: 1, 0, 0, 1.
    # Delta: 0 (y=1), -1/2 (y=0: +1/2), -1/2 (y=0: +1/2), 0 (y=1): mean over the 4 pairs = 1/4
    assert res.a_to_t.value == pytest.approx(0.25)


# --------------------------------------------------------------------------- #
# LIC
# --------------------------------------------------------------------------- #
def test_masked_gender_word_alone_gives_chance_and_a_gendered_context_word_more():
    g, c = _gender()
    only_word = [f"a {w} {x}" for w, x in zip(WHO[g], CONTEXT[c])]
    neutral = [f"a person {x}" for x in CONTEXT[c]]
    gendered = [f"a {w} {x} {'holding a purse' if gi == 0 else 'with a beard'}"
                for w, x, gi in zip(WHO[g], CONTEXT[c], g)]
    kw = dict(n_iter=5, random_state=0, progress=False)
    masked = lic(g, captions_pred=only_word, **kw)
    # once masked, "a woman riding" and "a man riding" are the same text as "a person riding" with "person" masked
    same = lic(g, captions_pred=neutral, mask=["person"], **kw)
    assert masked.lic_m == same.lic_m
    assert 0.2 < masked.lic_m < 0.35  # chance: right half the time with probability ~0.5 -> ~0.25
    assert masked.ci_m[0] < 0.3
    leaky = lic(g, captions_pred=gendered, **kw)
    assert leaky.lic_m > 0.85 and leaky.ci_m[0] > masked.ci_m[1]
    unmasked = lic(g, captions_pred=only_word, mask=None, **kw)
    assert unmasked.lic_m > 0.85  # without masking the gender word itself leaks


def test_identical_human_and_model_captions_give_lic_zero_exactly():
    g, c = _gender()
    caps = [f"a {w} {x} {'with her purse' if gi == 0 and ci < 2 else ''}" for w, x, gi, ci in zip(WHO[g], CONTEXT[c], g, c)]
    res = lic(g, captions_pred=caps, captions=caps, n_iter=4, random_state=3, progress=False)
    assert res.value == 0.0 and res.ci == (0.0, 0.0)
    assert (res.iterations["lic"] == 0).all() and res.lic_m == res.lic_d > 0.3


def test_lic_amplification_and_several_human_captions_per_image():
    g, c = _gender()
    model = [f"a {w} {'holding a purse' if gi == 0 else 'with a beard'}" for w, gi in zip(WHO[g], g)]
    human = np.column_stack([[f"a {w} {x}" for w, x in zip(WHO[g], CONTEXT[c])],
                             [f"the {w} is {x}" for w, x in zip(WHO[g], CONTEXT[c])]])
    res = lic(g, captions_pred=model, captions=human, n_iter=3, random_state=0, progress=False)
    assert res.value > 0.5 and res.ci[0] > 0.5
    assert res.lic_d < 0.35
    assert list(res.by_class.columns) == ["lic_m", "lic_d", "lic", "n_test"]
    # per-class LIC_M averages to LIC_M (balanced scored sets)
    assert res.by_class["lic_m"].mean() == pytest.approx(res.lic_m)
    assert res.by_class["n_test"].nunique() == 1


def test_lic_without_human_captions_is_undefined_with_a_reason():
    g, _ = _gender(n=60)
    res = lic(g, captions_pred=[f"a {w}" for w in WHO[g]], n_iter=2, random_state=0, progress=False)
    assert res.value is None and "no human captions" in res.reason and "LIC undefined" in repr(res)
    assert res.lic_d is None and 0 <= res.lic_m <= 1 and "lic_d" not in res.iterations
    assert res.to_dict()["value"] is None


def test_lic_on_a_fixed_split_balances_both_sides():
    g, c = _gender()
    split = np.where(np.arange(N) < 300, "train", "val")
    res = lic(g, captions_pred=[f"a {w} {x}" for w, x in zip(WHO[g], CONTEXT[c])], split=split, n_iter=2,
              random_state=0, progress=False)
    tr = np.bincount(g[:300])
    te = np.bincount(g[300:])
    assert (res.iterations["n_train"] == 2 * tr.min()).all() and (res.iterations["n_test"] == 2 * te.min()).all()
    res = lic(g, captions_pred=[f"a {w}" for w in WHO[g]], split=split == "train", balanced=False, n_iter=2,
              random_state=0, progress=False)
    assert (res.iterations["n_test"] == 100).all()


def test_lic_is_deterministic_and_seeds_matter():
    g, c = _gender()
    caps = [f"a {w} {x}" for w, x in zip(WHO[g], CONTEXT[c])]
    a = lic(g, captions_pred=caps, n_iter=3, random_state=7, progress=False)
    b = lic(g, captions_pred=list(caps), n_iter=3, random_state=7, progress=False)
    pd.testing.assert_frame_equal(a.iterations, b.iterations)
    other = lic(g, captions_pred=caps, n_iter=3, random_state=8, progress=False)
    assert not a.iterations["lic_m"].equals(other.iterations["lic_m"])


def test_lic_accepts_a_pipeline_and_an_encoder():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    g, c = _gender()
    caps = [f"a {w} {x} {'with a purse' if gi == 0 else ''}" for w, x, gi in zip(WHO[g], CONTEXT[c], g)]
    res = lic(g, captions_pred=caps, attacker=make_pipeline(CountVectorizer(), MultinomialNB()), n_iter=2,
              random_state=0, progress=False)
    assert res.attacker == "Pipeline" and res.lic_m > 0.8
    calls = []

    def encoder(texts):  # a stand-in sentence encoder: does the text mention a purse?
        calls.append(len(texts))
        return np.array([[("purse" in t) * 1.0, len(t) / 50] for t in texts])

    res = lic(g, captions_pred=caps, encoder=encoder, n_iter=2, random_state=0, progress=False)
    assert res.attacker == "logistic" and res.lic_m > 0.8
    assert calls == [len(set(_text.join(_text.mask_tokens(_text.tokenize_all(np.array(caps, dtype=object)),
                                                          _text.word_set(GENDER_WORDS)))))]


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(captions_pred=["a man"] * 9), ValueError, "attr has 10, captions_pred has 9"),
    (dict(captions_pred=["a man"] * 9 + [None]), ValueError, "captions_pred: caption of row 9 is missing"),
    (dict(captions_pred=["a man"] * 9 + [3]), TypeError, "captions_pred: captions must be strings"),
    (dict(captions_pred="a man"), TypeError, "captions_pred is one string"),
    (dict(captions_pred=["a man"] * 10, captions=["a man"] * 8), ValueError, "captions has 8"),
    (dict(captions_pred=["a man"] * 10, split=["train"] * 10), ValueError, "split puts every image on one side"),
    (dict(captions_pred=["a man"] * 10, split=["train", "dev"] * 5), ValueError, "split values"),
    (dict(captions_pred=["a man"] * 10, mask="religion"), ValueError, "mask must be"),
    (dict(captions_pred=["a man"] * 10, mask=["two words"]), ValueError, "mask: 'two words' is not one word"),
    (dict(captions_pred=["a man"] * 10, attacker="svm"), ValueError, "attacker must be one of"),
    (dict(captions_pred=["a man"] * 10, attacker="logistic"), ValueError, "give encoder="),
    (dict(captions_pred=["a man"] * 10, encoder="bert"), TypeError, "encoder must be a callable"),
    (dict(captions_pred=["a man"] * 10, n_iter=0), ValueError, "n_iter"),
    (dict(captions_pred=["a man"] * 10, n_iter=1), ValueError, "level=None"),
    (dict(captions_pred=["a man"] * 10, test_size=1.5), ValueError, "test_size"),
    (dict(captions_pred=["a man"] * 10, balanced="yes"), TypeError, "balanced"),
    (dict(captions_pred=["a man"] * 10, random_state=-1), ValueError, "random_state"),
])
def test_lic_bad_inputs_raise_named_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        lic(["male", "female"] * 5, progress=False, **kwargs)


def test_lic_bad_encoder_output_is_named():
    with pytest.raises(ValueError, match="encoder returned shape"):
        lic(["m", "f"] * 5, captions_pred=["a"] * 10, encoder=lambda t: np.zeros(3), progress=False)
    with pytest.raises(ValueError, match="encoder returned NaN"):
        lic(["m", "f"] * 5, captions_pred=["a"] * 10, encoder=lambda t: np.full((len(t), 2), np.nan), progress=False)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(["a man riding", "a woman riding", "a person at home", "she smiles", "his dog"]),
                min_size=12, max_size=30), st.integers(0, 2**32 - 1))
def test_lic_properties(caps, seed):
    attr = np.arange(len(caps)) % 2
    res = lic(attr, captions_pred=caps, captions=caps, n_iter=2, random_state=seed, progress=False)
    assert res.value == 0.0  # identical captions, any content
    assert 0.0 <= res.lic_m <= 1.0 and (res.iterations["lic_m"] <= res.iterations["accuracy_m"] + 1e-12).all()
    assert res.ci_m[0] <= res.lic_m <= res.ci_m[1]


# --------------------------------------------------------------------------- #
# DBAC
# --------------------------------------------------------------------------- #
def _knife_data(n: int = N, seed: int = 1):
    rng = np.random.default_rng(seed)
    g, obj = rng.integers(0, 2, n), rng.integers(0, 2, n)
    cue, what = np.array(["with long hair", "with a beard"]), np.array(["cup", "knife"])
    human = [f"a {w} {c} holding a {o}" for w, c, o in zip(WHO[g], cue[g], what[obj])]
    # the model mentions the knife for every man and the cup for every woman (it adds gendered objects)
    model = [f"a {w} {c} holding a {o}" for w, c, o in zip(WHO[g], cue[g], what[g])]
    return g, human, model, {"cup": ["cup"], "knife": ["knife"]}


def test_dbac_a_model_that_adds_gendered_objects_raises_a_to_t_only():
    g, human, model, words = _knife_data()
    res = dbac(g, caption_labels(human, words), captions=human, captions_pred=model,
               task_pred=caption_labels(model, words), quality="accuracy", n_iter=4, random_state=0, progress=False)
    assert res.a_to_t.value > 0.2 and res.a_to_t.ci[0] > 0.1
    assert res.a_to_t.psi_model == 1.0 and 0.4 < res.a_to_t.psi_data < 0.65  # chance for the random human mentions
    # the human captions already reveal the gender (beard / long hair): the added objects change nothing in T->A
    assert res.t_to_a.value == 0.0 and res.t_to_a.psi_data == res.t_to_a.psi_model == 1.0
    proba = dbac(g, caption_labels(human, words), captions=human, captions_pred=model,
                 task_pred=caption_labels(model, words), n_iter=3, random_state=0, progress=False)
    assert proba.a_to_t.value > 0.3 and abs(proba.t_to_a.value) < 0.02


def test_dbac_a_model_that_changes_gender_words_by_context_raises_t_to_a():
    rng = np.random.default_rng(2)
    g, k = rng.integers(0, 2, N), rng.integers(0, 2, N)
    kitchen = np.array(["in a garage", "in a kitchen"])
    human = [f"a {w} {x}" for w, x in zip(WHO[g], kitchen[k])]
    # the model uses a neutral word unless the kitchen is there, then says "woman" (context -> gender)
    model = [f"a {'woman' if ki else 'person'} {x}" for ki, x in zip(k, kitchen[k])]
    # T->A target: the gender the caption names (woman, or none) as the model-side prediction
    named = np.where(k == 1, 0, g)
    res = dbac(g, k, captions=human, captions_pred=model, attr_pred=named, task_words={0: ["garage"], 1: ["kitchen"]},
               directions="T->A", n_iter=3, random_state=0, progress=False)
    assert res.a_to_t is None and res.t_to_a.value > 0.1 and res.t_to_a.ci[0] > 0.1


def test_identical_captions_give_dbac_zero_exactly():
    g, human, _, words = _knife_data()
    for kw in (dict(), dict(quality="inv_ce"), dict(substitute="contextual"), dict(priors=True)):
        res = dbac(g, caption_labels(human, words), captions=human, captions_pred=human, n_iter=3, random_state=1,
                   progress=False, **kw)
        assert res.a_to_t.value == 0.0 and res.t_to_a.value == 0.0, kw
        assert (res.to_frame()["dbac"] == 0).all()


def test_dbac_single_label_task_default_words_and_deterministic():
    g, human, model, _ = _knife_data(200)
    task = np.where(np.array(["knife" in h for h in human]), "knife", "cup")
    a = dbac(g, task, captions=human, captions_pred=model, n_iter=2, random_state=5, progress=False)
    b = dbac(g, list(task), captions=list(human), captions_pred=model, n_iter=2, random_state=5, progress=False)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    assert a.a_to_t.n_substituted == (0, 0) and -1 <= a.a_to_t.value <= 1


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(task=["cup", "knife"] * 4 + ["cup"]), ValueError, "task has 9"),
    (dict(captions=["a man"] * 9), ValueError, "captions has 9"),
    (dict(directions=["B->A"]), ValueError, "directions"),
    (dict(quality="f1"), ValueError, "quality must be one of"),
    (dict(substitute="glove"), ValueError, "substitute must be one of"),
    (dict(similarity_threshold=2), ValueError, "similarity_threshold"),
    (dict(word_vectors={"a": [1.0]}), ValueError, "only substitute='contextual'"),
    (dict(priors=True, quality="accuracy"), ValueError, "priors=True"),
    (dict(task=["ice cream", "cup"] * 5), ValueError, "task_words"),
    (dict(attr_pred=[0.5] * 10), ValueError, "attr_pred"),
])
def test_dbac_bad_inputs_raise_named_errors(kwargs, error, match):
    args = dict(task=["cup", "knife"] * 5, captions=["a man with a cup"] * 10, captions_pred=["a woman"] * 10)
    args.update(kwargs)
    task = args.pop("task")
    with pytest.raises(error, match=match):
        dbac(["m", "f"] * 5, task, progress=False, **args)


# --------------------------------------------------------------------------- #
# caption statistics
# --------------------------------------------------------------------------- #
def test_caption_gender_stats_by_hand():
    attr = ["male"] * 6 + ["female"] * 4
    caps = ["a man", "a man", "a boy", "a woman", "a person", "a man and a woman",  # male: 3 right, 1 wrong, 2 neutral
            "a woman", "a girl", "a man", "a child"]  # female: 2 right, 1 wrong, 1 neutral
    s = caption_gender_stats(attr, captions_pred=caps, random_state=0)
    assert s.error == pytest.approx(2 / 10) and s.neutral_rate == pytest.approx(3 / 10)
    # named: male 4 (3 + 1), female 3 (1 + 2); ratio female/male: (3/4) / (4/6)
    assert s.ratio_captions == pytest.approx(3 / 4) and s.ratio_truth == pytest.approx(4 / 6)
    assert s.ratio == pytest.approx((3 / 4) / (4 / 6))
    assert s.confusion.loc["male"].tolist() == [3, 1, 2] and list(s.confusion.columns) == ["male", "female", "neutral"]
    assert s.by_class.loc["female", "error"] == pytest.approx(1 / 4)
    assert s.ci["error"][0] <= s.error <= s.ci["error"][1]


def test_caption_gender_stats_undefined_ratio_and_errors():
    s = caption_gender_stats(["male", "female"], captions_pred=["a person", "a dog"], level=None)
    assert s.ratio is None and "divides by 0" in s.reason and s.neutral_rate == 1.0
    with pytest.raises(ValueError, match="no word list for the attr class 'x'"):
        caption_gender_stats(["male", "x"], captions_pred=["a", "b"])
    with pytest.raises(ValueError, match="n_boot"):
        caption_gender_stats(["male", "female"], captions_pred=["a", "b"], n_boot=0)


def test_lic_on_the_gender_error_of_burns():
    """The model that names the gender from the context: LIC_M sees it, the gender error too."""
    g, c = _gender()
    model = [f"a {'woman' if ci == 1 else 'man'} {x}" for ci, x in zip(c, CONTEXT[c])]
    s = caption_gender_stats(np.where(g == 0, "female", "male"), captions_pred=model, level=None)
    assert s.error == pytest.approx(np.mean((c == 1) != (g == 0)))


# --------------------------------------------------------------------------- #
# report-section data, public names
# --------------------------------------------------------------------------- #
def test_caption_section_rows():
    g, human, model, words = _knife_data(120)
    res_l = lic(g, captions_pred=model, captions=human, n_iter=2, random_state=0, progress=False)
    res_d = dbac(g, caption_labels(human, words), captions=human, captions_pred=model, n_iter=2, random_state=0,
                 progress=False)
    res_s = caption_gender_stats(np.where(g == 0, "female", "male"), captions_pred=model, random_state=0)
    sec = caption_section(res_l, res_d, res_s)
    metrics = [r["metric"] for r in sec["summary"]]
    assert metrics == ["LIC", "LIC_M", "LIC_D", "DBAC", "DBAC", "gender error", "gender-neutral rate", "gender ratio"]
    assert sec["summary"][0]["value"] == res_l.value and sec["key"] == "captioning"
    assert set(sec["tables"]) >= {"lic_iterations", "dbac_iterations", "caption_gender_by_class"}


def test_public_names():
    for name in ("lic", "dbac", "caption_gender_stats", "caption_labels", "LICResult", "DBACResult",
                 "DBACDirectionResult", "CaptionGenderStats"):
        assert name in biasamp.__all__ and getattr(biasamp, name) is not None


def test_results_do_not_depend_on_thread_settings():
    from threadpoolctl import threadpool_limits

    g, human, model, words = _knife_data(200)
    kw = dict(n_iter=2, random_state=4, progress=False)
    a = lic(g, captions_pred=model, captions=human, **kw)
    d = dbac(g, caption_labels(human, words), captions=human, captions_pred=model, **kw)
    with threadpool_limits(limits=2):
        b = lic(g, captions_pred=model, captions=human, **kw)
        e = dbac(g, caption_labels(human, words), captions=human, captions_pred=model, **kw)
    pd.testing.assert_frame_equal(a.iterations, b.iterations)
    pd.testing.assert_frame_equal(d.to_frame(), e.to_frame())
