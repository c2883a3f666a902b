"""PDF -> ordered text blocks and embedded images with positions, on the CPU (pypdfium2, the
PDFium library NeMo Curator renders pages with).

Coordinates are PDF points in the page as displayed (its ``/Rotate`` applied), origin at the top
left: ``x0, y0, x1, y1``. Text comes from PDFium's text page as line rectangles; images are the
page's image objects at their placed bounds (their own bytes: JPEG as stored, else PNG).

Reading order is a recursive XY cut: a page is cut at horizontal gaps (bands, top to bottom),
each band at vertical gaps (columns, left to right), and so on; what no gap separates is read
top to bottom, left to right. Consecutive lines of one column closer than a line apart form a
block (blocks are formed before the cut). So a two-column page reads its left column, then its right; a heading spanning both
columns comes first.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PDFSegment", "PageResult", "extract_pdf", "open_pdf", "reading_order",
           "render_pdf_pages", "image_to_bytes", "PDFIUM_LOCK"]

PDFIUM_LOCK = threading.RLock()
"""Held around every use of PDFium: it is not thread-safe, not even across documents (pypdfium2's
docs), and the local executor runs a stage in several threads of one process; concurrent calls
crashed a run with SIGABRT."""


@dataclass
class PDFSegment:
    """One text block or image of a page, in display coordinates (points, origin top left)."""

    modality: str  # "text" or "image"
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str | None = None
    data: bytes | None = None
    content_type: str | None = None


@dataclass
class PageResult:
    """A page's segments in reading order, or why it yielded nothing (``error`` set)."""

    page: int
    segments: list[PDFSegment] = field(default_factory=list)
    error: str | None = None
    reason: str | None = None


def open_pdf(data: bytes, password: str | None = None) -> Any:
    """A ``pypdfium2.PdfDocument`` of ``data``; raises ``ValueError`` with a reason code
    (``encrypted_pdf``, ``unreadable_pdf``) as its first argument when it cannot be opened."""
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as e:
        msg = str(e)
        code = "encrypted_pdf" if "password" in msg.lower() or "security" in msg.lower() \
            else "unreadable_pdf"
        raise ValueError(code, f"{type(e).__name__}: {msg}") from e


def _to_display(rot: int, w: float, h: float, x0: float, y0: float, x1: float, y1: float
                ) -> tuple[float, float, float, float]:
    """Page-space box (origin bottom left) -> displayed box (origin top left) for a page
    rotated clockwise by ``rot`` degrees."""
    pts = [(x0, y0), (x1, y1)]
    if rot == 90:
        out = [(y, x) for x, y in pts]
    elif rot == 180:
        out = [(w - x, y) for x, y in pts]
    elif rot == 270:
        out = [(h - y, w - x) for x, y in pts]
    else:
        out = [(x, h - y) for x, y in pts]
    xs, ys = [p[0] for p in out], [p[1] for p in out]
    return min(xs), min(ys), max(xs), max(ys)


def _gaps(spans: list[tuple[float, float]], min_gap: float) -> list[float]:
    """Cut points between the union of ``spans`` where the uncovered gap is wider than
    ``min_gap``."""
    cuts = []
    spans = sorted(spans)
    reach = spans[0][1]
    for lo, hi in spans[1:]:
        if lo - reach > min_gap:
            cuts.append((reach + lo) / 2)
        reach = max(reach, hi)
    return cuts


def reading_order(items: list[PDFSegment], min_gap: float = 4.0) -> list[PDFSegment]:
    """``items`` of one page in reading order (recursive XY cut, see the module doc)."""
    if len(items) <= 1:
        return list(items)
    for axis in ("y", "x"):
        if axis == "y":
            spans = [(s.y0, s.y1) for s in items]
        else:
            spans = [(s.x0, s.x1) for s in items]
        cuts = _gaps(spans, min_gap if axis == "y" else min_gap * 2)
        if cuts:
            groups: list[list[PDFSegment]] = [[] for _ in range(len(cuts) + 1)]
            for s in items:
                mid = (s.y0 + s.y1) / 2 if axis == "y" else (s.x0 + s.x1) / 2
                groups[sum(mid > c for c in cuts)].append(s)
            return [s for g in groups if g for s in reading_order(g, min_gap)]
    return sorted(items, key=lambda s: (round(s.y0, 1), s.x0))


def _merge_lines(lines: list[PDFSegment]) -> list[PDFSegment]:
    """Text lines joined into blocks: a line continues the block whose last line is directly
    above it (less than a line height apart, overlapping horizontally); images stay alone."""
    blocks: list[PDFSegment] = []
    open_text: list[PDFSegment] = []
    for s in sorted(lines, key=lambda s: (s.y0, s.x0)):
        if s.modality != "text":
            blocks.append(s)
            continue
        height = s.y1 - s.y0
        target = None
        for b in open_text:
            last_y1 = b.__dict__["_last_y1"]
            if -1.0 <= s.y0 - last_y1 < height and min(s.x1, b.x1) > max(s.x0, b.x0):
                target = b
                break
        if target is None:
            b = PDFSegment("text", s.page, s.x0, s.y0, s.x1, s.y1, s.text,
                           content_type=s.content_type)
            b.__dict__["_last_y1"] = s.y1
            blocks.append(b)
            open_text.append(b)
            continue
        target.text = f"{target.text}\n{s.text}"
        target.x0, target.y0 = min(target.x0, s.x0), min(target.y0, s.y0)
        target.x1, target.y1 = max(target.x1, s.x1), max(target.y1, s.y1)
        target.__dict__["_last_y1"] = s.y1
    for b in blocks:
        b.__dict__.pop("_last_y1", None)
    return blocks


def _image_bytes(obj: Any) -> tuple[bytes, str]:
    """An image object's bytes: the stored JPEG when it is one, else a PNG of its pixels."""
    try:
        filters = obj.get_filters()
    except Exception:
        filters = []
    if filters == ["DCTDecode"]:
        return bytes(obj.get_data(decode_simple=True)), "image/jpeg"
    pil = obj.get_bitmap(render=False).to_pil()
    buf = io.BytesIO()
    pil.save(buf, format="PNG")
    return buf.getvalue(), "image/png"


def _page_segments(page: Any, index: int) -> list[PDFSegment]:
    import pypdfium2.raw as raw

    w, h = float(page.get_width()), float(page.get_height())
    rot = int(page.get_rotation() or 0) % 360
    if rot in (90, 270):  # get_width/height are the displayed sizes; page space is unrotated
        w, h = h, w
    items: list[PDFSegment] = []
    textpage = page.get_textpage()
    try:
        for i in range(textpage.count_rects()):
            left, bottom, right, top = textpage.get_rect(i)
            text = textpage.get_text_bounded(left, bottom, right, top).strip()
            if not text:
                continue
            x0, y0, x1, y1 = _to_display(rot, w, h, left, bottom, right, top)
            items.append(PDFSegment("text", index, x0, y0, x1, y1, text=text,
                                    content_type="text/plain"))
    finally:
        textpage.close()
    for obj in page.get_objects(filter=[raw.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        left, bottom, right, top = obj.get_bounds()
        data, ctype = _image_bytes(obj)
        x0, y0, x1, y1 = _to_display(rot, w, h, left, bottom, right, top)
        items.append(PDFSegment("image", index, x0, y0, x1, y1, data=data, content_type=ctype))
    return reading_order(_merge_lines(items))


def extract_pdf(data: bytes, password: str | None = None, max_pages: int | None = None
                ) -> list[PageResult]:
    """Every page of a PDF (up to ``max_pages``) as a :class:`PageResult`: its segments in
    reading order, or the reason it gave none (``empty_page``: no text or image;
    ``page_error``: PDFium failed on it). Raises ``ValueError(code, detail)`` when the document
    cannot be opened (:func:`open_pdf`)."""
    with PDFIUM_LOCK:
        doc = open_pdf(data, password)
        results = []
        try:
            n = len(doc) if max_pages is None else min(len(doc), max_pages)
            for index in range(n):
                page = None
                try:
                    page = doc[index]
                    segs = _page_segments(page, index)
                    results.append(PageResult(index, segs) if segs else PageResult(
                        index, [], "the page has no text and no image", "empty_page"))
                except Exception as e:
                    results.append(PageResult(index, [], f"{type(e).__name__}: {e}", "page_error"))
                finally:
                    if page is not None:
                        page.close()
        finally:
            doc.close()
    return results


def render_pdf_pages(pdf_bytes: bytes, dpi: int = 300, max_pages: int = 50,
                     max_size: tuple[int, int] | None = (1664, 2048),
                     password: str | None = None) -> list[Any]:
    """Each page (up to ``max_pages``) rendered to an RGB PIL image at ``dpi``, scaled down to
    fit ``max_size`` pixels (NeMo Curator's defaults). A page that fails to render is ``None``
    in the list; a document that cannot be opened raises ``ValueError(code, detail)``."""
    with PDFIUM_LOCK:
        doc = open_pdf(pdf_bytes, password)
        images: list[Any] = []
        try:
            base = dpi / 72.0
            for index in range(min(len(doc), max_pages)):
                page = bitmap = None
                try:
                    page = doc[index]
                    scale = base
                    if max_size is not None:
                        pw, ph = float(page.get_width()), float(page.get_height())
                        if pw > 0 and ph > 0:
                            scale = min(base, max(min(max_size[0] / pw, max_size[1] / ph), 1e-3))
                    bitmap = page.render(scale=scale)
                    images.append(bitmap.to_pil().convert("RGB"))
                except Exception:
                    images.append(None)
                finally:
                    if bitmap is not None:
                        bitmap.close()
                    if page is not None:
                        page.close()
        finally:
            doc.close()
    return images


def image_to_bytes(image: Any, fmt: str = "PNG") -> bytes:
    """A PIL image encoded as ``fmt``."""
    buf = io.BytesIO()
    image.save(buf, format=fmt)
    return buf.getvalue()
