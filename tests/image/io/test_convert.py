import numpy as np
import pandas as pd
from curator.migrate import migrate_source
from curator_image import ConvertImageBatchToDocumentBatchStage, ImageBatch, ImageObject
from curator_text.tasks import DocumentBatch


def test_image_batch_becomes_a_document_batch():
    task = ImageBatch(task_id="t", dataset_name="d", data=[
        ImageObject(image_id="a", caption="x", aesthetic_score=0.5,
                    embedding=np.ones(2, np.float32)),
        ImageObject(image_id="b")])
    task.metadata["source_files"] = ["s.tar"]
    out = ConvertImageBatchToDocumentBatchStage(
        fields=["image_id", "caption", "aesthetic_score", "no_such"]).process(task)
    assert isinstance(out, DocumentBatch) and out.task_id == "t" and out.dataset_name == "d"
    assert out.metadata["source_files"] == ["s.tar"]
    assert out.data["image_id"].tolist() == ["a", "b"]
    assert out.data["caption"][0] == "x" and pd.isna(out.data["caption"][1])
    assert out.data["no_such"].isna().all()
    assert ConvertImageBatchToDocumentBatchStage().process(task).data.columns.tolist() == [
        "image_id"]


def test_nemo_imports_migrate():
    res = migrate_source(
        "from nemo_curator.stages.image.io.convert import ConvertImageBatchToDocumentBatchStage\n"
        "from nemo_curator.stages.image.deduplication.removal import "
        "ImageDuplicatesRemovalStage\n", "s.py")
    assert not res.unmapped and "nemo_curator" not in res.text
    exec(res.text, {})
