"""The FineWeb MinHash preset: datatrove's word 5-gram shingles of the simplified text, its SHA-1
shingle hash and permutations (seed 1), 14 bands x 8 hashes, no verification."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest
from curator.errors import ConfigError
from curator_text.dedup import FuzzyDeduplicationWorkflow
from curator_text.dedup.minhash import minhash_signatures
from curator_text.dedup.words import (
    FINEWEB_MINHASH,
    datatrove_signatures,
    simplify_texts,
    word_shingle_hashes,
)


def test_shingles_ignore_case_punctuation_numbers_and_accents() -> None:
    import pyarrow as pa

    a = "The café opened in 1999, and the owners said: \"welcome back!\" today"
    b = "the cafe opened in 2024 and THE owners said welcome back today"
    assert simplify_texts(pa.array([a])).to_pylist() == [
        "the cafe opened in 0 and the owners said welcome back today"]
    ha, ca = word_shingle_hashes([a, "too short"], 5)
    hb, cb = word_shingle_hashes([b], 5)
    assert list(ca) == [8, 0] and list(cb) == [8]
    assert sorted(ha.tolist()) == sorted(hb.tolist())
    assert len(set(word_shingle_hashes(["a b c d e f"], 5)[0].tolist())) == 2


def _words(rng: random.Random, n: int) -> str:
    # letters only: the simplified text turns every number into 0
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
             for _ in range(5000)]
    return " ".join(rng.choice(vocab) for _ in range(n))


def test_preset_removes_the_near_duplicate_only(tmp_path) -> None:
    rng = random.Random(3)
    docs = [_words(rng, 300) for _ in range(20)]
    words = docs[0].split()
    words[150] = "changed"
    rows = [{"id": i, "text": t} for i, t in enumerate(docs)] + [{"id": 99, "text": " ".join(words)}]
    (tmp_path / "in").mkdir()
    with open(tmp_path / "in" / "d.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    wf = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"), preset="fineweb",
                                    cache_path=str(tmp_path / "cache"))
    assert (wf.word_ngrams, wf.num_bands, wf.minhashes_per_band, wf.use_jaccard,
            wf.minhash_method, wf.seed) == (5, 14, 8, False, "datatrove", 1) == tuple(
        FINEWEB_MINHASH.values())
    wf.run()
    dup = pq.read_table(tmp_path / "out" / "duplicates" / "fuzzy.parquet").to_pylist()
    assert [(d["id"], d["duplicate_of"]) for d in dup] in ([(99, 0)], [(0, 99)])
    assert "w5_b14x8" in wf._cache()


def test_unknown_preset_is_a_config_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="preset"):
        FuzzyDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), preset="gopher")


def _reference_signature(text_words: list[str], num_perm: int, seed: int) -> list[int]:
    """datatrove's signature written out with Python integers: SHA-1 of each 5-gram (first 8
    bytes, little-endian), parameters from RandomState(seed), uint64 wrap-around, mod 2**61-1."""
    import hashlib

    import numpy as np

    prime = (1 << 61) - 1
    gen = np.random.RandomState(seed)
    a = gen.randint(1, prime, dtype=np.uint64, size=num_perm).tolist()
    b = gen.randint(0, prime, dtype=np.uint64, size=num_perm).tolist()
    shingles = [int.from_bytes(hashlib.sha1(" ".join(text_words[i:i + 5]).encode()).digest()[:8],
                               "little") for i in range(len(text_words) - 4)]
    mask = (1 << 64) - 1
    return [min((((x * a[j]) & mask) + b[j] & mask) % prime for x in shingles)
            for j in range(num_perm)]


def test_signatures_are_datatroves() -> None:
    text = "The café opened in 1999, and the owners said: \"welcome back!\" today. Don't go"
    simple = simplify_texts(__import__("pyarrow").array([text])).to_pylist()[0]
    assert simple == "the cafe opened in 0 and the owners said welcome back today don t go"
    words = ["the", "cafe", "opened", "in", "0", "and", "the", "owners", "said", "welcome",
             "back", "today", "don", "t", "go"]  # datatrove's words (checked with datatrove)
    sig, ok = datatrove_signatures([text, "too short"], 5, 112, 1)
    assert ok.tolist() == [True, False]
    assert sig.dtype.name == "uint64"
    assert sig[0].tolist() == _reference_signature(words, 112, 1)
    same, _ = minhash_signatures([text], num_perm=112, seed=1, method="datatrove", word_ngrams=5)
    assert same.tolist() == sig[:1].tolist()
    with pytest.raises(ConfigError, match="word_ngrams"):
        FuzzyDeduplicationWorkflow("x", "y", minhash_method="datatrove")
