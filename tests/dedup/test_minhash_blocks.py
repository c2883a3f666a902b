"""``doc_shingle_sets`` hashes texts in bounded blocks and sorts each block at once: the sets are
exactly those of one text at a time, whatever the block size."""

from __future__ import annotations

import numpy as np
from curator_text.dedup import minhash
from curator_text.dedup.minhash import doc_shingle_sets, shingle_hashes


def _one_by_one(texts: list[str], n: int) -> list[np.ndarray]:
    out = []
    for t in texts:
        x, _ = shingle_hashes([t], n)
        with np.errstate(over="ignore"):
            out.append(np.unique((minhash._mix(x) >> np.uint64(32)).astype(np.uint32)))
    return out


def test_shingle_sets_are_the_same_in_blocks(monkeypatch) -> None:
    rng = np.random.default_rng(0)
    words = np.array(["naïve", "dedup", "the", "of", "日本語", "x", "repeated", "text"])
    texts = ["", "short", *(" ".join(rng.choice(words, int(rng.integers(1, 80))))
                            for _ in range(200))]
    ref = _one_by_one(texts, 5)
    for block in (1, 50, 1000, 1 << 21):  # a block per text … one block for all
        monkeypatch.setattr(minhash, "_BLOCK_CHARS", block)
        got = doc_shingle_sets(texts, 5)
        assert len(got) == len(texts)
        assert all(np.array_equal(a, b) and a.dtype == np.uint32 for a, b in zip(got, ref, strict=True))
    assert sum(map(len, ref)) > 1000 and len(ref[0]) == 0 and len(ref[1]) == 1
