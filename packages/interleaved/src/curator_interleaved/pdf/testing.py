"""Generated PDFs for tests and examples (fpdf2, a dev dependency): text and images at known
coordinates, two columns, image-only and empty pages, rotated pages, encrypted files and a
damaged cross-reference table."""

from __future__ import annotations

import io
import re

__all__ = ["damage_xref", "make_pdf", "rotate_pages"]


def make_pdf(pages: list[list[tuple]], *, size: tuple[float, float] = (600, 800),
             password: str | None = None) -> bytes:
    """A PDF of ``pages``, each a list of items in page points (origin top left):
    ``("text", x, y_baseline, str)`` in 12 pt Helvetica, or ``("image", x, y, w, h, jpeg or png
    bytes)``. ``password``: encrypt it (RC4, the user password)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=size)
    pdf.set_auto_page_break(False)
    pdf.set_font("Helvetica", size=12)
    for items in pages:
        pdf.add_page()
        for item in items:
            if item[0] == "text":
                _, x, y, text = item
                pdf.text(x, y, text)
            else:
                _, x, y, w, h, data = item
                pdf.image(io.BytesIO(data), x=x, y=y, w=w, h=h)
    if password:
        pdf.set_encryption(owner_password=password + "-owner", user_password=password)
    return bytes(pdf.output())


def rotate_pages(data: bytes, degrees: int, pages: list[int] | None = None) -> bytes:
    """``data`` with ``/Rotate degrees`` set on ``pages`` (default all), saved by PDFium."""
    import pypdfium2 as pdfium

    from curator_interleaved.pdf.extract import PDFIUM_LOCK

    with PDFIUM_LOCK:
        doc = pdfium.PdfDocument(data)
        for i in range(len(doc)) if pages is None else pages:
            doc[i].set_rotation(degrees)
        out = io.BytesIO()
        doc.save(out)
        doc.close()
    return out.getvalue()


def damage_xref(data: bytes) -> bytes:
    """``data`` with its ``startxref`` offset pointing at the wrong place and the xref table's
    first entries scrambled (what a truncated download or a bad edit leaves): PDFium must
    rebuild the table from the objects."""
    out = re.sub(rb"startxref\s+(\d+)", lambda m: b"startxref\n" + str(
        int(m.group(1)) + 7).encode(), data)
    return re.sub(rb"(\d{10}) 00000 n", lambda m: b"%010d 00000 n" % (int(m.group(1)) + 3),
                  out, count=3)


