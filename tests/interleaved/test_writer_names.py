"""Writer file names: the task id; a task built without one (NeMo-style, by hand) is named by a
hash of its source files or a UUID, so two such tasks never overwrite each other's file."""

import pyarrow as pa
import pyarrow.parquet as pq
from curator_interleaved import (
    InterleavedBatch,
    InterleavedObelicsWriterStage,
    InterleavedParquetWriterStage,
)


def _batch(sid, metadata=None, task_id=""):
    table = pa.table({"sample_id": [sid, sid], "position": pa.array([-1, 0], pa.int32()),
                      "modality": ["metadata", "text"], "text_content": [None, f"text {sid}"]})
    return InterleavedBatch(task_id=task_id, dataset_name="d", data=table,
                            metadata=metadata or {})


def test_tasks_without_ids_never_overwrite_each_other(tmp_path):
    for writer_cls in (InterleavedParquetWriterStage, InterleavedObelicsWriterStage):
        out = tmp_path / writer_cls.__name__
        writer = writer_cls(path=str(out), materialize_on_write=False)
        a = writer.process(_batch("a", {"source_files": ["/in/a.tar"]})).data[0]
        b = writer.process(_batch("b", {"source_files": ["/in/b.tar"]})).data[0]
        c = writer.process(_batch("c")).data[0]
        d = writer.process(_batch("d")).data[0]
        assert len({a, b, c, d}) == 4
        assert not any(p.rsplit("/", 1)[-1].startswith(".") for p in (a, b, c, d))
        # the same source files: the same name on every run
        again = writer.process(_batch("a", {"source_files": ["/in/a.tar"]})).data[0]
        assert again == a
        assert len(list(out.glob("*.parquet"))) == 4
        named = writer.process(_batch("e", task_id="part_7")).data[0]
        assert named.endswith("/part_7.parquet") and pq.read_table(named).num_rows >= 1
