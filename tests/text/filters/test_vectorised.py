"""The vectorised ``score_batch`` of every word-, n-gram-, line- and paragraph-based filter gives
exactly the scores of its per-document reference (``score_document``, or NeMo Curator's formula
written out here for the filters whose ``score_document`` is the batch path) on a generated corpus
of real English (the standard library's docstrings) with repetitions, lines and paragraphs, every
whitespace character ``str.split`` knows, ``\r\n``, Unicode, URLs and edge cases."""

from __future__ import annotations

import ast
import inspect
import json
import os
import random
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from curator_text import (
    BoilerPlateStringFilter,
    LongWordFilter,
    MeanWordLengthFilter,
    NonAlphaNumericFilter,
    RepeatedLinesByCharFilter,
    RepeatedLinesFilter,
    RepeatedParagraphsByCharFilter,
    RepeatedParagraphsFilter,
    RepeatingDuplicateNGramsFilter,
    RepeatingTopNGramsFilter,
    SymbolsToWordsFilter,
    UrlsFilter,
    WhiteSpaceFilter,
    WordCountFilter,
    WordsWithoutAlphabetsFilter,
)
from curator_text.filters import _ngrams
from curator_text.filters import _vec as v

# every character str.split() splits on
_UNICODE_SPACES = [chr(c) for c in (0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                                    0x202F, 0x205F, 0x3000)]
_SPACES = [" ", " ", " ", "  ", "\n", "\n\n", "\t", "\xa0", "\u3000", " \n ", "\x0b", "\x1f",
           "\r\n", "\r\n\r\n", "\n\n\n", "\n \n", "\x1c", "\x0c", "\r", *_UNICODE_SPACES]


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
            "\n\nword\n\n", "a\u3000b a\u3000b", "x " * 30, "\n", "\n\n", "\n\n\n", "\r\n",
            " \t\r\n\xa0\u3000", "".join(_UNICODE_SPACES), "a\u2009b\u2009a\u2009b",
            "a a a a a", "aa aa aa aa", "x\n\n\ny\n\n\ny", "l1\nl2\nl1\n\nl1\r\nl2\r\n",
            "proof these of the of the", "é é é", "\u00e9t\u00e9 \u00e9t\u00e9\u00a0\u00e9t\u00e9",
            "lorem ipsum", "a\n\nprivacy policy\n\nb\n\nTerms of Use",
            # str.lower: the Kelvin sign is k, dotted I is not i, the long s is not s
            "coo\u212aie policy\n\nx", "pr\u0130vacy policy\n\nx", "this site u\u017fes cookies",
            "x\n\n\nLOREM IPSUM\n\nPrivacy Policy"]
    while len(docs) < n:
        start = rng.randrange(len(words) - 400)
        toks = words[start:start + rng.choice([1, 2, 3, 8, 40, 150, 400])]
        if rng.random() < 0.4:  # repeated phrases
            phrase = toks[:rng.randint(1, 6)]
            toks = toks + phrase * rng.randint(2, 15) + toks[:5]
        if rng.random() < 0.3:
            toks = [rng.choice(extra) if rng.random() < 0.1 else t for t in toks]
        if rng.random() < 0.2:  # repeated lines and paragraphs
            toks = toks + [rng.choice(["\n", "\n\n", "\r\n"]) + rng.choice(toks)
                           for _ in range(rng.randint(1, 20))]
        text = "".join(t + rng.choice(_SPACES) for t in toks)
        docs.append(text if rng.random() < 0.8 else " " + text.strip())
    return docs


FILTERS = [WordCountFilter(), SymbolsToWordsFilter(), LongWordFilter(max_word_length=12),
           MeanWordLengthFilter(), WordsWithoutAlphabetsFilter(),
           BoilerPlateStringFilter(),
           *[RepeatingTopNGramsFilter(n=k) for k in (1, 2, 3, 4)],
           *[RepeatingDuplicateNGramsFilter(n=k) for k in (1, 2, 3, 5)],
           RepeatedLinesFilter(), RepeatedParagraphsFilter(), RepeatedLinesByCharFilter(),
           RepeatedParagraphsByCharFilter()]


def _ratio_of(chars: str, keep: bool):
    """NeMo Curator's character-ratio formula: the share of characters in (``keep``) or not in
    ``chars``; empty texts score 1."""
    def score(text: str) -> float:
        hits = sum((c in chars) == keep for c in text)
        return hits / len(text) if text else 1.0
    return score


# filters whose score_document is the batch path: their reference written out
REFERENCE = {
    "NonAlphaNumericFilter": (NonAlphaNumericFilter(), _ratio_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n?!,.", False)),
    "WhiteSpaceFilter": (WhiteSpaceFilter(), _ratio_of("\t\n\r\b ", True)),
}


@pytest.fixture(scope="module")
def corpus() -> pa.Array:
    return pa.array(_corpus())


@pytest.mark.parametrize("flt", FILTERS, ids=lambda f: f"{type(f).__name__}-{getattr(f, '_n', '')}")
def test_batch_scores_equal_per_document_scores(flt, corpus) -> None:
    texts = corpus.to_pylist()
    ref = np.array([float(flt.score_document(t)) for t in texts])
    got = np.asarray(flt.score_batch(corpus), dtype=np.float64)
    bad = np.flatnonzero(ref != got)
    assert not len(bad), [(texts[i][:60], ref[i], got[i]) for i in bad[:5]]
    assert len(set(ref.tolist())) > 5  # the corpus exercises the filter


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_batch_scores_equal_nemo_formula(name, corpus) -> None:
    flt, ref_fn = REFERENCE[name]
    texts = corpus.to_pylist()
    ref = np.array([ref_fn(t) for t in texts])
    got = np.asarray(flt.score_batch(corpus), dtype=np.float64)
    bad = np.flatnonzero(ref != got)
    assert not len(bad), [(texts[i][:60], ref[i], got[i]) for i in bad[:5]]


def test_byte_helpers_match_python(corpus) -> None:
    texts = corpus.to_pylist()
    tok = v.Tokens(corpus.slice(3))  # a sliced array exercises the offsets
    words = [t.split() for t in texts[3:]]
    assert tok.words.to_pylist() == [w for ws in words for w in ws]
    assert tok.n_words.tolist() == [len(ws) for ws in words]
    assert tok.chars.tolist() == [len(w) for ws in words for w in ws]
    n_words, chars = v.word_stats(corpus)
    assert n_words.tolist() == [len(t.split()) for t in texts]
    assert chars.tolist() == [sum(map(len, t.split())) for t in texts]


@pytest.mark.parametrize("flt", [*FILTERS, *(f for f, _ in REFERENCE.values())],
                         ids=lambda f: f"{type(f).__name__}-{getattr(f, '_n', '')}")
def test_scores_are_the_same_in_byte_chunks(flt, corpus, monkeypatch) -> None:
    whole = np.asarray(flt.score_batch(corpus), dtype=np.float64)
    monkeypatch.setattr(v, "CHUNK_BYTES", 997)  # many slices, cut inside the corpus
    if hasattr(flt, "chunk_bytes"):
        monkeypatch.setattr(flt, "chunk_bytes", 997)
    assert np.array_equal(np.asarray(flt.score_batch(corpus), dtype=np.float64), whole)


NGRAM_FILTERS = [*(RepeatingTopNGramsFilter(n=k) for k in (1, 2, 3, 4)),
                 *(RepeatingDuplicateNGramsFilter(n=k) for k in (1, 2, 3, 5))]


def _ngram_scores(flt, texts: pa.Array, hash_mask: np.uint64 = _ngrams.ALL_BITS) -> np.ndarray:
    kernel = (_ngrams.top_ngram_scores if isinstance(flt, RepeatingTopNGramsFilter)
              else _ngrams.duplicate_ngram_scores)
    return kernel(texts, flt._n, hash_mask)


@pytest.mark.parametrize("flt", NGRAM_FILTERS, ids=lambda f: f"{type(f).__name__}-{f._n}")
def test_ngram_kernels_are_exact_when_hashes_collide(flt, corpus) -> None:
    """With 2 hash bits every word and n-gram lookup meets other words and n-grams on the same
    hash: the scores stay those of ``score_document`` (equality is confirmed, not assumed)."""
    texts = corpus.to_pylist()
    ref = np.array([flt.score_document(t) for t in texts])
    assert np.array_equal(_ngram_scores(flt, corpus, np.uint64(3)), ref)
    assert np.array_equal(_ngram_scores(flt, corpus), ref)


def _tiny_vocabulary_corpus(n: int = 300, seed: int = 5) -> list[str]:
    """Texts of a few short, overlapping words ("a", "aa", "ab" …, words of more than 8 bytes
    that end or start like others, a word with a NUL byte) with spaces, double spaces, tabs,
    newlines and Unicode spaces: the top n-gram joined by spaces is found overlapping itself,
    inside longer words, across other separators, or not at all."""
    rng = random.Random(seed)
    vocab = ["a"] * 8 + ["aa", "ab", "b", "ba", "aba", "é", "éa", "a\x00",
             "abcdefghijk", "xabcdefghijk", "abcdefghijkx"]
    seps = [" "] * 8 + ["  ", "\t", "\n", "\u00a0", "\u3000", "\u2009", "\u00a0 "]
    return ["".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(0, 60)))
            for _ in range(n)]


@pytest.mark.parametrize("flt", NGRAM_FILTERS, ids=lambda f: f"{type(f).__name__}-{f._n}")
def test_ngram_scores_on_overlapping_words(flt) -> None:
    texts = _tiny_vocabulary_corpus()
    ref = np.array([flt.score_document(t) for t in texts])
    assert np.array_equal(np.asarray(flt.score_batch(pa.array(texts))), ref)
    assert ((ref > 0) & (ref < 1)).sum() > 30  # the texts exercise the filter


def test_top_ngram_occurrences_are_counted_as_str_count() -> None:
    flt = RepeatingTopNGramsFilter(n=2)
    texts = ["a a a a a",  # "a a" overlaps itself: 2 occurrences, not 4
             "ab c xab c ab c",  # 2 as words, 3 with the one inside "xab c"
             "ab\tc ab\tc ab c",  # the tab-separated ones are not "ab c": 1
             "é é\u00a0é é"]  # Unicode: 2, counted in characters
    assert list(flt.score_batch(pa.array(texts))) == [2 * 3 / 9, 3 * 4 / 15, 1 * 4 / 14,
                                                     2 * 3 / 7]
    assert list(flt.score_batch(pa.array(texts))) == [flt.score_document(t) for t in texts]
    # one long word twice, and a text made of the top n-gram's first byte: the search is
    # linear (Knuth-Morris-Pratt), not bytes times pattern length
    long_word = "a" * 100_000
    texts = [f"{long_word} {long_word}", f"{long_word}b {long_word}b {long_word}"]
    assert list(flt.score_batch(pa.array(texts))) == [1.0, flt.score_document(texts[1])]


PLAIN_PIPELINE = """
import sys
from curator import Pipeline
from curator_text import (BoilerPlateStringFilter, JsonlReader, JsonlWriter, NonAlphaNumericFilter,
                          RepeatingTopNGramsFilter, ScoreFilter, UrlsFilter, WordCountFilter)
stages = [JsonlReader(file_paths=sys.argv[1]),
          *(ScoreFilter(f) for f in (WordCountFilter(min_words=2), NonAlphaNumericFilter(),
                                     UrlsFilter(), RepeatingTopNGramsFilter(),
                                     BoilerPlateStringFilter())),
          JsonlWriter(path=sys.argv[2])]
Pipeline("plain", stages=stages).run(summary=False)
print("numba" in sys.modules)
"""


def test_the_default_text_path_compiles_nothing_on_a_first_run(tmp_path) -> None:
    """NeMo's heuristic pipeline (JSONL, the five filters, JSONL) runs compiled C built at install
    time: with an empty numba cache nothing compiles (no notice) and numba is never imported."""
    (tmp_path / "in").mkdir()
    texts = _corpus(60, seed=11)
    docs = [{"id": i, "text": t} for i, t in enumerate(texts)]
    (tmp_path / "in" / "a.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    out = subprocess.run([sys.executable, "-c", PLAIN_PIPELINE, str(tmp_path / "in"),
                          str(tmp_path / "out")], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    assert "compiling" not in out.stderr
    kept = [json.loads(line)["id"] for p in (tmp_path / "out").glob("*.jsonl")
            for line in p.read_text().split("\n") if line]
    filters = (WordCountFilter(min_words=2), NonAlphaNumericFilter(), UrlsFilter(),
               RepeatingTopNGramsFilter(), BoilerPlateStringFilter())
    expected = [i for i, t in enumerate(texts)
                if all(f.keep_document(f.score_document(t)) for f in filters)]
    assert sorted(kept) == expected and 0 < len(expected) < len(texts)
    assert not (tmp_path / "numba").exists()


def test_duplicate_ngrams_batch_is_vectorised() -> None:
    flt = RepeatingDuplicateNGramsFilter(n=2)
    assert flt.vectorized
    assert not RepeatingDuplicateNGramsFilter(lang="zh").vectorized
    scores = flt.score_batch(pa.array(["a b a b", "a b c", "", "a"]))
    assert list(scores) == [3 / 7, 0.0, 1.0, 1.0]  # the 2nd 'a b': 1 + 1 chars + 1 space


def _space_texts() -> list[str]:
    """Every character ``str.split()`` splits on, and look-alikes that share its first bytes,
    at every position within the 8- and 16-byte blocks the kernels read, between ASCII and
    non-ASCII words, and words that fill or cross a block."""
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()]
    assert len(spaces) == 29
    near = ["\u00a1", "\u200b", "\u2030", "\u2060", "\u3001", "\u1681", "é", "\x00", "\x0e", "\x1b", "!"]
    return [f"{'a' * k}{sep}{word}{sep * 2}x" for sep in spaces + near for k in range(18)
            for word in ("bcdefghijk", "é", "q" * 17)] + [
        "", " ", "abcdefgh", "abcdefgh ", " abcdefg", "a" * 16, " " * 16 + "b", "ab " * 12,
        " a" * 16, "a " * 16 + "é", "\t".join("abcdefghijklmnopq"[:k] for k in range(18))]


def test_word_counts_read_eight_bytes_at_a_time_as_str_split() -> None:
    """The word counter finds every space as ``str.split()`` does, wherever it falls in the
    8-byte blocks it reads."""
    texts = _space_texts() + _tiny_vocabulary_corpus()
    expected = [len(t.split()) for t in texts]
    assert list(v.fast_word_counts(pa.array(texts))) == expected
    assert list(v.fast_word_counts(pa.array(texts).slice(3))) == expected[3:]


def _unicode_space_texts(n: int = 3000, seed: int = 9) -> list[str]:
    """Random runs of every whitespace character, look-alikes that share their first bytes
    (curly quotes, zero-width space, ideographic comma …), ASCII and accented words: multi-byte
    spaces fall at every position of the 16-byte blocks the kernels read, across their edges."""
    rng = random.Random(seed)
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()]
    pieces = (spaces + ["\u2019", "\u201c", "\u200b", "\u2030", "\u3001", "\u1681", "\u00a1",
                        "\u205e", "a", "ab", "word", "caf\u00e9", "x" * 15, "\u00e9"] + [" "] * 6)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 60))) for _ in range(n)]


def test_words_are_found_as_str_split_in_unicode_text() -> None:
    texts = _unicode_space_texts()
    arr = pa.array(texts)
    assert list(v.fast_word_counts(arr)) == [len(t.split()) for t in texts]
    for flt in (RepeatingTopNGramsFilter(n=2), RepeatingDuplicateNGramsFilter(n=2),
                RepeatingTopNGramsFilter(n=1)):
        ref = np.array([flt.score_document(t) for t in texts])
        assert np.array_equal(np.asarray(flt.score_batch(arr)), ref), flt


@pytest.mark.parametrize("flt", NGRAM_FILTERS, ids=lambda f: f"{type(f).__name__}-{f._n}")
def test_ngram_kernels_find_words_as_str_split(flt) -> None:
    texts = _space_texts()
    ref = np.array([flt.score_document(t) for t in texts])
    assert np.array_equal(np.asarray(flt.score_batch(pa.array(texts))), ref)


def test_boilerplate_texts_are_found_by_their_anchor_words() -> None:
    """Texts are only split into paragraphs when they hold an anchor word: every boilerplate
    string must hold one, in any case (the Kelvin sign lowercases to k), or its texts would
    score 0."""
    from curator_text import _native
    from curator_text.filters.repetition import BOILERPLATE_STRINGS

    anchors = _native.BOILERPLATE_ANCHORS
    assert all(any(a in b for a in anchors) for b in BOILERPLATE_STRINGS)
    flt = BoilerPlateStringFilter()
    texts = [f"intro\n\n{b.upper()}\n\nmore" for b in BOILERPLATE_STRINGS]
    texts += ["our COO\u212aIE POLICY\n\nx", "cookies", "Lorem Ipsum dolor", "no policy here",
              "If you continue to read\n\nx"]
    ref = [flt.score_document(t) for t in texts]
    assert list(flt.score_batch(pa.array(texts))) == ref
    assert ref[-5:] == [0.5, 0.0, 1.0, 0.0, 0.0]


def _boilerplate_texts(n: int = 3000, seed: int = 8) -> list[str]:
    """Texts of policy strings (in any case, with a Kelvin sign for k, cut short, run together)
    among words, blank lines (two, three, four newlines), dotted capital I and "lorem ipsum"."""
    from curator_text.filters.repetition import POLICY_SUBSTRINGS

    rng = random.Random(seed)

    def variant(s: str) -> str:
        s = "".join(c.upper() if rng.random() < 0.3 else c for c in s)
        if rng.random() < 0.3:
            s = s.replace("k", "\u212a").replace("K", "\u212a")
        if rng.random() < 0.2:
            s = s[:rng.randint(1, len(s))]  # cut short: not a match
        return s

    pieces = ["word", "cookie", "privacy", "terms of", "lorem", "Lorem Ipsum", "\u0130", "i",
              "\n", "\n\n", "\n\n\n", "\n\n\n\n", " ", " ", ".", "co", "pri", "rms", "\u212a"]
    texts = []
    for _ in range(n):
        parts = [variant(rng.choice(POLICY_SUBSTRINGS)) if rng.random() < 0.25
                 else rng.choice(pieces) for _ in range(rng.randint(0, 30))]
        texts.append(rng.choice(["", " "]).join(parts))
    return texts


def test_boilerplate_scores_match_the_per_document_formula_on_adversarial_texts() -> None:
    flt = BoilerPlateStringFilter()
    texts = _boilerplate_texts()
    ref = np.array([flt.score_document(t) for t in texts])
    got = np.asarray(flt.score_batch(pa.array(texts)))
    bad = np.flatnonzero(ref != got)
    assert not len(bad), [(texts[i][:80], ref[i], got[i]) for i in bad[:5]]
    assert len(set(ref.tolist())) > 10 and (ref == 1.0).sum() > 10  # the texts exercise it
