"""Issue 31 item 6: a DocumentBatch that failed for good is kept as Parquet plus a JSON document
naming its registered class, and replay rebuilds the batch from them (no pickle)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from curator import Pipeline, ProcessingStage
from curator_text import DocumentBatch


@dataclass
class CountWordsUnlessBroken(ProcessingStage):
    broken: str = ""
    name: str = "CountWords"

    def process(self, task: DocumentBatch) -> DocumentBatch:
        if os.path.exists(self.broken):
            raise OSError(28, "No space left on device")
        table = task.to_pyarrow()
        words = [len(t.split()) for t in table.column("text").to_pylist()]
        return task.derive(table.append_column("words", pa.array(words)))


def test_failed_document_batch_is_kept_as_parquet_and_replayed(tmp_path):
    table = pa.table({"id": ["a", "b"], "text": ["one two", "three four five"]})
    batch = DocumentBatch(task_id="doc0", dataset_name="web", data=table,
                          metadata={"source_files": ["in.jsonl"]})
    broken, rej = tmp_path / "broken", tmp_path / "rej"
    broken.touch()
    pipe = Pipeline("t", stages=[CountWordsUnlessBroken(str(broken))])
    first = pipe.run(initial_tasks=[batch], rejected_dir=str(rej), summary=False,
                     raise_on_failure=False)
    assert not first.ok
    kept = sorted(p.name for p in (rej / "CountWords").iterdir())
    assert kept == ["doc0.failed.jsonl", "doc0.failed.parquet", "doc0.failed.task.json"]
    assert pq.read_table(rej / "CountWords" / "doc0.failed.parquet").equals(table)
    doc = json.loads((rej / "CountWords" / "doc0.failed.task.json").read_text())
    assert doc["task_class"] == "text:DocumentBatch" and doc["stage"] == "CountWords"

    broken.unlink()
    replayed = pipe.replay(str(rej), summary=False)
    assert replayed.ok and isinstance(replayed[0], DocumentBatch)
    out = replayed[0].to_pyarrow()
    assert out.column("words").to_pylist() == [2, 3] and out.column("id").to_pylist() == ["a", "b"]
    assert replayed[0].metadata["source_files"] == ["in.jsonl"]
