"""Curator's FineWeb filters beside datatrove itself, on the same documents: per-document
agreement (keep/drop and reason per filter, C4's edited text, the English tokenizer's word
counts), the four-filter chain's throughput side by side, and MinHash dedup at FineWeb's
settings against planted near-duplicates with known edit rates.

datatrove runs in its own virtual environment (never a Curator dependency), driven by
``benchmarks/_fineweb_datatrove.py`` through a subprocess:

    uv venv -p 3.11 /tmp/dt-venv && uv pip install -p /tmp/dt-venv 'datatrove[processing]' spacy
    uv run python benchmarks/fineweb.py /tmp/fw --datatrove-python /tmp/dt-venv/bin/python \\
        --real-repo "$(git dir of github:scrapinghub/article-extraction-benchmark)"

The documents (written under the output directory, never into the repository): the public
article-extraction benchmark's pages (its ground-truth article bodies, and Trafilatura's
extraction of each page's HTML in precision and recall modes), the realistic generated corpus of
``benchmarks/corpus.py``, generated web pages with the repetition of web text (a site's
boilerplate after every listing item or forum post, share lines and taglines extracted inline,
navigation menus: :func:`web_pages`, :func:`news_pages`), and generated documents aimed at the
other rejection reasons (made from the real sentences), so that every reason fires on at least
50 documents. Results go to
``OUT/report.json`` (the disagreeing documents listed) and are printed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import generate

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_fineweb_datatrove.py")
FILTERS = ("gopher_repetition", "gopher_quality", "gopher_quality_max_3000", "c4_quality",
           "c4_quality_fineweb", "fineweb_quality", "url")
"""``gopher_quality_max_3000``: max_doc_words=3000, so that ``gopher_long_doc`` fires on enough
documents without datatrove tokenizing fifty 100k-word documents (the same rule and code path
as the default 100,000)."""


# ---- documents ---------------------------------------------------------------------------------

def real_pages(repo: str) -> list[dict]:
    """The article-extraction benchmark: ground-truth bodies and Trafilatura's extractions."""
    import trafilatura

    truth = json.loads(subprocess.check_output(["git", "-C", repo, "show",
                                                "HEAD:ground-truth.json"]))
    out = []
    for key, item in truth.items():
        out.append({"id": f"gt-{key[:16]}", "text": item["articleBody"], "url": item["url"],
                    "source": "real"})
        html = gzip.decompress(subprocess.check_output(
            ["git", "-C", repo, "show", f"HEAD:html/{key}.html.gz"])).decode("utf-8", "replace")
        for mode, kw in (("precision", {"favor_precision": True}),
                         ("recall", {"favor_recall": True, "include_comments": True,
                                     "include_tables": True})):
            text = trafilatura.extract(html, **kw)
            if text:
                out.append({"id": f"tf-{mode}-{key[:16]}", "text": text, "url": item["url"],
                            "source": "real"})
    return out


def _sentences(docs: list[dict]) -> list[str]:
    out = []
    for d in docs:
        for s in re.split(r"(?<=[.!?])\s+", d["text"].replace("\n", " ")):
            if 8 <= len(s.split()) <= 40 and s[-1] in ".!?" and "{" not in s:
                out.append(s)
    return sorted(set(out))


STOP = {"the", "be", "to", "of", "and", "that", "have", "with"}


def targeted(sentences: list[str], seed: int = 7, per: int = 60,
             long_docs: int = 60, long_words: int = 3500) -> list[dict]:
    """Documents aimed at each rejection reason, made from real sentences."""
    rng = np.random.default_rng(seed)
    words = [w for s in sentences for w in s.split()]
    short_w = [w for w in words if len(w) <= 3 and w.isalpha()]
    long_w = [w for w in words if len(w) >= 11 and w.isalpha()]

    def sents(k: int) -> list[str]:
        return [sentences[i] for i in rng.choice(len(sentences), k, replace=False)]

    def para(k: int = 8) -> str:
        return " ".join(sents(k))

    docs: dict[str, list[str]] = {}
    docs["short_doc"] = [" ".join(sents(int(rng.integers(1, 3)))) for _ in range(per)]
    docs["long_doc"] = []
    for _ in range(long_docs):
        parts, n = [], 0
        while n < long_words:  # long lines: C4's per-line sentence splitting stays cheap
            block = "\n".join(" ".join(sents(25)) for _ in range(4))
            parts.append(block)
            n += len(block.split())
        docs["long_doc"].append("\n\n".join(parts))
    docs["below_avg"] = [" ".join(rng.choice(short_w, 120)) + " the and of." for _ in range(per)]
    docs["above_avg"] = [" ".join(rng.choice(long_w, 80)) + " the and of." for _ in range(per)]
    docs["hashes"] = [" ".join(f"#{w}" if rng.random() < rng.uniform(0.12, 0.3) else w
                               for w in para().split()) for _ in range(per)]
    docs["ellipsis"] = [" ".join(f"{w}..." if rng.random() < rng.uniform(0.15, 0.3) else w
                                 for w in para().split()) for _ in range(per)]
    docs["bullets"] = ["\n".join(("- " if rng.random() < 0.97 else "• ") + s for s in sents(12))
                       for _ in range(per)]
    docs["end_ellipsis"] = ["\n".join(s[:-1] + "..." if rng.random() < 0.5 else s
                                      for s in sents(12)) for _ in range(per)]
    docs["alpha"] = [" ".join(str(rng.integers(10, 9999)) if rng.random() < 0.35 else w
                              for w in para().split()) for _ in range(per)]
    docs["stop_words"] = [" ".join(w for w in para(10).split() if w.lower() not in STOP)
                          for _ in range(per)]
    docs["dup_para"] = []
    docs["dup_line"] = []
    for _ in range(per):
        ps = [para(3) for _ in range(6)]
        docs["dup_para"].append("\n\n".join(ps + ps[:3]))
        long_p = para(12)
        docs["dup_para"].append("\n\n".join([long_p] + [sentences[i] for i in
                                rng.choice(len(sentences), 4)] + [long_p]))
        ls = sents(8)
        docs["dup_line"].append("\n".join(ls + ls[:4]))
        long_l = para(10)
        docs["dup_line"].append("\n".join([long_l] + sents(5) + [long_l]))
    docs["top_ngram"] = []
    for _ in range(3 * per):
        n = int(rng.integers(2, 5))
        phrase = " ".join(rng.choice(words, n))
        body = para(6).split()
        reps = int(rng.integers(6, 25))
        for _ in range(reps):
            body.insert(int(rng.integers(0, len(body))), phrase)
        docs["top_ngram"].append(" ".join(body))
    docs["lorem"] = ["\n".join(sents(6) + ["Lorem ipsum dolor sit amet, consectetur."] + sents(2))
                     for _ in range(per)]
    docs["curly"] = ["\n".join(sents(6) + ["The template uses {name} as the placeholder."])
                     for _ in range(per)]
    docs["few_sentences"] = ["\n".join(sents(2) + ["Home", "About us", "Contact"])
                             for _ in range(per)]
    docs["empty"] = [rng.choice([" ", "\n\n", " \t \n ", "\u00a0\n"]) for _ in range(per)]
    docs["line_punct"] = ["\n".join(s.rstrip(".!?") for s in sents(10)) for _ in range(per)]
    docs["short_lines"] = ["\n".join(" ".join(s.split()[:3]) + "." for s in sents(12))
                           for _ in range(per)]
    docs["char_dup"] = ["\n".join(sents(12) + sents(1) * 2) for _ in range(per)]
    docs["list"] = ["\n".join(f"{w.capitalize()}{v}{u}." for w, v, u in zip(
        rng.choice(long_w, 14), rng.choice(long_w, 14), rng.choice(long_w, 14), strict=True))
        for _ in range(per)]
    out = []
    for kind, texts in docs.items():
        out += [{"id": f"t-{kind}-{i}", "text": t, "source": f"targeted:{kind}"}
                for i, t in enumerate(texts)]
    return out


SITE_BOILERPLATE = (
    "Add to cart. Free shipping on orders over $50 and free returns within 30 days.",
    "Share this story on Facebook, Twitter or by email with your friends.",
    "Sign up for our newsletter to get the latest news delivered to your inbox.",
    "Reply Quote Report this post to a moderator",
    "In stock and ready to ship within two business days from our warehouse.",
    "Read more about this topic in our archive of related articles.",
)
MENU = ("Home", "News", "Sports", "Business", "Opinion", "Weather", "Contact us", "About",
        "Shop", "Deals", "Login", "Register", "Forums", "Blog")


def web_pages(sentences: list[str], n: int, seed: int = 19) -> list[dict]:
    """Pages with the repetition web text has: a site's boilerplate sentence after each item of a
    listing or each forum post, a share/newsletter line inside paragraphs, a navigation menu
    extracted inline at the top and the bottom. The items and posts differ (names, prices,
    dates), so lines and paragraphs are not repeated whole: the repeated n-grams are."""
    rng = np.random.default_rng(seed)
    words = [w.strip(".,;:!?\"'()") for s in sentences for w in s.split()]
    names = np.array(sorted({w for w in words if len(w) > 3 and w.isalpha()}), dtype=object)
    menu_words = np.array(MENU, dtype=object)

    def sents(k: int) -> list[str]:
        return [sentences[i] for i in rng.choice(len(sentences), k, replace=False)]

    out = []
    for i in range(n):
        tail = SITE_BOILERPLATE[int(rng.integers(len(SITE_BOILERPLATE)))]
        kind = ("listing", "forum", "article")[i % 3]
        menu = " ".join(rng.choice(menu_words, int(rng.integers(5, 10)), replace=False))
        items = int(rng.integers(2, 9))
        if kind == "listing":
            intro = " ".join(sents(int(rng.integers(3, 9))))
            lines = [f"{menu} {intro}"]
            for _ in range(items):
                name = " ".join(rng.choice(names, int(rng.integers(2, 4)))).title()
                desc = sents(1)[0]
                lines.append(f"{name} - ${rng.integers(5, 500)}.{rng.integers(10, 99)}. {desc} "
                             f"{tail}")
            lines.append(" ".join(sents(int(rng.integers(1, 4)))) + f" {menu}")
            text = "\n".join(lines)
        elif kind == "forum":
            posts = [f"{menu}\n" + " ".join(sents(int(rng.integers(3, 8))))]
            for _ in range(items):
                user = rng.choice(names).lower() + str(rng.integers(1, 99))
                body = " ".join(sents(int(rng.integers(1, 4))))
                posts.append(f"Posted by {user} on {rng.integers(1, 28)}/{rng.integers(1, 12)}"
                             f"/20{rng.integers(10, 25)}: {body} {tail}")
            text = "\n\n".join(posts)
        else:
            paras = []
            for _ in range(items):
                body = " ".join(sents(int(rng.integers(2, 6))))
                paras.append(f"{body} {tail}" if rng.random() < 0.7 else body)
            text = menu + "\n\n" + "\n\n".join(paras)
        out.append({"id": f"w-{kind}-{i}", "text": text, "source": "generated-web"})
    return out


NEWS_TAGLINES = (
    "Follow us on Twitter and Facebook for the latest breaking news and updates from our newsroom.",
    "Subscribe today for unlimited digital access to award winning journalism and analysis.",
    "This article is part of our coverage of the issues that matter most to our readers.",
    "Download our mobile app to get breaking news alerts sent directly to your phone.",
)


def news_pages(sentences: list[str], n: int, seed: int = 23) -> list[dict]:
    """Articles whose site tagline was extracted inline at the start of the first paragraph
    and at the end of the last one (a header and a footer merged into the text): one repeated
    sentence, from about 8% to 16% of the characters depending on the article's length."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        tag = NEWS_TAGLINES[int(rng.integers(len(NEWS_TAGLINES)))]
        target = len(tag.replace(" ", "")) / rng.uniform(0.08, 0.16)
        body: list[str] = []
        while 2 * len(tag) + sum(len(x) + 1 for x in body) < target:
            body.append(sentences[int(rng.integers(len(sentences)))])
        cut = max(1, len(body) // 2)
        text = (f"{tag} " + " ".join(body[:cut]) + "\n\n" + " ".join(body[cut:]) + f" {tag}")
        out.append({"id": f"w-news-{i}", "text": text, "source": "generated-web",
                    "url": f"https://news{i % 97}.example.com/{i}"})
    return out


def block_lists(directory: str, rng: np.random.Generator, docs: list[dict], per: int = 60) -> None:
    """Write block lists in datatrove's format and give every document a URL, some aimed at
    each URL reason."""
    os.makedirs(directory, exist_ok=True)
    domains = [f"blocked{i}.com" for i in range(per)]
    subs = [f"shop.partly{i}.net" for i in range(per)]
    urls = [f"https://fine{i}.org/exact/page-{i}.html" for i in range(per)]
    banned = ["badwordx", "forbiddenterm"]
    soft = ["softa", "softb", "softc"]
    subwords = ["zzqevil"]
    lists = {"domains": ["# blocked domains", *domains, *subs], "urls": urls,
             "banned_words.txt": banned, "soft_banned_words.txt": soft,
             "banned_subwords.txt": subwords}
    for name, items in lists.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            f.write("\n".join(items) + "\n")
    aimed = ([f"http://www.{d}/p/{i}" for i, d in enumerate(domains)]
             + [f"https://{s}/item?id={i}" for i, s in enumerate(subs)] + urls
             + [f"https://news{i}.com/{rng.choice(banned)}/story-{i}" for i in range(per)]
             + [f"https://blog{i}.com/{soft[i % 3]}-{soft[(i + 1) % 3]}/x" for i in range(per)]
             + [f"https://ok{i}.com/abcZZQ-EVILxyz/{i}" for i in range(per)]
             + [f"https://blog{i}.com/{soft[i % 3]}/only" for i in range(per)])
    free = [j for j in rng.permutation(len(docs)).tolist() if not docs[j].get("url")]
    for k, j in enumerate(free):
        docs[j]["url"] = aimed[k] if k < len(aimed) else f"https://site{k % 500}.example.org/{k}"


def build(out: str, real_repo: str | None, gen_docs: int, long_docs: int,
          long_words: int, web_docs: int = 2000, news_docs: int = 600) -> list[dict]:
    docs = real_pages(real_repo) if real_repo else []
    gen_dir = os.path.join(out, "generated")
    generate(gen_dir, gen_docs, 1)
    with open(os.path.join(gen_dir, "part-00000.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append({"id": f"g-{d['id']}", "text": d["text"], "source": "generated"})
    sentences = _sentences(docs)
    docs += web_pages(sentences, web_docs)
    docs += targeted(sentences, long_docs=long_docs, long_words=long_words)
    block_lists(os.path.join(out, "block_lists"), np.random.default_rng(3), docs)
    docs += news_pages(sentences, news_docs)
    with open(os.path.join(out, "docs.jsonl"), "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
    return docs


# ---- Curator's decisions -----------------------------------------------------------------------

def curator_stages(block_dir: str) -> dict:
    from curator_text import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        URLFilter,
    )

    return {"gopher_repetition": GopherRepetitionFilter(),
            "gopher_quality": GopherQualityFilter(),
            "gopher_quality_max_3000": GopherQualityFilter(max_doc_words=3000),
            "c4_quality": C4QualityFilter(),
            "c4_quality_fineweb": C4QualityFilter(filter_no_terminal_punct=False),
            "fineweb_quality": FineWebQualityFilter(),
            "url": URLFilter(block_list_dir=block_dir)}


def curator_decide(docs: list[dict], block_dir: str, batch: int = 2000) -> dict[str, dict]:
    import pyarrow as pa
    from curator_text.filters._english_words import shared_tokenizer

    stages = curator_stages(block_dir)
    out: dict[str, dict] = {d["id"]: {} for d in docs}
    for s in range(0, len(docs), batch):
        part = docs[s:s + batch]
        table = pa.table({"text": [d["text"] for d in part],
                          "url": [d.get("url") for d in part]})
        tok = shared_tokenizer()
        counts = np.diff(tok.tokenize(table["text"].to_pylist()).offsets)
        for d, n in zip(part, counts.tolist(), strict=True):
            out[d["id"]]["words"] = n
        for name, stage in stages.items():
            codes, new = stage.decide(stage.column(table))
            new_texts = new.to_pylist() if new is not None else None
            for k, (d, c) in enumerate(zip(part, codes.tolist(), strict=True)):
                out[d["id"]][name] = "" if c == 0 else stage.reasons[c - 1]
                if new_texts is not None and c == 0:
                    out[d["id"]][name + "_text"] = new_texts[k]
    return out


def compare(docs: list[dict], ours: dict, ref: dict) -> dict:
    report: dict = {"documents": len(docs), "filters": {}}
    for name in FILTERS:
        agree, dis, reasons_ref, reasons_ours = 0, [], Counter(), Counter()
        text_agree = text_total = 0
        for d in docs:
            a, b = ours[d["id"]].get(name), ref[d["id"]].get(name)
            reasons_ref[b or "(kept)"] += 1
            reasons_ours[a or "(kept)"] += 1
            if a == b:
                agree += 1
            else:
                dis.append({"id": d["id"], "source": d["source"], "curator": a, "datatrove": b})
            if name.startswith("c4") and a == "" and b == "":
                text_total += 1
                text_agree += ours[d["id"]][name + "_text"] == ref[d["id"]][name + "_text"]
        entry = {"agreement": agree / len(docs), "disagreements": dis,
                 "reasons_datatrove": dict(reasons_ref), "reasons_curator": dict(reasons_ours)}
        if name.startswith("c4"):
            entry["edited_text_agreement"] = text_agree / max(text_total, 1)
            entry["edited_text_compared"] = text_total
        report["filters"][name] = entry
    same = sum(ours[d["id"]]["words"] == ref[d["id"]]["words"] for d in docs)
    report["tokenizer_word_count_agreement"] = same / len(docs)
    report["tokenizer_disagreements"] = [
        {"id": d["id"], "curator": ours[d["id"]]["words"], "datatrove": ref[d["id"]]["words"]}
        for d in docs if ours[d["id"]]["words"] != ref[d["id"]]["words"]]
    return report


# ---- throughput --------------------------------------------------------------------------------

def curator_chain_seconds(texts: list[str], batch: int = 1000, cold: bool = True) -> float:
    import pyarrow as pa
    from curator_text import (
        C4QualityFilter,
        DocumentBatch,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )
    from curator_text.filters._english_words import shared_tokenizer

    if cold:
        shared_tokenizer()._reset()  # a cold word cache: what a fresh worker pays
    else:  # a warm worker: its chunk cache filled, but every document tokenized again
        shared_tokenizer()._docs.clear()
    chain = [GopherRepetitionFilter(), GopherQualityFilter(),
             C4QualityFilter(filter_no_terminal_punct=False), FineWebQualityFilter()]
    t0 = time.perf_counter()
    for s in range(0, len(texts), batch):
        task = DocumentBatch(task_id=f"b{s}", dataset_name="fw",
                             data=pa.table({"text": texts[s:s + batch]}))
        for stage in chain:
            task = stage.process(task)
    return time.perf_counter() - t0


def throughput(dt_python: str, docs: list[dict], out: str, dt_docs: int, repeats: int) -> dict:
    import pyarrow as pa  # noqa: F401 - loaded before timing

    realistic = [d for d in docs if not d["source"].startswith("targeted")]
    path = os.path.join(out, "realistic.jsonl")
    rng = np.random.default_rng(11)
    sample = [realistic[i] for i in rng.permutation(len(realistic))]
    with open(path, "w", encoding="utf-8") as f:
        for d in sample:
            f.write(json.dumps(d) + "\n")
    texts = [d["text"] for d in sample]
    curator_chain_seconds(texts[:200])  # compiled kernels loaded before timing
    ours, warm, theirs = [], [], []
    for _ in range(repeats):  # alternately, on the same machine in the same session
        ours.append(len(texts) / curator_chain_seconds(texts))
        warm.append(len(texts) / curator_chain_seconds(texts, cold=False))
        res = json.loads(subprocess.check_output(
            [dt_python, HELPER, "time", path, str(dt_docs), "1"]).decode().strip().splitlines()[-1])
        theirs.append(res["docs"] / res["seconds"][0])
        print(f"  chain docs/s: curator {ours[-1]:,.0f} cold, {warm[-1]:,.0f} with a warm word "
              f"cache ({len(texts)} docs), datatrove "
              f"{theirs[-1]:,.1f} ({res['docs']} docs); load {os.getloadavg()[0]:.1f}",
              flush=True)
    return {"curator_docs_per_s": ours, "curator_warm_docs_per_s": warm,
            "datatrove_docs_per_s": theirs, "curator_median": statistics.median(ours),
            "curator_warm_median": statistics.median(warm),
            "speedup_warm_median": statistics.median(warm) / statistics.median(theirs),
            "datatrove_median": statistics.median(theirs),
            "speedup_median": statistics.median(ours) / statistics.median(theirs),
            "curator_docs": len(texts), "datatrove_docs": min(dt_docs, len(texts)),
            "load_average": os.getloadavg()}


# ---- MinHash -----------------------------------------------------------------------------------

EDIT_RATES = (0.01, 0.03, 0.05, 0.1, 0.15, 0.2, 0.3)


def planted(docs: list[dict], out: str, bases: int, per_rate: int, seed: int = 5) -> dict:
    """Unique base documents (real pages and generated "normal" ones, 80+ words), and one copy
    of some of them with a known fraction of words replaced."""
    rng = np.random.default_rng(seed)
    copies = set()  # the generated corpus's own exact and near copies are not unique bases
    labels = os.path.join(out, "generated", "labels.tsv")
    if os.path.exists(labels):
        with open(labels, encoding="utf-8") as f:
            copies = {f"g-{i}" for i, kind, _ in (ln.rstrip("\n").split("\t") for ln in f)
                      if kind in ("exact", "near")}
    pool = [d for d in docs if d["source"] in ("real", "generated") and len(d["text"].split()) >= 80
            and not d["id"].startswith("tf-recall") and d["id"] not in copies]
    seen, uniq = set(), []
    for d in pool:
        key = " ".join(d["text"].split()[:40])
        if key not in seen:
            seen.add(key)
            uniq.append(d)
    uniq = [uniq[i] for i in rng.permutation(len(uniq))[:bases]]
    vocab = np.array([w for d in uniq[:300] for w in d["text"].split()], dtype=object)
    rows, truth = [], {}
    for i, d in enumerate(uniq):
        rows.append({"id": f"b{i}", "text": d["text"]})
    k = 0
    for rate in EDIT_RATES:
        for _ in range(per_rate):
            base = k % len(uniq)
            words = uniq[base]["text"].split(" ")
            for j in np.flatnonzero(rng.random(len(words)) < rate).tolist():
                words[j] = vocab[rng.integers(len(vocab))]
            rows.append({"id": f"c{k}", "text": " ".join(words)})
            truth[f"c{k}"] = (f"b{base}", rate)
            k += 1
    path = os.path.join(out, "minhash", "in", "docs.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    order = rng.permutation(len(rows))
    with open(path, "w", encoding="utf-8") as f:
        for j in order.tolist():
            f.write(json.dumps(rows[j]) + "\n")
    return {"path": path, "truth": truth, "ids": [r["id"] for r in rows]}


def score_removed(removed: set[str], plant: dict) -> dict:
    copies_of = {}
    for c, (b, _) in plant["truth"].items():
        copies_of.setdefault(b, []).append(c)
    recall = {}
    for rate in EDIT_RATES:
        pairs = [(c, b) for c, (b, r) in plant["truth"].items() if r == rate]
        recall[str(rate)] = sum((c in removed) or (b in removed) for c, b in pairs) / len(pairs)
    group_members = set(plant["truth"]) | {b for b, _ in plant["truth"].values()}
    false_unique = sum(1 for i in removed if i not in group_members)
    over = 0  # a planted group left with nothing
    for b, cs in copies_of.items():
        if all(x in removed for x in [b, *cs]):
            over += 1
    return {"recall_by_edit_rate": recall, "false_removals": false_unique + over,
            "removed": len(removed)}


def curator_minhash(plant: dict, out: str) -> tuple[set[str], float]:
    import shutil

    import pyarrow.parquet as pq
    from curator_text.dedup import FuzzyDeduplicationWorkflow

    work = os.path.join(out, "minhash", "curator")
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.perf_counter()
    FuzzyDeduplicationWorkflow(os.path.dirname(plant["path"]), work, preset="fineweb",
                               cache_path=os.path.join(work, "cache")).run()
    seconds = time.perf_counter() - t0
    dup = pq.read_table(os.path.join(work, "duplicates", "fuzzy.parquet"))
    return set(map(str, dup["id"].to_pylist())), seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="output directory (documents, results; use /tmp)")
    ap.add_argument("--datatrove-python", required=True,
                    help="the python of a virtual environment with datatrove installed")
    ap.add_argument("--real-repo", help="git directory of scrapinghub/article-extraction-benchmark")
    ap.add_argument("--generated", type=int, default=6000, help="benchmarks/corpus.py documents")
    ap.add_argument("--web-pages", type=int, default=2000,
                    help="generated web pages with boilerplate repeated inside lines")
    ap.add_argument("--news-pages", type=int, default=600,
                    help="generated articles with their site's tagline at the top and bottom")
    ap.add_argument("--long-docs", type=int, default=60, help="long documents")
    ap.add_argument("--long-words", type=int, default=3500,
                    help="their words (over 100000 to exceed the default max_doc_words)")
    ap.add_argument("--datatrove-docs", type=int, default=2000,
                    help="documents datatrove's chain is timed on (a subsample)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip", default="", help="comma list of: agreement,throughput,minhash")
    ap.add_argument("--reuse", action="store_true",
                    help="use the documents (and datatrove's results) already in OUT")
    ap.add_argument("--minhash-bases", type=int, default=3000)
    ap.add_argument("--minhash-per-rate", type=int, default=150)
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    os.makedirs(args.out, exist_ok=True)
    t0 = time.perf_counter()
    if args.reuse and os.path.exists(os.path.join(args.out, "docs.jsonl")):
        with open(os.path.join(args.out, "docs.jsonl"), encoding="utf-8") as f:
            docs = [json.loads(line) for line in f]
    else:
        docs = build(args.out, args.real_repo, args.generated, args.long_docs, args.long_words,
                     args.web_pages, args.news_pages)
    print(f"{len(docs)} documents ({Counter(d['source'].split(':')[0] for d in docs)}) in "
          f"{time.perf_counter() - t0:.0f}s; load average {os.getloadavg()[0]:.1f}", flush=True)
    report: dict = {"command": " ".join(sys.argv)}
    if "agreement" not in skip:
        ref_path = os.path.join(args.out, "datatrove.jsonl")
        if not os.path.exists(ref_path):
            subprocess.run([args.datatrove_python, HELPER, "decide",
                            os.path.join(args.out, "docs.jsonl"), ref_path + ".tmp",
                            os.path.join(args.out, "block_lists")], check=True)
            os.replace(ref_path + ".tmp", ref_path)
        ref: dict[str, dict] = {}
        with open(ref_path, encoding="utf-8") as f:
            for r in map(json.loads, f):  # rows of a resumed run are merged
                ref.setdefault(r["id"], {}).update(r)
        ours = curator_decide(docs, os.path.join(args.out, "block_lists"))
        report.update(compare(docs, ours, ref))
        for name, e in report["filters"].items():
            extra = (f", edited text {e['edited_text_agreement']:.4%} of "
                     f"{e['edited_text_compared']}" if "edited_text_agreement" in e else "")
            print(f"{name:20s} agreement {e['agreement']:.4%} ({len(e['disagreements'])} "
                  f"differ){extra}")
            print(f"{'':20s} datatrove reasons: {e['reasons_datatrove']}")
        print(f"tokenizer word counts agree on {report['tokenizer_word_count_agreement']:.4%}")
    if "throughput" not in skip:
        report["throughput"] = throughput(args.datatrove_python, docs, args.out,
                                          args.datatrove_docs, args.repeats)
        t = report["throughput"]
        print(f"four-filter chain: curator {t['curator_median']:,.0f} docs/s cold "
              f"({t['curator_warm_median']:,.0f} warm), datatrove "
              f"{t['datatrove_median']:,.1f} docs/s: {t['speedup_median']:.0f}x cold, "
              f"{t['speedup_warm_median']:.0f}x warm (median of "
              f"{args.repeats}, alternating; load average {t['load_average'][0]:.1f})")
    if "minhash" not in skip:
        plant = planted(docs, args.out, args.minhash_bases, args.minhash_per_rate)
        dt_out = os.path.join(args.out, "minhash", "datatrove.json")
        subprocess.run([args.datatrove_python, HELPER, "minhash", plant["path"], dt_out],
                       check=True, capture_output=True)
        with open(dt_out, encoding="utf-8") as f:
            dt = json.load(f)
        ours_removed, ours_s = curator_minhash(plant, args.out)
        report["minhash"] = {"documents": len(plant["ids"]),
                             "curator": {**score_removed(ours_removed, plant), "seconds": ours_s},
                             "datatrove": {**score_removed(set(map(str, dt["removed"])), plant),
                                           "seconds": dt["seconds"]}}
        for who in ("curator", "datatrove"):
            m = report["minhash"][who]
            print(f"minhash {who:9s} recall by edit rate "
                  f"{ {k: round(v, 3) for k, v in m['recall_by_edit_rate'].items()} } false "
                  f"removals {m['false_removals']} ({m['removed']} removed, {m['seconds']:.1f}s)")
    with open(os.path.join(args.out, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
