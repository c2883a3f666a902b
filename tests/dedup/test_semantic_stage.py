"""SemanticDeduplicationStage: semantic dedup as one stage of a linear pipeline, on the local and
the Ray executors, over DocumentBatch tasks (Arrow) and ImageBatch-like tasks (lists of records).

The data: 3 groups of near-duplicate embeddings (a base vector plus 1e-4 noise, spread over
different tasks) and unique random vectors. Exactly one item per group must survive, every
unique item must survive, and the count matches ``find_semantic_duplicates`` on the same data.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest
from curator import Pipeline, ProcessingStage, Task
from curator.dedup import SemanticDeduplicationStage, find_semantic_duplicates
from curator.errors import ConfigError
from curator_text import DocumentBatch

DIM, GROUPS, COPIES, UNIQUES, TASKS = 16, 3, 3, 12, 4


def _items() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    items = []
    for g in range(GROUPS):
        base = rng.normal(size=DIM)
        items += [(f"g{g}_{c}", base + rng.normal(scale=1e-4, size=DIM)) for c in range(COPIES)]
    items += [(f"u{u}", rng.normal(size=DIM)) for u in range(UNIQUES)]
    order = rng.permutation(len(items))  # a group's copies land in different tasks
    return [items[i] for i in order]


class Source(ProcessingStage[Task, Task]):
    """Emits TASKS tasks: DocumentBatch (Arrow) or plain Tasks holding lists of records."""

    name = "Source"

    def __init__(self, kind: str) -> None:
        self.kind = kind

    @property
    def is_source(self) -> bool:
        return True

    def process(self, task: Task) -> list[Task]:
        items = _items()
        out: list[Task] = []
        for t in range(TASKS):
            part = items[t::TASKS]
            if self.kind == "arrow":
                table = pa.table({"doc_id": [i for i, _ in part],
                                  "embedding": [e.tolist() for _, e in part],
                                  "text": [f"text of {i}" for i, _ in part]})
                out.append(DocumentBatch(task_id=f"t{t}", dataset_name="d", data=table))
            else:
                recs = [{"image_id": i, "image_embedding": e.astype(np.float32)} for i, e in part]
                out.append(Task(task_id=f"t{t}", dataset_name="d", data=recs))
        return out


def _kept_ids(results: list[Task]) -> list[str]:
    ids: list[str] = []
    for t in results:
        if hasattr(t, "to_pyarrow"):
            ids += t.to_pyarrow().column("doc_id").to_pylist()
        else:
            ids += [r["image_id"] for r in t.data]
    return ids


def _check(kept: list[str]) -> None:
    assert len(kept) == len(set(kept))
    for g in range(GROUPS):
        assert sum(k.startswith(f"g{g}_") for k in kept) == 1, kept
    assert sorted(k for k in kept if k.startswith("u")) == sorted(f"u{u}" for u in range(UNIQUES))
    emb = np.stack([e for _, e in _items()])
    assert len(kept) == len(emb) - int(find_semantic_duplicates(emb, eps=0.01, n_clusters=4).sum())


def _pipeline(kind: str, spill_dir: str | None, field_names: tuple[str, str]) -> Pipeline:
    return Pipeline(name="semdedup", stages=[
        Source(kind),
        SemanticDeduplicationStage(id_field=field_names[0], embedding_field=field_names[1],
                                   n_clusters=4, eps=0.01, spill_dir=spill_dir),
    ])


@pytest.mark.parametrize("kind,fields", [("arrow", ("doc_id", "embedding")),
                                         ("records", ("image_id", "image_embedding"))])
def test_local_executor(kind: str, fields: tuple[str, str], tmp_path) -> None:
    spill = tmp_path / "spill"
    pipeline = _pipeline(kind, str(spill) if kind == "arrow" else None, fields)
    results = pipeline.run()
    assert results.ok
    _check(_kept_ids(results))
    assert sum(t.metadata["semantic_duplicates_removed"] for t in results) == GROUPS * (COPIES - 1)
    if kind == "arrow":  # the other columns travel with the kept rows
        assert all(t.to_pyarrow().column_names == ["doc_id", "embedding", "text"] for t in results)
        # used (a run folder was made there), then cleaned up: no files, no spill folders
        assert os.path.isdir(spill) and list(os.walk(spill)) == [(str(spill), [], [])]
    else:  # the default temporary spill folder is removed once empty
        (stage,) = [s for s in pipeline.stages if hasattr(s, "spill_dir")]
        assert stage.spill_dir and not os.path.exists(stage.spill_dir)


def test_missing_field_is_named(tmp_path) -> None:
    results = _pipeline("arrow", str(tmp_path / "spill"), ("nope", "embedding")).run(
        raise_on_failure=False)
    assert not results.ok  # the failed tasks are kept whole in the rejected sink, not lost


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ConfigError, match="eps"):
        SemanticDeduplicationStage(id_field="id", embedding_field="e", eps=3.0)


@pytest.mark.ray
@pytest.mark.parametrize("executor", ["ray_data", "ray_actor_pool"])
def test_ray_executors(executor: str, ray_cluster, tmp_path) -> None:
    results = _pipeline("arrow", str(tmp_path / "spill"), ("doc_id", "embedding")).run(executor)
    assert results.ok
    _check(_kept_ids(results))
