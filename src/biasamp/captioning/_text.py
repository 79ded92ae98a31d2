"""Caption text: input checks, tokenisation, word lists, masking, vocabulary alignment, corpus word vectors.

Tokenisation: lower-case, then every maximal run of letters and digits is a
token (``re`` ``[^\\W_]+``); punctuation, underscores and apostrophes split
tokens (``"woman's"`` -> ``woman``, ``s``; ``"t-shirt"`` -> ``t``, ``shirt``).
A masked caption is its tokens joined by single spaces, with every masked
word replaced by :data:`MASK_TOKEN` and every unknown word (vocabulary
alignment) by :data:`UNK_TOKEN`; neither can collide with a real token,
which never contains ``<``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

MASK_TOKEN = "<mask>"
UNK_TOKEN = "<unk>"

_TOKEN = re.compile(r"[^\W_]+")

#: Gender words (masked for ``mask="gender"``; the classes of :func:`caption_gender_stats`).
#: The lists of Hirota et al. 2022 (LIC) and Burns et al. 2018, with plurals and a few more.
GENDER_WORDS: dict[str, tuple[str, ...]] = {
    "male": (
        "man", "men", "male", "males", "boy", "boys", "gentleman", "gentlemen", "guy", "guys", "dude", "dudes",
        "father", "fathers", "dad", "dads", "husband", "husbands", "son", "sons", "brother", "brothers",
        "uncle", "uncles", "nephew", "grandfather", "grandpa", "king", "kings", "prince", "princes", "emperor",
        "emperors", "actor", "actors", "waiter", "waiters", "he", "him", "his", "himself", "mr", "sir",
        "cowboy", "cowboys", "businessman", "businessmen", "policeman", "policemen", "fireman", "firemen",
        "sportsman", "groom", "bachelor", "boyfriend", "lad",
    ),
    "female": (
        "woman", "women", "female", "females", "girl", "girls", "lady", "ladies", "mother", "mothers", "mom",
        "moms", "wife", "wives", "daughter", "daughters", "sister", "sisters", "aunt", "aunts", "niece",
        "grandmother", "grandma", "queen", "queens", "princess", "princesses", "empress", "actress",
        "actresses", "waitress", "waitresses", "she", "her", "hers", "herself", "mrs", "ms", "madam",
        "cowgirl", "cowgirls", "businesswoman", "businesswomen", "policewoman", "policewomen", "bride",
        "girlfriend", "pregnant",
    ),
}

#: Race words (masked for ``mask="race"``): the words of Hirota et al. 2022. ``white`` and ``black``
#: are colour words too; they are masked everywhere, as in the paper.
RACE_WORDS: tuple[str, ...] = (
    "white", "caucasian", "black", "african", "asian", "latino", "latina", "latinx", "hispanic", "native",
    "indigenous", "indian",
)

#: The 80 COCO object categories, each with its plural and common synonyms (the task words of
#: :func:`caption_labels`, and the default words masked for DBAC's A->T direction).
COCO_OBJECT_WORDS: dict[str, tuple[str, ...]] = {
    "person": ("person", "people", "persons", "child", "children", "kid", "kids", "player", "players"),
    "bicycle": ("bicycle", "bicycles", "bike", "bikes", "cycle"),
    "car": ("car", "cars", "automobile", "taxi", "taxis", "suv"),
    "motorcycle": ("motorcycle", "motorcycles", "motorbike", "motorbikes", "scooter", "scooters"),
    "airplane": ("airplane", "airplanes", "plane", "planes", "jet", "jets", "aircraft", "airliner"),
    "bus": ("bus", "buses", "busses"),
    "train": ("train", "trains", "locomotive", "locomotives"),
    "truck": ("truck", "trucks", "pickup"),
    "boat": ("boat", "boats", "ship", "ships", "kayak", "canoe", "sailboat", "yacht"),
    "traffic light": ("stoplight", "stoplights", "traffic"),
    "fire hydrant": ("hydrant", "hydrants"),
    "stop sign": ("stop",),
    "parking meter": ("meter", "meters"),
    "bench": ("bench", "benches"),
    "bird": ("bird", "birds", "pigeon", "pigeons", "seagull", "seagulls", "duck", "ducks", "parrot"),
    "cat": ("cat", "cats", "kitten", "kittens", "kitty"),
    "dog": ("dog", "dogs", "puppy", "puppies", "pup"),
    "horse": ("horse", "horses", "pony", "ponies", "foal"),
    "sheep": ("sheep", "lamb", "lambs", "ram"),
    "cow": ("cow", "cows", "cattle", "bull", "bulls", "calf", "oxen"),
    "elephant": ("elephant", "elephants"),
    "bear": ("bear", "bears"),
    "zebra": ("zebra", "zebras"),
    "giraffe": ("giraffe", "giraffes"),
    "backpack": ("backpack", "backpacks", "rucksack"),
    "umbrella": ("umbrella", "umbrellas", "parasol"),
    "handbag": ("handbag", "handbags", "purse", "purses", "bag", "bags"),
    "tie": ("tie", "ties", "necktie"),
    "suitcase": ("suitcase", "suitcases", "luggage", "luggages"),
    "frisbee": ("frisbee", "frisbees"),
    "skis": ("ski", "skis", "skier", "skiers", "skiing"),
    "snowboard": ("snowboard", "snowboards", "snowboarder", "snowboarding"),
    "sports ball": ("ball", "balls", "baseball", "football", "soccer", "basketball", "volleyball"),
    "kite": ("kite", "kites"),
    "baseball bat": ("bat", "bats"),
    "baseball glove": ("glove", "gloves", "mitt"),
    "skateboard": ("skateboard", "skateboards", "skateboarder", "skateboarding"),
    "surfboard": ("surfboard", "surfboards", "surfer", "surfers", "surfing"),
    "tennis racket": ("racket", "rackets", "racquet", "racquets"),
    "bottle": ("bottle", "bottles"),
    "wine glass": ("wine", "glass", "glasses"),
    "cup": ("cup", "cups", "mug", "mugs"),
    "fork": ("fork", "forks"),
    "knife": ("knife", "knives"),
    "spoon": ("spoon", "spoons"),
    "bowl": ("bowl", "bowls"),
    "banana": ("banana", "bananas"),
    "apple": ("apple", "apples"),
    "sandwich": ("sandwich", "sandwiches", "burger", "burgers", "sub"),
    "orange": ("orange", "oranges"),
    "broccoli": ("broccoli",),
    "carrot": ("carrot", "carrots"),
    "hot dog": ("hotdog", "hotdogs"),
    "pizza": ("pizza", "pizzas"),
    "donut": ("donut", "donuts", "doughnut", "doughnuts"),
    "cake": ("cake", "cakes", "cupcake", "cupcakes"),
    "chair": ("chair", "chairs", "stool", "stools"),
    "couch": ("couch", "couches", "sofa", "sofas"),
    "potted plant": ("plant", "plants", "houseplant"),
    "bed": ("bed", "beds"),
    "dining table": ("table", "tables", "desk", "desks"),
    "toilet": ("toilet", "toilets"),
    "tv": ("tv", "tvs", "television", "televisions"),
    "laptop": ("laptop", "laptops", "computer", "computers", "notebook"),
    "mouse": ("mouse", "mice"),
    "remote": ("remote", "remotes", "controller", "controllers"),
    "keyboard": ("keyboard", "keyboards"),
    "cell phone": ("phone", "phones", "cellphone", "cellphones", "smartphone", "smartphones"),
    "microwave": ("microwave", "microwaves"),
    "oven": ("oven", "ovens", "stove", "stoves"),
    "toaster": ("toaster", "toasters"),
    "sink": ("sink", "sinks"),
    "refrigerator": ("refrigerator", "refrigerators", "fridge", "fridges"),
    "book": ("book", "books"),
    "clock": ("clock", "clocks"),
    "vase": ("vase", "vases"),
    "scissors": ("scissors",),
    "teddy bear": ("teddy", "teddybear"),
    "hair drier": ("hairdryer", "hairdryers", "dryer", "drier"),
    "toothbrush": ("toothbrush", "toothbrushes"),
}

_NAMED_WORDS = {"gender": GENDER_WORDS, "race": RACE_WORDS, "coco": COCO_OBJECT_WORDS}


# --------------------------------------------------------------------------- #
# input checks
# --------------------------------------------------------------------------- #
def check_captions(x: Any, name: str, *, allow_2d: bool = False) -> np.ndarray:
    """Captions as an object array of ``str``: shape ``(n,)``, or ``(n, k)`` (several per image) with ``allow_2d``.

    Accepts a list/tuple, numpy array, pandas Series/Index (1-D) or DataFrame /
    list of lists (2-D). A missing caption (``None``/NaN) raises ``ValueError``,
    a non-string ``TypeError``, both naming ``name`` and the row.
    """
    if x is None:
        raise TypeError(f"{name} is None; expected captions (a list or array of strings, one per image)")
    if isinstance(x, str):
        raise TypeError(f"{name} is one string; expected a sequence of captions (one per image)")
    if isinstance(x, (pd.DataFrame, pd.Series, pd.Index)):
        arr = x.to_numpy(dtype=object)
    else:
        try:
            arr = np.asarray(x, dtype=object)
        except (ValueError, TypeError):
            raise ValueError(f"{name}: ragged input; give one caption per image, "
                             "or k captions for every image") from None
    if arr.ndim == 0:
        raise TypeError(f"{name} must be a sequence of captions, got {type(x).__name__}")
    if arr.ndim > 2 or (arr.ndim == 2 and not allow_2d):
        allowed = "1-D or 2-D (one caption per image, or k per image)" if allow_2d else "1-D (one caption per image)"
        raise ValueError(f"{name} must be {allowed}, got shape {arr.shape}")
    shape: tuple[int, ...] = arr.shape
    if len(shape) == 2 and shape[1] == 0:
        raise ValueError(f"{name} has no caption column")
    if arr.size:
        flat = arr.reshape(-1)
        is_str = np.fromiter((isinstance(v, str) for v in flat), dtype=bool, count=flat.size)
        if not is_str.all():
            bad = int(np.flatnonzero(~is_str)[0])
            value = flat[bad]
            row = bad // (shape[1] if len(shape) == 2 else 1)
            if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
                raise ValueError(f"{name}: caption of row {row} is missing ({value!r}); every image needs a caption")
            raise TypeError(f"{name}: captions must be strings, row {row} holds {type(value).__name__} {value!r}")
        return np.array([str(v) for v in flat], dtype=object).reshape(shape)  # np.str_ -> str
    return arr


def resolve_words(words: Any, name: str) -> dict[str, tuple[str, ...]]:
    """``{class: words}`` from ``"gender"``, ``"race"``, ``"coco"``, a mapping class -> words, or an iterable of words.

    An iterable of words is one class named ``"words"``. Words are
    lower-cased and must be single tokens.
    """
    if isinstance(words, str):
        if words not in _NAMED_WORDS:
            raise ValueError(f"{name} must be 'gender', 'race', 'coco', a mapping class -> words or a list of "
                             f"words, got {words!r}")
        words = _NAMED_WORDS[words]
    if isinstance(words, Mapping):
        items = list(words.items())
    else:
        try:
            items = [("words", list(words))]
        except TypeError:
            raise TypeError(f"{name} must be 'gender', 'race', a mapping class -> words or a list of words, "
                            f"got {type(words).__name__}") from None
    out: dict[str, tuple[str, ...]] = {}
    for cls, ws in items:
        if isinstance(ws, str):
            ws = [ws]
        clean = []
        for w in ws:
            if not isinstance(w, str):
                raise TypeError(f"{name}: words must be strings, got {type(w).__name__} {w!r}")
            toks = _TOKEN.findall(w.lower())
            if len(toks) != 1:
                raise ValueError(f"{name}: {w!r} is not one word (tokenised: {toks}); give single words")
            clean.append(toks[0])
        out[cls] = tuple(dict.fromkeys(clean))
    if not any(out.values()):
        raise ValueError(f"{name} holds no word")
    return out


def word_set(words: dict[str, tuple[str, ...]]) -> frozenset:
    return frozenset(w for ws in words.values() for w in ws)


# --------------------------------------------------------------------------- #
# tokenisation and masking
# --------------------------------------------------------------------------- #
def tokenize(caption: str) -> list[str]:
    """Lower-cased runs of letters and digits (punctuation and apostrophes split tokens)."""
    return _TOKEN.findall(caption.lower())


def distinct(texts: Any) -> tuple[list[str], np.ndarray]:
    """``(uniq, inverse)``: the distinct texts, sorted, and the index of each text among them (flattened).

    Hashed as Python strings (an object array): a fixed-width numpy string
    array would give every text the width of the longest one (one caption
    of 20,000 characters among 50,000 made 3.7 GiB).
    """
    codes, uniq = pd.factorize(pd.Series(np.asarray(texts, dtype=object).reshape(-1), dtype=object), sort=True)
    return [str(u) for u in uniq], codes.astype(np.intp)


def tokenize_all(captions: np.ndarray) -> list[list[str]]:
    """Tokens of every caption (each distinct caption tokenised once)."""
    uniq, inv = distinct(captions)
    toks = [tokenize(c) for c in uniq]
    return [toks[i] for i in inv]


def require_words(tokens: list[list[str]], name: str) -> None:
    """``ValueError`` naming ``name`` when no caption of it holds a word (every one empty or punctuation only).

    An attacker reading such captions has nothing to learn (scikit-learn's
    vectorisers stop with "empty vocabulary"); a few empty captions among
    others are read as captions without words.
    """
    if tokens and not any(tokens):
        rows = ", ".join(str(i) for i in range(min(len(tokens), 5)))
        raise ValueError(f"{name}: no caption holds a word (letters or digits): all {len(tokens)} are empty or "
                         f"punctuation only (rows {rows}{', ...' if len(tokens) > 5 else ''}); an attacker needs "
                         "words to read")


def mask_tokens(tokens: list[list[str]], masked: frozenset, token: str = MASK_TOKEN) -> list[list[str]]:
    """Every token in ``masked`` replaced by ``token``."""
    if not masked:
        return [list(t) for t in tokens]
    return [[token if w in masked else w for w in t] for t in tokens]


def join(tokens: list[list[str]]) -> list[str]:
    return [" ".join(t) for t in tokens]


def vocabulary(tokens: Iterable[list[str]]) -> set:
    out: set = set()
    for t in tokens:
        out.update(t)
    return out


def found(tokens: list[list[str]], words: dict[str, tuple[str, ...]]) -> np.ndarray:
    """``(n, K)`` 0/1 matrix: caption i uses a word of class k."""
    classes = list(words)
    lookup: dict[str, list[int]] = {}
    for k, cls in enumerate(classes):
        for w in words[cls]:
            lookup.setdefault(w, []).append(k)
    out = np.zeros((len(tokens), len(classes)), dtype=np.int64)
    rows, cols = [], []
    for i, t in enumerate(tokens):
        for w in set(t):
            for k in lookup.get(w, ()):
                rows.append(i)
                cols.append(k)
    if rows:
        out[np.array(rows), np.array(cols)] = 1
    return out


# --------------------------------------------------------------------------- #
# vocabulary alignment
# --------------------------------------------------------------------------- #
_SPECIAL = frozenset({MASK_TOKEN, UNK_TOKEN})


def align_unknown(tokens: list[list[str]], vocab: set) -> tuple[list[list[str]], int]:
    """Words outside ``vocab`` become :data:`UNK_TOKEN`; returns the tokens and the number replaced."""
    out, n = [], 0
    for t in tokens:
        new = [w if (w in vocab or w in _SPECIAL) else UNK_TOKEN for w in t]
        n += sum(a != b for a, b in zip(new, t))
        out.append(new)
    return out, n


#: The most tokens of a caption that count as co-occurring (:func:`corpus_vectors`; captions are a dozen words).
PASSAGE = 64
#: Cells of the similarity matrix computed at once (:func:`substitute`: missing words x target words; 64 MiB).
_SIM_BLOCK = 1 << 23


def corpus_vectors(corpora: list[list[list[str]]], dim: int = 64, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Word vectors learnt from the captions themselves (no download): PPMI of caption co-occurrence, then SVD.

    Two words co-occur when one passage holds both: a caption of at most
    :data:`PASSAGE` tokens is one passage, a longer one is cut into
    consecutive passages of :data:`PASSAGE` tokens, so that the pairs
    counted grow with the number of tokens, not with its square (one
    caption of 3,000 distinct words had taken 1.3 GB). The positive pointwise
    mutual information matrix of those counts is reduced to ``dim``
    dimensions by a seeded truncated SVD; rows are L2-normalised. Returns
    ``(words, vectors)``.
    """
    from scipy import sparse
    from sklearn.decomposition import TruncatedSVD

    words = sorted(vocabulary(t for corpus in corpora for t in corpus) - _SPECIAL)
    index = {w: i for i, w in enumerate(words)}
    rows, cols = [], []
    d = 0
    for corpus in corpora:
        for t in corpus:
            for lo in range(0, max(len(t), 1), PASSAGE):
                ids = sorted({index[w] for w in t[lo:lo + PASSAGE] if w in index})
                rows.extend([d] * len(ids))
                cols.extend(ids)
                d += 1
    v = len(words)
    if v < 3:
        return words, np.eye(v)
    x = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(d, v))
    co = (x.T @ x).tocoo()
    keep = co.row != co.col
    r, c, n = co.row[keep], co.col[keep], co.data[keep]
    total = n.sum()
    if total == 0:
        return words, np.eye(v)
    marg = np.bincount(r, weights=n, minlength=v)
    pmi = np.log(n * total / (marg[r] * marg[c]))
    pos = pmi > 0
    ppmi = sparse.csr_matrix((pmi[pos], (r[pos], c[pos])), shape=(v, v))
    k = int(min(dim, v - 1))
    vec = TruncatedSVD(n_components=k, algorithm="randomized", random_state=seed).fit_transform(ppmi)
    norm = np.linalg.norm(vec, axis=1, keepdims=True)
    return words, vec / np.where(norm > 0, norm, 1.0)


def _lookup_vectors(word_vectors: Any, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(vectors, known)`` of ``words`` from a mapping word -> vector or a callable list -> (n, d) array."""
    if callable(word_vectors):
        vec = np.asarray(word_vectors(list(words)), dtype=np.float64)
        if vec.ndim != 2 or len(vec) != len(words):
            raise ValueError(f"word_vectors returned shape {vec.shape}; expected ({len(words)}, d), one row per word")
        known = np.isfinite(vec).all(axis=1) & (np.abs(vec).sum(axis=1) > 0)
        return np.where(known[:, None], vec, 0.0), known
    known = np.array([w in word_vectors for w in words], dtype=bool)
    dims = {len(np.ravel(word_vectors[w])) for w in words if w in word_vectors}
    if len(dims) > 1:
        raise ValueError(f"word_vectors: vectors of different lengths {sorted(dims)}")
    d = dims.pop() if dims else 1
    vec = np.zeros((len(words), d))
    for i, w in enumerate(words):
        if known[i]:
            vec[i] = np.ravel(np.asarray(word_vectors[w], dtype=np.float64))
    return vec, known


def substitute(tokens: list[list[str]], target_vocab: set, *, contextual: bool, threshold: float,
               word_vectors: Any = None, corpora: list | None = None, seed: int = 0) -> tuple[list[list[str]], int]:
    """Words outside ``target_vocab``: nearest word of ``target_vocab`` when similar enough, else unknown.

    ``contextual=False``: every such word becomes :data:`UNK_TOKEN`.
    ``contextual=True`` (the DBAC authors' substitution): the word becomes
    the word of ``target_vocab`` of highest cosine similarity when it is at
    least ``threshold``, else :data:`UNK_TOKEN`. Vectors come from
    ``word_vectors`` (a mapping or a callable) or, when ``None``, from
    :func:`corpus_vectors` over ``corpora`` (default: ``tokens`` alone).
    Returns the tokens and the number of words replaced.
    """
    missing = sorted(vocabulary(tokens) - target_vocab - _SPECIAL)
    if not missing:
        return [list(t) for t in tokens], 0
    repl = dict.fromkeys(missing, UNK_TOKEN)
    targets = sorted(target_vocab - _SPECIAL)
    if contextual and targets:
        if word_vectors is None:
            words, vec = corpus_vectors(corpora if corpora is not None else [tokens], seed=seed)
            pos = {w: i for i, w in enumerate(words)}
            lookup = {w: vec[pos[w]] for w in words}
            mv, mk = _lookup_vectors(lookup, missing)
            tv, tk = _lookup_vectors(lookup, targets)
        else:
            mv, mk = _lookup_vectors(word_vectors, missing)
            tv, tk = _lookup_vectors(word_vectors, targets)
        if mv.shape[1] != tv.shape[1]:
            raise ValueError("word_vectors: vectors of different lengths")
        mn = mv / np.maximum(np.linalg.norm(mv, axis=1, keepdims=True), 1e-300)
        tn = tv / np.maximum(np.linalg.norm(tv, axis=1, keepdims=True), 1e-300)
        best = np.empty(len(missing), dtype=np.intp)
        best_sim = np.empty(len(missing))
        step = max(1, _SIM_BLOCK // max(len(targets), 1))  # blocks of missing words: bounded memory
        for lo in range(0, len(missing), step):
            sim = mn[lo:lo + step] @ tn.T
            sim[:, ~tk] = -np.inf
            best[lo:lo + step] = sim.argmax(axis=1)  # first of equal maxima: the alphabetically first word
            best_sim[lo:lo + step] = sim[np.arange(len(sim)), best[lo:lo + step]]
        for i, w in enumerate(missing):
            if mk[i] and tk.any() and best_sim[i] >= threshold:
                repl[w] = targets[best[i]]
    out, n = [], 0
    for t in tokens:
        new = [repl.get(w, w) for w in t]
        n += sum(a != b for a, b in zip(new, t))
        out.append(new)
    return out, n
