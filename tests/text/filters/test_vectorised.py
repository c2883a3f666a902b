"""The vectorised ``score_batch`` of every word- and n-gram-based filter gives exactly the scores
of its per-document reference ``score_document`` on a generated corpus of real English (the
standard library's docstrings) with repetitions, odd whitespace, Unicode, URLs and edge cases."""

from __future__ import annotations

import ast
import inspect
import json
import random

import numpy as np
import pyarrow as pa
import pytest
from curator_text import (
    BoilerPlateStringFilter,
    LongWordFilter,
    MeanWordLengthFilter,
    RepeatingDuplicateNGramsFilter,
    RepeatingTopNGramsFilter,
    SymbolsToWordsFilter,
    WordCountFilter,
    WordsWithoutAlphabetsFilter,
)

_SPACES = [" ", " ", " ", "  ", "\n", "\n\n", "\t", "\xa0", "\u3000", " \n ", "\x0b", "\x1f"]


def _english() -> list[str]:
    words: list[str] = []
    for mod in (json, random, inspect, ast):
        for node in ast.walk(ast.parse(inspect.getsource(mod))):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                words += (ast.get_docstring(node) or "").split()
    return words


def _corpus(n: int = 700, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    words = _english()
    extra = ["naïve", "δέλτα", "日本語", "...", "…", "###", "#a#", "https://ex.com/a?b=1",
             "lorem ipsum", "privacy policy", "the", "of", "-»", "x" * 40, "42", "(a)"]
    docs = ["", " ", "a", "a a", "a b a b a b", " lead and trail ", "the the the the",
            "\n\nword\n\n", "a\u3000b a\u3000b", "x " * 30]
    while len(docs) < n:
        start = rng.randrange(len(words) - 400)
        toks = words[start:start + rng.choice([1, 2, 3, 8, 40, 150, 400])]
        if rng.random() < 0.4:  # repeated phrases
            phrase = toks[:rng.randint(1, 6)]
            toks = toks + phrase * rng.randint(2, 15) + toks[:5]
        if rng.random() < 0.3:
            toks = [rng.choice(extra) if rng.random() < 0.1 else t for t in toks]
        text = "".join(t + rng.choice(_SPACES) for t in toks)
        docs.append(text if rng.random() < 0.8 else " " + text.strip())
    return docs


FILTERS = [WordCountFilter(), SymbolsToWordsFilter(), LongWordFilter(max_word_length=12),
           MeanWordLengthFilter(), WordsWithoutAlphabetsFilter(),
           BoilerPlateStringFilter(),
           *[RepeatingTopNGramsFilter(n=k) for k in (1, 2, 3, 4)],
           *[RepeatingDuplicateNGramsFilter(n=k) for k in (1, 2, 3, 5)]]


@pytest.fixture(scope="module")
def corpus() -> pa.Array:
    return pa.array(_corpus())


@pytest.mark.parametrize("flt", FILTERS, ids=lambda f: f"{type(f).__name__}-{getattr(f, '_n', '')}")
def test_batch_scores_equal_per_document_scores(flt, corpus) -> None:
    texts = corpus.to_pylist()
    ref = np.array([float(flt.score_document(t)) for t in texts])
    flt.chunk_docs = 97  # chunk boundaries inside the corpus
    got = np.asarray(flt.score_batch(corpus), dtype=np.float64)
    bad = np.flatnonzero(ref != got)
    assert not len(bad), [(texts[i][:60], ref[i], got[i]) for i in bad[:5]]
    assert len(set(ref.tolist())) > 5  # the corpus exercises the filter


def test_duplicate_ngrams_batch_is_vectorised() -> None:
    flt = RepeatingDuplicateNGramsFilter(n=2)
    assert flt.vectorized
    assert not RepeatingDuplicateNGramsFilter(lang="zh").vectorized
    scores = flt.score_batch(pa.array(["a b a b", "a b c", "", "a"]))
    assert list(scores) == [3 / 7, 0.0, 1.0, 1.0]  # the 2nd 'a b': 1 + 1 chars + 1 space
