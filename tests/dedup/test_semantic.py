"""find_semantic_duplicates and SemanticDeduplicationWorkflow on planted duplicates."""

from __future__ import annotations

import numpy as np
import pytest
from curator.dedup.semantic import find_semantic_duplicates


def _planted(n: int = 400, d: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    x[100] = x[5] * 3.0                                   # same direction: cosine 1
    x[200] = x[5] + 1e-2 * rng.normal(size=d)            # near duplicate of 5
    x[7] = x[300]                                         # exact copy, the later one is 300
    return x


def test_finds_planted_duplicates_keep_first() -> None:
    mask = find_semantic_duplicates(_planted(), eps=0.01, n_clusters=10)
    assert mask.dtype == bool and mask.shape == (400,)
    assert set(np.flatnonzero(mask)) == {100, 200, 300}


def test_keep_last_keeps_highest_index() -> None:
    mask = find_semantic_duplicates(_planted(), eps=0.01, n_clusters=10, keep="last")
    assert set(np.flatnonzero(mask)) == {5, 100, 7}


@pytest.mark.parametrize("keep", ["hard", "easy", "random"])
def test_other_strategies_keep_exactly_one_per_group(keep: str) -> None:
    mask = find_semantic_duplicates(_planted(), eps=0.01, n_clusters=10, keep=keep)
    removed = set(np.flatnonzero(mask))
    assert len(removed & {5, 100, 200}) == 2 and len(removed & {7, 300}) == 1
    assert removed <= {5, 100, 200, 7, 300}


def test_deterministic_and_clusters_clipped() -> None:
    x = _planted(n=400)[:50]
    a = find_semantic_duplicates(x, eps=0.01, n_clusters=1000, seed=3)
    b = find_semantic_duplicates(x, eps=0.01, n_clusters=1000, seed=3)
    assert (a == b).all()


def test_eps_zero_only_identical_directions() -> None:
    mask = find_semantic_duplicates(_planted(), eps=0.0, n_clusters=5)
    assert set(np.flatnonzero(mask)) == {100, 300}


def test_large_eps_removes_everything_but_one_per_cluster() -> None:
    mask = find_semantic_duplicates(_planted()[:60], eps=1.99, n_clusters=1)
    assert mask.sum() == 59 and not mask[0]


def test_bad_parameters_raise() -> None:
    with pytest.raises(ValueError, match="keep"):
        find_semantic_duplicates(_planted(), eps=0.01, keep="best")
    with pytest.raises(ValueError, match="eps"):
        find_semantic_duplicates(_planted(), eps=-1)
    with pytest.raises(ValueError, match="2-D"):
        find_semantic_duplicates(np.zeros(5), eps=0.1)
    assert find_semantic_duplicates(np.zeros((1, 4)), eps=0.1).tolist() == [False]


# ---- SemanticDeduplicationWorkflow over Parquet files ----------------------------------------

def _write_embeddings(directory, x, parts=3, list_type=None):
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    ids = [f"img-{i:04d}" for i in range(len(x))]
    bounds = np.linspace(0, len(x), parts + 1).astype(int)
    for p in range(parts):
        sl = slice(bounds[p], bounds[p + 1])
        pq.write_table(pa.table({"image_id": ids[sl], "image_embedding": pa.array(
            list(x[sl]), list_type or pa.list_(pa.float32()))}), directory / f"part-{p}.parquet")
    return ids


def test_workflow_finds_planted_duplicates_and_removes_them(tmp_path, monkeypatch) -> None:
    import pyarrow.parquet as pq
    from curator.dedup import SemanticDeduplicationWorkflow

    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    x = _planted()
    ids = _write_embeddings(tmp_path / "in", x)
    wf = SemanticDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                       id_field="image_id", embedding_field="image_embedding",
                                       n_clusters=8, eps=0.01, perform_removal=True)
    result = wf.run()
    removed = set(pq.read_table(result.duplicates_path).column("id").to_pylist())
    assert removed == {ids[100], ids[200], ids[300]} and result.num_removed == 3
    kept = pq.read_table(tmp_path / "out" / "deduplicated").column("image_id").to_pylist()
    assert sorted(kept) == sorted(set(ids) - removed)
    # a re-run reuses the cached centroids and cluster partitions, and gives the same answer
    import curator.dedup.semantic_workflow as sw

    monkeypatch.setattr(sw, "kmeans", lambda *a, **k: (_ for _ in ()).throw(AssertionError()))
    assert wf.run().num_duplicates == 3


def test_workflow_matches_in_memory_function(tmp_path, monkeypatch) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from curator.dedup import SemanticDeduplicationWorkflow

    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    rng = np.random.default_rng(1)
    base = rng.normal(size=(40, 8)).astype(np.float32)
    x = np.concatenate([base, base[:10] + 0.01 * rng.normal(size=(10, 8)).astype(np.float32)])
    ids = _write_embeddings(tmp_path / "in", x, parts=2, list_type=pa.list_(pa.float32(), 8))
    res = SemanticDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                        id_field="image_id", embedding_field="image_embedding",
                                        n_clusters=1, eps=0.01, keep="last").run()
    expected = find_semantic_duplicates(x, eps=0.01, n_clusters=1, keep="last")
    got = set(pq.read_table(res.duplicates_path).column("id").to_pylist())
    assert got == {ids[i] for i in np.flatnonzero(expected)} and len(got) == 10


def test_workflow_config_errors(tmp_path) -> None:
    from curator.dedup import SemanticDeduplicationWorkflow

    with pytest.raises(ValueError, match="keep"):
        SemanticDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), keep="best")
    with pytest.raises(ValueError, match="n_clusters"):
        SemanticDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), n_clusters=0)


def test_workflow_samples_on_the_workers_and_reads_only_the_sample(tmp_path, monkeypatch) -> None:
    """The k-means sample is taken per file by a stage (on the executor's workers); the driver
    reads the sample files, never the embedding files themselves."""
    import pyarrow.parquet as pq
    from curator.dedup import SemanticDeduplicationWorkflow
    from curator.dedup import semantic_workflow as sw

    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    x = _planted()
    _write_embeddings(tmp_path / "in", x, parts=4)
    wf = SemanticDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"),
                                       id_field="image_id", embedding_field="image_embedding",
                                       n_clusters=4, eps=0.01, kmeans_sample=60)
    monkeypatch.setattr(sw, "fit_centroids", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("the driver-side fit read every embedding file")))
    assert wf.run().num_duplicates == 3
    samples = sorted((tmp_path / "out" / "cache" / "semantic" / "sample").glob("*.parquet"))
    assert [pq.read_table(p).num_rows for p in samples] == [15, 15, 15, 15]  # 60 over 4 files
    rows = sw.sample_rows(str(sorted((tmp_path / "in").glob("*.parquet"))[2]),
                          "image_embedding", 15, 42, 2)
    assert np.allclose(rows, sw.embeddings_to_numpy(pq.read_table(samples[2]).column(
        "embedding")))  # the same rows whichever process samples the file
