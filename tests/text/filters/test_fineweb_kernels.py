"""The compiled parts of the FineWeb filters against their Python definitions: the tokenizer's
chunk table (Arrow input, nulls, growth past its first size, the cache shared by a chain),
Gopher's paragraph/line repetition, and the line counts of Gopher's quality rules."""

from __future__ import annotations

import random
import re

import numpy as np
import pyarrow as pa
from curator_text.filters._english_words import EnglishWordTokenizer, english_words
from curator_text.filters._vec import text_bytes

PIECES = ["a", "b b", "Mr.", "don't", "(word),", "U.S.", "e.g.", "5pm", "x-ray", "\n", "\n\n",
          " ", "\t", "\u00a0", "\u2003", "\u3000", "\u2028", "\r\n", "\x0b", "\x85", "é", "Ж",
          "...", "…", "#tag", "- item", "• item", "http://x.org/a-b", ":))", "same line"]


def _texts(n: int, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 30))) for _ in range(n)]


def test_compiled_tokenizer_gives_the_rules_words_and_grows() -> None:
    tok = EnglishWordTokenizer()
    texts = _texts(3000)
    # more distinct chunks than the table's first size (16k entries): it grows and rehashes
    texts += [" ".join(f"w{i}x{j}," for j in range(40)) for i in range(600)]
    texts.append("I don't know ... Ж # end")
    arr = pa.array(texts + [None])
    batch = tok.tokenize(arr)
    assert tok._n_entries > 1 << 14
    for i, text in enumerate(texts + [""]):
        assert tok.words(batch.ids[batch.offsets[i]:batch.offsets[i + 1]]) == english_words(text)
    again = tok.tokenize(texts[:50])  # a list, and texts the chain has seen: the cache
    assert tok.words(again.ids[again.offsets[1]:again.offsets[2]]) == english_words(texts[1])
    lengths, flags, _ = batch.lengths, batch.flags, batch.hashes
    for word in ("do", "n't", "...", "#", "Ж"):
        i = tok.id_of(word)
        assert i is not None and lengths[i] == len(word)
    assert flags[tok.id_of("...")] & 1 and not flags[tok.id_of("Ж")] & 1


def test_text_with_lone_surrogate_takes_the_python_path() -> None:
    tok = EnglishWordTokenizer()
    batch = tok.tokenize(["bad \ud800 text", "fine text"])
    assert np.diff(batch.offsets).tolist() == [3, 2]


def _dups(items: list[str]) -> tuple[int, int]:
    seen: set[str] = set()
    n = chars = 0
    for x in items:
        if x in seen:
            n, chars = n + 1, chars + len(x)
        seen.add(x)
    return n, chars


def test_line_repetition_kernel_is_gophers_rule() -> None:
    from curator_text._bytes import SPACE_CLASSES, SPACE_E2_80
    from curator_text.filters.fineweb import _kernels

    long = "A paragraph that a page repeats, fifty characters!"
    texts = _texts(4000, seed=2) + ["x\n\nx\n\ny", "\n\n".join([long, "a", "b", "c", long]),
                                     "\n".join([long, "a", "b", "c", long])]
    buf, offsets = text_bytes(pa.array(texts))
    got = _kernels.line_repetition(buf, offsets, SPACE_CLASSES, SPACE_E2_80, 0.3, 0.2, 0.3, 0.2)
    for text, code in zip(texts, got.tolist(), strict=True):
        want = 0
        if text:
            paras = re.split(r"\n{2,}", text.strip())
            lines = re.split(r"\n+", text)
            (pn, pc), (ln, lc) = _dups(paras), _dups(lines)
            want = (1 if pn / len(paras) > 0.3 else 2 if pc / len(text) > 0.2
                    else 3 if ln / len(lines) > 0.3 else 4 if lc / len(text) > 0.2 else 0)
        assert code == want, text
    assert set(got.tolist()) == {0, 1, 2, 3, 4}


def test_line_stats_kernel_counts_as_splitlines() -> None:
    from curator_text.filters.fineweb import _kernels

    texts = _texts(4000, seed=3)
    got = _kernels.line_stats(*text_bytes(pa.array(texts)))
    for text, row in zip(texts, got.tolist(), strict=True):
        lines = text.splitlines()
        assert row == [text.count("#"), text.count("...") + text.count("…"), len(lines),
                       sum(s.lstrip().startswith(("•", "-")) for s in lines),
                       sum(s.rstrip().endswith(("...", "…")) for s in lines)], text
