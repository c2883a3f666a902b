"""A small text corpus with planted exact and near duplicates whose groups are known."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def make_corpus(n_orig: int = 240, n_exact: int = 12, n_near: int = 12, n_short: int = 10,
                seed: int = 0) -> tuple[list[str], list[int]]:
    """``(texts, root)``: ``root[i]`` is the index of the original of doc ``i`` (itself for an
    original). Near copies have two words replaced in 200-300 word documents; short documents
    (shorter than a 24-character shingle) resemble each other but must never be grouped."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lex = ["".join(rng.choice(letters, rng.integers(3, 9))) for _ in range(3000)]
    texts = [" ".join(lex[j] for j in rng.integers(0, len(lex), rng.integers(200, 300)))
             for _ in range(n_orig)]
    texts += [f"short {lex[i % 3]} {i}" for i in range(n_short)]
    root = list(range(len(texts)))
    for src in rng.choice(n_orig, n_exact, replace=False):
        texts.append(texts[src])
        root.append(int(src))
    for src in rng.choice(n_orig, n_near, replace=False):
        words = texts[src].split()
        for pos in rng.choice(len(words), 2, replace=False):
            words[pos] = "changed"
        texts.append(" ".join(words))
        root.append(int(src))
    return texts, root


def expected_removed(root: list[int], ids: list[str]) -> set[str]:
    """Ids that must be removed: all but the first document (in input order) of each group."""
    seen: set[int] = set()
    out = set()
    for i, r in enumerate(root):
        if r in seen:
            out.add(ids[i])
        seen.add(r)
    return out


def write_parts(texts: list[str], directory: Path, parts: int, fmt: str = "parquet",
                ids: list[str] | None = None) -> list[str]:
    """Write the corpus in ``parts`` files (order kept); returns the ids."""
    ids = ids or [f"doc-{i:04d}" for i in range(len(texts))]
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, len(texts), parts + 1).astype(int)
    for p in range(parts):
        sl = slice(bounds[p], bounds[p + 1])
        if fmt == "parquet":
            pq.write_table(pa.table({"id": ids[sl], "text": texts[sl]}),
                           directory / f"part-{p:02d}.parquet")
        else:
            with open(directory / f"part-{p:02d}.jsonl", "w") as fh:
                for i, t in zip(ids[sl], texts[sl], strict=False):
                    fh.write(json.dumps({"id": i, "text": t}) + "\n")
    return ids
