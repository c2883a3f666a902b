"""The three deduplication workflows on Ray give the same answers as on the local executor."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.dedup.corpus import expected_removed, make_corpus, write_parts

pytestmark = pytest.mark.ray


def _executor(kind: str):
    try:
        if kind == "ray_data":
            from curator.executors.ray_data import RayDataExecutor

            return RayDataExecutor()
        from curator.executors.ray_actor_pool import RayActorPoolExecutor

        return RayActorPoolExecutor()
    except ImportError as e:  # pragma: no cover - the Ray executors ship with core
        pytest.skip(f"Ray executor {kind} is not available: {e}")


@pytest.mark.parametrize("kind", ["ray_data", "ray_actor_pool"])
def test_exact_and_fuzzy_on_ray(ray_cluster, tmp_path, monkeypatch, kind) -> None:
    from curator.dedup import ExactDeduplicationWorkflow
    from curator_text.dedup import FuzzyDeduplicationWorkflow

    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    texts, root = make_corpus(n_orig=60, n_exact=4, n_near=4, n_short=4)
    ids = write_parts(texts, tmp_path / "in", 3)
    fuzzy = FuzzyDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "fz"),
                                       perform_removal=True, executor=_executor(kind)).run()
    assert set(pq.read_table(fuzzy.duplicates_path).column("id").to_pylist()) == \
        expected_removed(root, ids)
    kept = pq.read_table(tmp_path / "fz" / "deduplicated").column("id").to_pylist()
    assert len(kept) == len(ids) - 8
    exact = ExactDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "ex"),
                                       executor=_executor(kind)).run()
    assert exact.num_duplicates == 4


def test_semantic_on_ray(ray_cluster, tmp_path, monkeypatch) -> None:
    from curator.dedup import SemanticDeduplicationWorkflow

    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 8)).astype(np.float32)
    x[50:] = x[:10] * 2.0
    (tmp_path / "in").mkdir()
    for p in range(2):
        sl = slice(30 * p, 30 * (p + 1))
        pq.write_table(pa.table({"id": list(range(60))[sl],
                                 "embeddings": pa.array(list(x[sl]), pa.list_(pa.float32()))}),
                       tmp_path / "in" / f"p{p}.parquet")
    res = SemanticDeduplicationWorkflow(str(tmp_path / "in"), str(tmp_path / "out"), n_clusters=4,
                                        executor=_executor("ray_data")).run()
    assert sorted(pq.read_table(res.duplicates_path).column("id").to_pylist()) == list(
        range(50, 60))
