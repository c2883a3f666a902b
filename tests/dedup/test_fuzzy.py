"""FuzzyDeduplicationWorkflow (MinHash LSH) on planted exact and near duplicates."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest
from curator_text.dedup import FuzzyDeduplicationWorkflow
from curator_text.dedup.components import connected_components, jaccard
from curator_text.dedup.minhash import (
    band_hashes,
    doc_shingle_sets,
    minhash_signatures,
    shingle_hashes,
)

from tests.dedup.corpus import expected_removed, write_parts


def test_finds_planted_near_duplicates_without_false_positives(tmp_path, corpus) -> None:
    texts, root = corpus
    ids = write_parts(texts, tmp_path / "in", 3)
    result = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out")).run()
    dups = pq.read_table(result.duplicates_path).to_pydict()
    assert set(dups["id"]) == expected_removed(root, ids)   # 12 exact + 12 near, nothing else
    assert result.num_duplicates == 24
    index = {d: i for i, d in enumerate(ids)}
    for dup, kept in zip(dups["id"], dups["duplicate_of"], strict=False):
        assert root[index[dup]] == root[index[kept]] and index[kept] < index[dup]


def test_jaccard_verification_in_many_buckets_gives_the_same_duplicates(tmp_path, corpus) -> None:
    texts, root = corpus
    ids = write_parts(texts, tmp_path / "in", 3)
    found = []
    for per_bucket in (16_384, 3):  # one bucket, then many: memory bounded per bucket
        wf = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / f"out{per_bucket}"))
        wf.docs_per_bucket = per_bucket
        dups = pq.read_table(wf.run().duplicates_path).to_pydict()
        found.append(sorted(zip(dups["id"], dups["duplicate_of"], strict=True)))
    assert found[0] == found[1]
    assert {d for d, _ in found[1]} == expected_removed(root, ids)


def test_removal_works_with_any_partitioning(tmp_path, corpus) -> None:
    texts, root = corpus
    kept_sets = []
    for parts, fmt in ((1, "parquet"), (4, "jsonl")):
        ids = write_parts(texts, tmp_path / f"in{parts}", parts, fmt=fmt)
        res = FuzzyDeduplicationWorkflow(str(tmp_path / f"in{parts}"), str(tmp_path / f"o{parts}"),
                                         perform_removal=True).run()
        assert res.num_removed == 24
        kept = []
        for f in sorted((tmp_path / f"o{parts}" / "deduplicated").glob("[!.]*")):
            if fmt == "parquet":
                kept += pq.read_table(f).column("id").to_pylist()
            else:
                kept += [json.loads(x)["id"] for x in f.read_text().splitlines()]
        kept_sets.append(kept)
    assert kept_sets[0] == kept_sets[1] == [i for i in ids if i not in expected_removed(root, ids)]


def test_resume_skips_finished_minhash(tmp_path, corpus, monkeypatch) -> None:
    texts, root = corpus
    ids = write_parts(texts[:120] + texts[-24:], tmp_path / "in", 2)
    wf = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"))
    first = set(pq.read_table(wf.run().duplicates_path).column("id").to_pylist())
    import curator_text.dedup.stages as stages

    monkeypatch.setattr(stages, "minhash_signatures",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed")))
    again = set(pq.read_table(wf.run().duplicates_path).column("id").to_pylist())
    assert again == first and first <= set(ids)


def test_each_duplicate_points_at_the_first_of_its_group_and_sizes_are_published(
        tmp_path, corpus) -> None:
    texts, root = corpus
    ids = write_parts(texts, tmp_path / "in", 3)
    result = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out")).run()
    written = sorted(p.name for p in (tmp_path / "out" / "duplicates").iterdir()
                     if not p.name.startswith("."))
    assert written == ["fuzzy.parquet"]
    dups = pq.read_table(tmp_path / "out" / "duplicates" / "fuzzy.parquet").to_pydict()
    first: dict[int, str] = {}
    for i, r in enumerate(root):
        first.setdefault(r, ids[i])
    assert dict(zip(dups["id"], dups["duplicate_of"], strict=True)) == {
        ids[i]: first[r] for i, r in enumerate(root) if ids[i] != first[r]}
    assert result.group_sizes == dict(sorted(Counter(
        n for n in Counter(root).values() if n > 1).items()))


def test_resume_after_a_crash_in_the_components_reuses_finished_work(tmp_path, corpus,
                                                                     monkeypatch) -> None:
    import curator_text.dedup.components as components
    import curator_text.dedup.stages as stages

    texts, root = corpus
    ids = write_parts(texts, tmp_path / "in", 3)
    wf = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"))
    real_large, real_small = components.large_star, components.small_star

    def lost(src: str, q: int):
        raise OSError("worker lost")

    monkeypatch.setattr(components, "small_star", lost)  # the crash: in the second step
    with pytest.raises(RuntimeError, match="SmallStar"):
        wf.run()
    never = lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed"))  # noqa: E731
    monkeypatch.setattr(stages, "minhash_signatures", never)
    monkeypatch.setattr(stages, "jaccard", never)         # the verified pairs are reused too
    steps: list[str] = []
    monkeypatch.setattr(components, "small_star", real_small)
    monkeypatch.setattr(components, "large_star",
                        lambda src, q: (steps.append(src), real_large(src, q))[1])
    result = wf.run()
    assert set(pq.read_table(result.duplicates_path).column("id").to_pylist()) == \
        expected_removed(root, ids)
    assert not any(s.endswith("r000") for s in steps)      # the finished first step is reused


def test_the_driver_passes_and_receives_only_small_counts(tmp_path, corpus) -> None:
    """No phase's tasks carry documents, pairs or rows through the driver: every task going in
    or coming back holds scalars, or a group of input files' paths and indices, only (the pairs
    and the graph stay in files on the workers)."""
    from curator.dedup import DeduplicationWorkflow

    texts, root = corpus
    ids = write_parts(texts, tmp_path / "in", 3)
    wf = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"))
    seen: list[tuple[str, object]] = []

    def run_stage(stage, tasks):
        out = DeduplicationWorkflow.run_stage(wf, stage, tasks)
        for t in [*tasks, *out]:
            seen.extend((stage.name, v) for v in [t.data, *t.metadata.values()])
        return out

    wf.run_stage = run_stage
    result = wf.run()
    assert set(pq.read_table(result.duplicates_path).column("id").to_pylist()) == \
        expected_removed(root, ids)
    assert {name for name, _ in seen} >= {"JaccardVerify", "LargeStar", "SmallStar",
                                          "DuplicateIds"}
    def small(v: object) -> bool:
        if isinstance(v, dict):
            return all(isinstance(x, (int, float, str)) for x in v.values())
        if isinstance(v, list):
            return len(v) <= 3 and all(isinstance(x, str) or small(x) for x in v)
        return isinstance(v, (int, float, str, type(None)))

    bulky = [(name, type(v).__name__) for name, v in seen if not small(v)]
    assert bulky == []


def test_short_documents_are_never_grouped(tmp_path) -> None:
    texts = ["tiny doc", "tiny doc", "tiny doc!", "x" * 23, "x" * 23]
    write_parts(texts, tmp_path / "in", 1)
    result = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out")).run()
    assert result.num_duplicates == 0


def test_jaccard_verification_drops_candidates_below_threshold(tmp_path, corpus) -> None:
    texts, root = corpus
    ids = write_parts(texts, tmp_path / "in", 2)
    strict = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "o1"),
                                        jaccard_threshold=0.99).run()
    exact_only = {ids[i] for i in range(len(texts)) if texts[i] == texts[root[i]] and root[i] != i}
    assert set(pq.read_table(strict.duplicates_path).column("id").to_pylist()) == exact_only
    unverified = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "o2"),
                                            use_jaccard=False).run()
    assert unverified.num_duplicates == 24


@pytest.mark.parametrize("method", ["oph", "permutations"])
def test_signature_agreement_estimates_jaccard(corpus, method) -> None:
    texts, root = corpus
    near = [i for i, r in enumerate(root) if r != i][-12:]
    a = [texts[root[i]] for i in near]
    b = [texts[i] for i in near]
    sa, _ = minhash_signatures(a, num_perm=260, method=method)
    sb, _ = minhash_signatures(b, num_perm=260, method=method)
    est = (sa == sb).mean(axis=1)
    true = [jaccard(x, y) for x, y in zip(doc_shingle_sets(a, 24), doc_shingle_sets(b, 24), strict=False)]
    assert np.abs(est - np.array(true)).mean() < 0.05
    unrelated, _ = minhash_signatures(texts[:2], method=method)
    assert (unrelated[0] == unrelated[1]).mean() < 0.05


def test_minhash_helpers() -> None:
    h, counts = shingle_hashes(["abcde", "ab", "abcd"], 3)
    assert counts.tolist() == [3, 0, 2] and h[0] == h[3] and h[1] == h[4]
    sig, ok = minhash_signatures(["ab", "hello world, this is long enough"], char_ngrams=5)
    assert ok.tolist() == [False, True] and (sig[0] == 0xFFFFFFFF).all()
    assert band_hashes(sig, 4, 5).shape == (2, 4)
    nodes, roots = connected_components(np.array([5, 7, 9]), np.array([7, 3, 10]))
    assert dict(zip(nodes.tolist(), roots.tolist(), strict=False)) == {3: 3, 5: 3, 7: 3, 9: 9, 10: 9}


def test_shingle_hashes_equal_each_window_hashed_alone() -> None:
    """The batched hashes (every window of the concatenation, those crossing a document edge
    dropped) equal the polynomial hash of each document's windows computed one by one."""
    texts = ["", "ab", "abc", "naïve café ünïcode 日本語 text", "x" * 7, "abcabcab", "q"]
    n = 3
    h, counts = shingle_hashes(texts, n)
    ref = []
    for t in texts:
        for i in range(len(t) - n + 1):
            v = 0
            for ch in t[i:i + n]:  # sum of (code + 1) * B**(n-1-j), mod 2**64
                v = (v * 0x100000001B3 + ord(ch) + 1) % 2**64
            ref.append(v)
    assert counts.tolist() == [max(len(t) - n + 1, 0) for t in texts]
    assert h.tolist() == ref


def test_config_errors_name_the_parameter(tmp_path) -> None:
    with pytest.raises(ValueError, match="num_bands"):
        FuzzyDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), num_bands=0)
    with pytest.raises(ValueError, match="jaccard_threshold"):
        FuzzyDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), jaccard_threshold=2)


def _oph_one_probe_per_pass(x, counts, k, seed):
    """The densification as first written (one probe attempt per pass), as the reference."""
    from curator_text.dedup.minhash import _mix

    empty = np.uint64(1 << 32)
    sig = np.full(len(counts) * k, empty, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = _mix(x ^ _mix(np.array([seed + 0x9E3779B97F4A7C15], dtype=np.uint64))[0])
        bins = ((h >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32)
        key = np.repeat(np.arange(len(counts), dtype=np.uint64) * np.uint64(k), counts) + bins
        np.minimum.at(sig, key.astype(np.int64), h & np.uint64(0xFFFFFFFF))
    sig = sig.reshape(len(counts), k)
    orig = sig.copy()
    rows, cols = np.nonzero((sig == empty) & (counts > 0)[:, None])
    kk = np.arange(k, dtype=np.uint64)
    for attempt in range(1, 50 * k):
        if not len(rows):
            break
        with np.errstate(over="ignore"):
            probe = _mix(kk * np.uint64(0xD6E8FEB86659FD93) + np.uint64(attempt * 0x9E3779B1 + seed))
        vals = orig[rows, (probe % np.uint64(k)).astype(np.int64)[cols]]
        ok = vals != empty
        sig[rows[ok], cols[ok]] = vals[ok]
        rows, cols = rows[~ok], cols[~ok]
    return sig


@pytest.mark.parametrize("k", [16, 260])
def test_densification_in_passes_fills_every_bin_as_one_probe_at_a_time(corpus, k) -> None:
    """Short documents leave most bins empty (hundreds of probe attempts); trying 32 attempts
    per pass must give each empty bin the same donor as trying them one at a time."""
    from curator_text.dedup.minhash import _oph

    texts, _ = corpus
    docs = [t[: 30 + 7 * i] for i, t in enumerate(texts[:40])] + texts[40:60] + ["", "tiny"]
    x, counts = shingle_hashes(docs, 24)
    assert (counts[:40] < k).any()  # some documents have fewer shingles than bins
    assert np.array_equal(_oph(x, counts, k, 7), _oph_one_probe_per_pass(x, counts, k, 7))


def test_shingle_sets_are_each_documents_sorted_unique_hashes(corpus) -> None:
    texts, _ = corpus
    docs = texts[:30] + ["", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]
    h, counts = shingle_hashes(docs, 24)
    from curator_text.dedup.minhash import _mix

    with np.errstate(over="ignore"):
        h32 = (_mix(h.copy()) >> np.uint64(32)).astype(np.uint32)
    ref = [np.unique(p) for p in np.split(h32, np.cumsum(counts)[:-1])]
    got = doc_shingle_sets(docs, 24)
    assert len(got) == len(ref) and all(np.array_equal(a, b) for a, b in zip(got, ref, strict=True))
    assert len(got[-1]) == 1  # a run of one character: every window equal
