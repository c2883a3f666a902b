import io
import os
import tarfile

import numpy as np
import pyarrow.parquet as pq
from curator import Pipeline
from curator_image import ImageBatch, ImageObject, ImageReaderStage, ImageWriterStage
from curator_image.testing import make_image

from ..conftest import jpg


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs if not f.startswith("."))


def test_roundtrip_tar_and_parquet_with_deterministic_names(shards, tmp_path):
    out = str(tmp_path / "out")
    stages = [ImageReaderStage(shards, task_batch_size=4), ImageWriterStage(output_dir=out)]
    first = Pipeline("w", stages=stages).run()
    names = _files(out)
    assert len(names) == 8 and all(n.endswith((".tar", ".parquet")) for n in names)
    stages[-1].mode = "overwrite"  # a re-run into a used directory must say so
    Pipeline("w", stages=stages).run()
    assert _files(out) == names  # a re-run overwrites, never duplicates
    written = sorted(f for t in first for f in t.data)
    assert written == sorted(os.path.join(out, n) for n in names)
    back = Pipeline("r", stages=[ImageReaderStage(out)]).run()
    before = {i.image_id: i for t in Pipeline("r", stages=[ImageReaderStage(shards)]).run()
              for i in t.data}
    after = {i.image_id: i for t in back for i in t.data}
    assert before.keys() == after.keys()
    for key, img in after.items():
        assert img.raw == before[key].raw and img.caption == before[key].caption
    table = pq.read_table([n for n in written if n.endswith(".parquet")][0])
    assert {"image_id", "content_hash", "caption", "aesthetic_score", "embedding"} <= set(
        table.column_names)


def test_embeddings_and_scores_survive_a_roundtrip(tmp_path):
    img = ImageObject(image_id="k1", image_data=make_image(0), caption="c",
                      embedding=np.arange(4, dtype=np.float32), aesthetic_score=0.7)
    task = ImageBatch(task_id="b0", dataset_name="d", data=[img])
    out = ImageWriterStage(output_dir=str(tmp_path)).process(task)
    assert [os.path.basename(p) for p in out.data] == ["b0.tar", "b0.parquet"]
    (back,) = Pipeline("r", stages=[ImageReaderStage(str(tmp_path))]).run()
    got = back.data[0]
    np.testing.assert_array_equal(got.embedding, np.arange(4, dtype=np.float32))
    assert got.aesthetic_score == 0.7 and got.image_data.shape == (48, 40, 3)
    row = pq.read_table(out.data[1]).to_pylist()[0]
    assert row["embedding"] == [0.0, 1.0, 2.0, 3.0] and row["content_hash"]


def test_unsafe_ids_never_escape_the_output_directory(tmp_path):
    out = tmp_path / "deep" / "out"
    imgs = [ImageObject(image_id=i, raw=jpg(n)) for n, i in
            enumerate(["../../evil", "/etc/evil", "a/../../b", "ok"])]
    task = ImageBatch(task_id="../../task", dataset_name="d", data=imgs)
    result = ImageWriterStage(output_dir=str(out)).process(task)
    assert _files(tmp_path) == sorted(os.path.join("deep", "out", n) for n in
                                      ["task.tar", "task.parquet"])
    assert all(os.path.realpath(p).startswith(str(out)) for p in result.data)
    with tarfile.open(out / "task.tar") as tar:
        names = tar.getnames()
    assert len(names) == 8 and all(not n.startswith("/") and ".." not in n.split("/")
                                   for n in names)
    # extracting the written shard stays inside the target directory
    with tarfile.open(out / "task.tar") as tar:
        tar.extractall(tmp_path / "x", filter="data")
    assert len(_files(tmp_path / "x")) == 8


def test_encodes_pixels_when_no_bytes_are_kept(tmp_path):
    img = ImageObject(image_id="p", image_data=make_image(1))
    task = ImageBatch(task_id="t", dataset_name="d", data=[img])
    ImageWriterStage(output_dir=str(tmp_path)).process(task)
    with tarfile.open(tmp_path / "t.tar") as tar:
        data = tar.extractfile("p.jpg").read()
    from PIL import Image

    assert Image.open(io.BytesIO(data)).size == (40, 48)


def test_contract(tmp_path):
    from curator.testing import check_stage_contract

    task = ImageBatch(task_id="c", dataset_name="d", data=[ImageObject(image_id="a", raw=jpg(0))])
    (out,) = check_stage_contract(ImageWriterStage(output_dir=str(tmp_path)), task)
    assert all(os.path.exists(p) for p in out.data)


def test_writes_to_fsspec_urls(shards):
    import fsspec

    out = "memory://image-writer-test/out"
    result = Pipeline("w", stages=[ImageReaderStage(shards[:1]),
                                   ImageWriterStage(output_dir=out)]).run()
    (task,) = list(result)
    fs = fsspec.filesystem("memory")
    assert sorted(f for f in fs.ls("/image-writer-test/out", detail=False)
                  if not f.rsplit("/", 1)[-1].startswith(".")) == [
        "/image-writer-test/out/" + os.path.basename(p) for p in sorted(task.data)]
    back = Pipeline("r", stages=[ImageReaderStage(out + "/")]).run()
    assert sum(len(t.data) for t in back) == 6


def test_tar_layout_is_webdataset_tarwriters_byte_for_byte(monkeypatch):
    import time

    import webdataset as wds
    from curator_image.io.tar_write import TarShardWriter

    monkeypatch.setattr(time, "time", lambda: 1700000000.25)  # both stamp the write time
    samples = [{"__key__": "k0", "jpg": jpg(0), "json": b'{"a": 1}', "txt": "caption"},
               {"__key__": "dir/k1", "png": b"\x89PNG", "npy": b"\x93NUMPY", "__url__": "u"}]
    ours, theirs = io.BytesIO(), io.BytesIO()
    for writer in (TarShardWriter(ours), wds.TarWriter(theirs)):
        for sample in samples:
            writer.write(sample)
        writer.close()
    assert ours.getvalue() == theirs.getvalue()


def test_writing_does_not_import_torch(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from curator_image import ImageBatch, ImageObject, ImageWriterStage\n"
            "from curator.stages.lifecycle import ensure_setup\n"
            f"w = ensure_setup(ImageWriterStage(output_dir={str(tmp_path)!r}))\n"
            "w.process(ImageBatch('b', 'd', [ImageObject('k', raw=b'x', caption='c')]))\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
