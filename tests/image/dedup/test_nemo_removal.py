import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator_image import ImageBatch, ImageDuplicatesRemovalStage, ImageObject


def batch(ids):
    return ImageBatch(task_id="t", dataset_name="d", data=[ImageObject(image_id=i) for i in ids])


def test_removes_ids_listed_in_a_directory_of_parquets(tmp_path):
    pq.write_table(pa.table({"id": ["b"]}), tmp_path / "part-0.parquet")
    pq.write_table(pa.table({"id": pa.array([], pa.string())}), tmp_path / "part-1.parquet")
    pq.write_table(pa.table({"id": ["d"], "reason": ["semantic"]}), tmp_path / "part-2.parquet")
    stage = ImageDuplicatesRemovalStage(str(tmp_path), duplicate_id_field="id", verbose=True,
                                        num_workers_per_node=1)
    stage.setup()
    assert [i.image_id for i in stage.process(batch("abcd")).data] == ["a", "c"]
    assert sorted(r.reason for r in stage.drain_rejected()) == ["listed_duplicate",
                                                                "semantic_duplicate"]


def test_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no .parquet files"):
        ImageDuplicatesRemovalStage(str(tmp_path)).setup()
    pq.write_table(pa.table({"image_id": ["b"]}), tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="set duplicate_id_field"):
        ImageDuplicatesRemovalStage(str(tmp_path)).setup()
    stage = ImageDuplicatesRemovalStage(str(tmp_path / "x.parquet"), duplicate_id_field="image_id")
    stage.setup()
    assert [i.image_id for i in stage.process(batch("ab")).data] == ["a"]
