"""Real PDFs nobody here wrote: py-pdf's public sample-files repository through Curator's PDF
reader. Every page must be accounted for (segments extracted, or a rejected record with its
reason) and nothing may crash; the page counts are checked against the repository's own
``files.json``.

    uv run python compat/pdf_samples.py GIT_DIR [--passwords]

``GIT_DIR``: a clone of https://github.com/py-pdf/sample-files (bare is fine; the files are read
with ``git show`` into a temporary directory, nothing is copied into this repository).
``--passwords`` also reads the encrypted sample with the password its README gives.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("git_dir")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--passwords", action="store_true")
    args = parser.parse_args()
    from curator import FileGroupTask
    from curator_interleaved.pdf import PDFReaderStage

    def git(*a: str) -> bytes:
        return subprocess.run(["git", "-C", args.git_dir, *a], capture_output=True,
                              check=True).stdout

    truth = {e["path"]: e for e in json.loads(git("show", f"{args.rev}:files.json"))["data"]}
    names = [p for p in git("ls-tree", "-r", "--name-only", args.rev).decode().splitlines()
             if p.lower().endswith(".pdf")]
    passwords = {"libreoffice-writer-password.pdf": "openpassword"} if args.passwords else {}
    stage = PDFReaderStage(passwords=passwords)
    bad = 0
    totals: Counter = Counter()
    print(f"{'file':58s} {'pages':>5s} {'extracted':>9s} {'rejected (reason)':30s} "
          f"{'text':>5s} {'images':>6s} {'exp.img':>7s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = os.path.join(tmp, name.replace("/", "__"))
            try:
                data = git("show", f"{args.rev}:{name}")
            except subprocess.CalledProcessError:
                print(f"{name:58s} absent from this snapshot (a large file not fetched): skipped")
                totals.update(absent=1)
                continue
            with open(path, "wb") as fh:
                fh.write(data)
            expected = truth.get(name, {})
            try:
                batch = stage.process(FileGroupTask(task_id="t", dataset_name="pdf",
                                                    data=[path]))
            except Exception as e:
                print(f"{name:58s} CRASH {type(e).__name__}: {e}")
                bad += 1
                continue
            rejected = stage.drain_rejected()
            rows = batch.to_pyarrow().to_pylist()
            pages = next((r["num_pages"] for r in rows if r["position"] == -1), None)
            got = {r["page"] for r in rows if r["position"] >= 0}
            rej_pages = {r.record.get("page") for r in rejected if r.record.get("page") is not None}
            doc_rej = [r.reason for r in rejected if r.record.get("page") is None]
            reasons = Counter(r.reason for r in rejected)
            n_expected = expected.get("pages")
            if doc_rej:
                accounted = True  # the whole document is a rejected record
            else:
                accounted = pages == n_expected and got | rej_pages == set(range(pages)) \
                    and not got & rej_pages
            bad += not accounted
            n_text = sum(r["modality"] == "text" for r in rows)
            n_img = sum(r["modality"] == "image" for r in rows)
            totals.update(pages=pages or n_expected or 0, extracted=len(got),
                          rejected_pages=len(rej_pages) + (n_expected or 0) * bool(doc_rej))
            rs = ", ".join(f"{k} {v}" for k, v in reasons.items()) or "-"
            print(f"{name:58s} {pages if pages is not None else n_expected!s:>5s} "
                  f"{len(got):>9d} {rs:30s} {n_text:>5d} {n_img:>6d} "
                  f"{expected.get('images')!s:>7s}{'' if accounted else '  NOT ACCOUNTED'}")
    print(f"\n{len(names) - totals['absent']} PDFs read ({totals['absent']} absent from the "
          f"snapshot), {totals['pages']} pages: {totals['extracted']} extracted, "
          f"{totals['rejected_pages']} rejected with a reason; "
          f"{'every page accounted, no crash' if not bad else f'{bad} files NOT accounted'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
