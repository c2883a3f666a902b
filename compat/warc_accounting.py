"""Record-by-record accounting of web archives against warcio.

    .venv/bin/python compat/warc_accounting.py ARCHIVE_OR_DIR... [--algorithm resiliparse] [--json]
        [--details]

Each WARC / ARC file is read twice: by warcio (an independent reader; ARC records converted to
WARC) and by ``CommonCrawlDownloadExtractStage(warc_paths=...)``'s iterate + extract stage with
the given extraction algorithm (default: the stage's default). Every record warcio reads is
looked up by its offset in Curator's outcome: extracted, skipped with a reason or rejected with
a reason. The table says, per file:

    warcio     records warcio reads (and HTML responses among them, content type or body)
    extr/skip/rej   Curator's outcomes at those offsets
    twice      offsets Curator accounted for more than once (must be 0)
    missing    records warcio reads that Curator neither extracted, skipped nor rejected
               (must be 0)
    lost       HTML responses warcio reads whole (all the bytes their length declares, the
               body decoded) that Curator rejected
    extra      Curator outcomes at offsets where warcio reads no record (bytes between
               records, records of a file warcio stops in, records of a one-stream gzip
               file by their decompressed offset)

and ``ok`` when ``twice``, ``missing`` and ``lost`` are 0. ``--details`` prints each record
that is not ok. Exit status 1 when a file is not ok. Fetch the archives outside the repository
(nothing fetched is committed); the public test archives of warcio, pywb, ia-web-commons,
dolma and resiliparse are the ones this is run on (``packages/web/README.md`` gives the totals).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

_HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass
class WarcioRecord:
    offset: int
    rec_type: str
    url: str
    html: bool = False
    body_ok: bool = True  # warcio read all the bytes declared and decoded the body


@dataclass
class FileAccount:
    file: str
    warcio: list[WarcioRecord] = field(default_factory=list)
    warcio_error: str | None = None
    # offset -> Curator outcomes at that offset ("extracted", "skipped: r", "rejected: r")
    curator: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    unlocated: list[str] = field(default_factory=list)  # outcomes without an offset

    def row(self) -> dict[str, Any]:
        offsets = {r.offset for r in self.warcio}
        kinds = Counter(o.split(":")[0] for r in self.warcio for o in self.curator.get(r.offset, []))
        twice = [off for off, outs in self.curator.items() if len(outs) > 1]
        missing = [r for r in self.warcio if not self.curator.get(r.offset)]
        lost = [r for r in self.warcio if r.html and r.body_ok and any(
            o.startswith("rejected") for o in self.curator.get(r.offset, []))]
        extra = {off: outs for off, outs in self.curator.items() if off not in offsets}
        return {"file": self.file, "warcio": len(self.warcio),
                "warcio_html": sum(r.html for r in self.warcio),
                "extracted": kinds["extracted"], "skipped": kinds["skipped"],
                "rejected": kinds["rejected"], "twice": len(twice), "missing": len(missing),
                "lost": len(lost), "extra": sum(len(v) for v in extra.values()),
                "unlocated": len(self.unlocated), "warcio_error": self.warcio_error,
                "ok": not (twice or missing or lost or self.unlocated),
                "_twice": {o: self.curator[o] for o in twice},
                "_missing": [(r.offset, r.rec_type, r.url) for r in missing],
                "_lost": [(r.offset, r.url, self.curator[r.offset]) for r in lost],
                "_extra": extra, "_unlocated": self.unlocated}


def read_warcio(path: str, account: FileAccount) -> None:
    """The records warcio reads, with their offsets; where warcio stops, the error."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        it = ArchiveIterator(fh, arc2warc=True)
        try:
            for rec in it:
                offset = it.get_record_offset()
                url = rec.rec_headers.get_header("WARC-Target-URI") or ""
                item = WarcioRecord(offset, rec.rec_type, url)
                if rec.rec_type == "response" and rec.http_headers is not None:
                    ctype = (rec.http_headers.get_header("Content-Type") or "").lower()
                    try:
                        body = rec.content_stream().read()
                        item.body_ok = not getattr(rec.raw_stream, "limit", 0)  # all there
                    except Exception:
                        item.body_ok, body = False, b""
                    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
                    item.html = ctype.startswith(_HTML_TYPES) or (
                        not ctype and head.startswith((b"<!doctype html", b"<html")))
                account.warcio.append(item)
        except Exception as exc:
            account.warcio_error = f"{type(exc).__name__}: {exc}"[:200]


def read_curator(path: str, account: FileAccount, algorithm: str | None) -> None:
    """Curator's outcome for each record of ``path``, by offset, through the stage's own
    iterate + extract stage (its extractor wrapped only to see which offsets it extracted)."""
    from curator import FileGroupTask
    from curator_web import CommonCrawlDownloadExtractStage

    stage = CommonCrawlDownloadExtractStage(warc_paths=path, html_extraction=algorithm)
    extract = stage.decompose()[-1]
    extract.iterator.locate_skips = True
    inner = extract.extractor
    extracted: list[int] = []

    class Recording(type(inner)):  # type: ignore[misc]
        def extract(self, record: dict[str, Any]) -> dict[str, Any] | None:
            doc = super().extract(record)
            if doc is not None:
                extracted.append(record["offset"])
            return doc

    recording = Recording.__new__(Recording)
    recording.__dict__.update(inner.__dict__)
    extract.extractor = recording
    extract.setup()
    out = extract.process(FileGroupTask(task_id="t", dataset_name="a", data=[path]))
    for offset in extracted:
        account.curator[offset].append("extracted")
    for at in out.metadata["skipped_at"]:
        _place(account, at.get("offset"), f"skipped: {at['reason']}")
    for rej in extract.drain_rejected():
        _place(account, rej.record.get("offset"), f"rejected: {rej.reason}")
    located = sum(len(v) for v in account.curator.values()) + len(account.unlocated)
    counted = len(extracted) + sum(out.metadata["skipped_records"].values()) + len(
        [1 for outs in account.curator.values() for o in outs if o.startswith("rejected")])
    for _ in range(counted - located):
        account.unlocated.append("skipped without an offset")


def _place(account: FileAccount, offset: int | None, outcome: str) -> None:
    if offset is None:
        account.unlocated.append(outcome)
    else:
        account.curator[offset].append(outcome)


def archives(paths: list[str]) -> list[str]:
    from curator_web.common_crawl import WARC_EXTENSIONS

    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(r, f) for r, _, fs in os.walk(p) for f in fs
                          if f.endswith(tuple(WARC_EXTENSIONS)))
        else:
            out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    import logging
    import warnings

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", help="WARC / ARC files or directories of them")
    parser.add_argument("--algorithm", default=None,
                        help="html_extraction of the stage (default: the stage's default)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--details", action="store_true", help="print each record not ok")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    rows = []
    header = (f"{'archive':58s} {'warcio':>6s} {'html':>5s} {'extr':>5s} {'skip':>5s} "
              f"{'rej':>4s} {'twice':>5s} {'miss':>4s} {'lost':>4s} {'extra':>5s}  verdict")
    if not args.json:
        print(header)
    for path in archives(args.paths):
        account = FileAccount(file=path)
        read_warcio(path, account)
        read_curator(path, account, args.algorithm)
        row = account.row()
        rows.append(row)
        if args.json:
            continue
        name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        note = "ok" if row["ok"] else "NOT OK"
        if row["warcio_error"]:
            note += f" (warcio stops: {row['warcio_error'][:60]})"
        print(f"{name:58s} {row['warcio']:6d} {row['warcio_html']:5d} {row['extracted']:5d} "
              f"{row['skipped']:5d} {row['rejected']:4d} {row['twice']:5d} {row['missing']:4d} "
              f"{row['lost']:4d} {row['extra']:5d}  {note}", flush=True)
        if args.details:
            for key in ("_twice", "_missing", "_lost", "_extra", "_unlocated"):
                if row[key]:
                    print(f"    {key[1:]}: {row[key]}")
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]))
    else:
        total = {k: sum(r[k] for r in rows) for k in ("warcio", "warcio_html", "extracted",
                                                      "skipped", "rejected", "twice", "missing",
                                                      "lost", "extra")}
        print(f"{'total (' + str(len(rows)) + ' files)':58s} " + " ".join(
            f"{total[k]:{w}d}" for k, w in (("warcio", 6), ("warcio_html", 5), ("extracted", 5),
                                            ("skipped", 5), ("rejected", 4), ("twice", 5),
                                            ("missing", 4), ("lost", 4), ("extra", 5)))
              + f"  {sum(r['ok'] for r in rows)}/{len(rows)} ok")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
