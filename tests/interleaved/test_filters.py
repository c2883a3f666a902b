"""The five filters: NeMo Curator's per-row and per-document rules; removed rows split to the
rejected sink on request; unreadable images always rejected with their reason."""

import pyarrow as pa
import pytest
from curator_interleaved import (
    INTERLEAVED_SCHEMA,
    InterleavedAspectRatioFilterStage,
    InterleavedBatch,
    InterleavedBlurFilterStage,
    InterleavedCLIPScoreFilterStage,
    InterleavedImageToTextRatioFilterStage,
    InterleavedQRCodeFilterStage,
)
from curator_interleaved.testing import encode_image, make_image, make_tiny_clip_dir


def _row(sid, pos, modality, text=None, data=None, ref=None, **extra):
    return {"sample_id": sid, "position": pos, "modality": modality,
            "content_type": {"text": "text/plain", "image": "image/png",
                             "metadata": "application/json"}.get(modality),
            "text_content": text, "binary_content": data, "source_ref": ref,
            "materialize_error": None, **extra}


def _batch(rows):
    schema = pa.schema([*INTERLEAVED_SCHEMA, pa.field("note", pa.string())])
    return InterleavedBatch(task_id="b", dataset_name="d", data=pa.Table.from_pylist(
        [{"note": None, **r} for r in rows], schema=schema))


def _png(w, h, sharp=True):
    return encode_image(make_image(w, h, sharp=sharp), "PNG")


def _rows(batch):
    return [(r["sample_id"], r["position"], r["modality"]) for r in batch.to_pyarrow().to_pylist()]


def test_aspect_ratio_per_row_positions_renumbered_and_split():
    batch = _batch([_row("a", -1, "metadata", note="keep me"), _row("a", 0, "text", "hi there"),
                    _row("a", 1, "image", data=_png(60, 20)),   # 3.0: out
                    _row("a", 2, "image", data=_png(40, 30)),   # 1.33: in
                    _row("b", -1, "metadata"), _row("b", 0, "image", data=_png(10, 40))])  # out
    stage = InterleavedAspectRatioFilterStage(split=True)
    out = stage.process(batch)
    assert _rows(out) == [("a", -1, "metadata"), ("a", 0, "text"), ("a", 1, "image")]
    assert out.to_pyarrow().schema.field("position").type == pa.int32()
    assert out.to_pyarrow()["note"][0].as_py() == "keep me"
    rejected = stage.drain_rejected()
    assert sorted((r.kind, r.record["sample_id"], r.record["position"]) for r in rejected) == [
        ("filtered", "a", 1), ("filtered", "b", -1), ("filtered", "b", 0)]
    assert {r.record["score"] for r in rejected if r.record["position"] == 1} == {3.0}
    # without split: removed silently by design, nothing in the sink
    plain = InterleavedAspectRatioFilterStage()
    assert _rows(plain.process(batch)) == _rows(out) and plain.drain_rejected() == []


def test_unreadable_images_are_rejected_with_reasons_not_filtered(tmp_path):
    from curator_interleaved import InterleavedBatch as B

    batch = _batch([_row("a", -1, "metadata"), _row("a", 0, "text", "words here"),
                    _row("a", 1, "image", data=b"not an image"),
                    _row("a", 2, "image", ref=B.build_source_ref(str(tmp_path / "gone.png"),
                                                                 None)),
                    _row("a", 3, "image", data=_png(40, 30)),
                    _row("a", 4, "video", text="?")])
    for stage in (InterleavedAspectRatioFilterStage(), InterleavedBlurFilterStage(
            score_threshold=0.0), InterleavedQRCodeFilterStage()):
        out = stage.process(batch)
        assert _rows(out) == [("a", -1, "metadata"), ("a", 0, "text"), ("a", 1, "image")]
        reasons = sorted((r.record["position"], r.reason) for r in stage.drain_rejected())
        assert reasons == [(1, "undecodable_image"), (2, "image_unavailable"),
                           (4, "invalid_row")], type(stage).__name__


def test_blur_keeps_sharp_drops_smooth():
    batch = _batch([_row("a", -1, "metadata"), _row("a", 0, "image", data=_png(64, 64)),
                    _row("a", 1, "image", data=_png(64, 64, sharp=False))])
    out = InterleavedBlurFilterStage().process(batch)
    assert _rows(out) == [("a", -1, "metadata"), ("a", 0, "image")]


def test_qrcode_drops_images_covered_by_a_code():
    import cv2
    import numpy as np

    code = cv2.QRCodeEncoder.create().encode("https://example.org/curator")
    code = cv2.resize(code, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    code = np.pad(code, 32, constant_values=255)
    qr_png = encode_image(np.stack([code] * 3, axis=-1).astype("uint8"), "PNG")
    batch = _batch([_row("a", -1, "metadata"), _row("a", 0, "image", data=qr_png),
                    _row("a", 1, "image", data=_png(64, 64))])
    stage = InterleavedQRCodeFilterStage(split=True)
    out = stage.process(batch)
    assert _rows(out) == [("a", -1, "metadata"), ("a", 0, "image")]
    [rec] = stage.drain_rejected()
    assert rec.record["position"] == 0 and rec.record["score"] > 0.3


def test_image_to_text_ratio_is_per_document():
    words = " ".join(["w"] * 10)
    batch = _batch([_row("a", -1, "metadata"), _row("a", 0, "text", words),
                    _row("a", 1, "image", data=b"x"),                        # 1/10
                    _row("b", -1, "metadata"), _row("b", 0, "text", "two words"),
                    _row("b", 1, "image", data=b"x"), _row("b", 2, "image", data=b"x")])  # 2/2
    stage = InterleavedImageToTextRatioFilterStage(min_ratio=0.0, max_ratio=0.5, split=True)
    out = stage.process(batch)
    assert {r[0] for r in _rows(out)} == {"a"}
    assert sorted(r.record["position"] for r in stage.drain_rejected()) == [-1, 0, 1, 2]


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return make_tiny_clip_dir(str(tmp_path_factory.mktemp("clip")))


def test_clip_score_needs_a_matching_text_in_the_document(clip_dir):
    import numpy as np
    from curator_image.models.clip import ClipImageEmbedder
    from curator_image.models.clip_text import ClipTextEmbedder

    imgs = [make_image(40, 40, seed=s) for s in range(3)]
    texts = ["a cat", "the dog"]
    scores = ClipImageEmbedder(clip_dir).embed(imgs) @ ClipTextEmbedder(clip_dir).embed(texts).T
    best = scores.max(axis=1)
    threshold = float(np.median(best))
    batch = _batch([_row("a", -1, "metadata"), _row("a", 0, "text", texts[0]),
                    *[_row("a", 1 + k, "image", data=encode_image(im, "PNG"))
                      for k, im in enumerate(imgs)],
                    _row("a", 4, "text", texts[1]),
                    _row("b", -1, "metadata"), _row("b", 0, "image", data=encode_image(imgs[0]))])
    stage = InterleavedCLIPScoreFilterStage(model_dir=clip_dir, min_score=threshold, split=True)
    out = stage.process(batch)
    kept = [k for k in range(3) if best[k] >= threshold]
    assert [r for r in _rows(out) if r[2] == "image"] == [("a", 1 + i, "image")
                                                          for i in range(len(kept))]
    assert "b" not in {r[0] for r in _rows(out)}  # an image without any text in its document
    stage.teardown()
