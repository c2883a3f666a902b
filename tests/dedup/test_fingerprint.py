"""Dedup intermediates are keyed by the input and parameters: a changed input is recomputed.

Each test runs a workflow on input A, then on a different input B with the SAME output_path and
cache_path, and checks the answer equals a fresh run on B (issue 13, case 6: before this, the
second run silently returned A's duplicates).
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator.dedup import ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow
from curator_text.dedup import FuzzyDeduplicationWorkflow

from tests.dedup.corpus import expected_removed, make_corpus, write_parts


def _ids(result) -> set[str]:
    return set(pq.read_table(result.duplicates_path).column("id").to_pylist())


def _corpora(tmp_path):
    """Input A and input B (other documents, other duplicates) as Parquet parts."""
    texts_a, root_a = make_corpus(n_orig=60, n_exact=6, n_near=6, n_short=0, seed=1)
    texts_b, root_b = make_corpus(n_orig=50, n_exact=9, n_near=9, n_short=0, seed=2)
    ids_a = write_parts(texts_a, tmp_path / "a", 2)
    ids_b = write_parts(texts_b, tmp_path / "b", 2, ids=[f"b-{i:04d}" for i in range(len(texts_b))])
    return (ids_a, root_a), (ids_b, root_b)


@pytest.mark.parametrize("workflow", ["exact", "fuzzy"])
def test_new_input_into_the_same_output_and_cache_is_recomputed(tmp_path, workflow):
    (ids_a, root_a), (ids_b, root_b) = _corpora(tmp_path)
    out, cache = str(tmp_path / "out"), str(tmp_path / "cache")

    def run(src, output=out, **kw):
        cls = ExactDeduplicationWorkflow if workflow == "exact" else FuzzyDeduplicationWorkflow
        extra = {} if workflow == "exact" else {"char_ngrams": 5, "num_bands": 10,
                                                "minhashes_per_band": 5, "jaccard_threshold": 0.7}
        return cls(str(tmp_path / src), output, cache_path=cache if output == out else None,
                   **extra, **kw).run()

    first = run("a")
    expect_a = (expected_removed(root_a, ids_a) if workflow == "fuzzy"
                else _exact(root_a, ids_a, n_exact=6))
    assert _ids(first) == expect_a
    second = run("b")  # a new input, the same output_path and cache_path
    fresh = run("b", output=str(tmp_path / "fresh"))
    assert _ids(second) == _ids(fresh) and second.num_duplicates == fresh.num_duplicates
    assert _ids(second) and not _ids(second) & set(ids_a)  # nothing of A is reported
    # the same paths rewritten with other content (B's documents under A's file names)
    shutil.rmtree(tmp_path / "a")
    shutil.copytree(tmp_path / "b", tmp_path / "a")
    assert _ids(run("a")) == _ids(fresh)


def _exact(root, ids, n_exact):
    """The exact copies only: make_corpus appends n_exact copies after the originals."""
    near_start = len(set(root)) + n_exact  # the originals, then the exact, then the near copies
    return {ids[i] for i in range(len(ids)) if root[i] != i and i < near_start}


def test_changed_parameters_are_recomputed_and_same_input_is_reused(tmp_path, monkeypatch):
    texts, root = make_corpus(n_orig=40, n_exact=3, n_near=5, n_short=0, seed=3)
    ids = write_parts(texts, tmp_path / "in", 2)
    out = str(tmp_path / "out")

    def fuzzy(**kw):
        return FuzzyDeduplicationWorkflow(str(tmp_path / "in"), out, char_ngrams=5, num_bands=10,
                                          minhashes_per_band=5, **kw)

    assert _ids(fuzzy(jaccard_threshold=0.7).run()) == expected_removed(root, ids)
    strict = fuzzy(jaccard_threshold=1.0).run()  # only the exact copies remain duplicates
    assert len(_ids(strict)) == 3 == strict.num_duplicates
    # the same input and parameters again: the cached work is reused, not recomputed
    import curator_text.dedup.stages as st

    monkeypatch.setattr(st, "minhash_signatures",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed")))
    assert fuzzy(jaccard_threshold=1.0).run().num_duplicates == 3


def test_semantic_new_input_refits_centroids(tmp_path):
    rng = np.random.default_rng(0)

    def write(directory, x, prefix):
        directory.mkdir()
        pq.write_table(pa.table({"id": [f"{prefix}{i}" for i in range(len(x))],
                                 "emb": pa.array(list(x), pa.list_(pa.float32()))}),
                       directory / "part.parquet")

    xa = rng.normal(size=(60, 8)).astype(np.float32)
    xa[10] = xa[3]
    xb = rng.normal(size=(50, 8)).astype(np.float32)
    xb[20], xb[30] = xb[1], xb[2] * 2
    write(tmp_path / "a", xa, "a")
    write(tmp_path / "b", xb, "b")

    def run(src, out):
        return SemanticDeduplicationWorkflow(str(tmp_path / src), str(tmp_path / out),
                                             embedding_field="emb", n_clusters=4, eps=1e-4).run()

    assert _ids(run("a", "out")) == {"a10"}
    assert _ids(run("b", "out")) == {"b20", "b30"} == _ids(run("b", "fresh"))
    markers = [f for f in os.listdir(tmp_path / "out" / "duplicates") if f.startswith(".")]
    assert markers == [".curator-semantic_dedup.json"]
