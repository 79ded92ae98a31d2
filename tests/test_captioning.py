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
    pd.testing.assert_frame_equal(a.intervals, b.intervals)
    pd.testing.assert_frame_equal(d.to_frame(), e.to_frame())
    pd.testing.assert_frame_equal(d.a_to_t.intervals, e.a_to_t.intervals)


# --------------------------------------------------------------------------- #
# intervals over the captions (issue 22, item 5)
# --------------------------------------------------------------------------- #
PLACES = np.array(["kitchen", "street", "beach", "office"])


def _place_captions(rng: np.random.Generator, g: np.ndarray, strength: float) -> list[str]:
    """'a person <activity> in a <place>' (no gender word): the place depends on the gender by ``strength``."""
    tilt = np.array([1, 1, -1, -1]) * strength / 4
    p = np.where(g[:, None] == 0, 0.25 + tilt, 0.25 - tilt)
    place = (rng.random(len(g))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    act = np.array(["standing", "sitting", "walking"])[rng.integers(0, 3, len(g))]
    return [f"a person {a} in a {pl}" for a, pl in zip(act, PLACES[place])]


def _fixed_split_data(n: int = 600, seed: int = 0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    human, model = _place_captions(rng, g, 0.3), _place_captions(rng, g, 0.8)
    is_train = np.arange(n) < 400
    return g, human, model, is_train


def _own_attacker_proba(texts, y, is_train):
    """The built-in 'tfidf' attacker, fitted here with scikit-learn (captions without gender words: no masking)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = np.asarray(texts, dtype=object)
    est = make_pipeline(TfidfVectorizer(sublinear_tf=True, token_pattern=r"\S+", lowercase=False, ngram_range=(1, 2)),
                        LogisticRegression(C=1.0, max_iter=1000))
    est.fit(list(texts[is_train]), y[is_train])
    return est.predict_proba(list(texts[~is_train]))


def test_caption_interval_of_lic_by_hand():
    """Fixed split, no subsample: LIC is the mean of per-image score differences of one attacker per side; the
    caption bootstrap (within classes) has the standard error of a stratified mean of those differences."""
    g, human, model, is_train = _fixed_split_data()
    res = lic(g, captions_pred=model, captions=human, split=is_train, balanced=False, n_iter=3, n_boot=4000,
              random_state=0, progress=False)
    y = g[~is_train]
    scores = []
    for caps in (model, human):
        p = _own_attacker_proba(caps, g, is_train)
        right = p.argmax(axis=1) == y
        scores.append(np.where(right, p[np.arange(len(y)), y], 0.0))
    d = scores[0] - scores[1]
    assert res.value == pytest.approx(d.mean(), abs=1e-12)
    assert res.lic_m == pytest.approx(scores[0].mean(), abs=1e-12)
    m = len(y)
    se = np.sqrt(sum((np.sum(y == c) / m) ** 2 * d[y == c].var() / np.sum(y == c) for c in (0, 1)))
    iv = res.intervals
    assert iv.at["lic", "se_captions"] == pytest.approx(se, rel=0.05)
    # identical iterations (the built-in attacker on the same rows): no spread over them, the captions' interval only
    assert (res.iterations["lic"] == res.value).all() and iv.at["lic", "se_iterations"] == 0
    assert iv.at["lic", "iterations_low"] == iv.at["lic", "iterations_high"] == res.value
    assert res.ci == (iv.at["lic", "both_low"], iv.at["lic", "both_high"])
    assert res.ci == pytest.approx((iv.at["lic", "captions_low"], iv.at["lic", "captions_high"]), abs=1e-15)
    assert res.ci == pytest.approx((d.mean() - 1.959964 * iv.at["lic", "se_captions"],
                                    d.mean() + 1.959964 * iv.at["lic", "se_captions"]), abs=1e-6)


def test_caption_interval_of_dbac_by_hand():
    """Fixed split: DBAC of one attacker per side; the image bootstrap's standard error is the delta method's
    for (Psi_M - Psi_D)/(Psi_M + Psi_D) of the paired per-image probabilities of the true class."""
    g, human, model, is_train = _fixed_split_data(800, seed=3)
    res = dbac(g, np.zeros(len(g), dtype=int) + (np.arange(len(g)) % 2), captions=human, captions_pred=model,
               split=is_train, directions="T->A", n_iter=2, n_boot=4000, random_state=0, progress=False)
    y = g[~is_train]
    r = [_own_attacker_proba(c, g, is_train)[np.arange(len(y)), y] for c in (human, model)]
    psi_d, psi_m = r[0].mean(), r[1].mean()
    t = res.t_to_a
    assert t.psi_data == pytest.approx(psi_d, abs=1e-12) and t.psi_model == pytest.approx(psi_m, abs=1e-12)
    assert t.value == pytest.approx((psi_m - psi_d) / (psi_m + psi_d), abs=1e-12)
    grad = np.array([-2 * psi_m, 2 * psi_d]) / (psi_m + psi_d) ** 2
    se = np.sqrt(grad @ np.cov(np.vstack(r), ddof=0) @ grad / len(y))
    assert t.intervals.at["dbac", "se_captions"] == pytest.approx(se, rel=0.08)
    assert t.intervals.at["absolute", "se_captions"] == pytest.approx(np.std(r[1] - r[0]) / np.sqrt(len(y)), rel=0.05)


def test_interval_over_iterations_is_the_t_interval_of_the_iterations():
    g, c = _gender()
    caps = [f"a {w} {x}" for w, x in zip(WHO[g], CONTEXT[c])]
    human = [f"a {w} outside" for w in WHO[g]]
    res = lic(g, captions_pred=caps, captions=human, n_iter=4, random_state=2, ci_over="iterations", progress=False)
    assert res.ci == biasamp.confidence_interval(res.iterations["lic"], bounds=(-1, 1))
    assert res.ci_m == biasamp.confidence_interval(res.iterations["lic_m"], bounds=(0, 1))
    both = lic(g, captions_pred=caps, captions=human, n_iter=4, random_state=2, progress=False)
    pd.testing.assert_frame_equal(res.intervals, both.intervals)  # the option picks the headline, nothing else
    iv = both.intervals.loc["lic"]
    # the combined interval is the widest: its variance is the sum of the other two's
    assert iv.both_high - iv.both_low >= max(iv.captions_high - iv.captions_low, 0.0) - 1e-12
    assert iv.se_iterations == pytest.approx(res.iterations["lic"].std(ddof=1) / 2)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.sampled_from(["a man riding", "a woman riding", "a person at home", "she smiles", "his dog",
                                 "a kitchen", "a street"]), min_size=16, max_size=40),
       st.integers(0, 2**32 - 1), st.sampled_from(["both", "captions", "iterations"]))
def test_caption_interval_properties(caps, seed, ci_over):
    """Identical captions: LIC = 0 and every interval of it is [0, 0]; every interval holds its estimate."""
    attr = np.arange(len(caps)) % 2
    rng = np.random.default_rng(seed)
    model = list(np.asarray(caps, dtype=object)[rng.permutation(len(caps))])
    same = lic(attr, captions_pred=caps, captions=caps, n_iter=2, n_boot=50, random_state=seed, ci_over=ci_over,
               progress=False)
    assert same.value == 0.0 and same.ci == (0.0, 0.0)
    assert (same.intervals.loc["lic", ["se_captions", "se_iterations"]] == 0).all()
    assert (same.intervals.loc["lic"].drop(["se_captions", "se_iterations"]) == 0).all()
    res = lic(attr, captions_pred=model, captions=caps, n_iter=2, n_boot=50, random_state=seed, ci_over=ci_over,
              progress=False)
    for q, row in res.intervals.iterrows():
        for kind in ("iterations", "captions", "both"):
            assert row[f"{kind}_low"] <= row["estimate"] <= row[f"{kind}_high"], (q, kind)
    assert -1 <= res.ci[0] <= res.value <= res.ci[1] <= 1
    d = dbac(attr, attr[::-1].copy(), captions=caps, captions_pred=caps, n_iter=2, n_boot=50, random_state=seed,
             ci_over=ci_over, task_words=["riding", "home"], progress=False)
    for di in (d.a_to_t, d.t_to_a):
        assert di.value == 0.0 and di.ci == (0.0, 0.0) and (di.intervals.drop(columns="estimate") == 0).all().all()


def test_dbac_intervals_with_priors_and_inv_ce_hold_their_estimate():
    g, human, model, words = _knife_data(300)
    for kw in (dict(priors=True), dict(quality="inv_ce"), dict(quality="accuracy")):
        res = dbac(g, caption_labels(human, words), captions=human, captions_pred=model,
                   task_pred=caption_labels(model, words), n_iter=3, n_boot=200, random_state=0, progress=False, **kw)
        for d in (res.a_to_t, res.t_to_a):
            for q, row in d.intervals.iterrows():
                assert row.both_low <= row.estimate <= row.both_high, (kw, d.direction, q)
                # accuracy: the human and model attackers are right on the same images for T->A (DBAC 0 exactly)
                assert row.se_captions > 0 or (d.iterations[q] == 0).all(), (kw, d.direction, q)
        assert res.a_to_t.ci[0] > 0  # the model that adds gendered objects: A->T amplified whatever the quality


def test_dbac_reuses_identical_fits_and_gives_the_0_2_values():
    """With a fixed split the built-in attacker is fitted once per side; the same attacker as an estimator (fitted
    again every iteration, what 0.2 did) gives the same numbers."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    g, human, model, words = _knife_data(200)
    split = np.arange(200) < 140
    kw = dict(captions=human, captions_pred=model, task_pred=caption_labels(model, words), split=split, n_iter=3,
              random_state=0, progress=False)
    fast = dbac(g, caption_labels(human, words), **kw)
    same = make_pipeline(TfidfVectorizer(sublinear_tf=True, token_pattern=r"\S+", lowercase=False,
                                         ngram_range=(1, 2)), LogisticRegression(C=1.0, max_iter=1000))
    slow = dbac(g, caption_labels(human, words), attacker=same, n_jobs=1, **kw)
    cols = ["psi_data", "psi_model", "dbac", "absolute", "n_train", "n_test"]
    pd.testing.assert_frame_equal(fast.to_frame()[cols], slow.to_frame()[cols])
    assert (fast.to_frame().groupby("direction")["dbac"].nunique() == 1).all()  # identical iterations


def test_dbac_does_not_depend_on_n_jobs():
    g, human, model, words = _knife_data(160)
    kw = dict(captions=human, captions_pred=model, n_iter=3, random_state=9, n_boot=100, progress=False)
    one = dbac(g, caption_labels(human, words), n_jobs=1, **kw)
    two = dbac(g, caption_labels(human, words), n_jobs=2, **kw)
    pd.testing.assert_frame_equal(one.to_frame(), two.to_frame())
    pd.testing.assert_frame_equal(one.t_to_a.intervals, two.t_to_a.intervals)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_boot=1), "n_boot"), (dict(n_boot=True), "n_boot"), (dict(ci_over="images"), "ci_over"),
])
def test_interval_options_raise_named_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lic(["m", "f"] * 5, captions_pred=["a"] * 10, progress=False, **kwargs)
    with pytest.raises(ValueError, match=match):
        dbac(["m", "f"] * 5, ["cup", "knife"] * 5, captions=["a"] * 10, captions_pred=["a"] * 10, progress=False,
             **kwargs)
    with pytest.raises(ValueError, match="n_jobs"):
        dbac(["m", "f"] * 5, ["cup", "knife"] * 5, captions=["a"] * 10, captions_pred=["a"] * 10, n_jobs=0)


def test_intervals_are_reproducible_and_seeded():
    g, human, model, _ = _knife_data(200)
    a = lic(g, captions_pred=model, captions=human, n_iter=2, random_state=11, progress=False)
    b = lic(g, captions_pred=model, captions=human, n_iter=2, random_state=11, progress=False)
    pd.testing.assert_frame_equal(a.intervals, b.intervals)
    c = lic(g, captions_pred=model, captions=human, n_iter=2, random_state=12, progress=False)
    assert a.intervals.at["lic_m", "se_captions"] != c.intervals.at["lic_m", "se_captions"]


# --------------------------------------------------------------------------- #
# audit() and `biasamp audit` with caption columns
# --------------------------------------------------------------------------- #
def _caption_table(n: int = 240) -> pd.DataFrame:
    g, human, model, words = _knife_data(n, seed=5)
    task, pred = caption_labels(human, words), caption_labels(model, words)  # the objects each caption mentions
    return pd.DataFrame({"gender": np.where(g == 0, "female", "male"), "task_cup": task["cup"].to_numpy(),
                         "task_knife": task["knife"].to_numpy(), "task_cup_pred": pred["cup"].to_numpy(),
                         "task_knife_pred": pred["knife"].to_numpy(), "caption_pred": model, "caption": human,
                         "split": np.where(np.arange(n) < 170, "train", "val")})


def test_audit_with_captions_has_a_captioning_section():
    from biasamp import audit
    from biasamp.report import Report

    t = _caption_table()
    task = t[["task_cup", "task_knife"]].rename(columns=lambda c: c[5:])
    caps = t[["caption_pred", "caption", "split"]]
    rep = audit(t["gender"], task, captions=caps, n_boot=100, n_iter=2, progress=False)
    sec = rep.section("captioning")
    assert sec.status == "ok", sec.message
    rows = sec.summary.set_index(["metric", "direction"])
    own = lic(t["gender"], captions_pred=t["caption_pred"], captions=t["caption"], split=t["split"], n_iter=2,
              n_boot=100, random_state=0, progress=False)
    assert rows.loc[("LIC_M", "A"), "value"] == pytest.approx(own.lic_m)  # the audit's LIC is lic()'s
    stats = caption_gender_stats(t["gender"], captions_pred=t["caption_pred"], level=None)
    assert rows.loc[("gender error", ""), "value"] == stats.error
    assert rows.loc[("gender ratio", ""), "value"] == stats.ratio
    assert {("DBAC", "A->T"), ("DBAC", "T->A"), ("LIC", "A"), ("LIC_D", "A")} <= set(rows.index)
    assert rows.loc[("LIC", "A"), "ci_method"] == "caption bootstrap (100) + t over 2 iterations"
    assert "lic_intervals" in sec.tables and sec.figures[0].kind == "hbar"
    assert any("masked: the gender words" in n for n in sec.notes)
    # JSON round trip and HTML
    again = Report.from_json(rep.to_json())
    pd.testing.assert_frame_equal(again.section("captioning").summary, sec.summary)
    html = rep.to_html()
    assert "Bias amplification in captions" in html and "LIC_M" in html and "DBAC" in html
    jsonschema = pytest.importorskip("jsonschema")
    import json

    from biasamp.report import REPORT_JSON_SCHEMA

    jsonschema.validate(json.loads(rep.to_json()), REPORT_JSON_SCHEMA)
    # the model's objects as task_pred: A->T sees the objects the model ties to the gender
    pred = caption_labels(t["caption_pred"], {"cup": ["cup"], "knife": ["knife"]})
    rep2 = audit(t["gender"], task, task_pred=pred, captions=caps, n_boot=100, n_iter=2, progress=False,
                 sections=["captioning"])
    a_to_t = rep2.section("captioning").summary.set_index(["metric", "direction"]).loc[("DBAC", "A->T")]
    assert a_to_t["value"] > 0.2 and a_to_t["reading"] == "amplified"


def test_audit_without_captions_is_unchanged():
    from biasamp import audit

    t = _caption_table(120)
    task = t[["task_cup", "task_knife"]]
    rep = audit(t["gender"], task, n_boot=50, n_iter=2, progress=False)
    assert "captioning" not in [s.key for s in rep.sections]  # left out, not listed as skipped
    assert "caption" not in rep.to_json().lower()
    # other attributes' audits get their own captioning section (race words masked for a non-gender attribute)
    skin = np.where(np.arange(120) % 3 == 0, "Dark", "Light")
    multi = audit({"gender": t["gender"], "skin": skin}, task, captions=t[["caption_pred"]], n_boot=50, n_iter=2,
                  progress=False, sections=["captioning"])
    assert [s.key for s in multi.sections] == ["captioning[gender]", "captioning[skin]"]
    assert any("race words" in n for n in multi.section("captioning[skin]").notes)
    assert "gender error" not in multi.section("captioning[skin]").summary["metric"].tolist()


@pytest.mark.parametrize("captions, error, match", [
    (["a man"] * 120, TypeError, "captions must be a DataFrame"),
    (pd.DataFrame({"caption": ["a man"] * 120}), ValueError, "no 'caption_pred' column"),
    (pd.DataFrame({"caption_pred": ["a man"] * 100}), ValueError, "captions has 100 rows but attr has 120"),
])
def test_audit_bad_captions_raise_named_errors(captions, error, match):
    from biasamp import audit

    t = _caption_table(120)
    with pytest.raises(error, match=match):
        audit(t["gender"], t["task_cup"], captions=captions, progress=False)


def test_audit_captions_need_every_test_row():
    from biasamp import audit

    t = _caption_table(120)
    weight = np.ones(120)
    weight[:3] = 0
    with pytest.raises(ValueError, match="captions: .*needs every test row"):
        audit(t["gender"], t["task_cup"], captions=t[["caption_pred"]], sample_weight=weight, progress=False)


def test_cli_audit_with_caption_columns(tmp_path):
    import json

    from click.testing import CliRunner

    from biasamp.cli import main

    t = _caption_table()
    path = tmp_path / "captions.csv"
    t.to_csv(path, index=False)
    out, page = tmp_path / "report.json", tmp_path / "report.html"
    res = CliRunner().invoke(main, ["audit", str(path), "--attr", "gender", "--n-boot", "50", "--n-iter", "2",
                                    "--json", str(out), "--html", str(page), "-q"])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    sec = next(s for s in report["sections"] if s["key"] == "captioning")
    assert sec["status"] == "ok"
    cols = sec["summary"]["columns"]
    rows = {(r[cols.index("metric")], r[cols.index("direction")]): dict(zip(cols, r)) for r in sec["summary"]["rows"]}
    assert {("LIC", "A"), ("LIC_M", "A"), ("DBAC", "A->T"), ("gender error", "")} <= set(rows)
    # the task_*_pred columns (the objects the model's captions mention) are DBAC's model side
    assert rows[("DBAC", "A->T")]["value"] > 0.2
    assert any(s["key"] == "directional" and s["status"] == "ok" for s in report["sections"])
    assert "Bias amplification in captions" in page.read_text()
    # named columns; a missing one is a usage error naming it
    renamed = t.rename(columns={"caption_pred": "model_caption", "caption": "human"})
    renamed.to_csv(path, index=False)
    res = CliRunner().invoke(main, ["audit", str(path), "--attr", "gender", "--captions-pred", "model_caption",
                                    "--captions", "human", "--n-boot", "50", "--n-iter", "2", "--json", str(out),
                                    "-q"])
    assert res.exit_code == 0, res.output
    assert any(s["key"] == "captioning" and s["status"] == "ok" for s in json.loads(out.read_text())["sections"])
    res = CliRunner().invoke(main, ["audit", str(path), "--attr", "gender", "--captions-pred", "nope", "-q"])
    assert res.exit_code == 2 and "caption column 'nope' not found" in res.output
    # without caption columns: no captioning section
    t.drop(columns=["caption_pred", "caption"]).to_csv(path, index=False)
    res = CliRunner().invoke(main, ["audit", str(path), "--attr", "gender", "--n-boot", "50", "--n-iter", "2",
                                    "--json", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert all(s["key"] != "captioning" for s in json.loads(out.read_text())["sections"])
