"""Lazy materialisation: bytes by byte range, tar member, path, fsspec URL or HTTP URL; a failure
fills materialize_error and never raises."""

import io
import tarfile

import fsspec
import pyarrow as pa
from curator_interleaved import INTERLEAVED_SCHEMA, InterleavedBatch
from curator_interleaved.utils.materialization import (
    materialize_task_binary_content,
)


def _image_row(ref, **kw):
    return {"sample_id": "s", "position": kw.pop("position", 0), "modality": "image",
            "content_type": "image/jpeg", "text_content": None, "binary_content": None,
            "source_ref": ref, "materialize_error": None, **kw}


def _batch(rows):
    return InterleavedBatch(dataset_name="d", data=pa.Table.from_pylist(rows,
                                                                        schema=INTERLEAVED_SCHEMA))


def test_every_locator_kind(tmp_path, http_dir):
    www, base = http_dir
    (www / "web.bin").write_bytes(b"from-http")
    (tmp_path / "plain.bin").write_bytes(b"from-file")
    with fsspec.open("memory://bucket/mem.bin", "wb") as fh:
        fh.write(b"from-memory")
    tar = tmp_path / "a.tar"
    with tarfile.open(tar, "w") as tf:
        for name, data in (("x.jpg", b"member-x"), ("y.jpg", b"member-y")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    with tarfile.open(tar) as tf:
        y = tf.getmember("y.jpg")
    ref = InterleavedBatch.build_source_ref
    rows = [_image_row(ref(str(tar), "x.jpg"), position=0),                     # tar member
            _image_row(ref(str(tar), "y.jpg", y.offset_data, y.size), position=1),  # range
            _image_row(ref(str(tmp_path / "plain.bin"), None), position=2),     # whole file
            _image_row(ref("memory://bucket/mem.bin", None), position=3),       # fsspec
            _image_row(ref(f"{base}/web.bin", None), position=4),               # http
            _image_row(ref(f"{base}/absent.bin", None), position=5),            # 404
            _image_row(ref(str(tar), "nope.jpg"), position=6),                  # no member
            _image_row(None, position=7)]                                       # no locator
    out = materialize_task_binary_content(_batch(rows)).to_pyarrow().to_pylist()
    assert [r["binary_content"] for r in out[:5]] == [b"member-x", b"member-y", b"from-file",
                                                     b"from-memory", b"from-http"]
    assert all(r["materialize_error"] is None for r in out[:5])
    assert "404" in out[5]["materialize_error"]
    assert out[6]["materialize_error"] == "missing member 'nope.jpg'"
    assert out[7]["materialize_error"] == "missing path"


def test_rows_with_bytes_and_other_modalities_untouched(tmp_path):
    rows = [_image_row(None, binary_content=b"kept"),
            {**_image_row(None, position=1), "modality": "text", "text_content": "t"}]
    batch = _batch(rows)
    assert materialize_task_binary_content(batch) is batch  # nothing to fetch
