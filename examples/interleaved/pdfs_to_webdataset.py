"""PDFs -> interleaved documents -> MINT-1T WebDataset shards, on generated PDFs.

    uv run python examples/interleaved/pdfs_to_webdataset.py [WORKDIR]

Generates PDFs (two columns with a heading, images, an empty page, an encrypted file) with
fpdf2, reads them with ``PDFReader`` (pypdfium2, on the CPU: text blocks and images in reading
order with their page boxes), drops tiny images, and writes MINT-1T style shards. Every page is
accounted for: the empty page and the encrypted file are in the rejected sink with their
reasons.
"""

from __future__ import annotations

import os
import sys
import tempfile

from curator import Pipeline
from curator_interleaved import InterleavedAspectRatioFilterStage, InterleavedWebdatasetWriterStage
from curator_interleaved.pdf import PDFReader
from curator_interleaved.pdf.testing import make_pdf
from curator_interleaved.testing import encode_image, make_image


def make_pdfs(folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    photo = encode_image(make_image(120, 80, seed=1))
    for k in range(3):
        page = [("text", 50, 60, f"Report {k}: a heading across both columns"),
                ("text", 50, 120, "The left column starts here"),
                ("text", 50, 134, "and goes on for a second line."),
                ("text", 320, 120, "The right column is read after it"),
                ("image", 50, 180, 150, 100, photo),
                ("text", 50, 320, "A caption under the figure.")]
        pages = [page, []] if k == 0 else [page]
        with open(os.path.join(folder, f"report-{k}.pdf"), "wb") as fh:
            fh.write(make_pdf(pages))
    with open(os.path.join(folder, "locked.pdf"), "wb") as fh:
        fh.write(make_pdf([[("text", 50, 50, "secret")]], password="pw"))


def main(workdir: str) -> dict:
    pdfs = os.path.join(workdir, "pdfs")
    make_pdfs(pdfs)
    out = os.path.join(workdir, "webdataset")
    result = Pipeline("pdfs_to_webdataset", stages=[
        PDFReader(file_paths=pdfs, files_per_partition=2),
        InterleavedAspectRatioFilterStage(min_aspect_ratio=0.2, max_aspect_ratio=5.0),
        InterleavedWebdatasetWriterStage(path=out),
    ]).run(rejected_dir=os.path.join(workdir, "rejected"), summary=False)
    shards = sorted(f for f in os.listdir(out) if f.endswith(".tar"))
    reasons = sorted(reason for stage in result.stats.stages
                     for reason, n in stage.rejected_by_reason.items() for _ in range(n))
    print(f"wrote {len(shards)} shards to {out}; rejected: {reasons}")
    return {"result": result, "shards": shards, "out": out, "reasons": reasons}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="interleaved-pdf-"))
