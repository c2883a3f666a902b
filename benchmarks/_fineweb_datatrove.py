"""The datatrove side of ``benchmarks/fineweb.py``: run with the Python of a separate virtual
environment where datatrove is installed (never imported by Curator).

    decide IN OUT          per document: each filter's decision (alone, on the original text),
                           C4's edited text, the word count of the English tokenizer
    time IN N REPEATS      seconds for the four-filter chain on the first N documents
    minhash IN OUT         datatrove's MinHash dedup (FineWeb settings) of IN: removed ids
"""

from __future__ import annotations

import json
import sys
import tempfile
import time


def _docs(path: str, limit: int | None = None) -> list:
    from datatrove.data import Document

    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append(Document(text=d["text"], id=str(d["id"]), metadata={"url": d.get("url")}))
            if limit and len(out) >= limit:
                break
    return out


def _filters(block_dir: str | None) -> dict:
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        URLFilter,
    )

    out = {"gopher_repetition": GopherRepetitionFilter(), "gopher_quality": GopherQualityFilter(),
           "gopher_quality_max_3000": GopherQualityFilter(max_doc_words=3000),
           "c4_quality": C4QualityFilter(),
           "c4_quality_fineweb": C4QualityFilter(filter_no_terminal_punct=False),
           "fineweb_quality": FineWebQualityFilter()}
    if block_dir:
        def read(name: str) -> list[str]:
            try:
                with open(f"{block_dir}/{name}", encoding="utf-8") as f:
                    return [x for x in f if x.strip()]
            except FileNotFoundError:
                return []
        out["url"] = URLFilter(extra_domains=read("domains"), extra_urls=read("urls"),
                               banned_words=read("banned_words.txt"),
                               banned_subwords=read("banned_subwords.txt"),
                               soft_banned_words=read("soft_banned_words.txt"),
                               use_integrated_lists=False)
        from tldextract import TLDExtract

        # the bundled public-suffix snapshot, as Curator uses: no network fetch
        out["url"].tldextractor = TLDExtract(suffix_list_urls=(), cache_dir=None)
    return out


def _decision(flt, doc) -> tuple[str, str | None]:
    try:
        res = flt.filter(doc)
    except Exception as e:
        return f"error:{type(e).__name__}", None
    if isinstance(res, tuple):
        return res[1], None
    return ("" if res else "dropped"), doc.text


def decide(src: str, dst: str, block_dir: str | None = None) -> None:
    import hashlib
    import os

    from datatrove.utils.text import split_into_words

    flts = _filters(block_dir)
    done: dict = {}  # a re-run goes on where an interrupted one stopped (rows are merged)
    if os.path.exists(dst):
        with open(dst, encoding="utf-8") as f:
            for r in map(json.loads, f):
                done.setdefault((r["id"], r.get("h")), set()).update(r)
                if "url" in r:
                    done[(r["id"], r.get("h"), "url")] = r.get("url_of")
    with open(dst, "a", encoding="utf-8") as out:
        for doc in _docs(src):
            h = hashlib.blake2b(doc.text.encode(), digest_size=8).hexdigest()  # of the text
            have = set(done.get((doc.id, h), set()))
            if done.get((doc.id, h, "url")) != doc.metadata.get("url"):
                have.discard("url")  # the URL decision is redone when the document's URL changed
            todo = {k: v for k, v in flts.items() if k not in have}
            if not todo and "words" in have:
                continue
            original = doc.text
            row = {"id": doc.id, "h": h, "words": len(split_into_words(original, "en")),
                   "url_of": doc.metadata.get("url")}
            for name, flt in todo.items():
                doc.text = original
                if name == "url" and not doc.metadata.get("url"):
                    row[name] = "error:AssertionError"
                    continue
                reason, text = _decision(flt, doc)
                row[name] = reason
                if name.startswith("c4") and reason == "":
                    row[name + "_text"] = text
            doc.text = original
            out.write(json.dumps(row) + "\n")


def time_chain(src: str, n: int, repeats: int) -> None:
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )

    docs = _docs(src, n)
    chain = [GopherRepetitionFilter(), GopherQualityFilter(),
             C4QualityFilter(filter_no_terminal_punct=False), FineWebQualityFilter()]
    chain[1].filter(docs[0])  # loads spaCy outside the timing
    times = []
    for _ in range(repeats):
        texts = [d.text for d in docs]
        t0 = time.perf_counter()
        kept = 0
        for d, text in zip(docs, texts, strict=True):
            d.text = text
            for flt in chain:
                res = flt.filter(d)
                if res is not True and not (isinstance(res, bool) and res):
                    break
            else:
                kept += 1
        times.append(time.perf_counter() - t0)
        for d, text in zip(docs, texts, strict=True):
            d.text = text
    print(json.dumps({"docs": len(docs), "seconds": times, "kept": kept}))


def minhash(src: str, dst: str) -> None:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import MinhashDedupCluster, MinhashDedupSignature
    from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupBuckets
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.utils.hashing import HashConfig

    config = MinhashConfig(hash_config=HashConfig(hash_fc="sha1", precision=64),
                           num_buckets=14, hashes_per_bucket=8, n_grams=5)
    with tempfile.TemporaryDirectory() as tmp:
        import os
        import shutil

        inp = os.path.join(tmp, "in")
        os.makedirs(inp)
        shutil.copy(src, os.path.join(inp, "data.jsonl"))
        t0 = time.perf_counter()
        reader = JsonlReader(inp, id_key="id")
        steps = ([reader, MinhashDedupSignature(f"{tmp}/sigs", config=config)],
                 [MinhashDedupBuckets(f"{tmp}/sigs", f"{tmp}/buckets",
                                      config=MinhashConfig(hash_config=config.hash_config))],
                 [MinhashDedupCluster(f"{tmp}/buckets", f"{tmp}/remove", config=config,
                                      save_cluster_id=False)])
        for step, tasks in zip(steps, (1, config.num_buckets, 1), strict=True):
            LocalPipelineExecutor(pipeline=step, tasks=tasks, workers=1,
                                  logging_dir=f"{tmp}/logs{time.time()}",
                                  skip_completed=False).run()
        seconds = time.perf_counter() - t0
        import numpy as np

        removed: list[int] = []
        for name in os.listdir(f"{tmp}/remove"):
            if name.endswith(".remove"):
                removed += np.fromfile(f"{tmp}/remove/{name}", dtype="<u4").tolist()
        ids = [json.loads(line)["id"] for line in open(src, encoding="utf-8")]
        with open(dst, "w", encoding="utf-8") as out:
            json.dump({"removed": [ids[i] for i in sorted(removed)], "seconds": seconds}, out)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "decide":
        decide(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    elif cmd == "time":
        time_chain(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "minhash":
        minhash(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(f"unknown command {cmd!r}")
