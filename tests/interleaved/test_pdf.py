"""PDFs: generated files of every awkward shape (known coordinates, two columns, image-only,
empty, rotated, encrypted, damaged xref, not a PDF): every page accounted; text and images in
reading order at their positions; NeMo's partitioning and page rendering."""

import io
import json

import numpy as np
import pytest
from curator import Pipeline
from curator_interleaved.pdf import (
    PDFPartitioningStage,
    PDFPreprocessStage,
    PDFReader,
    PDFReaderStage,
)
from curator_interleaved.pdf.extract import extract_pdf
from curator_interleaved.pdf.testing import damage_xref, make_pdf, rotate_pages
from curator_interleaved.testing import encode_image, make_image
from PIL import Image

from .conftest import file_task

JPEG = encode_image(make_image(60, 40, seed=3))
PNG = encode_image(make_image(30, 30, seed=4), "PNG")

TWO_COLUMNS = [
    ("text", 50, 60, "A heading over both columns of the page"),
    ("text", 50, 120, "left one"), ("text", 50, 134, "left two"),
    ("text", 320, 120, "right one"), ("text", 320, 134, "right two"),
    ("image", 50, 200, 120, 80, JPEG),
    ("image", 320, 200, 90, 90, PNG),
    ("text", 50, 330, "left after image"),
    ("text", 320, 330, "right after image"),
]


def _segments(data, **kw):
    return [(p.page, s.modality, s.text, (s.x0, s.y0, s.x1, s.y1))
            for p in extract_pdf(data, **kw) for s in p.segments]


def test_known_coordinates_reading_order_and_positions():
    segs = _segments(make_pdf([TWO_COLUMNS]))
    assert [(m, t) for _, m, t, _ in segs] == [
        ("text", "A heading over both columns of the page"),
        ("text", "left one\nleft two"), ("text", "right one\nright two"),
        ("image", None), ("image", None),
        ("text", "left after image"), ("text", "right after image")]
    images = [box for _, m, _, box in segs if m == "image"]
    assert images == [(50.0, 200.0, 170.0, 280.0), (320.0, 200.0, 410.0, 290.0)]
    for (_, _m, _, box), x, baseline in zip(
            [s for s in segs if s[1] == "text"], (50, 50, 320, 50, 320), (60, 120, 120, 330, 330),
            strict=True):
        assert abs(box[0] - x) < 1.5  # glyph box starts at the pen position
        assert box[1] < baseline <= box[3] + 0.5 or abs(box[3] - baseline) < 3.5


def test_images_come_back_as_stored():
    pages = extract_pdf(make_pdf([[("image", 10, 10, 60, 40, JPEG)]]))
    [seg] = pages[0].segments
    assert seg.content_type == "image/jpeg" and seg.data == JPEG  # the stored JPEG itself
    [seg] = extract_pdf(make_pdf([[("image", 10, 10, 30, 30, PNG)]]))[0].segments
    assert seg.content_type == "image/png"
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(seg.data)).convert("RGB")),
                          np.asarray(Image.open(io.BytesIO(PNG)).convert("RGB")))


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_rotated_pages_use_displayed_coordinates(degrees):
    import pypdfium2 as pdfium

    data = rotate_pages(make_pdf([[("image", 50, 200, 120, 80, JPEG)]]), degrees)
    [seg] = extract_pdf(data)[0].segments
    # oracle: where PDFium's renderer draws the image on the displayed page (1 px = 1 pt)
    page = pdfium.PdfDocument(data)[0]
    pixels = np.asarray(page.render(scale=1).to_pil().convert("L"))
    ys, xs = np.nonzero(pixels < 250)
    assert abs(seg.x0 - xs.min()) <= 1 and abs(seg.x1 - (xs.max() + 1)) <= 1
    assert abs(seg.y0 - ys.min()) <= 1 and abs(seg.y1 - (ys.max() + 1)) <= 1


def test_every_page_accounted_in_the_reader(tmp_path):
    files = {
        "mixed.pdf": make_pdf([TWO_COLUMNS, [("image", 0, 0, 600, 800, JPEG)], []]),
        "secret.pdf": make_pdf([[("text", 50, 50, "classified")]], password="pw"),
        "damaged.pdf": damage_xref(make_pdf([[("text", 50, 50, "still here")],
                                             [("text", 50, 50, "page two")]])),
        "junk.pdf": b"%PDF-1.4 this is not really a pdf",
        "rotated.pdf": rotate_pages(make_pdf([[("text", 50, 50, "sideways")]]), 90),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    stage = PDFReaderStage()
    batch = stage.process(file_task(sorted(tmp_path.glob("*.pdf"))))
    rejected = sorted((r.record["path"].rsplit("/", 1)[1], r.record.get("page"), r.reason)
                      for r in stage.drain_rejected())
    assert rejected == [("junk.pdf", None, "unreadable_pdf"), ("mixed.pdf", 2, "empty_page"),
                        ("secret.pdf", None, "encrypted_pdf")]
    rows = batch.to_pyarrow().to_pylist()
    pages = {(r["sample_id"], r["page"]) for r in rows if r["position"] >= 0}
    assert pages == {("mixed", 0), ("mixed", 1), ("damaged", 0), ("damaged", 1),
                     ("rotated", 0)}
    meta = {r["sample_id"]: r["num_pages"] for r in rows if r["position"] == -1}
    assert meta == {"mixed": 3, "damaged": 2, "rotated": 1}
    image_only = [r for r in rows if r["sample_id"] == "mixed" and r["page"] == 1]
    assert [r["modality"] for r in image_only] == ["image"]
    assert (image_only[0]["x0"], image_only[0]["y0"], image_only[0]["x1"],
            image_only[0]["y1"]) == (0.0, 0.0, 600.0, 800.0)
    positions = [r["position"] for r in rows if r["sample_id"] == "mixed" and r["position"] >= 0]
    assert positions == list(range(len(positions)))
    # with the password the encrypted file reads
    ok = PDFReaderStage(passwords={"secret.pdf": "pw"})
    got = ok.process(file_task([tmp_path / "secret.pdf"])).to_pyarrow().to_pylist()
    assert [r["text_content"] for r in got if r["position"] >= 0] == ["classified"]


def test_nemo_partitioning_and_page_rendering(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "a.pdf").write_bytes(make_pdf([TWO_COLUMNS, [("text", 10, 20, "p2")]]))
    (pdfs / "b.pdf").write_bytes(make_pdf([[("text", 10, 20, "x")]], password="pw"))
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join([json.dumps({"file_name": "a.pdf", "url": "http://a"}),
                                   "not json",
                                   json.dumps({"cc_pdf_file_names": ["b.pdf", "c.pdf"],
                                               "url": "http://b"})]) + "\n")
    part = PDFPartitioningStage(manifest_path=str(manifest), pdfs_per_task=2)
    tasks = part.process(None)
    assert [len(t.data) for t in tasks] == [2, 1]
    assert [r.reason for r in part.drain_rejected()] == ["malformed_manifest_line"]
    pre = PDFPreprocessStage(pdf_dir=str(pdfs), dpi=72)
    out = [pre.process(t) for t in tasks]
    rows = out[0].to_pyarrow().to_pylist()
    assert [(r["sample_id"], r["position"], r["modality"]) for r in rows] == [
        ("a", 0, "page_image"), ("a", 1, "page_image")]
    assert Image.open(io.BytesIO(rows[0]["binary_content"])).size == (600, 800)
    assert out[1] is None
    assert sorted(r.reason for r in pre.drain_rejected()) == ["encrypted_pdf", "unreadable_pdf"]


def test_pdf_reader_in_a_pipeline(tmp_path):
    (tmp_path / "doc.pdf").write_bytes(make_pdf([TWO_COLUMNS]))
    [batch] = Pipeline("pdf", stages=[PDFReader(file_paths=str(tmp_path))]).run(summary=False)
    assert batch.num_items == 1 and batch.count(modality="image") == 2


def test_pdfium_is_used_by_one_thread_at_a_time():
    """PDFium is not thread-safe and the local executor runs a stage in several threads:
    extraction and rendering from many threads at once give the single-thread results (without
    the module's lock such runs crashed the process with SIGABRT)."""
    from concurrent.futures import ThreadPoolExecutor

    from curator_interleaved.pdf.extract import render_pdf_pages

    data = make_pdf([TWO_COLUMNS, [("image", 10, 10, 60, 40, JPEG)]])
    want = [[s.text for s in p.segments] for p in extract_pdf(data)]

    def both(_):
        got = [[s.text for s in p.segments] for p in extract_pdf(data)]
        return got, [im.size for im in render_pdf_pages(data, dpi=36)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(both, range(100)))
    assert all(got == want and len(sizes) == 2 for got, sizes in results)
